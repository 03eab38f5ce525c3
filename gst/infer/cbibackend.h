/* cudabatchinfer: the backend interface
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A backend is a table of functions plus a context pointer. The engine owns
 * the pool and the plans' lifetimes; a backend only turns a graph and a
 * shape into something it can run, taking all tensor memory from the pool.
 */
#pragma once

#include "cbiengine.h"
#include "cbiframes.h"
#include "graph/cbiops.h"
#include "graph/cbishapes.h"
#include "cbiplanner.h"
#include "cbipool.h"

G_BEGIN_DECLS typedef struct _CbiBackend CbiBackend;

/**
 * CbiBackendIface:
 * @name: short name, as shown in the batch meta ("cpu", "cuda")
 * @allocator: where the pool gets tensor memory
 * @staging_allocator: (nullable): where the staging pool gets host memory
 *   for transfers (pinned, for a device); %NULL where there are none
 * @free: frees the backend and its context
 * @plan: builds what runs @graph for one input shape (@shapes: every
 *   tensor's shape, from cbi_graph_infer_shapes());
 *   all tensor and workspace memory comes from @pool, staging buffers from
 *   @staging (%NULL without a staging allocator); with @unpack_frames,
 *   every batch of the plan unpacks output 0 into frames (an image
 *   @batch for @download), which then needs no host copy as a tensor;
 *   returns an opaque plan or %NULL with @error set; @workspace_bytes
 *   receives the scratch size
 * @free_plan: releases a plan and gives its memory back to the pools
 * @planners: (nullable): the backend's planners (cbiplanner.h), which say
 *   whether it can plan each node; the engine asks them for every node
 *   when it opens a model, so that backend=auto picks a backend that runs
 *   the whole model. %NULL: it runs every op of the graph
 * @upload: packs @batch into the plan's input tensor, padding included,
 *   for the batch in slot @slot (below #CbiBackend.inflight)
 * @upload_tensor: copies a row-major host tensor of the planned input
 *   shape into the plan's input tensor
 * @compute: runs the graph on the plan's input tensor
 * @download: sends slot @slot's results on their way back: with an image
 *   @batch (@batch->out set), output 0 is unpacked into the first
 *   @batch->n_frames frames and the other outputs readable with @output;
 *   otherwise (@batch %NULL or no @batch->out) every output is
 * @finish: (nullable): waits for slot @slot's work and completes what
 *   @download started (copies into @batch->out); %NULL where every call is
 *   synchronous. It may run in another thread than the other calls, on
 *   another slot: it touches nothing but its slot's buffers.
 * @output: (transfer none): output @index of slot @slot's last batch as a
 *   row-major host tensor, after @finish; valid until the slot's next
 *   batch (a synchronous backend: until the next compute); %NULL with
 *   @error set on failure
 * @device_memory: (nullable): free and total device memory; %NULL where
 *   there is no device (the meta then reports 0)
 * @thread_enter: (nullable): called before the engine's calls on a
 *   thread: returns what that thread had current (CUDA binds a device to
 *   each thread) for @thread_leave
 * @thread_leave: (nullable): gives the thread back what @thread_enter
 *   returned, so that the application's own CUDA work on the thread that
 *   warmed up or ran a batch finds its device as it left it
 * @has_precision: (nullable): whether the backend can plan in @precision
 *   (never AUTO) on its device, where it would run fast; otherwise @error
 *   (CBI_ERROR_PRECISION) says why and what it has. %NULL: float32 only.
 *   The plans then read #CbiBackend.precision.
 * @wire_figures: (nullable): slot @slot's last batch on the network
 *   (the remote backend): its round trip and the bytes each way, after
 *   @finish
 *
 * A backend that queues work (@finish set) keeps the buffers of each of
 * #CbiBackend.inflight batches apart, so that slot k + 1 uploads while
 * slot k computes; the computations themselves run one after another.
 */
typedef struct
{
  const gchar *name;
  const CbiAllocator *(*allocator) (CbiBackend * backend);
  const CbiAllocator *(*staging_allocator) (CbiBackend * backend);
  void (*free) (CbiBackend * backend);
    gpointer (*plan) (CbiBackend * backend, const CbiGraph * graph,
      const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
      gboolean unpack_frames, guint64 * workspace_bytes, GError ** error);
  void (*free_plan) (CbiBackend * backend, gpointer plan, CbiPool * pool,
      CbiPool * staging);
  const CbiPlanners *planners;
    gboolean (*upload) (CbiBackend * backend, gpointer plan, guint slot,
      const CbiFrameBatch * batch, GError ** error);
    gboolean (*upload_tensor) (CbiBackend * backend, gpointer plan, guint slot,
      const gfloat * input, GError ** error);
    gboolean (*compute) (CbiBackend * backend, gpointer plan, guint slot,
      GError ** error);
    gboolean (*download) (CbiBackend * backend, gpointer plan, guint slot,
      const CbiFrameBatch * batch, GError ** error);
    gboolean (*finish) (CbiBackend * backend, gpointer plan, guint slot,
      const CbiFrameBatch * batch, GError ** error);
  const gfloat *(*output) (CbiBackend * backend, gpointer plan, guint slot,
      guint index, GError ** error);
    gboolean (*device_memory) (CbiBackend * backend, guint64 * free_bytes,
      guint64 * total_bytes);
    gint (*thread_enter) (void);
  void (*thread_leave) (gint entered);
    gboolean (*has_precision) (CbiBackend * backend, CbiPrecision precision,
      GError ** error);
  void (*wire_figures) (CbiBackend * backend, gpointer plan, guint slot,
      guint64 * rtt_ns, guint64 * sent, guint64 * received);
} CbiBackendIface;

struct _CbiBackend
{
  const CbiBackendIface *iface;
  gpointer context;
  gint device_id;
  gboolean exhaustive_search;   /* benchmark algorithms while planning */
  gboolean replay;              /* replay a plan's recorded work (CUDA
                                 * graphs) after its first run */
  guint inflight;               /* batches a plan can have in flight: its
                                 * transfer buffers come in that many */
  gboolean share_cores;         /* CPU: run a batch on one thread while
                                 * other threads keep the cores busy
                                 * (threads=0) */
  gboolean ran_solo;            /* CPU: the last batch ran on one thread */
  CbiPrecision precision;       /* the arithmetic of the next plans (one
                                 * has_precision() accepted, never AUTO) */
  guint low_precision_ops;      /* of the last plan made: its ops
                                 * (convolutions, matrix products) that
                                 * run below float32 (0 in float32) */
  /* the plans take @precision wherever it runs faster (the CPU's wide
   * bfloat16 plan), not only for the ops that gain most from it: set by
   * the warm-up while it checks them, and by tests
   * (cbi_engine_set_precision_wide ()) */
  gboolean precision_wide;
  gboolean precision_narrows;   /* of the last plan made: one without
                                 * @precision_wide would take @precision
                                 * for fewer ops */
};

/* Makes a backend for device @device_id (ignored where there is one device).
 * Returns: (transfer full) (nullable): the backend, freed by its iface->free */
typedef CbiBackend *(*CbiBackendNewFunc) (gint device_id, GError ** error);

/**
 * CbiBackendEntry:
 * @kind: which backend
 * @create: makes one
 *
 * One row of a table of the backends a build has.
 */
typedef struct
{
  CbiBackendKind kind;
  CbiBackendNewFunc create;
} CbiBackendEntry;

/* Returns: (transfer none) (array length=n_entries): the backends this
 * build has. */
const CbiBackendEntry *cbi_backend_table (guint * n_entries);

/* Whether @backend can plan every node of @graph (its planners say so
 * for each, or it has none); otherwise @error (CBI_ERROR_MODEL) names the
 * first node it cannot run and its op. */
gboolean cbi_backend_supports_graph (CbiBackend * backend,
    const CbiGraph * graph, GError ** error);

/* Whether @backend can plan in @precision (not AUTO): its
 * has_precision(), float32 where it has none; @error as there. */
gboolean cbi_backend_has_precision (CbiBackend * backend,
    CbiPrecision precision, GError ** error);

/* Opens the backend of @kind from @table (@n_entries rows) for @graph on
 * device @device_id. %CBI_BACKEND_AUTO takes CUDA where it opens and
 * supports every op of @graph, else the CPU; @fallback_reason then
 * receives (transfer full) why CUDA was passed over (no device, or the op
 * it cannot run), else %NULL. Another kind fails when it cannot open or
 * cannot run an op of @graph, saying which. @opened receives the kind
 * opened.
 * Returns: (transfer full) (nullable): the backend, freed by its
 * iface->free. */
CbiBackend *cbi_backend_open (const CbiBackendEntry * table, guint n_entries,
    const CbiGraph * graph, CbiBackendKind kind, gint device_id,
    CbiBackendKind * opened, gchar ** fallback_reason, GError ** error);

/* cbi_engine_new() choosing among the backends of @table (@n_entries
 * rows) instead of the build's (cbi_backend_table()): the tests give it
 * backends that fail where they are told to, to check that AUTO leaves
 * CUDA for the CPU at each step. The engine keeps @table (transfer none):
 * it must outlive the engine.
 * Returns: (transfer full) (nullable): the engine, as cbi_engine_new(). */
CbiEngine *cbi_engine_new_with_backends (const CbiBackendEntry * table,
    guint n_entries, CbiGraph * graph, CbiBackendKind kind, gint device_id,
    guint64 memory_limit, gboolean * used_fallback, GError ** error);

/* The oneDNN CPU backend: always built, the reference for the others. */
CbiBackend *cbi_backend_cpu_new (gint device_id, GError ** error);

#ifdef HAVE_CUDA
/* cuDNN, cuBLAS and kernels/ on an NVIDIA GPU: fails without a usable
 * device, saying why. */
CbiBackend *cbi_backend_cuda_new (gint device_id, GError ** error);
#endif

G_END_DECLS
