/* GStreamer cudabatchinfer element: batches made, submitted and collected
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pending frames cut into a batch (padded as pad-mode says), mapped and
 * handed to the engine, then, once the engine is done, made into output
 * buffers with their timestamps and metas. Below the frames' admission
 * (admit.h), the pads' functions and the src pad's task; above the ring,
 * the batcher, the streams' routing, the timer and the engine's side.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Moves the pending frames into a batch and submits it, waiting while
 * max-inflight batches are in flight (not when @may_wait is FALSE: then
 * the frames stay pending). With the batch lock, from the streaming
 * thread, the timeout task or the flush signal. @reason is for the log. */
GstFlowReturn gst_cuda_batch_infer_process_full (GstCudaBatchInfer * self,
    const gchar * reason, gboolean may_wait);
/* gst_cuda_batch_infer_process_full (), waiting. */
GstFlowReturn gst_cuda_batch_infer_process (GstCudaBatchInfer * self,
    const gchar * reason);
/* gst_cuda_batch_infer_process_full (), without waiting. */
GstFlowReturn gst_cuda_batch_infer_try_process (GstCudaBatchInfer * self,
    const gchar * reason);
/* Submits the batch when it holds a frame of @stream: at once from the
 * always src pad's task (which collects batches, so cannot wait for a
 * place), else waiting for one. With the batch lock. */
void gst_cuda_batch_infer_stream_submit (GstCudaBatchInfer * self,
    GstCbiStream * stream, const gchar * reason);
/* Waits for the engine to finish @batch (transfer none) and makes its
 * output buffers: results, timestamps and metas. From the src pad task,
 * or right after the submission where the engine works synchronously. */
GstFlowReturn gst_cuda_batch_infer_collect (GstCudaBatchInfer * self,
    GstCbiBatch * batch);
/* Gives @batch's engine slot back and empties it, counting the frames
 * that will not come out. */
void gst_cuda_batch_infer_discard (GstCudaBatchInfer * self,
    GstCbiBatch * batch);

G_END_DECLS
