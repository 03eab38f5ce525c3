/* cudabatchinfer tests: is there a GPU the CUDA backend can run on?
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Suites register their device tests only where one is, and their
 * "without a GPU" tests only where none is, so that `Checks: N` counts
 * what really ran and no test passes by returning early.
 */
#pragma once

#include "cbichildprobe.h"
#include "cbidefaultmodel.h"
#include "cbiengine.h"

/* The probe itself: why the CUDA backend cannot run, or %NULL. */
static inline gchar *
cbi_test_cuda_probe (void)
{
  GError *error = NULL;
  gboolean fallback;
  CbiEngine *e;
  gchar *why;

  e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CUDA, 0, 0,
      &fallback, &error);
  if (e) {
    cbi_engine_free (e);
    return NULL;
  }
  why = g_strdup (error->message);
  g_error_free (error);
  return why;
}

/* Returns: (transfer full) (nullable): why the CUDA backend cannot run
 * here, or %NULL when it can. */
static inline gchar *
cbi_test_cuda_unavailable (void)
{
  if (!cbi_engine_has_cuda ())
    return g_strdup ("this build has no CUDA backend");
  return cbi_test_probe_in_child (cbi_test_cuda_probe);
}

/* Whether a usable CUDA device is here; where there is none, says that
 * the tests @what are left out, and why. */
static inline gboolean
cbi_test_have_cuda (const gchar * what)
{
  gchar *why = cbi_test_cuda_unavailable ();

  if (why == NULL)
    return TRUE;
  g_print ("SKIP %s: %s\n", what, why);
  g_free (why);
  return FALSE;
}
