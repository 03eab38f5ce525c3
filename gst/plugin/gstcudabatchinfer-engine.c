/* GStreamer cudabatchinfer element: its side of the engine
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-engine.h"

/* Whether frames of @info are 8-bit Y'CbCr 4:2:0, which the engine
 * converts itself. */
gboolean
gst_cuda_batch_infer_is_yuv420 (const GstVideoInfo * info)
{
  switch (GST_VIDEO_INFO_FORMAT (info)) {
    case GST_VIDEO_FORMAT_I420:
    case GST_VIDEO_FORMAT_YV12:
    case GST_VIDEO_FORMAT_NV12:
    case GST_VIDEO_FORMAT_NV21:
      return TRUE;
    default:
      return FALSE;
  }
}

void
gst_cuda_batch_infer_describe_layout (GstCudaBatchInfer * self,
    const GstVideoInfo * info, CbiFrameBatch * fb)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  const gboolean yuv = gst_cuda_batch_infer_is_yuv420 (info);
  guint c, sum = 0;

  fb->width = GST_VIDEO_INFO_WIDTH (info);
  fb->height = GST_VIDEO_INFO_HEIGHT (info);
  /* the engine sees 4:2:0 frames as R'G'B' bytes, red first */
  fb->pixel_stride = yuv ? 3 : GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  for (c = 0; c < 3; c++) {
    /* model channel c reads colour c, or 2 - c for a BGR model */
    guint colour = self->run_bgr ? 2 - c : c;
    fb->rgb_offset[c] = yuv ? colour :
        (guint) GST_VIDEO_FORMAT_INFO_POFFSET (finfo, colour);
    sum += fb->rgb_offset[c];
    fb->scale[c] = self->run_scale[c];
    fb->bias[c] = self->run_bias[c];
    fb->out_scale[c] = self->run_out_scale[c];
    fb->out_offset[c] = self->run_out_offset[c];
  }
  /* the one byte of a 4-byte pixel that is not R, G or B */
  fb->extra_offset = fb->pixel_stride == 4 ? (gint) (0 + 1 + 2 + 3 - sum) : -1;
  fb->layout = yuv ? CBI_PIXELS_YUV420 : CBI_PIXELS_PACKED;
  if (yuv)
    fb->chroma_step = GST_VIDEO_INFO_COMP_PSTRIDE (info, 1);
}

void
gst_cuda_batch_infer_yuv_matrix (const GstVideoInfo * info,
    CbiYuvMatrix * matrix)
{
  gdouble kr = 0.299, kb = 0.114;

  /* an unknown matrix is BT.601's */
  if (!gst_video_color_matrix_get_Kr_Kb (info->colorimetry.matrix, &kr, &kb)
      || info->colorimetry.matrix == GST_VIDEO_COLOR_MATRIX_RGB) {
    kr = 0.299;
    kb = 0.114;
  }
  /* and an unknown range full, as videoconvert takes it */
  cbi_yuv_matrix_init (matrix, kr, kb,
      info->colorimetry.range != GST_VIDEO_COLOR_RANGE_16_235);
}

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
    case CBI_ERROR_REMOTE:
      GST_ELEMENT_ERROR (self, RESOURCE, READ, ("%s", text),
          ("check server-url, remote-model and the server's log; "
              "remote-timeout bounds each request"));
      break;
    case CBI_ERROR_PRECISION:
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", text),
          ("precision=fp32 always runs; precision=auto takes the lowest "
              "that passes and runs faster; a larger precision-tolerance "
              "accepts more error"));
      break;
    default:
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("%s", text), (NULL));
      break;
  }
  g_free (text);
}

void
gst_cuda_batch_infer_note_backend (GstCudaBatchInfer * self)
{
  const gchar *backend = cbi_engine_backend_name (self->engine);
  const gchar *reason = cbi_engine_fallback_reason (self->engine);
  gboolean changed;

  STATS_LOCK (self);
  changed = self->stats.backend != backend;
  if (changed) {
    self->stats.backend = backend;
    g_free (self->stats.fallback_reason);
    self->stats.fallback_reason = g_strdup (reason);
  }
  STATS_UNLOCK (self);
  if (changed && reason)
    GST_WARNING_OBJECT (self, "running on the CPU: %s", reason);
}
