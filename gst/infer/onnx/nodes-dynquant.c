/* cudabatchinfer: ONNX model import, dynamic quantization run in float32
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * onnxruntime's quantize_dynamic() writes each MatMul and Conv of a float
 * model as
 *
 *   DynamicQuantizeLinear (x) -> x_q, x_scale, x_zero
 *   Mul (x_scale, w_scale) -> scale
 *   MatMulInteger (x_q, w_q, x_zero, w_zero) (or ConvInteger) -> acc
 *   Cast (acc, to float) -> accf;  Mul (accf, scale) -> y
 *
 * x_scale and x_zero come from the minimum and maximum of the whole batch
 * tensor, so that a frame's result would depend on the frames batched
 * with it. The engine runs the chain as the float op it stands for, on
 * the activation itself and the weights dequantized once, at load:
 * y = x (w_q - w_zero) w_scale. It leaves out the activation's rounding
 * to 8 bits (the weights keep theirs), so its results differ from
 * onnxruntime's on the quantized file by that rounding, and match the
 * float op on the dequantized weights. DynamicQuantizeLinear's outputs
 * and the products along the chain are aliases here (CbiOnnxAlias),
 * resolved by the node that ends the chain; anything else reading them
 * is refused by name.
 */
#include "onnx/onnx-private.h"

#include <string.h>

typedef enum
{
  CBI_ONNX_ALIAS_QUANTIZED,     /* x_q: @source */
  CBI_ONNX_ALIAS_SCALE,         /* x_scale of @source */
  CBI_ONNX_ALIAS_ZERO,          /* x_zero of @source */
  CBI_ONNX_ALIAS_SCALES,        /* x_scale x the constant @factor */
  CBI_ONNX_ALIAS_PRODUCT,       /* acc (or accf): @source, the float op's
                                 * output, is acc x x_scale */
} CbiOnnxAliasKind;

struct _CbiOnnxAlias
{
  CbiOnnxAliasKind kind;
  gchar *source;
  gchar *factor;
  gboolean conv;
};

void
cbi_onnx_alias_free (CbiOnnxAlias * a)
{
  g_free (a->source);
  g_free (a->factor);
  g_free (a);
}

static void
cbi_onnx_alias (CbiImporter * im, const gchar * name, CbiOnnxAliasKind kind,
    const gchar * source, const gchar * factor, gboolean conv)
{
  CbiOnnxAlias *a = g_new0 (CbiOnnxAlias, 1);

  a->kind = kind;
  a->source = g_strdup (source);
  a->factor = g_strdup (factor);
  a->conv = conv;
  g_hash_table_replace (im->aliases, g_strdup (name), a);
}

static CbiOnnxAlias *
cbi_onnx_alias_of (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    CbiOnnxAliasKind kind)
{
  CbiOnnxAlias *a = i < n->n_input && n->input[i] ?
      g_hash_table_lookup (im->aliases, n->input[i]) : NULL;

  return a && a->kind == kind ? a : NULL;
}

/* Adds @op reading @inputs into @output, with @n's name and attributes. */
static gboolean
cbi_onnx_add_float_op (CbiImporter * im, const Onnx__NodeProto * n,
    const gchar * op, const gchar * a, const gchar * b, const gchar * output,
    GError ** error)
{
  Onnx__NodeProto copy = *n;
  gchar *inputs[2] = { (gchar *) a, (gchar *) b };
  gchar *outputs[1] = { (gchar *) output };

  copy.op_type = (gchar *) op;
  copy.domain = NULL;
  copy.n_input = 2;
  copy.input = inputs;
  copy.n_output = 1;
  copy.output = outputs;
  return cbi_onnx_add_node (im, &copy, error);
}

/* MatMulInteger, ConvInteger: the float op on the activation and the
 * weights less their zero points, into an internal tensor that the
 * chain's last Mul scales. */
static gboolean
cbi_onnx_add_integer_op (CbiImporter * im, const Onnx__NodeProto * n,
    gboolean conv, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const CbiOnnxAlias *xq = cbi_onnx_alias_of (im, n, 0,
      CBI_ONNX_ALIAS_QUANTIZED);
  const CbiOnnxAlias *xz = cbi_onnx_alias_of (im, n, 2,
      CBI_ONNX_ALIAS_ZERO);
  const CbiOnnxConst *w = n->n_input > 1 ? cbi_onnx_const (im,
      n->input[1]) : NULL;
  const CbiOnnxConst *wz = n->n_input > 3 && n->input[3] && *n->input[3] ?
      cbi_onnx_const (im, n->input[3]) : NULL;
  /* a zero point per output channel: the first axis of a Conv's weights,
   * the last of a MatMul's */
  const gint64 per = w == NULL ? 0 : conv ? w->count / MAX (w->dims[0], 1) : 1;
  const gint64 channels = w == NULL ? 0 : conv ? w->dims[0] :
      w->n_dims > 0 ? w->dims[w->n_dims - 1] : 1;
  CbiOnnxConst *f;
  gchar *w_name, *out;
  gboolean ok;
  gint64 i;

  if (xq == NULL || xz == NULL || g_strcmp0 (xq->source, xz->source) != 0)
    return cbi_onnx_fail (error, "node %s (%s): only an input quantized by "
        "DynamicQuantizeLinear, with its own zero point, is supported",
        name, n->op_type);
  if (w == NULL || !cbi_onnx_is_int (w->dtype) || w->n_dims < 1
      || (n->n_input > 3 && n->input[3] && *n->input[3] && (wz == NULL
              || !cbi_onnx_is_int (wz->dtype) || (wz->count != 1
                  && wz->count != channels))))
    return cbi_onnx_fail (error, "node %s (%s): the weights and their zero "
        "point must be integer constants, the zero point one value or one "
        "per output channel", name, n->op_type);
  f = cbi_onnx_const_new (ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, w->n_dims,
      w->dims, w->count);
  for (i = 0; i < w->count; i++) {
    const gint64 ch = conv ? i / per : i % channels;
    ((gfloat *) f->data)[i] = (gfloat) (cbi_onnx_get_i (w, i)
        - (wz ? cbi_onnx_get_i (wz, wz->count == 1 ? 0 : ch) : 0));
  }
  w_name = cbi_onnx_internal_name (im, n, "dequantized");
  out = cbi_onnx_internal_name (im, n, "float");
  ok = cbi_onnx_keep_const (im, w_name, f, error)
      && cbi_onnx_add_float_op (im, n, conv ? "Conv" : "MatMul", xq->source,
      w_name, out, error);
  if (ok)
    cbi_onnx_alias (im, n->output[0], CBI_ONNX_ALIAS_PRODUCT, out, NULL, conv);
  g_free (w_name);
  g_free (out);
  return ok;
}

/* The chain's last Mul: the float op's output times the weights' scale
 * (the activation's is in it already). */
static gboolean
cbi_onnx_add_rescale (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxAlias * acc, const CbiOnnxAlias * scales, GError ** error)
{
  const CbiOnnxConst *ws = cbi_onnx_const (im, scales->factor);
  CbiOnnxConst *f;
  gchar *ws_name;
  gboolean ok;
  gint64 i;

  if (ws == NULL || ws->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
    return cbi_onnx_fail (error, "node %s (Mul): the weights' scale %s must "
        "be a float32 constant", cbi_onnx_name (n->name), scales->factor);
  /* one per output channel: along a Conv's channels, a MatMul's columns */
  f = cbi_onnx_const_new (ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
      acc->conv && ws->count > 1 ? 3 : ws->n_dims, ws->dims, ws->count);
  if (acc->conv && ws->count > 1) {
    f->dims[0] = ws->count;
    f->dims[1] = f->dims[2] = 1;
  }
  for (i = 0; i < ws->count; i++)
    ((gfloat *) f->data)[i] = ((const gfloat *) ws->data)[i];
  ws_name = cbi_onnx_internal_name (im, n, "weight_scale");
  ok = cbi_onnx_keep_const (im, ws_name, f, error)
      && cbi_onnx_add_float_op (im, n, "Mul", acc->source, ws_name,
      n->output[0], error);
  g_free (ws_name);
  return ok;
}

gboolean
cbi_onnx_add_dynamic_quant (CbiImporter * im, const Onnx__NodeProto * n,
    gboolean * handled, GError ** error)
{
  const gchar *op = n->op_type ? n->op_type : "";
  const CbiOnnxAlias *a, *b;
  gsize i;

  /* a node without outputs is the op table's to refuse */
  *handled = n->n_output > 0 && n->output[0] != NULL;
  if (!*handled)
    return TRUE;
  if (strcmp (op, "DynamicQuantizeLinear") == 0) {
    if (n->n_input < 1 || cbi_onnx_lookup (im, n->input[0]) < 0
        || cbi_graph_tensor (im->graph, cbi_onnx_lookup (im,
                n->input[0]))->data != NULL)
      return cbi_onnx_fail (error, "node %s (DynamicQuantizeLinear): only "
          "an activation's quantization is supported", cbi_onnx_name (n->name));
    for (i = 0; i < n->n_output && i < 3; i++)
      if (n->output[i] && *n->output[i])
        cbi_onnx_alias (im, n->output[i], CBI_ONNX_ALIAS_QUANTIZED + i,
            n->input[0], NULL, FALSE);
    return TRUE;
  }
  if (strcmp (op, "MatMulInteger") == 0 || strcmp (op, "ConvInteger") == 0)
    return cbi_onnx_add_integer_op (im, n, op[0] == 'C', error);
  if (strcmp (op, "Cast") == 0
      && (a = cbi_onnx_alias_of (im, n, 0, CBI_ONNX_ALIAS_PRODUCT))) {
    if (cbi_onnx_int (n, "to", 0) != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
      return cbi_onnx_fail (error, "node %s (Cast): an integer product is "
          "only supported cast to float", cbi_onnx_name (n->name));
    cbi_onnx_alias (im, n->output[0], a->kind, a->source, NULL, a->conv);
    return TRUE;
  }
  if (strcmp (op, "Mul") == 0 && n->n_input == 2) {
    for (i = 0; i < 2; i++) {
      /* x_scale x the weights' scale, either way round */
      if ((a = cbi_onnx_alias_of (im, n, i, CBI_ONNX_ALIAS_SCALE))
          && cbi_onnx_const (im, n->input[1 - i])) {
        cbi_onnx_alias (im, n->output[0], CBI_ONNX_ALIAS_SCALES, a->source,
            n->input[1 - i], FALSE);
        return TRUE;
      }
      if ((a = cbi_onnx_alias_of (im, n, i, CBI_ONNX_ALIAS_PRODUCT))
          && (b = cbi_onnx_alias_of (im, n, 1 - i, CBI_ONNX_ALIAS_SCALES)))
        return cbi_onnx_add_rescale (im, n, a, b, error);
    }
  }
  /* anything else reading the chain's values */
  for (i = 0; i < n->n_input; i++)
    if (n->input[i] && g_hash_table_contains (im->aliases, n->input[i]))
      return cbi_onnx_fail (error, "node %s (%s) reads %s, a value of a "
          "dynamic quantization; only onnxruntime's quantize_dynamic() "
          "chain (DynamicQuantizeLinear, MatMulInteger or ConvInteger, "
          "Cast, Mul) is supported", cbi_onnx_name (n->name), op, n->input[i]);
  *handled = FALSE;
  return TRUE;
}
