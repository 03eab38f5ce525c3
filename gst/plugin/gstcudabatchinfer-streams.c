/* GStreamer cudabatchinfer element: many streams, one batch
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Request pads: requesting sink_K adds src_K, and the pair is one stream.
 * Every stream's frames fill the same batches, in the order they arrive
 * (the batch lock serialises the streaming threads; no stream waits for
 * another's frames, so a slow or stalled stream never holds up a fast one,
 * and a fast one only fills the batches sooner). The always src pad's task
 * collects each batch and hands every frame's result to its stream's
 * queue; src_K's own task pushes that queue, so branches that block or
 * preroll do not hold up each other. Serialised events of a stream wait
 * in its queue behind the frames that came before them, without cutting
 * the batch short; EOS on sink_K submits the batch when it holds frames of
 * the stream. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-private.h"

#include <stdlib.h>

static GstStaticPadTemplate stream_sink_template =
GST_STATIC_PAD_TEMPLATE ("sink_%u", GST_PAD_SINK, GST_PAD_REQUEST,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

static GstStaticPadTemplate stream_src_template =
GST_STATIC_PAD_TEMPLATE ("src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

/* A serialised event that waits for the frames of its stream that came
 * before it. */
typedef struct
{
  GstEvent *event;
  guint64 mark;                 /* queued once out_count reaches it */
} GstCbiHeldEvent;

#define STREAM_LOCK(s) g_mutex_lock (&(s)->lock)
#define STREAM_UNLOCK(s) g_mutex_unlock (&(s)->lock)

static guint gst_cuda_batch_infer_flush_queue_unlocked (GstCbiStream * s);

/* A stream is freed when the element's table and both its pads are done
 * with it: a pad outlives its release where someone holds it (a query in
 * flight, src_K's task when the release came from it). */
static void
gst_cuda_batch_infer_stream_clear (GstCbiStream * stream)
{
  gst_cuda_batch_infer_flush_queue_unlocked (stream);
  gst_clear_caps (&stream->refused_caps);
  gst_cuda_batch_infer_clear_pool (&stream->out_pool);
  g_mutex_clear (&stream->lock);
  g_cond_clear (&stream->cond);
}

static void
gst_cuda_batch_infer_stream_unref (GstCbiStream * stream)
{
  g_atomic_rc_box_release_full (stream,
      (GDestroyNotify) gst_cuda_batch_infer_stream_clear);
}

void
gst_cuda_batch_infer_add_stream_templates (GstElementClass * klass)
{
  gst_element_class_add_static_pad_template (klass, &stream_sink_template);
  gst_element_class_add_static_pad_template (klass, &stream_src_template);
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
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
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

/* Counts @n frames of @stream dropped, there and in the element's stats. */
static void
gst_cuda_batch_infer_count_dropped (GstCudaBatchInfer * self,
    GstCbiStream * stream, guint n)
{
  if (n == 0)
    return;
  STREAM_LOCK (stream);
  stream->frames_dropped += n;
  STREAM_UNLOCK (stream);
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

  while ((held = g_queue_peek_head (&stream->held))
      && held->mark <= stream->out_count) {
    g_queue_pop_head (&stream->held);
    g_queue_push_tail (&stream->queue, held->event);
    g_free (held);
  }
}

/* Empties the queue and the held events: buffers are dropped (returns
 * how many), sticky events but segment and EOS stay on src_K for the
 * next buffer, as a queue element keeps them across a flush. With the
 * stream's lock. */
static guint
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
    STREAM_LOCK (stream);
    stream->out_count++;
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
    STATS_LOCK (self);
    self->stats.frames_dropped++;
    STATS_UNLOCK (self);
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
      GST_CUDA_BATCH_INFER (gst_pad_get_parent_element (stream->srcpad));
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

/* Lets src_K's task run (only while src_K is active: a FLUSH_STOP racing
 * its deactivation does not restart it), or pauses it (@flushing) and
 * empties the queue; @stop stops it, but from the task itself, which
 * cannot join itself. */
static gboolean
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

static gboolean
gst_cuda_batch_infer_stream_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  STREAM_LOCK (stream);
  stream->src_active = active;
  STREAM_UNLOCK (stream);
  return gst_cuda_batch_infer_stream_set_flushing (self, stream, !active, TRUE);
}

static gboolean
gst_cuda_batch_infer_stream_sink_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active)
{
  GstCbiStream *stream = gst_pad_get_element_private (pad);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  /* the pad is flushing already: a streaming thread waiting for room
   * wakes, sees it and returns */
  STREAM_LOCK (stream);
  g_cond_broadcast (&stream->cond);
  STREAM_UNLOCK (stream);
  return TRUE;
}

/* Waits until @stream has room for a frame in its queue. Returns what the
 * streaming thread gives back upstream: FLUSHING, or what downstream of
 * src_K said. */
static GstFlowReturn
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

/* Waits for this thread's turn at the batch, in the order the frames
 * came, then takes the batch lock. */
static void
gst_cuda_batch_infer_turn_take (GstCudaBatchInfer * self)
{
  guint64 ticket;

  g_mutex_lock (&self->turn_lock);
  ticket = self->turn_next++;
  while (self->turn_serving != ticket)
    g_cond_wait (&self->turn_cond, &self->turn_lock);
  g_mutex_unlock (&self->turn_lock);
  BATCH_LOCK (self);
}

/* Gives the batch lock back, and the turn to the next ticket. */
static void
gst_cuda_batch_infer_turn_give (GstCudaBatchInfer * self)
{
  BATCH_UNLOCK (self);
  g_mutex_lock (&self->turn_lock);
  self->turn_serving++;
  g_cond_broadcast (&self->turn_cond);
  g_mutex_unlock (&self->turn_lock);
}

static GstFlowReturn
gst_cuda_batch_infer_stream_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);
  GstCbiFrameTag tag;
  GstFlowReturn ret;
  GstClockTime pts = GST_BUFFER_PTS (buffer);

  ret = gst_cuda_batch_infer_stream_wait_room (self, stream);
  STATS_LOCK (self);
  self->stats.frames_in++;
  self->stats.frames_dropped += ret != GST_FLOW_OK;
  STATS_UNLOCK (self);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (buffer);
    return ret;
  }

  gst_cuda_batch_infer_turn_take (self);
  if (!stream->have_caps || self->engine == NULL) {
    /* caps that failed have posted their error already */
    if (stream->refused_caps == NULL)
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
          ("a buffer arrived on %s:%s before caps", GST_DEBUG_PAD_NAME (pad)));
    gst_cuda_batch_infer_turn_give (self);
    gst_buffer_unref (buffer);
    gst_cuda_batch_infer_count_dropped (self, stream, 1);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!gst_cuda_batch_infer_check_frames (self, pad, &stream->info)) {
    gst_cuda_batch_infer_turn_give (self);
    gst_buffer_unref (buffer);
    gst_cuda_batch_infer_count_dropped (self, stream, 1);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  INFLIGHT_LOCK (self);
  /* the always src pad's task failed a batch (an error posted), or the
   * element is flushing; what the always src pad's downstream said
   * otherwise is for its own frames */
  ret = self->inflight_flushing ? GST_FLOW_FLUSHING :
      self->src_flow == GST_FLOW_ERROR ? GST_FLOW_ERROR : GST_FLOW_OK;
  INFLIGHT_UNLOCK (self);
  if (ret != GST_FLOW_OK) {
    gst_cuda_batch_infer_turn_give (self);
    gst_buffer_unref (buffer);
    gst_cuda_batch_infer_count_dropped (self, stream, 1);
    return ret;
  }

  GST_LOG_OBJECT (pad, "frame %" GST_TIME_FORMAT, GST_TIME_ARGS (pts));
  tag.stream = stream;
  tag.serial = stream->serial;
  tag.index = stream->index;
  STREAM_LOCK (stream);
  stream->in_count++;
  STREAM_UNLOCK (stream);
  if (gst_cbi_batcher_push (&self->batcher, buffer, &tag))
    ret = gst_cuda_batch_infer_process (self, "full");
  else if (self->batcher.count == 1)
    gst_cuda_batch_infer_timer_arm (self, &stream->segment, pts);
  gst_cuda_batch_infer_turn_give (self);
  if (ret == GST_FLOW_OK) {
    STREAM_LOCK (stream);
    ret = stream->flow;
    STREAM_UNLOCK (stream);
  }
  return ret;
}

/* FLUSH_STOP on sink_K: the stream's pending frames are dropped, those in
 * flight will be (their serial is old), and src_K starts again. */
static gboolean
gst_cuda_batch_infer_stream_flush_stop (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstEvent * event)
{
  guint dropped;

  BATCH_LOCK (self);
  g_mutex_lock (&self->streams_lock);
  stream->serial = ++self->stream_serial;
  g_mutex_unlock (&self->streams_lock);
  dropped = gst_cbi_batcher_drop_stream (&self->batcher, stream);
  if (self->batcher.count == 0)
    gst_cuda_batch_infer_timer_disarm (self);
  stream->eos = FALSE;
  BATCH_UNLOCK (self);
  if (dropped)
    GST_DEBUG_OBJECT (stream->sinkpad, "flushing dropped %u pending frames",
        dropped);
  gst_cuda_batch_infer_count_dropped (self, stream, dropped);

  STREAM_LOCK (stream);
  /* what came in while the flush ran (an EOS the streaming thread was
   * handling when FLUSH_START came) is of before the seek */
  dropped = gst_cuda_batch_infer_flush_queue_unlocked (stream);
  stream->in_count = stream->out_count = 0;
  STREAM_UNLOCK (stream);
  gst_cuda_batch_infer_count_dropped (self, stream, dropped);
  gst_segment_init (&stream->segment, GST_FORMAT_UNDEFINED);
  gst_pad_push_event (stream->srcpad, event);
  return gst_cuda_batch_infer_stream_set_flushing (self, stream, FALSE, FALSE);
}

static gboolean
gst_cuda_batch_infer_stream_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);
  GstCaps *caps;
  gboolean ok;

  GST_LOG_OBJECT (pad, "event %" GST_PTR_FORMAT, event);
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:
      gst_event_parse_caps (event, &caps);
      BATCH_LOCK (self);
      ok = self->engine && gst_cuda_batch_infer_set_caps (self, stream, caps);
      BATCH_UNLOCK (self);
      gst_event_unref (event);
      return ok;
    case GST_EVENT_FLUSH_START:
      /* the pad is flushing: a streaming thread waiting for room wakes */
      ok = gst_pad_push_event (stream->srcpad, event);
      gst_cuda_batch_infer_stream_set_flushing (self, stream, TRUE, FALSE);
      return ok;
    case GST_EVENT_FLUSH_STOP:
      return gst_cuda_batch_infer_stream_flush_stop (self, stream, event);
    case GST_EVENT_SEGMENT:
      gst_event_copy_segment (event, &stream->segment);
      break;
    case GST_EVENT_STREAM_START:
      BATCH_LOCK (self);
      stream->eos = FALSE;
      BATCH_UNLOCK (self);
      break;
    case GST_EVENT_EOS:
      /* the stream's last frames go now, in a padded batch if need be */
      BATCH_LOCK (self);
      gst_cuda_batch_infer_stream_submit (self, stream, "EOS");
      stream->eos = TRUE;
      BATCH_UNLOCK (self);
      break;
    default:
      break;
  }
  if (!GST_EVENT_IS_SERIALIZED (event))
    return gst_pad_push_event (stream->srcpad, event);
  gst_cuda_batch_infer_stream_event (self, stream, event);
  return TRUE;
}

/* Submits the batch when it holds a frame of @stream: at once from the
 * always src pad's task (which collects batches, so cannot wait for a
 * place), else waiting for one. With the batch lock. */
void
gst_cuda_batch_infer_stream_submit (GstCudaBatchInfer * self,
    GstCbiStream * stream, const gchar * reason)
{
  if (self->engine == NULL
      || !gst_cbi_batcher_has_stream (&self->batcher, stream))
    return;
  if (g_atomic_pointer_get (&self->push_thread) == g_thread_self ())
    gst_cuda_batch_infer_try_process (self, reason);
  else
    gst_cuda_batch_infer_process (self, reason);
}

/* Waits until every frame of @stream left the batches and, while the
 * element plays, until src_K pushed them. Not from the threads those
 * waits need: the always src pad's task (which hands the frames over)
 * and src_K's own task. @sink_flush: a flushing sink_K ends the wait. */
static void
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

static gboolean
gst_cuda_batch_infer_stream_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);

  if (GST_QUERY_TYPE (query) == GST_QUERY_DRAIN) {
    BATCH_LOCK (self);
    gst_cuda_batch_infer_stream_submit (self, stream, "drain query");
    BATCH_UNLOCK (self);
    gst_cuda_batch_infer_stream_wait_out (self, stream, TRUE);
    return gst_pad_query_default (pad, parent, query);
  }
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS)
    return gst_cuda_batch_infer_stream_query_caps (self, stream, pad, query);
  return gst_cuda_batch_infer_sink_query (pad, parent, query);
}

/* The lowest K with no sink_K, or the K of @name; -1 for a name that is
 * not sink_K or a K that is taken. With the streams lock. */
static gint
gst_cuda_batch_infer_stream_index_unlocked (GstCudaBatchInfer * self,
    const gchar * name)
{
  guint64 k = 0;
  gchar *end;
  guint i;

  if (name) {
    if (!g_str_has_prefix (name, "sink_") || name[5] < '0' || name[5] > '9')
      return -1;
    k = g_ascii_strtoull (name + 5, &end, 10);
    if (*end != '\0' || k > G_MAXINT)
      return -1;
  }
  for (i = 0; i < self->streams->len; i++) {
    GstCbiStream *s = g_ptr_array_index (self->streams, i);
    if (s->index == k) {
      if (name)
        return -1;
      k++;
      i = -1;                   /* again from the start */
    }
  }
  return (gint) k;
}

static GstPad *
gst_cuda_batch_infer_stream_pad (GstCudaBatchInfer * self,
    GstStaticPadTemplate * templ, GstCbiStream * stream)
{
  GstPadTemplate *t = gst_static_pad_template_get (templ);
  gchar *name = g_strdup_printf (templ->direction == GST_PAD_SINK ?
      "sink_%u" : "src_%u", stream->index);
  GstPad *pad = gst_pad_new_from_template (t, name);

  g_free (name);
  gst_object_unref (t);
  gst_pad_set_element_private (pad, stream);
  g_object_set_data_full (G_OBJECT (pad), "cbi-stream",
      g_atomic_rc_box_acquire (stream),
      (GDestroyNotify) gst_cuda_batch_infer_stream_unref);
  gst_pad_set_iterate_internal_links_function (pad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_iterate_internal_links));
  GST_PAD_SET_PROXY_CAPS (pad);
  if (templ->direction == GST_PAD_SINK) {
    gst_pad_set_chain_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_chain));
    gst_pad_set_event_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_sink_event));
    gst_pad_set_query_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_sink_query));
    gst_pad_set_activatemode_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_sink_activate_mode));
  } else {
    gst_pad_set_query_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_src_query));
    gst_pad_set_activatemode_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_src_activate_mode));
  }
  return pad;
}

GstPad *
gst_cuda_batch_infer_request_new_pad (GstElement * element,
    GstPadTemplate * templ, const gchar * name, const GstCaps * caps)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (element);
  GstCbiStream *stream;
  gint index;

  if (templ->direction != GST_PAD_SINK) {
    GST_WARNING_OBJECT (self, "src_%%u pads come with sink_%%u: request "
        "the sink pad");
    return NULL;
  }
  g_mutex_lock (&self->streams_lock);
  index = gst_cuda_batch_infer_stream_index_unlocked (self, name);
  if (index < 0) {
    g_mutex_unlock (&self->streams_lock);
    GST_WARNING_OBJECT (self, "no pad %s: a name sink_K with a K not in use "
        "is needed", name);
    return NULL;
  }
  stream = g_atomic_rc_box_new0 (GstCbiStream);
  stream->index = index;
  stream->serial = ++self->stream_serial;
  stream->flushing = TRUE;
  stream->flow = GST_FLOW_OK;
  g_mutex_init (&stream->lock);
  g_cond_init (&stream->cond);
  g_queue_init (&stream->queue);
  g_queue_init (&stream->held);
  gst_segment_init (&stream->segment, GST_FORMAT_UNDEFINED);
  stream->sinkpad = gst_cuda_batch_infer_stream_pad (self,
      &stream_sink_template, stream);
  stream->srcpad = gst_cuda_batch_infer_stream_pad (self,
      &stream_src_template, stream);
  g_ptr_array_add (self->streams, stream);
  g_mutex_unlock (&self->streams_lock);

  GST_INFO_OBJECT (self, "stream %u: %s:%s and %s:%s", index,
      GST_DEBUG_PAD_NAME (stream->sinkpad),
      GST_DEBUG_PAD_NAME (stream->srcpad));
  gst_element_add_pad (element, stream->srcpad);
  gst_element_add_pad (element, stream->sinkpad);
  return stream->sinkpad;
}

/* The end of a release made from src_K's own task, on another thread:
 * the task can be joined there, and the pad (and with it the stream) go
 * once it is. */
static void
gst_cuda_batch_infer_stop_released (GstElement * element, gpointer pad)
{
  gst_pad_stop_task (pad);
}

void
gst_cuda_batch_infer_release_pad (GstElement * element, GstPad * pad)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (element);
  GstCbiStream *stream = gst_pad_get_element_private (pad);
  gboolean from_collector, from_src, removed;

  if (pad != stream->sinkpad)
    return;
  GST_INFO_OBJECT (self, "releasing stream %u", stream->index);
  from_collector = g_atomic_pointer_get (&self->push_thread) ==
      g_thread_self ();
  STREAM_LOCK (stream);
  from_src = stream->push_thread == g_thread_self ();
  STREAM_UNLOCK (stream);
  /* no frame comes in any more (this waits for a chain in progress),
   * then the stream's frames go out: the pending ones in a batch now.
   * Not from the always src pad's task: a chain may wait for it to free
   * a place, and the frames it has not handed over are dropped */
  if (!from_collector) {
    gst_pad_set_active (stream->sinkpad, FALSE);
    BATCH_LOCK (self);
    gst_cuda_batch_infer_stream_submit (self, stream, "pad release");
    BATCH_UNLOCK (self);
    gst_cuda_batch_infer_stream_wait_out (self, stream, FALSE);
  }

  /* out of the table: what follows a tag of it drops the frame */
  g_mutex_lock (&self->streams_lock);
  removed = g_ptr_array_remove (self->streams, stream);
  g_mutex_unlock (&self->streams_lock);
  if (!removed)
    return;
  /* its pool (scaling) counts against memory-limit no more */
  STATS_LOCK (self);
  self->streams_pool_bytes -= stream->pool_bytes;
  self->stats.output_buffer_bytes = self->out_pool_bytes +
      self->streams_pool_bytes;
  stream->pool_bytes = 0;
  STATS_UNLOCK (self);
  /* from src_K's task, this pauses it; it is stopped (joined) on another
   * thread, once paused */
  gst_pad_set_active (stream->srcpad, FALSE);
  if (from_src)
    gst_element_call_async (element, gst_cuda_batch_infer_stop_released,
        gst_object_ref (stream->srcpad), gst_object_unref);
  gst_element_remove_pad (element, stream->srcpad);
  gst_element_remove_pad (element, stream->sinkpad);
  gst_cuda_batch_infer_stream_unref (stream);
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
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, s);
    gst_value_array_append_and_take_value (array, &v);
  }
  g_mutex_unlock (&self->streams_lock);
  return array;
}

/* For a new run (READY→PAUSED): counters and caps start again. */
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
  }
  g_mutex_unlock (&self->streams_lock);
}

void
gst_cuda_batch_infer_stream_resize (GstCudaBatchInfer * self,
    GstCbiStream * stream)
{
  guint i, dropped;

  gst_cuda_batch_infer_stream_submit (self, stream, "caps change");
  if (!gst_cbi_batcher_has_stream (&self->batcher, stream))
    return;
  /* only from the always src pad's task, which cannot wait for a place
   * in flight (a pipeline that loops back into the element) */
  for (i = 0; i < self->batcher.count; i++)
    if (self->batcher.tags[i].stream == stream)
      gst_cuda_batch_infer_deliver (self, &self->batcher.tags[i], NULL);
  dropped = gst_cbi_batcher_drop_stream (&self->batcher, stream);
  GST_WARNING_OBJECT (stream->sinkpad, "dropping %u frames of the old size: "
      "no place in flight for them", dropped);
  STATS_LOCK (self);
  self->stats.frames_dropped += dropped;
  STATS_UNLOCK (self);
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
  STATS_LOCK (self);
  self->stats.frames_dropped += dropped;
  STATS_UNLOCK (self);
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
gst_cuda_batch_infer_clear_stream_pools (GstCudaBatchInfer * self)
{
  guint i;

  g_mutex_lock (&self->streams_lock);
  for (i = 0; i < self->streams->len; i++) {
    GstCbiStream *stream = g_ptr_array_index (self->streams, i);
    gst_cuda_batch_infer_clear_pool (&stream->out_pool);
  }
  g_mutex_unlock (&self->streams_lock);
}

/* At finalize: what is left (pads the application never released). */
void
gst_cuda_batch_infer_free_streams (GstCudaBatchInfer * self)
{
  g_ptr_array_set_free_func (self->streams,
      (GDestroyNotify) gst_cuda_batch_infer_stream_unref);
  g_ptr_array_unref (self->streams);
}
