/* GStreamer cudabatchinfer element: frames taken in, or not
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The frames of every sink pad come in here: QoS, interval, max-latency
 * and drop-policy decide what goes into the batches (batch.h), which this
 * file submits. Below the pads' functions and the timeout task's
 * function, which gstcudabatchinfer.c gives it.
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
/* The timeout task's GstCbiDeadlineFunc: submits the partial batch at
 * its deadline, or, under a drop-policy, when a place in flight freed
 * (@place_freed) and the pending frames make a batch or are due. */
void gst_cuda_batch_infer_deadline (GstCudaBatchInfer * self,
    gboolean place_freed);

G_END_DECLS
