/* cudabatchinfer: a low-precision convolution's 16-bit channels-last
 * result back to float32 NCHW, with its epilogue
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y, written in order: y = post (x + bias
 * [channel]) through cbi_eltwise (), as bias-act.cu does in float32, so
 * the conversion is the epilogue's pass and not one more.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_from_half_kernel (const uint16_t * x, float *y, const float *bias,
    I count, I c, I hw, CbiKHalf type, CbiKEltwise post, float alpha,
    float beta)
{
  CBI_K_FOR (I, i, count) {
    I p = i % hw, plane = i / hw;
    I ch = plane % c, b = plane / c;
    float v = cbi_half_to_float (type, x[(b * hw + p) * c + ch]);
    y[i] = cbi_eltwise (post, v + (bias ? bias[ch] : 0.0f), alpha, beta);
  }
}

cudaError_t
cbi_k_from_half (const uint16_t * x, float *y, const float *bias, int64_t n,
    int64_t c, int64_t hw, CbiKHalf type, CbiKEltwise post, float alpha,
    float beta, cudaStream_t stream)
{
  int64_t count;
  unsigned int blocks;

  if (n < 0 || c < 0 || hw < 0
      || (type != CBI_K_HALF_FP16 && type != CBI_K_HALF_BF16)
      || post < CBI_K_RELU || post > CBI_K_ELTWISE_LAST)
    return cudaErrorInvalidValue;
  count = n * c * hw;
  if (count == 0)
    return cudaSuccess;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count))
    CBI_K_LAUNCH ((cbi_k_from_half_kernel<int>), blocks, CBI_K_THREADS, 0,
        stream, x, y, bias, (int) count, (int) c, (int) hw, type, post, alpha,
        beta);
  else
    CBI_K_LAUNCH ((cbi_k_from_half_kernel<int64_t>), blocks, CBI_K_THREADS,
        0, stream, x, y, bias, count, c, hw, type, post, alpha, beta);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
