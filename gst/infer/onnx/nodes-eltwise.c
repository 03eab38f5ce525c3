/* cudabatchinfer: ONNX model import, the element-wise nodes: activations
 * and unary math of one input, Pow of a constant exponent, Clip, and
 * Where on a constant condition
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "onnx/onnx-private.h"

#include <string.h>

/* The element-wise ops of one input and no parameter. */
static gboolean
cbi_onnx_unary_type (const gchar * op, CbiOpType * type)
{
  static const struct
  {
    const gchar *name;
    CbiOpType type;
  } ops[] = {
    {"Erf", CBI_OP_ERF},
    {"Sqrt", CBI_OP_SQRT},
    {"Exp", CBI_OP_EXP},
    {"Log", CBI_OP_LOG},
    {"Neg", CBI_OP_NEG},
    {"Abs", CBI_OP_ABS},
    {"Reciprocal", CBI_OP_RECIPROCAL},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (ops); i++) {
    if (strcmp (op, ops[i].name) == 0) {
      *type = ops[i].type;
      return TRUE;
    }
  }
  return FALSE;
}

/* Whether Pow node @n has one constant exponent, an element-wise op;
 * else its exponent broadcasts as a binary op's second operand. */
gboolean
cbi_onnx_pow_is_eltwise (CbiImporter * im, const Onnx__NodeProto * n)
{
  const CbiOnnxConst *i = cbi_onnx_int_input (im, n, 1);
  gint64 count;
  gint n_dims;

  return (i && i->count == 1)
      || (cbi_onnx_floats_input (im, n, 1, &count, &n_dims) && count == 1);
}

/* The element-wise ops: their type and parameters, or an error naming an
 * op outside the supported list. */
gboolean
cbi_onnx_eltwise (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOpType * type, gfloat * alpha, gfloat * beta, GError ** error)
{
  const gchar *op = n->op_type ? n->op_type : "";

  *alpha = *beta = 0.0f;
  if (strcmp (op, "Relu") == 0) {
    *type = CBI_OP_RELU;
  } else if (strcmp (op, "LeakyRelu") == 0) {
    *type = CBI_OP_RELU;
    *alpha = cbi_onnx_float (n, "alpha", 0.01f);
  } else if (strcmp (op, "Sigmoid") == 0) {
    *type = CBI_OP_SIGMOID;
  } else if (strcmp (op, "Tanh") == 0) {
    *type = CBI_OP_TANH;
  } else if (strcmp (op, "Elu") == 0) {
    *type = CBI_OP_ELU;
    *alpha = cbi_onnx_float (n, "alpha", 1.0f);
  } else if (strcmp (op, "HardSigmoid") == 0) {
    *type = CBI_OP_HARD_SIGMOID;
    *alpha = cbi_onnx_float (n, "alpha", 0.2f);
    *beta = cbi_onnx_float (n, "beta", 0.5f);
  } else if (strcmp (op, "HardSwish") == 0) {
    *type = CBI_OP_HARD_SWISH;
  } else if (strcmp (op, "Identity") == 0) {
    *type = CBI_OP_IDENTITY;
  } else if (cbi_onnx_unary_type (op, type)) {
    /* no parameter */
  } else if (strcmp (op, "Gelu") == 0) {
    gchar *approx = cbi_onnx_string (n, "approximate", "none");
    gboolean use_tanh = strcmp (approx, "tanh") == 0;
    gboolean known = use_tanh || strcmp (approx, "none") == 0;
    if (!known)
      cbi_onnx_fail (error, "node %s (Gelu): approximate %s is not "
          "supported", cbi_onnx_name (n->name), approx);
    g_free (approx);
    if (!known)
      return FALSE;
    *type = use_tanh ? CBI_OP_GELU_TANH : CBI_OP_GELU;
  } else if (strcmp (op, "Pow") == 0) {
    const gfloat *e;
    gint64 count;
    gint n_dims;
    const CbiOnnxConst *i = cbi_onnx_int_input (im, n, 1);
    *type = CBI_OP_POW;
    e = cbi_onnx_floats_input (im, n, 1, &count, &n_dims);
    if (i && i->count == 1) {
      /* an integer exponent, as PyTorch exports x ** 2 */
      *alpha = (gfloat) ((const gint64 *) i->data)[0];
    } else if (e && count == 1) {
      *alpha = e[0];
    } else {
      return cbi_onnx_fail (error, "node %s (Pow): the exponent must be a "
          "float32 or int64 constant of one value", cbi_onnx_name (n->name));
    }
  } else if (strcmp (op, "Clip") == 0) {
    *type = CBI_OP_CLIP;
    if (!cbi_onnx_clip_bound (im, n, 1, "min", -G_MAXFLOAT, alpha, error)
        || !cbi_onnx_clip_bound (im, n, 2, "max", G_MAXFLOAT, beta, error))
      return FALSE;
    /* min (max (x, min), max) is max everywhere when min > max */
    if (*alpha > *beta)
      *alpha = *beta;
  } else {
    return cbi_onnx_fail (error, "node %s: op %s is not supported",
        cbi_onnx_name (n->name), op);
  }
  return TRUE;
}

/* Where on a constant condition: c ? a : b with a an activation (the
 * condition negated when X is the constant and Y the activation); the
 * condition becomes a float32 constant of 0 and 1. */
gboolean
cbi_onnx_where (CbiImporter * im, const Onnx__NodeProto * n, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const CbiOnnxConst *c = n->n_input == 3 ? cbi_onnx_const (im,
      n->input[0]) : NULL;
  gint in[3], out, swap;
  gfloat *cond;
  gchar *c_name;
  gint64 i;

  if (c == NULL || c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
    return cbi_onnx_fail (error, "node %s (Where): the condition must be a "
        "bool constant", name);
  in[0] = cbi_onnx_node_input (im, n, 1);
  in[1] = cbi_onnx_node_input (im, n, 2);
  if (in[0] < 0 || in[1] < 0)
    return cbi_onnx_fail (error, "node %s (Where): an input is absent", name);
  swap = cbi_graph_tensor (im->graph, in[0])->data != NULL;
  if (swap) {
    gint t = in[0];
    in[0] = in[1];
    in[1] = t;
  }
  if (cbi_graph_tensor (im->graph, in[0])->data != NULL)
    return cbi_onnx_fail (error, "node %s (Where): X or Y must be an "
        "activation", name);
  cond = g_new (gfloat, MAX (c->count, 1));
  for (i = 0; i < c->count; i++)
    cond[i] = (((const guint8 *) c->data)[i] != 0) != swap;
  c_name = g_strconcat (name, ".condition", NULL);
  if (!cbi_onnx_add (im, c_name, c->n_dims, c->dims, cond, &in[2], error)) {
    g_free (c_name);
    return FALSE;
  }
  g_free (c_name);
  if (!cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &out, error))
    return FALSE;
  cbi_graph_add_node (im->graph, CBI_OP_WHERE, name, 3, in, out, NULL);
  return TRUE;
}
