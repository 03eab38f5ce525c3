/* cudabatchinfer: the CUDA backend, on cuDNN 9, cuBLAS and kernels/
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A plan holds every device tensor, the weights, the workspace and the
 * pinned staging buffers, all from the engine's pools, and a list of
 * steps that compute queues on one stream: nothing is allocated and
 * nothing waits while a batch is queued. Frames are copied once into
 * pinned staging (rows packed), go to the device in one copy, are packed
 * to NCHW there; results come back the same way.
 *
 * cuDNN runs convolutions (its FP32 FMA math, no TF32, so results stay
 * within float rounding of the CPU backend) and pooling; cuBLAS runs Gemm
 * and MatMul; the rest are the kernels of kernels/. CUDA binds a device
 * to a thread, so every entry point selects the backend's device first:
 * warm-up runs on the state-change thread, batches on the streaming one.
 */
#include "cbibackend.h"
#include "cbierror.h"
#include "cbiplanmemory.h"
#include "cbikernels.h"

#include <gst/gst.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cublas_v2.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (cbi_cuda_debug);
#define GST_CAT_DEFAULT cbi_cuda_debug

/* what NVIDIA advises for Hopper; without it cuBLAS allocates its own,
 * behind the pool's accounting, and not while a graph is recorded */
#define CBI_CUDA_CUBLAS_WORKSPACE (32 << 20)

typedef struct
{
  gint device;
  cudaStream_t stream;          /* planning: weights, algorithm search */
  cudaStream_t slot_streams[CBI_MAX_INFLIGHT];  /* one per batch in flight */
  cudaEvent_t computed;         /* the last batch's layers are done: the
                                 * next may overwrite the activations */
  cudnnHandle_t cudnn;
  cublasHandle_t cublas;
  GHashTable *constants;        /* host data -> CbiCudaConstant: the plans
                                 * of every shape share one device copy */
  CbiAllocator device_allocator;
  CbiAllocator pinned_allocator;
} CbiCuda;

typedef enum
{
  CBI_CUDA_STEP_CONV,
  CBI_CUDA_STEP_DECONV,
  CBI_CUDA_STEP_BIAS_ACT,
  CBI_CUDA_STEP_POOL,
  CBI_CUDA_STEP_POOL_KERNEL,
  CBI_CUDA_STEP_ELTWISE,
  CBI_CUDA_STEP_BINARY,
  CBI_CUDA_STEP_PERMUTE,
  CBI_CUDA_STEP_CONCAT,
  CBI_CUDA_STEP_PAD,
  CBI_CUDA_STEP_RESIZE,
  CBI_CUDA_STEP_SOFTMAX,
  CBI_CUDA_STEP_INSTANCE_NORM,
  CBI_CUDA_STEP_COPY,
  CBI_CUDA_STEP_GEMM,
} CbiCudaStepKind;

/* One queued operation; which fields count depends on @kind. */
typedef struct
{
  CbiCudaStepKind kind;
  const gchar *node;            /* for error messages */
  const gfloat *x, *w, *b;
  gfloat *y;
  /* cuDNN */
  cudnnTensorDescriptor_t x_desc, y_desc;
  cudnnFilterDescriptor_t w_desc;
  cudnnConvolutionDescriptor_t conv_desc;
  cudnnPoolingDescriptor_t pool_desc;
  cudnnConvolutionFwdAlgo_t fwd_algo;
  cudnnConvolutionBwdDataAlgo_t bwd_algo;
  /* kernels */
  CbiKEltwise post;
  gint binary;
  gfloat alpha, beta;
  gint rank;
  gint64 dims[CBI_K_MAX_DIMS];
  gint64 aux[CBI_K_MAX_DIMS];   /* strides of b, or a permutation */
  gint64 n[4];                  /* sizes: meaning per kind */
  gint pads[4];
  gint fill;
  CbiKPool window;              /* pooling cuDNN cannot describe */
  /* cuBLAS: column-major C[m, n] = A[m, k] B[k, n], batched */
  gint m, k, ldb;
  gboolean trans_b;
  gint64 batches, stride_a, stride_b, stride_y;
} CbiCudaStep;

/* A model constant on the device, with the plans that use it. */
typedef struct
{
  gfloat *data;
  gsize bytes;
  guint plans;
} CbiCudaConstant;

/* What one batch in flight has to itself: the layers' tensors are shared
 * and the batches take turns with them. */
typedef struct
{
  guint8 *frames_in;            /* device, packed frames */
  guint8 *frames_out;
  guint8 *staging_in;           /* pinned */
  guint8 *staging_out;
  gfloat *host_outputs[CBI_MAX_OUTPUTS];        /* pinned */
  gboolean queued;              /* work on its stream not waited for yet */
  gboolean unpacked;            /* output 0 went to the frames */
  gsize out_row;                /* bytes of an output frame row */
  guint out_height;
  guint out_frames;
} CbiCudaSlot;

typedef struct
{
  GArray *steps;                /* CbiCudaStep */
  CbiMemPlan *memory;           /* device pool blocks */
  CbiMemPlan *staging;          /* staging pool blocks */
  GPtrArray *constants;         /* keys of the shared constants it uses */
  gfloat **tensors;             /* device data per tensor */
  gfloat *input;
  gint64 input_count;
  gfloat *outputs[CBI_MAX_OUTPUTS];
  gsize output_bytes[CBI_MAX_OUTPUTS];
  CbiCudaSlot slots[CBI_MAX_INFLIGHT];
  guint n_slots;
  gsize frames_in_bytes, frames_out_bytes;
  gpointer workspace;
  gsize workspace_bytes;
  const CbiShape *shapes;       /* planning only */
  guint runs;
  gpointer cublas_workspace;    /* from the pool, so cuBLAS allocates none */
  cudaGraphExec_t graph;        /* the steps, recorded on the second run */
  gboolean graph_failed;
} CbiCudaPlan;

static gboolean
cbi_cuda_check (cudaError_t status, const gchar * what, GError ** error)
{
  if (status == cudaSuccess)
    return TRUE;
  GST_ERROR ("%s failed: %s", what, cudaGetErrorString (status));
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "CUDA: %s failed: %s",
      what, cudaGetErrorString (status));
  return FALSE;
}

static gboolean
cbi_cudnn_check (cudnnStatus_t status, const gchar * what, GError ** error)
{
  if (status == CUDNN_STATUS_SUCCESS)
    return TRUE;
  GST_ERROR ("%s failed: %s", what, cudnnGetErrorString (status));
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "cuDNN: %s failed: %s",
      what, cudnnGetErrorString (status));
  return FALSE;
}

static gboolean
cbi_cublas_check (cublasStatus_t status, const gchar * what, GError ** error)
{
  if (status == CUBLAS_STATUS_SUCCESS)
    return TRUE;
  GST_ERROR ("%s failed: cuBLAS status %d", what, status);
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "cuBLAS: %s failed "
      "(status %d)", what, status);
  return FALSE;
}

#define CUDA_CHECK(call, what) cbi_cuda_check ((call), (what), error)
#define CUDNN_CHECK(call, what) cbi_cudnn_check ((call), (what), error)
#define CUBLAS_CHECK(call, what) cbi_cublas_check ((call), (what), error)

static gboolean
cbi_cuda_select (CbiCuda * cuda, GError ** error)
{
  return CUDA_CHECK (cudaSetDevice (cuda->device), "cudaSetDevice");
}

/* Where the cuDNN and cuBLAS calls that follow queue their work. */
static gboolean
cbi_cuda_use_stream (CbiCuda * cuda, cudaStream_t stream, GError ** error)
{
  return CUDNN_CHECK (cudnnSetStream (cuda->cudnn, stream), "cudnnSetStream")
      && CUBLAS_CHECK (cublasSetStream (cuda->cublas, stream),
      "cublasSetStream");
}

/* Memory. */

static gpointer
cbi_cuda_device_alloc (gsize size, gpointer user_data)
{
  CbiCuda *cuda = user_data;
  gpointer p = NULL;

  if (cudaSetDevice (cuda->device) != cudaSuccess
      || cudaMalloc (&p, MAX (size, 1)) != cudaSuccess) {
    /* the pool reports the failure; clear CUDA's sticky last error */
    cudaGetLastError ();
    return NULL;
  }
  return p;
}

static void
cbi_cuda_device_free (gpointer block, gsize size, gpointer user_data)
{
  CbiCuda *cuda = user_data;

  cudaSetDevice (cuda->device);
  cudaFree (block);
}

static gpointer
cbi_cuda_pinned_alloc (gsize size, gpointer user_data)
{
  CbiCuda *cuda = user_data;
  gpointer p = NULL;

  if (cudaSetDevice (cuda->device) != cudaSuccess
      || cudaHostAlloc (&p, MAX (size, 1), cudaHostAllocDefault)
      != cudaSuccess) {
    cudaGetLastError ();
    return NULL;
  }
  return p;
}

static void
cbi_cuda_pinned_free (gpointer block, gsize size, gpointer user_data)
{
  cudaFreeHost (block);
}

static const CbiAllocator *
cbi_cuda_allocator (CbiBackend * backend)
{
  return &((CbiCuda *) backend->context)->device_allocator;
}

static const CbiAllocator *
cbi_cuda_staging_allocator (CbiBackend * backend)
{
  return &((CbiCuda *) backend->context)->pinned_allocator;
}

/* The device copy of constant @t. Plans of other shapes (a short batch
 * without padding, other caps) use the same one: uploaded by the first,
 * freed with the last. */
static gfloat *
cbi_cuda_constant (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, gint t, GError ** error)
{
  const CbiTensorInfo *info = cbi_graph_tensor (graph, t);
  gsize bytes = cbi_shape_count (&plan->shapes[t]) * sizeof (gfloat);
  CbiCudaConstant *c;

  if (plan->tensors[t])
    return plan->tensors[t];
  c = g_hash_table_lookup (cuda->constants, info->data);
  /* a constant's shape is its own, whatever the plan's */
  g_return_val_if_fail (c == NULL || c->bytes == bytes, NULL);
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

static void
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

/* Uploads @count floats made on the host (folded weights, a bias). */
static gfloat *
cbi_cuda_upload_made (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const gfloat * data, gsize count, const gchar * what, GError ** error)
{
  gfloat *d = cbi_mem_plan_alloc (plan->memory, count * sizeof (gfloat),
      what, error);

  /* a pageable source is staged before the call returns: @data may go */
  if (d && !CUDA_CHECK (cudaMemcpyAsync (d, data, count * sizeof (gfloat),
              cudaMemcpyHostToDevice, cuda->stream), what))
    return NULL;
  return d;
}

static void
cbi_cuda_step_clear (CbiCudaStep * s)
{
  if (s->x_desc)
    cudnnDestroyTensorDescriptor (s->x_desc);
  if (s->y_desc)
    cudnnDestroyTensorDescriptor (s->y_desc);
  if (s->w_desc)
    cudnnDestroyFilterDescriptor (s->w_desc);
  if (s->conv_desc)
    cudnnDestroyConvolutionDescriptor (s->conv_desc);
  if (s->pool_desc)
    cudnnDestroyPoolingDescriptor (s->pool_desc);
}

static void
cbi_cuda_free_plan (CbiBackend * backend, gpointer p, CbiPool * pool,
    CbiPool * staging)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  guint i;

  /* nothing queued may still use the blocks */
  cudaSetDevice (cuda->device);
  cudaStreamSynchronize (cuda->stream);
  for (i = 0; i < plan->n_slots; i++)
    cudaStreamSynchronize (cuda->slot_streams[i]);
  if (plan->graph)
    cudaGraphExecDestroy (plan->graph);
  for (i = 0; i < plan->steps->len; i++)
    cbi_cuda_step_clear (&g_array_index (plan->steps, CbiCudaStep, i));
  cbi_mem_plan_free (plan->memory);
  cbi_mem_plan_free (plan->staging);
  cbi_cuda_drop_constants (cuda, plan, pool);
  g_array_free (plan->steps, TRUE);
  g_ptr_array_free (plan->constants, TRUE);
  g_free (plan->tensors);
  g_free (plan);
}

/* Planning. */

static CbiCudaStep *
cbi_cuda_add_step (CbiCudaPlan * plan, CbiCudaStepKind kind, const CbiNode * n)
{
  CbiCudaStep s;

  memset (&s, 0, sizeof (s));
  s.kind = kind;
  s.node = n ? n->name : "output";
  s.post = CBI_K_IDENTITY;
  g_array_append_val (plan->steps, s);
  return &g_array_index (plan->steps, CbiCudaStep, plan->steps->len - 1);
}

static void
cbi_cuda_set_post (CbiCudaStep * s, const CbiNode * post)
{
  if (post) {
    s->post = cbi_op_info (post->op)->eltwise;
    s->alpha = post->alpha;
    s->beta = post->beta;
  }
}

static gboolean
cbi_cuda_tensor_desc (cudnnTensorDescriptor_t * desc, const CbiShape * s,
    GError ** error)
{
  return CUDNN_CHECK (cudnnCreateTensorDescriptor (desc), "tensor desc")
      && CUDNN_CHECK (cudnnSetTensor4dDescriptor (*desc, CUDNN_TENSOR_NCHW,
          CUDNN_DATA_FLOAT, s->dims[0], s->dims[1], s->dims[2], s->dims[3]),
      "tensor desc");
}

/* Conv and ConvTranspose through cuDNN, bias and a fused activation in one
 * kernel after it. ConvTranspose is the data gradient of the convolution
 * that maps its output back to its input. */
static gboolean
cbi_cuda_plan_conv (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    gboolean exhaustive, GError ** error)
{
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  gboolean transpose = n->op == CBI_OP_CONV_TRANSPOSE;
  gint out = post ? post->output : n->output;
  const CbiShape *xs = &plan->shapes[n->inputs[0]], *ys = &plan->shapes[out];
  const CbiConvAttrs *a = &n->conv;
  const gfloat *x = plan->tensors[n->inputs[0]];
  gint64 ph = MIN (a->pads[0], a->pads[2]), pw = MIN (a->pads[1], a->pads[3]);
  CbiShape padded = *xs, full = *ys;
  gint64 crop[4] = { 0, 0, 0, 0 };
  gfloat *y = NULL;
  CbiCudaStep *s;
  gsize ws = 0;
  gint found = 0, best = 0;

  if (transpose) {
    /* cuDNN crops both sides of the full result alike: it makes the
     * result for the smaller crop, a copy cuts the rest from one side.
     * The end's crop is its pad less the output padding (the import
     * refuses an output padding above the pad). */
    const gint64 end_h = a->pads[2] - a->output_padding[0];
    const gint64 end_w = a->pads[3] - a->output_padding[1];
    ph = MIN (a->pads[0], end_h);
    pw = MIN (a->pads[1], end_w);
    crop[0] = a->pads[0] - ph;
    crop[1] = a->pads[1] - pw;
    crop[2] = end_h - ph;
    crop[3] = end_w - pw;
    full.dims[2] += crop[0] + crop[2];
    full.dims[3] += crop[1] + crop[3];
  } else if (a->pads[0] != a->pads[2] || a->pads[1] != a->pads[3]) {
    /* cuDNN pads both sides alike: the extra rows and columns of one side
     * come from a zero-padded copy of the input first (the sub-pixel form
     * of a ConvTranspose pads its bottom and right only) */
    gfloat *block;
    padded.dims[2] += a->pads[0] + a->pads[2] - 2 * ph;
    padded.dims[3] += a->pads[1] + a->pads[3] - 2 * pw;
    block = cbi_mem_plan_alloc (plan->memory, cbi_shape_count (&padded) *
        sizeof (gfloat), n->name, error);
    if (block == NULL)
      return FALSE;
    s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_PAD, n);
    s->x = x;
    s->y = block;
    s->n[0] = xs->dims[0] * xs->dims[1];
    s->n[1] = xs->dims[2];
    s->n[2] = xs->dims[3];
    s->pads[0] = a->pads[0] - ph;
    s->pads[1] = a->pads[1] - pw;
    s->pads[2] = a->pads[2] - ph;
    s->pads[3] = a->pads[3] - pw;
    s->fill = CBI_K_PAD_CONSTANT;
    s->alpha = 0.0f;
    x = block;
    xs = &padded;
  }
  y = plan->tensors[out];
  if (crop[0] + crop[1] + crop[2] + crop[3] > 0
      && (y =
          cbi_mem_plan_alloc (plan->memory,
              cbi_shape_count (&full) * sizeof (gfloat), n->name,
              error)) == NULL)
    return FALSE;
  s = cbi_cuda_add_step (plan, transpose ? CBI_CUDA_STEP_DECONV :
      CBI_CUDA_STEP_CONV, n);
  s->x = x;
  s->y = y;
  if ((s->w = cbi_cuda_constant (cuda, plan, pool, graph, n->inputs[1],
              error)) == NULL)
    return FALSE;
  /* transposed weights are (in, out / group, h, w): the filter of the
   * forward convolution from the output's channels to the input's */
  if (!cbi_cuda_tensor_desc (&s->x_desc, xs, error)
      || !cbi_cuda_tensor_desc (&s->y_desc, &full, error)
      || !CUDNN_CHECK (cudnnCreateFilterDescriptor (&s->w_desc), "filter")
      || !CUDNN_CHECK (cudnnSetFilter4dDescriptor (s->w_desc,
              CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, w->dims[0], w->dims[1],
              w->dims[2], w->dims[3]), "filter desc")
      || !CUDNN_CHECK (cudnnCreateConvolutionDescriptor (&s->conv_desc),
          "convolution desc")
      || !CUDNN_CHECK (cudnnSetConvolution2dDescriptor (s->conv_desc,
              ph, pw, a->strides[0], a->strides[1],
              a->dilations[0], a->dilations[1], CUDNN_CROSS_CORRELATION,
              CUDNN_DATA_FLOAT), "convolution desc")
      || !CUDNN_CHECK (cudnnSetConvolutionGroupCount (s->conv_desc,
              a->group), "group count")
      /* no TF32: the results stay within float rounding of the CPU's */
      || !CUDNN_CHECK (cudnnSetConvolutionMathType (s->conv_desc,
              CUDNN_FMA_MATH), "math type"))
    return FALSE;

  if (!transpose) {
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    gboolean ok = exhaustive ?
        CUDNN_CHECK (cudnnFindConvolutionForwardAlgorithmEx (cuda->cudnn,
            s->x_desc, s->x, s->w_desc, s->w, s->conv_desc, s->y_desc, s->y,
            G_N_ELEMENTS (perf), &found, perf, plan->workspace,
            plan->workspace_bytes), "convolution algorithm search") :
        CUDNN_CHECK (cudnnGetConvolutionForwardAlgorithm_v7 (cuda->cudnn,
            s->x_desc, s->w_desc, s->conv_desc, s->y_desc,
            G_N_ELEMENTS (perf), &found, perf), "convolution heuristics");
    /* the fastest (or best ranked) one that can run */
    while (ok && best < found && perf[best].status != CUDNN_STATUS_SUCCESS)
      best++;
    if (!ok || best >= found) {
      if (ok)
        g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "cuDNN: no "
            "convolution algorithm for node %s", n->name);
      return FALSE;
    }
    s->fwd_algo = perf[best].algo;
    ws = perf[best].memory;
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[8];
    gboolean ok = exhaustive ?
        CUDNN_CHECK (cudnnFindConvolutionBackwardDataAlgorithmEx
        (cuda->cudnn, s->w_desc, s->w, s->x_desc, s->x, s->conv_desc,
            s->y_desc, s->y, G_N_ELEMENTS (perf), &found, perf,
            plan->workspace, plan->workspace_bytes),
        "transposed convolution algorithm search") :
        CUDNN_CHECK (cudnnGetConvolutionBackwardDataAlgorithm_v7 (cuda->cudnn,
            s->w_desc, s->x_desc, s->conv_desc, s->y_desc,
            G_N_ELEMENTS (perf), &found, perf),
        "transposed convolution heuristics");
    while (ok && best < found && perf[best].status != CUDNN_STATUS_SUCCESS)
      best++;
    if (!ok || best >= found) {
      if (ok)
        g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "cuDNN: no "
            "transposed convolution algorithm for node %s", n->name);
      return FALSE;
    }
    s->bwd_algo = perf[best].algo;
    ws = perf[best].memory;
  }
  plan->workspace_bytes = MAX (plan->workspace_bytes, ws);

  if (y != plan->tensors[out]) {
    /* the crop: a pad by minus the extra rows and columns */
    CbiCudaStep *c = cbi_cuda_add_step (plan, CBI_CUDA_STEP_PAD, n);
    c->x = y;
    c->y = plan->tensors[out];
    c->n[0] = full.dims[0] * full.dims[1];
    c->n[1] = full.dims[2];
    c->n[2] = full.dims[3];
    c->pads[0] = -crop[0];
    c->pads[1] = -crop[1];
    c->pads[2] = -crop[2];
    c->pads[3] = -crop[3];
    c->fill = CBI_K_PAD_CONSTANT;
    c->alpha = 0.0f;
  }
  if ((n->n_inputs > 2 && n->inputs[2] >= 0) || post) {
    CbiCudaStep *e = cbi_cuda_add_step (plan, CBI_CUDA_STEP_BIAS_ACT, n);
    e->y = plan->tensors[out];
    e->b = n->n_inputs > 2 && n->inputs[2] >= 0 ?
        cbi_cuda_constant (cuda, plan, pool, graph, n->inputs[2], error) : NULL;
    if (n->n_inputs > 2 && n->inputs[2] >= 0 && e->b == NULL)
      return FALSE;
    e->n[0] = ys->dims[0];
    e->n[1] = ys->dims[1];
    e->n[2] = ys->dims[2] * ys->dims[3];
    cbi_cuda_set_post (e, post);
  }
  return TRUE;
}

/* MaxPool, AveragePool and GlobalAveragePool through cuDNN, or our kernel
 * for windows cuDNN cannot describe. */
static gboolean
cbi_cuda_plan_pool (CbiCudaPlan * plan, CbiPool * pool, const CbiNode * n,
    GError ** error)
{
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiConvAttrs *a = &n->conv;
  gboolean global = n->op == CBI_OP_GLOBAL_AVERAGE_POOL;
  cudnnPoolingMode_t mode = n->op == CBI_OP_MAX_POOL ? CUDNN_POOLING_MAX :
      a->count_include_pad && !global ?
      CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING :
      CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  CbiCudaStep *s;

  if (!global &&(a->pads[0] != a->pads[2] || a->pads[1] != a->pads[3]
          || a->dilations[0] != 1 || a->dilations[1] != 1)) {
    /* cuDNN pads both sides alike and has no dilation: our kernel */
    const CbiShape * ys = &plan->shapes[n->output];
    gint d;
    s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_POOL_KERNEL, n);
    s->x = plan->tensors[n->inputs[0]];
    s->y = plan->tensors[n->output];
    s->n[0] = xs->dims[0] * xs->dims[1];
    s->n[1] = xs->dims[2];
    s->n[2] = xs->dims[3];
    s->dims[0] = ys->dims[2];
    s->dims[1] = ys->dims[3];
    for (d = 0; d < 2; d++) {
      s->window.kernel[d] = a->kernel[d];
      s->window.stride[d] = a->strides[d];
      s->window.dilation[d] = a->dilations[d];
      s->window.pad[d] = a->pads[d];
    }
    s->window.max = n->op == CBI_OP_MAX_POOL;
    s->window.count_pad = a->count_include_pad;
    return TRUE;
  }
  s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_POOL, n);
  s->x = plan->tensors[n->inputs[0]];
  s->y = plan->tensors[n->output];
  return cbi_cuda_tensor_desc (&s->x_desc, xs, error)
      && cbi_cuda_tensor_desc (&s->y_desc, &plan->shapes[n->output], error)
      && CUDNN_CHECK (cudnnCreatePoolingDescriptor (&s->pool_desc), "pooling")
      && CUDNN_CHECK (cudnnSetPooling2dDescriptor (s->pool_desc, mode,
          CUDNN_NOT_PROPAGATE_NAN, global ? xs->dims[2] : a->kernel[0],
          global ? xs->dims[3] : a->kernel[1], global ? 0 : a->pads[0],
          global ? 0 : a->pads[1], global ? 1 : a->strides[0],
          global ? 1 : a->strides[1]), "pooling desc");
}

/* The strides, in elements, at which the row-major @b (aligned to the
 * right) is read for each index of @a: 0 along a broadcast dimension. */
static void
cbi_cuda_broadcast_strides (const CbiShape * a, const CbiShape * b,
    gint64 * strides)
{
  gint64 stride = 1;
  gint d;

  for (d = a->n_dims - 1; d >= 0; d--) {
    gint bd = d - (a->n_dims - b->n_dims);
    gint64 size = bd >= 0 ? b->dims[bd] : 1;
    strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
}

static gboolean
cbi_cuda_plan_binary (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  gint out = post ? post->output : n->output, b = n->inputs[1];
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  CbiCudaStep *s;

  if (cbi_graph_tensor (graph, b)->data
      && cbi_cuda_constant (cuda, plan, pool, graph, b, error) == NULL)
    return FALSE;
  s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_BINARY, n);
  s->x = plan->tensors[n->inputs[0]];
  s->b = plan->tensors[b];
  s->y = plan->tensors[out];
  s->binary = cbi_op_info (n->op)->binary;
  s->rank = as->n_dims;
  memcpy (s->dims, as->dims, as->n_dims * sizeof (gint64));
  cbi_cuda_broadcast_strides (as, &plan->shapes[b], s->aux);
  cbi_cuda_set_post (s, post);
  return TRUE;
}

/* Transpose and DepthToSpace: one permutation of a row-major view. */
static gboolean
cbi_cuda_plan_permute (CbiCudaPlan * plan, CbiPool * pool, const CbiNode * n,
    GError ** error)
{
  CbiCudaStep *s;
  CbiShape view;

  s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_PERMUTE, n);
  s->x = plan->tensors[n->inputs[0]];
  s->y = plan->tensors[n->output];
  cbi_node_permutation (n, &plan->shapes[n->inputs[0]], &view, s->aux);
  s->rank = view.n_dims;
  memcpy (s->dims, view.dims, view.n_dims * sizeof (gint64));
  return TRUE;
}

/* A MatMul whose batch dimensions broadcast otherwise than "all" or "one
 * side": one GEMM per output matrix, each on its own A and B (replayed in
 * one CUDA graph all the same). Replaces the last step, set up for the
 * first matrix. */
static void
cbi_cuda_broadcast_matmul (CbiCudaPlan * plan, const CbiShape * as,
    const CbiShape * bs, const CbiShape * ys, gint64 rows, gint64 k,
    gint64 cols)
{
  CbiCudaStep one = g_array_index (plan->steps, CbiCudaStep,
      plan->steps->len - 1);
  const gfloat *x = one.x, *w = one.w;
  gfloat *y = one.y;
  const gint nb = ys->n_dims - 2;
  gint64 batches = 1, i;
  gint d;

  for (d = 0; d < nb; d++)
    batches *= ys->dims[d];
  g_array_set_size (plan->steps, plan->steps->len - 1);
  one.batches = 1;
  one.stride_a = one.stride_b = one.stride_y = 0;
  for (i = 0; i < batches; i++) {
    gint64 rest = i, a = 0, b = 0, a_stride = 1, b_stride = 1;
    /* numpy broadcasting: batch dimensions aligned on the right, a
     * dimension of 1 repeated */
    for (d = nb - 1; d >= 0; d--) {
      const gint64 at = rest % ys->dims[d];
      const gint ad = d - nb + (as->n_dims - 2);
      const gint bd = d - nb + (bs->n_dims - 2);
      rest /= ys->dims[d];
      if (ad >= 0) {
        a += as->dims[ad] == 1 ? 0 : at * a_stride;
        a_stride *= as->dims[ad];
      }
      if (bd >= 0) {
        b += bs->dims[bd] == 1 ? 0 : at * b_stride;
        b_stride *= bs->dims[bd];
      }
    }
    one.x = x + a * rows * k;
    one.w = w + b * k * cols;
    one.y = y + i * rows * cols;
    g_array_append_val (plan->steps, one);
  }
}

/* Gemm and MatMul on cuBLAS. Row-major Y[M, N] = A[M, K] B[K, N] is the
 * column-major Y^T = B^T A^T: cuBLAS's A is our B. Gemm's alpha folds
 * into a copy of B, beta C into a bias that a copy puts in Y first. */
static gboolean
cbi_cuda_plan_matrix (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  gint out = post ? post->output : n->output;
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]], *ys = &plan->shapes[out];
  const CbiTensorInfo *bt = cbi_graph_tensor (graph, n->inputs[1]);
  const gint64 rows = ys->dims[ys->n_dims - 2];
  const gint64 cols = ys->dims[ys->n_dims - 1];
  const gint64 k = bs->dims[bs->n_dims - (n->op == CBI_OP_GEMM
          && n->ints[1] ? 1 : 2)];
  gint64 batches = 1, a_batches = 1, b_batches = 1;
  CbiCudaStep *s;
  gint d;

  for (d = 0; d < ys->n_dims - 2; d++)
    batches *= ys->dims[d];
  for (d = 0; d < as->n_dims - 2; d++)
    a_batches *= as->dims[d];
  for (d = 0; d < bs->n_dims - 2; d++)
    b_batches *= bs->dims[d];
  s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_GEMM, n);
  s->x = plan->tensors[n->inputs[0]];
  s->y = plan->tensors[out];
  s->m = cols;
  s->k = k;
  s->n[0] = rows;
  s->alpha = 1.0f;
  s->beta = 0.0f;

  if (n->op == CBI_OP_GEMM) {
    gfloat *wb = g_new (gfloat, k * cols);
    cbi_gemm_weights (graph, n, k, cols, wb);
    s->w = cbi_cuda_upload_made (cuda, plan, pool, wb, k * cols,
        "gemm weights", error);
    g_free (wb);
    if (s->w == NULL)
      return FALSE;
    if (cbi_gemm_has_bias (n)) {
      gfloat *bias = g_new (gfloat, rows * cols);
      cbi_gemm_bias (graph, n, plan->shapes, rows, cols, bias);
      s->b = cbi_cuda_upload_made (cuda, plan, pool, bias, rows * cols,
          "gemm bias", error);
      g_free (bias);
      if (s->b == NULL)
        return FALSE;
      s->beta = 1.0f;
    }
    /* a transposed A, stored K x M, is M x K to cuBLAS: its transpose is
     * the K x M operand */
    s->trans_b = n->ints[0] != 0;
    s->ldb = s->trans_b ? rows : k;
    s->batches = 1;
  } else {
    /* one GEMM over every row when B is shared, else one per batch */
    if (bt->data && (s->w = cbi_cuda_constant (cuda, plan, pool, graph,
                n->inputs[1], error)) == NULL)
      return FALSE;
    if (!bt->data)
      s->w = plan->tensors[n->inputs[1]];
    s->ldb = k;
    if (b_batches == 1) {
      s->n[0] = rows * a_batches;
      s->batches = 1;
    } else if (a_batches == batches && b_batches == batches) {
      s->batches = batches;
      s->stride_a = rows * k;
      s->stride_b = k * cols;
      s->stride_y = rows * cols;
    } else if (a_batches == 1 && b_batches == batches) {
      s->batches = batches;
      s->stride_b = k * cols;
      s->stride_y = rows * cols;
    } else {
      cbi_cuda_broadcast_matmul (plan, as, bs, ys, rows, k, cols);
    }
  }
  if (post) {
    CbiCudaStep *e = cbi_cuda_add_step (plan, CBI_CUDA_STEP_ELTWISE, post);
    e->x = e->y = plan->tensors[out];
    e->n[0] = cbi_shape_count (ys);
    cbi_cuda_set_post (e, post);
  }
  return TRUE;
}

/* The ops that are one kernel each, and Reshape, a copy. A fused
 * activation (InstanceNormalization's Relu) runs in place after it. */
static gboolean
cbi_cuda_plan_kernel (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  const gint out = post ? post->output : n->output;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiShape *ys = &plan->shapes[out];
  CbiCudaStep *s;
  gint d;

  switch (n->op) {
    case CBI_OP_RESHAPE:
      s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_COPY, n);
      s->n[0] = cbi_shape_count (xs);
      break;
    case CBI_OP_PAD:
      s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_PAD, n);
      s->n[0] = xs->dims[0] * xs->dims[1];
      s->n[1] = xs->dims[2];
      s->n[2] = xs->dims[3];
      for (d = 0; d < 4; d++)
        s->pads[d] = n->conv.pads[d];
      s->fill = n->mode == CBI_PAD_FILL_REFLECT ? CBI_K_PAD_REFLECT :
          n->mode == CBI_PAD_FILL_EDGE ? CBI_K_PAD_EDGE : CBI_K_PAD_CONSTANT;
      s->alpha = n->alpha;
      break;
    case CBI_OP_RESIZE:
      s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_RESIZE, n);
      s->n[0] = xs->dims[0] * xs->dims[1];
      s->dims[0] = xs->dims[2];
      s->dims[1] = xs->dims[3];
      s->dims[2] = ys->dims[2];
      s->dims[3] = ys->dims[3];
      /* the sizes' ratio, as the CPU backend maps coordinates (shape
       * inference made sure it is the model's scale) */
      s->alpha = (gfloat) ys->dims[2] / xs->dims[2];
      s->beta = (gfloat) ys->dims[3] / xs->dims[3];
      s->fill = n->mode == CBI_RESIZE_LINEAR;
      break;
    case CBI_OP_SOFTMAX:{
      gint axis = n->axis < 0 ? n->axis + xs->n_dims : n->axis;
      s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_SOFTMAX, n);
      s->n[0] = s->n[1] = s->n[2] = 1;
      for (d = 0; d < xs->n_dims; d++)
        s->n[d < axis ? 0 : n->mode == 1 || d == axis ? 1 : 2] *= xs->dims[d];
      break;
    }
    case CBI_OP_INSTANCE_NORM:
      s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_INSTANCE_NORM, n);
      s->n[0] = xs->dims[0];
      s->n[1] = xs->dims[1];
      s->n[2] = xs->dims[2] * xs->dims[3];
      s->alpha = n->alpha;
      if ((s->w = cbi_cuda_constant (cuda, plan, pool, graph, n->inputs[1],
                  error)) == NULL
          || (s->b = cbi_cuda_constant (cuda, plan, pool, graph,
                  n->inputs[2], error)) == NULL)
        return FALSE;
      break;
    default:
      s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_ELTWISE, n);
      s->n[0] = cbi_shape_count (xs);
      cbi_cuda_set_post (s, n);
      break;
  }
  s->x = plan->tensors[n->inputs[0]];
  s->y = plan->tensors[out];
  if (post) {
    CbiCudaStep *e = cbi_cuda_add_step (plan, CBI_CUDA_STEP_ELTWISE, post);
    e->x = e->y = plan->tensors[out];
    e->n[0] = cbi_shape_count (ys);
    cbi_cuda_set_post (e, post);
  }
  return TRUE;
}

static gboolean
cbi_cuda_plan_concat (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, GError ** error)
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
    CbiCudaStep *s = cbi_cuda_add_step (plan, CBI_CUDA_STEP_CONCAT, n);
    gint64 x_inner = plan->shapes[n->inputs[i]].dims[axis] * inner;
    if (cbi_graph_tensor (graph, n->inputs[i])->data
        && cbi_cuda_constant (cuda, plan, pool, graph, n->inputs[i],
            error) == NULL)
      return FALSE;
    s->x = plan->tensors[n->inputs[i]];
    s->y = plan->tensors[n->output];
    s->n[0] = outer;
    s->n[1] = x_inner;
    s->n[2] = ys->dims[axis] * inner;
    s->n[3] = offset;
    offset += x_inner;
  }
  return TRUE;
}

static gboolean
cbi_cuda_plan_node (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    gboolean exhaustive, GError ** error)
{
  switch (n->op) {
    case CBI_OP_CONV:
    case CBI_OP_CONV_TRANSPOSE:
      return cbi_cuda_plan_conv (cuda, plan, pool, graph, n, post,
          exhaustive, error);
    case CBI_OP_ADD:
    case CBI_OP_SUB:
    case CBI_OP_MUL:
    case CBI_OP_DIV:
    case CBI_OP_PRELU:
      return cbi_cuda_plan_binary (cuda, plan, pool, graph, n, post, error);
    case CBI_OP_MAX_POOL:
    case CBI_OP_AVERAGE_POOL:
    case CBI_OP_GLOBAL_AVERAGE_POOL:
      return cbi_cuda_plan_pool (plan, pool, n, error);
    case CBI_OP_CONCAT:
      return cbi_cuda_plan_concat (cuda, plan, pool, graph, n, error);
    case CBI_OP_TRANSPOSE:
    case CBI_OP_DEPTH_TO_SPACE:
      return cbi_cuda_plan_permute (plan, pool, n, error);
    case CBI_OP_GEMM:
    case CBI_OP_MATMUL:
      return cbi_cuda_plan_matrix (cuda, plan, pool, graph, n, post, error);
    default:
      return cbi_cuda_plan_kernel (cuda, plan, pool, graph, n, post, error);
  }
}

/* The staging and device buffers of frames in and out, and of every
 * output read on the host, for each batch in flight. */
static gboolean
cbi_cuda_plan_slot (CbiCudaPlan * plan, CbiCudaSlot * slot, CbiPool * pool,
    CbiPool * staging, const CbiGraph * graph, GError ** error)
{
  guint i;

  if (plan->frames_in_bytes
      && ((slot->frames_in =
              cbi_mem_plan_alloc (plan->memory, plan->frames_in_bytes,
                  "input frames", error)) == NULL
          || (slot->staging_in =
              cbi_mem_plan_alloc (plan->staging, plan->frames_in_bytes,
                  "input frames", error)) == NULL))
    return FALSE;
  if (plan->frames_out_bytes
      && ((slot->frames_out =
              cbi_mem_plan_alloc (plan->memory, plan->frames_out_bytes,
                  "output frames", error)) == NULL
          || (slot->staging_out =
              cbi_mem_plan_alloc (plan->staging, plan->frames_out_bytes,
                  "output frames", error)) == NULL))
    return FALSE;
  for (i = 0; i < graph->n_outputs; i++)
    if ((slot->host_outputs[i] =
            cbi_mem_plan_alloc (plan->staging, plan->output_bytes[i], "outputs",
                error)) == NULL)
      return FALSE;
  return TRUE;
}

static gboolean
cbi_cuda_plan_io (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    CbiPool * staging, const CbiGraph * graph, guint n_slots, GError ** error)
{
  const CbiShape *in = &plan->shapes[graph->input];
  const CbiShape *o = &plan->shapes[graph->outputs[0]];
  guint i;

  /* 4 bytes a pixel covers every packed format */
  if (in->n_dims == 4)
    plan->frames_in_bytes = (gsize) in->dims[0] * in->dims[2] * in->dims[3]
        * 4;
  if (o->n_dims == 4 && o->dims[1] <= 4)
    plan->frames_out_bytes = (gsize) o->dims[0] * o->dims[2] * o->dims[3]
        * 4;
  for (i = 0; i < graph->n_outputs; i++) {
    plan->outputs[i] = plan->tensors[graph->outputs[i]];
    plan->output_bytes[i] =
        cbi_shape_count (&plan->shapes[graph->outputs[i]]) * sizeof (gfloat);
  }
  plan->n_slots = MAX (n_slots, 1);
  for (i = 0; i < plan->n_slots; i++) {
    if (cuda->slot_streams[i] == NULL
        && !CUDA_CHECK (cudaStreamCreateWithFlags (&cuda->slot_streams[i],
                cudaStreamNonBlocking), "cudaStreamCreate"))
      return FALSE;
    if (!cbi_cuda_plan_slot (plan, &plan->slots[i], pool, staging, graph,
            error))
      return FALSE;
  }
  return TRUE;
}

/* An exhaustive search runs the candidate algorithms: it needs the
 * tensors' memory and a workspace, here the largest one a heuristic
 * pass asked for, at least 64 MiB. */
static gboolean
cbi_cuda_plan_nodes (CbiCuda * cuda, CbiCudaPlan * plan, CbiPool * pool,
    const CbiGraph * graph, gboolean exhaustive, GError ** error)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    const CbiNode *fused = cbi_graph_fused_activation (graph, i);
    if (fused)
      i++;
    if (!cbi_cuda_plan_node (cuda, plan, pool, graph, n, fused, exhaustive,
            error))
      return FALSE;
  }
  return TRUE;
}

static CbiCudaPlan *
cbi_cuda_plan_new (const CbiGraph * graph, const CbiShape * shapes,
    CbiPool * pool, CbiPool * staging)
{
  CbiCudaPlan *plan = g_new0 (CbiCudaPlan, 1);

  plan->steps = g_array_new (FALSE, FALSE, sizeof (CbiCudaStep));
  plan->memory = cbi_mem_plan_new (graph, pool);
  plan->staging = cbi_mem_plan_new (NULL, staging);
  plan->constants = g_ptr_array_new ();
  plan->tensors = g_new0 (gfloat *, graph->tensors->len);
  plan->shapes = shapes;
  return plan;
}

static gpointer
cbi_cuda_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    guint64 * workspace, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan;
  guint i;

  if (!cbi_cuda_select (cuda, error)
      || !cbi_cuda_use_stream (cuda, cuda->stream, error))
    return NULL;
  /* every activation where the engine's memory plan puts it */
  plan = cbi_cuda_plan_new (graph, shapes, pool, staging);
  if (!cbi_mem_plan_place_dense (plan->memory, shapes,
          (gpointer *) plan->tensors, error))
    goto failed;
  plan->input = plan->tensors[graph->input];
  plan->input_count = cbi_shape_count (&shapes[graph->input]);

  if (backend->exhaustive_search) {
    /* a first, heuristic pass sizes the search's workspace */
    CbiCudaPlan *probe = cbi_cuda_plan_new (graph, shapes, pool, staging);
    gboolean ok;
    ok = cbi_mem_plan_place_dense (probe->memory, shapes,
        (gpointer *) probe->tensors, error)
        && cbi_cuda_plan_nodes (cuda, probe, pool, graph, FALSE, error);
    /* under a memory limit, no more than the heuristics asked for */
    plan->workspace_bytes = cbi_pool_get_limit (pool) ?
        probe->workspace_bytes : MAX (probe->workspace_bytes, 64 << 20);
    /* the weights it uploaded stay, for the plan */
    g_ptr_array_extend_and_steal (plan->constants, probe->constants);
    probe->constants = g_ptr_array_new ();
    cbi_cuda_free_plan (backend, probe, pool, staging);
    if (!ok)
      goto failed;
    if ((plan->workspace =
            cbi_mem_plan_alloc (plan->memory, plan->workspace_bytes,
                "the algorithm search", error)) == NULL)
      goto failed;
  }
  if (!cbi_cuda_plan_nodes (cuda, plan, pool, graph,
          backend->exhaustive_search, error)
      || !cbi_cuda_plan_io (cuda, plan, pool, staging, graph,
          backend->inflight, error))
    goto failed;

  /* the search's workspace goes back; the chosen algorithms' comes, sized
   * by cuDNN for each (the search's and heuristics' figures are hints) */
  if (plan->workspace) {
    cbi_mem_plan_give_back (plan->memory, plan->workspace);
    plan->workspace = NULL;
  }
  plan->workspace_bytes = 0;
  {
    for (i = 0; i < plan->steps->len; i++) {
      CbiCudaStep *s = &g_array_index (plan->steps, CbiCudaStep, i);
      gsize ws = 0;
      if (s->kind == CBI_CUDA_STEP_CONV
          && !CUDNN_CHECK (cudnnGetConvolutionForwardWorkspaceSize
              (cuda->cudnn, s->x_desc, s->w_desc, s->conv_desc, s->y_desc,
                  s->fwd_algo, &ws), "workspace size"))
        goto failed;
      if (s->kind == CBI_CUDA_STEP_DECONV
          && !CUDNN_CHECK (cudnnGetConvolutionBackwardDataWorkspaceSize
              (cuda->cudnn, s->w_desc, s->x_desc, s->conv_desc, s->y_desc,
                  s->bwd_algo, &ws), "workspace size"))
        goto failed;
      plan->workspace_bytes = MAX (plan->workspace_bytes, ws);
    }
  }
  if (plan->workspace_bytes > 0
      && (plan->workspace =
          cbi_mem_plan_alloc (plan->memory, plan->workspace_bytes, "workspace",
              error)) == NULL)
    goto failed;
  for (i = 0; i < plan->steps->len && !plan->cublas_workspace; i++)
    if (g_array_index (plan->steps, CbiCudaStep, i).kind == CBI_CUDA_STEP_GEMM
        && (plan->cublas_workspace =
            cbi_mem_plan_alloc (plan->memory, CBI_CUDA_CUBLAS_WORKSPACE,
                "cuBLAS", error)) == NULL)
      goto failed;
  /* the weights went up on the stream: they are there before the plan is */
  if (!CUDA_CHECK (cudaStreamSynchronize (cuda->stream), "weights upload"))
    goto failed;
  *workspace = plan->workspace_bytes;
  plan->shapes = NULL;
  cbi_mem_plan_done (plan->memory);
  GST_DEBUG ("planned %u steps, workspace %" G_GSIZE_FORMAT " bytes",
      plan->steps->len, plan->workspace_bytes);
  return plan;

failed:
  cbi_cuda_free_plan (backend, plan, pool, staging);
  return NULL;
}

/* Running. */

static gboolean
cbi_cuda_run_step (CbiCuda * cuda, CbiCudaPlan * plan, const CbiCudaStep * s,
    cudaStream_t st, GError ** error)
{
  const float one = 1.0f, zero = 0.0f;

  /* the launchers report cudaGetLastError (): a non-sticky error a cuDNN
   * or cuBLAS call left behind (and reported itself) must not be blamed
   * on the next kernel */
  cudaGetLastError ();
  switch (s->kind) {
    case CBI_CUDA_STEP_CONV:
      return CUDNN_CHECK (cudnnConvolutionForward (cuda->cudnn, &one,
              s->x_desc, s->x, s->w_desc, s->w, s->conv_desc, s->fwd_algo,
              plan->workspace, plan->workspace_bytes, &zero, s->y_desc, s->y),
          s->node);
    case CBI_CUDA_STEP_DECONV:
      return CUDNN_CHECK (cudnnConvolutionBackwardData (cuda->cudnn, &one,
              s->w_desc, s->w, s->x_desc, s->x, s->conv_desc, s->bwd_algo,
              plan->workspace, plan->workspace_bytes, &zero, s->y_desc, s->y),
          s->node);
    case CBI_CUDA_STEP_POOL_KERNEL:
      return CUDA_CHECK (cbi_k_pool (s->x, s->y, s->n[0], s->n[1], s->n[2],
              s->dims[0], s->dims[1], &s->window, st), s->node);
    case CBI_CUDA_STEP_POOL:
      return CUDNN_CHECK (cudnnPoolingForward (cuda->cudnn, s->pool_desc,
              &one, s->x_desc, s->x, &zero, s->y_desc, s->y), s->node);
    case CBI_CUDA_STEP_BIAS_ACT:
      return CUDA_CHECK (cbi_k_bias_act (s->y, s->b, s->n[0], s->n[1],
              s->n[2], s->post, s->alpha, s->beta, st), s->node);
    case CBI_CUDA_STEP_ELTWISE:
      return CUDA_CHECK (cbi_k_eltwise (s->x, s->y, s->n[0], s->post,
              s->alpha, s->beta, st), s->node);
    case CBI_CUDA_STEP_BINARY:
      return CUDA_CHECK (cbi_k_binary (s->x, s->b, s->y, s->rank, s->dims,
              s->aux, s->binary, s->post, s->alpha, s->beta, st), s->node);
    case CBI_CUDA_STEP_PERMUTE:
      return CUDA_CHECK (cbi_k_permute (s->x, s->y, s->rank, s->dims, s->aux,
              st), s->node);
    case CBI_CUDA_STEP_CONCAT:
      return CUDA_CHECK (cbi_k_concat (s->x, s->y, s->n[0], s->n[1], s->n[2],
              s->n[3], st), s->node);
    case CBI_CUDA_STEP_PAD:
      return CUDA_CHECK (cbi_k_pad (s->x, s->y, s->n[0], s->n[1], s->n[2],
              s->pads[0], s->pads[1], s->pads[2], s->pads[3], s->fill,
              s->alpha, st), s->node);
    case CBI_CUDA_STEP_RESIZE:
      return CUDA_CHECK (cbi_k_resize (s->x, s->y, s->n[0], s->dims[0],
              s->dims[1], s->dims[2], s->dims[3], s->alpha, s->beta, s->fill,
              st), s->node);
    case CBI_CUDA_STEP_SOFTMAX:
      return CUDA_CHECK (cbi_k_softmax (s->x, s->y, s->n[0], s->n[1],
              s->n[2], st), s->node);
    case CBI_CUDA_STEP_INSTANCE_NORM:
      return CUDA_CHECK (cbi_k_instance_norm (s->x, s->y, s->n[0], s->n[1],
              s->n[2], s->w, s->b, s->alpha, st), s->node);
    case CBI_CUDA_STEP_COPY:
      return CUDA_CHECK (cudaMemcpyAsync (s->y, s->x, s->n[0] *
              sizeof (gfloat), cudaMemcpyDeviceToDevice, st), s->node);
    case CBI_CUDA_STEP_GEMM:
      if (s->b && !CUDA_CHECK (cudaMemcpyAsync (s->y, s->b, (gsize) s->m *
                  s->n[0] * sizeof (gfloat), cudaMemcpyDeviceToDevice, st),
              s->node))
        return FALSE;
      return CUBLAS_CHECK (cublasSgemmStridedBatched (cuda->cublas,
              CUBLAS_OP_N, s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, s->m,
              s->n[0], s->k, &s->alpha, s->w,
              s->m, s->stride_b, s->x, s->ldb, s->stride_a, &s->beta, s->y,
              s->m, s->stride_y, s->batches), s->node);
  }
  return TRUE;
}

static gboolean
cbi_cuda_run_steps (CbiCuda * cuda, CbiCudaPlan * plan, cudaStream_t stream,
    GError ** error)
{
  guint i;

  for (i = 0; i < plan->steps->len; i++)
    if (!cbi_cuda_run_step (cuda, plan, &g_array_index (plan->steps,
                CbiCudaStep, i), stream, error))
      return FALSE;
  return TRUE;
}

/* Records the steps as a CUDA graph: the layers of a batch then cost one
 * launch. Done on the second run, once cuDNN and cuBLAS have made what
 * they make lazily on the first. Whatever fails here leaves the plan
 * running its steps one by one, with a warning, not an error. */
static void
cbi_cuda_record (CbiCuda * cuda, CbiCudaPlan * plan, cudaStream_t stream)
{
  cudaGraph_t graph = NULL;
  GError *error = NULL;
  cudaError_t status;

  /* a graph is not tied to the stream it was recorded on: every slot's
   * stream replays it */
  status = cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal);
  if (status == cudaSuccess) {
    gboolean ok = cbi_cuda_run_steps (cuda, plan, stream, &error);
    status = cudaStreamEndCapture (stream, &graph);
    if (!ok)
      status = cudaErrorStreamCaptureInvalidated;
  }
  if (status == cudaSuccess)
    status = cudaGraphInstantiate (&plan->graph, graph, 0);
  if (graph)
    cudaGraphDestroy (graph);
  if (status != cudaSuccess) {
    GST_WARNING ("could not record the batch as a CUDA graph (%s%s%s): "
        "running its steps one by one", cudaGetErrorString (status),
        error ? ", " : "", error ? error->message : "");
    cudaGetLastError ();
    plan->graph = NULL;
    plan->graph_failed = TRUE;
  }
  g_clear_error (&error);
}

static gboolean
cbi_cuda_compute (CbiBackend * backend, gpointer p, guint slot, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  cudaStream_t stream = cuda->slot_streams[slot];

  if (!cbi_cuda_select (cuda, error)
      || !cbi_cuda_use_stream (cuda, stream, error))
    return FALSE;
  /* the handle is shared by the plans: each brings its workspace */
  if (plan->cublas_workspace && !CUBLAS_CHECK (cublasSetWorkspace
          (cuda->cublas, plan->cublas_workspace, CBI_CUDA_CUBLAS_WORKSPACE),
          "cublasSetWorkspace"))
    return FALSE;
  if (backend->replay && plan->graph == NULL && !plan->graph_failed
      && plan->runs > 0)
    cbi_cuda_record (cuda, plan, stream);
  plan->runs++;
  if (plan->graph)
    return CUDA_CHECK (cudaGraphLaunch (plan->graph, stream),
        "cudaGraphLaunch");
  return cbi_cuda_run_steps (cuda, plan, stream, error);
}

static void
cbi_cuda_frames_layout (const CbiFrameBatch * batch, CbiKFrames * f)
{
  guint c;

  f->width = batch->width;
  f->height = batch->height;
  f->pixel_stride = batch->pixel_stride;
  f->extra_offset = batch->extra_offset;
  for (c = 0; c < 3; c++) {
    f->rgb_offset[c] = batch->rgb_offset[c];
    f->scale[c] = batch->scale[c];
    f->bias[c] = batch->bias[c];
    f->out_scale[c] = batch->out_scale[c];
    f->out_offset[c] = batch->out_offset[c];
  }
}

/* Takes slot @k for a new batch. A batch that failed may still have work
 * queued on its stream that reads its staging: that is waited for. */
static CbiCudaSlot *
cbi_cuda_begin_slot (CbiCuda * cuda, CbiCudaPlan * plan, guint k,
    GError ** error)
{
  CbiCudaSlot *slot = &plan->slots[k];

  if (k >= plan->n_slots) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BUSY, "slot %u of a plan for "
        "%u batches in flight", k, plan->n_slots);
    return NULL;
  }
  if (!cbi_cuda_select (cuda, error) || (slot->queued
          && !CUDA_CHECK (cudaStreamSynchronize (cuda->slot_streams[k]),
              "earlier batch")))
    return NULL;
  slot->queued = TRUE;
  slot->unpacked = FALSE;
  return slot;
}

/* Frames are copied row by row into pinned staging (the one copy on the
 * way in) and sent in one copy, which overlaps the batch before computing;
 * they are packed into the input once that batch's layers are done. */
static gboolean
cbi_cuda_upload (CbiBackend * backend, gpointer p, guint k,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  const gsize row = (gsize) batch->width * batch->pixel_stride;
  const gsize frame = row * batch->height;
  cudaStream_t stream = cuda->slot_streams[k];
  CbiCudaSlot *slot;
  CbiKFrames f;
  guint i, y;

  if ((slot = cbi_cuda_begin_slot (cuda, plan, k, error)) == NULL)
    return FALSE;
  for (i = 0; i < batch->n_frames; i++)
    for (y = 0; y < batch->height; y++)
      memcpy (slot->staging_in + i * frame + y * row,
          batch->in[i] + (gsize) y * batch->in_stride[i], row);
  cbi_cuda_frames_layout (batch, &f);
  return CUDA_CHECK (cudaMemcpyAsync (slot->frames_in, slot->staging_in,
          frame * batch->n_frames, cudaMemcpyHostToDevice, stream),
      "frame upload")
      && CUDA_CHECK (cudaStreamWaitEvent (stream, cuda->computed, 0),
      "waiting for the batch before")
      && CUDA_CHECK (cbi_k_pack (slot->frames_in, plan->input, &f,
          batch->n_frames, batch->n_slots,
          batch->pad_mode == CBI_PAD_REPEAT_LAST, stream), "frame packing");
}

static gboolean
cbi_cuda_upload_tensor (CbiBackend * backend, gpointer p, guint k,
    const gfloat * input, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  cudaStream_t stream = cuda->slot_streams[k];

  return cbi_cuda_begin_slot (cuda, plan, k, error) != NULL
      && CUDA_CHECK (cudaStreamWaitEvent (stream, cuda->computed, 0),
      "waiting for the batch before")
      && CUDA_CHECK (cudaMemcpyAsync (plan->input, input, plan->input_count *
          sizeof (gfloat), cudaMemcpyHostToDevice, stream), "tensor upload");
}

/* Output 0 of an image batch is unpacked on the device, and the other
 * outputs are copied to pinned memory; once that is queued, the next batch
 * may take the layers' tensors (the event), while this one's frames go
 * back to staging in one copy. */
static gboolean
cbi_cuda_download (CbiBackend * backend, gpointer p, guint k,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  CbiCudaSlot *slot = &plan->slots[k];
  cudaStream_t stream = cuda->slot_streams[k];
  gboolean image = batch && batch->out;
  CbiKFrames f;
  guint i;

  if (!cbi_cuda_select (cuda, error))
    return FALSE;
  if (image) {
    slot->out_row = (gsize) (batch->out_width ? batch->out_width :
        batch->width) * batch->pixel_stride;
    slot->out_height = batch->out_height ? batch->out_height : batch->height;
    slot->out_frames = batch->n_frames;
    slot->unpacked = TRUE;
    cbi_cuda_frames_layout (batch, &f);
    if (!CUDA_CHECK (cbi_k_unpack (plan->outputs[0], slot->frames_in,
                slot->frames_out, &f, batch->out_channels ?
                batch->out_channels : 3, slot->out_row /
                batch->pixel_stride, slot->out_height, batch->n_frames,
                stream), "frame unpacking"))
      return FALSE;
  }
  for (i = image ? 1 : 0; i < G_N_ELEMENTS (plan->outputs)
      && plan->outputs[i]; i++)
    if (!CUDA_CHECK (cudaMemcpyAsync (slot->host_outputs[i],
                plan->outputs[i], plan->output_bytes[i],
                cudaMemcpyDeviceToHost, stream), "output download"))
      return FALSE;
  if (!CUDA_CHECK (cudaEventRecord (cuda->computed, stream), "batch done"))
    return FALSE;
  return !image || CUDA_CHECK (cudaMemcpyAsync (slot->staging_out,
          slot->frames_out, slot->out_row * slot->out_height *
          slot->out_frames, cudaMemcpyDeviceToHost, stream), "frame download");
}

/* Waits for the slot, then copies rows to the output frames (the one copy
 * on the way out). */
static gboolean
cbi_cuda_finish (CbiBackend * backend, gpointer p, guint k,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  CbiCudaSlot *slot = &plan->slots[k];
  guint i, y;

  if (!cbi_cuda_select (cuda, error)
      || !CUDA_CHECK (cudaStreamSynchronize (cuda->slot_streams[k]), "batch"))
    return FALSE;
  slot->queued = FALSE;
  for (i = 0; slot->unpacked && batch && batch->out && i < slot->out_frames;
      i++)
    for (y = 0; y < slot->out_height; y++)
      memcpy (batch->out[i] + (gsize) y * batch->out_stride[i],
          slot->staging_out + (i * slot->out_height + y) * slot->out_row,
          slot->out_row);
  return TRUE;
}

static const gfloat *
cbi_cuda_output (CbiBackend * backend, gpointer p, guint k, guint index,
    GError ** error)
{
  CbiCudaSlot *slot = &((CbiCudaPlan *) p)->slots[k];

  if (index == 0 && slot->unpacked) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "output 0 of the batch "
        "went to its frames");
    return NULL;
  }
  return slot->host_outputs[index];
}

static gboolean
cbi_cuda_device_memory (CbiBackend * backend, guint64 * free_bytes,
    guint64 * total_bytes)
{
  CbiCuda *cuda = backend->context;
  size_t f = 0, t = 0;

  if (cudaSetDevice (cuda->device) != cudaSuccess
      || cudaMemGetInfo (&f, &t) != cudaSuccess) {
    cudaGetLastError ();
    return FALSE;
  }
  *free_bytes = f;
  *total_bytes = t;
  return TRUE;
}

static void
cbi_cuda_free (CbiBackend * backend)
{
  CbiCuda *cuda = backend->context;
  guint i;

  if (cuda) {
    cudaSetDevice (cuda->device);
    if (cuda->cublas)
      cublasDestroy (cuda->cublas);
    if (cuda->cudnn)
      cudnnDestroy (cuda->cudnn);
    if (cuda->stream)
      cudaStreamDestroy (cuda->stream);
    for (i = 0; i < CBI_MAX_INFLIGHT; i++)
      if (cuda->slot_streams[i])
        cudaStreamDestroy (cuda->slot_streams[i]);
    if (cuda->computed)
      cudaEventDestroy (cuda->computed);
    /* every plan is gone: so are the constants */
    if (cuda->constants)
      g_warn_if_fail (g_hash_table_size (cuda->constants) == 0);
    g_clear_pointer (&cuda->constants, g_hash_table_unref);
    g_free (cuda);
  }
  g_free (backend);
}

static const CbiBackendIface cbi_cuda_iface = {
  .name = "cuda",
  .allocator = cbi_cuda_allocator,
  .staging_allocator = cbi_cuda_staging_allocator,
  .free = cbi_cuda_free,
  .plan = cbi_cuda_plan,
  .free_plan = cbi_cuda_free_plan,
  .upload = cbi_cuda_upload,
  .upload_tensor = cbi_cuda_upload_tensor,
  .compute = cbi_cuda_compute,
  .download = cbi_cuda_download,
  .output = cbi_cuda_output,
  .device_memory = cbi_cuda_device_memory,
  .finish = cbi_cuda_finish,
};

CbiBackend *
cbi_backend_cuda_new (gint device_id, GError ** error)
{
  CbiBackend *backend = g_new0 (CbiBackend, 1);
  CbiCuda *cuda = g_new0 (CbiCuda, 1);
  gint count = 0;
  cudaError_t status;

  GST_DEBUG_CATEGORY_INIT (cbi_cuda_debug, "cudabatchinfer-cuda", 0,
      "cudabatchinfer CUDA backend");
  backend->iface = &cbi_cuda_iface;
  backend->context = cuda;
  cuda->device = device_id;
  cuda->constants = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  cuda->device_allocator = (CbiAllocator) {
  "cuda", cbi_cuda_device_alloc, cbi_cuda_device_free, cuda};
  cuda->pinned_allocator = (CbiAllocator) {
  "cuda-pinned", cbi_cuda_pinned_alloc, cbi_cuda_pinned_free, cuda};

  status = cudaGetDeviceCount (&count);
  if (status != cudaSuccess || count == 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND, "no usable CUDA "
        "device (%s); check the NVIDIA driver, or use backend=cpu",
        status != cudaSuccess ? cudaGetErrorString (status) :
        "no device found");
    cudaGetLastError ();
    cbi_cuda_free (backend);
    return NULL;
  }
  if (device_id < 0 || device_id >= count) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND, "device-id %d does "
        "not exist: this machine has %d CUDA device(s)", device_id, count);
    cbi_cuda_free (backend);
    return NULL;
  }
  if (!cbi_cuda_select (cuda, error)
      || !CUDA_CHECK (cudaStreamCreateWithFlags (&cuda->stream,
              cudaStreamNonBlocking), "cudaStreamCreate")
      || !CUDA_CHECK (cudaEventCreateWithFlags (&cuda->computed,
              cudaEventDisableTiming), "cudaEventCreate")
      || !CUDNN_CHECK (cudnnCreate (&cuda->cudnn), "cudnnCreate")
      || !CUDNN_CHECK (cudnnSetStream (cuda->cudnn, cuda->stream),
          "cudnnSetStream")
      || !CUBLAS_CHECK (cublasCreate (&cuda->cublas), "cublasCreate")
      || !CUBLAS_CHECK (cublasSetStream (cuda->cublas, cuda->stream),
          "cublasSetStream")
      /* plain FP32, as the CPU backend computes */
      || !CUBLAS_CHECK (cublasSetMathMode (cuda->cublas,
              CUBLAS_PEDANTIC_MATH), "cublasSetMathMode")) {
    cbi_cuda_free (backend);
    return NULL;
  }
  return backend;
}
