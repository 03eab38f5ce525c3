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
 |[
 * gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,format=RGB,\
 *     width=320,height=240 ! cudabatchinfer model=superres.onnx batch=8 ! \
 *     videoconvert ! autovideosink
 * ]|
 * A x2 super-resolution model: 640x480 frames come out.
 *
 * Since: 1.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer.h"
#include "gstcbibatcher.h"
#include "gstcbiinflight.h"

#include <gst/video/video.h>
#include <string.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#include "cbiengine.h"
#include "cbierror.h"
#include "cbionnx.h"

/**
 * GstCudaBatchInferPadMode:
 * @GST_CUDA_BATCH_INFER_PAD_REPEAT_LAST: fill a short batch with copies of
 *   its last frame
 * @GST_CUDA_BATCH_INFER_PAD_ZERO: fill a short batch with zeros
 * @GST_CUDA_BATCH_INFER_PAD_NONE: run a short batch at its real size (a new
 *   shape: the engine plans it and may allocate); for measuring what padding
 *   saves
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_PAD_REPEAT_LAST = CBI_PAD_REPEAT_LAST,
  GST_CUDA_BATCH_INFER_PAD_ZERO = CBI_PAD_ZERO,
  GST_CUDA_BATCH_INFER_PAD_NONE = CBI_PAD_NONE,
} GstCudaBatchInferPadMode;

/**
 * GstCudaBatchInferBackend:
 * @GST_CUDA_BATCH_INFER_BACKEND_AUTO: CUDA where a GPU is usable, else the
 *   CPU (with a warning in the log)
 * @GST_CUDA_BATCH_INFER_BACKEND_CPU: oneDNN on the CPU
 * @GST_CUDA_BATCH_INFER_BACKEND_CUDA: CUDA and cuDNN; the state change fails
 *   when no GPU is usable
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_BACKEND_AUTO = CBI_BACKEND_AUTO,
  GST_CUDA_BATCH_INFER_BACKEND_CPU = CBI_BACKEND_CPU,
  GST_CUDA_BATCH_INFER_BACKEND_CUDA = CBI_BACKEND_CUDA,
} GstCudaBatchInferBackend;

/**
 * GstCudaBatchInferChannelOrder:
 * @GST_CUDA_BATCH_INFER_CHANNEL_ORDER_RGB: the model's channels are red,
 *   green, blue
 * @GST_CUDA_BATCH_INFER_CHANNEL_ORDER_BGR: blue, green, red (models trained
 *   on OpenCV images)
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_CHANNEL_ORDER_RGB,
  GST_CUDA_BATCH_INFER_CHANNEL_ORDER_BGR,
} GstCudaBatchInferChannelOrder;

/**
 * GstCudaBatchInferAlgoSearch:
 * @GST_CUDA_BATCH_INFER_ALGO_SEARCH_HEURISTIC: take the algorithm cuDNN's
 *   heuristics rank first: a fast warm-up
 * @GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE: time every candidate
 *   algorithm during the warm-up and keep the fastest
 *
 * How the CUDA backend picks each convolution's algorithm.
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_ALGO_SEARCH_HEURISTIC,
  GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE,
} GstCudaBatchInferAlgoSearch;

typedef struct
{
  guint64 frames_in;
  guint64 frames_out;
  guint64 frames_dropped;
  guint64 batches;
  guint64 padded_frames;
  guint64 replans;
  GstClockTime warmup_time;
  GstClockTime steady_batch_time;
  guint64 fresh_allocations_after_warmup;
  guint64 fresh_bytes_after_warmup;
  guint64 peak_allocated_bytes;
  guint64 peak_reserved_bytes;
  guint64 reserved_bytes;
  guint64 output_buffer_bytes;
} GstCudaBatchInferStats;

struct _GstCudaBatchInfer
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties: OBJECT_LOCK */
  guint batch;
  GstCudaBatchInferPadMode pad_mode;
  gboolean warmup;
  GstCaps *warmup_caps;
  gchar *model;
  GstCudaBatchInferBackend backend;
  gint device_id;
  GstClockTime batch_timeout;
  gboolean post_messages;
  guint64 memory_limit;
  gdouble input_scale;
  gdouble input_mean[3];
  gdouble input_std[3];
  gdouble output_scale[3];
  guint n_output_scale;         /* 0: unset, the inverse of the input's */
  gdouble output_offset[3];
  guint n_output_offset;        /* likewise */
  GstCudaBatchInferChannelOrder channel_order;
  GstCudaBatchInferAlgoSearch algo_search;
  gboolean cuda_graph;
  guint max_inflight;
  guint threads;

  /* what queries, from any thread, read of the run: OBJECT_LOCK; written
   * when the engine comes and goes (start, stop) */
  gboolean resizes;             /* its image output has another size than
                                 * its input: caps queries drop the size */
  guint query_batch;            /* run_batch while the engine is up, else
                                 * 0: the latency query's batch size */

  /* streaming state: the sink pad's STREAM_LOCK; set up and torn down in
   * change_state while no data flows */
  CbiEngine *engine;
  const gchar *backend_name;    /* interned once: the meta copies it per frame */
  guint run_batch;              /* batch size for this run */
  guint64 run_memory_limit;     /* the engine's and the output buffers' */
  gboolean run_warmup;
  gfloat run_scale[3];          /* per model channel, from the properties */
  gfloat run_bias[3];
  gfloat run_out_scale[3];
  gfloat run_out_offset[3];
  gboolean run_bgr;
  GstCbiBatcher batcher;
  guint run_inflight;
  GstVideoInfo in_info;
  GstVideoInfo out_info;
  CbiOutputInfo out;            /* what the model gives for in_info */
  GstBufferPool *tensor_pool;   /* tensor outputs: their elements */
  GstBatchTensor tensors[CBI_MAX_OUTPUTS];      /* their layout in a buffer */
  gboolean have_caps;
  GstCaps *refused_caps;        /* refused with an error posted: upstream
                                 * resends sticky caps before every buffer,
                                 * and the same caps fail at once, without
                                 * a second warm-up or error */
  GstSegment segment;
  guint warm_width;             /* shape of the last warm-up, 0 = none */
  guint warm_height;
  guint64 batch_index;
  GstBufferPool *out_pool;

  /* batches in flight, pushed in order by the src pad task:
   * inflight_lock */
  GMutex inflight_lock;
  GCond inflight_cond;          /* a batch came in, or one left */
  GstCbiInflight inflight;
  gboolean inflight_flushing;
  gboolean src_active;          /* the tasks may run: FLUSH_STOP restarts
                                 * them only then */
  GstFlowReturn src_flow;       /* what the last failed push returned */
  gint inflight_epoch;          /* bumped when batches in flight are
                                 * dropped from under the src pad task (a
                                 * flush it caused itself); atomic */
  GThread *push_thread;         /* the src pad task's; atomic */

  /* submits a partial batch when its batch-timeout passes */
  GstTask *timeout_task;
  GRecMutex timeout_task_lock;

  /* timeout of a partial batch: timer_lock */
  GMutex timer_lock;
  GCond timer_cond;
  gboolean timer_flushing;
  GstClockTime timer_deadline;  /* clock time; NONE when not armed */
  guint64 timer_generation;
  GstClockID timer_id;

  /* stats_lock: written by the streaming thread, read by the property and
   * the latency query */
  GMutex stats_lock;
  GstCudaBatchInferStats stats;
  gint fps_n;                   /* from the caps; 0 when unknown */
  gint fps_d;
};

/* every model output fits one tensor meta */
G_STATIC_ASSERT (CBI_MAX_OUTPUTS <= GST_BATCH_TENSOR_MAX_TENSORS);

GST_DEBUG_CATEGORY_STATIC (gst_cuda_batch_infer_debug);
#define GST_CAT_DEFAULT gst_cuda_batch_infer_debug

GST_ELEMENT_REGISTER_DEFINE (cudabatchinfer, "cudabatchinfer",
    GST_RANK_NONE, GST_TYPE_CUDA_BATCH_INFER);

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
  PROP_STATS,
};

enum
{
  SIGNAL_FLUSH,
  LAST_SIGNAL
};

#define DEFAULT_BATCH 16
#define MAX_BATCH 256
#define DEFAULT_PAD_MODE GST_CUDA_BATCH_INFER_PAD_REPEAT_LAST
#define DEFAULT_WARMUP TRUE
#define DEFAULT_MODEL NULL
#define DEFAULT_BACKEND GST_CUDA_BATCH_INFER_BACKEND_AUTO
#define DEFAULT_DEVICE_ID 0
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
#define MAX_THREADS 1024

#define VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, RGBA, BGRA }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

static guint signals[LAST_SIGNAL];

#define gst_cuda_batch_infer_parent_class parent_class
G_DEFINE_TYPE (GstCudaBatchInfer, gst_cuda_batch_infer, GST_TYPE_ELEMENT);

#define GST_TYPE_CUDA_BATCH_INFER_PAD_MODE \
  (gst_cuda_batch_infer_pad_mode_get_type ())
static GType
gst_cuda_batch_infer_pad_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_BATCH_INFER_PAD_REPEAT_LAST,
        "Pad a short batch with copies of its last frame", "repeat-last"},
    {GST_CUDA_BATCH_INFER_PAD_ZERO, "Pad a short batch with zeros", "zero"},
    {GST_CUDA_BATCH_INFER_PAD_NONE,
        "Run a short batch at its real size (new shape: re-plan)", "none"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaBatchInferPadMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

#define GST_TYPE_CUDA_BATCH_INFER_BACKEND \
  (gst_cuda_batch_infer_backend_get_type ())
static GType
gst_cuda_batch_infer_backend_get_type (void)
{
  static GType type = 0;
  static GEnumValue values[] = {
    {GST_CUDA_BATCH_INFER_BACKEND_AUTO,
        "CUDA where a GPU is usable, else the CPU", "auto"},
    {GST_CUDA_BATCH_INFER_BACKEND_CPU, "oneDNN on the CPU", "cpu"},
    {GST_CUDA_BATCH_INFER_BACKEND_CUDA, "CUDA and cuDNN on an NVIDIA GPU",
        "cuda"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t;
    if (!cbi_engine_has_cuda ())
      values[2].value_name = "CUDA and cuDNN on an NVIDIA GPU (compiled out)";
    t = g_enum_register_static ("GstCudaBatchInferBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

#define GST_TYPE_CUDA_BATCH_INFER_CHANNEL_ORDER \
  (gst_cuda_batch_infer_channel_order_get_type ())
static GType
gst_cuda_batch_infer_channel_order_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_BATCH_INFER_CHANNEL_ORDER_RGB, "Red, green, blue", "rgb"},
    {GST_CUDA_BATCH_INFER_CHANNEL_ORDER_BGR, "Blue, green, red", "bgr"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaBatchInferChannelOrder",
        values);
    g_once_init_leave (&type, t);
  }
  return type;
}

#define GST_TYPE_CUDA_BATCH_INFER_ALGO_SEARCH \
  (gst_cuda_batch_infer_algo_search_get_type ())
static GType
gst_cuda_batch_infer_algo_search_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_BATCH_INFER_ALGO_SEARCH_HEURISTIC, "cuDNN's heuristics",
        "heuristic"},
    {GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE, "Time every algorithm",
        "exhaustive"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaBatchInferAlgoSearch", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void gst_cuda_batch_infer_finalize (GObject * object);
static void gst_cuda_batch_infer_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_cuda_batch_infer_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static GstStateChangeReturn gst_cuda_batch_infer_change_state (GstElement *
    element, GstStateChange transition);
static GstFlowReturn gst_cuda_batch_infer_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buffer);
static gboolean gst_cuda_batch_infer_sink_event (GstPad * pad,
    GstObject * parent, GstEvent * event);
static gboolean gst_cuda_batch_infer_sink_query (GstPad * pad,
    GstObject * parent, GstQuery * query);
static gboolean gst_cuda_batch_infer_src_query (GstPad * pad,
    GstObject * parent, GstQuery * query);
static gboolean gst_cuda_batch_infer_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);
static void gst_cuda_batch_infer_flush (GstCudaBatchInfer * self);
static void gst_cuda_batch_infer_timeout_loop (GstCudaBatchInfer * self);

static void
gst_cuda_batch_infer_class_init (GstCudaBatchInferClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->finalize = gst_cuda_batch_infer_finalize;
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
   * #GstCudaBatchInfer::flush signal) is filled up. Padded results never
   * leave the element.
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
   * the frames passed through. A model the engine cannot run fails the
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
   * Where the network runs.
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
   * GstCudaBatchInfer:batch-timeout:
   *
   * For live sources: when the oldest pending frame has waited this long
   * since its running time on the pipeline clock, or since it reached the
   * element if that was earlier (a source running ahead of the clock), the
   * partial batch is padded and processed.
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
   * runs, the warm-up's test frames. Each is checked before it is
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
   * may use. Idle, these threads spin only briefly and then sleep, so the
   * decoder, converters and encoder of the pipeline keep the cores
   * between batches (the plugin sets `GOMP_SPINCOUNT=3000` when it loads,
   * against OpenMP's default 300000, unless the application set
   * `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT`, or loaded OpenMP first). The
   * CUDA backend ignores it.
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
   * GstCudaBatchInfer:stats:
   *
   * Counters since the last READY→PAUSED, as a `cudabatchinfer-stats`
   * structure: `frames-in`, `frames-out` (pushed), `frames-dropped` (by
   * flushing seeks, state changes, failed batches and pushes downstream
   * refused), `batches`, `padded-frames`, `replans`,
   * `warmup-time`, `steady-batch-time`, `fresh-allocations-after-warmup`,
   * `fresh-bytes-after-warmup`, `peak-allocated-bytes`,
   * `peak-reserved-bytes`, `reserved-bytes` (the engine's pool), and
   * `output-buffer-bytes` (the element's own output buffers: a batch for
   * each batch in flight).
   *
   * Since: 1.0
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Frame, batch and memory counters", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstCudaBatchInfer::flush:
   * @self: the element
   *
   * Action signal: pads the pending partial batch, processes it and pushes
   * its results now.
   *
   * Since: 1.0
   */
  signals[SIGNAL_FLUSH] = g_signal_new_class_handler ("flush",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_cuda_batch_infer_flush), NULL, NULL, NULL,
      G_TYPE_NONE, 0);

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_change_state);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Batched CUDA inference", "Filter/Effect/Video",
      "Runs a neural network on batches of video frames, with warm-up and "
      "last-batch padding", "cudabatchinfer developers");

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_PAD_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_BACKEND, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_CHANNEL_ORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_BATCH_INFER_ALGO_SEARCH, 0);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_batch_infer_debug, "cudabatchinfer", 0,
      "cudabatchinfer element");
}

static void
gst_cuda_batch_infer_init (GstCudaBatchInfer * self)
{
  guint i;

  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_sink_query));
  GST_PAD_SET_PROXY_CAPS (self->sinkpad);
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_query_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_src_query));
  gst_pad_set_activatemode_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_cuda_batch_infer_src_activate_mode));
  GST_PAD_SET_PROXY_CAPS (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->batch = DEFAULT_BATCH;
  self->pad_mode = DEFAULT_PAD_MODE;
  self->warmup = DEFAULT_WARMUP;
  self->model = g_strdup (DEFAULT_MODEL);
  self->backend = DEFAULT_BACKEND;
  self->device_id = DEFAULT_DEVICE_ID;
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

  g_mutex_init (&self->timer_lock);
  g_cond_init (&self->timer_cond);
  g_mutex_init (&self->stats_lock);
  g_mutex_init (&self->inflight_lock);
  g_cond_init (&self->inflight_cond);
  self->timer_deadline = GST_CLOCK_TIME_NONE;
  g_rec_mutex_init (&self->timeout_task_lock);
  self->timeout_task = gst_task_new ((GstTaskFunction)
      gst_cuda_batch_infer_timeout_loop, self, NULL);
  gst_task_set_lock (self->timeout_task, &self->timeout_task_lock);
}

static void
gst_cuda_batch_infer_finalize (GObject * object)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (object);

  gst_clear_caps (&self->warmup_caps);
  g_free (self->model);
  g_mutex_clear (&self->timer_lock);
  g_cond_clear (&self->timer_cond);
  g_mutex_clear (&self->stats_lock);
  g_mutex_clear (&self->inflight_lock);
  g_cond_clear (&self->inflight_cond);
  gst_object_unref (self->timeout_task);
  g_rec_mutex_clear (&self->timeout_task_lock);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* A per-channel array property: 1 value for all channels, or 3, or, where
 * @n_set is given, none (unset); @n_set gets how many were given. Called
 * with the object lock; a wrong count is refused with a warning. */
static void
gst_cuda_batch_infer_set_channels (GstCudaBatchInfer * self,
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

static void
gst_cuda_batch_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (object);
  gboolean latency_changed = FALSE;

  GST_OBJECT_LOCK (self);
  /* GObject does not enforce GST_PARAM_MUTABLE_READY: the element does */
  if ((pspec->flags & GST_PARAM_MUTABLE_READY)
      && GST_STATE (self) > GST_STATE_READY) {
    GST_OBJECT_UNLOCK (self);
    GST_WARNING_OBJECT (self, "property '%s' can only be changed in the NULL "
        "or READY state: ignored", pspec->name);
    return;
  }
  switch (prop_id) {
    case PROP_BATCH:
      self->batch = g_value_get_uint (value);
      break;
    case PROP_PAD_MODE:
      self->pad_mode = g_value_get_enum (value);
      break;
    case PROP_WARMUP:
      self->warmup = g_value_get_boolean (value);
      break;
    case PROP_WARMUP_CAPS:
      gst_caps_replace (&self->warmup_caps, g_value_get_boxed (value));
      break;
    case PROP_MODEL:
      g_free (self->model);
      self->model = g_value_dup_string (value);
      break;
    case PROP_BACKEND:
      self->backend = g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_BATCH_TIMEOUT:
      latency_changed = self->batch_timeout != g_value_get_uint64 (value);
      self->batch_timeout = g_value_get_uint64 (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
      break;
    case PROP_MEMORY_LIMIT:
      self->memory_limit = g_value_get_uint64 (value);
      break;
    case PROP_INPUT_SCALE:
      self->input_scale = g_value_get_double (value);
      break;
    case PROP_INPUT_MEAN:
      gst_cuda_batch_infer_set_channels (self, pspec, value, self->input_mean,
          NULL);
      break;
    case PROP_INPUT_STD:
      gst_cuda_batch_infer_set_channels (self, pspec, value, self->input_std,
          NULL);
      break;
    case PROP_OUTPUT_SCALE:
      gst_cuda_batch_infer_set_channels (self, pspec, value,
          self->output_scale, &self->n_output_scale);
      break;
    case PROP_OUTPUT_OFFSET:
      gst_cuda_batch_infer_set_channels (self, pspec, value,
          self->output_offset, &self->n_output_offset);
      break;
    case PROP_CHANNEL_ORDER:
      self->channel_order = g_value_get_enum (value);
      break;
    case PROP_ALGO_SEARCH:
      self->algo_search = g_value_get_enum (value);
      break;
    case PROP_CUDA_GRAPH:
      self->cuda_graph = g_value_get_boolean (value);
      break;
    case PROP_MAX_INFLIGHT:
      self->max_inflight = g_value_get_uint (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
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

  g_mutex_lock (&self->stats_lock);
  s = self->stats;
  g_mutex_unlock (&self->stats_lock);

  return gst_structure_new ("cudabatchinfer-stats",
      "frames-in", G_TYPE_UINT64, s.frames_in,
      "frames-out", G_TYPE_UINT64, s.frames_out,
      "frames-dropped", G_TYPE_UINT64, s.frames_dropped,
      "batches", G_TYPE_UINT64, s.batches,
      "padded-frames", G_TYPE_UINT64, s.padded_frames,
      "replans", G_TYPE_UINT64, s.replans,
      "warmup-time", G_TYPE_UINT64, (guint64) s.warmup_time,
      "steady-batch-time", G_TYPE_UINT64, (guint64) s.steady_batch_time,
      "fresh-allocations-after-warmup", G_TYPE_UINT64,
      s.fresh_allocations_after_warmup,
      "fresh-bytes-after-warmup", G_TYPE_UINT64, s.fresh_bytes_after_warmup,
      "peak-allocated-bytes", G_TYPE_UINT64, s.peak_allocated_bytes,
      "peak-reserved-bytes", G_TYPE_UINT64, s.peak_reserved_bytes,
      "reserved-bytes", G_TYPE_UINT64, s.reserved_bytes,
      "output-buffer-bytes", G_TYPE_UINT64, s.output_buffer_bytes, NULL);
}

static void
gst_cuda_batch_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (object);

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_cuda_batch_infer_stats_structure (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_BATCH:
      g_value_set_uint (value, self->batch);
      break;
    case PROP_PAD_MODE:
      g_value_set_enum (value, self->pad_mode);
      break;
    case PROP_WARMUP:
      g_value_set_boolean (value, self->warmup);
      break;
    case PROP_WARMUP_CAPS:
      g_value_set_boxed (value, self->warmup_caps);
      break;
    case PROP_MODEL:
      g_value_set_string (value, self->model);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_BATCH_TIMEOUT:
      g_value_set_uint64 (value, self->batch_timeout);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_MEMORY_LIMIT:
      g_value_set_uint64 (value, self->memory_limit);
      break;
    case PROP_INPUT_SCALE:
      g_value_set_double (value, self->input_scale);
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
    case PROP_CHANNEL_ORDER:
      g_value_set_enum (value, self->channel_order);
      break;
    case PROP_ALGO_SEARCH:
      g_value_set_enum (value, self->algo_search);
      break;
    case PROP_CUDA_GRAPH:
      g_value_set_boolean (value, self->cuda_graph);
      break;
    case PROP_MAX_INFLIGHT:
      g_value_set_uint (value, self->max_inflight);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* Posts @error (from the engine) as an element error for @step. */
static void
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
    default:
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED, ("%s", text), (NULL));
      break;
  }
  g_free (text);
}

/* Timer of a partial batch. */

static void
gst_cuda_batch_infer_timer_disarm (GstCudaBatchInfer * self)
{
  g_mutex_lock (&self->timer_lock);
  self->timer_deadline = GST_CLOCK_TIME_NONE;
  self->timer_generation++;
  if (self->timer_id)
    gst_clock_id_unschedule (self->timer_id);
  g_mutex_unlock (&self->timer_lock);
}

/* Called when the first frame of a batch, with timestamp @pts, arrives.
 * The batch times out @timeout after the frame's running time on the
 * pipeline clock: a frame that reached us late (downstream was busy) has
 * already waited that long. It never waits more than @timeout from now. */
static void
gst_cuda_batch_infer_timer_arm (GstCudaBatchInfer * self, GstClockTime pts)
{
  GstClockTime timeout, base_time, now, running, deadline;
  GstClock *clock;

  GST_OBJECT_LOCK (self);
  timeout = self->batch_timeout;
  base_time = GST_ELEMENT_CAST (self)->base_time;
  clock = GST_ELEMENT_CLOCK (self) ? gst_object_ref (GST_ELEMENT_CLOCK (self))
      : NULL;
  GST_OBJECT_UNLOCK (self);
  if (timeout == 0 || clock == NULL) {
    gst_clear_object (&clock);
    return;
  }

  now = gst_clock_get_time (clock);
  deadline = now + timeout;
  running = self->segment.format == GST_FORMAT_TIME ?
      gst_segment_to_running_time (&self->segment, GST_FORMAT_TIME, pts) :
      GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID (running))
    deadline = MIN (deadline, base_time + running + timeout);

  g_mutex_lock (&self->timer_lock);
  self->timer_deadline = deadline;
  self->timer_generation++;
  GST_LOG_OBJECT (self, "batch times out at %" GST_TIME_FORMAT,
      GST_TIME_ARGS (self->timer_deadline));
  g_cond_signal (&self->timer_cond);
  g_mutex_unlock (&self->timer_lock);
  gst_object_unref (clock);
}

static void
gst_cuda_batch_infer_timer_set_flushing (GstCudaBatchInfer * self,
    gboolean flushing)
{
  g_mutex_lock (&self->timer_lock);
  self->timer_flushing = flushing;
  self->timer_deadline = GST_CLOCK_TIME_NONE;
  self->timer_generation++;
  if (self->timer_id)
    gst_clock_id_unschedule (self->timer_id);
  g_cond_broadcast (&self->timer_cond);
  g_mutex_unlock (&self->timer_lock);
}

/* Batch processing. */

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

  g_mutex_lock (&self->stats_lock);
  s->batches++;
  s->padded_frames += padded;
  s->replans += r->replanned ? 1 : 0;
  s->fresh_allocations_after_warmup += r->fresh_allocations;
  s->fresh_bytes_after_warmup += r->fresh_bytes;
  s->peak_allocated_bytes = MAX (s->peak_allocated_bytes,
      r->pool.peak_allocated_bytes);
  s->peak_reserved_bytes = MAX (s->peak_reserved_bytes,
      r->pool.peak_reserved_bytes);
  s->reserved_bytes = r->pool.reserved_bytes;
  g_mutex_unlock (&self->stats_lock);
}

/* Maps @batch's frames and, for an image output, its output buffers.
 * Returns: whether all were mapped (batch->mapped says how many were). */
static gboolean
gst_cuda_batch_infer_map (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  guint i;

  for (i = 0; i < batch->n; i++) {
    if (!gst_video_frame_map (&batch->in_frames[i], &self->in_info,
            batch->frames[i], GST_MAP_READ))
      return FALSE;
    batch->in_data[i] = GST_VIDEO_FRAME_PLANE_DATA (&batch->in_frames[i], 0);
    batch->in_strides[i] =
        GST_VIDEO_FRAME_PLANE_STRIDE (&batch->in_frames[i], 0);
    if (self->out.image) {
      if (!gst_video_frame_map (&batch->out_frames[i], &self->out_info,
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

  batch->frames[i] = NULL;
  if (gst_buffer_add_batch_tensor_meta (out, batch->tensor_data[i],
          self->out.n_outputs, self->tensors) == NULL)
    GST_WARNING_OBJECT (self, "could not attach the tensors of frame %u", i);
  gst_clear_buffer (&batch->tensor_data[i]);
  return out;
}

static GstMessage *
gst_cuda_batch_infer_batch_message (GstCudaBatchInfer * self,
    GstBatchMemoryMeta * meta)
{
  GstStructure *s = gst_batch_memory_meta_to_structure (meta);

  gst_structure_remove_field (s, "frame-index");
  return gst_message_new_element (GST_OBJECT (self), s);
}

/* Gives the batch's engine slot back and empties it, counting the frames
 * that will not come out. */
static void
gst_cuda_batch_infer_discard (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  guint lost;

  if (batch->submitted)
    cbi_engine_release (self->engine, batch->ticket);
  lost = gst_cbi_batch_reset (batch);
  if (lost == 0)
    return;
  GST_DEBUG_OBJECT (self, "dropping %u frames of batch %" G_GUINT64_FORMAT,
      lost, batch->index);
  g_mutex_lock (&self->stats_lock);
  self->stats.frames_dropped += lost;
  g_mutex_unlock (&self->stats_lock);
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

  for (; self->out.image && batch->n_out < batch->n; batch->n_out++) {
    ret = gst_buffer_pool_acquire_buffer (self->out_pool,
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
  return GST_FLOW_OK;
}

static void
gst_cuda_batch_infer_fill_meta (GstCudaBatchInfer * self,
    GstBatchMemoryMeta * m, const GstCbiBatch * batch, guint frame_index)
{
  const CbiBatchReport *r = &batch->report;

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
  m->batch_time = r->time_ns;
  m->backend = self->backend_name;
  m->device_id = cbi_engine_device_id (self->engine);
}

/* Waits for the engine to finish @batch, then makes its output buffers:
 * results, timestamps and metas. Called from the src pad task, or right
 * after the submission where the engine works synchronously. Touches only
 * state that changes while nothing is in flight. */
static GstFlowReturn
gst_cuda_batch_infer_collect (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  const gfloat *outputs[CBI_MAX_OUTPUTS];
  GError *error = NULL;
  gboolean post;
  guint i;

  if (!cbi_engine_collect (self->engine, batch->ticket, &batch->fb,
          &batch->report, &error))
    return gst_cuda_batch_infer_batch_failed (self, batch, error);
  gst_cbi_batch_unmap (batch);

  /* tensor outputs are read once, then sliced per frame */
  for (i = 0; !self->out.image && i < self->out.n_outputs; i++) {
    CbiShape shape;
    if ((outputs[i] = cbi_engine_get_output (self->engine, i, &shape,
                &error)) == NULL) {
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
    gst_cuda_batch_infer_fill_meta (self, meta, batch, i);
    if (i == 0 && post)
      batch->message = gst_cuda_batch_infer_batch_message (self, meta);
  }
  gst_cuda_batch_infer_update_stats (self, &batch->report,
      batch->fb.n_slots - batch->n);
  batch->collected = TRUE;
  return GST_FLOW_OK;
}

/* Pushes a collected batch's buffers, in order, one push per frame and not
 * a buffer list: downstream gets each buffer writable, so an in-place
 * element after us does not copy it, and no list is allocated per batch. */
static GstFlowReturn
gst_cuda_batch_infer_push_batch (GstCudaBatchInfer * self, GstCbiBatch * batch,
    gint epoch)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint i, pushed = 0, refused = 0;

  /* posted before the frames: a sync handler sees the batch first */
  if (batch->message) {
    /* ours no more before the handlers run: one may flush the batch */
    GstMessage *message = g_steal_pointer (&batch->message);
    gst_element_post_message (GST_ELEMENT (self), message);
  }
  for (i = 0; ret == GST_FLOW_OK; i++) {
    GstBuffer *out;
    /* flushed from under us by what the message or a push led to: the
     * rest of the batch is gone, and counted */
    if (epoch != g_atomic_int_get (&self->inflight_epoch)) {
      ret = GST_FLOW_FLUSHING;
      break;
    }
    if (i == batch->n_out)
      break;
    out = batch->out_buffers[i];
    batch->out_buffers[i] = NULL;
    ret = gst_pad_push (self->srcpad, out);
    if (ret == GST_FLOW_OK)
      pushed++;
    else
      refused++;
  }
  /* the rest of the batch is counted when it is discarded */
  g_mutex_lock (&self->stats_lock);
  self->stats.frames_out += pushed;
  self->stats.frames_dropped += refused;
  g_mutex_unlock (&self->stats_lock);
  return ret;
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

  g_mutex_lock (&self->inflight_lock);
  while (!self->inflight_flushing && self->src_flow == GST_FLOW_OK
      && (batch = gst_cbi_inflight_next (&self->inflight)) == NULL && may_wait)
    g_cond_wait (&self->inflight_cond, &self->inflight_lock);
  ret = self->inflight_flushing ? GST_FLOW_FLUSHING : self->src_flow;
  g_mutex_unlock (&self->inflight_lock);
  if (ret == GST_FLOW_OK && batch == NULL)
    return GST_FLOW_OK;
  gst_cuda_batch_infer_timer_disarm (self);
  if (ret != GST_FLOW_OK) {
    /* flushing, or downstream refused what went before */
    dropped = gst_cbi_batcher_drop (&self->batcher);
    g_mutex_lock (&self->stats_lock);
    self->stats.frames_dropped += dropped;
    g_mutex_unlock (&self->stats_lock);
    GST_DEBUG_OBJECT (self, "dropping %u pending frames: %s", dropped,
        gst_flow_get_name (ret));
    return ret;
  }

  GST_OBJECT_LOCK (self);
  pad_mode = self->pad_mode;
  GST_OBJECT_UNLOCK (self);
  batch->n = gst_cbi_batcher_take (&self->batcher, &batch->frames);
  batch->index = self->batch_index++;
  ret = gst_cuda_batch_infer_submit (self, batch, pad_mode, reason);
  if (ret == GST_FLOW_OK && !cbi_engine_is_async (self->engine))
    ret = gst_cuda_batch_infer_collect (self, batch);
  if (ret != GST_FLOW_OK) {
    gst_cuda_batch_infer_discard (self, batch);
    return ret;
  }

  g_mutex_lock (&self->inflight_lock);
  gst_cbi_inflight_push (&self->inflight);
  g_cond_broadcast (&self->inflight_cond);
  g_mutex_unlock (&self->inflight_lock);
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_cuda_batch_infer_process (GstCudaBatchInfer * self, const gchar * reason)
{
  return gst_cuda_batch_infer_process_full (self, reason, TRUE);
}

/* Submits the pending frames, then waits until every batch in flight has
 * been pushed: what a drain point (EOS, a serialised event, new caps, a
 * drain query) needs before it goes on. */
static GstFlowReturn
gst_cuda_batch_infer_drain (GstCudaBatchInfer * self, const gchar * reason)
{
  GstFlowReturn ret = gst_cuda_batch_infer_process (self, reason);

  g_mutex_lock (&self->inflight_lock);
  while (!self->inflight_flushing && self->inflight.count > 0)
    g_cond_wait (&self->inflight_cond, &self->inflight_lock);
  if (ret == GST_FLOW_OK)
    ret = self->inflight_flushing ? GST_FLOW_FLUSHING : self->src_flow;
  g_mutex_unlock (&self->inflight_lock);
  return ret;
}

/* Empties every batch in flight without pushing it. Only while the src pad
 * task is paused or stopped. */
static void
gst_cuda_batch_infer_discard_inflight (GstCudaBatchInfer * self)
{
  GstCbiBatch *batch;

  g_mutex_lock (&self->inflight_lock);
  while ((batch = gst_cbi_inflight_peek (&self->inflight))) {
    gst_cuda_batch_infer_discard (self, batch);
    gst_cbi_inflight_pop (&self->inflight);
  }
  g_atomic_int_inc (&self->inflight_epoch);
  g_cond_broadcast (&self->inflight_cond);
  g_mutex_unlock (&self->inflight_lock);
}

/* Wakes whatever waits on the batches in flight and the timer. */
static void
gst_cuda_batch_infer_start_flushing (GstCudaBatchInfer * self)
{
  gst_cuda_batch_infer_timer_set_flushing (self, TRUE);
  g_mutex_lock (&self->inflight_lock);
  self->inflight_flushing = TRUE;
  g_cond_broadcast (&self->inflight_cond);
  g_mutex_unlock (&self->inflight_lock);
}

static void gst_cuda_batch_infer_push_loop (GstCudaBatchInfer * self);

/* Clears the flushing state and (re)starts both tasks, unless the src pad
 * was deactivated meanwhile: under the lock that deactivation takes. */
static gboolean
gst_cuda_batch_infer_stop_flushing (GstCudaBatchInfer * self)
{
  gboolean ok = TRUE;

  g_mutex_lock (&self->inflight_lock);
  if (self->src_active) {
    self->inflight_flushing = FALSE;
    self->src_flow = GST_FLOW_OK;
    gst_cuda_batch_infer_timer_set_flushing (self, FALSE);
    ok = gst_task_start (self->timeout_task)
        && gst_pad_start_task (self->srcpad,
        (GstTaskFunction) gst_cuda_batch_infer_push_loop, self, NULL);
  }
  g_mutex_unlock (&self->inflight_lock);
  return ok;
}

/* The src pad task: collects the oldest batch in flight (waiting for the
 * device), pushes it, and frees its place for the next submission. */
static void
gst_cuda_batch_infer_push_loop (GstCudaBatchInfer * self)
{
  GstFlowReturn ret;
  GstCbiBatch *batch;
  gint epoch;

  g_mutex_lock (&self->inflight_lock);
  g_atomic_pointer_set (&self->push_thread, g_thread_self ());
  while (!self->inflight_flushing
      && (batch = gst_cbi_inflight_peek (&self->inflight)) == NULL)
    g_cond_wait (&self->inflight_cond, &self->inflight_lock);
  if (self->inflight_flushing) {
    /* under the lock: a FLUSH_STOP that clears the flag restarts the task
     * after this pause, never before it */
    g_atomic_pointer_set (&self->push_thread, NULL);
    gst_pad_pause_task (self->srcpad);
    g_mutex_unlock (&self->inflight_lock);
    return;
  }
  /* downstream refused a batch: the later ones are dropped, not pushed */
  ret = self->src_flow;
  epoch = g_atomic_int_get (&self->inflight_epoch);
  g_mutex_unlock (&self->inflight_lock);

  if (ret == GST_FLOW_OK && !batch->collected)
    ret = gst_cuda_batch_infer_collect (self, batch);
  if (ret == GST_FLOW_OK)
    ret = gst_cuda_batch_infer_push_batch (self, batch, epoch);
  else
    GST_DEBUG_OBJECT (self, "dropping batch %" G_GUINT64_FORMAT ": %s",
        batch->index, gst_flow_get_name (ret));

  g_mutex_lock (&self->inflight_lock);
  /* a flush made from this thread (downstream, a sync bus handler) may
   * have dropped the batch already, and its place may hold the next */
  if (epoch == g_atomic_int_get (&self->inflight_epoch)) {
    gst_cuda_batch_infer_discard (self, batch);
    gst_cbi_inflight_pop (&self->inflight);
    /* the streaming thread returns it upstream with the next frame */
    if (ret != GST_FLOW_OK && self->src_flow == GST_FLOW_OK)
      self->src_flow = ret;
  }
  g_cond_broadcast (&self->inflight_cond);
  g_mutex_unlock (&self->inflight_lock);
}

static GstFlowReturn
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
  g_mutex_lock (&self->inflight_lock);
  ret = self->src_flow;
  g_mutex_unlock (&self->inflight_lock);
  if (ret != GST_FLOW_OK) {
    /* a batch pushed by the src pad task failed downstream */
    g_mutex_lock (&self->stats_lock);
    self->stats.frames_in++;
    self->stats.frames_dropped++;
    g_mutex_unlock (&self->stats_lock);
    gst_buffer_unref (buffer);
    return ret;
  }

  GST_LOG_OBJECT (self, "frame %" GST_TIME_FORMAT,
      GST_TIME_ARGS (GST_BUFFER_PTS (buffer)));
  g_mutex_lock (&self->stats_lock);
  self->stats.frames_in++;
  g_mutex_unlock (&self->stats_lock);

  pts = GST_BUFFER_PTS (buffer);
  if (gst_cbi_batcher_push (&self->batcher, buffer))
    return gst_cuda_batch_infer_process (self, "full");
  if (self->batcher.count == 1)
    gst_cuda_batch_infer_timer_arm (self, pts);
  return GST_FLOW_OK;
}

/* The flush action signal: submits the partial batch from the caller's
 * thread, serialised with the streaming thread by the stream lock, and
 * returns once it is pushed. From the src pad task itself (a sync bus
 * handler, or downstream in its chain) it neither blocks nor waits: it
 * submits if the streaming thread is not busy and a place is free. */
static void
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
  if (self->engine && gst_pad_is_active (self->sinkpad)) {
    if (in_push_thread)
      gst_cuda_batch_infer_process_full (self, "flush signal", FALSE);
    else
      gst_cuda_batch_infer_drain (self, "flush signal");
  }
  GST_PAD_STREAM_UNLOCK (self->sinkpad);
}

/* The timeout task: submits a partial batch when its deadline passes on
 * the pipeline clock. */
static void
gst_cuda_batch_infer_timeout_loop (GstCudaBatchInfer * self)
{
  GstClockTime deadline;
  GstClock *clock = NULL;
  GstClockReturn res;
  GstClockID id;
  guint64 generation;
  gboolean fire;

  g_mutex_lock (&self->timer_lock);
  while (!self->timer_flushing && self->timer_deadline == GST_CLOCK_TIME_NONE)
    g_cond_wait (&self->timer_cond, &self->timer_lock);
  if (self->timer_flushing) {
    /* under the lock: clearing the flag restarts the task after this
     * pause, never before it */
    gst_task_pause (self->timeout_task);
    g_mutex_unlock (&self->timer_lock);
    return;
  }
  deadline = self->timer_deadline;
  generation = self->timer_generation;
  g_mutex_unlock (&self->timer_lock);

  clock = gst_element_get_clock (GST_ELEMENT (self));
  if (clock == NULL) {
    gst_cuda_batch_infer_timer_disarm (self);
    return;
  }
  id = gst_clock_new_single_shot_id (clock, deadline);
  gst_object_unref (clock);

  g_mutex_lock (&self->timer_lock);
  fire = generation == self->timer_generation && !self->timer_flushing;
  if (fire)
    self->timer_id = id;
  g_mutex_unlock (&self->timer_lock);
  res = fire ? gst_clock_id_wait (id, NULL) : GST_CLOCK_UNSCHEDULED;
  g_mutex_lock (&self->timer_lock);
  self->timer_id = NULL;
  g_mutex_unlock (&self->timer_lock);
  gst_clock_id_unref (id);
  if (res == GST_CLOCK_UNSCHEDULED)
    return;

  GST_PAD_STREAM_LOCK (self->sinkpad);
  g_mutex_lock (&self->timer_lock);
  fire = generation == self->timer_generation && !self->timer_flushing;
  g_mutex_unlock (&self->timer_lock);
  /* a failure is the src pad task's to report, or an error posted */
  if (fire && self->engine)
    gst_cuda_batch_infer_process (self, "batch-timeout");
  GST_PAD_STREAM_UNLOCK (self->sinkpad);
}

static gboolean
gst_cuda_batch_infer_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  gboolean ok;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  g_mutex_lock (&self->inflight_lock);
  self->src_active = active;
  g_mutex_unlock (&self->inflight_lock);
  if (active)
    return gst_cuda_batch_infer_stop_flushing (self);
  gst_cuda_batch_infer_start_flushing (self);
  g_atomic_pointer_set (&self->push_thread, NULL);
  /* as gst_pad_stop_task() does: once the task's lock is ours, its
   * function has returned, and a pause it made is undone by the join */
  gst_task_stop (self->timeout_task);
  g_rec_mutex_lock (&self->timeout_task_lock);
  g_rec_mutex_unlock (&self->timeout_task_lock);
  ok = gst_task_join (self->timeout_task);
  return gst_pad_stop_task (pad) && ok;
}

/* Warm-up and negotiation. */

static gboolean
gst_cuda_batch_infer_run_warmup (GstCudaBatchInfer * self,
    const GstVideoInfo * info)
{
  guint width = GST_VIDEO_INFO_WIDTH (info);
  guint height = GST_VIDEO_INFO_HEIGHT (info);
  CbiFrameBatch layout = { 0, };
  CbiBatchReport r;
  GError *error = NULL;
  GstStructure *s;
  guint64 output_buffer_bytes;

  gst_cuda_batch_infer_describe_layout (self, info, &layout);
  layout.n_slots = self->run_batch;
  if (!cbi_engine_warmup (self->engine, &layout, &r, &error)) {
    gst_cuda_batch_infer_post_engine_error (self, "Warm-up", error);
    g_clear_error (&error);
    return FALSE;
  }
  self->warm_width = width;
  self->warm_height = height;

  g_mutex_lock (&self->stats_lock);
  self->stats.warmup_time += r.time_ns;
  self->stats.steady_batch_time = r.steady_time_ns;
  self->stats.reserved_bytes = r.pool.reserved_bytes;
  output_buffer_bytes = self->stats.output_buffer_bytes;
  g_mutex_unlock (&self->stats_lock);

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
      "backend", G_TYPE_STRING, cbi_engine_backend_name (self->engine),
      "device-id", G_TYPE_INT, cbi_engine_device_id (self->engine), NULL);
  GST_INFO_OBJECT (self, "warmed up: %" GST_PTR_FORMAT, s);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
  /* the batch time is part of the latency: ask for it to be queried again */
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_latency (GST_OBJECT (self)));
  return TRUE;
}

static void
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
gst_cuda_batch_infer_touch_pool (GstCudaBatchInfer * self, guint n)
{
  GstBuffer **buffers = g_new0 (GstBuffer *, n);
  guint i, got;

  for (got = 0; got < n; got++)
    if (gst_buffer_pool_acquire_buffer (self->out_pool, &buffers[got],
            NULL) != GST_FLOW_OK)
      break;
  for (i = 0; i < got; i++) {
    gst_buffer_memset (buffers[i], 0, 0, gst_buffer_get_size (buffers[i]));
    gst_buffer_unref (buffers[i]);
  }
  g_free (buffers);
}

/* The bytes of the element's own output buffers for frames that come out
 * as @out_info, or as @out's tensors: a batch for each batch in flight. */
static guint64
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

/* memory-limit covers the output buffers too: counts @bytes of them
 * against it before they are allocated, and gives the engine what is
 * left. Posts an error when they alone do not fit. */
static gboolean
gst_cuda_batch_infer_budget (GstCudaBatchInfer * self, guint64 bytes)
{
  const guint64 limit = self->run_memory_limit;

  g_mutex_lock (&self->stats_lock);
  self->stats.output_buffer_bytes = bytes;
  g_mutex_unlock (&self->stats_lock);
  if (limit == 0)
    return TRUE;
  if (bytes >= limit) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("The output buffers (%u frames, %" G_GUINT64_FORMAT " bytes) do "
            "not fit the memory limit of %" G_GUINT64_FORMAT " bytes",
            self->run_batch * self->run_inflight, bytes, limit),
        ("raise or unset the memory-limit property, or lower batch or "
            "max-inflight"));
    return FALSE;
  }
  cbi_engine_set_memory_limit (self->engine, limit - bytes);
  return TRUE;
}

/* The budget for frames of @info before caps give their output format:
 * the model's output for them, in the input's format. A size the model
 * cannot take is the warm-up's to report. */
static gboolean
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
  return gst_cuda_batch_infer_budget (self,
      gst_cuda_batch_infer_output_bytes (self, &out_info, &out));
}

static gboolean
gst_cuda_batch_infer_setup_pool (GstCudaBatchInfer * self, GstCaps * caps)
{
  /* a whole batch is acquired at once, for each batch in flight;
   * downstream may hold more */
  const guint n = self->run_batch * self->run_inflight;
  GstStructure *config;

  gst_cuda_batch_infer_clear_pool (&self->out_pool);
  self->out_pool = gst_video_buffer_pool_new ();
  config = gst_buffer_pool_get_config (self->out_pool);
  gst_buffer_pool_config_set_params (config, caps,
      GST_VIDEO_INFO_SIZE (&self->out_info), n, 0);
  if (!gst_buffer_pool_set_config (self->out_pool, config)
      || !gst_buffer_pool_set_active (self->out_pool, TRUE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate %u output buffers of %" G_GSIZE_FORMAT " bytes",
            n, GST_VIDEO_INFO_SIZE (&self->out_info)), (NULL));
    gst_clear_object (&self->out_pool);
    return FALSE;
  }
  gst_cuda_batch_infer_touch_pool (self, n);
  return TRUE;
}

/* Tensor outputs: a pool of buffers for one frame's slice of them all. */
static gboolean
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

/* The output caps for input @caps: the same, but for the size of an
 * image output that has another size. */
static GstCaps *
gst_cuda_batch_infer_output_caps (GstCudaBatchInfer * self, GstCaps * caps,
    const GstVideoInfo * info)
{
  GstCaps *out_caps = gst_caps_copy (caps);

  if (self->out.image && ((gint) self->out.width != info->width
          || (gint) self->out.height != info->height))
    gst_caps_set_simple (out_caps, "width", G_TYPE_INT, self->out.width,
        "height", G_TYPE_INT, self->out.height, NULL);
  return out_caps;
}

static gboolean
gst_cuda_batch_infer_set_caps (GstCudaBatchInfer * self, GstCaps * caps)
{
  GstVideoInfo info;
  GstCaps *out_caps;
  CbiOutputInfo out;
  GError *error = NULL;
  gboolean ok;

  if (self->refused_caps && gst_caps_is_equal (caps, self->refused_caps)) {
    GST_DEBUG_OBJECT (self, "refused already: %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  gst_caps_replace (&self->refused_caps, caps);
  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("invalid caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (!cbi_engine_frame_outputs (self->engine, GST_VIDEO_INFO_HEIGHT (&info),
          GST_VIDEO_INFO_WIDTH (&info), &out, &error)) {
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
      gst_clear_caps (&self->refused_caps);
      return FALSE;
    }
    if (ret != GST_FLOW_OK)
      GST_WARNING_OBJECT (self, "could not push the batches before new "
          "caps: %s", gst_flow_get_name (ret));
  }

  /* nothing flows on half-applied caps */
  self->have_caps = FALSE;
  self->in_info = info;
  g_mutex_lock (&self->stats_lock);
  self->fps_n = info.fps_n;
  self->fps_d = info.fps_d;
  g_mutex_unlock (&self->stats_lock);
  /* frames come out as they went in: the output caps are the input's,
   * interlacing, colorimetry and all, but for the size of a model that
   * changes it */
  self->out = out;
  out_caps = gst_cuda_batch_infer_output_caps (self, caps, &info);
  ok = gst_video_info_from_caps (&self->out_info, out_caps)
      && gst_cuda_batch_infer_budget (self,
      gst_cuda_batch_infer_output_bytes (self, &self->out_info, &out))
      && gst_pad_set_caps (self->srcpad, out_caps)
      && (out.image ? gst_cuda_batch_infer_setup_pool (self, out_caps) :
      gst_cuda_batch_infer_setup_tensor_pool (self));
  gst_caps_unref (out_caps);
  if (ok && self->run_warmup && (self->warm_width != (guint) info.width
          || self->warm_height != (guint) info.height))
    ok = gst_cuda_batch_infer_run_warmup (self, &info);
  self->have_caps = ok;
  if (ok)
    gst_clear_caps (&self->refused_caps);
  return ok;
}

static gboolean
gst_cuda_batch_infer_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
  guint dropped;

  GST_LOG_OBJECT (self, "event %" GST_PTR_FORMAT, event);
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gboolean ok;

      gst_event_parse_caps (event, &caps);
      ok = gst_cuda_batch_infer_set_caps (self, caps);
      gst_event_unref (event);
      return ok;
    }
    case GST_EVENT_FLUSH_START:
      /* wakes a streaming thread waiting for room and the src pad task;
       * the event unblocks a push downstream */
      gst_cuda_batch_infer_start_flushing (self);
      return gst_pad_event_default (pad, parent, event);
    case GST_EVENT_FLUSH_STOP:
      dropped = gst_cbi_batcher_drop (&self->batcher);
      g_mutex_lock (&self->stats_lock);
      self->stats.frames_dropped += dropped;
      g_mutex_unlock (&self->stats_lock);
      if (dropped)
        GST_DEBUG_OBJECT (self, "flushing dropped %u pending frames", dropped);
      /* the task is paused once this returns: the batches are ours */
      gst_pad_pause_task (self->srcpad);
      gst_cuda_batch_infer_discard_inflight (self);
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
    default:
      /* every other serialised event (EOS, segment, gap, ...) is a drain
       * point, so it stays behind the frames that came before it */
      if (GST_EVENT_IS_SERIALIZED (event) && self->engine)
        gst_cuda_batch_infer_drain (self, GST_EVENT_TYPE_NAME (event));
      return gst_pad_event_default (pad, parent, event);
  }
}

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

/* CAPS for a model whose output size differs from its input's: the
 * other side's caps, size removed, as the proxying would give them. */
static gboolean
gst_cuda_batch_infer_query_caps_resized (GstCudaBatchInfer * self,
    GstPad * pad, GstQuery * query)
{
  GstPad *other = pad == self->sinkpad ? self->srcpad : self->sinkpad;
  GstCaps *filter, *peer_filter = NULL, *peer, *templ, *res;

  gst_query_parse_caps (query, &filter);
  if (filter)
    peer_filter = gst_cuda_batch_infer_any_size (filter);
  peer = gst_pad_peer_query_caps (other, peer_filter);
  templ = gst_pad_get_pad_template_caps (pad);
  res = gst_cuda_batch_infer_any_size (peer);
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
 * model, once it is loaded. */
static gboolean
gst_cuda_batch_infer_query_caps (GstCudaBatchInfer * self, GstPad * pad,
    GstObject * parent, GstQuery * query)
{
  gboolean resizes;

  GST_OBJECT_LOCK (self);
  resizes = self->resizes;
  GST_OBJECT_UNLOCK (self);
  if (!resizes)
    return gst_pad_query_default (pad, parent, query);
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS)
    return gst_cuda_batch_infer_query_caps_resized (self, pad, query);
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

static gboolean
gst_cuda_batch_infer_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);

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
       * Output buffers come from the element's own pool. */
      gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
      return TRUE;
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

/* What batching adds to latency: waiting for N-1 more frames (or for
 * batch-timeout, whichever is shorter) plus one batch's processing.
 * @bounded is FALSE when the wait has no bound: no framerate and no
 * batch-timeout. */
static GstClockTime
gst_cuda_batch_infer_latency (GstCudaBatchInfer * self, gboolean * bounded)
{
  GstClockTime wait = GST_CLOCK_TIME_NONE, timeout, batch_time;
  gint fps_n, fps_d;
  guint batch;

  /* the query comes from any thread: what it reads of the run is copied
   * under the object lock when the engine comes and goes */
  GST_OBJECT_LOCK (self);
  timeout = self->batch_timeout;
  batch = self->query_batch ? self->query_batch : self->batch;
  GST_OBJECT_UNLOCK (self);

  g_mutex_lock (&self->stats_lock);
  batch_time = self->stats.steady_batch_time;
  fps_n = self->fps_n;
  fps_d = self->fps_d;
  g_mutex_unlock (&self->stats_lock);

  if (fps_n > 0)
    wait = gst_util_uint64_scale_int ((batch - 1) * GST_SECOND, fps_d, fps_n);
  if (timeout > 0 && (!GST_CLOCK_TIME_IS_VALID (wait) || timeout < wait))
    wait = timeout;
  *bounded = GST_CLOCK_TIME_IS_VALID (wait);
  return (*bounded ? wait : 0) + batch_time;
}

static gboolean
gst_cuda_batch_infer_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    GstClockTime min, max, ours;
    gboolean live, bounded;

    if (!gst_pad_peer_query (self->sinkpad, query))
      return FALSE;
    gst_query_parse_latency (query, &live, &min, &max);
    ours = gst_cuda_batch_infer_latency (self, &bounded);
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
  return gst_pad_query_default (pad, parent, query);
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
  guint dropped = gst_cbi_batcher_drop (&self->batcher);

  g_mutex_lock (&self->stats_lock);
  self->stats.frames_dropped += dropped;
  g_mutex_unlock (&self->stats_lock);
  gst_cbi_batcher_clear (&self->batcher);
  /* the tasks are stopped: what is still in flight is dropped */
  if (self->engine)
    gst_cuda_batch_infer_discard_inflight (self);
  gst_cbi_inflight_clear (&self->inflight);
  gst_cuda_batch_infer_clear_pool (&self->out_pool);
  gst_cuda_batch_infer_clear_pool (&self->tensor_pool);
  GST_OBJECT_LOCK (self);
  self->resizes = FALSE;
  self->query_batch = 0;
  GST_OBJECT_UNLOCK (self);
  g_clear_pointer (&self->engine, cbi_engine_free);
  self->have_caps = FALSE;
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
  guint c, threads;
  gchar *model;
  GstVideoInfo info;
  CbiGraph *graph;
  guint n;
  gint device_id;
  guint64 limit;

  GST_OBJECT_LOCK (self);
  n = self->run_batch = self->batch;
  self->run_inflight = self->max_inflight;
  self->run_warmup = self->warmup;
  warmup_caps = self->warmup_caps ? gst_caps_ref (self->warmup_caps) : NULL;
  model = g_strdup (self->model);
  backend = (CbiBackendKind) self->backend;
  device_id = self->device_id;
  limit = self->run_memory_limit = self->memory_limit;
  exhaustive = self->algo_search == GST_CUDA_BATCH_INFER_ALGO_SEARCH_EXHAUSTIVE;
  replay = self->cuda_graph;
  threads = self->threads;
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

  g_mutex_lock (&self->stats_lock);
  memset (&self->stats, 0, sizeof (self->stats));
  g_mutex_unlock (&self->stats_lock);
  self->batch_index = 0;
  self->warm_width = self->warm_height = 0;
  gst_clear_caps (&self->refused_caps);
  gst_segment_init (&self->segment, GST_FORMAT_UNDEFINED);
  g_mutex_lock (&self->inflight_lock);
  self->src_flow = GST_FLOW_OK;
  g_mutex_unlock (&self->inflight_lock);

  if (!std_ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("input-std has a 0: values would be divided by it"), (NULL));
    ok = FALSE;
    goto done;
  }

  graph = model ? cbi_onnx_load (model, &error) : cbi_default_model_new ();
  if (graph == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Cannot load model \"%s\": %s", model, error->message), (NULL));
    g_clear_error (&error);
    ok = FALSE;
    goto done;
  }

  self->engine = cbi_engine_new (graph, backend, device_id, limit, &fallback,
      &error);
  if (self->engine == NULL) {
    gst_cuda_batch_infer_post_engine_error (self, "Opening the backend", error);
    g_clear_error (&error);
    ok = FALSE;
    goto done;
  }
  self->backend_name = g_intern_string (cbi_engine_backend_name (self->engine));
  cbi_engine_set_exhaustive_search (self->engine, exhaustive);
  cbi_engine_set_replay (self->engine, replay);
  cbi_engine_set_threads (self->engine, threads);
  resizes = gst_cuda_batch_infer_model_resizes (self);
  GST_OBJECT_LOCK (self);
  self->resizes = resizes;
  self->query_batch = n;
  GST_OBJECT_UNLOCK (self);
  if (fallback)
    GST_WARNING_OBJECT (self, "no usable CUDA device: running on the CPU");
  GST_INFO_OBJECT (self, "engine on %s, batch %u",
      cbi_engine_backend_name (self->engine), n);

  gst_cbi_batcher_init (&self->batcher, n);
  gst_cbi_inflight_init (&self->inflight, self->run_inflight, n);
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

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    GST_PAD_STREAM_LOCK (self->sinkpad);
    ok = gst_cuda_batch_infer_start (self);
    GST_PAD_STREAM_UNLOCK (self->sinkpad);
    if (!ok)
      return GST_STATE_CHANGE_FAILURE;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  /* pads are inactive by now: no streaming thread touches the engine, and
   * the stream lock keeps the flush signal out */
  if ((ret == GST_STATE_CHANGE_FAILURE
          && transition == GST_STATE_CHANGE_READY_TO_PAUSED)
      || transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    GST_PAD_STREAM_LOCK (self->sinkpad);
    gst_cuda_batch_infer_stop (self);
    GST_PAD_STREAM_UNLOCK (self->sinkpad);
  }
  return ret;
}
