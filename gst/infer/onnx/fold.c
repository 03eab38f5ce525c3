/* cudabatchinfer: ONNX model import, constant folding
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Exporters write subgraphs on constants: a Reshape of two initializers,
 * a shape computed by Shape, Gather, Unsqueeze and Concat, weights stored
 * as uint8 and a DequantizeLinear. Each node whose inputs are all
 * constants is computed here once, at load, in plain C, and its output
 * becomes a constant, so that node translation sees only activations and
 * constants. The sizes come from the file, so every one is checked (rank,
 * element count, the folding budget, indices, axes) and a bad one fails
 * with the node's name. This file has the dispatch and the ops that move
 * values; foldmath.c those that compute them, values.c what both read
 * and write values with.
 */
#include "onnx/onnx-private.h"

#include <string.h>

/* Axis @axis of a rank-@rank tensor, negative ones counted from the end,
 * into @out; fails naming node @n when it is out of range. */
static gboolean
cbi_onnx_fold_axis (const Onnx__NodeProto * n, gint64 axis, gint rank,
    gint * out, GError ** error)
{
  *out = 0;
  if (axis < -rank || axis >= rank)
    return cbi_onnx_fail (error, "node %s (%s): axis %" G_GINT64_FORMAT
        " is outside a tensor of %d dimensions", cbi_onnx_name (n->name),
        n->op_type, axis, rank);
  *out = (gint) (axis < 0 ? axis + rank : axis);
  return TRUE;
}

/* The integer values of constant @c (int64 or int32, at most @max of
 * them) into @values and @count. */
static gboolean
cbi_onnx_fold_ints (const Onnx__NodeProto * n, const CbiOnnxConst * c,
    const gchar * what, gint64 max, gint64 * values, gint * count,
    GError ** error)
{
  gint64 i;

  if (c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64
      && c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
    return cbi_onnx_fail (error, "node %s (%s): %s must be int64, not %s",
        cbi_onnx_name (n->name), n->op_type, what,
        cbi_onnx_dtype_name (c->dtype));
  if (c->n_dims > 1 || c->count > max)
    return cbi_onnx_fail (error, "node %s (%s): %s must be a list of at "
        "most %" G_GINT64_FORMAT " values", cbi_onnx_name (n->name),
        n->op_type, what, max);
  for (i = 0; i < c->count; i++)
    values[i] = cbi_onnx_get_i (c, i);
  *count = (gint) c->count;
  return TRUE;
}

/* The axes of Unsqueeze and Squeeze (at most CBI_MAX_DIMS): input @i from
 * @opset on, the attribute before. None given: @count is -1. */
static gboolean
cbi_onnx_fold_axes_arg (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, guint i, gint64 opset,
    gint64 * values, gint * count, GError ** error)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, "axes");

  *count = -1;
  if (im->opset >= opset) {
    if (n_in > i && in[i])
      return cbi_onnx_fold_ints (n, in[i], "axes", CBI_MAX_DIMS, values,
          count, error);
    return TRUE;
  }
  if (a == NULL)
    return TRUE;
  if (a->n_ints > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "node %s (%s): %" G_GSIZE_FORMAT " axes; "
        "at most %d are supported", cbi_onnx_name (n->name), n->op_type,
        a->n_ints, CBI_MAX_DIMS);
  if (a->n_ints > 0)
    memcpy (values, a->ints, a->n_ints * sizeof (gint64));
  *count = (gint) a->n_ints;
  return TRUE;
}

/* Input @i, required: fails naming node @n when it is absent. */
static gboolean
cbi_onnx_fold_need (const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, guint i, GError ** error)
{
  if (i < n_in && in[i])
    return TRUE;
  return cbi_onnx_fail (error, "node %s (%s): input %u is missing",
      cbi_onnx_name (n->name), n->op_type, i);
}

/* Copies the values of @in that a walk with input 0's strides reads into
 * @out, in order. */
static void
cbi_onnx_fold_copy_walk (const CbiOnnxConst * in, CbiOnnxConst * out,
    CbiOnnxWalk * w)
{
  gsize size = cbi_onnx_dtype_size (in->dtype);
  gint64 i;

  for (i = 0; i < out->count; i++) {
    memcpy ((guint8 *) out->data + i * size,
        (const guint8 *) in->data + w->off[0] * size, size);
    cbi_onnx_walk_next (w);
  }
}

/* A copy of @in with the dimensions @dims. */
static gboolean
cbi_onnx_fold_redim (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * in, gint n_dims, const gint64 * dims,
    CbiOnnxConst ** out, GError ** error)
{
  gint64 count = 1;
  gint d;

  /* checked before anything is allocated: a product past the input's
   * count stops at one more */
  for (d = 0; d < n_dims; d++)
    if (dims[d] <= 0)
      count = dims[d] < 0 ? -1 : 0;
  for (d = 0; d < n_dims && count > 0 && count <= in->count; d++)
    count = count > in->count / dims[d] ? in->count + 1 : count * dims[d];
  if (count != in->count)
    return cbi_onnx_fail (error, "node %s (%s): %" G_GINT64_FORMAT " values "
        "cannot take the new shape", cbi_onnx_name (n->name), n->op_type,
        in->count);
  if (!cbi_onnx_fold_new (im, n, in->dtype, n_dims, dims, out, error))
    return FALSE;
  memcpy ((*out)->data, in->data, in->count * cbi_onnx_dtype_size (in->dtype));
  return TRUE;
}

static gboolean
cbi_onnx_fold_constant (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const Onnx__AttributeProto *a;
  gint64 dims[1];
  gint64 i;

  if ((a = cbi_onnx_attr (n, "value")) && a->t) {
    if (cbi_onnx_read_tensor (im, a->t, out, error))
      return TRUE;
    g_prefix_error (error, "node %s (Constant): ", cbi_onnx_name (n->name));
    return FALSE;
  }
  if ((a = cbi_onnx_attr (n, "value_float")) && a->has_f) {
    if (!cbi_onnx_fold_new (im, n, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0,
            NULL, out, error))
      return FALSE;
    ((gfloat *) (*out)->data)[0] = a->f;
  } else if ((a = cbi_onnx_attr (n, "value_int")) && a->has_i) {
    if (!cbi_onnx_fold_new (im, n, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0,
            NULL, out, error))
      return FALSE;
    ((gint64 *) (*out)->data)[0] = a->i;
  } else if ((a = cbi_onnx_attr (n, "value_floats"))
      || (a = cbi_onnx_attr (n, "value_ints"))) {
    gboolean ints = strcmp (a->name, "value_ints") == 0;
    dims[0] = ints ? a->n_ints : a->n_floats;
    if (!cbi_onnx_fold_new (im, n, ints ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64
            : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, dims, out, error))
      return FALSE;
    for (i = 0; i < dims[0]; i++) {
      if (ints)
        ((gint64 *) (*out)->data)[i] = a->ints[i];
      else
        ((gfloat *) (*out)->data)[i] = a->floats[i];
    }
  } else {
    return cbi_onnx_fail (error, "node %s: only Constant with a 'value' "
        "tensor (or value_float(s), value_int(s)) is supported",
        cbi_onnx_name (n->name));
  }
  return TRUE;
}

static gboolean
cbi_onnx_fold_identity (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  return cbi_onnx_fold_need (n, in, n_in, 0, error)
      && cbi_onnx_fold_redim (im, n, in[0], in[0]->n_dims, in[0]->dims, out,
      error);
}

/* Reshape (ONNX rules: 0 copies the input's dimension unless allowzero,
 * -1 takes what is left) */
static gboolean
cbi_onnx_fold_reshape (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gboolean allowzero = cbi_onnx_int (n, "allowzero", 0) != 0;
  gint64 dims[CBI_MAX_DIMS], known = 1;
  gint n_dims, d, infer = -1;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error)
      || !cbi_onnx_fold_need (n, in, n_in, 1, error)
      || !cbi_onnx_fold_ints (n, in[1], "the shape", CBI_MAX_DIMS, dims,
          &n_dims, error))
    return FALSE;
  for (d = 0; d < n_dims; d++) {
    if (dims[d] == 0 && !allowzero) {
      if (d >= in[0]->n_dims)
        return cbi_onnx_fail (error, "node %s (Reshape): a 0 at dimension "
            "%d, which the input lacks", name, d);
      dims[d] = in[0]->dims[d];
    }
    if (dims[d] == -1 && infer < 0) {
      infer = d;
      continue;
    }
    if (dims[d] < 0)
      return cbi_onnx_fail (error, "node %s (Reshape): dimension %"
          G_GINT64_FORMAT " in the shape", name, dims[d]);
    if (dims[d] > 0 && known > in[0]->count / dims[d])
      known = in[0]->count + 1;
    else
      known *= dims[d];
  }
  if (infer >= 0) {
    if (known == 0 || in[0]->count % known != 0)
      return cbi_onnx_fail (error, "node %s (Reshape): %" G_GINT64_FORMAT
          " values do not divide into that shape", name, in[0]->count);
    dims[infer] = in[0]->count / known;
  }
  return cbi_onnx_fold_redim (im, n, in[0], n_dims, dims, out, error);
}

static gboolean
cbi_onnx_fold_transpose (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, "perm");
  gint64 perm[CBI_MAX_DIMS], dims[CBI_MAX_DIMS], stride[CBI_MAX_DIMS];
  gboolean seen[CBI_MAX_DIMS] = { FALSE, };
  CbiOnnxWalk w;
  gint r, d;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error))
    return FALSE;
  r = in[0]->n_dims;
  if (a && a->n_ints != (gsize) r)
    return cbi_onnx_fail (error, "node %s (Transpose): perm has %"
        G_GSIZE_FORMAT " axes for %d dimensions", cbi_onnx_name (n->name),
        a->n_ints, r);
  for (d = r - 1; d >= 0; d--) {
    perm[d] = a ? a->ints[d] : r - 1 - d;
    if (perm[d] < 0 || perm[d] >= r || seen[perm[d]])
      return cbi_onnx_fail (error, "node %s (Transpose): perm is no "
          "permutation of %d axes", cbi_onnx_name (n->name), r);
    seen[perm[d]] = TRUE;
    stride[d] = d == r - 1 || in[0]->count == 0 ? 1 :
        stride[d + 1] * in[0]->dims[d + 1];
  }
  for (d = 0; d < r; d++)
    dims[d] = in[0]->dims[perm[d]];
  if (!cbi_onnx_fold_new (im, n, in[0]->dtype, r, dims, out, error))
    return FALSE;
  cbi_onnx_walk_init (&w, r, dims);
  for (d = 0; d < r; d++)
    w.strides[0][d] = stride[perm[d]];
  cbi_onnx_fold_copy_walk (in[0], *out, &w);
  return TRUE;
}

/* Unsqueeze and Squeeze: axes from the input from opset 13, from the
 * attribute before */
static gboolean
cbi_onnx_fold_squeeze (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gboolean unsqueeze = strcmp (n->op_type, "Unsqueeze") == 0;
  gboolean marked[2 * CBI_MAX_DIMS] = { FALSE, };
  gint64 axes[CBI_MAX_DIMS], dims[2 * CBI_MAX_DIMS];
  gint n_axes, rank, d, a, o = 0, k = 0;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error)
      || !cbi_onnx_fold_axes_arg (im, n, in, n_in, 1, 13, axes, &n_axes, error))
    return FALSE;
  if (unsqueeze && n_axes < 0)
    return cbi_onnx_fail (error, "node %s (Unsqueeze): no axes", name);
  rank = in[0]->n_dims + (unsqueeze ? MAX (n_axes, 0) : 0);
  if (rank > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "node %s (Unsqueeze): %d dimensions; at "
        "most %d are supported", name, rank, CBI_MAX_DIMS);
  for (a = 0; a < n_axes; a++) {
    gint axis;
    if (!cbi_onnx_fold_axis (n, axes[a], rank, &axis, error))
      return FALSE;
    if (marked[axis])
      return cbi_onnx_fail (error, "node %s (%s): axis %d is given twice",
          name, n->op_type, axis);
    if (!unsqueeze && in[0]->dims[axis] != 1)
      return cbi_onnx_fail (error, "node %s (Squeeze): dimension %d is %"
          G_GINT64_FORMAT ", not 1", name, axis, in[0]->dims[axis]);
    marked[axis] = TRUE;
  }
  for (d = 0; d < rank; d++) {
    if (unsqueeze) {
      dims[o++] = marked[d] ? 1 : in[0]->dims[k++];
    } else if (!(n_axes < 0 ? in[0]->dims[d] == 1 : marked[d])) {
      dims[o++] = in[0]->dims[d];
    }
  }
  return cbi_onnx_fold_redim (im, n, in[0], o, dims, out, error);
}

static gboolean
cbi_onnx_fold_concat (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "axis");
  gint64 dims[CBI_MAX_DIMS], outer = 1, inner;
  gsize size, at = 0;
  gint axis, d, r;
  guint k;
  gint64 o;

  if (attr == NULL || !attr->has_i || n_in < 1)
    return cbi_onnx_fail (error, "node %s (Concat): no axis or no input", name);
  for (k = 0; k < n_in; k++)
    if (!cbi_onnx_fold_need (n, in, n_in, k, error))
      return FALSE;
  r = in[0]->n_dims;
  if (!cbi_onnx_fold_axis (n, attr->i, r, &axis, error))
    return FALSE;
  memcpy (dims, in[0]->dims, r * sizeof (gint64));
  dims[axis] = 0;
  for (k = 0; k < n_in; k++) {
    if (in[k]->dtype != in[0]->dtype || in[k]->n_dims != r)
      return cbi_onnx_fail (error, "node %s (Concat): input %u differs in "
          "type or rank from the first", name, k);
    for (d = 0; d < r; d++)
      if (d != axis && in[k]->dims[d] != dims[d])
        return cbi_onnx_fail (error, "node %s (Concat): input %u has "
            "dimension %d of %" G_GINT64_FORMAT ", the first %"
            G_GINT64_FORMAT, name, k, d, in[k]->dims[d], dims[d]);
    /* an empty input may have any dimension */
    if (__builtin_add_overflow (dims[axis], in[k]->dims[axis], &dims[axis]))
      return cbi_onnx_fail (error, "node %s (Concat): the output's "
          "dimension %d overflows", name, axis);
  }
  if (!cbi_onnx_fold_new (im, n, in[0]->dtype, r, dims, out, error))
    return FALSE;
  size = cbi_onnx_dtype_size (in[0]->dtype);
  for (d = 0; d < axis && (*out)->count > 0; d++)
    outer *= dims[d];
  for (o = 0; o < outer && (*out)->count > 0; o++) {
    for (k = 0; k < n_in; k++) {
      inner = outer ? in[k]->count / outer * size : 0;
      memcpy ((guint8 *) (*out)->data + at,
          (const guint8 *) in[k]->data + o * inner, inner);
      at += inner;
    }
  }
  return TRUE;
}

static gboolean
cbi_onnx_fold_gather (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const CbiOnnxConst *data, *ind;
  gint64 dims[2 * CBI_MAX_DIMS], outer = 1, inner = 1, o, j;
  gsize size;
  gint axis, d, r = 0;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error)
      || !cbi_onnx_fold_need (n, in, n_in, 1, error))
    return FALSE;
  data = in[0];
  ind = in[1];
  if (ind->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT64
      && ind->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
    return cbi_onnx_fail (error, "node %s (Gather): the indices must be "
        "int64 or int32", name);
  if (!cbi_onnx_fold_axis (n, cbi_onnx_int (n, "axis", 0), data->n_dims,
          &axis, error))
    return FALSE;
  for (d = 0; d < axis; d++)
    dims[r++] = data->dims[d];
  for (d = 0; d < ind->n_dims; d++)
    dims[r++] = ind->dims[d];
  for (d = axis + 1; d < data->n_dims; d++)
    dims[r++] = data->dims[d];
  for (j = 0; j < ind->count; j++) {
    gint64 i = cbi_onnx_get_i (ind, j);
    if (i < -data->dims[axis] || i >= data->dims[axis])
      return cbi_onnx_fail (error, "node %s (Gather): index %" G_GINT64_FORMAT
          " is outside dimension %d of %" G_GINT64_FORMAT, name, i, axis,
          data->dims[axis]);
  }
  if (!cbi_onnx_fold_new (im, n, data->dtype, r, dims, out, error))
    return FALSE;
  size = cbi_onnx_dtype_size (data->dtype);
  /* an empty output may have large dimensions around its 0 */
  if ((*out)->count == 0)
    return TRUE;
  for (d = 0; d < axis; d++)
    outer *= data->dims[d];
  for (d = axis + 1; d < data->n_dims; d++)
    inner *= data->dims[d];
  inner *= size;
  for (o = 0; o < outer; o++) {
    for (j = 0; j < ind->count; j++) {
      gint64 i = cbi_onnx_get_i (ind, j);
      if (i < 0)
        i += data->dims[axis];
      memcpy ((guint8 *) (*out)->data + (o * ind->count + j) * inner,
          (const guint8 *) data->data + (o * data->dims[axis] + i) * inner,
          inner);
    }
  }
  return TRUE;
}

/* Slice: bounds from inputs (opset 10 on) or attributes (before),
 * clamped as ONNX does, negative steps walking backwards. */
static gboolean
cbi_onnx_fold_slice (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gint64 starts[CBI_MAX_DIMS], ends[CBI_MAX_DIMS], axes[CBI_MAX_DIMS];
  gint64 steps[CBI_MAX_DIMS], dims[CBI_MAX_DIMS], stride[CBI_MAX_DIMS];
  gint64 first[CBI_MAX_DIMS], step[CBI_MAX_DIMS], offset = 0;
  gboolean seen[CBI_MAX_DIMS] = { FALSE, };
  gint n_starts, n_ends, n_axes = -1, n_steps = -1, r, d, i;
  CbiOnnxWalk w;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error))
    return FALSE;
  r = in[0]->n_dims;
  if (im->opset >= 10) {
    if (!cbi_onnx_fold_need (n, in, n_in, 1, error)
        || !cbi_onnx_fold_need (n, in, n_in, 2, error)
        || !cbi_onnx_fold_ints (n, in[1], "starts", CBI_MAX_DIMS, starts,
            &n_starts, error)
        || !cbi_onnx_fold_ints (n, in[2], "ends", CBI_MAX_DIMS, ends,
            &n_ends, error)
        || (n_in > 3 && in[3] && !cbi_onnx_fold_ints (n, in[3], "axes",
                CBI_MAX_DIMS, axes, &n_axes, error))
        || (n_in > 4 && in[4] && !cbi_onnx_fold_ints (n, in[4], "steps",
                CBI_MAX_DIMS, steps, &n_steps, error)))
      return FALSE;
  } else {
    const Onnx__AttributeProto *s = cbi_onnx_attr (n, "starts");
    const Onnx__AttributeProto *e = cbi_onnx_attr (n, "ends");
    const Onnx__AttributeProto *a = cbi_onnx_attr (n, "axes");
    if (s == NULL || e == NULL || s->n_ints > CBI_MAX_DIMS
        || e->n_ints > CBI_MAX_DIMS || (a && a->n_ints > CBI_MAX_DIMS))
      return cbi_onnx_fail (error, "node %s (Slice): starts and ends of at "
          "most %d values are needed", name, CBI_MAX_DIMS);
    n_starts = s->n_ints;
    n_ends = e->n_ints;
    /* protobuf-c leaves an empty repeated field's array NULL */
    if (n_starts > 0)
      memcpy (starts, s->ints, n_starts * sizeof (gint64));
    if (n_ends > 0)
      memcpy (ends, e->ints, n_ends * sizeof (gint64));
    if (a) {
      n_axes = a->n_ints;
      if (n_axes > 0)
        memcpy (axes, a->ints, n_axes * sizeof (gint64));
    }
  }
  if (n_ends != n_starts || (n_axes >= 0 && n_axes != n_starts)
      || (n_steps >= 0 && n_steps != n_starts))
    return cbi_onnx_fail (error, "node %s (Slice): starts, ends, axes and "
        "steps differ in length", name);

  for (d = r - 1; d >= 0; d--) {
    stride[d] = d == r - 1 || in[0]->count == 0 ? 1 :
        stride[d + 1] * in[0]->dims[d + 1];
    first[d] = 0;
    step[d] = 1;
    dims[d] = in[0]->dims[d];
  }
  for (i = 0; i < n_starts; i++) {
    gint64 s = starts[i], e = ends[i], st = n_steps >= 0 ? steps[i] : 1;
    gint axis;
    if (!cbi_onnx_fold_axis (n, n_axes >= 0 ? axes[i] : i, r, &axis, error))
      return FALSE;
    if (seen[axis] || st == 0 || st == G_MININT64)
      return cbi_onnx_fail (error, "node %s (Slice): axis %d given twice or "
          "a step of 0", name, axis);
    seen[axis] = TRUE;
    dims[axis] = cbi_slice_range (s, e, st, in[0]->dims[axis], &first[axis]);
    step[axis] = st;
  }
  if (!cbi_onnx_fold_new (im, n, in[0]->dtype, r, dims, out, error))
    return FALSE;
  cbi_onnx_walk_init (&w, r, dims);
  /* within the input when the output has values: each first index is
   * inside its dimension then */
  for (d = 0; d < r && (*out)->count > 0; d++) {
    /* a step over 1 value is never taken, and may be huge */
    w.strides[0][d] = dims[d] > 1 ? stride[d] * step[d] : 0;
    offset += first[d] * stride[d];
  }
  w.off[0] = offset;
  cbi_onnx_fold_copy_walk (in[0], *out, &w);
  return TRUE;
}

/* Shape of a constant, with start and end (opset 15) */
static gboolean
cbi_onnx_fold_shape (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gint64 r, start, end, dims[1], i;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error))
    return FALSE;
  r = in[0]->n_dims;
  start = cbi_onnx_int (n, "start", 0);
  end = cbi_onnx_int (n, "end", r);
  start = CLAMP (start < 0 ? MAX (start, -r) + r : start, 0, r);
  end = CLAMP (end < 0 ? MAX (end, -r) + r : end, 0, r);
  dims[0] = MAX (end - start, 0);
  if (!cbi_onnx_fold_new (im, n, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1,
          dims, out, error))
    return FALSE;
  for (i = 0; i < dims[0]; i++)
    ((gint64 *) (*out)->data)[i] = in[0]->dims[start + i];
  return TRUE;
}

/* Expand: the input broadcast with the shape given */
static gboolean
cbi_onnx_fold_expand (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  CbiOnnxConst shape = { 0, };
  const CbiOnnxConst *both[2];
  gint64 dims[CBI_MAX_DIMS];
  gint n_dims;
  CbiOnnxWalk w;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error)
      || !cbi_onnx_fold_need (n, in, n_in, 1, error)
      || !cbi_onnx_fold_ints (n, in[1], "the shape", CBI_MAX_DIMS,
          shape.dims, &shape.n_dims, error))
    return FALSE;
  both[0] = in[0];
  both[1] = &shape;
  if (!cbi_onnx_fold_broadcast (n, both, 2, &n_dims, dims, error)
      || !cbi_onnx_fold_new (im, n, in[0]->dtype, n_dims, dims, out, error))
    return FALSE;
  cbi_onnx_walk_init (&w, n_dims, dims);
  cbi_onnx_walk_broadcast (&w, 0, in[0]);
  cbi_onnx_fold_copy_walk (in[0], *out, &w);
  return TRUE;
}

static gboolean
cbi_onnx_fold_constant_of_shape (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, "value");
  CbiOnnxConst *value = NULL;
  gint64 dims[CBI_MAX_DIMS], i;
  gint n_dims, dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  gsize size;

  if (!cbi_onnx_fold_need (n, in, n_in, 0, error)
      || !cbi_onnx_fold_ints (n, in[0], "the shape", CBI_MAX_DIMS, dims,
          &n_dims, error))
    return FALSE;
  if (a && a->t) {
    if (!cbi_onnx_read_tensor (im, a->t, &value, error)) {
      g_prefix_error (error, "node %s (ConstantOfShape): ",
          cbi_onnx_name (n->name));
      return FALSE;
    }
    if (value->count != 1) {
      cbi_onnx_const_free (value);
      return cbi_onnx_fail (error, "node %s (ConstantOfShape): its value "
          "must be one element", cbi_onnx_name (n->name));
    }
    dtype = value->dtype;
  }
  if (!cbi_onnx_fold_new (im, n, dtype, n_dims, dims, out, error)) {
    g_clear_pointer (&value, cbi_onnx_const_free);
    return FALSE;
  }
  size = cbi_onnx_dtype_size (dtype);
  for (i = 0; value && i < (*out)->count; i++)
    memcpy ((guint8 *) (*out)->data + i * size, value->data, size);
  g_clear_pointer (&value, cbi_onnx_const_free);
  return TRUE;
}

/* The ops that fold, with their input counts. */
static const struct
{
  const gchar *op;
  CbiOnnxFoldFunc fold;
  guint min_inputs, max_inputs;
} cbi_onnx_fold_ops[] = {
  {"Constant", cbi_onnx_fold_constant, 0, 0},
  {"Identity", cbi_onnx_fold_identity, 1, 1},
  {"Cast", cbi_onnx_fold_cast, 1, 1},
  {"Reshape", cbi_onnx_fold_reshape, 2, 2},
  {"Transpose", cbi_onnx_fold_transpose, 1, 1},
  {"Unsqueeze", cbi_onnx_fold_squeeze, 1, 2},
  {"Squeeze", cbi_onnx_fold_squeeze, 1, 2},
  {"Concat", cbi_onnx_fold_concat, 1, G_MAXUINT},
  {"Gather", cbi_onnx_fold_gather, 2, 2},
  {"Slice", cbi_onnx_fold_slice, 1, 5},
  {"Shape", cbi_onnx_fold_shape, 1, 1},
  {"Expand", cbi_onnx_fold_expand, 2, 2},
  {"ConstantOfShape", cbi_onnx_fold_constant_of_shape, 1, 1},
  {"Range", cbi_onnx_fold_range, 3, 3},
  {"Add", cbi_onnx_fold_arith, 2, 2},
  {"Sub", cbi_onnx_fold_arith, 2, 2},
  {"Mul", cbi_onnx_fold_arith, 2, 2},
  {"Div", cbi_onnx_fold_arith, 2, 2},
  {"Mod", cbi_onnx_fold_arith, 2, 2},
  {"Pow", cbi_onnx_fold_arith, 2, 2},
  {"Sqrt", cbi_onnx_fold_unary, 1, 1},
  {"Neg", cbi_onnx_fold_unary, 1, 1},
  {"Not", cbi_onnx_fold_unary, 1, 1},
  {"Relu", cbi_onnx_fold_activation, 1, 1},
  {"LeakyRelu", cbi_onnx_fold_activation, 1, 1},
  {"Sigmoid", cbi_onnx_fold_activation, 1, 1},
  {"Tanh", cbi_onnx_fold_activation, 1, 1},
  {"Exp", cbi_onnx_fold_activation, 1, 1},
  {"Log", cbi_onnx_fold_activation, 1, 1},
  {"Abs", cbi_onnx_fold_activation, 1, 1},
  {"Reciprocal", cbi_onnx_fold_activation, 1, 1},
  {"Erf", cbi_onnx_fold_activation, 1, 1},
  {"MatMul", cbi_onnx_fold_matmul, 2, 2},
  {"ScatterND", cbi_onnx_fold_scatter_nd, 3, 3},
  {"Equal", cbi_onnx_fold_equal, 2, 2},
  {"Where", cbi_onnx_fold_where, 3, 3},
  {"DequantizeLinear", cbi_onnx_fold_dequantize, 2, 3},
  {"QuantizeLinear", cbi_onnx_fold_quantize, 2, 3},
};

/* The row of @op in the table, or -1. */
static gint
cbi_onnx_fold_find (const gchar * op)
{
  guint k;

  for (k = 0; op && k < G_N_ELEMENTS (cbi_onnx_fold_ops); k++)
    if (strcmp (op, cbi_onnx_fold_ops[k].op) == 0)
      return k;
  return -1;
}

gboolean
cbi_onnx_folds (const gchar * op)
{
  return cbi_onnx_fold_find (op) >= 0 && strcmp (op, "Constant") != 0;
}

gboolean
cbi_onnx_fold_run (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  gint k = cbi_onnx_fold_find (n->op_type);

  if (k < 0)
    return cbi_onnx_fail (error, "node %s: op %s is not computed from "
        "constants", cbi_onnx_name (n->name), n->op_type);
  if (n_in < cbi_onnx_fold_ops[k].min_inputs
      || n_in > cbi_onnx_fold_ops[k].max_inputs)
    return cbi_onnx_fail (error, "node %s (%s): %u inputs; %u to %u are "
        "expected", cbi_onnx_name (n->name), n->op_type, n_in,
        cbi_onnx_fold_ops[k].min_inputs,
        MIN (cbi_onnx_fold_ops[k].max_inputs, 1000));
  return cbi_onnx_fold_ops[k].fold (im, n, in, n_in, out, error);
}

/* Constant @name where translation moved it into the graph (its values
 * there), seen in place as @view; FALSE where it is no such constant. */
static gboolean
cbi_onnx_moved_const (CbiImporter * im, const gchar * name, CbiOnnxConst * view)
{
  const gint t = GPOINTER_TO_INT (g_hash_table_lookup (im->names, name)) - 1;
  const CbiTensorInfo *info = t >= 0 ? cbi_graph_tensor (im->graph, t) : NULL;

  if (info == NULL || (info->data == NULL && info->ints == NULL))
    return FALSE;
  cbi_onnx_tensor_view (info, t, info->n_dims, info->dims, view);
  return TRUE;
}

gboolean
cbi_onnx_fold (CbiImporter * im, const Onnx__NodeProto * n,
    gboolean * folded, GError ** error)
{
  const CbiOnnxConst *in[CBI_MAX_NODE_INPUTS];
  const CbiOnnxConst **inputs = in;
  CbiOnnxConst *out = NULL, *views;
  guint i, n_in = n->n_input;
  gboolean ok;

  *folded = FALSE;
  if ((n->domain && *n->domain && strcmp (n->domain, "ai.onnx") != 0)
      || n->n_output < 1 || cbi_onnx_fold_find (n->op_type) < 0)
    return TRUE;
  /* Concat may have many: the others a few */
  if (n_in > CBI_MAX_NODE_INPUTS)
    inputs = g_new (const CbiOnnxConst *, n_in);
  views = g_new0 (CbiOnnxConst, n_in);
  for (i = 0; i < n_in; i++) {
    const gchar *name = n->input[i];
    inputs[i] = name && *name ? cbi_onnx_const (im, name) : NULL;
    /* a constant that translation moved into the graph since (a node
     * folding late reads it: cbi_onnx_fold_channels ()), in place */
    if (name && *name && inputs[i] == NULL
        && cbi_onnx_moved_const (im, name, &views[i]))
      inputs[i] = &views[i];
    if (name && *name && inputs[i] == NULL)
      break;                    /* an activation: for translation */
  }
  if (i < n_in) {
    ok = TRUE;
  } else {
    ok = cbi_onnx_fold_run (im, n, inputs, n_in, &out, error)
        && cbi_onnx_keep_const (im, n->output[0], out, error);
    *folded = ok;
  }
  if (inputs != in)
    g_free (inputs);
  g_free (views);
  return ok;
}
