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
  CbiCudaIO io;
  gint rank;
  gint64 dims[CBI_K_MAX_DIMS];
  gint64 perm[CBI_K_MAX_DIMS];
} CbiCudaPermute;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_permute, CbiCudaPermute, CUDA_CHECK,
    "permute kernel", cbi_k_permute (p->io.x, p->io.y, p->rank, p->dims,
        p->perm, stream))
/* *INDENT-ON* */

/* Transpose and DepthToSpace: one permutation of a row-major view. */
gboolean
cbi_cuda_plan_permute (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiShape view;
  CbiCudaPermute *p =
      CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_permute, CbiCudaPermute);

  cbi_node_permutation (n, &plan->shapes[n->inputs[0]], &view, p->perm);
  p->rank = view.n_dims;
  memcpy (p->dims, view.dims, view.n_dims * sizeof (gint64));
  return TRUE;
}

typedef struct
{
  CbiCudaIO io;
  gint64 outer, x_inner, y_inner, offset;
} CbiCudaConcat;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_concat, CbiCudaConcat, CUDA_CHECK,
    "concat kernel", cbi_k_concat (p->io.x, p->io.y, p->outer, p->x_inner,
        p->y_inner, p->offset, stream))
/* *INDENT-ON* */

/* One copy per input into its columns of the output seen as 2-D at the
 * axis. */
gboolean
cbi_cuda_plan_concat (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const CbiShape *ys = &plan->shapes[n->output];
  gint64 outer, inner, offset = 0;
  gint axis = cbi_node_concat_view (n, ys, &outer, &inner);
  guint i;

  for (i = 0; i < n->n_inputs; i++) {
    CbiCudaConcat *c;
    if (cbi_graph_tensor (plan->model, n->inputs[i])->data
        && cbi_cuda_constant (plan, n->inputs[i], error) == NULL)
      return FALSE;
    c = cbi_cuda_add_step (plan, n, cbi_cuda_run_concat,
        sizeof (CbiCudaConcat));
    c->io.x = plan->tensors[n->inputs[i]];
    c->io.y = plan->tensors[n->output];
    c->outer = outer;
    c->x_inner = plan->shapes[n->inputs[i]].dims[axis] * inner;
    c->y_inner = ys->dims[axis] * inner;
    c->offset = offset;
    offset += c->x_inner;
  }
  return TRUE;
}

typedef struct
{
  CbiCudaIO io;
  gint64 planes, height, width;
  gint64 pads[4];
  CbiKPadFill fill;
  gfloat value;
} CbiCudaPad;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_pad, CbiCudaPad, CUDA_CHECK, "pad kernel",
    cbi_k_pad (p->io.x, p->io.y, p->planes, p->height, p->width, p->pads[0],
        p->pads[1], p->pads[2], p->pads[3], p->fill, p->value, stream))
/* *INDENT-ON* */

void
cbi_cuda_add_pad (CbiCudaPlan * plan, const CbiNode * n, const gfloat * x,
    gfloat * y, gint64 planes, gint64 height, gint64 width,
    const gint64 * pads, CbiKPadFill fill, gfloat value)
{
  CbiCudaPad *p = cbi_cuda_add_step (plan, n, cbi_cuda_run_pad,
      sizeof (CbiCudaPad));

  p->io.x = x;
  p->io.y = y;
  p->planes = planes;
  p->height = height;
  p->width = width;
  memcpy (p->pads, pads, sizeof (p->pads));
  p->fill = fill;
  p->value = value;
}

gboolean
cbi_cuda_plan_pad (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];

  /* the graph's fills are the kernels' (cpu/loops.c asserts it) */
  cbi_cuda_add_pad (plan, n, plan->tensors[n->inputs[0]],
      plan->tensors[n->output], xs->dims[0] * xs->dims[1], xs->dims[2],
      xs->dims[3], n->conv.pads, (CbiKPadFill) n->mode, n->alpha);
  return TRUE;
}

typedef struct
{
  CbiCudaIO io;
  CbiCudaPlanes size;
  gfloat scale_h, scale_w;
  gboolean linear;
} CbiCudaResize;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_resize, CbiCudaResize, CUDA_CHECK,
    "resize kernel", cbi_k_resize (p->io.x, p->io.y, p->size.planes,
        p->size.height, p->size.width, p->size.out_h, p->size.out_w,
        p->scale_h, p->scale_w, p->linear, stream))
/* *INDENT-ON* */

gboolean
cbi_cuda_plan_resize (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiShape *ys = &plan->shapes[n->output];
  CbiCudaResize *r =
      CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_resize, CbiCudaResize);

  cbi_cuda_planes (&r->size, xs, ys);
  /* the sizes' ratio, as the CPU backend maps coordinates (shape
   * inference made sure it is the model's scale) */
  r->scale_h = (gfloat) ys->dims[2] / xs->dims[2];
  r->scale_w = (gfloat) ys->dims[3] / xs->dims[3];
  r->linear = n->mode == CBI_RESIZE_LINEAR;
  return TRUE;
}

/* Reshape: the same elements, copied */
typedef struct
{
  CbiCudaIO io;
  gint64 count;
} CbiCudaCopy;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_copy, CbiCudaCopy, CUDA_CHECK, "copy",
    cudaMemcpyAsync (p->io.y, p->io.x, p->count * sizeof (gfloat),
        cudaMemcpyDeviceToDevice, stream))
/* *INDENT-ON* */

gboolean
cbi_cuda_plan_reshape (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiCudaCopy *c =
      CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_copy, CbiCudaCopy);

  c->count = cbi_shape_count (&plan->shapes[n->inputs[0]]);
  return TRUE;
}

/* @long_index: the device copy of the view's long_index, or NULL */
typedef struct
{
  CbiCudaIO io;
  CbiCopyView view;
  const gint64 *long_index;
} CbiCudaStrided;

static gboolean
cbi_cuda_run_strided (CbiCuda * cuda, CbiCudaPlan * plan,
    gconstpointer params, cudaStream_t stream, GError ** error)
{
  const CbiCudaStrided *p = params;
  const CbiCopyView *v = &p->view;

  return CUDA_CHECK (p->long_index ? cbi_k_copy_long (p->io.x, p->io.y,
          v->n_dims, v->dims, v->strides, v->offset, v->axis, v->n_index,
          p->long_index, stream) : cbi_k_copy (p->io.x, p->io.y, v->n_dims,
          v->dims, v->strides, v->offset, v->axis, v->n_index, v->index,
          stream), "copy kernel");
}

/* the graph's limits are the kernel's */
G_STATIC_ASSERT (CBI_MAX_GATHER == CBI_K_MAX_GATHER);
G_STATIC_ASSERT (CBI_MAX_DIMS == CBI_K_MAX_DIMS);

/* Slice, Gather and Expand: one strided copy kernel. */
void
cbi_cuda_add_expand (CbiCudaPlan * plan, const CbiNode * n, const gfloat * x,
    const CbiShape * x_shape, gfloat * y, const CbiShape * y_shape)
{
  CbiCudaStrided *c = cbi_cuda_add_step (plan, n, cbi_cuda_run_strided,
      sizeof (CbiCudaStrided));

  c->io.x = x;
  c->io.y = y;
  cbi_copy_view_expand (x_shape, y_shape, &c->view);
}

gboolean
cbi_cuda_plan_copy (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const gint64 *long_index = NULL;
  CbiCudaStrided *c;

  /* the kernel takes up to CBI_K_MAX_GATHER indices as a parameter, more
   * from a device copy made here */
  if (n->view.long_index && (long_index = cbi_cuda_upload_bytes (plan,
              n->view.long_index, n->view.n_index * sizeof (gint64),
              "gather indices", error)) == NULL)
    return FALSE;
  c = CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_strided, CbiCudaStrided);
  c->view = n->view;
  c->long_index = long_index;
  return TRUE;
}

/* One part of Split: rows of the input, a 2-D copy */
typedef struct
{
  CbiCudaIO io;
  gint64 outer, total, inner;
} CbiCudaSplit;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_split, CbiCudaSplit, CUDA_CHECK,
    "split copy", cudaMemcpy2DAsync (p->io.y, p->inner * sizeof (gfloat),
        p->io.x, p->total * sizeof (gfloat), p->inner * sizeof (gfloat),
        p->outer, cudaMemcpyDeviceToDevice, stream))
/* *INDENT-ON* */

gboolean
cbi_cuda_plan_split (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiCudaSplit *s = cbi_cuda_add_step (plan, n, cbi_cuda_run_split,
      sizeof (CbiCudaSplit));
  gint64 start;

  cbi_node_split_range (n, &plan->shapes[n->inputs[0]], &s->outer, &s->total,
      &start, &s->inner);
  s->io.x = plan->tensors[n->inputs[0]] + start;
  s->io.y = plan->tensors[n->output];
  return TRUE;
}
