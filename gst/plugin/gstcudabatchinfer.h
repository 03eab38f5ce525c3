/* GStreamer cudabatchinfer element
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_BATCH_INFER (gst_cuda_batch_infer_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaBatchInfer, gst_cuda_batch_infer, GST,
    CUDA_BATCH_INFER, GstElement);

GST_ELEMENT_REGISTER_DECLARE (cudabatchinfer);

G_END_DECLS
