/* GStreamer cudabatchinfer: what the library's metas share
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A meta is registered in two steps, its API type and its implementation,
 * each once per process from whichever thread asks first. The metas of
 * this library differ only in their names and functions.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstbatchmeta-private.h"

/* Registers the meta API @api, without tags, into *@type on the first
 * call, and returns it. Neither meta describes the frame's pixels, so
 * neither has tags; each meta's transform decides what it survives. */
GType
gst_batch_meta_api_type_once (GType * type, const gchar * api)
{
  static const gchar *tags[] = { NULL };

  if (g_once_init_enter (type)) {
    GType t = gst_meta_api_type_register (api, tags);

    g_once_init_leave (type, t);
  }
  return *type;
}

/* Registers the implementation @impl of @api into *@info on the first
 * call, and returns it. */
const GstMetaInfo *
gst_batch_meta_info_once (const GstMetaInfo ** info, GType api,
    const gchar * impl, gsize size, GstMetaInitFunction init,
    GstMetaFreeFunction free, GstMetaTransformFunction transform)
{
  if (g_once_init_enter ((GstMetaInfo **) info)) {
    const GstMetaInfo *mi =
        gst_meta_register (api, impl, size, init, free, transform);

    g_once_init_leave ((GstMetaInfo **) info, (GstMetaInfo *) mi);
  }
  return *info;
}
