/* cudabatchinfer: the CPU backend's frame packing and unpacking
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One pass each way, rows spread over the OpenMP threads oneDNN already
 * runs on. The pixel stride is made a compile-time constant per format
 * family so the inner loops have fixed strides.
 */
#include "cpu/frames.h"
#include "cpu/wide.h"
#include "cbimath.h"
#include "cbiframes.h"

#include <math.h>
#include <string.h>

/* Pixels scaled at a time into a buffer on the stack: a row of a frame
 * of another size than the model's is scaled in pieces of this many. */
#define SCALE_CHUNK 256

/* @n pixels of a row into NCHW planes @plane apart at @d, a vector of
 * pixels at a time: the iterations are independent, which GCC cannot
 * prove of stores through a float pointer next to reads through a byte
 * one. */
G_ALWAYS_INLINE static inline void
pack_row (const CbiFrameBatch * b, const guint8 * src, gfloat * d,
    const gsize plane, const guint pstride, const guint n)
{
  const guint o0 = b->rgb_offset[0], o1 = b->rgb_offset[1];
  const guint o2 = b->rgb_offset[2];
  const gfloat s0 = b->scale[0], s1 = b->scale[1], s2 = b->scale[2];
  const gfloat b0 = b->bias[0], b1 = b->bias[1], b2 = b->bias[2];
  guint x;

#pragma omp simd
  for (x = 0; x < n; x++) {
    const guint8 *px = src + (gsize) x * pstride;
    d[x] = cbi_from_byte (px[o0], s0, b0);
    d[x + plane] = cbi_from_byte (px[o1], s1, b1);
    d[x + 2 * plane] = cbi_from_byte (px[o2], s2, b2);
  }
}

/* A row into NCHW planes @plane apart, built for wider vectors (the
 * frames' OpenMP region is one function whatever its caller's clone). */
CBI_CPU_WIDE static void
pack_row_planar (const CbiFrameBatch * b, const guint8 * src, gfloat * d,
    const gsize plane, const guint pstride, const guint n)
{
  if (pstride == 4)
    pack_row (b, src, d, plane, 4, n);
  else
    pack_row (b, src, d, plane, 3, n);
}

/* Pixels of a row packed or unpacked at a time: their bytes, on the
 * stack. */
#define ROW_CHUNK 256

/* Two per-channel factors repeated along a channels-last row: value j of
 * a row is channel j mod its channels, so that a loop over the row's
 * values takes each one's by its index (packing: the scale and bias;
 * unpacking: the inverse mapping). */
typedef struct
{
  gfloat a[4 * ROW_CHUNK], b[4 * ROW_CHUNK];
} RowPeriodic;

static void
row_periodic_init (RowPeriodic * p, const gfloat * a, const gfloat * b,
    guint channels)
{
  guint j;

  for (j = 0; j < channels * ROW_CHUNK; j++) {
    p->a[j] = a[j % channels];
    p->b[j] = b[j % channels];
  }
}

/* cbi_bf16_from_float () of a value that is not NaN (infinities
 * included), without the NaN case's compare and blend, which cost as much
 * as the rest of the packing loop */
G_ALWAYS_INLINE static inline guint16
bf16_from_number (gfloat f)
{
  const guint32 x = cbi_float_bits (f);

  return (guint16) ((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* A row into channels last at @d, each value as pack_row () computes it
 * (floats, or with @bf16 their bfloat16 roundings; @numbers: the batch's
 * scales and biases are finite, so no value is NaN): the pixels' bytes in
 * the model's order (the row itself where they are so already: RGB into
 * RGB), then a loop over the values that vectorises. */
G_ALWAYS_INLINE static inline void
pack_interleaved (const CbiFrameBatch * b, const RowPeriodic * per,
    const guint8 * src, gpointer d, const guint pstride, const guint n,
    const gboolean bf16, const gboolean numbers)
{
  const guint o0 = b->rgb_offset[0], o1 = b->rgb_offset[1];
  const guint o2 = b->rgb_offset[2];
  const gboolean same_order = pstride == 3 && o0 == 0 && o1 == 1 && o2 == 2;
  guint8 bytes[3 * ROW_CHUNK];
  guint x0, x, j;

  for (x0 = 0; x0 < n; x0 += ROW_CHUNK) {
    const guint m = MIN (ROW_CHUNK, n - x0);
    const guint8 *v = src + (gsize) x0 * pstride;
    gfloat *o = (gfloat *) d + (gsize) x0 * 3;
    guint16 *h = (guint16 *) d + (gsize) x0 * 3;
    if (!same_order) {
      for (x = 0; x < m; x++) {
        const guint8 *px = v + (gsize) x * pstride;
        bytes[3 * x] = px[o0];
        bytes[3 * x + 1] = px[o1];
        bytes[3 * x + 2] = px[o2];
      }
      v = bytes;
    }
    if (bf16 && numbers) {
#pragma omp simd
      for (j = 0; j < 3 * m; j++)
        h[j] = bf16_from_number (cbi_from_byte (v[j], per->a[j], per->b[j]));
    } else if (bf16) {
#pragma omp simd
      for (j = 0; j < 3 * m; j++)
        h[j] = cbi_bf16_from_float (cbi_from_byte (v[j], per->a[j], per->b[j]));
    } else {
#pragma omp simd
      for (j = 0; j < 3 * m; j++)
        o[j] = cbi_from_byte (v[j], per->a[j], per->b[j]);
    }
  }
}

/* pack_interleaved () into floats and into bfloat16, built for AVX-512
 * and AVX2 too */
CBI_CPU_WIDE static void
pack_row_interleaved (const CbiFrameBatch * b, const RowPeriodic * per,
    const guint8 * src, gfloat * d, const guint pstride, const guint n)
{
  pack_interleaved (b, per, src, d, pstride, n, FALSE, FALSE);
}

CBI_CPU_WIDE static void
pack_row_interleaved_bf16 (const CbiFrameBatch * b, const RowPeriodic * per,
    const guint8 * src, guint16 * d, const guint pstride, const guint n,
    const gboolean numbers)
{
  if (numbers)
    pack_interleaved (b, per, src, d, pstride, n, TRUE, TRUE);
  else
    pack_interleaved (b, per, src, d, pstride, n, TRUE, FALSE);
}

/* A row at element @at of @tensor: planar by pack_row_planar (), channels
 * last by pack_row_interleaved () with @per, or its bfloat16 form with
 * @bf16 (channels last only; @numbers as pack_interleaved ()) */
G_ALWAYS_INLINE static inline void
pack_row_in (const CbiFrameBatch * b, const RowPeriodic * per,
    const guint8 * src, gpointer tensor, gsize at, const gsize xs,
    const gsize cs, const guint pstride, const guint n, const gboolean bf16,
    const gboolean numbers)
{
  if (bf16)
    pack_row_interleaved_bf16 (b, per, src, (guint16 *) tensor + at, pstride,
        n, numbers);
  else if (xs == 1)
    pack_row_planar (b, src, (gfloat *) tensor + at, cs, pstride, n);
  else
    pack_row_interleaved (b, per, src, (gfloat *) tensor + at, pstride, n);
}

/* cbi_yuv_term () in 16-bit lanes (the byte's two's complement repeated,
 * a high-half product: one instruction where there are such vectors) */
G_ALWAYS_INLINE static inline gint16
yuv_term16 (guint8 byte, gint16 k)
{
  const gint16 w = (gint16) (guint16) ((guint16) (byte ^ 0x80) * 257u);

  return (gint16) (((gint32) w * k) >> 16);
}

/* cbi_yuv_clamp () of a 16-bit sum */
G_ALWAYS_INLINE static inline guint8
yuv_clamp16 (gint16 v)
{
  return (guint8) (CLAMP (v, -128, 127) + 128);
}

/* yuv_row ()'s bytes as three planes (red, green, blue), a pair of
 * pixels and their chroma at a time: loads and stores in groups of two
 * bytes, which vectorise, where a chroma index of x / 2, 3-byte pixels or
 * float stores in pairs do not */
G_ALWAYS_INLINE static inline void
yuv_planes (const gint32 * k, const guint8 * luma, const guint8 * cb,
    const guint8 * cr, const guint step, const guint n, guint8 * restrict r,
    guint8 * restrict g, guint8 * restrict bl)
{
  const gint16 k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4];
  const guint pairs = n / 2;
  guint j;

#pragma omp simd
  for (j = 0; j < pairs; j++) {
    const guint8 u = cb[j * step], v = cr[j * step];
    const gint16 rv = yuv_term16 (v, k1);
    const gint16 guv = yuv_term16 (u, k3) + yuv_term16 (v, k4);
    const gint16 bu = yuv_term16 (u, k2);
    const gint16 l0 = yuv_term16 (luma[2 * j], k0);
    const gint16 l1 = yuv_term16 (luma[2 * j + 1], k0);
    r[2 * j] = yuv_clamp16 (l0 + rv);
    r[2 * j + 1] = yuv_clamp16 (l1 + rv);
    g[2 * j] = yuv_clamp16 (l0 + guv);
    g[2 * j + 1] = yuv_clamp16 (l1 + guv);
    bl[2 * j] = yuv_clamp16 (l0 + bu);
    bl[2 * j + 1] = yuv_clamp16 (l1 + bu);
  }
  if (n % 2) {
    const guint8 u = cb[pairs * step], v = cr[pairs * step];
    const gint16 l = yuv_term16 (luma[n - 1], k0);
    r[n - 1] = yuv_clamp16 (l + yuv_term16 (v, k1));
    g[n - 1] = yuv_clamp16 (l + yuv_term16 (u, k3) + yuv_term16 (v, k4));
    bl[n - 1] = yuv_clamp16 (l + yuv_term16 (u, k2));
  }
}

/* Row @y of 4:2:0 frame @f of @b into NCHW planes @plane apart at @d, a
 * piece at a time: its R'G'B' bytes as planes, then each model channel's
 * values from its colour's plane. Built for wider vectors. */
CBI_CPU_WIDE static void
pack_row_yuv_planar (const CbiFrameBatch * b, guint f, guint y, gfloat * d,
    const gsize plane)
{
  const guint8 *luma = b->in[f] + (gsize) y * b->in_stride[f];
  const gsize at = (gsize) (y / 2) * b->in_chroma_stride[f];
  const guint8 *cb = b->in_cb[f] + at, *cr = b->in_cr[f] + at;
  const gint32 *k = b->yuv[f].to_rgb;
  guint8 rgb[3][ROW_CHUNK];
  guint x0, x, c;

  /* pieces of an even width, so that each starts a chroma sample */
  for (x0 = 0; x0 < b->width; x0 += ROW_CHUNK) {
    const guint n = MIN (ROW_CHUNK, b->width - x0);
    const gsize ca = (gsize) (x0 / 2) * b->chroma_step;
    if (b->chroma_step == 2)
      yuv_planes (k, luma + x0, cb + ca, cr + ca, 2, n, rgb[0], rgb[1], rgb[2]);
    else
      yuv_planes (k, luma + x0, cb + ca, cr + ca, 1, n, rgb[0], rgb[1], rgb[2]);
    for (c = 0; c < 3; c++) {
      const guint8 *v = rgb[b->rgb_offset[c]];
      const gfloat sc = b->scale[c], bc = b->bias[c];
      gfloat *o = d + c * plane + x0;
#pragma omp simd
      for (x = 0; x < n; x++)
        o[x] = cbi_from_byte (v[x], sc, bc);
    }
  }
}

/* Pixels @x (even) to @x + @n (at most ROW_CHUNK) of row @y of 4:2:0
 * frame @f of @b as 3-byte pixels in the model's channel order at
 * @bytes, for a channels-last pack. Built for wider vectors. */
CBI_CPU_WIDE static void
yuv_row_model_order (const CbiFrameBatch * b, guint f, guint y, guint x,
    guint n, guint8 * bytes)
{
  const guint8 *luma = b->in[f] + (gsize) y * b->in_stride[f] + x;
  const gsize at = (gsize) (y / 2) * b->in_chroma_stride[f]
      + (gsize) (x / 2) * b->chroma_step;
  const guint8 *cb = b->in_cb[f] + at, *cr = b->in_cr[f] + at;
  const gint32 *k = b->yuv[f].to_rgb;
  guint8 rgb[3][ROW_CHUNK];
  const guint8 *c0 = rgb[b->rgb_offset[0]], *c1 = rgb[b->rgb_offset[1]];
  const guint8 *c2 = rgb[b->rgb_offset[2]];
  guint i;

  if (b->chroma_step == 2)
    yuv_planes (k, luma, cb, cr, 2, n, rgb[0], rgb[1], rgb[2]);
  else
    yuv_planes (k, luma, cb, cr, 1, n, rgb[0], rgb[1], rgb[2]);
#pragma omp simd
  for (i = 0; i < n; i++) {
    bytes[3 * i] = c0[i];
    bytes[3 * i + 1] = c1[i];
    bytes[3 * i + 2] = c2[i];
  }
}

/* @tensor: floats, or bfloat16 values with @bf16 (channels last only) */
G_ALWAYS_INLINE static inline void
pack_frames (const CbiFrameBatch * b, gpointer tensor,
    const gboolean channels_last, const gboolean bf16)
{
  const gsize plane = (gsize) b->width * b->height;
  const gsize slot = 3 * plane;
  const gsize xs = channels_last ? 3 : 1, cs = channels_last ? 1 : plane;
  const gsize esize = bf16 ? sizeof (guint16) : sizeof (gfloat);
  const gint rows = (gint) (b->n_frames * b->height);
  const gboolean scales = cbi_frame_batch_scales (b);
  gboolean numbers = TRUE;
  CbiFrameBatch ordered;
  RowPeriodic per;
  gint row;
  guint i;

  for (i = 0; i < 3; i++)
    numbers = numbers && isfinite (b->scale[i]) && isfinite (b->bias[i]);

  if (channels_last)
    row_periodic_init (&per, b->scale, b->bias, 3);
  /* 4:2:0 rows come to the channels-last pack in the model's order */
  ordered = *b;
  for (i = 0; i < 3; i++)
    ordered.rgb_offset[i] = i;
#pragma omp parallel for schedule(static)
  for (row = 0; row < rows; row++) {
    guint f = row / b->height, y = row % b->height;
    /* a scaled frame is read through its own size */
    const guint8 *src = scales || b->layout == CBI_PIXELS_YUV420 ? NULL :
        b->in[f] + (gsize) y * b->in_stride[f];
    const gsize at = f * slot + (gsize) y * b->width * xs;
    if (scales) {
      guint8 scaled[SCALE_CHUNK * 4];
      guint x, n;
      for (x = 0; x < b->width; x += n) {
        n = MIN (SCALE_CHUNK, b->width - x);
        cbi_frame_batch_scale_row_in (b, f, y, x, n, scaled);
        pack_row_in (b, &per, scaled, tensor, at + x * xs, xs, cs,
            b->pixel_stride, n, bf16, numbers);
      }
    } else if (b->layout == CBI_PIXELS_YUV420 && !bf16 && xs == 1) {
      pack_row_yuv_planar (b, f, y, (gfloat *) tensor + at, cs);
    } else if (b->layout == CBI_PIXELS_YUV420) {
      /* converted a piece at a time, while the piece is in cache, to
       * bytes in the model's order, which the channels-last pack takes
       * as they are */
      guint8 bytes[ROW_CHUNK * 3];
      guint x, n;
      for (x = 0; x < b->width; x += n) {
        n = MIN (ROW_CHUNK, b->width - x);
        yuv_row_model_order (b, f, y, x, n, bytes);
        pack_row_in (&ordered, &per, bytes, tensor, at + x * xs, xs, cs, 3,
            n, bf16, numbers);
      }
    } else if (b->pixel_stride == 4) {
      pack_row_in (b, &per, src, tensor, at, xs, cs, 4, b->width, bf16,
          numbers);
    } else {
      pack_row_in (b, &per, src, tensor, at, xs, cs, 3, b->width, bf16,
          numbers);
    }
  }

  /* a slot is 3 planes in either layout */
  for (i = b->n_frames; i < b->n_slots; i++) {
    gint64 source = cbi_pack_source (i, b->n_frames,
        b->pad_mode == CBI_PAD_REPEAT_LAST);
    guint8 *to = (guint8 *) tensor + i * slot * esize;
    if (source >= 0)
      memcpy (to, (guint8 *) tensor + source * slot * esize, slot * esize);
    else
      memset (to, 0, slot * esize);
  }
}

void
cbi_pack_frames (const CbiFrameBatch * b, gfloat * tensor)
{
  pack_frames (b, tensor, FALSE, FALSE);
}

void
cbi_pack_frames_channels_last (const CbiFrameBatch * b, gfloat * tensor)
{
  pack_frames (b, tensor, TRUE, FALSE);
}

void
cbi_pack_frames_channels_last_bf16 (const CbiFrameBatch * b, guint16 * tensor)
{
  pack_frames (b, tensor, TRUE, TRUE);
}

/* A row of @width pixels, the same bytes as unpack_row (): each model
 * channel's bytes computed in a loop that vectorises (built for AVX-512
 * and AVX2 too), planar (@per NULL: channel k's values at @s + k x
 * @plane) or channels last (@per: the mappings along the row), then laid
 * into the pixels. */
CBI_CPU_WIDE static void
unpack_row_chunked (const CbiFrameBatch * b, const CbiUnpackMap * m,
    const RowPeriodic * per, const gfloat * s, gsize plane,
    gboolean copy_extra, const guint8 * in, guint8 * out, guint width)
{
  const guint ps = b->pixel_stride, nc = m->channels;
  /* model channel k's byte of pixel x: at [k x ROW_CHUNK + x] planar,
   * [x nc + k] channels last */
  guint8 bytes[4 * ROW_CHUNK];
  /* each pixel's bytes are the model's values in order */
  const gboolean same_order = ps == nc && b->rgb_offset[0] == 0
      && b->rgb_offset[1] == 1 && b->rgb_offset[2] == 2
      && (ps == 3 || b->extra_offset == 3);
  guint x0, x, c;

  for (x0 = 0; x0 < width; x0 += ROW_CHUNK) {
    const guint n = MIN (ROW_CHUNK, width - x0);
    if (per) {
      const gfloat *p = s + (gsize) x0 * nc;
#pragma omp simd
      for (x = 0; x < n * nc; x++)
        bytes[x] = cbi_to_byte (p[x], per->a[x], per->b[x]);
    } else {
      for (c = 0; c < nc; c++) {
        const gfloat *p = s + c * plane + x0;
        const gfloat inv = m->inv[c], off = m->off[c];
        guint8 *d = bytes + c * ROW_CHUNK;
#pragma omp simd
        for (x = 0; x < n; x++)
          d[x] = cbi_to_byte (p[x], inv, off);
      }
    }
    if (per && same_order) {
      /* the model's channels in the pixel's order: the row as it is */
      memcpy (out + (gsize) x0 * ps, bytes, (gsize) n * ps);
      continue;
    }
    for (c = 0; c < ps; c++) {
      const guint k = c < 3 ? m->src[c] : 3;
      guint8 *o = out + (gsize) x0 * ps + (c < 3 ? b->rgb_offset[c] :
          (guint) b->extra_offset);
      if (c == 3 && nc < 4 && copy_extra) {
        const guint8 *e = in + (gsize) x0 * 4 + b->extra_offset;
        for (x = 0; x < n; x++)
          o[(gsize) x * 4] = e[(gsize) x * 4];
      } else if (c == 3 && nc < 4) {
        for (x = 0; x < n; x++)
          o[(gsize) x * 4] = 255;
      } else if (per) {
        for (x = 0; x < n; x++)
          o[(gsize) x * ps] = bytes[x * nc + k];
      } else {
        for (x = 0; x < n; x++)
          o[(gsize) x * ps] = bytes[k * ROW_CHUNK + x];
      }
    }
  }
}

/* One output channel of a scaled frame: the four values around its
 * position as bytes, mixed as cbi_frame_batch_scale_row_out() mixes the
 * bytes a GPU unpacked, so that both give the same frame. */
G_ALWAYS_INLINE static inline guint8
unpack_mix (const gfloat * p00, const gfloat * p01, const gfloat * p10,
    const gfloat * p11, gsize at, gfloat inv, gfloat off, guint fx, guint fy)
{
  return cbi_scale_mix (cbi_to_byte (p00[at], inv, off), cbi_to_byte (p01[at],
          inv, off), cbi_to_byte (p10[at], inv, off), cbi_to_byte (p11[at],
          inv, off), fx, fy);
}

/* Pixels @x .. @x + @n - 1 of row @y of output frame @f, scaled from its
 * window @w of the model's output for it, @slot (@width x @height;
 * channel k at k x @cs, pixel steps @xs), to @px in the frames' pixel
 * layout. */
static void
unpack_scaled_row (const CbiFrameBatch * b, const CbiUnpackMap * m,
    const gfloat * slot, const CbiScaleWindow * w, guint width, gsize xs,
    gsize cs, guint f, guint y, guint x, guint n, guint8 * out)
{
  const guint ow = b->out_frame_width[f], oh = b->out_frame_height[f];
  const guint ps = b->pixel_stride;
  guint y0, y1, i, x0, x1, c, fx, fy;
  CbiScaleWalk walk;

  cbi_scale_walk_init (&walk, y, oh, w->y, w->height);
  cbi_scale_walk_next (&walk, &y0, &y1, &fy);
  cbi_scale_walk_init (&walk, x, ow, w->x, w->width);
  for (i = 0; i < n; i++) {
    const gfloat *p00, *p01, *p10, *p11;
    guint8 *px = out + (gsize) i * ps;

    cbi_scale_walk_next (&walk, &x0, &x1, &fx);
    p00 = slot + ((gsize) y0 * width + x0) * xs;
    p01 = slot + ((gsize) y0 * width + x1) * xs;
    p10 = slot + ((gsize) y1 * width + x0) * xs;
    p11 = slot + ((gsize) y1 * width + x1) * xs;
    for (c = 0; c < 3; c++)
      px[b->rgb_offset[c]] = unpack_mix (p00, p01, p10, p11,
          m->src[c] * cs, m->inv[c], m->off[c], fx, fy);
    if (ps == 4)
      px[b->extra_offset] = m->channels == 4 ? unpack_mix (p00, p01, p10,
          p11, 3 * cs, m->inv[3], m->off[3], fx, fy) : 255;
  }
}

/* Output frames of their own sizes: each is its window of the model's
 * output, scaled; 4:2:0 ones two rows at a time, a piece at a time. */
static void
unpack_scaled (const CbiFrameBatch * b, const gfloat * tensor,
    const gboolean channels_last)
{
  const guint width = b->out_width ? b->out_width : b->width;
  const guint height = b->out_height ? b->out_height : b->height;
  const gsize plane = (gsize) width * height;
  const gboolean yuv = b->layout == CBI_PIXELS_YUV420;
  CbiUnpackMap m;
  gsize xs, cs;
  guint f;

  cbi_unpack_map_init (&m, b->out_channels ? b->out_channels : 3,
      b->out_scale, b->out_offset);
  xs = channels_last ? m.channels : 1;
  cs = channels_last ? 1 : plane;

  for (f = 0; f < b->n_frames; f++) {
    const gfloat *slot = tensor + f * m.channels * plane;
    const guint ow = b->out_frame_width[f], oh = b->out_frame_height[f];
    const gint rows = yuv ? (gint) ((oh + 1) / 2) : (gint) oh;
    CbiScaleWindow w;
    gint r;

    cbi_frame_batch_out_window (b, f, &w);
#pragma omp parallel for schedule(static)
    for (r = 0; r < rows; r++) {
      guint8 rgb[2][ROW_CHUNK * 3];
      guint x, n, y = 2 * (guint) r;
      if (!yuv) {
        unpack_scaled_row (b, &m, slot, &w, width, xs, cs, f, r, 0, ow,
            b->out[f] + (gsize) r * b->out_stride[f]);
        continue;
      }
      for (x = 0; x < ow; x += n) {
        n = MIN (ROW_CHUNK, ow - x);
        unpack_scaled_row (b, &m, slot, &w, width, xs, cs, f, y, x, n, rgb[0]);
        if (y + 1 < oh)
          unpack_scaled_row (b, &m, slot, &w, width, xs, cs, f, y + 1, x, n,
              rgb[1]);
        cbi_frame_batch_yuv_rows_out (b, f, y, x, n, rgb[0],
            y + 1 < oh ? rgb[1] : NULL);
      }
    }
  }
}

/* Rows @y and @y + 1 (where there is one) of 4:2:0 output frame @f from
 * @s, the model's output for row @y (row @y + 1 @row_step values on): a
 * piece at a time unpacked to R'G'B' bytes and converted. */
static void
unpack_yuv_rows (const CbiFrameBatch * b, const CbiUnpackMap * m,
    const RowPeriodic * per, const gfloat * s, gsize row_step, gsize plane,
    gsize xs, guint f, guint y, guint width, guint height)
{
  guint8 rgb[2][ROW_CHUNK * 3];
  const gboolean two = y + 1 < height;
  guint x, n;

  for (x = 0; x < width; x += n) {
    n = MIN (ROW_CHUNK, width - x);
    unpack_row_chunked (b, m, per, s + x * xs, plane, FALSE, NULL, rgb[0], n);
    if (two)
      unpack_row_chunked (b, m, per, s + row_step + x * xs, plane, FALSE,
          NULL, rgb[1], n);
    cbi_frame_batch_yuv_rows_out (b, f, y, x, n, rgb[0], two ? rgb[1] : NULL);
  }
}

G_ALWAYS_INLINE static inline void
unpack_frames (const CbiFrameBatch * b, const gfloat * tensor,
    const gboolean channels_last)
{
  const guint width = b->out_width ? b->out_width : b->width;
  const guint height = b->out_height ? b->out_height : b->height;
  const gsize plane = (gsize) width * height;
  const gint rows = (gint) (b->n_frames * height);
  /* the fourth byte passes through only where the size is the input's */
  const gboolean copy_extra = width == b->width && height == b->height;
  CbiUnpackMap m;
  RowPeriodic per;
  gsize xs;
  gint row;

  if (cbi_frame_batch_scales (b)) {
    unpack_scaled (b, tensor, channels_last);
    return;
  }
  cbi_unpack_map_init (&m, b->out_channels ? b->out_channels : 3,
      b->out_scale, b->out_offset);
  xs = channels_last ? m.channels : 1;
  if (channels_last)
    row_periodic_init (&per, m.inv, m.off, m.channels);

  if (b->layout == CBI_PIXELS_YUV420) {
    const guint pairs = (height + 1) / 2;
#pragma omp parallel for schedule(static)
    for (row = 0; row < (gint) (b->n_frames * pairs); row++) {
      guint f = row / pairs, y = 2 * (row % pairs);
      unpack_yuv_rows (b, &m, channels_last ? &per : NULL,
          tensor + f * m.channels * plane + (gsize) y * width * xs,
          (gsize) width * xs, plane, xs, f, y, width, height);
    }
    return;
  }
#pragma omp parallel for schedule(static)
  for (row = 0; row < rows; row++) {
    guint f = row / height, y = row % height;
    const gfloat *s = tensor + f * m.channels * plane + (gsize) y * width * xs;
    const guint8 *in = copy_extra ?
        b->in[f] + (gsize) y * b->in_stride[f] : NULL;
    guint8 *out = b->out[f] + (gsize) y * b->out_stride[f];
    unpack_row_chunked (b, &m, channels_last ? &per : NULL, s, plane,
        copy_extra, in, out, width);
  }
}

void
cbi_unpack_frames (const CbiFrameBatch * b, const gfloat * tensor)
{
  unpack_frames (b, tensor, FALSE);
}

void
cbi_unpack_frames_channels_last (const CbiFrameBatch * b, const gfloat * tensor)
{
  unpack_frames (b, tensor, TRUE);
}
