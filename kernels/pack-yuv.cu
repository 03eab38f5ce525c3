/* cudabatchinfer: 4:2:0 frames into the batch tensor
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per pixel of a slot: it reads the pixel's luma and the
 * chroma of its 2x2 block, converts them to R'G'B' bytes as the CPU does
 * (cbi_yuv_to_rgb ()), and writes its three channel values, or three
 * zeros, in one pass.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_pack_yuv_kernel (const uint8_t * frames, float *tensor, CbiKFrames f,
    CbiKYuv yuv, I plane, I count, I frame_bytes, int n_frames,
    int repeat_last)
{
  const I crow = (I) ((f.width + 1) / 2) * yuv.chroma_step;

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
      const uint8_t *luma = frames + src * frame_bytes;
      const uint8_t *chroma = luma + plane;
      I y = p / f.width, x = p - y * f.width;
      I c = (y / 2) * crow + (x / 2) * yuv.chroma_step;
      uint8_t rgb[3];
      cbi_yuv_to_rgb (yuv.to_rgb, luma[p], chroma[c + yuv.cb_offset],
          chroma[c + yuv.cr_offset], rgb);
      d[0] = cbi_from_byte (rgb[f.rgb_offset[0]], f.scale[0], f.bias[0]);
      d[plane] = cbi_from_byte (rgb[f.rgb_offset[1]], f.scale[1], f.bias[1]);
      d[2 * plane] = cbi_from_byte (rgb[f.rgb_offset[2]], f.scale[2],
          f.bias[2]);
    }
  }
}

cudaError_t
cbi_k_pack_yuv (const uint8_t * frames, float *tensor, const CbiKFrames * f,
    const CbiKYuv * yuv, int n_frames, int n_slots, int repeat_last,
    cudaStream_t stream)
{
  int64_t plane, count, frame_bytes;
  unsigned int blocks;
  int c;

  if (f == NULL || yuv == NULL || f->width < 0 || f->height < 0
      || n_frames < 0 || n_slots < 0 || n_frames > n_slots
      || (yuv->chroma_step != 1 && yuv->chroma_step != 2)
      || yuv->cb_offset < 0 || yuv->cr_offset < 0)
    return cudaErrorInvalidValue;
  for (c = 0; c < 3; c++)
    if (f->rgb_offset[c] < 0 || f->rgb_offset[c] > 2)
      return cudaErrorInvalidValue;

  plane = (int64_t) f->width * f->height;
  frame_bytes = cbi_k_yuv_frame_bytes (f->width, f->height);
  count = n_slots * plane;
  if (count == 0)
    return cudaSuccess;

  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (3 * count) && cbi_k_fits_int (n_frames * frame_bytes))
    CBI_K_LAUNCH ((cbi_k_pack_yuv_kernel<int>), blocks, CBI_K_THREADS, 0,
        stream, frames, tensor, *f, *yuv, (int) plane, (int) count,
        (int) frame_bytes, n_frames, repeat_last);
  else
    CBI_K_LAUNCH ((cbi_k_pack_yuv_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, frames, tensor, *f, *yuv, plane, count, frame_bytes,
        n_frames, repeat_last);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
