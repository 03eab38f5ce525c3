/* cudabatchinfer: Softmax over the middle axis of outer x axis x inner
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Max, sum of exp (x - max), then exp (x - max) / sum, as oneDNN's
 * accurate softmax. With inner 1 (a classifier's scores) one warp per row,
 * its lanes along the row; otherwise one thread per (outer, inner)
 * column, neighbouring threads reading neighbouring values.
 */
#include "cbikernels-private.cuh"

#define CBI_K_WARP 32
#define CBI_K_FULL_MASK 0xffffffffu

__global__ void
cbi_k_softmax_rows_kernel (const float *x, float *y, int64_t rows, int64_t axis)
{
  const int lane = threadIdx.x % CBI_K_WARP;
  const int64_t warps = (int64_t) gridDim.x * blockDim.x / CBI_K_WARP;
  int64_t row;

  /* the row is the same for every lane: whole warps shuffle */
  for (row = (blockIdx.x * (int64_t) blockDim.x + threadIdx.x) / CBI_K_WARP;
      row < rows; row += warps) {
    const float *xr = x + row * axis;
    float *yr = y + row * axis;
    float m = -INFINITY, sum = 0.0f;
    int64_t k;
    int o;

    for (k = lane; k < axis; k += CBI_K_WARP)
      m = fmaxf (m, xr[k]);
    for (o = CBI_K_WARP / 2; o > 0; o /= 2)
      m = fmaxf (m, __shfl_xor_sync (CBI_K_FULL_MASK, m, o));
    for (k = lane; k < axis; k += CBI_K_WARP)
      sum += expf (xr[k] - m);
    for (o = CBI_K_WARP / 2; o > 0; o /= 2)
      sum += __shfl_xor_sync (CBI_K_FULL_MASK, sum, o);
    for (k = lane; k < axis; k += CBI_K_WARP)
      yr[k] = expf (xr[k] - m) / sum;
  }
}

__global__ void
cbi_k_softmax_columns_kernel (const float *x, float *y, int64_t count,
    int64_t axis, int64_t inner)
{
  CBI_K_FOR (int64_t, i, count) {
    int64_t o = i / inner;
    int64_t base = o * axis * inner + (i - o * inner);
    float m = -INFINITY, sum = 0.0f;
    int64_t k;

    for (k = 0; k < axis; k++)
      m = fmaxf (m, x[base + k * inner]);
    for (k = 0; k < axis; k++)
      sum += expf (x[base + k * inner] - m);
    for (k = 0; k < axis; k++)
      y[base + k * inner] = expf (x[base + k * inner] - m) / sum;
  }
}

cudaError_t
cbi_k_softmax (const float *x, float *y, int64_t outer, int64_t axis,
    int64_t inner, cudaStream_t stream)
{
  if (outer < 0 || axis < 0 || inner < 0)
    return cudaErrorInvalidValue;
  if (outer * axis * inner == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  if (inner == 1)
    CBI_K_LAUNCH ((cbi_k_softmax_rows_kernel),
        cbi_k_blocks (outer * CBI_K_WARP), CBI_K_THREADS, 0, stream, x, y,
        outer, axis);
  else
    CBI_K_LAUNCH ((cbi_k_softmax_columns_kernel), cbi_k_blocks (outer * inner),
        CBI_K_THREADS, 0, stream, x, y, outer * inner, axis, inner);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
