/* GStreamer cudabatchinfer: pending frames of the batch being filled
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstCbiBatcher:
 * @frames: (array length=count): the pending input buffers, owned
 * @capacity: frames per batch
 * @count: frames pending
 *
 * Holds up to @capacity input buffers; the array is allocated once, so
 * filling a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  guint capacity;
  guint count;
} GstCbiBatcher;

void gst_cbi_batcher_init (GstCbiBatcher * batcher, guint capacity);
/* Unrefs what is pending and frees the array. */
void gst_cbi_batcher_clear (GstCbiBatcher * batcher);
/* Takes @buffer (transfer full), in every case: pushed into a full
 * batcher (a programming error, which is reported as a critical), it is
 * unreffed. Returns: %TRUE when the batch is full. */
gboolean gst_cbi_batcher_push (GstCbiBatcher * batcher, GstBuffer * buffer);
/* Unrefs the pending frames. Returns: how many there were. */
guint gst_cbi_batcher_drop (GstCbiBatcher * batcher);
/* Moves the pending frames out without a copy: swaps the array with
 * *@frames, an empty array of @capacity. Returns: how many it holds. */
guint gst_cbi_batcher_take (GstCbiBatcher * batcher, GstBuffer *** frames);

G_END_DECLS
