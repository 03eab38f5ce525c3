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

/* Where unpacking reads each byte of a pixel: per colour byte the
 * channel's plane offset and its inverse mapping. */
typedef struct
{
  gsize src[4];
  gfloat inv[4];
  gfloat off[4];
  guint channels;
  gboolean copy_extra;
} CbiUnpackMap;

G_ALWAYS_INLINE static inline void
unpack_row (const CbiFrameBatch * b, const CbiUnpackMap * m, const gfloat * s,
    const guint8 * in, guint8 * out, guint width, const guint pstride)
{
  guint x, c;

  for (x = 0; x < width; x++) {
    guint8 *px = out + (gsize) x * pstride;
    for (c = 0; c < 3; c++)
      px[b->rgb_offset[c]] = to_byte (s[m->src[c] + x], m->inv[c], m->off[c]);
    if (pstride == 4) {
      if (m->channels == 4)
        px[b->extra_offset] = to_byte (s[m->src[3] + x], m->inv[3], 0.0f);
      else
        px[b->extra_offset] = m->copy_extra ?
            in[(gsize) x * 4 + b->extra_offset] : 255;
    }
  }
}

void
cbi_unpack_frames (const CbiFrameBatch * b, const gfloat * tensor)
{
  const guint width = b->out_width ? b->out_width : b->width;
  const guint height = b->out_height ? b->out_height : b->height;
  const gsize plane = (gsize) width * height;
  const gint rows = (gint) (b->n_frames * height);
  CbiUnpackMap m;
  guint c;
  gint row;

  m.channels = b->out_channels ? b->out_channels : 3;
  m.copy_extra = width == b->width && height == b->height;
  for (c = 0; c < 4; c++) {
    /* grey goes to every colour byte through channel 0's mapping; the
     * fourth channel is scaled as channel 0 */
    guint k = m.channels == 1 || c == 3 ? 0 : c;
    m.src[c] = (m.channels == 1 ? 0 : c) * plane;
    m.inv[c] = 1.0f / b->scale[k];
    m.off[c] = -b->bias[k] * m.inv[c];
  }

#pragma omp parallel for schedule(static)
  for (row = 0; row < rows; row++) {
    guint f = row / height, y = row % height;
    const gfloat *s = tensor + f * m.channels * plane + (gsize) y * width;
    const guint8 *in = m.copy_extra ?
        b->in[f] + (gsize) y * b->in_stride[f] : NULL;
    guint8 *out = b->out[f] + (gsize) y * b->out_stride[f];
    if (b->pixel_stride == 4)
      unpack_row (b, &m, s, in, out, width, 4);
    else
      unpack_row (b, &m, s, in, out, width, 3);
  }
}
