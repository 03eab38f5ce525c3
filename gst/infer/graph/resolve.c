/* cudabatchinfer: model graph, the shapes of a plan: shape values read at
 * plan time, shape inference over the graph, and its specialised copy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "graph/graph-private.h"
#include "graph/cbipasses.h"

#include <string.h>

void
cbi_graph_frame_shape (const CbiGraph * graph, gint64 batch, gint64 height,
    gint64 width, CbiShape * shape)
{
  const CbiTensorInfo *in = cbi_graph_tensor (graph, graph->input);

  shape->n_dims = 4;
  shape->dims[0] = batch;
  shape->dims[1] = in->n_dims == 4 ? in->dims[1] : 3;
  shape->dims[2] = height;
  shape->dims[3] = width;
}

/* Plan-time shape values: what a CBI_OP_SHAPE_VALUE node computed, or an
 * int64 constant, put into the node it feeds. */

/* Up to CBI_MAX_GATHER values of one shape value */
typedef struct
{
  CbiShape shape;
  gint count;                   /* -1: the input is absent */
  gint64 v[CBI_MAX_GATHER];
  gdouble f[CBI_MAX_GATHER];
} CbiValue;

/* Input @i of @n, a shape value of at most @max values, into @v. */
static gboolean
cbi_graph_value (const CbiGraph * graph, CbiShapeRun * run,
    const CbiNode * n, guint i, gint max, CbiValue * v, GError ** error)
{
  const CbiTensorInfo *t;
  gint64 count, k;

  v->count = -1;
  if (i >= n->n_inputs || n->inputs[i] < 0)
    return TRUE;
  t = cbi_graph_tensor (graph, n->inputs[i]);
  if (t->ints) {
    cbi_shape_set (&v->shape, t->n_dims, t->dims);
    count = cbi_shape_count (&v->shape);
    if (count > max)
      return cbi_shape_fail (error, n, "input %u has more than %d values",
          i, max);
    for (k = 0; k < count; k++) {
      v->v[k] = t->ints[k];
      v->f[k] = (gdouble) t->ints[k];
    }
  } else if (t->dtype != CBI_DTYPE_INT64 || run == NULL
      || !graph->shape_eval->read (run, n->inputs[i], max, v->v, v->f,
          &v->shape)) {
    return cbi_shape_fail (error, n, "input %u (%s) is not a shape value "
        "of at most %d values", i, t->name, max);
  }
  v->count = (gint) cbi_shape_count (&v->shape);
  return TRUE;
}

/* Computed tensor @t, all its values: its shape into @shape, the values
 * as integers into @ints and as doubles into @floats (both transfer
 * full); FALSE when nothing computed it (or it is bool). */
static gboolean
cbi_graph_read_computed (const CbiGraph * graph, CbiShapeRun * run, gint t,
    CbiShape * shape, gint64 ** ints, gdouble ** floats)
{
  gint64 count;

  /* its size first: a read of none of its values gives its shape */
  shape->n_dims = -1;
  if (run)
    graph->shape_eval->read (run, t, 0, NULL, NULL, shape);
  if (shape->n_dims < 0)
    return FALSE;
  count = cbi_shape_count (shape);
  *ints = g_new (gint64, MAX (count, 1));
  *floats = g_new (gdouble, MAX (count, 1));
  if (graph->shape_eval->read (run, t, count, *ints, *floats, shape))
    return TRUE;
  g_clear_pointer (ints, g_free);
  g_clear_pointer (floats, g_free);
  return FALSE;
}

/* Input @i of @n, a shape value of any size: its shape into @shape and
 * its values into a new array (transfer full), or %NULL with @error set. */
static gint64 *
cbi_graph_values (const CbiGraph * graph, CbiShapeRun * run,
    const CbiNode * n, guint i, CbiShape * shape, GError ** error)
{
  const CbiTensorInfo *t = cbi_graph_tensor (graph, n->inputs[i]);
  gint64 *ints = NULL;
  gdouble *floats = NULL;

  if (t->ints) {
    cbi_shape_set (shape, t->n_dims, t->dims);
    return g_memdup2 (t->ints, MAX (cbi_shape_count (shape), 1)
        * sizeof (gint64));
  }
  if (t->dtype != CBI_DTYPE_INT64
      || !cbi_graph_read_computed (graph, run, n->inputs[i], shape, &ints,
          &floats)) {
    cbi_shape_fail (error, n, "input %u (%s) is not a shape value", i, t->name);
    return NULL;
  }
  g_free (floats);
  return ints;
}

/* The row-major strides of @x, in elements. */
static void
cbi_graph_strides (const CbiShape * x, gint64 * strides)
{
  gint d;

  for (d = x->n_dims - 1; d >= 0; d--)
    strides[d] = d == x->n_dims - 1 ? 1 : strides[d + 1] * x->dims[d + 1];
}

gint64
cbi_slice_range (gint64 start, gint64 end, gint64 step, gint64 len,
    gint64 * first)
{
  /* moved into range before any arithmetic: the bounds may be huge */
  if (start < 0)
    start = start < -len ? 0 : start + len;
  if (end < 0)
    end = end < -len ? -1 : end + len;
  if (step > 0) {
    *first = CLAMP (start, 0, len);
    end = CLAMP (end, 0, len);
    return end > *first ? (end - *first - 1) / step + 1 : 0;
  }
  *first = CLAMP (start, 0, len - 1);
  end = CLAMP (end, -1, len - 1);
  return *first > end ? (*first - end - 1) / -step + 1 : 0;
}

/* Slice: bounds clamped as ONNX does, negative steps walking backwards. */
static gboolean
cbi_resolve_slice (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiValue starts, ends, axes, steps;
  gint64 stride[CBI_MAX_DIMS], first[CBI_MAX_DIMS], step[CBI_MAX_DIMS];
  CbiCopyView *view = &n->view;
  const gint r = x->n_dims;
  guint seen = 0;
  gint i, d;

  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &starts, error)
      || !cbi_graph_value (graph, run, n, 2, CBI_MAX_DIMS, &ends, error)
      || !cbi_graph_value (graph, run, n, 3, CBI_MAX_DIMS, &axes, error)
      || !cbi_graph_value (graph, run, n, 4, CBI_MAX_DIMS, &steps, error))
    return FALSE;
  if (starts.count < 0 || ends.count != starts.count
      || (axes.count >= 0 && axes.count != starts.count)
      || (steps.count >= 0 && steps.count != starts.count))
    return cbi_shape_fail (error, n, "starts, ends, axes and steps differ "
        "in length");
  cbi_graph_strides (x, stride);
  view->n_dims = r;
  for (d = 0; d < r; d++) {
    first[d] = 0;
    step[d] = 1;
    view->dims[d] = x->dims[d];
  }
  for (i = 0; i < starts.count; i++) {
    gint64 a = axes.count >= 0 ? axes.v[i] : i, s = starts.v[i];
    gint64 e = ends.v[i], st = steps.count >= 0 ? steps.v[i] : 1;
    if (a < -r || a >= r)
      return cbi_shape_fail (error, n, "axis %" G_GINT64_FORMAT " is "
          "outside rank %d", a, r);
    d = (gint) (a < 0 ? a + r : a);
    if ((seen & (1u << d)) || st == 0 || st == G_MININT64)
      return cbi_shape_fail (error, n, "axis %d given twice or a step of 0", d);
    seen |= 1u << d;
    view->dims[d] = cbi_slice_range (s, e, st, x->dims[d], &first[d]);
    step[d] = st;
  }
  view->offset = 0;
  for (d = 0; d < r; d++) {
    if (view->dims[d] < 1)
      return cbi_shape_fail (error, n, "the output would be empty along "
          "axis %d", d);
    view->strides[d] = stride[d] * step[d];
    view->offset += first[d] * stride[d];
  }
  return TRUE;
}

/* Gather of constant indices: one index drops the axis, a list walks it
 * through the view's index. */
static gboolean
cbi_resolve_gather (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, CbiGraph * out, GError ** error)
{
  CbiCopyView *view = &n->view;
  gint64 stride[CBI_MAX_DIMS], count, k, *ind;
  gint axis = cbi_axis (n->axis, x->n_dims), d, o = 0;
  CbiShape shape;

  if (axis < 0)
    return cbi_shape_fail (error, n, "axis %d is outside rank %d", n->axis,
        x->n_dims);
  /* any number of indices: an exporter computes them from shapes */
  if (n->n_inputs < 2 || n->inputs[1] < 0
      || (ind = cbi_graph_values (graph, run, n, 1, &shape, error)) == NULL)
    return error && *error ? FALSE : cbi_shape_fail (error, n, "no indices");
  count = cbi_shape_count (&shape);
  if (count < 1 || count > G_MAXINT
      || x->n_dims - 1 + shape.n_dims > CBI_MAX_DIMS) {
    g_free (ind);
    return cbi_shape_fail (error, n, "1 or more indices giving at most %d "
        "dimensions are supported", CBI_MAX_DIMS);
  }
  for (k = 0; k < count; k++) {
    if (ind[k] < -x->dims[axis] || ind[k] >= x->dims[axis]) {
      cbi_shape_fail (error, n, "index %" G_GINT64_FORMAT " is outside "
          "dimension %d of %" G_GINT64_FORMAT, ind[k], axis, x->dims[axis]);
      g_free (ind);
      return FALSE;
    }
    if (ind[k] < 0)
      ind[k] += x->dims[axis];
  }
  cbi_graph_strides (x, stride);
  view->offset = 0;
  view->axis = -1;
  view->n_dims = 0;
  view->long_index = NULL;
  for (d = 0; d < x->n_dims; d++) {
    if (d == axis && shape.n_dims == 0) {
      view->offset = ind[0] * stride[d];
      continue;
    }
    view->dims[view->n_dims] = d == axis ? count : x->dims[d];
    view->strides[view->n_dims++] = stride[d];
  }
  if (shape.n_dims > 0) {
    view->axis = axis;
    view->n_index = (gint) count;
    if (count <= CBI_MAX_GATHER) {
      memcpy (view->index, ind, count * sizeof (gint64));
    } else if (out) {
      /* the specialised graph keeps them as long as its nodes */
      g_ptr_array_add (out->plan_values, ind);
      view->long_index = ind;
      ind = NULL;
    }
  }
  g_free (ind);
  /* the output: the indices' dimensions in place of the axis */
  for (d = 0; d < axis; d++)
    n->ints[o++] = x->dims[d];
  for (d = 0; d < shape.n_dims; d++)
    n->ints[o++] = shape.dims[d];
  for (d = axis + 1; d < x->n_dims; d++)
    n->ints[o++] = x->dims[d];
  n->n_ints = o;
  return TRUE;
}

/* Expand: the input broadcast with the shape given (numpy rules both
 * ways); a repeated dimension reads with a stride of 0. */
static gboolean
cbi_resolve_expand (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiCopyView *view = &n->view;
  gint64 stride[CBI_MAX_DIMS];
  CbiValue shape;
  gint r, d;

  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &shape, error))
    return FALSE;
  if (shape.count < 0 || shape.shape.n_dims > 1)
    return cbi_shape_fail (error, n, "the shape must be a list");
  r = MAX (x->n_dims, shape.count);
  cbi_graph_strides (x, stride);
  view->n_dims = r;
  view->offset = 0;
  view->axis = -1;
  for (d = 0; d < r; d++) {
    gint xd = d - (r - x->n_dims), sd = d - (r - shape.count);
    gint64 a = xd >= 0 ? x->dims[xd] : 1, b = sd >= 0 ? shape.v[sd] : 1;
    if (a != b && a != 1 && b != 1)
      return cbi_shape_fail (error, n, "%" G_GINT64_FORMAT " does not "
          "broadcast to %" G_GINT64_FORMAT " in dimension %d", a, b, d);
    view->dims[d] = a == 1 ? b : a;
    if (view->dims[d] < 1)
      return cbi_shape_fail (error, n, "the output would be empty");
    view->strides[d] = xd >= 0 && a != 1 ? stride[xd] : 0;
  }
  return TRUE;
}

/* Squeeze and Unsqueeze: the output's shape, which a Reshape then
 * gives. */
static gboolean
cbi_resolve_squeeze (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  const gboolean unsqueeze = n->op == CBI_OP_UNSQUEEZE;
  gboolean marked[CBI_MAX_DIMS] = { FALSE, };
  CbiValue axes;
  gint rank, a, d, k = 0, o = 0;

  if (!cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &axes, error))
    return FALSE;
  if (axes.count < 0 && n->mode == 0) {
    axes.count = n->n_ints;
    memcpy (axes.v, n->ints, n->n_ints * sizeof (gint64));
  }
  rank = unsqueeze ? x->n_dims + MAX (axes.count, 0) : x->n_dims;
  if (rank > CBI_MAX_DIMS)
    return cbi_shape_fail (error, n, "the output would have %d dimensions",
        rank);
  for (a = 0; a < axes.count; a++) {
    gint axis;
    if (axes.v[a] < -rank || axes.v[a] >= rank)
      return cbi_shape_fail (error, n, "axis %" G_GINT64_FORMAT " is "
          "outside rank %d", axes.v[a], rank);
    axis = (gint) (axes.v[a] < 0 ? axes.v[a] + rank : axes.v[a]);
    if (marked[axis] || (!unsqueeze && x->dims[axis] != 1))
      return cbi_shape_fail (error, n, "axis %d is given twice or is not "
          "1", axis);
    marked[axis] = TRUE;
  }
  for (d = 0; d < rank; d++) {
    if (unsqueeze)
      n->ints[o++] = marked[d] ? 1 : x->dims[k++];
    else if (!(axes.count < 0 ? x->dims[d] == 1 : marked[d]))
      n->ints[o++] = x->dims[d];
  }
  n->n_ints = o;
  n->op = CBI_OP_RESHAPE;
  n->mode = 0;
  return TRUE;
}

/* Resize's scales, or its sizes as scales when they are whole multiples
 * of the planned input's (the backends map coordinates with the ratio). */
static gboolean
cbi_resolve_resize (const CbiGraph * graph, CbiShapeRun * run, CbiNode * n,
    const CbiShape * x, GError ** error)
{
  CbiValue scales, sizes;
  gint d;

  if (!cbi_graph_value (graph, run, n, 1, 4, &scales, error)
      || !cbi_graph_value (graph, run, n, 2, 4, &sizes, error))
    return FALSE;
  if (x->n_dims != 4)
    return cbi_shape_fail (error, n, "takes a 4-D (NCHW) input, not %d-D",
        x->n_dims);
  if (scales.count == 4) {
    if (scales.f[0] != 1.0 || scales.f[1] != 1.0 || !(scales.f[2] > 0.0)
        || !(scales.f[3] > 0.0) || (n->mode == CBI_RESIZE_NEAREST
            && (scales.f[2] != (gint) scales.f[2]
                || scales.f[3] != (gint) scales.f[3])))
      return cbi_shape_fail (error, n, "scales %g, %g, %g, %g: only (1, 1, "
          "h, w), integers for nearest, are supported", scales.f[0],
          scales.f[1], scales.f[2], scales.f[3]);
    n->alpha = (gfloat) scales.f[2];
    n->beta = (gfloat) scales.f[3];
    return TRUE;
  }
  if (sizes.count != 4 || sizes.v[0] != x->dims[0]
      || sizes.v[1] != x->dims[1])
    return cbi_shape_fail (error, n, "its sizes must be 4 values keeping N "
        "and C");
  for (d = 2; d < 4; d++)
    if (sizes.v[d] < 1 || sizes.v[d] % x->dims[d] != 0)
      return cbi_shape_fail (error, n, "sizes %" G_GINT64_FORMAT "x%"
          G_GINT64_FORMAT " are not whole multiples of the planned input's "
          "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " (only such sizes map to "
          "the scales the backends run)", sizes.v[3], sizes.v[2], x->dims[3],
          x->dims[2]);
  n->alpha = (gfloat) (sizes.v[2] / x->dims[2]);
  n->beta = (gfloat) (sizes.v[3] / x->dims[3]);
  return TRUE;
}

/* Puts the shape values node @n reads into it (a copy, for this plan)
 * and drops those inputs: backends see float tensors only. */
static gboolean
cbi_graph_resolve_node (const CbiGraph * graph, CbiShapeRun * run,
    CbiNode * n, const CbiShape * shapes, CbiGraph * out, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  gboolean ok = TRUE;
  CbiValue v;
  guint i;

  switch (n->op) {
    case CBI_OP_RESHAPE:
      if (n->n_inputs < 2 || n->mode == 1)
        return TRUE;
      ok = cbi_graph_value (graph, run, n, 1, CBI_MAX_DIMS, &v, error);
      if (ok && (v.count < 0 || v.shape.n_dims != 1))
        ok = cbi_shape_fail (error, n, "the shape must be a list");
      if (ok) {
        n->n_ints = v.count;
        memcpy (n->ints, v.v, v.count * sizeof (gint64));
      }
      break;
    case CBI_OP_RESIZE:
      if (n->n_inputs < 2)
        return TRUE;
      ok = cbi_resolve_resize (graph, run, n, x, error);
      break;
    case CBI_OP_PAD:
      if (n->n_inputs < 2)
        return TRUE;
      ok = cbi_graph_value (graph, run, n, 1, 8, &v, error);
      /* [N, C, H, W] begins, then ends: as the importer takes them */
      if (ok && (v.count != 8 || v.v[0] || v.v[1] || v.v[4] || v.v[5]
              || v.v[2] < 0 || v.v[3] < 0 || v.v[6] < 0 || v.v[7] < 0))
        ok = cbi_shape_fail (error, n, "only non-negative pads of height "
            "and width are supported");
      if (ok) {
        n->conv.pads[0] = v.v[2];
        n->conv.pads[1] = v.v[3];
        n->conv.pads[2] = v.v[6];
        n->conv.pads[3] = v.v[7];
      }
      break;
    case CBI_OP_SLICE:
      ok = cbi_resolve_slice (graph, run, n, x, error);
      break;
    case CBI_OP_GATHER:
      ok = cbi_resolve_gather (graph, run, n, x, out, error);
      break;
    case CBI_OP_EXPAND:
      ok = cbi_resolve_expand (graph, run, n, x, error);
      break;
    case CBI_OP_SQUEEZE:
    case CBI_OP_UNSQUEEZE:
      ok = cbi_resolve_squeeze (graph, run, n, x, error);
      break;
    default:
      return TRUE;
  }
  if (n->op == CBI_OP_SLICE || n->op == CBI_OP_EXPAND) {
    n->view.axis = -1;
    n->n_ints = n->view.n_dims;
    memcpy (n->ints, n->view.dims, n->view.n_dims * sizeof (gint64));
  }
  for (i = 1; i < CBI_MAX_NODE_INPUTS; i++)
    n->inputs[i] = -1;
  n->n_inputs = 1;
  return ok;
}

/* Whether tensor @t holds a value a shape computation makes at plan time
 * (an int64 tensor of the graph without values of its own). */
static gboolean
cbi_graph_is_computed (const CbiGraph * graph, gint t)
{
  const CbiTensorInfo *info = cbi_graph_tensor (graph, t);

  return info->dtype == CBI_DTYPE_INT64 && info->ints == NULL;
}

/* The float32 inputs of node @n that shape computations made (a class
 * token expanded to the batch, an anchor grid from a feature map's size):
 * constants of this plan. Their shapes go into @shapes; with @out, their
 * values, as float32, into @out's copy of their tensor, which @out owns. */
static gboolean
cbi_graph_plan_values (const CbiGraph * graph, CbiShapeRun * run,
    const CbiNode * n, CbiShape * shapes, CbiGraph * out, GError ** error)
{
  guint i;

  for (i = 0; i < n->n_inputs; i++) {
    gint t = n->inputs[i];
    const CbiTensorInfo *info;
    CbiTensorInfo *copy;
    gint64 count, k, *ints;
    gdouble *floats;
    gfloat *data;
    CbiShape shape;

    if (t < 0 || !cbi_graph_is_computed (graph, t))
      continue;
    info = cbi_graph_tensor (graph, t);
    if (!cbi_graph_read_computed (graph, run, t, &shape, &ints, &floats))
      return cbi_shape_fail (error, n, "input %s was not computed as numbers",
          info->name);
    count = cbi_shape_count (&shape);
    shapes[t] = shape;
    if (out) {
      data = g_new (gfloat, MAX (count, 1));
      for (k = 0; k < count; k++)
        data[k] = (gfloat) floats[k];
      copy = &g_array_index (out->tensors, CbiTensorInfo, t);
      copy->data = data;
      copy->dtype = CBI_DTYPE_FLOAT;
      copy->n_dims = shape.n_dims;
      memcpy (copy->dims, shape.dims, sizeof (copy->dims));
      g_ptr_array_add (out->plan_values, data);
    }
    g_free (ints);
    g_free (floats);
  }
  return TRUE;
}

/* Infers each node's shape, computing shape values on the way; with
 * @out, appends the nodes backends plan to it. */
static gboolean
cbi_graph_resolve (const CbiGraph * graph, CbiShape * shapes, CbiGraph * out,
    GError ** error)
{
  CbiShapeEval *eval = graph->shape_eval;
  CbiShapeRun *run = eval ? eval->begin (eval, graph) : NULL;
  gboolean ok = TRUE;
  guint i;

  for (i = 0; ok && i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    CbiNode copy;
    if (n->op == CBI_OP_SHAPE_VALUE) {
      ok = run ? eval->eval (run, n, shapes, error) :
          cbi_shape_fail (error, n, "the graph has no shape evaluator");
      if (eval)
        eval->n_evals++;
      continue;
    }
    copy = *n;
    ok = cbi_graph_resolve_node (graph, run, &copy, shapes, out, error)
        && cbi_graph_plan_values (graph, run, &copy, shapes, out, error)
        && cbi_infer_node (graph, &copy, shapes, error);
    if (ok && out) {
      copy.name = g_strdup (copy.name);
      g_array_append_val (out->nodes, copy);
    }
  }
  if (run)
    eval->end (run);
  return ok;
}


/* Shape inference, and with @out, the nodes backends plan appended to it
 * (cbi_graph_specialise()). */
static gboolean
cbi_graph_plan_shapes (const CbiGraph * graph, const CbiShape * input,
    CbiShape * shapes, CbiGraph * out, GError ** error)
{
  const CbiTensorInfo *in = cbi_graph_tensor (graph, graph->input);
  guint i;
  gint d;

  if (input->n_dims != in->n_dims) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "input %s has %d "
        "dimensions, not %d", in->name, in->n_dims, input->n_dims);
    return FALSE;
  }
  for (d = 0; d < in->n_dims; d++) {
    if (input->dims[d] < 1 || (in->dims[d] > 0 && d > 0
            && in->dims[d] != input->dims[d])) {
      gchar *given = cbi_shape_to_string (input);
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "input %s cannot take "
          "a tensor of %s: its dimension %d is %" G_GINT64_FORMAT, in->name,
          given, d, in->dims[d]);
      g_free (given);
      return FALSE;
    }
  }
  for (i = 0; i < graph->tensors->len; i++) {
    const CbiTensorInfo *t = cbi_graph_tensor (graph, i);
    if (t->data)
      cbi_shape_set (&shapes[i], t->n_dims, t->dims);
  }
  shapes[graph->input] = *input;
  return cbi_graph_resolve (graph, shapes, out, error);
}

gboolean
cbi_graph_infer_shapes (const CbiGraph * graph, const CbiShape * input,
    CbiShape * shapes, GError ** error)
{
  return cbi_graph_plan_shapes (graph, input, shapes, NULL, error);
}

CbiGraph *
cbi_graph_specialise (const CbiGraph * graph, const CbiShape * input,
    CbiShape * shapes, GError ** error)
{
  CbiGraph *out = g_new0 (CbiGraph, 1);

  /* the tensors as the graph has them, names and data borrowed (no clear
   * function), where the plan's computed values can be constants */
  out->tensors = g_array_sized_new (FALSE, TRUE, sizeof (CbiTensorInfo),
      graph->tensors->len);
  g_array_append_vals (out->tensors, graph->tensors->data, graph->tensors->len);
  out->plan_values = g_ptr_array_new_with_free_func (g_free);
  out->nodes = g_array_new (FALSE, TRUE, sizeof (CbiNode));
  g_array_set_clear_func (out->nodes, cbi_node_clear);
  out->input = graph->input;
  out->input_channels_last = graph->input_channels_last;
  memcpy (out->outputs, graph->outputs, sizeof (out->outputs));
  out->n_outputs = graph->n_outputs;
  if (!cbi_graph_plan_shapes (graph, input, shapes, out, error))
    g_clear_pointer (&out, cbi_graph_free);
  if (out) {
    /* a scale the exporter computes from a shape (an attention's
     * 1 / sqrt (d), ViT's and Swin's) is a constant of this plan: one
     * value, folded as a constant of the model is at import; then it
     * scales the product's output */
    cbi_graph_fuse_affine (out, shapes);
    cbi_graph_scale_products (out, shapes);
  }
  return out;
}
