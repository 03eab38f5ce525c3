/* cudabatchinfer: the CPU backend's pooling
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MaxPool, AveragePool and GlobalAveragePool as oneDNN pooling.
 */
#include "cbicpu.h"

/* The window of pooling node @n on input @x into @own: its attributes
 * with the pads for that size, or GlobalAveragePool's whole plane. */
static const CbiConvAttrs *
cbi_cpu_pool_window (CbiCpuPlan * plan, const CbiNode * n, const CbiShape * x,
    CbiConvAttrs * own)
{
  const CbiConvAttrs global = { {1, 1}, {1, 1}, {0, 0, 0, 0}, 1,
  {x->dims[2], x->dims[3]}
  };

  if (n->op == CBI_OP_GLOBAL_AVERAGE_POOL) {
    *own = global;
  } else {
    *own = n->conv;
    cbi_node_pads (plan->graph, n, x, own->pads);
  }
  return own;
}

/* MaxPool, AveragePool, and GlobalAveragePool as an average over the
 * whole plane. */
gboolean
cbi_cpu_plan_pool (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const CbiShape *x = &plan->shapes[n->inputs[0]];
  CbiConvAttrs window;
  const CbiConvAttrs *a = cbi_cpu_pool_window (plan, n, x, &window);
  dnnl_alg_kind_t alg = n->op == CBI_OP_MAX_POOL ? dnnl_pooling_max :
      a->count_include_pad ? dnnl_pooling_avg_include_padding :
      dnnl_pooling_avg_exclude_padding;
  dnnl_dims_t strides = { a->strides[0], a->strides[1] };
  dnnl_dims_t kernel = { a->kernel[0], a->kernel[1] };
  dnnl_dims_t dil = { a->dilations[0] - 1, a->dilations[1] - 1 };
  dnnl_dims_t pad_l = { a->pads[0], a->pads[1] };
  dnnl_dims_t pad_r = { a->pads[2], a->pads[3] };
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  CbiDnnlOp op = { CBI_DNNL_POOLING, alg, plan->mds[n->inputs[0]], };
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  CbiMd plain;
  dnnl_memory_t y;
  gboolean ok;

  op.strides = strides;
  op.kernel = kernel;
  op.dilation = dil;
  op.pad_l = pad_l;
  op.pad_r = pad_r;
  if (!cbi_cpu_any_md_as (plan, &op.dst, &plan->shapes[n->output], op.src,
          error))
    return FALSE;
  /* oneDNN pools in one type: a bfloat16 input whose output is float32
   * (bf16.c: a pooled vector that a Flatten or a product reads) is pooled
   * in bfloat16 into a block of the step's, then converted */
  if (cbi_md_data_type (op.src) != dnnl_bf16
      || (plan->tensor_bf16 != NULL && plan->tensor_bf16[n->output]))
    return cbi_cpu_plan_op (plan, &op, n, NULL, args, 1, error);
  ok = cbi_cpu_attr (NULL, &attr, error)
      && DNNL_CHECK (cbi_dnnl_op_create (&pd, &op, attr, plan->cpu->engine),
      "pooling primitive desc");
  if (ok) {
    args[1].arg = DNNL_ARG_DST;
    args[1].memory = cbi_cpu_scratch_memory (plan,
        dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0), error);
    ok = args[1].memory != NULL
        && cbi_cpu_add_primitive (plan, pd, args, 2, -1, error)
        && cbi_cpu_shape_md (plan, &plain, &plan->shapes[n->output], error)
        && (y = cbi_cpu_new_output (plan, n->output, plain, error)) != NULL
        && cbi_cpu_add_reorder (plan,
        dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0),
        args[1].memory, plain, y, error);
  }
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}
