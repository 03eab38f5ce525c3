/* GStreamer cudabatchinfer: per-batch memory statistics meta
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstbatchmemorymeta
 * @title: GstBatchMemoryMeta
 * @short_description: memory statistics of the batch a frame came from
 *
 * The cudabatchinfer element attaches a #GstBatchMemoryMeta to every buffer
 * it outputs. An application reads it with
 * gst_buffer_get_batch_memory_meta(), for instance in a pad probe, to check
 * that no batch after warm-up made a fresh allocation:
 *
 * |[<!-- language="C" -->
 * GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (buffer);
 * if (m && m->fresh_allocations > 0)
 *   g_warning ("batch %" G_GUINT64_FORMAT " allocated", m->batch_index);
 * ]|
 *
 * Build against it with `pkg-config --cflags --libs
 * gstreamer-cudabatchinfer-1.0`.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstbatchmemorymeta.h"
#include "gstbatchmeta-private.h"

#include <gst/video/video.h>
#include <string.h>

static gboolean
gst_batch_memory_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstBatchMemoryMeta *m = (GstBatchMemoryMeta *) meta;

  memset ((guint8 *) m + sizeof (GstMeta), 0,
      sizeof (GstBatchMemoryMeta) - sizeof (GstMeta));
  m->batch_time = GST_CLOCK_TIME_NONE;
  m->backend = g_intern_static_string ("");
  m->stream = -1;
  m->inferred = TRUE;
  return TRUE;
}

static gboolean
gst_batch_memory_meta_transform (GstBuffer * dest, GstMeta * meta,
    GstBuffer * src, GQuark type, gpointer data)
{
  GstBatchMemoryMeta *s = (GstBatchMemoryMeta *) meta, *d;

  /* a scaled frame still came from the same batch */
  if (!GST_META_TRANSFORM_IS_COPY (type)
      && !GST_VIDEO_META_TRANSFORM_IS_SCALE (type))
    return FALSE;

  d = gst_buffer_get_batch_memory_meta (dest);
  if (d == NULL)
    d = gst_buffer_add_batch_memory_meta (dest);
  if (d == NULL)
    return FALSE;
  memcpy ((guint8 *) d + sizeof (GstMeta), (guint8 *) s + sizeof (GstMeta),
      sizeof (GstBatchMemoryMeta) - sizeof (GstMeta));
  return TRUE;
}

/**
 * gst_batch_memory_meta_get_info:
 *
 * The implementation that gst_buffer_add_meta() takes, the same as
 * #GST_BATCH_MEMORY_META_INFO.
 *
 * Returns: (transfer none): the #GstMetaInfo of #GstBatchMemoryMeta,
 * registered on the first call, owned by GStreamer
 */
/* No tags: statistics of a batch do not depend on the frame's size,
 * colours or layout, so no transform invalidates them. No free function:
 * the meta owns nothing (backend is interned), and its transform copies
 * plain values only. */
GST_BATCH_META_DEFINE (gst_batch_memory_meta, GstBatchMemoryMeta,
    gst_batch_memory_meta_init, NULL, gst_batch_memory_meta_transform);

/**
 * gst_buffer_add_batch_memory_meta:
 * @buffer: (transfer none): a writable #GstBuffer
 *
 * Adds a zeroed #GstBatchMemoryMeta to @buffer, for the caller to fill.
 *
 * Returns: (transfer none) (nullable): the meta, owned by @buffer
 */
GstBatchMemoryMeta *
gst_buffer_add_batch_memory_meta (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  return (GstBatchMemoryMeta *) gst_buffer_add_meta (buffer,
      GST_BATCH_MEMORY_META_INFO, NULL);
}

/**
 * gst_buffer_get_batch_memory_meta:
 * @buffer: (transfer none): a #GstBuffer
 *
 * Finds the memory statistics the element attached to @buffer.
 *
 * Returns: (transfer none) (nullable): the #GstBatchMemoryMeta of @buffer,
 * owned by @buffer, or %NULL when it has none
 */
GstBatchMemoryMeta *
gst_buffer_get_batch_memory_meta (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  return (GstBatchMemoryMeta *) gst_buffer_get_meta (buffer,
      GST_BATCH_MEMORY_META_API_TYPE);
}

/**
 * gst_batch_memory_meta_to_structure:
 * @meta: (transfer none): a #GstBatchMemoryMeta
 *
 * The meta as a #GstStructure named `cudabatchinfer-batch`, with the
 * fields' names dashed (`batch-index`, `fresh-allocations`, ...). The
 * element's per-batch bus message carries the same structure.
 *
 * Returns: (transfer full): a new structure
 */
GstStructure *
gst_batch_memory_meta_to_structure (const GstBatchMemoryMeta * meta)
{
  g_return_val_if_fail (meta != NULL, NULL);

  return gst_structure_new ("cudabatchinfer-batch",
      "batch-index", G_TYPE_UINT64, meta->batch_index,
      "batch-size", G_TYPE_UINT, meta->batch_size,
      "frames", G_TYPE_UINT, meta->frames,
      "padded", G_TYPE_UINT, meta->padded,
      "frame-index", G_TYPE_UINT, meta->frame_index,
      "warmed-up", G_TYPE_BOOLEAN, meta->warmed_up,
      "replanned", G_TYPE_BOOLEAN, meta->replanned,
      "allocated-bytes", G_TYPE_UINT64, meta->allocated_bytes,
      "reserved-bytes", G_TYPE_UINT64, meta->reserved_bytes,
      "peak-allocated-bytes", G_TYPE_UINT64, meta->peak_allocated_bytes,
      "peak-reserved-bytes", G_TYPE_UINT64, meta->peak_reserved_bytes,
      "fresh-allocations", G_TYPE_UINT64, meta->fresh_allocations,
      "fresh-bytes", G_TYPE_UINT64, meta->fresh_bytes,
      "workspace-bytes", G_TYPE_UINT64, meta->workspace_bytes,
      "device-free-bytes", G_TYPE_UINT64, meta->device_free_bytes,
      "device-total-bytes", G_TYPE_UINT64, meta->device_total_bytes,
      "batch-time", G_TYPE_UINT64, (guint64) meta->batch_time,
      "backend", G_TYPE_STRING, meta->backend,
      "device-id", G_TYPE_INT, meta->device_id,
      "device-fresh-bytes", G_TYPE_UINT64, meta->device_fresh_bytes,
      "stream", G_TYPE_INT, meta->stream,
      "streams", G_TYPE_UINT, meta->streams,
      "stream-mask", G_TYPE_UINT64, meta->stream_mask,
      "inferred", G_TYPE_BOOLEAN, meta->inferred,
      "skipped", G_TYPE_UINT, meta->skipped,
      "round-trip-time", G_TYPE_UINT64, (guint64) meta->round_trip_time,
      "bytes-sent", G_TYPE_UINT64, meta->bytes_sent,
      "bytes-received", G_TYPE_UINT64, meta->bytes_received, NULL);
}
