/* cudabatchinfer: the inference engine
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Plans are cached per shape. A shape without a plan is planned on the spot
 * and reported as "replanned": that is the cost a short, unpadded batch
 * pays, and what the meta lets a user see.
 */
#include "cbiengine-private.h"
#include "cbidefaultmodel.h"
#include "onnx/cbionnx.h"
#include "remote/cbiremote.h"

#include <omp.h>
#include <string.h>

GST_DEBUG_CATEGORY (cbi_engine_debug);

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
gint
cbi_engine_enter (CbiEngine * engine)
{
  const CbiBackendIface *iface = engine->backend->iface;

  return iface->thread_enter ? iface->thread_enter () : -1;
}

void
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

static void
cbi_engine_init_debug (void)
{
  GST_DEBUG_CATEGORY_INIT (cbi_engine_debug, "cudabatchinfer-engine", 0,
      "cudabatchinfer inference engine");
}

/* An engine of @graph (transfer full) on @backend (transfer full), opened
 * as @kind: nothing to fall back to yet. */
static CbiEngine *
cbi_engine_new_on (CbiGraph * graph, CbiBackend * backend, CbiBackendKind kind,
    guint64 memory_limit)
{
  CbiEngine *engine = g_new0 (CbiEngine, 1);

  cbi_engine_log_graph (graph);
  engine->graph = graph;
  engine->memory_limit = memory_limit;
  engine->n_slots = 1;
  engine->shapes = g_new0 (CbiShape, graph->tensors->len);
  g_mutex_init (&engine->lock);
  cbi_engine_use_backend (engine, backend, kind);
  return engine;
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

  cbi_engine_init_debug ();
  backend = cbi_backend_open (table, n_backends, graph, kind, device_id,
      &kind, &fallback_reason, error);
  *used_fallback = fallback_reason != NULL;
  if (backend == NULL) {
    cbi_graph_free (graph);
    return NULL;
  }
  if (fallback_reason)
    GST_WARNING ("CUDA passed over (%s): using the CPU", fallback_reason);
  backend->device_id = device_id;
  engine = cbi_engine_new_on (graph, backend, kind, memory_limit);
  engine->table = table;
  engine->n_table = n_backends;
  engine->may_fall_back = asked == CBI_BACKEND_AUTO && kind == CBI_BACKEND_CUDA;
  engine->auto_backend = asked == CBI_BACKEND_AUTO;
  engine->fallback_reason = fallback_reason;
  return engine;
}

CbiEngine *
cbi_engine_new_remote (const CbiRemoteConfig * config, CbiGraph * graph,
    guint64 memory_limit, GError ** error)
{
  CbiBackend *backend;
  const CbiRemoteModel *model;

  cbi_engine_init_debug ();
  backend = cbi_backend_remote_new (config, error);
  if (backend == NULL) {
    cbi_graph_free (graph);
    return NULL;
  }
  model = cbi_backend_remote_model (backend);
  if (graph ? !cbi_remote_graph_check (graph, model, error) :
      (graph = cbi_remote_graph_new (model, error)) == NULL) {
    cbi_graph_free (graph);
    backend->iface->free (backend);
    return NULL;
  }
  return cbi_engine_new_on (graph, backend, CBI_BACKEND_REMOTE, memory_limit);
}

CbiGraph *
cbi_engine_load_model (const gchar * path, GError ** error)
{
  return path ? cbi_onnx_load (path, error) : cbi_default_model_new ();
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
void
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

void
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

void
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
  g_free (engine->tensor_nchw);
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
gboolean
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
gboolean
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
void
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
  /* frames in a GPU's memory cannot go to the CPU: such a batch fails */
  if (!call.ok && !engine->warming_up && !(batch && batch->in_device)
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

  if (backend->iface->wire_figures)
    backend->iface->wire_figures (backend, plan, ticket,
        &report->remote_rtt_ns, &report->remote_bytes_sent,
        &report->remote_bytes_received);
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
gboolean
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

/* @input, N x H x W x C, into the engine's channels-first buffer (grown,
 * never per call once it holds the largest tensor), and its shape into
 * @nchw: the graph's input is the proxy that the importer put in front of
 * a channels-last model's own (cbi_onnx_add_channels_last_input ()), and
 * a caller gives the tensor as the file has it. */
static const gfloat *
cbi_engine_tensor_channels_first (CbiEngine * engine, const CbiShape * shape,
    const gfloat * input, CbiShape * nchw)
{
  const gint64 n = shape->dims[0], h = shape->dims[1], w = shape->dims[2],
      c = shape->dims[3];
  const gsize len = (gsize) (n * h * w * c);
  gint64 i, y, x, k;

  if (len > engine->tensor_nchw_len) {
    g_free (engine->tensor_nchw);
    engine->tensor_nchw = g_new (gfloat, len);
    engine->tensor_nchw_len = len;
  }
  for (i = 0; i < n; i++)
    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        for (k = 0; k < c; k++)
          engine->tensor_nchw[((i * c + k) * h + y) * w + x] =
              input[((i * h + y) * w + x) * c + k];
  *nchw = *shape;
  nchw->dims[1] = c;
  nchw->dims[2] = h;
  nchw->dims[3] = w;
  return engine->tensor_nchw;
}

gboolean
cbi_engine_run_tensor (CbiEngine * engine, const CbiShape * shape,
    const gfloat * input, guint * ticket, CbiBatchReport * report,
    GError ** error)
{
  CbiShape nchw;
  gboolean fits;
  gint d;

  if (!engine->graph->input_channels_last)
    return cbi_engine_execute (engine, shape, NULL, input, ticket, report,
        error);
  fits = shape->n_dims == 4;
  for (d = 0; fits && d < 4; d++)
    fits = shape->dims[d] >= 1;
  if (!fits) {
    gchar *given = cbi_shape_to_string (shape);
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "the model's input is "
        "N x H x W x C, not %s", given);
    g_free (given);
    return FALSE;
  }
  input = cbi_engine_tensor_channels_first (engine, shape, input, &nchw);
  return cbi_engine_execute (engine, &nchw, NULL, input, ticket, report, error);
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
