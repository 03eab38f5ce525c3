/* GStreamer cudabatchinfer: frame batches for the engine tests
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "cpu/frames.h"

#include <string.h>

/* An RGB batch of @w x @h frames, bytes mapped to 0..1, @n_slots slots
 * padded by repeating the last frame. One frame @in, written to @out, both
 * with rows of @stride bytes; either may be NULL for a layout alone. */
static inline CbiFrameBatch
cbi_test_rgb_batch (guint w, guint h, guint n_slots, const guint8 * const *in,
    guint8 * const *out, const gint * stride)
{
  CbiFrameBatch b;

  memset (&b, 0, sizeof (b));
  b.width = w;
  b.height = h;
  b.pixel_stride = 3;
  b.rgb_offset[0] = 0;
  b.rgb_offset[1] = 1;
  b.rgb_offset[2] = 2;
  b.extra_offset = -1;
  b.scale[0] = b.scale[1] = b.scale[2] = 1.0f / 255.0f;
  cbi_frame_batch_map_output_back (&b);
  b.n_frames = in ? 1 : 0;
  b.n_slots = n_slots;
  b.pad_mode = CBI_PAD_REPEAT_LAST;
  b.in = in;
  b.in_stride = stride;
  b.out = out;
  b.out_stride = stride;
  return b;
}
