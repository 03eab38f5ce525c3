/* GStreamer cudabatchinfer: pending frames of the batch being filled
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstcbibatcher.h"

void
gst_cbi_batcher_init (GstCbiBatcher * batcher, guint capacity)
{
  batcher->frames = g_new0 (GstBuffer *, capacity);
  batcher->capacity = capacity;
  batcher->count = 0;
}

void
gst_cbi_batcher_clear (GstCbiBatcher * batcher)
{
  gst_cbi_batcher_drop (batcher);
  g_clear_pointer (&batcher->frames, g_free);
  batcher->capacity = 0;
}

gboolean
gst_cbi_batcher_push (GstCbiBatcher * batcher, GstBuffer * buffer)
{
  if (G_UNLIKELY (batcher->count >= batcher->capacity)) {
    /* the caller gave @buffer away whatever happens here */
    gst_buffer_unref (buffer);
    g_return_val_if_reached (TRUE);
  }

  batcher->frames[batcher->count++] = buffer;
  return batcher->count == batcher->capacity;
}

guint
gst_cbi_batcher_drop (GstCbiBatcher * batcher)
{
  guint i, n = batcher->count;

  for (i = 0; i < n; i++)
    gst_clear_buffer (&batcher->frames[i]);
  batcher->count = 0;
  return n;
}

guint
gst_cbi_batcher_take (GstCbiBatcher * batcher, GstBuffer *** frames)
{
  GstBuffer **pending = batcher->frames;
  guint n = batcher->count;

  batcher->frames = *frames;
  *frames = pending;
  batcher->count = 0;
  return n;
}
