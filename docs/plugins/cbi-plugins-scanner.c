/* GStreamer cudabatchinfer: writes the plugin's documentation cache
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   cbi-plugins-scanner PLUGIN-FILE OUTPUT
 *
 * Loads PLUGIN-FILE and writes its description, in the JSON of
 * GStreamer's gst_plugins_cache.json, to OUTPUT. Run by
 * scripts/update-plugin-cache.sh, which gives it a registry of its own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <locale.h>

#include "cbiplugincache.h"

int
main (int argc, char *argv[])
{
  GError *error = NULL;
  GstPlugin *plugin;
  gchar *json;
  gboolean ok;

  if (argc != 3) {
    g_printerr ("usage: %s PLUGIN-FILE OUTPUT\n", argv[0]);
    return 2;
  }
  gst_init (NULL, NULL);
  /* the cache's numbers must not depend on the user's locale */
  setlocale (LC_NUMERIC, "C");

  plugin = gst_plugin_load_file (argv[1], &error);
  if (plugin == NULL) {
    g_printerr ("%s: %s\n", argv[1], error->message);
    g_error_free (error);
    return 1;
  }
  json = cbi_plugin_cache_describe (plugin);
  gst_object_unref (plugin);
  if (json == NULL)
    return 1;
  ok = g_file_set_contents (argv[2], json, -1, &error);
  g_free (json);
  if (!ok) {
    g_printerr ("%s\n", error->message);
    g_error_free (error);
    return 1;
  }
  return 0;
}
