/* GStreamer cudabatchinfer element: many streams, one batch
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The request pads sink_%u and src_%u: a pair is a stream. Their
 * requests and releases, and sink_K's chain, events and queries. The top
 * of the pads' functions: it shares the always pads' caps and queries
 * (caps.h) and the streams' routing (route.h).
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* The pad templates sink_%u and src_%u. */
void gst_cuda_batch_infer_add_stream_templates (GstElementClass * klass);
GstPad *gst_cuda_batch_infer_request_new_pad (GstElement * element,
    GstPadTemplate * templ, const gchar * name, const GstCaps * caps);
void gst_cuda_batch_infer_release_pad (GstElement * element, GstPad * pad);

G_END_DECLS
