/* GStreamer cudabatchinfer tests: a test model copied into a temporary
 * folder, with or without a .modelinfo file beside it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>

/**
 * CbiModelDir:
 * @dir: the temporary folder
 * @model: the copy of the model in it
 * @modelinfo: (nullable): the modelinfo file written beside it
 *
 * A test model where the test may write a modelinfo file for it.
 */
typedef struct
{
  gchar *dir;
  gchar *model;
  gchar *modelinfo;
} CbiModelDir;

/* Copies tests/models/@name into a new temporary folder and, where
 * @modelinfo is not %NULL, writes it beside the copy as
 * @modelinfo_name (a file name: "<name>.modelinfo" or another). */
static inline void
cbi_model_dir_init (CbiModelDir * md, const gchar * name,
    const gchar * modelinfo_name, const gchar * modelinfo)
{
  gchar *src = g_build_filename (CBI_TEST_MODELS_DIR, name, NULL);
  gchar *bytes = NULL;
  gsize size = 0;

  md->dir = g_dir_make_tmp ("cbi-modelinfo-XXXXXX", NULL);
  fail_unless (md->dir != NULL);
  md->model = g_build_filename (md->dir, name, NULL);
  fail_unless (g_file_get_contents (src, &bytes, &size, NULL), "%s", src);
  fail_unless (g_file_set_contents (md->model, bytes, size, NULL));
  md->modelinfo = NULL;
  if (modelinfo) {
    md->modelinfo = g_build_filename (md->dir, modelinfo_name, NULL);
    fail_unless (g_file_set_contents (md->modelinfo, modelinfo, -1, NULL));
  }
  g_free (bytes);
  g_free (src);
}

/* Removes the files and the folder. */
static inline void
cbi_model_dir_clear (CbiModelDir * md)
{
  if (md->modelinfo)
    fail_unless_equals_int (g_remove (md->modelinfo), 0);
  fail_unless_equals_int (g_remove (md->model), 0);
  fail_unless_equals_int (g_rmdir (md->dir), 0);
  g_clear_pointer (&md->modelinfo, g_free);
  g_clear_pointer (&md->model, g_free);
  g_clear_pointer (&md->dir, g_free);
}
