/* GStreamer cudabatchinfer element: frames in memory:CUDAMemory
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A leaf of the element's files, as gstcudabatchinfer-engine.c: what the
 * pads and the batches need of GStreamer's CUDA library (gstreamer-cuda-1.0,
 * gst-plugins-bad 1.22 and later). Built where the library is
 * (HAVE_GST_CUDA); elsewhere the element takes system memory only, and
 * these functions say so.
 */
#pragma once

#include "gstcudabatchinfer-private.h"

G_BEGIN_DECLS

/* The caps feature of frames in a GPU's memory, as GStreamer's CUDA
 * elements (cudaupload, nvh264dec) give them */
#define GST_CUDA_BATCH_INFER_CUDA_MEMORY "memory:CUDAMemory"

/* Whether @caps (its first structure) are of frames in CUDA memory. */
gboolean gst_cuda_batch_infer_is_cuda_memory (const GstCaps * caps);

/* Returns: (transfer full): @caps with every structure in system memory
 * (the feature removed). */
GstCaps *gst_cuda_batch_infer_to_system_memory (const GstCaps * caps);

/* Returns: (transfer full): @caps without their structures in CUDA
 * memory. */
GstCaps *gst_cuda_batch_infer_without_cuda_memory (const GstCaps * caps);

#ifdef HAVE_GST_CUDA

/* Whether this element may take frames in CUDA memory: GStreamer's CUDA
 * library found the driver (it opens libcuda itself: no driver, no CUDA
 * memory, and the plugin loads all the same) and the device of
 * device-id exists. Cached per process. */
gboolean gst_cuda_batch_infer_cuda_memory_usable (GstCudaBatchInfer * self);

/* NULL to READY: shares the primary context of device-id, the one the
 * engine's cuDNN and cuBLAS work runs in, with the pipeline
 * (GstContext "gst.cuda.context", posted as HAVE_CONTEXT), so that
 * upstream's CUDA elements allocate frames there. Nothing where CUDA
 * memory is not usable. */
void gst_cuda_batch_infer_cuda_open (GstCudaBatchInfer * self);
/* READY to NULL: lets the context go. */
void gst_cuda_batch_infer_cuda_close (GstCudaBatchInfer * self);
/* GstElement::set_context: a context given before ours is made is kept
 * (frames in it are read through the host). */
void gst_cuda_batch_infer_cuda_set_context (GstCudaBatchInfer * self,
    GstContext * context);
/* Answers a "gst.cuda.context" CONTEXT query with the element's. */
gboolean gst_cuda_batch_infer_cuda_query_context (GstCudaBatchInfer * self,
    GstQuery * query);
/* Adds a CUDA buffer pool of the element's context to ALLOCATION @query
 * for CUDA memory caps; FALSE where there are none to propose. */
gboolean gst_cuda_batch_infer_cuda_propose_pool (GstCudaBatchInfer * self,
    GstQuery * query);
/* Whether @buffer is one piece of CUDA memory in the engine's context,
 * which the CUDA backend reads on the device. */
gboolean gst_cuda_batch_infer_reads_on_device (GstCudaBatchInfer * self,
    GstBuffer * buffer);
/* Maps @buffer (gst_cuda_batch_infer_reads_on_device ()) as @info on
 * the device: @frame's plane data are device pointers. Waits for the
 * producer's stream first where the library has streams (1.24). */
gboolean gst_cuda_batch_infer_map_on_device (GstCudaBatchInfer * self,
    GstVideoFrame * frame, const GstVideoInfo * info, GstBuffer * buffer);

#else

/* without GStreamer's CUDA library: system memory only */
static inline gboolean
gst_cuda_batch_infer_cuda_memory_usable (GstCudaBatchInfer * self)
{
  return FALSE;
}

static inline void
gst_cuda_batch_infer_cuda_open (GstCudaBatchInfer * self)
{
}

static inline void
gst_cuda_batch_infer_cuda_close (GstCudaBatchInfer * self)
{
}

static inline void
gst_cuda_batch_infer_cuda_set_context (GstCudaBatchInfer * self,
    GstContext * context)
{
}

static inline gboolean
gst_cuda_batch_infer_cuda_query_context (GstCudaBatchInfer * self,
    GstQuery * query)
{
  return FALSE;
}

static inline gboolean
gst_cuda_batch_infer_cuda_propose_pool (GstCudaBatchInfer * self,
    GstQuery * query)
{
  return FALSE;
}

static inline gboolean
gst_cuda_batch_infer_reads_on_device (GstCudaBatchInfer * self,
    GstBuffer * buffer)
{
  return FALSE;
}

static inline gboolean
gst_cuda_batch_infer_map_on_device (GstCudaBatchInfer * self,
    GstVideoFrame * frame, const GstVideoInfo * info, GstBuffer * buffer)
{
  return FALSE;
}

#endif

G_END_DECLS
