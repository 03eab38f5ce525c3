/* cudabatchinfer: the batch tensor back into frames
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per output pixel: it reads the pixel's channels from the
 * slot (one, three or four planes) and writes its three or four bytes,
 * rounded and clamped as on the CPU (cbi_to_byte ()).
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I, int PS>
/* *INDENT-ON* */
__global__ void
cbi_k_unpack_kernel (const float *tensor, const uint8_t * in_frames,
    uint8_t * out_frames, CbiKFrames f, CbiUnpackMap m, I plane, I count,
    int copy_extra)
{
  CBI_K_FOR (I, i, count) {
    I frame = i / plane;
    I p = i - frame * plane;
    const float *s = tensor + frame * m.channels * plane + p;
    uint8_t *px = out_frames + i * PS;
    int c;

    for (c = 0; c < 3; c++)
      px[f.rgb_offset[c]] = cbi_to_byte (s[m.src[c] * plane], m.inv[c],
          m.off[c]);
    if (PS == 4) {
      uint8_t extra = 255;
      if (m.channels == 4)
        extra = cbi_to_byte (s[3 * plane], m.inv[3], m.off[3]);
      else if (copy_extra)
        extra = in_frames[i * PS + f.extra_offset];
      px[f.extra_offset] = extra;
    }
  }
}

cudaError_t
cbi_k_unpack (const float *tensor, const uint8_t * in_frames,
    uint8_t * out_frames, const CbiKFrames * f, int channels, int out_width,
    int out_height, int n_frames, cudaStream_t stream)
{
  CbiUnpackMap m;
  int64_t plane, count;
  unsigned int blocks;
  bool small;
  int copy_extra, c;

  if (f == NULL || out_width < 0 || out_height < 0 || n_frames < 0
      || (channels != 1 && channels != 3 && channels != 4)
      || (f->pixel_stride != 3 && f->pixel_stride != 4)
      || (f->pixel_stride == 4 && (f->extra_offset < 0
              || f->extra_offset >= 4)))
    return cudaErrorInvalidValue;
  for (c = 0; c < 3; c++)
    if (f->rgb_offset[c] < 0 || f->rgb_offset[c] >= f->pixel_stride)
      return cudaErrorInvalidValue;

  plane = out_width * (int64_t) out_height;
  count = n_frames * plane;
  if (count == 0)
    return cudaSuccess;

  cbi_unpack_map_init (&m, channels, f->out_scale, f->out_offset);
  /* the fourth byte passes through only where the size is the input's */
  copy_extra = in_frames != NULL && out_width == f->width
      && out_height == f->height;

  small = cbi_k_fits_int (channels * count) && cbi_k_fits_int (4 * count);
  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (small && f->pixel_stride == 4)
    CBI_K_LAUNCH ((cbi_k_unpack_kernel<int, 4>), blocks, CBI_K_THREADS, 0,
        stream, tensor, in_frames, out_frames, *f, m, (int) plane, (int) count,
        copy_extra);
  else if (small)
    CBI_K_LAUNCH ((cbi_k_unpack_kernel<int, 3>), blocks, CBI_K_THREADS, 0,
        stream, tensor, in_frames, out_frames, *f, m, (int) plane, (int) count,
        copy_extra);
  else if (f->pixel_stride == 4)
    CBI_K_LAUNCH ((cbi_k_unpack_kernel<int64_t, 4>), blocks, CBI_K_THREADS, 0,
        stream, tensor, in_frames, out_frames, *f, m, plane, count, copy_extra);
  else
    CBI_K_LAUNCH ((cbi_k_unpack_kernel<int64_t, 3>), blocks, CBI_K_THREADS, 0,
        stream, tensor, in_frames, out_frames, *f, m, plane, count, copy_extra);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
