/* GStreamer cudabatchinfer element: tensor ids from upstream's .modelinfo
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The [modelinfo] versions this reader takes: any 1.x, as upstream's
 * GST_MODELINFO_VERSION_MAJOR (GStreamer 1.28) */
#define GST_CBI_MODELINFO_VERSION_MAJOR 1

/* Reads the modelinfo file beside @model_path (transfer none), where
 * upstream looks: <model>.modelinfo, else the model's name without its
 * extension + .modelinfo. Returns: (transfer full) (nullable): the file, or
 * %NULL: with @error set when one is there but cannot be read or is not a
 * modelinfo of version 1.x, unset when there is none. @path: (out)
 * (optional) (transfer full): the file read or refused. */
GKeyFile *gst_cbi_modelinfo_load (const gchar * model_path, gchar ** path,
    GError ** error);

/* The tensor id of the model output @name (transfer none): the `id` of the
 * section named @name, else @name itself (also where @modelinfo is
 * %NULL). %FALSE with @error where that section contradicts what the
 * element gives (not an output, not float32, column-major) or has no id. */
gboolean gst_cbi_modelinfo_output_id (GKeyFile * modelinfo,
    const gchar * name, GQuark * id, GError ** error);

G_END_DECLS
