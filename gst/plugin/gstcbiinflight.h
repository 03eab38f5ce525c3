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
 * @frames: (array length=n): the input buffers, in the order they came,
 *   owned
 * @tags: (array length=n): where each frame's result goes, and whether it
 *   skips inference
 * @slots: (array length=n): each frame's slot in the engine's batch, -1
 *   for a frame that skips inference
 * @out_buffers: (array length=n_out): each frame's output buffer, owned
 *   until pushed
 * @held: (array length=n): per frame, a reference to its stream (a
 *   GstCbiStream, %NULL for the always pad) from the batch's submission to
 *   its end: with scaling, the frame is read through its stream's caps,
 *   and its results go out with what the stream keeps of its last
 *   (interval), so a stream released meanwhile (from the always src pad's
 *   task, which does not wait for its frames) stays alive until then
 * @tensor_data: per slot, its slice of the tensor outputs, owned until
 *   attached
 * @in_frames: per slot, the mapped input, @mapped of them
 * @out_frames: per slot, the mapped output (image outputs)
 * @in_data: plane data of @in_frames, for the engine
 * @in_strides: their strides
 * @out_data: plane data of @out_frames
 * @out_strides: their strides
 * @chroma: for 4:2:0 frames, per slot the first Cb sample of each input
 *   (from 0), Cr (from slots), and Cb and Cr of each output (from 2 and 3
 *   times slots)
 * @chroma_strides: their chroma rows' strides, in (from 0) and out (from
 *   slots)
 * @yuv: for 4:2:0 frames, per slot its colorimetry's conversions
 * @in_width: each slot's frame width, for scaling
 * @in_height: each slot's frame height
 * @out_width: each slot's output frame width
 * @out_height: each slot's output frame height
 * @on_device: its frames are mapped on the GPU (CUDA memory), read there
 * @n_slots: the slots its per-slot arrays hold
 * @n: frames in the batch
 * @n_infer: of them, the frames inferred: the slots used
 * @n_out: frames whose @out_buffers may hold a buffer
 * @mapped: slots mapped, in and out
 * @submitted: the engine holds the batch, under @ticket
 * @ticket: its engine slot
 * @collected: its results are in @out_buffers, with their metas
 * @warmed_up: it ran on the warmed-up shape
 * @index: its number in the stream
 * @fb: what the engine was given
 * @report: what the engine measured
 * @message: (nullable): the batch's element message, owned until posted
 *
 * A batch on its way through the element: the frames to infer, and the
 * frames that skip inference riding along in their order. Every array is
 * allocated once, for the element's batch size (the slots) and the
 * frames a batch may hold, so a batch allocates nothing.
 */
typedef struct
{
  GstBuffer **frames;
  GstCbiFrameTag *tags;
  gint *slots;
  GstBuffer **out_buffers;
  gpointer *held;
  GstBuffer **tensor_data;
  GstVideoFrame *in_frames;
  GstVideoFrame *out_frames;
  const guint8 **in_data;
  gint *in_strides;
  guint8 **out_data;
  gint *out_strides;
  guint8 **chroma;
  gint *chroma_strides;
  CbiYuvMatrix *yuv;
  guint *in_width;
  guint *in_height;
  guint *out_width;
  guint *out_height;
  gboolean on_device;
  guint n_slots;
  guint n;
  guint n_infer;
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

/* Allocates @capacity batches of @batch_size slots and @frames frames
 * each: every array a batch needs, once. */
void gst_cbi_inflight_init (GstCbiInflight * inflight, guint capacity,
    guint batch_size, guint frames);
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
