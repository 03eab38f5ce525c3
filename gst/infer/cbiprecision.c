/* cudabatchinfer: the precisions a plan runs in, and how far a lower
 * one's results are from float32's
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbiprecision.h"

#include <math.h>

const gchar *
cbi_precision_name (CbiPrecision precision)
{
  static const gchar *const names[] = { "fp32", "tf32", "bf16", "fp16",
    "auto"
  };

  return (guint) precision < G_N_ELEMENTS (names) ? names[precision] : "?";
}

/* The frame's part of @shape as class scores: its one dimension past the
 * batch that is not 1, where there is exactly one and it has at least 2
 * classes; 0 otherwise. */
static gint64
cbi_accuracy_classes (const CbiShape * shape)
{
  gint64 classes = 0;
  gint d;

  for (d = 1; d < shape->n_dims; d++) {
    if (shape->dims[d] == 1)
      continue;
    if (classes > 0)
      return 0;
    classes = shape->dims[d];
  }
  return classes >= 2 ? classes : 0;
}

static gint64
cbi_accuracy_argmax (const gfloat * v, gint64 n)
{
  gint64 best = 0, k;

  for (k = 1; k < n; k++)
    if (v[k] > v[best])
      best = k;
  return best;
}

void
cbi_accuracy_of_values (const gfloat * got, const gfloat * ref,
    const CbiShape * shape, CbiAccuracy * accuracy)
{
  gint64 count = cbi_shape_count (shape), classes, k;
  gdouble peak = 0.0, worst = 0.0;

  accuracy->nonfinite = 0;
  for (k = 0; k < count; k++) {
    if (!isfinite (ref[k]))
      continue;
    if (!isfinite (got[k])) {
      accuracy->nonfinite++;
      continue;
    }
    peak = MAX (peak, fabs (ref[k]));
    worst = MAX (worst, fabs ((gdouble) got[k] - ref[k]));
  }
  accuracy->max_abs_error = worst;
  accuracy->relative_error = peak > 0.0 ? worst / peak : worst > 0.0 ?
      G_MAXDOUBLE : 0.0;
  accuracy->psnr = 0.0;
  accuracy->top1_agreement = -1.0;
  classes = shape->n_dims >= 2 ? cbi_accuracy_classes (shape) : 0;
  if (classes > 0 && shape->dims[0] > 0) {
    gint64 frames = shape->dims[0], same = 0, f;
    for (f = 0; f < frames; f++)
      same += cbi_accuracy_argmax (got + f * classes, classes)
          == cbi_accuracy_argmax (ref + f * classes, classes);
    accuracy->top1_agreement = (gdouble) same / frames;
  }
}

void
cbi_accuracy_of_frames (const guint8 * const *got, const guint8 * const *ref,
    guint n, guint width, guint height, guint pixel_stride, gsize stride,
    const guint * offsets, guint n_offsets, CbiAccuracy * accuracy)
{
  guint64 squares = 0, values = (guint64) n * width * height * n_offsets;
  guint worst = 0, f, y, x, c;

  for (f = 0; f < n; f++)
    for (y = 0; y < height; y++) {
      const guint8 *a = got[f] + y * stride, *b = ref[f] + y * stride;
      for (x = 0; x < width; x++, a += pixel_stride, b += pixel_stride)
        for (c = 0; c < n_offsets; c++) {
          guint d = ABS ((gint) a[offsets[c]] - (gint) b[offsets[c]]);
          worst = MAX (worst, d);
          squares += d * d;
        }
    }
  accuracy->max_abs_error = worst;
  accuracy->relative_error = worst / 255.0;
  accuracy->psnr = squares == 0 || values == 0 ? INFINITY :
      10.0 * log10 (255.0 * 255.0 * values / (gdouble) squares);
  accuracy->top1_agreement = -1.0;
  accuracy->nonfinite = 0;
}

gboolean
cbi_accuracy_passes (const CbiAccuracy * accuracy, gdouble tolerance)
{
  return accuracy->nonfinite == 0 && accuracy->relative_error <= tolerance;
}
