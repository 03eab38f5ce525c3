/* cudabatchinfer: host frame packing and unpacking
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbiframes.h"

#include <math.h>
#include <string.h>

static void
pack_one (const CbiFrameBatch * b, const guint8 * src, gint stride,
    gfloat * dst)
{
  const gsize plane = (gsize) b->width * b->height;
  guint x, y, c;

  for (y = 0; y < b->height; y++) {
    const guint8 *row = src + (gsize) y * stride;
    gfloat *d = dst + (gsize) y * b->width;
    for (x = 0; x < b->width; x++) {
      const guint8 *px = row + (gsize) x * b->pixel_stride;
      for (c = 0; c < 3; c++)
        d[c * plane + x] = px[b->rgb_offset[c]] * b->scale;
    }
  }
}

void
cbi_pack_frames (const CbiFrameBatch * b, gfloat * tensor)
{
  const gsize slot = (gsize) 3 * b->width * b->height;
  guint i;

  for (i = 0; i < b->n_frames; i++)
    pack_one (b, b->in[i], b->in_stride[i], tensor + i * slot);

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

void
cbi_unpack_frames (const CbiFrameBatch * b, const gfloat * tensor)
{
  const gsize plane = (gsize) b->width * b->height;
  const gfloat inv_scale = 1.0f / b->scale;
  guint i, x, y, c;

  for (i = 0; i < b->n_frames; i++) {
    const gfloat *t = tensor + i * 3 * plane;
    for (y = 0; y < b->height; y++) {
      const guint8 *in = b->in[i] + (gsize) y * b->in_stride[i];
      guint8 *out = b->out[i] + (gsize) y * b->out_stride[i];
      const gfloat *s = t + (gsize) y * b->width;
      for (x = 0; x < b->width; x++) {
        guint8 *px = out + (gsize) x * b->pixel_stride;
        for (c = 0; c < 3; c++)
          px[b->rgb_offset[c]] = to_byte (s[c * plane + x], inv_scale);
        if (b->extra_offset >= 0)
          px[b->extra_offset] =
              in[(gsize) x * b->pixel_stride + b->extra_offset];
      }
    }
  }
}
