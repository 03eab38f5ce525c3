/* GStreamer cudabatchinfer: the warm-up's accuracy check fails a
 * precision that overflows
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * No backend of a machine without a GPU has fp16: here the engine is
 * given a table whose "cuda" backend is the CPU backend whose outputs,
 * under fp16, pass through binary16 (math/cbimath.h, the rounding the
 * CUDA backend's conversions run), as a half-precision convolution that
 * writes them would give them. tests/models/fp16-overflow.onnx was made
 * to give values past fp16's largest, 65504: the check must see the
 * infinities, fail fp16 naming the output, and make AUTO step back.
 * The same backend also offers tf32 (its values exact), as a GPU does,
 * to check that AUTO passes over a precision that changes no op. Its
 * batches take a set delay more per precision (slow_ms), float32's the
 * longest as on a GPU, for AUTO's comparison of batch times: a delay
 * of a second (SLOW_MS), not the model's own time, decides it.
 */
#include <gst/check/gstcheck.h>

#include "cbibackend.h"
#include "cbiengine.h"
#include "cbitypes.h"
#include "cbimath.h"
#include "onnx/cbionnx.h"
#include "cbitestframes.h"

#define W 32
#define H 24
#define SLOTS 2

static const CbiBackendIface *cpu_iface;
/* whether fp16 changes no op of the model, as on a GPU where no
 * convolution is heavy enough for 16 bits while tf32 takes them all */
static gboolean fp16_changes_nothing;
/* and tf32 none either */
static gboolean tf32_changes_nothing;
static CbiBackendIface fp16_iface;
/* The delay of a slowed precision's batches: long beside the model's
 * own time and its spread even under valgrind on a busy machine (a
 * tenth of a second was not: tf32 then lost to float32 at times) */
#define SLOW_MS 1000
/* per precision, the delay its batches take more (ms) */
static guint slow_ms[CBI_PRECISION_AUTO];
/* per precision, the batches computed in it */
static guint computed[CBI_PRECISION_AUTO];
/* per CPU plan: its outputs' value counts (a gint64 array) */
static GHashTable *output_counts;
/* per CPU plan and output: the values rounded through binary16 */
static GHashTable *rounded;

static gboolean
fp16_has_precision (CbiBackend * backend, CbiPrecision precision,
    GError ** error)
{
  if (precision == CBI_PRECISION_FP32 || precision == CBI_PRECISION_FP16
      || precision == CBI_PRECISION_TF32)
    return TRUE;
  g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "the test backend "
      "runs fp32, tf32 and fp16 only");
  return FALSE;
}

static gpointer
fp16_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace_bytes, GError ** error)
{
  const CbiPrecision precision = backend->precision;
  gint64 *counts;
  gpointer plan;
  guint i;

  /* the CPU plans fp16 as float32 */
  plan = cpu_iface->plan (backend, graph, shapes, pool, staging,
      unpack_frames, workspace_bytes, error);
  if (plan == NULL)
    return NULL;
  counts = g_new0 (gint64, CBI_MAX_OUTPUTS);
  for (i = 0; i < graph->n_outputs; i++)
    counts[i] = cbi_shape_count (&shapes[graph->outputs[i]]);
  g_hash_table_insert (output_counts, plan, counts);
  backend->low_precision_ops = (precision == CBI_PRECISION_FP16
      && !fp16_changes_nothing) || (precision == CBI_PRECISION_TF32
      && !tf32_changes_nothing) ? graph->n_outputs : 0;
  return plan;
}

static void
fp16_free_plan (CbiBackend * backend, gpointer plan, CbiPool * pool,
    CbiPool * staging)
{
  guint i;

  for (i = 0; i < CBI_MAX_OUTPUTS; i++)
    g_hash_table_remove (rounded, (guint8 *) plan + i);
  g_hash_table_remove (output_counts, plan);
  cpu_iface->free_plan (backend, plan, pool, staging);
}

static const gfloat *
fp16_output (CbiBackend * backend, gpointer plan, guint slot, guint index,
    GError ** error)
{
  const gfloat *v = cpu_iface->output (backend, plan, slot, index, error);
  const gint64 *counts = g_hash_table_lookup (output_counts, plan);
  gfloat *r;
  gint64 i;

  if (v == NULL || backend->precision != CBI_PRECISION_FP16)
    return v;
  r = g_new (gfloat, MAX (counts[index], 1));
  for (i = 0; i < counts[index]; i++)
    r[i] = cbi_fp16_to_float (cbi_fp16_from_float (v[i]));
  g_hash_table_replace (rounded, (guint8 *) plan + index, r);
  return r;
}

static gboolean
fp16_compute (CbiBackend * backend, gpointer plan, guint slot, GError ** error)
{
  if (!cpu_iface->compute (backend, plan, slot, error))
    return FALSE;
  computed[backend->precision]++;
  g_usleep (slow_ms[backend->precision] * G_TIME_SPAN_MILLISECOND);
  return TRUE;
}

static CbiBackend *
fp16_cuda_new (gint device_id, GError ** error)
{
  CbiBackend *b = cbi_backend_cpu_new (device_id, error);

  if (b == NULL)
    return NULL;
  cpu_iface = b->iface;
  fp16_iface = *cpu_iface;
  fp16_iface.name = "cuda";
  fp16_iface.has_precision = fp16_has_precision;
  fp16_iface.plan = fp16_plan;
  fp16_iface.free_plan = fp16_free_plan;
  fp16_iface.output = fp16_output;
  fp16_iface.compute = fp16_compute;
  b->iface = &fp16_iface;
  return b;
}

static const CbiBackendEntry fp16_table[] = {
  {CBI_BACKEND_CUDA, fp16_cuda_new},
  {CBI_BACKEND_CPU, cbi_backend_cpu_new},
};

static CbiEngine *
fp16_engine (const gchar * model, CbiPrecision precision)
{
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR, model, NULL);
  GError *err = NULL;
  CbiGraph *graph = cbi_onnx_load (path, &err);
  gboolean fallback;
  CbiEngine *e;

  fail_unless (graph != NULL, "%s: %s", model, err ? err->message : "");
  fp16_changes_nothing = tf32_changes_nothing = FALSE;
  memset (slow_ms, 0, sizeof (slow_ms));
  memset (computed, 0, sizeof (computed));
  slow_ms[CBI_PRECISION_FP32] = SLOW_MS;
  output_counts = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  rounded = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  e = cbi_engine_new_with_backends (fp16_table, G_N_ELEMENTS (fp16_table),
      graph, CBI_BACKEND_CUDA, 0, 0, &fallback, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_unless (cbi_engine_set_precision (e, precision, 0.05, &err), "%s",
      err ? err->message : "");
  g_free (path);
  return e;
}

static void
fp16_engine_free (CbiEngine * e)
{
  cbi_engine_free (e);
  g_clear_pointer (&output_counts, g_hash_table_unref);
  g_clear_pointer (&rounded, g_hash_table_unref);
}

static gboolean
warm_up (CbiEngine * e, CbiBatchReport * r, GError ** error)
{
  CbiFrameBatch layout = cbi_test_rgb_batch (W, H, SLOTS, NULL, NULL, NULL);

  return cbi_engine_warmup (e, &layout, r, error);
}

GST_START_TEST (test_fp16_that_overflows_fails_naming_the_output)
{
  CbiEngine *e = fp16_engine ("fp16-overflow.onnx", CBI_PRECISION_FP16);
  GError *err = NULL;
  CbiBatchReport r;

  fail_if (warm_up (e, &r, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_PRECISION), "%s",
      err->message);
  fail_unless (strstr (err->message, "precision fp16 overflows: output "
          "\"output\"") != NULL, "%s", err->message);
  g_error_free (err);
  fp16_engine_free (e);
}

GST_END_TEST;

/* Asserts that AUTO's first precision left in @r is fp16, for its
 * overflow: output 0 infinite, no time of its own. */
static void
assert_fp16_left_for_its_values (const CbiBatchReport * r)
{
  fail_unless (r->n_rejected >= 1);
  fail_unless_equals_int (r->rejected[0], CBI_PRECISION_FP16);
  fail_unless_equals_int (r->rejected_output[0], 0);
  fail_unless (r->rejected_error[0] == G_MAXDOUBLE);
  fail_unless_equals_uint64 (r->rejected_time_ns[0], 0);
}

GST_START_TEST (test_auto_steps_back_from_fp16_that_overflows)
{
  CbiEngine *e = fp16_engine ("fp16-overflow.onnx", CBI_PRECISION_AUTO);
  GError *err = NULL;
  CbiBatchReport r;

  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  /* the next wider one the backend has */
  fail_unless_equals_int (r.precision, CBI_PRECISION_TF32);
  fail_unless_equals_int (r.n_rejected, 1);
  assert_fp16_left_for_its_values (&r);
  /* the float32 run was timed, and tf32 ran faster */
  fail_unless (r.reference_time_ns >= SLOW_MS * G_TIME_SPAN_MILLISECOND * 1000,
      "%" G_GUINT64_FORMAT, r.reference_time_ns);
  fail_unless (r.steady_time_ns < r.reference_time_ns);
  fp16_engine_free (e);
}

GST_END_TEST;

/* tf32 passes its check but its batches take longer than float32's:
 * AUTO keeps float32, and says why it left each */
GST_START_TEST (test_auto_keeps_fp32_where_the_lower_precision_is_slower)
{
  CbiEngine *e = fp16_engine ("fp16-overflow.onnx", CBI_PRECISION_AUTO);
  GError *err = NULL;
  CbiBatchReport r;

  slow_ms[CBI_PRECISION_FP32] = 0;
  slow_ms[CBI_PRECISION_TF32] = SLOW_MS;
  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  fail_unless_equals_int (r.precision, CBI_PRECISION_FP32);
  fail_unless (!r.checked);
  fail_unless_equals_int (r.n_rejected, 2);
  assert_fp16_left_for_its_values (&r);
  /* tf32 for its time: it passed (its values are exact), and its median
   * batch is the delay longer than float32's */
  fail_unless_equals_int (r.rejected[1], CBI_PRECISION_TF32);
  fail_unless_equals_int (r.rejected_output[1], -1);
  fail_unless (r.rejected_error[1] < 0.05, "%g", r.rejected_error[1]);
  fail_unless (r.rejected_time_ns[1] >=
      SLOW_MS * G_TIME_SPAN_MILLISECOND * 1000, "%" G_GUINT64_FORMAT,
      r.rejected_time_ns[1]);
  fail_unless (r.reference_time_ns > 0
      && r.reference_time_ns <= r.rejected_time_ns[1]);
  /* float32 kept: the same plan as the timed reference run, made again
   * and run once, its times the reference's */
  fail_unless (r.n_steady_samples >= CBI_WARMUP_MIN_TIMED_BATCHES);
  fail_unless_equals_uint64 (r.steady_time_ns, r.reference_time_ns);
  fail_unless_equals_int (computed[CBI_PRECISION_FP32], 2 + r.n_steady_samples);
  fp16_engine_free (e);

  /* a precision asked for by name runs whatever its time, and float32
   * is not timed for it */
  e = fp16_engine ("fp16-overflow.onnx", CBI_PRECISION_TF32);
  slow_ms[CBI_PRECISION_FP32] = 0;
  slow_ms[CBI_PRECISION_TF32] = SLOW_MS;
  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  fail_unless_equals_int (r.precision, CBI_PRECISION_TF32);
  fail_unless_equals_int (r.n_rejected, 0);
  fail_unless_equals_uint64 (r.reference_time_ns, 0);
  fp16_engine_free (e);
}

GST_END_TEST;

/* the same backend passes a model whose values fp16 holds: what fails
 * above is the overflow, not the test backend */
GST_START_TEST (test_fp16_within_its_range_passes_the_check)
{
  CbiEngine *e = fp16_engine ("classifier.onnx", CBI_PRECISION_FP16);
  GError *err = NULL;
  CbiBatchReport r;

  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  fail_unless_equals_int (r.precision, CBI_PRECISION_FP16);
  fail_unless (r.checked);
  fail_unless_equals_uint64 (r.accuracy[0].nonfinite, 0);
  /* the scores were rounded: within binary16's half step (2^-11) */
  fail_unless (r.accuracy[0].relative_error > 0.0
      && r.accuracy[0].relative_error < 1.0 / 2048, "%g",
      r.accuracy[0].relative_error);
  fp16_engine_free (e);
}

GST_END_TEST;

/* fp16 changes nothing: AUTO tries tf32 next (before, it stopped at
 * fp32), and rejects neither */
GST_START_TEST (test_auto_passes_over_a_precision_that_changes_nothing)
{
  CbiEngine *e = fp16_engine ("fp16-overflow.onnx", CBI_PRECISION_AUTO);
  GError *err = NULL;
  CbiBatchReport r;

  fp16_changes_nothing = TRUE;
  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  fail_unless_equals_int (r.precision, CBI_PRECISION_TF32);
  fail_unless_equals_int (r.n_rejected, 0);
  fail_unless (r.checked);
  fail_unless_equals_int (r.low_precision_ops, 1);
  /* only the precision kept was timed */
  fail_unless (r.n_steady_samples >= CBI_WARMUP_MIN_TIMED_BATCHES);
  fp16_engine_free (e);

  /* neither changes anything: fp32, unchecked, nothing rejected */
  e = fp16_engine ("fp16-overflow.onnx", CBI_PRECISION_AUTO);
  fp16_changes_nothing = tf32_changes_nothing = TRUE;
  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  fail_unless_equals_int (r.precision, CBI_PRECISION_FP32);
  fail_unless_equals_int (r.n_rejected, 0);
  fail_unless (!r.checked);
  fail_unless (r.n_steady_samples >= CBI_WARMUP_MIN_TIMED_BATCHES);
  fp16_engine_free (e);
}

GST_END_TEST;

static Suite *
infer_overflow_suite (void)
{
  Suite *s = suite_create ("infer-overflow");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_fp16_that_overflows_fails_naming_the_output);
  tcase_add_test (tc, test_auto_steps_back_from_fp16_that_overflows);
  tcase_add_test (tc, test_auto_keeps_fp32_where_the_lower_precision_is_slower);
  tcase_add_test (tc, test_fp16_within_its_range_passes_the_check);
  tcase_add_test (tc, test_auto_passes_over_a_precision_that_changes_nothing);
  return s;
}

GST_CHECK_MAIN (infer_overflow);
