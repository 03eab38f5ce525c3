/* GStreamer cudabatchinfer element: the pictures of the warm-up's
 * accuracy check, decoded from a file (precision-check-location)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf: a pipeline of its own, which knows nothing of the element.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* Up to @max frames of @info's format and size (rows packed: width x
 * pixel stride bytes apart), the first of the image or video file
 * @location, decoded, converted and scaled.
 * Returns: (transfer full) (element-type guint8*): at least one frame,
 * or %NULL with @error set (the decoding pipeline's domain and code). */
GPtrArray *gst_cuda_batch_infer_decode_check_file (const gchar * location,
    const GstVideoInfo * info, guint max, GError ** error);

G_END_DECLS
