/* cudabatchinfer: the CUDA backend's pooling
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MaxPool, AveragePool and GlobalAveragePool through cuDNN, or our kernel
 * for windows cuDNN cannot describe (pads that differ by side, dilation).
 */
#include "cbicuda.h"

typedef struct
{
  const gfloat *x;
  gfloat *y;
  cudnnTensorDescriptor_t x_desc, y_desc;
  cudnnPoolingDescriptor_t pool_desc;
} CbiCudaPool;

typedef struct
{
  const gfloat *x;
  gfloat *y;
  gint64 planes, height, width, out_h, out_w;
  CbiKPool window;
} CbiCudaPoolKernel;

static void
cbi_cuda_pool_clear (gpointer params)
{
  CbiCudaPool *p = params;

  if (p->x_desc)
    cudnnDestroyTensorDescriptor (p->x_desc);
  if (p->y_desc)
    cudnnDestroyTensorDescriptor (p->y_desc);
  if (p->pool_desc)
    cudnnDestroyPoolingDescriptor (p->pool_desc);
}

static gboolean
cbi_cuda_run_pool (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaPool *p = params;
  const float one = 1.0f, zero = 0.0f;

  return CUDNN_CHECK (cudnnPoolingForward (cuda->cudnn, p->pool_desc, &one,
          p->x_desc, p->x, &zero, p->y_desc, p->y), "pooling");
}

static gboolean
cbi_cuda_run_pool_kernel (CbiCuda * cuda, CbiCudaPlan * plan,
    gconstpointer params, cudaStream_t stream, GError ** error)
{
  const CbiCudaPoolKernel *p = params;

  return CUDA_CHECK (cbi_k_pool (p->x, p->y, p->planes, p->height, p->width,
          p->out_h, p->out_w, &p->window, stream), "pooling kernel");
}

gboolean
cbi_cuda_plan_pool (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiShape *ys = &plan->shapes[n->output];
  const CbiConvAttrs *a = &n->conv;
  gboolean global = n->op == CBI_OP_GLOBAL_AVERAGE_POOL;
  cudnnPoolingMode_t mode = n->op == CBI_OP_MAX_POOL ? CUDNN_POOLING_MAX :
      a->count_include_pad && !global ?
      CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING :
      CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  CbiCudaPool *p;

  if (!global &&(a->pads[0] != a->pads[2] || a->pads[1] != a->pads[3]
          || a->dilations[0] != 1 || a->dilations[1] != 1)) {
    CbiCudaPoolKernel * k = cbi_cuda_add_step (plan, n,
        cbi_cuda_run_pool_kernel, sizeof (CbiCudaPoolKernel));
    gint d;
    k->x = plan->tensors[n->inputs[0]];
    k->y = plan->tensors[n->output];
    k->planes = xs->dims[0] * xs->dims[1];
    k->height = xs->dims[2];
    k->width = xs->dims[3];
    k->out_h = ys->dims[2];
    k->out_w = ys->dims[3];
    for (d = 0; d < 2; d++) {
      k->window.kernel[d] = a->kernel[d];
      k->window.stride[d] = a->strides[d];
      k->window.dilation[d] = a->dilations[d];
      k->window.pad[d] = a->pads[d];
    }
    k->window.max = n->op == CBI_OP_MAX_POOL;
    k->window.count_pad = a->count_include_pad;
    return TRUE;
  }
  p = cbi_cuda_add_step (plan, n, cbi_cuda_run_pool, sizeof (CbiCudaPool));
  cbi_cuda_last_step (plan)->clear = cbi_cuda_pool_clear;
  p->x = plan->tensors[n->inputs[0]];
  p->y = plan->tensors[n->output];
  return cbi_cuda_tensor_desc (&p->x_desc, xs, error)
      && cbi_cuda_tensor_desc (&p->y_desc, ys, error)
      && CUDNN_CHECK (cudnnCreatePoolingDescriptor (&p->pool_desc), "pooling")
      && CUDNN_CHECK (cudnnSetPooling2dDescriptor (p->pool_desc, mode,
          CUDNN_NOT_PROPAGATE_NAN, global ? xs->dims[2] : a->kernel[0],
          global ? xs->dims[3] : a->kernel[1], global ? 0 : a->pads[0],
          global ? 0 : a->pads[1], global ? 1 : a->strides[0],
          global ? 1 : a->strides[1]), "pooling desc");
}
