/* first-last-batch: what warm-up and last-batch padding save.
 *
 * Runs FRAMES frames at BATCH through cudabatchinfer four times (warm-up
 * on/off x padding on/off), one batch at a time (max-inflight=1) so that a
 * batch's time is its own, and prints, per batch, its engine time and its
 * fresh allocations, then for each run the ratio of the first and the last
 * batch's time to the median batch. A fifth run, warm-up and padding with
 * --max-inflight batches in flight, gives the stream's steady throughput
 * with uploads and downloads overlapping the computation, against the
 * first run's. All runs happen in one process, one after the other, so the
 * ratios compare like with like on a noisy machine.
 *
 *   first-last-batch [--frames 120] [--batch 16] [--width 640]
 *                    [--height 480] [--backend cpu] [--model file.onnx]
 *                    [--max-inflight 2]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BATCHES 1024

typedef struct
{
  guint n;
  gdouble ms[MAX_BATCHES];
  guint64 fresh[MAX_BATCHES];
  guint64 fresh_bytes[MAX_BATCHES];
  gboolean replanned[MAX_BATCHES];
  guint frames[MAX_BATCHES];
  gint64 done_us[MAX_BATCHES];  /* its last frame left the element */
} Run;

static gboolean
record (GstBuffer ** buf, guint idx, gpointer user_data)
{
  Run *run = user_data;
  GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (*buf);

  if (m && m->frame_index == 0 && run->n < MAX_BATCHES) {
    run->ms[run->n] = m->batch_time / 1e6;
    run->fresh[run->n] = m->fresh_allocations;
    run->fresh_bytes[run->n] = m->fresh_bytes;
    run->replanned[run->n] = m->replanned;
    run->frames[run->n] = m->frames;
    run->n++;
  }
  if (m && m->frame_index + 1 == m->frames && run->n > 0)
    run->done_us[run->n - 1] = g_get_monotonic_time ();
  return TRUE;
}

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);

  record (&buf, 0, user_data);
  return GST_PAD_PROBE_OK;
}

static gint
cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

static gdouble
median (const gdouble * v, guint n)
{
  gdouble *s = g_memdup2 (v, n * sizeof (gdouble)), m;

  qsort (s, n, sizeof (gdouble), cmp_double);
  m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  g_free (s);
  return m;
}

/* Frames a second from the end of the first batch to the end of the last:
 * the stream's pace once running, transfers and pushing included. */
static gdouble
stream_fps (const Run * r)
{
  guint64 frames = 0;
  guint b;

  for (b = 1; b < r->n; b++)
    frames += r->frames[b];
  return frames * 1e6 / MAX (r->done_us[r->n - 1] - r->done_us[0], 1);
}

/* Returns: wall time from NULL to EOS in ms, or a negative value on error. */
static gdouble
run_pipeline (const gchar * desc, Run * run)
{
  GError *error = NULL;
  GstElement *p = gst_parse_launch (desc, &error), *infer;
  GstMessage *msg;
  GstPad *pad;
  GstBus *bus;
  gint64 start;
  gdouble wall;

  if (p == NULL) {
    g_printerr ("%s\n", error->message);
    g_clear_error (&error);
    return -1;
  }
  infer = gst_bin_get_by_name (GST_BIN (p), "infer");
  pad = gst_element_get_static_pad (infer, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, run, NULL);
  gst_object_unref (pad);
  gst_object_unref (infer);

  bus = gst_element_get_bus (p);
  start = g_get_monotonic_time ();
  gst_element_set_state (p, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  wall = (g_get_monotonic_time () - start) / 1e3;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &error, NULL);
    g_printerr ("error: %s\n", error->message);
    g_clear_error (&error);
    wall = -1;
  }
  gst_message_unref (msg);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  return wall;
}

int
main (int argc, char **argv)
{
  gint frames = 120, batch = 16, width = 640, height = 480, inflight = 2;
  gchar *backend = NULL, *model = NULL, *model_prop;
  GOptionEntry entries[] = {
    {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "Frames per run", "N"},
    {"batch", 0, 0, G_OPTION_ARG_INT, &batch, "Batch size", "N"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width, "Frame width", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height, "Frame height", "H"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "cpu, cuda or auto",
        "NAME"},
    {"model", 0, 0, G_OPTION_ARG_FILENAME, &model,
        "ONNX model (default: the embedded one)", "FILE"},
    {"max-inflight", 0, 0, G_OPTION_ARG_INT, &inflight,
        "Batches in flight in the last run", "N"},
    {NULL}
  };
  static const struct
  {
    const gchar *name;
    const gchar *props;
  } configs[] = {
    {"warm-up + padding", "warmup=true pad-mode=repeat-last"},
    {"warm-up, no padding", "warmup=true pad-mode=none"},
    {"no warm-up + padding", "warmup=false pad-mode=repeat-last"},
    {"neither", "warmup=false pad-mode=none"},
    /* the last run: --max-inflight batches in flight, the others one */
    {"both, in flight", "warmup=true pad-mode=repeat-last"},
  };
  GOptionContext *ctx = g_option_context_new ("- first and last batch cost");
  Run runs[G_N_ELEMENTS (configs)];
  gdouble wall[G_N_ELEMENTS (configs)];
  GError *error = NULL;
  guint c, b, n_batches = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  model_prop = model ? g_strdup_printf ("model=\"%s\"", model) : g_strdup ("");

  if (inflight < 1 || inflight > 8) {
    g_printerr ("--max-inflight takes 1 to 8\n");
    return 2;
  }
  for (c = 0; c < G_N_ELEMENTS (configs); c++) {
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d "
        "pattern=ball ! video/x-raw,format=RGB,width=%d,height=%d,"
        "framerate=30/1 ! cudabatchinfer name=infer batch=%d backend=%s %s %s "
        "max-inflight=%d ! fakesink", frames, width, height, batch,
        backend ? backend : "auto", model_prop, configs[c].props,
        c == G_N_ELEMENTS (configs) - 1 ? inflight : 1);
    memset (&runs[c], 0, sizeof (Run));
    wall[c] = run_pipeline (desc, &runs[c]);
    g_free (desc);
    if (wall[c] < 0 || runs[c].n < 3) {
      g_printerr ("run '%s' failed\n", configs[c].name);
      return 1;
    }
    n_batches = MAX (n_batches, runs[c].n);
  }

  g_print ("%d frames of %dx%d at batch %d, %s: engine time per batch in ms "
      "(fresh allocations; * = re-planned)\n\n", frames, width, height, batch,
      model ? model : "embedded model");
  g_print ("%-6s", "batch");
  for (c = 0; c < G_N_ELEMENTS (configs); c++)
    g_print ("  %22s", configs[c].name);
  g_print ("\n");
  for (b = 0; b < n_batches; b++) {
    g_print ("%-6u", b);
    for (c = 0; c < G_N_ELEMENTS (configs); c++) {
      if (b < runs[c].n)
        g_print ("  %13.2f (%3" G_GUINT64_FORMAT ")%s  ", runs[c].ms[b],
            runs[c].fresh[b], runs[c].replanned[b] ? "*" : " ");
      else
        g_print ("  %22s", "");
    }
    g_print ("\n");
  }

  g_print ("\n%-22s %10s %10s %10s %12s %14s %10s %8s %11s\n", "run",
      "median ms", "first/med", "last/med", "fresh after", "fresh MiB",
      "wall ms", "fps", "stream fps");
  for (c = 0; c < G_N_ELEMENTS (configs); c++) {
    Run *r = &runs[c];
    gdouble med = median (r->ms, r->n);
    guint64 fresh = 0, bytes = 0;
    gdouble total = 0.0;
    for (b = 0; b < r->n; b++) {
      fresh += r->fresh[b];
      bytes += r->fresh_bytes[b];
      total += r->ms[b];
    }
    g_print ("%-22s %10.2f %10.2f %10.2f %12" G_GUINT64_FORMAT " %14.1f "
        "%10.1f %8.1f %11.1f\n", configs[c].name, med, r->ms[0] / med,
        r->ms[r->n - 1] / med, fresh, bytes / 1048576.0, wall[c],
        frames * 1000.0 / total, stream_fps (r));
  }
  g_print ("\nstream fps, %d batches in flight / 1: %.2f\n", inflight,
      stream_fps (&runs[G_N_ELEMENTS (configs) - 1]) / stream_fps (&runs[0]));
  g_print ("\n'fresh after' counts allocations in real batches (the warm-up "
      "is not one); 'wall' is NULL to EOS, warm-up included; 'fps' is the "
      "frames over the batches' engine time (packing, upload, layers, "
      "download, unpacking: with batches in flight these overlap, so it "
      "undercounts); 'stream fps' is the frames after the first batch over "
      "the time from its end to the last one's, the source's and the "
      "pushing's time included.\n");
  g_free (backend);
  g_free (model);
  g_free (model_prop);
  return 0;
}
