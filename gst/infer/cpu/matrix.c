/* cudabatchinfer: the CPU backend's Gemm and MatMul
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Both as oneDNN matmul.
 */
#include "cbicpu.h"

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
  return cbi_cpu_plan_op (plan, &op, n, post, args, bias ? 3 : 2, error);
}

/* MatMul: both operands row-major with leading ones up to the output's
 * rank, where oneDNN broadcasts their batch dimensions. */
static gboolean
cbi_cpu_plan_matmul (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *ys = &plan->shapes[n->output];
  CbiMd md[2], own;
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  dnnl_exec_arg_t args[2];
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
  return cbi_cpu_any_md (plan, &op.dst, ys, error)
      && cbi_cpu_plan_op (plan, &op, n, post, args, 2, error);
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
