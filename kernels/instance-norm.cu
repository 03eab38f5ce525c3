/* cudabatchinfer: InstanceNormalization
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One block per (frame, channel) plane: the mean, then the biased
 * variance as the mean square distance to it (two passes, as oneDNN's
 * batch normalization, accumulated in double), then every value through
 * cbi_norm_value (). Blocks loop over the planes past the grid.
 */
#include "cbikernels-private.cuh"

#define CBI_K_WARP 32
#define CBI_K_FULL_MASK 0xffffffffu

/* The sum of @v over the block, for every thread; @shared holds one value
 * per warp. */
__device__ static double
cbi_k_block_sum (double v, double *shared)
{
  const int lane = threadIdx.x % CBI_K_WARP, warp = threadIdx.x / CBI_K_WARP;
  int o;

  for (o = CBI_K_WARP / 2; o > 0; o /= 2)
    v += __shfl_down_sync (CBI_K_FULL_MASK, v, o);
  /* every thread has read the last sum before it is overwritten */
  __syncthreads ();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads ();
  if (warp == 0) {
    v = lane < (int) (blockDim.x / CBI_K_WARP) ? shared[lane] : 0.0;
    for (o = CBI_K_WARP / 2; o > 0; o /= 2)
      v += __shfl_down_sync (CBI_K_FULL_MASK, v, o);
    if (lane == 0)
      shared[0] = v;
  }
  __syncthreads ();
  return shared[0];
}

__global__ void
cbi_k_instance_norm_kernel (const float *x, float *y, int64_t planes,
    int64_t c, int64_t hw, const float *gamma, const float *beta, float epsilon)
{
  __shared__ double shared[CBI_K_THREADS / CBI_K_WARP];
  int64_t plane, k;

  for (plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const float *xp = x + plane * hw;
    float *yp = y + plane * hw;
    int64_t ch = plane % c;
    double s = 0.0;
    float mean, factor, shift;

    for (k = threadIdx.x; k < hw; k += blockDim.x)
      s += xp[k];
    mean = (float) (cbi_k_block_sum (s, shared) / (double) hw);

    s = 0.0;
    for (k = threadIdx.x; k < hw; k += blockDim.x) {
      double d = (double) xp[k] - mean;
      s += d * d;
    }
    factor = cbi_norm_factor (gamma[ch],
        (float) (cbi_k_block_sum (s, shared) / (double) hw), epsilon);
    shift = beta[ch];

    for (k = threadIdx.x; k < hw; k += blockDim.x)
      yp[k] = cbi_norm_value (xp[k], mean, factor, shift);
  }
}

cudaError_t
cbi_k_instance_norm (const float *x, float *y, int64_t n, int64_t c,
    int64_t hw, const float *gamma, const float *beta, float epsilon,
    cudaStream_t stream)
{
  int64_t planes;

  if (n < 0 || c < 0 || hw < 0)
    return cudaErrorInvalidValue;
  planes = n * c;
  if (planes * hw == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_instance_norm_kernel),
      (unsigned int) (planes < CBI_K_MAX_BLOCKS ? planes : CBI_K_MAX_BLOCKS),
      CBI_K_THREADS, 0, stream, x, y, planes, c, hw, gamma, beta, epsilon);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
