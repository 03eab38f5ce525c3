/* GStreamer cudabatchinfer: the accuracy check's figures (cbiprecision.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>

#include "cbiprecision.h"

static CbiShape
shape_of (gint n_dims, gint64 d0, gint64 d1, gint64 d2, gint64 d3)
{
  CbiShape s = { n_dims, {d0, d1, d2, d3} };

  return s;
}

GST_START_TEST (test_relative_error_divides_by_the_largest_magnitude)
{
  const gfloat ref[6] = { 1.0f, -4.0f, 2.0f, 0.5f, 0.0f, 3.0f };
  const gfloat got[6] = { 1.1f, -4.0f, 2.0f, 0.2f, 0.0f, 3.0f };
  CbiShape shape = shape_of (4, 1, 6, 1, 1);
  CbiAccuracy a;

  /* a 1 x 6 x 1 x 1 tensor is one frame's six scores */
  cbi_accuracy_of_values (got, ref, &shape, &a);
  fail_unless (fabs (a.max_abs_error - 0.3) < 1e-6, "%g", a.max_abs_error);
  fail_unless (fabs (a.relative_error - 0.3 / 4.0) < 1e-6, "%g",
      a.relative_error);
  fail_unless_equals_uint64 (a.nonfinite, 0);
  fail_unless (a.psnr == 0.0);
  fail_unless (a.top1_agreement == 1.0, "%g", a.top1_agreement);
  fail_unless (cbi_accuracy_passes (&a, 0.08));
  fail_unless (!cbi_accuracy_passes (&a, 0.07));
}

GST_END_TEST;

GST_START_TEST (test_top1_agreement_counts_frames_whose_best_class_moved)
{
  /* four frames of three classes: frames 1 and 3 change their best */
  const gfloat ref[12] = { 0, 1, 2, 5, 4, 3, 1, 9, 1, 2, 2.1f, 0 };
  const gfloat got[12] = { 0, 1, 2, 4, 5, 3, 1, 9, 1, 2.2f, 2.1f, 0 };
  CbiShape shape = shape_of (2, 4, 3, 0, 0);
  CbiShape image = shape_of (4, 2, 3, 1, 2);
  CbiAccuracy a;

  cbi_accuracy_of_values (got, ref, &shape, &a);
  fail_unless (a.top1_agreement == 0.5, "%g", a.top1_agreement);
  /* two dimensions past the batch are no class scores */
  cbi_accuracy_of_values (got, ref, &image, &a);
  fail_unless (a.top1_agreement == -1.0, "%g", a.top1_agreement);
}

GST_END_TEST;

GST_START_TEST (test_nonfinite_values_fail_any_tolerance)
{
  const gfloat ref[4] = { 1.0f, NAN, 2.0f, 3.0f };
  const gfloat got[4] = { 1.0f, NAN, INFINITY, 3.0f };
  CbiShape shape = shape_of (2, 2, 2, 0, 0);
  CbiAccuracy a;

  cbi_accuracy_of_values (got, ref, &shape, &a);
  /* the reference's own NaN is the model's, not the precision's */
  fail_unless_equals_uint64 (a.nonfinite, 1);
  fail_unless (a.relative_error == 0.0, "%g", a.relative_error);
  fail_unless (!cbi_accuracy_passes (&a, 1e9));
}

GST_END_TEST;

GST_START_TEST (test_an_all_zero_reference_fails_any_difference)
{
  const gfloat ref[2] = { 0.0f, 0.0f };
  const gfloat same[2] = { 0.0f, 0.0f };
  const gfloat got[2] = { 0.0f, 1e-3f };
  CbiShape shape = shape_of (2, 1, 2, 0, 0);
  CbiAccuracy a;

  cbi_accuracy_of_values (same, ref, &shape, &a);
  fail_unless (a.relative_error == 0.0 && cbi_accuracy_passes (&a, 0.0));
  cbi_accuracy_of_values (got, ref, &shape, &a);
  fail_unless (!cbi_accuracy_passes (&a, 1e6), "%g", a.relative_error);
}

GST_END_TEST;

GST_START_TEST (test_frames_compare_colour_bytes_only_and_give_psnr)
{
  /* two 2x1 RGBx frames, rows padded to 12 bytes; the x bytes differ
   * wildly and must not count */
  guint8 ref0[12] = { 10, 20, 30, 0, 40, 50, 60, 0, 99, 99, 99, 99 };
  guint8 ref1[12] = { 0, 0, 0, 0, 255, 255, 255, 0, 0, 0, 0, 0 };
  guint8 got0[12] = { 10, 20, 30, 255, 40, 50, 64, 255, 0, 0, 0, 0 };
  guint8 got1[12] = { 0, 0, 0, 7, 255, 255, 255, 7, 1, 1, 1, 1 };
  const guint8 *ref[2] = { ref0, ref1 }, *got[2] = { got0, got1 };
  const guint offsets[3] = { 0, 1, 2 };
  CbiAccuracy a;
  gdouble mse = 16.0 / 12.0;

  cbi_accuracy_of_frames (got, ref, 2, 2, 1, 4, 12, offsets, 3, &a);
  fail_unless (a.max_abs_error == 4.0, "%g", a.max_abs_error);
  fail_unless (fabs (a.relative_error - 4.0 / 255.0) < 1e-9);
  fail_unless (fabs (a.psnr - 10.0 * log10 (255.0 * 255.0 / mse)) < 1e-9,
      "%g", a.psnr);
  fail_unless (a.top1_agreement == -1.0);
  /* the same frames: an infinite PSNR, no error */
  cbi_accuracy_of_frames (ref, ref, 2, 2, 1, 4, 12, offsets, 3, &a);
  fail_unless (isinf (a.psnr) && a.max_abs_error == 0.0);
}

GST_END_TEST;

GST_START_TEST (test_precision_names_are_the_property_nicks)
{
  fail_unless_equals_string (cbi_precision_name (CBI_PRECISION_FP32), "fp32");
  fail_unless_equals_string (cbi_precision_name (CBI_PRECISION_TF32), "tf32");
  fail_unless_equals_string (cbi_precision_name (CBI_PRECISION_BF16), "bf16");
  fail_unless_equals_string (cbi_precision_name (CBI_PRECISION_FP16), "fp16");
  fail_unless_equals_string (cbi_precision_name (CBI_PRECISION_AUTO), "auto");
}

GST_END_TEST;

static Suite *
precision_suite (void)
{
  Suite *s = suite_create ("cbiprecision");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_relative_error_divides_by_the_largest_magnitude);
  tcase_add_test (tc, test_top1_agreement_counts_frames_whose_best_class_moved);
  tcase_add_test (tc, test_nonfinite_values_fail_any_tolerance);
  tcase_add_test (tc, test_an_all_zero_reference_fails_any_difference);
  tcase_add_test (tc, test_frames_compare_colour_bytes_only_and_give_psnr);
  tcase_add_test (tc, test_precision_names_are_the_property_nicks);
  return s;
}

GST_CHECK_MAIN (precision);
