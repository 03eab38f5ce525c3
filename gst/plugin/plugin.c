/* GStreamer cudabatchinfer plugin
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  return GST_ELEMENT_REGISTER (cudabatchinfer, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudabatchinfer,
    "Batched neural network inference on video (CUDA/cuDNN, oneDNN on CPU)",
    plugin_init, PACKAGE_VERSION, "LGPL", PACKAGE, PACKAGE_ORIGIN)
