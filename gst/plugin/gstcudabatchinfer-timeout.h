/* GStreamer cudabatchinfer element: the batch deadline
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf of the element's files: a task that waits on the pipeline clock
 * for the deadline armed and then calls the function it was given, with
 * the batch lock held. It calls nothing of the element's.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/**
 * GstCbiDeadlineFunc:
 * @self: the element
 *
 * @place_freed: %TRUE: called for gst_cuda_batch_infer_timer_fire_now ();
 *   %FALSE: the deadline armed passed
 *
 * What the timeout task does, with the batch lock held (the always sink
 * pad's STREAM_LOCK): submit the partial batch.
 */
typedef void (*GstCbiDeadlineFunc) (GstCudaBatchInfer * self,
    gboolean place_freed);

/* Makes the timer and its task (not started), which calls @deadline. */
void gst_cuda_batch_infer_timer_init (GstCudaBatchInfer * self,
    GstCbiDeadlineFunc deadline);
void gst_cuda_batch_infer_timer_finalize (GstCudaBatchInfer * self);
/* Arms the deadline of a batch whose first frame has running time
 * @running (or NONE): batch-timeout after it on the pipeline clock, never
 * more than that from now. */
void gst_cuda_batch_infer_timer_arm (GstCudaBatchInfer * self,
    GstClockTime running);
/* Has the task call its function now, without a deadline (a place in
 * flight freed); a deadline armed stays armed. */
void gst_cuda_batch_infer_timer_fire_now (GstCudaBatchInfer * self);
void gst_cuda_batch_infer_timer_disarm (GstCudaBatchInfer * self);
/* Disarms the timer and pauses (@flushing) or lets run its task. */
void gst_cuda_batch_infer_timer_set_flushing (GstCudaBatchInfer * self,
    gboolean flushing);
/* Starts the timeout task. With inflight_lock held, src_active checked
 * under it: a deactivation clears that flag under the lock, then stops
 * the task. */
gboolean gst_cuda_batch_infer_timer_start_unlocked (GstCudaBatchInfer * self);
/* Stops the timeout task and waits until it has. */
gboolean gst_cuda_batch_infer_timer_stop (GstCudaBatchInfer * self);
/* How long @n frames last at the caps' framerate, or GST_CLOCK_TIME_NONE
 * when the caps give none. From any thread. */
GstClockTime gst_cuda_batch_infer_frames_duration (GstCudaBatchInfer * self,
    guint n);

G_END_DECLS
