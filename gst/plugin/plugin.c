/* GStreamer cudabatchinfer plugin
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The plugin file is a loader. The element, its engine, oneDNN and the
 * OpenMP runtime live in a module beside it (CBI_ELEMENT_MODULE), which
 * this file opens only once it has chosen how OpenMP's idle threads wait:
 * libgomp reads that once, when it is loaded, and by default lets them
 * spin 300000 rounds after every parallel region. In a pipeline those
 * spinning threads take the cores the decoder, converters and encoder
 * need. The element asks for a short spin (CBI_OPENMP_SPINCOUNT rounds,
 * 40 to 80 us on a 2-core AMD EPYC): long enough to catch the next layer
 * of a batch, short enough that between batches the threads sleep. 10000
 * and 30000 rounds gained no more than the noise idle and lost under load
 * with a small model (docs/benchmarks.md). Measured with
 * bench/competing-load.py against no spin at all (OMP_WAIT_POLICY=passive,
 * which lost 5 to 25 % on an idle machine) and the default (which lost 20
 * to 60 % under one competing busy process).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>
#include <gst/gst.h>

#include "gstcudabatchinfer-module.h"

GST_DEBUG_CATEGORY_STATIC (cbi_plugin_debug);
#define GST_CAT_DEFAULT cbi_plugin_debug

#define CBI_OPENMP_SPINCOUNT "3000"

static void
cbi_shorten_openmp_spin (void)
{
  void *gomp;

  if (g_getenv ("OMP_WAIT_POLICY") || g_getenv ("GOMP_SPINCOUNT")) {
    GST_INFO ("OpenMP's idle waiting is the application's choice");
    return;
  }
  gomp = dlopen ("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (gomp) {
    dlclose (gomp);
    GST_WARNING ("OpenMP was loaded before the plugin: its "
        "idle threads spin; set GOMP_SPINCOUNT=" CBI_OPENMP_SPINCOUNT
        " (or OMP_WAIT_POLICY=passive) before it loads to leave the cores to "
        "the rest of the pipeline");
    return;
  }
  g_setenv ("GOMP_SPINCOUNT", CBI_OPENMP_SPINCOUNT, FALSE);
}

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean (*register_elements) (GstPlugin * plugin);
  const gchar *filename = gst_plugin_get_filename (plugin);
  gchar *dir, *path;
  void *module;

  GST_DEBUG_CATEGORY_INIT (cbi_plugin_debug, "cudabatchinfer-plugin", 0,
      "cudabatchinfer plugin loading");
  cbi_shorten_openmp_spin ();
  dir = filename ? g_path_get_dirname (filename) : g_strdup (".");
  path = g_build_filename (dir, CBI_ELEMENT_MODULE, NULL);
  /* never closed: the types it registers live as long as the process */
  module = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  register_elements = module ? (gboolean (*)(GstPlugin *))
      dlsym (module, CBI_ELEMENT_MODULE_ENTRY) : NULL;
  if (register_elements == NULL)
    GST_ERROR ("cannot load the element from %s: %s", path, dlerror ());
  g_free (path);
  g_free (dir);
  return register_elements && register_elements (plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudabatchinfer,
    "Batched neural network inference on video (CUDA/cuDNN, oneDNN on CPU)",
    plugin_init, PACKAGE_VERSION, "LGPL", PACKAGE, PACKAGE_ORIGIN)
