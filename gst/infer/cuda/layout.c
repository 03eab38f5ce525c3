/* cudabatchinfer: the CUDA backend's ops that move values
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Transpose and DepthToSpace (one permutation kernel), Concat, Pad,
 * Resize, and Reshape, a copy: one kernel each (kernels/permute.cu,
 * concat.cu, pad.cu, resize.cu).
 */
#include "cbicuda.h"

#include <string.h>

typedef struct
{
  const gfloat *x;
  gfloat *y;
  gint rank;
  gint64 dims[CBI_K_MAX_DIMS];
  gint64 perm[CBI_K_MAX_DIMS];
} CbiCudaPermute;

typedef struct
{
  const gfloat *x;
  gfloat *y;
  gint64 outer, x_inner, y_inner, offset;
} CbiCudaConcat;

typedef struct
{
  const gfloat *x;
  gfloat *y;
  gint64 planes, height, width;
  gint64 pads[4];
  CbiKPadFill fill;
  gfloat value;
} CbiCudaPad;

typedef struct
{
  const gfloat *x;
  gfloat *y;
  gint64 planes, in_h, in_w, out_h, out_w;
  gfloat scale_h, scale_w;
  gboolean linear;
} CbiCudaResize;

typedef struct
{
  const gfloat *x;
  gfloat *y;
  gint64 count;
} CbiCudaCopy;

static gboolean
cbi_cuda_run_permute (CbiCuda * cuda, CbiCudaPlan * plan,
    gconstpointer params, cudaStream_t stream, GError ** error)
{
  const CbiCudaPermute *p = params;

  return CUDA_CHECK (cbi_k_permute (p->x, p->y, p->rank, p->dims, p->perm,
          stream), "permute kernel");
}

static gboolean
cbi_cuda_run_concat (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaConcat *c = params;

  return CUDA_CHECK (cbi_k_concat (c->x, c->y, c->outer, c->x_inner,
          c->y_inner, c->offset, stream), "concat kernel");
}

static gboolean
cbi_cuda_run_pad (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaPad *p = params;

  return CUDA_CHECK (cbi_k_pad (p->x, p->y, p->planes, p->height, p->width,
          p->pads[0], p->pads[1], p->pads[2], p->pads[3], p->fill, p->value,
          stream), "pad kernel");
}

static gboolean
cbi_cuda_run_resize (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaResize *r = params;

  return CUDA_CHECK (cbi_k_resize (r->x, r->y, r->planes, r->in_h, r->in_w,
          r->out_h, r->out_w, r->scale_h, r->scale_w, r->linear, stream),
      "resize kernel");
}

static gboolean
cbi_cuda_run_copy (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaCopy *c = params;

  return CUDA_CHECK (cudaMemcpyAsync (c->y, c->x, c->count * sizeof (gfloat),
          cudaMemcpyDeviceToDevice, stream), "copy");
}

gboolean
cbi_cuda_plan_permute (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  CbiCudaPermute *p = cbi_cuda_add_step (plan, n, cbi_cuda_run_permute,
      sizeof (CbiCudaPermute));
  CbiShape view;

  p->x = plan->tensors[n->inputs[0]];
  p->y = plan->tensors[n->output];
  cbi_node_permutation (n, &plan->shapes[n->inputs[0]], &view, p->perm);
  p->rank = view.n_dims;
  memcpy (p->dims, view.dims, view.n_dims * sizeof (gint64));
  return TRUE;
}

/* One copy per input into its columns of the output seen as 2-D at the
 * axis. */
gboolean
cbi_cuda_plan_concat (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  const CbiShape *ys = &plan->shapes[n->output];
  gint axis = n->axis < 0 ? n->axis + ys->n_dims : n->axis, d;
  gint64 outer = 1, inner = 1, offset = 0;
  guint i;

  for (d = 0; d < axis; d++)
    outer *= ys->dims[d];
  for (d = axis + 1; d < ys->n_dims; d++)
    inner *= ys->dims[d];
  for (i = 0; i < n->n_inputs; i++) {
    CbiCudaConcat *c;
    if (cbi_graph_tensor (graph, n->inputs[i])->data
        && cbi_cuda_constant (cuda, plan, pool, graph, n->inputs[i],
            error) == NULL)
      return FALSE;
    c = cbi_cuda_add_step (plan, n, cbi_cuda_run_concat,
        sizeof (CbiCudaConcat));
    c->x = plan->tensors[n->inputs[i]];
    c->y = plan->tensors[n->output];
    c->outer = outer;
    c->x_inner = plan->shapes[n->inputs[i]].dims[axis] * inner;
    c->y_inner = ys->dims[axis] * inner;
    c->offset = offset;
    offset += c->x_inner;
  }
  return TRUE;
}

void
cbi_cuda_add_pad (CbiCudaPlan * plan, const CbiNode * n, const gfloat * x,
    gfloat * y, gint64 planes, gint64 height, gint64 width,
    const gint64 * pads, CbiKPadFill fill, gfloat value)
{
  CbiCudaPad *p = cbi_cuda_add_step (plan, n, cbi_cuda_run_pad,
      sizeof (CbiCudaPad));

  p->x = x;
  p->y = y;
  p->planes = planes;
  p->height = height;
  p->width = width;
  memcpy (p->pads, pads, sizeof (p->pads));
  p->fill = fill;
  p->value = value;
}

gboolean
cbi_cuda_plan_pad (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  const CbiShape *xs = &plan->shapes[n->inputs[0]];

  /* the graph's fills are the kernels' (cbicpuloops.c asserts it) */
  cbi_cuda_add_pad (plan, n, plan->tensors[n->inputs[0]],
      plan->tensors[n->output], xs->dims[0] * xs->dims[1], xs->dims[2],
      xs->dims[3], n->conv.pads, (CbiKPadFill) n->mode, n->alpha);
  return TRUE;
}

gboolean
cbi_cuda_plan_resize (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiShape *ys = &plan->shapes[n->output];
  CbiCudaResize *r = cbi_cuda_add_step (plan, n, cbi_cuda_run_resize,
      sizeof (CbiCudaResize));

  r->x = plan->tensors[n->inputs[0]];
  r->y = plan->tensors[n->output];
  r->planes = xs->dims[0] * xs->dims[1];
  r->in_h = xs->dims[2];
  r->in_w = xs->dims[3];
  r->out_h = ys->dims[2];
  r->out_w = ys->dims[3];
  /* the sizes' ratio, as the CPU backend maps coordinates (shape
   * inference made sure it is the model's scale) */
  r->scale_h = (gfloat) ys->dims[2] / xs->dims[2];
  r->scale_w = (gfloat) ys->dims[3] / xs->dims[3];
  r->linear = n->mode == CBI_RESIZE_LINEAR;
  return TRUE;
}

gboolean
cbi_cuda_plan_reshape (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  CbiCudaCopy *c = cbi_cuda_add_step (plan, n, cbi_cuda_run_copy,
      sizeof (CbiCudaCopy));

  c->x = plan->tensors[n->inputs[0]];
  c->y = plan->tensors[n->output];
  c->count = cbi_shape_count (&plan->shapes[n->inputs[0]]);
  return TRUE;
}
