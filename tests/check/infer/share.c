/* GStreamer cudabatchinfer: the CPU backend's share of the cores
 * (cpu/share.c): a batch on one thread
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <omp.h>

#include "cbiengine.h"
#include "cbitestengine.h"

/* Runs @in through @e inside an OpenMP region of two threads, on its
 * first: as the CPU backend runs a batch on one thread. @ticket: as
 * cbi_engine_run_tensor() gives it. */
static gboolean
run_tensor_in_a_region (CbiEngine * e, const CbiShape * in, const gfloat * x,
    guint * ticket, GError ** error)
{
  gboolean ok = FALSE;
  CbiBatchReport r;

#pragma omp parallel num_threads (2)
  {
    if (omp_get_thread_num () == 0)
      ok = cbi_engine_run_tensor (e, in, x, ticket, &r, error);
  }
  return ok;
}

GST_START_TEST (test_a_batch_on_one_thread_gives_the_teams_output)
{
  const CbiShape in = { 4, {2, 3, 16, 16} };
  gfloat x[2 * 3 * 16 * 16], *team, max_err = 0.0f, ref = 0.0f;
  GError *err = NULL;
  CbiBatchReport r;
  const gfloat *y;
  CbiEngine *e;
  CbiShape out;
  guint ticket;
  gint64 i;

  for (i = 0; i < (gint64) G_N_ELEMENTS (x); i++)
    x[i] = ((gint) (i * 29) % 23 - 11) / 11.0f;
  /* two threads whatever the machine has: the compute thread's own count,
   * not this thread's */
  e = cbi_test_cpu_engine_for_model ("style.onnx");
  cbi_engine_set_threads (e, 2);
  fail_unless (cbi_engine_run_tensor (e, &in, x, &ticket, &r, &err), "%s",
      err ? err->message : "");
  fail_unless_equals_int (r.threads, 2);
  y = cbi_engine_get_output (e, ticket, 0, &out, &err);
  team = g_memdup2 (y, cbi_shape_count (&out) * sizeof (gfloat));
  fail_unless (run_tensor_in_a_region (e, &in, x, &ticket, &err), "%s",
      err ? err->message : "");
  y = cbi_engine_get_output (e, ticket, 0, &out, &err);
  for (i = 0; i < cbi_shape_count (&out); i++) {
    max_err = MAX (max_err, fabsf (y[i] - team[i]));
    ref = MAX (ref, fabsf (team[i]));
  }
  fail_unless (ref > 0.0f && max_err <= 1e-6f * ref, "max error %g over %g",
      max_err, ref);
  g_free (team);
  cbi_engine_free (e);
}

GST_END_TEST;

static Suite *
share_suite (void)
{
  Suite *s = suite_create ("cbishare");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_a_batch_on_one_thread_gives_the_teams_output);
  return s;
}

GST_CHECK_MAIN (share);
