/* cudabatchinfer: a batch of frames as the engine sees them
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbiframes.h"
#include "cbimath.h"

#include <string.h>

void
cbi_frame_batch_map_output_back (CbiFrameBatch * b)
{
  guint c;

  for (c = 0; c < 3; c++)
    cbi_byte_mapping (b->scale[c], b->bias[c], &b->out_scale[c],
        &b->out_offset[c]);
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
    const guint8 * frame, gsize stride, guint8 * row)
{
  const guint ps = b->pixel_stride;
  const guint ow = b->out_frame_width[f], oh = b->out_frame_height[f];
  const guint8 *r0, *r1;
  CbiScaleWindow w;
  CbiScaleWalk walk;
  guint y0, y1, fy, x, x0, x1, fx, c;

  cbi_frame_batch_out_window (b, f, &w);
  cbi_scale_walk_init (&walk, y, oh, w.y, w.height);
  cbi_scale_walk_next (&walk, &y0, &y1, &fy);
  r0 = frame + y0 * stride;
  r1 = frame + y1 * stride;
  cbi_scale_walk_init (&walk, 0, ow, w.x, w.width);
  for (x = 0; x < ow; x++) {
    cbi_scale_walk_next (&walk, &x0, &x1, &fx);
    for (c = 0; c < ps; c++)
      row[(gsize) x * ps + c] = cbi_scale_mix (r0[x0 * ps + c],
          r0[x1 * ps + c], r1[x0 * ps + c], r1[x1 * ps + c], fx, fy);
  }
}
