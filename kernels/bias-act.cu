/* cudabatchinfer: a convolution's epilogue, bias then activation
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element, in place: y = post (y + bias[channel]) through
 * cbi_eltwise ().
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_bias_act_kernel (float *y, const float *bias, I count, I c, I hw,
    CbiKEltwise post, float alpha, float beta)
{
  CBI_K_FOR (I, i, count) {
    float b = bias ? bias[(i / hw) % c] : 0.0f;
    y[i] = cbi_eltwise (post, y[i] + b, alpha, beta);
  }
}

cudaError_t
cbi_k_bias_act (float *y, const float *bias, int64_t n, int64_t c,
    int64_t hw, CbiKEltwise post, float alpha, float beta, cudaStream_t stream)
{
  int64_t count;
  unsigned int blocks;

  if (n < 0 || c < 0 || hw < 0 || post < CBI_K_RELU || post > CBI_K_ELTWISE_LAST)
    return cudaErrorInvalidValue;
  count = n * c * hw;
  if (count == 0)
    return cudaSuccess;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count))
    CBI_K_LAUNCH ((cbi_k_bias_act_kernel<int>), blocks, CBI_K_THREADS, 0,
        stream, y, bias, (int) count, (int) c, (int) hw, post, alpha, beta);
  else
    CBI_K_LAUNCH ((cbi_k_bias_act_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, y, bias, count, c, hw, post, alpha, beta);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
