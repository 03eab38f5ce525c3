/* cudabatchinfer: the CPU backend's element-wise and binary ops
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * oneDNN eltwise and binary primitives; the op table's CbiKEltwise and
 * CbiKBinary say which algorithm. An activation fused into a producer
 * runs as its post-ops (postops.c).
 */
#include "cbicpu.h"

#include "cbimath.h"

#include <string.h>

/* The node's own op: oneDNN's primitive from the input (a second step in
 * place), or our loop where oneDNN has no form of it; the ops merged after
 * it follow in place (cbi_cpu_add_in_place()). */
gboolean
cbi_cpu_plan_eltwise (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  const CbiMd md = plan->mds[n->inputs[0]];
  const CbiEltwiseStep own = { cbi_op_info (n->op)->eltwise, n->alpha,
    n->beta
  };
  CbiCpuEltwise steps[2];
  CbiDnnlOp op = { CBI_DNNL_ELTWISE, };
  guint count = cbi_cpu_eltwise_form (&own, steps), i;
  gboolean ok;

  if (count == 0)               /* our loop, in the input's layout */
    return cbi_cpu_new_output (plan, n->output, md, error) != NULL
        && cbi_cpu_add_eltwise_loop (plan, &own, args[0].memory,
        plan->mems[n->output], md, error);
  op.alg = steps[0].alg;
  op.src = md;
  op.alpha = steps[0].alpha;
  op.beta = steps[0].beta;
  ok = cbi_cpu_plan_op (plan, &op, n, NULL, args, 1, error);
  for (i = 1; ok && i < count; i++)
    ok = cbi_cpu_add_eltwise_in_place (plan, n->output, &steps[i], error);
  return ok;
}

/* The channel blocks of @md (nChw16c's or nChw8c's tag, of 3 to 5
 * dimensions), or dnnl_format_tag_undef where it has another layout. */
static dnnl_format_tag_t
cbi_cpu_channel_blocks (CbiCpuPlan * plan, CbiMd md)
{
  static const dnnl_format_tag_t tags[2][3] = {
    {dnnl_aBc16b, dnnl_aBcd16b, dnnl_aBcde16b},
    {dnnl_aBc8b, dnnl_aBcd8b, dnnl_aBcde8b},
  };
  const gint n = cbi_md_n_dims (md);
  CbiMd tagged;
  guint k;

  for (k = 0; n >= 3 && n <= 5 && k < G_N_ELEMENTS (tags); k++)
    if (cbi_md_tag_typed (plan->descs, &tagged, n, cbi_md_dims (md),
            cbi_md_data_type (md), tags[k][n - 3]) == dnnl_success
        && dnnl_memory_desc_equal (tagged, md))
      return tags[k][n - 3];
  return dnnl_format_tag_undef;
}

/* @mem (@plain: row-major, at the first operand's rank) in the channel
 * blocks @blocked: a view where they put every value where row-major does
 * (whole blocks of channels over one position: a squeeze-and-excitation's
 * N x C x 1 x 1 scale), else a copy that a reorder step makes each batch,
 * of the operand's few values (it broadcasts). */
static dnnl_memory_t
cbi_cpu_operand_in_blocks (CbiCpuPlan * plan, dnnl_memory_t mem, CbiMd plain,
    CbiMd blocked, GError ** error)
{
  dnnl_memory_t copy;

  if (cbi_md_same_places (plain, blocked))
    return cbi_cpu_view (plan, mem, blocked, error);
  copy = cbi_cpu_scratch_memory (plan, blocked, error);
  if (copy == NULL || !cbi_cpu_add_reorder (plan, plain, mem, blocked, copy,
          error))
    return NULL;
  return copy;
}

/* The second operand of node @n, which broadcasts to the first: an
 * activation of the same shape in the first's layout (reordered when it
 * differs), else row-major with leading ones up to the first's rank, as
 * oneDNN broadcasts it; a constant is used where it is. Where the first
 * is in channel blocks, the second takes the same blocks: oneDNN's jit
 * binary broadcasts only between operands of one layout, and its
 * reference code, which it takes otherwise, is tens of times slower (a
 * squeeze-and-excitation's scale in a network of grouped convolutions,
 * RegNet's, whose activations oneDNN blocks). */
static dnnl_memory_t
cbi_cpu_second_operand (CbiCpuPlan * plan, const CbiNode * n, CbiMd * md,
    GError ** error)
{
  const CbiTensorInfo *b = cbi_graph_tensor (plan->graph, n->inputs[1]);
  const CbiShape *as = &plan->shapes[n->inputs[0]], *bs =
      &plan->shapes[n->inputs[1]];
  dnnl_format_tag_t blocks =
      cbi_cpu_channel_blocks (plan, plan->mds[n->inputs[0]]);
  CbiMd own, plain;
  dnnl_memory_t mem;
  dnnl_dims_t dims;
  gint d;

  if (b->data == NULL && cbi_shape_equal (as, bs)) {
    *md = plan->mds[n->inputs[0]];
    return cbi_cpu_in_layout (plan, n->inputs[1], *md, error);
  }
  if (!cbi_cpu_plain_md (plan, &plain, bs->n_dims, bs->dims, as->n_dims, error))
    return NULL;
  *md = plain;
  memcpy (dims, cbi_md_dims (plain), as->n_dims * sizeof (dnnl_dim_t));
  for (d = 0; blocks != dnnl_format_tag_undef && d < as->n_dims; d++)
    if (dims[d] != 1 && dims[d] != as->dims[d])
      blocks = dnnl_format_tag_undef;
  if (blocks != dnnl_format_tag_undef
      && !DNNL_CHECK (cbi_md_tag (plan->descs, md, as->n_dims, dims, blocks),
          "blocked operand desc"))
    return NULL;
  /* an activation of the first's rank goes into the blocks from its own
   * layout: the scale is often in them already */
  if (blocks != dnnl_format_tag_undef && b->data == NULL
      && bs->n_dims == as->n_dims)
    return cbi_cpu_in_layout_scratch (plan, n->inputs[1], *md, error);
  /* a constant goes into the blocks once, here */
  if (b->data)
    return cbi_cpu_constant_in (plan, plain, *md, b->data,
        "broadcast operand", error);
  if ((mem = cbi_cpu_plain (plan, n->inputs[1], &own, error)) != NULL)
    mem = cbi_cpu_view (plan, mem, plain, error);
  if (mem == NULL || blocks == dnnl_format_tag_undef)
    return mem;
  return cbi_cpu_operand_in_blocks (plan, mem, plain, *md, error);
}

/* Activation or constant @t for our loop: its data, row-major. */
static const gfloat *
cbi_cpu_loop_operand (CbiCpuPlan * plan, gint t, GError ** error)
{
  const CbiTensorInfo *info = cbi_graph_tensor (plan->graph, t);
  CbiMd md;
  dnnl_memory_t mem;
  gfloat *data = NULL;

  if (info->data)
    return info->data;
  mem = cbi_cpu_plain (plan, t, &md, error);
  if (mem)
    dnnl_memory_get_data_handle (mem, (void **) &data);
  return data;
}

/* Our loop for binary node @n (and @post), or Where node @n (its third
 * input the condition), on plain operands that broadcast to the output
 * (either of a binary op's; b and the condition of Where's). */
static gboolean
cbi_cpu_plan_binary_loop (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]];
  const CbiShape *ys = &plan->shapes[n->output];
  const gint out = post ? post->output : n->output;
  const gfloat *a, *b;
  CbiMd ymd;
  dnnl_memory_t y;
  CbiCpuBinary *p;

  if ((a = cbi_cpu_loop_operand (plan, n->inputs[0], error)) == NULL
      || (b = cbi_cpu_loop_operand (plan, n->inputs[1], error)) == NULL
      || !cbi_cpu_shape_md (plan, &ymd, ys, error)
      || (y = cbi_cpu_new_output (plan, out, ymd, error)) == NULL)
    return FALSE;
  p = g_new0 (CbiCpuBinary, 1);
  p->a = a;
  p->b = b;
  dnnl_memory_get_data_handle (y, (void **) &p->dst);
  p->count = cbi_shape_count (ys);
  p->rank = ys->n_dims;
  memcpy (p->dims, ys->dims, ys->n_dims * sizeof (gint64));
  p->a_full = cbi_shape_equal (as, ys);
  cbi_broadcast_strides (ys->n_dims, as->n_dims, as->dims, p->a_strides);
  cbi_broadcast_strides (ys->n_dims, bs->n_dims, bs->dims, p->b_strides);
  if (n->op == CBI_OP_WHERE) {
    const CbiShape *cs = &plan->shapes[n->inputs[2]];
    p->cond = cbi_graph_tensor (plan->graph, n->inputs[2])->data;
    cbi_broadcast_strides (ys->n_dims, cs->n_dims, cs->dims, p->c_strides);
  } else {
    p->op = cbi_op_info (n->op)->binary;
  }
  /* the activation's own op; what follows it runs in place after */
  if (post) {
    p->post[0].op = cbi_op_info (post->op)->eltwise;
    p->post[0].alpha = post->alpha;
    p->post[0].beta = post->beta;
    p->n_post = 1;
  }
  p->run = cbi_cpu_binary_run (p);
  cbi_cpu_add_loop (plan, cbi_cpu_run_binary, p);
  return TRUE;
}

/* Whether oneDNN would run binary node @n, its operands planar where
 * they are not in channel blocks (cbi_cpu_second_operand ()), in its
 * reference code: a broadcast along leading dimensions (a position table
 * added to every frame, an attention mask to every window), which our
 * loop runs as rows tens of times faster. */
static gboolean
cbi_cpu_binary_is_slow (CbiCpuPlan * plan, const CbiNode * n)
{
  const CbiShape *as = &plan->shapes[n->inputs[0]],
      *bs = &plan->shapes[n->inputs[1]];
  CbiDnnlOp op = { CBI_DNNL_BINARY, dnnl_binary_add,
    plan->mds[n->inputs[0]],
  };
  dnnl_primitive_desc_t pd = NULL;
  const gchar *impl;
  gboolean slow;

  if (cbi_shape_equal (as, bs)
      || cbi_cpu_channel_blocks (plan, op.src) != dnnl_format_tag_undef
      || !cbi_cpu_plain_md (plan, &op.src1, bs->n_dims, bs->dims,
          as->n_dims, NULL))
    return FALSE;
  op.dst = op.src;
  if (cbi_dnnl_op_create (&pd, &op, NULL, plan->cpu->engine) != dnnl_success)
    return FALSE;
  slow = !cbi_cpu_fast_impl (pd, &impl);
  dnnl_primitive_desc_destroy (pd);
  return slow;
}

/* Add, Sub, Mul, Div, Min, Max: oneDNN's binary where the first operand
 * is an activation of the output's shape (swapped to be so where the op
 * commutes), the second broadcast; our loop otherwise (Pow, a first
 * operand that broadcasts or is a constant). */
gboolean
cbi_cpu_plan_binary (gpointer user_plan, const CbiNode * node,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  CbiNode swapped;
  const CbiNode *n = cbi_node_binary_operands (plan->graph, node,
      plan->shapes, &swapped);
  static const dnnl_alg_kind_t algs[] = {
    [CBI_K_ADD] = dnnl_binary_add,
    [CBI_K_SUB] = dnnl_binary_sub,
    [CBI_K_MUL] = dnnl_binary_mul,
    [CBI_K_DIV] = dnnl_binary_div,
    [CBI_K_PRELU] = dnnl_alg_kind_undef,
    [CBI_K_MIN] = dnnl_binary_min,
    [CBI_K_MAX] = dnnl_binary_max,
    [CBI_K_POWER] = dnnl_alg_kind_undef,        /* none in oneDNN 2.6 */
  };
  dnnl_alg_kind_t alg = algs[cbi_op_info (n->op)->binary];
  const gint out = post ? post->output : n->output;
  CbiDnnlOp op = { CBI_DNNL_BINARY, alg, plan->mds[n->inputs[0]], };
  dnnl_exec_arg_t args[2];

  /* the residual Add a convolution took as its post-ops wrote this
   * output already (cbi_cpu_plan_conv ()) */
  if (plan->mems[out] != NULL)
    return TRUE;
  if (alg == dnnl_alg_kind_undef
      || cbi_graph_tensor (plan->graph, n->inputs[0])->data != NULL
      || !cbi_shape_equal (&plan->shapes[n->inputs[0]],
          &plan->shapes[n->output]))
    return cbi_cpu_plan_binary_loop (plan, n, post, error);

  if (cbi_cpu_binary_is_slow (plan, n))
    return cbi_cpu_plan_binary_loop (plan, n, post, error);
  args[0].arg = DNNL_ARG_SRC_0;
  args[0].memory = plan->mems[n->inputs[0]];
  args[1].arg = DNNL_ARG_SRC_1;
  args[1].memory = cbi_cpu_second_operand (plan, n, &op.src1, error);
  op.dst = op.src;
  return args[1].memory && cbi_cpu_plan_op (plan, &op, n, post, args, 2, error);
}

/* PRelu: the slope, row-major with leading ones, broadcasts as oneDNN's
 * weights. */
gboolean
cbi_cpu_plan_prelu (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const CbiShape *ss = &plan->shapes[n->inputs[1]];
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]},
  {DNNL_ARG_WEIGHTS, NULL}
  };
  CbiDnnlOp op = { CBI_DNNL_PRELU, dnnl_alg_kind_undef,
    plan->mds[n->inputs[0]],
  };

  return cbi_cpu_plain_md (plan, &op.weights, ss->n_dims, ss->dims,
      plan->shapes[n->inputs[0]].n_dims, error)
      && (args[1].memory = cbi_cpu_memory (plan, op.weights,
          cbi_graph_tensor (plan->graph, n->inputs[1])->data, error))
      && cbi_cpu_plan_op (plan, &op, n, NULL, args, 2, error);
}

/* Where: our loop (oneDNN has no select). */
gboolean
cbi_cpu_plan_where (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  return cbi_cpu_plan_binary_loop (plan, n, NULL, error);
}
