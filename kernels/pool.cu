/* cudabatchinfer: MaxPool and AveragePool with any pads and dilations
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For the windows cuDNN's pooling cannot describe: padding that differs
 * before and after, and dilated taps. One thread per output value, its
 * window read through cbi_pool_at (), the math the CPU tests check.
 */
#include "cbikernels-private.cuh"

__global__ void
cbi_k_pool_kernel (const float *x, float *y, int64_t count, int height,
    int width, int out_h, int out_w, CbiKPool p)
{
  const int64_t out_plane = (int64_t) out_h * out_w;
  const int64_t plane = (int64_t) height * width;

  CBI_K_FOR (int64_t, i, count) {
    int64_t n = i / out_plane;
    int64_t r = i - n * out_plane;
    int64_t oy = r / out_w;

    y[i] = cbi_pool_at (x + n * plane, height, width, oy, r - oy * out_w, &p);
  }
}

cudaError_t
cbi_k_pool (const float *x, float *y, int64_t planes, int height, int width,
    int out_h, int out_w, const CbiKPool * p, cudaStream_t stream)
{
  int64_t count;
  int d;

  if (planes < 0 || height < 0 || width < 0 || out_h < 0 || out_w < 0)
    return cudaErrorInvalidValue;
  for (d = 0; d < 2; d++)
    if (p->kernel[d] < 1 || p->stride[d] < 1 || p->dilation[d] < 1
        || p->pad[d] < 0)
      return cudaErrorInvalidValue;
  count = planes * out_h * out_w;
  if (count == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_pool_kernel), cbi_k_blocks (count), CBI_K_THREADS, 0,
      stream, x, y, count, height, width, out_h, out_w, *p);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
