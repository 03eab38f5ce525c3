/* print-batch-meta: runs a pipeline with a cudabatchinfer element in it and
 * prints the memory statistics of every batch, read from the
 * GstBatchMemoryMeta of the output buffers, and, for a model whose output
 * is not an image (a classifier), the largest value of each tensor of the
 * batch's first frame, read from its GstBatchTensorMeta.
 *
 *   print-batch-meta "videotestsrc num-buffers=120 ! video/x-raw,format=RGB \
 *       ! cudabatchinfer batch=16 ! fakesink"
 *
 * The first cudabatchinfer in the pipeline is the one watched. Exit status:
 * 0 when the pipeline reached EOS, 1 on an error.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#define MIB(b) ((b) / (1024.0 * 1024.0))

/* Each float32 tensor's shape and largest value, with its index. */
static void
print_tensors (GstBatchTensorMeta * tm)
{
  guint t, d;

  for (t = 0; t < tm->n_tensors; t++) {
    const GstBatchTensor *tensor = &tm->tensors[t];
    const gfloat *v = gst_batch_tensor_meta_get_data (tm, tensor);
    gsize i, best = 0, n = tensor->size / sizeof (gfloat);

    if (tensor->data_type != GST_BATCH_TENSOR_DATA_TYPE_FLOAT32 || n == 0)
      continue;
    for (i = 1; i < n; i++)
      if (v[i] > v[best])
        best = i;
    g_print ("          %s [", tensor->name);
    for (d = 0; d < tensor->n_dims; d++)
      g_print ("%s%" G_GSIZE_FORMAT, d ? "x" : "", tensor->dims[d]);
    g_print ("]: largest %.4f at %" G_GSIZE_FORMAT "\n", v[best], best);
  }
}

static gboolean
print_batch (GstBuffer ** buf, guint idx, gpointer user_data)
{
  GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (*buf);
  GstBatchTensorMeta *tm = gst_buffer_get_batch_tensor_meta (*buf);

  /* one line per batch: its first frame carries the same batch figures */
  if (m == NULL || m->frame_index != 0)
    return TRUE;

  g_print ("batch %3" G_GUINT64_FORMAT "  frames %2u + pad %2u  %-8s  "
      "fresh %2" G_GUINT64_FORMAT " (%7.2f MiB)  alloc %8.2f MiB  "
      "reserved %8.2f MiB  peak %8.2f MiB  %7.2f ms  %s%s\n",
      m->batch_index, m->frames, m->padded,
      m->replanned ? "REPLAN" : "", m->fresh_allocations,
      MIB (m->fresh_bytes), MIB (m->allocated_bytes),
      MIB (m->reserved_bytes), MIB (m->peak_reserved_bytes),
      m->batch_time / 1e6, m->backend, m->warmed_up ? " warm" : "");
  if (tm)
    print_tensors (tm);
  return TRUE;
}

/* cudabatchinfer pushes buffers one by one; an element between it and the
 * probe may group them into lists */
static GstPadProbeReturn
on_data (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf;

  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    gst_buffer_list_foreach (GST_PAD_PROBE_INFO_BUFFER_LIST (info),
        print_batch, NULL);
  } else {
    buf = GST_PAD_PROBE_INFO_BUFFER (info);
    print_batch (&buf, 0, NULL);
  }
  return GST_PAD_PROBE_OK;
}

static GstElement *
find_infer (GstBin * bin)
{
  GstIterator *it = gst_bin_iterate_recurse (bin);
  GValue item = G_VALUE_INIT;
  GstElement *found = NULL;

  while (found == NULL && gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&item);
    GstElementFactory *f = gst_element_get_factory (e);
    if (f && g_strcmp0 (GST_OBJECT_NAME (f), "cudabatchinfer") == 0)
      found = gst_object_ref (e);
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  return found;
}

static void
print_warmup (const GstStructure * s)
{
  guint64 fresh = 0, fresh_bytes = 0, peak = 0, reserved = 0, time = 0,
      steady = 0;

  gst_structure_get (s, "fresh-allocations", G_TYPE_UINT64, &fresh,
      "fresh-bytes", G_TYPE_UINT64, &fresh_bytes,
      "peak-reserved-bytes", G_TYPE_UINT64, &peak,
      "reserved-bytes", G_TYPE_UINT64, &reserved,
      "warmup-time", G_TYPE_UINT64, &time,
      "steady-batch-time", G_TYPE_UINT64, &steady, NULL);
  g_print ("warm-up: %" G_GUINT64_FORMAT " fresh allocations (%.2f MiB), "
      "peak %.2f MiB, %.2f MiB stay reserved, %.1f ms (a planned batch: "
      "%.1f ms)\n", fresh, MIB (fresh_bytes), MIB (peak), MIB (reserved),
      time / 1e6, steady / 1e6);
}

int
main (int argc, char **argv)
{
  GstElement *pipeline, *infer;
  GstStructure *stats;
  GError *error = NULL;
  GstPad *src;
  GstBus *bus;
  gboolean done = FALSE, ok = FALSE;
  gchar *stats_str;

  gst_init (&argc, &argv);
  if (argc != 2) {
    g_printerr ("usage: %s \"PIPELINE WITH cudabatchinfer\"\n", argv[0]);
    return 2;
  }
  pipeline = gst_parse_launch (argv[1], &error);
  if (pipeline == NULL) {
    g_printerr ("could not build the pipeline: %s\n", error->message);
    g_clear_error (&error);
    return 2;
  }
  infer = GST_IS_BIN (pipeline) ? find_infer (GST_BIN (pipeline)) : NULL;
  if (infer == NULL) {
    g_printerr ("the pipeline has no cudabatchinfer element\n");
    gst_object_unref (pipeline);
    return 2;
  }
  src = gst_element_get_static_pad (infer, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, on_data, NULL, NULL);
  gst_object_unref (src);

  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while (!done) {
    GstMessage *msg = gst_bus_timed_pop (bus, GST_CLOCK_TIME_NONE);

    switch (GST_MESSAGE_TYPE (msg)) {
      case GST_MESSAGE_ELEMENT:
        if (gst_message_has_name (msg, "cudabatchinfer-warmup"))
          print_warmup (gst_message_get_structure (msg));
        break;
      case GST_MESSAGE_EOS:
        ok = done = TRUE;
        break;
      case GST_MESSAGE_ERROR:{
        gchar *debug = NULL;
        gst_message_parse_error (msg, &error, &debug);
        g_printerr ("error from %s: %s\n%s\n", GST_OBJECT_NAME (msg->src),
            error->message, debug ? debug : "");
        g_clear_error (&error);
        g_free (debug);
        done = TRUE;
        break;
      }
      default:
        break;
    }
    gst_message_unref (msg);
  }

  g_object_get (infer, "stats", &stats, NULL);
  stats_str = gst_structure_to_string (stats);
  g_print ("stats: %s\n", stats_str);
  g_free (stats_str);
  gst_structure_free (stats);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (infer);
  gst_object_unref (pipeline);
  return ok ? 0 : 1;
}
