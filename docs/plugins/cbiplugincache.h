/* GStreamer cudabatchinfer: the plugin's documentation cache
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

gchar *cbi_plugin_cache_describe (GstPlugin * plugin);

G_END_DECLS
