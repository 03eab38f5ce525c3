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
