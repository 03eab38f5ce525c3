/* cudabatchinfer: ONNX model import, shapes computed at plan time
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Exporters compute shapes from activations: Shape of a feature map,
 * Gather of its height, Concat with constants, into a Reshape or a
 * Resize. Those nodes cannot fold at load (the shape is known only once
 * N, H and W are), so each becomes a CBI_OP_SHAPE_VALUE node of the
 * graph and the graph an evaluator that computes it at plan time, once
 * per input shape, with the very functions that fold constants
 * (fold.c, foldmath.c) on a copy of the ONNX node. The
 * layout ops those values feed (Slice, Gather, Expand, Squeeze,
 * Unsqueeze on an activation) are translated here too: their int64
 * inputs stay graph tensors (int64 constants or shape values) that
 * cbi_graph_specialise() reads.
 */
#include "onnx/onnx-private.h"

#include <string.h>

/* One shape node: its ONNX node and where each input comes from. */
typedef struct
{
  Onnx__NodeProto *proto;       /* a copy, owned */
  guint n_in;
  gint tensors[CBI_MAX_NODE_INPUTS];    /* graph tensor, or -1 */
  CbiOnnxConst *consts[CBI_MAX_NODE_INPUTS];    /* else a constant, owned */
} CbiOnnxShapeNode;

typedef struct
{
  CbiShapeEval parent;
  gint64 opset;
  GPtrArray *nodes;             /* CbiOnnxShapeNode, by CbiNode.mode */
} CbiOnnxShapeEval;

struct _CbiShapeRun
{
  CbiOnnxShapeEval *eval;
  const CbiGraph *graph;
  CbiImporter im;               /* what the fold functions read: opset,
                                 * the folding budget, per run */
  CbiOnnxConst **values;        /* per graph tensor, owned */
};

static void
cbi_onnx_shape_node_free (gpointer p)
{
  CbiOnnxShapeNode *sn = p;
  guint k;

  onnx__node_proto__free_unpacked (sn->proto, NULL);
  for (k = 0; k < sn->n_in; k++)
    g_clear_pointer (&sn->consts[k], cbi_onnx_const_free);
  g_free (sn);
}

static CbiShapeRun *
cbi_onnx_shape_begin (CbiShapeEval * self, const CbiGraph * graph)
{
  CbiShapeRun *run = g_new0 (CbiShapeRun, 1);

  run->eval = (CbiOnnxShapeEval *) self;
  run->graph = graph;
  run->im.opset = run->eval->opset;
  run->im.fold_budget = CBI_ONNX_SHAPE_BUDGET;
  run->values = g_new0 (CbiOnnxConst *, graph->tensors->len);
  return run;
}

static void
cbi_onnx_shape_end (CbiShapeRun * run)
{
  guint t;

  for (t = 0; t < run->graph->tensors->len; t++)
    g_clear_pointer (&run->values[t], cbi_onnx_const_free);
  g_free (run->values);
  g_free (run);
}

static gboolean
cbi_onnx_shape_eval (CbiShapeRun * run, const CbiNode * n,
    const CbiShape * shapes, GError ** error)
{
  CbiOnnxShapeNode *sn = g_ptr_array_index (run->eval->nodes, n->mode);
  CbiOnnxConst views[CBI_MAX_NODE_INPUTS];
  const CbiOnnxConst *in[CBI_MAX_NODE_INPUTS];
  CbiOnnxConst *out = NULL;
  guint k;

  for (k = 0; k < sn->n_in; k++) {
    gint t = sn->tensors[k];
    const CbiTensorInfo *info = t >= 0 ? cbi_graph_tensor (run->graph,
        t) : NULL;
    if (info == NULL || run->values[t]) {
      in[k] = info ? run->values[t] : sn->consts[k];
      continue;
    }
    /* an int64 or float32 constant of the graph, seen in place, or an
     * activation: its planned shape, all a Shape reads (translation let
     * no other op take one) */
    cbi_onnx_tensor_view (info, t, info->ints ? info->n_dims :
        shapes[t].n_dims, info->ints ? info->dims : shapes[t].dims, &views[k]);
    in[k] = &views[k];
  }
  if (!cbi_onnx_fold_run (&run->im, sn->proto, in, sn->n_in, &out, error)) {
    g_prefix_error (error, "computing a shape at plan time: ");
    return FALSE;
  }
  g_clear_pointer (&run->values[n->output], cbi_onnx_const_free);
  run->values[n->output] = out;
  return TRUE;
}

static gboolean
cbi_onnx_shape_read (CbiShapeRun * run, gint t, gint max, gint64 * ints,
    gdouble * floats, CbiShape * shape)
{
  const CbiOnnxConst *c = run->values[t];
  gint64 i;

  if (c == NULL)
    return FALSE;
  shape->n_dims = c->n_dims;
  memcpy (shape->dims, c->dims, sizeof (shape->dims));
  if (c->count > max || c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
    return FALSE;
  for (i = 0; i < c->count; i++) {
    ints[i] = cbi_onnx_get_i (c, i);
    floats[i] = cbi_onnx_get_f (c, i);
  }
  return TRUE;
}

static void
cbi_onnx_shape_free (CbiShapeEval * self)
{
  CbiOnnxShapeEval *eval = (CbiOnnxShapeEval *) self;

  g_ptr_array_unref (eval->nodes);
  g_free (eval);
}

/* The graph's evaluator, made on first use. */
static CbiOnnxShapeEval *
cbi_onnx_shape_evaluator (CbiImporter * im)
{
  CbiOnnxShapeEval *eval = (CbiOnnxShapeEval *) im->graph->shape_eval;

  if (eval)
    return eval;
  eval = g_new0 (CbiOnnxShapeEval, 1);
  eval->parent.begin = cbi_onnx_shape_begin;
  eval->parent.eval = cbi_onnx_shape_eval;
  eval->parent.read = cbi_onnx_shape_read;
  eval->parent.end = cbi_onnx_shape_end;
  eval->parent.free = cbi_onnx_shape_free;
  eval->opset = im->opset;
  eval->nodes = g_ptr_array_new_with_free_func (cbi_onnx_shape_node_free);
  im->graph->shape_eval = &eval->parent;
  return eval;
}

/* Whether @name is a graph tensor holding a shape value. */
static gboolean
cbi_onnx_is_shape_value (CbiImporter * im, const gchar * name)
{
  gint t = name && *name ? cbi_onnx_lookup (im, name) : -1;

  return t >= 0 && cbi_graph_tensor (im->graph, t)->dtype == CBI_DTYPE_INT64;
}

gboolean
cbi_onnx_is_shape_node (CbiImporter * im, const Onnx__NodeProto * n)
{
  gboolean computed = FALSE;
  gsize i;

  if (n->op_type == NULL || !cbi_onnx_folds (n->op_type))
    return FALSE;
  /* the shape of an activation: Shape only reads that */
  if (strcmp (n->op_type, "Shape") == 0)
    return TRUE;
  for (i = 0; i < n->n_input; i++) {
    const gchar *name = n->input[i];
    gint t;
    if (name == NULL || *name == '\0' || cbi_onnx_const (im, name))
      continue;
    t = cbi_onnx_lookup (im, name);
    if (t >= 0 && cbi_graph_tensor (im->graph, t)->data)
      continue;                 /* a float32 constant in the graph */
    if (!cbi_onnx_is_shape_value (im, name))
      return FALSE;
    computed = TRUE;
  }
  return computed;
}

/* A copy of constant @c. */
static CbiOnnxConst *
cbi_onnx_const_copy (const CbiOnnxConst * c)
{
  CbiOnnxConst *copy = cbi_onnx_const_new (c->dtype, c->n_dims, c->dims,
      c->count);

  memcpy (copy->data, c->data, c->count * cbi_onnx_dtype_size (c->dtype));
  return copy;
}

/* The activation shape value @name is the Shape of (a Shape node of its
 * whole shape: no start or end), else -1. */
static gint
cbi_onnx_whole_shape_of (CbiImporter * im, const gchar * name)
{
  const CbiOnnxShapeEval *eval =
      (const CbiOnnxShapeEval *) im->graph->shape_eval;
  const CbiOnnxShapeNode *sn;
  const CbiNode *node;
  gint t, p;

  if (eval == NULL || !cbi_onnx_is_shape_value (im, name)
      || (t = cbi_onnx_lookup (im, name)) < 0
      || (p = cbi_graph_producer (im->graph, t)) < 0)
    return -1;
  node = cbi_graph_node (im->graph, p);
  if (node->op != CBI_OP_SHAPE_VALUE)
    return -1;
  sn = g_ptr_array_index (eval->nodes, node->mode);
  return g_strcmp0 (sn->proto->op_type, "Shape") == 0
      && cbi_onnx_int (sn->proto, "start", 0) == 0
      && cbi_onnx_int (sn->proto, "end", G_MAXINT64) == G_MAXINT64 ?
      sn->tensors[0] : -1;
}

gboolean
cbi_onnx_fold_channels (CbiImporter * im, const Onnx__NodeProto * n,
    gboolean * folded, GError ** error)
{
  const CbiOnnxConst *index = NULL;
  CbiOnnxConst *c;
  const gint64 one = 1;
  gint64 channels, k;
  gint t = -1;

  *folded = FALSE;
  if (n->n_output != 1 || n->n_input < 1 || n->input[0] == NULL)
    return TRUE;
  /* only axes counted from the front: a negative one is the channels'
   * at a rank this does not know (a Split's part may be of any rank) */
  if (g_strcmp0 (n->op_type, "Shape") == 0) {
    /* the channels' axis alone of an activation */
    if (cbi_onnx_int (n, "start", 0) != 1 || cbi_onnx_int (n, "end", -1) != 2
        || (t = cbi_onnx_lookup (im, n->input[0])) < 0)
      return TRUE;
  } else if (g_strcmp0 (n->op_type, "Gather") == 0 && n->n_input == 2
      && cbi_onnx_int (n, "axis", 0) == 0) {
    /* one value of an activation's whole shape, at a constant index */
    index = cbi_onnx_const (im, n->input[1]);
    if (index == NULL || index->count != 1 || index->n_dims > 1
        || (index->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64
            && index->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT32))
      return TRUE;
    k = cbi_onnx_get_i (index, 0);
    if (k != 1 || (t = cbi_onnx_whole_shape_of (im, n->input[0])) < 0)
      return TRUE;
  } else {
    return TRUE;
  }
  if (cbi_graph_tensor (im->graph, t)->dtype == CBI_DTYPE_INT64
      || (channels = cbi_graph_static_channels (im->graph, t)) < 1)
    return TRUE;
  /* Shape's is a vector of one value; Gather's has its index's dims */
  c = cbi_onnx_const_new (ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
      index ? index->n_dims : 1, index ? index->dims : &one, 1);
  ((gint64 *) c->data)[0] = channels;
  *folded = TRUE;
  return cbi_onnx_keep_const (im, n->output[0], c, error);
}

gboolean
cbi_onnx_add_shape_node (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  CbiOnnxShapeEval *eval;
  CbiOnnxShapeNode *sn;
  gint inputs[CBI_MAX_NODE_INPUTS], output, index;
  guint n_inputs = 0, k;
  guint8 *packed;
  gsize size;

  if (n->n_input > CBI_MAX_NODE_INPUTS || n->n_output != 1)
    return cbi_onnx_fail (error, "node %s (%s): a shape computed at plan "
        "time takes at most %d inputs and has one output", name, n->op_type,
        CBI_MAX_NODE_INPUTS);
  if (!cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &output, error))
    return FALSE;
  cbi_graph_tensor (im->graph, output)->dtype = CBI_DTYPE_INT64;

  sn = g_new0 (CbiOnnxShapeNode, 1);
  size = onnx__node_proto__get_packed_size (n);
  packed = g_malloc (MAX (size, 1));
  onnx__node_proto__pack (n, packed);
  sn->proto = onnx__node_proto__unpack (NULL, size, packed);
  g_free (packed);
  sn->n_in = n->n_input;
  for (k = 0; k < sn->n_in; k++) {
    const gchar *in = n->input[k];
    const CbiOnnxConst *c = in && *in ? cbi_onnx_const (im, in) : NULL;
    sn->tensors[k] = -1;
    if (c)
      sn->consts[k] = cbi_onnx_const_copy (c);
    else if (in && *in && (sn->tensors[k] = cbi_onnx_lookup (im, in)) >= 0)
      inputs[n_inputs++] = sn->tensors[k];
  }
  eval = cbi_onnx_shape_evaluator (im);
  g_ptr_array_add (eval->nodes, sn);
  if (sn->proto == NULL)
    return cbi_onnx_fail (error, "node %s (%s): cannot copy it", name,
        n->op_type);
  index = cbi_graph_add_node (im->graph, CBI_OP_SHAPE_VALUE, name, n_inputs,
      inputs, output, NULL);
  cbi_graph_node (im->graph, index)->mode = eval->nodes->len - 1;
  return TRUE;
}

gboolean
cbi_onnx_int_tensor (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    gint * index, GError ** error)
{
  const gchar *name = i < n->n_input ? n->input[i] : NULL;
  CbiOnnxConst *c;
  gint64 k, *ints;

  *index = -1;
  if (name == NULL || *name == '\0')
    return TRUE;
  c = cbi_onnx_const (im, name);
  if (c == NULL) {
    if (!cbi_onnx_is_shape_value (im, name))
      return cbi_onnx_fail (error, "node %s (%s): input %s must be an int64 "
          "constant or computed from shapes", cbi_onnx_name (n->name),
          n->op_type, name);
    *index = cbi_onnx_lookup (im, name);
    return TRUE;
  }
  if (c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64
      && c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
    return cbi_onnx_fail (error, "node %s (%s): input %s must be int64, not "
        "%s", cbi_onnx_name (n->name), n->op_type, name,
        cbi_onnx_dtype_name (c->dtype));
  /* one graph tensor per constant, however many nodes read it */
  if (c->index < 0) {
    ints = g_new (gint64, MAX (c->count, 1));
    for (k = 0; k < c->count; k++)
      ints[k] = cbi_onnx_get_i (c, k);
    c->index = cbi_graph_add_ints (im->graph, name, c->n_dims, c->dims, ints);
  }
  *index = c->index;
  return TRUE;
}

/* An int64 constant of the graph made from attribute @attr of @n (the
 * Slice of opset < 10), or -1 when it is absent. */
static gint
cbi_onnx_ints_attr (CbiImporter * im, const Onnx__NodeProto * n,
    const gchar * attr)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, attr);
  gint64 dims[1];
  gchar *name;
  gint t;

  if (a == NULL || a->n_ints > CBI_MAX_DIMS)
    return -1;
  dims[0] = a->n_ints;
  name = cbi_onnx_internal_name (im, n, attr);
  t = cbi_graph_add_ints (im->graph, name, 1, dims,
      g_memdup2 (a->ints, MAX (a->n_ints, 1) * sizeof (gint64)));
  g_free (name);
  return t;
}

gboolean
cbi_onnx_add_copy_node (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name), *op = n->op_type;
  gint inputs[CBI_MAX_NODE_INPUTS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
  gint output, index, x = n->n_input > 0 ? cbi_onnx_lookup (im,
      n->input[0]) : -1;
  const Onnx__AttributeProto *a = NULL;
  CbiOpType type;
  guint n_inputs = 2, k;
  CbiNode *node;

  if (x < 0 || cbi_graph_tensor (im->graph, x)->data
      || cbi_graph_tensor (im->graph, x)->dtype != CBI_DTYPE_FLOAT)
    return cbi_onnx_fail (error, "node %s (%s): its first input must be "
        "an activation", name, op);
  inputs[0] = x;
  if (strcmp (op, "Slice") == 0) {
    type = CBI_OP_SLICE;
    n_inputs = 5;
    if (im->opset < 10) {
      inputs[1] = cbi_onnx_ints_attr (im, n, "starts");
      inputs[2] = cbi_onnx_ints_attr (im, n, "ends");
      inputs[3] = cbi_onnx_ints_attr (im, n, "axes");
    }
    for (k = 1; k < 5 && im->opset >= 10; k++)
      if (!cbi_onnx_int_tensor (im, n, k, &inputs[k], error))
        return FALSE;
    if (inputs[1] < 0 || inputs[2] < 0)
      return cbi_onnx_fail (error, "node %s (Slice): starts and ends of at "
          "most %d values are needed", name, CBI_MAX_DIMS);
  } else if (strcmp (op, "Gather") == 0) {
    type = CBI_OP_GATHER;
  } else if (strcmp (op, "Expand") == 0) {
    type = CBI_OP_EXPAND;
  } else {
    type = strcmp (op, "Squeeze") == 0 ? CBI_OP_SQUEEZE : CBI_OP_UNSQUEEZE;
    if (im->opset < 13) {
      a = cbi_onnx_attr (n, "axes");
      n_inputs = 1;
      if (a && a->n_ints > CBI_MAX_DIMS)
        return cbi_onnx_fail (error, "node %s (%s): at most %d axes are "
            "supported", name, op, CBI_MAX_DIMS);
    }
  }
  if (type != CBI_OP_SLICE && n_inputs > 1
      && !cbi_onnx_int_tensor (im, n, 1, &inputs[1], error))
    return FALSE;
  if ((type == CBI_OP_GATHER || type == CBI_OP_EXPAND
          || (type == CBI_OP_UNSQUEEZE && a == NULL)) && inputs[1] < 0)
    return cbi_onnx_fail (error, "node %s (%s): its %s input is missing",
        name, op, type == CBI_OP_GATHER ? "indices" : type == CBI_OP_EXPAND ?
        "shape" : "axes");
  if (!cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &output, error))
    return FALSE;
  index = cbi_graph_add_node (im->graph, type, name, n_inputs, inputs, output,
      NULL);
  node = cbi_graph_node (im->graph, index);
  node->axis = (gint) CLAMP (cbi_onnx_int (n, "axis", 0), -CBI_MAX_DIMS - 1,
      CBI_MAX_DIMS + 1);
  /* the axes attribute of opset < 13; none (mode 1) squeezes every 1 */
  node->mode = type == CBI_OP_SQUEEZE && a == NULL && inputs[1] < 0;
  if (a) {
    node->n_ints = a->n_ints;
    if (a->n_ints > 0)
      memcpy (node->ints, a->ints, a->n_ints * sizeof (gint64));
  }
  return TRUE;
}
