/* cudabatchinfer: the CUDA backend's plan, the pieces every planner builds
 * it with: steps, the model's constants on the device (shared by the
 * plans of every shape), cuDNN tensor descriptors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbicuda.h"

#include <string.h>

/* A model constant on the device, with the plans that use it. */
typedef struct
{
  gfloat *data;
  gsize bytes;
  guint plans;
} CbiCudaConstant;

const float cbi_cuda_one = 1.0f, cbi_cuda_zero = 0.0f;

gpointer
cbi_cuda_add_step (CbiCudaPlan * plan, const CbiNode * n, CbiCudaRunFunc run,
    gsize params_size)
{
  CbiCudaStep s = { n ? n->name : "output", run, g_malloc0 (params_size), };

  g_array_append_val (plan->steps, s);
  return s.params;
}

gpointer
cbi_cuda_add_io_step (CbiCudaPlan * plan, const CbiNode * n,
    CbiCudaRunFunc run, gsize params_size, gsize io_offset)
{
  guint8 *params = cbi_cuda_add_step (plan, n, run, params_size);
  CbiCudaIO *io = (CbiCudaIO *) (params + io_offset);

  io->x = plan->tensors[n->inputs[0]];
  io->y = plan->tensors[n->output];
  return params;
}

CbiCudaStep *
cbi_cuda_last_step (CbiCudaPlan * plan)
{
  return &g_array_index (plan->steps, CbiCudaStep, plan->steps->len - 1);
}

/* The device copy of constant @t. Plans of other shapes (a short batch
 * without padding, other caps) use the same one: uploaded by the first,
 * freed with the last. */
gfloat *
cbi_cuda_constant (CbiCudaPlan * plan, gint t, GError ** error)
{
  CbiCuda *cuda = plan->cuda;
  CbiPool *pool = plan->pool;
  const CbiTensorInfo *info = cbi_graph_tensor (plan->model, t);
  gsize bytes = cbi_shape_count (&plan->shapes[t]) * sizeof (gfloat);
  CbiCudaConstant *c;

  if (plan->tensors[t])
    return plan->tensors[t];
  c = g_hash_table_lookup (cuda->constants, info->data);
  /* a constant's shape is its own, whatever the plan's */
  if (c != NULL && c->bytes != bytes) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND,
        "constant %s has %" G_GSIZE_FORMAT " bytes on the device but its "
        "shape asks for %" G_GSIZE_FORMAT, info->name, c->bytes, bytes);
    return NULL;
  }
  if (c == NULL) {
    gfloat *data = cbi_pool_take (pool, bytes, info->name, error);
    if (data == NULL)
      return NULL;
    /* on the backend's stream, which does not wait for the legacy one;
     * the plan waits for it before it is used */
    if (!CUDA_CHECK (cudaMemcpyAsync (data, info->data, bytes,
                cudaMemcpyHostToDevice, cuda->stream), "weights upload")) {
      cbi_pool_release (pool, data);
      return NULL;
    }
    c = g_new0 (CbiCudaConstant, 1);
    c->data = data;
    c->bytes = bytes;
    g_hash_table_insert (cuda->constants, (gpointer) info->data, c);
  }
  c->plans++;
  g_ptr_array_add (plan->constants, (gpointer) info->data);
  plan->tensors[t] = c->data;
  return c->data;
}

void
cbi_cuda_drop_constants (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool)
{
  guint i;

  for (i = 0; i < plan->constants->len; i++) {
    gpointer key = g_ptr_array_index (plan->constants, i);
    CbiCudaConstant *c = g_hash_table_lookup (cuda->constants, key);
    if (--c->plans > 0)
      continue;
    cbi_pool_release (pool, c->data);
    g_hash_table_remove (cuda->constants, key);
  }
}

gfloat *
cbi_cuda_upload_made (CbiCudaPlan * plan, const gfloat * data, gsize count,
    const gchar * what, GError ** error)
{
  return cbi_cuda_upload_bytes (plan, data, count * sizeof (gfloat), what,
      error);
}

gpointer
cbi_cuda_upload_bytes (CbiCudaPlan * plan, gconstpointer data, gsize bytes,
    const gchar * what, GError ** error)
{
  gpointer d = cbi_mem_plan_alloc (plan->memory, bytes, what, error);

  /* a pageable source is staged before the call returns: @data may go */
  if (d && !CUDA_CHECK (cudaMemcpyAsync (d, data, bytes,
              cudaMemcpyHostToDevice, plan->cuda->stream), what))
    return NULL;
  return d;
}

gboolean
cbi_cuda_descs_init (CbiCudaDescs * d, const CbiNode * n, const CbiShape * x,
    const CbiShape * y, GError ** error)
{
  return cbi_cuda_descs_init_typed (d, n, x, y, CUDNN_TENSOR_NCHW,
      CUDNN_DATA_FLOAT, error);
}

gboolean
cbi_cuda_descs_init_typed (CbiCudaDescs * d, const CbiNode * n,
    const CbiShape * x, const CbiShape * y, cudnnTensorFormat_t format,
    cudnnDataType_t type, GError ** error)
{
  const CbiShape *shapes[2] = { x, y };
  cudnnTensorDescriptor_t *descs[2] = { &d->x, &d->y };
  const gint64 x_frame = cbi_shape_count (x) / MAX (x->dims[0], 1);
  const gint64 y_frame = cbi_shape_count (y) / MAX (y->dims[0], 1);
  const gint64 chunk = cbi_cuda_batch_chunk (x->dims[0], x_frame, y_frame);
  guint i;

  if (chunk == 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "node %s (%s): one "
        "frame's tensor has %" G_GINT64_FORMAT " elements, past the %"
        G_GINT64_FORMAT " cuDNN takes; use smaller frames or backend=cpu",
        n->name, cbi_op_type_name (n->op), MAX (x_frame, y_frame),
        CBI_CUDNN_MAX_ELEMENTS - 1);
    return FALSE;
  }
  d->calls = x->dims[0] / chunk;
  d->x_step = chunk * x_frame;
  d->y_step = chunk * y_frame;
  if (d->calls > 1)
    GST_DEBUG ("node %s: %" G_GINT64_FORMAT " cuDNN calls of %"
        G_GINT64_FORMAT " frames", n->name, d->calls, chunk);
  for (i = 0; i < 2; i++)
    if (!CUDNN_CHECK (cudnnCreateTensorDescriptor (descs[i]), "tensor desc")
        || !CUDNN_CHECK (cudnnSetTensor4dDescriptor (*descs[i],
                format, type, chunk,
                shapes[i]->dims[1], shapes[i]->dims[2], shapes[i]->dims[3]),
            "tensor desc"))
      return FALSE;
  return TRUE;
}

void
cbi_cuda_planes (CbiCudaPlanes * p, const CbiShape * x, const CbiShape * y)
{
  p->planes = x->dims[0] * x->dims[1];
  p->height = x->dims[2];
  p->width = x->dims[3];
  p->out_h = y->dims[2];
  p->out_w = y->dims[3];
}

void
cbi_cuda_descs_clear (gpointer descs)
{
  CbiCudaDescs *d = descs;

  g_clear_pointer (&d->x, cudnnDestroyTensorDescriptor);
  g_clear_pointer (&d->y, cudnnDestroyTensorDescriptor);
  g_clear_pointer (&d->w, cudnnDestroyFilterDescriptor);
  g_clear_pointer (&d->conv, cudnnDestroyConvolutionDescriptor);
  g_clear_pointer (&d->pool, cudnnDestroyPoolingDescriptor);
}
