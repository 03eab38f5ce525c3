/* cudabatchinfer: the inference engine, the element's only way in
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Open (a model on a backend), warm up (plan a shape and run it dry), run
 * batches, read statistics, free. Not thread-safe: one caller at a time.
 */
#pragma once

#include "cbiframes.h"
#include "cbigraph.h"
#include "cbipool.h"

G_BEGIN_DECLS

/**
 * CbiBackendKind:
 * @CBI_BACKEND_AUTO: CUDA where usable, else the CPU
 * @CBI_BACKEND_CPU: oneDNN on the CPU
 * @CBI_BACKEND_CUDA: CUDA and cuDNN on an NVIDIA GPU
 */
typedef enum
{
  CBI_BACKEND_AUTO,
  CBI_BACKEND_CPU,
  CBI_BACKEND_CUDA,
} CbiBackendKind;

typedef struct _CbiEngine CbiEngine;

/**
 * CbiBatchReport:
 *
 * What one cbi_engine_run() or warm-up measured. Pool figures come from the
 * engine's pool; @peak_* are peaks during the batch; @fresh_* are what the
 * pool had to get from its allocator during the batch.
 */
typedef struct
{
  guint slots;
  guint frames;
  gboolean replanned;
  CbiPoolStats pool;            /* after the batch */
  guint64 fresh_allocations;
  guint64 fresh_bytes;
  guint64 workspace_bytes;
  guint64 device_free_bytes;
  guint64 device_total_bytes;
  guint64 time_ns;
  guint64 steady_time_ns;       /* warm-up only: a second, planned batch */
} CbiBatchReport;

/* Returns: (transfer full) (nullable): an engine running @graph (transfer
 * full, freed even on failure) on the backend @kind; @used_fallback is set
 * when AUTO could not get CUDA. @memory_limit caps the pool (0: no cap). */
CbiEngine *cbi_engine_new (CbiGraph * graph, CbiBackendKind kind,
    gint device_id, guint64 memory_limit, gboolean * used_fallback,
    GError ** error);
void cbi_engine_free (CbiEngine * engine);

const gchar *cbi_engine_backend_name (CbiEngine * engine);
gint cbi_engine_device_id (CbiEngine * engine);
/* Whether CUDA support was compiled in. */
gboolean cbi_engine_has_cuda (void);

/* Model input channels and its fixed height/width (-1 where symbolic). */
void cbi_engine_input_shape (CbiEngine * engine, gint64 * channels,
    gint64 * height, gint64 * width);
/* Whether the model turns frames of @width x @height into frames of the
 * same size: 3 channels in, 3 out, a fixed input size (if any) equal to
 * @width x @height. Fails with CBI_ERROR_SHAPE saying what the model
 * takes and gives. */
gboolean cbi_engine_check_frame_size (CbiEngine * engine, gint64 height,
    gint64 width, GError ** error);

/* Drops every plan, plans the shape of @layout (its frame size, pixel
 * layout and @layout->n_slots; its frame pointers are ignored), runs one
 * dry batch of grey frames through packing, the graph and unpacking, then
 * a second one to time a planned batch (@report->steady_time_ns),
 * gives back what only the warm-up needed and restarts the peaks. @report
 * holds what the warm-up cost: its fresh allocations, its peaks, its time
 * and in @report->pool what stays reserved. */
gboolean cbi_engine_warmup (CbiEngine * engine, const CbiFrameBatch * layout,
    CbiBatchReport * report, GError ** error);

/* Runs one batch of @batch->n_slots (planning that shape first if no plan
 * has it: @report->replanned). */
gboolean cbi_engine_run (CbiEngine * engine, const CbiFrameBatch * batch,
    CbiBatchReport * report, GError ** error);

void cbi_engine_get_pool_stats (CbiEngine * engine, CbiPoolStats * stats);

G_END_DECLS
