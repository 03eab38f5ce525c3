/* GStreamer cudabatchinfer element: tensor ids from upstream's .modelinfo
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* GStreamer 1.28's inference elements (onnxinference, tfliteinference)
 * read a model's tensor ids from an ini-style file beside it
 * (GstAnalyticsModelInfo, gst-libs/gst/analytics/modelinfo.c): a
 * [modelinfo] section with version=1.0, then one section per tensor,
 * titled with the tensor's name in the model, whose `id` the tensor
 * decoders look for. This reads the same file with GKeyFile (1.26 has no
 * such API, 1.22 no analytics library at all), for the ids of the
 * element's GstTensorMeta: sections are matched by the output's name, as
 * upstream's format says; upstream's fallbacks for files written for
 * another model's names (by index, by dims and type) are not taken.
 *
 * Where upstream's elements fail to start without a valid file, the
 * element runs without one (its ids are the output names); a file that is
 * there but is not valid is refused all the same: the error names it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcbimodelinfo.h"

#include <string.h>

#define SECTION_NAME "modelinfo"

/* Loads @filename into @kf: %TRUE when it was read; %FALSE without @error
 * where there is no such file. */
static gboolean
gst_cbi_modelinfo_try_file (GKeyFile * kf, const gchar * filename,
    GError ** error)
{
  GError *err = NULL;
  gboolean ok = g_key_file_load_from_file (kf, filename, G_KEY_FILE_NONE,
      &err);

  if (!ok && !g_error_matches (err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    g_propagate_error (error, g_steal_pointer (&err));
  g_clear_error (&err);
  return ok;
}

/* %TRUE where @kf has a [modelinfo] section whose version is 1.x. */
static gboolean
gst_cbi_modelinfo_check_version (GKeyFile * kf, GError ** error)
{
  gchar *version = NULL, **parts = NULL;
  guint64 major = 0, minor = 0;
  gboolean ok = FALSE;

  version = g_key_file_get_string (kf, SECTION_NAME, "version", NULL);
  if (version == NULL) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
        "no [" SECTION_NAME "] section with a version (upstream's "
        "modelinfo-generator.py writes version=1.0)");
    goto done;
  }
  parts = g_strsplit (version, ".", -1);
  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT, &major, NULL)
      || !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT, &minor, NULL)) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "version \"%s\" is not Major.Minor", version);
    goto done;
  }
  if (major != GST_CBI_MODELINFO_VERSION_MAJOR) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "version %s is not supported (only %u.x)", version,
        GST_CBI_MODELINFO_VERSION_MAJOR);
    goto done;
  }
  ok = TRUE;

done:
  g_strfreev (parts);
  g_free (version);
  return ok;
}

GKeyFile *
gst_cbi_modelinfo_load (const gchar * model_path, gchar ** path,
    GError ** error)
{
  GKeyFile *kf = g_key_file_new ();
  gchar *filename = g_strconcat (model_path, ".modelinfo", NULL);
  const gchar *dot = strrchr (model_path, '.');
  GError *err = NULL;
  gboolean found;

  /* ',' separates list values, as upstream reads them */
  g_key_file_set_list_separator (kf, ',');
  found = gst_cbi_modelinfo_try_file (kf, filename, &err);
  if (!found && err == NULL && dot && strchr (dot, '/') == NULL) {
    g_free (filename);
    filename = g_strdup_printf ("%.*s.modelinfo", (gint) (dot - model_path),
        model_path);
    found = gst_cbi_modelinfo_try_file (kf, filename, &err);
  }
  if (found && !gst_cbi_modelinfo_check_version (kf, &err))
    found = FALSE;

  if (path)
    *path = found || err ? g_strdup (filename) : NULL;
  if (err)
    g_propagate_prefixed_error (error, err, "%s: ", filename);
  if (!found)
    g_clear_pointer (&kf, g_key_file_unref);
  g_free (filename);
  return kf;
}

/* %TRUE where @key of section @name is unset or @expected. */
static gboolean
gst_cbi_modelinfo_key_is (GKeyFile * kf, const gchar * name,
    const gchar * key, const gchar * expected, GError ** error)
{
  gchar *value = g_key_file_get_string (kf, name, key, NULL);
  gboolean ok = value == NULL || strcmp (value, expected) == 0;

  if (!ok)
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "[%s] has %s=%s: the element's outputs are %s=%s", name, key, value,
        key, expected);
  g_free (value);
  return ok;
}

gboolean
gst_cbi_modelinfo_output_id (GKeyFile * modelinfo, const gchar * name,
    GQuark * id, GError ** error)
{
  gchar *value = NULL;
  gboolean ok = FALSE;

  if (modelinfo == NULL || strcmp (name, SECTION_NAME) == 0
      || !g_key_file_has_group (modelinfo, name)) {
    /* nothing said of it: its name */
    *id = g_quark_from_string (name);
    ok = TRUE;
    goto done;
  }
  if (!gst_cbi_modelinfo_key_is (modelinfo, name, "dir", "output", error)
      || !gst_cbi_modelinfo_key_is (modelinfo, name, "type", "float32", error)
      || !gst_cbi_modelinfo_key_is (modelinfo, name, "dims-order",
          "row-major", error))
    goto done;
  value = g_key_file_get_string (modelinfo, name, "id", NULL);
  if (value == NULL || *value == '\0') {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
        "[%s] has no id", name);
    goto done;
  }
  *id = g_quark_from_string (value);
  ok = TRUE;

done:
  g_free (value);
  return ok;
}
