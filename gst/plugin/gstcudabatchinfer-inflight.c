/* GStreamer cudabatchinfer element: batches between their submission and
 * their push
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The streaming thread submits a batch into the ring; the src pad task
 * collects the oldest (waiting for the engine), pushes its frames and frees
 * its place. Drain points wait here until the ring is empty; flushing
 * empties it without pushing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-private.h"

#include <string.h>

/* The ring. */

static void
gst_cbi_batch_init (GstCbiBatch * batch, guint n)
{
  batch->frames = g_new0 (GstBuffer *, n);
  batch->tags = g_new0 (GstCbiFrameTag, n);
  batch->out_buffers = g_new0 (GstBuffer *, n);
  batch->tensor_data = g_new0 (GstBuffer *, n);
  batch->in_frames = g_new0 (GstVideoFrame, n);
  batch->out_frames = g_new0 (GstVideoFrame, n);
  batch->in_data = g_new0 (const guint8 *, n);
  batch->in_strides = g_new0 (gint, n);
  batch->out_data = g_new0 (guint8 *, n);
  batch->out_strides = g_new0 (gint, n);
  batch->in_width = g_new0 (guint, n);
  batch->in_height = g_new0 (guint, n);
  batch->out_width = g_new0 (guint, n);
  batch->out_height = g_new0 (guint, n);
  batch->held = g_new0 (gpointer, n);
}

/* Unrefs what @batch still holds (its frames, outputs, tensors and
 * message; unmapped first) and makes it empty. Returns: how many of its
 * frames had not gone out. The caller gives its engine slot back. */
static guint
gst_cbi_batch_reset (GstCbiBatch * batch)
{
  guint i, lost = 0;

  gst_cbi_batch_unmap (batch);
  /* a frame not collected yet is one that does not come out */
  for (i = 0; i < batch->n; i++) {
    if (!batch->collected && batch->frames[i])
      lost++;
    gst_clear_buffer (&batch->frames[i]);
    gst_clear_buffer (&batch->tensor_data[i]);
  }
  for (i = 0; i < batch->n_out; i++) {
    if (batch->collected && batch->out_buffers[i])
      lost++;
    gst_clear_buffer (&batch->out_buffers[i]);
  }
  gst_clear_message (&batch->message);
  batch->n = batch->n_out = 0;
  batch->submitted = batch->collected = FALSE;
  return lost;
}

static void
gst_cbi_batch_clear (GstCbiBatch * batch)
{
  gst_cbi_batch_reset (batch);
  g_free (batch->frames);
  g_free (batch->tags);
  g_free (batch->out_buffers);
  g_free (batch->tensor_data);
  g_free (batch->in_frames);
  g_free (batch->out_frames);
  g_free (batch->in_data);
  g_free (batch->in_strides);
  g_free (batch->out_data);
  g_free (batch->out_strides);
  g_free (batch->in_width);
  g_free (batch->in_height);
  g_free (batch->out_width);
  g_free (batch->out_height);
  g_free (batch->held);
}

void
gst_cbi_batch_unmap (GstCbiBatch * batch)
{
  guint i;

  for (i = 0; i < batch->mapped; i++) {
    gst_video_frame_unmap (&batch->in_frames[i]);
    if (batch->out_frames[i].buffer)
      gst_video_frame_unmap (&batch->out_frames[i]);
    memset (&batch->out_frames[i], 0, sizeof (GstVideoFrame));
  }
  batch->mapped = 0;
}

void
gst_cbi_inflight_init (GstCbiInflight * inflight, guint capacity,
    guint batch_size)
{
  guint i;

  inflight->batches = g_new0 (GstCbiBatch, capacity);
  for (i = 0; i < capacity; i++)
    gst_cbi_batch_init (&inflight->batches[i], batch_size);
  inflight->capacity = capacity;
  inflight->head = inflight->count = 0;
}

void
gst_cbi_inflight_clear (GstCbiInflight * inflight)
{
  guint i;

  for (i = 0; i < inflight->capacity; i++)
    gst_cbi_batch_clear (&inflight->batches[i]);
  g_clear_pointer (&inflight->batches, g_free);
  inflight->capacity = inflight->head = inflight->count = 0;
}

GstCbiBatch *
gst_cbi_inflight_next_unlocked (GstCbiInflight * inflight)
{
  if (inflight->count == inflight->capacity)
    return NULL;
  return &inflight->batches[(inflight->head + inflight->count)
      % inflight->capacity];
}

void
gst_cbi_inflight_push_unlocked (GstCbiInflight * inflight)
{
  g_return_if_fail (inflight->count < inflight->capacity);

  inflight->count++;
}

/* Returns: (transfer none) (nullable): the oldest batch in flight. With
 * the element's inflight_lock. */
static GstCbiBatch *
gst_cbi_inflight_peek_unlocked (GstCbiInflight * inflight)
{
  return inflight->count ? &inflight->batches[inflight->head] : NULL;
}

/* Whether @batch holds a frame of a request pad. */
static gboolean
gst_cbi_batch_has_streams (const GstCbiBatch * batch)
{
  guint i;

  for (i = 0; i < batch->n; i++)
    if (batch->tags[i].stream)
      return TRUE;
  return FALSE;
}

/* The oldest batch is done with. With the element's inflight_lock. */
static void
gst_cbi_inflight_pop_unlocked (GstCbiInflight * inflight)
{
  g_return_if_fail (inflight->count > 0);

  inflight->head = (inflight->head + 1) % inflight->capacity;
  inflight->count--;
}

/* The element's side: the src pad task, drains and flushes. */

/* Gives the batch's engine slot back and empties it, counting the frames
 * that will not come out. */
void
gst_cuda_batch_infer_discard (GstCudaBatchInfer * self, GstCbiBatch * batch)
{
  guint i, lost;

  if (batch->submitted)
    cbi_engine_release (self->engine, batch->ticket);
  /* a frame of a stream that has not gone to its queue is dropped there,
   * so that the stream's events behind it go on */
  for (i = 0; i < batch->n; i++)
    if (batch->tags[i].stream) {
      gst_cuda_batch_infer_deliver (self, &batch->tags[i], NULL);
      batch->tags[i].stream = NULL;
    }
  lost = gst_cbi_batch_reset (batch);
  if (lost == 0)
    return;
  GST_DEBUG_OBJECT (self, "dropping %u frames of batch %" G_GUINT64_FORMAT,
      lost, batch->index);
  STATS_LOCK (self);
  self->stats.frames_dropped += lost;
  STATS_UNLOCK (self);
}

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
    if (batch->tags[i].stream) {
      gst_cuda_batch_infer_deliver (self, &batch->tags[i], out);
      batch->tags[i].stream = NULL;
      continue;
    }
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
}

/* Submits the pending frames, then waits until every batch in flight has
 * been pushed: what a drain point (EOS, a serialised event, new caps, a
 * drain query) needs before it goes on. */
GstFlowReturn
gst_cuda_batch_infer_drain (GstCudaBatchInfer * self, const gchar * reason)
{
  GstFlowReturn ret = gst_cuda_batch_infer_process (self, reason);

  INFLIGHT_LOCK (self);
  while (!self->inflight_flushing && self->inflight.count > 0)
    INFLIGHT_WAIT (self);
  if (ret == GST_FLOW_OK)
    ret = self->inflight_flushing ? GST_FLOW_FLUSHING : self->src_flow;
  INFLIGHT_UNLOCK (self);
  return ret;
}

/* Empties every batch in flight without pushing it. Only while the src pad
 * task is paused or stopped. */
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

/* Wakes whatever waits on the batches in flight and the timer. */
void
gst_cuda_batch_infer_start_flushing (GstCudaBatchInfer * self)
{
  gst_cuda_batch_infer_timer_set_flushing (self, TRUE);
  INFLIGHT_LOCK (self);
  self->inflight_flushing = TRUE;
  INFLIGHT_BROADCAST (self);
  INFLIGHT_UNLOCK (self);
}

/* Clears the flushing state and (re)starts both tasks, unless the src pad
 * was deactivated meanwhile: under the lock that deactivation takes. */
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
  GstCudaBatchInfer *self = GST_CUDA_BATCH_INFER (parent);
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
