/* cudabatchinfer: the CUDA backend's pooling
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MaxPool, AveragePool and GlobalAveragePool through cuDNN, or our kernel
 * for windows cuDNN cannot describe (pads that differ by side, dilation).
 */
#include "cbicuda.h"

typedef struct
{
  CbiCudaDescs desc;
  CbiCudaIO io;
} CbiCudaPool;

static gboolean
cbi_cuda_run_pool (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaPool *p = params;
  gint64 k;

  for (k = 0; k < p->desc.calls; k++)
    if (!CUDNN_CHECK (cudnnPoolingForward (cuda->cudnn, p->desc.pool,
                &cbi_cuda_one, p->desc.x, p->io.x + k * p->desc.x_step,
                &cbi_cuda_zero, p->desc.y, p->io.y + k * p->desc.y_step),
            "pooling"))
      return FALSE;
  return TRUE;
}

typedef struct
{
  CbiCudaIO io;
  CbiCudaPlanes size;
  CbiKPool window;
} CbiCudaPoolKernel;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_pool_kernel, CbiCudaPoolKernel, CUDA_CHECK,
    "pooling kernel", cbi_k_pool (p->io.x, p->io.y, p->size.planes,
        p->size.height, p->size.width, p->size.out_h, p->size.out_w,
        &p->window, stream))
/* *INDENT-ON* */

/* A window our kernel slides: any pads, any dilation. */
static void
cbi_cuda_plan_pool_kernel (CbiCudaPlan * plan, const CbiNode * n,
    const CbiConvAttrs * a)
{
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiShape *ys = &plan->shapes[n->output];
  CbiCudaPoolKernel *k = CBI_CUDA_ADD_IO_STEP (plan, n,
      cbi_cuda_run_pool_kernel, CbiCudaPoolKernel);
  gint d;

  cbi_cuda_planes (&k->size, xs, ys);
  for (d = 0; d < 2; d++) {
    k->window.kernel[d] = a->kernel[d];
    k->window.stride[d] = a->strides[d];
    k->window.dilation[d] = a->dilations[d];
    k->window.pad[d] = a->pads[d];
  }
  k->window.max = n->op == CBI_OP_MAX_POOL;
  k->window.count_pad = a->count_include_pad;
}

gboolean
cbi_cuda_plan_pool (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  CbiConvAttrs conv = n->conv;
  const CbiConvAttrs *a = &conv;
  gboolean global = n->op == CBI_OP_GLOBAL_AVERAGE_POOL;
  cudnnPoolingMode_t mode = n->op == CBI_OP_MAX_POOL ? CUDNN_POOLING_MAX :
      a->count_include_pad && !global ?
      CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING :
      CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  CbiCudaPool *p;

  if (!global)
    cbi_node_pads (plan->model, n, xs, conv.pads);
  if (!global &&(a->pads[0] != a->pads[2] || a->pads[1] != a->pads[3]
          || a->dilations[0] != 1 || a->dilations[1] != 1)) {
    cbi_cuda_plan_pool_kernel (plan, n, a);
    return TRUE;
  }
  p = CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_pool, CbiCudaPool);
  cbi_cuda_last_step (plan)->clear = cbi_cuda_descs_clear;
  return cbi_cuda_descs_init (&p->desc, n, xs, &plan->shapes[n->output], error)
      && CUDNN_CHECK (cudnnCreatePoolingDescriptor (&p->desc.pool), "pooling")
      && CUDNN_CHECK (cudnnSetPooling2dDescriptor (p->desc.pool, mode,
          CUDNN_NOT_PROPAGATE_NAN, global ? xs->dims[2] : a->kernel[0],
          global ? xs->dims[3] : a->kernel[1], global ? 0 : a->pads[0],
          global ? 0 : a->pads[1], global ? 1 : a->strides[0],
          global ? 1 : a->strides[1]), "pooling desc");
}
