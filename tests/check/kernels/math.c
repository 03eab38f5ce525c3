/* GStreamer cudabatchinfer: the per-element math of the CUDA kernels
 * (math/cbimath.h), checked on the CPU against plain formulas
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The kernels call these functions and nothing else for their math, so
 * what passes here is what a GPU computes, on a machine without one.
 */
#include <gst/check/gstcheck.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "cbimath.h"

#define assert_close(a, b, tol) G_STMT_START { \
  double _a = (a), _b = (b); \
  fail_unless (fabs (_a - _b) <= (tol), \
      "'%s' (%.9g) is not within %g of '%s' (%.9g)", #a, _a, \
      (double) (tol), #b, _b); \
} G_STMT_END

/* ---- float32 <-> 16-bit floats ---- */

/* @f rounded to @mant mantissa bits, ties to even, in double: the
 * smallest exponent @min_exp (below it subnormal, steps of 2^(min_exp -
 * mant)), infinite from @overflow on */
static double
round_to_format (double f, int mant, int min_exp, double overflow)
{
  double a = fabs (f), step, q;
  int e;

  if (a == 0.0 || isnan (a) || isinf (a))
    return f;
  e = MAX ((int) floor (log2 (a)), min_exp);
  /* log2 may land one off near a power of two */
  if (ldexp (1.0, e) > a && e > min_exp)
    e--;
  else if (ldexp (1.0, e + 1) <= a)
    e++;
  step = ldexp (1.0, e - mant);
  q = rint (a / step) * step;
  if (q >= overflow)
    q = INFINITY;
  return copysign (q, f);
}

/* The floats checked: every sign and exponent, with these top 7
 * mantissa bits (the ends of a binade, the middle, an odd pattern) and
 * these low 16 bits (the ties of fp16's 13 dropped bits and bf16's 16,
 * their neighbours, the ends of a step): 33,792 values, few enough for
 * valgrind. */
static const uint32_t rounding_tops[] = { 0x00, 0x01, 0x2a, 0x3f, 0x40, 0x7f };

static const uint32_t rounding_lows[] = { 0x0000, 0x0001, 0x0fff, 0x1000,
  0x1001, 0x1fff, 0x7fff, 0x8000, 0x8001, 0xffff, 0x2a5a
};

#define N_ROUNDING_CASES (512 * G_N_ELEMENTS (rounding_tops) \
    * G_N_ELEMENTS (rounding_lows))

/* the bits of checked float @k, 0 <= k < N_ROUNDING_CASES */
static uint32_t
rounding_case (uint32_t k)
{
  const uint32_t lows = G_N_ELEMENTS (rounding_lows);
  const uint32_t tops = G_N_ELEMENTS (rounding_tops);

  return (k / (lows * tops) << 23) | (rounding_tops[k / lows % tops] << 16)
      | rounding_lows[k % lows];
}

static float
float_of_bits (uint32_t u)
{
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
}

/* Every float of rounding_case () through @from and back through @to is
 * the float rounded in double to @mant mantissa bits (round_to_format ());
 * NaN stays NaN. */
static void
assert_rounds (uint16_t (*from) (float), float (*to) (uint16_t), int mant,
    int min_exp, double overflow, const gchar * name)
{
  uint32_t k;

  for (k = 0; k < N_ROUNDING_CASES; k++) {
    const uint32_t bits = rounding_case (k);
    float f = float_of_bits (bits);
    float got = to (from (f));
    double want = round_to_format (f, mant, min_exp, overflow);
    if (isnan (f)) {
      fail_unless (isnan (got), "NaN %08x gave %g in %s", bits, got, name);
      continue;
    }
    fail_unless ((double) got == want && !signbit (got) == !signbit (want),
        "%.9g (%08x) rounds to %.9g in %s, not %.9g", f, bits, want, name, got);
  }
}

#ifdef __FLT16_MAX__
static float
compiler_fp16 (uint16_t h)
{
  _Float16 v;
  memcpy (&v, &h, sizeof v);
  return (float) v;
}

static uint16_t
compiler_fp16_bits (float f)
{
  _Float16 v = (_Float16) f;
  uint16_t h;
  memcpy (&h, &v, sizeof h);
  return h;
}
#endif

GST_START_TEST (test_fp16_rounds_to_nearest_even_and_overflows_past_65504)
{
  assert_rounds (cbi_fp16_from_float, cbi_fp16_to_float, 10, -14, 65520.0,
      "fp16");
#ifdef __FLT16_MAX__
  /* the compiler's own binary16 rounds the same */
  assert_rounds (compiler_fp16_bits, compiler_fp16, 10, -14, 65520.0,
      "_Float16");
#endif
  fail_unless_equals_int (cbi_fp16_from_float (65504.0f), 0x7bff);
  fail_unless_equals_int (cbi_fp16_from_float (65519.99f), 0x7bff);
  fail_unless_equals_int (cbi_fp16_from_float (65520.0f), 0x7c00);
  fail_unless_equals_int (cbi_fp16_from_float (-1e5f), 0xfc00);
  fail_unless_equals_int (cbi_fp16_from_float (5.9604645e-8f), 0x0001);
  fail_unless_equals_int (cbi_fp16_from_float (2.9802322e-8f), 0x0000);
}

GST_END_TEST;

GST_START_TEST (test_every_fp16_and_bf16_value_survives_float_and_back)
{
  uint32_t h;

  for (h = 0; h < 0x10000; h++) {
    float f = cbi_fp16_to_float ((uint16_t) h);
    float b = cbi_bf16_to_float ((uint16_t) h);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0)
      fail_unless (isnan (f) && (cbi_fp16_from_float (f) & 0x7fff) > 0x7c00);
    else
      fail_unless_equals_int (cbi_fp16_from_float (f), h);
    if ((h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0)
      fail_unless (isnan (b) && (cbi_bf16_from_float (b) & 0x7fff) > 0x7f80);
    else
      fail_unless_equals_int (cbi_bf16_from_float (b), h);
  }
  /* the subnormals are exact */
  fail_unless_equals_float (cbi_fp16_to_float (0x0001), 5.9604644775390625e-8f);
  fail_unless_equals_float (cbi_fp16_to_float (0x03ff),
      1023 * 5.9604644775390625e-8f);
}

GST_END_TEST;

GST_START_TEST (test_bf16_rounds_to_nearest_even_and_keeps_float_range)
{
  assert_rounds (cbi_bf16_from_float, cbi_bf16_to_float, 7, -126, 0x1p128,
      "bf16");
  /* what overflows fp16 does not overflow bf16 */
  fail_unless_equals_float (cbi_bf16_to_float (cbi_bf16_from_float (1e5f)),
      99840.0f);
  fail_unless_equals_int (cbi_half_from_float (CBI_K_HALF_BF16, 1.0f), 0x3f80);
  fail_unless_equals_int (cbi_half_from_float (CBI_K_HALF_FP16, 1.0f), 0x3c00);
}

GST_END_TEST;

/* ---- bytes <-> floats ---- */

GST_START_TEST (test_from_byte_is_byte_times_scale_plus_bias)
{
  const float scale[2] = { 1.0f / 255.0f, 1.0f / (255.0f * 0.229f) };
  const float bias[2] = { 0.0f, -0.485f / 0.229f };
  int b, k;

  for (k = 0; k < 2; k++)
    for (b = 0; b < 256; b++)
      fail_unless_equals_float (cbi_from_byte ((uint8_t) b, scale[k],
              bias[k]), (float) b * scale[k] + bias[k]);
  fail_unless_equals_float (cbi_from_byte (255, 1.0f / 255.0f, 0.0f), 1.0f);
  fail_unless_equals_float (cbi_from_byte (0, 1.0f / 255.0f, 0.0f), 0.0f);
}

GST_END_TEST;

GST_START_TEST (test_to_byte_rounds_half_up_and_clamps_to_0_255)
{
  /* identity mapping: the byte is v rounded half up, within 0..255 */
  fail_unless_equals_int (cbi_to_byte (0.0f, 1.0f, 0.0f), 0);
  fail_unless_equals_int (cbi_to_byte (0.49f, 1.0f, 0.0f), 0);
  fail_unless_equals_int (cbi_to_byte (0.5f, 1.0f, 0.0f), 1);
  fail_unless_equals_int (cbi_to_byte (1.5f, 1.0f, 0.0f), 2);
  fail_unless_equals_int (cbi_to_byte (127.499f, 1.0f, 0.0f), 127);
  fail_unless_equals_int (cbi_to_byte (254.49f, 1.0f, 0.0f), 254);
  fail_unless_equals_int (cbi_to_byte (254.5f, 1.0f, 0.0f), 255);
  fail_unless_equals_int (cbi_to_byte (255.0f, 1.0f, 0.0f), 255);
  fail_unless_equals_int (cbi_to_byte (1e9f, 1.0f, 0.0f), 255);
  fail_unless_equals_int (cbi_to_byte (-0.5f, 1.0f, 0.0f), 0);
  fail_unless_equals_int (cbi_to_byte (-1e9f, 1.0f, 0.0f), 0);
}

GST_END_TEST;

GST_START_TEST (test_to_byte_gives_0_for_nan_and_clamps_infinities)
{
  fail_unless_equals_int (cbi_to_byte (NAN, 1.0f, 0.0f), 0);
  fail_unless_equals_int (cbi_to_byte (-NAN, 255.0f, 3.0f), 0);
  fail_unless_equals_int (cbi_to_byte (INFINITY, 255.0f, 0.0f), 255);
  fail_unless_equals_int (cbi_to_byte (-INFINITY, 255.0f, 0.0f), 0);
}

GST_END_TEST;

GST_START_TEST (test_to_byte_is_floor_of_mapped_value_plus_half)
{
  const float scale = 1.0f / (255.0f * 0.224f), bias = -0.456f / 0.224f;
  float inv, off, v;

  cbi_byte_mapping (scale, bias, &inv, &off);
  fail_unless_equals_float (inv, 1.0f / scale);
  fail_unless_equals_float (off, -bias * (1.0f / scale));
  for (v = -3.0f; v < 3.0f; v += 0.001f) {
    float s = v * inv + off + 0.5f;
    int want = s <= 0.0f ? 0 : s >= 255.0f ? 255 : (int) floorf (s);
    fail_unless_equals_int (cbi_to_byte (v, inv, off), want);
  }
}

GST_END_TEST;

GST_START_TEST (test_every_byte_survives_pack_then_unpack)
{
  const float scales[3] = { 1.0f / 255.0f, 1.0f / (255.0f * 0.229f), 1.0f };
  const float biases[3] = { 0.0f, -0.485f / 0.229f, -128.0f };
  int b, k;

  for (k = 0; k < 3; k++) {
    float inv, off;
    cbi_byte_mapping (scales[k], biases[k], &inv, &off);
    for (b = 0; b < 256; b++)
      fail_unless_equals_int (cbi_to_byte (cbi_from_byte ((uint8_t) b,
                  scales[k], biases[k]), inv, off), b);
  }
}

GST_END_TEST;

GST_START_TEST (test_pack_source_repeats_the_last_frame_or_gives_zeros)
{
  fail_unless_equals_int (cbi_pack_source (0, 3, 1), 0);
  fail_unless_equals_int (cbi_pack_source (2, 3, 0), 2);
  fail_unless_equals_int (cbi_pack_source (3, 3, 1), 2);
  fail_unless_equals_int (cbi_pack_source (15, 3, 1), 2);
  fail_unless_equals_int (cbi_pack_source (3, 3, 0), -1);
  /* nothing to repeat in an empty batch */
  fail_unless_equals_int (cbi_pack_source (0, 0, 1), -1);
}

GST_END_TEST;

GST_START_TEST (test_unpack_map_sends_grey_to_every_colour_byte)
{
  const float out_scale[3] = { 2.0f, 4.0f, 8.0f };
  const float out_offset[3] = { -2.0f, -8.0f, -24.0f };
  CbiUnpackMap m;
  int c;

  cbi_unpack_map_init (&m, 1, out_scale, out_offset);
  fail_unless_equals_int (m.channels, 1);
  for (c = 0; c < 3; c++) {
    fail_unless_equals_int (m.src[c], 0);
    fail_unless_equals_float (m.inv[c], 2.0f);
    fail_unless_equals_float (m.off[c], -2.0f);
  }

  cbi_unpack_map_init (&m, 3, out_scale, out_offset);
  for (c = 0; c < 3; c++) {
    fail_unless_equals_int (m.src[c], c);
    fail_unless_equals_float (m.inv[c], out_scale[c]);
    fail_unless_equals_float (m.off[c], out_offset[c]);
  }
}

GST_END_TEST;

GST_START_TEST (test_unpack_map_scales_a_fourth_channel_as_0_without_bias)
{
  const float out_scale[3] = { 2.0f, 4.0f, 8.0f };
  const float out_offset[3] = { -2.0f, -8.0f, -24.0f };
  CbiUnpackMap m;

  cbi_unpack_map_init (&m, 4, out_scale, out_offset);
  fail_unless_equals_int (m.src[3], 3);
  fail_unless_equals_float (m.inv[3], 2.0f);
  fail_unless_equals_float (m.off[3], 0.0f);
  fail_unless_equals_int (cbi_to_byte (100.0f, m.inv[3], m.off[3]), 200);
}

GST_END_TEST;

/* ---- element-wise and binary ops ---- */

GST_START_TEST (test_relu_passes_positives_and_scales_negatives)
{
  fail_unless_equals_float (cbi_eltwise (CBI_K_RELU, 2.5f, 0.0f, 0.0f), 2.5f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_RELU, -2.5f, 0.0f, 0.0f), 0.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_RELU, -2.0f, 0.1f, 0.0f),
      -2.0f * 0.1f);
  /* plain ReLU: 0 for -inf and NaN, as oneDNN's vector code */
  fail_unless_equals_float (cbi_eltwise (CBI_K_RELU, -INFINITY, 0.0f, 0.0f),
      0.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_RELU, NAN, 0.0f, 0.0f), 0.0f);
  /* LeakyRelu keeps NaN */
  fail_unless (isnan (cbi_eltwise (CBI_K_RELU, NAN, 0.01f, 0.0f)));
}

GST_END_TEST;

GST_START_TEST (test_hardswish_is_x_relu6_x_plus_3_over_6)
{
  const float xs[] = { -5.0f, -3.0f, -1.5f, -0.5f, 0.0f, 0.5f, 1.0f, 2.9f,
    3.0f, 4.0f, 100.0f
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (xs); i++) {
    double x = xs[i];
    double want = x * fmin (fmax (x + 3.0, 0.0), 6.0) / 6.0;
    assert_close (cbi_eltwise (CBI_K_HARD_SWISH, xs[i], 0.0f, 0.0f), want,
        1e-6 * fmax (1.0, fabs (want)));
  }
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SWISH, -1.5f, 0, 0),
      -0.375f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SWISH, 3.0f, 0, 0), 3.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SWISH, -3.0f, 0, 0), 0.0f);
}

GST_END_TEST;

GST_START_TEST (test_hardsigmoid_is_alpha_x_plus_beta_within_0_1)
{
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SIGMOID, 0.0f, 0.2f,
          0.5f), 0.5f);
  assert_close (cbi_eltwise (CBI_K_HARD_SIGMOID, 1.0f, 0.2f, 0.5f), 0.7, 1e-7);
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SIGMOID, 2.5f, 0.2f,
          0.5f), 1.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SIGMOID, 10.0f, 0.2f,
          0.5f), 1.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SIGMOID, -2.5f, 0.2f,
          0.5f), 0.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SIGMOID, -10.0f, 0.2f,
          0.5f), 0.0f);
  /* as a clip: its minimum for NaN */
  fail_unless_equals_float (cbi_eltwise (CBI_K_HARD_SIGMOID, NAN, 0.2f,
          0.5f), 0.0f);
}

GST_END_TEST;

GST_START_TEST (test_elu_is_alpha_exp_minus_1_below_0)
{
  fail_unless_equals_float (cbi_eltwise (CBI_K_ELU, 1.5f, 0.7f, 0.0f), 1.5f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_ELU, 0.0f, 0.7f, 0.0f), 0.0f);
  assert_close (cbi_eltwise (CBI_K_ELU, -1.0f, 0.7f, 0.0f),
      0.7 * (exp (-1.0) - 1.0), 1e-7);
  assert_close (cbi_eltwise (CBI_K_ELU, -1e-4f, 1.0f, 0.0f),
      expm1 (-1e-4), 1e-10);
  fail_unless_equals_float (cbi_eltwise (CBI_K_ELU, -INFINITY, 2.0f, 0.0f),
      -2.0f);
}

GST_END_TEST;

GST_START_TEST (test_sigmoid_tanh_clip_and_identity_values)
{
  float x;

  fail_unless_equals_float (cbi_eltwise (CBI_K_SIGMOID, 0.0f, 0, 0), 0.5f);
  for (x = -20.0f; x <= 20.0f; x += 0.25f) {
    assert_close (cbi_eltwise (CBI_K_SIGMOID, x, 0, 0), 1.0 / (1.0 +
            exp (-x)), 2e-7);
    assert_close (cbi_eltwise (CBI_K_TANH, x, 0, 0), tanh (x), 2e-7);
  }
  /* no infinite denominator far below 0 */
  fail_unless_equals_float (cbi_eltwise (CBI_K_SIGMOID, -100.0f, 0, 0), 0.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_SIGMOID, 100.0f, 0, 0), 1.0f);

  fail_unless_equals_float (cbi_eltwise (CBI_K_CLIP, -7.0f, -1.0f, 6.0f),
      -1.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_CLIP, 2.0f, -1.0f, 6.0f), 2.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_CLIP, 7.0f, -1.0f, 6.0f), 6.0f);
  /* oneDNN's clip: NaN gives the minimum */
  fail_unless_equals_float (cbi_eltwise (CBI_K_CLIP, NAN, -1.0f, 6.0f), -1.0f);
  fail_unless_equals_float (cbi_eltwise (CBI_K_IDENTITY, -3.25f, 1, 2), -3.25f);
}

GST_END_TEST;

GST_START_TEST (test_unary_ops_of_issue_10_follow_libm)
{
  float x;

  for (x = -4.0f; x <= 4.0f; x += 0.125f) {
    assert_close (cbi_eltwise (CBI_K_ERF, x, 0, 0), erf (x), 1e-6);
    assert_close (cbi_eltwise (CBI_K_GELU_ERF, x, 0, 0),
        0.5 * x * (1.0 + erf (x / sqrt (2.0))), 1e-6);
    assert_close (cbi_eltwise (CBI_K_GELU_TANH, x, 0, 0),
        0.5 * x * (1.0 + tanh (sqrt (2.0 / G_PI) * (x + 0.044715 * x * x
                    * x))), 1e-6);
    assert_close (cbi_eltwise (CBI_K_EXP, x, 0, 0), exp (x), 1e-6 * exp (x));
    assert_close (cbi_eltwise (CBI_K_NEG, x, 0, 0), -x, 0.0);
    assert_close (cbi_eltwise (CBI_K_ABS, x, 0, 0), fabs (x), 0.0);
    assert_close (cbi_eltwise (CBI_K_LINEAR, x, 1.5f, -0.25f),
        1.5 * x - 0.25, 1e-6);
    assert_close (cbi_eltwise (CBI_K_SWISH, x, 1.0f, 0),
        x / (1.0 + exp (-x)), 1e-6 * MAX (1.0, fabs (x)));
    assert_close (cbi_eltwise (CBI_K_SWISH, x, 1.702f, 0),
        x / (1.0 + exp (-1.702 * x)), 1e-6 * MAX (1.0, fabs (x)));
    if (x != 0.0f)
      assert_close (cbi_eltwise (CBI_K_RECIPROCAL, x, 0, 0), 1.0 / x, 1e-6);
    if (x > 0.0f) {
      assert_close (cbi_eltwise (CBI_K_SQRT, x, 0, 0), sqrt (x), 1e-6);
      assert_close (cbi_eltwise (CBI_K_LOG, x, 0, 0), log (x), 1e-6);
      assert_close (cbi_eltwise (CBI_K_POW, x, 0.75f, 0), pow (x, 0.75), 1e-5);
    }
    /* the square exact, as oneDNN's */
    fail_unless_equals_float (cbi_eltwise (CBI_K_POW, x, 2.0f, 0), x * x);
  }
  fail_unless (isnan (cbi_eltwise (CBI_K_SQRT, -1.0f, 0, 0)));
  fail_unless (isinf (cbi_eltwise (CBI_K_LOG, 0.0f, 0, 0)));
}

GST_END_TEST;

GST_START_TEST (test_min_max_power_where_and_reductions)
{
  const float col[6] = { 1.0f, 5.0f, -2.0f, 5.0f, 0.5f, 3.0f };
  const float with_nan[3] = { 1.0f, NAN, 7.0f };
  const int64_t b_dims[2] = { 3, 1 };
  int64_t strides[4];

  fail_unless_equals_float (cbi_binary (CBI_K_MIN, 1.5f, -2.0f), -2.0f);
  fail_unless_equals_float (cbi_binary (CBI_K_MAX, 1.5f, -2.0f), 1.5f);
  fail_unless (isnan (cbi_binary (CBI_K_MAX, NAN, 1.0f)));
  fail_unless (isnan (cbi_binary (CBI_K_MIN, 1.0f, NAN)));
  fail_unless_equals_float (cbi_binary (CBI_K_POWER, 2.0f, 3.0f), 8.0f);
  fail_unless_equals_float (cbi_binary (CBI_K_POWER, 4.0f, -0.5f), 0.5f);
  fail_unless (isnan (cbi_binary (CBI_K_POWER, -2.0f, 0.5f)));
  fail_unless_equals_float (cbi_where (1.0f, 2.0f, 3.0f), 2.0f);
  fail_unless_equals_float (cbi_where (0.0f, 2.0f, 3.0f), 3.0f);

  /* every other value: 1, -2, 0.5 */
  fail_unless_equals_float (cbi_reduce (CBI_K_REDUCE_SUM, col, 3, 2), -0.5f);
  fail_unless_equals_float (cbi_reduce (CBI_K_REDUCE_MEAN, col, 6, 1),
      12.5f / 6.0f);
  fail_unless_equals_float (cbi_reduce (CBI_K_REDUCE_MAX, col, 6, 1), 5.0f);
  /* the first maximum, or the last */
  fail_unless_equals_float (cbi_reduce (CBI_K_REDUCE_ARGMAX, col, 6, 1), 1.0f);
  fail_unless_equals_float (cbi_reduce (CBI_K_REDUCE_ARGMAX_LAST, col, 6, 1),
      3.0f);
  /* a NaN is the maximum, as numpy's */
  fail_unless (isnan (cbi_reduce (CBI_K_REDUCE_MAX, with_nan, 3, 1)));
  fail_unless_equals_float (cbi_reduce (CBI_K_REDUCE_ARGMAX, with_nan, 3, 1),
      1.0f);

  /* [3, 1] to [2, 3, 4]: 0 along the width and the batch */
  cbi_broadcast_strides (3, 2, b_dims, strides);
  fail_unless_equals_int64 (strides[0], 0);
  fail_unless_equals_int64 (strides[1], 1);
  fail_unless_equals_int64 (strides[2], 0);
}

GST_END_TEST;

GST_START_TEST (test_binary_ops_and_prelu)
{
  fail_unless_equals_float (cbi_binary (CBI_K_ADD, 1.5f, 2.25f), 3.75f);
  fail_unless_equals_float (cbi_binary (CBI_K_SUB, 1.5f, 2.25f), -0.75f);
  fail_unless_equals_float (cbi_binary (CBI_K_MUL, 1.5f, 2.25f), 3.375f);
  fail_unless_equals_float (cbi_binary (CBI_K_DIV, 1.5f, 2.0f), 0.75f);
  fail_unless (isinf (cbi_binary (CBI_K_DIV, 1.0f, 0.0f)));
  fail_unless_equals_float (cbi_binary (CBI_K_PRELU, 2.0f, 0.25f), 2.0f);
  fail_unless_equals_float (cbi_binary (CBI_K_PRELU, -2.0f, 0.25f), -0.5f);
  fail_unless_equals_float (cbi_binary (CBI_K_PRELU, 0.0f, 0.25f), 0.0f);
}

GST_END_TEST;

/* ---- index mappings ---- */

/* numpy.pad's reflect: mirrored around the border, the border not
 * repeated, as many bounces as it takes */
static int64_t
ref_reflect (int64_t i, int64_t size)
{
  int64_t period = 2 * (size - 1);
  int64_t j = ((i % period) + period) % period;

  return j < size ? j : period - j;
}

GST_START_TEST (test_pad_reflect_mirrors_without_repeating_the_border)
{
  int64_t size, i;

  /* 0 1 2 3 reflected: ... 3 2 1 | 0 1 2 3 | 2 1 0 ... */
  fail_unless_equals_int (cbi_pad_index (-1, 4, CBI_K_PAD_REFLECT), 1);
  fail_unless_equals_int (cbi_pad_index (-3, 4, CBI_K_PAD_REFLECT), 3);
  fail_unless_equals_int (cbi_pad_index (4, 4, CBI_K_PAD_REFLECT), 2);
  fail_unless_equals_int (cbi_pad_index (6, 4, CBI_K_PAD_REFLECT), 0);
  /* pads below the size, as the graph allows */
  for (size = 2; size < 9; size++)
    for (i = -(size - 1); i < 2 * size - 1; i++)
      fail_unless_equals_int (cbi_pad_index (i, size, CBI_K_PAD_REFLECT),
          ref_reflect (i, size));
}

GST_END_TEST;

GST_START_TEST (test_pad_edge_repeats_the_border_and_constant_gives_minus_1)
{
  int64_t i;

  for (i = -5; i < 10; i++) {
    int64_t inside = i >= 0 && i < 4 ? i : -1;
    fail_unless_equals_int (cbi_pad_index (i, 4, CBI_K_PAD_EDGE),
        CLAMP (i, 0, 3));
    fail_unless_equals_int (cbi_pad_index (i, 4, CBI_K_PAD_CONSTANT), inside);
  }
  /* one pixel to repeat */
  fail_unless_equals_int (cbi_pad_index (-2, 1, CBI_K_PAD_EDGE), 0);
  fail_unless_equals_int (cbi_pad_index (3, 1, CBI_K_PAD_EDGE), 0);
}

GST_END_TEST;

/* The reference: the padded plane made explicitly (-inf or 0 around),
 * every tap of the window read from it. */
static float
ref_pool (const float *x, int h, int w, int oy, int ox, const CbiKPool * p,
    int pad_bottom, int pad_right)
{
  float acc = p->max ? -INFINITY : 0.0f;
  int ky, kx, inside = 0;

  for (ky = 0; ky < p->kernel[0]; ky++)
    for (kx = 0; kx < p->kernel[1]; kx++) {
      int py = oy * p->stride[0] + ky * p->dilation[0];
      int px = ox * p->stride[1] + kx * p->dilation[1];
      int iy = py - p->pad[0], ix = px - p->pad[1];
      gboolean in = iy >= 0 && iy < h && ix >= 0 && ix < w;
      /* the window stays within the padded plane */
      fail_unless (py < p->pad[0] + h + pad_bottom
          && px < p->pad[1] + w + pad_right);
      if (p->max)
        acc = in ? MAX (acc, x[iy * w + ix]) : acc;
      else
        acc += in ? x[iy * w + ix] : 0.0f;
      inside += in;
    }
  if (p->max)
    return acc;
  return acc / (p->count_pad ? p->kernel[0] * p->kernel[1] : inside);
}

GST_START_TEST (test_pool_takes_any_pads_and_dilations)
{
  const int h = 7, w = 6;
  float x[7 * 6];
  int i, max, count_pad, dil, oy, ox;

  for (i = 0; i < h * w; i++)
    x[i] = (float) ((i * 37) % 23) - 11.0f;
  for (max = 0; max < 2; max++)
    for (count_pad = 0; count_pad < 2; count_pad++)
      for (dil = 1; dil < 3; dil++) {
        /* 3x2 windows, pads 2 top, 0 bottom, 1 left, 1 right (below
         * the window, as ONNX requires), dilations that differ */
        CbiKPool p = { {3, 2}, {2, 1}, {dil, dil + 1}, {2, 1}, max,
        count_pad
        };
        int out_h = (h + 2 + 0 - (dil * 2 + 1)) / 2 + 1;
        int out_w = (w + 1 + 1 - ((dil + 1) * 1 + 1)) / 1 + 1;
        for (oy = 0; oy < out_h; oy++)
          for (ox = 0; ox < out_w; ox++)
            fail_unless (fabsf (cbi_pool_at (x, h, w, oy, ox, &p)
                    - ref_pool (x, h, w, oy, ox, &p, 0, 1)) < 1e-5f,
                "max %d count_pad %d dilation %d at %d,%d", max, count_pad,
                dil, oy, ox);
      }
}

GST_END_TEST;

GST_START_TEST (test_pool_max_drops_a_nan_and_an_average_counts_its_taps)
{
  const float x[4] = { 1.0f, NAN, 3.0f, 4.0f };
  const float y[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
  CbiKPool p = { {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, 0 };

  /* as cuDNN's pooling with CUDNN_NOT_PROPAGATE_NAN */
  fail_unless_equals_float (cbi_pool_at (x, 2, 2, 1, 1, &p), 4.0f);
  /* the window at (0, 0) covers one tap of the plane */
  fail_unless_equals_float (cbi_pool_at (y, 2, 2, 0, 0, &p), 1.0f);
  p.max = 0;
  fail_unless_equals_float (cbi_pool_at (y, 2, 2, 0, 0, &p), 1.0f);
  p.count_pad = 1;
  fail_unless_equals_float (cbi_pool_at (y, 2, 2, 0, 0, &p), 0.25f);
  fail_unless_equals_float (cbi_pool_at (y, 2, 2, 1, 1, &p), 2.5f);
}

GST_END_TEST;

GST_START_TEST (test_resize_nearest_is_floor_of_dst_over_integer_scale)
{
  int64_t in, s, d;

  for (in = 1; in < 7; in++)
    for (s = 1; s < 5; s++)
      for (d = 0; d < in * s; d++)
        fail_unless_equals_int (cbi_resize_nearest (d, (float) s, in), d / s);
  /* never past the border */
  fail_unless_equals_int (cbi_resize_nearest (100, 2.0f, 4), 3);
}

GST_END_TEST;

GST_START_TEST (test_resize_linear_clamps_to_the_border_at_the_corners)
{
  CbiLinearTap t;

  /* x2: dst 0 maps to -0.25, before the first pixel: all of pixel 0 */
  t = cbi_resize_linear (0, 2.0f, 4);
  fail_unless_equals_int (t.i0, 0);
  fail_unless_equals_int (t.i1, 0);
  fail_unless_equals_float (t.w0 + t.w1, 1.0f);
  /* dst 7 maps to 3.25, past the last pixel: all of pixel 3 */
  t = cbi_resize_linear (7, 2.0f, 4);
  fail_unless_equals_int (t.i0, 3);
  fail_unless_equals_int (t.i1, 3);
  fail_unless_equals_float (t.w0 + t.w1, 1.0f);
  /* dst 1 maps to 0.25: three quarters of 0, a quarter of 1 */
  t = cbi_resize_linear (1, 2.0f, 4);
  fail_unless_equals_int (t.i0, 0);
  fail_unless_equals_int (t.i1, 1);
  fail_unless_equals_float (t.w0, 0.75f);
  fail_unless_equals_float (t.w1, 0.25f);
  /* scale 1: the pixel itself */
  t = cbi_resize_linear (2, 1.0f, 4);
  fail_unless_equals_int (t.i0, 2);
  fail_unless_equals_float (t.w0, 1.0f);
  fail_unless_equals_float (t.w1, 0.0f);
  /* one pixel in */
  t = cbi_resize_linear (1, 2.0f, 1);
  fail_unless_equals_int (t.i0, 0);
  fail_unless_equals_int (t.i1, 0);
}

GST_END_TEST;

/* ONNX Resize, linear, half_pixel: the source coordinate clamped to the
 * image, interpolated between its two neighbours */
static double
ref_linear (const float *v, int64_t in, int64_t dst, double scale)
{
  double x = (dst + 0.5) / scale - 0.5;
  int64_t i0, i1;

  x = CLAMP (x, 0.0, (double) (in - 1));
  i0 = (int64_t) floor (x);
  i1 = MIN (i0 + 1, in - 1);
  return v[i0] * (1.0 - (x - i0)) + v[i1] * (x - i0);
}

GST_START_TEST (test_resize_linear_matches_half_pixel_interpolation)
{
  const float scales[] = { 2.0f, 3.0f, 0.5f, 1.5f, 4.0f };
  float v[9];
  gsize k;
  int64_t in, d;

  for (k = 0; k < G_N_ELEMENTS (v); k++)
    v[k] = (float) ((k * 7) % 5) - 1.5f;
  for (k = 0; k < G_N_ELEMENTS (scales); k++) {
    for (in = 1; in <= 9; in++) {
      int64_t out = (int64_t) (in * scales[k]);
      for (d = 0; d < out; d++) {
        CbiLinearTap t = cbi_resize_linear (d, scales[k], in);
        fail_unless (t.i0 >= 0 && t.i1 < in && t.i1 >= t.i0
            && t.i1 <= t.i0 + 1);
        assert_close (t.w0 + t.w1, 1.0, 1e-7);
        assert_close (v[t.i0] * t.w0 + v[t.i1] * t.w1,
            ref_linear (v, in, d, scales[k]), 1e-5);
      }
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_bilinear_at_the_corners_is_the_corner)
{
  /* all the weight on tap 0, on tap 1, half each */
  CbiLinearTap on0 = { 0, 1, 1.0f, 0.0f }, on1 = { 0, 1, 0.0f, 1.0f };
  CbiLinearTap half = { 0, 1, 0.5f, 0.5f };

  fail_unless_equals_float (cbi_bilinear (1, 2, 3, 4, on0, on0), 1.0f);
  fail_unless_equals_float (cbi_bilinear (1, 2, 3, 4, on0, on1), 2.0f);
  fail_unless_equals_float (cbi_bilinear (1, 2, 3, 4, on1, on0), 3.0f);
  fail_unless_equals_float (cbi_bilinear (1, 2, 3, 4, on1, on1), 4.0f);
  fail_unless_equals_float (cbi_bilinear (1, 2, 3, 4, half, half), 2.5f);
}

GST_END_TEST;

GST_START_TEST (test_strided_offset_walks_row_major_and_broadcast)
{
  const int64_t dims[3] = { 2, 3, 4 };
  const int64_t row_major[3] = { 12, 4, 1 };
  const int64_t per_channel[3] = { 0, 1, 0 };
  const int dims32[3] = { 2, 3, 4 }, per_channel32[3] = { 0, 1, 0 };
  int64_t i;

  for (i = 0; i < 24; i++) {
    fail_unless_equals_int (cbi_strided_offset (i, 3, dims, row_major), i);
    fail_unless_equals_int (cbi_strided_offset (i, 3, dims, per_channel),
        (i / 4) % 3);
    fail_unless_equals_int (cbi_strided_offset32 ((int) i, 3, dims32,
            per_channel32), (i / 4) % 3);
  }
  fail_unless_equals_int (cbi_strided_offset (0, 0, NULL, NULL), 0);
}

GST_END_TEST;

GST_START_TEST (test_coalesced_dims_give_the_same_offsets)
{
  /* NCHW with b per channel, of a's shape, scalar, per image row, and a
   * transposition's strides */
  const int64_t dims[4] = { 2, 3, 4, 5 };
  const int64_t strides[5][4] = {
    {0, 1, 0, 0}, {60, 20, 5, 1}, {0, 0, 0, 0}, {0, 0, 1, 0}, {60, 1, 15, 3}
  };
  const int want_rank[5] = { 3, 1, 1, 3, 3 };
  int k;

  for (k = 0; k < 5; k++) {
    int64_t d[4], s[4], i;
    int r;
    memcpy (d, dims, sizeof (d));
    memcpy (s, strides[k], sizeof (s));
    r = cbi_coalesce_dims (4, d, s);
    fail_unless_equals_int (r, want_rank[k]);
    for (i = 0; i < 120; i++)
      fail_unless_equals_int (cbi_strided_offset (i, r, d, s),
          cbi_strided_offset (i, 4, dims, strides[k]));
  }
}

GST_END_TEST;

GST_START_TEST (test_permute_of_a_2x3_matrix_is_its_transpose)
{
  const int64_t dims[2] = { 2, 3 }, perm[2] = { 1, 0 };
  const float x[6] = { 0, 1, 2, 3, 4, 5 }, want[6] = { 0, 3, 1, 4, 2, 5 };
  int64_t y_dims[2], x_strides[2], i;

  cbi_permute_strides (2, dims, perm, y_dims, x_strides);
  fail_unless_equals_int (y_dims[0], 3);
  fail_unless_equals_int (y_dims[1], 2);
  for (i = 0; i < 6; i++)
    fail_unless_equals_float (x[cbi_strided_offset (i, 2, y_dims,
                x_strides)], want[i]);
}

GST_END_TEST;

static void
permute (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * perm, int64_t * y_dims)
{
  int64_t x_strides[CBI_K_MAX_DIMS], count = 1, i;
  int j;

  cbi_permute_strides (rank, dims, perm, y_dims, x_strides);
  for (j = 0; j < rank; j++)
    count *= dims[j];
  /* through coalesced dims, as the kernel */
  rank = cbi_coalesce_dims (rank, y_dims, x_strides);
  for (i = 0; i < count; i++)
    y[i] = x[cbi_strided_offset (i, rank, y_dims, x_strides)];
}

GST_START_TEST (test_permute_then_its_inverse_gives_x_back)
{
  /* NCHW <-> NHWC, a 6-D DepthToSpace view, a full reversal */
  const int64_t dims[3][6] = {
    {2, 3, 4, 5}, {2, 2, 2, 3, 4, 5}, {2, 3, 1, 4, 5, 2}
  };
  const int64_t perms[3][6] = {
    {0, 2, 3, 1}, {0, 3, 4, 1, 5, 2}, {5, 4, 3, 2, 1, 0}
  };
  const int ranks[3] = { 4, 6, 6 };
  int k;

  for (k = 0; k < 3; k++) {
    int64_t inverse[6], y_dims[6], back_dims[6], count = 1, i;
    float *x, *y, *back;
    int j;

    for (j = 0; j < ranks[k]; j++) {
      inverse[perms[k][j]] = j;
      count *= dims[k][j];
    }
    x = g_new (float, count);
    y = g_new (float, count);
    back = g_new (float, count);
    for (i = 0; i < count; i++)
      x[i] = (float) i;

    permute (x, y, ranks[k], dims[k], perms[k], y_dims);
    /* y_dims was coalesced: the inverse needs y's real dims */
    for (j = 0; j < ranks[k]; j++)
      y_dims[j] = dims[k][perms[k][j]];
    permute (y, back, ranks[k], y_dims, inverse, back_dims);
    for (i = 0; i < count; i++)
      fail_unless_equals_float (back[i], x[i]);
    /* and y really moved: NCHW -> NHWC puts channel 1 of pixel 0 next */
    if (k == 0)
      fail_unless_equals_float (y[1], 20.0f);
    g_free (x);
    g_free (y);
    g_free (back);
  }
}

GST_END_TEST;

/* ---- normalisation ---- */

GST_START_TEST (test_norm_value_is_gamma_x_minus_mean_over_std_plus_beta)
{
  float f = cbi_norm_factor (2.0f, 4.0f, 0.0f);

  fail_unless_equals_float (f, 1.0f);
  fail_unless_equals_float (cbi_norm_value (7.0f, 3.0f, f, 0.5f), 4.5f);
  assert_close (cbi_norm_value (1.0f, 0.25f, cbi_norm_factor (1.5f, 0.5f,
              1e-5f), -1.0f), 1.5 * 0.75 / sqrt (0.5 + 1e-5) - 1.0, 1e-6);
}

GST_END_TEST;

/* ---- recurrent cells ---- */

static double
sigmoid_d (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* The cells' tanh and sigmoid, rational functions, against libm's in
 * double: within 4e-7 everywhere, past the limit and at infinities too,
 * NaN kept. */
GST_START_TEST (test_cell_tanh_and_sigmoid_are_within_4e_7_of_libm)
{
  const float limit = CBI_CELL_TANH_LIMIT;
  double worst_t = 0.0, worst_s = 0.0;
  int k;

  for (k = -200000; k <= 200000; k++) {
    const float x = k * 1e-4f;
    worst_t = MAX (worst_t, fabs (cbi_cell_tanh (x, limit) - tanh (x)));
    worst_s = MAX (worst_s, fabs (cbi_cell_sigmoid (x, limit) - sigmoid_d (x)));
  }
  fail_unless (worst_t < 4e-7, "tanh: %g", worst_t);
  fail_unless (worst_s < 4e-7, "sigmoid: %g", worst_s);
  assert_close (cbi_cell_tanh (1e30f, limit), 1.0, 4e-7);
  assert_close (cbi_cell_tanh (-INFINITY, limit), -1.0, 4e-7);
  fail_unless (cbi_cell_sigmoid (-INFINITY, limit) < 2e-7f);
  fail_unless (isnan (cbi_cell_tanh (NAN, limit)));
  fail_unless (isnan (cbi_cell_sigmoid (NAN, limit)));
  fail_unless_equals_float (cbi_cell_tanh (0.0f, limit), 0.0f);
}

GST_END_TEST;

/* cbi_exp () against exp () in double on every 509th float from where e^x
 * stops being normal to where it overflows: within 1 ulp of the exact
 * value (the ulp of its binade); beyond, 0 and +inf; NaN kept. */
GST_START_TEST (test_exp_is_within_1_ulp_where_normal_and_0_or_inf_beyond)
{
  const float lo = -87.33654022f, hi = 88.7228391117f;
  double worst = 0.0, at = 0.0;
  guint64 checked = 0;
  gint sign;

  for (sign = 0; sign < 2; sign++) {
    const uint32_t last = cbi_float_bits (sign ? lo : hi);
    uint32_t b;
    for (b = sign ? 0x80000000u : 0; b <= last; b += 509) {
      const float x = cbi_bits_float (b);
      const double exact = exp ((double) x);
      int e;
      double ulp, err;
      if (exact < FLT_MIN || exact > FLT_MAX)
        continue;
      frexp (exact, &e);
      ulp = ldexp (1.0, e - 24);
      err = fabs ((double) cbi_exp (x) - exact) / ulp;
      if (err > worst) {
        worst = err;
        at = x;
      }
      checked++;
    }
  }
  fail_unless (checked > 4000000, "%" G_GUINT64_FORMAT " checked", checked);
  fail_unless (worst <= 1.0, "%.3f ulp at %.9g", worst, at);
  fail_unless_equals_float (cbi_exp (0.0f), 1.0f);
  fail_unless_equals_float (cbi_exp (-0.0f), 1.0f);
  fail_unless_equals_float (cbi_exp (-88.0f), 0.0f);
  /* the first float whose e^x is normal, and the one below */
  fail_unless (cbi_exp (lo) >= FLT_MIN, "%g", cbi_exp (lo));
  fail_unless_equals_float (cbi_exp (nextafterf (lo, -INFINITY)), 0.0f);
  fail_unless_equals_float (cbi_exp (-INFINITY), 0.0f);
  fail_unless (isinf (cbi_exp (88.8f)) && cbi_exp (88.8f) > 0.0f);
  fail_unless (isinf (cbi_exp (INFINITY)));
  fail_unless (isnan (cbi_exp (NAN)));
  /* the largest float whose e^x is finite */
  assert_close (cbi_exp (88.72283f), exp (88.72283f), FLT_MAX * 2.5e-7);
}

GST_END_TEST;

/* One unit (row 1, unit 0 of 2) of each cell against ONNX's formulas in
 * double: the gate sums read from x at its stride, r, the bias, and the
 * GRU's recurrent h bias inside or outside the reset gate. */
GST_START_TEST (test_recurrent_unit_follows_the_onnx_formulas)
{
  /* 2 rows x 4 gates x 2 units, rows 9 apart (a wider product) */
  float x[18], r[16], bias[8], r_bias[2] = { 0.3f, -0.2f };
  float h_prev[4] = { 0.1f, 0.2f, -0.5f, 0.4f }, c_prev[4] = { 0, 0, 0.7f, 1 };
  float h[4] = { 0, }, c[4] = { 0, };
  CbiKCell cell = { CBI_K_CELL_LSTM, 2, 2, x, 9, r, 8, bias, r_bias, h_prev,
    c_prev, c, h, CBI_CELL_TANH_LIMIT
  };
  double g[4], z, rg, n;
  int k;

  for (k = 0; k < 18; k++)
    x[k] = 0.1f * (k % 7) - 0.3f;
  for (k = 0; k < 16; k++)
    r[k] = 0.05f * (k % 5) - 0.1f;
  for (k = 0; k < 8; k++)
    bias[k] = 0.02f * k - 0.05f;
  /* unit 0 of row 1: gate k's sum at x[9 + 2k], r[8 + 2k], bias[2k] */
  for (k = 0; k < 4; k++)
    g[k] = (double) x[9 + 2 * k] + r[8 + 2 * k] + bias[2 * k];

  cbi_recurrent_unit (&cell, 2);
  /* i, o, f, c */
  assert_close (c[2], sigmoid_d (g[2]) * 0.7 + sigmoid_d (g[0]) * tanh (g[3]),
      2e-6);
  assert_close (h[2], sigmoid_d (g[1]) * tanh (c[2]), 2e-6);

  /* the first step: no r, no h, no c */
  cell.r = NULL;
  cell.c_prev = NULL;
  cbi_recurrent_unit (&cell, 2);
  assert_close (c[2], sigmoid_d (x[9] + bias[0]) * tanh (x[15] + bias[6]),
      2e-6);

  /* GRU, linear_before_reset 1: n = tanh (x_h + b_h + r (r_h + rb_h)) */
  cell.op = CBI_K_CELL_GRU;
  cell.r = r;
  cbi_recurrent_unit (&cell, 2);
  z = sigmoid_d (g[0]);
  rg = sigmoid_d (g[1]);
  n = tanh (x[13] + bias[4] + rg * (r[12] + r_bias[0]));
  assert_close (h[2], (1 - z) * n + z * -0.5, 2e-6);

  /* linear_before_reset 0: r h, then n = tanh (x_h + b_h + r_h + rb_h),
   * r_h the product of r h */
  cell.op = CBI_K_CELL_GRU_RESET;
  cbi_recurrent_unit (&cell, 2);
  assert_close (h[2], rg * -0.5, 2e-6);
  cell.op = CBI_K_CELL_GRU_AFTER;
  cbi_recurrent_unit (&cell, 2);
  n = tanh (x[13] + bias[4] + r[12] + r_bias[0]);
  assert_close (h[2], (1 - z) * n + z * -0.5, 2e-6);

  /* RNN: tanh of its one gate */
  cell.op = CBI_K_CELL_RNN;
  cbi_recurrent_unit (&cell, 2);
  assert_close (h[2], tanh (g[0]), 2e-6);
}

GST_END_TEST;

static Suite *
kernels_math_suite (void)
{
  Suite *s = suite_create ("kernels-math");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_from_byte_is_byte_times_scale_plus_bias);
  tcase_add_test (tc,
      test_exp_is_within_1_ulp_where_normal_and_0_or_inf_beyond);
  tcase_add_test (tc,
      test_fp16_rounds_to_nearest_even_and_overflows_past_65504);
  tcase_add_test (tc, test_every_fp16_and_bf16_value_survives_float_and_back);
  tcase_add_test (tc, test_bf16_rounds_to_nearest_even_and_keeps_float_range);
  tcase_add_test (tc, test_pool_takes_any_pads_and_dilations);
  tcase_add_test (tc, test_pool_max_drops_a_nan_and_an_average_counts_its_taps);
  tcase_add_test (tc, test_to_byte_rounds_half_up_and_clamps_to_0_255);
  tcase_add_test (tc, test_to_byte_gives_0_for_nan_and_clamps_infinities);
  tcase_add_test (tc, test_to_byte_is_floor_of_mapped_value_plus_half);
  tcase_add_test (tc, test_every_byte_survives_pack_then_unpack);
  tcase_add_test (tc, test_pack_source_repeats_the_last_frame_or_gives_zeros);
  tcase_add_test (tc, test_unpack_map_sends_grey_to_every_colour_byte);
  tcase_add_test (tc,
      test_unpack_map_scales_a_fourth_channel_as_0_without_bias);
  tcase_add_test (tc, test_relu_passes_positives_and_scales_negatives);
  tcase_add_test (tc, test_hardswish_is_x_relu6_x_plus_3_over_6);
  tcase_add_test (tc, test_hardsigmoid_is_alpha_x_plus_beta_within_0_1);
  tcase_add_test (tc, test_elu_is_alpha_exp_minus_1_below_0);
  tcase_add_test (tc, test_sigmoid_tanh_clip_and_identity_values);
  tcase_add_test (tc, test_binary_ops_and_prelu);
  tcase_add_test (tc, test_unary_ops_of_issue_10_follow_libm);
  tcase_add_test (tc, test_min_max_power_where_and_reductions);
  tcase_add_test (tc, test_pad_reflect_mirrors_without_repeating_the_border);
  tcase_add_test (tc,
      test_pad_edge_repeats_the_border_and_constant_gives_minus_1);
  tcase_add_test (tc, test_resize_nearest_is_floor_of_dst_over_integer_scale);
  tcase_add_test (tc, test_resize_linear_clamps_to_the_border_at_the_corners);
  tcase_add_test (tc, test_resize_linear_matches_half_pixel_interpolation);
  tcase_add_test (tc, test_bilinear_at_the_corners_is_the_corner);
  tcase_add_test (tc, test_strided_offset_walks_row_major_and_broadcast);
  tcase_add_test (tc, test_coalesced_dims_give_the_same_offsets);
  tcase_add_test (tc, test_permute_of_a_2x3_matrix_is_its_transpose);
  tcase_add_test (tc, test_permute_then_its_inverse_gives_x_back);
  tcase_add_test (tc, test_norm_value_is_gamma_x_minus_mean_over_std_plus_beta);
  tcase_add_test (tc, test_recurrent_unit_follows_the_onnx_formulas);
  tcase_add_test (tc, test_cell_tanh_and_sigmoid_are_within_4e_7_of_libm);
  return s;
}

GST_CHECK_MAIN (kernels_math);
