/* GStreamer cudabatchinfer element: frames routed to their streams
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The always src pad's task collects each batch and hands every frame's
 * result to its stream's queue here; src_K's own task pushes that queue,
 * so branches that block or preroll do not hold up each other. Serialised
 * events of a stream wait in its queue behind the frames that came before
 * them. A frame's tag names its stream by address and serial: a stream
 * released or flushed since is never followed. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-pools.h"

/* A serialised event that waits for the frames of its stream that came
 * before it. */
typedef struct
{
  GstEvent *event;
  guint64 mark;                 /* the frames before it: in_count then */
  guint64 remaining;            /* of them, those not out yet: it is queued
                                 * once none is. Counted by the frames'
                                 * places (their tags' seq), not by how many
                                 * left: a frame shed after it leaves before
                                 * the ones in flight before it */
} GstCbiHeldEvent;

guint
gst_cuda_batch_infer_flush_queue_unlocked (GstCbiStream * stream)
{
  GstMiniObject *item;
  GstCbiHeldEvent *held;
  guint dropped = 0;

  while ((held = g_queue_pop_head (&stream->held))) {
    g_queue_push_tail (&stream->queue, held->event);
    g_free (held);
  }
  while ((item = g_queue_pop_head (&stream->queue))) {
    if (GST_IS_EVENT (item)) {
      GstEvent *event = GST_EVENT_CAST (item);
      if (GST_EVENT_IS_STICKY (event)
          && GST_EVENT_TYPE (event) != GST_EVENT_SEGMENT
          && GST_EVENT_TYPE (event) != GST_EVENT_EOS)
        gst_pad_store_sticky_event (stream->srcpad, event);
    } else {
      dropped++;
    }
    gst_mini_object_unref (item);
  }
  stream->queued = 0;
  return dropped;
}

/* A stream is freed when the element's table and both its pads are done
 * with it: a pad outlives its release where someone holds it (a query in
 * flight, src_K's task when the release came from it). */
static void
gst_cuda_batch_infer_stream_clear (GstCbiStream * stream)
{
  gst_cuda_batch_infer_flush_queue_unlocked (stream);
  gst_clear_caps (&stream->refused_caps);
  gst_cuda_batch_infer_clear_pool (&stream->out_pool);
  /* the last reference: nothing reads these any more */
  gst_clear_buffer (&stream->pad.last_image);
  gst_clear_buffer (&stream->pad.last_tensors);
  g_mutex_clear (&stream->lock);
  g_cond_clear (&stream->cond);
}

GstCbiPadState *
gst_cuda_batch_infer_pad_state (GstCudaBatchInfer * self, GstCbiStream * stream)
{
  return stream ? &stream->pad : &self->pad;
}

void
gst_cuda_batch_infer_pad_state_clear (GstCudaBatchInfer * self,
    GstCbiPadState * pad, gboolean counters)
{
  pad->skip_left = 0;
  STATS_LOCK (self);
  gst_clear_buffer (&pad->last_image);
  gst_clear_buffer (&pad->last_tensors);
  pad->qos_earliest = GST_CLOCK_TIME_NONE;
  pad->qos_proportion = 1.0;
  if (counters) {
    pad->upstream_latency = 0;
    pad->admitted = pad->inferred = pad->skipped = pad->late = pad->shed = 0;
  }
  STATS_UNLOCK (self);
}

void
gst_cuda_batch_infer_pad_state_qos (GstCudaBatchInfer * self,
    GstCbiPadState * pad, GstEvent * event)
{
  GstClockTimeDiff diff;
  GstClockTime timestamp;
  gdouble proportion;

  gst_event_parse_qos (event, NULL, &proportion, &diff, &timestamp);
  STATS_LOCK (self);
  pad->qos_proportion = proportion;
  /* as GstBaseTransform: frames up to there are late */
  pad->qos_earliest = GST_CLOCK_TIME_IS_VALID (timestamp) ?
      (GstClockTime) MAX ((GstClockTimeDiff) timestamp + diff, 0) :
      GST_CLOCK_TIME_NONE;
  STATS_UNLOCK (self);
}

guint64
gst_cuda_batch_infer_stream_admit (GstCbiStream * stream)
{
  guint64 seq;

  STREAM_LOCK (stream);
  seq = ++stream->in_count;
  STREAM_UNLOCK (stream);
  return seq;
}

GstCbiStream *
gst_cuda_batch_infer_stream_of_tag (GstCudaBatchInfer * self,
    const GstCbiFrameTag * tag)
{
  GstCbiStream *stream = NULL;

  g_mutex_lock (&self->streams_lock);
  if (g_ptr_array_find (self->streams, tag->stream, NULL)
      && ((GstCbiStream *) tag->stream)->serial == tag->serial)
    stream = g_atomic_rc_box_acquire (tag->stream);
  g_mutex_unlock (&self->streams_lock);
  return stream;
}

GstCbiStream *
gst_cuda_batch_infer_stream_new (guint index, guint64 serial)
{
  GstCbiStream *stream = g_atomic_rc_box_new0 (GstCbiStream);

  stream->index = index;
  stream->serial = serial;
  stream->flushing = TRUE;
  stream->flow = GST_FLOW_OK;
  g_mutex_init (&stream->lock);
  g_cond_init (&stream->cond);
  g_queue_init (&stream->queue);
  g_queue_init (&stream->held);
  gst_segment_init (&stream->segment, GST_FORMAT_UNDEFINED);
  stream->pad.qos_earliest = GST_CLOCK_TIME_NONE;
  stream->pad.qos_proportion = 1.0;
  return stream;
}

void
gst_cuda_batch_infer_stream_unref (GstCbiStream * stream)
{
  g_atomic_rc_box_release_full (stream,
      (GDestroyNotify) gst_cuda_batch_infer_stream_clear);
}

GstPad *
gst_cuda_batch_infer_pair (GstCudaBatchInfer * self, GstPad * pad)
{
  GstCbiStream *stream;

  if (pad == self->sinkpad)
    return self->srcpad;
  if (pad == self->srcpad)
    return self->sinkpad;
  stream = gst_pad_get_element_private (pad);
  return pad == stream->sinkpad ? stream->srcpad : stream->sinkpad;
}

GstIterator *
gst_cuda_batch_infer_iterate_internal_links (GstPad * pad, GstObject * parent)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  GValue value = G_VALUE_INIT;
  GstIterator *it;

  /* not every pad of the other direction, as the default: an event on
   * sink_K is for src_K alone */
  g_value_init (&value, GST_TYPE_PAD);
  g_value_set_object (&value, gst_cuda_batch_infer_pair (self, pad));
  it = gst_iterator_new_single (GST_TYPE_PAD, &value);
  g_value_unset (&value);
  return it;
}

void
gst_cuda_batch_infer_count_dropped (GstCudaBatchInfer * self,
    GstCbiStream * stream, guint n)
{
  if (n == 0)
    return;
  if (stream) {
    STREAM_LOCK (stream);
    stream->frames_dropped += n;
    STREAM_UNLOCK (stream);
  }
  STATS_LOCK (self);
  self->stats.frames_dropped += n;
  STATS_UNLOCK (self);
}

/* Moves the held events whose frames have all left the batches to the
 * queue. With the stream's lock. */
static void
gst_cuda_batch_infer_release_held_unlocked (GstCbiStream * stream)
{
  GstCbiHeldEvent *held;

  while ((held = g_queue_peek_head (&stream->held)) && held->remaining == 0) {
    g_queue_pop_head (&stream->held);
    g_queue_push_tail (&stream->queue, held->event);
    g_free (held);
  }
}

void
gst_cuda_batch_infer_stream_event (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstEvent * event)
{
  STREAM_LOCK (stream);
  if (stream->flushing || GST_PAD_IS_FLUSHING (stream->sinkpad)) {
    /* a flush came past it: it would go out after the seek. What is
     * sticky (but segment and EOS) stays on src_K for the next buffer */
    if (GST_EVENT_IS_STICKY (event)
        && GST_EVENT_TYPE (event) != GST_EVENT_SEGMENT
        && GST_EVENT_TYPE (event) != GST_EVENT_EOS)
      gst_pad_store_sticky_event (stream->srcpad, event);
    gst_event_unref (event);
  } else if (stream->out_count == stream->in_count) {
    g_queue_push_tail (&stream->queue, event);
  } else {
    GstCbiHeldEvent *held = g_new (GstCbiHeldEvent, 1);
    held->event = event;
    held->mark = stream->in_count;
    held->remaining = stream->in_count - stream->out_count;
    g_queue_push_tail (&stream->held, held);
  }
  g_cond_broadcast (&stream->cond);
  STREAM_UNLOCK (stream);
}

void
gst_cuda_batch_infer_deliver (GstCudaBatchInfer * self, GstCbiFrameTag * tag,
    GstBuffer * buffer)
{
  GstCbiStream *stream = tag->stream;
  gboolean dropped = buffer != NULL, found;

  g_mutex_lock (&self->streams_lock);
  /* a stream released meanwhile is not followed: its memory may be gone;
   * a frame of before its last flush counts as one it dropped */
  found = g_ptr_array_find (self->streams, stream, NULL);
  if (found && stream->serial != tag->serial) {
    STREAM_LOCK (stream);
    stream->frames_dropped++;
    STREAM_UNLOCK (stream);
  } else if (found) {
    GList *l;

    STREAM_LOCK (stream);
    stream->out_count++;
    for (l = stream->held.head; l; l = l->next) {
      GstCbiHeldEvent *held = l->data;
      if (tag->seq <= held->mark)
        held->remaining--;
    }
    if (buffer && !stream->flushing) {
      g_queue_push_tail (&stream->queue, buffer);
      stream->queued++;
      dropped = FALSE;
    } else {
      stream->frames_dropped++;
    }
    gst_cuda_batch_infer_release_held_unlocked (stream);
    g_cond_broadcast (&stream->cond);
    STREAM_UNLOCK (stream);
  }
  g_mutex_unlock (&self->streams_lock);
  if (dropped) {
    gst_buffer_unref (buffer);
    gst_cuda_batch_infer_count_dropped (self, NULL, 1);
  }
}

guint
gst_cuda_batch_infer_drop_pending (GstCudaBatchInfer * self)
{
  guint i;

  for (i = 0; i < self->batcher.count; i++)
    if (self->batcher.tags[i].stream)
      gst_cuda_batch_infer_deliver (self, &self->batcher.tags[i], NULL);
  return gst_cbi_batcher_drop (&self->batcher);
}

guint
gst_cuda_batch_infer_stream_mix (const GstCbiBatch * batch, guint64 * mask)
{
  guint i, j, streams = 0;

  *mask = 0;
  for (i = 0; i < batch->n; i++) {
    gint index = batch->tags[i].index;
    for (j = 0; j < i && batch->tags[j].index != index; j++);
    if (j == i)
      streams++;
    if (index >= 0 && index < 64)
      *mask |= G_GUINT64_CONSTANT (1) << index;
  }
  return streams;
}

/* The src_K task: pushes the stream's queue, in order. */
static void
gst_cuda_batch_infer_stream_loop (GstCbiStream * stream)
{
  GstCudaBatchInfer *self =
      GST_CUDA_BATCH_INFER_CAST (gst_pad_get_parent_element (stream->srcpad));
  GstMiniObject *item;
  GstFlowReturn flow, ret;

  if (self == NULL) {
    /* released from this very task: nothing more to push */
    gst_pad_pause_task (stream->srcpad);
    return;
  }
  STREAM_LOCK (stream);
  stream->push_thread = g_thread_self ();
  while (!stream->flushing && g_queue_is_empty (&stream->queue))
    g_cond_wait (&stream->cond, &stream->lock);
  if (stream->flushing) {
    /* under the lock: clearing the flag restarts the task after this
     * pause, never before it */
    stream->push_thread = NULL;
    gst_pad_pause_task (stream->srcpad);
    STREAM_UNLOCK (stream);
    gst_object_unref (self);
    return;
  }
  item = g_queue_pop_head (&stream->queue);
  if (GST_IS_BUFFER (item))
    stream->queued--;
  stream->pushing = TRUE;
  flow = stream->flow;
  /* room for the streaming thread */
  g_cond_broadcast (&stream->cond);
  STREAM_UNLOCK (stream);

  if (GST_IS_EVENT (item)) {
    gst_pad_push_event (stream->srcpad, GST_EVENT_CAST (item));
    STREAM_LOCK (stream);
    stream->pushing = FALSE;
    g_cond_broadcast (&stream->cond);
    STREAM_UNLOCK (stream);
    gst_object_unref (self);
    return;
  }
  if (flow == GST_FLOW_OK) {
    ret = gst_pad_push (stream->srcpad, GST_BUFFER_CAST (item));
  } else {
    /* downstream refused an earlier one: given back upstream already */
    gst_mini_object_unref (item);
    ret = flow;
  }
  /* the element's count first: one who sees the stream's has it too */
  STATS_LOCK (self);
  if (ret == GST_FLOW_OK)
    self->stats.frames_out++;
  else
    self->stats.frames_dropped++;
  STATS_UNLOCK (self);
  STREAM_LOCK (stream);
  if (ret == GST_FLOW_OK)
    stream->frames_out++;
  else
    stream->frames_dropped++;
  if (ret != GST_FLOW_OK && stream->flow == GST_FLOW_OK)
    stream->flow = ret;
  stream->pushing = FALSE;
  g_cond_broadcast (&stream->cond);
  STREAM_UNLOCK (stream);
  if (ret != GST_FLOW_OK && ret != flow)
    GST_DEBUG_OBJECT (stream->srcpad, "push: %s", gst_flow_get_name (ret));
  gst_object_unref (self);
}

gboolean
gst_cuda_batch_infer_stream_set_flushing (GstCudaBatchInfer * self,
    GstCbiStream * stream, gboolean flushing, gboolean stop)
{
  gboolean ok = TRUE, own, start;
  guint dropped;

  STREAM_LOCK (stream);
  stream->flushing = flushing || !stream->src_active;
  if (!stream->flushing)
    stream->flow = GST_FLOW_OK;
  g_cond_broadcast (&stream->cond);
  start = !stream->flushing;
  own = stream->push_thread == g_thread_self ();
  STREAM_UNLOCK (stream);
  if (!flushing) {
    /* not under the stream's lock: the first start posts a STREAM_STATUS
     * message, and a sync handler may read the stats, which take it */
    if (start)
      ok = gst_pad_start_task (stream->srcpad,
          (GstTaskFunction) gst_cuda_batch_infer_stream_loop, stream, NULL);
    STREAM_LOCK (stream);
    start = start && !stream->src_active;
    STREAM_UNLOCK (stream);
    /* src_K went inactive meanwhile, its stop maybe before our start */
    if (start)
      gst_pad_stop_task (stream->srcpad);
    return ok;
  }

  /* a pad whose task was stopped already has none to pause */
  if (stop && !own)
    ok = gst_pad_stop_task (stream->srcpad);
  else
    gst_pad_pause_task (stream->srcpad);
  STREAM_LOCK (stream);
  dropped = gst_cuda_batch_infer_flush_queue_unlocked (stream);
  if (!own)
    stream->push_thread = NULL;
  STREAM_UNLOCK (stream);
  if (dropped) {
    GST_DEBUG_OBJECT (stream->srcpad, "flushing dropped %u frames", dropped);
    gst_cuda_batch_infer_count_dropped (self, stream, dropped);
  }
  return ok;
}

GstFlowReturn
gst_cuda_batch_infer_stream_wait_room (GstCudaBatchInfer * self,
    GstCbiStream * stream)
{
  /* the results a branch may have waiting: one batch for each in flight,
   * as the always pads' pool gives */
  const guint room = self->run_batch * self->run_inflight;
  GstFlowReturn ret;

  STREAM_LOCK (stream);
  while (!GST_PAD_IS_FLUSHING (stream->sinkpad) && !stream->flushing
      && stream->flow == GST_FLOW_OK && stream->queued >= room)
    g_cond_wait (&stream->cond, &stream->lock);
  ret = GST_PAD_IS_FLUSHING (stream->sinkpad) || stream->flushing ?
      GST_FLOW_FLUSHING : stream->flow;
  stream->frames_in++;
  if (ret != GST_FLOW_OK)
    stream->frames_dropped++;
  STREAM_UNLOCK (stream);
  return ret;
}

void
gst_cuda_batch_infer_stream_wait_out (GstCudaBatchInfer * self,
    GstCbiStream * stream, gboolean sink_flush)
{
  if (g_atomic_pointer_get (&self->push_thread) == g_thread_self ())
    return;
  STREAM_LOCK (stream);
  while (!stream->flushing && stream->flow == GST_FLOW_OK
      && !(sink_flush && GST_PAD_IS_FLUSHING (stream->sinkpad))
      && (stream->out_count != stream->in_count
          || ((!g_queue_is_empty (&stream->queue) || stream->pushing)
              && GST_STATE_TARGET (self) == GST_STATE_PLAYING
              && stream->push_thread != g_thread_self ())))
    g_cond_wait (&stream->cond, &stream->lock);
  STREAM_UNLOCK (stream);
}

void
gst_cuda_batch_infer_hold_streams (GstCudaBatchInfer * self,
    GstCbiBatch * batch)
{
  guint i, kept = 0, dropped;

  g_mutex_lock (&self->streams_lock);
  for (i = 0; i < batch->n; i++) {
    GstCbiStream *stream = batch->tags[i].stream;

    /* a new stream may have the address of a released one: the serial
     * tells them apart (and a flush's frames left the batcher already) */
    if (stream && (!g_ptr_array_find (self->streams, stream, NULL)
            || stream->serial != batch->tags[i].serial)) {
      gst_clear_buffer (&batch->frames[i]);
      continue;
    }
    batch->held[kept] = stream ? g_atomic_rc_box_acquire (stream) : NULL;
    batch->frames[kept] = batch->frames[i];
    batch->tags[kept] = batch->tags[i];
    if (kept != i)
      batch->frames[i] = NULL;
    kept++;
  }
  g_mutex_unlock (&self->streams_lock);
  dropped = batch->n - kept;
  batch->n = kept;
  if (dropped == 0)
    return;
  GST_DEBUG_OBJECT (self, "dropping %u frames of released streams", dropped);
  gst_cuda_batch_infer_count_dropped (self, NULL, dropped);
}

void
gst_cuda_batch_infer_unhold_streams (GstCbiBatch * batch)
{
  guint i;

  for (i = 0; i < batch->n; i++)
    if (batch->held[i]) {
      gst_cuda_batch_infer_stream_unref (batch->held[i]);
      batch->held[i] = NULL;
    }
}

void
gst_cuda_batch_infer_wake_streams (GstCudaBatchInfer * self)
{
  guint i;

  g_mutex_lock (&self->streams_lock);
  for (i = 0; i < self->streams->len; i++) {
    GstCbiStream *stream = g_ptr_array_index (self->streams, i);
    STREAM_LOCK (stream);
    g_cond_broadcast (&stream->cond);
    STREAM_UNLOCK (stream);
  }
  g_mutex_unlock (&self->streams_lock);
}

GValue *
gst_cuda_batch_infer_streams_stats (GstCudaBatchInfer * self)
{
  GValue *array = NULL;
  guint i;

  g_mutex_lock (&self->streams_lock);
  if (self->streams->len) {
    array = g_new0 (GValue, 1);
    g_value_init (array, GST_TYPE_ARRAY);
  }
  for (i = 0; i < self->streams->len; i++) {
    GstCbiStream *stream = g_ptr_array_index (self->streams, i);
    GValue v = G_VALUE_INIT;
    GstStructure *s;

    STREAM_LOCK (stream);
    s = gst_structure_new ("cudabatchinfer-stream",
        "pad", G_TYPE_STRING, GST_PAD_NAME (stream->sinkpad),
        "frames-in", G_TYPE_UINT64, stream->frames_in,
        "frames-out", G_TYPE_UINT64, stream->frames_out,
        "frames-dropped", G_TYPE_UINT64, stream->frames_dropped,
        "queued", G_TYPE_UINT, stream->queued, NULL);
    STREAM_UNLOCK (stream);
    STATS_LOCK (self);
    gst_structure_set (s,
        "frames-inferred", G_TYPE_UINT64, stream->pad.inferred,
        "frames-skipped", G_TYPE_UINT64, stream->pad.skipped,
        "frames-late", G_TYPE_UINT64, stream->pad.late,
        "frames-shed", G_TYPE_UINT64, stream->pad.shed, NULL);
    STATS_UNLOCK (self);
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, s);
    gst_value_array_append_and_take_value (array, &v);
  }
  g_mutex_unlock (&self->streams_lock);
  return array;
}

void
gst_cuda_batch_infer_reset_streams (GstCudaBatchInfer * self)
{
  guint i;

  g_mutex_lock (&self->streams_lock);
  for (i = 0; i < self->streams->len; i++) {
    GstCbiStream *stream = g_ptr_array_index (self->streams, i);

    stream->serial = ++self->stream_serial;
    stream->have_caps = stream->eos = FALSE;
    stream->pool_bytes = 0;
    gst_clear_caps (&stream->refused_caps);
    gst_segment_init (&stream->segment, GST_FORMAT_UNDEFINED);
    STREAM_LOCK (stream);
    /* events queued between src_K's and sink_K's deactivation */
    gst_cuda_batch_infer_flush_queue_unlocked (stream);
    stream->in_count = stream->out_count = 0;
    stream->frames_in = stream->frames_out = stream->frames_dropped = 0;
    stream->flow = GST_FLOW_OK;
    STREAM_UNLOCK (stream);
    gst_cuda_batch_infer_pad_state_clear (self, &stream->pad, TRUE);
  }
  g_mutex_unlock (&self->streams_lock);
}

void
gst_cuda_batch_infer_stop_streams (GstCudaBatchInfer * self)
{
  guint i;

  g_mutex_lock (&self->streams_lock);
  for (i = 0; i < self->streams->len; i++) {
    GstCbiStream *stream = g_ptr_array_index (self->streams, i);
    gst_cuda_batch_infer_clear_pool (&stream->out_pool);
    gst_cuda_batch_infer_pad_state_clear (self, &stream->pad, FALSE);
  }
  g_mutex_unlock (&self->streams_lock);
}

void
gst_cuda_batch_infer_free_streams (GstCudaBatchInfer * self)
{
  g_ptr_array_set_free_func (self->streams,
      (GDestroyNotify) gst_cuda_batch_infer_stream_unref);
  g_ptr_array_unref (self->streams);
}
