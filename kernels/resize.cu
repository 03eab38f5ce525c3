/* cudabatchinfer: Resize and Upsample of image planes (nearest, bilinear)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y: the source index (nearest) or the two taps
 * and weights per axis (linear, half-pixel centres) come from
 * cbi_resize_nearest () and cbi_resize_linear (), the sum from
 * cbi_bilinear ().
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_resize_kernel (const float *x, float *y, I count, int in_h, int in_w,
    int out_h, int out_w, float scale_h, float scale_w, int linear)
{
  const I out_plane = (I) out_h * out_w;
  const I in_plane = (I) in_h * in_w;

  CBI_K_FOR (I, i, count) {
    I p = i / out_plane;
    I r = i - p * out_plane;
    I oy = r / out_w;
    I ox = r - oy * out_w;
    const float *src = x + p * in_plane;

    if (linear) {
      CbiLinearTap h = cbi_resize_linear (oy, scale_h, in_h);
      CbiLinearTap w = cbi_resize_linear (ox, scale_w, in_w);
      const float *r0 = src + (I) h.i0 * in_w;
      const float *r1 = src + (I) h.i1 * in_w;
      y[i] = cbi_bilinear (r0[w.i0], r0[w.i1], r1[w.i0], r1[w.i1], h, w);
    } else {
      I sy = (I) cbi_resize_nearest (oy, scale_h, in_h);
      I sx = (I) cbi_resize_nearest (ox, scale_w, in_w);
      y[i] = src[sy * in_w + sx];
    }
  }
}

cudaError_t
cbi_k_resize (const float *x, float *y, int64_t planes, int in_h, int in_w,
    int out_h, int out_w, float scale_h, float scale_w, int linear,
    cudaStream_t stream)
{
  int64_t count;
  unsigned int blocks;

  if (planes < 0 || in_h < 0 || in_w < 0 || out_h < 0 || out_w < 0
      || !(scale_h > 0.0f) || !(scale_w > 0.0f))
    return cudaErrorInvalidValue;
  count = planes * out_h * out_w;
  if (count == 0)
    return cudaSuccess;
  if (in_h == 0 || in_w == 0)
    return cudaErrorInvalidValue;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count) && cbi_k_fits_int (planes * in_h * in_w))
    CBI_K_LAUNCH ((cbi_k_resize_kernel<int>), blocks, CBI_K_THREADS, 0, stream,
        x, y, (int) count, in_h, in_w, out_h, out_w, scale_h, scale_w, linear);
  else
    CBI_K_LAUNCH ((cbi_k_resize_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, x, y, count, in_h, in_w, out_h, out_w, scale_h, scale_w,
        linear);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
