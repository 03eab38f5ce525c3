/* cudabatchinfer: the CUDA backend's private header
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend's files share what is here: the context, the plan, the
 * step list, the checks of CUDA, cuDNN and cuBLAS calls, and each op
 * family's planner (conv.c, pool.c, eltwise.c, matrix.c, layout.c,
 * norm.c: each plans its ops beside the run functions of their steps).
 */
#pragma once

#include "cbibackend.h"
#include "cbicudalimits.h"
#include "cbitypes.h"
#include "cbikernels.h"
#include "cbimemplan.h"

#include <gst/gst.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cublas_v2.h>

G_BEGIN_DECLS GST_DEBUG_CATEGORY_EXTERN (cbi_cuda_debug);
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

typedef struct _CbiCudaPlan CbiCudaPlan;

/* Queues one step's work on @stream; @params are the step's own. */
typedef gboolean (*CbiCudaRunFunc) (CbiCuda * cuda, CbiCudaPlan * plan,
    gconstpointer params, cudaStream_t stream, GError ** error);
/* The cuDNN workspace the step's chosen algorithm needs, in @bytes. */
typedef gboolean (*CbiCudaWorkspaceFunc) (CbiCuda * cuda,
    gconstpointer params, gsize * bytes, GError ** error);

/**
 * CbiCudaStep:
 * @node: the node's name, for error messages
 * @run: queues the step
 * @params: (owned): @run's typed parameters, g_free'd with the plan
 * @clear: (nullable): frees what @params holds (cuDNN descriptors)
 * @workspace: (nullable): the workspace @run needs; %NULL: none
 *
 * One queued operation.
 */
typedef struct
{
  const gchar *node;
  CbiCudaRunFunc run;
  gpointer params;
  GDestroyNotify clear;
  CbiCudaWorkspaceFunc workspace;
} CbiCudaStep;

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

struct _CbiCudaPlan
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
  gboolean unpack_frames;       /* output 0 goes to frames, not to the host */
  gsize frames_in_bytes, frames_out_bytes;
  gpointer workspace;
  gsize workspace_bytes;
  /* planning only */
  CbiCuda *cuda;
  CbiPool *pool;                /* where the shared constants go */
  const CbiGraph *model;
  const CbiShape *shapes;
  gboolean exhaustive;          /* search the algorithms */
  gboolean tf32;                /* CBI_PRECISION_TF32: tensor cores may
                                 * cut float32 products to tf32 (cuDNN's
                                 * default math, cuBLAS's @products) */
  cublasComputeType_t products; /* the compute type of Gemm, MatMul and a
                                 * recurrent layer's input product: float32
                                 * (pedantic), or down-converting their
                                 * float32 operands to tf32, bfloat16 or
                                 * half under the precision (each call
                                 * names it: the handle's math mode, which
                                 * the plans share, does not apply) */
  gboolean half;                /* CBI_PRECISION_FP16 or BF16: the
                                 * convolutions that gain take 16-bit
                                 * operands of @half_type (conv.c) */
  CbiKHalf half_type;
  guint16 *half_x, *half_y;     /* their input and result, channels last:
                                 * one pair for all, as layers run one
                                 * after another */
  guint low_precision_ops;      /* the convolutions planned in 16 bits or
                                 * whose algorithm may use tensor cores
                                 * under tf32, and the matrix products
                                 * whose @products is not float32 */
  gsize search_bytes;           /* the search's workspace: fixed while the
                                 * planners raise workspace_bytes */
  gboolean uses_cublas;
  guint runs;
  gpointer cublas_workspace;    /* from the pool, so cuBLAS allocates none */
  cudaGraphExec_t graph;        /* the steps, recorded on the second run */
  gboolean graph_failed;
};

typedef enum
{
  CBI_CUDA_RUNTIME,
  CBI_CUDA_CUDNN,
  CBI_CUDA_CUBLAS,
} CbiCudaLibrary;

/* Whether a call of @library returned success (0 in all three); when
 * not, logs and sets @error with the library's text for @status. */
gboolean cbi_cuda_check (gint status, CbiCudaLibrary library,
    const gchar * what, GError ** error);

#define CUDA_CHECK(call, what) \
  cbi_cuda_check ((call), CBI_CUDA_RUNTIME, (what), error)
#define CUDNN_CHECK(call, what) \
  cbi_cuda_check ((call), CBI_CUDA_CUDNN, (what), error)
#define CUBLAS_CHECK(call, what) \
  cbi_cuda_check ((call), CBI_CUDA_CUBLAS, (what), error)

/* What a step reads and writes. */
typedef struct
{
  const gfloat *x;
  gfloat *y;
} CbiCudaIO;

/* The planes of a 2-D op on NCHW: @planes (N x C) of @height x @width
 * in, of @out_h x @out_w out. */
typedef struct
{
  gint64 planes, height, width, out_h, out_w;
} CbiCudaPlanes;

/* @p for input shape @x and output shape @y. */
void cbi_cuda_planes (CbiCudaPlanes * p, const CbiShape * x,
    const CbiShape * y);

/* A cuDNN step's descriptors, the first member of its parameters, so
 * that cbi_cuda_descs_clear () is the step's clear function. A batch
 * past cuDNN's 2^31 elements a tensor runs in @calls calls of equal
 * frames, @x_step and @y_step elements apart. */
typedef struct
{
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnPoolingDescriptor_t pool;
  gint64 calls;
  gint64 x_step, y_step;
} CbiCudaDescs;

/* Creates @d's descriptors for 4-D NCHW float tensors of @x and @y, of
 * as many frames as cuDNN takes in one call (cbi_cuda_batch_chunk ());
 * fails (CBI_ERROR_MODEL), naming node @n, when one frame is past that. */
gboolean cbi_cuda_descs_init (CbiCudaDescs * d, const CbiNode * n,
    const CbiShape * x, const CbiShape * y, GError ** error);
/* The same for tensors of @format and @type. */
gboolean cbi_cuda_descs_init_typed (CbiCudaDescs * d, const CbiNode * n,
    const CbiShape * x, const CbiShape * y, cudnnTensorFormat_t format,
    cudnnDataType_t type, GError ** error);
/* Destroys the descriptors @descs (a CbiCudaDescs) holds. */
void cbi_cuda_descs_clear (gpointer descs);

/* cuDNN's scaling factors: the result replaces the output */
extern const float cbi_cuda_one, cbi_cuda_zero;

/* Defines @func, the run function of a step that is one call (@call,
 * checked by @CHECK: CUDA_CHECK for a launcher, or CUDNN_CHECK) on its
 * parameters (a @Type, seen as p); @what names it in errors. */
#define CBI_CUDA_DEFINE_RUN(func, Type, CHECK, what, call)                 \
  static gboolean                                                          \
  func (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,          \
      cudaStream_t stream, GError ** error)                                \
  {                                                                        \
    const Type *p = params;                                                \
    return CHECK (call, what);                                             \
  }

gboolean cbi_cuda_select (CbiCuda * cuda, GError ** error);
gboolean cbi_cuda_use_stream (CbiCuda * cuda, cudaStream_t stream,
    GError ** error);

/* Appends a step of node @n (%NULL: the plan's own) that runs @run.
 * Returns: (transfer none): its zeroed parameters, @params_size bytes,
 * owned by the plan. */
gpointer cbi_cuda_add_step (CbiCudaPlan * plan, const CbiNode * n,
    CbiCudaRunFunc run, gsize params_size);
/* cbi_cuda_add_step() for parameters that hold a CbiCudaIO @io_offset
 * bytes in, which it sets to node @n's first input and its output.
 * Returns: (transfer none): the parameters, owned by the plan. */
gpointer cbi_cuda_add_io_step (CbiCudaPlan * plan, const CbiNode * n,
    CbiCudaRunFunc run, gsize params_size, gsize io_offset);
/* Its typed form, for parameters of @Type with a CbiCudaIO named io. */
#define CBI_CUDA_ADD_IO_STEP(plan, n, run, Type) \
  ((Type *) cbi_cuda_add_io_step ((plan), (n), (run), sizeof (Type), \
      G_STRUCT_OFFSET (Type, io)))
/* The last step added, to set its @clear or @workspace. */
CbiCudaStep *cbi_cuda_last_step (CbiCudaPlan * plan);

/* Returns: (transfer none): the device copy of constant @t, shared by the
 * plans of every shape; %NULL with @error set. */
gfloat *cbi_cuda_constant (CbiCudaPlan * plan, gint t, GError ** error);
/* Returns: (transfer none): a device copy, the plan's, of @count floats
 * made on the host (@data may go when it returns). */
gfloat *cbi_cuda_upload_made (CbiCudaPlan * plan, const gfloat * data,
    gsize count, const gchar * what, GError ** error);
/* Returns: (transfer none): the same for @bytes of any data (int64
 * indices). */
gpointer cbi_cuda_upload_bytes (CbiCudaPlan * plan, gconstpointer data,
    gsize bytes, const gchar * what, GError ** error);

/* postops.c: adds a step applying the own op of activation @post (a
 * node, its alpha and beta) in place to the @count floats of @y; what
 * follows it is the planning loop's (cbiplanner.h) */
void cbi_cuda_add_activation (CbiCudaPlan * plan, const CbiNode * post,
    gfloat * y, gint64 count);
/* postops.c: a step of the own op of element-wise node @n from @x into
 * @y */
void cbi_cuda_add_eltwise (CbiCudaPlan * plan, const CbiNode * n,
    const gfloat * x, gfloat * y, gint64 count);
/* postops.c: the add_in_place of the CUDA CbiPlanners */
gboolean cbi_cuda_add_in_place (gpointer plan, const CbiNode * n,
    const CbiEltwiseStep * step, GError ** error);
/* steps.c: releases the plan's share of the device constants */
void cbi_cuda_drop_constants (CbiCuda * cuda, CbiCudaPlan * plan,
    CbiPool * pool);

/* layout.c: adds a step writing @x, of shape @x_shape, expanded to
 * @y_shape (which it broadcasts to) into @y */
void cbi_cuda_add_expand (CbiCudaPlan * plan, const CbiNode * n,
    const gfloat * x, const CbiShape * x_shape, gfloat * y,
    const CbiShape * y_shape);

/* Adds a step padding (or cropping, negative pads) @planes planes of
 * @height x @width from @x into @y; @pads top, left, bottom, right. */
void cbi_cuda_add_pad (CbiCudaPlan * plan, const CbiNode * n,
    const gfloat * x, gfloat * y, gint64 planes, gint64 height, gint64 width,
    const gint64 * pads, CbiKPadFill fill, gfloat value);

/* The op families' planners (CbiPlanNodeFunc, cbiplanner.h): each adds
 * the steps of node @n of the CbiCudaPlan @plan, with the fused
 * activation @post (nullable) where the op table allows one, reading and
 * writing the tensors the memory plan placed. */
gboolean cbi_cuda_plan_conv (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
/* conv.c: the 16-bit input and result blocks of the plan's convolutions
 * that take them, as large as the largest (none where none does) */
gboolean cbi_cuda_plan_half_buffers (CbiCudaPlan * plan, GError ** error);
gboolean cbi_cuda_plan_pool (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_eltwise (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_binary (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_prelu (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_matrix (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_permute (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_concat (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_pad (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_copy (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_reshape (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_resize (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_softmax (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_instance_norm (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_reduce (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_layer_norm (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_recurrent (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_split (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cuda_plan_where (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);

/* run.c: the iface's entry points that run batches */
gboolean cbi_cuda_compute (CbiBackend * backend, gpointer plan, guint slot,
    GError ** error);
gboolean cbi_cuda_upload (CbiBackend * backend, gpointer plan, guint slot,
    const CbiFrameBatch * batch, GError ** error);
gboolean cbi_cuda_upload_tensor (CbiBackend * backend, gpointer plan,
    guint slot, const gfloat * input, GError ** error);
gboolean cbi_cuda_download (CbiBackend * backend, gpointer plan, guint slot,
    const CbiFrameBatch * batch, GError ** error);
gboolean cbi_cuda_finish (CbiBackend * backend, gpointer plan, guint slot,
    const CbiFrameBatch * batch, GError ** error);
const gfloat *cbi_cuda_output (CbiBackend * backend, gpointer plan,
    guint slot, guint index, GError ** error);

/* plan.c: planning */
/* plan.c: the planners, for the interface table */
extern const CbiPlanners cbi_cuda_planners;
gpointer cbi_cuda_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace_bytes, GError ** error);
void cbi_cuda_free_plan (CbiBackend * backend, gpointer plan, CbiPool * pool,
    CbiPool * staging);

G_END_DECLS
