/* GStreamer cudabatchinfer element: its side of the engine
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf of the element's files: what every layer that reaches the engine
 * shares, and calls nothing of the element's.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Whether frames of @info are 8-bit Y'CbCr 4:2:0 (I420, YV12, NV12, NV21),
 * which the engine converts in its packing and unpacking. */
gboolean gst_cuda_batch_infer_is_yuv420 (const GstVideoInfo * info);
/* Fills @matrix with the conversions of @info's colorimetry. */
void gst_cuda_batch_infer_yuv_matrix (const GstVideoInfo * info,
    CbiYuvMatrix * matrix);
/* Fills @fb's frame layout (size, pixel stride, the model's channels'
 * bytes, the input and output mappings; for 4:2:0, the chroma's step) for
 * frames of @info; the rest of @fb (4:2:0 frames' colorimetries
 * included) is the caller's. */
void gst_cuda_batch_infer_describe_layout (GstCudaBatchInfer * self,
    const GstVideoInfo * info, CbiFrameBatch * fb);
/* Posts @error (transfer none, from the engine) as an element error for
 * @step, in the GStreamer domain its code maps to. */
void gst_cuda_batch_infer_post_engine_error (GstCudaBatchInfer * self,
    const gchar * step, const GError * error);
/* Copies the engine's backend (and why auto is not on CUDA) into the
 * stats; warns when auto left CUDA. With the batch lock. */
void gst_cuda_batch_infer_note_backend (GstCudaBatchInfer * self);

G_END_DECLS
