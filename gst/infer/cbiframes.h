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
 * CbiFrameBatch:
 * @width: frame width in pixels
 * @height: frame height in pixels
 * @pixel_stride: bytes per pixel (3 or 4)
 * @rgb_offset: byte offsets, within a pixel, of the model's channels 0, 1
 *   and 2 (red, green, blue for an RGB model; blue first for BGR)
 * @extra_offset: byte offset of the fourth byte (alpha or padding), which
 *   goes from input to output untouched; -1 for 3-byte formats
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
} CbiFrameBatch;

/* Sets @batch's output mapping to the inverse of its input mapping, so
 * that an image model's output maps back to bytes as its input came in. */
void cbi_frame_batch_map_output_back (CbiFrameBatch * batch);

G_END_DECLS
