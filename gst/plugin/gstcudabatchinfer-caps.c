/* GStreamer cudabatchinfer element: the always pads' functions, and caps
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* What the pads are told and asked: caps (which size the output pools,
 * within memory-limit, and may warm up again), the serialised events that
 * are drain points, flushes, caps and allocation queries, and the latency
 * that batching adds. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-caps.h"
#include "gstcudabatchinfer-cudamem.h"
#include "gstcudabatchinfer-admit.h"
#include "gstcudabatchinfer-batch.h"
#include "gstcudabatchinfer-pools.h"
#include "gstcudabatchinfer-push.h"
#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-timeout.h"
#include "gstcudabatchinfer-warmup.h"

/* Caps. */

/* The output caps for input @caps: the same, but for the size of an
 * image output that has another size; scaled frames come out at their own
 * size times the model's output/input ratio. */
static GstCaps *
gst_cuda_batch_infer_output_caps (GstCudaBatchInfer * self, GstCaps * caps,
    const GstVideoInfo * info)
{
  /* results go out in system memory, wherever the frames came from */
  GstCaps *out_caps = gst_cuda_batch_infer_to_system_memory (caps);
  gint width = self->out.width, height = self->out.height;

  if (self->out.image && self->run_scaling != CBI_SCALE_NONE) {
    width = MAX (1, (gint) gst_util_uint64_scale_round (info->width,
            self->out.width, self->in_info.width));
    height = MAX (1, (gint) gst_util_uint64_scale_round (info->height,
            self->out.height, self->in_info.height));
  }
  if (self->out.image && (width != info->width || height != info->height))
    gst_caps_set_simple (out_caps, "width", G_TYPE_INT, width,
        "height", G_TYPE_INT, height, NULL);
  return out_caps;
}

/* With scaling, frames of any size batch together; without, they all
 * have the element's. */
static gboolean
gst_cuda_batch_infer_same_frames (GstCudaBatchInfer * self,
    const GstVideoInfo * info)
{
  return GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_INFO_FORMAT (&self->in_info)
      && (self->run_scaling != CBI_SCALE_NONE
      || (info->width == self->in_info.width
          && info->height == self->in_info.height));
}

/* Where the output frames of a pad (@stream's, or the always pad's) go
 * with the buffers they are written to: with scaling, each pad its own,
 * of its frames' size; without, the element's. */
static void
gst_cuda_batch_infer_pad_outputs (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstVideoInfo ** out_info, GstBufferPool *** pool)
{
  gboolean own = stream && self->run_scaling != CBI_SCALE_NONE;

  *out_info = own ? &stream->out_info : &self->out_info;
  *pool = own ? &stream->out_pool : &self->out_pool;
}

/* Sets up what comes out of a pad for its frames @caps, @info: the output
 * frames' info and pool (an image output), and the caps: set on the always
 * src pad, queued in order with its frames on src_K. A stream's own pool
 * (scaling) starts with one batch of buffers and grows while more of its
 * frames are in flight; the element's holds every batch in flight. A pool
 * whose frames keep their size is kept. */
static gboolean
gst_cuda_batch_infer_pad_output (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstCaps * caps, const GstVideoInfo * info)
{
  GstCaps *out_caps = gst_cuda_batch_infer_output_caps (self, caps, info);
  GstVideoInfo *out_info, new_info;
  GstBufferPool **pool;
  gboolean ok, own, keep;
  guint n;

  gst_cuda_batch_infer_pad_outputs (self, stream, &out_info, &pool);
  own = pool != &self->out_pool;
  n = self->run_batch * (own ? 1 : self->run_inflight);
  ok = gst_video_info_from_caps (&new_info, out_caps);
  keep = ok && *pool && GST_VIDEO_INFO_FORMAT (&new_info) ==
      GST_VIDEO_INFO_FORMAT (out_info) && new_info.width == out_info->width
      && new_info.height == out_info->height
      && GST_VIDEO_INFO_SIZE (&new_info) == GST_VIDEO_INFO_SIZE (out_info);
  if (ok)
    *out_info = new_info;
  ok = ok && (stream || gst_pad_set_caps (self->srcpad, out_caps))
      && (!self->out.image || keep || ((!own
              || gst_cuda_batch_infer_budget_stream (self, stream, out_info, n))
          && gst_cuda_batch_infer_setup_pool (self, out_caps, out_info, pool,
              n)));
  if (ok && stream)
    gst_cuda_batch_infer_stream_event (self, stream,
        gst_event_new_caps (out_caps));
  gst_caps_unref (out_caps);
  return ok;
}

gboolean
gst_cuda_batch_infer_frames_match (GstCudaBatchInfer * self, GstPad * pad,
    const GstVideoInfo * info)
{
  if (gst_cuda_batch_infer_same_frames (self, info))
    return TRUE;
  /* another pad changed the element's frames while this one had ended;
   * it came back (a seek) with its old ones */
  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
      ("%s:%s has %s %dx%d frames, and the element now batches %s %dx%d",
          GST_DEBUG_PAD_NAME (pad), GST_VIDEO_INFO_NAME (info), info->width,
          info->height, GST_VIDEO_INFO_NAME (&self->in_info),
          self->in_info.width, self->in_info.height),
      ("another stream changed the size while this one had ended"));
  return FALSE;
}

/* The pad other than @stream's (nullable: the always pad) that set the
 * frames the element batches and still streams, or %NULL: a ref. */
static GstPad *
gst_cuda_batch_infer_caps_holder (GstCudaBatchInfer * self,
    GstCbiStream * stream)
{
  GstPad *holder = NULL;
  guint i;

  if (stream && self->sink_streaming)
    return gst_object_ref (self->sinkpad);
  g_mutex_lock (&self->streams_lock);
  for (i = 0; holder == NULL && i < self->streams->len; i++) {
    GstCbiStream *other = g_ptr_array_index (self->streams, i);
    if (other != stream && other->have_caps && !other->eos)
      holder = gst_object_ref (other->sinkpad);
  }
  g_mutex_unlock (&self->streams_lock);
  return holder;
}

/* Before @stream's frames change size (scaling): its pending frames go in
 * a batch of their own size, or, where none can be submitted now (from
 * the always src pad's task), are dropped with a warning. With the batch
 * lock. */
static void
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
  gst_cuda_batch_infer_count_dropped (self, NULL, dropped);
}

/* Caps on a request pad: frames like those the element batches already
 * join the batches as they are; other frames replace them only where no
 * other pad streams. Returns: %TRUE when the frames join as they are
 * (@out_caps set), %FALSE with @out_caps unset when the element's caps
 * change, and FALSE with @error_posted when they are refused. */
static gboolean
gst_cuda_batch_infer_join_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstCaps * caps, const GstVideoInfo * info,
    GstCaps ** out_caps, gboolean * error_posted)
{
  GstPad *holder;

  *out_caps = NULL;
  *error_posted = FALSE;
  if (!self->have_caps)
    return FALSE;
  if (gst_cuda_batch_infer_same_frames (self, info)
      && self->run_scaling != CBI_SCALE_NONE) {
    /* the stream's frames of its old size go first, as they are */
    if (stream->info.width != info->width
        || stream->info.height != info->height)
      gst_cuda_batch_infer_stream_resize (self, stream);
    if (gst_cuda_batch_infer_pad_output (self, stream, caps, info))
      return TRUE;
    *error_posted = TRUE;
    return FALSE;
  }
  if (gst_cuda_batch_infer_same_frames (self, info)) {
    *out_caps = gst_cuda_batch_infer_output_caps (self, caps, info);
    return TRUE;
  }
  holder = gst_cuda_batch_infer_caps_holder (self, stream);
  if (holder == NULL)
    return FALSE;
  if (self->run_scaling != CBI_SCALE_NONE)
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("%s:%s has %s frames, and %s:%s %s: the streams of one element "
            "batch together and need the same format",
            GST_DEBUG_PAD_NAME (stream->sinkpad), GST_VIDEO_INFO_NAME (info),
            GST_DEBUG_PAD_NAME (holder),
            GST_VIDEO_INFO_NAME (&self->in_info)),
        ("caps %" GST_PTR_FORMAT "; put videoconvert before the pad, with "
            "caps of the other streams' format", caps));
  else
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("%s:%s has %s %dx%d frames, and %s:%s %s %dx%d: the streams of one "
            "element batch together and need the same format and size",
            GST_DEBUG_PAD_NAME (stream->sinkpad),
            GST_VIDEO_INFO_NAME (info), info->width, info->height,
            GST_DEBUG_PAD_NAME (holder),
            GST_VIDEO_INFO_NAME (&self->in_info), self->in_info.width,
            self->in_info.height), ("caps %" GST_PTR_FORMAT "; put "
            "videoconvert ! videoscale before the pad, with caps of the "
            "other streams' format and size, or set scaling for a model of "
            "a fixed size", caps));
  gst_object_unref (holder);
  *error_posted = TRUE;
  return FALSE;
}

gboolean
gst_cuda_batch_infer_set_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstCaps * caps)
{
  GstVideoInfo info, batch_info, out_info;
  GstCaps *out_caps;
  CbiOutputInfo out;
  GError *error = NULL;
  gboolean ok, error_posted;

  GstCaps **refused = stream ? &stream->refused_caps : &self->refused_caps;

  if (*refused && gst_caps_is_equal (caps, *refused)) {
    GST_DEBUG_OBJECT (self, "refused already: %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  gst_caps_replace (refused, caps);
  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("invalid caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  /* the pad's first frame of new caps is inferred (interval): its earlier
   * results are of other frames */
  gst_cuda_batch_infer_pad_state (self, stream)->skip_left = 0;
  if (stream) {
    stream->have_caps = FALSE;
    if (gst_cuda_batch_infer_join_caps (self, stream, caps, &info, &out_caps,
            &error_posted)) {
      GST_DEBUG_OBJECT (stream->sinkpad, "joins the batches: %"
          GST_PTR_FORMAT, caps);
      /* (with scaling, its output is set up already) */
      if (out_caps) {
        gst_cuda_batch_infer_stream_event (self, stream,
            gst_event_new_caps (out_caps));
        gst_caps_unref (out_caps);
      }
      stream->have_caps = TRUE;
      stream->info = info;
      gst_clear_caps (refused);
      return TRUE;
    }
    if (error_posted)
      return FALSE;
  }
  /* scaled frames are batched at the model's size, whatever theirs */
  batch_info = info;
  if (self->run_scaling != CBI_SCALE_NONE) {
    gint64 channels, height, width;
    cbi_engine_input_shape (self->engine, &channels, &height, &width);
    gst_video_info_set_format (&batch_info, GST_VIDEO_INFO_FORMAT (&info),
        width, height);
    batch_info.colorimetry = info.colorimetry;
    batch_info.chroma_site = info.chroma_site;
  }
  if (!cbi_engine_frame_outputs (self->engine, batch_info.height,
          batch_info.width, &out, &error)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("The model cannot take %dx%d frames: %s",
            GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info),
            error->message), ("caps %" GST_PTR_FORMAT, caps));
    g_clear_error (&error);
    return FALSE;
  }

  /* frames of the old caps go out first, at the old shape */
  if (self->have_caps) {
    GstFlowReturn ret = gst_cuda_batch_infer_drain (self, "caps change");
    if (ret == GST_FLOW_FLUSHING) {
      /* batches may still be in flight on the old caps: nothing changes
       * now; upstream sends the caps again with its next buffer */
      GST_DEBUG_OBJECT (self, "flushing: caps not applied");
      gst_clear_caps (refused);
      return FALSE;
    }
    if (ret != GST_FLOW_OK)
      GST_WARNING_OBJECT (self, "could not push the batches before new "
          "caps: %s", gst_flow_get_name (ret));
  }

  /* nothing flows on half-applied caps */
  self->have_caps = FALSE;
  self->in_info = batch_info;
  STATS_LOCK (self);
  self->fps_n = info.fps_n;
  self->fps_d = info.fps_d;
  STATS_UNLOCK (self);
  /* frames come out as they went in: the output caps are the input's,
   * interlacing, colorimetry and all, but for the size of a model that
   * changes it */
  self->out = out;
  out_caps = gst_cuda_batch_infer_output_caps (self, caps, &info);
  /* a stream with scaling brings its own pool: pad_output counts it */
  ok = gst_video_info_from_caps (&out_info, out_caps)
      && gst_cuda_batch_infer_budget (self, stream
      && self->run_scaling != CBI_SCALE_NONE && out.image ? 0 :
      gst_cuda_batch_infer_output_bytes (self, &out_info, &out))
      && (out.image || gst_cuda_batch_infer_setup_tensor_pool (self))
      && gst_cuda_batch_infer_pad_output (self, stream, caps, &info);
  gst_caps_unref (out_caps);
  if (ok && self->run_warmup
      && (self->warm_width != (guint) batch_info.width
          || self->warm_height != (guint) batch_info.height))
    ok = gst_cuda_batch_infer_run_warmup (self, &batch_info);
  if (ok) {
    GstCaps *frames = gst_caps_new_simple ("video/x-raw",
        "format", G_TYPE_STRING, GST_VIDEO_INFO_NAME (&info), NULL);
    /* with scaling, any size joins */
    if (self->run_scaling == CBI_SCALE_NONE)
      gst_caps_set_simple (frames, "width", G_TYPE_INT, info.width,
          "height", G_TYPE_INT, info.height, NULL);
    /* in either memory, where the element reads CUDA memory */
    if (self->cuda_context) {
      GstCaps *cuda = gst_caps_copy (frames);
      gst_caps_set_features_simple (cuda,
          gst_caps_features_new (GST_CUDA_BATCH_INFER_CUDA_MEMORY, NULL));
      frames = gst_caps_merge (cuda, frames);
    }
    GST_OBJECT_LOCK (self);
    gst_caps_take (&self->frames_caps, frames);
    GST_OBJECT_UNLOCK (self);
  }
  self->have_caps = ok;
  if (stream) {
    stream->have_caps = ok;
    stream->info = info;
  } else {
    self->sink_info = info;
    self->sink_streaming = ok;
  }
  if (ok)
    gst_clear_caps (refused);
  return ok;
}

/* The always sink pad. */

GstFlowReturn
gst_cuda_batch_infer_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  GstFlowReturn ret;

  if (!self->have_caps) {
    /* caps that failed have posted their error already */
    if (self->refused_caps == NULL)
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
          ("a buffer arrived before caps"));
    gst_buffer_unref (buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!gst_cuda_batch_infer_frames_match (self, pad, &self->sink_info)) {
    gst_buffer_unref (buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  self->sink_streaming = TRUE;
  INFLIGHT_LOCK (self);
  ret = self->src_flow;
  INFLIGHT_UNLOCK (self);
  if (ret != GST_FLOW_OK) {
    /* a batch pushed by the src pad task failed downstream */
    STATS_LOCK (self);
    self->stats.frames_in++;
    self->stats.frames_dropped++;
    STATS_UNLOCK (self);
    gst_buffer_unref (buffer);
    return ret;
  }

  GST_LOG_OBJECT (self, "frame %" GST_TIME_FORMAT,
      GST_TIME_ARGS (GST_BUFFER_PTS (buffer)));
  STATS_LOCK (self);
  self->stats.frames_in++;
  STATS_UNLOCK (self);

  return gst_cuda_batch_infer_add_frame (self, NULL, buffer, &self->segment);
}

gboolean
gst_cuda_batch_infer_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  guint dropped;

  GST_LOG_OBJECT (self, "event %" GST_PTR_FORMAT, event);
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gboolean ok;

      gst_event_parse_caps (event, &caps);
      ok = gst_cuda_batch_infer_set_caps (self, NULL, caps);
      gst_event_unref (event);
      return ok;
    }
    case GST_EVENT_FLUSH_START:
      /* wakes a streaming thread waiting for room and the src pad task;
       * the event unblocks a push downstream */
      gst_cuda_batch_infer_start_flushing (self);
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_FLUSH_STOP:
      dropped = gst_cuda_batch_infer_drop_pending (self);
      gst_cuda_batch_infer_count_dropped (self, NULL, dropped);
      if (dropped)
        GST_DEBUG_OBJECT (self, "flushing dropped %u pending frames", dropped);
      /* the task is paused once this returns: the batches are ours */
      gst_pad_pause_task (self->srcpad);
      gst_cuda_batch_infer_discard_inflight (self);
      /* after the seek: the first frame inferred, no QoS of before */
      gst_cuda_batch_infer_pad_state_clear (self, &self->pad, FALSE);
      /* not once the src pad is deactivated (first, on the way down) */
      gst_cuda_batch_infer_stop_flushing (self);
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_SEGMENT:
      /* frames of the old segment go out first */
      if (self->engine)
        gst_cuda_batch_infer_drain (self, "segment");
      gst_event_copy_segment (event, &self->segment);
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_TAG:
      /* tags need no ordering against frames: no reason to cut a batch */
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_EOS:
      if (self->engine)
        gst_cuda_batch_infer_drain (self, "EOS");
      self->sink_streaming = FALSE;
      return gst_pad_event_default (pad, parent, event);
    default:
      /* every other serialised event (EOS, segment, gap, ...) is a drain
       * point, so it stays behind the frames that came before it */
      if (GST_EVENT_IS_SERIALIZED (event) && self->engine)
        gst_cuda_batch_infer_drain (self, GST_EVENT_TYPE_NAME (event));
      return gst_pad_event_default (pad, parent, event);
  }
}

/* Queries. */

/* @caps without width and height: what a resizing model's other side
 * takes, whatever the size on this one. */
static GstCaps *
gst_cuda_batch_infer_any_size (GstCaps * caps)
{
  GstCaps *res = gst_caps_copy (caps);
  guint i;

  for (i = 0; i < gst_caps_get_size (res); i++)
    gst_structure_remove_fields (gst_caps_get_structure (res, i), "width",
        "height", NULL);
  return res;
}

/* CAPS for a model whose output size differs from its input's
 * (@resizes), or a src pad whose upstream may give CUDA memory: the other
 * side's caps, size removed for the one, in system memory, as the
 * proxying would give them. */
static gboolean
gst_cuda_batch_infer_query_caps_resized (GstCudaBatchInfer * self,
    GstPad * pad, GstQuery * query, gboolean resizes)
{
  GstPad *other = gst_cuda_batch_infer_pair (self, pad);
  GstCaps *filter, *peer_filter = NULL, *peer, *templ, *res;
  /* upstream is asked without a filter: its CUDA memory is ours */
  const gboolean from_cuda = GST_PAD_IS_SRC (pad) && self->cuda_context;

  gst_query_parse_caps (query, &filter);
  if (filter && !from_cuda)
    peer_filter = resizes ? gst_cuda_batch_infer_any_size (filter) :
        gst_caps_ref (filter);
  peer = gst_pad_peer_query_caps (other, peer_filter);
  templ = gst_pad_get_pad_template_caps (pad);
  res = resizes ? gst_cuda_batch_infer_any_size (peer) : gst_caps_ref (peer);
  if (from_cuda)
    gst_caps_take (&res, gst_cuda_batch_infer_to_system_memory (res));
  gst_caps_take (&res, gst_caps_intersect (res, templ));
  if (filter)
    gst_caps_take (&res, gst_caps_intersect_full (filter, res,
            GST_CAPS_INTERSECT_FIRST));
  GST_DEBUG_OBJECT (pad, "caps for a resizing model: %" GST_PTR_FORMAT, res);
  gst_query_set_caps_result (query, res);
  gst_caps_unref (res);
  gst_caps_unref (templ);
  gst_caps_unref (peer);
  gst_clear_caps (&peer_filter);
  return TRUE;
}

/* Caps queries proxy through the element (PROXY_CAPS) but for a resizing
 * model, once it is loaded: system memory, whatever the other side. */
static gboolean
gst_cuda_batch_infer_query_system_caps (GstCudaBatchInfer * self,
    GstPad * pad, GstObject * parent, GstQuery * query)
{
  gboolean resizes;

  GST_OBJECT_LOCK (self);
  resizes = self->resizes;
  GST_OBJECT_UNLOCK (self);
  if (!resizes && (GST_PAD_IS_SINK (pad) || !self->cuda_context))
    return gst_pad_query_default (pad, parent, query);
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS)
    return gst_cuda_batch_infer_query_caps_resized (self, pad, query, resizes);
  else {
    GstCaps *caps, *allowed;
    gst_query_parse_accept_caps (query, &caps);
    allowed = gst_pad_query_caps (pad, caps);
    gst_query_set_accept_caps_result (query,
        gst_caps_can_intersect (caps, allowed));
    gst_caps_unref (allowed);
    return TRUE;
  }
}

/* A sink pad's CAPS query where frames may come in CUDA memory: the
 * system memory caps (asked with the filter in system memory), each also
 * in CUDA memory, first. */
static gboolean
gst_cuda_batch_infer_query_cuda_caps (GstCudaBatchInfer * self, GstPad * pad,
    GstObject * parent, GstQuery * query)
{
  GstCaps *filter, *system_filter = NULL, *res, *cuda;
  GstQuery *system;
  gboolean ok;

  gst_query_parse_caps (query, &filter);
  if (filter)
    system_filter = gst_cuda_batch_infer_to_system_memory (filter);
  system = gst_query_new_caps (system_filter);
  ok = gst_cuda_batch_infer_query_system_caps (self, pad, parent, system);
  if (ok) {
    gst_query_parse_caps_result (system, &res);
    /* what the template gave in CUDA memory against ANY is made anew */
    res = gst_cuda_batch_infer_without_cuda_memory (res);
    cuda = gst_caps_copy (res);
    gst_caps_set_features_simple (cuda,
        gst_caps_features_new (GST_CUDA_BATCH_INFER_CUDA_MEMORY, NULL));
    res = gst_caps_merge (cuda, res);
    if (filter)
      gst_caps_take (&res, gst_caps_intersect_full (filter, res,
              GST_CAPS_INTERSECT_FIRST));
    gst_query_set_caps_result (query, res);
    gst_caps_unref (res);
  }
  gst_query_unref (system);
  gst_clear_caps (&system_filter);
  return ok;
}

/* A sink pad's caps query where frames cannot come in CUDA memory (no
 * driver, or no GStreamer CUDA library): what the template would let
 * through in CUDA memory is taken out. */
static gboolean
gst_cuda_batch_infer_query_no_cuda_caps (GstCudaBatchInfer * self,
    GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstCaps *caps;

  if (GST_QUERY_TYPE (query) == GST_QUERY_ACCEPT_CAPS) {
    gst_query_parse_accept_caps (query, &caps);
    if (gst_cuda_batch_infer_is_cuda_memory (caps)) {
      gst_query_set_accept_caps_result (query, FALSE);
      return TRUE;
    }
    return gst_cuda_batch_infer_query_system_caps (self, pad, parent, query);
  }
  if (!gst_cuda_batch_infer_query_system_caps (self, pad, parent, query))
    return FALSE;
  gst_query_parse_caps_result (query, &caps);
  caps = gst_cuda_batch_infer_without_cuda_memory (caps);
  gst_query_set_caps_result (query, caps);
  gst_caps_unref (caps);
  return TRUE;
}

/* Caps queries: system memory through the element; on a sink pad, where
 * the element reads CUDA memory, that too. Caps in CUDA memory are
 * accepted where their system memory form is. */
static gboolean
gst_cuda_batch_infer_query_caps (GstCudaBatchInfer * self, GstPad * pad,
    GstObject * parent, GstQuery * query)
{
  GstCaps *caps, *system_caps;
  GstQuery *system;
  gboolean ok, result;

  if (!GST_PAD_IS_SINK (pad))
    return gst_cuda_batch_infer_query_system_caps (self, pad, parent, query);
  if (!self->cuda_context)
    return gst_cuda_batch_infer_query_no_cuda_caps (self, pad, parent, query);
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS)
    return gst_cuda_batch_infer_query_cuda_caps (self, pad, parent, query);
  gst_query_parse_accept_caps (query, &caps);
  if (!gst_cuda_batch_infer_is_cuda_memory (caps))
    return gst_cuda_batch_infer_query_system_caps (self, pad, parent, query);
  system_caps = gst_cuda_batch_infer_to_system_memory (caps);
  system = gst_query_new_accept_caps (system_caps);
  ok = gst_cuda_batch_infer_query_system_caps (self, pad, parent, system);
  gst_query_parse_accept_caps_result (system, &result);
  gst_query_set_accept_caps_result (query, ok && result);
  gst_query_unref (system);
  gst_caps_unref (system_caps);
  return TRUE;
}

gboolean
gst_cuda_batch_infer_stream_query_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstPad * pad, GstQuery * query)
{
  GstCaps *frames = NULL, *res;
  GstPad *holder;

  if (!gst_cuda_batch_infer_query_caps (self, pad, GST_OBJECT (self), query))
    return FALSE;
  /* while another pad streams, this one can only join with its frames:
   * said here, upstream's videoconvert and videoscale make them */
  holder = gst_cuda_batch_infer_caps_holder (self, stream);
  GST_OBJECT_LOCK (self);
  if (holder && self->frames_caps)
    frames = gst_caps_ref (self->frames_caps);
  GST_OBJECT_UNLOCK (self);
  gst_clear_object (&holder);
  if (frames == NULL)
    return TRUE;
  gst_query_parse_caps_result (query, &res);
  res = gst_caps_intersect (res, frames);
  GST_DEBUG_OBJECT (pad, "the frames of the other streams: %" GST_PTR_FORMAT,
      res);
  gst_query_set_caps_result (query, res);
  gst_caps_unref (res);
  gst_caps_unref (frames);
  return TRUE;
}

gboolean
gst_cuda_batch_infer_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:
    case GST_QUERY_ACCEPT_CAPS:
      return gst_cuda_batch_infer_query_caps (self, pad, parent, query);
    case GST_QUERY_DRAIN:
      if (self->engine
          && gst_cuda_batch_infer_drain (self, "drain query") != GST_FLOW_OK)
        GST_DEBUG_OBJECT (self, "drain: push failed");
      return gst_pad_query_default (pad, parent, query);
    case GST_QUERY_ALLOCATION:
      /* frames are mapped with gst_video_frame_map: any strides will do.
       * Output buffers come from the element's own pool. Frames in CUDA
       * memory: a pool of the element's context, where upstream has none */
      gst_cuda_batch_infer_cuda_propose_pool (self, query);
      gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
      return TRUE;
    case GST_QUERY_CONTEXT:
      if (gst_cuda_batch_infer_cuda_query_context (self, query))
        return TRUE;
      return gst_pad_query_default (pad, parent, query);
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

GstClockTime
gst_cuda_batch_infer_latency (GstCudaBatchInfer * self,
    GstClockTime batch_time, gboolean * bounded)
{
  GstClockTime wait, timeout;
  guint batch, interval;
  gboolean is_bounded;

  /* the query comes from any thread: what it reads of the run is copied
   * under the object lock when the engine comes and goes */
  GST_OBJECT_LOCK (self);
  timeout = self->batch_timeout;
  batch = self->query_batch ? self->query_batch : self->batch;
  interval = self->interval;
  GST_OBJECT_UNLOCK (self);
  if (!GST_CLOCK_TIME_IS_VALID (batch_time)) {
    STATS_LOCK (self);
    batch_time = self->stats.latency_batch_time;
    STATS_UNLOCK (self);
  }

  /* a batch of one stream waits for its last frame to infer, interval
   * frames apart */
  wait = gst_cuda_batch_infer_frames_duration (self, batch * interval - 1);
  if (timeout > 0 && (!GST_CLOCK_TIME_IS_VALID (wait) || timeout < wait))
    wait = timeout;
  is_bounded = GST_CLOCK_TIME_IS_VALID (wait);
  if (bounded)
    *bounded = is_bounded;
  return (is_bounded ? wait : 0) + batch_time;
}

gboolean
gst_cuda_batch_infer_src_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);

  if (GST_EVENT_TYPE (event) == GST_EVENT_QOS)
    gst_cuda_batch_infer_pad_state_qos (self, &self->pad, event);
  return gst_pad_event_default (pad, parent, event);
}

gboolean
gst_cuda_batch_infer_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    GstClockTime min, max, ours;
    gboolean live, bounded;

    if (!gst_pad_peer_query (gst_cuda_batch_infer_pair (self, pad), query))
      return FALSE;
    gst_query_parse_latency (query, &live, &min, &max);
    /* how late upstream's frames come by their nature: not a wait of
     * theirs that drop-policy should count */
    STATS_LOCK (self);
    gst_cuda_batch_infer_pad_state (self, pad == self->srcpad ? NULL :
        gst_pad_get_element_private (pad))->upstream_latency = live ? min : 0;
    STATS_UNLOCK (self);
    ours = gst_cuda_batch_infer_latency (self, GST_CLOCK_TIME_NONE, &bounded);
    GST_DEBUG_OBJECT (self, "adding %" GST_TIME_FORMAT " of latency%s",
        GST_TIME_ARGS (ours), bounded ? "" : " (and an unbounded wait)");
    min += ours;
    if (!bounded)
      max = GST_CLOCK_TIME_NONE;
    else if (GST_CLOCK_TIME_IS_VALID (max))
      max += ours;
    gst_query_set_latency (query, live, min, max);
    return TRUE;
  }
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS
      || GST_QUERY_TYPE (query) == GST_QUERY_ACCEPT_CAPS)
    return gst_cuda_batch_infer_query_caps (self, pad, parent, query);
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT
      && gst_cuda_batch_infer_cuda_query_context (self, query))
    return TRUE;
  return gst_pad_query_default (pad, parent, query);
}
