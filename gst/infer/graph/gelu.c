/* cudabatchinfer: the exact GELU written as its formula, as one op
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * PyTorch's TorchScript exporter (below opset 20, where ONNX has no Gelu)
 * and HuggingFace's code write GELU as x * 0.5 * (1 + erf (x / sqrt 2)):
 * five nodes, five passes over an activation four times as wide as the
 * block's (ConvNeXt's, a transformer's MLP), Erf among them one that no
 * backend library runs. As one Gelu node it is one element-wise op, which
 * fuses into the matrix product or convolution before it: no pass of its
 * own.
 */
#include "graph/cbiops.h"
#include "graph/cbipasses.h"

#include <math.h>

/* Whether tensor @t is a constant of one value, within float32's rounding
 * of @value, of rank 0 or 1: one of a higher rank would raise the rank of
 * the formula's result, which the Gelu would not. */
static gboolean
cbi_gelu_is_value (const CbiGraph * graph, gint t, gdouble value)
{
  const CbiTensorInfo *c = cbi_graph_tensor (graph, t);
  gint64 count = 1;
  gint d;

  if (c->data == NULL || c->n_dims > 1)
    return FALSE;
  for (d = 0; d < c->n_dims; d++)
    count *= c->dims[d];
  return count == 1 && fabs (c->data[0] - value) <= 1e-6 * fabs (value);
}

/* The other operand of binary node @n (of op @op), whose operand @t is,
 * or -1 where @n is no such node. */
static gint
cbi_gelu_other (const CbiNode * n, CbiOpType op, gint t)
{
  if (n == NULL || n->op != op || n->n_inputs != 2)
    return -1;
  if (n->inputs[0] == t)
    return n->inputs[1];
  return n->inputs[1] == t ? n->inputs[0] : -1;
}

/* The node that writes tensor @t, or NULL. */
static CbiNode *
cbi_gelu_producer (const CbiGraph * graph, gint t)
{
  gint i = cbi_graph_producer (graph, t);

  return i < 0 ? NULL : cbi_graph_node (graph, i);
}

/* The one node that reads tensor @t, which is no graph output, or NULL. */
static CbiNode *
cbi_gelu_reader (const CbiGraph * graph, gint t)
{
  guint i;

  if (cbi_graph_count_consumers (graph, t) != 1
      || cbi_graph_is_output (graph, t))
    return NULL;
  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i);
    guint k;
    for (k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] == t)
        return n;
  }
  return NULL;
}

/* Whether @n halves: a Mul by 0.5 or a Div by 2 of @t. */
static gboolean
cbi_gelu_halves (const CbiGraph * graph, const CbiNode * n, gint t)
{
  gint c = cbi_gelu_other (n, CBI_OP_MUL, t);

  if (c >= 0)
    return cbi_gelu_is_value (graph, c, 0.5);
  return n != NULL && n->op == CBI_OP_DIV && n->inputs[0] == t
      && cbi_gelu_is_value (graph, n->inputs[1], 2.0);
}

/* Around Erf node @erf, the nodes of x * 0.5 * (1 + erf (x / sqrt 2))
 * (the division a Div by sqrt 2 or a Mul by its inverse, the half taken
 * of x first or of the product last, each product's operands either way
 * round, nothing else reading what lies between): @x and the nodes to
 * drop into @drop (4), the last of them the one whose output the Gelu
 * writes. FALSE where @erf is not in such a formula. */
static gboolean
cbi_gelu_formula (const CbiGraph * graph, const CbiNode * erf, gint * x,
    const CbiNode ** drop)
{
  const CbiNode *div, *add, *mul, *half = NULL;
  gint c, y;

  div = cbi_gelu_producer (graph, erf->inputs[0]);
  if (div == NULL || cbi_gelu_reader (graph, div->output) != erf)
    return FALSE;
  if (div->op == CBI_OP_DIV
      && cbi_gelu_is_value (graph, div->inputs[1], G_SQRT2))
    *x = div->inputs[0];
  else if ((c = cbi_gelu_other (div, CBI_OP_MUL, div->inputs[0])) >= 0
      && cbi_gelu_is_value (graph, c, 1.0 / G_SQRT2))
    *x = div->inputs[0];
  else if ((c = cbi_gelu_other (div, CBI_OP_MUL, div->inputs[1])) >= 0
      && cbi_gelu_is_value (graph, c, 1.0 / G_SQRT2))
    *x = div->inputs[1];
  else
    return FALSE;
  if (cbi_graph_tensor (graph, *x)->data != NULL)
    return FALSE;
  add = cbi_gelu_reader (graph, erf->output);
  c = cbi_gelu_other (add, CBI_OP_ADD, erf->output);
  if (c < 0 || !cbi_gelu_is_value (graph, c, 1.0))
    return FALSE;
  mul = cbi_gelu_reader (graph, add->output);
  y = cbi_gelu_other (mul, CBI_OP_MUL, add->output);
  if (y < 0)
    return FALSE;
  if (y != *x) {
    /* x halved first: 0.5 x, read by this product only */
    half = cbi_gelu_producer (graph, y);
    if (!cbi_gelu_halves (graph, half, *x)
        || cbi_gelu_reader (graph, y) != mul)
      return FALSE;
    drop[3] = mul;
    mul = half;
  } else {
    drop[3] = cbi_gelu_reader (graph, mul->output);
    if (!cbi_gelu_halves (graph, drop[3], mul->output))
      return FALSE;
  }
  drop[0] = div;
  drop[1] = add;
  drop[2] = mul;
  return TRUE;
}

/* Removes the node that writes tensor @t (the array's clear function
 * frees it). */
static void
cbi_gelu_remove (CbiGraph * graph, gint t)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++)
    if (cbi_graph_node (graph, i)->output == t) {
      g_array_remove_index (graph->nodes, i);
      return;
    }
}

void
cbi_graph_fuse_gelu (CbiGraph * graph)
{
  guint i = 0, k;

  while (i < graph->nodes->len) {
    CbiNode *erf = cbi_graph_node (graph, i);
    const CbiNode *drop[4];
    gint x, outs[4], erf_out = erf->output;

    if (erf->op != CBI_OP_ERF || !cbi_gelu_formula (graph, erf, &x, drop)) {
      i++;
      continue;
    }
    /* each node by the tensor it writes: the array moves as they go */
    for (k = 0; k < 4; k++)
      outs[k] = drop[k]->output;
    for (k = 0; k < 4; k++)
      cbi_gelu_remove (graph, outs[k]);
    /* the Erf node becomes the Gelu: it comes after x's producer and
     * before every reader of the formula's result */
    erf = cbi_gelu_producer (graph, erf_out);
    erf->op = CBI_OP_GELU;
    erf->inputs[0] = x;
    erf->output = outs[3];
    i = 0;
  }
}
