/* GStreamer cudabatchinfer: the ring of batches between their submission
 * and their push
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Self-contained, as gstcbibatcher.h: it knows batches and their buffers,
 * not the element; the element's files fill, submit, collect and push the
 * batches it holds.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cbiengine.h"
#include "gstcbibatcher.h"

G_BEGIN_DECLS
/**
 * GstCbiBatch:
 * @frames: (array length=n): the input buffers, owned
 * @out_buffers: (array length=n_out): output buffers, owned until pushed
 * @tensor_data: per frame, its slice of the tensor outputs, owned until
 *   attached
 * @in_frames: the mapped inputs, @mapped of them
 * @out_frames: the mapped outputs (image outputs), @mapped of them
 * @in_data: plane data of @in_frames, for the engine
 * @in_strides: their strides
 * @out_data: plane data of @out_frames
 * @out_strides: their strides
 * @in_width: each frame's width, for scaling
 * @in_height: each frame's height
 * @out_width: each output frame's width
 * @out_height: each output frame's height
 * @n: frames in the batch
 * @n_out: output buffers held
 * @mapped: frames mapped, in and out
 * @submitted: the engine holds the batch, under @ticket
 * @ticket: its engine slot
 * @collected: its results are in @out_buffers, with their metas
 * @warmed_up: it ran on the warmed-up shape
 * @tags: (array length=n): where each frame's result goes
 * @index: its number in the stream
 * @fb: what the engine was given
 * @report: what the engine measured
 * @message: (nullable): the batch's element message, owned until posted
 * @held: (array length=n): per frame, a reference to its stream (a
 *   GstCbiStream, %NULL for the always pad) while the batch is submitted:
 *   with scaling, the frame is read through its stream's caps, and a
 *   stream released meanwhile (from the always src pad's task, which does
 *   not wait for its frames) stays alive until then
 *
 * A batch on its way through the element. Every array is allocated once,
 * for the element's batch size, so a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  GstCbiFrameTag *tags;
  GstBuffer **out_buffers;
  GstBuffer **tensor_data;
  GstVideoFrame *in_frames;
  GstVideoFrame *out_frames;
  const guint8 **in_data;
  gint *in_strides;
  guint8 **out_data;
  gint *out_strides;
  guint *in_width;
  guint *in_height;
  guint *out_width;
  guint *out_height;
  guint n;
  guint n_out;
  guint mapped;
  gboolean submitted;
  guint ticket;
  gboolean collected;
  gboolean warmed_up;
  guint64 index;
  CbiFrameBatch fb;
  CbiBatchReport report;
  GstMessage *message;
  gpointer *held;
} GstCbiBatch;

/**
 * GstCbiInflight:
 * @batches: (array length=capacity): a ring of batches
 * @capacity: batches that may be in flight at once
 * @head: the oldest batch in flight
 * @count: batches in flight, from @head on
 *
 * The batches submitted and not yet pushed, in order. A lock of the
 * caller's guards @head and @count (the element's inflight_lock): the
 * functions that read them end in _unlocked. A batch's contents belong to
 * one thread at a time: the streaming thread fills the next one, then,
 * once pushed into the ring, the src pad task collects, pushes and pops
 * it.
 */
typedef struct
{
  GstCbiBatch *batches;
  guint capacity;
  guint head;
  guint count;
} GstCbiInflight;

/* Allocates @capacity batches of @batch_size frames each: every array a
 * batch needs, once. */
void gst_cbi_inflight_init (GstCbiInflight * inflight, guint capacity,
    guint batch_size);
/* Frees the arrays and what the batches still hold (their buffers are
 * unreffed, their frames unmapped). */
void gst_cbi_inflight_clear (GstCbiInflight * inflight);
/* Returns: (transfer none) (nullable): the batch to fill next, %NULL when
 * @capacity are in flight. */
GstCbiBatch *gst_cbi_inflight_next_unlocked (GstCbiInflight * inflight);
/* The batch of gst_cbi_inflight_next_unlocked() is now in flight. */
void gst_cbi_inflight_push_unlocked (GstCbiInflight * inflight);
/* Returns: (transfer none) (nullable): the oldest batch in flight. */
GstCbiBatch *gst_cbi_inflight_peek_unlocked (GstCbiInflight * inflight);
/* The oldest batch is done with: its place is free. */
void gst_cbi_inflight_pop_unlocked (GstCbiInflight * inflight);

/* Unmaps the frames @batch mapped (@mapped of each). */
void gst_cbi_batch_unmap (GstCbiBatch * batch);
/* Unrefs what @batch still holds (its frames, outputs, tensors and
 * message; unmapped first) and makes it empty. Returns: how many of its
 * frames had not gone out. The caller gives its engine slot back. */
guint gst_cbi_batch_reset (GstCbiBatch * batch);
/* Whether @batch holds a frame of a request pad. */
gboolean gst_cbi_batch_has_streams (const GstCbiBatch * batch);

G_END_DECLS
