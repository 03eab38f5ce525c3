/* cudabatchinfer: which convolutions of a bfloat16 plan take bfloat16
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A bfloat16 plan is made two ways. The wide plan, which the warm-up
 * tries first, takes every convolution and matrix product in bfloat16
 * (the image's convolution too: packing then writes the image in
 * bfloat16, plan.c), and keeps the activations bfloat16
 * through the oneDNN primitives that keep the type of what they read
 * (element-wise, binary, pooling, resampling, concatenation) where all
 * they meet on the way is those primitives and convolutions in bfloat16:
 * the passes between convolutions then move half the bytes, and the
 * memory-bound convolutions (depthwise, thin) too, and nothing is
 * converted inside the network but at the ops that need float32.
 *
 * The narrow plan, which the warm-up falls back to where the wide one
 * fails its accuracy check (and which runs where nothing checks a plan),
 * keeps fewer roundings: a convolution whose output only convolutions
 * read passes it to them in bfloat16; elsewhere the activations are
 * float32, so a convolution that takes bfloat16 from a float32
 * activation converts it first (a reorder: a pass over it). Convolutions
 * linked that way run in bfloat16 together or not at all: a group runs
 * in it where the products its convolutions sum outnumber the values
 * converted into it by far, its output values each sum many products,
 * and each conversion brings enough of them to pay for its primitive.
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

gdouble
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

/* The narrow plan's convolutions in bfloat16: the groups that gain. */
static void
cbi_cpu_choose_bf16_groups (CbiCpuPlan * plan)
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

  /* the image's convolution keeps float32 operands here (conv.c) and
   * writes float32: oneDNN has no kernel that reads float32 and writes
   * bfloat16, so it stays out of the groups, and what it writes counts as
   * converted into the group that reads it */
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

void
cbi_cpu_choose_bf16 (CbiCpuPlan * plan)
{
  const CbiGraph *graph = plan->graph;
  guint i;

  if (!plan->bf16_wide) {
    cbi_cpu_choose_bf16_groups (plan);
    return;
  }
  /* the wide plan: every convolution, the image's too (packing then
   * writes its input in bfloat16: plan.c) */
  plan->conv_bf16 = g_new0 (gboolean, graph->nodes->len);
  for (i = 0; i < graph->nodes->len; i++)
    plan->conv_bf16[i] = cbi_cpu_is_conv (cbi_graph_node (graph, i));
}

/* How node @n of @plan reads its activations where they are bfloat16:
 * @joined receives the inputs that go into a primitive of the type they
 * have, whose output then has it too (the output's class takes theirs);
 * @converting, those it reads through a reorder into the type its
 * primitive wants (a convolution's input, a second operand that
 * broadcasts, the ops that read a row-major copy); @keeps, whether it
 * writes its output in the type of what it joins (else float32); FALSE
 * where some input must be float32 as it is (our loops, the views), as
 * cbi_cpu_plan_*() plan it. */
static gboolean
cbi_cpu_bf16_reads (const CbiCpuPlan * plan, const CbiNode * n,
    guint64 * joined, guint64 * converting, gboolean * keeps)
{
  const CbiGraph *graph = plan->graph;
  const CbiOpInfo *info = cbi_op_info (n->op);
  CbiCpuEltwise steps[2];
  guint j;

  *joined = *converting = 0;
  *keeps = TRUE;
  switch (info->kind) {
    case CBI_OP_KIND_CONV:
      *converting = 1;
      return TRUE;
    case CBI_OP_KIND_SPLIT:
      /* a part in the input's own layout and type (layout.c), else a
       * float32 copy of rows of the input made row-major */
      *joined = 1;
      return TRUE;
    case CBI_OP_KIND_COPY:
      if (cbi_cpu_slice_is_part (plan, n)) {
        *joined = 1;            /* the same as a Split's part */
        return TRUE;
      }
      /* fall through */
    case CBI_OP_KIND_REDUCE:
    case CBI_OP_KIND_LAYER_NORM:
      /* they read their input converted, row-major (or pooled, pool.c),
       * and write float32 */
      *converting = 1;
      *keeps = FALSE;
      return TRUE;
    case CBI_OP_KIND_ELTWISE:{
      const CbiEltwiseStep own = { info->eltwise, n->alpha, n->beta };
      *joined = 1;
      return cbi_cpu_eltwise_form (&own, steps) > 0;
    }
    case CBI_OP_KIND_POOL:
      /* it converts its output where that is float32 (pool.c) */
      *converting = 1;
      return TRUE;
    case CBI_OP_KIND_RESIZE:
      *joined = 1;
      return TRUE;
    case CBI_OP_KIND_PERMUTE:
      /* a DepthToSpace of a channels-last input is one reorder, in the
       * input's type (layout.c); of any other, a float32 one */
      *joined = n->op == CBI_OP_DEPTH_TO_SPACE;
      return n->op == CBI_OP_DEPTH_TO_SPACE;
    case CBI_OP_KIND_CONCAT:
      for (j = 0; j < n->n_inputs; j++)
        if (cbi_graph_tensor (graph, n->inputs[j])->data != NULL)
          return FALSE;
      *joined = (G_GUINT64_CONSTANT (1) << n->n_inputs) - 1;
      return TRUE;
    case CBI_OP_KIND_BINARY:{
      CbiNode swapped;
      const CbiNode *m = cbi_node_binary_operands (graph, n, plan->shapes,
          &swapped);
      const CbiShape *ys = &plan->shapes[m->output];
      guint first = m == n ? 0 : 1;
      if (info->binary == CBI_K_POWER
          || cbi_graph_tensor (graph, m->inputs[0])->data != NULL
          || !cbi_shape_equal (&plan->shapes[m->inputs[0]], ys))
        return FALSE;
      *joined = G_GUINT64_CONSTANT (1) << first;
      /* an operand of the output's shape joins too: where a convolution
       * adds its result to it in place, the sum is in its type */
      if (cbi_shape_equal (&plan->shapes[m->inputs[1]], ys))
        *joined |= G_GUINT64_CONSTANT (1) << (1 - first);
      else
        *converting = G_GUINT64_CONSTANT (1) << (1 - first);
      return TRUE;
    }
    default:
      return FALSE;
  }
}

/* Sets @plan->tensor_bf16: the activations that are bfloat16. They fall
 * into classes, the tensors a primitive reads and writes in one type
 * (cbi_cpu_bf16_reads ()); a class is bfloat16 where each of its tensors
 * is written by a convolution in bfloat16 or a primitive of the class,
 * and read by primitives of the class or through a conversion (by
 * convolutions in bfloat16, or of one value per channel: a
 * squeeze-and-excite); none is an output of the graph. The writers are
 * what the class starts from: a class with no convolution in it is
 * float32. The ops that compute shapes are left out: they read none of
 * the values. */
void
cbi_cpu_choose_bf16_tensors (CbiCpuPlan * plan)
{
  const CbiGraph *graph = plan->graph;
  const guint n_tensors = graph->tensors->len;
  guint *class = g_new (guint, n_tensors);
  gboolean *bad = g_new0 (gboolean, n_tensors);
  gboolean *written = g_new0 (gboolean, n_tensors);
  guint i, j, count = 0;

  for (i = 0; i < n_tensors; i++)
    class[i] = i;
  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    const CbiNode *post = cbi_graph_fused_activation (graph, i);
    const gint out = post ? post->output : n->output;
    guint64 joined, converting;
    gboolean keeps;
    gboolean reads = cbi_cpu_bf16_reads (plan, n, &joined, &converting,
        &keeps);
    gboolean writes = reads && keeps && cbi_cpu_step_in_onednn (n, post);
    const gboolean is_conv = cbi_op_info (n->op)->kind == CBI_OP_KIND_CONV;
    const gboolean conv_bf16 = is_conv && plan->conv_bf16[i];

    if (post)
      i++;
    if (cbi_op_info (n->op)->kind == CBI_OP_KIND_SHAPE_VALUE)
      continue;
    if (is_conv)
      writes = writes && conv_bf16;
    for (j = 0; j < n->n_inputs; j++) {
      const gint t = n->inputs[j];
      const guint64 bit = G_GUINT64_CONSTANT (1) << j;
      const CbiShape *s;
      if (t < 0 || cbi_graph_tensor (graph, t)->data != NULL)
        continue;
      s = &plan->shapes[t];
      if (!reads || !((joined | converting) & bit)) {
        GST_LOG ("%s reads %s in float32", n->name,
            cbi_graph_tensor (graph, t)->name);
        bad[t] = TRUE;
      } else if (joined & bit)
        class[cbi_cpu_find (class, t)] = cbi_cpu_find (class, out);
      else if (is_conv && j == 0 && !conv_bf16 && !(s->n_dims == 4
              && s->dims[2] * s->dims[3] == 1)) {
        GST_LOG ("%s converts all of %s", n->name,
            cbi_graph_tensor (graph, t)->name);
        bad[t] = TRUE;          /* a conversion of the whole activation */
      }
    }
    if (!writes) {
      GST_LOG ("%s writes %s in float32", n->name,
          cbi_graph_tensor (graph, out)->name);
      bad[out] = TRUE;
    }
    written[out] = TRUE;
  }
  bad[graph->input] = TRUE;
  for (i = 0; i < graph->n_outputs; i++)
    bad[graph->outputs[i]] = TRUE;
  for (i = 0; i < n_tensors; i++)
    if (bad[i])
      bad[cbi_cpu_find (class, i)] = TRUE;
  plan->tensor_bf16 = g_new0 (gboolean, n_tensors);
  for (i = 0; i < n_tensors; i++) {
    plan->tensor_bf16[i] = !bad[cbi_cpu_find (class, i)]
        && cbi_graph_tensor (graph, i)->data == NULL;
    count += plan->tensor_bf16[i] && written[i];
  }
  GST_DEBUG ("%u activations in bfloat16", count);
  g_free (class);
  g_free (bad);
  g_free (written);
}
