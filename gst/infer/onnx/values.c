/* cudabatchinfer: ONNX model import, the values of constants: walks
 * over broadcast shapes, new folded outputs, values read and written as
 * any type (for fold.c and foldmath.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "onnx/onnx-private.h"

#include <string.h>

void
cbi_onnx_walk_init (CbiOnnxWalk * w, gint n_dims, const gint64 * dims)
{
  memset (w, 0, sizeof (*w));
  w->n_dims = n_dims;
  if (n_dims > 0)
    memcpy (w->dims, dims, n_dims * sizeof (gint64));
}

void
cbi_onnx_walk_broadcast (CbiOnnxWalk * w, gint k, const CbiOnnxConst * c)
{
  gint64 stride = 1;
  gint d;

  /* an empty input makes an empty walk: its dimensions, which may be
   * large around the 0, need no strides */
  for (d = c->n_dims - 1; d >= 0 && c->count > 0; d--) {
    gint o = w->n_dims - c->n_dims + d;
    w->strides[k][o] = c->dims[d] == 1 ? 0 : stride;
    stride *= c->dims[d];
  }
}

void
cbi_onnx_walk_next (CbiOnnxWalk * w)
{
  gint d, k;

  for (d = w->n_dims - 1; d >= 0; d--) {
    w->idx[d]++;
    for (k = 0; k < 3; k++)
      w->off[k] += w->strides[k][d];
    if (w->idx[d] < w->dims[d])
      return;
    for (k = 0; k < 3; k++)
      w->off[k] -= w->strides[k][d] * w->dims[d];
    w->idx[d] = 0;
  }
}

gboolean
cbi_onnx_fold_broadcast (const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, gint * n_dims, gint64 * dims,
    GError ** error)
{
  guint k;
  gint d;

  *n_dims = 0;
  for (k = 0; k < n_in; k++)
    *n_dims = MAX (*n_dims, in[k]->n_dims);
  for (d = 0; d < *n_dims; d++)
    dims[d] = 1;
  for (k = 0; k < n_in; k++) {
    for (d = 0; d < in[k]->n_dims; d++) {
      gint o = *n_dims - in[k]->n_dims + d;
      gint64 v = in[k]->dims[d];
      if (v == dims[o] || v == 1)
        continue;
      if (dims[o] != 1)
        return cbi_onnx_fail (error, "node %s (%s): its inputs' shapes do "
            "not broadcast (%" G_GINT64_FORMAT " against %" G_GINT64_FORMAT
            " in dimension %d)", cbi_onnx_name (n->name), n->op_type, v,
            dims[o], o);
      dims[o] = v;
    }
  }
  return TRUE;
}

gboolean
cbi_onnx_fold_new (CbiImporter * im, const Onnx__NodeProto * n, gint dtype,
    gint n_dims, const gint64 * dims, CbiOnnxConst ** out, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gint64 count = 1, bytes;
  gint d;

  if (n_dims > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "node %s (%s): its output would have %d "
        "dimensions; at most %d are supported", name, n->op_type, n_dims,
        CBI_MAX_DIMS);
  for (d = 0; d < n_dims; d++) {
    if (dims[d] < 0)
      return cbi_onnx_fail (error, "node %s (%s): its output would have a "
          "negative dimension", name, n->op_type);
    if (dims[d] > 0 && count > CBI_ONNX_FOLD_MAX_ELEMENTS / dims[d])
      return cbi_onnx_fail (error, "node %s (%s): its output is too large "
          "to fold (over %" G_GINT64_FORMAT " values)", name, n->op_type,
          CBI_ONNX_FOLD_MAX_ELEMENTS);
    count *= dims[d];
  }
  bytes = count * (gint64) MAX (cbi_onnx_dtype_size (dtype), 4);
  if (bytes > im->fold_budget - im->folded_bytes)
    return cbi_onnx_fail (error, "node %s (%s): %s needs more than %"
        G_GINT64_FORMAT " MiB", name, n->op_type,
        im->fold_budget == CBI_ONNX_FOLD_BUDGET ? "folding the model's "
        "constants" : "computing the values that follow the input's size",
        im->fold_budget >> 20);
  im->folded_bytes += bytes;
  *out = cbi_onnx_const_new (dtype, n_dims, dims, count);
  return TRUE;
}

gboolean
cbi_onnx_is_int (gint dtype)
{
  return dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT64
      || dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT32
      || dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT8
      || dtype == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
}

gint64
cbi_onnx_get_i (const CbiOnnxConst * c, gint64 i)
{
  switch (c->dtype) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
      return ((const gint64 *) c->data)[i];
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
      return ((const gint32 *) c->data)[i];
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
      return ((const gint8 *) c->data)[i];
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:{
      /* callers convert floats themselves; this only keeps C defined */
      gfloat v = ((const gfloat *) c->data)[i];
      return v > -9.2e18f && v < 9.2e18f ? (gint64) v : 0;
    }
    default:                   /* uint8, bool */
      return ((const guint8 *) c->data)[i];
  }
}

gdouble
cbi_onnx_get_f (const CbiOnnxConst * c, gint64 i)
{
  if (c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
    return ((const gfloat *) c->data)[i];
  return (gdouble) cbi_onnx_get_i (c, i);
}

void
cbi_onnx_set_i (CbiOnnxConst * c, gint64 i, gint64 v)
{
  switch (c->dtype) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
      ((gint64 *) c->data)[i] = v;
      break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
      ((gint32 *) c->data)[i] = (gint32) (guint32) v;
      break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
      ((guint8 *) c->data)[i] = v != 0;
      break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
      ((gfloat *) c->data)[i] = (gfloat) v;
      break;
    default:                   /* uint8, int8 */
      ((guint8 *) c->data)[i] = (guint8) v;
      break;
  }
}
