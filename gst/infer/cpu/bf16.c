/* cudabatchinfer: which convolutions of a bfloat16 plan take bfloat16
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A convolution whose output only convolutions read passes it to them in
 * bfloat16; elsewhere the activations are float32, so a convolution that
 * takes bfloat16 from a float32 activation converts it first (a reorder:
 * a pass over it). Convolutions linked that way run in bfloat16 together
 * or not at all: a group runs in it where the products its convolutions
 * sum outnumber the values converted into it by far; depthwise and thin
 * convolutions between residual additions (mobile networks) are bound by
 * memory, and conversions would only slow them down.
 */
#include "cbicpu.h"

/* a group of linked convolutions takes bfloat16 where it computes at
 * least this many products per value converted into it */
#define CBI_CPU_BF16_PRODUCTS_PER_VALUE 256

gboolean
cbi_cpu_conv_link (const CbiGraph * graph, const CbiNode * post, gint out)
{
  CbiCpuEltwise steps[2];
  guint i, j, readers = 0;

  if (cbi_graph_is_output (graph, out))
    return FALSE;
  if (post) {
    const CbiEltwiseStep own = { cbi_op_info (post->op)->eltwise,
      post->alpha, post->beta
    };
    if (post->n_then > 0 || cbi_cpu_eltwise_form (&own, steps) == 0)
      return FALSE;
  }
  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *m = cbi_graph_node (graph, i);
    for (j = 0; j < m->n_inputs; j++) {
      if (m->inputs[j] != out)
        continue;
      if (j != 0 || (m->op != CBI_OP_CONV && m->op != CBI_OP_CONV_TRANSPOSE))
        return FALSE;
      readers++;
    }
  }
  return readers > 0;
}

static guint
cbi_cpu_find (guint * group, guint i)
{
  while (group[i] != i)
    i = group[i] = group[group[i]];
  return i;
}

/* The products convolution @n computes for the plan's shapes. */
static gdouble
cbi_cpu_conv_products (const CbiCpuPlan * plan, const CbiNode * n)
{
  const CbiTensorInfo *w = cbi_graph_tensor (plan->graph, n->inputs[1]);
  /* Conv weights are (out, in / group, kh, kw), ConvTranspose's (in,
   * out / group, kh, kw): an output value sums in / group x kh x kw */
  gdouble sums = (n->op == CBI_OP_CONV ? w->dims[1] :
      w->dims[0] / MAX (n->conv.group, 1)) * w->dims[2] * w->dims[3];

  return sums * cbi_shape_count (&plan->shapes[n->output]);
}

void
cbi_cpu_choose_bf16 (CbiCpuPlan * plan)
{
  const CbiGraph *graph = plan->graph;
  const guint n_nodes = graph->nodes->len;
  guint *group = g_new (guint, n_nodes);
  gdouble *products = g_new0 (gdouble, n_nodes);
  gdouble *converted = g_new0 (gdouble, n_nodes);
  guint i, j, k;

  for (i = 0; i < n_nodes; i++)
    group[i] = i;
  /* convolutions linked by an activation only convolutions read */
  for (i = 0; i < n_nodes; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    const CbiNode *post;
    gint out;
    if (n->op != CBI_OP_CONV && n->op != CBI_OP_CONV_TRANSPOSE)
      continue;
    post = cbi_graph_fused_activation (graph, i);
    out = post ? post->output : n->output;
    if (!cbi_cpu_conv_link (graph, post, out))
      continue;
    for (j = 0; j < n_nodes; j++)
      if (cbi_graph_node (graph, j)->inputs[0] == out)
        group[cbi_cpu_find (group, j)] = cbi_cpu_find (group, i);
  }
  /* each group's products, and the values converted into it: each input
   * that comes from outside the group (but the image, which the first
   * convolution reads in float32) */
  for (i = 0; i < n_nodes; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    gint in = n->inputs[0];
    gboolean inside = FALSE;
    if (n->op != CBI_OP_CONV && n->op != CBI_OP_CONV_TRANSPOSE)
      continue;
    k = cbi_cpu_find (group, i);
    products[k] += cbi_cpu_conv_products (plan, n);
    for (j = 0; j < n_nodes && !inside; j++) {
      const CbiNode *m = cbi_graph_node (graph, j);
      const CbiNode *post = cbi_graph_fused_activation (graph, j);
      inside = (m->op == CBI_OP_CONV || m->op == CBI_OP_CONV_TRANSPOSE)
          && (post ? post->output : m->output) == in
          && cbi_cpu_find (group, j) == k;
    }
    if (!inside && in != graph->input)
      converted[k] += cbi_shape_count (&plan->shapes[in]);
  }
  plan->conv_bf16 = g_new0 (gboolean, n_nodes);
  for (i = 0; i < n_nodes; i++) {
    k = cbi_cpu_find (group, i);
    plan->conv_bf16[i] = products[k] > 0.0
        && products[k] >= CBI_CPU_BF16_PRODUCTS_PER_VALUE * converted[k];
    if (products[i] > 0.0 && k == i)
      GST_DEBUG ("convolutions with %s: %s (%.3g products, %.3g values "
          "converted into them)", cbi_graph_node (graph, i)->name,
          plan->conv_bf16[i] ? "bfloat16" : "float32", products[k],
          converted[k]);
  }
  g_free (group);
  g_free (products);
  g_free (converted);
}
