/* cudabatchinfer: a batch of video frames as the engine sees it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Batches that may be on their way through an engine at once: submitted,
 * not yet collected. */
#define CBI_MAX_INFLIGHT 8

/**
 * CbiPadMode:
 * @CBI_PAD_REPEAT_LAST: fill empty slots with the last real frame
 * @CBI_PAD_ZERO: fill empty slots with zeros
 * @CBI_PAD_NONE: run the batch at its real size
 */
typedef enum
{
  CBI_PAD_REPEAT_LAST,
  CBI_PAD_ZERO,
  CBI_PAD_NONE,
} CbiPadMode;

/**
 * CbiScaling:
 * @CBI_SCALE_NONE: every frame has the batch's size
 * @CBI_SCALE_STRETCH: each frame is scaled to the batch's size, its aspect
 *   ratio not kept
 * @CBI_SCALE_LETTERBOX: each frame is scaled to fit the batch's size with
 *   its aspect ratio kept, centred, the rest black (symmetric padding)
 *
 * How frames of other sizes than the batch's become its slots. Scaling is
 * bilinear, on the bytes (CbiScaleWalk, cbi_scale_mix()), and rounded to
 * bytes before the input mapping, so that every backend packs the same
 * values.
 */
typedef enum
{
  CBI_SCALE_NONE,
  CBI_SCALE_STRETCH,
  CBI_SCALE_LETTERBOX,
} CbiScaling;

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

/**
 * CbiFrameBatch:
 * @width: frame width in pixels
 * @height: frame height in pixels
 * @pixel_stride: bytes per pixel (3 or 4)
 * @rgb_offset: byte offsets, within a pixel, of the model's channels 0, 1
 *   and 2 (red, green, blue for an RGB model; blue first for BGR)
 * @extra_offset: byte offset of the fourth byte (alpha or padding), which
 *   goes from input to output untouched where the sizes match and nothing
 *   is scaled (else 255, or the model's fourth channel); -1 for 3-byte
 *   formats
 * @scale: per model channel: input value = byte x @scale + @bias
 * @bias: per model channel
 * @out_scale: per model channel of an image output: output byte = value x
 *   @out_scale + @out_offset, rounded and clamped to 0..255;
 *   cbi_frame_batch_map_output_back() sets the inverse of the input's
 * @out_offset: per model channel
 * @n_frames: real frames; 0 for a dry run
 * @n_slots: tensor batch size; slots past @n_frames are padding
 * @pad_mode: how padding slots are filled
 * @in: (array length=n_frames): input pixels, one row pointer per frame
 * @in_stride: (array length=n_frames): input row strides in bytes
 * @out: (array length=n_frames) (nullable): output pixels, in @in's pixel
 *   layout, @out_width x @out_height; %NULL when the results are read as
 *   tensors instead
 * @out_stride: (array length=n_frames): output row strides in bytes
 * @out_width: output frame width; 0: @width
 * @out_height: output frame height; 0: @height
 * @out_channels: channels of the model's image output: 3, or 1 (grey,
 *   written to the three colour bytes) or 4 (the fourth written to the
 *   alpha byte, scaled as channel 0 without its offset); 0: 3
 * @scaling: how frames of their own size become slots of @width x
 *   @height; with %CBI_SCALE_NONE the arrays below are ignored
 * @in_width: (array length=n_frames): each input frame's width
 * @in_height: (array length=n_frames): each input frame's height
 * @out_frame_width: (array length=n_frames): each output frame's width:
 *   the model's output over the frame's window, scaled to it
 * @out_frame_height: (array length=n_frames): each output frame's height
 *
 * Borrowed pointers only: the engine reads @in and writes @out during
 * cbi_engine_run() and keeps nothing.
 */
typedef struct
{
  guint width;
  guint height;
  guint pixel_stride;
  guint rgb_offset[3];
  gint extra_offset;
  gfloat scale[3];
  gfloat bias[3];
  gfloat out_scale[3];
  gfloat out_offset[3];
  guint n_frames;
  guint n_slots;
  CbiPadMode pad_mode;
  const guint8 *const *in;
  const gint *in_stride;
  guint8 *const *out;
  const gint *out_stride;
  guint out_width;
  guint out_height;
  guint out_channels;
  CbiScaling scaling;
  const guint *in_width;
  const guint *in_height;
  const guint *out_frame_width;
  const guint *out_frame_height;
} CbiFrameBatch;

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

/* Writes row @y of output frame @f of @batch (out_frame_width[f] pixels)
 * from the model's output for it as bytes, @frame (@batch's output size,
 * rows @stride bytes apart, in the frames' pixel layout): the frame's
 * window (cbi_frame_batch_out_window()) scaled to its size. */
void cbi_frame_batch_scale_row_out (const CbiFrameBatch * batch, guint f,
    guint y, const guint8 * frame, gsize stride, guint8 * row);

/* Whether @batch's frames are scaled, not packed as they are. */
static inline gboolean
cbi_frame_batch_scales (const CbiFrameBatch * batch)
{
  return batch->scaling != CBI_SCALE_NONE && batch->in_width != NULL;
}

G_END_DECLS
