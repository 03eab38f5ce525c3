/* GStreamer cudabatchinfer tests: 4:2:0 frames (I420, YV12, NV12, NV21)
 * straight from a decoder, against videoconvert to RGB
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The frames are decoded from a Theora file (tests/models/bars-420.ogv,
 * made by generate-media.sh), given the colorimetry under test by
 * videoconvert, then reach the element either as they are or through
 * videoconvert to RGB: the element must see the same pixels both ways.
 */
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <math.h>

#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#define MEDIA CBI_TEST_MODELS_DIR "/bars-420.ogv"
#define FRAMES 8

static const gchar *const formats[] = { "I420", "YV12", "NV12", "NV21" };

/* limited and full range, BT.601 and BT.709 (range:matrix:transfer:
 * primaries) */
static const gchar *const colorimetries[] = {
  "bt601", "bt709", "1:4:5:4", "1:3:5:1",
};

/* Colorimetries run: under valgrind, which checks the memory the paths
 * touch (the same for each), the first only */
static guint
n_colorimetries (void)
{
  return g_getenv ("CBI_TEST_UNDER_VALGRIND") ? 1 :
      G_N_ELEMENTS (colorimetries);
}

static void
on_handoff (GstElement * sink, GstBuffer * buffer, GstPad * pad,
    GPtrArray * out)
{
  g_ptr_array_add (out, gst_buffer_ref (buffer));
}

/* Runs @description (a sink named "out") to its end.
 * Returns: (transfer full): the buffers that reached the sink, and their
 * caps in @caps (transfer full). */
static GPtrArray *
run_pipeline (const gchar * description, GstCaps ** caps)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (description, &error);
  GstElement *sink;
  GstMessage *msg;
  GstPad *pad;

  fail_unless (pipeline != NULL, "%s: %s", description,
      error ? error->message : "");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  g_object_set (sink, "signal-handoffs", TRUE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), out);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
      GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gchar *debug = NULL;
    gst_message_parse_error (msg, &error, &debug);
    fail ("%s: %s (%s)", description, error->message, debug);
  }
  gst_message_unref (msg);
  pad = gst_element_get_static_pad (sink, "sink");
  *caps = gst_pad_get_current_caps (pad);
  gst_object_unref (pad);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return out;
}

/* The decoded frames as @format in @colorimetry: a launch line's start. */
static gchar *
source (const gchar * format, const gchar * colorimetry)
{
  /* to I420 of that colorimetry first: the other formats are the same
   * samples in other planes */
  return g_strdup_printf ("filesrc location=\"%s\" ! oggdemux ! theoradec "
      "! videoconvert ! video/x-raw,format=I420,colorimetry=%s "
      "! videoconvert ! video/x-raw,format=%s,colorimetry=%s", MEDIA,
      colorimetry, format, colorimetry);
}

static void
assert_same_tensors (GstBuffer * a, GstBuffer * b, const gchar * what)
{
  GstBatchTensorMeta *ta = gst_buffer_get_batch_tensor_meta (a);
  GstBatchTensorMeta *tb = gst_buffer_get_batch_tensor_meta (b);
  guint t;

  fail_unless (ta != NULL && tb != NULL, "%s: no tensors", what);
  fail_unless_equals_int (ta->n_tensors, tb->n_tensors);
  for (t = 0; t < ta->n_tensors; t++) {
    const gfloat *x = gst_batch_tensor_meta_get_data (ta, &ta->tensors[t]);
    const gfloat *y = gst_batch_tensor_meta_get_data (tb, &tb->tensors[t]);
    fail_unless_equals_uint64 (ta->tensors[t].size, tb->tensors[t].size);
    fail_unless (memcmp (x, y, ta->tensors[t].size) == 0,
        "%s: tensor %u differs (%g against %g first)", what, t, x[0], y[0]);
  }
}

/**
 * Runs:
 * @a: (out): the frames of formats[@f] in colorimetries[@c] straight into
 *   "cudabatchinfer batch=4 backend=cpu @element", and @caps_a, the caps
 *   at the sink
 * @b: (out): the same frames in I420 through videoconvert to RGB into the
 *   same element, then @back (a launch line's piece, or "") and @caps_b
 *
 * Each direction's buffers, transfer full.
 */
typedef struct
{
  GPtrArray *a, *b;
  GstCaps *caps_a, *caps_b;
  gchar *what;
} Runs;

static void
runs_init (Runs * r, guint f, guint c, const gchar * element,
    const gchar * back)
{
  gchar *src = source (formats[f], colorimetries[c]);
  gchar *i420 = source ("I420", colorimetries[c]);
  gchar *direct = g_strdup_printf ("%s ! cudabatchinfer batch=4 backend=cpu "
      "%s ! fakesink name=out", src, element);
  gchar *converted = g_strdup_printf ("%s ! videoconvert "
      "! video/x-raw,format=RGB ! cudabatchinfer batch=4 backend=cpu %s %s "
      "! fakesink name=out", i420, element, back);

  r->what = g_strdup_printf ("%s, %s %s", element, formats[f],
      colorimetries[c]);
  r->a = run_pipeline (direct, &r->caps_a);
  r->b = run_pipeline (converted, &r->caps_b);
  fail_unless_equals_int (r->a->len, FRAMES);
  fail_unless_equals_int (r->b->len, FRAMES);
  g_free (direct);
  g_free (converted);
  g_free (src);
  g_free (i420);
}

static void
runs_clear (Runs * r)
{
  g_ptr_array_unref (r->a);
  g_ptr_array_unref (r->b);
  gst_caps_unref (r->caps_a);
  gst_caps_unref (r->caps_b);
  g_free (r->what);
}

/* A classifier on 4:2:0 frames gives the very values it gives on
 * videoconvert's RGB of them: the element packs the same bytes. The
 * reference is videoconvert's I420 to RGB for every format: for NV12 and
 * NV21 videoconvert takes another path, which filters chroma across the
 * 2x2 blocks, where the element gives each block's pixels their own
 * block's chroma whatever the plane order. */
GST_START_TEST (test_yuv420_frames_infer_as_videoconvert_rgb_of_them)
{
  gchar *model = g_strdup_printf ("model=\"%s/classifier.onnx\"",
      CBI_TEST_MODELS_DIR);
  guint f, c, i;

  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    for (c = 0; c < n_colorimetries (); c++) {
      GstVideoInfo info;
      Runs r;

      runs_init (&r, f, c, model, "");
      /* the element took the decoder's format, no conversion between */
      fail_unless (gst_video_info_from_caps (&info, r.caps_a));
      fail_unless_equals_string (GST_VIDEO_INFO_NAME (&info), formats[f]);
      for (i = 0; i < FRAMES; i++)
        assert_same_tensors (g_ptr_array_index (r.a, i),
            g_ptr_array_index (r.b, i), r.what);
      runs_clear (&r);
    }
  g_free (model);
}

GST_END_TEST;

/* Each byte of @a's frames within @tolerance of @b's, in every plane;
 * Returns: the largest difference. */
static guint
compare_frames (GPtrArray * a, GstCaps * caps_a, GPtrArray * b,
    GstCaps * caps_b, guint tolerance, const gchar * what)
{
  GstVideoInfo ia, ib;
  guint i, p, x, y, worst = 0;

  fail_unless (gst_video_info_from_caps (&ia, caps_a));
  fail_unless (gst_video_info_from_caps (&ib, caps_b));
  fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&ia),
      GST_VIDEO_INFO_FORMAT (&ib));
  fail_unless_equals_int (a->len, b->len);
  for (i = 0; i < a->len; i++) {
    GstVideoFrame fa, fb;
    fail_unless (gst_video_frame_map (&fa, &ia, g_ptr_array_index (a, i),
            GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fb, &ib, g_ptr_array_index (b, i),
            GST_MAP_READ));
    for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&fa); p++) {
      const guint8 *da = GST_VIDEO_FRAME_PLANE_DATA (&fa, p);
      const guint8 *db = GST_VIDEO_FRAME_PLANE_DATA (&fb, p);
      const guint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&fa, p ? 1 : 0);
      const guint bytes = GST_VIDEO_FRAME_COMP_WIDTH (&fa, p ? 1 : 0) *
          GST_VIDEO_FRAME_COMP_PSTRIDE (&fa, p ? 1 : 0);
      for (y = 0; y < rows; y++)
        for (x = 0; x < bytes; x++) {
          guint d = ABS (da[y * GST_VIDEO_FRAME_PLANE_STRIDE (&fa, p) + x] -
              db[y * GST_VIDEO_FRAME_PLANE_STRIDE (&fb, p) + x]);
          worst = MAX (worst, d);
          fail_unless (d <= tolerance, "%s: frame %u plane %u (%u, %u): "
              "%u against %u", what, i, p, x, y,
              da[y * GST_VIDEO_FRAME_PLANE_STRIDE (&fa, p) + x],
              db[y * GST_VIDEO_FRAME_PLANE_STRIDE (&fb, p) + x]);
        }
    }
    gst_video_frame_unmap (&fa);
    gst_video_frame_unmap (&fb);
  }
  return worst;
}

/* An image model's output goes back in the input's 4:2:0 format, within
 * one step of videoconvert's conversion of its RGB output, at the
 * model's size and scaled back from it. */
static void
check_image_output (const gchar * model, const gchar * props)
{
  gchar *element = g_strdup_printf ("model=\"%s/%s\" %s", CBI_TEST_MODELS_DIR,
      model, props);
  guint f, c;

  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    for (c = 0; c < n_colorimetries (); c++) {
      gchar *back = g_strdup_printf ("! videoconvert "
          "! video/x-raw,format=%s,colorimetry=%s", formats[f],
          colorimetries[c]);
      Runs r;

      runs_init (&r, f, c, element, back);
      GST_INFO ("%s: within %u", r.what, compare_frames (r.a, r.caps_a, r.b,
              r.caps_b, 1, r.what));
      runs_clear (&r);
      g_free (back);
    }
  g_free (element);
}

GST_START_TEST (test_yuv420_image_output_is_within_one_of_videoconvert)
{
  check_image_output ("conv-relu.onnx", "");
}

GST_END_TEST;

GST_START_TEST (test_yuv420_scaled_output_is_within_one_of_videoconvert)
{
  /* an 8x8 model: the 64x48 frames are letterboxed in, and scaled back */
  check_image_output ("identity-fixed.onnx", "scaling=letterbox");
}

GST_END_TEST;

/* Odd sizes: the last column and row have chroma of their own; nothing
 * is read or written past the planes (valgrind and ASan run this). */
GST_START_TEST (test_yuv420_odd_sized_frames_keep_their_format_and_size)
{
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *line = g_strdup_printf ("videotestsrc num-buffers=3 "
        "pattern=ball ! video/x-raw,format=%s,width=33,height=17 "
        "! cudabatchinfer batch=2 backend=cpu model=\"%s/conv-relu.onnx\" "
        "! fakesink name=out", formats[f], CBI_TEST_MODELS_DIR);
    GstCaps *caps;
    GPtrArray *out = run_pipeline (line, &caps);
    GstVideoInfo info;

    fail_unless (gst_video_info_from_caps (&info, caps));
    fail_unless_equals_string (GST_VIDEO_INFO_NAME (&info), formats[f]);
    fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), 33);
    fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), 17);
    fail_unless_equals_int (out->len, 3);
    g_ptr_array_unref (out);
    gst_caps_unref (caps);
    g_free (line);
  }
}

GST_END_TEST;

/* warmup-caps in a 4:2:0 format warm up on the way to PAUSED, and the
 * stream's first batch then allocates nothing fresh */
GST_START_TEST (test_warmup_caps_in_i420_warm_up_before_the_first_frame)
{
  gchar *line = g_strdup_printf ("videotestsrc num-buffers=4 "
      "! video/x-raw,format=I420,width=32,height=24 ! cudabatchinfer "
      "name=inf batch=4 backend=cpu model=\"%s/conv-relu.onnx\" "
      "warmup-caps=\"video/x-raw,format=I420,width=32,height=24\" "
      "! fakesink name=out", CBI_TEST_MODELS_DIR);
  GstCaps *caps;
  GPtrArray *out = run_pipeline (line, &caps);
  GstBatchMemoryMeta *m;

  fail_unless_equals_int (out->len, 4);
  m = gst_buffer_get_batch_memory_meta (g_ptr_array_index (out, 0));
  fail_unless (m != NULL);
  fail_unless (m->warmed_up);
  fail_unless_equals_uint64 (m->fresh_allocations, 0);
  g_ptr_array_unref (out);
  gst_caps_unref (caps);
  g_free (line);
}

GST_END_TEST;

static Suite *
cudabatchinfer_yuv_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-yuv");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_yuv420_frames_infer_as_videoconvert_rgb_of_them);
  tcase_add_test (tc, test_yuv420_image_output_is_within_one_of_videoconvert);
  tcase_add_test (tc, test_yuv420_scaled_output_is_within_one_of_videoconvert);
  tcase_add_test (tc, test_yuv420_odd_sized_frames_keep_their_format_and_size);
  tcase_add_test (tc, test_warmup_caps_in_i420_warm_up_before_the_first_frame);
  return s;
}

GST_CHECK_MAIN (cudabatchinfer_yuv);
