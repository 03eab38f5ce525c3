/* GStreamer cudabatchinfer: pending frames of the batch being filled
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS
/**
 * GstCbiFrameTag:
 * @stream: (nullable): the stream (a request pad pair) the frame came
 *   from, %NULL for the element's always pads; not a reference: the
 *   element checks that the stream still exists before it follows it
 * @serial: the stream's serial when the frame came in; a flush or the
 *   stream's release changes it, and a frame of an older serial is dropped
 * @index: K of the stream's pads sink_K and src_K, -1 for the always pads
 *
 * Where a pending frame's result goes.
 */
    typedef struct
{
  gpointer stream;
  guint64 serial;
  gint index;
} GstCbiFrameTag;

/**
 * GstCbiBatcher:
 * @frames: (array length=count): the pending input buffers, owned
 * @tags: (array length=count): where each one's result goes
 * @capacity: frames per batch
 * @count: frames pending
 *
 * Holds up to @capacity input buffers; the arrays are allocated once, so
 * filling a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  GstCbiFrameTag *tags;
  guint capacity;
  guint count;
} GstCbiBatcher;

void gst_cbi_batcher_init (GstCbiBatcher * batcher, guint capacity);
/* Unrefs what is pending and frees the arrays. */
void gst_cbi_batcher_clear (GstCbiBatcher * batcher);
/* Takes @buffer (transfer full), in every case: pushed into a full
 * batcher (a programming error, which is reported as a critical), it is
 * unreffed. @tag (nullable, copied): where its result goes, %NULL for the
 * always pads. Returns: %TRUE when the batch is full. */
gboolean gst_cbi_batcher_push (GstCbiBatcher * batcher, GstBuffer * buffer,
    const GstCbiFrameTag * tag);
/* Unrefs the pending frames. Returns: how many there were. */
guint gst_cbi_batcher_drop (GstCbiBatcher * batcher);
/* Unrefs the pending frames of @stream only, keeping the others in
 * order. Returns: how many were dropped. */
guint gst_cbi_batcher_drop_stream (GstCbiBatcher * batcher, gpointer stream);
/* Whether a frame of @stream is pending. */
gboolean gst_cbi_batcher_has_stream (const GstCbiBatcher * batcher,
    gpointer stream);
/* Moves the pending frames out without a copy: swaps the arrays with
 * *@frames and *@tags, empty arrays of @capacity. Returns: how many they
 * hold. */
guint gst_cbi_batcher_take (GstCbiBatcher * batcher, GstBuffer *** frames,
    GstCbiFrameTag ** tags);

G_END_DECLS
