/* GStreamer cudabatchinfer: pending frames of the batches being filled
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
 * @running: the frame's running time in its pad's segment, or
 *   %GST_CLOCK_TIME_NONE where it has none
 * @skip: the frame passes without inference (the element's interval): it
 *   takes no slot of the batch it rides in, and goes out with the last
 *   result of its stream
 * @seq: its place among its stream's frames since the last flush, 1 the
 *   first; 0 for the always pads
 *
 * Where a pending frame's result goes, and how it is handled.
 */
    typedef struct
{
  gpointer stream;
  guint64 serial;
  gint index;
  GstClockTime running;
  gboolean skip;
  guint64 seq;
} GstCbiFrameTag;

/**
 * GstCbiBatcher:
 * @frames: (array length=count): the pending input buffers, oldest first,
 *   owned
 * @tags: (array length=count): where each one's result goes
 * @batch: frames to infer that make a batch
 * @capacity: frames it holds at most, skipped ones included
 * @count: frames pending
 * @inferred: of them, the frames to infer
 *
 * Holds the frames that came in and are not in a batch yet, in their
 * order: one batch being filled, and, where the element lets frames wait
 * for a place in flight rather than wait itself, what comes after it. The
 * arrays are allocated once, so filling a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  GstCbiFrameTag *tags;
  guint batch;
  guint capacity;
  guint count;
  guint inferred;
} GstCbiBatcher;

void gst_cbi_batcher_init (GstCbiBatcher * batcher, guint batch,
    guint capacity);
/* Unrefs what is pending and frees the arrays. */
void gst_cbi_batcher_clear (GstCbiBatcher * batcher);
/* Takes @buffer (transfer full), in every case: pushed into a full
 * batcher (a programming error, which is reported as a critical), it is
 * unreffed. @tag (nullable, copied): where its result goes, %NULL for an
 * inferred frame of the always pads with no running time.
 * Returns: gst_cbi_batcher_ready(). */
gboolean gst_cbi_batcher_push (GstCbiBatcher * batcher, GstBuffer * buffer,
    const GstCbiFrameTag * tag);
/* Whether the pending frames make a batch: @batch of them to infer, or
 * @capacity in all. */
gboolean gst_cbi_batcher_ready (const GstCbiBatcher * batcher);
/* Unrefs the pending frames. Returns: how many there were. */
guint gst_cbi_batcher_drop (GstCbiBatcher * batcher);
/* Unrefs the pending frames of @stream only, keeping the others in
 * order. Returns: how many were dropped. */
guint gst_cbi_batcher_drop_stream (GstCbiBatcher * batcher, gpointer stream);
/* Whether a frame of @stream is pending. */
gboolean gst_cbi_batcher_has_stream (const GstCbiBatcher * batcher,
    gpointer stream);
/* The index of the oldest pending frame of @stream tagged @serial (a
 * stream released, whose frames still wait, and a new one at its address
 * differ by it), or -1. */
gint gst_cbi_batcher_oldest (const GstCbiBatcher * batcher, gpointer stream,
    guint64 serial);
/* Takes pending frame @index out, the others keeping their order, its tag
 * into @tag. Where it was to be inferred and its stream's next pending
 * frame is to skip, that one is inferred in its place: a skipped frame
 * always follows an inferred one of its stream.
 * Returns: (transfer full): the frame. */
GstBuffer *gst_cbi_batcher_remove (GstCbiBatcher * batcher, guint index,
    GstCbiFrameTag * tag);
/* Moves the oldest pending frames into @frames and @tags (arrays of at
 * least @max, owned by the caller; no copy of a frame): up to and
 * including the @batch-th to infer and the frames to skip right after it,
 * or all of them where fewer, and at most @max. The frames after them
 * stay pending, first now.
 * Returns: how many were moved. */
guint gst_cbi_batcher_take (GstCbiBatcher * batcher, GstBuffer ** frames,
    GstCbiFrameTag * tags, guint max);

G_END_DECLS
