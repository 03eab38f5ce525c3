/* GStreamer cudabatchinfer: pending frames of the batches being filled
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstcbibatcher.h"

#include <string.h>

void
gst_cbi_batcher_init (GstCbiBatcher * batcher, guint batch, guint capacity)
{
  batcher->frames = g_new0 (GstBuffer *, capacity);
  batcher->tags = g_new0 (GstCbiFrameTag, capacity);
  batcher->batch = batch;
  batcher->capacity = capacity;
  batcher->count = batcher->inferred = 0;
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
gst_cbi_batcher_ready (const GstCbiBatcher * batcher)
{
  return batcher->inferred >= batcher->batch
      || batcher->count >= batcher->capacity;
}

gboolean
gst_cbi_batcher_push (GstCbiBatcher * batcher, GstBuffer * buffer,
    const GstCbiFrameTag * tag)
{
  static const GstCbiFrameTag none = { NULL, 0, -1, GST_CLOCK_TIME_NONE,
    FALSE, 0
  };

  if (G_UNLIKELY (batcher->count >= batcher->capacity)) {
    /* the caller gave @buffer away whatever happens here */
    gst_buffer_unref (buffer);
    g_return_val_if_reached (TRUE);
  }

  batcher->tags[batcher->count] = tag ? *tag : none;
  batcher->frames[batcher->count++] = buffer;
  if (!batcher->tags[batcher->count - 1].skip)
    batcher->inferred++;
  return gst_cbi_batcher_ready (batcher);
}

guint
gst_cbi_batcher_drop (GstCbiBatcher * batcher)
{
  guint i, n = batcher->count;

  for (i = 0; i < n; i++)
    gst_clear_buffer (&batcher->frames[i]);
  batcher->count = batcher->inferred = 0;
  return n;
}

guint
gst_cbi_batcher_drop_stream (GstCbiBatcher * batcher, gpointer stream)
{
  guint i, kept = 0, n = batcher->count;

  batcher->inferred = 0;
  for (i = 0; i < n; i++) {
    if (batcher->tags[i].stream == stream) {
      gst_clear_buffer (&batcher->frames[i]);
      continue;
    }
    batcher->inferred += !batcher->tags[i].skip;
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

gint
gst_cbi_batcher_oldest (const GstCbiBatcher * batcher, gpointer stream,
    guint64 serial)
{
  guint i;

  for (i = 0; i < batcher->count; i++)
    if (batcher->tags[i].stream == stream && batcher->tags[i].serial == serial)
      return (gint) i;
  return -1;
}

GstBuffer *
gst_cbi_batcher_remove (GstCbiBatcher * batcher, guint index,
    GstCbiFrameTag * tag)
{
  GstBuffer *frame;
  guint i;

  g_return_val_if_fail (index < batcher->count, NULL);

  frame = batcher->frames[index];
  *tag = batcher->tags[index];
  memmove (&batcher->frames[index], &batcher->frames[index + 1],
      (batcher->count - index - 1) * sizeof (GstBuffer *));
  memmove (&batcher->tags[index], &batcher->tags[index + 1],
      (batcher->count - index - 1) * sizeof (GstCbiFrameTag));
  batcher->frames[--batcher->count] = NULL;
  if (tag->skip)
    return frame;
  batcher->inferred--;
  /* the skipped frames behind it would have no result of theirs to go
   * out with: the first of them takes its place */
  for (i = index; i < batcher->count; i++) {
    if (batcher->tags[i].stream != tag->stream
        || batcher->tags[i].serial != tag->serial)
      continue;
    if (batcher->tags[i].skip) {
      batcher->tags[i].skip = FALSE;
      batcher->inferred++;
    }
    break;
  }
  return frame;
}

guint
gst_cbi_batcher_take (GstCbiBatcher * batcher, GstBuffer ** frames,
    GstCbiFrameTag * tags, guint max)
{
  guint n = 0, inferred = 0;

  while (n < batcher->count && n < max && inferred < batcher->batch)
    inferred += !batcher->tags[n++].skip;
  /* and the skipped frames right behind: their result is in this batch,
   * or out already */
  while (n < batcher->count && n < max && batcher->tags[n].skip)
    n++;
  memcpy (frames, batcher->frames, n * sizeof (GstBuffer *));
  memcpy (tags, batcher->tags, n * sizeof (GstCbiFrameTag));
  memmove (batcher->frames, batcher->frames + n,
      (batcher->count - n) * sizeof (GstBuffer *));
  memmove (batcher->tags, batcher->tags + n,
      (batcher->count - n) * sizeof (GstCbiFrameTag));
  memset (batcher->frames + batcher->count - n, 0, n * sizeof (GstBuffer *));
  batcher->count -= n;
  batcher->inferred -= inferred;
  return n;
}
