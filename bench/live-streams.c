/* live-streams: many live cameras, one batch, against one element each.
 *
 * For 1, 4 and 16 live 30 fps sources (videotestsrc is-live=true), runs
 * two pipelines one after the other in this process, on the same frames:
 *   shared:   one cudabatchinfer batch=BATCH batch-timeout=TIMEOUT, each
 *             source on its own request pad sink_K, results on src_K;
 *   separate: one cudabatchinfer batch=1 per source.
 * and prints, per pipeline, the per-frame latency (the running time a
 * result reaches its fakesink minus its PTS, which a live source sets to
 * its capture time: median and 95th percentile) and the total frames per
 * second that came out, then the ratios shared / separate. The run is
 * SECONDS long after both have prerolled; the warm-up is not in it.
 *
 *   live-streams [--batch 16] [--timeout-ms 40] [--seconds 5]
 *                [--width 160] [--height 120] [--backend cpu]
 *                [--model file.onnx] [--streams 1,4,16]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <stdlib.h>
#include <string.h>

#include "latency-probe.h"

/* The source of stream @k and its caps, with num-buffers for @seconds. */
static void
append_source (GString * desc, guint k, guint frames, gint width, gint height)
{
  g_string_append_printf (desc, " videotestsrc is-live=true num-buffers=%u "
      "pattern=%u ! video/x-raw,format=RGB,width=%d,height=%d,"
      "framerate=30/1", frames, k % 20, width, height);
}

static gboolean
run_pipeline (const gchar * desc, guint streams, LatencySummary * res)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);
  LatencyProbe probe;
  GstMessage *msg;
  GstBus *bus;
  guint k;
  gboolean ok;

  if (pipeline == NULL) {
    g_printerr ("live-streams: %s\n", error->message);
    g_clear_error (&error);
    return FALSE;
  }
  latency_probe_init (&probe, pipeline);
  for (k = 0; k < streams; k++) {
    gchar *name = g_strdup_printf ("out%u", k);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
    latency_probe_watch (&probe, sink);
    gst_object_unref (sink);
    g_free (name);
  }
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 300 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg && !ok) {
    gst_message_parse_error (msg, &error, NULL);
    g_printerr ("live-streams: %s\n", error->message);
    g_clear_error (&error);
  }
  gst_clear_message (&msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return latency_probe_finish (&probe, res) && ok;
}

int
main (int argc, char **argv)
{
  gint batch = 16, timeout_ms = 40, seconds = 5, width = 160, height = 120;
  gchar *backend = NULL, *model = NULL, *streams_arg = NULL;
  GOptionEntry entries[] = {
    {"batch", 0, 0, G_OPTION_ARG_INT, &batch, "shared element's batch", "N"},
    {"timeout-ms", 0, 0, G_OPTION_ARG_INT, &timeout_ms,
        "shared element's batch-timeout", "MS"},
    {"seconds", 0, 0, G_OPTION_ARG_INT, &seconds, "frames of each source",
        "S"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width, "frame width", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height, "frame height", "H"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "cpu, cuda, auto", "B"},
    {"model", 0, 0, G_OPTION_ARG_FILENAME, &model, "ONNX model", "FILE"},
    {"streams", 0, 0, G_OPTION_ARG_STRING, &streams_arg,
        "comma-separated stream counts", "LIST"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- live streams, one batch");
  GError *error = NULL;
  gchar **counts;
  gint status = 0;
  guint c;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("live-streams: %s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  counts = g_strsplit (streams_arg ? streams_arg : "1,4,16", ",", -1);

  g_print ("live 30 fps streams of %dx%d RGB, %s backend, %d s each; "
      "latency = result at the sink - PTS (running time)\n\n", width,
      height, backend ? backend : "cpu", seconds);
  g_print ("| streams | pipeline | frames | fps out | latency p50 ms | "
      "latency p95 ms |\n|---|---|---|---|---|---|\n");
  for (c = 0; counts[c]; c++) {
    guint streams = (guint) g_ascii_strtoull (counts[c], NULL, 10), k;
    GString *common = g_string_new (NULL);
    GString *shared, *separate;
    LatencySummary rs = { 0, }, rp = { 0, };
    gboolean ok;

    if (streams == 0)
      continue;
    g_string_printf (common, "backend=%s%s%s", backend ? backend : "cpu",
        model ? " model=" : "", model ? model : "");
    shared = g_string_new (NULL);
    g_string_printf (shared, "cudabatchinfer name=inf batch=%d "
        "batch-timeout=%" G_GUINT64_FORMAT " %s", batch,
        (guint64) timeout_ms * GST_MSECOND, common->str);
    separate = g_string_new (NULL);
    for (k = 0; k < streams; k++) {
      append_source (shared, k, seconds * 30, width, height);
      g_string_append_printf (shared, " ! inf.sink_%u inf.src_%u ! fakesink "
          "name=out%u sync=false signal-handoffs=true", k, k, k);
      append_source (separate, k, seconds * 30, width, height);
      g_string_append_printf (separate, " ! cudabatchinfer batch=1 %s ! "
          "fakesink name=out%u sync=false signal-handoffs=true",
          common->str, k);
    }
    ok = run_pipeline (shared->str, streams, &rs)
        && run_pipeline (separate->str, streams, &rp);
    if (!ok) {
      g_printerr ("live-streams: %u streams failed\n", streams);
      status = 1;
    } else {
      g_print ("| %u | one element, batch %d | %u | %.1f | %.1f | %.1f |\n",
          streams, batch, rs.frames, rs.fps, rs.p50, rs.p95);
      g_print ("| %u | %u elements, batch 1 | %u | %.1f | %.1f | %.1f |\n",
          streams, streams, rp.frames, rp.fps, rp.p50, rp.p95);
      g_print ("| %u | ratio shared / separate | %.2f | %.2f | %.2f | %.2f "
          "|\n", streams, (gdouble) rs.frames / rp.frames, rs.fps / rp.fps,
          rs.p50 / rp.p50, rs.p95 / rp.p95);
    }
    g_string_free (common, TRUE);
    g_string_free (shared, TRUE);
    g_string_free (separate, TRUE);
  }
  g_strfreev (counts);
  g_free (backend);
  g_free (model);
  g_free (streams_arg);
  return status;
}
