/* GStreamer cudabatchinfer element tests on imported models: outputs of
 * another size, tensor outputs, and results against onnxruntime
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The references are what onnxruntime computed for one 32x24 frame
 * (tests/models/generate.py writes <model>.frame.rgb and
 * <model>.ort.out.bin, float32 NCHW with the input scaled by 1/255).
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>
#include <math.h>
#include <string.h>

#define W 32
#define H 24
#define FRAME_DURATION (GST_SECOND / 30)
#define CAPS_RGB "video/x-raw,format=RGB,width=32,height=24,framerate=30/1"

static gchar *
model_path (const gchar * name)
{
  return g_build_filename (CBI_TEST_MODELS_DIR, name, NULL);
}

static gpointer
read_model_file (const gchar * name, gsize expected)
{
  gchar *path = model_path (name), *data = NULL;
  gsize size = 0;

  fail_unless (g_file_get_contents (path, &data, &size, NULL), "%s", path);
  fail_unless_equals_uint64 (size, expected);
  g_free (path);
  return data;
}

/* A harness around cudabatchinfer running tests/models/@model. */
static GstHarness *
model_harness (const gchar * model, const gchar * props)
{
  gchar *path = model_path (model);
  gchar *desc = g_strdup_printf ("cudabatchinfer model=\"%s\" %s", path,
      props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstHarness *h;

  fail_unless (e != NULL, "could not make %s", desc);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  g_free (desc);
  g_free (path);
  return h;
}

/* Pushes @n copies of @stem's reference frame, then EOS. */
static void
push_reference_frames (GstHarness * h, const gchar * stem, guint n)
{
  gchar *name = g_strconcat (stem, ".frame.rgb", NULL);
  guint8 *rgb = read_model_file (name, W * H * 3);
  guint i;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_buffer_new_memdup (rgb, W * H * 3);
    GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
    GST_BUFFER_DURATION (buf) = FRAME_DURATION;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  g_free (rgb);
  g_free (name);
}

/* The element's output bytes against onnxruntime's floats for an image
 * model: byte = value x 255, within one step. */
static void
assert_image_matches_onnxruntime (GstBuffer * out, const gchar * stem,
    guint width, guint height)
{
  gchar *name = g_strconcat (stem, ".ort.out.bin", NULL);
  const gsize plane = (gsize) width * height;
  gfloat *ref = read_model_file (name, 3 * plane * sizeof (gfloat));
  GstMapInfo map;
  gsize i, c;

  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  fail_unless_equals_uint64 (map.size, 3 * plane);
  for (i = 0; i < plane; i++) {
    for (c = 0; c < 3; c++) {
      gint expected = (gint) CLAMP (ref[c * plane + i] * 255.0f + 0.5f, 0,
          255);
      fail_unless (ABS ((gint) map.data[i * 3 + c] - expected) <= 1,
          "%s pixel %" G_GSIZE_FORMAT " channel %" G_GSIZE_FORMAT ": %u, "
          "onnxruntime %d", stem, i, c, map.data[i * 3 + c], expected);
    }
  }
  gst_buffer_unmap (out, &map);
  g_free (ref);
  g_free (name);
}

GST_START_TEST (test_superres_doubles_the_frame_size_and_matches_onnxruntime)
{
  GstHarness *h = model_harness ("superres.onnx", "batch=4");
  GstCaps *caps;
  GstStructure *s;
  gint width = 0, height = 0;
  guint i;

  gst_harness_set_sink_caps_str (h, "video/x-raw,format=RGB");
  /* 3 frames: one batch padded from 3 to 4 at EOS */
  push_reference_frames (h, "superres", 3);
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (caps != NULL);
  s = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_get_int (s, "width", &width));
  fail_unless (gst_structure_get_int (s, "height", &height));
  fail_unless_equals_int (width, 2 * W);
  fail_unless_equals_int (height, 2 * H);
  gst_caps_unref (caps);

  for (i = 0; i < 3; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (out);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * FRAME_DURATION);
    fail_unless (m != NULL);
    fail_unless (m->warmed_up && !m->replanned);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    fail_unless_equals_int (m->padded, 1);
    assert_image_matches_onnxruntime (out, "superres", 2 * W, 2 * H);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The default model keeps the size: a caps query proxies the downstream
 * size. The x2 model drops it: 64x48 downstream takes 32x24 upstream. */
/* A model whose input is channels last (N x H x W x 3, as Keras exports)
 * takes RGB frames as any image model does and gives frames back; the
 * engine's numbers for it are checked against onnxruntime in
 * infer/onnx.c */
GST_START_TEST (test_a_channels_last_model_takes_frames_and_gives_frames)
{
  GstHarness *h = model_harness ("nhwc-scaled.onnx", "batch=2");
  GstBuffer *out[4];
  GstMapInfo a, b;
  guint i;

  push_reference_frames (h, "classifier", 4);
  for (i = 0; i < 4; i++) {
    out[i] = gst_harness_pull (h);
    fail_unless (out[i] != NULL);
    fail_unless_equals_uint64 (gst_buffer_get_size (out[i]), W * H * 3);
  }
  /* the same frame in each slot of a batch gives the same frame out */
  fail_unless (gst_buffer_map (out[0], &a, GST_MAP_READ));
  fail_unless (gst_buffer_map (out[3], &b, GST_MAP_READ));
  fail_unless (memcmp (a.data, b.data, a.size) == 0);
  gst_buffer_unmap (out[3], &b);
  gst_buffer_unmap (out[0], &a);
  for (i = 0; i < 4; i++)
    gst_buffer_unref (out[i]);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Pushes two classifier frames through @model at batch 2 with a bus on
 * the element; returns the bus's first warning (transfer full, nullable)
 * after checking that both frames came out. */
static GstMessage *
warm_up_warning (const gchar * model)
{
  GstHarness *h = model_harness (model, "batch=2");
  GstBus *bus = gst_bus_new ();
  GstMessage *m;
  guint i;

  gst_element_set_bus (h->element, bus);
  push_reference_frames (h, "classifier", 2);
  for (i = 0; i < 2; i++)
    gst_buffer_unref (gst_harness_pull (h));
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  return m;
}

GST_START_TEST (test_nan_in_an_output_at_warm_up_is_a_warning_naming_it)
{
  GstMessage *m = warm_up_warning ("nan-weights.onnx");
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (m != NULL, "no warning for a model that gives NaN");
  gst_message_parse_warning (m, &err, &debug);
  fail_unless (g_error_matches (err, GST_STREAM_ERROR,
          GST_STREAM_ERROR_FAILED), "%s", err->message);
  /* its channel 1: a third of the 2 frames' values */
  fail_unless (strstr (debug, "output output: 1536 of its values") != NULL,
      "%s", debug);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (m);
  /* a model that gives numbers says nothing */
  fail_unless ((m = warm_up_warning ("superres.onnx")) == NULL);
}

GST_END_TEST;

GST_START_TEST (test_caps_queries_drop_the_size_only_for_a_resizing_model)
{
  const gchar *down = "video/x-raw,format=RGB,width=64,height=48";
  GstCaps *in = gst_caps_from_string (CAPS_RGB), *allowed;
  GstHarness *h = model_harness ("superres.onnx", "");
  GstHarness *plain = gst_harness_new_parse ("cudabatchinfer");

  gst_harness_set_sink_caps_str (h, down);
  gst_harness_play (plain);
  gst_harness_set_sink_caps_str (plain, down);

  allowed = gst_pad_peer_query_caps (h->srcpad, NULL);
  fail_unless (gst_caps_can_intersect (allowed, in), "%" GST_PTR_FORMAT,
      allowed);
  gst_caps_unref (allowed);
  allowed = gst_pad_peer_query_caps (plain->srcpad, NULL);
  fail_if (gst_caps_can_intersect (allowed, in), "%" GST_PTR_FORMAT, allowed);
  gst_caps_unref (allowed);

  gst_caps_unref (in);
  gst_harness_teardown (plain);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_style_net_matches_onnxruntime)
{
  GstHarness *h = model_harness ("style.onnx", "batch=2");
  GstBuffer *out;

  push_reference_frames (h, "style", 1);
  out = gst_harness_pull (h);
  assert_image_matches_onnxruntime (out, "style", W, H);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_classifier_passes_frames_through_with_its_probabilities)
{
  GstHarness *h = model_harness ("classifier.onnx", "batch=4");
  gfloat *ref = read_model_file ("classifier.ort.out.bin",
      10 * sizeof (gfloat));
  guint8 *rgb = read_model_file ("classifier.frame.rgb", W * H * 3);
  guint i, k;

  /* 5 frames: a full batch, then one padded to 4 */
  push_reference_frames (h, "classifier", 5);
  for (i = 0; i < 5; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchTensorMeta *tm = gst_buffer_get_batch_tensor_meta (out);
    GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (out);
    const GstBatchTensor *t;
    const gfloat *p;
    gfloat sum = 0.0f;

    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * FRAME_DURATION);
    fail_unless (gst_buffer_memcmp (out, 0, rgb, W * H * 3) == 0,
        "frame %u was not passed through", i);
    fail_unless (m != NULL && m->warmed_up && !m->replanned);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    fail_unless (tm != NULL, "frame %u has no tensor meta", i);
    fail_unless_equals_int (tm->n_tensors, 1);
    t = gst_batch_tensor_meta_get_tensor (tm, "probabilities");
    fail_unless (t != NULL);
    fail_unless_equals_int (t->n_dims, 2);
    fail_unless_equals_uint64 (t->dims[0], 1);
    fail_unless_equals_uint64 (t->dims[1], 10);
    fail_unless_equals_int (t->data_type, GST_BATCH_TENSOR_DATA_TYPE_FLOAT32);
    fail_unless_equals_uint64 (t->size, 10 * sizeof (gfloat));
    p = gst_batch_tensor_meta_get_data (tm, t);
    for (k = 0; k < 10; k++) {
      fail_unless (fabsf (p[k] - ref[k]) < 1e-4f, "frame %u class %u: %f, "
          "onnxruntime %f", i, k, p[k], ref[k]);
      sum += p[k];
    }
    fail_unless (fabsf (sum - 1.0f) < 1e-4f);
    gst_buffer_unref (out);
  }
  g_free (rgb);
  g_free (ref);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Runs prob-map.onnx with ImageNet input normalisation and @props on two
 * RGB frames, red 0 then red 255 (green and blue 128); gives the first
 * byte of each output. */
static void
run_prob_map (const gchar * props, guint8 bytes[2])
{
  gchar *all = g_strdup_printf ("batch=2 input-mean=\"<0.485, 0.456, "
      "0.406>\" input-std=\"<0.229, 0.224, 0.225>\" %s", props);
  GstHarness *h = model_harness ("prob-map.onnx", all);
  guint i;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  for (i = 0; i < 2; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);
    GstMapInfo map;
    guint p;

    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    for (p = 0; p < W * H; p++) {
      map.data[3 * p] = i == 0 ? 0 : 255;
      map.data[3 * p + 1] = map.data[3 * p + 2] = 128;
    }
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  }
  for (i = 0; i < 2; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstMapInfo map;
    guint p;

    gst_buffer_map (out, &map, GST_MAP_READ);
    /* a grey map: every byte of every pixel the same */
    for (p = 1; p < W * H * 3; p++)
      fail_unless_equals_int (map.data[p], map.data[0]);
    bytes[i] = map.data[0];
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_free (all);
}

GST_START_TEST (test_output_mapping_turns_a_probability_map_into_0_to_255)
{
  guint8 bytes[2];

  run_prob_map ("output-scale=\"<255.0>\" output-offset=\"<0.0>\"", bytes);
  fail_unless_equals_int (bytes[0], 0);
  fail_unless_equals_int (bytes[1], 255);
  /* unset, results map back through the input normalisation: p = 0 is
   * mean x 255 (ImageNet red: 124), p = 1 is (std + mean) x 255 */
  run_prob_map ("", bytes);
  fail_unless_equals_int (bytes[0], 124);
  fail_unless_equals_int (bytes[1], 182);
}

GST_END_TEST;

/* The values @e's per-channel property @name holds: how many, and the
 * last one (0 when none). */
static guint
channel_values (GstElement * e, const gchar * name, gdouble * last)
{
  GValue v = G_VALUE_INIT;
  guint n;

  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), name, &v);
  n = gst_value_array_get_size (&v);
  *last = n ? g_value_get_double (gst_value_array_get_value (&v, n - 1)) : 0;
  g_value_unset (&v);
  return n;
}

GST_START_TEST (test_output_mapping_properties_read_back_as_set)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  gdouble last;

  fail_unless_equals_int (channel_values (e, "output-scale", &last), 0);
  gst_util_set_object_arg (G_OBJECT (e), "output-scale", "<1.0, 2.0, 3.0>");
  fail_unless_equals_int (channel_values (e, "output-scale", &last), 3);
  fail_unless_equals_float (last, 3.0);
  /* two values are refused: the three stay */
  gst_util_set_object_arg (G_OBJECT (e), "output-scale", "<1.0, 2.0>");
  fail_unless_equals_int (channel_values (e, "output-scale", &last), 3);
  /* one is for all channels; none unsets them */
  gst_util_set_object_arg (G_OBJECT (e), "output-offset", "<7.0>");
  fail_unless_equals_int (channel_values (e, "output-offset", &last), 1);
  fail_unless_equals_float (last, 7.0);
  gst_util_set_object_arg (G_OBJECT (e), "output-scale", "<>");
  fail_unless_equals_int (channel_values (e, "output-scale", &last), 0);
  gst_object_unref (e);
}

GST_END_TEST;

/* GOMP_SPINCOUNT as this process's environment had it before the plugin
 * loaded */
static gchar *spincount_before;

GST_START_TEST (test_the_plugin_leaves_openmp_spinning_to_the_environment)
{
  /* OpenMP's default spin lets a batch's threads catch its next layer;
   * when other threads want the cores, the element's batches run on one
   * thread and the second sleeps (cpu/share.c), so the plugin no longer
   * shortens it for everyone in the process */
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);

  fail_unless (e != NULL);
  fail_unless (g_strcmp0 (g_getenv ("GOMP_SPINCOUNT"), spincount_before) == 0,
      "GOMP_SPINCOUNT changed from %s to %s", spincount_before,
      g_getenv ("GOMP_SPINCOUNT"));
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_tensor_meta_copies_share_the_data_and_free_it)
{
  const gfloat values[4] = { 0.5f, 1.5f, -2.0f, 4.0f };
  GstBuffer *data = gst_buffer_new_memdup (values, sizeof (values));
  GstBuffer *frame = gst_buffer_new_allocate (NULL, 16, NULL), *copy;
  GstBatchTensor t = { g_intern_static_string ("scores"), 2, {1, 4},
  GST_BATCH_TENSOR_DATA_TYPE_FLOAT32, 0, sizeof (values)
  };
  GstBatchTensor outside = t;
  GstBatchTensorMeta *m, *mc;

  outside.offset = 4;           /* 4 + 16 bytes do not fit 16 */
  fail_unless (gst_buffer_add_batch_tensor_meta (frame, data, 1,
          &outside) == NULL);
  m = gst_buffer_add_batch_tensor_meta (frame, data, 1, &t);
  fail_unless (m != NULL);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (data), 2);

  copy = gst_buffer_copy (frame);
  mc = gst_buffer_get_batch_tensor_meta (copy);
  fail_unless (mc != NULL && mc != m);
  fail_unless (mc->data == data);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (data), 3);
  fail_unless (gst_batch_tensor_meta_get_tensor (mc, "absent") == NULL);
  fail_unless_equals_float (((const gfloat *)
          gst_batch_tensor_meta_get_data (mc,
              gst_batch_tensor_meta_get_tensor (mc, "scores")))[3], 4.0f);

  gst_buffer_unref (copy);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (data), 2);
  gst_buffer_unref (frame);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (data), 1);
  gst_buffer_unref (data);
}

GST_END_TEST;

static Suite *
cudabatchinfer_models_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-models");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_superres_doubles_the_frame_size_and_matches_onnxruntime);
  tcase_add_test (tc,
      test_caps_queries_drop_the_size_only_for_a_resizing_model);
  tcase_add_test (tc, test_style_net_matches_onnxruntime);
  tcase_add_test (tc, test_a_channels_last_model_takes_frames_and_gives_frames);
  tcase_add_test (tc,
      test_classifier_passes_frames_through_with_its_probabilities);
  tcase_add_test (tc,
      test_output_mapping_turns_a_probability_map_into_0_to_255);
  tcase_add_test (tc,
      test_the_plugin_leaves_openmp_spinning_to_the_environment);
  tcase_add_test (tc, test_output_mapping_properties_read_back_as_set);
  tcase_add_test (tc, test_tensor_meta_copies_share_the_data_and_free_it);
  tcase_add_test (tc, test_nan_in_an_output_at_warm_up_is_a_warning_naming_it);
  return s;
}

int
main (int argc, char **argv)
{
  gint failed;

  /* before gst_check_init (), which may load the plugin */
  spincount_before = g_strdup (g_getenv ("GOMP_SPINCOUNT"));
  gst_check_init (&argc, &argv);
  failed = gst_check_run_suite (cudabatchinfer_models_suite (),
      "cudabatchinfer_models", __FILE__);
  g_free (spincount_before);
  return failed;
}
