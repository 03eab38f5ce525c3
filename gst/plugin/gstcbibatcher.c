/* GStreamer cudabatchinfer: pending frames of the batch being filled
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstcbibatcher.h"

#include <string.h>

void
gst_cbi_batcher_init (GstCbiBatcher * batcher, guint capacity)
{
  batcher->frames = g_new0 (GstBuffer *, capacity);
  batcher->tags = g_new0 (GstCbiFrameTag, capacity);
  batcher->capacity = capacity;
  batcher->count = 0;
}

void
gst_cbi_batcher_clear (GstCbiBatcher * batcher)
{
  gst_cbi_batcher_drop (batcher);
  g_clear_pointer (&batcher->frames, g_free);
  g_clear_pointer (&batcher->tags, g_free);
  batcher->capacity = 0;
}

gboolean
gst_cbi_batcher_push (GstCbiBatcher * batcher, GstBuffer * buffer,
    const GstCbiFrameTag * tag)
{
  static const GstCbiFrameTag none = { NULL, 0, -1 };

  if (G_UNLIKELY (batcher->count >= batcher->capacity)) {
    /* the caller gave @buffer away whatever happens here */
    gst_buffer_unref (buffer);
    g_return_val_if_reached (TRUE);
  }

  batcher->tags[batcher->count] = tag ? *tag : none;
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
gst_cbi_batcher_drop_stream (GstCbiBatcher * batcher, gpointer stream)
{
  guint i, kept = 0, n = batcher->count;

  for (i = 0; i < n; i++) {
    if (batcher->tags[i].stream == stream) {
      gst_clear_buffer (&batcher->frames[i]);
      continue;
    }
    batcher->frames[kept] = batcher->frames[i];
    batcher->tags[kept++] = batcher->tags[i];
  }
  for (i = kept; i < n; i++)
    batcher->frames[i] = NULL;
  batcher->count = kept;
  return n - kept;
}

gboolean
gst_cbi_batcher_has_stream (const GstCbiBatcher * batcher, gpointer stream)
{
  guint i;

  for (i = 0; i < batcher->count; i++)
    if (batcher->tags[i].stream == stream)
      return TRUE;
  return FALSE;
}

guint
gst_cbi_batcher_take (GstCbiBatcher * batcher, GstBuffer *** frames,
    GstCbiFrameTag ** tags)
{
  GstBuffer **pending = batcher->frames;
  GstCbiFrameTag *pending_tags = batcher->tags;
  guint n = batcher->count;

  batcher->frames = *frames;
  batcher->tags = *tags;
  *frames = pending;
  *tags = pending_tags;
  batcher->count = 0;
  return n;
}
