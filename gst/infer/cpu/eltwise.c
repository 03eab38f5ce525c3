/* cudabatchinfer: the CPU backend's element-wise and binary ops
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * oneDNN eltwise and binary primitives; the op table's CbiKEltwise and
 * CbiKBinary say which algorithm. An activation fused into a producer
 * runs as its post-ops (cbi_cpu_attr ()).
 */
#include "cbicpu.h"

#include "cbimath.h"

#include <string.h>

typedef struct
{
  dnnl_alg_kind_t alg;
  gfloat alpha;
  gfloat beta;
} CbiCpuEltwise;

/* HardSigmoid takes two */
#define CBI_CPU_MAX_STEPS (2 * CBI_MAX_ELTWISE_STEPS)

static void
cbi_cpu_step (CbiCpuEltwise * step, dnnl_alg_kind_t alg, gfloat alpha,
    gfloat beta)
{
  step->alg = alg;
  step->alpha = alpha;
  step->beta = beta;
}

/* oneDNN's form of element-wise op @e: one or two eltwise steps, or 0
 * where it has none. */
static guint
cbi_cpu_eltwise_step (const CbiEltwiseStep * e, CbiCpuEltwise steps[2])
{
  switch (e->op) {
    case CBI_K_RELU:           /* alpha is LeakyRelu's slope */
      cbi_cpu_step (&steps[0], dnnl_eltwise_relu, e->alpha, 0.0f);
      return 1;
    case CBI_K_SIGMOID:
      cbi_cpu_step (&steps[0], dnnl_eltwise_logistic, 0.0f, 0.0f);
      return 1;
    case CBI_K_TANH:
      cbi_cpu_step (&steps[0], dnnl_eltwise_tanh, 0.0f, 0.0f);
      return 1;
    case CBI_K_CLIP:
      cbi_cpu_step (&steps[0], dnnl_eltwise_clip, e->alpha, e->beta);
      return 1;
    case CBI_K_ELU:
      cbi_cpu_step (&steps[0], dnnl_eltwise_elu, e->alpha, 0.0f);
      return 1;
    case CBI_K_HARD_SIGMOID:   /* oneDNN 2.6 has none: linear, then clip */
      cbi_cpu_step (&steps[0], dnnl_eltwise_linear, e->alpha, e->beta);
      cbi_cpu_step (&steps[1], dnnl_eltwise_clip, 0.0f, 1.0f);
      return 2;
    case CBI_K_HARD_SWISH:     /* x relu6 (x + 3) / 6, as ONNX */
      cbi_cpu_step (&steps[0], dnnl_eltwise_hardswish, 0.0f, 0.0f);
      return 1;
    case CBI_K_IDENTITY:
      cbi_cpu_step (&steps[0], dnnl_eltwise_linear, 1.0f, 0.0f);
      return 1;
    case CBI_K_GELU_ERF:
      cbi_cpu_step (&steps[0], dnnl_eltwise_gelu_erf, 0.0f, 0.0f);
      return 1;
    case CBI_K_GELU_TANH:
      cbi_cpu_step (&steps[0], dnnl_eltwise_gelu_tanh, 0.0f, 0.0f);
      return 1;
    case CBI_K_SQRT:
      cbi_cpu_step (&steps[0], dnnl_eltwise_sqrt, 0.0f, 0.0f);
      return 1;
    case CBI_K_EXP:
      cbi_cpu_step (&steps[0], dnnl_eltwise_exp, 0.0f, 0.0f);
      return 1;
    case CBI_K_LOG:
      cbi_cpu_step (&steps[0], dnnl_eltwise_log, 0.0f, 0.0f);
      return 1;
    case CBI_K_NEG:
      cbi_cpu_step (&steps[0], dnnl_eltwise_linear, -1.0f, 0.0f);
      return 1;
    case CBI_K_ABS:
      cbi_cpu_step (&steps[0], dnnl_eltwise_abs, 0.0f, 0.0f);
      return 1;
    case CBI_K_RECIPROCAL:     /* 1 x^-1 */
      cbi_cpu_step (&steps[0], dnnl_eltwise_pow, 1.0f, -1.0f);
      return 1;
    case CBI_K_POW:            /* the square exact, as cbi_eltwise () */
      if (e->alpha == 2.0f)
        cbi_cpu_step (&steps[0], dnnl_eltwise_square, 0.0f, 0.0f);
      else
        cbi_cpu_step (&steps[0], dnnl_eltwise_pow, 1.0f, e->alpha);
      return 1;
    case CBI_K_LINEAR:
      cbi_cpu_step (&steps[0], dnnl_eltwise_linear, e->alpha, e->beta);
      return 1;
    case CBI_K_ERF:            /* no oneDNN form: cbi_cpu_run_eltwise () */
    default:
      return 0;
  }
}

/* oneDNN's form of element-wise node @n, its @then included: its eltwise
 * steps, or 0 where one of them has none; @own: how many of them are the
 * node's own op (1, or 2 for HardSigmoid). */
static guint
cbi_cpu_eltwise_steps (const CbiNode * n,
    CbiCpuEltwise steps[CBI_CPU_MAX_STEPS], guint * own)
{
  CbiEltwiseStep ops[CBI_MAX_ELTWISE_STEPS];
  guint n_ops = cbi_node_eltwise_steps (n, ops), i, count = 0, k;

  for (i = 0; i < n_ops; i++) {
    if ((k = cbi_cpu_eltwise_step (&ops[i], steps + count)) == 0)
      return 0;
    if (i == 0)
      *own = k;
    count += k;
  }
  return count;
}

/* An attribute with a user scratchpad and the @n_steps of @steps as
 * post-ops. */
static gboolean
cbi_cpu_attr_steps (const CbiCpuEltwise * steps, guint n_steps,
    dnnl_primitive_attr_t * attr, GError ** error)
{
  dnnl_post_ops_t ops = NULL;
  gboolean ok;
  guint i;

  if (!DNNL_CHECK (dnnl_primitive_attr_create (attr),
          "dnnl_primitive_attr_create"))
    return FALSE;
  ok = DNNL_CHECK (dnnl_primitive_attr_set_scratchpad_mode (*attr,
          dnnl_scratchpad_mode_user), "set_scratchpad_mode");
  if (ok && n_steps > 0) {
    ok = DNNL_CHECK (dnnl_post_ops_create (&ops), "dnnl_post_ops_create");
    for (i = 0; ok && i < n_steps; i++)
      ok = DNNL_CHECK (dnnl_post_ops_append_eltwise (ops, 1.0f, steps[i].alg,
              steps[i].alpha, steps[i].beta), "append_eltwise");
    ok = ok && DNNL_CHECK (dnnl_primitive_attr_set_post_ops (*attr, ops),
        "set_post_ops");
    if (ops)
      dnnl_post_ops_destroy (ops);
  }
  return ok;
}

/* A primitive takes the first op of @post as its post-ops, and the steps
 * of its @then run after it as eltwise primitives (cbi_cpu_post_rest()),
 * for two reasons found on oneDNN 2.6. Its jit post-ops (AVX2 and
 * AVX-512) give a second step of one algorithm the parameters of the
 * first: a convolution with post-ops 1.5 x, relu, 0.5 x computes 1.5 x,
 * relu, 1.5 x. And its brgemm convolutions run slower with a second
 * post-op than with a jit pass after them: the text recogniser's
 * convolutions with alpha x + beta and HardSwish as post-ops took 8 ms a
 * batch more than with the HardSwish a pass of its own, which took 2 ms. */
gboolean
cbi_cpu_attr (const CbiNode * post, dnnl_primitive_attr_t * attr,
    GError ** error)
{
  CbiCpuEltwise steps[CBI_CPU_MAX_STEPS];
  guint own = 0;

  if (post == NULL || cbi_cpu_eltwise_steps (post, steps, &own) == 0)
    own = 0;
  return cbi_cpu_attr_steps (steps, own, attr, error);
}

/* A oneDNN eltwise of step @step in place on output @out. One step each:
 * oneDNN 2.6 runs an eltwise with post-ops in its reference code, several
 * times slower than a pass each of its jit code. */
static gboolean
cbi_cpu_add_eltwise_step (CbiCpuPlan * plan, gint out,
    const CbiCpuEltwise * step, GError ** error)
{
  const dnnl_memory_desc_t *md = &plan->mds[out];
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_eltwise_desc_t desc;
  gboolean ok;

  const dnnl_exec_arg_t args[2] = {
    {DNNL_ARG_SRC, plan->mems[out]},
    {DNNL_ARG_DST, plan->mems[out]},
  };

  ok = DNNL_CHECK (dnnl_eltwise_forward_desc_init (&desc,
          dnnl_forward_inference, step->alg, md, step->alpha, step->beta),
      "eltwise desc")
      && cbi_cpu_attr_steps (NULL, 0, &attr, error)
      && DNNL_CHECK (dnnl_primitive_desc_create (&pd, &desc, attr,
          plan->cpu->engine, NULL), "eltwise primitive desc");
  return cbi_cpu_finish_owned (ok, pd, attr, plan, args, 2, -1, error);
}

/* Our loop for element-wise node @n, whose op oneDNN has no form of, from
 * @src into @dst (may be @src), both of desc @md. Erf, the one such op,
 * keeps a blocked layout's zero padding, and joins no run of element-wise
 * ops (cbi_graph_fuse_eltwise_runs()): a node with steps is refused. */
static gboolean
cbi_cpu_add_eltwise_loop (CbiCpuPlan * plan, const CbiNode * n,
    dnnl_memory_t src, dnnl_memory_t dst, const dnnl_memory_desc_t * md,
    GError ** error)
{
  CbiCpuEltwiseLoop *e;

  if (n->n_then > 0)
    return cbi_node_unsupported (n, "cpu", error);
  e = g_new0 (CbiCpuEltwiseLoop, 1);
  dnnl_memory_get_data_handle (src, (void **) &e->src);
  dnnl_memory_get_data_handle (dst, (void **) &e->dst);
  e->count = dnnl_memory_desc_get_size (md) / sizeof (gfloat);
  e->op = cbi_op_info (n->op)->eltwise;
  e->alpha = n->alpha;
  e->beta = n->beta;
  cbi_cpu_add_loop (plan, cbi_cpu_run_eltwise, e);
  return TRUE;
}

/* What of activation @post (nullable) the post-ops of the primitive that
 * wrote output @out (cbi_cpu_attr()) left, in place on @out: the steps
 * of its @then as eltwise primitives, or our loop where oneDNN has no form
 * of it. */
gboolean
cbi_cpu_post_rest (CbiCpuPlan * plan, const CbiNode * post, gint out,
    GError ** error)
{
  CbiCpuEltwise steps[CBI_CPU_MAX_STEPS];
  guint n, i, own;

  if (post == NULL)
    return TRUE;
  n = cbi_cpu_eltwise_steps (post, steps, &own);
  if (n > 0) {
    for (i = own; i < n; i++)
      if (!cbi_cpu_add_eltwise_step (plan, out, &steps[i], error))
        return FALSE;
    return TRUE;
  }
  return cbi_cpu_add_eltwise_loop (plan, post, plan->mems[out],
      plan->mems[out], &plan->mds[out], error);
}

gboolean
cbi_cpu_plan_eltwise (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  dnnl_memory_desc_t md = plan->mds[n->inputs[0]];
  CbiCpuEltwise steps[CBI_CPU_MAX_STEPS];
  dnnl_eltwise_desc_t desc;
  guint own, count = cbi_cpu_eltwise_steps (n, steps, &own), i;
  gboolean ok;

  if (count == 0)               /* our loop, in the input's layout */
    return cbi_cpu_new_output (plan, n->output, &md, error) != NULL
        && cbi_cpu_add_eltwise_loop (plan, n, args[0].memory,
        plan->mems[n->output], &md, error);
  /* the first step from the input, the others in place after it */
  ok = DNNL_CHECK (dnnl_eltwise_forward_desc_init (&desc,
          dnnl_forward_inference, steps[0].alg, &md, steps[0].alpha,
          steps[0].beta), "eltwise desc")
      && cbi_cpu_plan_op (plan, &desc, n, NULL, args, 1, error);
  for (i = 1; ok && i < count; i++)
    ok = cbi_cpu_add_eltwise_step (plan, n->output, &steps[i], error);
  return ok;
}

/* The second operand of node @n, which broadcasts to the first: an
 * activation of the same shape in the first's layout (reordered when it
 * differs), else row-major with leading ones up to the first's rank, as
 * oneDNN broadcasts it; a constant is used where it is. */
static dnnl_memory_t
cbi_cpu_second_operand (CbiCpuPlan * plan, const CbiNode * n,
    dnnl_memory_desc_t * md, GError ** error)
{
  const CbiTensorInfo *b = cbi_graph_tensor (plan->graph, n->inputs[1]);
  const CbiShape *as = &plan->shapes[n->inputs[0]], *bs =
      &plan->shapes[n->inputs[1]];
  dnnl_memory_desc_t own;
  dnnl_memory_t mem;

  if (b->data == NULL && cbi_shape_equal (as, bs)) {
    *md = plan->mds[n->inputs[0]];
    return cbi_cpu_in_layout (plan, n->inputs[1], md, error);
  }
  if (!cbi_cpu_plain_md (md, bs->n_dims, bs->dims, as->n_dims, error))
    return NULL;
  if (b->data)
    return cbi_cpu_memory (plan, md, b->data, error);
  mem = cbi_cpu_plain (plan, n->inputs[1], &own, error);
  return mem ? cbi_cpu_view (plan, mem, md, error) : NULL;
}

/* Our loop for binary node @n (and @post), or Where node @n (its third
 * input the condition), on plain operands. */
static gboolean
cbi_cpu_plan_binary_loop (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]];
  const CbiTensorInfo *b = cbi_graph_tensor (plan->graph, n->inputs[1]);
  const gint out = post ? post->output : n->output;
  dnnl_memory_desc_t amd, bmd;
  dnnl_memory_t a, bm = NULL, y;
  CbiCpuBinary *p;

  a = cbi_cpu_plain (plan, n->inputs[0], &amd, error);
  if (a == NULL || (b->data == NULL
          && (bm = cbi_cpu_plain (plan, n->inputs[1], &bmd, error)) == NULL))
    return FALSE;
  y = cbi_cpu_new_output (plan, out, &amd, error);
  if (y == NULL)
    return FALSE;
  p = g_new0 (CbiCpuBinary, 1);
  dnnl_memory_get_data_handle (a, (void **) &p->a);
  if (bm)
    dnnl_memory_get_data_handle (bm, (void **) &p->b);
  else
    p->b = b->data;
  dnnl_memory_get_data_handle (y, (void **) &p->dst);
  p->count = cbi_shape_count (as);
  p->rank = as->n_dims;
  memcpy (p->dims, as->dims, as->n_dims * sizeof (gint64));
  cbi_broadcast_strides (as->n_dims, bs->n_dims, bs->dims, p->b_strides);
  if (n->op == CBI_OP_WHERE) {
    const CbiShape *cs = &plan->shapes[n->inputs[2]];
    p->cond = cbi_graph_tensor (plan->graph, n->inputs[2])->data;
    cbi_broadcast_strides (as->n_dims, cs->n_dims, cs->dims, p->c_strides);
  } else {
    p->op = cbi_op_info (n->op)->binary;
  }
  p->n_post = post ? cbi_node_eltwise_steps (post, p->post) : 0;
  cbi_cpu_add_loop (plan, cbi_cpu_run_binary, p);
  return TRUE;
}

gboolean
cbi_cpu_plan_binary (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const dnnl_memory_desc_t *md = &plan->mds[n->inputs[0]];
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
  dnnl_exec_arg_t args[2];
  dnnl_memory_desc_t b_md;
  dnnl_binary_desc_t desc;

  if (alg == dnnl_alg_kind_undef)
    return cbi_cpu_plan_binary_loop (plan, n, post, error);

  args[0].arg = DNNL_ARG_SRC_0;
  args[0].memory = plan->mems[n->inputs[0]];
  args[1].arg = DNNL_ARG_SRC_1;
  args[1].memory = cbi_cpu_second_operand (plan, n, &b_md, error);
  return args[1].memory
      && DNNL_CHECK (dnnl_binary_desc_init (&desc, alg, md, &b_md, md),
      "binary desc")
      && cbi_cpu_plan_op (plan, &desc, n, post, args, 2, error);
}

/* PRelu: the slope, row-major with leading ones, broadcasts as oneDNN's
 * weights. */
gboolean
cbi_cpu_plan_prelu (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *ss = &plan->shapes[n->inputs[1]];
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]},
  {DNNL_ARG_WEIGHTS, NULL}
  };
  dnnl_memory_desc_t w_md;
  dnnl_prelu_desc_t desc;

  return cbi_cpu_plain_md (&w_md, ss->n_dims, ss->dims,
      plan->shapes[n->inputs[0]].n_dims, error)
      && (args[1].memory = cbi_cpu_memory (plan, &w_md,
          cbi_graph_tensor (plan->graph, n->inputs[1])->data, error))
      && DNNL_CHECK (dnnl_prelu_forward_desc_init (&desc,
          dnnl_forward_inference, &plan->mds[n->inputs[0]], &w_md),
      "prelu desc")
      && cbi_cpu_plan_op (plan, &desc, n, NULL, args, 2, error);
}

/* Where: our loop (oneDNN has no select). */
gboolean
cbi_cpu_plan_where (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  return cbi_cpu_plan_binary_loop (plan, n, NULL, error);
}
