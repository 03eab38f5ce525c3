/* cudabatchinfer: memory pool with accounting
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A caching pool in the spirit of framework allocators: blocks given back
 * stay reserved and are handed out again to a request that fits, so a
 * steady state of equal-sized requests never reaches the allocator. Every
 * allocator call is counted as "fresh"; those counts are what the batch meta
 * reports, so nothing else may allocate tensor memory behind the pool.
 */
#include "cbipool.h"
#include "cbitypes.h"

#include <stdlib.h>
#include <string.h>

/* A cached block may serve a request down to half its size; below that the
 * waste is not worth saving a fresh allocation. */
#define CBI_POOL_MAX_WASTE_RATIO 2

typedef struct
{
  gpointer ptr;
  gsize size;
  gboolean in_use;
} CbiBlock;

struct _CbiPool
{
  CbiAllocator allocator;
  guint64 limit;
  GArray *blocks;               /* CbiBlock */
  CbiPoolStats stats;
};

CbiPool *
cbi_pool_new (const CbiAllocator * allocator, guint64 limit)
{
  CbiPool *pool = g_new0 (CbiPool, 1);

  pool->allocator = *allocator;
  pool->limit = limit;
  pool->blocks = g_array_new (FALSE, TRUE, sizeof (CbiBlock));
  return pool;
}

static void
cbi_pool_drop_block (CbiPool * pool, guint index)
{
  CbiBlock *b = &g_array_index (pool->blocks, CbiBlock, index);

  pool->allocator.free (b->ptr, b->size, pool->allocator.user_data);
  pool->stats.reserved_bytes -= b->size;
  g_array_remove_index_fast (pool->blocks, index);
}

void
cbi_pool_free (CbiPool * pool)
{
  if (pool == NULL)
    return;
  while (pool->blocks->len > 0) {
    CbiBlock *b = &g_array_index (pool->blocks, CbiBlock, 0);
    if (b->in_use)
      g_warning ("cbi pool: block of %" G_GSIZE_FORMAT " bytes still in use",
          b->size);
    cbi_pool_drop_block (pool, 0);
  }
  g_array_free (pool->blocks, TRUE);
  g_free (pool);
}

static void
cbi_pool_update_peaks (CbiPool * pool)
{
  CbiPoolStats *s = &pool->stats;

  s->peak_allocated_bytes = MAX (s->peak_allocated_bytes, s->allocated_bytes);
  s->peak_reserved_bytes = MAX (s->peak_reserved_bytes, s->reserved_bytes);
}

gpointer
cbi_pool_alloc (CbiPool * pool, gsize size)
{
  CbiBlock block = { NULL, 0, TRUE };
  gint best = -1;
  guint i;

  if (size == 0)
    size = 1;

  /* best fit among the cached blocks */
  for (i = 0; i < pool->blocks->len; i++) {
    CbiBlock *b = &g_array_index (pool->blocks, CbiBlock, i);
    if (b->in_use || b->size < size
        || b->size / CBI_POOL_MAX_WASTE_RATIO > size)
      continue;
    if (best < 0 || b->size < g_array_index (pool->blocks, CbiBlock, best).size)
      best = i;
  }
  if (best >= 0) {
    CbiBlock *b = &g_array_index (pool->blocks, CbiBlock, best);
    b->in_use = TRUE;
    pool->stats.allocated_bytes += b->size;
    cbi_pool_update_peaks (pool);
    return b->ptr;
  }

  /* cached blocks that do not fit go back before the limit says no, and
   * before the allocator is asked again after a failure */
  if (pool->limit > 0 && pool->stats.reserved_bytes + size > pool->limit)
    cbi_pool_trim (pool);
  if (pool->limit > 0 && pool->stats.reserved_bytes + size > pool->limit) {
    pool->stats.failed_allocations++;
    return NULL;
  }

  block.ptr = pool->allocator.alloc (size, pool->allocator.user_data);
  if (block.ptr == NULL
      && pool->stats.reserved_bytes > pool->stats.allocated_bytes) {
    cbi_pool_trim (pool);
    block.ptr = pool->allocator.alloc (size, pool->allocator.user_data);
  }
  if (block.ptr == NULL) {
    pool->stats.failed_allocations++;
    return NULL;
  }
  block.size = size;
  g_array_append_val (pool->blocks, block);
  pool->stats.fresh_allocations++;
  pool->stats.fresh_bytes += size;
  pool->stats.reserved_bytes += size;
  pool->stats.allocated_bytes += size;
  cbi_pool_update_peaks (pool);
  return block.ptr;
}

gpointer
cbi_pool_take (CbiPool * pool, gsize size, const gchar * what, GError ** error)
{
  gpointer block = cbi_pool_alloc (pool, MAX (size, sizeof (gfloat)));

  if (block == NULL)
    g_set_error (error, CBI_ERROR, CBI_ERROR_MEMORY, "could not allocate %"
        G_GSIZE_FORMAT " bytes of %s memory for %s (memory limit left to "
        "the engine: %" G_GUINT64_FORMAT " bytes, 0 = none)", size,
        pool->allocator.name, what, pool->limit);
  return block;
}

void
cbi_pool_release (CbiPool * pool, gpointer ptr)
{
  guint i;

  if (ptr == NULL)
    return;
  for (i = 0; i < pool->blocks->len; i++) {
    CbiBlock *b = &g_array_index (pool->blocks, CbiBlock, i);
    if (b->ptr == ptr && b->in_use) {
      b->in_use = FALSE;
      pool->stats.allocated_bytes -= b->size;
      return;
    }
  }
  g_critical ("cbi pool: release of a block the pool does not own");
}

void
cbi_pool_trim (CbiPool * pool)
{
  guint i = 0;

  while (i < pool->blocks->len) {
    if (g_array_index (pool->blocks, CbiBlock, i).in_use)
      i++;
    else
      cbi_pool_drop_block (pool, i);
  }
}

void
cbi_pool_reset_peaks (CbiPool * pool)
{
  pool->stats.peak_allocated_bytes = pool->stats.allocated_bytes;
  pool->stats.peak_reserved_bytes = pool->stats.reserved_bytes;
}

void
cbi_pool_get_stats (CbiPool * pool, CbiPoolStats * stats)
{
  *stats = pool->stats;
}

guint64
cbi_pool_get_limit (CbiPool * pool)
{
  return pool->limit;
}

void
cbi_pool_set_limit (CbiPool * pool, guint64 limit)
{
  pool->limit = limit;
}

#define CBI_HOST_ALIGN 64
#define CBI_PAGE_SIZE 4096

static gpointer
cbi_host_alloc (gsize size, gpointer user_data)
{
  gpointer ptr = NULL;
  gsize rounded = (size + CBI_HOST_ALIGN - 1) & ~(gsize) (CBI_HOST_ALIGN - 1);

  if (posix_memalign (&ptr, CBI_PAGE_SIZE, rounded) != 0)
    return NULL;
  /* first touch here, not in the first batch */
  memset (ptr, 0, rounded);
  return ptr;
}

static void
cbi_host_free (gpointer block, gsize size, gpointer user_data)
{
  free (block);
}

const CbiAllocator *
cbi_host_allocator (void)
{
  static const CbiAllocator host = { "host", cbi_host_alloc, cbi_host_free,
    NULL
  };
  return &host;
}
