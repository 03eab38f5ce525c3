/* cudabatchinfer: model graph (the engine's IR)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "graph/graph-private.h"
#include "cbitypes.h"
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

void
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
  /* a specialised graph shares the tensors' names and data
   * (cbi_graph_specialise ()): its array of them frees neither */
  g_array_unref (graph->tensors);
  g_array_unref (graph->nodes);
  if (graph->shape_eval)
    graph->shape_eval->free (graph->shape_eval);
  if (graph->plan_values)
    g_ptr_array_unref (graph->plan_values);
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
  /* only from cbi_graph_fuse_affine (): a product and a sum by scalars */
  [CBI_OP_LINEAR] = {"Linear", CBI_OP_KIND_ELTWISE, CBI_K_LINEAR, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_LSTM] = {"LSTM", CBI_OP_KIND_RECURRENT, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_GRU] = {"GRU", CBI_OP_KIND_RECURRENT, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_RNN] = {"RNN", CBI_OP_KIND_RECURRENT, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_SWISH] = {"Swish", CBI_OP_KIND_ELTWISE, CBI_K_SWISH, -1, FALSE, CBI_OP_FUSE_NONE, -1},
  [CBI_OP_REMOTE] = {"Remote", CBI_OP_KIND_REMOTE, -1, -1, FALSE, CBI_OP_FUSE_NONE, -1},
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

const gchar *
cbi_eltwise_step_name (const CbiEltwiseStep * step)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cbi_ops); i++)
    if (cbi_ops[i].kind == CBI_OP_KIND_ELTWISE
        && cbi_ops[i].eltwise == step->op)
      return cbi_ops[i].name;
  return "unknown";
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
cbi_node_eltwise_steps (const CbiNode * n,
    CbiEltwiseStep steps[CBI_MAX_ELTWISE_STEPS])
{
  steps[0].op = cbi_op_info (n->op)->eltwise;
  steps[0].alpha = n->alpha;
  steps[0].beta = n->beta;
  memcpy (steps + 1, n->then, n->n_then * sizeof (CbiEltwiseStep));
  return 1 + n->n_then;
}

gint
cbi_graph_producer (const CbiGraph * graph, gint t)
{
  guint i;

  for (i = 0; t >= 0 && i < graph->nodes->len; i++)
    if (cbi_graph_node (graph, i)->output == t)
      return i;
  return -1;
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

/* A shape error, prefixed with the node and its op. */
gboolean
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

void
cbi_shape_set (CbiShape * s, gint n_dims, const gint64 * dims)
{
  s->n_dims = n_dims;
  memcpy (s->dims, dims, n_dims * sizeof (gint64));
}

gboolean
cbi_shape_broadcast (const CbiShape * a, const CbiShape * b, CbiShape * out)
{
  gint rank = MAX (a->n_dims, b->n_dims), d;

  out->n_dims = rank;
  for (d = 1; d <= rank; d++) {
    gint64 as = d <= a->n_dims ? a->dims[a->n_dims - d] : 1;
    gint64 bs = d <= b->n_dims ? b->dims[b->n_dims - d] : 1;
    if (as != bs && as != 1 && bs != 1)
      return FALSE;
    out->dims[rank - d] = as == 1 ? bs : as;
  }
  return TRUE;
}

/* Whether @b broadcasts to @a as ONNX's unidirectional broadcasting does
 * (aligned from the right, every dimension of @b 1 or @a's). */
gboolean
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
