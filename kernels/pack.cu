/* cudabatchinfer: frames into the batch tensor
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per pixel of a slot: it reads the pixel's three colour bytes
 * (from the slot's frame, or the last frame's for a repeated slot) and
 * writes its three channel values, or three zeros, in one pass.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I, int PS>
/* *INDENT-ON* */
__global__ void
cbi_k_pack_kernel (const uint8_t * frames, float *tensor, CbiKFrames f,
    I plane, I count, int n_frames, int repeat_last)
{
  CBI_K_FOR (I, i, count) {
    I slot = i / plane;
    I p = i - slot * plane;
    I src = (I) cbi_pack_source (slot, n_frames, repeat_last);
    float *d = tensor + slot * 3 * plane + p;

    if (src < 0) {
      d[0] = 0.0f;
      d[plane] = 0.0f;
      d[2 * plane] = 0.0f;
    } else {
      const uint8_t *px = frames + (src * plane + p) * PS;
      d[0] = cbi_from_byte (px[f.rgb_offset[0]], f.scale[0], f.bias[0]);
      d[plane] = cbi_from_byte (px[f.rgb_offset[1]], f.scale[1], f.bias[1]);
      d[2 * plane] = cbi_from_byte (px[f.rgb_offset[2]], f.scale[2], f.bias[2]);
    }
  }
}

cudaError_t
cbi_k_pack (const uint8_t * frames, float *tensor, const CbiKFrames * f,
    int n_frames, int n_slots, int repeat_last, cudaStream_t stream)
{
  int64_t plane, count;
  unsigned int blocks;
  bool small;
  int c;

  if (f == NULL || f->width < 0 || f->height < 0 || n_frames < 0
      || n_slots < 0 || n_frames > n_slots
      || (f->pixel_stride != 3 && f->pixel_stride != 4))
    return cudaErrorInvalidValue;
  for (c = 0; c < 3; c++)
    if (f->rgb_offset[c] < 0 || f->rgb_offset[c] >= f->pixel_stride)
      return cudaErrorInvalidValue;

  plane = (int64_t) f->width * f->height;
  count = n_slots * plane;
  if (count == 0)
    return cudaSuccess;

  small = cbi_k_fits_int (3 * count)
      && cbi_k_fits_int (n_frames * plane * f->pixel_stride);
  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (small && f->pixel_stride == 4)
    CBI_K_LAUNCH ((cbi_k_pack_kernel<int, 4>), blocks, CBI_K_THREADS, 0, stream,
        frames, tensor, *f, (int) plane, (int) count, n_frames, repeat_last);
  else if (small)
    CBI_K_LAUNCH ((cbi_k_pack_kernel<int, 3>), blocks, CBI_K_THREADS, 0, stream,
        frames, tensor, *f, (int) plane, (int) count, n_frames, repeat_last);
  else if (f->pixel_stride == 4)
    CBI_K_LAUNCH ((cbi_k_pack_kernel<int64_t, 4>), blocks, CBI_K_THREADS, 0,
        stream, frames, tensor, *f, plane, count, n_frames, repeat_last);
  else
    CBI_K_LAUNCH ((cbi_k_pack_kernel<int64_t, 3>), blocks, CBI_K_THREADS, 0,
        stream, frames, tensor, *f, plane, count, n_frames, repeat_last);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
