/* GStreamer cudabatchinfer element: many streams, one batch
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Request pads: requesting sink_K adds src_K, and the pair is one stream.
 * Every stream's frames fill the same batches, in the order they arrive
 * (the batch lock serialises the streaming threads; no stream waits for
 * another's frames, so a slow or stalled stream never holds up a fast one,
 * and a fast one only fills the batches sooner). Their results come back
 * through the streams' routing (gstcudabatchinfer-route.c). Serialised
 * events of a stream wait in its queue behind the frames that came before
 * them, without cutting the batch short; EOS on sink_K submits the batch
 * when it holds frames of the stream. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-streams.h"
#include "gstcudabatchinfer-admit.h"
#include "gstcudabatchinfer-batch.h"
#include "gstcudabatchinfer-caps.h"
#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-timeout.h"

static GstStaticPadTemplate stream_sink_template =
GST_STATIC_PAD_TEMPLATE ("sink_%u", GST_PAD_SINK, GST_PAD_REQUEST,
    GST_STATIC_CAPS (SINK_CAPS));

static GstStaticPadTemplate stream_src_template =
GST_STATIC_PAD_TEMPLATE ("src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

void
gst_cuda_batch_infer_add_stream_templates (GstElementClass * klass)
{
  gst_element_class_add_static_pad_template (klass, &stream_sink_template);
  gst_element_class_add_static_pad_template (klass, &stream_src_template);
}

static gboolean
gst_cuda_batch_infer_stream_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  STREAM_LOCK (stream);
  stream->src_active = active;
  STREAM_UNLOCK (stream);
  return gst_cuda_batch_infer_stream_set_flushing (self, stream, !active, TRUE);
}

/* src_K's events: a QoS event is kept for sink_K's frames (those late
 * for src_K's sink are dropped, not inferred), then goes upstream of
 * sink_K. */
static gboolean
gst_cuda_batch_infer_stream_src_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);

  if (GST_EVENT_TYPE (event) == GST_EVENT_QOS)
    gst_cuda_batch_infer_pad_state_qos (self, &stream->pad, event);
  return gst_pad_event_default (pad, parent, event);
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
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  GstCbiStream *stream = gst_pad_get_element_private (pad);
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
  if (!gst_cuda_batch_infer_frames_match (self, pad, &stream->info)) {
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
  ret = gst_cuda_batch_infer_add_frame (self, stream, buffer, &stream->segment);
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
  /* after the seek: the first frame inferred, no QoS of before */
  gst_cuda_batch_infer_pad_state_clear (self, &stream->pad, FALSE);
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
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
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

static gboolean
gst_cuda_batch_infer_stream_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
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
    gst_pad_set_event_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_src_event));
    gst_pad_set_activatemode_function (pad,
        GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_stream_src_activate_mode));
  }
  return pad;
}

GstPad *
gst_cuda_batch_infer_request_new_pad (GstElement * element,
    GstPadTemplate * templ, const gchar * name, const GstCaps * caps)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (element);
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
  stream = gst_cuda_batch_infer_stream_new (index, ++self->stream_serial);
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
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (element);
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
