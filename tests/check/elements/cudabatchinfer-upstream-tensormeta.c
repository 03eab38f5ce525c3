/* GStreamer cudabatchinfer tests: tensor outputs read back as upstream's
 * GstTensorMeta, with upstream's API (GStreamer 1.26 or later)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built only where meson finds gstreamer-analytics-1.0 >= 1.26. The
 * element itself is not linked to it: it finds the API at run time.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/analytics/gsttensormeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>
#include <math.h>
#include <string.h>

#include "cbimodeldir.h"

#define W 32
#define H 24
#define CAPS_RGB "video/x-raw,format=RGB,width=32,height=24,framerate=30/1"

/* A harness around cudabatchinfer running @model at batch 4, posting on
 * @bus where it is not %NULL, with caps set. */
static GstHarness *
model_harness (const gchar * model, GstBus * bus)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer model=\"%s\" batch=4",
      model);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstHarness *h;

  fail_unless (e != NULL, "could not make %s", desc);
  if (bus)
    gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  gst_object_unref (e);
  g_free (desc);
  return h;
}

/* Pushes @n frames, @rgb or grey ramps where it is %NULL, then EOS. */
static void
push_frames (GstHarness * h, const guint8 * rgb, guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);

    if (rgb)
      gst_buffer_fill (buf, 0, rgb, W * H * 3);
    else
      gst_buffer_memset (buf, 0, 30 * i, W * H * 3);
    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
}

/* Checks that @tensor of upstream's meta is tensor @bt of the
 * GstBatchTensorMeta @bm, id @id: float32, row-major, contiguous, the
 * same dims, and the same bytes (the very same: no copy). */
static void
assert_tensor_is (const GstTensor * tensor, GstBatchTensorMeta * bm,
    const GstBatchTensor * bt, const gchar * id)
{
  GstMapInfo map;
  gsize n_dims = 0, d, *dims;

  fail_unless (tensor != NULL);
  fail_unless_equals_string (g_quark_to_string (tensor->id), id);
  fail_unless_equals_int (tensor->data_type, GST_TENSOR_DATA_TYPE_FLOAT32);
  fail_unless_equals_int (tensor->dims_order, GST_TENSOR_DIM_ORDER_ROW_MAJOR);
  fail_unless_equals_int (tensor->layout, GST_TENSOR_LAYOUT_CONTIGUOUS);
  dims = gst_tensor_get_dims ((GstTensor *) tensor, &n_dims);
  fail_unless_equals_uint64 (n_dims, bt->n_dims);
  fail_unless_equals_uint64 (dims[0], 1);
  for (d = 0; d < n_dims; d++)
    fail_unless_equals_uint64 (dims[d], bt->dims[d]);
  fail_unless (gst_buffer_map (tensor->data, &map, GST_MAP_READ));
  fail_unless_equals_uint64 (map.size, bt->size);
  fail_unless (map.data == gst_batch_tensor_meta_get_data (bm, bt),
      "%s: the tensor's bytes were copied", id);
  gst_buffer_unmap (tensor->data, &map);
}

GST_START_TEST (test_classifier_outputs_read_back_as_upstream_tensor_meta)
{
  gchar *model = g_build_filename (CBI_TEST_MODELS_DIR, "classifier.onnx",
      NULL);
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR,
      "classifier.ort.out.bin", NULL);
  GstHarness *h = model_harness (model, NULL);
  GQuark id = g_quark_from_string ("probabilities");
  gfloat *ref = NULL;
  guint8 *rgb = NULL;
  gsize size = 0;
  guint i, k;

  fail_unless (g_file_get_contents (path, (gchar **) & ref, &size, NULL));
  fail_unless_equals_uint64 (size, 10 * sizeof (gfloat));
  g_free (path);
  path = g_build_filename (CBI_TEST_MODELS_DIR, "classifier.frame.rgb", NULL);
  fail_unless (g_file_get_contents (path, (gchar **) & rgb, &size, NULL));
  fail_unless_equals_uint64 (size, W * H * 3);

  /* 5 frames: a batch of 4, then one padded to 4 */
  push_frames (h, rgb, 5);
  for (i = 0; i < 5; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchTensorMeta *bm = gst_buffer_get_batch_tensor_meta (out);
    GstTensorMeta *tm = (GstTensorMeta *) gst_buffer_get_meta (out,
        gst_tensor_meta_api_get_type ());
    const GstTensor *t;
    GstMapInfo map;

    fail_unless (bm != NULL && tm != NULL, "frame %u", i);
    fail_unless (gst_buffer_get_tensor_meta (out) == tm);
    fail_unless_equals_uint64 (tm->num_tensors, 1);
    fail_unless_equals_int (gst_tensor_meta_get_index_from_id (tm, id), 0);
    t = gst_tensor_meta_get (tm, 0);
#if GST_CHECK_VERSION(1, 28, 0)
    fail_unless (gst_tensor_meta_get_by_id (tm, id) == t);
#endif
    /* no modelinfo: the output's name */
    assert_tensor_is (t, bm, gst_batch_tensor_meta_get_tensor (bm,
            "probabilities"), "probabilities");
    fail_unless (gst_buffer_map (t->data, &map, GST_MAP_READ));
    for (k = 0; k < 10; k++) {
      gfloat v = ((const gfloat *) map.data)[k];
      fail_unless (fabsf (v - ref[k]) < 1e-4f, "frame %u class %u: %f, "
          "onnxruntime %f", i, k, v, ref[k]);
    }
    gst_buffer_unmap (t->data, &map);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  g_free (rgb);
  g_free (ref);
  g_free (path);
  g_free (model);
}

GST_END_TEST;

GST_START_TEST (test_modelinfo_beside_the_model_gives_the_tensor_ids)
{
  /* shape-ops.onnx: six outputs, the first two-dimensional: frames pass
   * through with six tensors; the file names four of them */
  static const gchar *names[6] = { "flat", "sliced", "chs", "expanded",
    "up", "padded"
  };
  static const gchar *ids[6] = { "test-flat", "sliced", "test-chs",
    "expanded", "test/up", "test-padded"
  };
  CbiModelDir md;
  GstHarness *h;
  guint i, k;

  cbi_model_dir_init (&md, "shape-ops.onnx", "shape-ops.modelinfo",
      "[modelinfo]\nversion=1.0\ngroup-id=test\n"
      "[image]\nid=in\ndir=input\ntype=float32\n"
      "[flat]\nid=test-flat\ndir=output\ntype=float32\ndims=-1,-1\n"
      "[chs]\nid=test-chs\n"
      "[up]\nid=test/up\ndims-order=row-major\n"
      "[padded]\nid=test-padded\ntype=float32\n");
  h = model_harness (md.model, NULL);
  push_frames (h, NULL, 3);
  for (i = 0; i < 3; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchTensorMeta *bm = gst_buffer_get_batch_tensor_meta (out);
    GstTensorMeta *tm = gst_buffer_get_tensor_meta (out);

    fail_unless (bm != NULL && tm != NULL);
    fail_unless_equals_uint64 (bm->n_tensors, 6);
    fail_unless_equals_uint64 (tm->num_tensors, 6);
    for (k = 0; k < 6; k++) {
      gint index = gst_tensor_meta_get_index_from_id (tm,
          g_quark_from_string (ids[k]));

      /* in the model's output order */
      fail_unless_equals_int (index, k);
      assert_tensor_is (gst_tensor_meta_get (tm, index), bm,
          gst_batch_tensor_meta_get_tensor (bm, names[k]), ids[k]);
    }
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

GST_START_TEST (test_a_tensor_outlives_its_frame)
{
  gchar *model = g_build_filename (CBI_TEST_MODELS_DIR, "classifier.onnx",
      NULL);
  GstHarness *h = model_harness (model, NULL);
  GstBuffer *out, *data, *copy;
  gfloat before[10], after[10];
  GstTensorMeta *tm;

  push_frames (h, NULL, 2);
  out = gst_harness_pull (h);
  tm = gst_buffer_get_tensor_meta (out);
  fail_unless (tm != NULL);
  data = gst_buffer_ref (gst_tensor_meta_get (tm, 0)->data);
  fail_unless_equals_uint64 (gst_buffer_extract (data, 0, before,
          sizeof (before)), sizeof (before));
  /* the frame goes, its tensor's bytes stay (valgrind watches) */
  gst_buffer_unref (out);
  gst_buffer_unref (gst_harness_pull (h));
  fail_unless_equals_uint64 (gst_buffer_extract (data, 0, after,
          sizeof (after)), sizeof (after));
  fail_unless (memcmp (before, after, sizeof (before)) == 0);
  /* read-only: the element's pool buffer is never written through it */
  fail_unless (GST_MEMORY_IS_READONLY (gst_buffer_peek_memory (data, 0)));
  copy = gst_buffer_copy_deep (data);
  gst_buffer_unref (copy);
  gst_buffer_unref (data);
  gst_harness_teardown (h);
  g_free (model);
}

GST_END_TEST;

GST_START_TEST (test_a_modelinfo_that_contradicts_an_output_fails_the_caps)
{
  CbiModelDir md;
  GstHarness *h;
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  GstBuffer *buf;

  cbi_model_dir_init (&md, "classifier.onnx", "classifier.onnx.modelinfo",
      "[modelinfo]\nversion=1.0\n[probabilities]\nid=p\ntype=uint8\n");
  /* the caps, set with the harness, are refused */
  h = model_harness (md.model, bus);
  buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);
  gst_buffer_memset (buf, 0, 0, W * H * 3);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_NOT_NEGOTIATED);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, md.modelinfo) != NULL, "%s", err->message);
  fail_unless (strstr (err->message, "type=uint8") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_harness_teardown (h);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

static Suite *
cudabatchinfer_upstream_tensormeta_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-upstream-tensormeta");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_classifier_outputs_read_back_as_upstream_tensor_meta);
  tcase_add_test (tc, test_modelinfo_beside_the_model_gives_the_tensor_ids);
  tcase_add_test (tc, test_a_tensor_outlives_its_frame);
  tcase_add_test (tc,
      test_a_modelinfo_that_contradicts_an_output_fails_the_caps);
  return s;
}

GST_CHECK_MAIN (cudabatchinfer_upstream_tensormeta);
