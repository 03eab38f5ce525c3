/* GStreamer cudabatchinfer: backend=auto leaves CUDA for the CPU at any
 * failure
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The engine is given a table whose "cuda" backend is the CPU backend
 * under another name, failing at one chosen step: planning, uploading,
 * computing, downloading or finishing a batch. So every step of the
 * fallback runs on any machine, GPU or not: under AUTO the warm-up or the
 * batch that failed runs again on the real CPU backend and gives what a
 * CPU engine gives; asked for by name, "cuda" reports the failure.
 */
#include <gst/check/gstcheck.h>

#include "cbibackend.h"
#include "cbitypes.h"
#include "cbitestframes.h"
#include "cbitestgraph.h"

#define W 8
#define H 6
#define SLOTS 4

typedef enum
{
  FAIL_NOWHERE,
  FAIL_PLAN,
  FAIL_UPLOAD,
  FAIL_COMPUTE,
  FAIL_DOWNLOAD,
  FAIL_FINISH,
  N_STEPS,
} Step;

static const gchar *const step_names[N_STEPS] = { "nowhere", "plan",
  "upload", "compute", "download", "finish"
};

/* the step the "cuda" backend fails at, and how often it got there */
static Step fail_at;
static guint failures;
/* the CPU backend's table, which the "cuda" one calls through */
static const CbiBackendIface *cpu_iface;
static CbiBackendIface faulty_iface;

static gboolean
injected (Step step, GError ** error)
{
  if (fail_at != step)
    return FALSE;
  failures++;
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "injected failure at "
      "%s", step_names[step]);
  return TRUE;
}

static gpointer
faulty_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace_bytes, GError ** error)
{
  return injected (FAIL_PLAN, error) ? NULL : cpu_iface->plan (backend,
      graph, shapes, pool, staging, unpack_frames, workspace_bytes, error);
}

static gboolean
faulty_upload (CbiBackend * backend, gpointer plan, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  return !injected (FAIL_UPLOAD, error) && cpu_iface->upload (backend, plan,
      slot, batch, error);
}

static gboolean
faulty_compute (CbiBackend * backend, gpointer plan, guint slot,
    GError ** error)
{
  return !injected (FAIL_COMPUTE, error) && cpu_iface->compute (backend,
      plan, slot, error);
}

static gboolean
faulty_download (CbiBackend * backend, gpointer plan, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  return !injected (FAIL_DOWNLOAD, error) && cpu_iface->download (backend,
      plan, slot, batch, error);
}

/* as a GPU's: the engine waits for each batch here (the CPU's work is done
 * by then) */
static gboolean
faulty_finish (CbiBackend * backend, gpointer plan, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  return !injected (FAIL_FINISH, error);
}

static CbiBackend *
faulty_cuda_new (gint device_id, GError ** error)
{
  CbiBackend *b = cbi_backend_cpu_new (device_id, error);

  if (b == NULL)
    return NULL;
  cpu_iface = b->iface;
  faulty_iface = *cpu_iface;
  faulty_iface.name = "cuda";
  faulty_iface.plan = faulty_plan;
  faulty_iface.upload = faulty_upload;
  faulty_iface.compute = faulty_compute;
  faulty_iface.download = faulty_download;
  faulty_iface.finish = faulty_finish;
  b->iface = &faulty_iface;
  return b;
}

static const CbiBackendEntry faulty_table[] = {
  {CBI_BACKEND_CUDA, faulty_cuda_new},
  {CBI_BACKEND_CPU, cbi_backend_cpu_new},
};

/* An engine of @kind on the faulty table, failing at @step. */
static CbiEngine *
faulty_engine (CbiBackendKind kind, Step step)
{
  gboolean fallback;
  GError *err = NULL;
  CbiEngine *e;

  fail_at = step;
  failures = 0;
  e = cbi_engine_new_with_backends (faulty_table,
      G_N_ELEMENTS (faulty_table), cbi_test_graph_ending_in (CBI_OP_SIGMOID),
      kind, 0, 0, &fallback, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_if (fallback, "the faulty cuda backend opens");
  fail_unless_equals_string (cbi_engine_backend_name (e), "cuda");
  return e;
}

/* Runs one frame of a fixed pattern through @e, padded to SLOTS, into
 * @out (W * H * 3 bytes). */
static gboolean
run_frame (CbiEngine * e, guint8 * out, CbiBatchReport * r, GError ** error)
{
  static guint8 frame[W * H * 3];
  const guint8 *in[1] = { frame };
  guint8 *outs[1] = { out };
  const gint stride[1] = { W * 3 };
  CbiFrameBatch b = cbi_test_rgb_batch (W, H, SLOTS, in, outs, stride);
  guint i;

  for (i = 0; i < sizeof (frame); i++)
    frame[i] = (guint8) (i * 37 % 251);
  return cbi_engine_run (e, &b, r, error);
}

/* What a plain CPU engine makes of run_frame()'s frame. */
static void
cpu_reference (guint8 * out)
{
  gboolean fallback;
  CbiBatchReport r;
  CbiEngine *e = cbi_engine_new (cbi_test_graph_ending_in (CBI_OP_SIGMOID),
      CBI_BACKEND_CPU, 0, 0,
      &fallback, NULL);

  fail_unless (run_frame (e, out, &r, NULL));
  cbi_engine_free (e);
}

static gboolean
warm_up (CbiEngine * e, CbiBatchReport * r, GError ** error)
{
  CbiFrameBatch layout = cbi_test_rgb_batch (W, H, SLOTS, NULL, NULL, NULL);

  return cbi_engine_warmup (e, &layout, r, error);
}

GST_START_TEST (test_auto_warms_up_on_the_cpu_when_cuda_fails_at_any_step)
{
  guint8 want[W * H * 3], got[W * H * 3];
  Step step;

  cpu_reference (want);
  for (step = FAIL_PLAN; step < N_STEPS; step++) {
    CbiEngine *e = faulty_engine (CBI_BACKEND_AUTO, step);
    GError *err = NULL;
    gchar *expected = g_strdup_printf ("CUDA failed in the warm-up: "
        "injected failure at %s", step_names[step]);
    CbiBatchReport r;

    fail_unless (warm_up (e, &r, &err), "%s: %s", step_names[step],
        err ? err->message : "");
    fail_unless_equals_int (failures, 1);
    fail_unless_equals_string (cbi_engine_backend_name (e), "cpu");
    fail_unless_equals_string (r.backend, "cpu");
    fail_unless_equals_string (cbi_engine_fallback_reason (e), expected);
    /* batches after it run on the CPU, and give what the CPU gives */
    fail_unless (run_frame (e, got, &r, &err), "%s", err ? err->message : "");
    fail_unless_equals_string (r.backend, "cpu");
    fail_if (r.replanned, "the warm-up planned the CPU's shape");
    fail_unless (memcmp (got, want, sizeof (want)) == 0, "%s",
        step_names[step]);
    g_free (expected);
    cbi_engine_free (e);
  }
}

GST_END_TEST;

GST_START_TEST (test_auto_runs_a_batch_that_fails_on_cuda_again_on_the_cpu)
{
  guint8 want[W * H * 3], got[W * H * 3];
  Step step;

  cpu_reference (want);
  /* a batch without a warm-up: it plans, then queues its work; a failure
   * in finish is the batch's result, lost, and not among these */
  for (step = FAIL_PLAN; step <= FAIL_DOWNLOAD; step++) {
    CbiEngine *e = faulty_engine (CBI_BACKEND_AUTO, step);
    GError *err = NULL;
    CbiBatchReport r;

    memset (got, 0, sizeof (got));
    fail_unless (run_frame (e, got, &r, &err), "%s: %s", step_names[step],
        err ? err->message : "");
    fail_unless_equals_int (failures, 1);
    fail_unless_equals_string (r.backend, "cpu");
    fail_unless (r.replanned);
    fail_unless (g_str_has_prefix (cbi_engine_fallback_reason (e),
            "CUDA failed in a batch: injected failure at "));
    fail_unless (memcmp (got, want, sizeof (want)) == 0, "%s",
        step_names[step]);
    cbi_engine_free (e);
  }
}

GST_END_TEST;

GST_START_TEST (test_cuda_by_name_reports_the_failure_and_stays)
{
  Step step;

  for (step = FAIL_PLAN; step < N_STEPS; step++) {
    CbiEngine *e = faulty_engine (CBI_BACKEND_CUDA, step);
    gchar *expected = g_strdup_printf ("injected failure at %s",
        step_names[step]);
    GError *err = NULL;
    CbiBatchReport r;

    fail_if (warm_up (e, &r, &err));
    fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_BACKEND));
    fail_unless_equals_string (err->message, expected);
    fail_unless_equals_string (cbi_engine_backend_name (e), "cuda");
    fail_unless (cbi_engine_fallback_reason (e) == NULL);
    g_clear_error (&err);
    g_free (expected);
    cbi_engine_free (e);
  }
}

GST_END_TEST;

/* Two batches of one frame, each its own output: batches in flight. */
typedef struct
{
  guint8 frame[W * H * 3];
  guint8 out[2][W * H * 3];
  const guint8 *in[1];
  guint8 *outs[2][1];
  gint stride[1];
  CbiFrameBatch batch[2];
} TwoBatches;

static void
two_batches_init (TwoBatches * t)
{
  guint k;

  memset (t, 0, sizeof (*t));
  t->in[0] = t->frame;
  t->stride[0] = W * 3;
  for (k = 0; k < 2; k++) {
    t->outs[k][0] = t->out[k];
    t->batch[k] = cbi_test_rgb_batch (W, H, SLOTS, t->in, t->outs[k],
        t->stride);
  }
}

GST_START_TEST (test_auto_stays_on_cuda_while_a_batch_is_in_flight)
{
  CbiEngine *e = faulty_engine (CBI_BACKEND_AUTO, FAIL_NOWHERE);
  TwoBatches t;
  CbiFrameBatch *a = &t.batch[0], *b = &t.batch[1];
  CbiBatchReport ra, rb;
  GError *err = NULL;
  guint ta, tb;

  two_batches_init (&t);
  fail_unless (cbi_engine_set_inflight (e, 2, NULL));
  fail_unless (cbi_engine_submit (e, a, &ta, &ra, NULL));
  /* the batch in flight would be lost with CUDA: the failure is the
   * second batch's */
  fail_at = FAIL_UPLOAD;
  fail_if (cbi_engine_submit (e, b, &tb, &rb, &err));
  fail_unless_equals_string (err->message, "injected failure at upload");
  fail_unless_equals_string (cbi_engine_backend_name (e), "cuda");
  g_clear_error (&err);
  fail_unless (cbi_engine_collect (e, ta, a, &ra, NULL));
  cbi_engine_release (e, ta);
  /* with nothing in flight, the next failure moves it */
  fail_unless (cbi_engine_submit (e, b, &tb, &rb, &err), "%s",
      err ? err->message : "");
  fail_unless_equals_string (cbi_engine_backend_name (e), "cpu");
  fail_unless (cbi_engine_collect (e, tb, b, &rb, NULL));
  cbi_engine_release (e, tb);
  cbi_engine_free (e);
}

GST_END_TEST;

/* Whether @e takes a second batch before the first is collected, as an
 * engine with two slots does. */
static gboolean
two_batches_in_flight (CbiEngine * e)
{
  TwoBatches t;
  CbiFrameBatch *a = &t.batch[0], *b = &t.batch[1];
  CbiBatchReport ra, rb;
  gboolean ok;
  guint ta, tb;

  two_batches_init (&t);
  if (!cbi_engine_submit (e, a, &ta, &ra, NULL))
    return FALSE;
  ok = cbi_engine_submit (e, b, &tb, &rb, NULL);
  ok = cbi_engine_collect (e, ta, a, &ra, NULL) && ok;
  cbi_engine_release (e, ta);
  if (ok) {
    ok = cbi_engine_collect (e, tb, b, &rb, NULL);
    cbi_engine_release (e, tb);
  }
  return ok;
}

GST_START_TEST (test_the_cpu_after_a_fallback_keeps_the_engines_settings)
{
  CbiEngine *e = faulty_engine (CBI_BACKEND_AUTO, FAIL_COMPUTE);
  guint8 got[W * H * 3];
  GError *err = NULL;
  CbiBatchReport r;

  fail_unless (cbi_engine_set_inflight (e, 2, NULL));
  cbi_engine_set_threads (e, 1);
  fail_unless (warm_up (e, &r, &err), "%s", err ? err->message : "");
  fail_unless_equals_string (cbi_engine_backend_name (e), "cpu");
  fail_unless_equals_int (r.threads, 1);
  fail_unless_equals_int (r.device_id, 0);
  fail_unless (run_frame (e, got, &r, NULL));
  fail_unless_equals_int (r.threads, 1);
  fail_unless (two_batches_in_flight (e));
  cbi_engine_free (e);
}

GST_END_TEST;

static Suite *
infer_fallback_suite (void)
{
  Suite *s = suite_create ("infer-fallback");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_auto_warms_up_on_the_cpu_when_cuda_fails_at_any_step);
  tcase_add_test (tc,
      test_auto_runs_a_batch_that_fails_on_cuda_again_on_the_cpu);
  tcase_add_test (tc, test_cuda_by_name_reports_the_failure_and_stays);
  tcase_add_test (tc, test_auto_stays_on_cuda_while_a_batch_is_in_flight);
  tcase_add_test (tc, test_the_cpu_after_a_fallback_keeps_the_engines_settings);
  return s;
}

GST_CHECK_MAIN (infer_fallback);
