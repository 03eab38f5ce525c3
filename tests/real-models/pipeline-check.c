/* Runs one model through the element, as an application would
 * (filesrc ! decodebin ! videoconvert ! videoscale ! caps ! cudabatchinfer
 * ! fakesink), and reports what reached the application: tests/real-models/
 * pipeline.py runs it for each real model and judges the report.
 *
 * Usage: cbi-pipeline-check VIDEO MODEL WIDTH HEIGHT BATCH MEAN STD ORDER
 *          [OUTPUT-SCALE OUTPUT-OFFSET]
 * MEAN, STD and the output mapping are GStreamer arrays ("<0.5, 0.5, 0.5>").
 * With CBI_PIPELINE_SCALING set (stretch, letterbox), the frames go in at
 * their decoded size and the element scales them to the model's
 * (scaling=...); WIDTH and HEIGHT are then ignored. With
 * CBI_PIPELINE_PRECISION set (bf16, ...), the element runs in it
 * (precision=...).
 *
 * The report, one `key value` a line: `frames` (buffers out of the element),
 * `timestamps` (ok when every frame has a PTS and duration, PTS never going
 * back), `memory-metas` (frames with a GstBatchMemoryMeta),
 * `fresh-max` (the most fresh allocations any frame's meta reports),
 * `not-warm` (frames whose meta says the warm-up had not run),
 * `padded-batches` and `last-padded` (the padding of the last batch, from
 * its meta), `caps` (the output caps), `tensor` NAME DIMS for each tensor of
 * the first frame's GstBatchTensorMeta, `tensor-metas` (frames with one),
 * `varying` (frames whose output, tensors or image bytes, is not one
 * constant), `labels` I,I,... for each frame with a tensor meta (the
 * index of the largest value of each row of its first tensor, a row
 * running along the last dimension: a classifier's top-1, a recogniser's
 * label at each time step), then the element's `stats`. An error on the
 * bus is reported as `error MESSAGE` and exits 3; bad arguments exit 2.
 * With CBI_PIPELINE_TOLERANCE set, the element's precision-tolerance is
 * it. */

#include <gst/gst.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  guint frames;
  gboolean timestamps_ok;
  GstClockTime last_pts;
  guint memory_metas;
  guint64 fresh_max;
  guint not_warm;
  guint padded_batches;
  guint last_padded;
  guint tensor_metas;
  guint varying;
  GString *first_tensors;
  GString *labels;
} Report;

static gboolean
floats_vary (const gfloat * v, gsize n)
{
  gsize i;

  for (i = 1; i < n; i++)
    if (v[i] != v[0])
      return TRUE;
  return FALSE;
}

static gboolean
bytes_vary (const guint8 * v, gsize n)
{
  gsize i;

  for (i = 1; i < n; i++)
    if (v[i] != v[0])
      return TRUE;
  return FALSE;
}

/* "labels I,I,...\n" of @t's rows onto @out */
static void
append_labels (GString * out, GstBatchTensorMeta * tm,
    const GstBatchTensor * t)
{
  const gfloat *v = gst_batch_tensor_meta_get_data (tm, t);
  gsize n = t->size / sizeof (gfloat), cols, row, k, best;

  cols = t->n_dims > 0 ? t->dims[t->n_dims - 1] : 0;
  g_string_append (out, "labels ");
  for (row = 0; cols > 0 && (row + 1) * cols <= n; row++) {
    const gfloat *x = v + row * cols;
    for (best = 0, k = 1; k < cols; k++)
      if (x[k] > x[best])
        best = k;
    g_string_append_printf (out, "%s%" G_GSIZE_FORMAT, row ? "," : "", best);
  }
  g_string_append_c (out, '\n');
}

static GstPadProbeReturn
on_buffer (G_GNUC_UNUSED GstPad * pad, GstPadProbeInfo * info,
    gpointer user_data)
{
  Report *r = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstBatchMemoryMeta *mem;
  GstBatchTensorMeta *tm;
  gboolean vary = FALSE;

  r->frames++;
  if (!GST_BUFFER_PTS_IS_VALID (buf) || !GST_BUFFER_DURATION_IS_VALID (buf)
      || (GST_CLOCK_TIME_IS_VALID (r->last_pts)
          && GST_BUFFER_PTS (buf) < r->last_pts))
    r->timestamps_ok = FALSE;
  r->last_pts = GST_BUFFER_PTS (buf);

  mem = (GstBatchMemoryMeta *) gst_buffer_get_meta (buf,
      GST_BATCH_MEMORY_META_API_TYPE);
  if (mem) {
    r->memory_metas++;
    r->fresh_max = MAX (r->fresh_max, mem->fresh_allocations);
    if (!mem->warmed_up)
      r->not_warm++;
    /* each batch's metas say its padding; count a batch once, on its first
     * frame */
    if (mem->frame_index == 0) {
      if (mem->padded > 0)
        r->padded_batches++;
      r->last_padded = mem->padded;
    }
  }

  tm = gst_buffer_get_batch_tensor_meta (buf);
  if (tm) {
    guint i, d;

    r->tensor_metas++;
    if (tm->n_tensors > 0
        && tm->tensors[0].data_type == GST_BATCH_TENSOR_DATA_TYPE_FLOAT32)
      append_labels (r->labels, tm, &tm->tensors[0]);
    for (i = 0; i < tm->n_tensors; i++) {
      const GstBatchTensor *t = &tm->tensors[i];

      if (t->data_type == GST_BATCH_TENSOR_DATA_TYPE_FLOAT32
          && floats_vary (gst_batch_tensor_meta_get_data (tm, t),
              t->size / sizeof (gfloat)))
        vary = TRUE;
      if (r->tensor_metas == 1) {
        g_string_append_printf (r->first_tensors, "tensor %s ", t->name);
        for (d = 0; d < t->n_dims; d++)
          g_string_append_printf (r->first_tensors, "%s%" G_GSIZE_FORMAT,
              d ? "x" : "", t->dims[d]);
        g_string_append_c (r->first_tensors, '\n');
      }
    }
  } else {
    GstMapInfo map;

    if (gst_buffer_map (buf, &map, GST_MAP_READ)) {
      vary = bytes_vary (map.data, map.size);
      gst_buffer_unmap (buf, &map);
    }
  }
  if (vary)
    r->varying++;
  return GST_PAD_PROBE_OK;
}

int
main (int argc, char **argv)
{
  GstElement *pipeline, *infer;
  GstPad *src;
  GstBus *bus;
  GstMessage *msg;
  GstStructure *stats = NULL;
  GstCaps *caps;
  GError *err = NULL;
  gchar *desc, *out_map = NULL, *s, *size, *precision = NULL;
  gchar *tolerance = NULL;
  const gchar *scaling;
  Report r = { 0, TRUE, GST_CLOCK_TIME_NONE, 0, 0, 0, 0, 0, 0, 0, NULL,
    NULL
  };
  int status = 0;

  gst_init (&argc, &argv);
  if (argc != 9 && argc != 11) {
    fprintf (stderr, "usage: %s VIDEO MODEL WIDTH HEIGHT BATCH MEAN STD "
        "ORDER [OUTPUT-SCALE OUTPUT-OFFSET]\n", argv[0]);
    return 2;
  }
  if (argc == 11)
    out_map = g_strdup_printf ("output-scale=\"%s\" output-offset=\"%s\"",
        argv[9], argv[10]);
  scaling = g_getenv ("CBI_PIPELINE_SCALING");
  if (scaling)
    size = g_strdup_printf ("video/x-raw,format=RGB ! cudabatchinfer "
        "scaling=%s", scaling);
  else
    size = g_strdup_printf ("videoscale ! video/x-raw,format=RGB,width=%s,"
        "height=%s ! cudabatchinfer", argv[3], argv[4]);
  if (g_getenv ("CBI_PIPELINE_PRECISION"))
    precision = g_strdup_printf ("precision=%s",
        g_getenv ("CBI_PIPELINE_PRECISION"));
  if (g_getenv ("CBI_PIPELINE_TOLERANCE"))
    tolerance = g_strdup_printf ("precision-tolerance=%s",
        g_getenv ("CBI_PIPELINE_TOLERANCE"));
  desc = g_strdup_printf ("filesrc location=\"%s\" ! decodebin ! videoconvert"
      " ! %s name=infer model=\"%s\" batch=%s input-mean=\"%s\""
      " input-std=\"%s\" channel-order=%s %s %s %s ! fakesink sync=false",
      argv[1], size, argv[2], argv[5], argv[6], argv[7], argv[8],
      out_map ? out_map : "", precision ? precision : "",
      tolerance ? tolerance : "");
  g_free (size);
  g_free (precision);
  g_free (tolerance);
  pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  g_free (out_map);
  if (!pipeline) {
    printf ("error %s\n", err->message);
    g_error_free (err);
    return 2;
  }

  r.first_tensors = g_string_new (NULL);
  r.labels = g_string_new (NULL);
  infer = gst_bin_get_by_name (GST_BIN (pipeline), "infer");
  src = gst_element_get_static_pad (infer, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, &r, NULL);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;

    gst_message_parse_error (msg, &err, &dbg);
    /* one line, so the driver can print it as the reason */
    s = g_strdelimit (g_strdup (err->message), "\n", ' ');
    printf ("error %s\n", s);
    g_free (s);
    g_clear_error (&err);
    g_free (dbg);
    status = 3;
  }
  gst_message_unref (msg);
  gst_object_unref (bus);

  caps = gst_pad_get_current_caps (src);
  g_object_get (infer, "stats", &stats, NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);

  printf ("frames %u\n", r.frames);
  printf ("timestamps %s\n", r.timestamps_ok ? "ok" : "bad");
  printf ("memory-metas %u\n", r.memory_metas);
  printf ("fresh-max %" G_GUINT64_FORMAT "\n", r.fresh_max);
  printf ("not-warm %u\n", r.not_warm);
  printf ("padded-batches %u\n", r.padded_batches);
  printf ("last-padded %u\n", r.last_padded);
  if (caps) {
    s = gst_caps_to_string (caps);
    printf ("caps %s\n", s);
    g_free (s);
    gst_caps_unref (caps);
  }
  printf ("%s", r.first_tensors->str);
  printf ("tensor-metas %u\n", r.tensor_metas);
  printf ("varying %u\n", r.varying);
  printf ("%s", r.labels->str);
  if (stats) {
    s = gst_structure_to_string (stats);
    printf ("stats %s\n", s);
    g_free (s);
    gst_structure_free (stats);
  }

  g_string_free (r.first_tensors, TRUE);
  g_string_free (r.labels, TRUE);
  gst_object_unref (src);
  gst_object_unref (infer);
  gst_object_unref (pipeline);
  /* lets GST_TRACERS=leaks report what the run left alive */
  gst_deinit ();
  return status;
}
