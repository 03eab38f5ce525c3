/* cudabatchinfer: the CUDA backend, on cuDNN 9, cuBLAS and kernels/
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The context (device, streams, cuDNN and cuBLAS handles, the constants
 * the plans share), the allocators of device and pinned memory, and the
 * interface table. Planning is plan.c and each op family's file; running
 * batches is run.c.
 *
 * cuDNN runs convolutions and pooling; cuBLAS runs Gemm and MatMul; the
 * rest are the kernels of kernels/.
 */
#include "cbicuda.h"

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

static gint
cbi_cuda_thread_enter (void)
{
  int current = -1;

  if (cudaGetDevice (&current) != cudaSuccess) {
    cudaGetLastError ();
    return -1;
  }
  return current;
}

static void
cbi_cuda_thread_leave (gint entered)
{
  int current = -1;

  if (entered >= 0 && cudaGetDevice (&current) == cudaSuccess
      && current != entered)
    cudaSetDevice (entered);
  cudaGetLastError ();
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

/* float32; tf32 and bf16 where the GPU has tensor cores that take them
 * (compute capability 8.0, Ampere, or later), fp16 from 7.0 (Volta) */
static gboolean
cbi_cuda_has_precision (CbiBackend * backend, CbiPrecision precision,
    GError ** error)
{
  CbiCuda *cuda = backend->context;
  gint major = 0, needs;

  if (precision == CBI_PRECISION_FP32)
    return TRUE;
  if (precision != CBI_PRECISION_TF32 && precision != CBI_PRECISION_BF16
      && precision != CBI_PRECISION_FP16) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "the CUDA backend "
        "runs fp32, tf32, bf16 and fp16, not %s",
        cbi_precision_name (precision));
    return FALSE;
  }
  if (!CUDA_CHECK (cudaDeviceGetAttribute (&major,
              cudaDevAttrComputeCapabilityMajor, cuda->device),
          "cudaDeviceGetAttribute"))
    return FALSE;
  needs = precision == CBI_PRECISION_FP16 ? 7 : 8;
  if (major >= needs)
    return TRUE;
  g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "GPU %d has compute "
      "capability %d.x: %s needs %d.0 (%s) or later; the CUDA backend runs "
      "fp32%s there", cuda->device, major, cbi_precision_name (precision),
      needs, needs == 7 ? "Volta" : "Ampere", major >= 7 ? " and fp16" : "");
  return FALSE;
}

static const CbiBackendIface cbi_cuda_iface = {
  .name = "cuda",
  .allocator = cbi_cuda_allocator,
  .staging_allocator = cbi_cuda_staging_allocator,
  .free = cbi_cuda_free,
  .plan = cbi_cuda_plan,
  .free_plan = cbi_cuda_free_plan,
  .planners = &cbi_cuda_planners,
  .upload = cbi_cuda_upload,
  .upload_tensor = cbi_cuda_upload_tensor,
  .compute = cbi_cuda_compute,
  .download = cbi_cuda_download,
  .output = cbi_cuda_output,
  .device_memory = cbi_cuda_device_memory,
  .finish = cbi_cuda_finish,
  .thread_enter = cbi_cuda_thread_enter,
  .thread_leave = cbi_cuda_thread_leave,
  .has_precision = cbi_cuda_has_precision,
};

CbiBackend *
cbi_backend_cuda_new (gint device_id, GError ** error)
{
  CbiBackend *backend = g_new0 (CbiBackend, 1);
  CbiCuda *cuda = g_new0 (CbiCuda, 1);
  gint count = 0, entered = -1;
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
    goto failed;
  }
  if (device_id < 0 || device_id >= count) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND, "device-id %d does "
        "not exist: this machine has %d CUDA device(s)", device_id, count);
    goto failed;
  }
  /* the thread that opens the backend keeps its own device */
  entered = cbi_cuda_thread_enter ();
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
      /* each product names its compute type (CbiCudaPlan's products):
       * the handle's own math mode leaves it as it is */
      || !CUBLAS_CHECK (cublasSetMathMode (cuda->cublas,
              CUBLAS_DEFAULT_MATH), "cublasSetMathMode"))
    goto failed;
  cbi_cuda_thread_leave (entered);
  return backend;

failed:
  cbi_cuda_free (backend);
  cbi_cuda_thread_leave (entered);
  return NULL;
}
