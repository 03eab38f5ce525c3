/* cudabatchinfer: Pad (constant, reflect, edge) of image planes
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y: its source row and column come from
 * cbi_pad_index (), the CPU backend's mapping; -1 on either is the
 * constant.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_pad_kernel (const float *x, float *y, I count, int height, int width,
    int out_h, int out_w, int top, int left, CbiKPadFill fill, float value)
{
  const I out_plane = (I) out_h * out_w;
  const I plane = (I) height * width;

  CBI_K_FOR (I, i, count) {
    I p = i / out_plane;
    I r = i - p * out_plane;
    I oy = r / out_w;
    I ox = r - oy * out_w;
    int64_t sy = cbi_pad_index ((int64_t) oy - top, height, fill);
    int64_t sx = cbi_pad_index ((int64_t) ox - left, width, fill);

    y[i] = sy < 0 || sx < 0 ? value : x[p * plane + (I) sy * width + (I) sx];
  }
}

cudaError_t
cbi_k_pad (const float *x, float *y, int64_t planes, int height, int width,
    int top, int left, int bottom, int right, CbiKPadFill fill, float value,
    cudaStream_t stream)
{
  int64_t out_h = (int64_t) height + top + bottom;
  int64_t out_w = (int64_t) width + left + right;
  int64_t count;
  unsigned int blocks;

  if (planes < 0 || height < 0 || width < 0 || out_h < 0 || out_w < 0
      || out_h > INT32_MAX || out_w > INT32_MAX
      || fill < CBI_K_PAD_CONSTANT || fill > CBI_K_PAD_EDGE)
    return cudaErrorInvalidValue;
  count = planes * out_h * out_w;
  if (count == 0)
    return cudaSuccess;
  /* a border to repeat, something to reflect (one bounce) */
  if (fill != CBI_K_PAD_CONSTANT && (height == 0 || width == 0))
    return cudaErrorInvalidValue;
  if (fill == CBI_K_PAD_REFLECT && (top >= height || bottom >= height
          || left >= width || right >= width))
    return cudaErrorInvalidValue;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count) && cbi_k_fits_int (planes * height * width))
    CBI_K_LAUNCH ((cbi_k_pad_kernel<int>), blocks, CBI_K_THREADS, 0, stream, x,
        y, (int) count, height, width, (int) out_h, (int) out_w, top, left,
        fill, value);
  else
    CBI_K_LAUNCH ((cbi_k_pad_kernel<int64_t>), blocks, CBI_K_THREADS, 0, stream,
        x, y, count, height, width, (int) out_h, (int) out_w, top, left, fill,
        value);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
