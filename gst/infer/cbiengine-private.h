/* cudabatchinfer: what the engine's files share (cbiengine.c, the batch
 * path; cbiwarmup.c, the warm-up, the precision it chooses and its
 * accuracy check)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Calls run one way: cbiwarmup.c calls the batch path declared here, and
 * cbiengine.c calls nothing of cbiwarmup.c.
 */
#pragma once

#include "cbiengine.h"
#include "cbibackend.h"
#include "cbiworker.h"

#include <gst/gst.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (cbi_engine_debug);
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
  gfloat *tensor_nchw;          /* a channels-last model's tensor input,
                                 * channels first (cbi_engine_run_tensor ()) */
  gsize tensor_nchw_len;

  /* the collecting thread reads these too: lock */
  GMutex lock;
  CbiSlot slots[CBI_MAX_INFLIGHT];
  guint n_slots;
  guint next_slot;
};

/* cbiengine.c: the batch path, for the warm-up */

/* What the thread had current before a call that reaches the backend
 * (CUDA binds a device to each thread); give it to cbi_engine_leave(). */
gint cbi_engine_enter (CbiEngine * engine);
void cbi_engine_leave (CbiEngine * engine, gint entered);
/* Runs @func (@data) on the engine's worker where it has one (the CPU),
 * else on the calling thread. */
void cbi_engine_call (CbiEngine * engine, CbiWorkerFunc func, gpointer data);
/* cbi_engine_run(), and the ticket (nullable) of the batch, whose outputs
 * cbi_engine_get_output() then reads. */
gboolean cbi_engine_run_frames (CbiEngine * engine,
    const CbiFrameBatch * batch, guint * ticket, CbiBatchReport * report,
    GError ** error);
/* Frees every shape plan (none may have a batch in flight). */
void cbi_engine_drop_plans (CbiEngine * engine);
/* Whether batches are in flight, which @error then says. */
gboolean cbi_engine_any_in_flight (CbiEngine * engine, GError ** error);
/* Under AUTO, CUDA failed @where with *@error: the model moves to the CPU
 * (*@error cleared) and TRUE; FALSE where it may not. */
gboolean cbi_engine_fall_back (CbiEngine * engine, const gchar * where,
    GError ** error);
/* The pool's figures, the staging pool's added. */
void cbi_engine_stats (CbiEngine * engine, CbiPoolStats * stats);
/* Restarts both pools' peaks. */
void cbi_engine_reset_peaks (CbiEngine * engine);

G_END_DECLS
