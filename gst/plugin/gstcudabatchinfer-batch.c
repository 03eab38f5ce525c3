/* GStreamer cudabatchinfer element: batches made, submitted and collected
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The streaming thread collects frames until a batch is full (or a drain
 * point, the deadline or the flush signal cuts it short), submits the
 * batch to the engine and puts it in the ring of batches in flight; the
 * src pad task collects it here: results, timestamps, metas, stats and the
 * batch's message. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-batch.h"
#include "gstcudabatchinfer-cudamem.h"
#include "gstcudabatchinfer-engine.h"
#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-timeout.h"
#include "gstcbitensormeta.h"

#include <string.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

/* every model output fits one tensor meta */
G_STATIC_ASSERT (CBI_MAX_OUTPUTS <= GST_BATCH_TENSOR_MAX_TENSORS);

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
  s->remote_bytes_sent += r->remote_bytes_sent;
  s->remote_bytes_received += r->remote_bytes_received;
  s->remote_round_trip_time = r->remote_rtt_ns;
  STATS_UNLOCK (self);
}

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

/* Whether frame @i of @batch may be mapped as the caps say. A video meta
 * that contradicts them (another format or number of planes, a smaller
 * size: what gst_video_frame_map() requires of it, a larger meta being a
 * padded frame the caps' frame is cropped from) is an error of the
 * stream, posted here: the map checks the same with
 * g_return_val_if_fail(), a critical, not an error. Nor does the map
 * check that the meta's plane lies within the buffer, which the batch's
 * packing reads whole: the frames take one plane. */
static gboolean
gst_cuda_batch_infer_meta_fits (GstCudaBatchInfer * self,
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

/* Notes where 4:2:0 @frame's chroma lies for slot @s: an input's (@which
 * 0) or an output's (1). GstVideoFrame's components are Cb and Cr in
 * every 4:2:0 format, whichever plane and order they take. */
static void
gst_cuda_batch_infer_map_chroma (GstCbiBatch * batch,
    const GstVideoFrame * frame, gint s, guint which)
{
  const guint slots = batch->n_slots;

  batch->chroma[2 * which * slots + s] = GST_VIDEO_FRAME_COMP_DATA (frame, 1);
  batch->chroma[(2 * which + 1) * slots + s] =
      GST_VIDEO_FRAME_COMP_DATA (frame, 2);
  batch->chroma_strides[which * slots + s] =
      GST_VIDEO_FRAME_COMP_STRIDE (frame, 1);
}

/* Maps the frames of @batch to infer and, for an image output, their
 * output buffers, each in its slot.
 * Returns: whether all were mapped (batch->mapped says how many were). */
static gboolean
gst_cuda_batch_infer_map (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  const GstVideoInfo *in, *out;
  GstBufferPool *pool;
  const GstVideoInfo *first = NULL;
  guint i;
  gint s;

  /* frames in the engine's CUDA context are read on the device where all
   * of the batch's are, of one colorimetry (the pack kernel takes one),
   * and the CUDA backend packs them as they are */
  batch->on_device = self->cuda_primary != NULL
      && self->run_scaling == CBI_SCALE_NONE
      && g_str_equal (cbi_engine_backend_name (self->engine), "cuda")
      && cbi_engine_device_id (self->engine) == self->cuda_device;
  for (i = 0; i < batch->n && batch->on_device; i++) {
    if (batch->slots[i] < 0)
      continue;
    gst_cuda_batch_infer_frame_infos (self, batch, i, &in, &out, &pool);
    if (first == NULL)
      first = in;
    batch->on_device = gst_cuda_batch_infer_reads_on_device (self,
        batch->frames[i]) && gst_video_colorimetry_is_equal
        (&in->colorimetry, &first->colorimetry);
  }

  for (i = 0; i < batch->n; i++) {
    if ((s = batch->slots[i]) < 0)
      continue;
    gst_cuda_batch_infer_frame_infos (self, batch, i, &in, &out, &pool);
    batch->in_width[s] = GST_VIDEO_INFO_WIDTH (in);
    batch->in_height[s] = GST_VIDEO_INFO_HEIGHT (in);
    batch->out_width[s] = GST_VIDEO_INFO_WIDTH (out);
    batch->out_height[s] = GST_VIDEO_INFO_HEIGHT (out);
    if (batch->on_device ? !gst_cuda_batch_infer_map_on_device (self,
            &batch->in_frames[s], in, batch->frames[i]) :
        !gst_video_frame_map (&batch->in_frames[s], in, batch->frames[i],
            GST_MAP_READ))
      return FALSE;
    batch->in_data[s] = GST_VIDEO_FRAME_PLANE_DATA (&batch->in_frames[s], 0);
    batch->in_strides[s] =
        GST_VIDEO_FRAME_PLANE_STRIDE (&batch->in_frames[s], 0);
    if (gst_cuda_batch_infer_is_yuv420 (in)) {
      gst_cuda_batch_infer_map_chroma (batch, &batch->in_frames[s], s, 0);
      gst_cuda_batch_infer_yuv_matrix (in, &batch->yuv[s]);
    }
    if (self->out.image) {
      if (!gst_video_frame_map (&batch->out_frames[s], out,
              batch->out_buffers[i], GST_MAP_WRITE)) {
        gst_video_frame_unmap (&batch->in_frames[s]);
        return FALSE;
      }
      batch->out_data[s] =
          GST_VIDEO_FRAME_PLANE_DATA (&batch->out_frames[s], 0);
      batch->out_strides[s] =
          GST_VIDEO_FRAME_PLANE_STRIDE (&batch->out_frames[s], 0);
      if (gst_cuda_batch_infer_is_yuv420 (out))
        gst_cuda_batch_infer_map_chroma (batch, &batch->out_frames[s], s, 1);
    }
    batch->mapped = s + 1;
  }
  return TRUE;
}

/* Copies slot @s's slice of every model output, @outputs (the whole
 * batch's, read once per batch), into a buffer of the tensor pool, laid
 * out as self->tensors. */
static GstFlowReturn
gst_cuda_batch_infer_slice_tensors (GstCudaBatchInfer * self,
    GstCbiBatch * batch, guint s, const gfloat * const *outputs)
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
    memcpy (map.data + t->offset, (const guint8 *) outputs[o] + s * t->size,
        t->size);
  }
  gst_buffer_unmap (data, &map);
  batch->tensor_data[s] = data;
  return GST_FLOW_OK;
}

/* The output buffer of frame @i of a batch of tensor outputs: the input
 * frame itself, stolen from the batch so that it stays writable when
 * upstream kept no reference, with the tensors of @data attached (nullable:
 * a skipped frame of a stream with no result yet passes without). */
static GstBuffer *
gst_cuda_batch_infer_pass_through (GstCudaBatchInfer * self,
    GstCbiBatch * batch, guint i, GstBuffer * data)
{
  GstBuffer *out = gst_buffer_make_writable (batch->frames[i]);
  GstBatchTensorMeta *m;

  batch->frames[i] = NULL;
  if (data == NULL)
    return out;
  m = gst_buffer_add_batch_tensor_meta (out, data, self->out.n_outputs,
      self->tensors);
  if (m == NULL)
    GST_WARNING_OBJECT (self, "could not attach the tensors of frame %u", i);
  else if (self->run_tensor_meta
      && !gst_cbi_tensor_meta_add (out, m, self->tensor_ids))
    GST_WARNING_OBJECT (self, "could not attach the GstTensorMeta of frame "
        "%u", i);
  return out;
}

static GstMessage *
gst_cuda_batch_infer_batch_message (GstCudaBatchInfer * self,
    GstBatchMemoryMeta * meta)
{
  GstStructure *s = gst_batch_memory_meta_to_structure (meta);

  /* what is the frame's, not the batch's */
  gst_structure_remove_fields (s, "frame-index", "stream", "inferred", NULL);
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

/* Gets output buffers for @batch's frames to infer, maps them and hands
 * them to the engine, each in its slot; a batch whose frames all skip
 * inference goes to no engine. With the batch lock. */
static GstFlowReturn
gst_cuda_batch_infer_submit (GstCudaBatchInfer * self, GstCbiBatch * batch,
    GstCudaBatchInferPadMode pad_mode, const gchar * reason)
{
  CbiFrameBatch *fb = &batch->fb;
  GError *error = NULL;
  GstFlowReturn ret;
  guint i;

  batch->n_infer = 0;
  batch->n_out = batch->n;
  for (i = 0; i < batch->n; i++)
    batch->slots[i] = batch->tags[i].skip ? -1 : (gint) batch->n_infer++;
  for (i = 0; i < batch->n; i++) {
    const GstVideoInfo *in, *out;
    GstBufferPool *pool;

    if (batch->slots[i] < 0)
      continue;
    if (!gst_cuda_batch_infer_meta_fits (self, batch, i))
      return GST_FLOW_ERROR;
    if (!self->out.image)
      continue;
    gst_cuda_batch_infer_frame_infos (self, batch, i, &in, &out, &pool);
    ret = gst_buffer_pool_acquire_buffer (pool, &batch->out_buffers[i], NULL);
    if (ret == GST_FLOW_ERROR)
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
          ("Could not get an output buffer"), ("batch %" G_GUINT64_FORMAT,
              batch->index));
    if (ret != GST_FLOW_OK)
      return ret;
  }

  memset (fb, 0, sizeof (*fb));
  if (batch->n_infer == 0) {
    /* what its frames' meta says: the pool as it is, nothing run */
    memset (&batch->report, 0, sizeof (batch->report));
    batch->report.backend = cbi_engine_backend_name (self->engine);
    batch->report.device_id = cbi_engine_device_id (self->engine);
    cbi_engine_get_pool_stats (self->engine, &batch->report.pool);
    batch->warmed_up = self->warm_width > 0;
    GST_DEBUG_OBJECT (self, "batch %" G_GUINT64_FORMAT ": %u frames, all "
        "skipping inference (%s)", batch->index, batch->n, reason);
    return GST_FLOW_OK;
  }
  if (!gst_cuda_batch_infer_map (self, batch)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map a video frame"),
        ("slot %u of batch %" G_GUINT64_FORMAT, batch->mapped, batch->index));
    return GST_FLOW_ERROR;
  }

  gst_cuda_batch_infer_describe_layout (self, &self->in_info, fb);
  fb->n_frames = batch->n_infer;
  fb->n_slots = pad_mode == GST_CUDA_BATCH_INFER_PAD_NONE ? batch->n_infer :
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
  if (fb->layout == CBI_PIXELS_YUV420) {
    const guint slots = batch->n_slots;
    fb->in_cb = (const guint8 * const *) batch->chroma;
    fb->in_cr = (const guint8 * const *) batch->chroma + slots;
    fb->in_chroma_stride = batch->chroma_strides;
    fb->out_cb = batch->chroma + 2 * slots;
    fb->out_cr = batch->chroma + 3 * slots;
    fb->out_chroma_stride = batch->chroma_strides + slots;
    fb->yuv = batch->yuv;
  }
  fb->in_device = batch->on_device;
  batch->warmed_up =
      self->warm_width == (guint) GST_VIDEO_INFO_WIDTH (&self->in_info)
      && self->warm_height == (guint) GST_VIDEO_INFO_HEIGHT (&self->in_info)
      && fb->n_slots == self->run_batch;

  GST_DEBUG_OBJECT (self, "batch %" G_GUINT64_FORMAT ": %u frames in %u "
      "slots, %u more skipping inference (%s)", batch->index, batch->n_infer,
      fb->n_slots, batch->n - batch->n_infer, reason);
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
  m->inferred = batch->slots[frame_index] >= 0;
  m->skipped = batch->n - batch->n_infer;
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
  m->round_trip_time = r->remote_rtt_ns;
  m->bytes_sent = r->remote_bytes_sent;
  m->bytes_received = r->remote_bytes_received;
  m->backend = r->backend;
  m->device_id = r->device_id;
}

/* Whether frames tagged @a and @b came on the same pad, in the same run
 * of its stream (no flush between). */
static gboolean
gst_cuda_batch_infer_same_pad (const GstCbiFrameTag * a,
    const GstCbiFrameTag * b)
{
  return a->stream == b->stream && a->serial == b->serial;
}

/* A skipped frame's output buffer for an image output: a copy of @result
 * (its pad's last), with frame @i's timestamps and flags. */
static GstFlowReturn
gst_cuda_batch_infer_copy_result (GstCudaBatchInfer * self,
    GstCbiBatch * batch, guint i, GstBuffer * result)
{
  const GstVideoInfo *in, *out;
  GstVideoFrame src, dst;
  GstBufferPool *pool;
  GstBuffer *copy = NULL;
  GstFlowReturn ret;
  gboolean ok;

  gst_cuda_batch_infer_frame_infos (self, batch, i, &in, &out, &pool);
  ret = gst_buffer_pool_acquire_buffer (pool, &copy, NULL);
  if (ret == GST_FLOW_ERROR)
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not get an output buffer"), ("batch %" G_GUINT64_FORMAT,
            batch->index));
  if (ret != GST_FLOW_OK)
    return ret;
  ok = gst_video_frame_map (&src, out, result, GST_MAP_READ);
  if (ok) {
    ok = gst_video_frame_map (&dst, out, copy, GST_MAP_WRITE);
    if (ok) {
      ok = gst_video_frame_copy (&dst, &src);
      gst_video_frame_unmap (&dst);
    }
    gst_video_frame_unmap (&src);
  }
  if (!ok) {
    /* the result is of frames of another size (caps changed since) */
    GST_DEBUG_OBJECT (self, "frame %u of batch %" G_GUINT64_FORMAT ": its "
        "stream's last result is of other frames: dropped", i, batch->index);
    gst_buffer_unref (copy);
    gst_cuda_batch_infer_count_dropped (self, NULL, 1);
    return GST_FLOW_OK;
  }
  gst_buffer_copy_into (copy, batch->frames[i],
      GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  batch->out_buffers[i] = copy;
  return GST_FLOW_OK;
}

/* Makes frame @i's output buffer, out_buffers[i]: an inferred frame's
 * result; for a frame that skipped inference, the last result of its pad
 * before it (in this batch, or kept from an earlier one): a copy of the
 * image, or a reference to the tensors. A skipped frame with no result of
 * its pad to go with (its stream's first ones lost) passes with no
 * tensors, or, for an image output, is dropped (out_buffers[i] %NULL). */
static GstFlowReturn
gst_cuda_batch_infer_output (GstCudaBatchInfer * self, GstCbiBatch * batch,
    guint i)
{
  GstBuffer *image = NULL, *tensors = NULL;
  GstCbiPadState *pad;
  GstFlowReturn ret = GST_FLOW_OK;
  gint j, s = batch->slots[i];

  if (s >= 0 && self->out.image) {
    gst_buffer_copy_into (batch->out_buffers[i], batch->frames[i],
        GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
    return GST_FLOW_OK;
  }
  if (s >= 0) {
    batch->out_buffers[i] = gst_cuda_batch_infer_pass_through (self, batch, i,
        batch->tensor_data[s]);
    return GST_FLOW_OK;
  }

  for (j = (gint) i - 1; j >= 0; j--)
    if (batch->slots[j] >= 0
        && gst_cuda_batch_infer_same_pad (&batch->tags[j], &batch->tags[i]))
      break;
  if (j >= 0 && self->out.image) {
    image = gst_buffer_ref (batch->out_buffers[j]);
  } else if (j >= 0) {
    tensors = gst_buffer_ref (batch->tensor_data[batch->slots[j]]);
  } else {
    pad = gst_cuda_batch_infer_pad_state (self, batch->tags[i].stream);
    STATS_LOCK (self);
    if (pad->last_serial == batch->tags[i].serial) {
      image = pad->last_image ? gst_buffer_ref (pad->last_image) : NULL;
      tensors = pad->last_tensors ? gst_buffer_ref (pad->last_tensors) : NULL;
    }
    STATS_UNLOCK (self);
  }

  if (!self->out.image)
    batch->out_buffers[i] = gst_cuda_batch_infer_pass_through (self, batch, i,
        tensors);
  else if (image)
    ret = gst_cuda_batch_infer_copy_result (self, batch, i, image);
  else {
    /* counted now: its batch may be discarded before it is pushed; its
     * stream counts it where the batch hands it over */
    GST_DEBUG_OBJECT (self, "frame %u of batch %" G_GUINT64_FORMAT ": no "
        "result of its stream to go out with: dropped", i, batch->index);
    gst_cuda_batch_infer_count_dropped (self, NULL, 1);
  }
  gst_clear_buffer (&image);
  gst_clear_buffer (&tensors);
  return ret;
}

/* With interval, what the skipped frames of later batches go out with:
 * each pad's last inferred frame of @batch, kept in its pad state. */
static void
gst_cuda_batch_infer_keep_results (GstCudaBatchInfer * self,
    GstCbiBatch * batch)
{
  GstCbiPadState *pad;
  guint i, j;

  for (i = 0; i < batch->n; i++) {
    if (batch->slots[i] < 0 || batch->out_buffers[i] == NULL)
      continue;
    for (j = i + 1; j < batch->n; j++)
      if (batch->slots[j] >= 0
          && gst_cuda_batch_infer_same_pad (&batch->tags[j], &batch->tags[i]))
        break;
    if (j < batch->n)
      continue;
    pad = gst_cuda_batch_infer_pad_state (self, batch->tags[i].stream);
    STATS_LOCK (self);
    gst_buffer_replace (&pad->last_image, self->out.image ?
        batch->out_buffers[i] : NULL);
    gst_buffer_replace (&pad->last_tensors, self->out.image ? NULL :
        batch->tensor_data[batch->slots[i]]);
    pad->last_serial = batch->tags[i].serial;
    STATS_UNLOCK (self);
  }
}

/* Counts @batch's frames that came out inferred or skipping it, per pad
 * and in all. */
static void
gst_cuda_batch_infer_count_outputs (GstCudaBatchInfer * self,
    const GstCbiBatch * batch)
{
  GstCbiPadState *pad;
  guint i;

  STATS_LOCK (self);
  for (i = 0; i < batch->n; i++) {
    if (batch->out_buffers[i] == NULL)
      continue;
    pad = gst_cuda_batch_infer_pad_state (self, batch->tags[i].stream);
    if (batch->slots[i] >= 0) {
      pad->inferred++;
      self->stats.frames_inferred++;
      self->stats.frames_on_device += batch->on_device;
    } else {
      pad->skipped++;
      self->stats.frames_skipped++;
    }
  }
  STATS_UNLOCK (self);
}

GstFlowReturn
gst_cuda_batch_infer_collect (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  const gfloat *outputs[CBI_MAX_OUTPUTS];
  GstBatchMemoryMeta *meta;
  GError *error = NULL;
  GstFlowReturn ret;
  gboolean post;
  guint i, streams;
  guint64 stream_mask;

  if (batch->n_infer > 0) {
    if (!cbi_engine_collect (self->engine, batch->ticket, &batch->fb,
            &batch->report, &error))
      return gst_cuda_batch_infer_batch_failed (self, batch, error);
    gst_cbi_batch_unmap (batch);

    /* tensor outputs are read once, then sliced per slot */
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
    for (i = 0; !self->out.image && i < batch->n_infer; i++) {
      ret = gst_cuda_batch_infer_slice_tensors (self, batch, i, outputs);
      if (ret != GST_FLOW_OK)
        return ret;
    }
    cbi_engine_release (self->engine, batch->ticket);
    batch->submitted = FALSE;
  }
  for (i = 0; i < batch->n; i++)
    if ((ret = gst_cuda_batch_infer_output (self, batch, i)) != GST_FLOW_OK)
      return ret;
  gst_cuda_batch_infer_count_outputs (self, batch);

  GST_OBJECT_LOCK (self);
  post = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  streams = gst_cuda_batch_infer_stream_mix (batch, &stream_mask);
  for (i = 0; i < batch->n; i++) {
    GstBuffer *out = batch->out_buffers[i];

    if (out == NULL)
      continue;
    meta = gst_buffer_get_batch_memory_meta (out);
    if (meta == NULL) {
      meta = gst_buffer_add_batch_memory_meta (out);
      /* stays on the buffer through our pool: no allocation next time (a
       * passed-through frame goes back upstream, where it is dropped) */
      if (self->out.image)
        GST_META_FLAG_SET (meta, GST_META_FLAG_POOLED);
    }
    gst_cuda_batch_infer_fill_meta (self, meta, batch, i, streams, stream_mask);
    if (post && batch->message == NULL)
      batch->message = gst_cuda_batch_infer_batch_message (self, meta);
  }
  /* after the metas: a result kept is no longer writable */
  if (self->run_interval > 1)
    gst_cuda_batch_infer_keep_results (self, batch);
  if (batch->n_infer > 0)
    gst_cuda_batch_infer_update_stats (self, &batch->report,
        batch->fb.n_slots - batch->n_infer);
  batch->collected = TRUE;
  return GST_FLOW_OK;
}

void
gst_cuda_batch_infer_discard (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  guint i, lost;

  if (batch->submitted)
    cbi_engine_release (self->engine, batch->ticket);
  /* a frame of a stream that has not gone to its queue is dropped there,
   * so that the stream's events behind it go on */
  for (i = 0; i < batch->n; i++)
    if (batch->tags[i].stream) {
      gst_cuda_batch_infer_deliver (self, &batch->tags[i], NULL);
      batch->tags[i].stream = NULL;
    }
  gst_cuda_batch_infer_unhold_streams (batch);
  lost = gst_cbi_batch_reset (batch);
  if (lost == 0)
    return;
  GST_DEBUG_OBJECT (self, "dropping %u frames of batch %" G_GUINT64_FORMAT,
      lost, batch->index);
  gst_cuda_batch_infer_count_dropped (self, NULL, lost);
}

GstFlowReturn
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
    gst_cuda_batch_infer_count_dropped (self, NULL, dropped);
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
    gst_cuda_batch_infer_count_dropped (self, NULL, dropped);
    GST_DEBUG_OBJECT (self, "dropping %u pending frames: %s", dropped,
        gst_flow_get_name (ret));
    return ret;
  }

  GST_OBJECT_LOCK (self);
  pad_mode = self->pad_mode;
  GST_OBJECT_UNLOCK (self);
  batch->n = gst_cbi_batcher_take (&self->batcher, batch->frames,
      batch->tags, self->run_capacity);
  self->due = FALSE;
  /* frames left behind (a second batch waiting, or skipped frames) get
   * the deadline of their oldest */
  if (self->batcher.count > 0)
    gst_cuda_batch_infer_timer_arm (self, self->batcher.tags[0].running);
  gst_cuda_batch_infer_hold_streams (self, batch);
  if (batch->n == 0) {
    gst_cuda_batch_infer_discard (self, batch);
    return GST_FLOW_OK;
  }
  batch->index = self->batch_index++;
  ret = gst_cuda_batch_infer_submit (self, batch, pad_mode, reason);
  /* (a batch of frames that all skip inference too: on a queueing engine
   * the src pad task collects it after the batch before, whose results
   * its frames take) */
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

void
gst_cuda_batch_infer_stream_submit (GstCudaBatchInfer * self,
    GstCbiStream * stream, const gchar * reason)
{
  gboolean from_push_task =
      g_atomic_pointer_get (&self->push_thread) == g_thread_self ();
  guint before;

  /* as many batches as hold its frames (with a drop-policy, two may wait) */
  while (self->engine && gst_cbi_batcher_has_stream (&self->batcher, stream)) {
    before = self->batcher.count;
    if ((from_push_task ? gst_cuda_batch_infer_try_process (self, reason) :
            gst_cuda_batch_infer_process (self, reason)) != GST_FLOW_OK
        || self->batcher.count == before)
      break;
  }
}
