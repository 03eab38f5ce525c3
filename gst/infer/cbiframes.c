/* cudabatchinfer: host frame packing and unpacking
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One pass each way, rows spread over the OpenMP threads oneDNN already
 * runs on. The pixel stride is made a compile-time constant per format
 * family so the inner loops have fixed strides.
 */
#include "cbiframes.h"

#include <string.h>

G_ALWAYS_INLINE static inline void
pack_row (const CbiFrameBatch * b, const guint8 * src, gfloat * d,
    gsize plane, const guint pstride)
{
  const guint o0 = b->rgb_offset[0], o1 = b->rgb_offset[1];
  const guint o2 = b->rgb_offset[2];
  const gfloat s0 = b->scale[0], s1 = b->scale[1], s2 = b->scale[2];
  const gfloat b0 = b->bias[0], b1 = b->bias[1], b2 = b->bias[2];
  guint x;

  for (x = 0; x < b->width; x++) {
    const guint8 *px = src + (gsize) x * pstride;
    d[x] = px[o0] * s0 + b0;
    d[plane + x] = px[o1] * s1 + b1;
    d[2 * plane + x] = px[o2] * s2 + b2;
  }
}

void
cbi_pack_frames (const CbiFrameBatch * b, gfloat * tensor)
{
  const gsize plane = (gsize) b->width * b->height;
  const gsize slot = 3 * plane;
  const gint rows = (gint) (b->n_frames * b->height);
  gint row;
  guint i;

#pragma omp parallel for schedule(static)
  for (row = 0; row < rows; row++) {
    guint f = row / b->height, y = row % b->height;
    const guint8 *src = b->in[f] + (gsize) y * b->in_stride[f];
    gfloat *d = tensor + f * slot + (gsize) y * b->width;
    if (b->pixel_stride == 4)
      pack_row (b, src, d, plane, 4);
    else
      pack_row (b, src, d, plane, 3);
  }

  for (i = b->n_frames; i < b->n_slots; i++) {
    if (b->pad_mode == CBI_PAD_REPEAT_LAST && b->n_frames > 0)
      memcpy (tensor + i * slot, tensor + (b->n_frames - 1) * slot,
          slot * sizeof (gfloat));
    else
      memset (tensor + i * slot, 0, slot * sizeof (gfloat));
  }
}

/* byte = (v - bias) / scale, rounded and clamped: @inv is 1 / scale and
 * @off is -bias / scale */
static inline guint8
to_byte (gfloat v, gfloat inv, gfloat off)
{
  gfloat s = v * inv + off + 0.5f;

  if (!(s > 0.0f))              /* also catches NaN */
    return 0;
  if (s >= 255.0f)
    return 255;
  return (guint8) s;
}

G_ALWAYS_INLINE static inline void
unpack_row (const CbiFrameBatch * b, const gfloat * s, const guint8 * in,
    guint8 * out, gsize plane, const guint pstride)
{
  const guint o0 = b->rgb_offset[0], o1 = b->rgb_offset[1];
  const guint o2 = b->rgb_offset[2];
  const gfloat i0 = 1.0f / b->scale[0], i1 = 1.0f / b->scale[1];
  const gfloat i2 = 1.0f / b->scale[2];
  const gfloat f0 = -b->bias[0] * i0, f1 = -b->bias[1] * i1;
  const gfloat f2 = -b->bias[2] * i2;
  guint x;

  for (x = 0; x < b->width; x++) {
    guint8 *px = out + (gsize) x * pstride;
    px[o0] = to_byte (s[x], i0, f0);
    px[o1] = to_byte (s[plane + x], i1, f1);
    px[o2] = to_byte (s[2 * plane + x], i2, f2);
    if (pstride == 4)
      px[b->extra_offset] = in[(gsize) x * 4 + b->extra_offset];
  }
}

void
cbi_unpack_frames (const CbiFrameBatch * b, const gfloat * tensor)
{
  const gsize plane = (gsize) b->width * b->height;
  const gint rows = (gint) (b->n_frames * b->height);
  gint row;

#pragma omp parallel for schedule(static)
  for (row = 0; row < rows; row++) {
    guint f = row / b->height, y = row % b->height;
    const gfloat *s = tensor + f * 3 * plane + (gsize) y * b->width;
    const guint8 *in = b->in[f] + (gsize) y * b->in_stride[f];
    guint8 *out = b->out[f] + (gsize) y * b->out_stride[f];
    if (b->pixel_stride == 4)
      unpack_row (b, s, in, out, plane, 4);
    else
      unpack_row (b, s, in, out, plane, 3);
  }
}
