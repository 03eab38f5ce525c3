/* GStreamer cudabatchinfer element: frames taken in, or not
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Where a frame comes in, from either kind of sink pad: dropped when the
 * sink said it would be late (qos); marked to skip inference where the
 * interval says; then pending, and the batch submitted when it is full or
 * its pad's frames span max-latency. Under a drop-policy the streaming
 * thread never waits for a place in flight: frames wait instead, within
 * their bounds, and the timeout task submits them when a place frees. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-admit.h"
#include "gstcudabatchinfer-batch.h"
#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-timeout.h"

/* Whether the frame with running time @running is late for the sink, as
 * the last QoS event on @pad's src pad said (GstBaseTransform's rule). */
static gboolean
gst_cuda_batch_infer_late (GstCudaBatchInfer * self, GstCbiPadState * pad,
    GstClockTime running, GstClockTime * earliest, gdouble * proportion)
{
  gboolean late;

  STATS_LOCK (self);
  *earliest = pad->qos_earliest;
  *proportion = pad->qos_proportion;
  late = GST_CLOCK_TIME_IS_VALID (running) && GST_CLOCK_TIME_IS_VALID
      (*earliest) && running <= *earliest;
  STATS_UNLOCK (self);
  return late;
}

/* Counts @buffer (transfer full: unreffed), a frame of @stream (nullable:
 * the always pad) with running time @running, dropped @late for the sink
 * or else shed by drop-policy, and posts a QoS message for it: the pad's
 * frames processed and dropped, @jitter how late it was (late) or how
 * long it had waited (shed). @admitted: it was pending, and its stream has
 * counted it dropped already; @stream_time: for the message (NONE: not
 * read from another pad's segment, which its own thread writes). */
static void
gst_cuda_batch_infer_drop_frame (GstCudaBatchInfer * self,
    GstCbiStream * stream, gboolean admitted, GstBuffer * buffer,
    GstClockTime running, GstClockTime stream_time, gboolean late,
    GstClockTimeDiff jitter, gdouble proportion)
{
  GstCbiPadState *pad = gst_cuda_batch_infer_pad_state (self, stream);
  GstPad *sinkpad = stream ? stream->sinkpad : self->sinkpad;
  GstClockTime pts = GST_BUFFER_PTS (buffer);
  guint64 processed, dropped;
  GstMessage *msg;

  STATS_LOCK (self);
  if (late) {
    pad->late++;
    self->stats.frames_late++;
  } else {
    pad->shed++;
    self->stats.frames_shed++;
  }
  processed = pad->admitted - pad->shed;
  dropped = pad->late + pad->shed;
  if (stream == NULL || admitted)
    self->stats.frames_dropped++;
  STATS_UNLOCK (self);
  if (stream && !admitted)
    gst_cuda_batch_infer_count_dropped (self, stream, 1);
  GST_DEBUG_OBJECT (sinkpad, "dropping the frame of %" GST_TIME_FORMAT ": %s",
      GST_TIME_ARGS (pts), late ? "late for the sink" : "drop-policy");

  msg = gst_message_new_qos (GST_OBJECT_CAST (self), FALSE, running,
      stream_time, pts, GST_BUFFER_DURATION (buffer));
  gst_message_set_qos_values (msg, jitter, proportion, 1000000);
  gst_message_set_qos_stats (msg, GST_FORMAT_BUFFERS, processed, dropped);
  gst_structure_set (gst_message_writable_structure (msg),
      "pad", G_TYPE_STRING, GST_OBJECT_NAME (sinkpad),
      "reason", G_TYPE_STRING, late ? "late" : "drop-policy", NULL);
  gst_element_post_message (GST_ELEMENT_CAST (self), msg);
  gst_buffer_unref (buffer);
}

/* Sheds pending frame @index (not in a batch yet) by drop-policy: out of
 * the batcher, to its stream as dropped, counted and posted. With the
 * batch lock. */
static void
gst_cuda_batch_infer_shed (GstCudaBatchInfer * self, guint index,
    GstClockTime newest)
{
  GstCbiFrameTag tag;
  GstBuffer *frame = gst_cbi_batcher_remove (&self->batcher, index, &tag);
  GstCbiStream *stream = NULL;

  self->due = TRUE;
  if (tag.stream) {
    /* not followed where it is gone: its memory may be too (released
     * from the always src pad's task, its frames left pending) */
    stream = gst_cuda_batch_infer_stream_of_tag (self, &tag);
    gst_cuda_batch_infer_deliver (self, &tag, NULL);
    if (stream == NULL) {
      gst_buffer_unref (frame);
      STATS_LOCK (self);
      self->stats.frames_shed++;
      STATS_UNLOCK (self);
      gst_cuda_batch_infer_count_dropped (self, NULL, 1);
      return;
    }
  }
  /* its pad's next frame is inferred where none of its frames to infer
   * is left pending (the one after it took its place otherwise) */
  if (!tag.skip && gst_cbi_batcher_oldest (&self->batcher, tag.stream,
          tag.serial) < 0)
    gst_cuda_batch_infer_pad_state (self, stream)->skip_left = 0;
  gst_cuda_batch_infer_drop_frame (self, stream, TRUE, frame, tag.running,
      GST_CLOCK_TIME_NONE, FALSE, GST_CLOCK_TIME_IS_VALID (newest)
      && GST_CLOCK_TIME_IS_VALID (tag.running) ? GST_CLOCK_DIFF (tag.running,
          newest) : 0, 1.0);
  if (stream)
    gst_cuda_batch_infer_stream_unref (stream);
}

/* Whether @stream's (nullable: the always pad's) oldest pending frame came
 * max-latency or more before its newest, @newest. */
static gboolean
gst_cuda_batch_infer_overdue (GstCudaBatchInfer * self, GstCbiStream * stream,
    GstClockTime newest, GstClockTime max_latency)
{
  GstClockTime first;
  gint oldest;

  if (max_latency == 0 || !GST_CLOCK_TIME_IS_VALID (newest))
    return FALSE;
  oldest = gst_cbi_batcher_oldest (&self->batcher, stream,
      stream ? stream->serial : 0);
  if (oldest < 0)
    return FALSE;
  first = self->batcher.tags[oldest].running;
  return GST_CLOCK_TIME_IS_VALID (first) && newest >= first
      && newest - first >= max_latency;
}

/* How long the frame of running time @running, a frame of @pad, waited
 * before it came, on the pipeline clock and beyond what upstream said its
 * frames take (its latency): 0 where it is not late, or there is no
 * clock. */
static GstClockTime
gst_cuda_batch_infer_age (GstCudaBatchInfer * self, GstCbiPadState * pad,
    GstClockTime running)
{
  GstClockTime now = GST_CLOCK_TIME_NONE, base_time, upstream;
  GstClock *clock;

  GST_OBJECT_LOCK (self);
  clock = GST_ELEMENT_CLOCK (self) ? gst_object_ref (GST_ELEMENT_CLOCK (self))
      : NULL;
  base_time = GST_ELEMENT_CAST (self)->base_time;
  GST_OBJECT_UNLOCK (self);
  if (clock) {
    now = gst_clock_get_time (clock);
    gst_object_unref (clock);
  }
  STATS_LOCK (self);
  upstream = pad->upstream_latency;
  STATS_UNLOCK (self);
  if (!GST_CLOCK_TIME_IS_VALID (now) || !GST_CLOCK_TIME_IS_VALID (running)
      || now < base_time || now - base_time <= running + upstream)
    return 0;
  return now - base_time - running - upstream;
}

/* Under a drop-policy, the most a frame may have waited upstream when it
 * comes: max-latency, or under latest-only without it, one frame (a newer
 * frame is behind it); 0: no bound. */
static GstClockTime
gst_cuda_batch_infer_arrival_bound (GstCudaBatchInfer * self,
    GstClockTime max_latency)
{
  GstClockTime frame;

  if (max_latency > 0 || self->run_drop_policy !=
      GST_CUDA_BATCH_INFER_DROP_POLICY_LATEST_ONLY)
    return max_latency;
  frame = gst_cuda_batch_infer_frames_duration (self, 1);
  return GST_CLOCK_TIME_IS_VALID (frame) ? frame : 0;
}

/* Whether a place in flight is free for a batch now. */
static gboolean
gst_cuda_batch_infer_place_free (GstCudaBatchInfer * self)
{
  gboolean free;

  INFLIGHT_LOCK (self);
  free = !self->inflight_flushing
      && gst_cbi_inflight_next_unlocked (&self->inflight) != NULL;
  INFLIGHT_UNLOCK (self);
  return free;
}

/* Under a drop-policy, after a frame of @stream with running time
 * @newest came: the pending frames go when a place in flight is free and
 * they make a batch, or are due; else they wait, within their bounds. */
static GstFlowReturn
gst_cuda_batch_infer_bound (GstCudaBatchInfer * self, GstCbiStream * stream,
    GstClockTime newest, GstClockTime max_latency)
{
  GstCbiBatcher *b = &self->batcher;
  gboolean overdue =
      gst_cuda_batch_infer_overdue (self, stream, newest, max_latency);
  const guint64 serial = stream ? stream->serial : 0;
  GstFlowReturn ret = GST_FLOW_OK;
  guint limit;
  gint oldest;

  if (gst_cuda_batch_infer_place_free (self)) {
    if (gst_cbi_batcher_ready (b) || overdue || self->due)
      ret = gst_cuda_batch_infer_try_process (self, overdue ? "max-latency" :
          "full");
  } else if (self->run_drop_policy ==
      GST_CUDA_BATCH_INFER_DROP_POLICY_LATEST_ONLY) {
    /* the pad's newest frame alone waits for the next place */
    while ((oldest = gst_cbi_batcher_oldest (b, stream, serial)) >= 0
        && (guint) oldest < b->count - 1)
      gst_cuda_batch_infer_shed (self, oldest, newest);
  } else {
    while (gst_cuda_batch_infer_overdue (self, stream, newest, max_latency))
      gst_cuda_batch_infer_shed (self, gst_cbi_batcher_oldest (b, stream,
              serial), newest);
  }
  /* two batches' frames wait at most (and with max-latency, what it lets
   * wait, up to the batcher's capacity), room left for the next: the
   * pad's oldest goes, or where the new frame is its only one, the
   * oldest of all */
  limit = max_latency > 0 ? b->capacity : 2 * self->run_capacity;
  while (b->count >= limit) {
    oldest = gst_cbi_batcher_oldest (b, stream, serial);
    gst_cuda_batch_infer_shed (self, oldest >= 0
        && (guint) oldest < b->count - 1 ? (guint) oldest : 0, newest);
  }
  return ret;
}

GstFlowReturn
gst_cuda_batch_infer_add_frame (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstBuffer * buffer, const GstSegment * segment)
{
  GstCbiPadState *pad = gst_cuda_batch_infer_pad_state (self, stream);
  GstCbiFrameTag tag = { stream, stream ? stream->serial : 0,
    stream ? (gint) stream->index : -1, GST_CLOCK_TIME_NONE, FALSE, 0
  };
  GstClockTime pts = GST_BUFFER_PTS (buffer), max_latency, earliest, age,
      bound, stream_time = GST_CLOCK_TIME_NONE;
  gdouble proportion;
  gboolean qos, ready;

  GST_OBJECT_LOCK (self);
  qos = self->qos;
  max_latency = self->max_latency;
  GST_OBJECT_UNLOCK (self);
  if (segment->format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID (pts)) {
    tag.running = gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts);
    stream_time = gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts);
  }
  if (qos && gst_cuda_batch_infer_late (self, pad, tag.running, &earliest,
          &proportion)) {
    gst_cuda_batch_infer_drop_frame (self, stream, FALSE, buffer,
        tag.running, stream_time, TRUE, GST_CLOCK_DIFF (tag.running,
            earliest), proportion);
    return GST_FLOW_OK;
  }

  /* under a drop-policy, a frame that waited upstream past its bound (a
   * CPU batch held the streaming thread meanwhile) is not taken in */
  if (self->run_drop_policy != GST_CUDA_BATCH_INFER_DROP_POLICY_NONE
      && (bound = gst_cuda_batch_infer_arrival_bound (self, max_latency)) > 0
      && (age = gst_cuda_batch_infer_age (self, pad, tag.running)) > bound) {
    gst_cuda_batch_infer_drop_frame (self, stream, FALSE, buffer,
        tag.running, stream_time, FALSE, age, 1.0);
    return GST_FLOW_OK;
  }

  /* every interval-th frame of a pad is inferred, the first one first */
  tag.skip = pad->skip_left > 0;
  pad->skip_left = tag.skip ? pad->skip_left - 1 : self->run_interval - 1;
  pad->admitted++;
  if (stream)
    tag.seq = gst_cuda_batch_infer_stream_admit (stream);
  ready = gst_cbi_batcher_push (&self->batcher, buffer, &tag);
  if (self->batcher.count == 1)
    gst_cuda_batch_infer_timer_arm (self, tag.running);
  if (self->run_drop_policy != GST_CUDA_BATCH_INFER_DROP_POLICY_NONE)
    return gst_cuda_batch_infer_bound (self, stream, tag.running, max_latency);
  if (ready)
    return gst_cuda_batch_infer_process (self, "full");
  if (gst_cuda_batch_infer_overdue (self, stream, tag.running, max_latency))
    return gst_cuda_batch_infer_process (self, "max-latency");
  return GST_FLOW_OK;
}

void
gst_cuda_batch_infer_deadline (GstCudaBatchInfer * self, gboolean place_freed)
{
  /* a failure is the src pad task's to report, or an error posted */
  if (self->engine == NULL)
    return;
  if (self->run_drop_policy == GST_CUDA_BATCH_INFER_DROP_POLICY_NONE) {
    if (!place_freed)
      gst_cuda_batch_infer_process (self, "batch-timeout");
    return;
  }
  /* under a drop-policy the streaming thread never waits for a place in
   * flight, nor does this task: frames whose deadline passed go at the
   * first place free */
  if (!place_freed)
    self->due = TRUE;
  if (self->batcher.count > 0 && (self->due
          || gst_cbi_batcher_ready (&self->batcher)))
    gst_cuda_batch_infer_try_process (self, place_freed ? "place freed" :
        "batch-timeout");
}
