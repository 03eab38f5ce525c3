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

void
cbi_frame_batch_scale_row_in (const CbiFrameBatch * b, guint f, guint y,
    guint x, guint n, guint8 * row)
{
  const guint ps = b->pixel_stride;
  const guint iw = b->in_width[f], ih = b->in_height[f];
  const guint8 *r0 = NULL, *r1 = NULL;
  CbiScaleWindow w;
  guint y0, y1, i, c;
  gfloat fy = 0.0f;

  cbi_scale_window (b->scaling, iw, ih, b->width, b->height, &w);
  if (y >= w.y && y < w.y + w.height) {
    cbi_scale_coord (y - w.y, w.height, 0, ih, &y0, &y1, &fy);
    r0 = b->in[f] + (gsize) y0 * b->in_stride[f];
    r1 = b->in[f] + (gsize) y1 * b->in_stride[f];
  }
  for (i = 0; i < n; i++) {
    guint8 *px = row + (gsize) i * ps;
    guint dx = x + i, x0, x1;
    gfloat fx;

    if (r0 == NULL || dx < w.x || dx >= w.x + w.width) {
      memset (px, 0, ps);
    } else {
      cbi_scale_coord (dx - w.x, w.width, 0, iw, &x0, &x1, &fx);
      for (c = 0; c < 3; c++) {
        const guint o = b->rgb_offset[c];
        px[o] = cbi_scale_mix (r0[x0 * ps + o], r0[x1 * ps + o],
            r1[x0 * ps + o], r1[x1 * ps + o], fx, fy);
      }
    }
    if (ps == 4)
      px[b->extra_offset] = 255;
  }
}

void
cbi_frame_batch_scale_row_out (const CbiFrameBatch * b, guint f, guint y,
    const guint8 * frame, gsize stride, guint8 * row)
{
  const guint ps = b->pixel_stride;
  const guint ow = b->out_frame_width[f], oh = b->out_frame_height[f];
  const guint width = b->out_width ? b->out_width : b->width;
  const guint height = b->out_height ? b->out_height : b->height;
  const guint8 *r0, *r1;
  CbiScaleWindow w;
  guint y0, y1, x, x0, x1, c;
  gfloat fx, fy;

  cbi_scale_window (b->scaling, b->in_width[f], b->in_height[f], width,
      height, &w);
  cbi_scale_coord (y, oh, w.y, w.height, &y0, &y1, &fy);
  r0 = frame + y0 * stride;
  r1 = frame + y1 * stride;
  for (x = 0; x < ow; x++) {
    cbi_scale_coord (x, ow, w.x, w.width, &x0, &x1, &fx);
    for (c = 0; c < ps; c++)
      row[(gsize) x * ps + c] = cbi_scale_mix (r0[x0 * ps + c],
          r0[x1 * ps + c], r1[x0 * ps + c], r1[x1 * ps + c], fx, fy);
  }
}
