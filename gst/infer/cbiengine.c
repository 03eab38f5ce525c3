/* cudabatchinfer: the inference engine
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Plans are cached per shape. A shape without a plan is planned on the spot
 * and reported as "replanned": that is the cost a short, unpadded batch
 * pays, and what the meta lets a user see.
 */
#include "cbiengine.h"
#include "cbibackend.h"
#include "cbierror.h"
#include "cbiworker.h"

#include <gst/gst.h>
#include <omp.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (cbi_engine_debug);
#define GST_CAT_DEFAULT cbi_engine_debug

/* Enough for the warmed-up shape, an unpadded short batch and a caps
 * change in flight; older plans give their memory back to the pool, but
 * for those a batch in flight still runs on. */
#define CBI_MAX_PLANS 4

/* A batch between cbi_engine_submit() and cbi_engine_release(). */
typedef struct
{
  gboolean busy;
  gboolean collected;           /* its outputs are readable, until the slot
                                 * or (synchronous backend) its plan runs
                                 * another batch, or the plan goes */
  gpointer plan;
  CbiShape outputs[CBI_MAX_OUTPUTS];
  gint64 start;                 /* monotonic, us */
} CbiSlot;

/* The shape plan: what the engine keeps for one input shape, the
 * specialised graph and the backend plan made from it (the memory plan is
 * the backend plan's). */
typedef struct
{
  CbiShape input;
  gboolean unpack_frames;       /* output 0 goes to frames, not the host */
  CbiShape outputs[CBI_MAX_OUTPUTS];
  gpointer plan;                /* the backend plan */
  CbiGraph *graph;              /* what @plan was made from, owned */
  guint64 workspace_bytes;
  guint64 last_used;
} CbiShapePlan;

struct _CbiEngine
{
  CbiGraph *graph;
  const CbiBackendEntry *table; /* the backends it may open */
  guint n_table;
  CbiBackend *backend;
  const gchar *backend_name;    /* interned: each batch's report names it */
  gboolean may_fall_back;       /* AUTO on CUDA: a failure moves to the CPU */
  gboolean warming_up;          /* its batches leave a failure to it */
  guint64 device_free_warm;     /* device free memory after the warm-up */
  CbiPool *pool;
  CbiPool *staging;             /* host buffers for transfers, or NULL */
  guint64 memory_limit;         /* the pool's, plus the warm-up's frames */
  guint threads;                /* OpenMP threads; 0: OpenMP's default */
  gboolean exhaustive_search;   /* the backend's settings, kept for the */
  gboolean replay;              /* one it may fall back to */
  CbiPrecision precision;       /* asked for: the warm-up applies it */
  gboolean auto_backend;        /* AUTO chose the backend: tf32 on one
                                 * without it runs float32 */
  gdouble tolerance;            /* of its accuracy check */
  CbiShapePlan plans[CBI_MAX_PLANS + CBI_MAX_INFLIGHT];
  guint n_plans;
  guint64 use_counter;
  CbiShape *shapes;             /* scratch for shape inference */
  gchar *fallback_reason;       /* why AUTO did not take CUDA, or NULL */
  CbiWorker *worker;            /* runs the CPU's batches, or NULL */

  /* the collecting thread reads these too: lock */
  GMutex lock;
  CbiSlot slots[CBI_MAX_INFLIGHT];
  guint n_slots;
  guint next_slot;
};

gboolean
cbi_engine_has_cuda (void)
{
  guint n, i;
  const CbiBackendEntry *table = cbi_backend_table (&n);

  for (i = 0; i < n; i++)
    if (table[i].kind == CBI_BACKEND_CUDA)
      return TRUE;
  return FALSE;
}

/* The nodes as the importer's rewrites left them, for GST_DEBUG
 * cudabatchinfer-engine:6: what fused into what. */
static void
cbi_engine_log_graph (const CbiGraph * graph)
{
  guint i, s;

  if (gst_debug_category_get_threshold (cbi_engine_debug) < GST_LEVEL_LOG)
    return;
  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    GString *then = g_string_new (NULL);

    for (s = 0; s < n->n_then; s++)
      g_string_append_printf (then, " then %s",
          cbi_eltwise_step_name (&n->then[s]));
    GST_LOG ("node %u: %s (%s)%s", i, cbi_op_type_name (n->op), n->name,
        then->str);
    g_string_free (then, TRUE);
  }
}

/* What the thread had current before a call that reaches the backend
 * (CUDA binds a device to each thread), for cbi_engine_leave(). */
static gint
cbi_engine_enter (CbiEngine * engine)
{
  const CbiBackendIface *iface = engine->backend->iface;

  return iface->thread_enter ? iface->thread_enter () : -1;
}

static void
cbi_engine_leave (CbiEngine * engine, gint entered)
{
  const CbiBackendIface *iface = engine->backend->iface;

  if (iface->thread_leave)
    iface->thread_leave (entered);
}

/* Makes @backend, opened as @kind, the engine's, with its pools and (on
 * the CPU) its compute thread, and the settings the engine has. */
static void
cbi_engine_use_backend (CbiEngine * engine, CbiBackend * backend,
    CbiBackendKind kind)
{
  engine->backend = backend;
  engine->backend_name = g_intern_string (backend->iface->name);
  /* the meta reports 0 for the CPU, whatever was asked */
  backend->device_id = kind == CBI_BACKEND_CPU ? 0 : backend->device_id;
  backend->share_cores = engine->threads == 0;
  backend->inflight = MAX (engine->n_slots, 1);
  backend->exhaustive_search = engine->exhaustive_search;
  backend->replay = engine->replay;
  engine->pool = cbi_pool_new (backend->iface->allocator (backend),
      engine->memory_limit);
  if (backend->iface->staging_allocator)
    engine->staging = cbi_pool_new (backend->iface->staging_allocator
        (backend), 0);
  if (kind == CBI_BACKEND_CPU) {
    GError *err = NULL;

    engine->worker = cbi_worker_new ("cbi-compute", &err);
    if (engine->worker == NULL) {
      GST_WARNING ("no compute thread (%s): batches run on the threads "
          "that submit them", err->message);
      g_clear_error (&err);
    }
  }
}

CbiEngine *
cbi_engine_new_with_backends (const CbiBackendEntry * table,
    guint n_backends, CbiGraph * graph, CbiBackendKind kind, gint device_id,
    guint64 memory_limit, gboolean * used_fallback, GError ** error)
{
  CbiEngine *engine;
  CbiBackend *backend;
  gchar *fallback_reason;
  const CbiBackendKind asked = kind;

  GST_DEBUG_CATEGORY_INIT (cbi_engine_debug, "cudabatchinfer-engine", 0,
      "cudabatchinfer inference engine");
  backend = cbi_backend_open (table, n_backends, graph, kind, device_id,
      &kind, &fallback_reason, error);
  *used_fallback = fallback_reason != NULL;
  if (backend == NULL) {
    cbi_graph_free (graph);
    return NULL;
  }
  if (fallback_reason)
    GST_WARNING ("CUDA passed over (%s): using the CPU", fallback_reason);
  cbi_engine_log_graph (graph);
  backend->device_id = device_id;

  engine = g_new0 (CbiEngine, 1);
  engine->graph = graph;
  engine->table = table;
  engine->n_table = n_backends;
  engine->may_fall_back = asked == CBI_BACKEND_AUTO && kind == CBI_BACKEND_CUDA;
  engine->auto_backend = asked == CBI_BACKEND_AUTO;
  engine->fallback_reason = fallback_reason;
  engine->memory_limit = memory_limit;
  engine->n_slots = 1;
  engine->shapes = g_new0 (CbiShape, graph->tensors->len);
  g_mutex_init (&engine->lock);
  cbi_engine_use_backend (engine, backend, kind);
  return engine;
}

CbiEngine *
cbi_engine_new (CbiGraph * graph, CbiBackendKind kind, gint device_id,
    guint64 memory_limit, gboolean * used_fallback, GError ** error)
{
  guint n_backends;
  const CbiBackendEntry *table = cbi_backend_table (&n_backends);

  return cbi_engine_new_with_backends (table, n_backends, graph, kind,
      device_id, memory_limit, used_fallback, error);
}

/* The figures of the pool and, added to them, of the staging pool: the
 * memory a batch holds is both (peaks are each pool's, summed). */
static void
cbi_engine_stats (CbiEngine * engine, CbiPoolStats * stats)
{
  CbiPoolStats st;

  cbi_pool_get_stats (engine->pool, stats);
  if (engine->staging == NULL)
    return;
  cbi_pool_get_stats (engine->staging, &st);
  stats->allocated_bytes += st.allocated_bytes;
  stats->reserved_bytes += st.reserved_bytes;
  stats->peak_allocated_bytes += st.peak_allocated_bytes;
  stats->peak_reserved_bytes += st.peak_reserved_bytes;
  stats->fresh_allocations += st.fresh_allocations;
  stats->fresh_bytes += st.fresh_bytes;
  stats->failed_allocations += st.failed_allocations;
}

static void
cbi_engine_reset_peaks (CbiEngine * engine)
{
  cbi_pool_reset_peaks (engine->pool);
  if (engine->staging)
    cbi_pool_reset_peaks (engine->staging);
}

static void
cbi_engine_drop_plan (CbiEngine * engine, guint index)
{
  CbiShapePlan *e = &engine->plans[index];
  guint k;

  /* the outputs of the batches collected on it go with it */
  g_mutex_lock (&engine->lock);
  for (k = 0; k < CBI_MAX_INFLIGHT; k++)
    if (engine->slots[k].plan == e->plan)
      engine->slots[k].collected = FALSE;
  g_mutex_unlock (&engine->lock);
  engine->backend->iface->free_plan (engine->backend, e->plan, engine->pool,
      engine->staging);
  cbi_graph_free (e->graph);
  engine->plans[index] = engine->plans[--engine->n_plans];
}

static void
cbi_engine_drop_plans (CbiEngine * engine)
{
  while (engine->n_plans > 0)
    cbi_engine_drop_plan (engine, 0);
}

/* Frees the backend, its plans, pools and compute thread. */
static void
cbi_engine_drop_backend (CbiEngine * engine)
{
  const CbiBackendIface *iface = engine->backend->iface;
  gint entered = cbi_engine_enter (engine);

  /* its OpenMP pool ends with it */
  g_clear_pointer (&engine->worker, cbi_worker_free);
  cbi_engine_drop_plans (engine);
  g_clear_pointer (&engine->pool, cbi_pool_free);
  g_clear_pointer (&engine->staging, cbi_pool_free);
  iface->free (engine->backend);
  engine->backend = NULL;
  if (iface->thread_leave)
    iface->thread_leave (entered);
}

void
cbi_engine_free (CbiEngine * engine)
{
  if (engine == NULL)
    return;
  cbi_engine_drop_backend (engine);
  cbi_graph_free (engine->graph);
  g_free (engine->shapes);
  g_free (engine->fallback_reason);
  g_mutex_clear (&engine->lock);
  g_free (engine);
}

const gchar *
cbi_engine_backend_name (CbiEngine * engine)
{
  return engine->backend_name;
}

const gchar *
cbi_engine_fallback_reason (CbiEngine * engine)
{
  return engine->fallback_reason;
}

gint
cbi_engine_device_id (CbiEngine * engine)
{
  return engine->backend->device_id;
}

void
cbi_engine_input_shape (CbiEngine * engine, gint64 * channels,
    gint64 * height, gint64 * width)
{
  const CbiTensorInfo *in = cbi_graph_tensor (engine->graph,
      engine->graph->input);
  gboolean image = in->n_dims == 4;

  *channels = image ? in->dims[1] : -1;
  *height = image ? in->dims[2] : -1;
  *width = image ? in->dims[3] : -1;
}

guint
cbi_engine_n_outputs (CbiEngine * engine)
{
  return engine->graph->n_outputs;
}

/* Whether every output of the shapes just inferred has the batch first:
 * frames and their tensors go back one per frame. A model exported for
 * one frame often reshapes to a constant shape that fixes N to 1, which
 * would mix the frames of a larger batch silently. */
static gboolean
cbi_engine_check_batch_major (CbiEngine * engine, gint64 batch, GError ** error)
{
  const CbiGraph *g = engine->graph;
  guint i;

  for (i = 0; i < g->n_outputs; i++) {
    const CbiShape *s = &engine->shapes[g->outputs[i]];
    if (s->n_dims < 1 || s->dims[0] != batch) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "output %s does not "
          "grow with the batch (its first dimension is %" G_GINT64_FORMAT
          " for %" G_GINT64_FORMAT " frames): the model fixes its batch "
          "size (a Reshape to a constant shape, say) or does not keep the "
          "batch first; export it with a dynamic batch dimension",
          cbi_graph_tensor (g, g->outputs[i])->name,
          s->n_dims < 1 ? 0 : s->dims[0], batch);
      return FALSE;
    }
  }
  return TRUE;
}

/* Fills engine->shapes for @batch frames of @height x @width, checking
 * that the model takes 3-channel images; with @planned, the graph
 * backends plan for that shape (cbi_graph_specialise(), transfer full)
 * into it too. */
static gboolean
cbi_engine_infer_frames (CbiEngine * engine, gint64 batch, gint64 height,
    gint64 width, CbiGraph ** planned, GError ** error)
{
  const CbiTensorInfo *in = cbi_graph_tensor (engine->graph,
      engine->graph->input);
  CbiShape shape;

  if (in->n_dims != 4 || in->dims[1] != 3) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "the model's input %s "
        "takes %d-D tensors of %" G_GINT64_FORMAT " channels; video frames "
        "need a 4-D (N, 3, H, W) input", in->name, in->n_dims,
        in->n_dims > 1 ? in->dims[1] : 0);
    return FALSE;
  }
  if ((in->dims[2] > 0 && in->dims[2] != height)
      || (in->dims[3] > 0 && in->dims[3] != width)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "the model takes frames "
        "of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " only, not %"
        G_GINT64_FORMAT "x%" G_GINT64_FORMAT, in->dims[3], in->dims[2],
        width, height);
    return FALSE;
  }
  cbi_graph_frame_shape (engine->graph, batch, height, width, &shape);
  if (planned ? (*planned = cbi_graph_specialise (engine->graph, &shape,
              engine->shapes, error)) == NULL :
      !cbi_graph_infer_shapes (engine->graph, &shape, engine->shapes, error))
    return FALSE;
  if (!cbi_engine_check_batch_major (engine, batch, error)) {
    if (planned)
      g_clear_pointer (planned, cbi_graph_free);
    return FALSE;
  }
  return TRUE;
}

gboolean
cbi_engine_frame_outputs (CbiEngine * engine, gint64 height, gint64 width,
    CbiOutputInfo * info, GError ** error)
{
  const CbiGraph *g = engine->graph;
  const CbiShape *first;
  guint i;

  memset (info, 0, sizeof (*info));
  /* every output must grow with the batch, to be split into frames: at
   * a batch of 2, a batch fixed to 1 shows */
  if (!cbi_engine_infer_frames (engine, 2, height, width, NULL, error))
    return FALSE;
  if (!cbi_engine_infer_frames (engine, 1, height, width, NULL, error))
    return FALSE;
  info->n_outputs = g->n_outputs;
  for (i = 0; i < g->n_outputs; i++) {
    info->names[i] = cbi_graph_tensor (g, g->outputs[i])->name;
    info->shapes[i] = engine->shapes[g->outputs[i]];
  }
  first = &info->shapes[0];
  info->image = first->n_dims == 4 && (first->dims[1] == 1
      || first->dims[1] == 3 || first->dims[1] == 4)
      && first->dims[2] <= G_MAXINT && first->dims[3] <= G_MAXINT;
  if (info->image) {
    info->channels = first->dims[1];
    info->height = first->dims[2];
    info->width = first->dims[3];
  }
  return TRUE;
}

/* Batches in flight on @plan, or on any plan when @plan is NULL. */
static guint
cbi_engine_in_flight (CbiEngine * engine, gpointer plan)
{
  guint i, busy = 0;

  g_mutex_lock (&engine->lock);
  for (i = 0; i < engine->n_slots; i++)
    busy += engine->slots[i].busy && (plan == NULL
        || engine->slots[i].plan == plan);
  g_mutex_unlock (&engine->lock);
  return busy;
}

/* Whether batches are in flight, which @error then says. */
static gboolean
cbi_engine_any_in_flight (CbiEngine * engine, GError ** error)
{
  guint busy = cbi_engine_in_flight (engine, NULL);

  if (busy)
    g_set_error (error, CBI_ERROR, CBI_ERROR_BUSY, "%u batches are still in "
        "flight: collect and release them first", busy);
  return busy > 0;
}

/* Under AUTO, CUDA failed @where with *@error: the model moves to the
 * CPU, with the engine's settings, *@error goes and the reason stays for
 * cbi_engine_fallback_reason(). FALSE, *@error untouched, where it may
 * not: another backend was asked for, it already moved, or batches are
 * in flight (their results would be lost). Once only: a failure on the
 * CPU is the model's or the machine's, and is reported. */
static gboolean
cbi_engine_fall_back (CbiEngine * engine, const gchar * where, GError ** error)
{
  GError *open_error = NULL;
  CbiBackend *cpu;
  CbiBackendKind kind;
  gchar *none;

  if (!engine->may_fall_back || error == NULL || *error == NULL
      || cbi_engine_in_flight (engine, NULL) > 0)
    return FALSE;
  engine->may_fall_back = FALSE;
  cpu = cbi_backend_open (engine->table, engine->n_table, engine->graph,
      CBI_BACKEND_CPU, 0, &kind, &none, &open_error);
  if (cpu == NULL) {
    GST_WARNING ("CUDA failed %s (%s) and the CPU cannot run the model "
        "either: %s", where, (*error)->message, open_error->message);
    g_clear_error (&open_error);
    return FALSE;
  }
  g_free (engine->fallback_reason);
  engine->fallback_reason = g_strdup_printf ("CUDA failed %s: %s", where,
      (*error)->message);
  GST_WARNING ("%s: using the CPU", engine->fallback_reason);
  g_clear_error (error);
  cbi_engine_drop_backend (engine);
  g_mutex_lock (&engine->lock);
  engine->next_slot = 0;
  g_mutex_unlock (&engine->lock);
  engine->device_free_warm = 0;
  cbi_engine_use_backend (engine, cpu, CBI_BACKEND_CPU);
  return TRUE;
}

/* The shape plan for input @shape, made on the spot when no cached plan has it
 * (@replanned), after filling engine->shapes: for @frames (%NULL for a
 * tensor input) through cbi_engine_infer_frames(), which checks that the
 * model takes frames. A batch of @frames that unpacks its output into
 * frames has plans of its own, which keep no host copy of that output. */
static CbiShapePlan *
cbi_engine_get_shape_plan (CbiEngine * engine, const CbiShape * shape,
    const CbiFrameBatch * frames, gboolean * replanned, GError ** error)
{
  CbiShapePlan *e, fresh = { {0,}, };
  const CbiGraph *g = engine->graph;
  const gboolean unpack = frames != NULL && frames->out != NULL;
  gint oldest = -1;
  guint i;

  *replanned = FALSE;
  for (i = 0; i < engine->n_plans; i++) {
    e = &engine->plans[i];
    if (cbi_shape_equal (&e->input, shape) && e->unpack_frames == unpack) {
      e->last_used = ++engine->use_counter;
      return e;
    }
    if (!cbi_engine_in_flight (engine, e->plan) && (oldest < 0
            || e->last_used < engine->plans[oldest].last_used))
      oldest = i;
  }

  /* plan first: a failed plan leaves the cached ones as they were. Shape
   * values are computed here, once per planned shape, never per batch */
  if (frames ? !cbi_engine_infer_frames (engine, shape->dims[0],
          shape->dims[2], shape->dims[3], &fresh.graph, error) :
      (fresh.graph = cbi_graph_specialise (g, shape, engine->shapes,
              error)) == NULL)
    return NULL;
  fresh.input = *shape;
  fresh.unpack_frames = unpack;
  for (i = 0; i < g->n_outputs; i++)
    fresh.outputs[i] = engine->shapes[g->outputs[i]];
  fresh.plan = engine->backend->iface->plan (engine->backend, fresh.graph,
      engine->shapes, engine->pool, engine->staging, unpack,
      &fresh.workspace_bytes, error);
  if (fresh.plan == NULL) {
    cbi_graph_free (fresh.graph);
    return NULL;
  }
  /* past the cache's size only while older plans still have batches in
   * flight: there is room for one more than those */
  if (engine->n_plans >= CBI_MAX_PLANS && oldest >= 0)
    cbi_engine_drop_plan (engine, oldest);
  GST_DEBUG ("new plan (%u cached)", engine->n_plans + 1);
  fresh.last_used = ++engine->use_counter;
  e = &engine->plans[engine->n_plans++];
  *e = fresh;
  *replanned = TRUE;
  return e;
}

/* Whether output 0 of @e unpacks into @batch's frames. */
static gboolean
cbi_engine_check_image (const CbiShapePlan * e, const CbiFrameBatch * batch,
    GError ** error)
{
  const CbiShape *y = &e->outputs[0];
  const gint64 c = batch->out_channels ? batch->out_channels : 3;
  const gint64 h = batch->out_height ? batch->out_height : batch->height;
  const gint64 w = batch->out_width ? batch->out_width : batch->width;

  if (y->n_dims == 4 && y->dims[1] == c && y->dims[2] == h && y->dims[3] == w)
    return TRUE;
  g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "the model gives %"
      G_GINT64_FORMAT "-D outputs of %" G_GINT64_FORMAT " channels, not "
      "frames of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " with %"
      G_GINT64_FORMAT " channels", (gint64) y->n_dims,
      y->n_dims > 1 ? y->dims[1] : 0, w, h, c);
  return FALSE;
}

/* OpenMP's thread count is the calling thread's own: set around the work
 * that runs oneDNN or the packing loops (on the compute thread, or on the
 * caller's where there is none), and given back after, so a caller's own
 * OpenMP work keeps its count.
 * Returns what to give back to cbi_engine_threads_leave(). */
static gint
cbi_engine_threads_enter (CbiEngine * engine)
{
  gint before = omp_get_max_threads ();

  if (engine->threads > 0 && before != (gint) engine->threads)
    omp_set_num_threads (engine->threads);
  return before;
}

static void
cbi_engine_threads_leave (gint before)
{
  if (omp_get_max_threads () != before)
    omp_set_num_threads (before);
}

/* What a batch's compute is given and gives back, for the worker. */
typedef struct
{
  CbiEngine *engine;
  const CbiShape *shape;
  const CbiFrameBatch *batch;
  const gfloat *input;
  guint slot;
  CbiBatchReport *report;
  GError **error;
  CbiShapePlan *entry;          /* out: the plan it ran */
  gboolean ok;
} CbiComputeCall;

/* Plans (where the shape is new), packs, runs and unpacks a batch into
 * slot @c->slot: the work that starts OpenMP teams. */
static void
cbi_engine_compute (gpointer data)
{
  CbiComputeCall *c = data;
  CbiEngine *engine = c->engine;
  CbiBackend *backend = engine->backend;
  const CbiBackendIface *iface = backend->iface;
  CbiShapePlan *e;
  gint threads_before = cbi_engine_threads_enter (engine);

  e = cbi_engine_get_shape_plan (engine, c->shape, c->batch,
      &c->report->replanned, c->error);
  c->ok = e != NULL && (c->batch == NULL || c->batch->out == NULL
      || cbi_engine_check_image (e, c->batch, c->error))
      && (c->batch ? iface->upload (backend, e->plan, c->slot, c->batch,
          c->error) : iface->upload_tensor (backend, e->plan, c->slot,
          c->input, c->error))
      && iface->compute (backend, e->plan, c->slot, c->error)
      && iface->download (backend, e->plan, c->slot, c->batch, c->error);
  c->entry = e;
  c->report->backend = engine->backend_name;
  c->report->device_id = backend->device_id;
  c->report->threads = omp_get_max_threads ();
  c->report->single_thread = backend->ran_solo;
  cbi_engine_threads_leave (threads_before);
}

/* Runs @func (@data) on the engine's worker where it has one (the CPU:
 * see cbiworker.c), else here. */
static void
cbi_engine_call (CbiEngine * engine, CbiWorkerFunc func, gpointer data)
{
  if (engine->worker)
    cbi_worker_call (engine->worker, func, data);
  else
    func (data);
}

/* Queues a batch in the next slot: @batch packs the input when set, else
 * @input is copied in. */
static gboolean
cbi_engine_submit_input (CbiEngine * engine, const CbiShape * shape,
    const CbiFrameBatch * batch, const gfloat * input, guint * ticket,
    CbiBatchReport * report, GError ** error)
{
  CbiComputeCall call = { engine, shape, batch, input, 0, report, error,
    NULL, FALSE
  };
  CbiPoolStats before;
  CbiSlot *slot;
  guint k, i;
  gint64 start = g_get_monotonic_time ();
  gint entered;

  memset (report, 0, sizeof (*report));
  g_mutex_lock (&engine->lock);
  k = engine->next_slot;
  slot = &engine->slots[k];
  if (slot->busy) {
    g_mutex_unlock (&engine->lock);
    g_set_error (error, CBI_ERROR, CBI_ERROR_BUSY, "all %u batch slots are "
        "in flight: collect and release one first", engine->n_slots);
    return FALSE;
  }
  /* its ticket stands for this batch from now on */
  slot->collected = FALSE;
  g_mutex_unlock (&engine->lock);

  entered = cbi_engine_enter (engine);
  cbi_engine_stats (engine, &before);
  cbi_engine_reset_peaks (engine);
  call.slot = k;
  cbi_engine_call (engine, cbi_engine_compute, &call);
  cbi_engine_leave (engine, entered);
  if (!call.ok && !engine->warming_up
      && cbi_engine_fall_back (engine, "in a batch", error)) {
    /* the same batch on the CPU, from its first slot */
    memset (report, 0, sizeof (*report));
    k = call.slot = 0;
    slot = &engine->slots[k];
    cbi_engine_stats (engine, &before);
    cbi_engine_call (engine, cbi_engine_compute, &call);
  }
  if (!call.ok)
    return FALSE;

  g_mutex_lock (&engine->lock);
  /* a synchronous backend keeps one set of outputs per plan: this batch
   * wrote over those of the batches collected on it */
  for (i = 0; !cbi_engine_is_async (engine) && i < engine->n_slots; i++)
    if (engine->slots[i].plan == call.entry->plan)
      engine->slots[i].collected = FALSE;
  slot->busy = TRUE;
  slot->collected = FALSE;
  slot->plan = call.entry->plan;
  memcpy (slot->outputs, call.entry->outputs, sizeof (call.entry->outputs));
  slot->start = start;
  engine->next_slot = (k + 1) % engine->n_slots;
  g_mutex_unlock (&engine->lock);

  *ticket = k;
  report->slots = shape->dims[0];
  report->frames = batch ? batch->n_frames : shape->dims[0];
  report->workspace_bytes = call.entry->workspace_bytes;
  cbi_engine_stats (engine, &report->pool);
  report->fresh_allocations =
      report->pool.fresh_allocations - before.fresh_allocations;
  report->fresh_bytes = report->pool.fresh_bytes - before.fresh_bytes;
  return TRUE;
}

gboolean
cbi_engine_submit (CbiEngine * engine, const CbiFrameBatch * batch,
    guint * ticket, CbiBatchReport * report, GError ** error)
{
  CbiShape shape;

  cbi_graph_frame_shape (engine->graph, batch->n_slots, batch->height,
      batch->width, &shape);
  return cbi_engine_submit_input (engine, &shape, batch, NULL, ticket,
      report, error);
}

gboolean
cbi_engine_collect (CbiEngine * engine, guint ticket,
    const CbiFrameBatch * batch, CbiBatchReport * report, GError ** error)
{
  CbiBackend *backend = engine->backend;
  CbiSlot *slot;
  gpointer plan;
  gint64 start;
  gint entered;

  g_mutex_lock (&engine->lock);
  slot = ticket < engine->n_slots ? &engine->slots[ticket] : NULL;
  plan = slot && slot->busy ? slot->plan : NULL;
  start = slot ? slot->start : 0;
  g_mutex_unlock (&engine->lock);
  if (plan == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BUSY, "no batch in flight in "
        "slot %u", ticket);
    return FALSE;
  }
  /* no lock while waiting: the submitting thread goes on meanwhile */
  entered = cbi_engine_enter (engine);
  if (backend->iface->finish) {
    gint threads_before = cbi_engine_threads_enter (engine);
    gboolean ok = backend->iface->finish (backend, plan, ticket, batch,
        error);

    cbi_engine_threads_leave (threads_before);
    if (!ok) {
      cbi_engine_leave (engine, entered);
      return FALSE;
    }
  }

  g_mutex_lock (&engine->lock);
  slot->collected = TRUE;
  g_mutex_unlock (&engine->lock);
  report->time_ns = (g_get_monotonic_time () - start) * 1000;
  /* the device-wide figure: what the pool cannot see */
  if (backend->iface->device_memory
      && backend->iface->device_memory (backend, &report->device_free_bytes,
          &report->device_total_bytes)
      && engine->device_free_warm > report->device_free_bytes)
    report->device_fresh_bytes =
        engine->device_free_warm - report->device_free_bytes;
  cbi_engine_leave (engine, entered);
  return TRUE;
}

void
cbi_engine_release (CbiEngine * engine, guint ticket)
{
  g_return_if_fail (ticket < engine->n_slots);

  g_mutex_lock (&engine->lock);
  engine->slots[ticket].busy = FALSE;
  g_mutex_unlock (&engine->lock);
}

gboolean
cbi_engine_is_async (CbiEngine * engine)
{
  return engine->backend->iface->finish != NULL;
}

gboolean
cbi_engine_set_inflight (CbiEngine * engine, guint n, GError ** error)
{
  gint entered;

  g_return_val_if_fail (n >= 1 && n <= CBI_MAX_INFLIGHT, FALSE);

  if (n == engine->n_slots)
    return TRUE;
  if (cbi_engine_any_in_flight (engine, error))
    return FALSE;
  /* plans hold one set of transfer buffers per slot */
  entered = cbi_engine_enter (engine);
  cbi_engine_drop_plans (engine);
  cbi_engine_leave (engine, entered);
  g_mutex_lock (&engine->lock);
  engine->n_slots = engine->backend->inflight = n;
  engine->next_slot = 0;
  g_mutex_unlock (&engine->lock);
  return TRUE;
}

/* Submit, collect and release in one: what a caller with nothing else to
 * do meanwhile wants. */
static gboolean
cbi_engine_execute (CbiEngine * engine, const CbiShape * shape,
    const CbiFrameBatch * batch, const gfloat * input, guint * ticket,
    CbiBatchReport * report, GError ** error)
{
  guint k;
  gboolean ok;

  if (!cbi_engine_submit_input (engine, shape, batch, input, &k, report, error))
    return FALSE;
  ok = cbi_engine_collect (engine, k, batch, report, error);
  cbi_engine_release (engine, k);
  if (ticket)
    *ticket = k;
  return ok;
}

/* cbi_engine_run(), and the ticket of the batch for its outputs */
static gboolean
cbi_engine_run_frames (CbiEngine * engine, const CbiFrameBatch * batch,
    guint * ticket, CbiBatchReport * report, GError ** error)
{
  CbiShape shape;

  cbi_graph_frame_shape (engine->graph, batch->n_slots, batch->height,
      batch->width, &shape);
  return cbi_engine_execute (engine, &shape, batch, NULL, ticket, report,
      error);
}

gboolean
cbi_engine_run (CbiEngine * engine, const CbiFrameBatch * batch,
    CbiBatchReport * report, GError ** error)
{
  return cbi_engine_run_frames (engine, batch, NULL, report, error);
}

gboolean
cbi_engine_run_tensor (CbiEngine * engine, const CbiShape * shape,
    const gfloat * input, guint * ticket, CbiBatchReport * report,
    GError ** error)
{
  return cbi_engine_execute (engine, shape, NULL, input, ticket, report, error);
}

const gfloat *
cbi_engine_get_output (CbiEngine * engine, guint ticket, guint index,
    CbiShape * shape, GError ** error)
{
  CbiBackend *backend = engine->backend;
  gpointer plan = NULL;
  gboolean collected = FALSE;

  g_mutex_lock (&engine->lock);
  if (ticket < engine->n_slots) {
    const CbiSlot *slot = &engine->slots[ticket];
    collected = slot->collected;
    if (collected && index < engine->graph->n_outputs) {
      plan = slot->plan;
      *shape = slot->outputs[index];
    }
  }
  g_mutex_unlock (&engine->lock);
  if (plan == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "no output %u of the "
        "batch of slot %u: %s", index, ticket, collected ? "the model has "
        "fewer" : "no batch was collected there, or another batch ran "
        "since");
    return NULL;
  }
  return backend->iface->output (backend, plan, ticket, index, error);
}

static gint
cbi_compare_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return x < y ? -1 : x > y;
}

/* The @percent percentile of @n samples (1 to CBI_WARMUP_TIMED_BATCHES),
 * by nearest rank: the smallest sample that at least @percent % of them
 * do not exceed, one of the samples whatever their spread. 50: the median
 * (the lower one of an even count). */
static guint64
cbi_percentile_of_samples (const guint64 * samples, guint n, guint percent)
{
  guint64 sorted[CBI_WARMUP_TIMED_BATCHES];
  guint rank = (n * percent + 99) / 100;

  memcpy (sorted, samples, n * sizeof (guint64));
  qsort (sorted, n, sizeof (guint64), cbi_compare_u64);
  return sorted[MAX (rank, 1) - 1];
}

/* Copies @height rows of @row bytes from @src (@src_stride bytes apart)
 * into @dst, rows @row bytes apart. */
static void
cbi_engine_copy_frame (guint8 * dst, const guint8 * src, gint src_stride,
    gsize row, guint height)
{
  guint y;

  for (y = 0; y < height; y++)
    memcpy (dst + y * row, src + (gsize) y * src_stride, row);
}

/* The warm-up's test frames: smooth gradients, a different one per
 * channel and frame, under a fine pattern of pseudo-random noise: enough
 * of what cameras give for the accuracy check to see what a lower
 * precision does to edges and flat areas alike; the same bytes on every
 * run. */
static void
cbi_engine_test_pattern (guint8 * frame, guint index, guint width,
    guint height, guint pixel_stride)
{
  guint x, y, c;

  for (y = 0; y < height; y++)
    for (x = 0; x < width; x++) {
      guint8 *p = frame + ((gsize) y * width + x) * pixel_stride;
      for (c = 0; c < pixel_stride; c++) {
        guint32 h = (x * 73856093u) ^ (y * 19349663u) ^ (c * 83492791u)
            ^ (index * 2654435761u);
        guint ramp = c % 2 ? x * 160 / MAX (width, 1) :
            y * 160 / MAX (height, 1);
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        /* 32 + 0..159 + 0..31 + 0..31: within a byte, never wrapping */
        p[c] = (guint8) (32 + ramp + (h & 31) + (index * 7 + c * 5) % 32);
      }
    }
}

/* The precision of plans made outside a warm-up, and of the warm-up
 * where one was asked for by name: that one, but float32 for AUTO (only a
 * warm-up checks a lower one) and for one the backend AUTO chose has not
 * (the CPU after a GPU failed, or where there is none: a precision asked
 * for speed gives way to the exact one rather than stop the pipeline). */
static CbiPrecision
cbi_engine_plain_precision (CbiEngine * engine)
{
  if (engine->precision == CBI_PRECISION_AUTO
      || (engine->precision != CBI_PRECISION_FP32 && engine->auto_backend
          && !cbi_backend_has_precision (engine->backend, engine->precision,
              NULL)))
    return CBI_PRECISION_FP32;
  return engine->precision;
}

/* The precisions a warm-up tries, in order: the one asked for; under
 * AUTO each the backend has, the fastest first, each the next wider
 * type's fallback, then float32. Returns how many. */
static guint
cbi_engine_precisions (CbiEngine * engine, CbiPrecision order[4])
{
  static const CbiPrecision fastest_first[] = { CBI_PRECISION_FP16,
    CBI_PRECISION_BF16, CBI_PRECISION_TF32
  };
  guint n = 0, i;

  if (engine->precision != CBI_PRECISION_AUTO) {
    order[0] = cbi_engine_plain_precision (engine);
    return 1;
  }
  for (i = 0; i < G_N_ELEMENTS (fastest_first); i++)
    if (cbi_backend_has_precision (engine->backend, fastest_first[i], NULL))
      order[n++] = fastest_first[i];
  order[n++] = CBI_PRECISION_FP32;
  return n;
}

/* The warm-up's frames, their pointers and strides, and the float32
 * run's outputs the accuracy check compares with. */
typedef struct
{
  CbiFrameBatch dry;
  CbiOutputInfo info;
  guint8 *frames;
  guint8 **ptrs;
  gint *strides;
  gsize out_size;               /* one output frame's bytes */
  guint8 *ref_frames;           /* n frames of @out_size, image outputs */
  gfloat *ref[CBI_MAX_OUTPUTS]; /* tensor outputs, NULL where read as frames */
} CbiWarmupData;

static void
cbi_warmup_data_clear (CbiWarmupData * w)
{
  guint i;

  g_free (w->frames);
  g_free (w->ptrs);
  g_free (w->strides);
  g_free (w->ref_frames);
  for (i = 0; i < CBI_MAX_OUTPUTS; i++)
    g_free (w->ref[i]);
}

/* The bytes the float32 run's outputs take: a batch of each tensor
 * output, and of the image output's frames. */
static gsize
cbi_warmup_reference_size (const CbiWarmupData * w)
{
  gsize size = 0;
  guint i;

  for (i = 0; i < w->info.n_outputs; i++)
    size += w->info.image && i == 0 ? w->dry.n_slots * w->out_size :
        w->dry.n_slots * cbi_shape_count (&w->info.shapes[i])
        * sizeof (gfloat);
  return size;
}

/* The plan for the current precision, from nothing: every plan dropped,
 * one dry batch (planning it: the warm-up's cost in @report), then the
 * timed ones, but not where @untimed_if_unchanged and the precision
 * changes no op (AUTO passes it over); @ticket receives the last one's. */
static gboolean
cbi_engine_warmup_runs (CbiEngine * engine, CbiWarmupData * w,
    gboolean untimed_if_unchanged, CbiBatchReport * report, guint * ticket,
    GError ** error)
{
  CbiBatchReport steady;
  guint64 timed = 0, peak_allocated, peak_reserved;
  gboolean ok;
  guint i;

  cbi_engine_drop_plans (engine);
  ok = cbi_engine_run_frames (engine, &w->dry, ticket, report, error);
  peak_allocated = report->pool.peak_allocated_bytes;
  peak_reserved = report->pool.peak_reserved_bytes;
  if (ok && untimed_if_unchanged && engine->backend->low_precision_ops == 0)
    return TRUE;
  for (i = 0; ok && i < CBI_WARMUP_TIMED_BATCHES
      && (i < CBI_WARMUP_MIN_TIMED_BATCHES
          || timed < CBI_WARMUP_TIMED_BUDGET_NS); i++) {
    ok = cbi_engine_run_frames (engine, &w->dry, ticket, &steady, error);
    report->steady_samples_ns[i] = steady.time_ns;
    report->n_steady_samples = i + 1;
    timed += steady.time_ns;
    report->time_ns += steady.time_ns;
    report->fresh_allocations += steady.fresh_allocations;
    report->fresh_bytes += steady.fresh_bytes;
    peak_allocated = MAX (peak_allocated, steady.pool.peak_allocated_bytes);
    peak_reserved = MAX (peak_reserved, steady.pool.peak_reserved_bytes);
  }
  report->pool.peak_allocated_bytes = peak_allocated;
  report->pool.peak_reserved_bytes = peak_reserved;
  return ok;
}

/* Output @i of the batch of @ticket as a tensor, or %NULL (and no error)
 * where it was only unpacked into frames (an image output 0, which the
 * backend may keep only as frames). */
static const gfloat *
cbi_warmup_output (CbiEngine * engine, const CbiWarmupData * w, guint ticket,
    guint i, CbiShape * shape, GError ** error)
{
  GError *local = NULL;
  const gfloat *v;

  v = cbi_engine_get_output (engine, ticket, i, shape, &local);
  if (v == NULL && !(w->info.image && i == 0))
    g_propagate_error (error, local);
  else
    g_clear_error (&local);
  return v;
}

/* A copy of @size bytes of @data, or %NULL with @error set. */
static gpointer
cbi_warmup_copy (gconstpointer data, gsize size, GError ** error)
{
  gpointer copy = g_try_malloc (MAX (size, 1));

  if (copy == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MEMORY, "could not allocate "
        "%" G_GSIZE_FORMAT " bytes for the float32 run's outputs", size);
    return NULL;
  }
  memcpy (copy, data, size);
  return copy;
}

/* One float32 batch of the test frames, its outputs kept in @w; then
 * its plan goes, and the memory it held only while it existed. */
static gboolean
cbi_engine_warmup_reference (CbiEngine * engine, CbiWarmupData * w,
    CbiBatchReport * report, GError ** error)
{
  const CbiPrecision precision = engine->backend->precision;
  const guint n = w->dry.n_slots;
  gboolean ok;
  guint ticket = 0, i;

  engine->backend->precision = CBI_PRECISION_FP32;
  cbi_engine_drop_plans (engine);
  ok = cbi_engine_run_frames (engine, &w->dry, &ticket, report, error);
  if (ok && w->info.image) {
    w->ref_frames = cbi_warmup_copy (w->ptrs[n], n * w->out_size, error);
    ok = w->ref_frames != NULL;
  }
  /* an image output is compared as the frames it gives */
  for (i = w->info.image ? 1 : 0; ok && i < w->info.n_outputs; i++) {
    CbiShape shape;
    const gfloat *v = cbi_warmup_output (engine, w, ticket, i, &shape, error);
    ok = v != NULL && (w->ref[i] = cbi_warmup_copy (v,
            cbi_shape_count (&shape) * sizeof (gfloat), error)) != NULL;
  }
  cbi_engine_drop_plans (engine);
  cbi_pool_trim (engine->pool);
  if (engine->staging)
    cbi_pool_trim (engine->staging);
  engine->backend->precision = precision;
  return ok;
}

/* Compares the outputs of the batch of @ticket with the float32 run's:
 * @report->accuracy; @worst receives the output furthest from them, its
 * relative error @worst_error (G_MAXDOUBLE for NaN or infinities). */
static gboolean
cbi_engine_warmup_compare (CbiEngine * engine, const CbiWarmupData * w,
    guint ticket, CbiBatchReport * report, gint * worst,
    gdouble * worst_error, GError ** error)
{
  const guint n = w->dry.n_slots;
  guint i;

  *worst = -1;
  *worst_error = -1.0;
  for (i = 0; i < w->info.n_outputs; i++) {
    CbiAccuracy *a = &report->accuracy[i];
    CbiShape shape;
    const gfloat *v;
    gdouble e;

    if (w->info.image && i == 0) {
      const guint8 **ref = g_new (const guint8 *, n);
      guint f;
      for (f = 0; f < n; f++)
        ref[f] = w->ref_frames + f * w->out_size;
      cbi_accuracy_of_frames ((const guint8 * const *) w->ptrs + n, ref, n,
          w->info.width, w->info.height, w->dry.pixel_stride,
          (gsize) w->info.width * w->dry.pixel_stride, w->dry.rgb_offset,
          MIN (w->info.channels, 3), a);
      g_free (ref);
    } else {
      v = cbi_warmup_output (engine, w, ticket, i, &shape, error);
      if (v == NULL)
        return FALSE;
      cbi_accuracy_of_values (v, w->ref[i], &shape, a);
    }
    e = a->nonfinite > 0 ? G_MAXDOUBLE : a->relative_error;
    if (e > *worst_error) {
      *worst = (gint) i;
      *worst_error = e;
    }
  }
  return TRUE;
}

/* The error of a precision that failed the check, for a user. */
static void
cbi_engine_set_precision_error (CbiEngine * engine, const CbiWarmupData * w,
    const CbiBatchReport * report, gint worst, GError ** error)
{
  const CbiAccuracy *a = &report->accuracy[worst];
  const gchar *name = w->info.names[worst];
  const gchar *p = cbi_precision_name (engine->backend->precision);

  if (a->nonfinite > 0)
    g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "precision %s "
        "overflows: output \"%s\" has %" G_GUINT64_FORMAT " NaN or infinite "
        "values on the warm-up's frames where fp32 has none", p, name,
        a->nonfinite);
  else
    g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "precision %s is "
        "too far from fp32: output \"%s\" differs from it by %.3g %% of its "
        "largest value on the warm-up's frames (max error %.4g%s), "
        "past precision-tolerance (%.3g %%)", p, name,
        100.0 * a->relative_error, a->max_abs_error,
        w->info.image && worst == 0 ? " in byte values" : "",
        100.0 * engine->tolerance);
}

/* The first output whose values hold NaN or infinities after the batch
 * of @ticket, and how many: an image output read only as frames is not
 * looked at. */
static gboolean
cbi_engine_scan_nonfinite (CbiEngine * engine, const CbiWarmupData * w,
    guint ticket, CbiBatchReport * report, GError ** error)
{
  guint i;

  report->nonfinite_output = -1;
  report->nonfinite_values = 0;
  for (i = 0; i < w->info.n_outputs; i++) {
    CbiShape shape;
    const gfloat *v = cbi_warmup_output (engine, w, ticket, i, &shape, error);
    gint64 k, count, bad = 0;
    if (v == NULL) {
      if (w->info.image && i == 0)
        continue;
      return FALSE;
    }
    count = cbi_shape_count (&shape);
    for (k = 0; k < count; k++)
      bad += !isfinite (v[k]);
    if (bad > 0 && report->nonfinite_output < 0) {
      report->nonfinite_output = (gint) i;
      report->nonfinite_values = bad;
    }
  }
  return TRUE;
}

/* What the warm-up's runs before the one it keeps cost. */
typedef struct
{
  guint64 time_ns;
  guint64 fresh_allocations;
  guint64 fresh_bytes;
  guint64 peak_allocated_bytes;
  guint64 peak_reserved_bytes;
} CbiWarmupCost;

static void
cbi_warmup_cost_add (CbiWarmupCost * cost, const CbiBatchReport * report)
{
  cost->time_ns += report->time_ns;
  cost->fresh_allocations += report->fresh_allocations;
  cost->fresh_bytes += report->fresh_bytes;
  cost->peak_allocated_bytes = MAX (cost->peak_allocated_bytes,
      report->pool.peak_allocated_bytes);
  cost->peak_reserved_bytes = MAX (cost->peak_reserved_bytes,
      report->pool.peak_reserved_bytes);
}

/* The warm-up, on the calling thread. */
static gboolean
cbi_engine_warmup_here (CbiEngine * engine, const CbiFrameBatch * layout,
    CbiBatchReport * report, GError ** error)
{
  const guint n = layout->n_slots;
  CbiWarmupData w = { 0, };
  CbiPrecision order[4];
  guint n_order, k, ticket = 0, rejected = 0;
  CbiPrecision rejected_p[4];
  gint rejected_out[4];
  gdouble rejected_err[4];
  CbiWarmupCost cost = { 0, };
  gsize in_size, frames_size;
  gboolean ok, busy, narrowing = FALSE;
  guint i;

  n_order = cbi_engine_precisions (engine, order);
  if (!cbi_backend_has_precision (engine->backend, order[0], error))
    return FALSE;
  if (!cbi_engine_frame_outputs (engine, layout->height, layout->width,
          &w.info, error))
    return FALSE;
  w.dry = *layout;
  in_size = (gsize) layout->width * layout->height * layout->pixel_stride;
  w.out_size = (gsize) w.info.width * w.info.height * layout->pixel_stride;
  w.dry.out_width = w.info.width;
  w.dry.out_height = w.info.height;
  w.dry.out_channels = w.info.channels;

  /* a full batch of test frames and their outputs: the dry run takes the
   * same packing and unpacking path as a real batch. They count against
   * the memory limit, checked before they are allocated, with the float32
   * run's outputs where there is a check, and the pool has what is left
   * while they exist. */
  frames_size = n * (in_size + w.out_size);
  if (order[0] != CBI_PRECISION_FP32)
    frames_size += cbi_warmup_reference_size (&w);
  if (engine->memory_limit > 0 && frames_size >= engine->memory_limit) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MEMORY, "the warm-up's %u test "
        "frames (%" G_GSIZE_FORMAT " bytes) do not fit the memory limit "
        "left to the engine: %" G_GUINT64_FORMAT " bytes", n, frames_size,
        engine->memory_limit);
    return FALSE;
  }
  w.frames = g_try_malloc (n * (in_size + w.out_size));
  if (w.frames == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MEMORY, "could not allocate "
        "%u frames of %" G_GSIZE_FORMAT " bytes for the warm-up", n,
        in_size + w.out_size);
    return FALSE;
  }
  w.ptrs = g_new (guint8 *, 2 * n);
  w.strides = g_new (gint, 2 * n);
  for (i = 0; i < n; i++) {
    w.ptrs[i] = w.frames + i * in_size;
    w.strides[i] = layout->width * layout->pixel_stride;
    w.ptrs[n + i] = w.frames + n * in_size + i * w.out_size;
    w.strides[n + i] = w.info.width * layout->pixel_stride;
    if (layout->n_frames > 0 && layout->in != NULL)
      cbi_engine_copy_frame (w.ptrs[i], layout->in[i % layout->n_frames],
          layout->in_stride[i % layout->n_frames], w.strides[i],
          layout->height);
    else
      cbi_engine_test_pattern (w.ptrs[i], i, layout->width, layout->height,
          layout->pixel_stride);
  }
  w.dry.n_frames = n;
  w.dry.in = (const guint8 * const *) w.ptrs;
  w.dry.in_stride = w.strides;
  w.dry.out = w.info.image ? w.ptrs + n : NULL;
  w.dry.out_stride = w.strides + n;

  if (engine->memory_limit > 0)
    cbi_pool_set_limit (engine->pool, engine->memory_limit - frames_size);
  /* batches in flight keep their plans: nothing is touched */
  busy = cbi_engine_any_in_flight (engine, error);
  ok = !busy;
  if (ok && order[0] != CBI_PRECISION_FP32) {
    ok = cbi_engine_warmup_reference (engine, &w, report, error);
    cbi_warmup_cost_add (&cost, report);
  }
  for (k = 0; ok && k < n_order; k++) {
    GError *local = NULL;
    gboolean ran, failed_check = FALSE;
    gint worst = -1;
    gdouble worst_error = G_MAXDOUBLE;

    /* a plan checked by the warm-up is wide first */
    if (!narrowing)
      engine->backend->precision_wide = TRUE;
    narrowing = FALSE;
    engine->backend->precision = order[k];
    /* one AUTO passes over where it changes nothing: no time for it */
    ran = cbi_engine_warmup_runs (engine, &w, engine->precision ==
        CBI_PRECISION_AUTO && k + 2 < n_order, report, &ticket, &local)
        && cbi_engine_scan_nonfinite (engine, &w, ticket, report, &local);
    report->precision = order[k];
    report->low_precision_ops = engine->backend->low_precision_ops;
    report->checked = FALSE;
    if (ran && order[k] != CBI_PRECISION_FP32 && report->low_precision_ops == 0) {
      /* nothing of the model gains from it here: float32's plan, which
       * the check would find equal, and what later plans run in; under
       * AUTO the next wider one may change ops this one leaves (CUDA's
       * tf32 takes the thin convolutions fp16 leaves), and is tried */
      GST_INFO ("%s changes no op of this model on %s",
          cbi_precision_name (order[k]), cbi_engine_backend_name (engine));
      if (k + 2 < n_order) {
        cbi_warmup_cost_add (&cost, report);
        continue;
      }
      report->precision = engine->backend->precision = CBI_PRECISION_FP32;
      break;
    }
    if (ran && order[k] != CBI_PRECISION_FP32) {
      ran = cbi_engine_warmup_compare (engine, &w, ticket, report, &worst,
          &worst_error, &local);
      report->checked = ran;
      if (!ran) {
        worst = -1;
        worst_error = G_MAXDOUBLE;
      }
      failed_check = ran && worst >= 0
          && !cbi_accuracy_passes (&report->accuracy[worst], engine->tolerance);
    }
    if (ran && !failed_check)
      break;
    /* a precision taken wherever it runs faster that fails its check,
     * or cannot be planned or run so, is tried again on fewer ops (the
     * backend's narrow plan) before a wider precision or an error */
    if (engine->backend->precision_wide && engine->backend->precision_narrows
        && (failed_check || (!ran && !g_error_matches (local, CBI_ERROR,
                    CBI_ERROR_BUSY)))) {
      GST_INFO ("%s on every op it speeds up %s: trying it on fewer ops",
          cbi_precision_name (order[k]), local ? local->message :
          "fails the accuracy check");
      engine->backend->precision_wide = FALSE;
      narrowing = TRUE;
      cbi_warmup_cost_add (&cost, report);
      g_clear_error (&local);
      k--;
      continue;
    }
    /* under AUTO, a lower precision that fails its check, or cannot be
     * planned or run, gives way to the next wider one */
    if (k + 1 < n_order && !g_error_matches (local, CBI_ERROR, CBI_ERROR_BUSY)) {
      GST_INFO ("%s %s: trying %s", cbi_precision_name (order[k]),
          local ? local->message : "fails the accuracy check",
          cbi_precision_name (order[k + 1]));
      rejected_p[rejected] = order[k];
      rejected_out[rejected] = worst;
      rejected_err[rejected++] = worst_error;
      cbi_warmup_cost_add (&cost, report);
      g_clear_error (&local);
      continue;
    }
    if (failed_check)
      cbi_engine_set_precision_error (engine, &w, report, worst, error);
    else
      g_propagate_error (error, local);
    ok = FALSE;
  }
  report->n_rejected = rejected;
  memcpy (report->rejected, rejected_p, rejected * sizeof (CbiPrecision));
  memcpy (report->rejected_output, rejected_out, rejected * sizeof (gint));
  memcpy (report->rejected_error, rejected_err, rejected * sizeof (gdouble));
  cbi_warmup_data_clear (&w);
  cbi_pool_set_limit (engine->pool, engine->memory_limit);
  if (!ok) {
    /* no plan of a precision that failed its check stays; but plans with
     * batches in flight were never touched */
    if (!busy) {
      cbi_engine_drop_plans (engine);
      engine->backend->precision = cbi_engine_plain_precision (engine);
      engine->backend->precision_wide = FALSE;
    }
    return FALSE;
  }
  /* the whole warm-up's cost: the float32 run's and the precisions left
   * too */
  report->time_ns += cost.time_ns;
  report->fresh_allocations += cost.fresh_allocations;
  report->fresh_bytes += cost.fresh_bytes;
  report->pool.peak_allocated_bytes = MAX (report->pool.peak_allocated_bytes,
      cost.peak_allocated_bytes);
  report->pool.peak_reserved_bytes = MAX (report->pool.peak_reserved_bytes,
      cost.peak_reserved_bytes);

  report->steady_time_ns = cbi_percentile_of_samples
      (report->steady_samples_ns, report->n_steady_samples, 50);
  report->latency_time_ns = cbi_percentile_of_samples
      (report->steady_samples_ns, report->n_steady_samples, 90);
  {
    guint64 peak_allocated = report->pool.peak_allocated_bytes;
    guint64 peak_reserved = report->pool.peak_reserved_bytes;
    cbi_pool_trim (engine->pool);
    if (engine->staging)
      cbi_pool_trim (engine->staging);
    cbi_engine_reset_peaks (engine);
    cbi_engine_stats (engine, &report->pool);
    report->pool.peak_allocated_bytes = peak_allocated;
    report->pool.peak_reserved_bytes = peak_reserved;
  }
  /* from here on, a drop of the device's free memory is fresh memory:
   * read after the trim, which gave memory back */
  report->device_fresh_bytes = 0;
  if (engine->backend->iface->device_memory)
    engine->backend->iface->device_memory (engine->backend,
        &report->device_free_bytes, &report->device_total_bytes);
  engine->device_free_warm = report->device_free_bytes;
  GST_INFO ("warm-up %ux%ux%u on %s in %s: %" G_GUINT64_FORMAT " fresh "
      "allocations (%" G_GUINT64_FORMAT " bytes), %" G_GUINT64_FORMAT
      " bytes reserved after, %" G_GUINT64_FORMAT " us, then %"
      G_GUINT64_FORMAT " us a batch (90th percentile of %u: %"
      G_GUINT64_FORMAT " us)", layout->n_slots, layout->height,
      layout->width, cbi_engine_backend_name (engine),
      cbi_precision_name (report->precision), report->fresh_allocations,
      report->fresh_bytes, report->pool.reserved_bytes,
      report->time_ns / 1000, report->steady_time_ns / 1000,
      report->n_steady_samples, report->latency_time_ns / 1000);
  return TRUE;
}

typedef struct
{
  CbiEngine *engine;
  const CbiFrameBatch *layout;
  CbiBatchReport *report;
  GError **error;
  gboolean ok;
} CbiWarmupCall;

static void
cbi_engine_warmup_call (gpointer data)
{
  CbiWarmupCall *c = data;

  c->ok = cbi_engine_warmup_here (c->engine, c->layout, c->report, c->error);
}

/* The warm-up runs where the batches will: on the CPU, the engine's
 * worker. Under AUTO, a warm-up CUDA fails runs again on the CPU. */
gboolean
cbi_engine_warmup (CbiEngine * engine, const CbiFrameBatch * layout,
    CbiBatchReport * report, GError ** error)
{
  CbiWarmupCall call = { engine, layout, report, error, FALSE };
  gint entered = cbi_engine_enter (engine);

  engine->warming_up = TRUE;
  cbi_engine_call (engine, cbi_engine_warmup_call, &call);
  engine->warming_up = FALSE;
  cbi_engine_leave (engine, entered);
  /* a precision's failed check is the model's, not CUDA's */
  if (!call.ok && error && !g_error_matches (*error, CBI_ERROR,
          CBI_ERROR_PRECISION)
      && cbi_engine_fall_back (engine, "in the warm-up", error))
    cbi_engine_call (engine, cbi_engine_warmup_call, &call);
  return call.ok;
}

void
cbi_engine_set_memory_limit (CbiEngine * engine, guint64 memory_limit)
{
  engine->memory_limit = memory_limit;
  cbi_pool_set_limit (engine->pool, memory_limit);
}

void
cbi_engine_get_pool_stats (CbiEngine * engine, CbiPoolStats * stats)
{
  cbi_engine_stats (engine, stats);
}

void
cbi_engine_set_exhaustive_search (CbiEngine * engine, gboolean exhaustive)
{
  engine->exhaustive_search = engine->backend->exhaustive_search = exhaustive;
}

void
cbi_engine_set_threads (CbiEngine * engine, guint threads)
{
  engine->threads = threads;
  engine->backend->share_cores = threads == 0;
}

void
cbi_engine_set_replay (CbiEngine * engine, gboolean replay)
{
  engine->replay = engine->backend->replay = replay;
}

CbiPrecision
cbi_engine_get_precision (CbiEngine * engine)
{
  return engine->backend->precision;
}

gboolean
cbi_engine_set_precision (CbiEngine * engine, CbiPrecision precision,
    gdouble tolerance, GError ** error)
{
  engine->precision = precision;
  engine->tolerance = tolerance;
  /* what a plan made now (a tensor run without a warm-up) runs in: the
   * narrow plan, as nothing checks it */
  engine->backend->precision = cbi_engine_plain_precision (engine);
  engine->backend->precision_wide = FALSE;
  if (precision != CBI_PRECISION_AUTO
      && engine->backend->precision != precision)
    GST_WARNING ("the %s backend has no %s: it runs fp32",
        cbi_engine_backend_name (engine), cbi_precision_name (precision));
  return cbi_backend_has_precision (engine->backend,
      engine->backend->precision, error);
}

void
cbi_engine_set_precision_wide (CbiEngine * engine, gboolean wide)
{
  engine->backend->precision_wide = wide;
}

guint
cbi_engine_low_precision_ops (CbiEngine * engine)
{
  return engine->backend->low_precision_ops;
}
