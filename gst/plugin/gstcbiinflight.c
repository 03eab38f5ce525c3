/* GStreamer cudabatchinfer: the ring of batches between their submission
 * and their push
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstcbiinflight.h"

#include <string.h>

static void
gst_cbi_batch_init (GstCbiBatch * batch, guint slots, guint n)
{
  batch->frames = g_new0 (GstBuffer *, n);
  batch->tags = g_new0 (GstCbiFrameTag, n);
  batch->slots = g_new0 (gint, n);
  batch->out_buffers = g_new0 (GstBuffer *, n);
  batch->held = g_new0 (gpointer, n);
  batch->tensor_data = g_new0 (GstBuffer *, slots);
  batch->in_frames = g_new0 (GstVideoFrame, slots);
  batch->out_frames = g_new0 (GstVideoFrame, slots);
  batch->in_data = g_new0 (const guint8 *, slots);
  batch->in_strides = g_new0 (gint, slots);
  batch->n_slots = slots;
  batch->chroma = g_new0 (guint8 *, 4 * slots);
  batch->chroma_strides = g_new0 (gint, 2 * slots);
  batch->yuv = g_new0 (CbiYuvMatrix, slots);
  batch->out_data = g_new0 (guint8 *, slots);
  batch->out_strides = g_new0 (gint, slots);
  batch->in_width = g_new0 (guint, slots);
  batch->in_height = g_new0 (guint, slots);
  batch->out_width = g_new0 (guint, slots);
  batch->out_height = g_new0 (guint, slots);
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

guint
gst_cbi_batch_reset (GstCbiBatch * batch)
{
  guint i, lost = 0;

  gst_cbi_batch_unmap (batch);
  /* a frame not collected yet is one that does not come out */
  for (i = 0; i < batch->n; i++) {
    if (!batch->collected && batch->frames[i])
      lost++;
    gst_clear_buffer (&batch->frames[i]);
  }
  for (i = 0; i < batch->n_infer; i++)
    gst_clear_buffer (&batch->tensor_data[i]);
  for (i = 0; i < batch->n_out; i++) {
    if (batch->collected && batch->out_buffers[i])
      lost++;
    gst_clear_buffer (&batch->out_buffers[i]);
  }
  gst_clear_message (&batch->message);
  batch->n = batch->n_infer = batch->n_out = 0;
  batch->submitted = batch->collected = FALSE;
  return lost;
}

static void
gst_cbi_batch_clear (GstCbiBatch * batch)
{
  gst_cbi_batch_reset (batch);
  g_free (batch->frames);
  g_free (batch->tags);
  g_free (batch->slots);
  g_free (batch->out_buffers);
  g_free (batch->tensor_data);
  g_free (batch->in_frames);
  g_free (batch->out_frames);
  g_free (batch->in_data);
  g_free (batch->in_strides);
  g_free (batch->chroma);
  g_free (batch->chroma_strides);
  g_free (batch->yuv);
  g_free (batch->out_data);
  g_free (batch->out_strides);
  g_free (batch->in_width);
  g_free (batch->in_height);
  g_free (batch->out_width);
  g_free (batch->out_height);
  g_free (batch->held);
}

gboolean
gst_cbi_batch_has_streams (const GstCbiBatch * batch)
{
  guint i;

  for (i = 0; i < batch->n; i++)
    if (batch->tags[i].stream)
      return TRUE;
  return FALSE;
}

void
gst_cbi_inflight_init (GstCbiInflight * inflight, guint capacity,
    guint batch_size, guint frames)
{
  guint i;

  inflight->batches = g_new0 (GstCbiBatch, capacity);
  for (i = 0; i < capacity; i++)
    gst_cbi_batch_init (&inflight->batches[i], batch_size, frames);
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

GstCbiBatch *
gst_cbi_inflight_peek_unlocked (GstCbiInflight * inflight)
{
  return inflight->count ? &inflight->batches[inflight->head] : NULL;
}

void
gst_cbi_inflight_pop_unlocked (GstCbiInflight * inflight)
{
  g_return_if_fail (inflight->count > 0);

  inflight->head = (inflight->head + 1) % inflight->capacity;
  inflight->count--;
}
