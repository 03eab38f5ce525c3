/* cudabatchinfer: float32 NCHW into 16-bit channels last, for a
 * convolution of a low-precision plan
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y, written in order (channels last: the
 * layout cuDNN's tensor-core kernels read), each rounded to nearest even
 * through cbi_half_from_float (). Filters go through it too: (out, in,
 * kh, kw) is read as n, c and the kh x kw plane.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_to_half_kernel (const float *x, uint16_t * y, I count, I c, I hw,
    CbiKHalf type)
{
  CBI_K_FOR (I, i, count) {
    I ch = i % c, pixel = i / c;
    I p = pixel % hw, b = pixel / hw;
    y[i] = cbi_half_from_float (type, x[(b * c + ch) * hw + p]);
  }
}

cudaError_t
cbi_k_to_half (const float *x, uint16_t * y, int64_t n, int64_t c,
    int64_t hw, CbiKHalf type, cudaStream_t stream)
{
  int64_t count;
  unsigned int blocks;

  if (n < 0 || c < 0 || hw < 0
      || (type != CBI_K_HALF_FP16 && type != CBI_K_HALF_BF16))
    return cudaErrorInvalidValue;
  count = n * c * hw;
  if (count == 0)
    return cudaSuccess;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count))
    CBI_K_LAUNCH ((cbi_k_to_half_kernel<int>), blocks, CBI_K_THREADS, 0,
        stream, x, y, (int) count, (int) c, (int) hw, type);
  else
    CBI_K_LAUNCH ((cbi_k_to_half_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, x, y, count, c, hw, type);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
