/* GStreamer cudabatchinfer element: the src pad's task, drains and flushes
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The streaming thread submits a batch into the ring; the src pad task
 * collects the oldest (waiting for the engine), pushes its frames and frees
 * its place. Drain points wait here until the ring is empty; flushing
 * empties it without pushing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-push.h"
#include "gstcudabatchinfer-batch.h"
#include "gstcudabatchinfer-route.h"
#include "gstcudabatchinfer-timeout.h"

/* Pushes a collected batch's buffers, in order, one push per frame and not
 * a buffer list: downstream gets each buffer writable, so an in-place
 * element after us does not copy it, and no list is allocated per batch.
 * A frame of a request pad goes to its stream's queue instead, which
 * src_K's own task pushes. */
static GstFlowReturn
gst_cuda_batch_infer_push_batch (GstCudaBatchInfer * self, GstCbiBatch * batch,
    gint epoch, GstFlowReturn always_flow)
{
  GstFlowReturn ret = always_flow;
  guint i, pushed = 0, refused = 0;

  /* posted before the frames: a sync handler sees the batch first */
  if (batch->message) {
    /* ours no more before the handlers run: one may flush the batch */
    GstMessage *message = g_steal_pointer (&batch->message);
    gst_element_post_message (GST_ELEMENT (self), message);
  }
  for (i = 0;; i++) {
    GstBuffer *out;
    /* flushed from under us by what the message or a push led to: the
     * rest of the batch is gone, and counted */
    if (epoch != g_atomic_int_get (&self->inflight_epoch)) {
      ret = GST_FLOW_FLUSHING;
      break;
    }
    if (i == batch->n_out)
      break;
    out = batch->out_buffers[i];
    batch->out_buffers[i] = NULL;
    /* (a skipped frame with no result to go with is NULL, counted where
     * it was made; its stream counts it here) */
    if (batch->tags[i].stream) {
      gst_cuda_batch_infer_deliver (self, &batch->tags[i], out);
      batch->tags[i].stream = NULL;
      continue;
    }
    if (out == NULL)
      continue;
    /* after a refusal, the always pad's frames are dropped; the streams'
     * go on to their queues */
    if (ret != GST_FLOW_OK) {
      batch->out_buffers[i] = out;
      continue;
    }
    ret = gst_pad_push (self->srcpad, out);
    if (ret == GST_FLOW_OK)
      pushed++;
    else
      refused++;
  }
  /* the rest of the batch is counted when it is discarded */
  STATS_LOCK (self);
  self->stats.frames_out += pushed;
  self->stats.frames_dropped += refused;
  STATS_UNLOCK (self);
  return ret;
}

/* The src pad task: collects the oldest batch in flight (waiting for the
 * device), pushes it, and frees its place for the next submission. */
static void
gst_cuda_batch_infer_push_loop (GstCudaBatchInfer * self)
{
  GstFlowReturn ret, always_flow;
  GstCbiBatch *batch;
  gint epoch;

  INFLIGHT_LOCK (self);
  g_atomic_pointer_set (&self->push_thread, g_thread_self ());
  while (!self->inflight_flushing
      && (batch = gst_cbi_inflight_peek_unlocked (&self->inflight)) == NULL)
    INFLIGHT_WAIT (self);
  if (self->inflight_flushing) {
    /* under the lock: a FLUSH_STOP that clears the flag restarts the task
     * after this pause, never before it */
    g_atomic_pointer_set (&self->push_thread, NULL);
    gst_pad_pause_task (self->srcpad);
    INFLIGHT_UNLOCK (self);
    return;
  }
  /* downstream refused a batch: the later ones are dropped, not pushed;
   * but for the request pads' frames in them, which what the always src
   * pad's downstream said (but an error) does not concern */
  always_flow = self->src_flow;
  ret = always_flow != GST_FLOW_OK && always_flow != GST_FLOW_ERROR
      && gst_cbi_batch_has_streams (batch) ? GST_FLOW_OK : always_flow;
  epoch = g_atomic_int_get (&self->inflight_epoch);
  INFLIGHT_UNLOCK (self);

  if (ret == GST_FLOW_OK && !batch->collected)
    ret = gst_cuda_batch_infer_collect (self, batch);
  if (ret == GST_FLOW_OK)
    ret = gst_cuda_batch_infer_push_batch (self, batch, epoch, always_flow);
  else
    GST_DEBUG_OBJECT (self, "dropping batch %" G_GUINT64_FORMAT ": %s",
        batch->index, gst_flow_get_name (ret));

  INFLIGHT_LOCK (self);
  /* a flush made from this thread (downstream, a sync bus handler) may
   * have dropped the batch already, and its place may hold the next */
  if (epoch == g_atomic_int_get (&self->inflight_epoch)) {
    gst_cuda_batch_infer_discard (self, batch);
    gst_cbi_inflight_pop_unlocked (&self->inflight);
    /* the streaming thread returns it upstream with the next frame */
    if (ret != GST_FLOW_OK && self->src_flow == GST_FLOW_OK)
      self->src_flow = ret;
  }
  INFLIGHT_BROADCAST (self);
  INFLIGHT_UNLOCK (self);
  /* under a drop-policy frames wait for this place, not the streaming
   * thread: the timeout task submits them */
  if (self->run_drop_policy != GST_CUDA_BATCH_INFER_DROP_POLICY_NONE)
    gst_cuda_batch_infer_timer_fire_now (self);
}

GstFlowReturn
gst_cuda_batch_infer_drain (GstCudaBatchInfer * self, const gchar * reason)
{
  GstFlowReturn ret = GST_FLOW_OK;

  /* every pending frame: with a drop-policy, two batches may wait */
  while (ret == GST_FLOW_OK && self->batcher.count > 0)
    ret = gst_cuda_batch_infer_process (self, reason);

  INFLIGHT_LOCK (self);
  while (!self->inflight_flushing && self->inflight.count > 0)
    INFLIGHT_WAIT (self);
  if (ret == GST_FLOW_OK)
    ret = self->inflight_flushing ? GST_FLOW_FLUSHING : self->src_flow;
  INFLIGHT_UNLOCK (self);
  return ret;
}

void
gst_cuda_batch_infer_discard_inflight (GstCudaBatchInfer * self)
{
  GstCbiBatch *batch;

  INFLIGHT_LOCK (self);
  while ((batch = gst_cbi_inflight_peek_unlocked (&self->inflight))) {
    gst_cuda_batch_infer_discard (self, batch);
    gst_cbi_inflight_pop_unlocked (&self->inflight);
  }
  g_atomic_int_inc (&self->inflight_epoch);
  INFLIGHT_BROADCAST (self);
  INFLIGHT_UNLOCK (self);
}

void
gst_cuda_batch_infer_start_flushing (GstCudaBatchInfer * self)
{
  gst_cuda_batch_infer_timer_set_flushing (self, TRUE);
  INFLIGHT_LOCK (self);
  self->inflight_flushing = TRUE;
  INFLIGHT_BROADCAST (self);
  INFLIGHT_UNLOCK (self);
}

gboolean
gst_cuda_batch_infer_stop_flushing (GstCudaBatchInfer * self)
{
  gboolean ok = TRUE;

  INFLIGHT_LOCK (self);
  if (self->src_active) {
    self->inflight_flushing = FALSE;
    self->src_flow = GST_FLOW_OK;
    gst_cuda_batch_infer_timer_set_flushing (self, FALSE);
    ok = gst_cuda_batch_infer_timer_start_unlocked (self)
        && gst_pad_start_task (self->srcpad,
        (GstTaskFunction) gst_cuda_batch_infer_push_loop, self, NULL);
  }
  INFLIGHT_UNLOCK (self);
  return ok;
}

gboolean
gst_cuda_batch_infer_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER_CAST (parent);
  gboolean ok;

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  INFLIGHT_LOCK (self);
  self->src_active = active;
  INFLIGHT_UNLOCK (self);
  if (active)
    return gst_cuda_batch_infer_stop_flushing (self);
  gst_cuda_batch_infer_start_flushing (self);
  g_atomic_pointer_set (&self->push_thread, NULL);
  ok = gst_cuda_batch_infer_timer_stop (self);
  return gst_pad_stop_task (pad) && ok;
}

/* The flush action signal: submits the partial batch from the caller's
 * thread, serialised with the streaming thread by the stream lock, and
 * returns once it is pushed. From the src pad task itself (a sync bus
 * handler, or downstream in its chain) it neither blocks nor waits: it
 * submits if the streaming thread is not busy and a place is free. */
void
gst_cuda_batch_infer_flush (GstCudaBatchInfer * self)
{
  gboolean in_push_thread =
      g_atomic_pointer_get (&self->push_thread) == g_thread_self ();

  if (in_push_thread) {
    if (!GST_PAD_STREAM_TRYLOCK (self->sinkpad)) {
      GST_DEBUG_OBJECT (self, "flush from downstream while a batch is "
          "being made: nothing to add");
      return;
    }
  } else {
    GST_PAD_STREAM_LOCK (self->sinkpad);
  }
  /* the always sink pad is activated with the element, request pads or
   * not */
  if (self->engine && gst_pad_is_active (self->sinkpad)) {
    if (in_push_thread)
      gst_cuda_batch_infer_process_full (self, "flush signal", FALSE);
    else
      gst_cuda_batch_infer_drain (self, "flush signal");
  }
  GST_PAD_STREAM_UNLOCK (self->sinkpad);
}
