/* GStreamer cudabatchinfer element: what its files share
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#include "gstcudabatchinfer.h"
#include "gstcbibatcher.h"
#include "cbiengine.h"

G_BEGIN_DECLS
/*
 * The element's files, one job each:
 *
 * gstcudabatchinfer.c           the type, its pads and its state changes
 * gstcudabatchinfer-props.c     properties, their enums and the stats
 * gstcudabatchinfer-caps.c      caps, events, queries, latency and pools
 * gstcudabatchinfer-batch.c     frames in: batches submitted, collected
 *                               (results, metas, stats, messages), warm-up
 * gstcudabatchinfer-inflight.c  the ring of batches in flight and the src
 *                               pad task that pushes them
 * gstcudabatchinfer-timeout.c   the batch deadline (batch-timeout) and its
 *                               task
 * gstcudabatchinfer-streams.c   the request pads sink_%u and src_%u: one
 *                               stream each, its queue of results and the
 *                               src pad task that pushes them
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
#define VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, RGBA, BGRA }"
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
 * GstCbiBatch:
 * @frames: (array length=n): the input buffers, owned
 * @out_buffers: (array length=n_out): output buffers, owned until pushed
 * @tensor_data: per frame, its slice of the tensor outputs, owned until
 *   attached
 * @in_frames: the mapped inputs, @mapped of them
 * @out_frames: the mapped outputs (image outputs), @mapped of them
 * @in_data: plane data of @in_frames, for the engine
 * @in_strides: their strides
 * @out_data: plane data of @out_frames
 * @out_strides: their strides
 * @in_width: each frame's width, for scaling
 * @in_height: each frame's height
 * @out_width: each output frame's width
 * @out_height: each output frame's height
 * @n: frames in the batch
 * @n_out: output buffers held
 * @mapped: frames mapped, in and out
 * @submitted: the engine holds the batch, under @ticket
 * @ticket: its engine slot
 * @collected: its results are in @out_buffers, with their metas
 * @warmed_up: it ran on the warmed-up shape
 * @tags: (array length=n): where each frame's result goes
 * @index: its number in the stream
 * @fb: what the engine was given
 * @report: what the engine measured
 * @message: (nullable): the batch's element message, owned until posted
 * @held: (array length=n): per frame, a reference to its stream (a
 *   GstCbiStream, %NULL for the always pad) while the batch is submitted:
 *   with scaling, the frame is read through its stream's caps, and a
 *   stream released meanwhile (from the always src pad's task, which does
 *   not wait for its frames) stays alive until then
 *
 * A batch on its way through the element. Every array is allocated once,
 * for the element's batch size, so a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  GstCbiFrameTag *tags;
  GstBuffer **out_buffers;
  GstBuffer **tensor_data;
  GstVideoFrame *in_frames;
  GstVideoFrame *out_frames;
  const guint8 **in_data;
  gint *in_strides;
  guint8 **out_data;
  gint *out_strides;
  guint *in_width;
  guint *in_height;
  guint *out_width;
  guint *out_height;
  guint n;
  guint n_out;
  guint mapped;
  gboolean submitted;
  guint ticket;
  gboolean collected;
  gboolean warmed_up;
  guint64 index;
  CbiFrameBatch fb;
  CbiBatchReport report;
  GstMessage *message;
  gpointer *held;
} GstCbiBatch;

/**
 * GstCbiInflight:
 * @batches: (array length=capacity): a ring of batches
 * @capacity: batches that may be in flight at once
 * @head: the oldest batch in flight
 * @count: batches in flight, from @head on
 *
 * The batches submitted and not yet pushed, in order. The element's
 * inflight_lock guards @head and @count (the ring's functions that read
 * them end in _unlocked); a batch's contents belong to one
 * thread at a time: the streaming thread fills the next one, then, once
 * pushed into the ring, the src pad task collects, pushes and pops it.
 */
typedef struct
{
  GstCbiBatch *batches;
  guint capacity;
  guint head;
  guint count;
} GstCbiInflight;

typedef struct
{
  guint64 frames_in;
  guint64 frames_out;
  guint64 frames_dropped;
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
  GstVideoInfo in_info;
  GstVideoInfo out_info;
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
   * the lock is the task's own */
  GstTask *timeout_task;
  GRecMutex timeout_task_lock;

  /* timeout of a partial batch: timer_lock */
  GMutex timer_lock;
  GCond timer_cond;
  gboolean timer_flushing;
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

/* gstcudabatchinfer-props.c */
void gst_cuda_batch_infer_install_properties (GObjectClass * klass);
void gst_cuda_batch_infer_init_properties (GstCudaBatchInfer * self);

/* gstcudabatchinfer-caps.c: the pads' functions and the pools */
gboolean gst_cuda_batch_infer_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
gboolean gst_cuda_batch_infer_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
gboolean gst_cuda_batch_infer_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query);
/* Counts the output buffers of frames of @info against memory-limit, and
 * gives the engine the rest; posts an error when they alone do not fit. */
gboolean gst_cuda_batch_infer_budget_for (GstCudaBatchInfer * self,
    const GstVideoInfo * info);
/* Submits the batch when it holds a frame of @stream (@reason for the
 * log): at once from the always src pad's task, else waiting for a place.
 * With the batch lock. */
void gst_cuda_batch_infer_stream_submit (GstCudaBatchInfer * self,
    GstCbiStream * stream, const gchar * reason);

/* Before @stream's frames change size (scaling): its pending frames go in
 * a batch of their own size, or, where none can be submitted now (from
 * the always src pad's task), are dropped with a warning. With the batch
 * lock. */
void gst_cuda_batch_infer_stream_resize (GstCudaBatchInfer * self,
    GstCbiStream * stream);

/* Takes a reference to the stream of each frame of @batch (batch->held)
 * and drops, from the batch, the frames of streams released or flushed
 * since they came (counted as dropped). With the batch lock, before the
 * batch is submitted. */
void gst_cuda_batch_infer_hold_streams (GstCudaBatchInfer * self,
    GstCbiBatch * batch);
/* Gives back what gst_cuda_batch_infer_hold_streams() took. */
void gst_cuda_batch_infer_unhold_streams (GstCbiBatch * batch);

/* Drops the streams' own output pools (scaling): with the engine. */
void gst_cuda_batch_infer_clear_stream_pools (GstCudaBatchInfer * self);

/* Deactivates and unrefs *@pool, if any, and sets it to %NULL. */
void gst_cuda_batch_infer_clear_pool (GstBufferPool ** pool);

/* gstcudabatchinfer-batch.c */
GstFlowReturn gst_cuda_batch_infer_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer);
/* Submits the pending frames as a batch (padded as pad-mode says),
 * waiting for a free place in the ring. With the sink pad's STREAM_LOCK. */
GstFlowReturn gst_cuda_batch_infer_process (GstCudaBatchInfer * self,
    const gchar * reason);
/* The same without waiting: where no place is free, the frames stay
 * pending. */
GstFlowReturn gst_cuda_batch_infer_try_process (GstCudaBatchInfer * self,
    const gchar * reason);
/* Waits for the engine to finish @batch (transfer none) and makes its
 * output buffers. */
GstFlowReturn gst_cuda_batch_infer_collect (GstCudaBatchInfer * self,
    GstCbiBatch * batch);
/* The flush action signal's handler. */
void gst_cuda_batch_infer_flush (GstCudaBatchInfer * self);
/* Copies the engine's backend (and why auto is not on CUDA) into the
 * stats; warns when auto left CUDA. With the STREAM_LOCK. */
void gst_cuda_batch_infer_note_backend (GstCudaBatchInfer * self);
/* Runs a dry batch of frames of @info and posts its message; posts an
 * error and returns %FALSE when it fails. With the sink pad's STREAM_LOCK. */
gboolean gst_cuda_batch_infer_run_warmup (GstCudaBatchInfer * self,
    const GstVideoInfo * info);
/* gstcudabatchinfer-checkframes.c: up to @max frames of @info's format
 * and size (rows packed: width x pixel stride bytes apart), the first of
 * the image or video file @location, decoded, converted and scaled.
 * Returns: (transfer full) (element-type guint8*): at least one frame,
 * or %NULL with @error set (the decoding pipeline's domain and code). */
GPtrArray *gst_cuda_batch_infer_decode_check_frames (const gchar * location,
    const GstVideoInfo * info, guint max, GError ** error);
/* Posts @error (transfer none, from the engine) as an element error for
 * @step. */
void gst_cuda_batch_infer_post_engine_error (GstCudaBatchInfer * self,
    const gchar * step, const GError * error);

/* gstcudabatchinfer-inflight.c: the ring */
void gst_cbi_inflight_init (GstCbiInflight * inflight, guint capacity,
    guint batch_size);
/* Frees the arrays; the batches must be empty (gst_cbi_batch_reset()). */
void gst_cbi_inflight_clear (GstCbiInflight * inflight);
/* Returns: (transfer none) (nullable): the batch to fill next, %NULL when
 * @capacity are in flight. With the element's inflight_lock. */
GstCbiBatch *gst_cbi_inflight_next_unlocked (GstCbiInflight * inflight);
/* The batch of gst_cbi_inflight_next_unlocked() is now in flight. With the
 * element's inflight_lock. */
void gst_cbi_inflight_push_unlocked (GstCbiInflight * inflight);
/* Unmaps the frames @batch mapped (@mapped of each). */
void gst_cbi_batch_unmap (GstCbiBatch * batch);

/* gstcudabatchinfer-inflight.c: the element's side of it */
/* Gives @batch's engine slot back and empties it, counting the frames that
 * will not come out. */
void gst_cuda_batch_infer_discard (GstCudaBatchInfer * self,
    GstCbiBatch * batch);
/* Submits the pending frames and waits until every batch in flight is
 * pushed. With the sink pad's STREAM_LOCK. */
GstFlowReturn gst_cuda_batch_infer_drain (GstCudaBatchInfer * self,
    const gchar * reason);
/* Empties every batch in flight without pushing it; only while the src
 * pad task is paused or stopped. */
void gst_cuda_batch_infer_discard_inflight (GstCudaBatchInfer * self);
void gst_cuda_batch_infer_start_flushing (GstCudaBatchInfer * self);
gboolean gst_cuda_batch_infer_stop_flushing (GstCudaBatchInfer * self);
gboolean gst_cuda_batch_infer_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);

/* gstcudabatchinfer-timeout.c */
void gst_cuda_batch_infer_timer_init (GstCudaBatchInfer * self);
void gst_cuda_batch_infer_timer_finalize (GstCudaBatchInfer * self);
/* How long @n frames last at the caps' framerate, or GST_CLOCK_TIME_NONE
 * (gstcudabatchinfer-caps.c). */
GstClockTime gst_cuda_batch_infer_frames_duration (GstCudaBatchInfer * self,
    guint n);
/* Arms the deadline of a batch whose first frame has timestamp @pts in
 * @segment. */
void gst_cuda_batch_infer_timer_arm (GstCudaBatchInfer * self,
    const GstSegment * segment, GstClockTime pts);
void gst_cuda_batch_infer_timer_disarm (GstCudaBatchInfer * self);
/* Disarms the timer and pauses (@flushing) or lets run its task. */
void gst_cuda_batch_infer_timer_set_flushing (GstCudaBatchInfer * self,
    gboolean flushing);
/* Starts the timeout task. With inflight_lock held, src_active checked
 * under it: a deactivation clears that flag under the lock, then stops
 * the task. */
gboolean gst_cuda_batch_infer_timer_start_unlocked (GstCudaBatchInfer * self);
/* Stops the timeout task and waits until it has. */
gboolean gst_cuda_batch_infer_timer_stop (GstCudaBatchInfer * self);

/* gstcudabatchinfer-streams.c */
/* The pad templates sink_%u and src_%u. */
void gst_cuda_batch_infer_add_stream_templates (GstElementClass * klass);
GstPad *gst_cuda_batch_infer_request_new_pad (GstElement * element,
    GstPadTemplate * templ, const gchar * name, const GstCaps * caps);
void gst_cuda_batch_infer_release_pad (GstElement * element, GstPad * pad);
/* Returns: (transfer full): an iterator over @pad's pair: sink_K with
 * src_K, sink with src. */
GstIterator *gst_cuda_batch_infer_iterate_internal_links (GstPad * pad,
    GstObject * parent);
/* Returns: (transfer none): the pad paired with @pad. */
GstPad *gst_cuda_batch_infer_pair (GstCudaBatchInfer * self, GstPad * pad);
/* Hands the result of a frame tagged @tag (a stream's) to its stream's
 * queue: @buffer (transfer full, nullable: %NULL when the frame was
 * dropped). A stream that is gone, flushed since or flushing drops it. */
void gst_cuda_batch_infer_deliver (GstCudaBatchInfer * self,
    GstCbiFrameTag * tag, GstBuffer * buffer);
/* Each stream's frames-in, -out and -dropped, as an array of structures
 * (transfer full), or %NULL without request pads. */
GValue *gst_cuda_batch_infer_streams_stats (GstCudaBatchInfer * self);
/* The bitmask of the request pads (index < 64) in @batch, and how many
 * streams (the always pad counts as one) it holds. */
guint gst_cuda_batch_infer_stream_mix (const GstCbiBatch * batch,
    guint64 * mask);
/* Queues serialised @event (transfer full) for src_K, behind the frames
 * of @stream that came before it. */
void gst_cuda_batch_infer_stream_event (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstEvent * event);
/* Drops the pending frames, each through its stream; returns how many. */
guint gst_cuda_batch_infer_drop_pending (GstCudaBatchInfer * self);
/* Wakes every stream's waiters: the element's state changed. */
void gst_cuda_batch_infer_wake_streams (GstCudaBatchInfer * self);
/* For a new run: the streams' counters, caps and serials start again. */
void gst_cuda_batch_infer_reset_streams (GstCudaBatchInfer * self);
/* Frees the streams and their table (finalize). */
void gst_cuda_batch_infer_free_streams (GstCudaBatchInfer * self);

/* gstcudabatchinfer-caps.c, for the streams */
/* Accepts @caps on @stream's sink pad (nullable: the always pad); posts an
 * error when it cannot. With the batch lock. */
gboolean gst_cuda_batch_infer_set_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstCaps * caps);
/* Answers a CAPS query on @stream's sink pad. */
gboolean gst_cuda_batch_infer_stream_query_caps (GstCudaBatchInfer * self,
    GstCbiStream * stream, GstPad * pad, GstQuery * query);
/* Whether frames of @info batch with those of the element's caps. */
gboolean gst_cuda_batch_infer_same_frames (GstCudaBatchInfer * self,
    const GstVideoInfo * info);
/* The same for a frame that came on @pad with its caps @info; posts an
 * error naming both when not. With the batch lock. */
gboolean gst_cuda_batch_infer_check_frames (GstCudaBatchInfer * self,
    GstPad * pad, const GstVideoInfo * info);

G_END_DECLS
