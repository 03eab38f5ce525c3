/* GStreamer cudabatchinfer: the module the plugin file loads
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-module.h"
#include "gstcudabatchinfer.h"

gboolean
cbi_element_module_register (GstPlugin * plugin)
{
  return GST_ELEMENT_REGISTER (cudabatchinfer, plugin);
}
