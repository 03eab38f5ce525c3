/* GStreamer cudabatchinfer tests: frames in memory:CUDAMemory (a plugin
 * built with GStreamer's CUDA library)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Without a GPU (this suite's "no device" tests): the plugin loads, its
 * sink templates name CUDA memory, and its pads offer and accept system
 * memory only. With one (registered only there): frames that cudaupload
 * puts on the GPU are read there, none through the host, and give the
 * results of the same frames in system memory.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "cbicudaprobe.h"

#define CUDA_CAPS "video/x-raw(memory:CUDAMemory),format=NV12,width=64," \
    "height=48,framerate=30/1"
#define SYSTEM_CAPS "video/x-raw,format=NV12,width=64,height=48," \
    "framerate=30/1"

static gboolean
has_cuda_memory (const GstCaps * caps)
{
  guint i;

  for (i = 0; i < gst_caps_get_size (caps); i++)
    if (gst_caps_features_contains (gst_caps_get_features (caps, i),
            "memory:CUDAMemory"))
      return TRUE;
  return FALSE;
}

/* The templates say what a build with the library can take: CUDA memory
 * on every sink template, system memory out. */
GST_START_TEST (test_sink_templates_name_cuda_memory_and_src_ones_do_not)
{
  GstElementFactory *f = gst_element_factory_find ("cudabatchinfer");
  const GList *l;
  guint sinks = 0;

  fail_unless (f != NULL);
  for (l = gst_element_factory_get_static_pad_templates (f); l; l = l->next) {
    GstStaticPadTemplate *t = l->data;
    GstCaps *caps = gst_static_pad_template_get_caps (t);
    if (t->direction == GST_PAD_SINK) {
      fail_unless (has_cuda_memory (caps), "%s", t->name_template);
      sinks++;
    } else {
      fail_if (has_cuda_memory (caps), "%s", t->name_template);
    }
    gst_caps_unref (caps);
  }
  fail_unless_equals_int (sinks, 2);
  gst_object_unref (f);
}

GST_END_TEST;

/* No driver: the sink pads offer system memory only, refuse caps in CUDA
 * memory, and the element goes through its states as ever. */
GST_START_TEST (test_without_a_gpu_the_pads_offer_system_memory_only)
{
  GstHarness *h = gst_harness_new_parse ("cudabatchinfer backend=auto");
  GstPad *sink = gst_element_get_static_pad (h->element, "sink");
  GstCaps *cuda = gst_caps_from_string (CUDA_CAPS);
  GstCaps *system = gst_caps_from_string (SYSTEM_CAPS);
  GstCaps *offered;
  GstBuffer *out;
  guint i;

  gst_harness_set_sink_caps_str (h, "video/x-raw");
  offered = gst_pad_query_caps (sink, NULL);
  fail_if (gst_caps_is_empty (offered));
  fail_if (has_cuda_memory (offered), "offered %" GST_PTR_FORMAT, offered);
  gst_caps_unref (offered);
  /* asked for CUDA memory only: nothing */
  offered = gst_pad_query_caps (sink, cuda);
  fail_unless (gst_caps_is_empty (offered), "offered %" GST_PTR_FORMAT,
      offered);
  gst_caps_unref (offered);
  fail_if (gst_pad_query_accept_caps (sink, cuda));
  fail_unless (gst_pad_query_accept_caps (sink, system));

  /* system memory frames still run */
  gst_harness_set_src_caps (h, gst_caps_ref (system));
  for (i = 0; i < 2; i++) {
    GstBuffer *frame = gst_buffer_new_allocate (NULL, 64 * 48 * 3 / 2, NULL);
    gst_buffer_memset (frame, 0, 128 + i, 64 * 48 * 3 / 2);
    fail_unless_equals_int (gst_harness_push (h, frame), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 0; i < 2; i++) {
    out = gst_harness_pull (h);
    fail_unless (out != NULL);
    gst_buffer_unref (out);
  }
  gst_caps_unref (cuda);
  gst_caps_unref (system);
  gst_object_unref (sink);
  gst_harness_teardown (h);
}

GST_END_TEST;

static void
on_handoff (GstElement * sink, GstBuffer * buffer, GstPad * pad,
    GPtrArray * out)
{
  g_ptr_array_add (out, gst_buffer_ref (buffer));
}

/* Runs @line (its element "inf", its sink "out") to EOS: the buffers,
 * and the element's frames-on-device. */
static GPtrArray *
run_line (const gchar * line, guint64 * on_device)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GError *error = NULL;
  GstElement *p = gst_parse_launch (line, &error);
  GstElement *sink, *inf;
  GstStructure *stats;
  GstMessage *msg;

  fail_unless (p != NULL, "%s: %s", line, error ? error->message : "");
  sink = gst_bin_get_by_name (GST_BIN (p), "out");
  inf = gst_bin_get_by_name (GST_BIN (p), "inf");
  g_object_set (sink, "signal-handoffs", TRUE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), out);
  gst_element_set_state (p, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p), GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS, "%s: error", line);
  gst_message_unref (msg);
  g_object_get (inf, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint64 (stats, "frames-on-device", on_device));
  gst_structure_free (stats);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (inf);
  gst_object_unref (sink);
  gst_object_unref (p);
  return out;
}

/* Frames cudaupload puts on the GPU are read there: every one counts in
 * frames-on-device (no host copy), and the results are the system
 * memory path's, for packed RGB and 4:2:0. */
GST_START_TEST (test_cudaupload_frames_are_read_on_the_gpu_as_in_memory)
{
  static const gchar *formats[] = { "RGBA", "NV12", "I420" };
  guint f, i;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *src = g_strdup_printf ("videotestsrc num-buffers=20 "
        "pattern=ball ! video/x-raw,format=%s,width=64,height=48",
        formats[f]);
    gchar *gpu = g_strdup_printf ("%s ! cudaupload ! cudabatchinfer "
        "name=inf batch=8 backend=cuda ! fakesink name=out", src);
    gchar *sys = g_strdup_printf ("%s ! cudabatchinfer name=inf batch=8 "
        "backend=cuda ! fakesink name=out", src);
    guint64 dev_gpu, dev_sys;
    GPtrArray *a = run_line (gpu, &dev_gpu);
    GPtrArray *b = run_line (sys, &dev_sys);

    fail_unless_equals_uint64 (dev_gpu, 20);
    fail_unless_equals_uint64 (dev_sys, 0);
    fail_unless_equals_int (a->len, 20);
    fail_unless_equals_int (b->len, 20);
    for (i = 0; i < a->len; i++) {
      GstMapInfo ma, mb;
      gst_buffer_map (g_ptr_array_index (a, i), &ma, GST_MAP_READ);
      gst_buffer_map (g_ptr_array_index (b, i), &mb, GST_MAP_READ);
      fail_unless_equals_uint64 (ma.size, mb.size);
      fail_unless (memcmp (ma.data, mb.data, ma.size) == 0, "%s frame %u",
          formats[f], i);
      gst_buffer_unmap (g_ptr_array_index (a, i), &ma);
      gst_buffer_unmap (g_ptr_array_index (b, i), &mb);
    }
    g_ptr_array_unref (a);
    g_ptr_array_unref (b);
    g_free (gpu);
    g_free (sys);
    g_free (src);
  }
}

GST_END_TEST;

/* Two streams from cudaupload on request pads, the second joining while
 * the first streams: both negotiate CUDA memory, and every frame of both
 * is read on the GPU. */
GST_START_TEST (test_two_cudaupload_streams_batch_on_the_gpu)
{
  const gchar *line = "cudabatchinfer name=inf batch=4 backend=cuda "
      "videotestsrc num-buffers=12 ! video/x-raw,format=NV12,width=64,"
      "height=48 ! cudaupload ! inf.sink_0 inf.src_0 ! fakesink name=out "
      "videotestsrc num-buffers=12 pattern=ball ! video/x-raw,format=NV12,"
      "width=64,height=48 ! cudaupload ! inf.sink_1 inf.src_1 ! fakesink";
  guint64 on_device;
  GPtrArray *out = run_line (line, &on_device);

  fail_unless_equals_int (out->len, 12);
  fail_unless_equals_uint64 (on_device, 24);
  g_ptr_array_unref (out);
}

GST_END_TEST;

static Suite *
cudabatchinfer_cudamem_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-cudamem");
  TCase *tc = tcase_create ("general");
  GstElementFactory *upload;

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sink_templates_name_cuda_memory_and_src_ones_do_not);
  if (!cbi_test_have_cuda ("with a GPU, cudaupload's frames")) {
    tcase_add_test (tc, test_without_a_gpu_the_pads_offer_system_memory_only);
    return s;
  }
  upload = gst_element_factory_find ("cudaupload");
  if (upload) {
    tcase_add_test (tc,
        test_cudaupload_frames_are_read_on_the_gpu_as_in_memory);
    tcase_add_test (tc, test_two_cudaupload_streams_batch_on_the_gpu);
    gst_object_unref (upload);
  } else {
    g_print ("SKIP cudaupload's frames: no cudaupload (gst-plugins-bad's "
        "nvcodec)\n");
  }
  return s;
}

GST_CHECK_MAIN (cudabatchinfer_cudamem);
