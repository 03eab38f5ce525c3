/* cudabatchinfer: memory pool with accounting
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "cbitypes.h"

G_BEGIN_DECLS

/**
 * CbiAllocator:
 * @name: short name of the memory kind ("host", "cuda", ...)
 * @alloc: gets @size bytes from the system or driver; returns %NULL on failure
 * @free: gives a block from @alloc back
 * @user_data: passed to both
 *
 * Where a #CbiPool gets its memory from. The CPU backend uses aligned host
 * memory, the CUDA backend device memory. Every call to @alloc is a "fresh"
 * allocation in the pool's statistics.
 */
typedef struct
{
  const gchar *name;
  gpointer (*alloc) (gsize size, gpointer user_data);
  void (*free) (gpointer block, gsize size, gpointer user_data);
  gpointer user_data;
} CbiAllocator;


typedef struct _CbiPool CbiPool;

/* Returns: (transfer full): a new pool; @allocator is copied. A @limit of 0
 * means no limit on reserved bytes. */
CbiPool *cbi_pool_new (const CbiAllocator * allocator, guint64 limit);
/* Releases every cached block. Blocks still handed out are a caller bug and
 * are released too (with a warning). */
void cbi_pool_free (CbiPool * pool);

/* Returns: (transfer full) (nullable): a block of at least @size bytes, to be
 * given back with cbi_pool_release(); %NULL when the allocator fails or the
 * limit would be passed. */
gpointer cbi_pool_alloc (CbiPool * pool, gsize size);
/* cbi_pool_alloc() of at least one float that says why it failed: %NULL
 * with @error set (CBI_ERROR_MEMORY), naming @what, the memory and the
 * limit. Returns: (transfer full) (nullable): as cbi_pool_alloc(). */
gpointer cbi_pool_take (CbiPool * pool, gsize size, const gchar * what,
    GError ** error);
/* Gives @block back to the pool's cache; it stays reserved. */
void cbi_pool_release (CbiPool * pool, gpointer block);
/* Gives every cached (not handed out) block back to the allocator. */
void cbi_pool_trim (CbiPool * pool);
/* Restarts the peaks at the current values. */
void cbi_pool_reset_peaks (CbiPool * pool);
void cbi_pool_get_stats (CbiPool * pool, CbiPoolStats * stats);
guint64 cbi_pool_get_limit (CbiPool * pool);
/* Sets the most bytes the pool may reserve (0: no limit). Blocks reserved
 * past a lower limit stay until they are given back; only new ones are
 * refused. */
void cbi_pool_set_limit (CbiPool * pool, guint64 limit);

/* The allocator for 64-byte aligned host memory. It writes every page it
 * gets, so a fresh block's first-touch cost is paid at allocation (during
 * warm-up) and not in the first batch that uses it. */
const CbiAllocator *cbi_host_allocator (void);

G_END_DECLS
