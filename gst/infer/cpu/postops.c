/* cudabatchinfer: the CPU backend's fused activations (cbiplanner.h's
 * convention): oneDNN's form of an element-wise op, post-ops, and the
 * steps that run in place on an output
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A primitive takes the own op of its fused activation as its post-ops,
 * and the ops merged after it too (cbi_cpu_attr_chain ()), where each
 * has a oneDNN form and no algorithm comes twice: oneDNN 2.6's jit
 * post-ops (AVX2 and AVX-512) give a second step of one algorithm the
 * parameters of the first (a convolution with post-ops 1.5 x, relu, 0.5 x
 * computes 1.5 x, relu, 1.5 x). Otherwise the merged ops run as eltwise
 * primitives of their own, in place (cbi_cpu_add_in_place ()): a pass
 * over the output each, which PP-LCNetV3's HardSwish then alpha x + beta
 * after every convolution made the largest share of the element-wise
 * time of PP-OCRv4's detector.
 */
#include "cbicpu.h"

#include "cbimath.h"

static void
cbi_cpu_step (CbiCpuEltwise * step, dnnl_alg_kind_t alg, gfloat alpha,
    gfloat beta)
{
  step->alg = alg;
  step->alpha = alpha;
  step->beta = beta;
}

guint
cbi_cpu_eltwise_form (const CbiEltwiseStep * e, CbiCpuEltwise steps[2])
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
    case CBI_K_HARD_SWISH:     /* x relu6 (x + 3) / 6, as ONNX; oneDNN 3
                                 * reads these alpha, beta, 2.x ignores them */
      cbi_cpu_step (&steps[0], dnnl_eltwise_hardswish, 1.0f / 6.0f, 0.5f);
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
    case CBI_K_SWISH:
      cbi_cpu_step (&steps[0], dnnl_eltwise_swish, e->alpha, 0.0f);
      return 1;
    case CBI_K_ERF:            /* no oneDNN form: cbi_cpu_run_eltwise () */
    default:
      return 0;
  }
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
      ok = DNNL_CHECK (cbi_dnnl_append_eltwise (ops, steps[i].alg,
              steps[i].alpha, steps[i].beta), "append_eltwise");
    ok = ok && DNNL_CHECK (dnnl_primitive_attr_set_post_ops (*attr, ops),
        "set_post_ops");
    if (ops)
      dnnl_post_ops_destroy (ops);
  }
  return ok;
}

gboolean
cbi_cpu_attr_residual (const CbiNode * post, dnnl_primitive_attr_t * attr,
    GError ** error)
{
  dnnl_post_ops_t ops = NULL;
  CbiCpuEltwise steps[2];
  guint count = 0;
  gboolean ok;

  if (post) {
    const CbiEltwiseStep own = { cbi_op_info (post->op)->eltwise,
      post->alpha, post->beta
    };
    count = cbi_cpu_eltwise_form (&own, steps);
  }
  if (!cbi_cpu_attr_steps (NULL, 0, attr, error))
    return FALSE;
  ok = DNNL_CHECK (dnnl_post_ops_create (&ops), "dnnl_post_ops_create")
      && DNNL_CHECK (cbi_dnnl_append_sum (ops), "append_sum");
  ok = ok && (count == 0 || DNNL_CHECK (cbi_dnnl_append_eltwise (ops,
              steps[0].alg, steps[0].alpha, steps[0].beta), "append_eltwise"))
      && DNNL_CHECK (dnnl_primitive_attr_set_post_ops (*attr, ops),
      "set_post_ops");
  if (ops)
    dnnl_post_ops_destroy (ops);
  return ok;
}

/* An attribute with a user scratchpad and, as post-ops, oneDNN's form of
 * the own op of activation @post (nullable), where it has one. */
gboolean
cbi_cpu_attr (const CbiNode * post, dnnl_primitive_attr_t * attr,
    GError ** error)
{
  CbiCpuEltwise steps[2];
  guint count = 0;

  if (post) {
    const CbiEltwiseStep own = { cbi_op_info (post->op)->eltwise,
      post->alpha, post->beta
    };
    count = cbi_cpu_eltwise_form (&own, steps);
  }
  return cbi_cpu_attr_steps (steps, count, attr, error);
}

/* The post-ops of activation @post with the ops merged after its own op
 * into @steps: their count, or 0 where one of them has no oneDNN form, or
 * one algorithm would come twice (oneDNN 2.6's jit post-ops give a second
 * step of an algorithm the parameters of the first). */
static guint
cbi_cpu_chain_steps (const CbiNode * post, CbiCpuEltwise * steps)
{
  const CbiEltwiseStep own = { cbi_op_info (post->op)->eltwise,
    post->alpha, post->beta
  };
  guint count = cbi_cpu_eltwise_form (&own, steps), i, j, k;

  if (count == 0 || !cbi_op_is_eltwise (post->op))
    return 0;
  for (i = 0; i < post->n_then; i++) {
    guint more = cbi_cpu_eltwise_form (&post->then[i], steps + count);
    if (more == 0)
      return 0;
    count += more;
  }
  for (j = 0; j < count; j++)
    for (k = j + 1; k < count; k++)
      if (steps[j].alg == steps[k].alg)
        return 0;
  return count;
}

gboolean
cbi_cpu_step_in_onednn (const CbiNode * n, const CbiNode * post)
{
  const CbiNode *last = post ? post : n;
  CbiCpuEltwise steps[2];
  guint i;

  if (post) {
    const CbiEltwiseStep own = { cbi_op_info (post->op)->eltwise,
      post->alpha, post->beta
    };
    if (cbi_cpu_eltwise_form (&own, steps) == 0)
      return FALSE;
  }
  for (i = 0; cbi_op_is_eltwise (last->op) && i < last->n_then; i++)
    if (cbi_cpu_eltwise_form (&last->then[i], steps) == 0)
      return FALSE;
  return TRUE;
}

gboolean
cbi_cpu_attr_chain (CbiCpuPlan * plan, const CbiNode * post,
    dnnl_primitive_attr_t * attr, GError ** error)
{
  CbiCpuEltwise steps[2 * CBI_MAX_ELTWISE_STEPS];
  guint count;

  if (post == NULL || post->n_then == 0
      || (count = cbi_cpu_chain_steps (post, steps)) == 0)
    return cbi_cpu_attr (post, attr, error);
  plan->chained = post;
  return cbi_cpu_attr_steps (steps, count, attr, error);
}

/* A oneDNN eltwise of step @step in place on output @out. One step each:
 * oneDNN 2.6 runs an eltwise with post-ops in its reference code, several
 * times slower than a pass each of its jit code. */
gboolean
cbi_cpu_add_eltwise_in_place (CbiCpuPlan * plan, gint out,
    const CbiCpuEltwise * step, GError ** error)
{
  CbiDnnlOp op = { CBI_DNNL_ELTWISE, step->alg, plan->mds[out], };
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  gboolean ok;

  const dnnl_exec_arg_t args[2] = {
    {DNNL_ARG_SRC, plan->mems[out]},
    {DNNL_ARG_DST, plan->mems[out]},
  };

  op.alpha = step->alpha;
  op.beta = step->beta;
  ok = cbi_cpu_attr_steps (NULL, 0, &attr, error)
      && DNNL_CHECK (cbi_dnnl_op_create (&pd, &op, attr, plan->cpu->engine),
      "eltwise primitive desc");
  return cbi_cpu_add_primitive_owned (ok, pd, attr, plan, args, 2, -1, error);
}

/* Our loop for element-wise op @e, which oneDNN has no form of, from
 * @src into @dst (may be @src), both of desc @md. Erf, the one such op,
 * keeps a blocked layout's zero padding. */
gboolean
cbi_cpu_add_eltwise_loop (CbiCpuPlan * plan, const CbiEltwiseStep * e,
    dnnl_memory_t src, dnnl_memory_t dst, CbiMd md, GError ** error)
{
  CbiCpuEltwiseLoop *loop = g_new0 (CbiCpuEltwiseLoop, 1);

  dnnl_memory_get_data_handle (src, (void **) &loop->src);
  dnnl_memory_get_data_handle (dst, (void **) &loop->dst);
  loop->count = dnnl_memory_desc_get_size (md) / sizeof (gfloat);
  loop->op = e->op;
  loop->alpha = e->alpha;
  loop->beta = e->beta;
  cbi_cpu_add_loop (plan, cbi_cpu_run_eltwise, loop);
  return TRUE;
}

/* Step @e in place on output @out: oneDNN's eltwise steps, or our loop. */
static gboolean
cbi_cpu_add_step_in_place (CbiCpuPlan * plan, gint out,
    const CbiEltwiseStep * e, GError ** error)
{
  CbiCpuEltwise steps[2];
  guint count = cbi_cpu_eltwise_form (e, steps), i;

  if (count == 0)
    return cbi_cpu_add_eltwise_loop (plan, e, plan->mems[out],
        plan->mems[out], plan->mds[out], error);
  for (i = 0; i < count; i++)
    if (!cbi_cpu_add_eltwise_in_place (plan, out, &steps[i], error))
      return FALSE;
  return TRUE;
}

gboolean
cbi_cpu_post_own (CbiCpuPlan * plan, const CbiNode * post, gint out,
    GError ** error)
{
  CbiCpuEltwise steps[2];
  CbiEltwiseStep own;

  if (post == NULL)
    return TRUE;
  own.op = cbi_op_info (post->op)->eltwise;
  own.alpha = post->alpha;
  own.beta = post->beta;
  if (cbi_cpu_eltwise_form (&own, steps) > 0)
    return TRUE;                /* the primitive ran it as its post-ops */
  return cbi_cpu_add_step_in_place (plan, out, &own, error);
}

gboolean
cbi_cpu_add_in_place (gpointer user_plan, const CbiNode * n,
    const CbiEltwiseStep * step, GError ** error)
{
  CbiCpuPlan *plan = user_plan;

  /* the primitive that wrote the output ran them as post-ops */
  if (n == plan->chained)
    return TRUE;
  return cbi_cpu_add_step_in_place (plan, n->output, step, error);
}

/* A primitive for @op, node @n's, with activation @post (nullable)
 * after it (cbi_cpu_attr(), cbi_cpu_post_own()), reading @inputs and
 * writing the output of @post, else of @n. */
gboolean
cbi_cpu_plan_op (CbiCpuPlan * plan, const CbiDnnlOp * op,
    const CbiNode * n, const CbiNode * post,
    const dnnl_exec_arg_t * inputs, gint n_inputs, GError ** error)
{
  const gint out = post ? post->output : n->output;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  gboolean ok;

  ok = cbi_cpu_attr_chain (plan, post, &attr, error)
      && DNNL_CHECK (cbi_dnnl_op_create (&pd, op, attr, plan->cpu->engine),
      "primitive desc");
  return cbi_cpu_add_primitive_owned (ok, pd, attr, plan, inputs,
      n_inputs, out, error) && cbi_cpu_post_own (plan, post, out, error);
}
