/* cudabatchinfer: the CUDA backend's choices under cuDNN's limits and the
 * memory budget
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Plain arithmetic, no CUDA: the tests check it on any machine.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS
/* cuDNN refuses a tensor descriptor of 2^31 elements or more
 * (cudnnSetTensor4dDescriptor: CUDNN_STATUS_NOT_SUPPORTED). */
#define CBI_CUDNN_MAX_ELEMENTS (G_GINT64_CONSTANT (1) << 31)
/* Frames per cuDNN call for a step whose input has @x_per_frame and
 * output @y_per_frame elements a frame, over a batch of @batch: the
 * largest divisor of @batch under cuDNN's limit for both, so that every
 * call has the same shape (one descriptor, one algorithm, one workspace)
 * and the batch is a whole number of calls; 0 when one frame alone is
 * past the limit. */
static inline gint64
cbi_cuda_batch_chunk (gint64 batch, gint64 x_per_frame, gint64 y_per_frame)
{
  const gint64 per_frame = MAX (MAX (x_per_frame, y_per_frame), 1);
  gint64 chunk;

  for (chunk = batch; chunk > 0; chunk--)
    if (batch % chunk == 0 && chunk <= (CBI_CUDNN_MAX_ELEMENTS - 1) / per_frame)
      return chunk;
  return 0;
}

/* The first of @n candidates, ranked best first, that ran (@ok) and
 * whose workspace (@bytes) fits @budget; -1 when none does. */
static inline gint
cbi_cuda_first_fitting (const gboolean * ok, const gsize * bytes, gint n,
    guint64 budget)
{
  gint i;

  for (i = 0; i < n; i++)
    if (ok[i] && bytes[i] <= budget)
      return i;
  return -1;
}

G_END_DECLS
