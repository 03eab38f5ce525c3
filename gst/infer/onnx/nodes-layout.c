/* cudabatchinfer: ONNX model import, the nodes that change a tensor's
 * layout or reduce it: Reshape, Flatten, Transpose, DepthToSpace, Gemm,
 * MatMul, Softmax, the reductions, ArgMax, LayerNormalization's axis and
 * Split
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "onnx/onnx-private.h"

#include <string.h>

/* ReduceMean, ReduceSum, ReduceMax: the axes from the attribute (before
 * opset 18, 13 for ReduceSum) or an int64 constant input, none meaning
 * all; keepdims. */
static gboolean
cbi_onnx_reduce (CbiImporter * im, const Onnx__NodeProto * n, CbiNode * node,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "axes");
  const CbiOnnxConst *ints = cbi_onnx_int_input (im, n, 1);
  gsize count = ints ? (gsize) ints->count : attr ? attr->n_ints : 0;
  const gint64 *axes = ints ? (const gint64 *) ints->data :
      attr ? attr->ints : NULL;

  if (n->n_input > 1 && n->input[1] && *n->input[1] && ints == NULL)
    return cbi_onnx_fail (error, "node %s (%s): the axes must be an int64 "
        "constant", name, n->op_type);
  if (count > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "node %s (%s): %" G_GSIZE_FORMAT " axes",
        name, n->op_type, count);
  if (count == 0 && cbi_onnx_int (n, "noop_with_empty_axes", 0) != 0)
    return cbi_onnx_fail (error, "node %s (%s): noop_with_empty_axes is "
        "not supported", name, n->op_type);
  node->n_ints = count;
  if (count > 0)
    memcpy (node->ints, axes, count * sizeof (gint64));
  node->mode = cbi_onnx_int (n, "keepdims", 1) != 0;
  return TRUE;
}

/* Split: a node per output, each its part of the input along the axis:
 * sizes from an int64 constant (opset 13 on) or the 'split' attribute,
 * else equal parts, as many as num_outputs (opset 18) or the outputs. */
gboolean
cbi_onnx_add_split (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "split");
  const CbiOnnxConst *ints = cbi_onnx_int_input (im, n, 1);
  const gint64 *sizes = ints ? (const gint64 *) ints->data :
      attr && attr->n_ints ? attr->ints : NULL;
  gsize count = ints ? (gsize) ints->count : attr ? attr->n_ints : 0, i;
  gint x = cbi_onnx_node_input (im, n, 0), out, index;
  gint64 start = 0;

  if (x < 0 || cbi_graph_tensor (im->graph, x)->data != NULL)
    return cbi_onnx_fail (error, "node %s (Split): its first input must be "
        "an activation", name);
  if (n->n_input > 1 && n->input[1] && *n->input[1] && ints == NULL)
    return cbi_onnx_fail (error, "node %s (Split): the sizes must be an "
        "int64 constant", name);
  if (sizes && count != n->n_output)
    return cbi_onnx_fail (error, "node %s (Split): %" G_GSIZE_FORMAT
        " sizes for %" G_GSIZE_FORMAT " outputs", name, count, n->n_output);
  for (i = 0; i < n->n_output; i++) {
    CbiNode *node;
    if (sizes && sizes[i] < 1)
      return cbi_onnx_fail (error, "node %s (Split): size %" G_GINT64_FORMAT,
          name, sizes[i]);
    if (!cbi_onnx_add (im, n->output[i], 0, NULL, NULL, &out, error))
      return FALSE;
    index = cbi_graph_add_node (im->graph, CBI_OP_SPLIT, name, 1, &x, out,
        NULL);
    node = cbi_graph_node (im->graph, index);
    node->axis = cbi_onnx_int (n, "axis", 0);
    node->n_ints = 3;
    node->mode = sizes == NULL;
    node->ints[0] = sizes ? start : (gint64) i;
    node->ints[1] = sizes ? sizes[i] : (gint64) n->n_output;
    node->ints[2] = i + 1 == n->n_output;
    if (sizes)
      start += sizes[i];
  }
  return TRUE;
}

/* What the shape-changing and matrix ops keep in CbiNode: Reshape's
 * target, Flatten's axis (as a Reshape of mode 1), Transpose's
 * permutation, DepthToSpace's block, Gemm's transpositions, Softmax's
 * axis. */
gboolean
cbi_onnx_layout_op (CbiImporter * im, const Onnx__NodeProto * n,
    CbiNode * node, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *a;
  const CbiOnnxConst *ints;
  gchar *mode;
  guint i;

  switch (node->op) {
    case CBI_OP_RESHAPE:
      if (strcmp (n->op_type, "Flatten") == 0) {
        node->mode = 1;
        node->axis = cbi_onnx_int (n, "axis", 1);
        return TRUE;
      }
      ints = cbi_onnx_int_input (im, n, 1);
      if (ints == NULL && n->n_input > 1
          && cbi_onnx_int_tensor (im, n, 1, &node->inputs[1], NULL)
          && node->inputs[1] >= 0) {
        /* computed from shapes: read at plan time */
        node->n_inputs = 2;
        if (cbi_onnx_int (n, "allowzero", 0) != 0)
          return cbi_onnx_fail (error, "node %s (Reshape): allowzero with a "
              "computed shape is not supported", name);
        return TRUE;
      }
      if (ints == NULL || ints->count > CBI_MAX_DIMS)
        return cbi_onnx_fail (error, "node %s (Reshape): the shape must be "
            "an int64 constant of up to %d values", name, CBI_MAX_DIMS);
      for (i = 0; i < ints->count; i++)
        if (((const gint64 *) ints->data)[i] == 0
            && cbi_onnx_int (n, "allowzero", 0) != 0)
          return cbi_onnx_fail (error, "node %s (Reshape): allowzero with a "
              "0 in the shape is not supported", name);
      node->n_ints = ints->count;
      memcpy (node->ints, ints->data, ints->count * sizeof (gint64));
      return TRUE;
    case CBI_OP_TRANSPOSE:
      a = cbi_onnx_attr (n, "perm");
      if (a && a->n_ints > CBI_MAX_DIMS)
        return cbi_onnx_fail (error, "node %s (Transpose): %" G_GSIZE_FORMAT
            " axes; at most %d are supported", name, a->n_ints, CBI_MAX_DIMS);
      /* none: the axes reversed, once the rank is known */
      node->n_ints = a ? a->n_ints : 0;
      if (a && a->n_ints > 0)
        memcpy (node->ints, a->ints, a->n_ints * sizeof (gint64));
      return TRUE;
    case CBI_OP_DEPTH_TO_SPACE:{
      gboolean ok = TRUE;
      mode = cbi_onnx_string (n, "mode", "DCR");
      node->mode = strcmp (mode, "CRD") == 0;
      node->n_ints = 1;
      node->ints[0] = cbi_onnx_int (n, "blocksize", 0);
      if (!node->mode && strcmp (mode, "DCR") != 0)
        ok = cbi_onnx_fail (error, "node %s (DepthToSpace): mode %s is not "
            "supported (DCR and CRD are)", name, mode);
      else if (node->ints[0] < 1)
        ok = cbi_onnx_fail (error, "node %s (DepthToSpace): blocksize must "
            "be 1 or more", name);
      g_free (mode);
      return ok;
    }
    case CBI_OP_GEMM:
      node->alpha = cbi_onnx_float (n, "alpha", 1.0f);
      node->beta = cbi_onnx_float (n, "beta", 1.0f);
      node->n_ints = 2;
      node->ints[0] = cbi_onnx_int (n, "transA", 0) != 0;
      node->ints[1] = cbi_onnx_int (n, "transB", 0) != 0;
      return TRUE;
    case CBI_OP_SOFTMAX:
      /* before opset 13, the input is seen as 2-D, split at axis */
      node->mode = im->opset < 13;
      node->axis = cbi_onnx_int (n, "axis", im->opset < 13 ? 1 : -1);
      return TRUE;
    case CBI_OP_REDUCE_MEAN:
    case CBI_OP_REDUCE_SUM:
    case CBI_OP_REDUCE_MAX:
      return cbi_onnx_reduce (im, n, node, error);
    case CBI_OP_LAYER_NORM:
      node->axis = cbi_onnx_int (n, "axis", -1);
      return TRUE;
    case CBI_OP_ARGMAX:
      node->n_ints = 1;
      node->ints[0] = cbi_onnx_int (n, "axis", 0);
      node->mode = cbi_onnx_int (n, "keepdims", 1) != 0;
      node->alpha = cbi_onnx_int (n, "select_last_index", 0) != 0;
      return TRUE;
    default:
      return TRUE;
  }
}
