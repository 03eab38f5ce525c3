/* GStreamer cudabatchinfer plugin
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The plugin file is a loader: the element, its engine, oneDNN and the
 * OpenMP runtime live in a module beside it (CBI_ELEMENT_MODULE). It was
 * split so that the plugin could shorten OpenMP's idle spin before libgomp
 * loaded and read it. It no longer does: OpenMP's default spin (300000
 * rounds) runs an idle batch up to 14 % faster on a shared 2-core machine
 * than 3000 rounds did, and under a competing process the batches now run
 * on one thread inside one OpenMP region whose second thread sleeps
 * (gst/infer/cpu/share.c), so the spin no longer takes the cores from the
 * rest of the pipeline (docs/benchmarks.md).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>
#include <gst/gst.h>

#include "gstcudabatchinfer-module.h"

GST_DEBUG_CATEGORY_STATIC (cbi_plugin_debug);
#define GST_CAT_DEFAULT cbi_plugin_debug

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean (*register_elements) (GstPlugin * plugin);
  const gchar *filename = gst_plugin_get_filename (plugin);
  gchar *dir, *path;
  void *module;

  GST_DEBUG_CATEGORY_INIT (cbi_plugin_debug, "cudabatchinfer-plugin", 0,
      "cudabatchinfer plugin loading");
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
