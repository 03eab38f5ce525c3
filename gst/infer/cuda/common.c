/* cudabatchinfer: the CUDA backend's leaf: its log category, the status
 * of CUDA, cuDNN and cuBLAS calls checked, the device and stream its
 * calls use
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbicuda.h"

GST_DEBUG_CATEGORY (cbi_cuda_debug);

G_STATIC_ASSERT (cudaSuccess == 0 && CUDNN_STATUS_SUCCESS == 0
    && CUBLAS_STATUS_SUCCESS == 0);

gboolean
cbi_cuda_check (gint status, CbiCudaLibrary library, const gchar * what,
    GError ** error)
{
  static const gchar *names[] = { "CUDA", "cuDNN", "cuBLAS" };
  const gchar *text;

  if (status == 0)
    return TRUE;
  if (library == CBI_CUDA_CUDNN)
    text = cudnnGetErrorString ((cudnnStatus_t) status);
  else if (library == CBI_CUDA_CUBLAS)
    text = cublasGetStatusString ((cublasStatus_t) status);
  else
    text = cudaGetErrorString ((cudaError_t) status);
  GST_ERROR ("%s failed: %s", what, text);
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "%s: %s failed: %s",
      names[library], what, text);
  return FALSE;
}

gboolean
cbi_cuda_select (CbiCuda * cuda, GError ** error)
{
  return CUDA_CHECK (cudaSetDevice (cuda->device), "cudaSetDevice");
}

/* Where the cuDNN and cuBLAS calls that follow queue their work. */
gboolean
cbi_cuda_use_stream (CbiCuda * cuda, cudaStream_t stream, GError ** error)
{
  return CUDNN_CHECK (cudnnSetStream (cuda->cudnn, stream), "cudnnSetStream")
      && CUBLAS_CHECK (cublasSetStream (cuda->cublas, stream),
      "cublasSetStream");
}
