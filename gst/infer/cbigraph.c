/* cudabatchinfer: model graph (the engine's IR)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbigraph.h"
#include "cbierror.h"
#include "cbimath.h"

#include <string.h>

static void
cbi_tensor_info_clear (gpointer p)
{
  CbiTensorInfo *t = p;

  g_free (t->name);
  g_free (t->data);
  g_free (t->ints);
}

static void
cbi_node_clear (gpointer p)
{
  CbiNode *n = p;

  g_free (n->name);
}

CbiGraph *
cbi_graph_new (void)
{
  CbiGraph *graph = g_new0 (CbiGraph, 1);

  graph->tensors = g_array_new (FALSE, TRUE, sizeof (CbiTensorInfo));
  g_array_set_clear_func (graph->tensors, cbi_tensor_info_clear);
  graph->nodes = g_array_new (FALSE, TRUE, sizeof (CbiNode));
  g_array_set_clear_func (graph->nodes, cbi_node_clear);
  graph->input = -1;
  return graph;
}

void
cbi_graph_free (CbiGraph * graph)
{
  if (graph == NULL)
    return;
  /* a specialised graph shares the tensors (cbi_graph_specialise()) */
  g_array_unref (graph->tensors);
  g_array_unref (graph->nodes);
  if (graph->shape_eval)
    graph->shape_eval->free (graph->shape_eval);
  g_free (graph);
}

gint
cbi_graph_add_tensor (CbiGraph * graph, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data)
{
  CbiTensorInfo t = { 0, };

  g_return_val_if_fail (n_dims >= 0 && n_dims <= CBI_MAX_DIMS, -1);
  t.name = g_strdup (name);
  t.n_dims = n_dims;
  if (n_dims > 0)               /* a scalar may come with no dims */
    memcpy (t.dims, dims, n_dims * sizeof (gint64));
  t.data = data;
  g_array_append_val (graph->tensors, t);
  return graph->tensors->len - 1;
}

gint
cbi_graph_add_ints (CbiGraph * graph, const gchar * name, gint n_dims,
    const gint64 * dims, gint64 * ints)
{
  gint t = cbi_graph_add_tensor (graph, name, n_dims, dims, NULL);

  if (t < 0) {
    g_free (ints);
    return t;
  }
  cbi_graph_tensor (graph, t)->dtype = CBI_DTYPE_INT64;
  cbi_graph_tensor (graph, t)->ints = ints;
  return t;
}

gint
cbi_graph_add_node (CbiGraph * graph, CbiOpType op, const gchar * name,
    guint n_inputs, const gint * inputs, gint output, const CbiConvAttrs * conv)
{
  CbiNode n = { 0, };
  guint i;

  g_return_val_if_fail (n_inputs <= CBI_MAX_NODE_INPUTS, -1);
  n.op = op;
  n.name = g_strdup (name);
  n.n_inputs = n_inputs;
  for (i = 0; i < CBI_MAX_NODE_INPUTS; i++)
    n.inputs[i] = i < n_inputs ? inputs[i] : -1;
  n.output = output;
  if (conv)
    n.conv = *conv;
  g_array_append_val (graph->nodes, n);
  return graph->nodes->len - 1;
}

CbiTensorInfo *
cbi_graph_tensor (const CbiGraph * graph, gint index)
{
  return &g_array_index (graph->tensors, CbiTensorInfo, index);
}

CbiNode *
cbi_graph_node (const CbiGraph * graph, guint index)
{
  return &g_array_index (graph->nodes, CbiNode, index);
}

/* *INDENT-OFF* */
static const CbiOpInfo cbi_ops[] = {
  /* a row per op, wider than 80 columns to read as a table:
   * name, kind, eltwise, binary, spatial, fuse, int64 input */
  [CBI_OP_CONV] = {"Conv", CBI_OP_KIND_CONV, -1, -1, TRUE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_RELU] = {"Relu", CBI_OP_KIND_ELTWISE, CBI_K_RELU, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SIGMOID] = {"Sigmoid", CBI_OP_KIND_ELTWISE, CBI_K_SIGMOID, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_TANH] = {"Tanh", CBI_OP_KIND_ELTWISE, CBI_K_TANH, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_CLIP] = {"Clip", CBI_OP_KIND_ELTWISE, CBI_K_CLIP, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_ELU] = {"Elu", CBI_OP_KIND_ELTWISE, CBI_K_ELU, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_HARD_SIGMOID] = {"HardSigmoid", CBI_OP_KIND_ELTWISE, CBI_K_HARD_SIGMOID, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_HARD_SWISH] = {"HardSwish", CBI_OP_KIND_ELTWISE, CBI_K_HARD_SWISH, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_IDENTITY] = {"Identity", CBI_OP_KIND_ELTWISE, CBI_K_IDENTITY, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_ADD] = {"Add", CBI_OP_KIND_BINARY, -1, CBI_K_ADD, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_SUB] = {"Sub", CBI_OP_KIND_BINARY, -1, CBI_K_SUB, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_MUL] = {"Mul", CBI_OP_KIND_BINARY, -1, CBI_K_MUL, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_DIV] = {"Div", CBI_OP_KIND_BINARY, -1, CBI_K_DIV, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_MAX_POOL] = {"MaxPool", CBI_OP_KIND_POOL, -1, -1, TRUE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_AVERAGE_POOL] = {"AveragePool", CBI_OP_KIND_POOL, -1, -1, TRUE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_RESIZE] = {"Resize", CBI_OP_KIND_RESIZE, -1, -1, TRUE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_CONCAT] = {"Concat", CBI_OP_KIND_CONCAT, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_CONV_TRANSPOSE] = {"ConvTranspose", CBI_OP_KIND_CONV, -1, -1, TRUE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_PAD] = {"Pad", CBI_OP_KIND_PAD, -1, -1, TRUE, CBI_OP_FUSE_NONE, 1},
  [CBI_OP_INSTANCE_NORM] = {"InstanceNormalization", CBI_OP_KIND_NORM, -1, -1, TRUE, CBI_OP_FUSE_RELU, -1},
  [CBI_OP_DEPTH_TO_SPACE] = {"DepthToSpace", CBI_OP_KIND_PERMUTE, -1, -1, TRUE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_RESHAPE] = {"Reshape", CBI_OP_KIND_RESHAPE, -1, -1, FALSE, CBI_OP_FUSE_NONE, 1},
  [CBI_OP_TRANSPOSE] = {"Transpose", CBI_OP_KIND_PERMUTE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_GEMM] = {"Gemm", CBI_OP_KIND_MATRIX, -1, -1, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_MATMUL] = {"MatMul", CBI_OP_KIND_MATRIX, -1, -1, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_SOFTMAX] = {"Softmax", CBI_OP_KIND_SOFTMAX, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_GLOBAL_AVERAGE_POOL] = {"GlobalAveragePool", CBI_OP_KIND_POOL, -1, -1, TRUE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_PRELU] = {"PRelu", CBI_OP_KIND_PRELU, -1, CBI_K_PRELU, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SHAPE_VALUE] = {"ShapeValue", CBI_OP_KIND_SHAPE_VALUE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SLICE] = {"Slice", CBI_OP_KIND_COPY, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_GATHER] = {"Gather", CBI_OP_KIND_COPY, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_EXPAND] = {"Expand", CBI_OP_KIND_COPY, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SQUEEZE] = {"Squeeze", CBI_OP_KIND_RESHAPE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_UNSQUEEZE] = {"Unsqueeze", CBI_OP_KIND_RESHAPE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  /* ops on activations, issue 10 */
  [CBI_OP_ERF] = {"Erf", CBI_OP_KIND_ELTWISE, CBI_K_ERF, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_GELU] = {"Gelu", CBI_OP_KIND_ELTWISE, CBI_K_GELU_ERF, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_GELU_TANH] = {"Gelu", CBI_OP_KIND_ELTWISE, CBI_K_GELU_TANH, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SQRT] = {"Sqrt", CBI_OP_KIND_ELTWISE, CBI_K_SQRT, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_EXP] = {"Exp", CBI_OP_KIND_ELTWISE, CBI_K_EXP, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_LOG] = {"Log", CBI_OP_KIND_ELTWISE, CBI_K_LOG, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_NEG] = {"Neg", CBI_OP_KIND_ELTWISE, CBI_K_NEG, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_ABS] = {"Abs", CBI_OP_KIND_ELTWISE, CBI_K_ABS, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_RECIPROCAL] = {"Reciprocal", CBI_OP_KIND_ELTWISE, CBI_K_RECIPROCAL, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_POW] = {"Pow", CBI_OP_KIND_ELTWISE, CBI_K_POW, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_MIN] = {"Min", CBI_OP_KIND_BINARY, -1, CBI_K_MIN, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_MAX] = {"Max", CBI_OP_KIND_BINARY, -1, CBI_K_MAX, FALSE, CBI_OP_FUSE_ANY, -1},
  [CBI_OP_REDUCE_MEAN] = {"ReduceMean", CBI_OP_KIND_REDUCE, -1, -1, FALSE, CBI_OP_FUSE_NONE, 1},
  [CBI_OP_REDUCE_SUM] = {"ReduceSum", CBI_OP_KIND_REDUCE, -1, -1, FALSE, CBI_OP_FUSE_NONE, 1},
  [CBI_OP_REDUCE_MAX] = {"ReduceMax", CBI_OP_KIND_REDUCE, -1, -1, FALSE, CBI_OP_FUSE_NONE, 1},
  [CBI_OP_LAYER_NORM] = {"LayerNormalization", CBI_OP_KIND_LAYER_NORM, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_ARGMAX] = {"ArgMax", CBI_OP_KIND_REDUCE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SPLIT] = {"Split", CBI_OP_KIND_SPLIT, -1, -1, FALSE, CBI_OP_FUSE_NONE, 1},
  [CBI_OP_WHERE] = {"Where", CBI_OP_KIND_WHERE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_POW_BINARY] = {"Pow", CBI_OP_KIND_BINARY, -1, CBI_K_POWER, FALSE, CBI_OP_FUSE_ANY, -1},
};
/* *INDENT-ON* */

/* every op has its row */
G_STATIC_ASSERT (G_N_ELEMENTS (cbi_ops) == CBI_OP_LAST + 1);

const CbiOpInfo *
cbi_op_info (CbiOpType op)
{
  g_return_val_if_fail ((guint) op < G_N_ELEMENTS (cbi_ops), NULL);
  return &cbi_ops[op];
}

const gchar *
cbi_op_type_name (CbiOpType op)
{
  return (guint) op < G_N_ELEMENTS (cbi_ops) ? cbi_ops[op].name : "unknown";
}

gboolean
cbi_op_is_binary (CbiOpType op)
{
  return cbi_op_info (op)->kind == CBI_OP_KIND_BINARY;
}

gboolean
cbi_op_is_eltwise (CbiOpType op)
{
  return cbi_op_info (op)->kind == CBI_OP_KIND_ELTWISE;
}

guint
cbi_graph_count_consumers (const CbiGraph * graph, gint index)
{
  guint i, j, count = 0;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i);
    for (j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] == index)
        count++;
  }
  return count;
}

const CbiNode *
cbi_graph_next_activation (const CbiGraph * graph, guint index)
{
  const CbiNode *n = cbi_graph_node (graph, index), *next;

  if (index + 1 >= graph->nodes->len)
    return NULL;
  next = cbi_graph_node (graph, index + 1);
  if (!cbi_op_is_eltwise (next->op) || next->inputs[0] != n->output
      || cbi_graph_count_consumers (graph, n->output) != 1
      || cbi_graph_is_output (graph, n->output))
    return NULL;
  return next;
}

const CbiNode *
cbi_graph_fused_activation (const CbiGraph * graph, guint index)
{
  const CbiNode *next = cbi_graph_next_activation (graph, index);
  CbiOpFuse fuse = cbi_op_info (cbi_graph_node (graph, index)->op)->fuse;

  if (next == NULL || fuse == CBI_OP_FUSE_NONE
      || (fuse == CBI_OP_FUSE_RELU && next->op != CBI_OP_RELU))
    return NULL;
  return next;
}

gboolean
cbi_graph_foreach_step (const CbiGraph * graph, CbiGraphStepFunc func,
    gpointer user_data, GError ** error)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *post = cbi_graph_fused_activation (graph, i);
    if (!func (cbi_graph_node (graph, i), post, user_data, error))
      return FALSE;
    if (post)
      i++;
  }
  return TRUE;
}

gboolean
cbi_graph_is_output (const CbiGraph * graph, gint t)
{
  guint i;

  for (i = 0; i < graph->n_outputs; i++)
    if (graph->outputs[i] == t)
      return TRUE;
  return FALSE;
}

gint64
cbi_shape_count (const CbiShape * shape)
{
  gint64 count = 1;
  gint d;

  for (d = 0; d < shape->n_dims; d++)
    count *= shape->dims[d];
  return count;
}

gboolean
cbi_shape_equal (const CbiShape * a, const CbiShape * b)
{
  return a->n_dims == b->n_dims
      && memcmp (a->dims, b->dims, a->n_dims * sizeof (gint64)) == 0;
}

gchar *
cbi_shape_to_string (const CbiShape * shape)
{
  GString *s = g_string_new (NULL);
  gint d;

  for (d = 0; d < shape->n_dims; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "x" : "",
        shape->dims[d]);
  if (shape->n_dims == 0)
    g_string_append (s, "scalar");
  return g_string_free (s, FALSE);
}

/* *INDENT-OFF* */
static gboolean cbi_shape_fail (GError ** error, const CbiNode * n,
    const gchar * format, ...) G_GNUC_PRINTF (3, 4);
/* *INDENT-ON* */

/* A shape error, prefixed with the node and its op. */
static gboolean
cbi_shape_fail (GError ** error, const CbiNode * n, const gchar * format, ...)
{
  va_list args;
  gchar *msg;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s (%s): %s",
      n->name, cbi_op_type_name (n->op), msg);
  g_free (msg);
  return FALSE;
}

static void
cbi_shape_set (CbiShape * s, gint n_dims, const gint64 * dims)
{
  s->n_dims = n_dims;
  memcpy (s->dims, dims, n_dims * sizeof (gint64));
}

/* Whether @b broadcasts to @a as ONNX's unidirectional broadcasting does
 * (aligned from the right, every dimension of @b 1 or @a's). */
static gboolean
cbi_shape_broadcasts_to (const CbiShape * b, const CbiShape * a)
{
  gint d;

  if (b->n_dims > a->n_dims)
    return FALSE;
  for (d = 1; d <= b->n_dims; d++) {
    gint64 bs = b->dims[b->n_dims - d], as = a->dims[a->n_dims - d];
    if (bs != 1 && bs != as)
      return FALSE;
  }
  return TRUE;
}

/* The window node @n slides: a pooling's kernel, else its weights'. */
static const gint64 *
cbi_node_kernel (const CbiGraph * graph, const CbiNode * n)
{
  if (n->op == CBI_OP_CONV || n->op == CBI_OP_CONV_TRANSPOSE)
    return &cbi_graph_tensor (graph, n->inputs[1])->dims[2];
  return n->conv.kernel;
}

static void
cbi_node_pads_with (const CbiNode * n, const gint64 * kernel,
    const CbiShape * input, gint64 * pads)
{
  const CbiConvAttrs *a = &n->conv;
  gint d;

  memcpy (pads, a->pads, sizeof (a->pads));
  for (d = 0; d < 2; d++) {
    const gint64 in = input->dims[2 + d], s = MAX (a->strides[d], 1);
    const gint64 span = a->dilations[d] * (kernel[d] - 1) + 1;
    gint64 out, total;

    if (a->auto_pad != CBI_AUTO_PAD_NOTSET) {
      out = (in + s - 1) / s;
      total = MAX ((out - 1) * s + span - in, 0);
      pads[d] = a->auto_pad == CBI_AUTO_PAD_SAME_UPPER ? total / 2 :
          total - total / 2;
      pads[d + 2] = total - pads[d];
    }
    if (a->ceil_mode) {
      const gint64 extent = in + pads[d] + pads[d + 2];
      if (extent < span)
        continue;               /* no window fits: shape inference says so */
      out = (extent - span + s - 1) / s + 1;
      /* ONNX drops a last window that starts in the end padding */
      if ((out - 1) * s >= in + pads[d])
        out--;
      pads[d + 2] += MAX ((out - 1) * s + span - extent, 0);
    }
  }
}

void
cbi_node_pads (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * input, gint64 * pads)
{
  cbi_node_pads_with (n, cbi_node_kernel (graph, n), input, pads);
}

/* Output height and width of a window of @kernel (a convolution's, or
 * @what else) sliding over @in. */
static gboolean
cbi_infer_window (const CbiNode * n, const gchar * what,
    const gint64 kernel[2], const CbiShape * in_shape, gint64 * out,
    GError ** error)
{
  const CbiConvAttrs *a = &n->conv;
  const gint64 *in = in_shape->dims;
  gint64 pads[4];
  gint d;

  cbi_node_pads_with (n, kernel, in_shape, pads);
  for (d = 0; d < 2; d++) {
    gint64 extent = in[2 + d] + pads[d] + pads[d + 2];
    gint64 span = a->dilations[d] * (kernel[d] - 1) + 1;
    if (a->strides[d] < 1 || kernel[d] < 1 || extent < span)
      return cbi_shape_fail (error, n, "a %s of %" G_GINT64_FORMAT
          " does not fit an input of %" G_GINT64_FORMAT " (padded)", what,
          span, extent);
    out[2 + d] = (extent - span) / a->strides[d] + 1;
  }
  return TRUE;
}

static gboolean
cbi_infer_conv (const CbiGraph * graph, const CbiNode * n, CbiShape * shapes,
    GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]].dims;
  CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  gint64 *y = shapes[n->output].dims;
  const CbiConvAttrs *a = &n->conv;

  if (w->n_dims != 4 || w->data == NULL || a->group < 1
      || x[1] != w->dims[1] * a->group || w->dims[0] % a->group != 0)
    return cbi_shape_fail (error, n, "input has %" G_GINT64_FORMAT
        " channels, weights expect %" G_GINT64_FORMAT " x group %"
        G_GINT64_FORMAT, x[1], w->n_dims == 4 ? w->dims[1] : 0, a->group);
  y[0] = x[0];
  y[1] = w->dims[0];
  return cbi_infer_window (n, "kernel", &w->dims[2], &shapes[n->inputs[0]],
      y, error);
}

/* ConvTranspose: out = stride (in - 1) + output_padding + dilated kernel
 * - pads; weights are (in channels, out channels, h, w). */
static gboolean
cbi_infer_conv_transpose (const CbiGraph * graph, const CbiNode * n,
    CbiShape * shapes, GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]].dims;
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiConvAttrs *a = &n->conv;
  gint64 *y = shapes[n->output].dims;
  gint d;

  if (x[1] != w->dims[0])
    return cbi_shape_fail (error, n, "input has %" G_GINT64_FORMAT
        " channels, weights expect %" G_GINT64_FORMAT, x[1], w->dims[0]);
  y[0] = x[0];
  y[1] = w->dims[1];
  for (d = 0; d < 2; d++) {
    y[2 + d] = a->strides[d] * (x[2 + d] - 1) + a->output_padding[d]
        + a->dilations[d] * (w->dims[2 + d] - 1) + 1 - a->pads[d]
        - a->pads[d + 2];
    if (y[2 + d] < 1)
      return cbi_shape_fail (error, n, "the output would be empty");
  }
  return TRUE;
}

/* @axis of a tensor of rank @rank, counted from the end when negative;
 * -1 when out of range. */
static gint
cbi_axis (gint axis, gint rank)
{
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

static gboolean
cbi_infer_concat (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  CbiShape *y = &shapes[n->output];
  gint axis, d;
  guint i;

  *y = shapes[n->inputs[0]];
  axis = cbi_axis (n->axis, y->n_dims);
  if (axis < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        y->n_dims);
  y->dims[axis] = 0;
  for (i = 0; i < n->n_inputs; i++) {
    const CbiShape *x = &shapes[n->inputs[i]];
    for (d = 0; d < y->n_dims; d++)
      if (x->n_dims != y->n_dims || (d != axis && x->dims[d] != y->dims[d]))
        return cbi_shape_fail (error, n, "input %u does not match the "
            "first but along axis %d", i, axis);
    y->dims[axis] += x->dims[axis];
  }
  return TRUE;
}

/* Reshape (ONNX rules: 0 keeps the input's dimension, -1 takes what is
 * left) or, for mode 1, Flatten at @axis. */
static gboolean
cbi_infer_reshape (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  gint64 count = cbi_shape_count (x), known = 1;
  gint d, infer = -1;

  if (n->mode == 1) {
    gint axis = n->axis < 0 ? n->axis + x->n_dims : n->axis;
    if (axis < 0 || axis > x->n_dims)
      return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
          x->n_dims);
    y->n_dims = 2;
    y->dims[0] = 1;
    for (d = 0; d < axis; d++)
      y->dims[0] *= x->dims[d];
    y->dims[1] = y->dims[0] ? count / y->dims[0] : 0;
    return TRUE;
  }
  cbi_shape_set (y, n->n_ints, n->ints);
  for (d = 0; d < y->n_dims; d++) {
    if (y->dims[d] == 0 && d < x->n_dims)
      y->dims[d] = x->dims[d];
    if (y->dims[d] == -1 && infer < 0)
      infer = d;
    else if (y->dims[d] < 1)
      return cbi_shape_fail (error, n, "target dimension %d is %"
          G_GINT64_FORMAT, d, n->ints[d]);
    else
      known *= y->dims[d];
  }
  if (infer >= 0 && known > 0 && count % known == 0)
    y->dims[infer] = count / known;
  if (cbi_shape_count (y) != count || (infer >= 0 && known == 0)) {
    gchar *from = cbi_shape_to_string (x);
    cbi_shape_fail (error, n, "cannot reshape %s (%" G_GINT64_FORMAT
        " elements) to the target shape", from, count);
    g_free (from);
    return FALSE;
  }
  return TRUE;
}

void
cbi_gemm_weights (const CbiGraph * graph, const CbiNode * n, gint64 k,
    gint64 cols, gfloat * weights)
{
  const gfloat *b = cbi_graph_tensor (graph, n->inputs[1])->data;
  gint64 i, j;

  for (i = 0; i < k; i++)
    for (j = 0; j < cols; j++)
      weights[i * cols + j] = n->alpha * (n->ints[1] ? b[j * k + i] :
          b[i * cols + j]);
}

gboolean
cbi_gemm_has_bias (const CbiNode * n)
{
  return n->n_inputs > 2 && n->inputs[2] >= 0 && n->beta != 0.0f;
}

void
cbi_gemm_bias (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * shapes, gint64 rows, gint64 cols, gfloat * bias)
{
  const gfloat *c = cbi_graph_tensor (graph, n->inputs[2])->data;
  const CbiShape *cs = &shapes[n->inputs[2]];
  /* C broadcasts from the right: [N], [1, N], [M, 1], [M, N] or one */
  const gint64 c_rows = cs->n_dims == 2 ? cs->dims[0] : 1;
  const gint64 c_cols = cs->n_dims >= 1 ? cs->dims[cs->n_dims - 1] : 1;
  gint64 i, j;

  for (i = 0; i < rows; i++)
    for (j = 0; j < cols; j++)
      bias[i * cols + j] = n->beta * c[(c_rows == 1 ? 0 : i) * c_cols
          + (c_cols == 1 ? 0 : j)];
}

void
cbi_node_permutation (const CbiNode * n, const CbiShape * input,
    CbiShape * view, gint64 * perm)
{
  /* both DepthToSpace views go to [N, C', H, b, W, b] = [N, C', H b, W b] */
  static const gint64 dcr[6] = { 0, 3, 4, 1, 5, 2 };
  static const gint64 crd[6] = { 0, 1, 4, 2, 5, 3 };
  const gint64 *x = input->dims;
  gint d;

  if (n->op == CBI_OP_DEPTH_TO_SPACE) {
    const gint64 b = n->ints[0], c = x[1] / (b * b);
    const gint64 dcr_split[6] = { x[0], b, b, c, x[2], x[3] };
    const gint64 crd_split[6] = { x[0], c, b, b, x[2], x[3] };
    cbi_shape_set (view, 6, n->mode == 1 ? crd_split : dcr_split);
    memcpy (perm, n->mode == 1 ? crd : dcr, sizeof (dcr));
    return;
  }
  /* Transpose: no perm attribute means the axes reversed */
  *view = *input;
  for (d = 0; d < input->n_dims; d++)
    perm[d] = n->n_ints ? n->ints[d] : input->n_dims - 1 - d;
}

static gboolean
cbi_infer_transpose (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output], view;
  gint64 perm[CBI_MAX_DIMS];
  guint seen = 0;
  gint d;

  if (n->n_ints != x->n_dims && n->n_ints != 0)
    return cbi_shape_fail (error, n, "a permutation of %d axes for rank %d",
        n->n_ints, x->n_dims);
  cbi_node_permutation (n, x, &view, perm);
  y->n_dims = x->n_dims;
  for (d = 0; d < x->n_dims; d++) {
    gint64 p = perm[d];
    if (p < 0 || p >= x->n_dims || (seen & (1u << p)))
      return cbi_shape_fail (error, n, "perm is not a permutation");
    seen |= 1u << p;
    y->dims[d] = x->dims[p];
  }
  return TRUE;
}

/* Gemm: A [M, K] (or [K, M] with transA) times a constant B [K, N] (or
 * [N, K] with transB), plus a constant C that broadcasts to [M, N]. */
static gboolean
cbi_infer_gemm (const CbiGraph * graph, const CbiNode * n, CbiShape * shapes,
    GError ** error)
{
  const CbiShape *a = &shapes[n->inputs[0]];
  const CbiShape *b = &shapes[n->inputs[1]];
  CbiShape *y = &shapes[n->output];
  gint64 m, k, kb, cols;

  if (a->n_dims != 2 || b->n_dims != 2)
    return cbi_shape_fail (error, n, "A and B must be 2-D");
  m = a->dims[n->ints[0] ? 1 : 0];
  k = a->dims[n->ints[0] ? 0 : 1];
  kb = b->dims[n->ints[1] ? 1 : 0];
  cols = b->dims[n->ints[1] ? 0 : 1];
  if (k != kb)
    return cbi_shape_fail (error, n, "A has %" G_GINT64_FORMAT " columns, "
        "B %" G_GINT64_FORMAT " rows", k, kb);
  y->n_dims = 2;
  y->dims[0] = m;
  y->dims[1] = cols;
  if (n->n_inputs > 2 && n->inputs[2] >= 0
      && !cbi_shape_broadcasts_to (&shapes[n->inputs[2]], y))
    return cbi_shape_fail (error, n, "C does not broadcast to the output");
  return TRUE;
}

/* MatMul as numpy: [..., M, K] x [..., K, N], batch dimensions
 * broadcast. */
static gboolean
cbi_infer_matmul (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *a = &shapes[n->inputs[0]];
  const CbiShape *b = &shapes[n->inputs[1]];
  CbiShape *y = &shapes[n->output];
  gint rank = MAX (a->n_dims, b->n_dims), d;

  if (a->n_dims < 2 || b->n_dims < 2)
    return cbi_shape_fail (error, n, "1-D operands are not supported");
  if (a->dims[a->n_dims - 1] != b->dims[b->n_dims - 2])
    return cbi_shape_fail (error, n, "A has %" G_GINT64_FORMAT " columns, "
        "B %" G_GINT64_FORMAT " rows", a->dims[a->n_dims - 1],
        b->dims[b->n_dims - 2]);
  y->n_dims = rank;
  for (d = 0; d < rank - 2; d++) {
    gint da = d - (rank - a->n_dims), db = d - (rank - b->n_dims);
    gint64 sa = da >= 0 ? a->dims[da] : 1, sb = db >= 0 ? b->dims[db] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return cbi_shape_fail (error, n, "batch dimensions %" G_GINT64_FORMAT
          " and %" G_GINT64_FORMAT " do not broadcast", sa, sb);
    y->dims[d] = MAX (sa, sb);
  }
  y->dims[rank - 2] = a->dims[a->n_dims - 2];
  y->dims[rank - 1] = b->dims[b->n_dims - 1];
  return TRUE;
}

/* Which axes of a rank @rank input reduction node @n reduces, as bits;
 * 0 when one is out of range. */
static guint
cbi_reduce_axes (const CbiNode * n, gint rank)
{
  guint axes = 0;
  gint i;

  if (n->n_ints == 0)
    return (1u << rank) - 1;
  for (i = 0; i < n->n_ints; i++) {
    gint a = cbi_axis ((gint) n->ints[i], rank);
    if (a < 0)
      return 0;
    axes |= 1u << a;
  }
  return axes;
}

gboolean
cbi_node_reduce_view (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * r, gint64 * inner)
{
  guint axes = cbi_reduce_axes (n, input->n_dims);
  gint d, first = -1, last = -1;

  *outer = *r = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (axes & (1u << d)) {
      if (last >= 0 && last != d - 1)
        return FALSE;
      if (first < 0)
        first = d;
      last = d;
      *r *= input->dims[d];
    } else if (first < 0) {
      *outer *= input->dims[d];
    } else {
      *inner *= input->dims[d];
    }
  }
  return TRUE;
}

static gboolean
cbi_infer_reduce (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  guint axes = cbi_reduce_axes (n, x->n_dims);
  gint d;

  if (axes == 0)
    return cbi_shape_fail (error, n, "an axis is outside rank %d", x->n_dims);
  y->n_dims = 0;
  for (d = 0; d < x->n_dims; d++) {
    if (!(axes & (1u << d)))
      y->dims[y->n_dims++] = x->dims[d];
    else if (n->mode)
      y->dims[y->n_dims++] = 1;
  }
  return TRUE;
}

gint
cbi_node_reduce_op (const CbiNode * n)
{
  switch (n->op) {
    case CBI_OP_REDUCE_MEAN:
      return CBI_K_REDUCE_MEAN;
    case CBI_OP_REDUCE_SUM:
      return CBI_K_REDUCE_SUM;
    case CBI_OP_ARGMAX:
      return n->alpha == 1.0f ? CBI_K_REDUCE_ARGMAX_LAST : CBI_K_REDUCE_ARGMAX;
    case CBI_OP_REDUCE_MAX:
    default:
      return CBI_K_REDUCE_MAX;
  }
}

void
cbi_node_split_range (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * total, gint64 * start, gint64 * inner)
{
  gint axis = cbi_axis (n->axis, input->n_dims), d;
  gint64 dim = input->dims[axis], part, len;

  *outer = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (d < axis)
      *outer *= input->dims[d];
    else if (d > axis)
      *inner *= input->dims[d];
  }
  if (n->mode == 1) {
    part = (dim + n->ints[1] - 1) / n->ints[1];
    *start = MIN (n->ints[0] * part, dim);
    len = MIN (part, dim - *start);
  } else {
    *start = n->ints[0];
    len = n->ints[1];
  }
  *total = dim * *inner;
  *start *= *inner;
  *inner *= len;
}

static gboolean
cbi_infer_split (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  gint axis = cbi_axis (n->axis, x->n_dims);
  gint64 dim, len;

  if (axis < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        x->n_dims);
  dim = x->dims[axis];
  if (n->mode == 1) {
    gint64 part = (dim + n->ints[1] - 1) / n->ints[1];
    len = MIN (part, dim - MIN (n->ints[0] * part, dim));
  } else {
    len = n->ints[1];
    if (n->ints[0] + len > dim || (n->ints[2] && n->ints[0] + len != dim))
      return cbi_shape_fail (error, n, "the split sizes do not add up to "
          "the %" G_GINT64_FORMAT " of axis %d", dim, axis);
  }
  if (len < 1)
    return cbi_shape_fail (error, n, "an empty part of axis %d", axis);
  *y = *x;
  y->dims[axis] = len;
  return TRUE;
}

void
cbi_node_layer_norm_view (const CbiNode * n, const CbiShape * input,
    gint64 * rows, gint64 * inner)
{
  gint axis = cbi_axis (n->axis, input->n_dims), d;

  *rows = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (d < axis)
      *rows *= input->dims[d];
    else
      *inner *= input->dims[d];
  }
}

/* LayerNormalization: a scale (and bias) of one value per position of a
 * row. */
static gboolean
cbi_infer_layer_norm (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  gint64 rows, inner;
  guint i;

  if (cbi_axis (n->axis, x->n_dims) < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        x->n_dims);
  cbi_node_layer_norm_view (n, x, &rows, &inner);
  for (i = 1; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && cbi_shape_count (&shapes[n->inputs[i]]) != inner)
      return cbi_shape_fail (error, n, "input %u does not have the %"
          G_GINT64_FORMAT " values of a normalised row", i, inner);
  shapes[n->output] = *x;
  return TRUE;
}

static gboolean
cbi_infer_node (const CbiGraph * graph, const CbiNode * n, CbiShape * shapes,
    GError ** error)
{
  const CbiShape *xs = &shapes[n->inputs[0]];
  const gint64 *x = xs->dims;
  CbiShape *ys = &shapes[n->output];
  gint64 *y = ys->dims;

  if (cbi_op_info (n->op)->spatial) {
    if (xs->n_dims != 4)
      return cbi_shape_fail (error, n, "takes a 4-D (NCHW) input, not %d-D",
          xs->n_dims);
    ys->n_dims = 4;
  }

  switch (n->op) {
    case CBI_OP_CONV:
      return cbi_infer_conv (graph, n, shapes, error);
    case CBI_OP_CONV_TRANSPOSE:
      return cbi_infer_conv_transpose (graph, n, shapes, error);
    case CBI_OP_ADD:
    case CBI_OP_SUB:
    case CBI_OP_MUL:
    case CBI_OP_DIV:
    case CBI_OP_PRELU:
    case CBI_OP_MIN:
    case CBI_OP_MAX:
    case CBI_OP_POW_BINARY:
      if (!cbi_shape_broadcasts_to (&shapes[n->inputs[1]], xs))
        return cbi_shape_fail (error, n, "its second input does not "
            "broadcast to the first's shape");
      *ys = *xs;
      return TRUE;
    case CBI_OP_PAD:{
      const gint64 *p = n->conv.pads;
      /* a reflection needs something to reflect */
      if (n->mode == CBI_PAD_FILL_REFLECT && (MAX (p[0], p[2]) >= x[2]
              || MAX (p[1], p[3]) >= x[3]))
        return cbi_shape_fail (error, n, "reflecting %" G_GINT64_FORMAT "x%"
            G_GINT64_FORMAT " by more than its size", x[3], x[2]);
      y[0] = x[0];
      y[1] = x[1];
      y[2] = x[2] + p[0] + p[2];
      y[3] = x[3] + p[1] + p[3];
      return TRUE;
    }
    case CBI_OP_MAX_POOL:
    case CBI_OP_AVERAGE_POOL:
      y[0] = x[0];
      y[1] = x[1];
      return cbi_infer_window (n, "window", n->conv.kernel, xs, y, error);
    case CBI_OP_GLOBAL_AVERAGE_POOL:
      y[0] = x[0];
      y[1] = x[1];
      y[2] = y[3] = 1;
      return TRUE;
    case CBI_OP_RESIZE:
      *ys = *xs;
      y[2] = (gint64) (x[2] * n->alpha);
      y[3] = (gint64) (x[3] * n->beta);
      if (y[2] < 1 || y[3] < 1)
        return cbi_shape_fail (error, n, "the output would be empty");
      /* the backends map coordinates with the sizes' ratio: ONNX uses the
       * scale, which differs when the size was rounded */
      if ((gdouble) y[2] != x[2] * (gdouble) n->alpha
          || (gdouble) y[3] != x[3] * (gdouble) n->beta)
        return cbi_shape_fail (error, n, "scales %g x %g do not give a whole "
            "output size from %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
            n->alpha, n->beta, x[2], x[3]);
      return TRUE;
    case CBI_OP_DEPTH_TO_SPACE:{
      gint64 b = n->ints[0];
      if (b < 1 || x[1] % (b * b) != 0)
        return cbi_shape_fail (error, n, "%" G_GINT64_FORMAT " channels do "
            "not split into blocks of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
            x[1], b, b);
      y[0] = x[0];
      y[1] = x[1] / (b * b);
      y[2] = x[2] * b;
      y[3] = x[3] * b;
      return TRUE;
    }
    case CBI_OP_CONCAT:
      return cbi_infer_concat (n, shapes, error);
    case CBI_OP_RESHAPE:
      return cbi_infer_reshape (n, shapes, error);
    case CBI_OP_TRANSPOSE:
      return cbi_infer_transpose (n, shapes, error);
    case CBI_OP_GEMM:
      return cbi_infer_gemm (graph, n, shapes, error);
    case CBI_OP_MATMUL:
      return cbi_infer_matmul (n, shapes, error);
    case CBI_OP_SOFTMAX:
      if ((n->mode == 1 && (n->axis < -xs->n_dims || n->axis > xs->n_dims))
          || (n->mode == 0 && cbi_axis (n->axis, xs->n_dims) < 0))
        return cbi_shape_fail (error, n, "axis %d is outside rank %d",
            n->axis, xs->n_dims);
      *ys = *xs;
      return TRUE;
    case CBI_OP_SLICE:
    case CBI_OP_GATHER:
    case CBI_OP_EXPAND:
      /* cbi_graph_resolve_node() worked the output's shape out */
      cbi_shape_set (ys, n->n_ints, n->ints);
      return TRUE;
    case CBI_OP_REDUCE_MEAN:
    case CBI_OP_REDUCE_SUM:
    case CBI_OP_REDUCE_MAX:
      return cbi_infer_reduce (n, shapes, error);
    case CBI_OP_LAYER_NORM:
      return cbi_infer_layer_norm (n, shapes, error);
    case CBI_OP_ARGMAX:
      return cbi_infer_reduce (n, shapes, error);
    case CBI_OP_SPLIT:
      return cbi_infer_split (n, shapes, error);
    case CBI_OP_WHERE:
      if (!cbi_shape_broadcasts_to (&shapes[n->inputs[1]], xs)
          || !cbi_shape_broadcasts_to (&shapes[n->inputs[2]], xs))
        return cbi_shape_fail (error, n, "the condition or the other input "
            "does not broadcast to the activation's shape");
      *ys = *xs;
      return TRUE;
    case CBI_OP_INSTANCE_NORM:
    default:
      /* element-wise */
      *ys = *xs;
      return TRUE;
  }
}

void
cbi_graph_frame_shape (const CbiGraph * graph, gint64 batch, gint64 height,
    gint64 width, CbiShape * shape)
{
  const CbiTensorInfo *in = cbi_graph_tensor (graph, graph->input);

  shape->n_dims = 4;
  shape->dims[0] = batch;
  shape->dims[1] = in->n_dims == 4 ? in->dims[1] : 3;
  shape->dims[2] = height;
  shape->dims[3] = width;
}

/* Plan-time shape values: what a CBI_OP_SHAPE_VALUE node computed, or an
 * int64 constant, put into the node it feeds. */

/* Up to CBI_MAX_GATHER values of one shape value */
typedef struct
{
  CbiShape shape;
  gint count;                   /* -1: the input is absent */
  gint64 v[CBI_MAX_GATHER];
  gdouble f[CBI_MAX_GATHER];
} CbiValue;

/* Input @i of @n, a shape value of at most @max values, into @v. */
static gboolean
cbi_graph_value (const CbiGraph * graph, CbiShapeRun * run,
    const CbiNode * n, guint i, gint max, CbiValue * v, GError ** error)
{
  const CbiTensorInfo *t;
  gint64 count, k;

  v->count = -1;
  if (i >= n->n_inputs || n->inputs[i] < 0)
    return TRUE;
  t = cbi_graph_tensor (graph, n->inputs[i]);
  if (t->ints) {
    cbi_shape_set (&v->shape, t->n_dims, t->dims);
    count = cbi_shape_count (&v->shape);
    if (count > max)
      return cbi_shape_fail (error, n, "input %u has more than %d values",
          i, max);
    for (k = 0; k < count; k++) {
      v->v[k] = t->ints[k];
      v->f[k] = (gdouble) t->ints[k];
    }
  } else if (t->dtype != CBI_DTYPE_INT64 || run == NULL
      || !graph->shape_eval->read (run, n->inputs[i], max, v->v, v->f,
          &v->shape)) {
    return cbi_shape_fail (error, n, "input %u (%s) is not a shape value "
        "of at most %d values", i, t->name, max);
  }
  v->count = (gint) cbi_shape_count (&v->shape);
  return TRUE;
}

/* The row-major strides of @x, in elements. */
static void
cbi_graph_strides (const CbiShape * x, gint64 * strides)
{
  gint d;

  for (d = x->n_dims - 1; d >= 0; d--)
    strides[d] = d == x->n_dims - 1 ? 1 : strides[d + 1] * x->dims[d + 1];
}

gint64
cbi_slice_range (gint64 start, gint64 end, gint64 step, gint64 len,
    gint64 * first)
{
  /* moved into range before any arithmetic: the bounds may be huge */
  if (start < 0)
    start = start < -len ? 0 : start + len;
  if (end < 0)
    end = end < -len ? -1 : end + len;
  if (step > 0) {
    *first = CLAMP (start, 0, len);
    end = CLAMP (end, 0, len);
    return end > *first ? (end - *first - 1) / step + 1 : 0;
  }
  *first = CLAMP (start, 0, len - 1);
  end = CLAMP (end, -1, len - 1);
  return *first > end ? (*first - end - 1) / -step + 1 : 0;
}

/* Slice: bounds clamped as ONNX does, negative steps walking backwards. */
static gboolean
cbi_resolve_slice (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiValue starts, ends, axes, steps;
  gint64 stride[CBI_MAX_DIMS], first[CBI_MAX_DIMS], step[CBI_MAX_DIMS];
  CbiCopyView *view = &n->view;
  const gint r = x->n_dims;
  guint seen = 0;
  gint i, d;

  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &starts, error)
      || !cbi_graph_value (graph, run, n, 2, CBI_MAX_DIMS, &ends, error)
      || !cbi_graph_value (graph, run, n, 3, CBI_MAX_DIMS, &axes, error)
      || !cbi_graph_value (graph, run, n, 4, CBI_MAX_DIMS, &steps, error))
    return FALSE;
  if (starts.count < 0 || ends.count != starts.count
      || (axes.count >= 0 && axes.count != starts.count)
      || (steps.count >= 0 && steps.count != starts.count))
    return cbi_shape_fail (error, n, "starts, ends, axes and steps differ "
        "in length");
  cbi_graph_strides (x, stride);
  view->n_dims = r;
  for (d = 0; d < r; d++) {
    first[d] = 0;
    step[d] = 1;
    view->dims[d] = x->dims[d];
  }
  for (i = 0; i < starts.count; i++) {
    gint64 a = axes.count >= 0 ? axes.v[i] : i, s = starts.v[i];
    gint64 e = ends.v[i], st = steps.count >= 0 ? steps.v[i] : 1;
    if (a < -r || a >= r)
      return cbi_shape_fail (error, n, "axis %" G_GINT64_FORMAT " is "
          "outside rank %d", a, r);
    d = (gint) (a < 0 ? a + r : a);
    if ((seen & (1u << d)) || st == 0 || st == G_MININT64)
      return cbi_shape_fail (error, n, "axis %d given twice or a step of 0", d);
    seen |= 1u << d;
    view->dims[d] = cbi_slice_range (s, e, st, x->dims[d], &first[d]);
    step[d] = st;
  }
  view->offset = 0;
  for (d = 0; d < r; d++) {
    if (view->dims[d] < 1)
      return cbi_shape_fail (error, n, "the output would be empty along "
          "axis %d", d);
    view->strides[d] = stride[d] * step[d];
    view->offset += first[d] * stride[d];
  }
  return TRUE;
}

/* Gather of constant indices: one index drops the axis, a list walks it
 * through the view's index. */
static gboolean
cbi_resolve_gather (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiCopyView *view = &n->view;
  gint64 stride[CBI_MAX_DIMS];
  gint axis = cbi_axis (n->axis, x->n_dims), d, k, o = 0;
  CbiValue ind;

  if (axis < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        x->n_dims);
  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_GATHER, &ind, error))
    return FALSE;
  if (ind.count < 1 || x->n_dims - 1 + ind.shape.n_dims > CBI_MAX_DIMS)
    return cbi_shape_fail (error, n, "1 to %d indices giving at most %d "
        "dimensions are supported", CBI_MAX_GATHER, CBI_MAX_DIMS);
  for (k = 0; k < ind.count; k++) {
    if (ind.v[k] < -x->dims[axis] || ind.v[k] >= x->dims[axis])
      return cbi_shape_fail (error, n, "index %" G_GINT64_FORMAT " is "
          "outside dimension %d of %" G_GINT64_FORMAT, ind.v[k], axis,
          x->dims[axis]);
    if (ind.v[k] < 0)
      ind.v[k] += x->dims[axis];
  }
  cbi_graph_strides (x, stride);
  view->offset = 0;
  view->axis = -1;
  view->n_dims = 0;
  for (d = 0; d < x->n_dims; d++) {
    if (d == axis && ind.shape.n_dims == 0) {
      view->offset = ind.v[0] * stride[d];
      continue;
    }
    view->dims[view->n_dims] = d == axis ? ind.count : x->dims[d];
    view->strides[view->n_dims++] = stride[d];
  }
  if (ind.shape.n_dims > 0) {
    view->axis = axis;
    view->n_index = ind.count;
    memcpy (view->index, ind.v, ind.count * sizeof (gint64));
  }
  /* the output: the indices' dimensions in place of the axis */
  for (d = 0; d < axis; d++)
    n->ints[o++] = x->dims[d];
  for (d = 0; d < ind.shape.n_dims; d++)
    n->ints[o++] = ind.shape.dims[d];
  for (d = axis + 1; d < x->n_dims; d++)
    n->ints[o++] = x->dims[d];
  n->n_ints = o;
  return TRUE;
}

/* Expand: the input broadcast with the shape given (numpy rules both
 * ways); a repeated dimension reads with a stride of 0. */
static gboolean
cbi_resolve_expand (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiCopyView *view = &n->view;
  gint64 stride[CBI_MAX_DIMS];
  CbiValue shape;
  gint r, d;

  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &shape, error))
    return FALSE;
  if (shape.count < 0 || shape.shape.n_dims > 1)
    return cbi_shape_fail (error, n, "the shape must be a list");
  r = MAX (x->n_dims, shape.count);
  cbi_graph_strides (x, stride);
  view->n_dims = r;
  view->offset = 0;
  view->axis = -1;
  for (d = 0; d < r; d++) {
    gint xd = d - (r - x->n_dims), sd = d - (r - shape.count);
    gint64 a = xd >= 0 ? x->dims[xd] : 1, b = sd >= 0 ? shape.v[sd] : 1;
    if (a != b && a != 1 && b != 1)
      return cbi_shape_fail (error, n, "%" G_GINT64_FORMAT " does not "
          "broadcast to %" G_GINT64_FORMAT " in dimension %d", a, b, d);
    view->dims[d] = a == 1 ? b : a;
    if (view->dims[d] < 1)
      return cbi_shape_fail (error, n, "the output would be empty");
    view->strides[d] = xd >= 0 && a != 1 ? stride[xd] : 0;
  }
  return TRUE;
}

/* Squeeze and Unsqueeze: the output's shape, which a Reshape then
 * gives. */
static gboolean
cbi_resolve_squeeze (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  const gboolean unsqueeze = n->op == CBI_OP_UNSQUEEZE;
  gboolean marked[CBI_MAX_DIMS] = { FALSE, };
  CbiValue axes;
  gint rank, a, d, k = 0, o = 0;

  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &axes, error))
    return FALSE;
  if (axes.count < 0 && n->mode == 0) {
    axes.count = n->n_ints;
    memcpy (axes.v, n->ints, n->n_ints * sizeof (gint64));
  }
  rank = unsqueeze ? x->n_dims + MAX (axes.count, 0) : x->n_dims;
  if (rank > CBI_MAX_DIMS)
    return cbi_shape_fail (error, n, "the output would have %d dimensions",
        rank);
  for (a = 0; a < axes.count; a++) {
    gint axis;
    if (axes.v[a] < -rank || axes.v[a] >= rank)
      return cbi_shape_fail (error, n, "axis %" G_GINT64_FORMAT " is "
          "outside rank %d", axes.v[a], rank);
    axis = (gint) (axes.v[a] < 0 ? axes.v[a] + rank : axes.v[a]);
    if (marked[axis] || (!unsqueeze && x->dims[axis] != 1))
      return cbi_shape_fail (error, n, "axis %d is given twice or is not "
          "1", axis);
    marked[axis] = TRUE;
  }
  for (d = 0; d < rank; d++) {
    if (unsqueeze)
      n->ints[o++] = marked[d] ? 1 : x->dims[k++];
    else if (!(axes.count < 0 ? x->dims[d] == 1 : marked[d]))
      n->ints[o++] = x->dims[d];
  }
  n->n_ints = o;
  n->op = CBI_OP_RESHAPE;
  n->mode = 0;
  return TRUE;
}

/* Resize's scales, or its sizes as scales when they are whole multiples
 * of the planned input's (the backends map coordinates with the ratio). */
static gboolean
cbi_resolve_resize (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiValue scales, sizes;
  gint d;

  if (!cbi_graph_value (graph, run, n, 1, 4, &scales, error)
      || !cbi_graph_value (graph, run, n, 2, 4, &sizes, error))
    return FALSE;
  if (x->n_dims != 4)
    return cbi_shape_fail (error, n, "takes a 4-D (NCHW) input, not %d-D",
        x->n_dims);
  if (scales.count == 4) {
    if (scales.f[0] != 1.0 || scales.f[1] != 1.0 || !(scales.f[2] > 0.0)
        || !(scales.f[3] > 0.0) || (n->mode == CBI_RESIZE_NEAREST
            && (scales.f[2] != (gint) scales.f[2]
                || scales.f[3] != (gint) scales.f[3])))
      return cbi_shape_fail (error, n, "scales %g, %g, %g, %g: only (1, 1, "
          "h, w), integers for nearest, are supported", scales.f[0],
          scales.f[1], scales.f[2], scales.f[3]);
    n->alpha = (gfloat) scales.f[2];
    n->beta = (gfloat) scales.f[3];
    return TRUE;
  }
  if (sizes.count != 4 || sizes.v[0] != x->dims[0]
      || sizes.v[1] != x->dims[1])
    return cbi_shape_fail (error, n, "its sizes must be 4 values keeping N "
        "and C");
  for (d = 2; d < 4; d++)
    if (sizes.v[d] < 1 || sizes.v[d] % x->dims[d] != 0)
      return cbi_shape_fail (error, n, "sizes %" G_GINT64_FORMAT "x%"
          G_GINT64_FORMAT " are not whole multiples of the planned input's "
          "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " (only such sizes map to "
          "the scales the backends run)", sizes.v[3], sizes.v[2], x->dims[3],
          x->dims[2]);
  n->alpha = (gfloat) (sizes.v[2] / x->dims[2]);
  n->beta = (gfloat) (sizes.v[3] / x->dims[3]);
  return TRUE;
}

/* Puts the shape values node @n reads into it (a copy, for this plan)
 * and drops those inputs: backends see float tensors only. */
static gboolean
cbi_graph_resolve_node (const CbiGraph * graph, CbiShapeRun * run,
    CbiNode * n, const CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  gboolean ok = TRUE;
  CbiValue v;
  guint i;

  switch (n->op) {
    case CBI_OP_RESHAPE:
      if (n->n_inputs < 2 || n->mode == 1)
        return TRUE;
      ok = cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &v, error);
      if (ok && (v.count < 0 || v.shape.n_dims != 1))
        ok = cbi_shape_fail (error, n, "the shape must be a list");
      if (ok) {
        n->n_ints = v.count;
        memcpy (n->ints, v.v, v.count * sizeof (gint64));
      }
      break;
    case CBI_OP_RESIZE:
      if (n->n_inputs < 2)
        return TRUE;
      ok = cbi_resolve_resize (graph, run, n, x, error);
      break;
    case CBI_OP_PAD:
      if (n->n_inputs < 2)
        return TRUE;
      ok = cbi_graph_value (graph, run, n, 1, 8, &v, error);
      /* [N, C, H, W] begins, then ends: as the importer takes them */
      if (ok && (v.count != 8 || v.v[0] || v.v[1] || v.v[4] || v.v[5]
              || v.v[2] < 0 || v.v[3] < 0 || v.v[6] < 0 || v.v[7] < 0))
        ok = cbi_shape_fail (error, n, "only non-negative pads of height "
            "and width are supported");
      if (ok) {
        n->conv.pads[0] = v.v[2];
        n->conv.pads[1] = v.v[3];
        n->conv.pads[2] = v.v[6];
        n->conv.pads[3] = v.v[7];
      }
      break;
    case CBI_OP_SLICE:
      ok = cbi_resolve_slice (graph, run, n, x, error);
      break;
    case CBI_OP_GATHER:
      ok = cbi_resolve_gather (graph, run, n, x, error);
      break;
    case CBI_OP_EXPAND:
      ok = cbi_resolve_expand (graph, run, n, x, error);
      break;
    case CBI_OP_SQUEEZE:
    case CBI_OP_UNSQUEEZE:
      ok = cbi_resolve_squeeze (graph, run, n, x, error);
      break;
    default:
      return TRUE;
  }
  if (n->op == CBI_OP_SLICE || n->op == CBI_OP_EXPAND) {
    n->view.axis = -1;
    n->n_ints = n->view.n_dims;
    memcpy (n->ints, n->view.dims, n->view.n_dims * sizeof (gint64));
  }
  for (i = 1; i < CBI_MAX_NODE_INPUTS; i++)
    n->inputs[i] = -1;
  n->n_inputs = 1;
  return ok;
}

/* Infers each node's shape, computing shape values on the way; with
 * @out, appends the nodes backends plan to it. */
static gboolean
cbi_graph_resolve (const CbiGraph * graph, CbiShape * shapes, CbiGraph * out,
    GError ** error)
{
  CbiShapeEval *eval = graph->shape_eval;
  CbiShapeRun *run = eval ? eval->begin (eval, graph) : NULL;
  gboolean ok = TRUE;
  guint i;

  for (i = 0; ok && i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    CbiNode copy;
    if (n->op == CBI_OP_SHAPE_VALUE) {
      ok = run ? eval->eval (run, n, shapes, error) :
          cbi_shape_fail (error, n, "the graph has no shape evaluator");
      if (eval)
        eval->n_evals++;
      continue;
    }
    copy = *n;
    ok = cbi_graph_resolve_node (graph, run, &copy, shapes, error)
        && cbi_infer_node (graph, &copy, shapes, error);
    if (ok && out) {
      copy.name = g_strdup (copy.name);
      g_array_append_val (out->nodes, copy);
    }
  }
  if (run)
    eval->end (run);
  return ok;
}


/* Shape inference, and with @out, the nodes backends plan appended to it
 * (cbi_graph_specialise()). */
static gboolean
cbi_graph_plan_shapes (const CbiGraph * graph, const CbiShape * input,
    CbiShape * shapes, CbiGraph * out, GError ** error)
{
  const CbiTensorInfo *in = cbi_graph_tensor (graph, graph->input);
  guint i;
  gint d;

  if (input->n_dims != in->n_dims) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "input %s has %d "
        "dimensions, not %d", in->name, in->n_dims, input->n_dims);
    return FALSE;
  }
  for (d = 0; d < in->n_dims; d++) {
    if (input->dims[d] < 1 || (in->dims[d] > 0 && d > 0
            && in->dims[d] != input->dims[d])) {
      gchar *given = cbi_shape_to_string (input);
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "input %s cannot take "
          "a tensor of %s: its dimension %d is %" G_GINT64_FORMAT, in->name,
          given, d, in->dims[d]);
      g_free (given);
      return FALSE;
    }
  }
  for (i = 0; i < graph->tensors->len; i++) {
    const CbiTensorInfo *t = cbi_graph_tensor (graph, i);
    if (t->data)
      cbi_shape_set (&shapes[i], t->n_dims, t->dims);
  }
  shapes[graph->input] = *input;
  return cbi_graph_resolve (graph, shapes, out, error);
}

gboolean
cbi_graph_infer_shapes (const CbiGraph * graph, const CbiShape * input,
    CbiShape * shapes, GError ** error)
{
  return cbi_graph_plan_shapes (graph, input, shapes, NULL, error);
}

CbiGraph *
cbi_graph_specialise (const CbiGraph * graph, const CbiShape * input,
    CbiShape * shapes, GError ** error)
{
  CbiGraph *out = g_new0 (CbiGraph, 1);

  out->tensors = g_array_ref (graph->tensors);
  out->nodes = g_array_new (FALSE, TRUE, sizeof (CbiNode));
  g_array_set_clear_func (out->nodes, cbi_node_clear);
  out->input = graph->input;
  memcpy (out->outputs, graph->outputs, sizeof (out->outputs));
  out->n_outputs = graph->n_outputs;
  if (!cbi_graph_plan_shapes (graph, input, shapes, out, error))
    g_clear_pointer (&out, cbi_graph_free);
  return out;
}
