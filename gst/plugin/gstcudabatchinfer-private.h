/* GStreamer cudabatchinfer element: what its files share
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#include "gstcudabatchinfer.h"
#include "gstcbibatcher.h"
#include "gstcbiinflight.h"
#include "cbiengine.h"

G_BEGIN_DECLS
/*
 * The element's files, one job each, in layers: a file calls the files
 * below it and none above (its header says what it offers; the test
 * plugin-call-circles checks that no two object files call each other,
 * even through others):
 *
 * gstcudabatchinfer.c           the type, its pads, its state changes
 * gstcudabatchinfer-props.c     properties, their enums and the stats
 * gstcudabatchinfer-streams.c   the request pads sink_%u and src_%u:
 *                               requested, released, their chain, events
 *                               and queries
 * gstcudabatchinfer-caps.c      the always pads' chain, events and
 *                               queries; caps on any sink pad; latency
 * gstcudabatchinfer-admit.c     frames taken in or not: QoS, interval,
 *                               max-latency, drop-policy; the deadline's
 *                               function
 * gstcudabatchinfer-push.c      the src pad task that collects and pushes
 *                               batches; drains, flushes, the flush signal
 * gstcudabatchinfer-batch.c     frames in: batches cut, submitted and
 *                               collected (results, metas, stats, messages)
 * gstcudabatchinfer-warmup.c    the warm-up's dry batch and its message
 * gstcudabatchinfer-pools.c     output pools and the memory limit
 * gstcudabatchinfer-route.c     results routed to their streams: queues,
 *                               held events, src_K's task
 * gstcudabatchinfer-timeout.c   the batch deadline and its task, which
 *                               calls the function it was given
 * gstcudabatchinfer-engine.c    the frames' layout for the engine, its
 *                               errors posted, its backend noted
 * gstcudabatchinfer-checkfile.c the precision check's pictures, decoded
 *                               from precision-check-location
 * gstcudabatchinfer-cudamem.c   frames in memory:CUDAMemory: the shared
 *                               CUDA context, the pool proposed, frames
 *                               mapped on the device
 * gstcbiinflight.c, gstcbibatcher.c, gstcbitensormeta.c,
 * gstcbimodelinfo.c             self-contained: the ring of batches in
 *                               flight, the pending frames, upstream's
 *                               GstTensorMeta, modelinfo files
 *
 * Threads: the sink pad's streaming thread (chain, serialised events and
 * queries) fills and submits batches; the src pad task collects and pushes
 * them; the timeout task submits a partial batch at its deadline; the flush
 * signal, the state changes, FLUSH_START and queries come from any thread.
 * With request pads, each sink_%u's streaming thread fills the same
 * batches, under the batch lock (the always sink pad's STREAM_LOCK, taken
 * by every thread that fills or submits a batch); the always src pad's
 * task still collects every batch and hands each frame's result to its
 * stream's queue, and each src_%u has its own task that pushes that
 * queue, so a blocked or prerolling branch never holds up the others.
 *
 * Locking order: a thread that holds several of these locks took them in
 * this order, outermost first.
 *
 * timeout task lock -> timeout_task_lock (held around each turn of the
 *   timeout task, which takes the sink pad stream lock to submit)
 * a request sink pad's stream lock -> GST_PAD_STREAM_LOCK (sink_%u)
 * a request pad's turn -> turn_lock w/ turn_cond (a ticket waited for
 *   and held, not the mutex, around the batch lock)
 * sink pad stream lock -> GST_PAD_STREAM_LOCK (sinkpad), the batch lock
 * src pad stream lock -> GST_PAD_STREAM_LOCK (srcpad) (held around each
 *   turn of the src pad task; the sink side only waits for it, in
 *   gst_pad_pause_task() on FLUSH_STOP)
 * in-flight lock -> inflight_lock w/ inflight_cond
 * streams lock -> streams_lock (the table of streams)
 * a stream's lock -> GstCbiStream.lock w/ GstCbiStream.cond
 * timer lock -> timer_lock w/ timer_cond
 * stats lock -> stats_lock
 * element object lock -> GST_OBJECT_LOCK (self)
 * engine lock -> the CbiEngine's own, inside cbi_engine_*()
 *
 * The last four are leaves: none of them is held while another lock of
 * this list is taken. Under the in-flight lock the element takes the timer
 * lock (to stop or restart the timer with the tasks), the stats lock and
 * the engine lock (to drop a batch); GStreamer's own locks of a pad, a task
 * or the clock are taken under the in-flight and timer locks, and take none
 * of ours. One exception to the order: the flush signal, emitted from the
 * src pad task (with its stream lock held), only tries the sink pad stream
 * lock, and gives up when it is busy.
 */
/* What a pad function, a property accessor or a task casts its element
 * with, unchecked, as gstqueue.c's pad functions do: the pads and the
 * tasks are the element's own. The checked cast calls the type's
 * get_type() in gstcudabatchinfer.c, the top of the files' layers. */
#define GST_CUDA_BATCH_INFER_CAST(obj) ((GstCudaBatchInfer *) (obj))

#define VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, RGBA, BGRA, I420, YV12, NV12, NV21 }"
/* the sink pads' caps: frames in a GPU's memory too, where the plugin is
 * built with GStreamer's CUDA library (gstcudabatchinfer-cudamem.c), first
 * so that they are preferred; the src pads give system memory */
#ifdef HAVE_GST_CUDA
#define SINK_CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES ("memory:CUDAMemory", \
    VIDEO_FORMATS) "; " GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)
#else
#define SINK_CAPS GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)
#endif
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
 * @GST_CUDA_BATCH_INFER_BACKEND_AUTO: CUDA where a GPU is usable and runs
 *   the whole model, else the CPU (with a warning in the log); a warm-up
 *   or batch that fails on CUDA runs again on the CPU, which then stays
 * @GST_CUDA_BATCH_INFER_BACKEND_CPU: oneDNN on the CPU
 * @GST_CUDA_BATCH_INFER_BACKEND_CUDA: CUDA and cuDNN; the state change fails
 *   when no GPU is usable, and any CUDA failure is an error
 * @GST_CUDA_BATCH_INFER_BACKEND_REMOTE: an inference server that speaks
 *   the KServe v2 (Open Inference) protocol, Triton's included
 *   (#GstCudaBatchInfer:server-url, #GstCudaBatchInfer:remote-model);
 *   `auto` never picks it
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_BACKEND_AUTO = CBI_BACKEND_AUTO,
  GST_CUDA_BATCH_INFER_BACKEND_CPU = CBI_BACKEND_CPU,
  GST_CUDA_BATCH_INFER_BACKEND_CUDA = CBI_BACKEND_CUDA,
  GST_CUDA_BATCH_INFER_BACKEND_REMOTE = CBI_BACKEND_REMOTE,
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

/**
 * GstCudaBatchInferScaling:
 * @GST_CUDA_BATCH_INFER_SCALING_NONE: frames have the model's size, or
 *   set it for a model that takes any size
 * @GST_CUDA_BATCH_INFER_SCALING_STRETCH: frames of any size are scaled to
 *   the model's fixed size, aspect ratio not kept
 * @GST_CUDA_BATCH_INFER_SCALING_LETTERBOX: frames of any size are scaled
 *   to fit the model's fixed size with their aspect ratio, centred between
 *   black bars
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_SCALING_NONE = CBI_SCALE_NONE,
  GST_CUDA_BATCH_INFER_SCALING_STRETCH = CBI_SCALE_STRETCH,
  GST_CUDA_BATCH_INFER_SCALING_LETTERBOX = CBI_SCALE_LETTERBOX,
} GstCudaBatchInferScaling;

/**
 * GstCudaBatchInferPrecision:
 * @GST_CUDA_BATCH_INFER_PRECISION_FP32: float32 arithmetic
 * @GST_CUDA_BATCH_INFER_PRECISION_TF32: float32 values, tf32 products on
 *   NVIDIA tensor cores (the CUDA backend only)
 * @GST_CUDA_BATCH_INFER_PRECISION_BF16: bfloat16 operands in the
 *   convolutions, float32 sums (the CPU backend where the CPU has
 *   AVX512-BF16 or AMX)
 * @GST_CUDA_BATCH_INFER_PRECISION_FP16: float16 operands (no backend of
 *   this build has it yet: refused)
 * @GST_CUDA_BATCH_INFER_PRECISION_AUTO: the fastest the backend has that
 *   passes the warm-up's accuracy check, else float32
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_PRECISION_FP32 = CBI_PRECISION_FP32,
  GST_CUDA_BATCH_INFER_PRECISION_TF32 = CBI_PRECISION_TF32,
  GST_CUDA_BATCH_INFER_PRECISION_BF16 = CBI_PRECISION_BF16,
  GST_CUDA_BATCH_INFER_PRECISION_FP16 = CBI_PRECISION_FP16,
  GST_CUDA_BATCH_INFER_PRECISION_AUTO = CBI_PRECISION_AUTO,
} GstCudaBatchInferPrecision;

/**
 * GstCudaBatchInferDropPolicy:
 * @GST_CUDA_BATCH_INFER_DROP_POLICY_NONE: no frame is dropped: while every
 *   place in flight is taken, the streaming thread waits for one (upstream
 *   waits with it); #GstCudaBatchInfer:max-latency cuts a batch short
 *   instead of dropping
 * @GST_CUDA_BATCH_INFER_DROP_POLICY_OLDEST: the streaming thread never
 *   waits for a place in flight; past #GstCudaBatchInfer:max-latency (or
 *   two batches of pending frames), a pad's oldest pending frames are
 *   dropped
 * @GST_CUDA_BATCH_INFER_DROP_POLICY_LATEST_ONLY: the streaming thread never
 *   waits for a place in flight; while none is free, each pad keeps only
 *   its newest pending frame
 *
 * What the element does with frames that come faster than the model runs.
 *
 * Since: 1.0
 */
typedef enum
{
  GST_CUDA_BATCH_INFER_DROP_POLICY_NONE,
  GST_CUDA_BATCH_INFER_DROP_POLICY_OLDEST,
  GST_CUDA_BATCH_INFER_DROP_POLICY_LATEST_ONLY,
} GstCudaBatchInferDropPolicy;

/* Under a drop-policy with max-latency, the frames that may wait beyond
 * two batches' worth, at most */
#define GST_CUDA_BATCH_INFER_DROP_POLICY_EXTRA_FRAMES 256

/**
 * GstCbiPadState:
 * @skip_left: frames still to pass without inference before the next
 *   inferred one (interval; the batch lock)
 * @admitted: frames taken into the batches since the start (the batch
 *   lock)
 * @qos_earliest: the running time before which a frame is late for the
 *   sink, from the last QoS event on the pad's src pad, or NONE (the stats
 *   lock, as the rest)
 * @qos_proportion: that event's proportion
 * @upstream_latency: the least latency upstream of the pad said it has in
 *   the last LATENCY query, where live: how late its frames come by their
 *   nature
 * @inferred: frames that went out inferred
 * @skipped: frames that went out with an earlier result (interval)
 * @late: frames dropped late for the sink (QoS)
 * @shed: frames dropped by drop-policy
 * @last_image: (nullable): the output buffer of the pad's last inferred
 *   frame, an image output, a reference: what its skipped frames go out
 *   with (the src pad task)
 * @last_tensors: (nullable): that frame's tensor data, a reference
 * @last_serial: the stream's serial those results are of
 *
 * What the element keeps for one sink pad to skip and drop frames: the
 * always sink pad's in the element, sink_K's in its stream.
 */
typedef struct
{
  guint skip_left;
  guint64 admitted;
  GstClockTime qos_earliest;
  gdouble qos_proportion;
  GstClockTime upstream_latency;
  guint64 inferred;
  guint64 skipped;
  guint64 late;
  guint64 shed;
  GstBuffer *last_image;
  GstBuffer *last_tensors;
  guint64 last_serial;
} GstCbiPadState;

typedef struct
{
  guint64 frames_in;
  guint64 frames_out;
  guint64 frames_dropped;
  guint64 frames_inferred;
  guint64 frames_on_device;     /* of them, read on the GPU: CUDA memory */
  guint64 frames_skipped;
  guint64 frames_late;
  guint64 frames_shed;
  guint64 batches;
  guint64 padded_frames;
  guint64 single_thread_batches;
  guint64 replans;
  GstClockTime warmup_time;
  GstClockTime steady_batch_time;
  GstClockTime latency_batch_time;
  guint64 fresh_allocations_after_warmup;
  guint64 fresh_bytes_after_warmup;
  guint64 peak_allocated_bytes;
  guint64 peak_reserved_bytes;
  guint64 reserved_bytes;
  guint64 output_buffer_bytes;
  guint64 device_fresh_bytes_after_warmup;
  const gchar *backend;         /* interned; NULL before the engine opens */
  gchar *fallback_reason;       /* owned; why auto runs on the CPU, or NULL */
  const gchar *precision;       /* static; NULL before a warm-up */
  gdouble precision_error;      /* the check's worst relative error, or -1
                                 * where nothing was checked */
  guint low_precision_ops;      /* ops running below float32 */
  gchar *server_url;            /* owned; backend=remote's server, or NULL */
  guint64 remote_bytes_sent;    /* backend=remote: request bodies' bytes */
  guint64 remote_bytes_received;
  GstClockTime remote_round_trip_time;  /* the last batch's */
} GstCudaBatchInferStats;

/**
 * GstCbiStream:
 * @index: K of its pads sink_K and src_K
 * @sinkpad: (transfer none): sink_K
 * @srcpad: (transfer none): src_K
 * @serial: what its frames are tagged with; changed (under the element's
 *   streams_lock and batch lock) by a flush, so that frames of before it
 *   are dropped on their way out
 * @segment: the sink pad's segment (its streaming thread)
 * @have_caps: caps were accepted on sink_K (the batch lock)
 * @info: the frames of those caps (the batch lock)
 * @out_info: with scaling, the frames src_K gives for them (the batch
 *   lock; without, the element's out_info)
 * @out_pool: (nullable): with scaling and an image output, src_K's
 *   buffers, of @out_info (the batch lock)
 * @pool_bytes: what @out_pool holds from the start, counted in the
 *   output buffers against memory-limit (the stats lock)
 * @refused_caps: (nullable): the caps last refused on sink_K, with an
 *   error posted: upstream resends them before a buffer, and they fail at
 *   once without a second error (the batch lock)
 * @eos: sink_K had EOS since its last stream-start or flush (the batch
 *   lock)
 * @lock: guards the rest
 * @in_count: frames that went into a batch since the last flush
 * @cond: the queue changed, or the stream started or stopped flushing
 * @out_count: frames of @in_count that left the batches: queued or dropped
 * @queue: (element-type GstMiniObject): buffers and serialised events for
 *   src_K, in order, owned
 * @held: (element-type GstCbiHeldEvent): serialised events that came
 *   after frames still in a batch: queued once @out_count reaches theirs
 * @queued: buffers in @queue
 * @pushing: src_K's task took an item of @queue and is pushing it
 * @flushing: src_K is flushing or inactive: its task does not push
 * @src_active: src_K is active: a FLUSH_STOP may start its task again
 * @flow: what the last push on src_K returned, given back upstream
 * @push_thread: src_K's task's thread while it runs
 * @frames_in: frames that came in on sink_K
 * @frames_out: frames pushed on src_K
 * @frames_dropped: frames that did not come out
 * @pad: what skipping and dropping keep for sink_K
 *
 * One stream of an element with request pads; refcounted (g_atomic_rc_box):
 * the element's table holds a reference and each of its pads one, so a
 * pad still held after its release finds its stream.
 */
typedef struct
{
  guint index;
  GstPad *sinkpad;
  GstPad *srcpad;
  guint64 serial;
  GstSegment segment;
  gboolean have_caps;
  GstVideoInfo info;
  GstVideoInfo out_info;
  GstBufferPool *out_pool;
  guint64 pool_bytes;
  GstCaps *refused_caps;
  gboolean eos;

  GMutex lock;
  GCond cond;
  guint64 in_count;
  guint64 out_count;
  GQueue queue;
  GQueue held;
  guint queued;
  gboolean pushing;
  gboolean flushing;
  gboolean src_active;
  GstFlowReturn flow;
  GThread *push_thread;
  guint64 frames_in;
  guint64 frames_out;
  guint64 frames_dropped;
  GstCbiPadState pad;
} GstCbiStream;

struct _GstCudaBatchInfer
{
  GstElement parent;

  /* set in init, never changed */
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
  gchar *server_url;
  gchar *remote_model;
  gchar *remote_model_version;
  GstClockTime remote_timeout;
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
  GstCudaBatchInferScaling scaling;
  GstCudaBatchInferPrecision precision;
  gdouble precision_tolerance;
  gchar *precision_check_location;
  guint interval;
  GstClockTime max_latency;
  GstCudaBatchInferDropPolicy drop_policy;
  gboolean qos;

  /* what queries, from any thread, read of the run: OBJECT_LOCK; written
   * when the engine comes and goes (start, stop) */
  GstCaps *frames_caps;         /* format and size of the frames the
                                 * element batches, once caps set them:
                                 * what a request pad's CAPS query asks
                                 * of upstream while another pad streams */
  gboolean resizes;             /* its image output has another size than
                                 * its input: caps queries drop the size */
  guint query_batch;            /* run_batch while the engine is up, else
                                 * 0: the latency query's batch size */

  /* streaming state: the sink pad's STREAM_LOCK; set up and torn down in
   * change_state while no data flows. The src pad task reads engine,
   * out, out_info, tensors and the pools without the lock:
   * they change only while no batch is in flight (a caps change drains
   * first; start and stop run with the tasks stopped) */
  CbiEngine *engine;
  guint run_batch;              /* batch size for this run */
  guint64 run_memory_limit;     /* the engine's and the output buffers' */
  gboolean run_warmup;
  gfloat run_scale[3];          /* per model channel, from the properties */
  gfloat run_bias[3];
  gfloat run_out_scale[3];
  gfloat run_out_offset[3];
  gboolean run_bgr;
  CbiPrecision run_precision;   /* precision, as asked for */
  gchar *run_check_location;    /* precision-check-location (nullable) */
  CbiScaling run_scaling;       /* scaling, where the model fixes its
                                 * size; else none */
  GstCbiBatcher batcher;
  guint run_inflight;
  guint run_interval;           /* interval, for this run */
  GstCudaBatchInferDropPolicy run_drop_policy;
  guint run_capacity;           /* frames the batcher and a batch hold */
  gboolean due;                 /* under a drop-policy, the pending frames
                                 * go as soon as a place in flight frees,
                                 * full or not: frames were shed, or their
                                 * deadline passed, since the last batch */
  GstCbiPadState pad;           /* the always sink pad's */
  GstVideoInfo in_info;
  GstVideoInfo out_info;
  gpointer cuda_context;        /* (GstCudaContext) the pipeline's CUDA
                                 * context, from READY; NULL without CUDA
                                 * memory (gstcudabatchinfer-cudamem.c) */
  gpointer cuda_primary;        /* cuda_context where it is the engine's
                                 * (primary) one, whose frames are read on
                                 * the device; else NULL */
  gint cuda_device;             /* cuda_primary's device */
  CbiOutputInfo out;            /* what the model gives for in_info */
  GstBufferPool *tensor_pool;   /* tensor outputs: their elements */
  GstBatchTensor tensors[CBI_MAX_OUTPUTS];      /* their layout in a buffer */
  gboolean run_tensor_meta;     /* upstream's GstTensorMeta goes out too
                                 * (the runtime has it: 1.26 or later) */
  GKeyFile *modelinfo;          /* the model's .modelinfo, where
                                 * run_tensor_meta and there is one */
  gchar *modelinfo_path;        /* its file */
  GQuark tensor_ids[CBI_MAX_OUTPUTS];   /* the tensors' GstTensorMeta ids */
  gboolean have_caps;
  gboolean sink_streaming;      /* the always sink pad had a frame since
                                 * its caps or last EOS */
  GstVideoInfo sink_info;       /* the frames of its caps */
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
   * inflight_lock (see GstCbiInflight for the batches' contents) */
  GMutex inflight_lock;
  GCond inflight_cond;          /* a batch came in, or one left */
  GstCbiInflight inflight;
  gboolean inflight_flushing;
  gboolean src_active;          /* the tasks may run: FLUSH_STOP restarts
                                 * them only then */
  GstFlowReturn src_flow;       /* what the last failed push returned */
  gint inflight_epoch;          /* bumped (under inflight_lock) when
                                 * batches in flight are dropped from under
                                 * the src pad task (a flush it caused
                                 * itself); read atomically without it */
  GThread *push_thread;         /* the src pad task's; atomic */

  /* submits a partial batch when its batch-timeout passes; set in init,
   * the lock is the task's own; the task calls timer_deadline_func */
  GstTask *timeout_task;
  GRecMutex timeout_task_lock;
  void (*timer_deadline_func) (GstCudaBatchInfer * self,
      gboolean place_freed);

  /* timeout of a partial batch: timer_lock */
  GMutex timer_lock;
  GCond timer_cond;
  gboolean timer_flushing;
  gboolean timer_now;           /* fire without waiting on the clock: a
                                 * place in flight freed for frames that
                                 * wait (drop-policy) */
  GstClockTime timer_deadline;  /* clock time; NONE when not armed */
  guint64 timer_generation;
  GstClockID timer_id;

  /* the request pads' streams, in the order they were requested:
   * streams_lock; a stream is freed only once it is out of this table,
   * under the lock, and what follows a frame's tag to its stream looks
   * it up here under the lock */
  GMutex streams_lock;
  GPtrArray *streams;
  guint64 stream_serial;        /* the last serial given to a stream */

  /* the request pads' chains take the batch lock in the order their
   * frames came (a ticket each): a mutex lets the thread that just left
   * take it again before a waiting one wakes, and two sources that push
   * as fast as they can would fill whole batches in turns. turn_lock */
  GMutex turn_lock;
  GCond turn_cond;
  guint64 turn_next;            /* the next ticket to hand out */
  guint64 turn_serving;         /* the ticket whose turn it is */

  /* stats_lock: written by the streaming thread and the src pad task,
   * read by the stats property and the latency query */
  GMutex stats_lock;
  GstCudaBatchInferStats stats;
  guint64 out_pool_bytes;       /* of output_buffer_bytes: the element's
                                 * pools' */
  guint64 streams_pool_bytes;   /* and the streams' own (scaling) */
  gint fps_n;                   /* from the caps; 0 when unknown */
  gint fps_d;
};

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_batch_infer_debug);
#define GST_CAT_DEFAULT gst_cuda_batch_infer_debug

/* The element's own locks and their conditions, taken, released and
 * waited on only through these, which log each step with the thread, as
 * GstAggregator's PAD_LOCK and SRC_LOCK do: with GST_DEBUG=cudabatchinfer:7
 * a hang's log says which thread holds which lock and who waits for it.
 * A function that expects one of them, or the object lock, held when it
 * is called ends in _unlocked, as GstAggregator's do. */
#define INFLIGHT_LOCK(self) G_STMT_START {                              \
  GST_TRACE_OBJECT (self, "Taking in-flight lock from thread %p",       \
      g_thread_self ());                                                \
  g_mutex_lock (&(self)->inflight_lock);                                \
  GST_TRACE_OBJECT (self, "Took in-flight lock from thread %p",         \
      g_thread_self ());                                                \
} G_STMT_END

#define INFLIGHT_UNLOCK(self) G_STMT_START {                            \
  GST_TRACE_OBJECT (self, "Releasing in-flight lock from thread %p",    \
      g_thread_self ());                                                \
  g_mutex_unlock (&(self)->inflight_lock);                              \
  GST_TRACE_OBJECT (self, "Released in-flight lock from thread %p",     \
      g_thread_self ());                                                \
} G_STMT_END

#define INFLIGHT_WAIT(self) G_STMT_START {                              \
  GST_TRACE_OBJECT (self, "Waiting for in-flight cond from thread %p",  \
      g_thread_self ());                                                \
  g_cond_wait (&(self)->inflight_cond, &(self)->inflight_lock);         \
  GST_TRACE_OBJECT (self, "Done waiting for in-flight cond from "       \
      "thread %p", g_thread_self ());                                   \
} G_STMT_END

#define INFLIGHT_BROADCAST(self) G_STMT_START {                         \
  GST_TRACE_OBJECT (self, "Broadcasting in-flight cond from thread %p", \
      g_thread_self ());                                                \
  g_cond_broadcast (&(self)->inflight_cond);                            \
} G_STMT_END

#define TIMER_LOCK(self) G_STMT_START {                                 \
  GST_TRACE_OBJECT (self, "Taking timer lock from thread %p",           \
      g_thread_self ());                                                \
  g_mutex_lock (&(self)->timer_lock);                                   \
  GST_TRACE_OBJECT (self, "Took timer lock from thread %p",             \
      g_thread_self ());                                                \
} G_STMT_END

#define TIMER_UNLOCK(self) G_STMT_START {                               \
  GST_TRACE_OBJECT (self, "Releasing timer lock from thread %p",        \
      g_thread_self ());                                                \
  g_mutex_unlock (&(self)->timer_lock);                                 \
  GST_TRACE_OBJECT (self, "Released timer lock from thread %p",         \
      g_thread_self ());                                                \
} G_STMT_END

#define TIMER_WAIT(self) G_STMT_START {                                 \
  GST_TRACE_OBJECT (self, "Waiting for timer cond from thread %p",      \
      g_thread_self ());                                                \
  g_cond_wait (&(self)->timer_cond, &(self)->timer_lock);               \
  GST_TRACE_OBJECT (self, "Done waiting for timer cond from thread %p", \
      g_thread_self ());                                                \
} G_STMT_END

#define TIMER_SIGNAL(self) G_STMT_START {                               \
  GST_TRACE_OBJECT (self, "Signalling timer cond from thread %p",       \
      g_thread_self ());                                                \
  g_cond_signal (&(self)->timer_cond);                                  \
} G_STMT_END

#define TIMER_BROADCAST(self) G_STMT_START {                            \
  GST_TRACE_OBJECT (self, "Broadcasting timer cond from thread %p",     \
      g_thread_self ());                                                \
  g_cond_broadcast (&(self)->timer_cond);                               \
} G_STMT_END

#define STATS_LOCK(self) G_STMT_START {                                 \
  GST_TRACE_OBJECT (self, "Taking stats lock from thread %p",           \
      g_thread_self ());                                                \
  g_mutex_lock (&(self)->stats_lock);                                   \
  GST_TRACE_OBJECT (self, "Took stats lock from thread %p",             \
      g_thread_self ());                                                \
} G_STMT_END

#define STATS_UNLOCK(self) G_STMT_START {                               \
  GST_TRACE_OBJECT (self, "Releasing stats lock from thread %p",        \
      g_thread_self ());                                                \
  g_mutex_unlock (&(self)->stats_lock);                                 \
  GST_TRACE_OBJECT (self, "Released stats lock from thread %p",         \
      g_thread_self ());                                                \
} G_STMT_END

#define BATCH_LOCK(self) GST_PAD_STREAM_LOCK ((self)->sinkpad)
#define BATCH_UNLOCK(self) GST_PAD_STREAM_UNLOCK ((self)->sinkpad)

/* a stream's lock (GstCbiStream.lock) */
#define STREAM_LOCK(s) g_mutex_lock (&(s)->lock)
#define STREAM_UNLOCK(s) g_mutex_unlock (&(s)->lock)

/* Each file's functions are declared in its own header, which says what
 * it may call: see the list at the top. props.c's two: */
void gst_cuda_batch_infer_install_properties (GObjectClass * klass);
void gst_cuda_batch_infer_init_properties (GstCudaBatchInfer * self);

G_END_DECLS
