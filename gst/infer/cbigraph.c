/* cudabatchinfer: model graph (the engine's IR)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbigraph.h"
#include "cbierror.h"

#include <string.h>

static void
cbi_tensor_info_clear (gpointer p)
{
  CbiTensorInfo *t = p;

  g_free (t->name);
  g_free (t->data);
}

static void
cbi_node_clear (gpointer p)
{
  CbiNode *n = p;

  g_free (n->name);
}

CbiGraph *
cbi_graph_new (void)
{
  CbiGraph *graph = g_new0 (CbiGraph, 1);

  graph->tensors = g_array_new (FALSE, TRUE, sizeof (CbiTensorInfo));
  g_array_set_clear_func (graph->tensors, cbi_tensor_info_clear);
  graph->nodes = g_array_new (FALSE, TRUE, sizeof (CbiNode));
  g_array_set_clear_func (graph->nodes, cbi_node_clear);
  graph->input = graph->output = -1;
  return graph;
}

void
cbi_graph_free (CbiGraph * graph)
{
  if (graph == NULL)
    return;
  g_array_free (graph->tensors, TRUE);
  g_array_free (graph->nodes, TRUE);
  g_free (graph);
}

gint
cbi_graph_add_tensor (CbiGraph * graph, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data)
{
  CbiTensorInfo t = { 0, };

  g_return_val_if_fail (n_dims >= 0 && n_dims <= CBI_MAX_DIMS, -1);
  t.name = g_strdup (name);
  t.n_dims = n_dims;
  if (n_dims > 0)               /* a scalar may come with no dims */
    memcpy (t.dims, dims, n_dims * sizeof (gint64));
  t.data = data;
  g_array_append_val (graph->tensors, t);
  return graph->tensors->len - 1;
}

gint
cbi_graph_add_node (CbiGraph * graph, CbiOpType op, const gchar * name,
    guint n_inputs, const gint * inputs, gint output, const CbiConvAttrs * conv)
{
  CbiNode n = { 0, };
  guint i;

  g_return_val_if_fail (n_inputs <= CBI_MAX_NODE_INPUTS, -1);
  n.op = op;
  n.name = g_strdup (name);
  n.n_inputs = n_inputs;
  for (i = 0; i < CBI_MAX_NODE_INPUTS; i++)
    n.inputs[i] = i < n_inputs ? inputs[i] : -1;
  n.output = output;
  if (conv)
    n.conv = *conv;
  g_array_append_val (graph->nodes, n);
  return graph->nodes->len - 1;
}

CbiTensorInfo *
cbi_graph_tensor (const CbiGraph * graph, gint index)
{
  return &g_array_index (graph->tensors, CbiTensorInfo, index);
}

CbiNode *
cbi_graph_node (const CbiGraph * graph, guint index)
{
  return &g_array_index (graph->nodes, CbiNode, index);
}

const gchar *
cbi_op_type_name (CbiOpType op)
{
  switch (op) {
    case CBI_OP_CONV:
      return "Conv";
    case CBI_OP_RELU:
      return "Relu";
    case CBI_OP_SIGMOID:
      return "Sigmoid";
    case CBI_OP_TANH:
      return "Tanh";
    case CBI_OP_CLIP:
      return "Clip";
    case CBI_OP_ELU:
      return "Elu";
    case CBI_OP_HARD_SIGMOID:
      return "HardSigmoid";
    case CBI_OP_HARD_SWISH:
      return "HardSwish";
    case CBI_OP_IDENTITY:
      return "Identity";
    case CBI_OP_ADD:
      return "Add";
    case CBI_OP_SUB:
      return "Sub";
    case CBI_OP_MUL:
      return "Mul";
    case CBI_OP_DIV:
      return "Div";
    case CBI_OP_MAX_POOL:
      return "MaxPool";
    case CBI_OP_AVERAGE_POOL:
      return "AveragePool";
    case CBI_OP_RESIZE:
      return "Resize";
    case CBI_OP_CONCAT:
      return "Concat";
    case CBI_OP_CONV_TRANSPOSE:
      return "ConvTranspose";
    case CBI_OP_PAD:
      return "Pad";
    case CBI_OP_INSTANCE_NORM:
      return "InstanceNormalization";
  }
  return "unknown";
}

gboolean
cbi_op_is_binary (CbiOpType op)
{
  return op == CBI_OP_ADD || op == CBI_OP_SUB || op == CBI_OP_MUL
      || op == CBI_OP_DIV;
}

gboolean
cbi_op_is_eltwise (CbiOpType op)
{
  switch (op) {
    case CBI_OP_RELU:
    case CBI_OP_SIGMOID:
    case CBI_OP_TANH:
    case CBI_OP_CLIP:
    case CBI_OP_ELU:
    case CBI_OP_HARD_SIGMOID:
    case CBI_OP_HARD_SWISH:
    case CBI_OP_IDENTITY:
      return TRUE;
    default:
      return FALSE;
  }
}

/* Whether constant @t broadcasts against NCHW as ONNX aligns it (from the
 * right): every dimension 1 but, at most, the channel one being @channels. */
static gboolean
cbi_broadcasts_per_channel (const CbiTensorInfo * t, gint64 channels)
{
  gint d;

  for (d = 0; d < t->n_dims; d++) {
    gint64 size = t->dims[d];
    gboolean channel_axis = t->n_dims - d == 3;
    if (size != 1 && !(channel_axis && size == channels))
      return FALSE;
  }
  return t->n_dims <= 4;
}

guint
cbi_graph_count_consumers (const CbiGraph * graph, gint index)
{
  guint i, j, count = 0;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i);
    for (j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] == index)
        count++;
  }
  return count;
}

static gboolean
cbi_infer_conv (const CbiGraph * graph, const CbiNode * n,
    gint64 (*shapes)[4], GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]];
  CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  gint64 *y = shapes[n->output];
  const CbiConvAttrs *a = &n->conv;
  gint d;

  if (w->n_dims != 4 || w->data == NULL || a->group < 1
      || x[1] != w->dims[1] * a->group || w->dims[0] % a->group != 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL,
        "node %s (Conv): input has %" G_GINT64_FORMAT " channels, weights "
        "expect %" G_GINT64_FORMAT " x group %" G_GINT64_FORMAT, n->name,
        x[1], w->n_dims == 4 ? w->dims[1] : 0, a->group);
    return FALSE;
  }
  y[0] = x[0];
  y[1] = w->dims[0];
  for (d = 0; d < 2; d++) {
    gint64 extent = x[2 + d] + a->pads[d] + a->pads[d + 2];
    gint64 kernel = a->dilations[d] * (w->dims[2 + d] - 1) + 1;
    if (a->strides[d] < 1 || extent < kernel) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE,
          "node %s (Conv): a kernel of %" G_GINT64_FORMAT " does not fit "
          "an input of %" G_GINT64_FORMAT " (padded)", n->name, kernel, extent);
      return FALSE;
    }
    y[2 + d] = (extent - kernel) / a->strides[d] + 1;
  }
  return TRUE;
}

/* ConvTranspose: out = stride (in - 1) + output_padding + dilated kernel
 * - pads; weights are (in channels, out channels, h, w). */
static gboolean
cbi_infer_conv_transpose (const CbiGraph * graph, const CbiNode * n,
    gint64 (*shapes)[4], GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]];
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiConvAttrs *a = &n->conv;
  gint64 *y = shapes[n->output];
  gint d;

  if (x[1] != w->dims[0]) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "node %s "
        "(ConvTranspose): input has %" G_GINT64_FORMAT " channels, weights "
        "expect %" G_GINT64_FORMAT, n->name, x[1], w->dims[0]);
    return FALSE;
  }
  y[0] = x[0];
  y[1] = w->dims[1];
  for (d = 0; d < 2; d++) {
    y[2 + d] = a->strides[d] * (x[2 + d] - 1) + a->output_padding[d]
        + a->dilations[d] * (w->dims[2 + d] - 1) + 1 - a->pads[d]
        - a->pads[d + 2];
    if (y[2 + d] < 1) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s "
          "(ConvTranspose): the output would be empty", n->name);
      return FALSE;
    }
  }
  return TRUE;
}

/* Output height and width of a window of @kernel sliding over @in. */
static gboolean
cbi_infer_window (const CbiNode * n, const gint64 kernel[2],
    const gint64 * in, gint64 * out, GError ** error)
{
  const CbiConvAttrs *a = &n->conv;
  gint d;

  for (d = 0; d < 2; d++) {
    gint64 extent = in[2 + d] + a->pads[d] + a->pads[d + 2];
    gint64 span = a->dilations[d] * (kernel[d] - 1) + 1;
    if (a->strides[d] < 1 || kernel[d] < 1 || extent < span) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s (%s): a "
          "window of %" G_GINT64_FORMAT " does not fit an input of %"
          G_GINT64_FORMAT " (padded)", n->name, cbi_op_type_name (n->op),
          span, extent);
      return FALSE;
    }
    out[2 + d] = (extent - span) / a->strides[d] + 1;
  }
  return TRUE;
}

static gboolean
cbi_infer_concat (const CbiGraph * graph, const CbiNode * n,
    gint64 (*shapes)[4], GError ** error)
{
  gint64 *y = shapes[n->output];
  guint i;

  memcpy (y, shapes[n->inputs[0]], sizeof (gint64) * 4);
  y[1] = 0;
  for (i = 0; i < n->n_inputs; i++) {
    const gint64 *x = shapes[n->inputs[i]];
    if (x[0] != y[0] || x[2] != y[2] || x[3] != y[3]) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s (Concat): "
          "input %u is %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " where the "
          "first is %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, n->name, i,
          x[2], x[3], y[2], y[3]);
      return FALSE;
    }
    y[1] += x[1];
  }
  return TRUE;
}

gboolean
cbi_graph_infer_shapes (const CbiGraph * graph, gint64 batch, gint64 height,
    gint64 width, gint64 (*shapes)[4], GError ** error)
{
  const CbiTensorInfo *in = cbi_graph_tensor (graph, graph->input);
  guint i;

  shapes[graph->input][0] = batch;
  shapes[graph->input][1] = in->dims[1];
  shapes[graph->input][2] = in->dims[2] > 0 ? in->dims[2] : height;
  shapes[graph->input][3] = in->dims[3] > 0 ? in->dims[3] : width;

  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    switch (n->op) {
      case CBI_OP_CONV:
        if (!cbi_infer_conv (graph, n, shapes, error))
          return FALSE;
        break;
      case CBI_OP_ADD:
      case CBI_OP_SUB:
      case CBI_OP_MUL:
      case CBI_OP_DIV:{
        const CbiTensorInfo *b = cbi_graph_tensor (graph, n->inputs[1]);
        gboolean ok = b->data ?
            cbi_broadcasts_per_channel (b, shapes[n->inputs[0]][1]) :
            memcmp (shapes[n->inputs[0]], shapes[n->inputs[1]],
            sizeof (gint64) * 4) == 0;
        if (!ok) {
          g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s (%s): its "
              "second input neither has the first's shape nor broadcasts "
              "per channel", n->name, cbi_op_type_name (n->op));
          return FALSE;
        }
        memcpy (shapes[n->output], shapes[n->inputs[0]], sizeof (gint64) * 4);
        break;
      }
      case CBI_OP_CONV_TRANSPOSE:
        if (!cbi_infer_conv_transpose (graph, n, shapes, error))
          return FALSE;
        break;
      case CBI_OP_PAD:{
        const gint64 *x = shapes[n->inputs[0]];
        const gint64 *p = n->conv.pads;
        gint64 *y = shapes[n->output];
        /* a reflection needs something to reflect */
        if (n->mode == CBI_PAD_FILL_REFLECT && (MAX (p[0], p[2]) >= x[2]
                || MAX (p[1], p[3]) >= x[3])) {
          g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s (Pad): "
              "reflecting %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " by more "
              "than its size", n->name, x[3], x[2]);
          return FALSE;
        }
        y[0] = x[0];
        y[1] = x[1];
        y[2] = x[2] + p[0] + p[2];
        y[3] = x[3] + p[1] + p[3];
        break;
      }
      case CBI_OP_MAX_POOL:
      case CBI_OP_AVERAGE_POOL:
        shapes[n->output][0] = shapes[n->inputs[0]][0];
        shapes[n->output][1] = shapes[n->inputs[0]][1];
        if (!cbi_infer_window (n, n->conv.kernel, shapes[n->inputs[0]],
                shapes[n->output], error))
          return FALSE;
        break;
      case CBI_OP_RESIZE:
        memcpy (shapes[n->output], shapes[n->inputs[0]], sizeof (gint64) * 4);
        shapes[n->output][2] = (gint64) (shapes[n->inputs[0]][2] * n->alpha);
        shapes[n->output][3] = (gint64) (shapes[n->inputs[0]][3] * n->beta);
        if (shapes[n->output][2] < 1 || shapes[n->output][3] < 1) {
          g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s (Resize): "
              "the output would be empty", n->name);
          return FALSE;
        }
        break;
      case CBI_OP_CONCAT:
        if (!cbi_infer_concat (graph, n, shapes, error))
          return FALSE;
        break;
      default:
        /* element-wise */
        memcpy (shapes[n->output], shapes[n->inputs[0]], sizeof (gint64) * 4);
        break;
    }
  }
  return TRUE;
}
