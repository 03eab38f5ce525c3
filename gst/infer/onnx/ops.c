/* cudabatchinfer: ONNX model import, the op table
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One row per ONNX op the importer translates: the engine's op, how many
 * inputs it reads, and the functions that read its attributes and check
 * its inputs (nodes.c, nodes-eltwise.c), or the one that adds its nodes
 * itself. cbi_onnx_add_node() looks the row up and does what every op
 * shares: the checks of input types, an activation first, the node
 * added to the graph with what its read function kept.
 */
#include "onnx/onnx-private.h"

#include <string.h>

/**
 * CbiOnnxInputs:
 * @CBI_ONNX_INPUTS_EXACTLY: the node reads exactly the row's count (an
 *   absent one is -1)
 * @CBI_ONNX_INPUTS_UP_TO: as many as the ONNX node has, up to the count
 */
typedef enum
{
  CBI_ONNX_INPUTS_EXACTLY,
  CBI_ONNX_INPUTS_UP_TO,
} CbiOnnxInputs;

/**
 * CbiOnnxOp:
 * @op_type: the ONNX op
 * @add: (nullable): adds the node's graph nodes itself; the other fields
 *   are unused
 * @type: the engine's op (a read function may change it)
 * @inputs: how @n_inputs counts
 * @n_inputs: how many inputs the engine reads
 * @min_inputs: how many the ONNX node must have (optional ones after)
 * @read: (nullable): reads the attributes and constant inputs
 * @check: (nullable): checks the node's graph inputs
 */
typedef struct
{
  const gchar *op_type;
  CbiOnnxAddFunc add;
  CbiOpType type;
  CbiOnnxInputs inputs;
  guint n_inputs;
  guint min_inputs;
  CbiOnnxReadFunc read;
  CbiOnnxCheckFunc check;
} CbiOnnxOp;

#define ADDS(name, fn) {name, fn, 0, 0, 0, 0, NULL, NULL}
#define EXACTLY(name, type, n, read, check) \
  {name, NULL, type, CBI_ONNX_INPUTS_EXACTLY, n, 1, read, check}
#define UP_TO(name, type, n, min, read, check) \
  {name, NULL, type, CBI_ONNX_INPUTS_UP_TO, n, min, read, check}

/* *INDENT-OFF* */
static const CbiOnnxOp cbi_onnx_ops[] = {
  /* layout ops on activations and the plan-time shapes they read */
  ADDS ("Slice", cbi_onnx_add_copy_node),
  ADDS ("Gather", cbi_onnx_add_copy_node),
  ADDS ("Expand", cbi_onnx_add_copy_node),
  ADDS ("Squeeze", cbi_onnx_add_copy_node),
  ADDS ("Unsqueeze", cbi_onnx_add_copy_node),
  ADDS ("BatchNormalization", cbi_onnx_add_batch_norm),
  ADDS ("Split", cbi_onnx_add_split),
  ADDS ("Where", cbi_onnx_add_where),
  ADDS ("LSTM", cbi_onnx_add_recurrent),
  ADDS ("GRU", cbi_onnx_add_recurrent),
  ADDS ("RNN", cbi_onnx_add_recurrent),
  UP_TO ("Conv", CBI_OP_CONV, 3, 2, NULL, cbi_onnx_check_conv),
  UP_TO ("ConvTranspose", CBI_OP_CONV_TRANSPOSE, 3, 2, NULL,
      cbi_onnx_check_conv),
  EXACTLY ("Add", CBI_OP_ADD, 2, NULL, NULL),
  EXACTLY ("Sub", CBI_OP_SUB, 2, NULL, NULL),
  EXACTLY ("Mul", CBI_OP_MUL, 2, NULL, NULL),
  EXACTLY ("Div", CBI_OP_DIV, 2, NULL, NULL),
  EXACTLY ("Min", CBI_OP_MIN, 2, cbi_onnx_read_min_max, NULL),
  EXACTLY ("Max", CBI_OP_MAX, 2, cbi_onnx_read_min_max, NULL),
  EXACTLY ("MaxPool", CBI_OP_MAX_POOL, 1, cbi_onnx_read_pool, NULL),
  EXACTLY ("AveragePool", CBI_OP_AVERAGE_POOL, 1, cbi_onnx_read_pool, NULL),
  EXACTLY ("Resize", CBI_OP_RESIZE, 1, cbi_onnx_read_resize, NULL),
  EXACTLY ("Upsample", CBI_OP_RESIZE, 1, cbi_onnx_read_resize, NULL),
  EXACTLY ("InstanceNormalization", CBI_OP_INSTANCE_NORM, 3,
      cbi_onnx_read_epsilon, cbi_onnx_check_instance_norm),
  UP_TO ("LayerNormalization", CBI_OP_LAYER_NORM, 3, 2,
      cbi_onnx_read_layer_norm, cbi_onnx_check_layer_norm),
  EXACTLY ("Pad", CBI_OP_PAD, 1, cbi_onnx_read_pad, NULL),
  UP_TO ("Concat", CBI_OP_CONCAT, CBI_MAX_NODE_INPUTS, 1, cbi_onnx_read_concat,
      cbi_onnx_check_present),
  /* an activation, then constants (MatMul: or an activation); what the
   * ops keep of them, cbi_onnx_layout_op () */
  UP_TO ("DepthToSpace", CBI_OP_DEPTH_TO_SPACE, 1, 1, NULL, NULL),
  UP_TO ("Reshape", CBI_OP_RESHAPE, 1, 1, NULL, NULL),
  UP_TO ("Flatten", CBI_OP_RESHAPE, 1, 1, NULL, NULL),
  UP_TO ("Transpose", CBI_OP_TRANSPOSE, 1, 1, NULL, NULL),
  UP_TO ("Gemm", CBI_OP_GEMM, 3, 2, NULL, cbi_onnx_check_constants),
  UP_TO ("MatMul", CBI_OP_MATMUL, 2, 2, NULL, cbi_onnx_check_present),
  UP_TO ("Softmax", CBI_OP_SOFTMAX, 1, 1, NULL, NULL),
  UP_TO ("GlobalAveragePool", CBI_OP_GLOBAL_AVERAGE_POOL, 1, 1, NULL, NULL),
  UP_TO ("PRelu", CBI_OP_PRELU, 2, 2, NULL, cbi_onnx_check_constants),
  UP_TO ("ReduceMean", CBI_OP_REDUCE_MEAN, 1, 1, NULL, NULL),
  UP_TO ("ReduceSum", CBI_OP_REDUCE_SUM, 1, 1, NULL, NULL),
  UP_TO ("ReduceMax", CBI_OP_REDUCE_MAX, 1, 1, NULL, NULL),
  UP_TO ("ArgMax", CBI_OP_ARGMAX, 1, 1, NULL, NULL),
  /* element-wise: one input, parameters in alpha and beta */
  EXACTLY ("Relu", CBI_OP_RELU, 1, NULL, NULL),
  EXACTLY ("LeakyRelu", CBI_OP_RELU, 1, cbi_onnx_read_leaky_relu, NULL),
  EXACTLY ("Sigmoid", CBI_OP_SIGMOID, 1, NULL, NULL),
  EXACTLY ("Tanh", CBI_OP_TANH, 1, NULL, NULL),
  EXACTLY ("Elu", CBI_OP_ELU, 1, cbi_onnx_read_elu, NULL),
  EXACTLY ("HardSigmoid", CBI_OP_HARD_SIGMOID, 1,
      cbi_onnx_read_hard_sigmoid, NULL),
  EXACTLY ("HardSwish", CBI_OP_HARD_SWISH, 1, NULL, NULL),
  EXACTLY ("Identity", CBI_OP_IDENTITY, 1, NULL, NULL),
  EXACTLY ("Erf", CBI_OP_ERF, 1, NULL, NULL),
  EXACTLY ("Sqrt", CBI_OP_SQRT, 1, NULL, NULL),
  EXACTLY ("Exp", CBI_OP_EXP, 1, NULL, NULL),
  EXACTLY ("Log", CBI_OP_LOG, 1, NULL, NULL),
  EXACTLY ("Neg", CBI_OP_NEG, 1, NULL, NULL),
  EXACTLY ("Abs", CBI_OP_ABS, 1, NULL, NULL),
  EXACTLY ("Reciprocal", CBI_OP_RECIPROCAL, 1, NULL, NULL),
  EXACTLY ("Gelu", CBI_OP_GELU, 1, cbi_onnx_read_gelu, NULL),
  EXACTLY ("Pow", CBI_OP_POW, 1, cbi_onnx_read_pow, NULL),
  EXACTLY ("Clip", CBI_OP_CLIP, 1, cbi_onnx_read_clip, NULL),
};
/* *INDENT-ON* */

#undef ADDS
#undef EXACTLY
#undef UP_TO

/* The row of @op_type, or NULL. */
static const CbiOnnxOp *
cbi_onnx_find_op (const gchar * op_type)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cbi_onnx_ops); i++)
    if (strcmp (op_type, cbi_onnx_ops[i].op_type) == 0)
      return &cbi_onnx_ops[i];
  return NULL;
}

/* A constant of another type than float32 anywhere but where an op takes
 * its int64 one (Pad's pads, Reshape's shape, Pow's exponent, Resize's
 * computed sizes) fails, naming it. */
static gboolean
cbi_onnx_check_types (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxNode * node, GError ** error)
{
  guint i;

  for (i = 0; i < n->n_input; i++) {
    const CbiOnnxConst *c = cbi_onnx_const (im, n->input[i]);
    if (c && c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
        && !((cbi_op_info (node->type)->int64_input == (gint) i
                || (node->type == CBI_OP_POW && i == 1))
            && c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
        && !(node->type == CBI_OP_RESIZE && i == 3 && node->computed[1] >= 0))
      return cbi_onnx_fail (error, "tensor %s has data type %s; only "
          "float32 is supported here (node %s)", n->input[i],
          cbi_onnx_dtype_name (c->dtype), cbi_onnx_name (n->name));
  }
  return TRUE;
}

/* The graph inputs of @node into @inputs: float32 ones, an activation
 * first (a constant first swapped for a commutative op). */
static gboolean
cbi_onnx_node_inputs (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxNode * node, gint * inputs, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const CbiOpType type = node->type;
  guint i;

  for (i = 0; i < node->n_inputs; i++) {
    const CbiTensorInfo *info;
    inputs[i] = cbi_onnx_node_input (im, n, i);
    info = inputs[i] >= 0 ? cbi_graph_tensor (im->graph, inputs[i]) : NULL;
    /* a value computed from shapes is a constant of each plan (a class
     * token expanded to the batch, an anchor grid): where a constant may
     * be, which for the first input is a binary op's or Concat's */
    if (info && info->dtype != CBI_DTYPE_FLOAT && (info->ints != NULL
            || (i == 0 && !cbi_op_is_binary (type)
                && type != CBI_OP_CONCAT)))
      return cbi_onnx_fail (error, "node %s (%s): input %s is %s; only "
          "float32 is supported here", name, n->op_type, n->input[i],
          info->ints ? "an int64 constant" : "computed from shapes, which "
          "this op cannot take first");
  }
  if (cbi_op_is_binary (type) && n->n_input == 2 && inputs[0] >= 0
      && inputs[1] >= 0 && cbi_graph_tensor (im->graph, inputs[0])->data
      && (type == CBI_OP_ADD || type == CBI_OP_MUL || type == CBI_OP_MIN
          || type == CBI_OP_MAX)) {
    gint t = inputs[0];
    inputs[0] = inputs[1];
    inputs[1] = t;
  }
  if (cbi_op_is_binary (type) && (n->n_input != 2 || inputs[1] < 0))
    return cbi_onnx_fail (error, "node %s (%s): two inputs expected", name,
        n->op_type);
  /* a binary op may take a constant first (1 - x) when its second is an
   * activation; backends broadcast either operand */
  if (cbi_op_is_binary (type) && inputs[0] >= 0
      && cbi_graph_tensor (im->graph, inputs[1])->data == NULL)
    return TRUE;
  if (node->n_inputs < 1 || inputs[0] < 0
      || cbi_graph_tensor (im->graph, inputs[0])->data != NULL)
    return cbi_onnx_fail (error, "node %s (%s): its first input must be "
        "an activation", name, n->op_type);
  return TRUE;
}

/* Adds @node, read from @n, reading @inputs. */
static gboolean
cbi_onnx_add_one (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxNode * node, const gint * inputs, GError ** error)
{
  CbiNode *g;
  gint output, index;

  if (!cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &output, error))
    return FALSE;
  index = cbi_graph_add_node (im->graph, node->type, cbi_onnx_name (n->name),
      node->n_inputs, inputs, output, node->has_conv ? &node->conv : NULL);
  g = cbi_graph_node (im->graph, index);
  g->alpha = node->alpha;
  g->beta = node->beta;
  g->mode = node->mode;
  g->axis = node->axis;
  /* the plan-time values Pad and Resize read */
  if (node->type == CBI_OP_PAD && node->computed[0] >= 0) {
    g->inputs[1] = node->computed[0];
    g->n_inputs = 2;
  }
  if (node->type == CBI_OP_RESIZE && (node->computed[0] >= 0
          || node->computed[1] >= 0)) {
    g->inputs[1] = node->computed[0];
    g->inputs[2] = node->computed[1];
    g->n_inputs = 3;
  }
  if (!cbi_onnx_layout_op (im, n, g, error))
    return FALSE;
  /* a strided ConvTranspose runs faster as a convolution */
  if (node->type == CBI_OP_CONV_TRANSPOSE)
    cbi_graph_lower_conv_transpose (im->graph, index);
  return TRUE;
}

gboolean
cbi_onnx_add_node (CbiImporter * im, const Onnx__NodeProto * n, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const gchar *op_type = n->op_type ? n->op_type : "";
  gint inputs[CBI_MAX_NODE_INPUTS];
  CbiOnnxNode node = { 0, };
  const CbiOnnxOp *row;
  gboolean folded;

  if (n->domain && *n->domain && strcmp (n->domain, "ai.onnx") != 0)
    return cbi_onnx_fail (error, "node %s: op %s of domain %s is not "
        "supported", name, op_type, n->domain);
  if (n->n_output < 1)
    return cbi_onnx_fail (error, "node %s has no output", name);
  /* the channels of an activation: a constant where the graph fixes it */
  if (!cbi_onnx_fold_channels (im, n, &folded, error))
    return FALSE;
  if (folded)
    return TRUE;
  /* shapes computed from activations, whatever their op */
  if (cbi_onnx_is_shape_node (im, n))
    return cbi_onnx_add_shape_node (im, n, error);
  row = cbi_onnx_find_op (op_type);
  if (row == NULL)
    return cbi_onnx_fail (error, "node %s: op %s is not supported", name,
        op_type);
  if (row->add)
    return row->add (im, n, error);

  if (n->n_input < row->min_inputs)
    return cbi_onnx_fail (error, "node %s (%s): %" G_GSIZE_FORMAT " inputs; "
        "it takes at least %u", name, op_type, n->n_input, row->min_inputs);
  node.type = row->type;
  node.n_inputs = row->inputs == CBI_ONNX_INPUTS_UP_TO ?
      MIN (row->n_inputs, n->n_input) : row->n_inputs;
  node.mode = CBI_RESIZE_NEAREST;
  node.computed[0] = node.computed[1] = -1;
  return (row->read == NULL || row->read (im, n, &node, error))
      && cbi_onnx_check_types (im, n, &node, error)
      && cbi_onnx_node_inputs (im, n, &node, inputs, error)
      && (row->check == NULL || row->check (im, n, &node, inputs, error))
      && cbi_onnx_add_one (im, n, &node, inputs, error);
}
