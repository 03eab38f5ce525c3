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
  const guint r = b->rgb_offset[0], g = b->rgb_offset[1], bl = b->rgb_offset[2];
  const gfloat scale = b->scale;
  guint x;

  for (x = 0; x < b->width; x++) {
    const guint8 *px = src + (gsize) x * pstride;
    d[x] = px[r] * scale;
    d[plane + x] = px[g] * scale;
    d[2 * plane + x] = px[bl] * scale;
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

static inline guint8
to_byte (gfloat v, gfloat inv_scale)
{
  gfloat s = v * inv_scale + 0.5f;

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
  const guint r = b->rgb_offset[0], g = b->rgb_offset[1], bl = b->rgb_offset[2];
  const gfloat inv_scale = 1.0f / b->scale;
  guint x;

  for (x = 0; x < b->width; x++) {
    guint8 *px = out + (gsize) x * pstride;
    px[r] = to_byte (s[x], inv_scale);
    px[g] = to_byte (s[plane + x], inv_scale);
    px[bl] = to_byte (s[2 * plane + x], inv_scale);
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
