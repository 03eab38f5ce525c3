/* cudabatchinfer: ONNX model import, the element-wise nodes: activations
 * and unary math of one input, Pow of a constant exponent, Clip, and
 * Where on a constant condition
 * (read functions of the op table, ops.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "onnx/onnx-private.h"

#include <string.h>

/* Whether Pow node @n has one constant exponent, an element-wise op;
 * else its exponent broadcasts as a binary op's second operand. */
static gboolean
cbi_onnx_pow_is_eltwise (CbiImporter * im, const Onnx__NodeProto * n)
{
  const CbiOnnxConst *i = cbi_onnx_int_input (im, n, 1);
  gint64 count;
  gint n_dims;

  return (i && i->count == 1)
      || (cbi_onnx_floats_input (im, n, 1, &count, &n_dims) && count == 1);
}

gboolean
cbi_onnx_read_leaky_relu (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  node->alpha = cbi_onnx_float (n, "alpha", 0.01f);
  return TRUE;
}

gboolean
cbi_onnx_read_elu (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  node->alpha = cbi_onnx_float (n, "alpha", 1.0f);
  return TRUE;
}

gboolean
cbi_onnx_read_hard_sigmoid (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  node->alpha = cbi_onnx_float (n, "alpha", 0.2f);
  node->beta = cbi_onnx_float (n, "beta", 0.5f);
  return TRUE;
}

gboolean
cbi_onnx_read_gelu (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  gchar *approx = cbi_onnx_string (n, "approximate", "none");
  gboolean use_tanh = strcmp (approx, "tanh") == 0;
  gboolean known = use_tanh || strcmp (approx, "none") == 0;

  if (!known)
    cbi_onnx_fail (error, "node %s (Gelu): approximate %s is not "
        "supported", cbi_onnx_name (n->name), approx);
  g_free (approx);
  node->type = use_tanh ? CBI_OP_GELU_TANH : CBI_OP_GELU;
  return known;
}

/* Pow of one constant exponent is element-wise (the exponent in alpha);
 * of any other, a binary op whose exponent broadcasts. */
gboolean
cbi_onnx_read_pow (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  const CbiOnnxConst *i = cbi_onnx_int_input (im, n, 1);
  const gfloat *e;
  gint64 count;
  gint n_dims;

  if (!cbi_onnx_pow_is_eltwise (im, n)) {
    node->type = CBI_OP_POW_BINARY;
    node->n_inputs = 2;
    return TRUE;
  }
  e = cbi_onnx_floats_input (im, n, 1, &count, &n_dims);
  if (i && i->count == 1)
    /* an integer exponent, as PyTorch exports x ** 2 */
    node->alpha = (gfloat) ((const gint64 *) i->data)[0];
  else
    node->alpha = e[0];
  return TRUE;
}

gboolean
cbi_onnx_read_clip (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  if (!cbi_onnx_clip_bound (im, n, 1, "min", -G_MAXFLOAT, &node->alpha, error)
      || !cbi_onnx_clip_bound (im, n, 2, "max", G_MAXFLOAT, &node->beta, error))
    return FALSE;
  /* min (max (x, min), max) is max everywhere when min > max */
  if (node->alpha > node->beta)
    node->alpha = node->beta;
  return TRUE;
}

/* Where on a constant condition: c ? a : b with a an activation (the
 * condition negated when X is the constant and Y the activation); the
 * condition becomes a float32 constant of 0 and 1. */
gboolean
cbi_onnx_add_where (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
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
  c_name = cbi_onnx_internal_name (im, n, "condition");
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
