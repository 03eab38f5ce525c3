/* cudabatchinfer: the embedded default model
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pencil sketch: three convolutions with hand-set weights, in the same
 * graph form as an imported model, so the default path exercises the same
 * planner and backends as any other model.
 *
 *   image  -> Conv 3x3 (3->4): +/- horizontal and vertical Sobel of luma
 *          -> Relu: the four half-rectified gradients
 *          -> Conv 1x1 (4->1): their sum, the L1 gradient magnitude
 *          -> Conv 1x1 (1->3): paper colour minus SKETCH_STRENGTH x magnitude
 *          -> Relu -> sketch
 */
#include "cbidefaultmodel.h"

#define SKETCH_STRENGTH 2.5f

/* ITU-R BT.601 luma: the gradient is of brightness, not of each colour */
static const gfloat luma[3] = { 0.299f, 0.587f, 0.114f };

static const gfloat sobel_x[9] = { -1, 0, 1, -2, 0, 2, -1, 0, 1 };
static const gfloat sobel_y[9] = { -1, -2, -1, 0, 0, 0, 1, 2, 1 };

/* warm, slightly yellow paper */
static const gfloat paper[3] = { 1.0f, 0.97f, 0.90f };

static gint
add_const (CbiGraph * g, const gchar * name, gint64 d0, gint64 d1,
    gint64 d2, gint64 d3, gfloat * data)
{
  const gint64 dims[4] = { d0, d1, d2, d3 };

  return cbi_graph_add_tensor (g, name, d3 > 0 ? 4 : 1, d3 > 0 ? dims : &d0,
      data);
}

static gint
add_activation (CbiGraph * g, const gchar * name)
{
  const gint64 dims[4] = { -1, -1, -1, -1 };

  return cbi_graph_add_tensor (g, name, 4, dims, NULL);
}

CbiGraph *
cbi_default_model_new (void)
{
  const gint64 in_dims[4] = { -1, 3, -1, -1 };
  CbiConvAttrs same3x3 = { {1, 1}, {1, 1}, {1, 1, 1, 1}, 1 };
  CbiConvAttrs pointwise = { {1, 1}, {1, 1}, {0, 0, 0, 0}, 1 };
  CbiGraph *g = cbi_graph_new ();
  gfloat *w1 = g_new0 (gfloat, 4 * 3 * 9);
  gfloat *w2 = g_new (gfloat, 4);
  gfloat *w3 = g_new (gfloat, 3);
  gint c, k, x, grad, mag, sketch_lin, sketch;
  gint in1[3], in2[3], in3[3];

  for (c = 0; c < 3; c++) {
    for (k = 0; k < 9; k++) {
      /* /4 keeps a full-contrast step at magnitude 1 */
      gfloat gx = luma[c] * sobel_x[k] / 4.0f;
      gfloat gy = luma[c] * sobel_y[k] / 4.0f;
      w1[(0 * 3 + c) * 9 + k] = gx;
      w1[(1 * 3 + c) * 9 + k] = -gx;
      w1[(2 * 3 + c) * 9 + k] = gy;
      w1[(3 * 3 + c) * 9 + k] = -gy;
    }
  }
  for (k = 0; k < 4; k++)
    w2[k] = 1.0f;
  for (c = 0; c < 3; c++)
    w3[c] = -SKETCH_STRENGTH;

  x = cbi_graph_add_tensor (g, "image", 4, in_dims, NULL);
  g->input = x;

  in1[0] = x;
  in1[1] = add_const (g, "edges.weight", 4, 3, 3, 3, w1);
  in1[2] = add_const (g, "edges.bias", 4, 0, 0, 0, g_new0 (gfloat, 4));
  grad = add_activation (g, "edges");
  cbi_graph_add_node (g, CBI_OP_CONV, "edges", 3, in1, grad, &same3x3);
  in2[0] = grad;
  grad = add_activation (g, "edges.relu");
  cbi_graph_add_node (g, CBI_OP_RELU, "edges.relu", 1, in2, grad, NULL);

  in2[1] = add_const (g, "magnitude.weight", 1, 4, 1, 1, w2);
  in2[0] = grad;
  mag = add_activation (g, "magnitude");
  cbi_graph_add_node (g, CBI_OP_CONV, "magnitude", 2, in2, mag, &pointwise);

  in3[0] = mag;
  in3[1] = add_const (g, "shade.weight", 3, 1, 1, 1, w3);
  in3[2] = add_const (g, "shade.bias", 3, 0, 0, 0, g_memdup2 (paper,
          sizeof (paper)));
  sketch_lin = add_activation (g, "shade");
  cbi_graph_add_node (g, CBI_OP_CONV, "shade", 3, in3, sketch_lin, &pointwise);
  in1[0] = sketch_lin;
  sketch = add_activation (g, "sketch");
  cbi_graph_add_node (g, CBI_OP_RELU, "sketch", 1, in1, sketch, NULL);
  g->outputs[0] = sketch;
  g->n_outputs = 1;
  return g;
}
