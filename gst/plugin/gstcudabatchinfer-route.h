/* GStreamer cudabatchinfer element: frames routed to their streams
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The request pads' streams (GstCbiStream): their life, each frame's
 * result handed to its stream's queue (or dropped there), serialised
 * events held behind the frames before them, src_K's task that pushes
 * the queue, and what the batches hold of the streams; and what every
 * sink pad keeps to skip and drop frames (GstCbiPadState). Calls nothing
 * of the element's but the pools (a stream's own).
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Returns: (transfer none): what skipping and dropping keep for the sink
 * pad of @stream (nullable: the always pad). */
GstCbiPadState *gst_cuda_batch_infer_pad_state (GstCudaBatchInfer * self,
    GstCbiStream * stream);
/* Empties @pad (the always pad's or a stream's): the results its skipped
 * frames would go out with, the last QoS event, the interval's count;
 * with @counters, its counts too (a new run). With the batch lock, or no
 * thread streaming. */
void gst_cuda_batch_infer_pad_state_clear (GstCudaBatchInfer * self,
    GstCbiPadState * pad, gboolean counters);
/* Keeps what a QoS event @event (transfer none) from downstream of @pad's
 * src pad says: the running time before which frames are late. */
void gst_cuda_batch_infer_pad_state_qos (GstCudaBatchInfer * self,
    GstCbiPadState * pad, GstEvent * event);
/* A frame of @stream went into the pending frames: what its events wait
 * for counts it. Returns: its place among them (GstCbiFrameTag.seq). */
guint64 gst_cuda_batch_infer_stream_admit (GstCbiStream * stream);
/* Returns: (transfer full) (nullable): the stream of a frame tagged @tag,
 * a reference, where it is still the element's and not flushed since the
 * frame came; %NULL where it was released (its memory may be gone) or
 * flushed. */
GstCbiStream *gst_cuda_batch_infer_stream_of_tag (GstCudaBatchInfer * self,
    const GstCbiFrameTag * tag);
/* Returns: (transfer full): a new stream K of @index, tagged @serial, its
 * src_K flushing until started; its pads are the caller's to make. */
GstCbiStream *gst_cuda_batch_infer_stream_new (guint index, guint64 serial);
/* Gives back a reference to @stream (transfer full): the element's
 * table's, a pad's or a batch's; the last frees it. */
void gst_cuda_batch_infer_stream_unref (GstCbiStream * stream);
/* Returns: (transfer none): the pad paired with @pad. */
GstPad *gst_cuda_batch_infer_pair (GstCudaBatchInfer * self, GstPad * pad);
/* Returns: (transfer full): an iterator over @pad's pair: sink_K with
 * src_K, sink with src. */
GstIterator *gst_cuda_batch_infer_iterate_internal_links (GstPad * pad, GstObject * parent);
/* Counts @n frames of @stream (nullable: the always pad, or a stream
 * counted already) dropped, there and in the element's stats. */
void gst_cuda_batch_infer_count_dropped (GstCudaBatchInfer * self,
    GstCbiStream * stream, guint n);
/* Empties the queue and the held events: buffers are dropped (returns
 * how many), sticky events but segment and EOS stay on src_K for the
 * next buffer, as a queue element keeps them across a flush. With the
 * stream's lock. */
guint gst_cuda_batch_infer_flush_queue_unlocked (GstCbiStream * stream);
/* Queues serialised @event (transfer full) for src_K, behind the frames
 * of @stream that came before it. */
void gst_cuda_batch_infer_stream_event (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstEvent * event);
/* Hands the result of a frame tagged @tag (a stream's) to its stream's
 * queue: @buffer (transfer full, nullable: %NULL when the frame was
 * dropped). A stream that is gone, flushed since or flushing drops it. */
void gst_cuda_batch_infer_deliver (GstCudaBatchInfer * self, GstCbiFrameTag * tag,
    GstBuffer * buffer);
/* Drops the pending frames, each through its stream; returns how many. */
guint gst_cuda_batch_infer_drop_pending (GstCudaBatchInfer * self);
/* The bitmask of the request pads (index < 64) in @batch, and how many
 * streams (the always pad counts as one) it holds. */
guint gst_cuda_batch_infer_stream_mix (const GstCbiBatch * batch, guint64 * mask);
/* Lets src_K's task run (only while src_K is active: a FLUSH_STOP racing
 * its deactivation does not restart it), or pauses it (@flushing) and
 * empties the queue; @stop stops it, but from the task itself, which
 * cannot join itself. */
gboolean gst_cuda_batch_infer_stream_set_flushing (GstCudaBatchInfer * self,
    GstCbiStream * stream, gboolean flushing, gboolean stop);
/* Waits until @stream has room for a frame in its queue. Returns what the
 * streaming thread gives back upstream: FLUSHING, or what downstream of
 * src_K said. */
GstFlowReturn gst_cuda_batch_infer_stream_wait_room (GstCudaBatchInfer * self,
    GstCbiStream * stream);
/* Waits until every frame of @stream left the batches and, while the
 * element plays, until src_K pushed them. Not from the threads those
 * waits need: the always src pad's task (which hands the frames over)
 * and src_K's own task. @sink_flush: a flushing sink_K ends the wait. */
void gst_cuda_batch_infer_stream_wait_out (GstCudaBatchInfer * self,
    GstCbiStream * stream, gboolean sink_flush);
/* Takes a reference to the stream of each frame of @batch (batch->held)
 * and drops, from the batch, the frames of streams released or flushed
 * since they came (counted as dropped). With the batch lock, before the
 * batch is submitted. */
void gst_cuda_batch_infer_hold_streams (GstCudaBatchInfer * self,
    GstCbiBatch * batch);
/* Gives back what gst_cuda_batch_infer_hold_streams() took. */
void gst_cuda_batch_infer_unhold_streams (GstCbiBatch * batch);
/* Wakes every stream's waiters: the element's state changed. */
void gst_cuda_batch_infer_wake_streams (GstCudaBatchInfer * self);
/* Each stream's frames-in, -out and -dropped, as an array of structures
 * (transfer full), or %NULL without request pads. */
GValue *gst_cuda_batch_infer_streams_stats (GstCudaBatchInfer * self);
/* For a new run (READY→PAUSED): counters and caps start again. */
void gst_cuda_batch_infer_reset_streams (GstCudaBatchInfer * self);
/* Drops what the streams hold of the run, with the engine: their own
 * output pools (scaling) and the results their skipped frames would go
 * out with (interval). */
void gst_cuda_batch_infer_stop_streams (GstCudaBatchInfer * self);
/* At finalize: what is left (pads the application never released). */
void gst_cuda_batch_infer_free_streams (GstCudaBatchInfer * self);

G_END_DECLS
