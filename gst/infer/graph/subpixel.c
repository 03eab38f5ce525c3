/* cudabatchinfer: a strided ConvTranspose as a convolution and a
 * DepthToSpace
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Output row Y = s m + a of a transposed convolution of stride s reads
 * input rows iy = m - t with kernel row ky = s t + a + p: for each phase a
 * a fixed set of t, the same for every m. So the s x s output phases are
 * s x s ordinary convolutions of the input with small kernels cut out of
 * the transposed one; stacked as s x s x Cout channels they are one
 * convolution, and a DepthToSpace (CRD) interleaves them. Backends run
 * convolutions far faster than transposed ones (oneDNN 2.6 by 3 to 4x on
 * the style net), at the cost of multiplying some zeros. The activation
 * that followed the transposed convolution then follows the DepthToSpace:
 * moved before it (a Relu or Clip), it fuses into the convolution again.
 */
#include "graph/cbiops.h"
#include "graph/cbipasses.h"

#include <string.h>

/* The phase-independent window of one axis: t from @t_min to @t_max. */
static void
cbi_subpixel_window (gint64 k, gint64 s, gint64 p, gint64 * t_min,
    gint64 * t_max)
{
  gint64 a, t;

  *t_min = G_MAXINT64;
  *t_max = G_MININT64;
  for (a = 0; a < s; a++)
    for (t = -k; t <= k; t++)
      if (s * t + a + p >= 0 && s * t + a + p < k) {
        *t_min = MIN (*t_min, t);
        *t_max = MAX (*t_max, t);
      }
}

/* Whether ConvTranspose @n has the form this rewrites: one group, no
 * dilation, the same stride s >= 2 on both axes, an output exactly s
 * times the input, and a window inside the input's padding. */
static gboolean
cbi_subpixel_fits (const CbiGraph * graph, const CbiNode * n)
{
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiConvAttrs *c = &n->conv;
  gint d;

  if (c->group != 1 || c->strides[0] < 2 || c->strides[0] != c->strides[1])
    return FALSE;
  for (d = 0; d < 2; d++) {
    gint64 t_min, t_max;
    if (c->dilations[d] != 1 || c->output_padding[d] + w->dims[2 + d]
        - c->pads[d] - c->pads[d + 2] != c->strides[d])
      return FALSE;
    cbi_subpixel_window (w->dims[2 + d], c->strides[d], c->pads[d], &t_min,
        &t_max);
    if (t_min > t_max || t_max < 0 || t_min > 0)
      return FALSE;
  }
  return TRUE;
}

gboolean
cbi_graph_lower_conv_transpose (CbiGraph * graph, guint index)
{
  CbiNode *n = cbi_graph_node (graph, index), d2s;
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiTensorInfo *b = n->n_inputs > 2 && n->inputs[2] >= 0 ?
      cbi_graph_tensor (graph, n->inputs[2]) : NULL;
  const gint64 cin = w->dims[0], cout = w->dims[1], s = n->conv.strides[0];
  gint64 t_min[2], t_max[2], win[2], dims[4], bias_dims[1];
  gint64 o, a, bb, c, dy, dx;
  gfloat *weights, *bias;
  gchar *tname;
  gint wt, bt, mid, inputs[3];
  gint d;

  if (n->op != CBI_OP_CONV_TRANSPOSE || !cbi_subpixel_fits (graph, n))
    return FALSE;
  for (d = 0; d < 2; d++) {
    cbi_subpixel_window (w->dims[2 + d], s, n->conv.pads[d], &t_min[d],
        &t_max[d]);
    win[d] = t_max[d] - t_min[d] + 1;
  }

  /* output channel o a s + b of phase (a, b), window tap (dy, dx) reads
   * input row m - t_max + dy, i.e. t = t_max - dy */
  weights = g_new0 (gfloat, s * s * cout * cin * win[0] * win[1]);
  for (o = 0; o < cout; o++)
    for (a = 0; a < s; a++)
      for (bb = 0; bb < s; bb++)
        for (c = 0; c < cin; c++)
          for (dy = 0; dy < win[0]; dy++)
            for (dx = 0; dx < win[1]; dx++) {
              gint64 ky = s * (t_max[0] - dy) + a + n->conv.pads[0];
              gint64 kx = s * (t_max[1] - dx) + bb + n->conv.pads[1];
              gint64 oc = (o * s + a) * s + bb;
              if (ky < 0 || ky >= w->dims[2] || kx < 0 || kx >= w->dims[3])
                continue;
              weights[((oc * cin + c) * win[0] + dy) * win[1] + dx] =
                  w->data[((c * cout + o) * w->dims[2] + ky) * w->dims[3]
                  + kx];
            }
  bias = g_new0 (gfloat, s * s * cout);
  for (o = 0; b && o < s * s * cout; o++)
    bias[o] = b->data[o / (s * s)];

  dims[0] = s * s * cout;
  dims[1] = cin;
  dims[2] = win[0];
  dims[3] = win[1];
  bias_dims[0] = dims[0];
  tname = g_strconcat (n->name, ".subpixel_weight", NULL);
  wt = cbi_graph_add_tensor (graph, tname, 4, dims, weights);
  g_free (tname);
  tname = g_strconcat (n->name, ".subpixel_bias", NULL);
  bt = cbi_graph_add_tensor (graph, tname, 1, bias_dims, bias);
  g_free (tname);
  tname = g_strconcat (n->name, ".subpixel", NULL);
  mid = cbi_graph_add_tensor (graph, tname, 0, NULL, NULL);
  g_free (tname);

  /* the node becomes the convolution, into a new tensor; the
   * DepthToSpace after it writes the node's output */
  n = cbi_graph_node (graph, index);
  memset (&d2s, 0, sizeof (d2s));
  d2s.op = CBI_OP_DEPTH_TO_SPACE;
  d2s.name = g_strconcat (n->name, ".subpixel_shuffle", NULL);
  d2s.n_inputs = 1;
  d2s.inputs[0] = mid;
  for (d = 1; d < CBI_MAX_NODE_INPUTS; d++)
    d2s.inputs[d] = -1;
  d2s.output = n->output;
  d2s.mode = 1;                 /* CRD */
  d2s.n_ints = 1;
  d2s.ints[0] = s;

  inputs[0] = n->inputs[0];
  inputs[1] = wt;
  inputs[2] = bt;
  n->op = CBI_OP_CONV;
  n->n_inputs = 3;
  memcpy (n->inputs, inputs, sizeof (inputs));
  n->output = mid;
  memset (&n->conv, 0, sizeof (n->conv));
  n->conv.strides[0] = n->conv.strides[1] = 1;
  n->conv.dilations[0] = n->conv.dilations[1] = 1;
  n->conv.group = 1;
  n->conv.pads[0] = t_max[0];
  n->conv.pads[1] = t_max[1];
  n->conv.pads[2] = win[0] - 1 - t_max[0];
  n->conv.pads[3] = win[1] - 1 - t_max[1];
  g_array_insert_val (graph->nodes, index + 1, d2s);
  return TRUE;
}

/* Whether @op only moves values: an element-wise op gives the same
 * result before or after it. */
static gboolean
cbi_op_moves_values (CbiOpType op)
{
  return op == CBI_OP_DEPTH_TO_SPACE || op == CBI_OP_TRANSPOSE
      || op == CBI_OP_RESHAPE;
}

void
cbi_graph_sink_eltwise (CbiGraph * graph)
{
  guint i;

  for (i = 0; i + 1 < graph->nodes->len; i++) {
    CbiNode *move = cbi_graph_node (graph, i);
    CbiNode *elt = (CbiNode *) cbi_graph_next_activation (graph, i);
    CbiNode tmp;
    gint moved_in, out;

    /* only the cheap ones: a fused Sigmoid also runs on the padding
     * channels of the convolution's blocked output, and cost more there
     * than alone after the shuffle (super-resolution net: 1.35 to 1.24x
     * onnxruntime's speed) */
    if (!cbi_op_moves_values (move->op) || elt == NULL
        || (elt->op != CBI_OP_RELU && elt->op != CBI_OP_CLIP))
      continue;
    /* move: a -> b, elt: b -> c  becomes  elt: a -> b, move: b -> c; b
     * keeps its name, its shape comes from shape inference */
    moved_in = move->inputs[0];
    out = elt->output;
    elt->inputs[0] = moved_in;
    elt->output = move->output;
    move->inputs[0] = move->output;
    move->output = out;
    tmp = *move;
    *move = *elt;
    *elt = tmp;
  }
}
