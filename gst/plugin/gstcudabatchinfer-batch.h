/* GStreamer cudabatchinfer element: batches made, submitted and collected
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pending frames cut into a batch (padded as pad-mode says), mapped and
 * handed to the engine, then, once the engine is done, made into output
 * buffers with their timestamps and metas. Below the pads' functions and
 * the src pad's task; above the ring, the batcher, the streams' routing,
 * the timer and the engine's side.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Takes @buffer (transfer full), a frame of @stream (nullable: the
 * always pad) in @segment, its pad's: drops it where it is late for the
 * sink (QoS), marks it to skip inference where the interval says, and
 * adds it to the pending frames; submits the batch when it is full or
 * the pad's frames span max-latency (waiting for a place in flight, or
 * under a drop-policy shedding frames instead), and arms the batch's
 * deadline with its first frame. With the batch lock. */
GstFlowReturn gst_cuda_batch_infer_add_frame (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstBuffer * buffer, const GstSegment * segment);
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
/* The timeout task's GstCbiDeadlineFunc: submits the partial batch at
 * its deadline, or, under a drop-policy, when a place in flight freed
 * (@place_freed) and the pending frames make a batch or are due. */
void gst_cuda_batch_infer_deadline (GstCudaBatchInfer * self,
    gboolean place_freed);
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
