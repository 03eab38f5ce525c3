/* cudabatchinfer: scaling frames of other sizes to a batch's, shared by
 * the backends (the batch itself, CbiFrameBatch, is in cbitypes.h)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "cbitypes.h"

G_BEGIN_DECLS

/**
 * CbiScaleWindow:
 * @x: left column of the picture in the model's frame
 * @y: top row
 * @width: columns of the picture, at least 1
 * @height: rows of the picture, at least 1
 *
 * Where a frame's picture lies in the model's frame once scaled.
 */
typedef struct
{
  guint x;
  guint y;
  guint width;
  guint height;
} CbiScaleWindow;


/* Sets @batch's output mapping to the inverse of its input mapping, so
 * that an image model's output maps back to bytes as its input came in. */
void cbi_frame_batch_map_output_back (CbiFrameBatch * batch);

/* Where a picture of @src_width x @src_height lies in a frame of
 * @dst_width x @dst_height under @scaling: all of it but for
 * %CBI_SCALE_LETTERBOX. */
void cbi_scale_window (CbiScaling scaling, guint src_width, guint src_height,
    guint dst_width, guint dst_height, CbiScaleWindow * window);

/**
 * CbiScaleWalk:
 *
 * The source positions of destination positions d, d + 1, ... of dn over
 * a source span of sn positions from s0: pixel centres aligned (source
 * position (d + 0.5) x sn / dn - 0.5), clamped to the span, each the pair
 * of source positions around it and the second's weight in 1/256. In
 * exact integer steps, without a division per position, so that every
 * caller (the CPU's pack and unpack, the copies into and out of a GPU's
 * staging) gets the same positions and weights.
 */
typedef struct
{
  gint64 q;                     /* floor of the source position, from 0 */
  gint64 r;                     /* its remainder, in 1 / den */
  gint64 den;                   /* 2 dn */
  gint64 step_q;                /* 2 sn / den: a step */
  gint64 step_r;                /* its remainder */
  guint64 weight;               /* r x weight >> 24: the weight in 1/256 */
  guint s0;
  guint sn;
} CbiScaleWalk;

/* Starts @w at destination position @d of @dn over [@s0, @s0 + @sn). */
static inline void
cbi_scale_walk_init (CbiScaleWalk * w, guint d, guint dn, guint s0, guint sn)
{
  /* 2 dn times the source position */
  gint64 num = (2 * (gint64) d + 1) * sn - dn;

  w->den = 2 * (gint64) dn;
  w->q = num >= 0 ? num / w->den : -((-num + w->den - 1) / w->den);
  w->r = num - w->q * w->den;
  w->step_q = 2 * (gint64) sn / w->den;
  w->step_r = 2 * (gint64) sn % w->den;
  w->weight = (G_GUINT64_CONSTANT (256) << 24) / (guint64) w->den;
  w->s0 = s0;
  w->sn = sn;
}

/* The pair of source positions of @w's destination position and the
 * weight of the second (0..255); then steps to the next. */
static inline void
cbi_scale_walk_next (CbiScaleWalk * w, guint * i0, guint * i1, guint * frac)
{
  if (w->q < 0) {
    *i0 = *i1 = w->s0;
    *frac = 0;
  } else if (w->q >= (gint64) w->sn - 1) {
    *i0 = *i1 = w->s0 + w->sn - 1;
    *frac = 0;
  } else {
    *i0 = w->s0 + (guint) w->q;
    *i1 = *i0 + 1;
    *frac = (guint) (((guint64) w->r * w->weight) >> 24);
  }
  w->q += w->step_q;
  w->r += w->step_r;
  if (w->r >= w->den) {
    w->r -= w->den;
    w->q++;
  }
}

/* Bilinear mix of four bytes (@a @b above, @c @d below) with the weights
 * of @b and @d (@fx) and of the lower pair (@fy) in 1/256, rounded. */
static inline guint8
cbi_scale_mix (guint a, guint b, guint c, guint d, guint fx, guint fy)
{
  guint top = a * (256 - fx) + b * fx;
  guint bottom = c * (256 - fx) + d * fx;

  return (guint8) ((top * (256 - fy) + bottom * fy + 32768) >> 16);
}

/* Writes pixels @x .. @x + @n - 1 of row @y of frame @f of @batch, scaled
 * to @batch's @width x @height, to @row in the frames' pixel layout:
 * black outside the frame's window; the fourth byte of a 4-byte pixel is
 * 255. */
void cbi_frame_batch_scale_row_in (const CbiFrameBatch * batch, guint f,
    guint y, guint x, guint n, guint8 * row);

/* Where frame @f's picture lies in the model's output: its window in the
 * input (cbi_scale_window()) scaled by the output's size over the
 * input's. */
void cbi_frame_batch_out_window (const CbiFrameBatch * batch, guint f,
    CbiScaleWindow * window);

/* Writes pixels @x .. @x + @n - 1 of row @y of output frame @f of @batch
 * (out_frame_width[f] pixels a row) to @row, from the model's output for
 * it as bytes, @frame (@batch's output size, rows @stride bytes apart, in
 * the frames' pixel layout): the frame's window
 * (cbi_frame_batch_out_window()) scaled to its size. */
void cbi_frame_batch_scale_row_out (const CbiFrameBatch * batch, guint f,
    guint y, guint x, guint n, const guint8 * frame, gsize stride,
    guint8 * row);

/* Writes output frame @f of @batch from the model's output for it as
 * bytes, @frame (@batch's output size, rows @stride bytes apart, in the
 * frames' pixel layout; R'G'B' for %CBI_PIXELS_YUV420): copied, or scaled
 * to the frame's size, and turned to 4:2:0 where the frames are. */
void cbi_frame_batch_write_out (const CbiFrameBatch * batch, guint f,
    const guint8 * frame, gsize stride);

/* Writes the R'G'B' bytes (3 a pixel, red first) of pixels @x .. @x + @n
 * - 1 of row @y of 4:2:0 frame @f of @batch to @rgb. */
void cbi_frame_batch_yuv_row (const CbiFrameBatch * batch, guint f, guint y,
    guint x, guint n, guint8 * rgb);

/* Writes pixels @x .. @x + @n - 1 (@x even) of rows @y (even) and @y + 1
 * of 4:2:0 output frame @f of @batch from their R'G'B' bytes, @rgb0 and
 * @rgb1 (%NULL where row @y is the last): their luma, and the chroma row
 * they share, each sample the mean of the pixels it covers. */
void cbi_frame_batch_yuv_rows_out (const CbiFrameBatch * batch, guint f,
    guint y, guint x, guint n, const guint8 * rgb0, const guint8 * rgb1);

/* Whether @batch's frames are scaled, not packed as they are. */
static inline gboolean
cbi_frame_batch_scales (const CbiFrameBatch * batch)
{
  return batch->scaling != CBI_SCALE_NONE && batch->in_width != NULL;
}

G_END_DECLS
