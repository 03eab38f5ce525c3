/* GStreamer cudabatchinfer element: the batch deadline
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* A partial batch is submitted when its oldest frame has waited
 * batch-timeout, on the pipeline clock. The deadline has a task of its own
 * rather than being waited for by the src pad task, as GstAggregator does:
 * GstAggregator's src pad task makes the output itself, while here the sink
 * pad's streaming thread makes the batches under its stream lock, and may
 * hold that lock while it waits for the src pad task to free a place in
 * the ring. The src pad task, taking the stream lock at a deadline, would
 * deadlock; it would need a try-lock, a retry and a wait on the clock and
 * on the ring at once. A task that only waits on the clock and then takes
 * the stream lock needs none of that. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-timeout.h"

static void gst_cuda_batch_infer_timeout_loop (GstCudaBatchInfer * self);

GstClockTime
gst_cuda_batch_infer_frames_duration (GstCudaBatchInfer * self, guint n)
{
  gint fps_n, fps_d;

  STATS_LOCK (self);
  fps_n = self->fps_n;
  fps_d = self->fps_d;
  STATS_UNLOCK (self);
  return fps_n > 0 ? gst_util_uint64_scale_int (n * GST_SECOND, fps_d, fps_n)
      : GST_CLOCK_TIME_NONE;
}

void
gst_cuda_batch_infer_timer_init (GstCudaBatchInfer * self,
    GstCbiDeadlineFunc deadline)
{
  self->timer_deadline_func = deadline;
  g_mutex_init (&self->timer_lock);
  g_cond_init (&self->timer_cond);
  self->timer_deadline = GST_CLOCK_TIME_NONE;
  g_rec_mutex_init (&self->timeout_task_lock);
  self->timeout_task = gst_task_new ((GstTaskFunction)
      gst_cuda_batch_infer_timeout_loop, self, NULL);
  gst_task_set_lock (self->timeout_task, &self->timeout_task_lock);
}

void
gst_cuda_batch_infer_timer_finalize (GstCudaBatchInfer * self)
{
  g_mutex_clear (&self->timer_lock);
  g_cond_clear (&self->timer_cond);
  gst_object_unref (self->timeout_task);
  g_rec_mutex_clear (&self->timeout_task_lock);
}

void
gst_cuda_batch_infer_timer_disarm (GstCudaBatchInfer * self)
{
  TIMER_LOCK (self);
  self->timer_deadline = GST_CLOCK_TIME_NONE;
  self->timer_generation++;
  if (self->timer_id)
    gst_clock_id_unschedule (self->timer_id);
  TIMER_UNLOCK (self);
}

/* Called when the first frame of a batch, with running time @running,
 * arrives.
 * The batch times out @timeout after the frame's running time on the
 * pipeline clock: a frame that reached us late (downstream was busy) has
 * already waited that long. It never waits more than @timeout from now.
 *
 * A frame that arrives past its deadline still gives the frames behind it
 * one frame's duration (at most @timeout) to join. A live source held up
 * by a slow batch pushes its late frames back to back; submitting the
 * first alone, padded, costs a full batch and makes the next frames later
 * still: on 2 cores a 240 fps source with batch 8 and a 33 ms timeout fell
 * into runs of one-frame batches (52 of 169 batches in 960 frames). */
void
gst_cuda_batch_infer_timer_arm (GstCudaBatchInfer * self, GstClockTime running)
{
  GstClockTime timeout, base_time, now, deadline, grace;
  GstClock *clock;
  guint batch;

  GST_OBJECT_LOCK (self);
  timeout = self->batch_timeout;
  batch = self->batch;
  base_time = GST_ELEMENT_CAST (self)->base_time;
  clock = GST_ELEMENT_CLOCK (self) ? gst_object_ref (GST_ELEMENT_CLOCK (self))
      : NULL;
  GST_OBJECT_UNLOCK (self);
  if (timeout == 0 || clock == NULL) {
    gst_clear_object (&clock);
    return;
  }

  now = gst_clock_get_time (clock);
  deadline = now + timeout;
  if (GST_CLOCK_TIME_IS_VALID (running))
    deadline = MIN (deadline, base_time + running + timeout);

  grace = gst_cuda_batch_infer_frames_duration (self, 1);
  if (!GST_CLOCK_TIME_IS_VALID (grace))
    grace = timeout / MAX (batch, 1);
  deadline = MAX (deadline, now + MIN (grace, timeout));

  TIMER_LOCK (self);
  self->timer_deadline = deadline;
  self->timer_generation++;
  GST_LOG_OBJECT (self, "batch times out at %" GST_TIME_FORMAT,
      GST_TIME_ARGS (self->timer_deadline));
  TIMER_SIGNAL (self);
  TIMER_UNLOCK (self);
  gst_object_unref (clock);
}

void
gst_cuda_batch_infer_timer_fire_now (GstCudaBatchInfer * self)
{
  TIMER_LOCK (self);
  self->timer_now = TRUE;
  if (self->timer_id)
    gst_clock_id_unschedule (self->timer_id);
  TIMER_SIGNAL (self);
  TIMER_UNLOCK (self);
}

void
gst_cuda_batch_infer_timer_set_flushing (GstCudaBatchInfer * self,
    gboolean flushing)
{
  TIMER_LOCK (self);
  self->timer_flushing = flushing;
  self->timer_now = FALSE;
  self->timer_deadline = GST_CLOCK_TIME_NONE;
  self->timer_generation++;
  if (self->timer_id)
    gst_clock_id_unschedule (self->timer_id);
  TIMER_BROADCAST (self);
  TIMER_UNLOCK (self);
}

/* The timeout task: submits a partial batch when its deadline passes on
 * the pipeline clock. */
static void
gst_cuda_batch_infer_timeout_loop (GstCudaBatchInfer * self)
{
  GstClockTime deadline;
  GstClock *clock = NULL;
  GstClockReturn res;
  GstClockID id;
  guint64 generation;
  gboolean fire;

  TIMER_LOCK (self);
  while (!self->timer_flushing && !self->timer_now
      && self->timer_deadline == GST_CLOCK_TIME_NONE)
    TIMER_WAIT (self);
  if (self->timer_flushing) {
    /* under the lock: clearing the flag restarts the task after this
     * pause, never before it */
    gst_task_pause (self->timeout_task);
    TIMER_UNLOCK (self);
    return;
  }
  if (self->timer_now) {
    /* a place in flight freed: no clock to wait on (a deadline armed
     * stays, and is waited for on the next turn) */
    self->timer_now = FALSE;
    TIMER_UNLOCK (self);
    BATCH_LOCK (self);
    TIMER_LOCK (self);
    fire = !self->timer_flushing;
    TIMER_UNLOCK (self);
    if (fire)
      self->timer_deadline_func (self, TRUE);
    BATCH_UNLOCK (self);
    return;
  }
  deadline = self->timer_deadline;
  generation = self->timer_generation;
  TIMER_UNLOCK (self);

  clock = gst_element_get_clock (GST_ELEMENT (self));
  if (clock == NULL) {
    gst_cuda_batch_infer_timer_disarm (self);
    return;
  }
  id = gst_clock_new_single_shot_id (clock, deadline);
  gst_object_unref (clock);

  TIMER_LOCK (self);
  /* a place freed meanwhile: that first (the deadline stays) */
  fire = generation == self->timer_generation && !self->timer_flushing
      && !self->timer_now;
  if (fire)
    self->timer_id = id;
  TIMER_UNLOCK (self);
  res = fire ? gst_clock_id_wait (id, NULL) : GST_CLOCK_UNSCHEDULED;
  TIMER_LOCK (self);
  self->timer_id = NULL;
  TIMER_UNLOCK (self);
  gst_clock_id_unref (id);
  if (res == GST_CLOCK_UNSCHEDULED)
    return;

  BATCH_LOCK (self);
  TIMER_LOCK (self);
  fire = generation == self->timer_generation && !self->timer_flushing;
  TIMER_UNLOCK (self);
  if (fire)
    self->timer_deadline_func (self, FALSE);
  /* a deadline fires once: where the function left it armed as it was (a
   * drop-policy with no place in flight free: the frames are due, and go
   * when a place frees), it would fire again at once, and again */
  TIMER_LOCK (self);
  if (fire && generation == self->timer_generation)
    self->timer_deadline = GST_CLOCK_TIME_NONE;
  TIMER_UNLOCK (self);
  BATCH_UNLOCK (self);
}

gboolean
gst_cuda_batch_infer_timer_start_unlocked (GstCudaBatchInfer * self)
{
  return gst_task_start (self->timeout_task);
}

gboolean
gst_cuda_batch_infer_timer_stop (GstCudaBatchInfer * self)
{
  /* as gst_pad_stop_task() does: once the task's lock is ours, its
   * function has returned, and a pause it made is undone by the join */
  gst_task_stop (self->timeout_task);
  GST_TRACE_OBJECT (self, "Taking timeout task lock from thread %p",
      g_thread_self ());
  g_rec_mutex_lock (&self->timeout_task_lock);
  g_rec_mutex_unlock (&self->timeout_task_lock);
  GST_TRACE_OBJECT (self, "Took and released timeout task lock from thread "
      "%p", g_thread_self ());
  return gst_task_join (self->timeout_task);
}
