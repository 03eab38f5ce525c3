/* GStreamer cudabatchinfer element: its output pools and the memory limit
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-pools.h"
#include "gstcbimodelinfo.h"

void
gst_cuda_batch_infer_clear_pool (GstBufferPool ** pool)
{
  if (*pool) {
    gst_buffer_pool_set_active (*pool, FALSE);
    gst_clear_object (pool);
  }
}

/* The pool's buffers are allocated but never written: the first batch
 * would pay the page faults. Writing one batch of them here, before the
 * first frame, is the output side of the warm-up. */
static void
gst_cuda_batch_infer_touch_pool (GstBufferPool * pool, guint n)
{
  GstBuffer **buffers = g_new0 (GstBuffer *, n);
  guint i, got;

  for (got = 0; got < n; got++)
    if (gst_buffer_pool_acquire_buffer (pool, &buffers[got], NULL)
        != GST_FLOW_OK)
      break;
  for (i = 0; i < got; i++) {
    gst_buffer_memset (buffers[i], 0, 0, gst_buffer_get_size (buffers[i]));
    gst_buffer_unref (buffers[i]);
  }
  g_free (buffers);
}

guint64
gst_cuda_batch_infer_output_bytes (GstCudaBatchInfer * self,
    const GstVideoInfo * out_info, const CbiOutputInfo * out)
{
  guint64 frame = 0;
  guint o;

  if (out->image)
    frame = GST_VIDEO_INFO_SIZE (out_info);
  else
    for (o = 0; o < out->n_outputs; o++)
      frame += cbi_shape_count (&out->shapes[o]) * sizeof (gfloat);
  return frame * self->run_batch * self->run_inflight;
}

gboolean
gst_cuda_batch_infer_budget (GstCudaBatchInfer * self, guint64 bytes)
{
  const guint64 limit = self->run_memory_limit;

  if (limit > 0 && bytes >= limit) {
    /* the stats count only output buffers that were let in */
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("The output buffers (%u frames, %" G_GUINT64_FORMAT " bytes) do "
            "not fit the memory limit of %" G_GUINT64_FORMAT " bytes",
            self->run_batch * self->run_inflight, bytes, limit),
        ("raise or unset the memory-limit property, or lower batch or "
            "max-inflight"));
    return FALSE;
  }
  STATS_LOCK (self);
  self->out_pool_bytes = bytes;
  self->stats.output_buffer_bytes = bytes + self->streams_pool_bytes;
  STATS_UNLOCK (self);
  if (limit > 0)
    cbi_engine_set_memory_limit (self->engine, limit - bytes);
  return TRUE;
}

gboolean
gst_cuda_batch_infer_budget_for (GstCudaBatchInfer * self,
    const GstVideoInfo * info)
{
  GstVideoInfo out_info;
  CbiOutputInfo out;

  if (!cbi_engine_frame_outputs (self->engine, GST_VIDEO_INFO_HEIGHT (info),
          GST_VIDEO_INFO_WIDTH (info), &out, NULL))
    return TRUE;
  gst_video_info_set_format (&out_info, GST_VIDEO_INFO_FORMAT (info),
      out.width, out.height);
  out_info.colorimetry = info->colorimetry;
  return gst_cuda_batch_infer_budget (self,
      gst_cuda_batch_infer_output_bytes (self, &out_info, &out));
}

gboolean
gst_cuda_batch_infer_setup_pool (GstCudaBatchInfer * self, GstCaps * caps,
    const GstVideoInfo * info, GstBufferPool ** pool, guint n)
{
  GstStructure *config;

  gst_cuda_batch_infer_clear_pool (pool);
  *pool = gst_video_buffer_pool_new ();
  config = gst_buffer_pool_get_config (*pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (info),
      n, 0);
  if (!gst_buffer_pool_set_config (*pool, config)
      || !gst_buffer_pool_set_active (*pool, TRUE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate %u output buffers of %" G_GSIZE_FORMAT " bytes",
            n, GST_VIDEO_INFO_SIZE (info)), (NULL));
    gst_clear_object (pool);
    return FALSE;
  }
  gst_cuda_batch_infer_touch_pool (*pool, n);
  return TRUE;
}

/* The GstTensorMeta id of each tensor output: from the model's modelinfo
 * file, else its name. Posts an error for a modelinfo that says something
 * else of an output than the element gives. */
static gboolean
gst_cuda_batch_infer_tensor_ids (GstCudaBatchInfer * self)
{
  GError *error = NULL;
  gboolean ok = TRUE;
  guint o;

  for (o = 0; ok && o < self->out.n_outputs; o++) {
    const gchar *name = self->tensors[o].name;

    ok = gst_cbi_modelinfo_output_id (self->modelinfo, name,
        &self->tensor_ids[o], &error);
    if (ok)
      GST_INFO_OBJECT (self, "output %s goes out as GstTensorMeta id %s",
          name, g_quark_to_string (self->tensor_ids[o]));
  }
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Invalid modelinfo file %s: %s", self->modelinfo_path,
            error->message), (NULL));
    g_clear_error (&error);
  }
  return ok;
}

gboolean
gst_cuda_batch_infer_setup_tensor_pool (GstCudaBatchInfer * self)
{
  GstStructure *config;
  gsize size = 0;
  guint o;
  gint d;

  /* the same layout for every frame: described (names interned) once */
  for (o = 0; o < self->out.n_outputs; o++) {
    GstBatchTensor *t = &self->tensors[o];
    const CbiShape *one = &self->out.shapes[o];
    t->name = g_intern_string (self->out.names[o]);
    t->n_dims = one->n_dims;
    for (d = 0; d < one->n_dims; d++)
      t->dims[d] = one->dims[d];
    t->data_type = GST_BATCH_TENSOR_DATA_TYPE_FLOAT32;
    t->offset = size;
    t->size = cbi_shape_count (one) * sizeof (gfloat);
    size += t->size;
  }
  if (self->run_tensor_meta && !gst_cuda_batch_infer_tensor_ids (self))
    return FALSE;
  gst_cuda_batch_infer_clear_pool (&self->tensor_pool);
  self->tensor_pool = gst_buffer_pool_new ();
  config = gst_buffer_pool_get_config (self->tensor_pool);
  gst_buffer_pool_config_set_params (config, NULL, size,
      self->run_batch * self->run_inflight, 0);
  if (!gst_buffer_pool_set_config (self->tensor_pool, config)
      || !gst_buffer_pool_set_active (self->tensor_pool, TRUE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate %u tensor buffers of %" G_GSIZE_FORMAT " bytes",
            self->run_batch * self->run_inflight, size), (NULL));
    gst_clear_object (&self->tensor_pool);
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_cuda_batch_infer_budget_stream (GstCudaBatchInfer * self,
    GstCbiStream * stream, const GstVideoInfo * info, guint n)
{
  const guint64 limit = self->run_memory_limit;
  const guint64 bytes = (guint64) GST_VIDEO_INFO_SIZE (info) * n;
  guint64 others, reserved;

  STATS_LOCK (self);
  others = self->out_pool_bytes + self->streams_pool_bytes - stream->pool_bytes;
  reserved = self->stats.reserved_bytes;
  if (limit == 0 || others + reserved + bytes <= limit) {
    self->streams_pool_bytes += bytes - stream->pool_bytes;
    stream->pool_bytes = bytes;
    self->stats.output_buffer_bytes = others + bytes;
    STATS_UNLOCK (self);
    return TRUE;
  }
  STATS_UNLOCK (self);
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
      ("The output buffers of %s:%s (%u frames of %dx%d, %" G_GUINT64_FORMAT
          " bytes) do not fit the memory limit of %" G_GUINT64_FORMAT
          " bytes", GST_DEBUG_PAD_NAME (stream->srcpad), n,
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), bytes,
          limit), ("%" G_GUINT64_FORMAT " bytes of other output buffers, %"
          G_GUINT64_FORMAT " bytes reserved by the engine; raise or unset "
          "memory-limit, or scale the stream down before the pad", others,
          reserved));
  return FALSE;
}
