/* cudabatchinfer: a batch of frames as the engine sees them
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbiframes.h"
#include "cbimath.h"

#include <math.h>
#include <string.h>

/* Pixels of output rows converted to 4:2:0 at a time (even) */
#define OUT_CHUNK 256

void
cbi_frame_batch_map_output_back (CbiFrameBatch * b)
{
  guint c;

  for (c = 0; c < 3; c++)
    cbi_byte_mapping (b->scale[c], b->bias[c], &b->out_scale[c],
        &b->out_offset[c]);
}

void
cbi_yuv_matrix_init (CbiYuvMatrix * m, gdouble kr, gdouble kb,
    gboolean full_range)
{
  const gdouble kg = 1.0 - kr - kb;
  /* a byte's step in R'G'B' over its step in luma or chroma */
  const gdouble ys = full_range ? 1.0 : 255.0 / 219.0;
  const gdouble cs = full_range ? 1.0 : 255.0 / 224.0;

  /* rounded as videoconvert rounds its matrix, in 1/256 */
  m->to_rgb[0] = (gint32) rint (256.0 * ys);
  m->to_rgb[1] = (gint32) rint (256.0 * 2.0 * (1.0 - kr) * cs);
  m->to_rgb[2] = (gint32) rint (256.0 * 2.0 * (1.0 - kb) * cs);
  m->to_rgb[3] = (gint32) rint (-256.0 * 2.0 * kb * (1.0 - kb) / kg * cs);
  m->to_rgb[4] = (gint32) rint (-256.0 * 2.0 * kr * (1.0 - kr) / kg * cs);
  m->to_luma[0] = (gint32) rint (256.0 * kr / ys);
  m->to_luma[1] = (gint32) rint (256.0 * kg / ys);
  m->to_luma[2] = (gint32) rint (256.0 * kb / ys);
  m->to_luma[3] = full_range ? 0 : 16 * 256;
  m->to_cb[0] = (gint32) rint (256.0 * -kr / (2.0 * (1.0 - kb)) / cs);
  m->to_cb[1] = (gint32) rint (256.0 * -kg / (2.0 * (1.0 - kb)) / cs);
  m->to_cb[2] = (gint32) rint (256.0 * 0.5 / cs);
  m->to_cb[3] = 128 * 256;
  m->to_cr[0] = (gint32) rint (256.0 * 0.5 / cs);
  m->to_cr[1] = (gint32) rint (256.0 * -kg / (2.0 * (1.0 - kr)) / cs);
  m->to_cr[2] = (gint32) rint (256.0 * -kb / (2.0 * (1.0 - kr)) / cs);
  m->to_cr[3] = 128 * 256;
}

void
cbi_frame_batch_yuv_row (const CbiFrameBatch * b, guint f, guint y, guint x,
    guint n, guint8 * rgb)
{
  const guint8 *luma = b->in[f] + (gsize) y * b->in_stride[f];
  const gsize crow = (gsize) (y / 2) * b->in_chroma_stride[f];
  const guint8 *cb = b->in_cb[f] + crow, *cr = b->in_cr[f] + crow;
  const gint32 *k = b->yuv[f].to_rgb;
  const guint step = b->chroma_step;
  guint i;

  /* each chroma sample stands for the 2x2 pixels it covers, as in
   * videoconvert's I420 path */
  for (i = x; i < x + n; i++) {
    const gsize c = (gsize) (i / 2) * step;
    cbi_yuv_to_rgb (k, luma[i], cb[c], cr[c], rgb + (gsize) (i - x) * 3);
  }
}

void
cbi_frame_batch_yuv_rows_out (const CbiFrameBatch * b, guint f, guint y,
    guint x, guint n, const guint8 * rgb0, const guint8 * rgb1)
{
  const CbiYuvMatrix *m = &b->yuv[f];
  guint8 *l0 = b->out[f] + (gsize) y * b->out_stride[f];
  const gsize crow = (gsize) (y / 2) * b->out_chroma_stride[f];
  guint8 *cb = b->out_cb[f] + crow, *cr = b->out_cr[f] + crow;
  const guint step = b->chroma_step;
  guint i, j;

  for (i = 0; i < n; i++) {
    const guint8 *p = rgb0 + (gsize) i * 3;
    l0[x + i] = cbi_rgb_to_yuv (m->to_luma, p[0], p[1], p[2]);
  }
  if (rgb1) {
    guint8 *l1 = l0 + b->out_stride[f];
    for (i = 0; i < n; i++) {
      const guint8 *p = rgb1 + (gsize) i * 3;
      l1[x + i] = cbi_rgb_to_yuv (m->to_luma, p[0], p[1], p[2]);
    }
  }
  /* a chroma sample is the rounded mean of the (up to) 2x2 pixels' */
  for (i = 0; i < n; i += 2) {
    const guint w = MIN (2, n - i), count = w * (rgb1 ? 2 : 1);
    guint su = 0, sv = 0;
    for (j = 0; j < w; j++) {
      const guint8 *p = rgb0 + (gsize) (i + j) * 3;
      su += cbi_rgb_to_yuv (m->to_cb, p[0], p[1], p[2]);
      sv += cbi_rgb_to_yuv (m->to_cr, p[0], p[1], p[2]);
      if (rgb1) {
        p = rgb1 + (gsize) (i + j) * 3;
        su += cbi_rgb_to_yuv (m->to_cb, p[0], p[1], p[2]);
        sv += cbi_rgb_to_yuv (m->to_cr, p[0], p[1], p[2]);
      }
    }
    cb[(gsize) ((x + i) / 2) * step] = (guint8) ((su + count / 2) / count);
    cr[(gsize) ((x + i) / 2) * step] = (guint8) ((sv + count / 2) / count);
  }
}

void
cbi_scale_window (CbiScaling scaling, guint src_width, guint src_height,
    guint dst_width, guint dst_height, CbiScaleWindow * w)
{
  const guint64 sw = MAX (src_width, 1), sh = MAX (src_height, 1);

  w->x = w->y = 0;
  w->width = dst_width;
  w->height = dst_height;
  if (scaling != CBI_SCALE_LETTERBOX)
    return;
  /* the side that limits the scale fills the frame; the other is
   * rounded, and centred with the odd pixel of padding after it */
  if (sw * dst_height <= sh * dst_width)
    w->width = (guint) ((2 * sw * dst_height + sh) / (2 * sh));
  else
    w->height = (guint) ((2 * sh * dst_width + sw) / (2 * sw));
  w->width = CLAMP (w->width, 1, MAX (dst_width, 1));
  w->height = CLAMP (w->height, 1, MAX (dst_height, 1));
  w->x = (dst_width - w->width) / 2;
  w->y = (dst_height - w->height) / 2;
}

/* One edge of the picture's window, from the model's input (of @in
 * positions) to its output (of @out), rounded. */
static guint
cbi_scale_edge (guint edge, guint in, guint out)
{
  return (guint) (((guint64) edge * out + in / 2) / in);
}

void
cbi_frame_batch_out_window (const CbiFrameBatch * b, guint f,
    CbiScaleWindow * w)
{
  const guint width = b->out_width ? b->out_width : b->width;
  const guint height = b->out_height ? b->out_height : b->height;
  CbiScaleWindow in;
  guint x1, y1;

  /* the input's window mapped, not computed again for the output's size:
   * rounded on its own, it could take in a row of the bars */
  cbi_scale_window (b->scaling, b->in_width[f], b->in_height[f], b->width,
      b->height, &in);
  w->x = MIN (cbi_scale_edge (in.x, b->width, width), width - 1);
  w->y = MIN (cbi_scale_edge (in.y, b->height, height), height - 1);
  x1 = cbi_scale_edge (in.x + in.width, b->width, width);
  y1 = cbi_scale_edge (in.y + in.height, b->height, height);
  w->width = MAX (MIN (x1, width), w->x + 1) - w->x;
  w->height = MAX (MIN (y1, height), w->y + 1) - w->y;
}

/* cbi_frame_batch_scale_row_in ()'s picture for 4:2:0 frames: each of
 * the four pixels around a position converted to R'G'B', then mixed, as
 * videoconvert and then the scaling would. */
static void
scale_row_in_yuv (const CbiFrameBatch * b, guint f, const CbiScaleWindow * w,
    guint first, guint end, guint x, guint y0, guint y1, guint fy, guint8 * row)
{
  CbiScaleWalk walk;
  guint i, c;

  cbi_scale_walk_init (&walk, first - w->x, w->width, 0, b->in_width[f]);
  for (i = first; i < end; i++) {
    guint8 *px = row + (gsize) (i - x) * 3;
    guint8 a[3], b1[3], c1[3], d[3];
    guint x0, x1, fx;

    cbi_scale_walk_next (&walk, &x0, &x1, &fx);
    cbi_frame_batch_yuv_row (b, f, y0, x0, 1, a);
    cbi_frame_batch_yuv_row (b, f, y0, x1, 1, b1);
    cbi_frame_batch_yuv_row (b, f, y1, x0, 1, c1);
    cbi_frame_batch_yuv_row (b, f, y1, x1, 1, d);
    for (c = 0; c < 3; c++)
      px[c] = cbi_scale_mix (a[c], b1[c], c1[c], d[c], fx, fy);
  }
}

void
cbi_frame_batch_scale_row_in (const CbiFrameBatch * b, guint f, guint y,
    guint x, guint n, guint8 * row)
{
  const guint ps = b->pixel_stride;
  const guint iw = b->in_width[f], ih = b->in_height[f];
  const guint o0 = b->rgb_offset[0], o1 = b->rgb_offset[1];
  const guint o2 = b->rgb_offset[2];
  const guint8 *r0, *r1;
  CbiScaleWindow w;
  CbiScaleWalk walk;
  guint y0, y1, fy, i, first, end;

  cbi_scale_window (b->scaling, iw, ih, b->width, b->height, &w);
  /* black bars, the fourth byte opaque, then the picture over them */
  memset (row, 0, (gsize) n * ps);
  if (ps == 4)
    for (i = 0; i < n; i++)
      row[(gsize) i * 4 + b->extra_offset] = 255;
  first = MAX (x, w.x);
  end = MIN (x + n, w.x + w.width);
  if (y < w.y || y >= w.y + w.height || first >= end)
    return;
  cbi_scale_walk_init (&walk, y - w.y, w.height, 0, ih);
  cbi_scale_walk_next (&walk, &y0, &y1, &fy);
  if (b->layout == CBI_PIXELS_YUV420) {
    scale_row_in_yuv (b, f, &w, first, end, x, y0, y1, fy, row);
    return;
  }
  r0 = b->in[f] + (gsize) y0 *b->in_stride[f];
  r1 = b->in[f] + (gsize) y1 *b->in_stride[f];
  cbi_scale_walk_init (&walk, first - w.x, w.width, 0, iw);
  for (i = first; i < end; i++) {
    guint8 *px = row + (gsize) (i - x) * ps;
    guint x0, x1, fx;
    const guint8 *a, *b1, *c, *d;

    cbi_scale_walk_next (&walk, &x0, &x1, &fx);
    a = r0 + (gsize) x0 *ps;
    b1 = r0 + (gsize) x1 *ps;
    c = r1 + (gsize) x0 *ps;
    d = r1 + (gsize) x1 *ps;
    px[o0] = cbi_scale_mix (a[o0], b1[o0], c[o0], d[o0], fx, fy);
    px[o1] = cbi_scale_mix (a[o1], b1[o1], c[o1], d[o1], fx, fy);
    px[o2] = cbi_scale_mix (a[o2], b1[o2], c[o2], d[o2], fx, fy);
  }
}

void
cbi_frame_batch_scale_row_out (const CbiFrameBatch * b, guint f, guint y,
    guint x, guint n, const guint8 * frame, gsize stride, guint8 * row)
{
  const guint ps = b->pixel_stride;
  const guint ow = b->out_frame_width[f], oh = b->out_frame_height[f];
  const guint8 *r0, *r1;
  CbiScaleWindow w;
  CbiScaleWalk walk;
  guint y0, y1, fy, i, x0, x1, fx, c;

  cbi_frame_batch_out_window (b, f, &w);
  cbi_scale_walk_init (&walk, y, oh, w.y, w.height);
  cbi_scale_walk_next (&walk, &y0, &y1, &fy);
  r0 = frame + y0 * stride;
  r1 = frame + y1 * stride;
  cbi_scale_walk_init (&walk, x, ow, w.x, w.width);
  for (i = 0; i < n; i++) {
    cbi_scale_walk_next (&walk, &x0, &x1, &fx);
    for (c = 0; c < ps; c++)
      row[(gsize) i * ps + c] = cbi_scale_mix (r0[x0 * ps + c],
          r0[x1 * ps + c], r1[x0 * ps + c], r1[x1 * ps + c], fx, fy);
  }
}

void
cbi_frame_batch_write_out (const CbiFrameBatch * b, guint f,
    const guint8 * frame, gsize stride)
{
  const gboolean scales = cbi_frame_batch_scales (b);
  const guint ow = scales ? b->out_frame_width[f] :
      b->out_width ? b->out_width : b->width;
  const guint oh = scales ? b->out_frame_height[f] :
      b->out_height ? b->out_height : b->height;
  const gsize row = (gsize) ow * b->pixel_stride;
  /* R'G'B' pixels of two rows, a piece at a time */
  guint8 rgb[2][OUT_CHUNK * 3];
  guint y, x, n, r;

  if (b->layout != CBI_PIXELS_YUV420) {
    for (y = 0; y < oh; y++)
      if (scales)
        cbi_frame_batch_scale_row_out (b, f, y, 0, ow, frame, stride,
            b->out[f] + (gsize) y * b->out_stride[f]);
      else
        memcpy (b->out[f] + (gsize) y * b->out_stride[f],
            frame + y * stride, row);
    return;
  }
  for (y = 0; y < oh; y += 2)
    for (x = 0; x < ow; x += n) {
      const guint rows = MIN (2, oh - y);
      n = MIN (OUT_CHUNK, ow - x);
      for (r = 0; r < rows; r++)
        if (scales)
          cbi_frame_batch_scale_row_out (b, f, y + r, x, n, frame, stride,
              rgb[r]);
        else
          memcpy (rgb[r], frame + (y + r) * stride + (gsize) x * 3,
              (gsize) n * 3);
      cbi_frame_batch_yuv_rows_out (b, f, y, x, n, rgb[0],
          rows > 1 ? rgb[1] : NULL);
    }
}
