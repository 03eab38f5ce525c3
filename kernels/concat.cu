/* cudabatchinfer: one Concat input into its place
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of x, read in order; element (row, column) of
 * x goes to (row, @offset + column) of y. The backend runs it once per
 * input.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_concat_kernel (const float *x, float *y, I count, I x_inner,
    I y_inner, I offset)
{
  CBI_K_FOR (I, i, count) {
    I row = i / x_inner;
    y[row * y_inner + offset + (i - row * x_inner)] = x[i];
  }
}

cudaError_t
cbi_k_concat (const float *x, float *y, int64_t outer, int64_t x_inner,
    int64_t y_inner, int64_t offset, cudaStream_t stream)
{
  int64_t count;
  unsigned int blocks;

  if (outer < 0 || x_inner < 0 || offset < 0 || offset + x_inner > y_inner)
    return cudaErrorInvalidValue;
  count = outer * x_inner;
  if (count == 0)
    return cudaSuccess;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (outer * y_inner))
    CBI_K_LAUNCH ((cbi_k_concat_kernel<int>), blocks, CBI_K_THREADS, 0, stream,
        x, y, (int) count, (int) x_inner, (int) y_inner, (int) offset);
  else
    CBI_K_LAUNCH ((cbi_k_concat_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, x, y, count, x_inner, y_inner, offset);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
