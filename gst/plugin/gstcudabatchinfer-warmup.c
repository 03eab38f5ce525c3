/* GStreamer cudabatchinfer element: the warm-up
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The engine runs the dry batches (cbi_engine_warmup ()); here they get
 * their frames (the engine's test frames, or the first frames of
 * precision-check-location), and their figures go to the stats, a
 * warning where the model gives NaN, and the cudabatchinfer-warmup
 * message. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-warmup.h"
#include "gstcudabatchinfer-checkfile.h"
#include "gstcudabatchinfer-engine.h"

#include <math.h>

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
 * and `precision-rejected`, one per precision auto tried and left, with
 * why: `accuracy` (past the tolerance), `error` (it could not be planned
 * or run) or `slower` (it passed, but was not clearly faster than fp32,
 * CBI_ENGINE_AUTO_FASTER_PERCENT: both median batch times). */
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
    /* no output where it could not be planned or run, or passed */
    if (r->rejected_output[i] >= 0
        && (guint) r->rejected_output[i] < outputs->n_outputs)
      gst_structure_set (left, "output", G_TYPE_STRING,
          outputs->names[r->rejected_output[i]], NULL);
    if (r->rejected_time_ns[i] > 0)
      gst_structure_set (left, "reason", G_TYPE_STRING, "slower",
          "batch-time", G_TYPE_UINT64, r->rejected_time_ns[i],
          "fp32-batch-time", G_TYPE_UINT64, r->reference_time_ns, NULL);
    else
      gst_structure_set (left, "reason", G_TYPE_STRING,
          r->rejected_output[i] >= 0 ? "accuracy" : "error", NULL);
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
  GstVideoInfo rgb_info;
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

  /* 4:2:0 frames warm up as the R'G'B' frames the engine sees them as:
   * the plan, its memory and the accuracy check are the same, only the
   * packing's first step differs */
  if (gst_cuda_batch_infer_is_yuv420 (info)) {
    gst_video_info_set_format (&rgb_info, GST_VIDEO_FORMAT_RGB, width, height);
    info = &rgb_info;
  }
  gst_cuda_batch_infer_describe_layout (self, info, &layout);
  layout.n_slots = self->run_batch;
  if (self->run_check_location) {
    check = gst_cuda_batch_infer_decode_check_file
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
