/* GStreamer cudabatchinfer: graph unit tests (cbigraph*.c): shape
 * inference and the lowering of ConvTranspose
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>

#include "cbiengine.h"
#include "cbidefaultmodel.h"
#include "graph/cbipasses.h"
#include "graph/cbishapes.h"
#include "cbitypes.h"

GST_START_TEST (test_default_model_keeps_the_frame_size)
{
  CbiGraph *g = cbi_default_model_new ();
  CbiShape *shapes = g_new0 (CbiShape, g->tensors->len), in;

  cbi_graph_frame_shape (g, 16, 7, 9, &in);
  fail_unless (cbi_graph_infer_shapes (g, &in, shapes, NULL));
  fail_unless_equals_int (g->n_outputs, 1);
  fail_unless_equals_int (shapes[g->outputs[0]].n_dims, 4);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[0], 16);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[1], 3);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[2], 7);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[3], 9);
  g_free (shapes);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_shape_inference_names_the_node_that_does_not_fit)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 in_dims[4] = { -1, 1, -1, -1 }, w_dims[4] = { 1, 1, 5, 5 };
  const gint64 any[4] = { -1, -1, -1, -1 };
  CbiConvAttrs valid = { {1, 1}, {1, 1}, {0, 0, 0, 0}, 1 };
  gint in[2];
  CbiShape *shapes, fits, too_small;
  GError *err = NULL;

  g->input = in[0] = cbi_graph_add_tensor (g, "x", 4, in_dims, NULL);
  in[1] = cbi_graph_add_tensor (g, "w", 4, w_dims, g_new0 (gfloat, 25));
  g->outputs[g->n_outputs++] = cbi_graph_add_tensor (g, "y", 4, any, NULL);
  cbi_graph_add_node (g, CBI_OP_CONV, "big_kernel", 2, in, g->outputs[0],
      &valid);
  shapes = g_new0 (CbiShape, g->tensors->len);
  cbi_graph_frame_shape (g, 1, 5, 5, &fits);
  cbi_graph_frame_shape (g, 1, 4, 5, &too_small);
  fail_unless (cbi_graph_infer_shapes (g, &fits, shapes, NULL));
  fail_if (cbi_graph_infer_shapes (g, &too_small, shapes, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  fail_unless (strstr (err->message, "big_kernel") != NULL, "%s", err->message);
  g_error_free (err);
  g_free (shapes);
  cbi_graph_free (g);
}

GST_END_TEST;

/* A ConvTranspose graph: x [2, 3, 5, 4] -> ConvTranspose (3 -> 2, kernel
 * @k, stride @s, pads @p, output_padding @op, with bias) -> y. */
static CbiGraph *
conv_transpose_graph (gint64 k, gint64 s, gint64 p, gint64 op)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 x_dims[4] = { -1, 3, 5, 4 }, w_dims[4] = { 3, 2, k, k };
  const gint64 b_dims[1] = { 2 };
  CbiConvAttrs a = { {s, s}, {1, 1}, {p, p, p, p}, 1, {0, 0}, FALSE,
  {op, op}
  };
  gfloat *w = g_new (gfloat, 3 * 2 * k * k), *b = g_new (gfloat, 2);
  gint in[3], i;

  for (i = 0; i < 3 * 2 * k * k; i++)
    w[i] = ((i * 37) % 17 - 8) / 8.0f;
  b[0] = 0.25f;
  b[1] = -0.5f;
  g->input = in[0] = cbi_graph_add_tensor (g, "x", 4, x_dims, NULL);
  in[1] = cbi_graph_add_tensor (g, "w", 4, w_dims, w);
  in[2] = cbi_graph_add_tensor (g, "b", 1, b_dims, b);
  g->outputs[g->n_outputs++] = cbi_graph_add_tensor (g, "y", 0, NULL, NULL);
  cbi_graph_add_node (g, CBI_OP_CONV_TRANSPOSE, "up", 3, in, g->outputs[0], &a);
  return g;
}

/* Runs @g (transfer full) on a fixed input; returns its output. */
static gfloat *
run_tensor_graph (CbiGraph * g, CbiShape * out)
{
  const CbiShape in = { 4, {2, 3, 5, 4} };
  gfloat x[2 * 3 * 5 * 4];
  GError *err = NULL;
  CbiBatchReport r;
  gboolean fallback;
  CbiEngine *e;
  const gfloat *y;
  gfloat *copy;
  guint i, ticket;

  for (i = 0; i < G_N_ELEMENTS (x); i++)
    x[i] = ((gint) (i * 13) % 11 - 5) / 5.0f;
  e = cbi_engine_new (g, CBI_BACKEND_CPU, 0, 0, &fallback, &err);
  fail_unless (e != NULL);
  fail_unless (cbi_engine_run_tensor (e, &in, x, &ticket, &r, &err), "%s",
      err ? err->message : "");
  y = cbi_engine_get_output (e, ticket, 0, out, &err);
  fail_unless (y != NULL);
  copy = g_memdup2 (y, cbi_shape_count (out) * sizeof (gfloat));
  cbi_engine_free (e);
  return copy;
}

GST_START_TEST (test_strided_conv_transpose_runs_as_conv_and_depth_to_space)
{
  /* PyTorch's two usual x2 upsamplers */
  const gint64 forms[2][4] = { {3, 2, 1, 1}, {4, 2, 1, 0} };
  guint f;

  for (f = 0; f < G_N_ELEMENTS (forms); f++) {
    const gint64 *k = forms[f];
    CbiGraph *lowered = conv_transpose_graph (k[0], k[1], k[2], k[3]);
    CbiShape a, b;
    gfloat *direct, *sub;
    gint64 i;

    fail_unless (cbi_graph_lower_conv_transpose (lowered, 0));
    fail_unless_equals_int (lowered->nodes->len, 2);
    fail_unless_equals_int (cbi_graph_node (lowered, 0)->op, CBI_OP_CONV);
    fail_unless_equals_int (cbi_graph_node (lowered, 1)->op,
        CBI_OP_DEPTH_TO_SPACE);
    direct = run_tensor_graph (conv_transpose_graph (k[0], k[1], k[2], k[3]),
        &a);
    sub = run_tensor_graph (lowered, &b);
    fail_unless (cbi_shape_equal (&a, &b));
    fail_unless_equals_int (a.dims[2], 10);
    fail_unless_equals_int (a.dims[3], 8);
    for (i = 0; i < cbi_shape_count (&a); i++)
      fail_unless (fabsf (direct[i] - sub[i]) < 1e-5f, "form %u, value %"
          G_GINT64_FORMAT ": %f vs %f", f, i, direct[i], sub[i]);
    g_free (direct);
    g_free (sub);
  }
}

GST_END_TEST;

GST_START_TEST (test_an_activation_after_depth_to_space_moves_before_it)
{
  CbiGraph *g = conv_transpose_graph (3, 2, 1, 1), *direct;
  gint relu_in, relu_out;
  CbiShape a, b;
  gfloat *x, *y;
  gint64 i;

  /* ConvTranspose -> Relu, lowered: Conv -> DepthToSpace -> Relu, then
   * Conv -> Relu -> DepthToSpace */
  relu_in = g->outputs[0];
  relu_out = cbi_graph_add_tensor (g, "z", 0, NULL, NULL);
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &relu_in, relu_out, NULL);
  g->outputs[0] = relu_out;
  direct = conv_transpose_graph (3, 2, 1, 1);
  relu_in = direct->outputs[0];
  relu_out = cbi_graph_add_tensor (direct, "z", 0, NULL, NULL);
  cbi_graph_add_node (direct, CBI_OP_RELU, "relu", 1, &relu_in, relu_out, NULL);
  direct->outputs[0] = relu_out;

  fail_unless (cbi_graph_lower_conv_transpose (g, 0));
  cbi_graph_sink_eltwise (g);
  fail_unless_equals_int (g->nodes->len, 3);
  fail_unless_equals_int (cbi_graph_node (g, 0)->op, CBI_OP_CONV);
  fail_unless_equals_int (cbi_graph_node (g, 1)->op, CBI_OP_RELU);
  fail_unless_equals_int (cbi_graph_node (g, 2)->op, CBI_OP_DEPTH_TO_SPACE);
  fail_unless_equals_int (cbi_graph_node (g, 2)->output, g->outputs[0]);

  x = run_tensor_graph (direct, &a);
  y = run_tensor_graph (g, &b);
  fail_unless (cbi_shape_equal (&a, &b));
  for (i = 0; i < cbi_shape_count (&a); i++)
    fail_unless (fabsf (x[i] - y[i]) < 1e-5f && y[i] >= 0.0f,
        "value %" G_GINT64_FORMAT ": %f vs %f", i, x[i], y[i]);
  g_free (x);
  g_free (y);
}

GST_END_TEST;

GST_START_TEST (test_conv_transpose_of_other_forms_is_left_as_it_is)
{
  /* stride 1, and an output that is not twice the input */
  CbiGraph *g1 = conv_transpose_graph (3, 1, 1, 0);
  CbiGraph *g2 = conv_transpose_graph (3, 2, 0, 0);

  fail_if (cbi_graph_lower_conv_transpose (g1, 0));
  fail_if (cbi_graph_lower_conv_transpose (g2, 0));
  fail_unless_equals_int (g1->nodes->len, 1);
  fail_unless_equals_int (g2->nodes->len, 1);
  cbi_graph_free (g1);
  cbi_graph_free (g2);
}

GST_END_TEST;

/* Which reshapes read a laid-out tensor without moving it, and with
 * what strides: a row-major tensor any; a channels-last one its channels
 * split (a channel shuffle's first Reshape), not flattened. */
GST_START_TEST (test_a_reshape_is_a_view_where_the_strides_allow_one)
{
  const CbiShape nchw = { 4, {2, 6, 4, 5} };
  const CbiShape split = { 5, {2, 2, 3, 4, 5} };
  const CbiShape flat = { 2, {2, 120} };
  const gint64 row_major[4] = { 120, 20, 5, 1 };
  const gint64 channels_last[4] = { 120, 1, 30, 6 };
  const CbiShape pooled = { 4, {1, 6, 1, 1} }, vector = { 1, {6} };
  const gint64 pooled_strides[4] = { 6, 1, 6, 6 };
  gint64 strides[CBI_MAX_DIMS];
  const gint64 split_rows[5] = { 120, 60, 20, 5, 1 };
  const gint64 split_channels_last[5] = { 120, 3, 1, 30, 6 };
  gint d;

  fail_unless (cbi_shape_view_strides (&nchw, row_major, &split, strides));
  for (d = 0; d < 5; d++)
    fail_unless_equals_int64 (strides[d], split_rows[d]);
  fail_unless (cbi_shape_view_strides (&nchw, channels_last, &split, strides));
  for (d = 0; d < 5; d++)
    fail_unless_equals_int64 (strides[d], split_channels_last[d]);
  fail_unless (cbi_shape_view_strides (&nchw, row_major, &flat, strides));
  fail_unless_equals_int64 (strides[0], 120);
  fail_unless_equals_int64 (strides[1], 1);
  fail_if (cbi_shape_view_strides (&nchw, channels_last, &flat, strides));
  fail_unless (cbi_shape_view_strides (&pooled, pooled_strides, &vector,
          strides));
  fail_unless_equals_int64 (strides[0], 1);
  /* back from the split channels: a view again */
  fail_unless (cbi_shape_view_strides (&split, split_channels_last, &nchw,
          strides));
  for (d = 0; d < 4; d++)
    fail_unless_equals_int64 (strides[d], channels_last[d]);
}

GST_END_TEST;

static Suite *
graph_suite (void)
{
  Suite *s = suite_create ("cbigraph");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_default_model_keeps_the_frame_size);
  tcase_add_test (tc, test_shape_inference_names_the_node_that_does_not_fit);
  tcase_add_test (tc,
      test_strided_conv_transpose_runs_as_conv_and_depth_to_space);
  tcase_add_test (tc, test_conv_transpose_of_other_forms_is_left_as_it_is);
  tcase_add_test (tc, test_an_activation_after_depth_to_space_moves_before_it);
  tcase_add_test (tc, test_a_reshape_is_a_view_where_the_strides_allow_one);
  return s;
}

GST_CHECK_MAIN (graph);
