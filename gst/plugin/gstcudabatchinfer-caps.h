/* GStreamer cudabatchinfer element: the always pads' functions, and caps
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the pads are told and asked: the always sink pad's frames and
 * events, caps on any sink pad (which size the output pools, within
 * memory-limit, and may warm up again), the caps, allocation, drain and
 * latency queries. Below the request pads (streams.h), which share its
 * caps and queries; above the src pad's task, the batches, the warm-up,
 * the pools and the streams' routing.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* The always sink pad's chain function. */
GstFlowReturn gst_cuda_batch_infer_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer);
gboolean gst_cuda_batch_infer_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
gboolean gst_cuda_batch_infer_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
/* The always src pad's event function: QoS events are kept (frames late
 * for the sink are dropped, not inferred), then go upstream. */
gboolean gst_cuda_batch_infer_src_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
/* What the element adds to the latency: waiting for a batch, batch x
 * interval - 1 frame durations at the caps' framerate or batch-timeout if
 * that is shorter, plus one batch's time, @batch_time (NONE: the stats'
 * latency-batch-time). @bounded (nullable): FALSE when the wait has no
 * bound (no framerate, no batch-timeout): then only the batch time. */
GstClockTime gst_cuda_batch_infer_latency (GstCudaBatchInfer * self,
    GstClockTime batch_time, gboolean * bounded);
/* Every src pad's query function: latency, caps. */
gboolean gst_cuda_batch_infer_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
/* Accepts @caps on @stream's sink pad (nullable: the always pad); posts an
 * error when it cannot. With the batch lock. */
gboolean gst_cuda_batch_infer_set_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstCaps * caps);
/* Answers a CAPS query on @stream's sink pad. */
gboolean gst_cuda_batch_infer_stream_query_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstPad * pad, GstQuery * query);
/* Whether a frame that came on @pad with its caps @info batches with the
 * element's frames; posts an error naming both when not. With the batch
 * lock. */
gboolean gst_cuda_batch_infer_frames_match (GstCudaBatchInfer * self,
    GstPad * pad, const GstVideoInfo * info);

G_END_DECLS
