/* GStreamer cudabatchinfer: the checked-in plugin cache is the built plugin's
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * docs/plugins/gst_plugins_cache.json is what the documentation says of
 * the element; gst-inspect says what the built plugin says. This test
 * fails when they differ, and names the first line that does.
 *
 *   plugin-cache [CACHE]    (default: the source tree's, as built)
 *
 * The GPU bundle runs it far from the tree it was built in, with the
 * cache it carries as CACHE.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <locale.h>
#include <string.h>

#include "cbiplugincache.h"

#if defined (HAVE_CUDA) && defined (HAVE_GST_CUDA)

/* the checked-in cache this run compares with */
static const gchar *cache_path = CBI_PLUGIN_CACHE;

/* the text of line @n (from 1) of @text, without its newline */
static gchar *
nth_line (const gchar * text, guint n)
{
  gchar **lines = g_strsplit (text, "\n", -1);
  gchar *line = g_strdup (n <= g_strv_length (lines) ? lines[n - 1] : "");

  g_strfreev (lines);
  return line;
}

GST_START_TEST (test_checked_in_cache_is_the_built_plugins)
{
  GstPlugin *found, *plugin;
  GError *error = NULL;
  gchar *built, *kept;
  guint line = 1;
  gsize i;

  found = gst_registry_find_plugin (gst_registry_get (), "cudabatchinfer");
  fail_unless (found != NULL, "the built plugin is not in the registry");
  plugin = gst_plugin_load (found);
  gst_object_unref (found);
  fail_unless (plugin != NULL, "the built plugin does not load");
  built = cbi_plugin_cache_describe (plugin);
  gst_object_unref (plugin);
  fail_unless (built != NULL, "the plugin cannot be described");
  fail_unless (g_file_get_contents (cache_path, &kept, NULL, &error),
      "%s", error ? error->message : "");

  for (i = 0; kept[i] && kept[i] == built[i]; i++)
    if (kept[i] == '\n')
      line++;
  if (kept[i] != built[i]) {
    gchar *k = nth_line (kept, line), *b = nth_line (built, line);

    fail ("%s differs from the built plugin at line %u:\n  checked in: %s\n"
        "  built:      %s\nrun scripts/update-plugin-cache.sh and commit the "
        "result with the change that made it", cache_path, line, k, b);
    g_free (k);
    g_free (b);
  }
  g_free (kept);
  g_free (built);
}

GST_END_TEST;

static Suite *
plugin_cache_suite (void)
{
  Suite *s = suite_create ("plugin-cache");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_checked_in_cache_is_the_built_plugins);
  return s;
}

#endif /* HAVE_CUDA && HAVE_GST_CUDA */

int
main (int argc, char **argv)
{
#if defined (HAVE_CUDA) && defined (HAVE_GST_CUDA)
  gst_check_init (&argc, &argv);
  if (argc > 1)
    cache_path = argv[1];
  setlocale (LC_NUMERIC, "C");
  return gst_check_run_suite (plugin_cache_suite (), "plugin-cache", __FILE__);
#else
  /* Without CUDA the backend enum says its cuda value is compiled out,
   * and without GStreamer's CUDA library the sink pads take no CUDA
   * memory: the cache describes the plugin with both built. */
  g_print ("plugin-cache: skipped, CUDA or CUDA memory is not built in\n");
  return 77;
#endif
}
