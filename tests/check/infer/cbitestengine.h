/* GStreamer cudabatchinfer: engines on the CPU backend for the engine tests
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/check/gstcheck.h>

#include "cbiengine.h"
#include "cbidefaultmodel.h"
#include "onnx/cbionnx.h"

/* The default model on the CPU backend, its pool under @limit bytes (0:
 * none). Returns: (transfer full): the engine. */
static inline CbiEngine *
cbi_test_cpu_engine (guint64 limit)
{
  gboolean fallback;
  GError *err = NULL;
  CbiEngine *e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CPU, 0,
      limit, &fallback, &err);

  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_if (fallback);
  return e;
}

/* Test model @file (tests/models) on the CPU backend. Returns: (transfer
 * full): the engine. */
static inline CbiEngine *
cbi_test_cpu_engine_for_model (const gchar * file)
{
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR, file, NULL);
  GError *err = NULL;
  gboolean fallback;
  CbiEngine *e;

  e = cbi_engine_new (cbi_onnx_load (path, &err), CBI_BACKEND_CPU, 0, 0,
      &fallback, &err);
  fail_unless (e != NULL, "%s: %s", file, err ? err->message : "");
  g_free (path);
  return e;
}
