/* cudabatchinfer: ONNX model import, node translation
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each ONNX node becomes a node of the engine's graph, with its attributes
 * checked and kept in CbiNode; what the engine cannot run is refused with
 * the node's name and the reason. The op table (ops.c) calls the read
 * and check functions here.
 */
#include "onnx/onnx-private.h"

#include <math.h>
#include <string.h>

/* Copies the ints of attribute @name into @out when it has exactly @n. */
static gboolean
cbi_onnx_ints (const Onnx__NodeProto * n, const gchar * name, gsize count,
    gint64 * out, GError ** error)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, name);

  if (a == NULL)
    return TRUE;
  if (a->n_ints != count)
    return cbi_onnx_fail (error, "node %s: attribute %s has %" G_GSIZE_FORMAT
        " values, expected %" G_GSIZE_FORMAT " (2-D convolution)",
        cbi_onnx_name (n->name), name, a->n_ints, count);
  memcpy (out, a->ints, count * sizeof (gint64));
  return TRUE;
}

/* auto_pad: NOTSET (pads as given), VALID (no pads), or SAME_UPPER and
 * SAME_LOWER, whose pads each plan computes from its input size
 * (cbi_node_pads ()). */
static gboolean
cbi_onnx_auto_pad (const Onnx__NodeProto * n, CbiConvAttrs * c, GError ** error)
{
  const Onnx__AttributeProto *auto_pad = cbi_onnx_attr (n, "auto_pad");
  const gchar *name = cbi_onnx_name (n->name);
  gboolean known = TRUE;
  gchar *mode;

  if (auto_pad == NULL || !auto_pad->has_s)
    return TRUE;
  mode = g_strndup ((const gchar *) auto_pad->s.data, auto_pad->s.len);
  if (strcmp (mode, "VALID") == 0)
    memset (c->pads, 0, sizeof (c->pads));
  else if (strcmp (mode, "SAME_UPPER") == 0)
    c->auto_pad = CBI_AUTO_PAD_SAME_UPPER;
  else if (strcmp (mode, "SAME_LOWER") == 0)
    c->auto_pad = CBI_AUTO_PAD_SAME_LOWER;
  else
    known = strcmp (mode, "NOTSET") == 0;
  if (!known)
    cbi_onnx_fail (error, "node %s: auto_pad %s is not supported", name, mode);
  g_free (mode);
  return known;
}

static gboolean
cbi_onnx_conv_attrs (const Onnx__NodeProto * n, const CbiTensorInfo * w,
    CbiConvAttrs * c, GError ** error)
{
  const Onnx__AttributeProto *group = cbi_onnx_attr (n, "group");
  const gchar *name = cbi_onnx_name (n->name);
  gint64 kernel[2] = { w->dims[2], w->dims[3] };
  guint i;

  memset (c, 0, sizeof (*c));
  c->strides[0] = c->strides[1] = 1;
  c->dilations[0] = c->dilations[1] = 1;
  c->group = group && group->has_i ? group->i : 1;
  if (!cbi_onnx_ints (n, "strides", 2, c->strides, error)
      || !cbi_onnx_ints (n, "dilations", 2, c->dilations, error)
      || !cbi_onnx_ints (n, "pads", 4, c->pads, error)
      || !cbi_onnx_ints (n, "kernel_shape", 2, kernel, error))
    return FALSE;
  if (kernel[0] != w->dims[2] || kernel[1] != w->dims[3])
    return cbi_onnx_fail (error, "node %s: kernel_shape does not match the "
        "weights", name);
  for (i = 0; i < 4; i++)
    if (c->pads[i] < 0 || (i < 2 && (c->strides[i] < 1 || c->dilations[i] < 1)))
      return cbi_onnx_fail (error, "node %s: negative pads or strides or "
          "dilations below 1", name);
  if (c->group < 1)
    return cbi_onnx_fail (error, "node %s: group %" G_GINT64_FORMAT, name,
        c->group);
  return cbi_onnx_auto_pad (n, c, error);
}

/* What ConvTranspose adds to Conv's attributes: output_padding, within
 * the end padding; no group, no output_shape. */
static gboolean
cbi_onnx_transpose_attrs (const Onnx__NodeProto * n, CbiConvAttrs * c,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gint d;

  if (c->group != 1 || cbi_onnx_attr (n, "output_shape"))
    return cbi_onnx_fail (error, "node %s (ConvTranspose): group and "
        "output_shape are not supported", name);
  if (c->auto_pad != CBI_AUTO_PAD_NOTSET)
    return cbi_onnx_fail (error, "node %s (ConvTranspose): auto_pad SAME "
        "is not supported", name);
  if (!cbi_onnx_ints (n, "output_padding", 2, c->output_padding, error))
    return FALSE;
  for (d = 0; d < 2; d++)
    if (c->output_padding[d] < 0 || c->output_padding[d] > c->pads[d + 2])
      return cbi_onnx_fail (error, "node %s (ConvTranspose): "
          "output_padding beyond the end padding is not supported", name);
  return TRUE;
}

/* MaxPool and AveragePool: 2-D windows; ceil_mode runs as more end
 * padding, which an average that counts the padding would count. */
static gboolean
cbi_onnx_pool_attrs (const Onnx__NodeProto * n, CbiConvAttrs * c,
    GError ** error)
{
  const Onnx__AttributeProto *ceil = cbi_onnx_attr (n, "ceil_mode");
  const Onnx__AttributeProto *incl = cbi_onnx_attr (n, "count_include_pad");
  const Onnx__AttributeProto *kernel = cbi_onnx_attr (n, "kernel_shape");
  const gchar *name = cbi_onnx_name (n->name);
  gint i;

  memset (c, 0, sizeof (*c));
  c->strides[0] = c->strides[1] = 1;
  c->dilations[0] = c->dilations[1] = 1;
  c->group = 1;
  if (kernel == NULL || kernel->n_ints != 2)
    return cbi_onnx_fail (error, "node %s: a 2-D kernel_shape is needed", name);
  memcpy (c->kernel, kernel->ints, sizeof (c->kernel));
  c->count_include_pad = incl && incl->has_i && incl->i != 0;
  c->ceil_mode = ceil && ceil->has_i && ceil->i != 0;
  if (c->ceil_mode && c->count_include_pad)
    return cbi_onnx_fail (error, "node %s: ceil_mode with "
        "count_include_pad is not supported", name);
  if (n->n_output > 1 && n->output[1] && *n->output[1])
    return cbi_onnx_fail (error, "node %s: the Indices output of MaxPool is "
        "not supported", name);
  if (!cbi_onnx_ints (n, "strides", 2, c->strides, error)
      || !cbi_onnx_ints (n, "dilations", 2, c->dilations, error)
      || !cbi_onnx_ints (n, "pads", 4, c->pads, error)
      || !cbi_onnx_auto_pad (n, c, error))
    return FALSE;
  for (i = 0; i < 4; i++)
    if (c->pads[i] < 0 || (i < 2 && (c->kernel[i] < 1 || c->strides[i] < 1
                || c->dilations[i] < 1)))
      return cbi_onnx_fail (error, "node %s: negative pads, or a kernel, "
          "strides or dilations below 1", name);
  return TRUE;
}

/* Whether nearest Resize @n maps output o to input floor (o / scale) at
 * integer scales: half-pixel centres rounding half down, or asymmetric
 * ones rounded down. */
static gboolean
cbi_onnx_nearest_floor (const Onnx__NodeProto * n, GError ** error)
{
  gchar *coord = cbi_onnx_string (n, "coordinate_transformation_mode",
      "half_pixel");
  gchar *round = cbi_onnx_string (n, "nearest_mode", "round_prefer_floor");
  gboolean ok = (strcmp (coord, "half_pixel") == 0
      && strcmp (round, "round_prefer_floor") == 0)
      || (strcmp (coord, "asymmetric") == 0 && strcmp (round, "floor") == 0);

  if (!ok)
    cbi_onnx_fail (error, "node %s: nearest resizing to sizes with %s "
        "coordinates and %s rounding is not supported (half_pixel with "
        "round_prefer_floor, asymmetric with floor are)",
        cbi_onnx_name (n->name), coord, round);
  g_free (coord);
  g_free (round);
  return ok;
}

/* Resize (opset 10 on: X, roi, scales, sizes) and Upsample (scales as an
 * input, or as an attribute before opset 9): constant scales of 1 for N
 * and C, nearest with integer scales or linear with half-pixel centres. */
static gboolean
cbi_onnx_resize (CbiImporter * im, const Onnx__NodeProto * n,
    CbiResizeMode * mode, gfloat * scale_h, gfloat * scale_w,
    gint * computed, GError ** error)
{
  static const gfloat planned[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "scales");
  gchar *m = cbi_onnx_string (n, "mode", "nearest");
  gchar *coord = cbi_onnx_string (n, "coordinate_transformation_mode",
      "half_pixel");
  const gfloat *scales = NULL;
  gboolean upsample = g_strcmp0 (n->op_type, "Upsample") == 0, ok = FALSE;
  gint64 count;
  gint n_dims;

  scales = cbi_onnx_floats_input (im, n, upsample ? 1 : 2, &count, &n_dims);
  if (count != 4 || n_dims != 1)
    scales = NULL;
  if (scales == NULL && attr && attr->n_floats == 4)
    scales = attr->floats;
  /* scales computed from shapes, or sizes: scales for each plan
   * (cbi_graph_specialise()); the mode is checked here */
  computed[0] = computed[1] = -1;
  if (scales == NULL && !upsample) {
    const CbiOnnxConst *c = cbi_onnx_const (im, n->n_input > 2 ?
        n->input[2] : NULL);
    if (c == NULL && n->n_input > 2 && *n->input[2])
      cbi_onnx_int_tensor (im, n, 2, &computed[0], NULL);
    if (!cbi_onnx_int_tensor (im, n, 3, &computed[1], error)) {
      g_free (m);
      g_free (coord);
      return FALSE;
    }
    if (computed[0] >= 0 || computed[1] >= 0)
      scales = planned;
  }
  if (scales == planned) {
    gchar *policy = cbi_onnx_string (n, "keep_aspect_ratio_policy",
        "stretch");
    gboolean stretch = strcmp (policy, "stretch") == 0;
    g_free (policy);
    if (!stretch || cbi_onnx_attr (n, "axes")) {
      g_free (m);
      g_free (coord);
      return cbi_onnx_fail (error, "node %s (Resize): axes and "
          "keep_aspect_ratio_policy are not supported", name);
    }
  }

  if (cbi_onnx_attr (n, "antialias") && cbi_onnx_attr (n, "antialias")->i) {
    cbi_onnx_fail (error, "node %s (%s): antialias is not supported", name,
        n->op_type);
  } else if (scales == NULL || scales[0] != 1.0f || scales[1] != 1.0f
      || scales[2] <= 0.0f || scales[3] <= 0.0f) {
    cbi_onnx_fail (error, "node %s (%s): only constant scales (1, 1, h, w) "
        "are supported", name, n->op_type);
  } else if (g_strcmp0 (m, "nearest") == 0) {
    *mode = CBI_RESIZE_NEAREST;
    ok = scales[2] == (gint) scales[2] && scales[3] == (gint) scales[3];
    if (!ok)
      cbi_onnx_fail (error, "node %s: nearest resizing needs integer "
          "scales", name);
    /* computed sizes come with any mapping: only those that pick input
     * floor (o / scale) at integer scales, as the backends do, run */
    if (ok && scales == planned)
      ok = cbi_onnx_nearest_floor (n, error);
  } else if (g_strcmp0 (m, "linear") == 0 || g_strcmp0 (m, "bilinear") == 0) {
    *mode = CBI_RESIZE_LINEAR;
    ok = upsample || g_strcmp0 (coord, "half_pixel") == 0
        || g_strcmp0 (coord, "pytorch_half_pixel") == 0;
    if (!ok)
      cbi_onnx_fail (error, "node %s: linear resizing with %s coordinates "
          "is not supported (half_pixel is)", name, coord);
  } else {
    cbi_onnx_fail (error, "node %s: mode %s is not supported", name, m);
  }
  if (ok) {
    *scale_h = scales[2];
    *scale_w = scales[3];
  }
  g_free (m);
  g_free (coord);
  return ok;
}

/* Pad: pads from an int64 constant (opset 11 on) or an attribute, on
 * height and width only; the constant value from a scalar input or the
 * 'value' attribute. */
static gboolean
cbi_onnx_pad (CbiImporter * im, const Onnx__NodeProto * n, CbiConvAttrs * c,
    gint * fill, gfloat * value, gint * computed, GError ** error)
{
  static const gint64 planned[8] = { 0, };
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "pads");
  gchar *mode = cbi_onnx_string (n, "mode", "constant");
  const CbiOnnxConst *ints = cbi_onnx_int_input (im, n, 1);
  const gint64 *pads = ints && ints->count == 8 ? (const gint64 *) ints->data :
      attr && attr->n_ints == 8 ? attr->ints : NULL;
  gboolean ok = TRUE;

  /* pads computed from shapes: checked and set for each plan */
  *computed = -1;
  if (pads == NULL && ints == NULL && n->n_input > 1
      && cbi_onnx_const (im, n->input[1]) == NULL
      && cbi_onnx_int_tensor (im, n, 1, computed, NULL) && *computed >= 0)
    pads = planned;

  memset (c, 0, sizeof (*c));
  if (strcmp (mode, "constant") == 0)
    *fill = CBI_PAD_FILL_CONSTANT;
  else if (strcmp (mode, "reflect") == 0)
    *fill = CBI_PAD_FILL_REFLECT;
  else if (strcmp (mode, "edge") == 0)
    *fill = CBI_PAD_FILL_EDGE;
  else
    ok = cbi_onnx_fail (error, "node %s (Pad): mode %s is not supported",
        name, mode);
  g_free (mode);
  if (!ok)
    return FALSE;
  if (n->n_input > 3 && n->input[3] && *n->input[3])
    return cbi_onnx_fail (error, "node %s (Pad): axes are not supported", name);
  /* [N, C, H, W] begins, then ends */
  if (pads == NULL || pads[0] || pads[1] || pads[4] || pads[5]
      || pads[2] < 0 || pads[3] < 0 || pads[6] < 0 || pads[7] < 0)
    return cbi_onnx_fail (error, "node %s (Pad): only constant, "
        "non-negative pads of height and width are supported", name);
  c->pads[0] = pads[2];
  c->pads[1] = pads[3];
  c->pads[2] = pads[6];
  c->pads[3] = pads[7];
  return cbi_onnx_clip_bound (im, n, 2, "value", 0.0f, value, error);
}


/* How many node inputs of the ONNX graph read @name. */
static guint
cbi_onnx_readers (CbiImporter * im, const gchar * name)
{
  guint count = 0;
  gsize i, j;

  for (i = 0; i < im->onnx->n_node; i++)
    for (j = 0; j < im->onnx->node[i]->n_input; j++)
      if (g_strcmp0 (im->onnx->node[i]->input[j], name) == 0)
        count++;
  return count;
}

/* The 1-D constant of @count floats at input @i of @n, or NULL. */
static const gfloat *
cbi_onnx_vector (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    gint64 count)
{
  gint64 n_values;
  gint n_dims;
  const gfloat *data = cbi_onnx_floats_input (im, n, i, &n_values, &n_dims);

  return n_values == count && n_dims == 1 ? data : NULL;
}

/* A BatchNormalization on anything but a Conv: its constants folded into
 * one scale and one shift per channel, of shape [C, 1, 1] (the input is
 * NCHW), run as a Mul and an Add on activation @x. */
static gboolean
cbi_onnx_batch_norm_affine (CbiImporter * im, const Onnx__NodeProto * n,
    gint x, gfloat eps, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const gfloat *scale, *shift, *mean, *var;
  gint64 c, i, dims[3] = { 0, 1, 1 };
  gint n_dims, k_index = -1, b_index = -1, scaled = -1, out = -1, in[2];
  gfloat *k, *b;
  gchar *k_name, *b_name, *s_name;
  gboolean ok;

  scale = cbi_onnx_floats_input (im, n, 1, &c, &n_dims);
  if (scale == NULL || n_dims != 1 || x < 0
      || cbi_graph_tensor (im->graph, x)->data != NULL)
    return cbi_onnx_fail (error, "node %s (BatchNormalization): the input "
        "must be an activation and scale a 1-D constant", name);
  shift = cbi_onnx_vector (im, n, 2, c);
  mean = cbi_onnx_vector (im, n, 3, c);
  var = cbi_onnx_vector (im, n, 4, c);
  if (!shift || !mean || !var)
    return cbi_onnx_fail (error, "node %s (BatchNormalization): B, mean and "
        "var must be constants of %" G_GINT64_FORMAT " values", name, c);
  k = g_new (gfloat, c);
  b = g_new (gfloat, c);
  for (i = 0; i < c; i++) {
    k[i] = scale[i] / sqrtf (var[i] + eps);
    b[i] = shift[i] - mean[i] * k[i];
  }
  dims[0] = c;
  k_name = cbi_onnx_internal_name (im, n, "folded_scale");
  b_name = cbi_onnx_internal_name (im, n, "folded_shift");
  s_name = cbi_onnx_internal_name (im, n, "scaled");
  ok = cbi_onnx_add (im, k_name, 3, dims, k, &k_index, error);
  if (!ok)
    g_free (b);
  ok = ok && cbi_onnx_add (im, b_name, 3, dims, b, &b_index, error)
      && cbi_onnx_add (im, s_name, 0, NULL, NULL, &scaled, error)
      && cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &out, error);
  g_free (k_name);
  g_free (b_name);
  g_free (s_name);
  if (!ok)
    return FALSE;
  in[0] = x;
  in[1] = k_index;
  cbi_graph_add_node (im->graph, CBI_OP_MUL, name, 2, in, scaled, NULL);
  in[0] = scaled;
  in[1] = b_index;
  cbi_graph_add_node (im->graph, CBI_OP_ADD, name, 2, in, out, NULL);
  return TRUE;
}

/* A BatchNormalization right after a Conv (its only reader) is folded into
 * the Conv's weights and bias, as inference frameworks do: no op at run
 * time. Its output name then stands for the Conv's output. Any other runs
 * as a per-channel scale and shift (cbi_onnx_batch_norm_affine ()). */
gboolean
cbi_onnx_add_batch_norm (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gint x = cbi_onnx_node_input (im, n, 0), w_index = -1, b_index = -1;
  gfloat eps = cbi_onnx_float (n, "epsilon", 1e-5f);
  const gfloat *scale, *shift, *mean, *var, *bias = NULL;
  CbiNode *conv = NULL;
  CbiTensorInfo *w;
  gint64 o, out_c, count, block, k_dims[1];
  gfloat *weights, *biases;
  gchar *w_name, *b_name;
  gboolean ok;
  guint i;

  for (i = 0; x >= 0 && i < im->graph->nodes->len; i++)
    if (cbi_graph_node (im->graph, i)->output == x
        && cbi_graph_node (im->graph, i)->op == CBI_OP_CONV)
      conv = cbi_graph_node (im->graph, i);
  if (conv == NULL || cbi_onnx_readers (im, n->input[0]) != 1)
    return cbi_onnx_batch_norm_affine (im, n, x, eps, error);

  w = cbi_graph_tensor (im->graph, conv->inputs[1]);
  out_c = w->dims[0];
  scale = cbi_onnx_vector (im, n, 1, out_c);
  shift = cbi_onnx_vector (im, n, 2, out_c);
  mean = cbi_onnx_vector (im, n, 3, out_c);
  var = cbi_onnx_vector (im, n, 4, out_c);
  if (conv->n_inputs > 2 && conv->inputs[2] >= 0)
    bias = cbi_graph_tensor (im->graph, conv->inputs[2])->data;
  if (!scale || !shift || !mean || !var)
    return cbi_onnx_fail (error, "node %s (BatchNormalization): scale, B, "
        "mean and var must be constants of %" G_GINT64_FORMAT " values",
        name, out_c);

  cbi_onnx_count (w->name, w->dims, w->n_dims, &count, NULL);
  block = count / out_c;
  weights = g_memdup2 (w->data, count * sizeof (gfloat));
  biases = g_new (gfloat, out_c);
  for (o = 0; o < out_c; o++) {
    gfloat k = scale[o] / sqrtf (var[o] + eps);
    gint64 j;
    for (j = 0; j < block; j++)
      weights[o * block + j] *= k;
    biases[o] = ((bias ? bias[o] : 0.0f) - mean[o]) * k + shift[o];
  }

  /* the Conv's own constants may be shared: the folded ones are new */
  w_name = cbi_onnx_internal_name (im, n, "folded_weight");
  b_name = cbi_onnx_internal_name (im, n, "folded_bias");
  k_dims[0] = out_c;
  ok = cbi_onnx_add (im, w_name, 4, w->dims, weights, &w_index, error)
      && cbi_onnx_add (im, b_name, 1, k_dims, biases, &b_index, error);
  if (!ok && w_index < 0)
    g_free (biases);
  g_free (w_name);
  g_free (b_name);
  if (!ok)
    return FALSE;
  conv->inputs[1] = w_index;
  conv->inputs[2] = b_index;
  conv->n_inputs = 3;
  if (cbi_onnx_defined (im, n->output[0]))
    return cbi_onnx_fail (error, "tensor name '%s' is defined twice",
        n->output[0]);
  g_hash_table_insert (im->names, n->output[0], GINT_TO_POINTER (x + 1));
  return TRUE;
}

/* Conv and ConvTranspose: a 4-D constant of weights, a bias of one value
 * per output channel, the attributes checked against the weights. */
gboolean
cbi_onnx_check_conv (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gboolean transpose = node->type == CBI_OP_CONV_TRANSPOSE;
  const CbiTensorInfo *w = node->n_inputs > 1 && inputs[1] >= 0 ?
      cbi_graph_tensor (im->graph, inputs[1]) : NULL;
  const CbiTensorInfo *b = node->n_inputs > 2 && inputs[2] >= 0 ?
      cbi_graph_tensor (im->graph, inputs[2]) : NULL;

  if (w == NULL || w->data == NULL || w->n_dims != 4)
    return cbi_onnx_fail (error, "node %s (Conv): the weights must be a "
        "4-D constant (2-D convolution)", name);
  if (b && (b->data == NULL || b->n_dims != 1
          || b->dims[0] != w->dims[transpose ? 1 : 0]))
    return cbi_onnx_fail (error, "node %s (%s): the bias must be a "
        "constant of %" G_GINT64_FORMAT " values", name, n->op_type,
        w->dims[transpose ? 1 : 0]);
  node->has_conv = TRUE;
  return cbi_onnx_conv_attrs (n, w, &node->conv, error)
      && (!transpose || cbi_onnx_transpose_attrs (n, &node->conv, error));
}

/* Min and Max of two inputs are binary ops; of one, that input. */
gboolean
cbi_onnx_read_min_max (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  if (n->n_input == 1) {
    node->type = CBI_OP_IDENTITY;
    node->n_inputs = 1;
    return TRUE;
  }
  if (n->n_input != 2)
    return cbi_onnx_fail (error, "node %s (%s): only one or two inputs are "
        "supported", cbi_onnx_name (n->name), n->op_type);
  return TRUE;
}

gboolean
cbi_onnx_read_pool (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  node->has_conv = TRUE;
  return cbi_onnx_pool_attrs (n, &node->conv, error);
}

gboolean
cbi_onnx_read_resize (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  CbiResizeMode mode = CBI_RESIZE_NEAREST;

  if (!cbi_onnx_resize (im, n, &mode, &node->alpha, &node->beta,
          node->computed, error))
    return FALSE;
  node->mode = mode;
  return TRUE;
}

gboolean
cbi_onnx_read_pad (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  node->has_conv = TRUE;
  return cbi_onnx_pad (im, n, &node->conv, &node->mode, &node->alpha,
      &node->computed[0], error);
}

gboolean
cbi_onnx_read_epsilon (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  node->alpha = cbi_onnx_float (n, "epsilon", 1e-5f);
  return TRUE;
}

gboolean
cbi_onnx_check_instance_norm (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error)
{
  guint i;

  for (i = 1; i < 3; i++) {
    const CbiTensorInfo *t = inputs[i] >= 0 ?
        cbi_graph_tensor (im->graph, inputs[i]) : NULL;
    if (t == NULL || t->data == NULL || t->n_dims != 1)
      return cbi_onnx_fail (error, "node %s (InstanceNormalization): "
          "scale and B must be 1-D constants", cbi_onnx_name (n->name));
  }
  return TRUE;
}

gboolean
cbi_onnx_read_layer_norm (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  guint i;

  for (i = 1; i < n->n_output; i++)
    if (n->output[i] && *n->output[i])
      return cbi_onnx_fail (error, "node %s (LayerNormalization): the "
          "Mean and InvStdDev outputs are not supported",
          cbi_onnx_name (n->name));
  return cbi_onnx_read_epsilon (im, n, node, error);
}

gboolean
cbi_onnx_check_layer_norm (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error)
{
  guint i;

  for (i = 1; i < node->n_inputs; i++) {
    const CbiTensorInfo *t = inputs[i] >= 0 ?
        cbi_graph_tensor (im->graph, inputs[i]) : NULL;
    if ((t == NULL && i == 1) || (t && t->data == NULL))
      return cbi_onnx_fail (error, "node %s (LayerNormalization): Scale "
          "and B must be constants", cbi_onnx_name (n->name));
  }
  return TRUE;
}

gboolean
cbi_onnx_read_concat (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *axis = cbi_onnx_attr (n, "axis");

  if (axis == NULL || !axis->has_i)
    return cbi_onnx_fail (error, "node %s (Concat): no axis", name);
  if (n->n_input < 1 || n->n_input > CBI_MAX_NODE_INPUTS)
    return cbi_onnx_fail (error, "node %s (Concat): %" G_GSIZE_FORMAT
        " inputs; 1 to %d are supported", name, n->n_input,
        CBI_MAX_NODE_INPUTS);
  node->axis = (gint) axis->i;
  node->n_inputs = n->n_input;
  return TRUE;
}

/* Gemm and PRelu: every input after the first a float32 constant. */
gboolean
cbi_onnx_check_constants (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error)
{
  guint i;

  for (i = 1; i < node->n_inputs; i++) {
    const CbiTensorInfo *t = inputs[i] >= 0 ?
        cbi_graph_tensor (im->graph, inputs[i]) : NULL;
    if (t == NULL || t->data == NULL)
      return cbi_onnx_fail (error, "node %s (%s): input %u must be a "
          "float32 constant", cbi_onnx_name (n->name), n->op_type, i);
  }
  return TRUE;
}

/* Concat and MatMul: every input there, a constant or an activation. */
gboolean
cbi_onnx_check_present (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error)
{
  guint i;

  for (i = 1; i < node->n_inputs; i++)
    if (inputs[i] < 0)
      return cbi_onnx_fail (error, "node %s (%s): input %u is absent",
          cbi_onnx_name (n->name), n->op_type, i);
  return TRUE;
}
