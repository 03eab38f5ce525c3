/* cudabatchinfer: LayerNormalization over the rows of rows x inner
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One warp per row: the mean, then the biased variance as the mean square
 * distance to it (two passes, as oneDNN's layer normalization), then
 * every value through cbi_norm_value () with the row's factor per
 * position (gamma[i] / sqrt (variance + epsilon)).
 */
#include "cbikernels-private.cuh"

#define CBI_K_WARP 32
#define CBI_K_FULL_MASK 0xffffffffu

__device__ static float
cbi_k_warp_sum (float v)
{
  int o;

  for (o = CBI_K_WARP / 2; o > 0; o /= 2)
    v += __shfl_xor_sync (CBI_K_FULL_MASK, v, o);
  return v;
}

__global__ void
cbi_k_layer_norm_kernel (const float *x, float *y, int64_t rows,
    int64_t inner, const float *gamma, const float *beta, float epsilon)
{
  const int lane = threadIdx.x % CBI_K_WARP;
  const int64_t warps = (int64_t) gridDim.x * blockDim.x / CBI_K_WARP;
  int64_t row;

  /* the row is the same for every lane: whole warps shuffle */
  for (row = (blockIdx.x * (int64_t) blockDim.x + threadIdx.x) / CBI_K_WARP;
      row < rows; row += warps) {
    const float *xr = x + row * inner;
    float *yr = y + row * inner;
    float mean = 0.0f, var = 0.0f;
    int64_t k;

    for (k = lane; k < inner; k += CBI_K_WARP)
      mean += xr[k];
    mean = cbi_k_warp_sum (mean) / (float) inner;
    for (k = lane; k < inner; k += CBI_K_WARP)
      var += (xr[k] - mean) * (xr[k] - mean);
    var = cbi_k_warp_sum (var) / (float) inner;
    for (k = lane; k < inner; k += CBI_K_WARP)
      yr[k] = cbi_norm_value (xr[k], mean, cbi_norm_factor (gamma[k], var,
              epsilon), beta ? beta[k] : 0.0f);
  }
}

cudaError_t
cbi_k_layer_norm (const float *x, float *y, int64_t rows, int64_t inner,
    const float *gamma, const float *beta, float epsilon, cudaStream_t stream)
{
  if (rows < 0 || inner < 0 || gamma == NULL)
    return cudaErrorInvalidValue;
  if (rows * inner == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_layer_norm_kernel), cbi_k_blocks (rows * CBI_K_WARP),
      CBI_K_THREADS, 0, stream, x, y, rows, inner, gamma, beta, epsilon);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
