/* cudabatchinfer: the CPU backend's Gemm and MatMul
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Both as oneDNN matmul. In a bfloat16 plan, a product that computes
 * many products per value it converts (bf16.c's rules) takes bfloat16
 * operands with float32 sums and output: its activation operands are
 * converted by a reorder before it, constant ones once at planning.
 */
#include "cbicpu.h"

#include <string.h>

/* @md's dims in bfloat16, row-major. */
static gboolean
cbi_cpu_bf16_md (CbiCpuPlan * plan, CbiMd md, CbiMd * out, GError ** error)
{
  static const dnnl_format_tag_t plain[] = { dnnl_a, dnnl_ab, dnnl_abc,
    dnnl_abcd, dnnl_abcde, dnnl_abcdef
  };
  const gint rank = cbi_md_n_dims (md);
  dnnl_dims_t dims;

  memcpy (dims, cbi_md_dims (md), rank * sizeof (dnnl_dim_t));
  return DNNL_CHECK (cbi_md_tag_typed (plan->descs, out, rank, dims,
          dnnl_bf16, plain[rank - 1]), "bfloat16 desc");
}

gboolean
cbi_cpu_product_bf16 (CbiCpuPlan * plan, const gchar * name,
    const CbiDnnlOp * op, gfloat * weights, const_dnnl_primitive_attr_t attr,
    dnnl_exec_arg_t * args, dnnl_primitive_desc_t * pd, GError ** error)
{
  CbiDnnlOp low = *op;
  CbiMd wmd_any;
  dnnl_memory_t x, w;
  const gchar *impl;
  dnnl_dims_t dims;
  const gint rank = cbi_md_n_dims (op->weights);

  memcpy (dims, cbi_md_dims (op->weights), rank * sizeof (dnnl_dim_t));
  /* constant weights in the layout oneDNN packs them in */
  if (!cbi_cpu_bf16_md (plan, op->src, &low.src, error)
      || !(weights ? DNNL_CHECK (cbi_md_tag_typed (plan->descs, &wmd_any,
                  rank, dims, dnnl_bf16, dnnl_format_tag_any),
              "weights desc") : cbi_cpu_bf16_md (plan, op->weights,
              &wmd_any, error)))
    return FALSE;
  low.weights = wmd_any;
  if (cbi_dnnl_op_create (pd, &low, attr, plan->cpu->engine) != dnnl_success
      || !cbi_cpu_fast_impl (*pd, &impl)) {
    GST_DEBUG ("%s stays float32 (oneDNN: %s)", name, *pd && impl ? impl :
        "no bfloat16 primitive");
    g_clear_pointer (pd, dnnl_primitive_desc_destroy);
    return FALSE;
  }
  /* the copies only this product reads: their blocks are free for the
   * activations after it */
  x = cbi_cpu_scratch_memory (plan, low.src, error);
  if (x == NULL || !cbi_cpu_add_reorder (plan, op->src, args[0].memory,
          low.src, x, error))
    goto failed;
  if (weights) {
    w = cbi_cpu_constant_in (plan, op->weights,
        dnnl_primitive_desc_query_md (*pd, dnnl_query_weights_md, 0),
        weights, "matrix product weights", error);
  } else {
    CbiMd wmd = dnnl_primitive_desc_query_md (*pd, dnnl_query_weights_md, 0);
    w = cbi_cpu_scratch_memory (plan, wmd, error);
    if (w && !cbi_cpu_add_reorder (plan, op->weights, args[1].memory, wmd, w,
            error))
      w = NULL;
  }
  if (w == NULL)
    goto failed;
  args[0].memory = x;
  args[1].memory = w;
  return TRUE;

failed:
  g_clear_pointer (pd, dnnl_primitive_desc_destroy);
  return FALSE;
}

/* The step of matrix product @op of node @n (and @post) on @args (src,
 * weights, then bias), in bfloat16 where the plan is and it gains
 * (@products products into @outputs values, @converted values converted
 * in @conversions reorders), else float32. */
static gboolean
cbi_cpu_add_product (CbiCpuPlan * plan, const CbiDnnlOp * op,
    const CbiNode * n, const CbiNode * post, dnnl_exec_arg_t * args,
    gint n_args, gfloat * weights, gdouble products, gdouble outputs,
    gdouble converted, guint conversions, GError ** error)
{
  const gint out = post ? post->output : n->output;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  GError *local = NULL;
  gboolean ok;

  if (!plan->bf16 || !(plan->bf16_wide ? products > 0.0 :
          cbi_cpu_bf16_pays (products, outputs, converted, conversions)))
    return cbi_cpu_plan_op (plan, op, n, post, args, n_args, error);
  if (!cbi_cpu_attr_chain (plan, post, &attr, error)) {
    if (attr)
      dnnl_primitive_attr_destroy (attr);
    return FALSE;
  }
  if (!cbi_cpu_product_bf16 (plan, n->name, op, weights, attr, args, &pd,
          &local)) {
    dnnl_primitive_attr_destroy (attr);
    if (local) {
      g_propagate_error (error, local);
      return FALSE;
    }
    return cbi_cpu_plan_op (plan, op, n, post, args, n_args, error);
  }
  ok = cbi_cpu_add_primitive_owned (TRUE, pd, attr, plan, args, n_args, out,
      error) && cbi_cpu_post_own (plan, post, out, error);
  plan->bf16_ops += ok;
  return ok;
}

/* Gemm as a oneDNN matmul: alpha folds into a copy of B laid out [K, N],
 * beta C into a bias, both made once here. The bias is one row
 * broadcast over the output where C is (a classifier's head): oneDNN
 * runs a matmul with a bias of the whole output in its reference code. */
static gboolean
cbi_cpu_plan_gemm (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *as = &plan->shapes[n->inputs[0]], *ys =
      &plan->shapes[n->output];
  const gint64 m = ys->dims[0], cols = ys->dims[1];
  const gint64 k = as->dims[n->ints[0] ? 0 : 1];
  const gint64 bias_rows = cbi_gemm_has_bias (n) ?
      cbi_gemm_bias_rows (n, plan->shapes, m) : 0;
  dnnl_dims_t a_dims = { m, k }, a_strides = { k, 1 };
  dnnl_dims_t w_dims = { k, cols }, bias_dims = { bias_rows, cols };
  CbiMd a_plain, bias_md;
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  dnnl_exec_arg_t args[3];
  gfloat *w, *bias = NULL;
  guint ops;

  /* transA: the row-major [K, M] input read with swapped strides */
  if (n->ints[0]) {
    a_strides[0] = 1;
    a_strides[1] = m;
  }
  args[0].arg = DNNL_ARG_SRC;
  args[0].memory = cbi_cpu_plain (plan, n->inputs[0], &a_plain, error);
  if (args[0].memory == NULL
      || !DNNL_CHECK (cbi_md_strides (plan->descs, &op.src, 2, a_dims,
              a_strides), "gemm A desc")
      || (args[0].memory = cbi_cpu_view (plan, args[0].memory, op.src,
              error)) == NULL)
    return FALSE;

  w = cbi_mem_plan_alloc (plan->memory, k * cols * sizeof (gfloat),
      "gemm weights", error);
  if (w == NULL)
    return FALSE;
  cbi_gemm_weights (plan->graph, n, k, cols, w);
  if (bias_rows > 0) {
    bias = cbi_mem_plan_alloc (plan->memory,
        bias_rows * cols * sizeof (gfloat), "gemm bias", error);
    if (bias == NULL)
      return FALSE;
    cbi_gemm_bias (plan->graph, n, plan->shapes, bias_rows, cols, bias);
  }

  args[1].arg = DNNL_ARG_WEIGHTS;
  args[2].arg = DNNL_ARG_BIAS;
  if (!cbi_cpu_plain_md (plan, &op.weights, 2, w_dims, 2, error)
      || !cbi_cpu_plain_md (plan, &bias_md, 2, bias_dims, 2, error)
      || !cbi_cpu_any_md (plan, &op.dst, ys, error)
      || !(args[1].memory = cbi_cpu_memory (plan, op.weights, w, error))
      || (bias && !(args[2].memory = cbi_cpu_memory (plan, bias_md, bias,
                  error))))
    return FALSE;
  op.bias = bias ? bias_md : NULL;
  ops = plan->bf16_ops;
  if (!cbi_cpu_add_product (plan, &op, n, post, args, bias ? 3 : 2, w,
          (gdouble) m * k * cols, (gdouble) m * cols, (gdouble) m * k, 1,
          error))
    return FALSE;
  /* the product reads the bfloat16 copy of the weights */
  if (plan->bf16_ops > ops)
    cbi_mem_plan_give_back (plan->memory, w);
  return TRUE;
}

/* MatMul: both operands row-major with leading ones up to the output's
 * rank, where oneDNN broadcasts their batch dimensions. */
static gboolean
cbi_cpu_plan_matmul (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *ys = &plan->shapes[n->output];
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  gfloat *weights = cbi_graph_tensor (plan->graph, n->inputs[1])->data;
  CbiMd md[2], own;
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  dnnl_exec_arg_t args[2];
  gdouble products, converted;
  gint i;

  for (i = 0; i < 2; i++) {
    gint t = n->inputs[i];
    const CbiTensorInfo *info = cbi_graph_tensor (plan->graph, t);
    dnnl_memory_t mem;
    if (!cbi_cpu_plain_md (plan, &md[i], plan->shapes[t].n_dims,
            plan->shapes[t].dims, ys->n_dims, error))
      return FALSE;
    if (info->data)
      mem = cbi_cpu_memory (plan, md[i], info->data, error);
    else if ((mem = cbi_cpu_plain (plan, t, &own, error)) != NULL)
      mem = cbi_cpu_view (plan, mem, md[i], error);
    if (mem == NULL)
      return FALSE;
    args[i].arg = i == 0 ? DNNL_ARG_SRC : DNNL_ARG_WEIGHTS;
    args[i].memory = mem;
  }
  op.src = md[0];
  op.weights = md[1];
  /* each output value sums K products, K the first operand's last dim */
  products = (gdouble) cbi_shape_count (ys) * as->dims[as->n_dims - 1];
  converted = cbi_shape_count (as) + (weights ? 0.0 :
      cbi_shape_count (&plan->shapes[n->inputs[1]]));
  return cbi_cpu_any_md (plan, &op.dst, ys, error)
      && cbi_cpu_add_product (plan, &op, n, post, args, 2, weights, products,
      cbi_shape_count (ys), converted, weights ? 1 : 2, error);
}

/* Gemm and MatMul. */
gboolean
cbi_cpu_plan_matrix (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  return (n->op == CBI_OP_GEMM ? cbi_cpu_plan_gemm : cbi_cpu_plan_matmul)
      (plan, n, post, error);
}
