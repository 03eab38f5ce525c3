/* GStreamer cudabatchinfer: what the library's metas share, not installed
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

G_GNUC_INTERNAL
GType gst_batch_meta_api_type_once (GType * type, const gchar * api);

G_GNUC_INTERNAL
const GstMetaInfo *gst_batch_meta_info_once (const GstMetaInfo ** info,
    GType api, const gchar * impl, gsize size, GstMetaInitFunction init,
    GstMetaFreeFunction free, GstMetaTransformFunction transform);

/* Defines PREFIX_api_get_type () and PREFIX_get_info () of the meta
 * TypeName: its API, "TypeNameAPI", without tags, and its implementation
 * with the given functions, each registered on the first call. */
#define GST_BATCH_META_DEFINE(prefix, TypeName, init, free, transform)      \
GType                                                                     \
prefix##_api_get_type (void)                                              \
{                                                                         \
  static GType type = 0;                                                  \
                                                                          \
  return gst_batch_meta_api_type_once (&type, #TypeName "API");           \
}                                                                         \
                                                                          \
const GstMetaInfo *                                                       \
prefix##_get_info (void)                                                  \
{                                                                         \
  static const GstMetaInfo *info = NULL;                                  \
                                                                          \
  return gst_batch_meta_info_once (&info, prefix##_api_get_type (),       \
      #TypeName, sizeof (TypeName), init, free, transform);               \
}

G_END_DECLS
