/* GStreamer cudabatchinfer element: its output pools and the memory limit
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The buffers the element's results go out in (a batch for each batch in
 * flight; with scaling, a pool per stream), the tensor outputs' pool, and
 * what of memory-limit they take before the engine gets the rest. Calls
 * nothing of the element's but the modelinfo reader.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Deactivates and unrefs *@pool, if any, and sets it to %NULL. */
void gst_cuda_batch_infer_clear_pool (GstBufferPool ** pool);
/* The bytes of the element's own output buffers for frames that come out
 * as @out_info, or as @out's tensors: a batch for each batch in flight. */
guint64 gst_cuda_batch_infer_output_bytes (GstCudaBatchInfer * self,
    const GstVideoInfo * out_info, const CbiOutputInfo * out);
/* memory-limit covers the output buffers too: counts @bytes of them
 * against it before they are allocated, and gives the engine what is
 * left. Posts an error when they alone do not fit. */
gboolean gst_cuda_batch_infer_budget (GstCudaBatchInfer * self, guint64 bytes);
/* The budget for frames of @info before caps give their output format:
 * the model's output for them, in the input's format. A size the model
 * cannot take is the warm-up's to report. */
gboolean gst_cuda_batch_infer_budget_for (GstCudaBatchInfer * self,
    const GstVideoInfo * info);
/* A pool of @n buffers (and more on demand) of frames of @caps, @info,
 * in *@pool (replaced). */
gboolean gst_cuda_batch_infer_setup_pool (GstCudaBatchInfer * self, GstCaps * caps,
    const GstVideoInfo * info, GstBufferPool ** pool, guint n);
/* Tensor outputs: a pool of buffers for one frame's slice of them all. */
gboolean gst_cuda_batch_infer_setup_tensor_pool (GstCudaBatchInfer * self);
/* With scaling, a stream's own pool of @bytes of output buffers counts
 * against memory-limit with the element's and the engine's memory, in
 * place of what its pool held before. Posts an error naming the pad where
 * it does not fit. */
gboolean gst_cuda_batch_infer_budget_stream (GstCudaBatchInfer * self,
    GstCbiStream * stream, const GstVideoInfo * info, guint n);

G_END_DECLS
