/* GStreamer cudabatchinfer element: frames in, batches out
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The streaming thread collects frames until a batch is full (or a drain
 * point, the deadline or the flush signal cuts it short), submits the
 * batch to the engine and puts it in the ring of batches in flight; the
 * src pad task collects it here: results, timestamps, metas, stats and the
 * batch's message. The warm-up is a dry batch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-private.h"

#include <math.h>
#include <string.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#include "cbierror.h"
#include "gstcbitensormeta.h"

/* every model output fits one tensor meta */
G_STATIC_ASSERT (CBI_MAX_OUTPUTS <= GST_BATCH_TENSOR_MAX_TENSORS);

/* Posts @error (from the engine) as an element error for @step. */
void
gst_cuda_batch_infer_post_engine_error (GstCudaBatchInfer * self,
    const gchar * step, const GError * error)
{
  gchar *text = g_strdup_printf ("%s failed: %s", step, error->message);

  switch (error->code) {
    case CBI_ERROR_MEMORY:
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("%s", text),
          ("raise or unset the memory-limit property, or lower batch"));
      break;
    case CBI_ERROR_NO_BACKEND:
      GST_ELEMENT_ERROR (self, LIBRARY, INIT, ("%s", text),
          ("backend=cpu always works"));
      break;
    case CBI_ERROR_MODEL:
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", text), (NULL));
      break;
    case CBI_ERROR_SHAPE:
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", text), (NULL));
      break;
    case CBI_ERROR_PRECISION:
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", text),
          ("precision=fp32 always runs; precision=auto takes the fastest "
              "that passes; a larger precision-tolerance accepts more "
              "error"));
      break;
    default:
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("%s", text), (NULL));
      break;
  }
  g_free (text);
}

static void
gst_cuda_batch_infer_describe_layout (GstCudaBatchInfer * self,
    const GstVideoInfo * info, CbiFrameBatch * fb)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  guint c, sum = 0;

  fb->width = GST_VIDEO_INFO_WIDTH (info);
  fb->height = GST_VIDEO_INFO_HEIGHT (info);
  fb->pixel_stride = GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  for (c = 0; c < 3; c++) {
    /* model channel c reads colour c, or 2 - c for a BGR model */
    guint colour = self->run_bgr ? 2 - c : c;
    fb->rgb_offset[c] = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, colour);
    sum += fb->rgb_offset[c];
    fb->scale[c] = self->run_scale[c];
    fb->bias[c] = self->run_bias[c];
    fb->out_scale[c] = self->run_out_scale[c];
    fb->out_offset[c] = self->run_out_offset[c];
  }
  /* the one byte of a 4-byte pixel that is not R, G or B */
  fb->extra_offset = fb->pixel_stride == 4 ? (gint) (0 + 1 + 2 + 3 - sum) : -1;
}

static void
gst_cuda_batch_infer_update_stats (GstCudaBatchInfer * self,
    const CbiBatchReport * r, guint padded)
{
  GstCudaBatchInferStats *s = &self->stats;

  STATS_LOCK (self);
  s->batches++;
  s->padded_frames += padded;
  s->single_thread_batches += r->single_thread ? 1 : 0;
  s->replans += r->replanned ? 1 : 0;
  s->fresh_allocations_after_warmup += r->fresh_allocations;
  s->fresh_bytes_after_warmup += r->fresh_bytes;
  s->peak_allocated_bytes = MAX (s->peak_allocated_bytes,
      r->pool.peak_allocated_bytes);
  s->peak_reserved_bytes = MAX (s->peak_reserved_bytes,
      r->pool.peak_reserved_bytes);
  s->reserved_bytes = r->pool.reserved_bytes;
  s->device_fresh_bytes_after_warmup = MAX (s->device_fresh_bytes_after_warmup,
      r->device_fresh_bytes);
  STATS_UNLOCK (self);
}

/* Whether frame @i of @batch may be mapped as the caps say. A video meta
 * that contradicts them (another format or number of planes, a smaller
 * size: what gst_video_frame_map() requires of it, a larger meta being a
 * padded frame the caps' frame is cropped from) is an error of the
 * stream, posted here: the map checks the same with
 * g_return_val_if_fail(), a critical, not an error. Nor does the map
 * check that the meta's plane lies within the buffer, which the batch's
 * packing reads whole: the frames take one plane. */
/* Frame @i's frames (@in: its pad's caps), the output frames it gives
 * (@out) and the pool of their buffers: with scaling, those of the pad it
 * came on; without, every pad's are the element's. With the batch lock,
 * under which a stream's caps change. */
static void
gst_cuda_batch_infer_frame_infos (GstCudaBatchInfer * self,
    const GstCbiBatch * batch, guint i, const GstVideoInfo ** in,
    const GstVideoInfo ** out, GstBufferPool ** pool)
{
  GstCbiStream *stream = batch->tags[i].stream;

  *in = &self->in_info;
  *out = &self->out_info;
  *pool = self->out_pool;
  if (self->run_scaling != CBI_SCALE_NONE && stream) {
    *in = &stream->info;
    *out = &stream->out_info;
    *pool = stream->out_pool;
  } else if (self->run_scaling != CBI_SCALE_NONE) {
    *in = &self->sink_info;
  }
}

static gboolean
gst_cuda_batch_infer_check_meta (GstCudaBatchInfer * self,
    const GstCbiBatch * batch, guint i)
{
  const GstVideoInfo *info, *out_info;
  GstBufferPool *pool;
  GstBuffer *buffer = batch->frames[i];
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);
  const gchar *why;
  gsize row;

  gst_cuda_batch_infer_frame_infos (self, batch, i, &info, &out_info, &pool);
  row = (gsize) GST_VIDEO_INFO_WIDTH (info) *
      GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  if (meta == NULL)
    return TRUE;
  if (meta->format != GST_VIDEO_INFO_FORMAT (info)
      || meta->n_planes != GST_VIDEO_INFO_N_PLANES (info)
      || meta->width < (guint) GST_VIDEO_INFO_WIDTH (info)
      || meta->height < (guint) GST_VIDEO_INFO_HEIGHT (info))
    why = "contradicts the caps";
  else if (meta->stride[0] < 0 || (gsize) meta->stride[0] < row)
    why = "has rows shorter than the caps' frame";
  else if (meta->offset[0] + (gsize) meta->stride[0] *
      (GST_VIDEO_INFO_HEIGHT (info) - 1) + row > gst_buffer_get_size (buffer))
    why = "has rows past the end of its buffer";
  else
    return TRUE;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("A frame's video meta %s", why),
      ("frame %u of batch %" G_GUINT64_FORMAT ": the meta says %s %ux%u in "
          "%u planes, rows of %d bytes from offset %" G_GSIZE_FORMAT " in a "
          "buffer of %" G_GSIZE_FORMAT "; the caps %s %dx%d in %u planes", i,
          batch->index, gst_video_format_to_string (meta->format),
          meta->width, meta->height, meta->n_planes, meta->stride[0],
          meta->offset[0], gst_buffer_get_size (buffer),
          GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info)));
  return FALSE;
}

/* Maps @batch's frames and, for an image output, its output buffers.
 * Returns: whether all were mapped (batch->mapped says how many were). */
static gboolean
gst_cuda_batch_infer_map (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  const GstVideoInfo *in, *out;
  GstBufferPool *pool;
  guint i;

  for (i = 0; i < batch->n; i++) {
    gst_cuda_batch_infer_frame_infos (self, batch, i, &in, &out, &pool);
    batch->in_width[i] = GST_VIDEO_INFO_WIDTH (in);
    batch->in_height[i] = GST_VIDEO_INFO_HEIGHT (in);
    batch->out_width[i] = GST_VIDEO_INFO_WIDTH (out);
    batch->out_height[i] = GST_VIDEO_INFO_HEIGHT (out);
    if (!gst_video_frame_map (&batch->in_frames[i], in, batch->frames[i],
            GST_MAP_READ))
      return FALSE;
    batch->in_data[i] = GST_VIDEO_FRAME_PLANE_DATA (&batch->in_frames[i], 0);
    batch->in_strides[i] =
        GST_VIDEO_FRAME_PLANE_STRIDE (&batch->in_frames[i], 0);
    if (self->out.image) {
      if (!gst_video_frame_map (&batch->out_frames[i], out,
              batch->out_buffers[i], GST_MAP_WRITE)) {
        gst_video_frame_unmap (&batch->in_frames[i]);
        return FALSE;
      }
      batch->out_data[i] =
          GST_VIDEO_FRAME_PLANE_DATA (&batch->out_frames[i], 0);
      batch->out_strides[i] =
          GST_VIDEO_FRAME_PLANE_STRIDE (&batch->out_frames[i], 0);
    }
    batch->mapped = i + 1;
  }
  return TRUE;
}

/* Copies frame @i's slice of every model output, @outputs (the whole
 * batch's, read once per batch), into a buffer of the tensor pool, laid
 * out as self->tensors. */
static GstFlowReturn
gst_cuda_batch_infer_slice_tensors (GstCudaBatchInfer * self,
    GstCbiBatch * batch, guint i, const gfloat * const *outputs)
{
  GstBuffer *data = NULL;
  GstFlowReturn ret;
  GstMapInfo map;
  guint o;

  ret = gst_buffer_pool_acquire_buffer (self->tensor_pool, &data, NULL);
  if (ret != GST_FLOW_OK)
    return ret;
  if (!gst_buffer_map (data, &map, GST_MAP_WRITE)) {
    gst_buffer_unref (data);
    return GST_FLOW_ERROR;
  }
  for (o = 0; o < self->out.n_outputs; o++) {
    const GstBatchTensor *t = &self->tensors[o];
    memcpy (map.data + t->offset, (const guint8 *) outputs[o] + i * t->size,
        t->size);
  }
  gst_buffer_unmap (data, &map);
  batch->tensor_data[i] = data;
  return GST_FLOW_OK;
}

/* The output buffer of frame @i of a batch of tensor outputs: the input
 * frame itself, stolen from the batch so that it stays writable when
 * upstream kept no reference, with its tensors attached. */
static GstBuffer *
gst_cuda_batch_infer_pass_through (GstCudaBatchInfer * self,
    GstCbiBatch * batch, guint i)
{
  GstBuffer *out = gst_buffer_make_writable (batch->frames[i]);
  GstBatchTensorMeta *m;

  batch->frames[i] = NULL;
  m = gst_buffer_add_batch_tensor_meta (out, batch->tensor_data[i],
      self->out.n_outputs, self->tensors);
  if (m == NULL)
    GST_WARNING_OBJECT (self, "could not attach the tensors of frame %u", i);
  else if (self->run_tensor_meta
      && !gst_cbi_tensor_meta_add (out, m, self->tensor_ids))
    GST_WARNING_OBJECT (self, "could not attach the GstTensorMeta of frame "
        "%u", i);
  gst_clear_buffer (&batch->tensor_data[i]);
  return out;
}

static GstMessage *
gst_cuda_batch_infer_batch_message (GstCudaBatchInfer * self,
    GstBatchMemoryMeta * meta)
{
  GstStructure *s = gst_batch_memory_meta_to_structure (meta);

  /* what is the frame's, not the batch's */
  gst_structure_remove_fields (s, "frame-index", "stream", NULL);
  return gst_message_new_element (GST_OBJECT (self), s);
}

/* Posts the engine's @error (freed) for @batch. */
static GstFlowReturn
gst_cuda_batch_infer_batch_failed (GstCudaBatchInfer * self,
    const GstCbiBatch * batch, GError * error)
{
  gchar *step = g_strdup_printf ("Batch %" G_GUINT64_FORMAT, batch->index);

  gst_cuda_batch_infer_post_engine_error (self, step, error);
  g_free (step);
  g_error_free (error);
  return GST_FLOW_ERROR;
}

/* Gets output buffers for @batch, maps it and hands it to the engine.
 * Called with the sink pad's STREAM_LOCK. */
static GstFlowReturn
gst_cuda_batch_infer_submit (GstCudaBatchInfer * self, GstCbiBatch * batch,
    GstCudaBatchInferPadMode pad_mode, const gchar * reason)
{
  CbiFrameBatch *fb = &batch->fb;
  GError *error = NULL;
  GstFlowReturn ret;
  guint i;

  for (i = 0; i < batch->n; i++)
    if (!gst_cuda_batch_infer_check_meta (self, batch, i))
      return GST_FLOW_ERROR;
  for (; self->out.image && batch->n_out < batch->n; batch->n_out++) {
    const GstVideoInfo *in, *out;
    GstBufferPool *pool;

    gst_cuda_batch_infer_frame_infos (self, batch, batch->n_out, &in, &out,
        &pool);
    ret = gst_buffer_pool_acquire_buffer (pool,
        &batch->out_buffers[batch->n_out], NULL);
    if (ret == GST_FLOW_ERROR)
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
          ("Could not get an output buffer"), ("batch %" G_GUINT64_FORMAT,
              batch->index));
    if (ret != GST_FLOW_OK)
      return ret;
  }
  if (!gst_cuda_batch_infer_map (self, batch)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map a video frame"),
        ("frame %u of batch %" G_GUINT64_FORMAT, batch->mapped, batch->index));
    return GST_FLOW_ERROR;
  }

  memset (fb, 0, sizeof (*fb));
  gst_cuda_batch_infer_describe_layout (self, &self->in_info, fb);
  fb->n_frames = batch->n;
  fb->n_slots = pad_mode == GST_CUDA_BATCH_INFER_PAD_NONE ? batch->n :
      self->run_batch;
  fb->pad_mode = (CbiPadMode) pad_mode;
  fb->in = batch->in_data;
  fb->in_stride = batch->in_strides;
  fb->out = self->out.image ? batch->out_data : NULL;
  fb->out_stride = batch->out_strides;
  fb->out_width = self->out.width;
  fb->out_height = self->out.height;
  fb->out_channels = self->out.channels;
  fb->scaling = self->run_scaling;
  fb->in_width = batch->in_width;
  fb->in_height = batch->in_height;
  fb->out_frame_width = batch->out_width;
  fb->out_frame_height = batch->out_height;
  batch->warmed_up =
      self->warm_width == (guint) GST_VIDEO_INFO_WIDTH (&self->in_info)
      && self->warm_height == (guint) GST_VIDEO_INFO_HEIGHT (&self->in_info)
      && fb->n_slots == self->run_batch;

  GST_DEBUG_OBJECT (self, "batch %" G_GUINT64_FORMAT ": %u frames in %u "
      "slots (%s)", batch->index, batch->n, fb->n_slots, reason);
  if (!cbi_engine_submit (self->engine, fb, &batch->ticket, &batch->report,
          &error))
    return gst_cuda_batch_infer_batch_failed (self, batch, error);
  batch->submitted = TRUE;
  /* backend=auto leaves CUDA for the CPU when a batch fails there */
  gst_cuda_batch_infer_note_backend (self);
  return GST_FLOW_OK;
}

static void
gst_cuda_batch_infer_fill_meta (GstCudaBatchInfer * self,
    GstBatchMemoryMeta * m, const GstCbiBatch * batch, guint frame_index,
    guint streams, guint64 stream_mask)
{
  const CbiBatchReport *r = &batch->report;

  m->stream = batch->tags[frame_index].index;
  m->streams = streams;
  m->stream_mask = stream_mask;
  m->batch_index = batch->index;
  m->batch_size = r->slots;
  m->frames = r->frames;
  m->padded = r->slots - r->frames;
  m->frame_index = frame_index;
  m->warmed_up = batch->warmed_up;
  m->replanned = r->replanned;
  m->allocated_bytes = r->pool.allocated_bytes;
  m->reserved_bytes = r->pool.reserved_bytes;
  m->peak_allocated_bytes = r->pool.peak_allocated_bytes;
  m->peak_reserved_bytes = r->pool.peak_reserved_bytes;
  m->fresh_allocations = r->fresh_allocations;
  m->fresh_bytes = r->fresh_bytes;
  m->workspace_bytes = r->workspace_bytes;
  m->device_free_bytes = r->device_free_bytes;
  m->device_total_bytes = r->device_total_bytes;
  m->device_fresh_bytes = r->device_fresh_bytes;
  m->batch_time = r->time_ns;
  m->backend = r->backend;
  m->device_id = r->device_id;
}

/* Waits for the engine to finish @batch, then makes its output buffers:
 * results, timestamps and metas. Called from the src pad task, or right
 * after the submission where the engine works synchronously. Touches only
 * state that changes while nothing is in flight. */
GstFlowReturn
gst_cuda_batch_infer_collect (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  const gfloat *outputs[CBI_MAX_OUTPUTS];
  GError *error = NULL;
  gboolean post;
  guint i, streams;
  guint64 stream_mask;

  if (!cbi_engine_collect (self->engine, batch->ticket, &batch->fb,
          &batch->report, &error))
    return gst_cuda_batch_infer_batch_failed (self, batch, error);
  gst_cbi_batch_unmap (batch);

  /* tensor outputs are read once, then sliced per frame */
  for (i = 0; !self->out.image && i < self->out.n_outputs; i++) {
    CbiShape shape;
    if ((outputs[i] = cbi_engine_get_output (self->engine, batch->ticket,
                i, &shape, &error)) == NULL) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not read output %s: "
              "%s", self->tensors[i].name, error->message), (NULL));
      g_clear_error (&error);
      return GST_FLOW_ERROR;
    }
  }
  for (i = 0; !self->out.image && i < batch->n; i++) {
    GstFlowReturn ret = gst_cuda_batch_infer_slice_tensors (self, batch, i,
        outputs);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  cbi_engine_release (self->engine, batch->ticket);
  batch->submitted = FALSE;
  for (i = 0; !self->out.image && i < batch->n; i++)
    batch->out_buffers[batch->n_out++] =
        gst_cuda_batch_infer_pass_through (self, batch, i);

  GST_OBJECT_LOCK (self);
  post = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  streams = gst_cuda_batch_infer_stream_mix (batch, &stream_mask);
  for (i = 0; i < batch->n; i++) {
    GstBuffer *out = batch->out_buffers[i];
    GstBatchMemoryMeta *meta = gst_buffer_get_batch_memory_meta (out);

    if (self->out.image)
      gst_buffer_copy_into (out, batch->frames[i],
          GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
    if (meta == NULL) {
      meta = gst_buffer_add_batch_memory_meta (out);
      /* stays on the buffer through our pool: no allocation next time (a
       * passed-through frame goes back upstream, where it is dropped) */
      if (self->out.image)
        GST_META_FLAG_SET (meta, GST_META_FLAG_POOLED);
    }
    gst_cuda_batch_infer_fill_meta (self, meta, batch, i, streams, stream_mask);
    if (i == 0 && post)
      batch->message = gst_cuda_batch_infer_batch_message (self, meta);
  }
  gst_cuda_batch_infer_update_stats (self, &batch->report,
      batch->fb.n_slots - batch->n);
  batch->collected = TRUE;
  return GST_FLOW_OK;
}

/* Moves the pending frames into a batch and submits it, waiting while
 * max-inflight batches are in flight (not when @may_wait is FALSE: then
 * the frames stay pending). Called with the sink pad's STREAM_LOCK held,
 * from the streaming thread, the timeout task or the flush signal. @reason
 * is for the log. */
static GstFlowReturn
gst_cuda_batch_infer_process_full (GstCudaBatchInfer * self,
    const gchar * reason, gboolean may_wait)
{
  GstCudaBatchInferPadMode pad_mode;
  GstCbiBatch *batch = NULL;
  GstFlowReturn ret;
  guint dropped;

  if (self->batcher.count == 0) {
    gst_cuda_batch_infer_timer_disarm (self);
    return GST_FLOW_OK;
  }

  INFLIGHT_LOCK (self);
  while (!self->inflight_flushing && self->src_flow == GST_FLOW_OK
      && (batch = gst_cbi_inflight_next_unlocked (&self->inflight)) == NULL
      && may_wait)
    INFLIGHT_WAIT (self);
  ret = self->inflight_flushing ? GST_FLOW_FLUSHING : self->src_flow;
  INFLIGHT_UNLOCK (self);
  if (ret == GST_FLOW_OK && batch == NULL)
    return GST_FLOW_OK;
  if (ret != GST_FLOW_OK && ret != GST_FLOW_ERROR && !self->inflight_flushing
      && (dropped = gst_cbi_batcher_drop_stream (&self->batcher, NULL)) > 0) {
    /* what the always src pad's downstream said is for its frames only:
     * the request pads' go on */
    STATS_LOCK (self);
    self->stats.frames_dropped += dropped;
    STATS_UNLOCK (self);
  }
  if (self->batcher.count == 0) {
    gst_cuda_batch_infer_timer_disarm (self);
    return ret;
  }
  if (ret != GST_FLOW_OK && ret != GST_FLOW_ERROR && !self->inflight_flushing) {
    INFLIGHT_LOCK (self);
    while (!self->inflight_flushing
        && (batch = gst_cbi_inflight_next_unlocked (&self->inflight)) == NULL
        && may_wait)
      INFLIGHT_WAIT (self);
    ret = self->inflight_flushing ? GST_FLOW_FLUSHING : GST_FLOW_OK;
    INFLIGHT_UNLOCK (self);
    if (ret == GST_FLOW_OK && batch == NULL)
      return GST_FLOW_OK;
  }
  gst_cuda_batch_infer_timer_disarm (self);
  if (ret != GST_FLOW_OK) {
    /* flushing, or downstream refused what went before */
    dropped = gst_cuda_batch_infer_drop_pending (self);
    STATS_LOCK (self);
    self->stats.frames_dropped += dropped;
    STATS_UNLOCK (self);
    GST_DEBUG_OBJECT (self, "dropping %u pending frames: %s", dropped,
        gst_flow_get_name (ret));
    return ret;
  }

  GST_OBJECT_LOCK (self);
  pad_mode = self->pad_mode;
  GST_OBJECT_UNLOCK (self);
  batch->n = gst_cbi_batcher_take (&self->batcher, &batch->frames,
      &batch->tags);
  gst_cuda_batch_infer_hold_streams (self, batch);
  if (batch->n == 0) {
    gst_cuda_batch_infer_discard (self, batch);
    return GST_FLOW_OK;
  }
  batch->index = self->batch_index++;
  ret = gst_cuda_batch_infer_submit (self, batch, pad_mode, reason);
  gst_cuda_batch_infer_unhold_streams (batch);
  if (ret == GST_FLOW_OK && !cbi_engine_is_async (self->engine))
    ret = gst_cuda_batch_infer_collect (self, batch);
  if (ret != GST_FLOW_OK) {
    gst_cuda_batch_infer_discard (self, batch);
    return ret;
  }

  INFLIGHT_LOCK (self);
  gst_cbi_inflight_push_unlocked (&self->inflight);
  INFLIGHT_BROADCAST (self);
  INFLIGHT_UNLOCK (self);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_cuda_batch_infer_process (GstCudaBatchInfer * self, const gchar * reason)
{
  return gst_cuda_batch_infer_process_full (self, reason, TRUE);
}

GstFlowReturn
gst_cuda_batch_infer_try_process (GstCudaBatchInfer * self,
    const gchar * reason)
{
  return gst_cuda_batch_infer_process_full (self, reason, FALSE);
}

GstFlowReturn
gst_cuda_batch_infer_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  GstFlowReturn ret;
  GstClockTime pts;

  if (!self->have_caps) {
    /* caps that failed have posted their error already */
    if (self->refused_caps == NULL)
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
          ("a buffer arrived before caps"));
    gst_buffer_unref (buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!gst_cuda_batch_infer_check_frames (self, pad, &self->sink_info)) {
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

  pts = GST_BUFFER_PTS (buffer);
  if (gst_cbi_batcher_push (&self->batcher, buffer, NULL))
    return gst_cuda_batch_infer_process (self, "full");
  if (self->batcher.count == 1)
    gst_cuda_batch_infer_timer_arm (self, &self->segment, pts);
  return GST_FLOW_OK;
}

/* The flush action signal: submits the partial batch from the caller's
 * thread, serialised with the streaming thread by the stream lock, and
 * returns once it is pushed. From the src pad task itself (a sync bus
 * handler, or downstream in its chain) it neither blocks nor waits: it
 * submits if the streaming thread is not busy and a place is free. */
void
gst_cuda_batch_infer_flush (GstCudaBatchInfer * self)
{
  gboolean in_push_thread =
      g_atomic_pointer_get (&self->push_thread) == g_thread_self ();

  if (in_push_thread) {
    if (!GST_PAD_STREAM_TRYLOCK (self->sinkpad)) {
      GST_DEBUG_OBJECT (self, "flush from downstream while a batch is "
          "being made: nothing to add");
      return;
    }
  } else {
    GST_PAD_STREAM_LOCK (self->sinkpad);
  }
  /* the always sink pad is activated with the element, request pads or
   * not */
  if (self->engine && gst_pad_is_active (self->sinkpad)) {
    if (in_push_thread)
      gst_cuda_batch_infer_process_full (self, "flush signal", FALSE);
    else
      gst_cuda_batch_infer_drain (self, "flush signal");
  }
  GST_PAD_STREAM_UNLOCK (self->sinkpad);
}

/* The accuracy check's worst relative error (G_MAXDOUBLE: NaN or
 * infinities), or -1 where nothing was checked. */
static gdouble
gst_cuda_batch_infer_worst_error (const CbiBatchReport * r,
    const CbiOutputInfo * outputs)
{
  gdouble worst = -1.0;
  guint i;

  for (i = 0; r->checked && outputs && i < outputs->n_outputs; i++)
    worst = MAX (worst, r->accuracy[i].nonfinite > 0 ? G_MAXDOUBLE :
        r->accuracy[i].relative_error);
  return worst;
}

/* Appends @s (transfer full: taken) to the array @array. */
static void
gst_cuda_batch_infer_append_structure (GValue * array, GstStructure * s)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&v, s);
  gst_value_array_append_and_take_value (array, &v);
}

/* The warm-up message's accuracy figures: `accuracy`, one
 * `cudabatchinfer-accuracy` structure per output where the check ran,
 * and `precision-rejected`, one per precision auto tried and left. */
static void
gst_cuda_batch_infer_describe_accuracy (GstStructure * s,
    const CbiBatchReport * r, const CbiOutputInfo * outputs)
{
  GValue array = G_VALUE_INIT, rejected = G_VALUE_INIT;
  guint i;

  if (r->checked) {
    g_value_init (&array, GST_TYPE_ARRAY);
    for (i = 0; i < outputs->n_outputs; i++) {
      const CbiAccuracy *a = &r->accuracy[i];
      GstStructure *o = gst_structure_new ("cudabatchinfer-accuracy",
          "output", G_TYPE_STRING, outputs->names[i],
          "max-abs-error", G_TYPE_DOUBLE, a->max_abs_error,
          "relative-error", G_TYPE_DOUBLE, a->relative_error,
          "nonfinite-values", G_TYPE_UINT64, a->nonfinite, NULL);
      if (outputs->image && i == 0)
        gst_structure_set (o, "psnr", G_TYPE_DOUBLE, isfinite (a->psnr) ?
            a->psnr : G_MAXDOUBLE, NULL);
      if (a->top1_agreement >= 0.0)
        gst_structure_set (o, "top1-agreement", G_TYPE_DOUBLE,
            a->top1_agreement, NULL);
      gst_cuda_batch_infer_append_structure (&array, o);
    }
    gst_structure_take_value (s, "accuracy", &array);
  }
  if (r->n_rejected == 0)
    return;
  g_value_init (&rejected, GST_TYPE_ARRAY);
  for (i = 0; i < r->n_rejected; i++) {
    GstStructure *left = gst_structure_new ("cudabatchinfer-precision-rejected",
        "precision", G_TYPE_STRING, cbi_precision_name (r->rejected[i]),
        "relative-error", G_TYPE_DOUBLE, r->rejected_error[i], NULL);
    /* no output where it could not be planned or run */
    if (r->rejected_output[i] >= 0
        && (guint) r->rejected_output[i] < outputs->n_outputs)
      gst_structure_set (left, "output", G_TYPE_STRING,
          outputs->names[r->rejected_output[i]], NULL);
    gst_cuda_batch_infer_append_structure (&rejected, left);
  }
  gst_structure_take_value (s, "precision-rejected", &rejected);
}

gboolean
gst_cuda_batch_infer_run_warmup (GstCudaBatchInfer * self,
    const GstVideoInfo * info)
{
  guint width = GST_VIDEO_INFO_WIDTH (info);
  guint height = GST_VIDEO_INFO_HEIGHT (info);
  CbiFrameBatch layout = { 0, };
  CbiBatchReport r;
  CbiOutputInfo outputs;
  GError *error = NULL;
  GstStructure *s;
  guint64 output_buffer_bytes;
  gboolean have_outputs;
  gdouble worst;
  CbiPrecision asked;
  GPtrArray *check = NULL;
  gint *strides = NULL;
  guint i, check_frames = 0;
  gboolean ok;

  gst_cuda_batch_infer_describe_layout (self, info, &layout);
  layout.n_slots = self->run_batch;
  if (self->run_check_location) {
    check = gst_cuda_batch_infer_decode_check_frames
        (self->run_check_location, info, self->run_batch, &error);
    if (check == NULL) {
      gst_element_message_full (GST_ELEMENT (self), GST_MESSAGE_ERROR,
          error->domain, error->code, g_strdup_printf ("Could not read the "
              "frames of precision-check-location %s",
              self->run_check_location), g_strdup (error->message),
          __FILE__, GST_FUNCTION, __LINE__);
      g_clear_error (&error);
      return FALSE;
    }
    check_frames = check->len;
    strides = g_new (gint, check_frames);
    for (i = 0; i < check_frames; i++)
      strides[i] = width * GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
    layout.n_frames = check_frames;
    layout.in = (const guint8 * const *) check->pdata;
    layout.in_stride = strides;
  }
  ok = cbi_engine_warmup (self->engine, &layout, &r, &error);
  g_free (strides);
  g_clear_pointer (&check, g_ptr_array_unref);
  if (!ok) {
    gst_cuda_batch_infer_post_engine_error (self, "Warm-up", error);
    g_clear_error (&error);
    return FALSE;
  }
  self->warm_width = width;
  self->warm_height = height;
  gst_cuda_batch_infer_note_backend (self);
  /* NaN or infinities on the warm-up's frames: the model is broken (NaN
   * weights), or overflows; its frames would come out black, without a
   * word */
  have_outputs = cbi_engine_frame_outputs (self->engine, height, width,
      &outputs, NULL);
  if (r.nonfinite_output >= 0 && have_outputs
      && (guint) r.nonfinite_output < outputs.n_outputs)
    GST_ELEMENT_WARNING (self, STREAM, FAILED, ("The model gives NaN or "
            "infinite values"), ("output %s: %" G_GUINT64_FORMAT " of its "
            "values on the warm-up's frames are NaN or infinite; check "
            "the model's weights and the input mapping (input-scale, "
            "input-mean, input-std)", outputs.names[r.nonfinite_output],
            r.nonfinite_values));
  worst = gst_cuda_batch_infer_worst_error (&r, have_outputs ? &outputs : NULL);
  asked = self->run_precision;
  if (asked != CBI_PRECISION_AUTO && asked != r.precision)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("The model runs in fp32, "
            "not %s", cbi_precision_name (asked)), ("the %s backend has no "
            "%s, or no op of this model gains from it there",
            r.backend, cbi_precision_name (asked)));

  STATS_LOCK (self);
  self->stats.warmup_time += r.time_ns;
  self->stats.steady_batch_time = r.steady_time_ns;
  self->stats.latency_batch_time = r.latency_time_ns;
  self->stats.precision = cbi_precision_name (r.precision);
  self->stats.precision_error = worst;
  self->stats.low_precision_ops = r.low_precision_ops;
  self->stats.reserved_bytes = r.pool.reserved_bytes;
  output_buffer_bytes = self->stats.output_buffer_bytes;
  STATS_UNLOCK (self);

  s = gst_structure_new ("cudabatchinfer-warmup",
      "batch-size", G_TYPE_UINT, self->run_batch,
      "width", G_TYPE_UINT, width,
      "height", G_TYPE_UINT, height,
      "fresh-allocations", G_TYPE_UINT64, r.fresh_allocations,
      "fresh-bytes", G_TYPE_UINT64, r.fresh_bytes,
      "peak-allocated-bytes", G_TYPE_UINT64, r.pool.peak_allocated_bytes,
      "peak-reserved-bytes", G_TYPE_UINT64, r.pool.peak_reserved_bytes,
      "allocated-bytes", G_TYPE_UINT64, r.pool.allocated_bytes,
      "reserved-bytes", G_TYPE_UINT64, r.pool.reserved_bytes,
      "workspace-bytes", G_TYPE_UINT64, r.workspace_bytes,
      "output-buffer-bytes", G_TYPE_UINT64, output_buffer_bytes,
      "threads", G_TYPE_UINT, r.threads,
      "warmup-time", G_TYPE_UINT64, r.time_ns,
      "steady-batch-time", G_TYPE_UINT64, r.steady_time_ns,
      "latency-batch-time", G_TYPE_UINT64, r.latency_time_ns,
      "backend", G_TYPE_STRING, r.backend,
      "device-id", G_TYPE_INT, r.device_id,
      "device-free-bytes", G_TYPE_UINT64, r.device_free_bytes, NULL);
  if (cbi_engine_fallback_reason (self->engine))
    gst_structure_set (s, "fallback-reason", G_TYPE_STRING,
        cbi_engine_fallback_reason (self->engine), NULL);
  gst_structure_set (s, "precision", G_TYPE_STRING,
      cbi_precision_name (r.precision), "low-precision-ops",
      G_TYPE_UINT, r.low_precision_ops, "check-frames", G_TYPE_UINT,
      check_frames, NULL);
  if (have_outputs)
    gst_cuda_batch_infer_describe_accuracy (s, &r, &outputs);
  GST_INFO_OBJECT (self, "warmed up: %" GST_PTR_FORMAT, s);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
  /* the batch time is part of the latency: ask for it to be queried again */
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_latency (GST_OBJECT (self)));
  return TRUE;
}
