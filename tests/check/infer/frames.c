/* GStreamer cudabatchinfer: packing frames into tensors and back (cbiframes.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cpu/frames.h"

/* 2x2 BGRx frames: pixel bytes B, G, R, x. */
static void
init_bgrx_batch (CbiFrameBatch * b, guint n_frames, guint n_slots,
    CbiPadMode mode)
{
  memset (b, 0, sizeof (*b));
  b->width = 2;
  b->height = 2;
  b->pixel_stride = 4;
  b->rgb_offset[0] = 2;
  b->rgb_offset[1] = 1;
  b->rgb_offset[2] = 0;
  b->extra_offset = 3;
  b->scale[0] = b->scale[1] = b->scale[2] = 1.0f / 255.0f;
  cbi_frame_batch_map_output_back (b);
  b->n_frames = n_frames;
  b->n_slots = n_slots;
  b->pad_mode = mode;
}

GST_START_TEST (test_pack_puts_channels_in_model_order_and_fills_padding)
{
  guint8 f0[16], f1[16];
  const guint8 *in[2] = { f0, f1 };
  const gint stride[2] = { 8, 8 };
  gfloat t[4 * 12];
  CbiFrameBatch b;
  guint i;

  for (i = 0; i < 16; i++) {
    f0[i] = i;
    f1[i] = 100 + i;
  }
  init_bgrx_batch (&b, 2, 4, CBI_PAD_REPEAT_LAST);
  b.in = in;
  b.in_stride = stride;
  cbi_pack_frames (&b, t);
  /* slot 0, R plane, pixel 0 is byte 2 */
  fail_unless_equals_float (t[0], 2 / 255.0f);
  /* slot 0, B plane, pixel 1 is byte 4 */
  fail_unless_equals_float (t[2 * 4 + 1], 4 / 255.0f);
  /* slot 1, G plane, pixel 3 is byte 13 of frame 1 */
  fail_unless_equals_float (t[12 + 4 + 3], 113 / 255.0f);
  /* slots 2 and 3 repeat slot 1 */
  fail_unless (memcmp (t + 24, t + 12, 12 * sizeof (gfloat)) == 0);
  fail_unless (memcmp (t + 36, t + 12, 12 * sizeof (gfloat)) == 0);

  b.pad_mode = CBI_PAD_ZERO;
  cbi_pack_frames (&b, t);
  for (i = 24; i < 48; i++)
    fail_unless_equals_float (t[i], 0.0f);
}

GST_END_TEST;

GST_START_TEST (test_pack_scales_and_shifts_each_channel_and_unpack_undoes_it)
{
  guint8 px[16], back[16];
  const guint8 *in[1] = { px };
  guint8 *out[1] = { back };
  const gint stride[1] = { 8 };
  gfloat t[12];
  CbiFrameBatch b;
  guint i;

  for (i = 0; i < 16; i++)
    px[i] = 17 * i;
  init_bgrx_batch (&b, 1, 1, CBI_PAD_ZERO);
  b.scale[0] = 2.0f / 255.0f;
  b.bias[0] = -1.0f;
  b.scale[1] = 1.0f / 51.0f;
  b.bias[1] = 0.25f;
  b.bias[2] = 0.5f;
  cbi_frame_batch_map_output_back (&b);
  b.in = in;
  b.in_stride = stride;
  b.out = out;
  b.out_stride = stride;
  cbi_pack_frames (&b, t);
  /* pixel 1: B 68, G 85, R 102 */
  fail_unless (ABS (t[1] - (102 * 2.0f / 255.0f - 1.0f)) < 1e-6f);
  fail_unless (ABS (t[4 + 1] - (85 / 51.0f + 0.25f)) < 1e-6f);
  fail_unless (ABS (t[8 + 1] - (68 / 255.0f + 0.5f)) < 1e-6f);
  memset (back, 0, sizeof (back));
  cbi_unpack_frames (&b, t);
  fail_unless (memcmp (back, px, sizeof (px)) == 0);
}

GST_END_TEST;

GST_START_TEST (test_unpack_clamps_and_copies_the_fourth_byte)
{
  guint8 in_px[16], out_px[16];
  const guint8 *in[1] = { in_px };
  guint8 *out[1] = { out_px };
  const gint stride[1] = { 8 };
  const gfloat t[12] = {
    -1.0f, 0.0f, 0.5f, 2.0f,    /* R */
    1.0f, 1.0f, 1.0f, 1.0f,     /* G */
    NAN, 0.25f, 0.75f, 0.0f,    /* B */
  };
  CbiFrameBatch b;
  guint i;

  for (i = 0; i < 16; i++)
    in_px[i] = 200 + i;
  memset (out_px, 0, sizeof (out_px));
  init_bgrx_batch (&b, 1, 4, CBI_PAD_ZERO);
  b.in = in;
  b.in_stride = stride;
  b.out = out;
  b.out_stride = stride;
  cbi_unpack_frames (&b, t);
  fail_unless_equals_int (out_px[2], 0);        /* R -1 clamps to 0 */
  fail_unless_equals_int (out_px[6], 0);
  /* 0.5 is 127.5: either neighbour, by float rounding */
  fail_unless (out_px[10] == 127 || out_px[10] == 128, "%u", out_px[10]);
  fail_unless_equals_int (out_px[14], 255);     /* 2.0 clamps */
  fail_unless_equals_int (out_px[1], 255);
  fail_unless_equals_int (out_px[0], 0);        /* NaN is 0 */
  fail_unless_equals_int (out_px[4], 64);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (out_px[i * 4 + 3], in_px[i * 4 + 3]);
}

GST_END_TEST;

static Suite *
frames_suite (void)
{
  Suite *s = suite_create ("cbiframes");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pack_puts_channels_in_model_order_and_fills_padding);
  tcase_add_test (tc,
      test_pack_scales_and_shifts_each_channel_and_unpack_undoes_it);
  tcase_add_test (tc, test_unpack_clamps_and_copies_the_fourth_byte);
  return s;
}

GST_CHECK_MAIN (frames);
