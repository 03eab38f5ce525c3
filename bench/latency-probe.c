/* The benches' latency probe (latency-probe.h)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "latency-probe.h"

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad,
    LatencyProbe * probe)
{
  GstClock *clock = gst_element_get_clock (probe->pipeline);
  GstClockTime now, pts = GST_BUFFER_PTS (buf);
  gdouble ms;

  if (clock == NULL || !GST_CLOCK_TIME_IS_VALID (pts)) {
    gst_clear_object (&clock);
    return;
  }
  now = gst_clock_get_time (clock) -
      gst_element_get_base_time (probe->pipeline);
  gst_object_unref (clock);
  ms = ((gdouble) now - (gdouble) pts) / 1e6;
  g_mutex_lock (&probe->lock);
  g_array_append_val (probe->latency_ms, ms);
  if (!GST_CLOCK_TIME_IS_VALID (probe->first))
    probe->first = now;
  probe->last = now;
  g_mutex_unlock (&probe->lock);
}

static gint
cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

void
latency_probe_init (LatencyProbe * probe, GstElement * pipeline)
{
  g_mutex_init (&probe->lock);
  probe->latency_ms = g_array_new (FALSE, FALSE, sizeof (gdouble));
  probe->pipeline = pipeline;
  probe->first = probe->last = GST_CLOCK_TIME_NONE;
}

void
latency_probe_watch (LatencyProbe * probe, GstElement * sink)
{
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), probe);
}

gboolean
latency_probe_finish (LatencyProbe * probe, LatencySummary * summary)
{
  GArray *v = probe->latency_ms;
  guint n = v->len;

  summary->frames = n;
  if (n > 1) {
    g_array_sort (v, cmp_double);
    summary->p50 = g_array_index (v, gdouble, n / 2);
    summary->p95 = g_array_index (v, gdouble, n * 95 / 100);
    summary->max = g_array_index (v, gdouble, n - 1);
    summary->fps = (n - 1) / ((probe->last - probe->first) / 1e9);
  }
  g_array_unref (v);
  g_mutex_clear (&probe->lock);
  return n > 1;
}
