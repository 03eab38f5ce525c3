/* GStreamer cudabatchinfer: per-batch memory statistics meta
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/cudabatchinfer/cudabatchinfer-prelude.h>

G_BEGIN_DECLS
/**
 * GST_BATCH_MEMORY_META_API_TYPE:
 *
 * The #GType of the #GstBatchMemoryMeta API, for gst_buffer_get_meta() and
 * gst_buffer_iterate_meta_filtered().
 */
#define GST_BATCH_MEMORY_META_API_TYPE (gst_batch_memory_meta_api_get_type ())
/**
 * GST_BATCH_MEMORY_META_INFO:
 *
 * The #GstMetaInfo of #GstBatchMemoryMeta, for gst_buffer_add_meta().
 */
#define GST_BATCH_MEMORY_META_INFO (gst_batch_memory_meta_get_info ())
typedef struct _GstBatchMemoryMeta GstBatchMemoryMeta;

/**
 * GstBatchMemoryMeta:
 * @meta: parent #GstMeta
 * @batch_index: index of the frame's batch since the stream started; 0 is
 *   the first real batch (the warm-up is not counted)
 * @batch_size: slots the engine ran, padding included
 * @frames: real frames in the batch
 * @padded: padding slots in the batch (@batch_size - @frames)
 * @frame_index: this frame's place among the frames of the batch, 0 the
 *   first: its slot, but where frames skipping inference ride along
 * @warmed_up: %TRUE when a warm-up ran for the shape of this batch
 * @replanned: %TRUE when the engine had to plan a new shape for this batch
 * @allocated_bytes: bytes the engine's pool had handed out after the batch
 * @reserved_bytes: bytes the pool held (handed out plus cached) after it
 * @peak_allocated_bytes: most bytes handed out during the batch
 * @peak_reserved_bytes: most bytes held during the batch
 * @fresh_allocations: blocks the pool had to get from the system or driver
 *   during the batch; 0 in steady state
 * @fresh_bytes: bytes of those blocks
 * @workspace_bytes: scratch memory of the batch's plan
 * @device_free_bytes: free device memory after the batch (0 on the CPU)
 * @device_total_bytes: total device memory (0 on the CPU)
 * @batch_time: wall time of the batch in the engine (pack, compute, unpack
 *   and any planning it needed), in nanoseconds
 * @backend: (not nullable): interned name of the backend ("cpu", "cuda")
 * @device_id: device the batch ran on (0 on the CPU)
 * @device_fresh_bytes: how far the device's free memory (cudaMemGetInfo)
 *   fell below what it was right after the warm-up: device memory taken
 *   outside the pool (cuDNN, cuBLAS, CUDA graphs, modules loaded on first
 *   use) or by another user of the device; 0 in steady state, and on the
 *   CPU
 * @stream: K of the request pad sink_K the frame came in on, -1 for the
 *   element's always sink pad
 * @streams: how many streams had frames in the batch (the always sink pad
 *   counts as one)
 * @stream_mask: bit K set when a frame of sink_K was in the batch, for
 *   K < 64 (higher pads are counted in @streams only)
 * @inferred: %TRUE when the model ran on this frame; %FALSE for a frame
 *   that skipped inference (the element's interval) and goes out with the
 *   last result of its stream, riding in this batch
 * @skipped: frames of the batch that skipped inference (not counted in
 *   @frames, which are the frames the model ran on)
 * @round_trip_time: `backend=remote`: the batch's request from its first
 *   byte sent to its reply's last byte received, in nanoseconds (0 on
 *   the other backends); @batch_time less it is the element's own share
 * @bytes_sent: `backend=remote`: the request body's bytes (the batch's
 *   frames and a JSON header); 0 on the other backends
 * @bytes_received: `backend=remote`: the reply body's bytes; 0 on the
 *   other backends
 *
 * Memory statistics of the batch a frame was computed in, attached by the
 * cudabatchinfer element to every output buffer. Every figure comes from
 * the engine's pool and clocks.
 *
 * Since: 1.0
 */
struct _GstBatchMemoryMeta
{
  GstMeta meta;

  guint64 batch_index;
  guint batch_size;
  guint frames;
  guint padded;
  guint frame_index;
  gboolean warmed_up;
  gboolean replanned;

  guint64 allocated_bytes;
  guint64 reserved_bytes;
  guint64 peak_allocated_bytes;
  guint64 peak_reserved_bytes;
  guint64 fresh_allocations;
  guint64 fresh_bytes;
  guint64 workspace_bytes;
  guint64 device_free_bytes;
  guint64 device_total_bytes;

  GstClockTime batch_time;
  const gchar *backend;
  gint device_id;
  guint64 device_fresh_bytes;
  gint stream;
  guint streams;
  guint64 stream_mask;
  gboolean inferred;
  guint skipped;
  GstClockTime round_trip_time;
  guint64 bytes_sent;
  guint64 bytes_received;
};

GST_CUDABATCHINFER_API GType gst_batch_memory_meta_api_get_type (void);

GST_CUDABATCHINFER_API const GstMetaInfo *gst_batch_memory_meta_get_info (void);

GST_CUDABATCHINFER_API
    GstBatchMemoryMeta * gst_buffer_add_batch_memory_meta (GstBuffer * buffer);

GST_CUDABATCHINFER_API
    GstBatchMemoryMeta * gst_buffer_get_batch_memory_meta (GstBuffer * buffer);

GST_CUDABATCHINFER_API
    GstStructure *
gst_batch_memory_meta_to_structure (const GstBatchMemoryMeta * meta);

/**
 * gst_batch_memory_meta_set_backend:
 * @meta: (transfer none): a #GstBatchMemoryMeta
 * @name: (transfer none): the backend's name
 *
 * Sets @meta->backend to the interned copy of @name, which lives as long
 * as the process: the meta needs no free function for it.
 */
#define gst_batch_memory_meta_set_backend(meta, name) \
  ((meta)->backend = g_intern_string (name))

G_END_DECLS
