/* The benches' latency probe: each result's latency at a fakesink, the
 * running time it reaches it minus its PTS (a live source's capture
 * time), and the frames per second that came out.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct
{
  GMutex lock;
  GArray *latency_ms;           /* gdouble, one per frame out */
  GstElement *pipeline;
  GstClockTime first, last;     /* running times of the first and last */
} LatencyProbe;

typedef struct
{
  guint frames;
  gdouble p50, p95, max, fps;
} LatencySummary;

/* Starts a probe on @pipeline (transfer none: it must outlive the probe). */
void latency_probe_init (LatencyProbe * probe, GstElement * pipeline);
/* Measures what reaches @sink, a fakesink with signal-handoffs=true. */
void latency_probe_watch (LatencyProbe * probe, GstElement * sink);
/* Sorts what it measured into @summary; returns FALSE with fewer than two
 * frames. Frees what the probe holds. */
gboolean latency_probe_finish (LatencyProbe * probe, LatencySummary * summary);

G_END_DECLS
