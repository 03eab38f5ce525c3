/* GStreamer cudabatchinfer element: upstream's GstTensorMeta, where the
 * runtime has it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

G_BEGIN_DECLS

/* Whether the GStreamer this process runs has upstream's GstTensorMeta
 * (libgstanalytics-1.0 of GStreamer 1.26 or later). Looks once per
 * process, on the first call, and logs what it found. */
gboolean gst_cbi_tensor_meta_available (void);

/* Adds a GstTensorMeta to @buffer (transfer none, writable) with one
 * GstTensor per tensor of @from (transfer none), float32 and row-major,
 * with the ids @ids (array of @from->n_tensors): each tensor's buffer
 * wraps its bytes in @from->data, no copy, and keeps a reference to it.
 * A GstTensorMeta already on @buffer is left as it is (this one comes
 * after it). Returns: %FALSE where the runtime has no GstTensorMeta or a
 * tensor could not be made. */
gboolean gst_cbi_tensor_meta_add (GstBuffer * buffer,
    GstBatchTensorMeta * from, const GQuark * ids);

G_END_DECLS
