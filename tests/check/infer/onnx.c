/* GStreamer cudabatchinfer: ONNX import tests, on the models that
 * tests/models/generate.py wrote
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>

#include "cbiengine.h"
#include "cbitypes.h"
#include "onnx/cbionnx.h"
#include "graph/cbiops.h"
#include "graph/cbipasses.h"
#include "graph/cbishapes.h"
#include "cbitestframes.h"

#define FRAME_W 8
#define FRAME_H 6

static gchar *
model_path (const gchar * name)
{
  return g_build_filename (CBI_TEST_MODELS_DIR, name, NULL);
}

static CbiGraph *
load (const gchar * name, GError ** error)
{
  gchar *path = model_path (name);
  CbiGraph *g = cbi_onnx_load (path, error);

  g_free (path);
  return g;
}

static CbiGraph *
load_or_fail (const gchar * name)
{
  GError *err = NULL;
  CbiGraph *g = load (name, &err);

  fail_unless (g != NULL, "%s: %s", name, err ? err->message : "");
  return g;
}

static guint8 *
read_bin (const gchar * name, gsize expected)
{
  gchar *path = model_path (name), *data = NULL;
  gsize size = 0;

  fail_unless (g_file_get_contents (path, &data, &size, NULL), "%s", path);
  fail_unless_equals_uint64 (size, expected);
  g_free (path);
  return (guint8 *) data;
}

/* Runs the reference frame through @graph in a batch of 4 (3 padded) and
 * compares with the reference evaluator's bytes, within one step. */
static void
check_against_reference (CbiGraph * graph, const gchar * stem)
{
  const gsize size = FRAME_W * FRAME_H * 3;
  gchar *in_name = g_strconcat (stem, ".in.bin", NULL);
  gchar *out_name = g_strconcat (stem, ".out.bin", NULL);
  guint8 *in = read_bin (in_name, size);
  guint8 *expected = read_bin (out_name, size);
  guint8 *out = g_malloc0 (size);
  const guint8 *ins[1] = { in };
  guint8 *outs[1] = { out };
  const gint stride[1] = { FRAME_W * 3 };
  CbiFrameBatch b = cbi_test_rgb_batch (FRAME_W, FRAME_H, 4, ins, outs,
      stride);
  CbiBatchReport r;
  gboolean fallback;
  GError *err = NULL;
  CbiEngine *e;
  gsize i;

  e = cbi_engine_new (graph, CBI_BACKEND_CPU, 0, 0, &fallback, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_unless (cbi_engine_run (e, &b, &r, &err), "%s", err ? err->message : "");
  for (i = 0; i < size; i++)
    fail_unless (ABS ((gint) out[i] - (gint) expected[i]) <= 1,
        "%s, byte %" G_GSIZE_FORMAT ": %u, reference %u", stem, i, out[i],
        expected[i]);
  cbi_engine_free (e);
  g_free (in);
  g_free (expected);
  g_free (out);
  g_free (in_name);
  g_free (out_name);
}

GST_START_TEST (test_conv_relu_model_loads_with_a_symbolic_size)
{
  GError *err = NULL;
  CbiGraph *g = load ("conv-relu.onnx", &err);
  CbiTensorInfo *in;

  fail_unless (g != NULL, "%s", err ? err->message : "");
  in = cbi_graph_tensor (g, g->input);
  fail_unless_equals_string (in->name, "image");
  fail_unless_equals_int (in->dims[0], -1);
  fail_unless_equals_int (in->dims[1], 3);
  fail_unless_equals_int (in->dims[2], -1);
  fail_unless_equals_int (in->dims[3], -1);
  /* Conv, Relu, Conv: the Constant became a tensor */
  fail_unless_equals_int (g->nodes->len, 3);
  fail_unless_equals_int (g->n_outputs, 1);
  fail_unless_equals_string (cbi_graph_tensor (g, g->outputs[0])->name,
      "output");
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_every_eltwise_op_and_add_match_the_onnx_reference)
{
  CbiGraph *g = load_or_fail ("eltwise.onnx");
  /* Conv, LeakyRelu, Sigmoid, Tanh (all three read by the Add), Add,
   * HardSigmoid with HardSwish, Elu, Clip and Identity as its steps, Conv:
   * the bounds of Clip are folded into the node */
  fail_unless_equals_int (g->nodes->len, 7);
  check_against_reference (g, "eltwise");
}

GST_END_TEST;

GST_START_TEST (test_batch_norm_after_conv_is_folded_and_matches_the_reference)
{
  CbiGraph *g = load_or_fail ("conv-bn.onnx");
  /* Conv (BatchNormalization folded in), Relu, Conv */
  fail_unless_equals_int (g->nodes->len, 3);
  fail_unless_equals_int (cbi_graph_node (g, 0)->op, CBI_OP_CONV);
  fail_unless_equals_int (cbi_graph_node (g, 0)->n_inputs, 3);
  fail_unless_equals_int (cbi_graph_node (g, 1)->op, CBI_OP_RELU);
  fail_unless_equals_int (cbi_graph_node (g, 2)->op, CBI_OP_CONV);
  check_against_reference (g, "conv-bn");
}

GST_END_TEST;

GST_START_TEST (test_sub_mul_div_add_with_broadcast_match_the_reference)
{
  CbiGraph *g = load_or_fail ("binary.onnx");
  /* Mul's constant came first and was moved second */
  fail_unless_equals_int (cbi_graph_node (g, 1)->op, CBI_OP_MUL);
  fail_unless (cbi_graph_tensor (g, cbi_graph_node (g, 1)->inputs[1])->data);
  check_against_reference (g, "binary");
}

GST_END_TEST;

/* Models whose only check is the reference: what each covers is in
 * tests/models/generate.py. */
static const struct
{
  const gchar *file;
  const gchar *stem;
} reference_models[] = {
  {"conv-relu.onnx", "conv-relu"},
  /* the same weights, read from a file beside the model */
  {"conv-external.onnx", "conv-relu"},
  {"unet.onnx", "unet"},
  {"upconv.onnx", "upconv"},
  {"pads.onnx", "pads"},
  {"style.onnx", "style"},
};

GST_START_TEST (test_imported_models_match_the_onnx_reference)
{
  check_against_reference (load_or_fail (reference_models[__i__].file),
      reference_models[__i__].stem);
}

GST_END_TEST;

static const struct
{
  const gchar *file;
  const gchar *reason;
} bad_models[] = {
  {"no-such-model.onnx", "cannot read model"},
  {"bad-truncated.onnx", "the file may be truncated"},
  {"bad-not-onnx.onnx", "not an ONNX model"},
  {"bad-unsupported-op.onnx", "node squash: op Softplus is not supported"},
  {"bad-missing-initializer.onnx", "reads 'w1'"},
  {"bad-cycle.onnx", "cycle"},
  /* an op given fewer inputs than it takes (found by the fuzzer) */
  {"bad-matmul-one-input.onnx", "node matmul (MatMul): 1 inputs; it takes "
        "at least 2"},
  /* a channels-last input without a name (found by the fuzzer) */
  {"bad-nhwc-unnamed-input.onnx", "tensor name '(unnamed)' is empty or "
        "defined twice"},
  {"bad-bn-mean-size.onnx", "node bn (BatchNormalization): B, mean and "
        "var must be constants of 3 values"},
  {"bad-dims-overflow.onnx", "tensor w1 is too large"},
  {"bad-data-size.onnx", "tensor w1 holds"},
  {"bad-int64-bias.onnx", "tensor b1 has data type INT64"},
  {"bad-pool-dilation.onnx", "node pool: negative pads, or a kernel, "
        "strides or dilations below 1"},
  {"bad-external-outside.onnx", "not inside the model's folder"},
  {"bad-external-absolute.onnx", "not inside the model's folder"},
  {"bad-external-past-end.onnx", "tensor w1 needs"},
  /* constant subgraphs that cannot fold */
  {"bad-fold-concat-shapes.onnx", "node cat (Concat): input 1 has "
        "dimension 1 of 3, the first 4"},
  {"bad-fold-add-shapes.onnx", "node add (Add): its inputs' shapes do not "
        "broadcast"},
  {"bad-fold-range-overflow.onnx", "node range (Range): an integer "
        "overflow"},
  {"bad-fold-constant-of-shape-overflow.onnx", "node fill "
        "(ConstantOfShape): its output is too large to fold"},
  {"bad-fold-gather-index.onnx", "node gather (Gather): index 8 is outside"},
  {"bad-lstm-state-read.onnx", "node lstm (LSTM): its output y_h (the "
        "last step's h) is read; only Y, every step's h, is supported"},
  {"bad-lstm-sequence-lens.onnx", "node lstm (LSTM): sequence_lens is not "
        "supported"},
  {"bad-dynquant-read.onnx", "node cast (Cast) reads q, a value of a "
        "dynamic quantization"},
  {"bad-fold-dequantize-scale.onnx", "node dq (DequantizeLinear): the scale "
        "must be a scalar or hold one value per index of the axis"},
  /* refused, and without leaking what it read of the node (found by the
   * fuzzer; valgrind and the fuzzer's LeakSanitizer see a leak) */
  {"bad-resize-float-sizes.onnx", "node resize (Resize): input sizes must "
        "be int64, not FLOAT"},
};

/* Models with constant subgraphs the importer folds at load: what is
 * left runs, and matches onnxruntime on a [2, 3, 6, 8] tensor. */
static const struct
{
  const gchar *stem;
  guint n_nodes;                /* after folding */
  CbiShape out;
} folded_models[] = {
  /* Conv, Conv: the Mul by the Reshape of two constants, one value per
   * channel, folded into the first Conv's weights */
  {"fold-se", 2, {4, {2, 3, 6, 8}}},
  /* Conv (uint8 weights dequantized per channel), Relu, Conv (int8) */
  {"fold-dq-conv", 3, {4, {2, 3, 6, 8}}},
  /* Conv, Relu, Conv, the weights through QuantizeLinear and back */
  {"fold-qdq", 3, {4, {2, 3, 6, 8}}},
  /* Conv, Pad, Resize, Reshape: weights' shape, pads, scales and the
   * Reshape's shape all folded */
  {"fold-shape", 4, {4, {2, 2, 4, 384}}},
  /* Conv, Relu, Conv: the bias and weights from Range, Where and others */
  {"fold-misc", 3, {4, {2, 3, 6, 8}}},
  /* Conv: its bias from ScatterND, Mod, Equal, Not and Where */
  {"fold-scatter", 1, {4, {2, 4, 6, 8}}},
  /* Conv: its bias from MatMul, Relu, MatMul, Sigmoid, LeakyRelu, Tanh */
  {"fold-mlp", 1, {4, {2, 4, 6, 8}}},
};

/* Runs @stem.tensor.in.bin (of @in_shape) through model @g on the CPU in
 * @precision (its wide plan: cbi_engine_set_precision_wide ()) and
 * compares with onnxruntime's @stem.tensor.out.bin (of @out_shape):
 * finite, and within @tolerance of the largest |reference|. Frees @g.
 * FALSE, nothing compared, where the CPU has no @precision. */
static gboolean
check_tensor_model_in (CbiGraph * g, const gchar * stem,
    const CbiShape * in_shape, const CbiShape * out_shape, gfloat tolerance,
    CbiPrecision precision)
{
  gchar *in_name = g_strconcat (stem, ".tensor.in.bin", NULL);
  gchar *out_name = g_strconcat (stem, ".tensor.out.bin", NULL);
  gint64 count = cbi_shape_count (out_shape), i;
  gfloat *in = (gfloat *) read_bin (in_name,
      cbi_shape_count (in_shape) * sizeof (gfloat));
  gfloat *expected = (gfloat *) read_bin (out_name, count * sizeof (gfloat));
  const gfloat *out;
  gfloat err = 0.0f, ref = 0.0f;
  CbiBatchReport r;
  guint ticket;
  gboolean fallback;
  GError *e_err = NULL;
  CbiShape shape;
  CbiEngine *e;
  guint products = 0;

  for (i = 0; i < g->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (g, i);
    const CbiOpKind kind = cbi_op_info (n->op)->kind;
    products += kind == CBI_OP_KIND_CONV || kind == CBI_OP_KIND_MATRIX
        || kind == CBI_OP_KIND_RECURRENT;
  }
  e = cbi_engine_new (g, CBI_BACKEND_CPU, 0, 0, &fallback, &e_err);
  fail_unless (e != NULL, "%s", e_err ? e_err->message : "");
  if (!cbi_engine_set_precision (e, precision, 0.0, &e_err)) {
    fail_unless (g_error_matches (e_err, CBI_ERROR, CBI_ERROR_PRECISION));
    g_clear_error (&e_err);
    cbi_engine_free (e);
    g_free (in);
    g_free (expected);
    g_free (in_name);
    g_free (out_name);
    return FALSE;
  }
  cbi_engine_set_precision_wide (e, TRUE);
  fail_unless (cbi_engine_run_tensor (e, in_shape, in, &ticket, &r, &e_err),
      "%s", e_err ? e_err->message : "");
  /* the wide plan takes every convolution and product, the image's
   * convolution and a recurrent layer's input product too (one without a
   * fast bfloat16 kernel on this CPU stays float32) */
  if (precision != CBI_PRECISION_FP32)
    fail_unless ((products > 0) == (cbi_engine_low_precision_ops (e) > 0)
        && cbi_engine_low_precision_ops (e) <= products, "%s: %u of %u",
        stem, cbi_engine_low_precision_ops (e), products);
  out = cbi_engine_get_output (e, ticket, 0, &shape, &e_err);
  fail_unless (out != NULL, "%s", e_err ? e_err->message : "");
  fail_unless (cbi_shape_equal (&shape, out_shape), "%s: output %s", stem,
      cbi_shape_to_string (&shape));
  for (i = 0; i < count; i++) {
    fail_unless (isfinite (out[i]), "%s: value %" G_GINT64_FORMAT " is %f",
        stem, i, out[i]);
    err = MAX (err, fabsf (out[i] - expected[i]));
    ref = MAX (ref, fabsf (expected[i]));
  }
  fail_unless (err <= tolerance * ref, "%s: max error %g over max "
      "|reference| %g", stem, err, ref);
  cbi_engine_free (e);
  g_free (in);
  g_free (expected);
  g_free (in_name);
  g_free (out_name);
  return TRUE;
}

static void
check_tensor_model (CbiGraph * g, const gchar * stem, const CbiShape * in_shape,
    const CbiShape * out_shape, gfloat tolerance)
{
  check_tensor_model_in (g, stem, in_shape, out_shape, tolerance,
      CBI_PRECISION_FP32);
}

GST_START_TEST (test_folded_models_match_onnxruntime)
{
  const gchar *stem = folded_models[__i__].stem;
  const CbiShape in_shape = { 4, {2, 3, 6, 8} };
  gchar *file = g_strconcat (stem, ".onnx", NULL);
  CbiGraph *g = load_or_fail (file);
  guint t;

  fail_unless_equals_int (g->nodes->len, folded_models[__i__].n_nodes);
  /* only what translated nodes read entered the graph: no constant that
   * only folding used */
  for (t = 0; t < g->tensors->len; t++)
    fail_unless (cbi_graph_tensor (g, t)->data == NULL
        || cbi_graph_count_consumers (g, t) > 0, "%s: constant %s is unused",
        stem, cbi_graph_tensor (g, t)->name);
  check_tensor_model (g, stem, &in_shape, &folded_models[__i__].out, 1e-5f);
  g_free (file);
}

GST_END_TEST;

/* Models of the ops on activations of issue 10, against onnxruntime. */
static const struct
{
  const gchar *stem;
  guint n_nodes;                /* after import */
  CbiShape in;
  CbiShape out;
  gfloat tolerance;             /* oneDNN's exp, log and pow approximate */
} activation_models[] = {
  /* Erf (fused into a Conv, and alone), Abs, Sqrt, Log, Exp, Neg,
   * Reciprocal, Pow, Gelu (both forms), Max, Min, Pow of a per-channel
   * exponent and a Sigmoid; runs merged into one node each: Abs to Exp
   * (five steps, the most a node takes), Neg to the Sub of one (alpha x
   * + beta), the two Gelu */
  {"ops-unary", 11, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-4f},
  /* auto_pad SAME_UPPER at stride 2 on 7x9, SAME_LOWER, VALID, ceil_mode */
  {"ops-pads", 8, {4, {2, 3, 7, 9}}, {4, {2, 3, 1, 2}}, 1e-5f},
  /* per-channel Adds and Muls folded into the convolution before them:
   * ConvTranspose (a Conv, the Add and BatchNormalization's Mul and Add
   * folded in, a DepthToSpace), Relu (before the DepthToSpace), a
   * ConvTranspose of stride 1 (its Mul and Add folded in), Relu, Conv (the
   * Mul by one value, constant first, and the two Adds after its
   * DepthToSpace DCR folded in), DepthToSpace; 15 nodes unfolded */
  {"ops-bn", 7, {4, {2, 3, 6, 8}}, {4, {2, 3, 24, 32}}, 1e-5f},
  /* a decomposed LayerNorm (ReduceMean, Sub, Pow, Sqrt, Div...: fused into
   * one LayerNormalization) and a LayerNormalization, then ReduceMax over
   * two axes and ReduceSum with keepdims 0 */
  {"ops-layer-norm", 7, {4, {2, 3, 6, 8}}, {3, {2, 6, 8}}, 1e-5f},
  /* Split by sizes and in equal parts, ArgMax (float indices): exact */
  {"ops-split-argmax", 10, {4, {2, 3, 6, 8}}, {3, {2, 4, 6}}, 0.0f},
  /* Where on constant conditions, the activation as X, as Y, and both */
  {"ops-where", 6, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* HardSwish written as x * Clip (x + 3, 0, 6) / 6: two become one
   * HardSwish each (Conv, HardSwish, Conv, HardSwish), the third, whose
   * x + 3 has a second reader, keeps its five nodes */
  {"ops-hard-swish", 9, {4, {2, 3, 6, 8}}, {4, {2, 4, 6, 8}}, 1e-5f},
  /* products and sums by one value as alpha x + beta: Conv, one for a Mul
   * and an Add with the Relu and the Mul read twice as its steps, one for
   * the Add after it, and the Add of two activations */
  {"ops-affine", 4, {4, {2, 3, 6, 8}}, {4, {2, 4, 6, 8}}, 1e-5f},
  /* runs of element-wise ops as one node each: Conv, Conv, a run of five
   * (two alpha x + beta of other values among them) fused into the Conv
   * before it, one of three alone, Add, one of four fused into the Add (the
   * last an Elu read twice), Sigmoid, Add, InstanceNormalization, Relu
   * with a product (the Relu in the normalization's loop, the product a
   * pass after it), Erf and a product (Erf joins no run), Conv */
  {"ops-eltwise-runs", 13, {4, {2, 3, 6, 8}}, {4, {2, 4, 6, 8}}, 1e-5f},
  /* Conv, DepthToSpace DCR, Conv, DepthToSpace CRD, Conv */
  {"ops-depth-to-space", 5, {4, {2, 3, 6, 8}}, {4, {2, 3, 24, 32}}, 1e-5f},
  /* Conv, InstanceNormalization of 16 channels, Relu, Pad reflect, Conv,
   * InstanceNormalization of 8, Pad edge, Conv: on the CPU the
   * normalizations and pads keep the Convs' channels-last layout */
  {"ops-channels-last", 8, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 10}}, 1e-5f},
  /* Conv, DepthToSpace, Transpose of height and width */
  {"ops-shuffle-transpose", 3, {4, {2, 3, 6, 8}}, {4, {2, 3, 16, 12}},
      1e-5f},
  /* first operands that broadcast: squeeze-and-excitation's s * x, s - x,
   * [N, C, 1, 1] + [N, 1, H, W], a per-channel constant / x, 1 - x (alpha
   * x + beta); a grouped Conv with a bias; two unnamed BatchNormalizations
   * (a Mul and an Add each) */
  {"ops-broadcast", 19, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* float values computed from shapes, constants of each plan: a class
   * token expanded to the batch before the patches, a Range cast to float
   * added to every row (Conv, Reshape, Transpose, Concat, Add and nine
   * shape computations) */
  {"ops-plan-values", 14, {4, {2, 3, 6, 8}}, {3, {2, 13, 4}}, 1e-5f},
  /* residual connections, 16 channels: an identity block, a projection
   * block (its Add after the shortcut Conv, then LeakyRelu), an Add whose
   * other operand is read again (the CPU backend adds the first two in
   * place as its convolutions' sum post-ops, in channel blocks of 16 on
   * AVX-512: backends.c) */
  {"ops-residual", 14, {4, {2, 3, 6, 8}}, {4, {2, 16, 6, 8}}, 1e-5f},
  /* ShuffleNetV2's unit: halves of a Conv's output by Slice and by Split
   * (a node a part), Concat, the channel shuffle (Reshape, Transpose,
   * Reshape); on the CPU the parts and Reshapes read the channels-last
   * data in place where oneDNN's layout allows; the last Concat stays:
   * the head that reads it has 3 output channels, fewer than the 8
   * graph/concat.c takes apart */
  {"ops-channel-shuffle", 15, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* a CRNN's bidirectional LSTM over a feature map's columns (Conv,
   * Reshape, Transpose, LSTM, Transpose, Reshape), its biases, and
   * initial states expanded to the batch at plan time (four shape
   * computations each) */
  {"ops-lstm", 14, {4, {2, 3, 6, 8}}, {3, {2, 8, 10}}, 1e-5f},
  /* GRU backwards with the reset gate first and an initial h (four shape
   * computations), Squeeze, GRU both ways with it after and no bias,
   * Transpose, Reshape, RNN, Transpose, Reshape */
  {"ops-gru-rnn", 15, {4, {2, 3, 6, 8}}, {3, {2, 8, 3}}, 1e-5f},
  /* a forward LSTM of 86 units for a batch of 9: the CPU's recurrent
   * product in every block width, its rows in pairs but the last, shared
   * out among threads in two blocks of columns (Conv, Reshape, Transpose,
   * LSTM, Squeeze, Transpose) */
  {"ops-lstm-wide", 6, {4, {9, 3, 6, 8}}, {3, {9, 8, 86}}, 1e-5f},
  /* x * Sigmoid (x) after Conv as one Swish, the Mul's operands either
   * way round (Conv, Swish, Conv, Swish); where the Sigmoid has a second
   * reader, Conv, Sigmoid, Mul, Add */
  {"ops-swish", 8, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* x + x s as x (1 + s), s a squeeze-and-excitation's scale: Conv,
   * GlobalAveragePool, Conv, HardSigmoid and 1 + s (one node), Mul, Conv,
   * ReduceMean of each plane (on the CPU a pooling, which reads the
   * channels-last activation as it is), Conv, Sigmoid and 1 + s, Mul (the
   * Add and the
   * product either way round), then Mul, Add, Add (the product read
   * twice: no rewrite), Mul, Add (s a constant: no rewrite), Conv; 18
   * nodes as written, 17 where either rewrite is missing */
  {"ops-residual-scale", 16, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* the merged runs after conv1, relu2 (Sigmoid, Tanh) and relu3 (Neg)
   * are the post-ops of their producers on the CPU (postops.c) */
  {"ops-chain-postops", 7, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* the exact GELU's formula, written two ways, as two Gelus; a formula
   * that is no GELU stays: Linear, Erf, Linear, Mul, Linear) */
  {"ops-gelu-formula", 10, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* Adds broadcast along the leading dimensions (a position table, a
   * window mask) and a Mul by one value per position: our loop's rows */
  {"ops-leading-broadcast", 9, {4, {2, 3, 6, 8}}, {4, {2, 4, 6, 8}}, 1e-5f},
  /* Linear layers past two dimensions: MatMul, Add of a bias row (the
   * second written first), Relu between; Reshapes around */
  {"ops-linear-bias", 7, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* a MatMul's bias Add followed by a merged run (Relu, x 2), with a Conv
   * and its own run planned between the two: each run applies once */
  {"ops-bias-chain", 9, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* a reduction of every axis to a scalar, which divides the Conv's
   * output (Conv, ReduceMax, Div) */
  {"ops-full-reduce", 3, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* squeeze-and-excitation in channel blocks (Conv, Relu,
   * GlobalAveragePool, Conv, Sigmoid, Mul, Mul, Conv) */
  {"ops-se-blocks", 8, {4, {2, 3, 6, 8}}, {4, {2, 16, 6, 8}}, 1e-5f},
  /* channel Concats read by convolutions taken apart (graph/concat.c):
   * 19 nodes as written, 25 once the MaxPool moved before its Concat and
   * four convolutions became sums of a convolution per part */
  {"ops-concat-convs", 25, {4, {2, 3, 6, 8}}, {4, {2, 8, 6, 8}}, 1e-5f},
  /* 3x3 convolutions either side of the CPU's Winograd thresholds
   * (cpu/conv.c; backends.c checks which run it) */
  {"ops-winograd", 12, {4, {2, 3, 112, 112}}, {4, {2, 16, 28, 28}}, 1e-5f},
  /* a bilinear Resize by 2.5 as the graph's output (Conv, Relu,
   * Resize): on the CPU our loop's row-major resampling (backends.c) */
  {"ops-upsample-output", 3, {4, {2, 3, 6, 8}}, {4, {2, 5, 15, 20}}, 1e-5f},
  /* one head of self-attention over the image's positions (Reshape,
   * Transpose, three MatMuls, Transpose, MatMul, Softmax, MatMul,
   * MatMul, Transpose, Reshape); in bf16's wide plan the Softmax writes
   * bfloat16 for the product after it (backends.c) */
  {"ops-attention", 12, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* two heads from one product, the query, key and values parts of it
   * along its first axis (two Gathers, a Slice and a Squeeze): on the CPU
   * views of its block, the values read last; the query's scale computed
   * from its shape (five shape nodes), the key's a constant: both scale
   * the scores once a plan has them (backends.c) */
  {"ops-qkv-attention", 26, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* grouped convolutions of 4, 8 and 32 input channels a group, which
   * the CPU merges in bfloat16 on a matrix unit (backends.c) */
  {"ops-narrow-groups", 9, {4, {2, 3, 6, 8}}, {4, {2, 8, 6, 8}}, 1e-5f},
  /* YOLOv8's C2f: its chunks' bounds, computed from the channels of
   * the first Conv, fold at load, so the Concat is taken apart (Conv,
   * Swish, two Slices, Conv, Swish, Add; the last Conv three, summed by
   * two Adds) */
  {"ops-chunk-concat", 12, {4, {2, 3, 6, 8}}, {4, {2, 16, 6, 8}}, 1e-5f},
  /* dilated 3x3 convolutions whose off-centre taps read padding alone
   * on a 6x8 map, along both axes and along the rows (backends.c) */
  {"ops-dead-taps", 6, {4, {2, 3, 6, 8}}, {4, {2, 16, 6, 8}}, 1e-5f},
  /* a segmentation's head: Convs of 16 and 32 channels (two of stride
   * 2), the classes' Conv 1x1 to 5 and a linear Resize to the image's
   * size; an image-to-image network's end, Convs of 16 channels and a
   * Conv 1x1 to 3 (the layouts they get: backends.c) */
  {"ops-class-head", 8, {4, {2, 3, 6, 8}}, {4, {2, 5, 6, 8}}, 1e-5f},
  {"ops-image-head", 5, {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* ConvNeXt's block: its Transposes to channels last and back views
   * of their inputs where the layouts allow (backends.c) */
  {"ops-channels-last-block", 13, {4, {2, 3, 6, 8}}, {4, {2, 8, 6, 8}},
      1e-5f},
  /* channels-last inputs (N x H x W x 3) taken channels first: the
   * engine's Transpose cancels the model's (Conv, Sigmoid), or stays
   * before a Mul along the channels (Transpose, Mul, Transpose, Conv,
   * Sigmoid); cbi_engine_run_tensor () takes their tensors as the
   * models do, N x H x W x C, and the engine transposes them */
  {"nhwc-transposed", 2, {4, {2, 6, 8, 3}}, {4, {2, 3, 6, 8}}, 1e-5f},
  {"nhwc-scaled", 5, {4, {2, 6, 8, 3}}, {4, {2, 3, 6, 8}}, 1e-5f},
  /* a Gather of 80 indices computed from the width (past the 64 a view
   * holds itself), Conv; the rest are shape computations */
  {"gather-long", 7, {4, {1, 3, 2, 80}}, {4, {1, 3, 2, 80}}, 1e-5f},
};

/* ops-chunk-concat.onnx: the chunks' bounds that the exporter computes
 * from the Shape of a convolution's output read its channels alone,
 * which the filters fix: they fold at load, and no shape computation is
 * left for plans, nor the Concat they fed; ops-plan-values.onnx's Range
 * over the map's width stays one (the width follows the frames). */
GST_START_TEST (test_channels_computed_from_a_shape_fold_at_load)
{
  CbiGraph *g = load_or_fail ("ops-chunk-concat.onnx");
  guint i, shape_values = 0;

  for (i = 0; i < g->nodes->len; i++) {
    fail_if (cbi_graph_node (g, i)->op == CBI_OP_CONCAT);
    shape_values += cbi_graph_node (g, i)->op == CBI_OP_SHAPE_VALUE;
  }
  fail_unless_equals_int (shape_values, 0);
  cbi_graph_free (g);

  g = load_or_fail ("ops-plan-values.onnx");
  for (i = 0; i < g->nodes->len; i++)
    shape_values += cbi_graph_node (g, i)->op == CBI_OP_SHAPE_VALUE;
  fail_unless (shape_values > 0);
  cbi_graph_free (g);
}

GST_END_TEST;

/* The same in bf16's wide plan, which keeps the activations bfloat16
 * through the primitives between convolutions (cpu/bf16.c), wherever the
 * CPU has bfloat16: within 5 % of the largest reference value (8 bits of
 * mantissa, rounded at each activation) */
GST_START_TEST (test_activation_ops_in_bf16_stay_near_onnxruntime)
{
  const gchar *stem = activation_models[__i__].stem;
  gchar *file = g_strconcat (stem, ".onnx", NULL);
  CbiGraph *g = load_or_fail (file);

  if (!check_tensor_model_in (g, stem, &activation_models[__i__].in,
          &activation_models[__i__].out, 5e-2f, CBI_PRECISION_BF16))
    GST_INFO ("%s: no bf16 on this CPU, not compared", stem);
  g_free (file);
}

GST_END_TEST;

GST_START_TEST (test_activation_ops_match_onnxruntime)
{
  const gchar *stem = activation_models[__i__].stem;
  gchar *file = g_strconcat (stem, ".onnx", NULL);
  CbiGraph *g = load_or_fail (file);

  fail_unless_equals_int (g->nodes->len, activation_models[__i__].n_nodes);
  check_tensor_model (g, stem, &activation_models[__i__].in,
      &activation_models[__i__].out, activation_models[__i__].tolerance);
  g_free (file);
}

GST_END_TEST;

/* ops-gelu-formula.onnx (tests/models/generate.py): the two GELUs
 * written as formulas are one Gelu each, and the Erf of the formula that
 * is none stays; the values are checked against onnxruntime above */
GST_START_TEST (test_a_gelu_written_as_its_formula_is_one_gelu)
{
  CbiGraph *g = load_or_fail ("ops-gelu-formula.onnx");
  guint i, gelus = 0, erfs = 0, convs = 0;

  for (i = 0; i < g->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (g, i);
    gelus += n->op == CBI_OP_GELU;
    erfs += n->op == CBI_OP_ERF;
    convs += n->op == CBI_OP_CONV;
  }
  fail_unless_equals_int (convs, 3);
  fail_unless_equals_int (gelus, 2);
  fail_unless_equals_int (erfs, 1);
  cbi_graph_free (g);
}

GST_END_TEST;

/* ops-concat-convs.onnx (tests/models/generate.py): of its four
 * Concats only the one a widening convolution reads stays; the MaxPool
 * after the fire module's Concat is one per part, before it; each
 * convolution that read a Concat is a convolution per part, the first
 * with the bias, and an Add of each other onto the sum so far; the
 * values are checked against onnxruntime above */
GST_START_TEST (test_a_concat_read_by_convolutions_becomes_their_sum)
{
  CbiGraph *g = load_or_fail ("ops-concat-convs.onnx");
  guint i, concats = 0, pools = 0, convs = 0, adds = 0, biased = 0;

  for (i = 0; i < g->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (g, i);
    concats += n->op == CBI_OP_CONCAT;
    pools += n->op == CBI_OP_MAX_POOL;
    convs += n->op == CBI_OP_CONV;
    adds += n->op == CBI_OP_ADD;
    biased += n->op == CBI_OP_CONV && n->n_inputs > 2 && n->inputs[2] >= 0;
    /* every part reads what its Concat read, never a Concat's output */
    if (n->op == CBI_OP_CONV && n->inputs[0] != g->input)
      fail_if (cbi_graph_node (g, cbi_graph_producer (g,
                  n->inputs[0]))->op == CBI_OP_CONCAT
          && cbi_graph_tensor (g, n->inputs[1])->dims[0]
          <= cbi_graph_tensor (g, n->inputs[1])->dims[1], "%s", n->name);
  }
  fail_unless_equals_int (concats, 1);
  fail_unless_equals_int (pools, 2);
  fail_unless_equals_int (convs, 12);
  /* head_b has no bias: its first part has none either */
  fail_unless_equals_int (biased, 7);
  fail_unless_equals_int (adds, 5);
  cbi_graph_free (g);
}

GST_END_TEST;

/* a channels-last model's tensor is N x H x W x C: another rank, or the
 * channels where the model has them first, is refused naming the shape,
 * and the engine still runs the right one afterwards */
GST_START_TEST (test_a_channels_last_model_refuses_a_tensor_of_another_layout)
{
  CbiGraph *g = load_or_fail ("nhwc-transposed.onnx");
  const CbiShape flat = { 3, {2, 6, 24} }, first = { 4, {2, 3, 6, 8} },
      last = { 4, {2, 6, 8, 3} };
  gfloat *in = g_new0 (gfloat, cbi_shape_count (&last));
  GError *err = NULL;
  gboolean fallback;
  CbiBatchReport r;
  CbiEngine *e = cbi_engine_new (g, CBI_BACKEND_CPU, 0, 0, &fallback, &err);

  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_if (cbi_engine_run_tensor (e, &flat, in, NULL, &r, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  fail_unless (strstr (err->message, "N x H x W x C, not 2x6x24") != NULL,
      "%s", err->message);
  g_clear_error (&err);
  fail_if (cbi_engine_run_tensor (e, &first, in, NULL, &r, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  g_clear_error (&err);
  fail_unless (cbi_engine_run_tensor (e, &last, in, NULL, &r, &err), "%s",
      err ? err->message : "");
  cbi_engine_free (e);
  g_free (in);
}

GST_END_TEST;

/* shape-ops.onnx at two input sizes: one model, two plans, each with
 * shapes computed from its own input's (tests/models/generate.py) */
static const struct
{
  const gchar *key;
  CbiShape in;
  CbiShape outs[6];             /* flat, sliced, chs, expanded, up, padded */
} shape_sizes[] = {
  {"a", {4, {2, 3, 6, 8}}, {{2, {2, 192}}, {4, {2, 2, 6, 4}},
          {4, {2, 3, 6, 8}}, {4, {2, 3, 6, 8}}, {4, {2, 4, 12, 16}},
          {4, {2, 4, 9, 10}}}},
  {"b", {4, {3, 3, 5, 7}}, {{2, {3, 140}}, {4, {3, 2, 5, 3}},
          {4, {3, 3, 5, 7}}, {4, {3, 3, 5, 7}}, {4, {3, 4, 10, 14}},
          {4, {3, 4, 9, 9}}}},
};

/* Runs @key's input through @e; checks every output's shape and values
 * against onnxruntime's. */
static void
check_shape_ops (CbiEngine * e, guint key)
{
  gchar *in_name = g_strdup_printf ("shape-ops.%s.in.bin",
      shape_sizes[key].key);
  gchar *out_name = g_strdup_printf ("shape-ops.%s.out.bin",
      shape_sizes[key].key);
  gint64 in_count = cbi_shape_count (&shape_sizes[key].in), total = 0, i;
  gfloat *in, *expected;
  GError *err = NULL;
  CbiBatchReport r;
  guint o, ticket;

  for (o = 0; o < G_N_ELEMENTS (shape_sizes[key].outs); o++)
    total += cbi_shape_count (&shape_sizes[key].outs[o]);
  in = (gfloat *) read_bin (in_name, in_count * sizeof (gfloat));
  expected = (gfloat *) read_bin (out_name, total * sizeof (gfloat));
  fail_unless (cbi_engine_run_tensor (e, &shape_sizes[key].in, in, &ticket,
          &r, &err), "%s", err ? err->message : "");
  total = 0;
  for (o = 0; o < G_N_ELEMENTS (shape_sizes[key].outs); o++) {
    const CbiShape *want = &shape_sizes[key].outs[o];
    gfloat max_err = 0.0f, ref = 0.0f;
    const gfloat *out;
    CbiShape shape;
    out = cbi_engine_get_output (e, ticket, o, &shape, &err);
    fail_unless (out != NULL, "%s", err ? err->message : "");
    fail_unless (cbi_shape_equal (&shape, want), "size %s, output %u: %s",
        shape_sizes[key].key, o, cbi_shape_to_string (&shape));
    for (i = 0; i < cbi_shape_count (want); i++) {
      fail_unless (isfinite (out[i]));
      max_err = MAX (max_err, fabsf (out[i] - expected[total + i]));
      ref = MAX (ref, fabsf (expected[total + i]));
    }
    fail_unless (ref > 0.0f && max_err <= 1e-5f * ref, "size %s, output %u: "
        "max error %g over max |reference| %g", shape_sizes[key].key, o,
        max_err, ref);
    total += cbi_shape_count (want);
  }
  g_free (in);
  g_free (expected);
  g_free (in_name);
  g_free (out_name);
}

GST_START_TEST (test_shapes_computed_at_plan_time_match_onnxruntime)
{
  CbiGraph *g = load_or_fail ("shape-ops.onnx");
  CbiShapeEval *eval = g->shape_eval;
  CbiShape shapes_a[256];
  GError *err = NULL;
  gboolean fallback;
  CbiGraph *planned;
  guint evals, i, j;
  CbiEngine *e;

  fail_unless (eval != NULL);
  fail_unless (g->tensors->len <= G_N_ELEMENTS (shapes_a));
  /* what backends plan has no shape node and reads no int64 tensor */
  planned = cbi_graph_specialise (g, &shape_sizes[0].in, shapes_a, &err);
  fail_unless (planned != NULL, "%s", err ? err->message : "");
  for (i = 0; i < planned->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (planned, i);
    fail_if (cbi_op_info (n->op)->kind == CBI_OP_KIND_SHAPE_VALUE);
    fail_if (n->op == CBI_OP_SQUEEZE || n->op == CBI_OP_UNSQUEEZE);
    for (j = 0; j < n->n_inputs; j++)
      fail_unless (cbi_graph_tensor (planned, n->inputs[j])->dtype ==
          CBI_DTYPE_FLOAT, "node %s reads an int64 tensor", n->name);
  }
  cbi_graph_free (planned);

  e = cbi_engine_new (g, CBI_BACKEND_CPU, 0, 0, &fallback, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  check_shape_ops (e, 0);
  /* the shape nodes ran when the plan was made, not for each batch */
  evals = eval->n_evals;
  fail_unless (evals > 0);
  check_shape_ops (e, 0);
  check_shape_ops (e, 0);
  fail_unless_equals_int (eval->n_evals, evals);
  /* another input shape: another plan, its own shapes */
  check_shape_ops (e, 1);
  fail_unless (eval->n_evals > evals);
  evals = eval->n_evals;
  check_shape_ops (e, 0);
  check_shape_ops (e, 1);
  fail_unless_equals_int (eval->n_evals, evals);
  cbi_engine_free (e);
}

GST_END_TEST;

/* The index of the node named @name in @g (fails where none is). */
static guint
node_named (const CbiGraph * g, const gchar * name)
{
  guint i;

  for (i = 0; i < g->nodes->len; i++)
    if (g_strcmp0 (cbi_graph_node (g, i)->name, name) == 0)
      return i;
  fail ("no node %s", name);
  return 0;
}

/* ops-qkv-attention.onnx: the query's scale, 1 / sqrt (4) computed from
 * its shape, and the key's constant 0.5 leave the operands: the plan's
 * product of the two reads the query and the transposed key as they
 * are, and one scale of 0.25 follows it, writing the scores (its
 * epilogue). onnx.c's table checks the values against onnxruntime. */
GST_START_TEST (test_scales_of_a_products_operands_scale_its_output)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  CbiGraph *g = load_or_fail ("ops-qkv-attention.onnx");
  CbiShape *shapes = g_new0 (CbiShape, g->tensors->len);
  const CbiNode *product, *scale, *query, *key_t;
  GError *err = NULL;
  CbiGraph *planned;
  guint at, i, linear = 0;

  planned = cbi_graph_specialise (g, &in, shapes, &err);
  fail_unless (planned != NULL, "%s", err ? err->message : "");
  at = node_named (planned, "scores");
  product = cbi_graph_node (planned, at);
  query = cbi_graph_node (planned, node_named (planned, "query"));
  key_t = cbi_graph_node (planned, node_named (planned, "key_t"));
  fail_unless_equals_int (product->op, CBI_OP_MATMUL);
  fail_unless_equals_int (product->inputs[0], query->output);
  fail_unless_equals_int (product->inputs[1], key_t->output);
  fail_unless (at + 1 < planned->nodes->len);
  scale = cbi_graph_node (planned, at + 1);
  fail_unless_equals_int (scale->op, CBI_OP_LINEAR);
  fail_unless_equals_int (scale->inputs[0], product->output);
  fail_unless (fabsf (scale->alpha - 0.25f) < 1e-7f, "scale %g", scale->alpha);
  fail_unless_equals_float (scale->beta, 0.0f);
  /* it writes what the model's product wrote: the Softmax reads it */
  fail_unless_equals_int (cbi_graph_node (planned, node_named (planned,
              "softmax"))->inputs[0], scale->output);
  fail_unless (cbi_shape_equal (&shapes[product->output],
          &shapes[scale->output]));
  fail_unless (cbi_graph_fused_activation (planned, at) == scale);
  /* the two scales are that one */
  for (i = 0; i < planned->nodes->len; i++)
    linear += cbi_graph_node (planned, i)->op == CBI_OP_LINEAR;
  fail_unless_equals_int (linear, 1);
  cbi_graph_free (planned);
  cbi_graph_free (g);
  g_free (shapes);
}

GST_END_TEST;

GST_START_TEST (test_computed_sizes_a_plan_cannot_run_fail_that_plan)
{
  /* sizes of 7x9 (H x W) resize 7x9 frames by 1 and 1x3 ones by 7 x 3,
   * but no 2x2 one */
  const CbiShape fits = { 4, {1, 3, 7, 9} }, fits_too = { 4, {2, 3, 1, 3} };
  const CbiShape odd = { 4, {1, 3, 2, 2} };
  CbiGraph *g = load_or_fail ("shape-fixed-sizes.onnx");
  CbiShape shapes[32];
  GError *err = NULL;

  fail_unless (g->tensors->len <= G_N_ELEMENTS (shapes));
  fail_unless (cbi_graph_infer_shapes (g, &fits, shapes, &err), "%s",
      err ? err->message : "");
  fail_unless (cbi_graph_infer_shapes (g, &fits_too, shapes, &err), "%s",
      err ? err->message : "");
  fail_unless (shapes[g->outputs[0]].dims[0] == 2
      && shapes[g->outputs[0]].dims[2] == 7
      && shapes[g->outputs[0]].dims[3] == 9);
  fail_if (cbi_graph_infer_shapes (g, &odd, shapes, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  fail_unless (strstr (err->message, "node resize (Resize): sizes 9x7 are "
          "not whole multiples of the planned input's 2x2") != NULL, "%s",
      err->message);
  g_error_free (err);
  cbi_graph_free (g);
}

GST_END_TEST;

/* Two Transposes in a row, the second's perm out of range: the import
 * leaves them apart (fusing them read past the first's perm: found by the
 * fuzzer, seen by valgrind here) and shape inference refuses the perm. */
GST_START_TEST (test_a_bad_perm_after_a_transpose_is_refused_not_fused)
{
  const CbiShape in = { 4, {1, 3, 4, 4} };
  CbiGraph *g = load_or_fail ("bad-transpose-perm.onnx");
  CbiShape shapes[8];
  GError *err = NULL;

  fail_unless (g->tensors->len <= G_N_ELEMENTS (shapes));
  fail_unless_equals_int (g->nodes->len, 2);
  fail_if (cbi_graph_infer_shapes (g, &in, shapes, &err));
  fail_unless (strstr (err->message, "node second (Transpose): perm is not "
          "a permutation") != NULL, "%s", err->message);
  g_error_free (err);
  cbi_graph_free (g);
}

GST_END_TEST;

/* image + Expand ([1, 1, 1, 1], [N, 3, 2048, 2048]) with N from the
 * input's shape: 48 MiB made at each plan is refused, naming the node,
 * without being made */
GST_START_TEST (test_a_plan_that_computes_too_many_values_is_refused_at_once)
{
  const CbiShape in = { 4, {1, 3, 1, 1} };
  CbiGraph *g = load_or_fail ("shape-expand-huge.onnx");
  CbiShape shapes[32];
  GError *err = NULL;

  fail_unless (g->tensors->len <= G_N_ELEMENTS (shapes));
  fail_if (cbi_graph_infer_shapes (g, &in, shapes, &err));
  fail_unless (err != NULL);
  fail_unless (strstr (err->message, "node expand (Expand): computing the "
          "values that follow the input's size needs more than 32 MiB")
      != NULL, "%s", err->message);
  g_error_free (err);
  cbi_graph_free (g);
}

GST_END_TEST;

/* image * float (Shape (image)): a value computed from the planned
 * shape is a constant of each plan, which a width of 4 broadcasts along
 * and a width of 5 does not */
GST_START_TEST (test_a_float_computed_from_shapes_is_a_constant_of_each_plan)
{
  const CbiShape fits = { 4, {1, 3, 2, 4} }, odd = { 4, {1, 3, 2, 5} };
  CbiGraph *g = load_or_fail ("shape-operand.onnx");
  gfloat ones[1 * 3 * 2 * 5];
  const gfloat *out;
  CbiBatchReport report;
  CbiShape shape;
  GError *err = NULL;
  gboolean fallback;
  CbiEngine *e;
  guint ticket, i;

  for (i = 0; i < G_N_ELEMENTS (ones); i++)
    ones[i] = 1.0f;
  e = cbi_engine_new (g, CBI_BACKEND_CPU, 0, 0, &fallback, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_unless (cbi_engine_run_tensor (e, &fits, ones, &ticket, &report,
          &err), "%s", err ? err->message : "");
  out = cbi_engine_get_output (e, ticket, 0, &shape, &err);
  fail_unless (out != NULL, "%s", err ? err->message : "");
  fail_unless (cbi_shape_equal (&shape, &fits));
  for (i = 0; i < cbi_shape_count (&fits); i++)
    fail_unless_equals_float (out[i], (gfloat) fits.dims[i % 4]);
  fail_if (cbi_engine_run_tensor (e, &odd, ones, &ticket, &report, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  fail_unless (strstr (err->message, "do not broadcast") != NULL, "%s",
      err->message);
  g_error_free (err);
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_bad_models_are_refused_with_the_reason)
{
  GError *err = NULL;
  CbiGraph *g = load (bad_models[__i__].file, &err);

  fail_unless (g == NULL, "%s loaded", bad_models[__i__].file);
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_MODEL));
  fail_unless (strstr (err->message, bad_models[__i__].reason) != NULL,
      "%s: '%s' lacks '%s'", bad_models[__i__].file, err->message,
      bad_models[__i__].reason);
  g_error_free (err);
}

GST_END_TEST;

GST_START_TEST (test_a_model_cut_short_by_one_byte_is_said_to_be_truncated)
{
  gchar *path = model_path ("conv-relu.onnx"), *data = NULL;
  GError *err = NULL;
  gsize size = 0;

  /* the bytes of the file less its last one, as cbi_onnx_load() hands
   * them on */
  fail_unless (g_file_get_contents (path, &data, &size, NULL), "%s", path);
  fail_if (cbi_onnx_load_from_data ((const guint8 *) data, size - 1, NULL,
          &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_MODEL));
  fail_unless (strstr (err->message, "truncated") != NULL, "%s", err->message);
  g_error_free (err);
  g_free (data);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_empty_bytes_are_no_model)
{
  GError *err = NULL;

  fail_unless (cbi_onnx_load_from_data ((const guint8 *) "", 0, NULL,
          &err) == NULL);
  fail_unless (strstr (err->message, "no graph") != NULL, "%s", err->message);
  g_error_free (err);
}

GST_END_TEST;

GST_START_TEST (test_an_add_per_channel_after_a_conv_becomes_its_bias)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 x_dims[4] = { 1, 3, 4, 4 }, w_dims[4] = { 2, 3, 1, 1 };
  const gint64 chan_dims[4] = { 1, 2, 1, 1 }, row_dims[1] = { 2 };
  gint x, w, c1, a1, c2, a2, in[2];
  const CbiTensorInfo *bias;

  /* Conv -> Add of 1x2x1x1: folded; Conv -> Add of [2], which ONNX
   * broadcasts along W, not the channels: kept */
  g->input = x = cbi_graph_add_tensor (g, "x", 4, x_dims, NULL);
  w = cbi_graph_add_tensor (g, "w", 4, w_dims, g_new0 (gfloat, 6));
  c1 = cbi_graph_add_tensor (g, "c1", 0, NULL, NULL);
  a1 = cbi_graph_add_tensor (g, "a1", 0, NULL, NULL);
  c2 = cbi_graph_add_tensor (g, "c2", 0, NULL, NULL);
  a2 = cbi_graph_add_tensor (g, "a2", 0, NULL, NULL);
  in[0] = x;
  in[1] = w;
  cbi_graph_add_node (g, CBI_OP_CONV, "conv1", 2, in, c1, NULL);
  in[0] = c1;
  in[1] = cbi_graph_add_tensor (g, "per-channel", 4, chan_dims,
      g_memdup2 ((const gfloat[]) { 0.5f, -2.0f }, 2 * sizeof (gfloat)));
  cbi_graph_add_node (g, CBI_OP_ADD, "add1", 2, in, a1, NULL);
  in[0] = a1;
  in[1] = w;
  cbi_graph_add_node (g, CBI_OP_CONV, "conv2", 2, in, c2, NULL);
  in[0] = c2;
  in[1] = cbi_graph_add_tensor (g, "per-column", 1, row_dims,
      g_memdup2 ((const gfloat[]) { 1.0f, 1.0f }, 2 * sizeof (gfloat)));
  cbi_graph_add_node (g, CBI_OP_ADD, "add2", 2, in, a2, NULL);
  g->outputs[g->n_outputs++] = a2;

  cbi_graph_fold_conv_bias (g);
  fail_unless_equals_int (g->nodes->len, 3);
  fail_unless_equals_int (cbi_graph_node (g, 0)->output, a1);
  fail_unless_equals_int (cbi_graph_node (g, 0)->n_inputs, 3);
  bias = cbi_graph_tensor (g, cbi_graph_node (g, 0)->inputs[2]);
  fail_unless_equals_int (bias->n_dims, 1);
  fail_unless_equals_float (bias->data[0], 0.5f);
  fail_unless_equals_float (bias->data[1], -2.0f);
  fail_unless_equals_int (cbi_graph_node (g, 2)->op, CBI_OP_ADD);
  cbi_graph_free (g);
}

GST_END_TEST;

/* 0.1 - x, once refused: a Sub from a scalar constant is the element-wise
 * alpha x + beta */
GST_START_TEST (test_a_sub_from_a_scalar_constant_is_minus_x_plus_it)
{
  CbiGraph *g = load_or_fail ("sub-from-constant.onnx");
  guint i, linear = 0;

  for (i = 0; i < g->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (g, i);
    fail_if (n->op == CBI_OP_SUB, "node %s is still a Sub", n->name);
    if (n->op == CBI_OP_LINEAR && n->alpha == -1.0f
        && fabsf (n->beta - 0.1f) < 1e-7f)
      linear++;
  }
  fail_unless_equals_int (linear, 1);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_an_identity_goes_unless_it_is_an_output)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 dims[4] = { 1, 2, 3, 3 };
  gint x, a, r, sg, sum, kept, in[2];

  /* x -> Identity -> a, read by a Relu and a Sigmoid, whose Add is an
   * output; an Identity of the sum is the other */
  g->input = x = cbi_graph_add_tensor (g, "x", 4, dims, NULL);
  a = cbi_graph_add_tensor (g, "a", 0, NULL, NULL);
  r = cbi_graph_add_tensor (g, "r", 0, NULL, NULL);
  sg = cbi_graph_add_tensor (g, "s", 0, NULL, NULL);
  sum = cbi_graph_add_tensor (g, "sum", 0, NULL, NULL);
  kept = cbi_graph_add_tensor (g, "kept", 0, NULL, NULL);
  cbi_graph_add_node (g, CBI_OP_IDENTITY, "dropout", 1, &x, a, NULL);
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &a, r, NULL);
  cbi_graph_add_node (g, CBI_OP_SIGMOID, "sigmoid", 1, &a, sg, NULL);
  in[0] = r;
  in[1] = sg;
  cbi_graph_add_node (g, CBI_OP_ADD, "add", 2, in, sum, NULL);
  cbi_graph_add_node (g, CBI_OP_IDENTITY, "out", 1, &sum, kept, NULL);
  g->outputs[g->n_outputs++] = sum;
  g->outputs[g->n_outputs++] = kept;

  cbi_graph_drop_identities (g);
  fail_unless_equals_int (g->nodes->len, 4);
  fail_unless_equals_int (cbi_graph_node (g, 0)->op, CBI_OP_RELU);
  fail_unless_equals_int (cbi_graph_node (g, 0)->inputs[0], x);
  fail_unless_equals_int (cbi_graph_node (g, 1)->inputs[0], x);
  fail_unless_equals_int (cbi_graph_node (g, 3)->op, CBI_OP_IDENTITY);
  fail_unless_equals_int (cbi_graph_node (g, 3)->output, kept);
  cbi_graph_free (g);
}

GST_END_TEST;

static Suite *
onnx_suite (void)
{
  Suite *s = suite_create ("cbionnx");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_conv_relu_model_loads_with_a_symbolic_size);
  tcase_add_test (tc, test_every_eltwise_op_and_add_match_the_onnx_reference);
  tcase_add_test (tc, test_an_identity_goes_unless_it_is_an_output);
  tcase_add_test (tc, test_a_sub_from_a_scalar_constant_is_minus_x_plus_it);
  tcase_add_test (tc, test_an_add_per_channel_after_a_conv_becomes_its_bias);
  tcase_add_test (tc,
      test_batch_norm_after_conv_is_folded_and_matches_the_reference);
  tcase_add_test (tc, test_sub_mul_div_add_with_broadcast_match_the_reference);
  tcase_add_loop_test (tc, test_imported_models_match_the_onnx_reference, 0,
      G_N_ELEMENTS (reference_models));
  tcase_add_loop_test (tc, test_folded_models_match_onnxruntime, 0,
      G_N_ELEMENTS (folded_models));
  tcase_add_loop_test (tc, test_activation_ops_match_onnxruntime, 0,
      G_N_ELEMENTS (activation_models));
  tcase_add_test (tc, test_channels_computed_from_a_shape_fold_at_load);
  tcase_add_loop_test (tc, test_activation_ops_in_bf16_stay_near_onnxruntime,
      0, G_N_ELEMENTS (activation_models));
  tcase_add_loop_test (tc, test_bad_models_are_refused_with_the_reason, 0,
      G_N_ELEMENTS (bad_models));
  tcase_add_test (tc,
      test_a_model_cut_short_by_one_byte_is_said_to_be_truncated);
  tcase_add_test (tc, test_empty_bytes_are_no_model);
  tcase_add_test (tc, test_shapes_computed_at_plan_time_match_onnxruntime);
  tcase_add_test (tc, test_scales_of_a_products_operands_scale_its_output);
  tcase_add_test (tc,
      test_a_channels_last_model_refuses_a_tensor_of_another_layout);
  tcase_add_test (tc, test_a_gelu_written_as_its_formula_is_one_gelu);
  tcase_add_test (tc, test_a_concat_read_by_convolutions_becomes_their_sum);
  tcase_add_test (tc, test_computed_sizes_a_plan_cannot_run_fail_that_plan);
  tcase_add_test (tc, test_a_bad_perm_after_a_transpose_is_refused_not_fused);
  tcase_add_test (tc,
      test_a_float_computed_from_shapes_is_a_constant_of_each_plan);
  tcase_add_test (tc,
      test_a_plan_that_computes_too_many_values_is_refused_at_once);
  return s;
}

GST_CHECK_MAIN (onnx);
