/* GStreamer cudabatchinfer: packing frames into tensors and back (cbiframes.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cbiengine.h"
#include "cbimath.h"
#include "cbitestframes.h"

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

/* Rows of 300 pixels (a chunk of 256 and some, vectors and some left
 * over), in each pixel stride, channel order (BGR, and RGB: channels last
 * then converts the row's bytes as they are) and layout (NCHW, channels
 * last, channels last in bfloat16): every value is exactly cbi_from_byte
 * () of its byte, as the CUDA kernel computes it (in bfloat16, that
 * value rounded by cbi_bf16_from_float ()); the two padding slots after
 * them repeat the last frame's or are zeros, in every layout. */
GST_START_TEST (test_pack_of_wide_rows_gives_each_pixel_exactly)
{
  const guint w = 300, h = 3, stride = 4 * 304;
  const guint pstrides[2] = { 3, 4 };
  const gchar *layouts[3] = { "NCHW", "channels last", "bfloat16" };
  const gsize slot = 3 * w * h;
  guint8 *frames = g_malloc (2 * h * stride);
  const guint8 *in[2] = { frames, frames + h * stride };
  const gint strides[2] = { stride, stride };
  gfloat *t = g_new (gfloat, 4 * slot);
  guint16 *t16 = g_new (guint16, 4 * slot);
  CbiFrameBatch b;
  guint i, k, f, y, x, c, layout, rgb;

  for (i = 0; i < 2 * h * stride; i++)
    frames[i] = (guint8) (i * 7 + i / 11);
  /* k 4: a NaN scale; k 5: ties; both: a scale that overflows to
   * infinity (packing has a faster bfloat16 rounding for batches whose
   * values are all numbers) */
  for (k = 0; k < 6; k++) {
    for (layout = 0; layout < 3; layout++) {
      const gboolean repeat = (k + layout) % 2 == 1;
      const gsize esize = layout == 2 ? sizeof (guint16) : sizeof (gfloat);
      const guint8 *packed = layout == 2 ? (guint8 *) t16 : (guint8 *) t;
      rgb = k / 2 == 1;
      init_bgrx_batch (&b, 2, 4, repeat ? CBI_PAD_REPEAT_LAST : CBI_PAD_ZERO);
      for (c = 0; c < 3 && rgb; c++)
        b.rgb_offset[c] = c;
      b.width = w;
      b.height = h;
      b.pixel_stride = pstrides[k % 2];
      b.scale[0] = 2.0f / 255.0f;
      b.bias[0] = -1.0f;
      b.scale[1] = 1.0f / 57.0f;
      b.bias[1] = 0.125f;
      b.bias[2] = -0.5f;
      if (k == 4) {
        /* a NaN whose payload a rounding's carry would make -0 */
        const guint32 nan_bits = 0x7fffffffu;
        memcpy (&b.scale[1], &nan_bits, sizeof (gfloat));
      }
      if (k == 5) {
        /* byte x (1 + 3/256) is halfway between two bfloat16 values, the
         * lower one odd: ties round to even */
        b.scale[0] = 1.01171875f;
        b.bias[0] = 0.0f;
      }
      if (k >= 4)
        b.scale[2] = 3e36f;
      b.in = in;
      b.in_stride = strides;
      if (layout == 0)
        cbi_pack_frames (&b, t);
      else if (layout == 1)
        cbi_pack_frames_channels_last (&b, t);
      else
        cbi_pack_frames_channels_last_bf16 (&b, t16);
      for (f = 0; f < 2; f++)
        for (y = 0; y < h; y++)
          for (x = 0; x < w; x++)
            for (c = 0; c < 3; c++) {
              const guint8 byte = in[f][y * stride + x * pstrides[k % 2] +
                  b.rgb_offset[c]];
              const gsize at = layout ? ((f * h + y) * w + x) * 3 + c :
                  ((f * 3 + c) * h + y) * w + x;
              const gfloat want = cbi_from_byte (byte, b.scale[c], b.bias[c]);
              const gboolean same = layout == 2 ?
                  t16[at] == cbi_bf16_from_float (want) :
                  memcmp (&t[at], &want, sizeof (gfloat)) == 0;
              fail_unless (same, "pixel stride %u, %s, %s: frame %u (%u, %u) "
                  "channel %u is %g, not %g", pstrides[k % 2],
                  rgb ? "RGB" : "BGR", layouts[layout], f, x, y, c,
                  layout == 2 ? cbi_bf16_to_float (t16[at]) : t[at], want);
            }
      for (f = 2; f < 4; f++)
        for (i = 0; i < slot * esize; i++)
          fail_unless (packed[f * slot * esize + i] ==
              (repeat ? packed[slot * esize + i] : 0), "%s: padding slot %u, "
              "byte %u", layouts[layout], f, i);
    }
  }
  g_free (t16);
  g_free (t);
  g_free (frames);
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

/* Output channel c of pixel x as the unpacking maps it, one value at a
 * time: the reference the row loops must give byte for byte. */
static guint8
unpack_reference (const CbiFrameBatch * b, const gfloat * t, guint channels,
    gboolean channels_last, guint width, guint x, guint c)
{
  CbiUnpackMap m;
  const gsize plane = width;    /* one row */
  guint k;

  cbi_unpack_map_init (&m, channels, b->out_scale, b->out_offset);
  k = c < 3 ? m.src[c] : 3;
  return cbi_to_byte (channels_last ? t[x * channels + k] :
      t[k * plane + x], m.inv[c], m.off[c]);
}

/* Every form of a row of 300 pixels (past one chunk of the row loops):
 * planar and channels last, RGB, BGRx with the fourth byte copied or
 * set, RGBA from a fourth channel, grey; values past 0..255 either way,
 * NaN and halves among them. */
GST_START_TEST (test_unpack_gives_each_byte_of_every_layout_and_format)
{
  enum
  { W = 300 };
  static const struct
  {
    guint pstride, channels;
    guint offs[3];
    gint extra;
    gboolean copy;
  } forms[] = {
    {3, 3, {0, 1, 2}, -1, FALSE},
    {3, 3, {2, 1, 0}, -1, FALSE},
    {4, 3, {2, 1, 0}, 3, TRUE},
    {4, 3, {1, 2, 3}, 0, FALSE},
    {4, 4, {0, 1, 2}, 3, FALSE},
    {3, 1, {0, 1, 2}, -1, FALSE},
    {4, 1, {2, 1, 0}, 3, TRUE},
  };
  gfloat *t = g_new (gfloat, 4 * W);
  guint8 *in_px = g_new (guint8, 4 * W), *out_px = g_new (guint8, 4 * W);
  const guint8 *in[1] = { in_px };
  guint8 *out[1] = { out_px };
  gint stride[1];
  guint f, cl, x, c;
  CbiFrameBatch b;

  for (x = 0; x < 4 * W; x++) {
    t[x] = (x % 7 == 3) ? NAN : ((gint) (x * 37 % 601) - 150) / 255.0f;
    in_px[x] = (guint8) (x * 13);
  }
  t[5] = 127.5f / 255.0f;
  for (f = 0; f < G_N_ELEMENTS (forms); f++) {
    for (cl = 0; cl < 2; cl++) {
      memset (&b, 0, sizeof (b));
      b.width = W;
      b.height = 1;
      b.pixel_stride = forms[f].pstride;
      for (c = 0; c < 3; c++) {
        b.rgb_offset[c] = forms[f].offs[c];
        b.scale[c] = (c + 1) / 255.0f;
        b.bias[c] = 0.1f * c;
      }
      b.extra_offset = forms[f].extra;
      cbi_frame_batch_map_output_back (&b);
      b.out_channels = forms[f].channels;
      b.n_frames = b.n_slots = 1;
      stride[0] = W * forms[f].pstride;
      b.in = in;
      b.in_stride = stride;
      b.out = out;
      b.out_stride = stride;
      /* the fourth byte passes through only where the input has the
       * output's size */
      if (!forms[f].copy)
        b.out_width = W, b.out_height = 1, b.width = W + 1;
      memset (out_px, 0xaa, 4 * W);
      if (cl)
        cbi_unpack_frames_channels_last (&b, t);
      else
        cbi_unpack_frames (&b, t);
      for (x = 0; x < W; x++) {
        const guint8 *px = out_px + x * forms[f].pstride;
        for (c = 0; c < 3; c++)
          fail_unless_equals_int (px[forms[f].offs[c]],
              unpack_reference (&b, t, forms[f].channels, cl, W, x, c));
        if (forms[f].pstride == 4)
          fail_unless_equals_int (px[forms[f].extra], forms[f].channels == 4 ?
              unpack_reference (&b, t, 4, cl, W, x, 3) : forms[f].copy ?
              in_px[x * 4 + forms[f].extra] : 255);
      }
    }
  }
  g_free (t);
  g_free (in_px);
  g_free (out_px);
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


GST_START_TEST (test_letterbox_window_fills_the_limiting_side_and_centres)
{
  CbiScaleWindow w;

  /* 16:9 into a square: full width, 9/16 of the height, centred */
  cbi_scale_window (CBI_SCALE_LETTERBOX, 1920, 1080, 224, 224, &w);
  fail_unless_equals_int (w.width, 224);
  fail_unless_equals_int (w.height, 126);
  fail_unless_equals_int (w.x, 0);
  fail_unless_equals_int (w.y, 49);
  /* tall into wide: full height; the odd pixel of padding goes right */
  cbi_scale_window (CBI_SCALE_LETTERBOX, 2, 4, 5, 4, &w);
  fail_unless_equals_int (w.width, 2);
  fail_unless_equals_int (w.height, 4);
  fail_unless_equals_int (w.x, 1);
  fail_unless_equals_int (w.y, 0);
  /* the same aspect ratio, and stretch: the whole frame */
  cbi_scale_window (CBI_SCALE_LETTERBOX, 64, 48, 32, 24, &w);
  fail_unless (w.x == 0 && w.y == 0 && w.width == 32 && w.height == 24);
  cbi_scale_window (CBI_SCALE_STRETCH, 1920, 1080, 224, 224, &w);
  fail_unless (w.x == 0 && w.y == 0 && w.width == 224 && w.height == 224);
  /* a sliver never becomes an empty window */
  cbi_scale_window (CBI_SCALE_LETTERBOX, 1000, 1, 8, 8, &w);
  fail_unless_equals_int (w.height, 1);
}

GST_END_TEST;

/* An RGB batch of @n frames scaled into @w x @h slots. */
static void
init_scaled_batch (CbiFrameBatch * b, CbiScaling scaling, guint w, guint h,
    guint n, const guint8 * const *in, const gint * stride,
    const guint * in_w, const guint * in_h)
{
  guint c;

  *b = cbi_test_rgb_batch (w, h, n, in, NULL, stride);
  /* bytes as they are: the expected values read as bytes */
  for (c = 0; c < 3; c++)
    b->scale[c] = 1.0f;
  cbi_frame_batch_map_output_back (b);
  b->n_frames = n;
  b->scaling = scaling;
  b->in_width = in_w;
  b->in_height = in_h;
}

GST_START_TEST (test_stretch_to_half_size_averages_each_two_by_two_block)
{
  guint8 px[4 * 4 * 3];
  const guint8 *in[1] = { px };
  const gint stride[1] = { 12 };
  const guint in_w[1] = { 4 }, in_h[1] = { 4 };
  gfloat t[3 * 2 * 2];
  CbiFrameBatch b;
  guint x, y, c;

  for (y = 0; y < 4; y++)
    for (x = 0; x < 4; x++)
      for (c = 0; c < 3; c++)
        px[(y * 4 + x) * 3 + c] = 40 * c + 8 * y + 4 * x;
  init_scaled_batch (&b, CBI_SCALE_STRETCH, 2, 2, 1, in, stride, in_w, in_h);
  cbi_pack_frames (&b, t);
  for (c = 0; c < 3; c++)
    for (y = 0; y < 2; y++)
      for (x = 0; x < 2; x++)
        /* the mean of rows 2y, 2y+1 and columns 2x, 2x+1 */
        fail_unless_equals_float (t[c * 4 + y * 2 + x],
            40 * c + 8 * (2 * y) + 4 + 4 * (2 * x) + 2);
}

GST_END_TEST;

GST_START_TEST (test_letterbox_packs_black_bars_and_unpack_gives_back_each_size)
{
  /* a wide 4x2 and a tall 2x4 frame in 4x4 slots: both fit at scale 1,
   * so what comes back is exactly what went in */
  guint8 wide[4 * 2 * 3], tall[2 * 4 * 3], out0[4 * 2 * 3], out1[2 * 4 * 3];
  const guint8 *in[2] = { wide, tall };
  guint8 *out[2] = { out0, out1 };
  const gint stride[2] = { 12, 6 };
  const guint in_w[2] = { 4, 2 }, in_h[2] = { 2, 4 };
  gfloat t[2 * 3 * 16];
  CbiFrameBatch b;
  guint i, x, y;

  for (i = 0; i < sizeof (wide); i++) {
    wide[i] = 10 + i;
    tall[i] = 100 + i;
  }
  init_scaled_batch (&b, CBI_SCALE_LETTERBOX, 4, 4, 2, in, stride, in_w, in_h);
  b.bias[0] = b.bias[1] = b.bias[2] = -0.5f;
  cbi_frame_batch_map_output_back (&b);
  cbi_pack_frames (&b, t);
  /* the wide frame: rows 1 and 2, black (byte 0: the bias) above and
   * below; the tall one: columns 1 and 2, black beside */
  for (y = 0; y < 4; y++)
    for (x = 0; x < 4; x++) {
      gboolean in_wide = y == 1 || y == 2, in_tall = x == 1 || x == 2;
      fail_unless_equals_float (t[y * 4 + x], in_wide ?
          wide[((y - 1) * 4 + x) * 3] - 0.5f : -0.5f);
      fail_unless_equals_float (t[48 + 16 + y * 4 + x], in_tall ?
          tall[(y * 2 + x - 1) * 3 + 1] - 0.5f : -0.5f);
    }

  b.out = out;
  b.out_stride = stride;
  b.out_frame_width = in_w;
  b.out_frame_height = in_h;
  memset (out0, 0, sizeof (out0));
  memset (out1, 0, sizeof (out1));
  cbi_unpack_frames (&b, t);
  fail_unless (memcmp (out0, wide, sizeof (wide)) == 0);
  fail_unless (memcmp (out1, tall, sizeof (tall)) == 0);
}

GST_END_TEST;

/* The CUDA backend unpacks a scaled frame at the model's size on the
 * device and scales its window back as it copies it out
 * (cbi_frame_batch_scale_row_out ()); the CPU scales the values. Both
 * must give the same bytes. */
GST_START_TEST (test_scaled_unpack_matches_the_bytes_path_of_the_gpu)
{
  const guint W = 6, H = 6, iw = 9, ih = 5, ow = 13, oh = 7;
  guint8 frame[9 * 5 * 4], model[6 * 6 * 4], cpu[13 * 7 * 4], gpu[13 * 7 * 4];
  guint8 staged[6 * 6 * 4];
  const guint8 *in[1] = { frame }, *staged_in[1] = { staged };
  guint8 *model_out[1] = { model }, *cpu_out[1] = { cpu };
  const gint in_stride[1] = { 9 * 4 }, model_stride[1] = { 6 * 4 };
  const gint out_stride[1] = { 13 * 4 };
  const guint in_w[1] = { iw }, in_h[1] = { ih };
  const guint out_w[1] = { ow }, out_h[1] = { oh };
  gfloat t[3 * 6 * 6], t_gpu[3 * 6 * 6];
  CbiFrameBatch b;
  guint i, y;

  for (i = 0; i < sizeof (frame); i++)
    frame[i] = (i * 37 + (i / 36) * 11) % 251;
  init_bgrx_batch (&b, 1, 1, CBI_PAD_ZERO);
  b.width = W;
  b.height = H;
  b.in = in;
  b.in_stride = in_stride;
  b.scaling = CBI_SCALE_LETTERBOX;
  b.in_width = in_w;
  b.in_height = in_h;
  cbi_pack_frames (&b, t);
  /* the GPU's way in: scaled into staging as bytes, then packed as a
   * frame of the model's size */
  for (y = 0; y < H; y++)
    cbi_frame_batch_scale_row_in (&b, 0, y, 0, W, staged + y * W * 4);
  b.scaling = CBI_SCALE_NONE;
  b.in = staged_in;
  b.in_stride = model_stride;
  cbi_pack_frames (&b, t_gpu);
  fail_unless (memcmp (t, t_gpu, sizeof (t)) == 0);
  /* a model that changes the values, not only passes them */
  for (i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = t[i] * 1.3f - 0.1f;

  b.scaling = CBI_SCALE_LETTERBOX;
  b.in = in;
  b.in_stride = in_stride;
  b.out = cpu_out;
  b.out_stride = out_stride;
  b.out_frame_width = out_w;
  b.out_frame_height = out_h;
  cbi_unpack_frames (&b, t);

  /* the GPU's way: unpacked as the model's frame, then scaled as bytes */
  b.scaling = CBI_SCALE_NONE;
  b.in = staged_in;
  b.in_stride = model_stride;
  b.out = model_out;
  b.out_stride = model_stride;
  cbi_unpack_frames (&b, t);
  b.scaling = CBI_SCALE_LETTERBOX;
  for (y = 0; y < oh; y++)
    cbi_frame_batch_scale_row_out (&b, 0, y, 0, ow, model, W * 4,
        gpu + y * ow * 4);
  /* the fourth byte too: opaque on both */
  for (i = 0; i < sizeof (cpu); i++)
    fail_unless (cpu[i] == gpu[i] && (i % 4 != 3 || cpu[i] == 255),
        "byte %u: cpu %u, gpu %u", i, cpu[i], gpu[i]);
}

GST_END_TEST;

/* A model whose output is twice its input (super-resolution): the
 * picture's window in the output is its input window doubled, so no row
 * of the bars blends into the frame's edge. */
GST_START_TEST (test_letterbox_window_of_a_resizing_output_is_the_input_doubled)
{
  const guint in_w[1] = { 3 }, in_h[1] = { 2 }, out_w[1] = { 6 }, out_h[1] = {
    4
  };
  guint8 px[3 * 2 * 3], out_px[6 * 4 * 3];
  const guint8 *in[1] = { px };
  guint8 *out[1] = { out_px };
  const gint stride[1] = { 9 }, out_stride[1] = { 18 };
  gfloat t[3 * 16 * 16];
  CbiScaleWindow w;
  CbiFrameBatch b;
  guint c, y, x;

  init_scaled_batch (&b, CBI_SCALE_LETTERBOX, 8, 8, 1, in, stride, in_w, in_h);
  b.out_width = b.out_height = 16;
  b.out = out;
  b.out_stride = out_stride;
  b.out_frame_width = out_w;
  b.out_frame_height = out_h;
  /* 3x2 in 8x8: rows 1..5; in 16x16: rows 2..11 */
  cbi_frame_batch_out_window (&b, 0, &w);
  fail_unless (w.x == 0 && w.width == 16 && w.y == 2 && w.height == 10,
      "window %u,%u %ux%u", w.x, w.y, w.width, w.height);
  /* the picture white, the bars black */
  for (c = 0; c < 3; c++)
    for (y = 0; y < 16; y++)
      for (x = 0; x < 16; x++)
        t[(c * 16 + y) * 16 + x] = y >= 2 && y < 12 ? 255.0f : 0.0f;
  memset (out_px, 0, sizeof (out_px));
  cbi_unpack_frames (&b, t);
  for (x = 0; x < sizeof (out_px); x++)
    fail_unless_equals_int (out_px[x], 255);
}

GST_END_TEST;

/* ---- 4:2:0 ---- */

/* A 4:2:0 frame of @w x @h with rows @pad bytes longer than needed, in
 * planes of their own (@step 1: I420) or with Cb and Cr interleaved
 * (@step 2: NV12); varied bytes, @seed apart. */
typedef struct
{
  guint8 luma[16 * 16], chroma[2 * 16 * 16];
  const guint8 *cb, *cr;
  gint stride, chroma_stride;
} Yuv420Frame;

static void
yuv420_frame_init (Yuv420Frame * y, guint w, guint h, guint step, guint pad,
    guint seed)
{
  guint i;

  g_assert (w + pad <= 16 && h <= 16);
  for (i = 0; i < sizeof (y->luma); i++)
    y->luma[i] = (guint8) (i * 37 + seed * 11 + 5);
  for (i = 0; i < sizeof (y->chroma); i++)
    y->chroma[i] = (guint8) (i * 53 + seed * 29 + 17);
  y->stride = w + pad;
  y->chroma_stride = ((w + 1) / 2) * step + pad;
  y->cb = y->chroma;
  y->cr = step == 2 ? y->chroma + 1 : y->chroma + 8 * 16;
}

/* The R'G'B' bytes videoconvert gives for pixel (@x, @y) of @f. */
static void
yuv420_pixel (const Yuv420Frame * f, const CbiYuvMatrix * m, guint step,
    guint x, guint y, guint8 * rgb)
{
  const gsize c = (gsize) (y / 2) * f->chroma_stride + (x / 2) * step;

  cbi_yuv_to_rgb (m->to_rgb, f->luma[y * f->stride + x], f->cb[c], f->cr[c],
      rgb);
}

/* 4:2:0 frames of odd sizes, planar and interleaved, each of its own
 * colorimetry, pack to exactly the values of their R'G'B' conversion
 * packed as RGB (and BGR for a BGR model), NCHW and channels last,
 * whole or scaled (letterboxed), and the padding slot repeats the last. */
GST_START_TEST (test_yuv420_pack_equals_the_pack_of_its_rgb_conversion)
{
  const guint w = 7, h = 5;
  CbiYuvMatrix m[2];
  guint step, bgr, scaled, layout;

  cbi_yuv_matrix_init (&m[0], 0.299, 0.114, FALSE);
  cbi_yuv_matrix_init (&m[1], 0.2126, 0.0722, TRUE);
  for (step = 1; step <= 2; step++)
    for (bgr = 0; bgr < 2; bgr++)
      for (scaled = 0; scaled < 2; scaled++)
        for (layout = 0; layout < 2; layout++) {
          Yuv420Frame yf[2];
          guint8 rgb[2][16 * 16 * 3];
          const guint8 *in[2], *rgb_in[2] = { rgb[0], rgb[1] };
          const guint8 *cb[2], *cr[2];
          gint stride[2], cstride[2], rgb_stride[2] = { w * 3, w * 3 };
          const guint iw[2] = { w, w }, ih[2] = { h, h };
          gfloat t[3 * 3 * 16 * 16], want[3 * 3 * 16 * 16];
          CbiFrameBatch b, r;
          guint f, x, y, c;

          memset (&b, 0, sizeof (b));
          /* scaled: into a model of 6x6, letterboxed */
          b.width = scaled ? 6 : w;
          b.height = scaled ? 6 : h;
          b.pixel_stride = 3;
          for (c = 0; c < 3; c++) {
            b.rgb_offset[c] = bgr ? 2 - c : c;
            b.scale[c] = 1.0f / (50.0f + c);
            b.bias[c] = -0.5f + 0.25f * c;
          }
          b.extra_offset = -1;
          b.n_frames = 2;
          b.n_slots = 3;
          b.pad_mode = CBI_PAD_REPEAT_LAST;
          b.scaling = scaled ? CBI_SCALE_LETTERBOX : CBI_SCALE_NONE;
          b.in_width = iw;
          b.in_height = ih;
          r = b;
          for (f = 0; f < 2; f++) {
            yuv420_frame_init (&yf[f], w, h, step, 3, f);
            in[f] = yf[f].luma;
            cb[f] = yf[f].cb;
            cr[f] = yf[f].cr;
            stride[f] = yf[f].stride;
            cstride[f] = yf[f].chroma_stride;
            for (y = 0; y < h; y++)
              for (x = 0; x < w; x++)
                yuv420_pixel (&yf[f], &m[f], step, x, y,
                    rgb[f] + (y * w + x) * 3);
          }
          b.layout = CBI_PIXELS_YUV420;
          b.yuv = m;
          b.chroma_step = step;
          b.in = in;
          b.in_stride = stride;
          b.in_cb = cb;
          b.in_cr = cr;
          b.in_chroma_stride = cstride;
          r.in = rgb_in;
          r.in_stride = rgb_stride;
          if (layout) {
            cbi_pack_frames_channels_last (&b, t);
            cbi_pack_frames_channels_last (&r, want);
          } else {
            cbi_pack_frames (&b, t);
            cbi_pack_frames (&r, want);
          }
          fail_unless (memcmp (t, want, 3 * 3 * b.width * b.height *
                  sizeof (gfloat)) == 0, "step %u, bgr %u, scaled %u, "
              "channels last %u", step, bgr, scaled, layout);
        }
}

GST_END_TEST;

/* Unpacking to 4:2:0 of an odd size: each luma byte is its pixel's, each
 * chroma byte the rounded mean of the (up to) 2x2 pixels it covers, as
 * cbi_rgb_to_yuv () gives them; no byte past the planes is written. */
GST_START_TEST (test_yuv420_unpack_writes_luma_and_each_blocks_mean_chroma)
{
  const guint w = 5, h = 3, cw = 3, ch = 2;
  CbiYuvMatrix m;
  guint step;

  cbi_yuv_matrix_init (&m, 0.2126, 0.0722, FALSE);
  for (step = 1; step <= 2; step++) {
    guint8 luma[16 * 16], chroma[2 * 16 * 16];
    guint8 *out[1] = { luma }, *cb[1] = { chroma }, *cr[1];
    const gint stride[1] = { 8 }, cstride[1] = { 8 };
    guint8 rgb[5 * 3 * 3];
    gfloat t[3 * 5 * 3];
    CbiFrameBatch b;
    guint x, y, c, i;

    cr[0] = step == 2 ? chroma + 1 : chroma + 64;
    memset (&b, 0, sizeof (b));
    b.width = w;
    b.height = h;
    b.pixel_stride = 3;
    b.extra_offset = -1;
    for (c = 0; c < 3; c++) {
      b.rgb_offset[c] = c;
      b.scale[c] = 1.0f / 255.0f;
    }
    cbi_frame_batch_map_output_back (&b);
    b.n_frames = b.n_slots = 1;
    b.layout = CBI_PIXELS_YUV420;
    b.yuv = &m;
    b.chroma_step = step;
    b.out = out;
    b.out_stride = stride;
    b.out_cb = cb;
    b.out_cr = cr;
    b.out_chroma_stride = cstride;
    for (i = 0; i < sizeof (rgb); i++)
      rgb[i] = (guint8) (i * 41 + 3);
    /* NCHW values whose bytes are rgb */
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        for (c = 0; c < 3; c++)
          t[c * w * h + y * w + x] = rgb[(y * w + x) * 3 + c] / 255.0f;
    memset (luma, 0xab, sizeof (luma));
    memset (chroma, 0xab, sizeof (chroma));
    cbi_unpack_frames (&b, t);

    for (y = 0; y < 16; y++)
      for (x = 0; x < 8; x++) {
        const guint8 *p = rgb + (y * w + x) * 3;
        if (y < h && x < w) {
          fail_unless_equals_int (luma[y * 8 + x],
              cbi_rgb_to_yuv (m.to_luma, p[0], p[1], p[2]));
        } else {
          fail_unless_equals_int (luma[y * 8 + x], 0xab);
        }
      }
    for (y = 0; y < ch; y++)
      for (x = 0; x < cw; x++) {
        guint su = 0, sv = 0, n = 0, dx, dy;
        for (dy = 0; dy < 2; dy++)
          for (dx = 0; dx < 2; dx++) {
            const guint px = 2 * x + dx, py = 2 * y + dy;
            const guint8 *p = rgb + (py * w + px) * 3;
            if (px >= w || py >= h)
              continue;
            su += cbi_rgb_to_yuv (m.to_cb, p[0], p[1], p[2]);
            sv += cbi_rgb_to_yuv (m.to_cr, p[0], p[1], p[2]);
            n++;
          }
        fail_unless_equals_int (cb[0][y * 8 + x * step], (su + n / 2) / n);
        fail_unless_equals_int (cr[0][y * 8 + x * step], (sv + n / 2) / n);
      }
    /* past each chroma row, and past the rows */
    if (step == 1) {
      fail_unless_equals_int (chroma[cw], 0xab);
      fail_unless_equals_int (chroma[64 + cw], 0xab);
      fail_unless_equals_int (chroma[ch * 8], 0xab);
    } else {
      fail_unless_equals_int (chroma[2 * cw], 0xab);
      fail_unless_equals_int (chroma[ch * 8], 0xab);
    }
  }
}

GST_END_TEST;

static Suite *
frames_suite (void)
{
  Suite *s = suite_create ("cbiframes");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pack_puts_channels_in_model_order_and_fills_padding);
  tcase_add_test (tc, test_yuv420_pack_equals_the_pack_of_its_rgb_conversion);
  tcase_add_test (tc,
      test_yuv420_unpack_writes_luma_and_each_blocks_mean_chroma);
  tcase_add_test (tc,
      test_pack_scales_and_shifts_each_channel_and_unpack_undoes_it);
  tcase_add_test (tc, test_pack_of_wide_rows_gives_each_pixel_exactly);
  tcase_add_test (tc, test_unpack_clamps_and_copies_the_fourth_byte);
  tcase_add_test (tc, test_unpack_gives_each_byte_of_every_layout_and_format);
  tcase_add_test (tc,
      test_letterbox_window_fills_the_limiting_side_and_centres);
  tcase_add_test (tc, test_stretch_to_half_size_averages_each_two_by_two_block);
  tcase_add_test (tc,
      test_letterbox_packs_black_bars_and_unpack_gives_back_each_size);
  tcase_add_test (tc, test_scaled_unpack_matches_the_bytes_path_of_the_gpu);
  tcase_add_test (tc,
      test_letterbox_window_of_a_resizing_output_is_the_input_doubled);
  return s;
}

GST_CHECK_MAIN (frames);
