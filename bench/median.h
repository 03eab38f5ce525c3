/* cudabatchinfer benches: the median of timed runs
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

static inline gint
bench_compare_times (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* The median of @times (microseconds, as g_get_monotonic_time () gives
 * them; sorted in place), in nanoseconds. */
static inline gdouble
bench_median_ns (GArray * times)
{
  g_array_sort (times, bench_compare_times);
  return g_array_index (times, gint64, times->len / 2) * 1000.0;
}
