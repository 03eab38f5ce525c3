/* cudabatchinfer: element-wise ops
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element, cbi_eltwise () of cbimath.h; in place when @x
 * is @y. No division in the loop, so one 64-bit version.
 */
#include "cbikernels-private.cuh"

__global__ void
cbi_k_eltwise_kernel (const float *x, float *y, int64_t count, CbiKEltwise op,
    float alpha, float beta)
{
  CBI_K_FOR (int64_t, i, count) {
    y[i] = cbi_eltwise (op, x[i], alpha, beta);
  }
}

cudaError_t
cbi_k_eltwise (const float *x, float *y, int64_t count, CbiKEltwise op,
    float alpha, float beta, cudaStream_t stream)
{
  if (count < 0 || op < CBI_K_RELU || op > CBI_K_ELTWISE_LAST)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_eltwise_kernel), cbi_k_blocks (count), CBI_K_THREADS, 0,
      stream, x, y, count, op, alpha, beta);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
