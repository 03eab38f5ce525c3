/* GStreamer cudabatchinfer element: the src pad's task, drains and flushes
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The task that collects the oldest batch in flight and pushes its frames
 * (or hands a request pad's to its stream), the waits of the drain points
 * until every batch in flight is out, and flushing, which empties the
 * ring without pushing. Above the batches (batch.h), which it collects.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* Submits the pending frames, then waits until every batch in flight is
 * pushed: what a drain point (EOS, a serialised event, new caps, a drain
 * query) needs before it goes on. With the batch lock. */
GstFlowReturn gst_cuda_batch_infer_drain (GstCudaBatchInfer * self,
    const gchar * reason);
/* Empties every batch in flight without pushing it; only while the src
 * pad task is paused or stopped. */
void gst_cuda_batch_infer_discard_inflight (GstCudaBatchInfer * self);
/* Wakes whatever waits on the batches in flight and the timer, which stop
 * waiting. */
void gst_cuda_batch_infer_start_flushing (GstCudaBatchInfer * self);
/* Clears the flushing state and (re)starts both tasks, unless the src pad
 * was deactivated meanwhile. */
gboolean gst_cuda_batch_infer_stop_flushing (GstCudaBatchInfer * self);
/* The always src pad's activation: its task and the timeout task start
 * and stop with it. */
gboolean gst_cuda_batch_infer_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);
/* The flush action signal's handler. */
void gst_cuda_batch_infer_flush (GstCudaBatchInfer * self);

G_END_DECLS
