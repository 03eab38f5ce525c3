/* GStreamer cudabatchinfer: the module the plugin file loads
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gmodule.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* The module's file, beside the plugin's: a name that does not end in
 * ".so", so that GStreamer's registry does not take it for a plugin. */
#define CBI_ELEMENT_MODULE "libgstcudabatchinfer-element.so.1"
#define CBI_ELEMENT_MODULE_ENTRY "cbi_element_module_register"

/* Registers the module's elements with @plugin (transfer none). */
G_MODULE_EXPORT gboolean cbi_element_module_register (GstPlugin * plugin);

G_END_DECLS
