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

#include <gst/gst.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (cbi_engine_debug);
#define GST_CAT_DEFAULT cbi_engine_debug

/* Enough for the warmed-up shape, an unpadded short batch and a caps
 * change in flight; older plans give their memory back to the pool. */
#define CBI_MAX_PLANS 4


typedef struct
{
  guint batch, height, width;
  gpointer plan;
  guint64 workspace_bytes;
  guint64 last_used;
} CbiPlanEntry;

struct _CbiEngine
{
  CbiGraph *graph;
  CbiBackend *backend;
  CbiPool *pool;
  CbiPlanEntry plans[CBI_MAX_PLANS];
  guint n_plans;
  guint64 use_counter;
    gint64 (*shapes)[4];        /* scratch for shape inference */
};

static const struct
{
  CbiBackendKind kind;
  CbiBackendNewFunc create;
} cbi_backends[] = {
#ifdef HAVE_CUDA
  {CBI_BACKEND_CUDA, cbi_backend_cuda_new},
#endif
  {CBI_BACKEND_CPU, cbi_backend_cpu_new},
};

gboolean
cbi_engine_has_cuda (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cbi_backends); i++)
    if (cbi_backends[i].kind == CBI_BACKEND_CUDA)
      return TRUE;
  return FALSE;
}

static CbiBackend *
cbi_backend_new (CbiBackendKind kind, gint device_id, GError ** error)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cbi_backends); i++)
    if (cbi_backends[i].kind == kind)
      return cbi_backends[i].create (device_id, error);
  g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND,
      "this build has no CUDA backend (nvcc and cuDNN were not found when it "
      "was built); use backend=cpu or backend=auto");
  return NULL;
}

CbiEngine *
cbi_engine_new (CbiGraph * graph, CbiBackendKind kind, gint device_id,
    guint64 memory_limit, gboolean * used_fallback, GError ** error)
{
  CbiEngine *engine;
  CbiBackend *backend = NULL;
  GError *cuda_error = NULL;

  GST_DEBUG_CATEGORY_INIT (cbi_engine_debug, "cudabatchinfer-engine", 0,
      "cudabatchinfer inference engine");
  *used_fallback = FALSE;
  if (kind == CBI_BACKEND_AUTO) {
    backend = cbi_backend_new (CBI_BACKEND_CUDA, device_id, &cuda_error);
    if (backend == NULL) {
      GST_WARNING ("no usable CUDA backend (%s), using the CPU",
          cuda_error->message);
      g_clear_error (&cuda_error);
      *used_fallback = TRUE;
      kind = CBI_BACKEND_CPU;
    }
  }
  if (backend == NULL)
    backend = cbi_backend_new (kind, device_id, error);
  if (backend == NULL) {
    cbi_graph_free (graph);
    return NULL;
  }
  /* the meta reports 0 for the CPU, whatever was asked */
  backend->device_id = kind == CBI_BACKEND_CPU ? 0 : device_id;

  engine = g_new0 (CbiEngine, 1);
  engine->graph = graph;
  engine->backend = backend;
  engine->pool = cbi_pool_new (backend->iface->allocator (backend),
      memory_limit);
  engine->shapes = g_malloc0_n (graph->tensors->len, sizeof (gint64[4]));
  return engine;
}

static void
cbi_engine_drop_plan (CbiEngine * engine, guint index)
{
  CbiPlanEntry *e = &engine->plans[index];

  engine->backend->iface->free_plan (engine->backend, e->plan, engine->pool);
  engine->plans[index] = engine->plans[--engine->n_plans];
}

static void
cbi_engine_drop_plans (CbiEngine * engine)
{
  while (engine->n_plans > 0)
    cbi_engine_drop_plan (engine, 0);
}

void
cbi_engine_free (CbiEngine * engine)
{
  if (engine == NULL)
    return;
  cbi_engine_drop_plans (engine);
  cbi_pool_free (engine->pool);
  engine->backend->iface->free (engine->backend);
  cbi_graph_free (engine->graph);
  g_free (engine->shapes);
  g_free (engine);
}

const gchar *
cbi_engine_backend_name (CbiEngine * engine)
{
  return engine->backend->iface->name;
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

  *channels = in->dims[1];
  *height = in->dims[2];
  *width = in->dims[3];
}

/* Fills engine->shapes for @batch frames of @height x @width, and checks
 * that packing and unpacking fit the model's input and output. */
static gboolean
cbi_engine_infer_frames (CbiEngine * engine, gint64 batch, gint64 height,
    gint64 width, GError ** error)
{
  const gint64 *in, *out;

  if (!cbi_graph_infer_shapes (engine->graph, batch, height, width,
          engine->shapes, error))
    return FALSE;
  in = engine->shapes[engine->graph->input];
  out = engine->shapes[engine->graph->output];
  if (in[1] != 3 || in[2] != height || in[3] != width || out[0] != batch
      || out[1] != 3 || out[2] != height || out[3] != width) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "the model takes %"
        G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " and "
        "gives %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
        " (channels x height x width) for %" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " frames; frames in and out need 3 channels and "
        "the same size", in[1], in[2], in[3], out[1], out[2], out[3], width,
        height);
    return FALSE;
  }
  return TRUE;
}

gboolean
cbi_engine_check_frame_size (CbiEngine * engine, gint64 height, gint64 width,
    GError ** error)
{
  return cbi_engine_infer_frames (engine, 1, height, width, error);
}

static CbiPlanEntry *
cbi_engine_get_plan (CbiEngine * engine, guint batch, guint height,
    guint width, gboolean * replanned, GError ** error)
{
  CbiPlanEntry *e, fresh = { batch, height, width, NULL, 0, 0 };
  guint i, oldest = 0;

  *replanned = FALSE;
  for (i = 0; i < engine->n_plans; i++) {
    e = &engine->plans[i];
    if (e->batch == batch && e->height == height && e->width == width) {
      e->last_used = ++engine->use_counter;
      return e;
    }
    if (e->last_used < engine->plans[oldest].last_used)
      oldest = i;
  }

  /* plan first: a failed plan leaves the cached ones as they were */
  if (!cbi_engine_infer_frames (engine, batch, height, width, error))
    return NULL;
  fresh.plan = engine->backend->iface->plan (engine->backend, engine->graph,
      engine->shapes, engine->pool, &fresh.workspace_bytes, error);
  if (fresh.plan == NULL)
    return NULL;
  if (engine->n_plans == CBI_MAX_PLANS)
    cbi_engine_drop_plan (engine, oldest);
  GST_DEBUG ("new plan for %ux%ux%u (%u cached)", batch, height, width,
      engine->n_plans + 1);
  fresh.last_used = ++engine->use_counter;
  e = &engine->plans[engine->n_plans++];
  *e = fresh;
  *replanned = TRUE;
  return e;
}

gboolean
cbi_engine_run (CbiEngine * engine, const CbiFrameBatch * batch,
    CbiBatchReport * report, GError ** error)
{
  const CbiBackendIface *iface = engine->backend->iface;
  CbiBackend *backend = engine->backend;
  CbiPoolStats before;
  CbiPlanEntry *e;
  gint64 start = g_get_monotonic_time ();

  cbi_pool_get_stats (engine->pool, &before);
  cbi_pool_reset_peaks (engine->pool);
  memset (report, 0, sizeof (*report));

  e = cbi_engine_get_plan (engine, batch->n_slots, batch->height,
      batch->width, &report->replanned, error);
  if (e == NULL || !iface->upload (backend, e->plan, batch, error)
      || !iface->compute (backend, e->plan, error)
      || !iface->download (backend, e->plan, batch, error)
      || (iface->synchronize && !iface->synchronize (backend, error)))
    return FALSE;

  report->time_ns = (g_get_monotonic_time () - start) * 1000;
  report->slots = batch->n_slots;
  report->frames = batch->n_frames;
  report->workspace_bytes = e->workspace_bytes;
  cbi_pool_get_stats (engine->pool, &report->pool);
  report->fresh_allocations =
      report->pool.fresh_allocations - before.fresh_allocations;
  report->fresh_bytes = report->pool.fresh_bytes - before.fresh_bytes;
  if (iface->device_memory)
    iface->device_memory (backend, &report->device_free_bytes,
        &report->device_total_bytes);
  return TRUE;
}

gboolean
cbi_engine_warmup (CbiEngine * engine, const CbiFrameBatch * layout,
    CbiBatchReport * report, GError ** error)
{
  const gsize frame_size = (gsize) layout->width * layout->height *
      layout->pixel_stride;
  CbiFrameBatch dry = *layout;
  CbiBatchReport steady;
  guint64 peak_allocated, peak_reserved;
  guint8 *frames, **ptrs;
  gint *strides;
  gboolean ok;
  guint i;

  /* a full batch of mid-grey frames, each its own input and output: the
   * dry run takes the same packing and unpacking path as a real batch */
  frames = g_try_malloc (frame_size * layout->n_slots);
  if (frames == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MEMORY, "could not allocate "
        "%u frames of %" G_GSIZE_FORMAT " bytes for the warm-up",
        layout->n_slots, frame_size);
    return FALSE;
  }
  memset (frames, 128, frame_size * layout->n_slots);
  ptrs = g_new (guint8 *, layout->n_slots);
  strides = g_new (gint, layout->n_slots);
  for (i = 0; i < layout->n_slots; i++) {
    ptrs[i] = frames + i * frame_size;
    strides[i] = layout->width * layout->pixel_stride;
  }
  dry.n_frames = dry.n_slots;
  dry.in = (const guint8 * const *) ptrs;
  dry.out = ptrs;
  dry.in_stride = dry.out_stride = strides;

  cbi_engine_drop_plans (engine);
  ok = cbi_engine_run (engine, &dry, report, error)
      && cbi_engine_run (engine, &dry, &steady, error);
  g_free (frames);
  g_free (ptrs);
  g_free (strides);
  if (!ok)
    return FALSE;

  report->steady_time_ns = steady.time_ns;
  report->time_ns += steady.time_ns;
  report->fresh_allocations += steady.fresh_allocations;
  report->fresh_bytes += steady.fresh_bytes;
  peak_allocated = MAX (report->pool.peak_allocated_bytes,
      steady.pool.peak_allocated_bytes);
  peak_reserved = MAX (report->pool.peak_reserved_bytes,
      steady.pool.peak_reserved_bytes);
  cbi_pool_trim (engine->pool);
  cbi_pool_reset_peaks (engine->pool);
  cbi_pool_get_stats (engine->pool, &report->pool);
  report->pool.peak_allocated_bytes = peak_allocated;
  report->pool.peak_reserved_bytes = peak_reserved;
  GST_INFO ("warm-up %ux%ux%u on %s: %" G_GUINT64_FORMAT " fresh "
      "allocations (%" G_GUINT64_FORMAT " bytes), %" G_GUINT64_FORMAT
      " bytes reserved after, %" G_GUINT64_FORMAT " us, then %"
      G_GUINT64_FORMAT " us a batch", layout->n_slots, layout->height,
      layout->width,
      cbi_engine_backend_name (engine), report->fresh_allocations,
      report->fresh_bytes, report->pool.reserved_bytes,
      report->time_ns / 1000, report->steady_time_ns / 1000);
  return TRUE;
}

void
cbi_engine_get_pool_stats (CbiEngine * engine, CbiPoolStats * stats)
{
  cbi_pool_get_stats (engine->pool, stats);
}
