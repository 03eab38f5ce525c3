/* cudabatchinfer: ONNX model import, constant folding: the ops that
 * compute values
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Arithmetic, comparison, Cast, Range, ScatterND and the (de)quantization
 * of weights,
 * on constants only (fold.c has the dispatch). float32 is computed
 * in float32, as onnxruntime does, so folded weights are the ones it
 * would use; integers in int64 with every overflow, division by zero and
 * out-of-range cast refused with the node's name, never wrapped silently
 * past int64.
 */
#include "onnx/onnx-private.h"

#include <math.h>
#include <string.h>

#define FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define INT32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define INT8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define UINT8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

static gboolean
cbi_onnx_math_fail (const Onnx__NodeProto * n, const gchar * what,
    GError ** error)
{
  return cbi_onnx_fail (error, "node %s (%s): %s", cbi_onnx_name (n->name),
      n->op_type, what);
}

/* Whether @v fits integer type @dtype (int64 always). */
static gboolean
cbi_onnx_fits (gint dtype, gint64 v)
{
  switch (dtype) {
    case INT32:
      return v >= G_MININT32 && v <= G_MAXINT32;
    case INT8:
      return v >= G_MININT8 && v <= G_MAXINT8;
    case UINT8:
      return v >= 0 && v <= G_MAXUINT8;
    default:
      return TRUE;
  }
}

/* @b to the power @e, integers, by squaring; fails on overflow or a
 * negative exponent. */
static gboolean
cbi_onnx_ipow (gint64 b, gint64 e, gint64 * r)
{
  gint64 acc = 1;

  if (e < 0)
    return FALSE;
  while (e > 0) {
    if ((e & 1) && __builtin_mul_overflow (acc, b, &acc))
      return FALSE;
    e >>= 1;
    if (e > 0 && __builtin_mul_overflow (b, b, &b))
      return FALSE;
  }
  *r = acc;
  return TRUE;
}

static gfloat
cbi_onnx_farith (gchar op, gfloat a, gfloat b)
{
  switch (op) {
    case 'A':
      return a + b;
    case 'S':
      return a - b;
    case 'M':
      return a * b;
    case 'D':
      return a / b;
    case 'R':
    case 'F':
      return fmodf (a, b);
    default:
      return powf (a, b);
  }
}

/* Integer @a op @b into @r; FALSE with a reason on overflow or division
 * by zero. */
static gboolean
cbi_onnx_iarith (gchar op, gint64 a, gint64 b, gint64 * r, const gchar ** why)
{
  gboolean over;

  *why = "an integer overflow";
  switch (op) {
    case 'A':
      over = __builtin_add_overflow (a, b, r);
      break;
    case 'S':
      over = __builtin_sub_overflow (a, b, r);
      break;
    case 'M':
      over = __builtin_mul_overflow (a, b, r);
      break;
    case 'D':
      if (b == 0) {
        *why = "an integer division by zero";
        return FALSE;
      }
      over = a == G_MININT64 && b == -1;
      if (!over)
        *r = a / b;
      break;
    case 'R':
    case 'F':
      if (b == 0) {
        *why = "an integer division by zero";
        return FALSE;
      }
      /* G_MININT64 % -1 overflows in C; its remainder is 0 */
      *r = b == -1 ? 0 : a % b;
      /* Mod's default takes the divisor's sign, as Python's %; fmod 1
       * the dividend's, as C's */
      if (op == 'R' && *r != 0 && ((*r < 0) != (b < 0)))
        *r += b;
      over = FALSE;
      break;
    default:
      if (b < 0)
        *why = "an integer power with a negative exponent";
      over = !cbi_onnx_ipow (a, b, r);
      break;
  }
  return !over;
}

/* The output of an element-wise node over @n_in inputs broadcast as numpy
 * does, of type @dtype, and the walk that reads each input at each of its
 * values. */
static gboolean
cbi_onnx_fold_new_broadcast (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, gint dtype,
    CbiOnnxConst ** out, CbiOnnxWalk * w, GError ** error)
{
  gint64 dims[CBI_MAX_DIMS];
  gint n_dims;
  guint k;

  if (!cbi_onnx_fold_broadcast (n, in, n_in, &n_dims, dims, error)
      || !cbi_onnx_fold_new (im, n, dtype, n_dims, dims, out, error))
    return FALSE;
  cbi_onnx_walk_init (w, n_dims, dims);
  for (k = 0; k < n_in; k++)
    cbi_onnx_walk_broadcast (w, k, in[k]);
  return TRUE;
}

/* Add, Sub, Mul, Div, Mod and Pow, broadcast as numpy does. Pow may take
 * an exponent of another type: the result has the base's. */
gboolean
cbi_onnx_fold_arith (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gchar op = strcmp (n->op_type, "Pow") == 0 ? 'P' : n->op_type[0];
  gint dtype;
  gint64 i;
  CbiOnnxWalk w;

  if (strcmp (n->op_type, "Mod") == 0)
    op = cbi_onnx_int (n, "fmod", 0) ? 'F' : 'R';
  if (in[0] == NULL || in[1] == NULL)
    return cbi_onnx_math_fail (n, "two inputs expected", error);
  dtype = in[0]->dtype;
  if (op == 'R' && dtype == FLOAT)
    return cbi_onnx_math_fail (n, "a float Mod needs fmod 1", error);
  if (dtype == BOOL || in[1]->dtype == BOOL
      || (op != 'P' && in[1]->dtype != dtype))
    return cbi_onnx_math_fail (n, "its inputs must be numbers of one type",
        error);
  if (!cbi_onnx_fold_new_broadcast (im, n, in, 2, dtype, out, &w, error))
    return FALSE;
  for (i = 0; i < (*out)->count; i++, cbi_onnx_walk_next (&w)) {
    const gchar *why;
    gint64 r;
    if (dtype == FLOAT) {
      ((gfloat *) (*out)->data)[i] = cbi_onnx_farith (op,
          ((const gfloat *) in[0]->data)[w.off[0]],
          (gfloat) cbi_onnx_get_f (in[1], w.off[1]));
      continue;
    }
    if (in[1]->dtype == FLOAT) {
      /* an integer base to a float power: through double, in range */
      gdouble v = pow ((gdouble) cbi_onnx_get_i (in[0], w.off[0]),
          cbi_onnx_get_f (in[1], w.off[1]));
      if (!(v >= -9.2e18 && v <= 9.2e18))
        why = "an integer overflow";
      else if (cbi_onnx_fits (dtype, (gint64) v))
        why = NULL;
      else
        why = "an integer overflow";
      r = why ? 0 : (gint64) v;
    } else if (!cbi_onnx_iarith (op, cbi_onnx_get_i (in[0], w.off[0]),
            cbi_onnx_get_i (in[1], w.off[1]), &r, &why)) {
      r = 0;
    } else {
      why = cbi_onnx_fits (dtype, r) ? NULL : "an integer overflow";
    }
    if (why) {
      g_clear_pointer (out, cbi_onnx_const_free);
      return cbi_onnx_math_fail (n, why, error);
    }
    cbi_onnx_set_i (*out, i, r);
  }
  return TRUE;
}

/* Sqrt (float32), Neg (float32 or signed integers) and Not (bool) */
gboolean
cbi_onnx_fold_unary (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gboolean neg = strcmp (n->op_type, "Neg") == 0;
  const CbiOnnxConst *x = in[0];
  gint64 i;

  if (strcmp (n->op_type, "Not") == 0) {
    if (x == NULL || x->dtype != BOOL)
      return cbi_onnx_math_fail (n, "its input must be bool", error);
    if (!cbi_onnx_fold_new (im, n, BOOL, x->n_dims, x->dims, out, error))
      return FALSE;
    for (i = 0; i < x->count; i++)
      ((guint8 *) (*out)->data)[i] = !((const guint8 *) x->data)[i];
    return TRUE;
  }

  if (x == NULL || !(x->dtype == FLOAT || (neg && x->dtype != BOOL
              && x->dtype != UINT8)))
    return cbi_onnx_math_fail (n, neg ? "its input must be float32 or a "
        "signed integer" : "its input must be float32", error);
  if (!cbi_onnx_fold_new (im, n, x->dtype, x->n_dims, x->dims, out, error))
    return FALSE;
  for (i = 0; i < x->count; i++) {
    if (x->dtype == FLOAT) {
      gfloat v = ((const gfloat *) x->data)[i];
      ((gfloat *) (*out)->data)[i] = neg ? -v : sqrtf (v);
    } else {
      gint64 v = cbi_onnx_get_i (x, i);
      if (v == G_MININT64 || !cbi_onnx_fits (x->dtype, -v)) {
        g_clear_pointer (out, cbi_onnx_const_free);
        return cbi_onnx_math_fail (n, "an integer overflow", error);
      }
      cbi_onnx_set_i (*out, i, -v);
    }
  }
  return TRUE;
}

gboolean
cbi_onnx_fold_equal (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gint64 i;
  CbiOnnxWalk w;

  if (in[0] == NULL || in[1] == NULL || in[0]->dtype != in[1]->dtype)
    return cbi_onnx_math_fail (n, "two inputs of one type expected", error);
  if (!cbi_onnx_fold_new_broadcast (im, n, in, 2, BOOL, out, &w, error))
    return FALSE;
  for (i = 0; i < (*out)->count; i++, cbi_onnx_walk_next (&w)) {
    gboolean eq = in[0]->dtype == FLOAT ?
        ((const gfloat *) in[0]->data)[w.off[0]] ==
        ((const gfloat *) in[1]->data)[w.off[1]] :
        cbi_onnx_get_i (in[0], w.off[0]) == cbi_onnx_get_i (in[1], w.off[1]);
    ((guint8 *) (*out)->data)[i] = eq;
  }
  return TRUE;
}

gboolean
cbi_onnx_fold_where (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gint64 i;
  gsize size;
  CbiOnnxWalk w;

  if (in[0] == NULL || in[1] == NULL || in[2] == NULL
      || in[0]->dtype != BOOL || in[1]->dtype != in[2]->dtype)
    return cbi_onnx_math_fail (n, "a bool condition and two inputs of one "
        "type expected", error);
  if (!cbi_onnx_fold_new_broadcast (im, n, in, 3, in[1]->dtype, out, &w, error))
    return FALSE;
  size = cbi_onnx_dtype_size (in[1]->dtype);
  for (i = 0; i < (*out)->count; i++, cbi_onnx_walk_next (&w)) {
    gint k = ((const guint8 *) in[0]->data)[w.off[0]] ? 1 : 2;
    memcpy ((guint8 *) (*out)->data + i * size,
        (const guint8 *) in[k]->data + w.off[k] * size, size);
  }
  return TRUE;
}

gboolean
cbi_onnx_fold_cast (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gint64 to = cbi_onnx_int (n, "to", 0), i;
  const CbiOnnxConst *x = in[0];

  if (x == NULL)
    return cbi_onnx_math_fail (n, "no input", error);
  if (to < 0 || to > G_MAXINT || cbi_onnx_dtype_size ((gint) to) == 0)
    return cbi_onnx_fail (error, "node %s (Cast): casting to %s is not "
        "supported (float32, int64, int32, int8, uint8, bool are)",
        cbi_onnx_name (n->name), cbi_onnx_dtype_name ((gint) to));
  if (!cbi_onnx_fold_new (im, n, (gint) to, x->n_dims, x->dims, out, error))
    return FALSE;
  for (i = 0; i < x->count; i++) {
    if (to == FLOAT) {
      ((gfloat *) (*out)->data)[i] = (gfloat) cbi_onnx_get_f (x, i);
    } else if (x->dtype == FLOAT) {
      gfloat v = ((const gfloat *) x->data)[i];
      if (to == BOOL) {
        cbi_onnx_set_i (*out, i, v != 0.0f);
      } else if (!(v > -9.2e18f && v < 9.2e18f)) {
        g_clear_pointer (out, cbi_onnx_const_free);
        return cbi_onnx_math_fail (n, "a value that is not a finite "
            "integer of int64's range", error);
      } else {
        cbi_onnx_set_i (*out, i, (gint64) v);
      }
    } else {
      cbi_onnx_set_i (*out, i, cbi_onnx_get_i (x, i));
    }
  }
  return TRUE;
}

/* Range: max (ceil ((limit - start) / delta), 0) values, each the one
 * before plus delta, as onnxruntime accumulates them */
gboolean
cbi_onnx_fold_range (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gint dtype = in[0] ? in[0]->dtype : 0;
  gint64 dims[1], i;
  guint k;

  for (k = 0; k < 3; k++)
    if (in[k] == NULL || in[k]->count != 1 || in[k]->dtype != dtype)
      return cbi_onnx_math_fail (n, "start, limit and delta must be "
          "scalars of one type", error);
  if (dtype == FLOAT) {
    gfloat start = ((const gfloat *) in[0]->data)[0];
    gfloat delta = ((const gfloat *) in[2]->data)[0];
    gdouble count = ceil (((gdouble) ((const gfloat *) in[1]->data)[0] -
            start) / delta);
    if (!(count < (gdouble) CBI_ONNX_FOLD_MAX_ELEMENTS) || delta == 0.0f)
      return cbi_onnx_math_fail (n, "a delta of 0, or too many values", error);
    dims[0] = count > 0 ? (gint64) count : 0;
    if (!cbi_onnx_fold_new (im, n, dtype, 1, dims, out, error))
      return FALSE;
    for (i = 0; i < dims[0]; i++, start += delta)
      ((gfloat *) (*out)->data)[i] = start;
  } else if (dtype == INT64 || dtype == INT32) {
    gint64 start = cbi_onnx_get_i (in[0], 0), delta = cbi_onnx_get_i (in[2],
        0), diff;
    if (delta == 0)
      return cbi_onnx_math_fail (n, "a delta of 0", error);
    if (__builtin_sub_overflow (cbi_onnx_get_i (in[1], 0), start, &diff)
        || (diff == G_MININT64 && delta == -1))
      return cbi_onnx_math_fail (n, "an integer overflow in limit - start",
          error);
    dims[0] = diff / delta + (diff % delta != 0);
    dims[0] = MAX (dims[0], 0);
    if (!cbi_onnx_fold_new (im, n, dtype, 1, dims, out, error))
      return FALSE;
    for (i = 0; i < dims[0]; i++)
      cbi_onnx_set_i (*out, i, start + i * delta);
  } else {
    return cbi_onnx_math_fail (n, "only float32, int64 and int32 ranges are "
        "supported", error);
  }
  return TRUE;
}

/* The scale's (and zero point's) index for each value of @x: one for all,
 * or one per index of axis @axis. Sets @axis_len to 1 or that
 * dimension's length and @inner to the values of one index, and makes
 * *@out, of @x's shape and type @dtype. */
static gboolean
cbi_onnx_quant_layout (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * x, const CbiOnnxConst * scale,
    const CbiOnnxConst * zero, gint dtype, gint64 * axis_len, gint64 * inner,
    CbiOnnxConst ** out, GError ** error)
{
  gint64 axis = cbi_onnx_int (n, "axis", 1);
  gint d;

  if (cbi_onnx_int (n, "block_size", 0) != 0)
    return cbi_onnx_math_fail (n, "blocked quantization is not supported",
        error);
  if (scale->dtype != FLOAT)
    return cbi_onnx_math_fail (n, "the scale must be float32", error);
  if (zero && (zero->n_dims != scale->n_dims || zero->count != scale->count))
    return cbi_onnx_math_fail (n, "the zero point and the scale differ in "
        "shape", error);
  *axis_len = 1;
  *inner = x->count;
  if (scale->n_dims == 0 || (scale->n_dims == 1 && scale->count == 1))
    return cbi_onnx_fold_new (im, n, dtype, x->n_dims, x->dims, out, error);
  if (axis < -x->n_dims || axis >= x->n_dims || scale->n_dims != 1
      || scale->count != x->dims[axis < 0 ? axis + x->n_dims : axis])
    return cbi_onnx_math_fail (n, "the scale must be a scalar or hold one "
        "value per index of the axis", error);
  if (axis < 0)
    axis += x->n_dims;
  *axis_len = x->dims[axis];
  *inner = 1;
  for (d = axis + 1; d < x->n_dims; d++)
    *inner *= x->dims[d];
  return cbi_onnx_fold_new (im, n, dtype, x->n_dims, x->dims, out, error);
}

/* DequantizeLinear of a constant: (x - zero point) * scale, per tensor or
 * per axis, to float32 */
gboolean
cbi_onnx_fold_dequantize (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const CbiOnnxConst *x = in[0], *scale = in[1];
  const CbiOnnxConst *zero = n_in > 2 ? in[2] : NULL;
  gint64 axis_len, inner, i;

  gint64 output_dtype = cbi_onnx_int (n, "output_dtype", FLOAT);

  if (x == NULL || scale == NULL || !(x->dtype == UINT8 || x->dtype == INT8
          || x->dtype == INT32) || (zero && zero->dtype != x->dtype)
      || (output_dtype != FLOAT && output_dtype != 0))
    return cbi_onnx_math_fail (n, "x must be uint8, int8 or int32 with a "
        "zero point of its type, the output float32", error);
  if (!cbi_onnx_quant_layout (im, n, x, scale, zero, FLOAT, &axis_len, &inner,
          out, error))
    return FALSE;
  for (i = 0; i < x->count; i++) {
    gint64 q = inner ? i / inner % axis_len : 0;
    gint64 v = cbi_onnx_get_i (x, i) - (zero ? cbi_onnx_get_i (zero, q) : 0);
    ((gfloat *) (*out)->data)[i] = (gfloat) v *
        ((const gfloat *) scale->data)[q];
  }
  return TRUE;
}

/* QuantizeLinear of a constant: saturate (round (x / scale) + zero
 * point), rounding half to even, to the zero point's type (uint8 when
 * there is none) */
gboolean
cbi_onnx_fold_quantize (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const CbiOnnxConst *x = in[0], *scale = in[1];
  const CbiOnnxConst *zero = n_in > 2 ? in[2] : NULL;
  gint64 output_dtype = cbi_onnx_int (n, "output_dtype", 0);
  gint dtype = zero ? zero->dtype : output_dtype ? (gint) output_dtype : UINT8;
  gint64 axis_len, inner, i;
  gint lo = dtype == INT8 ? G_MININT8 : 0;
  gint hi = dtype == INT8 ? G_MAXINT8 : G_MAXUINT8;

  if (x == NULL || scale == NULL || x->dtype != FLOAT
      || (dtype != UINT8 && dtype != INT8)
      || (output_dtype && output_dtype != dtype))
    return cbi_onnx_math_fail (n, "x must be float32 and the zero point "
        "(or output_dtype) uint8 or int8", error);
  if (!cbi_onnx_quant_layout (im, n, x, scale, zero, dtype, &axis_len, &inner,
          out, error))
    return FALSE;
  for (i = 0; i < x->count; i++) {
    gint64 q = inner ? i / inner % axis_len : 0;
    gfloat v = nearbyintf (((const gfloat *) x->data)[i] /
        ((const gfloat *) scale->data)[q]);
    gfloat z = zero ? (gfloat) cbi_onnx_get_i (zero, q) : 0.0f;
    /* NaN goes to the zero point's floor, as a clamp of NaN would */
    v = isnan (v) ? lo : CLAMP (v + z, lo, hi);
    cbi_onnx_set_i (*out, i, (gint64) v);
  }
  return TRUE;
}

/* Combines @v into value @i of @out as ScatterND's @reduction says: 'n'
 * (none) replaces it, 'a' adds, 'm' multiplies, '>' and '<' keep the
 * larger and the smaller. */
static void
cbi_onnx_scatter_one (CbiOnnxConst * out, gint64 i, gchar reduction,
    const CbiOnnxConst * updates, gint64 u)
{
  if (out->dtype == FLOAT) {
    gfloat *o = (gfloat *) out->data + i;
    gfloat v = ((const gfloat *) updates->data)[u];
    *o = reduction == 'a' ? *o + v : reduction == 'm' ? *o * v :
        reduction == '>' ? MAX (*o, v) : reduction == '<' ? MIN (*o, v) : v;
  } else {
    gint64 o = cbi_onnx_get_i (out, i), v = cbi_onnx_get_i (updates, u);
    /* integers wrap as their type does, as onnxruntime's */
    cbi_onnx_set_i (out, i, reduction == 'a' ? (gint64) ((guint64) o +
            (guint64) v) : reduction == 'm' ? (gint64) ((guint64) o *
            (guint64) v) : reduction == '>' ? MAX (o, v) :
        reduction == '<' ? MIN (o, v) : v);
  }
}

/* ScatterND: data, with the slices that @indices (int64, its last axis a
 * position in data's first dimensions) name replaced by (or, with a
 * reduction, combined with) those of @updates, in order. */
gboolean
cbi_onnx_fold_scatter_nd (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const CbiOnnxConst *data = in[0], *idx = in[1], *up = in[2];
  gchar *reduction;
  gchar red;
  gint64 k, rows = 1, slice = 1, j, s, strides[CBI_MAX_DIMS];
  gint d;

  if (data == NULL || idx == NULL || up == NULL || idx->dtype != INT64
      || up->dtype != data->dtype || data->dtype == BOOL || idx->n_dims < 1)
    return cbi_onnx_math_fail (n, "data, int64 indices and updates of "
        "data's type expected", error);
  k = idx->dims[idx->n_dims - 1];
  if (k < 1 || k > data->n_dims)
    return cbi_onnx_math_fail (n, "an index longer than data's rank", error);
  for (d = 0; d < idx->n_dims - 1; d++)
    rows *= idx->dims[d];
  for (d = k; d < data->n_dims; d++)
    slice *= data->dims[d];
  /* updates: indices' shape less its last axis, then the slice's */
  if (up->n_dims != idx->n_dims - 1 + data->n_dims - k
      || up->count != rows * slice)
    return cbi_onnx_math_fail (n, "updates do not have the shape the "
        "indices and data give", error);
  for (d = 0; d < up->n_dims; d++)
    if (up->dims[d] != (d < idx->n_dims - 1 ? idx->dims[d] :
            data->dims[k + d - (idx->n_dims - 1)]))
      return cbi_onnx_math_fail (n, "updates do not have the shape the "
          "indices and data give", error);
  reduction = cbi_onnx_string (n, "reduction", "none");
  red = strcmp (reduction, "none") == 0 ? 'n' : strcmp (reduction,
      "add") == 0 ? 'a' : strcmp (reduction, "mul") == 0 ? 'm' :
      strcmp (reduction, "max") == 0 ? '>' : strcmp (reduction,
      "min") == 0 ? '<' : 0;
  g_free (reduction);
  if (red == 0)
    return cbi_onnx_math_fail (n, "an unknown reduction", error);
  strides[data->n_dims - 1] = 1;
  for (d = data->n_dims - 2; d >= 0; d--)
    strides[d] = strides[d + 1] * data->dims[d + 1];
  if (!cbi_onnx_fold_new (im, n, data->dtype, data->n_dims, data->dims, out,
          error))
    return FALSE;
  memcpy ((*out)->data, data->data,
      data->count * cbi_onnx_dtype_size (data->dtype));
  for (j = 0; j < rows; j++) {
    gint64 offset = 0;
    for (d = 0; d < k; d++) {
      gint64 v = ((const gint64 *) idx->data)[j * k + d];
      if (v < 0)
        v += data->dims[d];
      if (v < 0 || v >= data->dims[d]) {
        g_clear_pointer (out, cbi_onnx_const_free);
        return cbi_onnx_math_fail (n, "an index out of range", error);
      }
      offset += v * strides[d];
    }
    for (s = 0; s < slice; s++)
      cbi_onnx_scatter_one (*out, offset + s, red, up, j * slice + s);
  }
  return TRUE;
}
