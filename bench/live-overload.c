/* live-overload: a live camera faster than the model, under each
 * drop-policy.
 *
 * Measures the model's own pace first (the warm-up's median batch, as
 * stats says: `steady-batch-time`), then runs a live source three times as
 * fast (videotestsrc is-live=true, framerate SOURCE_FPS, by default 3 x the
 * model's frames per second: 30 fps against a model at 10) into
 *   cudabatchinfer batch=BATCH drop-policy=P max-latency=MAX_LATENCY
 * for P = none, oldest and latest-only, one after the other in this
 * process, and prints per policy the frames in, out and shed, the frames
 * per second out, and the latency of the results (the running time a
 * result reaches its fakesink minus its PTS, the time the live source
 * gave it: median, 95th percentile and largest). Under `none` the
 * streaming thread waits for each batch and the source's frames come ever
 * later; under the others, frames that waited longer than max-latency are
 * shed, and the latency stays near max-latency plus a batch.
 *
 *   live-overload [--model file.onnx] [--width 640] [--height 360]
 *                 [--batch 1] [--seconds 6] [--max-latency-ms 100]
 *                 [--source-fps 0] [--backend cpu]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <stdlib.h>
#include <string.h>

#include "latency-probe.h"

typedef struct
{
  guint64 in, out, shed;
  GstClockTime steady;          /* the warm-up's median batch */
  LatencySummary latency;
} Result;

static guint64
stat_of (GstElement * e, const gchar * field)
{
  GstStructure *s;
  guint64 v = 0;

  g_object_get (e, "stats", &s, NULL);
  gst_structure_get_uint64 (s, field, &v);
  gst_structure_free (s);
  return v;
}

/* Runs @desc (an element named inf, a fakesink named out) to EOS. */
static gboolean
run_pipeline (const gchar * desc, Result * res)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error), *inf, *sink;
  LatencyProbe probe;
  GstMessage *msg;
  GstBus *bus;
  gboolean ok;

  if (pipeline == NULL) {
    g_printerr ("live-overload: %s\n", error->message);
    g_clear_error (&error);
    return FALSE;
  }
  latency_probe_init (&probe, pipeline);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  latency_probe_watch (&probe, sink);
  gst_object_unref (sink);
  inf = gst_bin_get_by_name (GST_BIN (pipeline), "inf");
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg && !ok) {
    gst_message_parse_error (msg, &error, NULL);
    g_printerr ("live-overload: %s\n", error->message);
    g_clear_error (&error);
  }
  gst_clear_message (&msg);
  res->in = stat_of (inf, "frames-in");
  res->out = stat_of (inf, "frames-out");
  res->shed = stat_of (inf, "frames-shed");
  res->steady = stat_of (inf, "steady-batch-time");
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (inf);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return latency_probe_finish (&probe, &res->latency) && ok;
}

int
main (int argc, char **argv)
{
  gint batch = 1, seconds = 6, width = 640, height = 360, max_latency_ms = 100;
  gdouble source_fps = 0.0, model_fps;
  gchar *backend = NULL, *model = NULL;
  GOptionEntry entries[] = {
    {"batch", 0, 0, G_OPTION_ARG_INT, &batch, "the element's batch", "N"},
    {"seconds", 0, 0, G_OPTION_ARG_INT, &seconds, "of the source's frames",
        "S"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width, "frame width", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height, "frame height", "H"},
    {"max-latency-ms", 0, 0, G_OPTION_ARG_INT, &max_latency_ms,
        "the element's max-latency", "MS"},
    {"source-fps", 0, 0, G_OPTION_ARG_DOUBLE, &source_fps,
        "the source's frame rate (0: 3 x the model's)", "FPS"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "cpu, cuda, auto", "B"},
    {"model", 0, 0, G_OPTION_ARG_FILENAME, &model, "ONNX model", "FILE"},
    {NULL}
  };
  static const gchar *policies[] = { "none", "oldest", "latest-only" };
  GOptionContext *ctx = g_option_context_new ("- a live source faster than "
      "the model");
  GString *common = g_string_new (NULL), *desc = g_string_new (NULL);
  Result res = { 0, }, warm = { 0, };
  GError *error = NULL;
  gint status = 0, fps_n;
  guint p;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("live-overload: %s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  g_string_printf (common, "cudabatchinfer name=inf backend=%s batch=%d "
      "max-latency=%" G_GUINT64_FORMAT "%s%s", backend ? backend : "cpu",
      batch, (guint64) max_latency_ms * GST_MSECOND, model ? " model=" : "",
      model ? model : "");

  /* the model's pace, from a short run's warm-up */
  g_string_printf (desc, "videotestsrc num-buffers=%d ! video/x-raw,format="
      "RGB,width=%d,height=%d,framerate=30/1 ! %s ! fakesink name=out "
      "signal-handoffs=true", 2 * batch, width, height, common->str);
  if (!run_pipeline (desc->str, &warm) || warm.steady == 0) {
    g_printerr ("live-overload: the model did not run\n");
    return 1;
  }
  model_fps = batch * 1e9 / warm.steady;
  if (source_fps <= 0.0)
    source_fps = 3.0 * model_fps;
  fps_n = MAX (1, (gint) (source_fps * 1000 + 0.5));

  g_print ("%dx%d RGB, batch %d, %s backend: the model %.1f frames/s (its "
      "warm-up's median batch %.1f ms); a live source at %.1f fps, %d s; "
      "max-latency %d ms; latency = result at the sink - PTS\n\n", width,
      height, batch, backend ? backend : "cpu", model_fps,
      warm.steady / 1e6, fps_n / 1000.0, seconds, max_latency_ms);
  g_print ("| drop-policy | frames in | out | shed | fps out | latency p50 ms "
      "| p95 ms | max ms |\n|---|---|---|---|---|---|---|---|\n");
  for (p = 0; p < G_N_ELEMENTS (policies); p++) {
    g_string_printf (desc, "videotestsrc is-live=true num-buffers=%d ! "
        "video/x-raw,format=RGB,width=%d,height=%d,framerate=%d/1000 ! %s "
        "drop-policy=%s ! fakesink name=out sync=false signal-handoffs=true",
        (gint) (seconds * source_fps), width, height, fps_n, common->str,
        policies[p]);
    memset (&res, 0, sizeof (res));
    if (!run_pipeline (desc->str, &res)) {
      g_printerr ("live-overload: drop-policy=%s failed\n", policies[p]);
      status = 1;
      continue;
    }
    g_print ("| %s | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT " | %"
        G_GUINT64_FORMAT " | %.1f | %.1f | %.1f | %.1f |\n", policies[p],
        res.in, res.out, res.shed, res.latency.fps, res.latency.p50,
        res.latency.p95, res.latency.max);
  }
  g_string_free (common, TRUE);
  g_string_free (desc, TRUE);
  g_free (backend);
  g_free (model);
  return status;
}
