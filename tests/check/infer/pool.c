/* GStreamer cudabatchinfer: engine pool unit tests (cbipool.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "cbipool.h"

/* An allocator that counts what it hands out, to prove the pool gives
 * everything back. */
typedef struct
{
  gint live;
  gint calls;
  gint fail_after;              /* fail the call after this many; -1 never */
} Counting;

static gpointer
counting_alloc (gsize size, gpointer user_data)
{
  Counting *c = user_data;

  if (c->fail_after >= 0 && c->calls >= c->fail_after)
    return NULL;
  c->calls++;
  c->live++;
  return g_malloc (size);
}

static void
counting_free (gpointer block, gsize size, gpointer user_data)
{
  Counting *c = user_data;

  c->live--;
  g_free (block);
}

static CbiPool *
counting_pool (Counting * c, guint64 limit)
{
  CbiAllocator a = { "counting", counting_alloc, counting_free, c };

  c->live = c->calls = 0;
  c->fail_after = -1;
  return cbi_pool_new (&a, limit);
}

GST_START_TEST (test_pool_counts_fresh_allocations_once)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b;

  a = cbi_pool_alloc (pool, 1000);
  cbi_pool_release (pool, a);
  b = cbi_pool_alloc (pool, 1000);
  fail_unless (a == b);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.fresh_allocations, 1);
  fail_unless_equals_uint64 (s.fresh_bytes, 1000);
  fail_unless_equals_uint64 (s.allocated_bytes, 1000);
  fail_unless_equals_uint64 (s.reserved_bytes, 1000);
  cbi_pool_release (pool, b);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_reuses_a_cached_block_only_when_it_fits)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b, d;

  a = cbi_pool_alloc (pool, 1000);
  cbi_pool_release (pool, a);
  /* larger: fresh */
  b = cbi_pool_alloc (pool, 2000);
  /* far smaller: not worth the waste, fresh */
  d = cbi_pool_alloc (pool, 100);
  fail_unless (b != a && d != a);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.fresh_allocations, 3);
  fail_unless_equals_uint64 (s.reserved_bytes, 3100);
  fail_unless_equals_uint64 (s.allocated_bytes, 2100);
  cbi_pool_release (pool, b);
  cbi_pool_release (pool, d);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_trim_gives_back_cached_blocks_only)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b;

  a = cbi_pool_alloc (pool, 100);
  b = cbi_pool_alloc (pool, 200);
  cbi_pool_release (pool, a);
  cbi_pool_trim (pool);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_int (c.live, 1);
  fail_unless_equals_uint64 (s.reserved_bytes, 200);
  fail_unless_equals_uint64 (s.allocated_bytes, 200);
  cbi_pool_release (pool, b);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_peaks_restart_at_current_values)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b;

  a = cbi_pool_alloc (pool, 100);
  b = cbi_pool_alloc (pool, 300);
  cbi_pool_release (pool, b);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.peak_allocated_bytes, 400);
  cbi_pool_reset_peaks (pool);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.peak_allocated_bytes, 100);
  fail_unless_equals_uint64 (s.peak_reserved_bytes, 400);
  cbi_pool_release (pool, a);
  cbi_pool_free (pool);
}

GST_END_TEST;

GST_START_TEST (test_pool_refuses_past_its_limit_and_allocator_failures)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 1000);
  CbiPoolStats s;
  gpointer a;

  a = cbi_pool_alloc (pool, 800);
  fail_unless (a != NULL);
  fail_unless (cbi_pool_alloc (pool, 300) == NULL);
  c.fail_after = c.calls;
  fail_unless (cbi_pool_alloc (pool, 100) == NULL);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.failed_allocations, 2);
  fail_unless_equals_uint64 (s.fresh_allocations, 1);
  cbi_pool_release (pool, a);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_trims_cached_blocks_before_refusing_at_the_limit)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 1000);
  CbiPoolStats s;
  gpointer a;

  a = cbi_pool_alloc (pool, 300);
  cbi_pool_release (pool, a);
  /* 300 cached + 800 is past the limit, 800 alone is not */
  a = cbi_pool_alloc (pool, 800);
  fail_unless (a != NULL);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.reserved_bytes, 800);
  fail_unless_equals_uint64 (s.failed_allocations, 0);
  fail_unless_equals_int (c.live, 1);
  cbi_pool_release (pool, a);
  cbi_pool_free (pool);
}

GST_END_TEST;

static Suite *
pool_suite (void)
{
  Suite *s = suite_create ("cbipool");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pool_counts_fresh_allocations_once);
  tcase_add_test (tc, test_pool_reuses_a_cached_block_only_when_it_fits);
  tcase_add_test (tc, test_pool_trim_gives_back_cached_blocks_only);
  tcase_add_test (tc, test_pool_peaks_restart_at_current_values);
  tcase_add_test (tc, test_pool_refuses_past_its_limit_and_allocator_failures);
  tcase_add_test (tc,
      test_pool_trims_cached_blocks_before_refusing_at_the_limit);
  return s;
}

GST_CHECK_MAIN (pool);
