/* model-throughput: steady-state frames per second of cudabatchinfer.
 *
 * Pushes synthetic RGB frames of WIDTHxHEIGHT through
 * `cudabatchinfer model=FILE batch=N` in a GstHarness, one frame at a time
 * from this thread, so each batch runs inside the push of its last frame
 * and nothing else competes for the CPU. The first WARMUP batches (after
 * the element's own warm-up, which runs on the caps) are not timed; the
 * next BATCHES batches are. Every output buffer is pulled and released
 * right after its push, as a sink would.
 *
 *   model-throughput [--model file.onnx] [--batch 8] [--width 320]
 *                    [--height 240] [--batches 10] [--warmup 2]
 *                    [--backend auto] [--threads 0] [--precision fp32]
 *                    [--tolerance 0.05] [--check-location FILE]
 *                    [--input-mean "<0.5, 0.5, 0.5>"] [--input-std ...]
 *                    [--channel-order bgr] [--set PROP=VALUE ...]
 *
 * Prints one line of key=value pairs, e.g.
 *   fps=123.4 frames=80 batches=10 seconds=0.648 batch-ms-median=64.2 ...
 * which bench/onnxruntime-compare.py reads. --threads sets the element's
 * threads property (0: OpenMP's default, OMP_NUM_THREADS where set),
 * --precision, --tolerance and --check-location its precision,
 * precision-tolerance and precision-check-location properties (the
 * check's frames: an image or clip like the stream's, rather than the
 * warm-up's test frames); the line gives the precision the
 * warm-up settled on and its accuracy check's worst relative error
 * (precision-relative-error, -1 where nothing was checked).
 * --input-mean, --input-std (GStreamer arrays, as gst-launch-1.0 takes
 * them) and --channel-order set the element's properties of those names:
 * the model's own normalisation, which the accuracy check's figures
 * depend on (the timing does not). --set sets any other property, as
 * gst-launch-1.0 would (backend=remote's server-url, remote-model, ...);
 * rtt-ms-median is then the timed batches' median round trip to the
 * server (-1 on the local backends).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <gst/check/gstharness.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <stdlib.h>
#include <string.h>

#define N_FRAMES 4

static gint
cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

/* Sorts v in place. */
static gdouble
median (gdouble * v, guint n)
{
  qsort (v, n, sizeof (gdouble), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Prints the element's error messages, each once. */
static void
print_bus_error (GstBus * bus)
{
  GstMessage *msg;
  gchar *last = NULL;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
    GError *error = NULL;
    gchar *debug = NULL;

    gst_message_parse_error (msg, &error, &debug);
    if (g_strcmp0 (last, error->message) != 0) {
      g_printerr ("error: %s\n", error->message);
      if (debug)
        g_printerr ("  (%s)\n", debug);
      g_free (last);
      last = g_strdup (error->message);
    }
    g_clear_error (&error);
    g_free (debug);
    gst_message_unref (msg);
  }
  g_free (last);
}

/* A frame that looks like a picture (gradients and a disc that moves from
 * frame to frame), so the engine sees varied values. */
static GstMemory *
make_frame (gint width, gint height, gint index)
{
  gsize size = (gsize) width * height * 3;
  guint8 *p = g_malloc (size);
  gint x, y, cx = width / 4 + index * width / 8, cy = height / 2;
  gint r = MAX (height / 6, 1);

  for (y = 0; y < height; y++) {
    for (x = 0; x < width; x++) {
      guint8 *px = p + ((gsize) y * width + x) * 3;
      gboolean in = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;

      px[0] = in ? 240 : (guint8) (40 + 180 * x / MAX (width - 1, 1));
      px[1] = in ? 200 : (guint8) (50 + 150 * y / MAX (height - 1, 1));
      px[2] = in ? 30 : (guint8) ((x ^ y) & 0x3f) + 100;
    }
  }
  return gst_memory_new_wrapped (0, p, size, 0, size, p, g_free);
}

/* Releases an output, noting its batch's engine time (and round trip to
 * a server, in @rtt_ms) when @timed. */
static guint
take_output (GstBuffer * out, gboolean timed, gdouble * engine_ms,
    gdouble * rtt_ms, guint * n_engine, gint batches)
{
  GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (out);

  if (m && m->frame_index == 0 && timed && *n_engine < (guint) batches) {
    rtt_ms[*n_engine] = m->round_trip_time / 1e6;
    engine_ms[(*n_engine)++] = m->batch_time / 1e6;
  }
  gst_buffer_unref (out);
  return 1;
}

int
main (int argc, char **argv)
{
  gint batch = 8, width = 320, height = 240, batches = 10, warmup = 2;
  gint threads = 0;
  gchar *backend = NULL, *model = NULL, *batch_str, *caps_str, *out_str;
  gchar *precision = NULL, *check_location = NULL;
  gchar *input_mean = NULL, *input_std = NULL, *channel_order = NULL;
  gchar **sets = NULL, **set;
  gdouble tolerance = 0.05;
  GOptionEntry entries[] = {
    {"model", 0, 0, G_OPTION_ARG_FILENAME, &model,
        "ONNX model (default: the embedded one)", "FILE"},
    {"batch", 0, 0, G_OPTION_ARG_INT, &batch, "Batch size (8)", "N"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width, "Frame width (320)", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height, "Frame height (240)", "H"},
    {"batches", 0, 0, G_OPTION_ARG_INT, &batches,
        "Timed batches (10)", "N"},
    {"warmup", 0, 0, G_OPTION_ARG_INT, &warmup,
        "Untimed batches before them (2)", "N"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend,
        "cpu, cuda or auto (auto)", "NAME"},
    {"threads", 0, 0, G_OPTION_ARG_INT, &threads,
        "The element's threads property (0: OpenMP's default)", "N"},
    {"precision", 0, 0, G_OPTION_ARG_STRING, &precision,
        "The element's precision property (fp32)", "NAME"},
    {"tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &tolerance,
        "The element's precision-tolerance property (0.05)", "T"},
    {"check-location", 0, 0, G_OPTION_ARG_FILENAME, &check_location,
        "The element's precision-check-location property (none: the "
          "warm-up's test frames)", "FILE"},
    {"input-mean", 0, 0, G_OPTION_ARG_STRING, &input_mean,
        "The element's input-mean property (0)", "ARRAY"},
    {"input-std", 0, 0, G_OPTION_ARG_STRING, &input_std,
        "The element's input-std property (1)", "ARRAY"},
    {"channel-order", 0, 0, G_OPTION_ARG_STRING, &channel_order,
        "The element's channel-order property (rgb)", "ORDER"},
    {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
        "Any other property of the element, as gst-launch-1.0 sets it "
          "(repeat it for more)", "PROP=VALUE"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- element frames per second");
  GstMemory *frames[N_FRAMES];
  GstElement *infer;
  GstBus *bus;
  GstHarness *h;
  GstCaps *out_caps;
  GstStructure *stats;
  guint64 single;
  gdouble precision_error = -1.0;
  const gchar *used = NULL;
  gchar *used_precision;
  GstPlugin *plugin;
  GError *error = NULL;
  gdouble *batch_ms, *engine_ms, *rtt_ms, seconds;
  guint n_engine = 0;
  gint64 start = 0, batch_start = 0, now;
  gint i, total, pulled = 0;
  GstBuffer *out;
  const gchar *plugin_file = "?";

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (batch < 1 || width < 1 || height < 1 || batches < 1 || warmup < 0) {
    g_printerr ("--batch, --width, --height and --batches must be positive, "
        "--warmup not negative\n");
    return 2;
  }

  plugin = gst_registry_find_plugin (gst_registry_get (), "cudabatchinfer");
  infer = gst_element_factory_make ("cudabatchinfer", NULL);
  if (plugin == NULL || infer == NULL) {
    g_printerr ("error: no cudabatchinfer element (set GST_PLUGIN_PATH)\n");
    return 1;
  }
  gst_object_ref_sink (infer);
  if (gst_plugin_get_filename (plugin))
    plugin_file = gst_plugin_get_filename (plugin);
  batch_str = g_strdup_printf ("%d", batch);
  gst_util_set_object_arg (G_OBJECT (infer), "batch", batch_str);
  gst_util_set_object_arg (G_OBJECT (infer), "backend",
      backend ? backend : "auto");
  g_object_set (infer, "threads", (guint) MAX (threads, 0), NULL);
  gst_util_set_object_arg (G_OBJECT (infer), "precision",
      precision ? precision : "fp32");
  g_object_set (infer, "precision-tolerance", tolerance, NULL);
  if (check_location)
    g_object_set (infer, "precision-check-location", check_location, NULL);
  if (input_mean)
    gst_util_set_object_arg (G_OBJECT (infer), "input-mean", input_mean);
  if (input_std)
    gst_util_set_object_arg (G_OBJECT (infer), "input-std", input_std);
  if (channel_order)
    gst_util_set_object_arg (G_OBJECT (infer), "channel-order", channel_order);
  if (model)
    g_object_set (infer, "model", model, NULL);
  for (set = sets; set && *set; set++) {
    gchar **kv = g_strsplit (*set, "=", 2);

    if (kv[0] == NULL || kv[1] == NULL
        || g_object_class_find_property (G_OBJECT_GET_CLASS (infer),
            kv[0]) == NULL) {
      g_printerr ("--set %s: not PROP=VALUE of a property of the element\n",
          *set);
      return 2;
    }
    gst_util_set_object_arg (G_OBJECT (infer), kv[0], kv[1]);
    g_strfreev (kv);
  }
  /* the harness gives the element no bus: ours keeps its error messages */
  bus = gst_bus_new ();
  gst_element_set_bus (infer, bus);
  /* the harness asserts on a failed state change: try it first, where a
   * model the engine cannot run fails with the element's message */
  if (gst_element_set_state (infer, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE) {
    print_bus_error (bus);
    g_printerr ("error: cudabatchinfer failed to go to PAUSED\n");
    return 1;
  }
  gst_element_set_state (infer, GST_STATE_NULL);

  h = gst_harness_new_with_element (infer, "sink", "src");
  caps_str = g_strdup_printf ("video/x-raw,format=RGB,width=%d,height=%d,"
      "framerate=30/1", width, height);
  /* the element plans and warms up on these caps */
  gst_harness_set_src_caps_str (h, caps_str);

  for (i = 0; i < N_FRAMES; i++)
    frames[i] = make_frame (width, height, i);
  total = (warmup + batches) * batch;
  batch_ms = g_new0 (gdouble, batches);
  engine_ms = g_new0 (gdouble, batches);
  rtt_ms = g_new0 (gdouble, batches);

  for (i = 0; i < total; i++) {
    GstBuffer *buf = gst_buffer_new ();
    GstFlowReturn ret;

    gst_buffer_append_memory (buf, gst_memory_ref (frames[i % N_FRAMES]));
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    if (i == warmup * batch)
      start = g_get_monotonic_time ();
    if (i % batch == 0)
      batch_start = g_get_monotonic_time ();
    ret = gst_harness_push (h, buf);
    if (ret != GST_FLOW_OK) {
      print_bus_error (bus);
      g_printerr ("error: push of frame %d returned %s\n", i,
          gst_flow_get_name (ret));
      return 1;
    }
    now = g_get_monotonic_time ();
    if (i % batch == batch - 1 && i >= warmup * batch)
      batch_ms[i / batch - warmup] = (now - batch_start) / 1e3;
    while ((out = gst_harness_try_pull (h)))
      pulled +=
          take_output (out, i >= warmup * batch, engine_ms, rtt_ms, &n_engine,
          batches);
  }
  /* the src pad task may still be pushing the last batches: the clock
   * stops when the last frame is out */
  while (pulled < total && (out = gst_harness_pull (h)))
    pulled += take_output (out, TRUE, engine_ms, rtt_ms, &n_engine, batches);
  seconds = (g_get_monotonic_time () - start) / 1e6;

  if (pulled != total) {
    g_printerr ("error: %d frames in, %d out\n", total, pulled);
    return 1;
  }
  out_caps = gst_pad_get_current_caps (h->sinkpad);
  out_str = out_caps ? gst_caps_to_string (out_caps) : g_strdup ("none");
  g_object_get (infer, "stats", &stats, NULL);
  if (!gst_structure_get_uint64 (stats, "single-thread-batches", &single))
    single = 0;
  used = gst_structure_get_string (stats, "precision");
  used_precision = g_strdup (used ? used : "none");
  gst_structure_get_double (stats, "precision-relative-error",
      &precision_error);
  gst_structure_free (stats);

  g_print ("fps=%.3f frames=%d batches=%d batch=%d seconds=%.4f "
      "batch-ms-median=%.3f engine-ms-median=%.3f rtt-ms-median=%.3f "
      "single-thread-batches=%"
      G_GUINT64_FORMAT " precision=%s precision-relative-error=%g in=%dx%d "
      "out-caps=\"%s\" plugin=\"%s\"\n",
      batches * batch / seconds, batches * batch, batches, batch, seconds,
      median (batch_ms, batches), n_engine ? median (engine_ms, n_engine) :
      -1.0, n_engine && rtt_ms[0] > 0 ? median (rtt_ms, n_engine) : -1.0,
      single, used_precision, precision_error, width, height, out_str,
      plugin_file);

  g_free (out_str);
  g_free (used_precision);
  if (out_caps)
    gst_caps_unref (out_caps);
  for (i = 0; i < N_FRAMES; i++)
    gst_memory_unref (frames[i]);
  gst_harness_teardown (h);
  gst_element_set_bus (infer, NULL);
  gst_object_unref (bus);
  gst_object_unref (infer);
  gst_object_unref (plugin);
  g_free (batch_ms);
  g_free (engine_ms);
  g_free (rtt_ms);
  g_strfreev (sets);
  g_free (caps_str);
  g_free (batch_str);
  g_free (backend);
  g_free (precision);
  g_free (check_location);
  g_free (input_mean);
  g_free (input_std);
  g_free (channel_order);
  g_free (model);
  return 0;
}
