/* cudabatchinfer: the precisions a plan runs in, and how far a lower
 * one's results are from float32's
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The figures of the warm-up's accuracy check (#CbiAccuracy), computed
 * from two runs of the same batch: pure functions, no engine.
 */
#pragma once

#include "graph/cbigraph.h"

G_BEGIN_DECLS
/**
 * CbiPrecision:
 * @CBI_PRECISION_FP32: float32 values and float32 arithmetic
 * @CBI_PRECISION_TF32: float32 values; products of tf32 (a float32 cut to
 *   10 bits of mantissa) on NVIDIA tensor cores, sums in float32
 * @CBI_PRECISION_BF16: the convolutions' operands in bfloat16 (8 bits of
 *   mantissa, float32's range), sums in float32
 * @CBI_PRECISION_FP16: the same in float16 (11 bits of mantissa, largest
 *   value 65504)
 * @CBI_PRECISION_AUTO: the fastest of the backend's that passes the
 *   warm-up's accuracy check, float32 where none does
 *
 * The arithmetic a plan runs in. Whatever it is, the engine takes and
 * gives float32 tensors and frames.
 */
typedef enum
{
  CBI_PRECISION_FP32,
  CBI_PRECISION_TF32,
  CBI_PRECISION_BF16,
  CBI_PRECISION_FP16,
  CBI_PRECISION_AUTO,
} CbiPrecision;

/* Returns: (transfer none): "fp32", "tf32", "bf16", "fp16" or "auto" */
const gchar *cbi_precision_name (CbiPrecision precision);

/**
 * CbiAccuracy:
 * @max_abs_error: the largest difference from the float32 run: in the
 *   output's own units for a tensor, in byte values (0 to 255) for an
 *   image output read as frames
 * @relative_error: @max_abs_error over the largest magnitude of the
 *   float32 run's values (over 255 for frames); 0 where both are 0
 * @psnr: image outputs: the peak signal-to-noise ratio of the frames
 *   against the float32 run's, in dB (peak 255; INFINITY where they are
 *   the same); tensors: 0
 * @top1_agreement: outputs that hold class scores (one row of at least
 *   two per frame): the fraction of frames whose best class is the float32
 *   run's; -1 for other outputs
 * @nonfinite: values NaN or infinite where the float32 run's are finite
 *   (an overflow)
 *
 * How far one output of a batch run at a lower precision is from the same
 * batch at float32.
 */
typedef struct
{
  gdouble max_abs_error;
  gdouble relative_error;
  gdouble psnr;
  gdouble top1_agreement;
  guint64 nonfinite;
} CbiAccuracy;


/* The accuracy of the @count values @got against @ref (both transfer
 * none), a tensor of @shape whose first dimension is the batch: where
 * each frame's part has one dimension of at least 2 besides ones (class
 * scores: N x C, N x C x 1 x 1), the top-1 agreement over the frames too. */
void cbi_accuracy_of_values (const gfloat * got, const gfloat * ref,
    const CbiShape * shape, CbiAccuracy * accuracy);

/* The accuracy of @n frames @got against @ref (transfer none), each
 * @width x @height pixels of @pixel_stride bytes, rows @stride bytes
 * apart, on the bytes at @offsets (@n_offsets of them, the model's
 * channels) of each pixel. */
void cbi_accuracy_of_frames (const guint8 * const *got,
    const guint8 * const *ref, guint n, guint width, guint height,
    guint pixel_stride, gsize stride, const guint * offsets, guint n_offsets,
    CbiAccuracy * accuracy);

/* Whether @accuracy passes @tolerance: its relative error at most that,
 * and no value NaN or infinite that float32 has finite. */
gboolean cbi_accuracy_passes (const CbiAccuracy * accuracy,
    gdouble tolerance);

G_END_DECLS
