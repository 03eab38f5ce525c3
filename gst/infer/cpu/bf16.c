/* cudabatchinfer: which convolutions of a bfloat16 plan take bfloat16
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A convolution whose output only convolutions read passes it to them in
 * bfloat16; elsewhere the activations are float32, so a convolution that
 * takes bfloat16 from a float32 activation converts it first (a reorder:
 * a pass over it). Convolutions linked that way run in bfloat16 together
 * or not at all: a group runs in it where the products its convolutions
 * sum outnumber the values converted into it by far, its output values
 * each sum many products, and each conversion brings enough of them to
 * pay for its primitive; depthwise and thin convolutions between residual
 * additions (mobile networks) are bound by memory, and conversions would
 * only slow them down.
 */
#include "cbicpu.h"

/* a group of linked convolutions takes bfloat16 where it computes at
 * least this many products per value converted into it, and each of its
 * output values sums at least this many products on average: a thin
 * convolution (a 1x1 of few channels, a depthwise one) is bound by memory
 * even where nothing is converted */
#define CBI_CPU_BF16_PRODUCTS_PER_VALUE 64
#define CBI_CPU_BF16_SUMS_PER_OUTPUT 32
/* and each conversion into it (a reorder primitive, with its fixed cost
 * of a few microseconds) brings at least this many products: the
 * convolutions on a pooled vector (squeeze-and-excite) stay float32 */
#define CBI_CPU_BF16_PRODUCTS_PER_CONVERSION 4e6

static gboolean
cbi_cpu_is_conv (const CbiNode * n)
{
  return n->op == CBI_OP_CONV || n->op == CBI_OP_CONV_TRANSPOSE;
}

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
      if (j != 0 || !cbi_cpu_is_conv (m))
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
  /* Conv weights are (out, in / group, kh, kw): an output value sums
   * in / group x kh x kw products; ConvTranspose's are (in, out / group,
   * kh, kw): an input value spreads to out / group x kh x kw of them (its
   * output values sum fewer where it strides) */
  const gint t = n->op == CBI_OP_CONV ? n->output : n->inputs[0];

  return (gdouble) w->dims[1] * w->dims[2] * w->dims[3]
      * cbi_shape_count (&plan->shapes[t]);
}

gboolean
cbi_cpu_bf16_pays (gdouble products, gdouble outputs, gdouble converted,
    guint conversions)
{
  return products > 0.0
      && products >= CBI_CPU_BF16_PRODUCTS_PER_VALUE * converted
      && products >= CBI_CPU_BF16_SUMS_PER_OUTPUT * outputs
      && products >= CBI_CPU_BF16_PRODUCTS_PER_CONVERSION * conversions;
}

void
cbi_cpu_choose_bf16 (CbiCpuPlan * plan)
{
  const CbiGraph *graph = plan->graph;
  const guint n_nodes = graph->nodes->len;
  guint *group = g_new (guint, n_nodes);
  gint *writer = g_new (gint, graph->tensors->len);
  gdouble *products = g_new0 (gdouble, n_nodes);
  gdouble *outputs = g_new0 (gdouble, n_nodes);
  gdouble *converted = g_new0 (gdouble, n_nodes);
  guint *conversions = g_new0 (guint, n_nodes);
  guint i, j, k;

  /* the image's convolution keeps float32 operands (conv.c) and writes
   * float32: oneDNN has no kernel that reads float32 and writes bfloat16,
   * so it stays out of the groups, and what it writes counts as converted
   * into the group that reads it */
  for (i = 0; i < graph->tensors->len; i++)
    writer[i] = -1;
  for (i = 0; i < n_nodes; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    const CbiNode *post;
    gint out;
    group[i] = i;
    if (!cbi_cpu_is_conv (n) || n->inputs[0] == graph->input)
      continue;
    post = cbi_graph_fused_activation (graph, i);
    out = post ? post->output : n->output;
    if (cbi_cpu_conv_link (graph, post, out))
      writer[out] = (gint) i;
  }
  /* convolutions linked by an activation only convolutions read */
  for (j = 0; j < n_nodes; j++) {
    const CbiNode *m = cbi_graph_node (graph, j);
    gint in = m->inputs[0];
    if (cbi_cpu_is_conv (m) && in >= 0 && writer[in] >= 0)
      group[cbi_cpu_find (group, j)] = cbi_cpu_find (group, writer[in]);
  }
  /* each group's products and output values, and the values converted
   * into it: each input no convolution of the group writes (but the
   * image, which the image's convolution reads in float32) */
  for (i = 0; i < n_nodes; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    gint in = n->inputs[0];
    if (!cbi_cpu_is_conv (n) || in == graph->input)
      continue;
    k = cbi_cpu_find (group, i);
    products[k] += cbi_cpu_conv_products (plan, n);
    outputs[k] += cbi_shape_count (&plan->shapes[n->output]);
    if (writer[in] < 0) {
      converted[k] += cbi_shape_count (&plan->shapes[in]);
      conversions[k]++;
    }
  }
  plan->conv_bf16 = g_new0 (gboolean, n_nodes);
  for (i = 0; i < n_nodes; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    if (!cbi_cpu_is_conv (n) || n->inputs[0] == graph->input)
      continue;
    k = cbi_cpu_find (group, i);
    plan->conv_bf16[i] = cbi_cpu_bf16_pays (products[k], outputs[k],
        converted[k], conversions[k]);
    if (k == i)
      GST_DEBUG ("convolutions with %s: %s (%.3g products, %.3g output "
          "values, %.3g values converted into them)", n->name,
          plan->conv_bf16[i] ? "bfloat16" : "float32", products[k],
          outputs[k], converted[k]);
  }
  g_free (group);
  g_free (writer);
  g_free (products);
  g_free (outputs);
  g_free (converted);
  g_free (conversions);
}
