/* cudabatchinfer: the inference engine, the element's only way in
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The engine's public header, with the types it shares (cbitypes.h): the
 * element's build sees gst/infer/include/ and nothing else of the engine.
 *
 * Open (a model on a backend), warm up (plan a shape and run it dry), run
 * batches, read statistics, free. One caller at a time, but for
 * cbi_engine_collect(), cbi_engine_get_output() and cbi_engine_release(),
 * which one other thread may call on submitted batches meanwhile.
 *
 * On the CPU the batches and the warm-up run on a thread of the engine's,
 * whichever thread calls (cbiworker.c: OpenMP then keeps one pool of
 * threads for the engine); the caller waits for them.
 */
#pragma once

#include "cbitypes.h"

/**
 * CBI_ENGINE_AUTO_FASTER_PERCENT:
 *
 * Under %CBI_PRECISION_AUTO a lower precision that passes its check is
 * kept only where its median batch takes at most this share (%) of
 * float32's. Where the two are about as fast, noise would otherwise
 * choose between them from run to run, and float32 is the exact one.
 */
#define CBI_ENGINE_AUTO_FASTER_PERCENT 95

G_BEGIN_DECLS
/**
 * CbiBackendKind:
 * @CBI_BACKEND_AUTO: CUDA where usable, else the CPU
 * @CBI_BACKEND_CPU: oneDNN on the CPU
 * @CBI_BACKEND_CUDA: CUDA and cuDNN on an NVIDIA GPU
 * @CBI_BACKEND_REMOTE: an inference server that speaks the KServe v2
 *   (Open Inference) protocol over HTTP (cbi_engine_new_remote()); AUTO
 *   never picks it
 */
    typedef enum
{
  CBI_BACKEND_AUTO,
  CBI_BACKEND_CPU,
  CBI_BACKEND_CUDA,
  CBI_BACKEND_REMOTE,
} CbiBackendKind;

/**
 * CbiRemoteConfig:
 * @url: the server's base URL, `http://host:port`
 * @model: the model's name on the server
 * @version: (nullable): its version; %NULL or "" for the server's choice
 * @timeout_ns: the longest one request may take, connecting included
 *   (0: no limit)
 *
 * Where cbi_engine_new_remote() sends its batches. The engine copies what
 * it keeps: the strings are the caller's.
 */
typedef struct
{
  const gchar *url;
  const gchar *model;
  const gchar *version;
  guint64 timeout_ns;
} CbiRemoteConfig;

typedef struct _CbiEngine CbiEngine;

/* Planned dry batches a warm-up times after the first: at least
 * CBI_WARMUP_MIN_TIMED_BATCHES, then more while the timed ones add up to
 * less than CBI_WARMUP_TIMED_BUDGET_NS, up to CBI_WARMUP_TIMED_BATCHES: a
 * small model gets enough samples for a 90th percentile that one slow
 * sample cannot set, a large one a warm-up no longer than with three */
#define CBI_WARMUP_TIMED_BATCHES 20
#define CBI_WARMUP_MIN_TIMED_BATCHES 3
#define CBI_WARMUP_TIMED_BUDGET_NS (500 * G_GUINT64_CONSTANT (1000000))

/**
 * CbiBatchReport:
 *
 * What one cbi_engine_run() or warm-up measured. Pool figures come from the
 * engine's pool; @peak_* are peaks during the batch; @fresh_* are what the
 * pool had to get from its allocator during the batch. @device_fresh_bytes
 * is what the device's free memory (cudaMemGetInfo) fell since the last
 * warm-up ended: memory the pool never sees (cuDNN, cuBLAS, CUDA graphs,
 * modules loaded on first use), or another user of the device; 0 on the
 * CPU. @backend is the interned name of the backend that ran the batch
 * and @device_id its device (0 on the CPU).
 */
typedef struct
{
  const gchar *backend;
  gint device_id;
  guint slots;
  guint frames;
  gboolean replanned;
  CbiPoolStats pool;            /* after the batch */
  guint64 fresh_allocations;
  guint64 fresh_bytes;
  guint64 workspace_bytes;
  guint64 device_free_bytes;
  guint64 device_total_bytes;
  guint64 device_fresh_bytes;
  guint threads;                /* OpenMP threads of the thread that ran it */
  gboolean single_thread;       /* the CPU ran the batch on one of them:
                                 * other threads kept the cores busy */
  guint64 time_ns;
  /* the remote backend: the batch's HTTP request from its first byte
   * sent to its reply's last received, and the bytes of each (headers
   * left out); 0 on the other backends */
  guint64 remote_rtt_ns;
  guint64 remote_bytes_sent;
  guint64 remote_bytes_received;
  /* warm-up only: the planned batches timed after the first
   * (@n_steady_samples of them); their median, which one slow sample (a
   * page fault, a busy core) cannot move: a batch's usual cost; and
   * their 90th percentile (nearest rank: the slowest of fewer than ten),
   * what a batch may take on this machine as loaded as it was: the
   * batch time to report as latency */
  guint64 steady_samples_ns[CBI_WARMUP_TIMED_BATCHES];
  guint n_steady_samples;
  guint64 steady_time_ns;
  guint64 latency_time_ns;
  /* warm-up only: the first output whose values on the grey frames hold
   * NaN or infinities (-1: none; a model with NaN weights would otherwise
   * give black frames and no word), and how many of its values */
  gint nonfinite_output;
  guint64 nonfinite_values;
  /* warm-up only: the precision the plans run in (never AUTO; float32
   * where the one asked for changes no op of the model), the ops
   * (convolutions, matrix products) that run in it (@low_precision_ops);
   * where it is not
   * float32, the accuracy check: each output's distance from a float32
   * run of the same test frames (@checked), and the precisions AUTO tried
   * before it and left (@n_rejected, in the order tried), each with its
   * worst output and that output's relative error (G_MAXDOUBLE: NaN or
   * infinities), or -1 and G_MAXDOUBLE where it could not be planned or
   * run, or -1 and its worst error where it passed the check but ran
   * not clearly faster than float32 (above
   * CBI_ENGINE_AUTO_FASTER_PERCENT of its time): then @rejected_time_ns
   * holds its median batch time (0 for the others), and
   * @reference_time_ns float32's, which AUTO times in its reference run
   * (0 where it did not) */
  CbiPrecision precision;
  guint low_precision_ops;
  gboolean checked;
  CbiAccuracy accuracy[CBI_MAX_OUTPUTS];
  guint n_rejected;
  CbiPrecision rejected[4];
  gint rejected_output[4];
  gdouble rejected_error[4];
  guint64 rejected_time_ns[4];
  guint64 reference_time_ns;
} CbiBatchReport;

/* Returns: (transfer full) (nullable): the model of the ONNX file @path
 * (nullable: %NULL is the embedded pencil-sketch model), for
 * cbi_engine_new(); %NULL with @error set (CBI_ERROR_MODEL) where the file
 * cannot be read or holds what the engine cannot run, naming it. */
CbiGraph *cbi_engine_load_model (const gchar * path, GError ** error);

/* Returns: (transfer full) (nullable): an engine running @graph (transfer
 * full, freed even on failure) on the backend @kind; @used_fallback is set
 * when AUTO did not take CUDA (no usable device, or an op of @graph it
 * cannot run: cbi_engine_fallback_reason() says which). A backend asked
 * for by name that cannot run an op of @graph fails, naming it.
 * Under AUTO the engine also leaves CUDA for the CPU later, once: when a
 * warm-up fails on CUDA, or a batch fails on CUDA (planning, or queueing
 * its work) while no other batch is in flight; the warm-up or the batch is
 * then run again on the CPU (but for a batch of frames in the GPU's
 * memory, CbiFrameBatch's in_device, which fails), and
 * cbi_engine_fallback_reason() says what failed. A backend asked for by name never changes.
 * @memory_limit caps the pool and the warm-up's test frames (0: no cap;
 * see cbi_engine_set_memory_limit()). */
CbiEngine *cbi_engine_new (CbiGraph * graph, CbiBackendKind kind,
    gint device_id, guint64 memory_limit, gboolean * used_fallback,
    GError ** error);
void cbi_engine_free (CbiEngine * engine);

/* Returns: (transfer full) (nullable): an engine whose batches run on the
 * inference server of @config (the remote backend). The server must be
 * ready, its model too, and the model must take one FP32 image tensor
 * of 3 channels (N x 3 x H x W, or N x H x W x 3) and give FP32 tensors:
 * otherwise %NULL with @error set (CBI_ERROR_REMOTE where the server
 * cannot be reached or answers with an error, CBI_ERROR_MODEL where the
 * model does not fit), naming the server's figure and ours. @graph
 * (transfer full, nullable, freed even on failure): the same model as a
 * local file, whose input and outputs the server's metadata must match,
 * and whose shapes the engine then uses; %NULL: the engine works with
 * the server's metadata alone (an output dimension it leaves open, but
 * the batch, must be the input's at the same place). @memory_limit as
 * cbi_engine_new(). */
CbiEngine *cbi_engine_new_remote (const CbiRemoteConfig * config,
    CbiGraph * graph, guint64 memory_limit, GError ** error);

/* Returns: (transfer none): the interned name of the backend in use
 * ("cpu", "cuda"), which lives as long as the process. */
const gchar *cbi_engine_backend_name (CbiEngine * engine);
/* Returns: (transfer none) (nullable): why AUTO passed CUDA over, or left
 * it, for a user ("no usable CUDA device (...)", "the cuda backend cannot
 * run node up (Resize)", "CUDA failed in the warm-up: ..."), owned by the
 * engine until it changes backend or is freed; %NULL where it did not. */
const gchar *cbi_engine_fallback_reason (CbiEngine * engine);
gint cbi_engine_device_id (CbiEngine * engine);
/* Whether CUDA support was compiled in. */
gboolean cbi_engine_has_cuda (void);

/* Fills @matrix with the conversions between 8-bit Y'CbCr and R'G'B' of
 * the colour matrix of luma weights @kr and @kb (as
 * gst_video_color_matrix_get_Kr_Kb() gives them) in limited range (luma
 * 16-235, chroma 16-240) or @full_range (0-255). @matrix: (out caller-allocates). */
void cbi_yuv_matrix_init (CbiYuvMatrix * matrix, gdouble kr, gdouble kb,
    gboolean full_range);

/* Model input channels and its fixed height/width (-1 where symbolic). */
void cbi_engine_input_shape (CbiEngine * engine, gint64 * channels,
    gint64 * height, gint64 * width);
/**
 * CbiOutputInfo:
 * @image: whether the first output becomes video frames (it is 4-D NCHW
 *   with 1, 3 or 4 channels); otherwise frames pass through and every
 *   output is a tensor
 * @channels: the image output's channels
 * @height: the image output's height
 * @width: the image output's width
 * @n_outputs: the model's outputs
 * @names: (array length=n_outputs): their names, owned by the engine
 * @shapes: (array length=n_outputs): their shapes for one frame (the
 *   first dimension, the batch, is 1)
 *
 * What a model makes of frames of one size.
 */
typedef struct
{
  gboolean image;
  guint channels;
  guint height;
  guint width;
  guint n_outputs;
  const gchar *names[CBI_MAX_OUTPUTS];
  CbiShape shapes[CBI_MAX_OUTPUTS];
} CbiOutputInfo;

/* What the model gives for frames of @width x @height (3 channels in).
 * Fails with CBI_ERROR_SHAPE saying what the model takes when the frames
 * do not fit it (channels, a fixed size) or an output does not have the
 * batch as its first dimension. */
gboolean cbi_engine_frame_outputs (CbiEngine * engine, gint64 height,
    gint64 width, CbiOutputInfo * info, GError ** error);

guint cbi_engine_n_outputs (CbiEngine * engine);

/* Sets the most bytes the engine may hold (0: no limit): its pool, and
 * during a warm-up its test frames too. A caller that keeps buffers of
 * its own under the same budget gives the engine what they leave. */
void cbi_engine_set_memory_limit (CbiEngine * engine, guint64 memory_limit);

/* Drops every plan, plans the shape of @layout (its frame size, pixel
 * layout and @layout->n_slots; its output pointers are ignored), runs one
 * dry batch of test frames through packing, the graph and unpacking, then
 * more to time a planned batch (see %CBI_WARMUP_TIMED_BATCHES: their
 * median in @report->steady_time_ns, their 90th percentile in
 * @report->latency_time_ns),
 * gives back what only the warm-up needed and restarts the peaks. @report
 * holds what the warm-up cost: its fresh allocations, its peaks, its time
 * and in @report->pool what stays reserved; @report->device_free_bytes is
 * the device's free memory after it, from which later batches count their
 * @device_fresh_bytes.
 * Under a precision other than float32 (cbi_engine_set_precision()), the
 * warm-up first runs its test frames through a float32 plan, keeps its
 * outputs, drops that plan, then compares the warmed-up plan's outputs on
 * the same frames with them (@report->accuracy). An output past the
 * tolerance, or NaN or infinities where float32 has none, fails the
 * warm-up with CBI_ERROR_PRECISION naming the output and the figure;
 * under AUTO the warm-up steps back to the next wider precision instead
 * (@report->rejected), down to float32, which is not checked. Under AUTO
 * the float32 run is timed too, and a precision that passes its check
 * but whose median batch time is above CBI_ENGINE_AUTO_FASTER_PERCENT of
 * float32's gives way to the next wider one as well (a CPU bfloat16 wide
 * plan first to its narrow plan; @report->rejected_time_ns); a float32
 * plan kept then is made again and run once, not timed again: its
 * @report->steady_samples_ns are the reference run's. Before
 * either, a plan that takes the precision wherever the backend runs it
 * faster (the CPU's wide bfloat16 plan, which the warm-up tries first)
 * and fails the check, or cannot be planned or run, is made again on
 * fewer ops (its narrow plan) and checked in turn, where that plan
 * differs; the narrow plan's figures are then the ones reported. The float32
 * plan's memory goes back before the warm-up ends: no batch after it
 * allocates.
 * The test frames are the engine's own (gradients under fine noise), or
 * the caller's where @layout->n_frames is above 0: @layout->in and
 * @layout->in_stride (transfer none, read during the call), of the
 * layout's size and pixel layout, repeated in turn to fill the batch. */
gboolean cbi_engine_warmup (CbiEngine * engine, const CbiFrameBatch * layout,
    CbiBatchReport * report, GError ** error);

/* The precision the plans run in: the warm-up's choice after one, else
 * what cbi_engine_set_precision() set (float32 for AUTO, and for one the
 * backend backend=auto chose has not). */
CbiPrecision cbi_engine_get_precision (CbiEngine * engine);

/* The arithmetic of the plans from the next warm-up on (see
 * #CbiPrecision; the default is float32), and the largest relative error
 * (#CbiAccuracy.relative_error) of any output that a precision other than
 * float32 may give on the warm-up's test frames. Fails with
 * CBI_ERROR_PRECISION, saying why and what it has, where the backend
 * cannot run @precision; AUTO never fails. The warm-up applies it again
 * (on the CPU, where AUTO left CUDA) and checks it: see
 * cbi_engine_warmup(). */
gboolean cbi_engine_set_precision (CbiEngine * engine, CbiPrecision precision,
    gdouble tolerance, GError ** error);

/* Whether the plans made from now on outside a warm-up (tensor runs) take
 * the precision wherever the backend runs it faster (the CPU's wide
 * bfloat16 plan), as a warm-up that checks them does first, rather than
 * only for the ops that gain most (the default after
 * cbi_engine_set_precision(), as nothing checks those plans): for tests
 * that compare the outputs with a reference themselves. The next warm-up
 * chooses again. */
void cbi_engine_set_precision_wide (CbiEngine * engine, gboolean wide);

/* The ops (convolutions, matrix products) of the last plan made that run
 * below float32. */
guint cbi_engine_low_precision_ops (CbiEngine * engine);

/* Runs one batch of @batch->n_slots (planning that shape first if no plan
 * has it: @report->replanned), waiting for it: cbi_engine_submit(), then
 * cbi_engine_collect() and cbi_engine_release(). The image output is
 * unpacked into @batch->out when that is set; to read the other outputs
 * with cbi_engine_get_output(), submit and collect the batch, which gives
 * its ticket. */
gboolean cbi_engine_run (CbiEngine * engine, const CbiFrameBatch * batch,
    CbiBatchReport * report, GError ** error);

/* Runs the model on one input tensor of @shape (the input's rank; its
 * fixed dimensions as the model has them: N x H x W x C for a model whose
 * file takes its image channels last, which the engine then transposes
 * into a buffer of its own, kept for the next call), @input (transfer
 * none) holding its elements in row-major order, waiting for it as
 * cbi_engine_run() does. @ticket (out) (optional) receives the slot it ran in, once it was
 * submitted: read the results with cbi_engine_get_output() and that
 * ticket. */
gboolean cbi_engine_run_tensor (CbiEngine * engine, const CbiShape * shape,
    const gfloat * input, guint * ticket, CbiBatchReport * report,
    GError ** error);

/* Output @index of the batch collected under @ticket (from
 * cbi_engine_submit() or cbi_engine_run_tensor()), released or not.
 * @shape (out caller-allocates) receives its shape.
 * Returns: (transfer none) (nullable): its elements in row-major order,
 * in host memory that the engine owns: valid until the slot of @ticket
 * takes another batch (on a synchronous backend, until any batch of the
 * same shape is submitted), a warm-up, cbi_engine_set_inflight() or
 * cbi_engine_free(); the caller copies what it keeps longer. %NULL with
 * @error set when that slot holds no collected batch (never collected,
 * collection failed, or another batch ran since) or @index is past the
 * last output. The output that a batch unpacked into frames is not
 * kept. */
const gfloat *cbi_engine_get_output (CbiEngine * engine, guint ticket,
    guint index, CbiShape * shape, GError ** error);

/* Batches in flight.
 *
 * cbi_engine_submit() queues a batch: it packs the frames (the one copy on
 * the way in) and starts the graph. On a backend that queues work (a GPU:
 * cbi_engine_is_async()), it returns before the batch has run, so the
 * next batch uploads while this one computes; elsewhere it has run when
 * it returns. cbi_engine_collect() waits for it and copies the image
 * output into @batch->out (the one copy on the way out); the frames of
 * @batch must stay mapped until then. cbi_engine_release() frees its slot.
 * Submissions take the slots in turn: submitting into a slot not yet
 * released fails with CBI_ERROR_BUSY. */

/* How many batches may be in flight, 1 (the default) to
 * CBI_MAX_INFLIGHT. Plans keep one set of transfer buffers per batch, so
 * this drops them: set it before the warm-up, with none in flight. */
gboolean cbi_engine_set_inflight (CbiEngine * engine, guint n, GError ** error);

/* Whether cbi_engine_submit() returns before the batch has run. */
gboolean cbi_engine_is_async (CbiEngine * engine);

/* Queues @batch (as cbi_engine_run() runs it); @ticket receives its slot.
 * @report holds what the submission cost (plan, fresh allocations, pool
 * figures); cbi_engine_collect() adds the time and the device figures. */
gboolean cbi_engine_submit (CbiEngine * engine, const CbiFrameBatch * batch,
    guint * ticket, CbiBatchReport * report, GError ** error);

/* Waits for the batch of @ticket and unpacks its image output into
 * @batch->out (@batch as submitted). Sets @report->time_ns, from the
 * submission to now, and the device's free and total memory. Its outputs
 * are then read with cbi_engine_get_output(). On failure the batch's
 * results are lost; release it all the same. */
gboolean cbi_engine_collect (CbiEngine * engine, guint ticket,
    const CbiFrameBatch * batch, CbiBatchReport * report, GError ** error);

/* Gives the slot of @ticket back, collected or not (after a failure). */
void cbi_engine_release (CbiEngine * engine, guint ticket);

/* The pool's figures, plus the staging pool's where the backend has one
 * (pinned host memory for a GPU's transfers). */
void cbi_engine_get_pool_stats (CbiEngine * engine, CbiPoolStats * stats);

/* Whether planning benchmarks the candidate algorithms (cuDNN's
 * exhaustive search) instead of taking the heuristics' first; the next
 * plan, the warm-up's, uses it. The CPU backend ignores it. */
void cbi_engine_set_exhaustive_search (CbiEngine * engine, gboolean exhaustive);

/* Whether a plan's work is recorded on its second run and replayed after
 * (CUDA graphs: one launch for every layer of a batch). The CPU backend
 * ignores it. */
void cbi_engine_set_replay (CbiEngine * engine, gboolean replay);

/* The OpenMP threads that run oneDNN and the packing loops on the CPU
 * backend; 0 (the default) keeps OpenMP's own: OMP_NUM_THREADS, else the
 * cores the process may use, and runs a batch on one of them while other
 * threads keep the cores busy (cpu/share.c). */
void cbi_engine_set_threads (CbiEngine * engine, guint threads);

G_END_DECLS
