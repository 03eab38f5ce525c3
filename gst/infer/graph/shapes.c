/* cudabatchinfer: model graph, what each node makes of its inputs' shapes,
 * and the geometry backends read from a node (pads, Gemm's operands,
 * permutations, the views of reductions, Split and LayerNormalization)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "graph/graph-private.h"
#include "cbimath.h"

#include <string.h>

/* The window node @n slides: a pooling's kernel, else its weights'. */
static const gint64 *
cbi_node_kernel (const CbiGraph * graph, const CbiNode * n)
{
  if (n->op == CBI_OP_CONV || n->op == CBI_OP_CONV_TRANSPOSE)
    return &cbi_graph_tensor (graph, n->inputs[1])->dims[2];
  return n->conv.kernel;
}

static void
cbi_node_pads_with (const CbiNode * n, const gint64 * kernel,
    const CbiShape * input, gint64 * pads)
{
  const CbiConvAttrs *a = &n->conv;
  gint d;

  memcpy (pads, a->pads, sizeof (a->pads));
  for (d = 0; d < 2; d++) {
    const gint64 in = input->dims[2 + d], s = MAX (a->strides[d], 1);
    const gint64 span = a->dilations[d] * (kernel[d] - 1) + 1;
    gint64 out, total;

    if (a->auto_pad != CBI_AUTO_PAD_NOTSET) {
      out = (in + s - 1) / s;
      total = MAX ((out - 1) * s + span - in, 0);
      pads[d] = a->auto_pad == CBI_AUTO_PAD_SAME_UPPER ? total / 2 :
          total - total / 2;
      pads[d + 2] = total - pads[d];
    }
    if (a->ceil_mode) {
      const gint64 extent = in + pads[d] + pads[d + 2];
      if (extent < span)
        continue;               /* no window fits: shape inference says so */
      out = (extent - span + s - 1) / s + 1;
      /* ONNX drops a last window that starts in the end padding */
      if ((out - 1) * s >= in + pads[d])
        out--;
      pads[d + 2] += MAX ((out - 1) * s + span - extent, 0);
    }
  }
}

void
cbi_node_pads (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * input, gint64 * pads)
{
  cbi_node_pads_with (n, cbi_node_kernel (graph, n), input, pads);
}

/* Output height and width of a window of @kernel (a convolution's, or
 * @what else) sliding over @in. */
static gboolean
cbi_infer_window (const CbiNode * n, const gchar * what,
    const gint64 kernel[2], const CbiShape * in_shape, gint64 * out,
    GError ** error)
{
  const CbiConvAttrs *a = &n->conv;
  const gint64 *in = in_shape->dims;
  gint64 pads[4];
  gint d;

  cbi_node_pads_with (n, kernel, in_shape, pads);
  for (d = 0; d < 2; d++) {
    gint64 extent = in[2 + d] + pads[d] + pads[d + 2];
    gint64 span = a->dilations[d] * (kernel[d] - 1) + 1;
    if (a->strides[d] < 1 || kernel[d] < 1 || extent < span)
      return cbi_shape_fail (error, n, "a %s of %" G_GINT64_FORMAT
          " does not fit an input of %" G_GINT64_FORMAT " (padded)", what,
          span, extent);
    out[2 + d] = (extent - span) / a->strides[d] + 1;
  }
  return TRUE;
}

static gboolean
cbi_infer_conv (const CbiGraph * graph, const CbiNode * n, CbiShape * shapes,
    GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]].dims;
  CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  gint64 *y = shapes[n->output].dims;
  const CbiConvAttrs *a = &n->conv;

  if (w->n_dims != 4 || w->data == NULL || a->group < 1
      || x[1] != w->dims[1] * a->group || w->dims[0] % a->group != 0)
    return cbi_shape_fail (error, n, "input has %" G_GINT64_FORMAT
        " channels, weights expect %" G_GINT64_FORMAT " x group %"
        G_GINT64_FORMAT, x[1], w->n_dims == 4 ? w->dims[1] : 0, a->group);
  y[0] = x[0];
  y[1] = w->dims[0];
  return cbi_infer_window (n, "kernel", &w->dims[2], &shapes[n->inputs[0]],
      y, error);
}

/* ConvTranspose: out = stride (in - 1) + output_padding + dilated kernel
 * - pads; weights are (in channels, out channels, h, w). */
static gboolean
cbi_infer_conv_transpose (const CbiGraph * graph, const CbiNode * n,
    CbiShape * shapes, GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]].dims;
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiConvAttrs *a = &n->conv;
  gint64 *y = shapes[n->output].dims;
  gint d;

  if (x[1] != w->dims[0])
    return cbi_shape_fail (error, n, "input has %" G_GINT64_FORMAT
        " channels, weights expect %" G_GINT64_FORMAT, x[1], w->dims[0]);
  y[0] = x[0];
  y[1] = w->dims[1];
  for (d = 0; d < 2; d++) {
    y[2 + d] = a->strides[d] * (x[2 + d] - 1) + a->output_padding[d]
        + a->dilations[d] * (w->dims[2 + d] - 1) + 1 - a->pads[d]
        - a->pads[d + 2];
    if (y[2 + d] < 1)
      return cbi_shape_fail (error, n, "the output would be empty");
  }
  return TRUE;
}

/* @axis of a tensor of rank @rank, counted from the end when negative;
 * -1 when out of range. */
gint
cbi_axis (gint axis, gint rank)
{
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

static gboolean
cbi_infer_concat (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  CbiShape *y = &shapes[n->output];
  gint axis, d;
  guint i;

  *y = shapes[n->inputs[0]];
  axis = cbi_axis (n->axis, y->n_dims);
  if (axis < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        y->n_dims);
  y->dims[axis] = 0;
  for (i = 0; i < n->n_inputs; i++) {
    const CbiShape *x = &shapes[n->inputs[i]];
    for (d = 0; d < y->n_dims; d++)
      if (x->n_dims != y->n_dims || (d != axis && x->dims[d] != y->dims[d]))
        return cbi_shape_fail (error, n, "input %u does not match the "
            "first but along axis %d", i, axis);
    y->dims[axis] += x->dims[axis];
  }
  return TRUE;
}

/* Reshape (ONNX rules: 0 keeps the input's dimension, -1 takes what is
 * left) or, for mode 1, Flatten at @axis. */
static gboolean
cbi_infer_reshape (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  gint64 count = cbi_shape_count (x), known = 1;
  gint d, infer = -1;

  if (n->mode == 1) {
    gint axis = n->axis < 0 ? n->axis + x->n_dims : n->axis;
    if (axis < 0 || axis > x->n_dims)
      return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
          x->n_dims);
    y->n_dims = 2;
    y->dims[0] = 1;
    for (d = 0; d < axis; d++)
      y->dims[0] *= x->dims[d];
    y->dims[1] = y->dims[0] ? count / y->dims[0] : 0;
    return TRUE;
  }
  cbi_shape_set (y, n->n_ints, n->ints);
  for (d = 0; d < y->n_dims; d++) {
    if (y->dims[d] == 0 && d < x->n_dims)
      y->dims[d] = x->dims[d];
    if (y->dims[d] == -1 && infer < 0)
      infer = d;
    else if (y->dims[d] < 1)
      return cbi_shape_fail (error, n, "target dimension %d is %"
          G_GINT64_FORMAT, d, n->ints[d]);
    else
      known *= y->dims[d];
  }
  if (infer >= 0 && known > 0 && count % known == 0)
    y->dims[infer] = count / known;
  if (cbi_shape_count (y) != count || (infer >= 0 && known == 0)) {
    gchar *from = cbi_shape_to_string (x);
    cbi_shape_fail (error, n, "cannot reshape %s (%" G_GINT64_FORMAT
        " elements) to the target shape", from, count);
    g_free (from);
    return FALSE;
  }
  return TRUE;
}

void
cbi_gemm_weights (const CbiGraph * graph, const CbiNode * n, gint64 k,
    gint64 cols, gfloat * weights)
{
  const gfloat *b = cbi_graph_tensor (graph, n->inputs[1])->data;
  gint64 i, j;

  for (i = 0; i < k; i++)
    for (j = 0; j < cols; j++)
      weights[i * cols + j] = n->alpha * (n->ints[1] ? b[j * k + i] :
          b[i * cols + j]);
}

gboolean
cbi_gemm_has_bias (const CbiNode * n)
{
  return n->n_inputs > 2 && n->inputs[2] >= 0 && n->beta != 0.0f;
}

gboolean
cbi_shape_view_strides (const CbiShape * from, const gint64 * from_strides,
    const CbiShape * to, gint64 * to_strides)
{
  gint64 od[CBI_MAX_DIMS], os[CBI_MAX_DIMS], nd[CBI_MAX_DIMS];
  gint64 ns[CBI_MAX_DIMS] = { 0, };
  gint at[CBI_MAX_DIMS];
  gint on = 0, nn = 0, oi = 0, oj = 1, ni = 0, nj = 1, d, k;

  if (cbi_shape_count (from) != cbi_shape_count (to)
      || cbi_shape_count (from) == 0)
    return FALSE;
  /* dims of one take no part: any stride reads them */
  for (d = 0; d < from->n_dims; d++)
    if (from->dims[d] != 1) {
      od[on] = from->dims[d];
      os[on++] = from_strides[d];
    }
  for (d = 0; d < to->n_dims; d++)
    if (to->dims[d] != 1) {
      at[nn] = d;
      nd[nn++] = to->dims[d];
    }
  /* each run of new dims that multiplies to a run of old ones: the old
   * run must be contiguous in itself, and the new one is laid out as it */
  while (ni < nn && oi < on) {
    gint64 np = nd[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nn)
          return FALSE;
        np *= nd[nj++];
      } else {
        if (oj >= on)
          return FALSE;
        op *= od[oj++];
      }
    }
    for (k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1])
        return FALSE;
    ns[nj - 1] = os[oj - 1];
    for (k = nj - 1; k > ni; k--)
      ns[k - 1] = ns[k] * nd[k];
    ni = nj++;
    oi = oj++;
  }
  if (ni < nn || oi < on)
    return FALSE;
  for (d = to->n_dims - 1, k = nn - 1; d >= 0; d--) {
    if (k >= 0 && at[k] == d)
      to_strides[d] = ns[k--];
    else
      to_strides[d] = d == to->n_dims - 1 ? 1 :
          to_strides[d + 1] * to->dims[d + 1];
  }
  return TRUE;
}

gint64
cbi_gemm_bias_rows (const CbiNode * n, const CbiShape * shapes, gint64 rows)
{
  const CbiShape *cs = &shapes[n->inputs[2]];

  return cs->n_dims == 2 && cs->dims[0] != 1 ? rows : 1;
}

void
cbi_gemm_bias (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * shapes, gint64 rows, gint64 cols, gfloat * bias)
{
  const gfloat *c = cbi_graph_tensor (graph, n->inputs[2])->data;
  const CbiShape *cs = &shapes[n->inputs[2]];
  /* C broadcasts from the right: [N], [1, N], [M, 1], [M, N] or one */
  const gint64 c_rows = cs->n_dims == 2 ? cs->dims[0] : 1;
  const gint64 c_cols = cs->n_dims >= 1 ? cs->dims[cs->n_dims - 1] : 1;
  gint64 i, j;

  for (i = 0; i < rows; i++)
    for (j = 0; j < cols; j++)
      bias[i * cols + j] = n->beta * c[(c_rows == 1 ? 0 : i) * c_cols
          + (c_cols == 1 ? 0 : j)];
}

void
cbi_node_permutation (const CbiNode * n, const CbiShape * input,
    CbiShape * view, gint64 * perm)
{
  /* both DepthToSpace views go to [N, C', H, b, W, b] = [N, C', H b, W b] */
  static const gint64 dcr[6] = { 0, 3, 4, 1, 5, 2 };
  static const gint64 crd[6] = { 0, 1, 4, 2, 5, 3 };
  const gint64 *x = input->dims;
  gint d;

  if (n->op == CBI_OP_DEPTH_TO_SPACE) {
    const gint64 b = n->ints[0], c = x[1] / (b * b);
    const gint64 dcr_split[6] = { x[0], b, b, c, x[2], x[3] };
    const gint64 crd_split[6] = { x[0], c, b, b, x[2], x[3] };
    cbi_shape_set (view, 6, n->mode == 1 ? crd_split : dcr_split);
    memcpy (perm, n->mode == 1 ? crd : dcr, sizeof (dcr));
    return;
  }
  /* Transpose: no perm attribute means the axes reversed */
  *view = *input;
  for (d = 0; d < input->n_dims; d++)
    perm[d] = n->n_ints ? n->ints[d] : input->n_dims - 1 - d;
}

static gboolean
cbi_infer_transpose (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output], view;
  gint64 perm[CBI_MAX_DIMS];
  guint seen = 0;
  gint d;

  if (n->n_ints != x->n_dims && n->n_ints != 0)
    return cbi_shape_fail (error, n, "a permutation of %d axes for rank %d",
        n->n_ints, x->n_dims);
  cbi_node_permutation (n, x, &view, perm);
  y->n_dims = x->n_dims;
  for (d = 0; d < x->n_dims; d++) {
    gint64 p = perm[d];
    if (p < 0 || p >= x->n_dims || (seen & (1u << p)))
      return cbi_shape_fail (error, n, "perm is not a permutation");
    seen |= 1u << p;
    y->dims[d] = x->dims[p];
  }
  return TRUE;
}

/* Gemm: A [M, K] (or [K, M] with transA) times a constant B [K, N] (or
 * [N, K] with transB), plus a constant C that broadcasts to [M, N]. */
static gboolean
cbi_infer_gemm (const CbiGraph * graph, const CbiNode * n, CbiShape * shapes,
    GError ** error)
{
  const CbiShape *a = &shapes[n->inputs[0]];
  const CbiShape *b = &shapes[n->inputs[1]];
  CbiShape *y = &shapes[n->output];
  gint64 m, k, kb, cols;

  if (a->n_dims != 2 || b->n_dims != 2)
    return cbi_shape_fail (error, n, "A and B must be 2-D");
  m = a->dims[n->ints[0] ? 1 : 0];
  k = a->dims[n->ints[0] ? 0 : 1];
  kb = b->dims[n->ints[1] ? 1 : 0];
  cols = b->dims[n->ints[1] ? 0 : 1];
  if (k != kb)
    return cbi_shape_fail (error, n, "A has %" G_GINT64_FORMAT " columns, "
        "B %" G_GINT64_FORMAT " rows", k, kb);
  y->n_dims = 2;
  y->dims[0] = m;
  y->dims[1] = cols;
  if (n->n_inputs > 2 && n->inputs[2] >= 0
      && !cbi_shape_broadcasts_to (&shapes[n->inputs[2]], y))
    return cbi_shape_fail (error, n, "C does not broadcast to the output");
  return TRUE;
}

/* MatMul as numpy: [..., M, K] x [..., K, N], batch dimensions
 * broadcast. */
static gboolean
cbi_infer_matmul (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *a = &shapes[n->inputs[0]];
  const CbiShape *b = &shapes[n->inputs[1]];
  CbiShape *y = &shapes[n->output];
  gint rank = MAX (a->n_dims, b->n_dims), d;

  if (a->n_dims < 2 || b->n_dims < 2)
    return cbi_shape_fail (error, n, "1-D operands are not supported");
  if (a->dims[a->n_dims - 1] != b->dims[b->n_dims - 2])
    return cbi_shape_fail (error, n, "A has %" G_GINT64_FORMAT " columns, "
        "B %" G_GINT64_FORMAT " rows", a->dims[a->n_dims - 1],
        b->dims[b->n_dims - 2]);
  y->n_dims = rank;
  for (d = 0; d < rank - 2; d++) {
    gint da = d - (rank - a->n_dims), db = d - (rank - b->n_dims);
    gint64 sa = da >= 0 ? a->dims[da] : 1, sb = db >= 0 ? b->dims[db] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return cbi_shape_fail (error, n, "batch dimensions %" G_GINT64_FORMAT
          " and %" G_GINT64_FORMAT " do not broadcast", sa, sb);
    y->dims[d] = MAX (sa, sb);
  }
  y->dims[rank - 2] = a->dims[a->n_dims - 2];
  y->dims[rank - 1] = b->dims[b->n_dims - 1];
  return TRUE;
}

/* Which axes of a rank @rank input reduction node @n reduces, as bits;
 * 0 when one is out of range. */
static guint
cbi_reduce_axes (const CbiNode * n, gint rank)
{
  guint axes = 0;
  gint i;

  if (n->n_ints == 0)
    return (1u << rank) - 1;
  for (i = 0; i < n->n_ints; i++) {
    gint a = cbi_axis ((gint) n->ints[i], rank);
    if (a < 0)
      return 0;
    axes |= 1u << a;
  }
  return axes;
}

gboolean
cbi_node_reduce_view (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * r, gint64 * inner)
{
  guint axes = cbi_reduce_axes (n, input->n_dims);
  gint d, first = -1, last = -1;

  *outer = *r = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (axes & (1u << d)) {
      if (last >= 0 && last != d - 1)
        return FALSE;
      if (first < 0)
        first = d;
      last = d;
      *r *= input->dims[d];
    } else if (first < 0) {
      *outer *= input->dims[d];
    } else {
      *inner *= input->dims[d];
    }
  }
  return TRUE;
}

static gboolean
cbi_infer_reduce (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  guint axes = cbi_reduce_axes (n, x->n_dims);
  gint d;

  if (axes == 0)
    return cbi_shape_fail (error, n, "an axis is outside rank %d", x->n_dims);
  y->n_dims = 0;
  for (d = 0; d < x->n_dims; d++) {
    if (!(axes & (1u << d)))
      y->dims[y->n_dims++] = x->dims[d];
    else if (n->mode)
      y->dims[y->n_dims++] = 1;
  }
  return TRUE;
}

gint
cbi_node_reduce_op (const CbiNode * n)
{
  switch (n->op) {
    case CBI_OP_REDUCE_MEAN:
      return CBI_K_REDUCE_MEAN;
    case CBI_OP_REDUCE_SUM:
      return CBI_K_REDUCE_SUM;
    case CBI_OP_ARGMAX:
      return n->alpha == 1.0f ? CBI_K_REDUCE_ARGMAX_LAST : CBI_K_REDUCE_ARGMAX;
    case CBI_OP_REDUCE_MAX:
    default:
      return CBI_K_REDUCE_MAX;
  }
}

void
cbi_node_split_range (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * total, gint64 * start, gint64 * inner)
{
  gint axis = cbi_axis (n->axis, input->n_dims), d;
  gint64 dim = input->dims[axis], part, len;

  *outer = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (d < axis)
      *outer *= input->dims[d];
    else if (d > axis)
      *inner *= input->dims[d];
  }
  if (n->mode == 1) {
    part = (dim + n->ints[1] - 1) / n->ints[1];
    *start = MIN (n->ints[0] * part, dim);
    len = MIN (part, dim - *start);
  } else {
    *start = n->ints[0];
    len = n->ints[1];
  }
  *total = dim * *inner;
  *start *= *inner;
  *inner *= len;
}

static gboolean
cbi_infer_split (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  gint axis = cbi_axis (n->axis, x->n_dims);
  gint64 dim, len;

  if (axis < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        x->n_dims);
  dim = x->dims[axis];
  if (n->mode == 1) {
    gint64 part = (dim + n->ints[1] - 1) / n->ints[1];
    len = MIN (part, dim - MIN (n->ints[0] * part, dim));
  } else {
    len = n->ints[1];
    if (n->ints[0] + len > dim || (n->ints[2] && n->ints[0] + len != dim))
      return cbi_shape_fail (error, n, "the split sizes do not add up to "
          "the %" G_GINT64_FORMAT " of axis %d", dim, axis);
  }
  if (len < 1)
    return cbi_shape_fail (error, n, "an empty part of axis %d", axis);
  *y = *x;
  y->dims[axis] = len;
  return TRUE;
}

void
cbi_node_layer_norm_view (const CbiNode * n, const CbiShape * input,
    gint64 * rows, gint64 * inner)
{
  gint axis = cbi_axis (n->axis, input->n_dims), d;

  *rows = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (d < axis)
      *rows *= input->dims[d];
    else
      *inner *= input->dims[d];
  }
}

void
cbi_node_softmax_view (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * axis, gint64 * inner)
{
  gint a = cbi_axis (n->axis, input->n_dims), d;

  *outer = *axis = *inner = 1;
  for (d = 0; d < input->n_dims; d++) {
    if (d < a)
      *outer *= input->dims[d];
    else if (n->mode == 1 || d == a)
      *axis *= input->dims[d];
    else
      *inner *= input->dims[d];
  }
}

gint
cbi_node_concat_view (const CbiNode * n, const CbiShape * output,
    gint64 * outer, gint64 * inner)
{
  gint axis = cbi_axis (n->axis, output->n_dims), d;

  *outer = *inner = 1;
  for (d = 0; d < axis; d++)
    *outer *= output->dims[d];
  for (d = axis + 1; d < output->n_dims; d++)
    *inner *= output->dims[d];
  return axis;
}

const CbiNode *
cbi_node_binary_operands (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * shapes, CbiNode * swapped)
{
  const CbiShape *ys = &shapes[n->output];
  gboolean commutative = n->op == CBI_OP_ADD || n->op == CBI_OP_MUL
      || n->op == CBI_OP_MIN || n->op == CBI_OP_MAX;
  gboolean a_const = cbi_graph_tensor (graph, n->inputs[0])->data != NULL;
  gboolean b_const = cbi_graph_tensor (graph, n->inputs[1])->data != NULL;

  if (!commutative || (cbi_shape_equal (&shapes[n->inputs[0]], ys)
          && !a_const) || !cbi_shape_equal (&shapes[n->inputs[1]], ys)
      || b_const)
    return n;
  *swapped = *n;
  swapped->inputs[0] = n->inputs[1];
  swapped->inputs[1] = n->inputs[0];
  return swapped;
}

void
cbi_copy_view_expand (const CbiShape * x, const CbiShape * y,
    CbiCopyView * view)
{
  memset (view, 0, sizeof (*view));
  view->n_dims = y->n_dims;
  memcpy (view->dims, y->dims, y->n_dims * sizeof (gint64));
  cbi_broadcast_strides (y->n_dims, x->n_dims, x->dims, view->strides);
  view->axis = -1;
}

/* LayerNormalization: a scale (and bias) of one value per position of a
 * row. */
static gboolean
cbi_infer_layer_norm (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  gint64 rows, inner;
  guint i;

  if (cbi_axis (n->axis, x->n_dims) < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        x->n_dims);
  cbi_node_layer_norm_view (n, x, &rows, &inner);
  for (i = 1; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && cbi_shape_count (&shapes[n->inputs[i]]) != inner)
      return cbi_shape_fail (error, n, "input %u does not have the %"
          G_GINT64_FORMAT " values of a normalised row", i, inner);
  shapes[n->output] = *x;
  return TRUE;
}

/* A server's output: its batch is the input's; a size the server leaves
 * open is the input frames' height or width, placed as the output's
 * fixed channels say (N x C x H x W where dimension 1 is fixed, N x H x
 * W x C where dimension 3 is, else as the input's layout: @n->mode 1
 * where it is channels last). What else an open size is (a
 * super-resolution's), only a model file says. */
static gboolean
cbi_infer_remote (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *xs = &shapes[n->inputs[0]];
  CbiShape *ys = &shapes[n->output];
  const gint64 *o = n->ints;
  gboolean last;
  gint d;

  ys->n_dims = n->n_ints;
  last = n->n_ints == 4 && (o[1] > 0 ? FALSE : o[3] > 0 ? TRUE : n->mode == 1);
  for (d = 0; d < n->n_ints; d++) {
    ys->dims[d] = d == 0 ? xs->dims[0] : o[d];
    if (ys->dims[d] >= 0)
      continue;
    if (n->n_ints != 4 || xs->n_dims != 4 || d == (last ? 3 : 1))
      return cbi_shape_fail (error, n, "the server leaves dimension %d of "
          "this output open, which is not a frame's size: give the model "
          "file (model=) for its shape", d);
    ys->dims[d] = d == (last ? 1 : 2) ? xs->dims[2] : xs->dims[3];
  }
  return TRUE;
}

gboolean
cbi_infer_node (const CbiGraph * graph, const CbiNode * n, CbiShape * shapes,
    GError ** error)
{
  const CbiShape *xs = &shapes[n->inputs[0]];
  const gint64 *x = xs->dims;
  CbiShape *ys = &shapes[n->output];
  gint64 *y = ys->dims;

  if (cbi_op_info (n->op)->spatial) {
    if (xs->n_dims != 4)
      return cbi_shape_fail (error, n, "takes a 4-D (NCHW) input, not %d-D",
          xs->n_dims);
    ys->n_dims = 4;
  }

  switch (n->op) {
    case CBI_OP_CONV:
      return cbi_infer_conv (graph, n, shapes, error);
    case CBI_OP_CONV_TRANSPOSE:
      return cbi_infer_conv_transpose (graph, n, shapes, error);
    case CBI_OP_PRELU:
      /* the slope broadcasts to the input, one way */
      if (!cbi_shape_broadcasts_to (&shapes[n->inputs[1]], xs))
        return cbi_shape_fail (error, n, "its slope does not broadcast to "
            "its input's shape");
      *ys = *xs;
      return TRUE;
    case CBI_OP_ADD:
    case CBI_OP_SUB:
    case CBI_OP_MUL:
    case CBI_OP_DIV:
    case CBI_OP_MIN:
    case CBI_OP_MAX:
    case CBI_OP_POW_BINARY:
      /* either operand broadcasts, as numpy (a per-frame [N, C, 1, 1]
       * times [N, C, H, W], squeeze-and-excitation's form) */
      if (!cbi_shape_broadcast (xs, &shapes[n->inputs[1]], ys)) {
        gchar *a = cbi_shape_to_string (xs);
        gchar *b = cbi_shape_to_string (&shapes[n->inputs[1]]);
        cbi_shape_fail (error, n, "its inputs (%s and %s) do not broadcast "
            "together", a, b);
        g_free (a);
        g_free (b);
        return FALSE;
      }
      return TRUE;
    case CBI_OP_PAD:{
      const gint64 *p = n->conv.pads;
      /* a reflection needs something to reflect */
      if (n->mode == CBI_PAD_FILL_REFLECT && (MAX (p[0], p[2]) >= x[2]
              || MAX (p[1], p[3]) >= x[3]))
        return cbi_shape_fail (error, n, "reflecting %" G_GINT64_FORMAT "x%"
            G_GINT64_FORMAT " by more than its size", x[3], x[2]);
      y[0] = x[0];
      y[1] = x[1];
      y[2] = x[2] + p[0] + p[2];
      y[3] = x[3] + p[1] + p[3];
      return TRUE;
    }
    case CBI_OP_MAX_POOL:
    case CBI_OP_AVERAGE_POOL:
      y[0] = x[0];
      y[1] = x[1];
      return cbi_infer_window (n, "window", n->conv.kernel, xs, y, error);
    case CBI_OP_GLOBAL_AVERAGE_POOL:
      y[0] = x[0];
      y[1] = x[1];
      y[2] = y[3] = 1;
      return TRUE;
    case CBI_OP_RESIZE:
      *ys = *xs;
      y[2] = (gint64) (x[2] * n->alpha);
      y[3] = (gint64) (x[3] * n->beta);
      if (y[2] < 1 || y[3] < 1)
        return cbi_shape_fail (error, n, "the output would be empty");
      /* the backends map coordinates with the sizes' ratio: ONNX uses the
       * scale, which differs when the size was rounded */
      if ((gdouble) y[2] != x[2] * (gdouble) n->alpha
          || (gdouble) y[3] != x[3] * (gdouble) n->beta)
        return cbi_shape_fail (error, n, "scales %g x %g do not give a whole "
            "output size from %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
            n->alpha, n->beta, x[2], x[3]);
      return TRUE;
    case CBI_OP_DEPTH_TO_SPACE:{
      gint64 b = n->ints[0];
      if (b < 1 || x[1] % (b * b) != 0)
        return cbi_shape_fail (error, n, "%" G_GINT64_FORMAT " channels do "
            "not split into blocks of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
            x[1], b, b);
      y[0] = x[0];
      y[1] = x[1] / (b * b);
      y[2] = x[2] * b;
      y[3] = x[3] * b;
      return TRUE;
    }
    case CBI_OP_CONCAT:
      return cbi_infer_concat (n, shapes, error);
    case CBI_OP_RESHAPE:
      return cbi_infer_reshape (n, shapes, error);
    case CBI_OP_TRANSPOSE:
      return cbi_infer_transpose (n, shapes, error);
    case CBI_OP_GEMM:
      return cbi_infer_gemm (graph, n, shapes, error);
    case CBI_OP_LSTM:
    case CBI_OP_GRU:
    case CBI_OP_RNN:
      return cbi_infer_recurrent (n, shapes, error);
    case CBI_OP_MATMUL:
      return cbi_infer_matmul (n, shapes, error);
    case CBI_OP_SOFTMAX:
      if ((n->mode == 1 && (n->axis < -xs->n_dims || n->axis > xs->n_dims))
          || (n->mode == 0 && cbi_axis (n->axis, xs->n_dims) < 0))
        return cbi_shape_fail (error, n, "axis %d is outside rank %d",
            n->axis, xs->n_dims);
      *ys = *xs;
      return TRUE;
    case CBI_OP_SLICE:
    case CBI_OP_GATHER:
    case CBI_OP_EXPAND:
      /* cbi_graph_resolve_node() worked the output's shape out */
      cbi_shape_set (ys, n->n_ints, n->ints);
      return TRUE;
    case CBI_OP_REDUCE_MEAN:
    case CBI_OP_REDUCE_SUM:
    case CBI_OP_REDUCE_MAX:
      return cbi_infer_reduce (n, shapes, error);
    case CBI_OP_LAYER_NORM:
      return cbi_infer_layer_norm (n, shapes, error);
    case CBI_OP_ARGMAX:
      return cbi_infer_reduce (n, shapes, error);
    case CBI_OP_SPLIT:
      return cbi_infer_split (n, shapes, error);
    case CBI_OP_WHERE:
      if (!cbi_shape_broadcasts_to (&shapes[n->inputs[1]], xs)
          || !cbi_shape_broadcasts_to (&shapes[n->inputs[2]], xs))
        return cbi_shape_fail (error, n, "the condition or the other input "
            "does not broadcast to the activation's shape");
      *ys = *xs;
      return TRUE;
    case CBI_OP_REMOTE:
      return cbi_infer_remote (n, shapes, error);
    case CBI_OP_INSTANCE_NORM:
    default:
      /* element-wise */
      *ys = *xs;
      return TRUE;
  }
}
