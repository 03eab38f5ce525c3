/* cudabatchinfer: the warm-up, the precision it chooses and its accuracy
 * check
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A warm-up plans the batch shape from nothing and runs it dry, then times
 * more dry batches (their median and 90th percentile are the batch times
 * the element reports). Where a precision below float32 is asked for, it
 * first runs the test frames in float32, then in that precision, and
 * compares (cbiprecision.c's figures); AUTO tries the backend's fastest
 * first and steps back to wider ones, keeping a lower one only where it
 * passes and its batches run clearly faster than float32's, which AUTO
 * times too. It reaches the backend only through
 * the batch path (cbiengine-private.h).
 */
#include "cbiengine-private.h"
#include "cbiprecision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  /* under AUTO, its timed batches (their median decides whether a
   * lower precision is faster); a float32 plan kept at the end is the
   * same plan again, and is not timed twice */
  guint64 ref_samples_ns[CBI_WARMUP_TIMED_BATCHES];
  guint n_ref_samples;
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

/* Which batches cbi_engine_warmup_runs() times after the first. */
typedef enum
{
  CBI_WARMUP_TIMED,
  /* none where the precision changes no op (AUTO passes it over) */
  CBI_WARMUP_TIMED_IF_CHANGED,
  /* none: the float32 plan AUTO keeps after its timed reference run, whose
   * samples it reports */
  CBI_WARMUP_REFERENCE_TIMES,
} CbiWarmupTiming;

/* The plan for the current precision, from nothing: every plan dropped,
 * one dry batch (planning it: the warm-up's cost in @report), then the
 * timed ones as @timing says; @ticket receives the last one's. */
static gboolean
cbi_engine_warmup_runs (CbiEngine * engine, CbiWarmupData * w,
    CbiWarmupTiming timing, CbiBatchReport * report, guint * ticket,
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
  if (ok && timing == CBI_WARMUP_REFERENCE_TIMES) {
    memcpy (report->steady_samples_ns, w->ref_samples_ns,
        w->n_ref_samples * sizeof (guint64));
    report->n_steady_samples = w->n_ref_samples;
    return TRUE;
  }
  if (ok && timing == CBI_WARMUP_TIMED_IF_CHANGED
      && engine->backend->low_precision_ops == 0)
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

/* One float32 batch of the test frames, its outputs kept in @w; under
 * AUTO timed batches too, in @w->ref_samples_ns (a lower
 * precision is kept only where it runs faster); then its plan goes, and
 * the memory it held only while it existed. */
static gboolean
cbi_engine_warmup_reference (CbiEngine * engine, CbiWarmupData * w,
    CbiBatchReport * report, GError ** error)
{
  const CbiPrecision precision = engine->backend->precision;
  const guint n = w->dry.n_slots;
  gboolean ok;
  guint ticket = 0, i;

  engine->backend->precision = CBI_PRECISION_FP32;
  if (engine->precision == CBI_PRECISION_AUTO) {
    ok = cbi_engine_warmup_runs (engine, w, CBI_WARMUP_TIMED, report,
        &ticket, error);
    if (ok) {
      memcpy (w->ref_samples_ns, report->steady_samples_ns,
          report->n_steady_samples * sizeof (guint64));
      w->n_ref_samples = report->n_steady_samples;
    }
  } else {
    cbi_engine_drop_plans (engine);
    ok = cbi_engine_run_frames (engine, &w->dry, &ticket, report, error);
  }
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
  guint64 rejected_time[4];
  CbiWarmupCost cost = { 0, };
  gsize in_size, frames_size;
  gboolean ok, busy, narrowing = FALSE;
  /* under AUTO, float32's median batch time; 0 where it was not timed */
  guint64 ref_time_ns = 0;
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
    if (w.n_ref_samples > 0)
      ref_time_ns = cbi_percentile_of_samples (w.ref_samples_ns,
          w.n_ref_samples, 50);
  }
  for (k = 0; ok && k < n_order; k++) {
    GError *local = NULL;
    gboolean ran, failed_check = FALSE;
    gint worst = -1;
    gdouble worst_error = G_MAXDOUBLE;
    CbiWarmupTiming timing;

    /* a plan checked by the warm-up is wide first */
    if (!narrowing)
      engine->backend->precision_wide = TRUE;
    narrowing = FALSE;
    engine->backend->precision = order[k];
    /* one AUTO passes over where it changes nothing: no time for it;
     * float32 after AUTO's reference run is timed already */
    if (order[k] == CBI_PRECISION_FP32 && w.n_ref_samples > 0)
      timing = CBI_WARMUP_REFERENCE_TIMES;
    else if (engine->precision == CBI_PRECISION_AUTO && k + 2 < n_order)
      timing = CBI_WARMUP_TIMED_IF_CHANGED;
    else
      timing = CBI_WARMUP_TIMED;
    ran = cbi_engine_warmup_runs (engine, &w, timing, report, &ticket, &local)
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
    /* under AUTO a lower precision that passes is kept where it runs
     * clearly faster than float32 (AVX512-BF16 without AMX multiplies
     * bfloat16 no faster than float32, and converts besides; a GPU's
     * 16-bit kernels may not pay on a small model); else it is tried on
     * fewer ops (its narrow plan), then the next one, float32 last */
    if (ran && !failed_check && ref_time_ns > 0
        && order[k] != CBI_PRECISION_FP32 && k + 1 < n_order) {
      const guint64 t = cbi_percentile_of_samples (report->steady_samples_ns,
          report->n_steady_samples, 50);
      const gboolean slower = t * 100 > ref_time_ns
          * CBI_ENGINE_AUTO_FASTER_PERCENT;
      if (slower && engine->backend->precision_wide
          && engine->backend->precision_narrows) {
        GST_INFO ("%s on every op it speeds up runs no faster than fp32 (%"
            G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT " ns a batch): "
            "trying it on fewer ops", cbi_precision_name (order[k]), t,
            ref_time_ns);
        engine->backend->precision_wide = FALSE;
        narrowing = TRUE;
        cbi_warmup_cost_add (&cost, report);
        k--;
        continue;
      }
      if (slower) {
        GST_INFO ("%s passes its check but runs no faster than fp32 (%"
            G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT " ns a batch): "
            "trying %s", cbi_precision_name (order[k]), t, ref_time_ns,
            cbi_precision_name (order[k + 1]));
        rejected_p[rejected] = order[k];
        rejected_out[rejected] = -1;
        rejected_err[rejected] = worst_error;
        rejected_time[rejected++] = t;
        cbi_warmup_cost_add (&cost, report);
        continue;
      }
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
      rejected_err[rejected] = worst_error;
      rejected_time[rejected++] = 0;
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
  memcpy (report->rejected_time_ns, rejected_time, rejected * sizeof (guint64));
  report->reference_time_ns = ref_time_ns;
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
