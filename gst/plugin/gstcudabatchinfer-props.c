/* GStreamer cudabatchinfer element: its properties
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Properties are read and written under the object lock; the streaming
 * side copies them when the engine starts (READY to PAUSED), so most can
 * change only in NULL or READY, which the element enforces. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-private.h"
#include "gstcudabatchinfer-caps.h"
#include "gstcudabatchinfer-route.h"

enum
{
  PROP_0,
  PROP_BATCH,
  PROP_PAD_MODE,
  PROP_WARMUP,
  PROP_WARMUP_CAPS,
  PROP_MODEL,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_SERVER_URL,
  PROP_REMOTE_MODEL,
  PROP_REMOTE_MODEL_VERSION,
  PROP_REMOTE_TIMEOUT,
  PROP_BATCH_TIMEOUT,
  PROP_POST_MESSAGES,
  PROP_MEMORY_LIMIT,
  PROP_INPUT_SCALE,
  PROP_INPUT_MEAN,
  PROP_INPUT_STD,
  PROP_OUTPUT_SCALE,
  PROP_OUTPUT_OFFSET,
  PROP_CHANNEL_ORDER,
  PROP_ALGO_SEARCH,
  PROP_CUDA_GRAPH,
  PROP_MAX_INFLIGHT,
  PROP_THREADS,
  PROP_SCALING,
  PROP_PRECISION,
  PROP_PRECISION_TOLERANCE,
  PROP_PRECISION_CHECK_LOCATION,
  PROP_INTERVAL,
  PROP_MAX_LATENCY,
  PROP_DROP_POLICY,
  PROP_QOS,
  PROP_STATS,
};

#define DEFAULT_BATCH 16
#define MAX_BATCH 256
#define DEFAULT_PAD_MODE GST_CUDA_BATCH_INFER_PAD_REPEAT_LAST
#define DEFAULT_WARMUP TRUE
#define DEFAULT_MODEL NULL
#define DEFAULT_BACKEND GST_CUDA_BATCH_INFER_BACKEND_AUTO
#define DEFAULT_DEVICE_ID 0
#define DEFAULT_SERVER_URL "http://127.0.0.1:8000"
#define DEFAULT_REMOTE_MODEL NULL
#define DEFAULT_REMOTE_MODEL_VERSION NULL
#define DEFAULT_REMOTE_TIMEOUT (10 * GST_SECOND)
#define DEFAULT_BATCH_TIMEOUT 0
#define DEFAULT_POST_MESSAGES FALSE
#define DEFAULT_MEMORY_LIMIT 0
#define DEFAULT_INPUT_SCALE (1.0 / 255.0)
#define DEFAULT_INPUT_MEAN 0.0
#define DEFAULT_INPUT_STD 1.0
#define DEFAULT_CHANNEL_ORDER GST_CUDA_BATCH_INFER_CHANNEL_ORDER_RGB
#define DEFAULT_ALGO_SEARCH GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE
#define DEFAULT_CUDA_GRAPH TRUE
#define DEFAULT_MAX_INFLIGHT 2
#define DEFAULT_THREADS 0
#define DEFAULT_SCALING GST_CUDA_BATCH_INFER_SCALING_NONE
#define DEFAULT_PRECISION GST_CUDA_BATCH_INFER_PRECISION_FP32
#define DEFAULT_PRECISION_TOLERANCE 0.05
#define DEFAULT_PRECISION_CHECK_LOCATION NULL
#define MAX_THREADS 1024
#define DEFAULT_INTERVAL 1
#define MAX_INTERVAL 1000
#define DEFAULT_MAX_LATENCY 0
#define DEFAULT_DROP_POLICY GST_CUDA_BATCH_INFER_DROP_POLICY_NONE
#define DEFAULT_QOS TRUE

/* The element's enums, one after the other in one array, each ended by a
 * zeroed value, as g_enum_register_static() takes them. */
enum
{
  ENUM_PAD_MODE = 0,
  ENUM_BACKEND = 4,
  ENUM_CHANNEL_ORDER = 9,
  ENUM_ALGO_SEARCH = 12,
  ENUM_SCALING = 15,
  ENUM_PRECISION = 19,
  ENUM_DROP_POLICY = 25,
};

static GEnumValue enum_values[] = {
  {GST_CUDA_BATCH_INFER_PAD_REPEAT_LAST,
      "Pad a short batch with copies of its last frame", "repeat-last"},
  {GST_CUDA_BATCH_INFER_PAD_ZERO, "Pad a short batch with zeros", "zero"},
  {GST_CUDA_BATCH_INFER_PAD_NONE,
      "Run a short batch at its real size (new shape: re-plan)", "none"},
  {0, NULL, NULL},
  {GST_CUDA_BATCH_INFER_BACKEND_AUTO,
      "CUDA where a GPU is usable, else the CPU", "auto"},
  {GST_CUDA_BATCH_INFER_BACKEND_CPU, "oneDNN on the CPU", "cpu"},
  {GST_CUDA_BATCH_INFER_BACKEND_CUDA, "CUDA and cuDNN on an NVIDIA GPU",
      "cuda"},
  {GST_CUDA_BATCH_INFER_BACKEND_REMOTE,
        "A KServe v2 / Triton inference server (server-url, remote-model)",
      "remote"},
  {0, NULL, NULL},
  {GST_CUDA_BATCH_INFER_CHANNEL_ORDER_RGB, "Red, green, blue", "rgb"},
  {GST_CUDA_BATCH_INFER_CHANNEL_ORDER_BGR, "Blue, green, red", "bgr"},
  {0, NULL, NULL},
  {GST_CUDA_BATCH_INFER_ALGO_SEARCH_HEURISTIC, "cuDNN's heuristics",
      "heuristic"},
  {GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE, "Time every algorithm",
      "exhaustive"},
  {0, NULL, NULL},
  {GST_CUDA_BATCH_INFER_SCALING_NONE,
      "Frames have the model's size (or set it)", "none"},
  {GST_CUDA_BATCH_INFER_SCALING_STRETCH,
      "Scale each frame to the model's size", "stretch"},
  {GST_CUDA_BATCH_INFER_SCALING_LETTERBOX,
      "Scale each frame to fit the model's size, aspect ratio kept, "
        "centred between black bars", "letterbox"},
  {0, NULL, NULL},
  {GST_CUDA_BATCH_INFER_PRECISION_FP32, "float32", "fp32"},
  {GST_CUDA_BATCH_INFER_PRECISION_TF32,
      "float32 values, tf32 products on tensor cores (CUDA)", "tf32"},
  {GST_CUDA_BATCH_INFER_PRECISION_BF16,
      "bfloat16 operands, float32 sums (CPU with AVX512-BF16 or AMX; "
        "CUDA on compute capability 8.0 or later)", "bf16"},
  {GST_CUDA_BATCH_INFER_PRECISION_FP16,
      "float16 operands, float32 sums (CUDA on compute capability 7.0 or "
        "later)", "fp16"},
  {GST_CUDA_BATCH_INFER_PRECISION_AUTO,
      "The lowest that passes the warm-up's accuracy check and runs faster "
        "than fp32", "auto"},
  {0, NULL, NULL},
  {GST_CUDA_BATCH_INFER_DROP_POLICY_NONE,
      "Drop nothing: wait for a place in flight (upstream waits)", "none"},
  {GST_CUDA_BATCH_INFER_DROP_POLICY_OLDEST,
        "Never wait: drop a pad's oldest pending frames past max-latency",
      "oldest"},
  {GST_CUDA_BATCH_INFER_DROP_POLICY_LATEST_ONLY,
        "Never wait: while no place is free, keep a pad's newest frame only",
      "latest-only"},
  {0, NULL, NULL},
};

/* Registers, once, the enum whose values start at enum_values[@first]. */
static GType
gst_cuda_batch_infer_enum_get_type (guint first, const gchar * name)
{
  static gsize types[G_N_ELEMENTS (enum_values)];

  if (g_once_init_enter (&types[first])) {
    GType t;

    /* @first starts an enum: the one before it ended there */
    g_assert (first == 0 || enum_values[first - 1].value_nick == NULL);
    if (first == ENUM_BACKEND && !cbi_engine_has_cuda ())
      enum_values[ENUM_BACKEND + 2].value_name =
          "CUDA and cuDNN on an NVIDIA GPU (compiled out)";
    t = g_enum_register_static (name, &enum_values[first]);
    g_once_init_leave (&types[first], t);
  }
  return types[first];
}

#define GST_TYPE_CUDA_BATCH_INFER_PAD_MODE (gst_cuda_batch_infer_enum_get_type \
    (ENUM_PAD_MODE, "GstCudaBatchInferPadMode"))
#define GST_TYPE_CUDA_BATCH_INFER_BACKEND (gst_cuda_batch_infer_enum_get_type \
    (ENUM_BACKEND, "GstCudaBatchInferBackend"))
#define GST_TYPE_CUDA_BATCH_INFER_CHANNEL_ORDER \
  (gst_cuda_batch_infer_enum_get_type (ENUM_CHANNEL_ORDER, \
      "GstCudaBatchInferChannelOrder"))
#define GST_TYPE_CUDA_BATCH_INFER_ALGO_SEARCH \
  (gst_cuda_batch_infer_enum_get_type (ENUM_ALGO_SEARCH, \
      "GstCudaBatchInferAlgoSearch"))
#define GST_TYPE_CUDA_BATCH_INFER_SCALING \
  (gst_cuda_batch_infer_enum_get_type (ENUM_SCALING, \
      "GstCudaBatchInferScaling"))
#define GST_TYPE_CUDA_BATCH_INFER_PRECISION \
  (gst_cuda_batch_infer_enum_get_type (ENUM_PRECISION, \
      "GstCudaBatchInferPrecision"))
#define GST_TYPE_CUDA_BATCH_INFER_DROP_POLICY \
  (gst_cuda_batch_infer_enum_get_type (ENUM_DROP_POLICY, \
      "GstCudaBatchInferDropPolicy"))

static void gst_cuda_batch_infer_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_cuda_batch_infer_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);

void
gst_cuda_batch_infer_install_properties (GObjectClass * gobject_class)
{
  gobject_class->set_property = gst_cuda_batch_infer_set_property;
  gobject_class->get_property = gst_cuda_batch_infer_get_property;

  /**
   * GstCudaBatchInfer:batch:
   *
   * Frames per batch. Every batch the engine runs has this many slots,
   * unless #GstCudaBatchInfer:pad-mode is `none`.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_BATCH,
      g_param_spec_uint ("batch", "Batch size", "Frames per batch", 1,
          MAX_BATCH, DEFAULT_BATCH, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:pad-mode:
   *
   * How a short batch (at EOS, a drain, a timeout, a caps change or the
   * #GstCudaBatchInfer::flush signal, which drains the pending frames
   * rather than dropping them) is filled up. Padded results never leave
   * the element.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_PAD_MODE,
      g_param_spec_enum ("pad-mode", "Pad mode",
          "How a short batch is filled up to the batch size",
          GST_TYPE_CUDA_BATCH_INFER_PAD_MODE, DEFAULT_PAD_MODE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstCudaBatchInfer:warmup:
   *
   * Run a dry batch before the first real one, so the first batch costs
   * what every batch costs.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_WARMUP,
      g_param_spec_boolean ("warmup", "Warm-up",
          "Run a dry batch on the way to PAUSED (or on the first caps)",
          DEFAULT_WARMUP, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:warmup-caps:
   *
   * The input caps to warm up for (fixed width and height), so the whole
   * warm-up happens on READY→PAUSED when the model does not fix the input
   * size. %NULL: warm up on the first caps event instead.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_WARMUP_CAPS,
      g_param_spec_boxed ("warmup-caps", "Warm-up caps",
          "Input caps to warm up for on READY to PAUSED (NULL: on first caps)",
          GST_TYPE_CAPS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:model:
   *
   * Path of an ONNX model file. %NULL runs the embedded pencil-sketch
   * model. The model takes 3-channel images (N, 3, H, W; batch, height and
   * width may be symbolic) and is made of float32 ops of the supported
   * list (docs/onnx-models.md: convolutions, normalizations, activations,
   * broadcasting arithmetic, pooling, Resize, Pad, DepthToSpace, Reshape,
   * Transpose, Flatten, Gemm, MatMul, Softmax and more). An image output
   * becomes the output frames, any other output a #GstBatchTensorMeta on
   * the frames passed through (and, on GStreamer 1.26 or later, a
   * GstTensorMeta whose ids come from a `<model>.onnx.modelinfo` file
   * beside it, where there is one). A model the engine cannot run fails the
   * READY→PAUSED state change with an error that names the op, node or
   * tensor it cannot take.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "Model",
          "ONNX model file (NULL: the embedded pencil-sketch model)",
          DEFAULT_MODEL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:backend:
   *
   * Where the network runs. `auto` never fails a pipeline the CPU can run:
   * it takes CUDA only where a GPU is usable and runs every op of the
   * model, and moves to the CPU, once, when the warm-up or a batch fails
   * on CUDA, saying why in a log warning, the warm-up message's
   * `fallback-reason` and #GstCudaBatchInfer:stats. `cuda` reports those
   * failures as errors instead.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend", "Where the network runs",
          GST_TYPE_CUDA_BATCH_INFER_BACKEND, DEFAULT_BACKEND,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:device-id:
   *
   * CUDA device to run on (ignored by the CPU backend).
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("device-id", "Device ID", "CUDA device to run on",
          0, G_MAXINT, DEFAULT_DEVICE_ID, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:server-url:
   *
   * The inference server of `backend=remote`: `http://host:port`, where it
   * serves the KServe v2 (Open Inference) protocol over HTTP with Triton's
   * binary tensor data extension (Triton, KServe, MLServer, OpenVINO
   * Model Server). READY→PAUSED fails, saying why, where the server or
   * the model is not ready. Other backends ignore it.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_SERVER_URL,
      g_param_spec_string ("server-url", "Server URL",
          "Inference server of backend=remote (http://host:port)",
          DEFAULT_SERVER_URL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:remote-model:
   *
   * The model's name on the server of `backend=remote`. Its input must be
   * one FP32 image tensor (N x 3 x H x W, or N x H x W x 3) and its
   * outputs FP32; #GstCudaBatchInfer:model, where set, must be the same
   * model: its input and outputs are checked against the server's
   * metadata, and its shapes used.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_REMOTE_MODEL,
      g_param_spec_string ("remote-model", "Remote model",
          "Model name on the server of backend=remote",
          DEFAULT_REMOTE_MODEL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:remote-model-version:
   *
   * The version of #GstCudaBatchInfer:remote-model to run; unset: the
   * server's choice.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_REMOTE_MODEL_VERSION,
      g_param_spec_string ("remote-model-version", "Remote model version",
          "Version of remote-model (NULL: the server's choice)",
          DEFAULT_REMOTE_MODEL_VERSION, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:remote-timeout:
   *
   * The longest one request to the server of `backend=remote` may take,
   * connecting included, in nanoseconds (0: no limit). A batch past it
   * is an error: the element never waits longer.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_REMOTE_TIMEOUT,
      g_param_spec_uint64 ("remote-timeout", "Remote timeout",
          "Longest a request to the server may take (ns, 0 = no limit)",
          0, G_MAXUINT64, DEFAULT_REMOTE_TIMEOUT, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:batch-timeout:
   *
   * For live sources: when the oldest pending frame has waited this long
   * since its running time on the pipeline clock, or since it reached the
   * element if that was earlier (a source running ahead of the clock), the
   * partial batch is padded and processed. A frame that reaches the
   * element already past that point waits one frame's duration (from the
   * caps' framerate, at most the timeout) for the frames behind it: a live
   * source held up by a slow batch pushes its late frames back to back, and
   * each going alone, padded to a full batch, would make the next ones
   * later still.
   * 0 waits for a full batch.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_BATCH_TIMEOUT,
      g_param_spec_uint64 ("batch-timeout", "Batch timeout",
          "Process a partial batch when its oldest frame has waited this "
          "long, in nanoseconds (0 = wait for a full batch)", 0, G_MAXUINT64,
          DEFAULT_BATCH_TIMEOUT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstCudaBatchInfer:post-messages:
   *
   * Post a `cudabatchinfer-batch` element message per batch, carrying the
   * fields of gst_batch_memory_meta_to_structure() (less `frame-index`).
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post an element message with the memory figures of every batch",
          DEFAULT_POST_MESSAGES, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstCudaBatchInfer:memory-limit:
   *
   * Most bytes the element may hold: the engine's memory pool (tensors,
   * weights, workspace; device memory on CUDA), the element's output
   * buffers (a batch of frames for each batch in flight) and, while it
   * runs, the warm-up's test frames (and, under a precision other than
   * fp32, the float32 run's outputs). Each is checked before it is
   * allocated; past the limit, caps or planning fail with an error naming
   * what did not fit. 0: no limit.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_MEMORY_LIMIT,
      g_param_spec_uint64 ("memory-limit", "Memory limit",
          "Most bytes the engine's pool, the output buffers and the "
          "warm-up's frames may take together (0 = no limit)", 0, G_MAXUINT64,
          DEFAULT_MEMORY_LIMIT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:input-scale:
   *
   * A pixel byte times this is the model's input value, before
   * #GstCudaBatchInfer:input-mean and #GstCudaBatchInfer:input-std:
   * value = (byte x scale - mean) / std. Results map back the inverse way
   * and are clamped to 0..255.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_SCALE,
      g_param_spec_double ("input-scale", "Input scale",
          "Pixel byte to model value factor, before mean and std",
          G_MINDOUBLE, G_MAXDOUBLE, DEFAULT_INPUT_SCALE, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:input-mean:
   *
   * Per-channel mean subtracted after scaling, in the model's channel
   * order: 3 values, or 1 for all channels (e.g. `<0.485, 0.456, 0.406>`
   * for ImageNet models). Default 0.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_MEAN,
      gst_param_spec_array ("input-mean", "Input mean",
          "Per-channel mean subtracted after scaling (1 or 3 values)",
          g_param_spec_double ("mean", "Mean", "Channel mean", -G_MAXDOUBLE,
              G_MAXDOUBLE, DEFAULT_INPUT_MEAN, G_PARAM_READWRITE |
              G_PARAM_STATIC_STRINGS), G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:input-std:
   *
   * Per-channel standard deviation divided by after the mean: 3 values,
   * or 1 for all channels, none of them 0. Default 1.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_STD,
      gst_param_spec_array ("input-std", "Input std",
          "Per-channel standard deviation divided by (1 or 3 values)",
          g_param_spec_double ("std", "Std", "Channel standard deviation",
              -G_MAXDOUBLE, G_MAXDOUBLE, DEFAULT_INPUT_STD,
              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:output-scale:
   *
   * Per-channel factor from an image output's values to bytes: byte =
   * value x scale + #GstCudaBatchInfer:output-offset, rounded and clamped
   * to 0..255; 3 values, or 1 for all channels. Empty (the default): the
   * inverse of the input mapping, input-std / input-scale, so that a
   * filter's output maps back as its input came in. A model whose output
   * is not an image of the input's kind needs its own: a detector's 0..1
   * probability map is `output-scale=<255.0> output-offset=<0.0>` (p = 0
   * black, p = 1 white), whatever the input's mean and std.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_OUTPUT_SCALE,
      gst_param_spec_array ("output-scale", "Output scale",
          "Per-channel output value to byte factor (1 or 3 values; none: "
          "the inverse of the input mapping)",
          g_param_spec_double ("scale", "Scale", "Channel factor",
              -G_MAXDOUBLE, G_MAXDOUBLE, 255.0,
              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:output-offset:
   *
   * Per-channel byte offset added after #GstCudaBatchInfer:output-scale:
   * 3 values, or 1 for all channels. Empty (the default): the inverse of
   * the input mapping, input-mean / input-scale.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_OUTPUT_OFFSET,
      gst_param_spec_array ("output-offset", "Output offset",
          "Per-channel byte offset after the output scale (1 or 3 values; "
          "none: the inverse of the input mapping)",
          g_param_spec_double ("offset", "Offset", "Channel offset",
              -G_MAXDOUBLE, G_MAXDOUBLE, 0.0,
              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:channel-order:
   *
   * The colour order of the model's 3 channels.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum ("channel-order", "Channel order",
          "Colour order of the model's channels",
          GST_TYPE_CUDA_BATCH_INFER_CHANNEL_ORDER, DEFAULT_CHANNEL_ORDER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:algo-search:
   *
   * How the CUDA backend chooses each convolution's algorithm during the
   * warm-up: an exhaustive search times them all on the real shapes (the
   * memory only the search needed is given back before the first batch);
   * the heuristics answer at once. The CPU backend ignores it.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_ALGO_SEARCH,
      g_param_spec_enum ("algo-search", "Algorithm search",
          "How the CUDA backend picks convolution algorithms at warm-up",
          GST_TYPE_CUDA_BATCH_INFER_ALGO_SEARCH, DEFAULT_ALGO_SEARCH,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:cuda-graph:
   *
   * Whether the CUDA backend records a batch's layers as a CUDA graph on
   * the warm-up's second dry batch and replays it for every batch of that
   * shape: one launch instead of one per layer. Padding keeps the shape
   * fixed, which is what makes the replay valid; a caps change records
   * again. Where recording fails the layers run one by one, with a
   * warning in the log. The CPU backend ignores it.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_CUDA_GRAPH,
      g_param_spec_boolean ("cuda-graph", "CUDA graph",
          "Replay each batch's layers as a recorded CUDA graph",
          DEFAULT_CUDA_GRAPH, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:max-inflight:
   *
   * How many batches may be on their way at once, between their
   * submission by the streaming thread and their push by the src pad's
   * task. On a GPU the next batch's frames are copied and uploaded while
   * the previous batch computes, and its results come back while the next
   * one starts; on the CPU a batch computes while the one before is pushed
   * downstream. Frames still come out in order with their timestamps, and
   * every drain point (EOS, a serialised event, new caps, a drain query,
   * the #GstCudaBatchInfer::flush signal) waits until all of them are
   * pushed. Each batch in flight has its own transfer buffers and output
   * buffers, allocated at the warm-up; 1 gives the least memory and no
   * overlap.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_MAX_INFLIGHT,
      g_param_spec_uint ("max-inflight", "Batches in flight",
          "Batches submitted and not yet pushed, at most", 1,
          CBI_MAX_INFLIGHT, DEFAULT_MAX_INFLIGHT, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:threads:
   *
   * Threads that compute a batch on the CPU backend (oneDNN's OpenMP
   * threads, which also pack and unpack the frames). 0: OpenMP's own
   * choice, `OMP_NUM_THREADS` where it is set, else the cores the process
   * may use; and while other threads keep those cores busy (other
   * processes, or the pipeline's own decoder and converters: over 50 ms of
   * batches, the threads waited for a core a quarter of the time each),
   * batches run on one of them, and the others sleep, until the cores are
   * idle again (the `single-thread-batches` of #GstCudaBatchInfer:stats
   * counts them).
   * A number other than 0 is used as it is. Every batch, and the warm-up,
   * runs on one thread of the element's (`cbi-compute`), whichever thread
   * submits it, so that OpenMP keeps one pool of threads. Idle, these
   * threads spin as OpenMP's environment says (`GOMP_SPINCOUNT`,
   * `OMP_WAIT_POLICY`; by default a few ms, then they sleep); while the
   * batches run on one thread, the other threads sleep from one batch to
   * the next, so the decoder, converters and encoder of the pipeline keep
   * those cores. The CUDA backend ignores it.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_THREADS,
      g_param_spec_uint ("threads", "Threads",
          "CPU backend compute threads (0 = OpenMP's default: "
          "OMP_NUM_THREADS, else the cores the process may use)", 0,
          MAX_THREADS, DEFAULT_THREADS, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:scaling:
   *
   * For a model with a fixed input size: how frames of other sizes
   * become its input. With `stretch` or `letterbox` every pad takes frames
   * of any size (of one format), each scaled to the model's size as it is
   * packed (bilinear; `letterbox` keeps the aspect ratio and centres the
   * frame between black bars, DeepStream's maintain-aspect-ratio with
   * symmetric padding), so streams of several sizes share one batch and
   * one warmed-up shape. An image output is scaled back: each frame comes
   * out at its own size (times the model's output/input ratio), from the
   * part of the output its picture covered (the fourth byte of an RGBx or
   * RGBA frame comes out opaque, unless the model gives a fourth channel).
   * Tensor outputs are in the model's coordinates. Each stream's output
   * buffers count against #GstCudaBatchInfer:memory-limit. With `none`, or for a model that takes any size,
   * the frames have to have the model's size (or set it).
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_SCALING,
      g_param_spec_enum ("scaling", "Scaling",
          "How frames of another size than the model's fixed input size "
          "are scaled to it (and image outputs back)",
          GST_TYPE_CUDA_BATCH_INFER_SCALING, DEFAULT_SCALING,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:precision:
   *
   * The arithmetic the model runs in. `fp32` (the default) is float32
   * throughout. `bf16` gives the CPU backend's convolutions and matrix
   * products bfloat16 operands, with float32 sums, where the CPU
   * multiplies bfloat16 itself (AVX512-BF16 or AMX), all of them (the
   * image's convolution too, the frames then packed in bfloat16), and
   * keeps the activations bfloat16 through the
   * element-wise, binary, pooling, resampling and Concat ops between them;
   * the ops that need float32 (normalizations, recurrent layers, reshapes
   * and copies) read float32. Where that plan fails the warm-up's
   * accuracy check, a narrower one is checked in turn: only the
   * convolutions that gain most take bfloat16 (the image's, and thin and
   * depthwise ones between float32 ops stay float32), and the activations
   * between two
   * of them; so it is without a warm-up. Where no convolution takes it,
   * the model runs in float32, with a warning. `tf32` lets the CUDA backend's cuDNN
   * convolutions and cuBLAS products use tf32 tensor cores. `fp16` and
   * `bf16` give the CUDA backend's convolutions that compute many
   * products per value (channels in multiples of 8) 16-bit operands,
   * channels last, on tensor cores, with float32 sums, and its cuBLAS
   * products (Gemm, MatMul, a recurrent layer's input product) 16-bit
   * math on their float32 operands; every other op
   * stays float32 (fp16: compute capability 7.0 or later, bf16 and tf32:
   * 8.0; the CPU has no fp16 and no tf32). A precision the backend asked
   * for by name (#GstCudaBatchInfer:backend) cannot run fails
   * READY→PAUSED, saying what it has; under `backend=auto` the backend
   * that runs does without it: float32, with a warning. `auto` takes the
   * lowest one that passes the accuracy check (below) and whose batches
   * run clearly faster than float32's (the warm-up times both), float32
   * where none does.
   *
   * With a precision other than fp32, the warm-up checks it: it runs its
   * test frames through a float32 plan first, drops that plan, and
   * compares the warmed-up plan's outputs on the same frames with it. An
   * output further from float32 than #GstCudaBatchInfer:precision-tolerance,
   * or with NaN or infinite values where float32 has none (an overflow),
   * fails READY→PAUSED with a message naming the output and the figure
   * (`auto` steps back to the next wider precision instead). The figures
   * are in the warm-up message (`precision`, `accuracy`) and in
   * #GstCudaBatchInfer:stats. The float32 plan's memory is given back
   * before the warm-up ends. Without a warm-up (#GstCudaBatchInfer:warmup
   * false) nothing is checked and `auto` runs float32.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_PRECISION,
      g_param_spec_enum ("precision", "Precision",
          "The arithmetic the model runs in, checked against float32 at "
          "the warm-up", GST_TYPE_CUDA_BATCH_INFER_PRECISION,
          DEFAULT_PRECISION, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:precision-tolerance:
   *
   * The largest error the warm-up's accuracy check lets a precision
   * other than fp32 give, relative to each output's largest magnitude in
   * the float32 run: the largest difference of any value over the
   * largest absolute value of that output (for an image output, the
   * largest difference of a byte over 255). 0.05 lets through 5 %.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_PRECISION_TOLERANCE,
      g_param_spec_double ("precision-tolerance", "Precision tolerance",
          "The largest error relative to each output's largest magnitude "
          "in float32 that the warm-up's accuracy check lets through", 0.0,
          G_MAXDOUBLE, DEFAULT_PRECISION_TOLERANCE, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:precision-check-location:
   *
   * An image or video file whose first frames the warm-up runs instead of
   * its own test frames (gradients under fine noise): the dry batches
   * and, under a precision other than fp32, the accuracy check against
   * float32 (#GstCudaBatchInfer:precision). Pictures like the stream's
   * show what a lower precision does to the results that matter; a model
   * whose output the test frames push into a range it never meets (or
   * leave in one) is judged on what it will see. The file is decoded
   * (decodebin), converted to the stream's format and scaled (stretched)
   * to its size, once per warm-up; up to #GstCudaBatchInfer:batch frames
   * are taken, repeated in turn where the file has fewer. A file that
   * cannot be read or decoded, or has no video, fails the warm-up with
   * the decoder's error. NULL (the default): the test frames.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class,
      PROP_PRECISION_CHECK_LOCATION,
      g_param_spec_string ("precision-check-location",
          "Precision check location", "Image or video file whose first "
          "frames the warm-up and its accuracy check run on (NULL: test "
          "frames)", DEFAULT_PRECISION_CHECK_LOCATION, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:interval:
   *
   * Infer every interval-th frame of each stream (each sink pad): the
   * first frame of a stream, of a flushing seek and of new caps, then
   * every interval-th after it. The frames between skip inference: they
   * ride in the batches in their order, take no slot, and go out with
   * their own timestamps and the last result of their stream: an image
   * output's last frame, copied, or, for tensor outputs, the frame
   * itself with the last result's #GstBatchTensorMeta (and GstTensorMeta),
   * a reference to the same tensors. Their #GstBatchMemoryMeta says
   * `inferred` %FALSE. A batch takes #GstCudaBatchInfer:batch frames to
   * infer, so it waits for batch x interval frames of one stream, which
   * the LATENCY query counts. 1 infers every frame.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_INTERVAL,
      g_param_spec_uint ("interval", "Interval",
          "Infer every interval-th frame of each stream; the others go out "
          "with its last result (1 = every frame)", 1, MAX_INTERVAL,
          DEFAULT_INTERVAL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:max-latency:
   *
   * The longest a sink pad's pending frames (those not in a batch yet)
   * may span, by their running times: when a frame comes max-latency or
   * more after the oldest pending frame of its pad, the pending frames go
   * as a batch now, padded, where a place in flight is free; where none
   * is, #GstCudaBatchInfer:drop-policy says what happens (with `none`, the
   * streaming thread waits for a place, then they go). It bounds the wait
   * by the frames' timestamps, where #GstCudaBatchInfer:batch-timeout
   * bounds it on the clock; the LATENCY query does not count it. 0: no
   * bound but a full batch.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_MAX_LATENCY,
      g_param_spec_uint64 ("max-latency", "Maximum latency",
          "Most time a pad's pending frames may span, in nanoseconds, "
          "before they go or drop-policy drops them (0 = a full batch)", 0,
          G_MAXUINT64, DEFAULT_MAX_LATENCY, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstCudaBatchInfer:drop-policy:
   *
   * What happens to frames that come faster than the model runs, once
   * every place in flight (#GstCudaBatchInfer:max-inflight) is taken.
   * `none` drops nothing: the streaming thread waits for a place, and
   * upstream with it, so a live source's frames pile up before the
   * element and their latency grows. `oldest` and `latest-only` never
   * wait: frames stay pending (two batches' worth at most) until a place
   * frees, then go at once, full batch or not. Under `oldest`, a pad's
   * oldest pending frames are dropped while they span
   * #GstCudaBatchInfer:max-latency or more; under `latest-only`, each pad
   * keeps only its newest pending frame. Each dropped frame is counted in
   * #GstCudaBatchInfer:stats (`frames-shed`, and its stream's) and posted
   * as a QoS message (GST_FORMAT_BUFFERS, the pad's frames processed and
   * dropped; fields `pad` and `reason` "drop-policy"). Frames in = frames
   * out + frames dropped, always.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_DROP_POLICY,
      g_param_spec_enum ("drop-policy", "Drop policy",
          "What happens to frames that come faster than the model runs",
          GST_TYPE_CUDA_BATCH_INFER_DROP_POLICY, DEFAULT_DROP_POLICY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstCudaBatchInfer:qos:
   *
   * Honour the QoS events downstream sends: a frame whose running time
   * is already past what the last one says (the sink would drop it as
   * late) is dropped on arrival, not inferred, as GstBaseTransform does,
   * counted (`frames-late`) and posted as a QoS message (`reason` "late").
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_QOS,
      g_param_spec_boolean ("qos", "QoS",
          "Drop frames downstream's QoS events say are late, uninferred",
          DEFAULT_QOS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstCudaBatchInfer:stats:
   *
   * Counters since the last READY→PAUSED, as a `cudabatchinfer-stats`
   * structure: `frames-in`, `frames-out` (pushed), `frames-dropped` (by
   * flushing seeks, state changes, failed batches, pushes downstream
   * refused, QoS and drop-policy), `frames-inferred` and `frames-skipped`
   * (the frames the model ran on, and those that rode along with an
   * earlier result: #GstCudaBatchInfer:interval; counted when their batch
   * is collected, so a frame flushed after counts in `frames-dropped`
   * too), `frames-on-device` (of the frames inferred, those that came in
   * CUDA memory and were read on the GPU, with no copy through the
   * host), `frames-late` (dropped late for
   * the sink: #GstCudaBatchInfer:qos), `frames-shed` (dropped by
   * #GstCudaBatchInfer:drop-policy), `latency` (what the element adds in
   * the LATENCY query now, ns: see the element's documentation), `batches`, `padded-frames`, `single-thread-batches` (run
   * on one thread of the CPU backend while other threads kept the cores
   * busy: see #GstCudaBatchInfer:threads), `replans`,
   * `warmup-time`, `steady-batch-time` (the median of the warm-up's timed
   * batches), `latency-batch-time` (their 90th percentile: the batch time
   * the LATENCY query adds), `fresh-allocations-after-warmup`,
   * `fresh-bytes-after-warmup`, `peak-allocated-bytes`,
   * `peak-reserved-bytes`, `reserved-bytes` (the engine's pool),
   * `output-buffer-bytes` (the element's own output buffers: a batch for
   * each batch in flight, once memory-limit has let them in),
   * `device-fresh-bytes-after-warmup` (the most the
   * GPU's free memory fell below what it was after the warm-up, memory the
   * pool cannot see; 0 on the CPU), `backend` (the backend in use, once
   * the engine is open) and, where `backend=auto` runs on the CPU,
   * `fallback-reason`: no usable GPU, an op CUDA cannot run, or what
   * failed on CUDA in the warm-up or a batch. After a warm-up,
   * `precision` (the one the model runs in: see
   * #GstCudaBatchInfer:precision) and `precision-relative-error` (the
   * accuracy check's worst output, relative to its largest float32
   * magnitude; -1 where nothing was checked: fp32) and
   * `low-precision-ops` (the convolutions and matrix products that run
   * below float32). With request pads, `streams`
   * is an array with a `cudabatchinfer-stream` structure per stream, in
   * the order the pads were requested: `pad` (sink_K), `frames-in`,
   * `frames-out`, `frames-dropped`, `frames-inferred`, `frames-skipped`,
   * `frames-late`, `frames-shed` and `queued` (results waiting for src_K's
   * task); the element's counters add up every stream's.
   *
   * A batch's `frames-out` are added once all its pushes have returned, so
   * a pad probe downstream may see a frame before it is counted; after
   * EOS has gone downstream, every frame is counted.
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Frame, batch and memory counters", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_PAD_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_BACKEND, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_CHANNEL_ORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_ALGO_SEARCH, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_SCALING, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_PRECISION, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_DROP_POLICY, 0);
}

void
gst_cuda_batch_infer_init_properties (GstCudaBatchInfer * self)
{
  guint i;

  self->batch = DEFAULT_BATCH;
  self->pad_mode = DEFAULT_PAD_MODE;
  self->warmup = DEFAULT_WARMUP;
  self->model = g_strdup (DEFAULT_MODEL);
  self->backend = DEFAULT_BACKEND;
  self->device_id = DEFAULT_DEVICE_ID;
  self->server_url = g_strdup (DEFAULT_SERVER_URL);
  self->remote_model = g_strdup (DEFAULT_REMOTE_MODEL);
  self->remote_model_version = g_strdup (DEFAULT_REMOTE_MODEL_VERSION);
  self->remote_timeout = DEFAULT_REMOTE_TIMEOUT;
  self->batch_timeout = DEFAULT_BATCH_TIMEOUT;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->memory_limit = DEFAULT_MEMORY_LIMIT;
  self->input_scale = DEFAULT_INPUT_SCALE;
  self->channel_order = DEFAULT_CHANNEL_ORDER;
  self->algo_search = DEFAULT_ALGO_SEARCH;
  self->cuda_graph = DEFAULT_CUDA_GRAPH;
  for (i = 0; i < 3; i++) {
    self->input_mean[i] = DEFAULT_INPUT_MEAN;
    self->input_std[i] = DEFAULT_INPUT_STD;
  }
  self->max_inflight = DEFAULT_MAX_INFLIGHT;
  self->threads = DEFAULT_THREADS;
  self->scaling = DEFAULT_SCALING;
  self->precision = DEFAULT_PRECISION;
  self->precision_tolerance = DEFAULT_PRECISION_TOLERANCE;
  self->interval = DEFAULT_INTERVAL;
  self->max_latency = DEFAULT_MAX_LATENCY;
  self->drop_policy = DEFAULT_DROP_POLICY;
  self->qos = DEFAULT_QOS;
}

/* A per-channel array property: 1 value for all channels, or 3, or, where
 * @n_set is given, none (unset); @n_set gets how many were given. Called
 * with the object lock; a wrong count is refused with a warning. */
static void
gst_cuda_batch_infer_set_channels_unlocked (GstCudaBatchInfer * self,
    GParamSpec * pspec, const GValue * value, gdouble out[3], guint * n_set)
{
  guint n = gst_value_array_get_size (value), c;

  if (n != 1 && n != 3 && !(n == 0 && n_set)) {
    GST_WARNING_OBJECT (self, "%s takes %s1 or 3 values, not %u: ignored",
        pspec->name, n_set ? "0, " : "", n);
    return;
  }
  for (c = 0; c < 3 && n > 0; c++)
    out[c] = g_value_get_double (gst_value_array_get_value (value,
            n == 1 ? 0 : c));
  if (n_set)
    *n_set = n;
}

/* The @n values of a per-channel array property (3, or 0 when unset). */
static void
gst_cuda_batch_infer_get_channels (GValue * value, const gdouble in[3], guint n)
{
  GValue v = G_VALUE_INIT;
  guint c;

  g_value_init (&v, G_TYPE_DOUBLE);
  for (c = 0; c < MIN (n, 3); c++) {
    g_value_set_double (&v, in[n == 1 ? 0 : c]);
    gst_value_array_append_value (value, &v);
  }
  g_value_unset (&v);
}

/* Where each plain property (a number, an enum or a boolean) lives in the
 * instance; 0 for the others. */
static const gsize plain_fields[PROP_STATS + 1] = {
  [PROP_BATCH] = G_STRUCT_OFFSET (GstCudaBatchInfer, batch),
  [PROP_PAD_MODE] = G_STRUCT_OFFSET (GstCudaBatchInfer, pad_mode),
  [PROP_WARMUP] = G_STRUCT_OFFSET (GstCudaBatchInfer, warmup),
  [PROP_BACKEND] = G_STRUCT_OFFSET (GstCudaBatchInfer, backend),
  [PROP_DEVICE_ID] = G_STRUCT_OFFSET (GstCudaBatchInfer, device_id),
  [PROP_REMOTE_TIMEOUT] = G_STRUCT_OFFSET (GstCudaBatchInfer, remote_timeout),
  [PROP_BATCH_TIMEOUT] = G_STRUCT_OFFSET (GstCudaBatchInfer, batch_timeout),
  [PROP_POST_MESSAGES] = G_STRUCT_OFFSET (GstCudaBatchInfer, post_messages),
  [PROP_MEMORY_LIMIT] = G_STRUCT_OFFSET (GstCudaBatchInfer, memory_limit),
  [PROP_INPUT_SCALE] = G_STRUCT_OFFSET (GstCudaBatchInfer, input_scale),
  [PROP_CHANNEL_ORDER] = G_STRUCT_OFFSET (GstCudaBatchInfer, channel_order),
  [PROP_ALGO_SEARCH] = G_STRUCT_OFFSET (GstCudaBatchInfer, algo_search),
  [PROP_CUDA_GRAPH] = G_STRUCT_OFFSET (GstCudaBatchInfer, cuda_graph),
  [PROP_MAX_INFLIGHT] = G_STRUCT_OFFSET (GstCudaBatchInfer, max_inflight),
  [PROP_THREADS] = G_STRUCT_OFFSET (GstCudaBatchInfer, threads),
  [PROP_SCALING] = G_STRUCT_OFFSET (GstCudaBatchInfer, scaling),
  [PROP_PRECISION] = G_STRUCT_OFFSET (GstCudaBatchInfer, precision),
  [PROP_PRECISION_TOLERANCE] = G_STRUCT_OFFSET (GstCudaBatchInfer,
      precision_tolerance),
  [PROP_INTERVAL] = G_STRUCT_OFFSET (GstCudaBatchInfer, interval),
  [PROP_MAX_LATENCY] = G_STRUCT_OFFSET (GstCudaBatchInfer, max_latency),
  [PROP_DROP_POLICY] = G_STRUCT_OFFSET (GstCudaBatchInfer, drop_policy),
  [PROP_QOS] = G_STRUCT_OFFSET (GstCudaBatchInfer, qos),
};

/* enum fields are read and written as gint */
G_STATIC_ASSERT (sizeof (GstCudaBatchInferPadMode) == sizeof (gint));
G_STATIC_ASSERT (sizeof (GstCudaBatchInferBackend) == sizeof (gint));
G_STATIC_ASSERT (sizeof (GstCudaBatchInferChannelOrder) == sizeof (gint));
G_STATIC_ASSERT (sizeof (GstCudaBatchInferAlgoSearch) == sizeof (gint));
G_STATIC_ASSERT (sizeof (GstCudaBatchInferScaling) == sizeof (gint));
G_STATIC_ASSERT (sizeof (GstCudaBatchInferPrecision) == sizeof (gint));
G_STATIC_ASSERT (sizeof (GstCudaBatchInferDropPolicy) == sizeof (gint));

/* Stores plain @value in @field, which has its type. */
static void
gst_cuda_batch_infer_set_plain (gpointer field, const GValue * value)
{
  GType type = G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value));

  if (type == G_TYPE_BOOLEAN)
    *(gboolean *) field = g_value_get_boolean (value);
  else if (type == G_TYPE_INT)
    *(gint *) field = g_value_get_int (value);
  else if (type == G_TYPE_UINT)
    *(guint *) field = g_value_get_uint (value);
  else if (type == G_TYPE_ENUM)
    *(gint *) field = g_value_get_enum (value);
  else if (type == G_TYPE_UINT64)
    *(guint64 *) field = g_value_get_uint64 (value);
  else
    *(gdouble *) field = g_value_get_double (value);
}

/* Sets @value, initialised to its property's type, from @field. */
static void
gst_cuda_batch_infer_get_plain (GValue * value, gconstpointer field)
{
  GType type = G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value));

  if (type == G_TYPE_BOOLEAN)
    g_value_set_boolean (value, *(const gboolean *) field);
  else if (type == G_TYPE_INT)
    g_value_set_int (value, *(const gint *) field);
  else if (type == G_TYPE_UINT)
    g_value_set_uint (value, *(const guint *) field);
  else if (type == G_TYPE_ENUM)
    g_value_set_enum (value, *(const gint *) field);
  else if (type == G_TYPE_UINT64)
    g_value_set_uint64 (value, *(const guint64 *) field);
  else
    g_value_set_double (value, *(const gdouble *) field);
}

static void
gst_cuda_batch_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (object);
  GstClockTime old_timeout;
  gboolean latency_changed;

  GST_OBJECT_LOCK (self);
  /* GObject does not enforce GST_PARAM_MUTABLE_READY: the element does */
  if ((pspec->flags & GST_PARAM_MUTABLE_READY)
      && GST_STATE (self) > GST_STATE_READY) {
    GST_OBJECT_UNLOCK (self);
    GST_WARNING_OBJECT (self, "property '%s' can only be changed in the NULL "
        "or READY state: ignored", pspec->name);
    return;
  }
  old_timeout = self->batch_timeout;
  switch (prop_id) {
    case PROP_WARMUP_CAPS:
      gst_caps_replace (&self->warmup_caps, g_value_get_boxed (value));
      break;
    case PROP_MODEL:
      g_free (self->model);
      self->model = g_value_dup_string (value);
      break;
    case PROP_SERVER_URL:
      g_free (self->server_url);
      self->server_url = g_value_dup_string (value);
      break;
    case PROP_REMOTE_MODEL:
      g_free (self->remote_model);
      self->remote_model = g_value_dup_string (value);
      break;
    case PROP_REMOTE_MODEL_VERSION:
      g_free (self->remote_model_version);
      self->remote_model_version = g_value_dup_string (value);
      break;
    case PROP_PRECISION_CHECK_LOCATION:
      /* "" (as gst-launch gives an empty value) is none */
      g_free (self->precision_check_location);
      self->precision_check_location = g_value_get_string (value)
          && *g_value_get_string (value) ? g_value_dup_string (value) : NULL;
      break;
    case PROP_INPUT_MEAN:
      gst_cuda_batch_infer_set_channels_unlocked (self, pspec, value,
          self->input_mean, NULL);
      break;
    case PROP_INPUT_STD:
      gst_cuda_batch_infer_set_channels_unlocked (self, pspec, value,
          self->input_std, NULL);
      break;
    case PROP_OUTPUT_SCALE:
      gst_cuda_batch_infer_set_channels_unlocked (self, pspec, value,
          self->output_scale, &self->n_output_scale);
      break;
    case PROP_OUTPUT_OFFSET:
      gst_cuda_batch_infer_set_channels_unlocked (self, pspec, value,
          self->output_offset, &self->n_output_offset);
      break;
    default:
      if (prop_id < G_N_ELEMENTS (plain_fields) && plain_fields[prop_id])
        gst_cuda_batch_infer_set_plain (G_STRUCT_MEMBER_P (self,
                plain_fields[prop_id]), value);
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  latency_changed = self->batch_timeout != old_timeout;
  GST_OBJECT_UNLOCK (self);
  /* the timeout bounds the batching latency */
  if (latency_changed)
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_latency (GST_OBJECT (self)));
}

static GstStructure *
gst_cuda_batch_infer_stats_structure (GstCudaBatchInfer * self)
{
  GstCudaBatchInferStats s;
  GstStructure *st;
  GValue *streams;

  STATS_LOCK (self);
  s = self->stats;
  s.fallback_reason = g_strdup (s.fallback_reason);
  s.server_url = g_strdup (s.server_url);
  STATS_UNLOCK (self);

  st = gst_structure_new ("cudabatchinfer-stats",
      "frames-in", G_TYPE_UINT64, s.frames_in,
      "frames-out", G_TYPE_UINT64, s.frames_out,
      "frames-dropped", G_TYPE_UINT64, s.frames_dropped,
      "frames-inferred", G_TYPE_UINT64, s.frames_inferred,
      "frames-on-device", G_TYPE_UINT64, s.frames_on_device,
      "frames-skipped", G_TYPE_UINT64, s.frames_skipped,
      "frames-late", G_TYPE_UINT64, s.frames_late,
      "frames-shed", G_TYPE_UINT64, s.frames_shed,
      "latency", G_TYPE_UINT64, gst_cuda_batch_infer_latency (self,
          s.latency_batch_time, NULL),
      "batches", G_TYPE_UINT64, s.batches,
      "padded-frames", G_TYPE_UINT64, s.padded_frames,
      "single-thread-batches", G_TYPE_UINT64, s.single_thread_batches,
      "replans", G_TYPE_UINT64, s.replans,
      "warmup-time", G_TYPE_UINT64, (guint64) s.warmup_time,
      "steady-batch-time", G_TYPE_UINT64, (guint64) s.steady_batch_time,
      "latency-batch-time", G_TYPE_UINT64, (guint64) s.latency_batch_time,
      "fresh-allocations-after-warmup", G_TYPE_UINT64,
      s.fresh_allocations_after_warmup,
      "fresh-bytes-after-warmup", G_TYPE_UINT64, s.fresh_bytes_after_warmup,
      "peak-allocated-bytes", G_TYPE_UINT64, s.peak_allocated_bytes,
      "peak-reserved-bytes", G_TYPE_UINT64, s.peak_reserved_bytes,
      "reserved-bytes", G_TYPE_UINT64, s.reserved_bytes,
      "output-buffer-bytes", G_TYPE_UINT64, s.output_buffer_bytes,
      "device-fresh-bytes-after-warmup", G_TYPE_UINT64,
      s.device_fresh_bytes_after_warmup, NULL);
  if (s.backend)
    gst_structure_set (st, "backend", G_TYPE_STRING, s.backend, NULL);
  if (s.server_url)
    gst_structure_set (st, "server-url", G_TYPE_STRING, s.server_url,
        "remote-bytes-sent", G_TYPE_UINT64, s.remote_bytes_sent,
        "remote-bytes-received", G_TYPE_UINT64, s.remote_bytes_received,
        "remote-round-trip-time", G_TYPE_UINT64,
        (guint64) s.remote_round_trip_time, NULL);
  g_free (s.server_url);
  streams = gst_cuda_batch_infer_streams_stats (self);
  if (streams) {
    gst_structure_take_value (st, "streams", streams);
    g_free (streams);
  }
  if (s.fallback_reason)
    gst_structure_set (st, "fallback-reason", G_TYPE_STRING,
        s.fallback_reason, NULL);
  if (s.precision)
    gst_structure_set (st, "precision", G_TYPE_STRING, s.precision,
        "precision-relative-error", G_TYPE_DOUBLE, s.precision_error,
        "low-precision-ops", G_TYPE_UINT, s.low_precision_ops, NULL);
  g_free (s.fallback_reason);
  return st;
}

static void
gst_cuda_batch_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (object);

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_cuda_batch_infer_stats_structure (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_WARMUP_CAPS:
      g_value_set_boxed (value, self->warmup_caps);
      break;
    case PROP_MODEL:
      g_value_set_string (value, self->model);
      break;
    case PROP_SERVER_URL:
      g_value_set_string (value, self->server_url);
      break;
    case PROP_REMOTE_MODEL:
      g_value_set_string (value, self->remote_model);
      break;
    case PROP_REMOTE_MODEL_VERSION:
      g_value_set_string (value, self->remote_model_version);
      break;
    case PROP_PRECISION_CHECK_LOCATION:
      g_value_set_string (value, self->precision_check_location);
      break;
    case PROP_INPUT_MEAN:
      gst_cuda_batch_infer_get_channels (value, self->input_mean, 3);
      break;
    case PROP_INPUT_STD:
      gst_cuda_batch_infer_get_channels (value, self->input_std, 3);
      break;
    case PROP_OUTPUT_SCALE:
      gst_cuda_batch_infer_get_channels (value, self->output_scale,
          self->n_output_scale);
      break;
    case PROP_OUTPUT_OFFSET:
      gst_cuda_batch_infer_get_channels (value, self->output_offset,
          self->n_output_offset);
      break;
    default:
      if (prop_id < G_N_ELEMENTS (plain_fields) && plain_fields[prop_id])
        gst_cuda_batch_infer_get_plain (value, G_STRUCT_MEMBER_P (self,
                plain_fields[prop_id]));
      else
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}
