/* GStreamer cudabatchinfer element: the warm-up
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The dry batch the element runs on its way to PAUSED, or on caps that
 * give a new frame size: the engine plans the batch of N and runs it, and
 * the element posts what it cost and, for a precision below float32, how
 * far its results are from float32's.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Runs a dry batch of frames of @info and posts its message; posts an
 * error and returns %FALSE when it fails. With the batch lock. */
gboolean gst_cuda_batch_infer_run_warmup (GstCudaBatchInfer * self,
    const GstVideoInfo * info);

G_END_DECLS
