/* GStreamer cudabatchinfer: batches between their submission and their push
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/video/video.h>

#include "cbiengine.h"

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
 * @n: frames in the batch
 * @n_out: output buffers held
 * @mapped: frames mapped, in and out
 * @submitted: the engine holds the batch, under @ticket
 * @ticket: its engine slot
 * @collected: its results are in @out_buffers, with their metas
 * @warmed_up: it ran on the warmed-up shape
 * @index: its number in the stream
 * @fb: what the engine was given
 * @report: what the engine measured
 * @message: (nullable): the batch's element message, owned until posted
 *
 * A batch on its way through the element. Every array is allocated once,
 * for the element's batch size, so a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  GstBuffer **out_buffers;
  GstBuffer **tensor_data;
  GstVideoFrame *in_frames;
  GstVideoFrame *out_frames;
  const guint8 **in_data;
  gint *in_strides;
  guint8 **out_data;
  gint *out_strides;
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
} GstCbiBatch;

/**
 * GstCbiInflight:
 * @batches: (array length=capacity): a ring of batches
 * @capacity: batches that may be in flight at once
 * @head: the oldest batch in flight
 * @count: batches in flight, from @head on
 *
 * The batches submitted and not yet pushed, in order. The element's lock
 * guards @head and @count; a batch's contents belong to one thread at a
 * time: the streaming thread fills the next one, then, once pushed into
 * the ring, the src pad task collects, pushes and pops it.
 */
typedef struct
{
  GstCbiBatch *batches;
  guint capacity;
  guint head;
  guint count;
} GstCbiInflight;

void gst_cbi_inflight_init (GstCbiInflight * inflight, guint capacity,
    guint batch_size);
/* Frees the arrays; the batches must be empty (gst_cbi_batch_reset()). */
void gst_cbi_inflight_clear (GstCbiInflight * inflight);
/* Returns: (transfer none) (nullable): the batch to fill next, %NULL when
 * @capacity are in flight. */
GstCbiBatch *gst_cbi_inflight_next (GstCbiInflight * inflight);
/* The batch of gst_cbi_inflight_next() is now in flight. */
void gst_cbi_inflight_push (GstCbiInflight * inflight);
/* Returns: (transfer none) (nullable): the oldest batch in flight. */
GstCbiBatch *gst_cbi_inflight_peek (GstCbiInflight * inflight);
/* The oldest batch is done with. */
void gst_cbi_inflight_pop (GstCbiInflight * inflight);

/* Unmaps the frames @batch mapped (@mapped of each). */
void gst_cbi_batch_unmap (GstCbiBatch * batch);

/* Unrefs what @batch still holds (its frames, outputs, tensors and
 * message; unmapped first) and makes it empty. Returns: how many of its
 * frames had not gone out. The caller gives its engine slot back. */
guint gst_cbi_batch_reset (GstCbiBatch * batch);

G_END_DECLS
