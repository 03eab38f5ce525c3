/* GStreamer cudabatchinfer element: frames in memory:CUDAMemory
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The engine's CUDA backend runs in the primary context of its device
 * (cudart's). GStreamer's CUDA elements make contexts of their own unless
 * the pipeline hands them one, and a kernel cannot read memory of another
 * context: so the element wraps the primary context in a GstCudaContext
 * and offers it to the pipeline on NULL to READY, before upstream's
 * decoders and uploaders open. Frames in that context are read on the
 * device (a copy there into the batch); frames in any other context are
 * mapped to the host by GStreamer's library, as system memory would be.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudabatchinfer-cudamem.h"

gboolean
gst_cuda_batch_infer_is_cuda_memory (const GstCaps * caps)
{
  GstCapsFeatures *features;

  if (caps == NULL || gst_caps_is_empty (caps) || gst_caps_is_any (caps))
    return FALSE;
  features = gst_caps_get_features (caps, 0);
  return features && gst_caps_features_contains (features,
      GST_CUDA_BATCH_INFER_CUDA_MEMORY);
}

GstCaps *
gst_cuda_batch_infer_to_system_memory (const GstCaps * caps)
{
  GstCaps *res = gst_caps_copy (caps);
  guint i;

  /* in their order: upstream's preference */
  for (i = 0; i < gst_caps_get_size (res); i++)
    gst_caps_set_features (res, i, NULL);
  return res;
}

GstCaps *
gst_cuda_batch_infer_without_cuda_memory (const GstCaps * caps)
{
  GstCaps *res = gst_caps_new_empty ();
  guint i;

  if (gst_caps_is_any (caps))
    return gst_caps_copy (caps);
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    if (f && gst_caps_features_contains (f, GST_CUDA_BATCH_INFER_CUDA_MEMORY))
      continue;
    gst_caps_append_structure_full (res,
        gst_structure_copy (gst_caps_get_structure (caps, i)),
        f ? gst_caps_features_copy (f) : NULL);
  }
  return res;
}

#ifdef HAVE_GST_CUDA

#include <gmodule.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudautils.h>

typedef CUresult (CUDAAPI * PrimaryRetain) (CUcontext * ctx, CUdevice dev);
typedef CUresult (CUDAAPI * PrimaryRelease) (CUdevice dev);

/* The driver's primary-context calls, which GStreamer's loader does not
 * wrap, from the libcuda it opened (never closed, as it never is). */
static PrimaryRetain primary_retain;
static PrimaryRelease primary_release;

static gpointer
gst_cuda_batch_infer_load_cuda (gpointer data)
{
  GModule *module;

  if (!gst_cuda_load_library ())
    return GINT_TO_POINTER (FALSE);
  /* 1.22's pool finds its allocator by name only once this ran */
  gst_cuda_memory_init_once ();
  module = g_module_open ("libcuda.so.1", G_MODULE_BIND_LAZY);
  if (module == NULL
      || !g_module_symbol (module, "cuDevicePrimaryCtxRetain",
          (gpointer *) & primary_retain)
      || !g_module_symbol (module, "cuDevicePrimaryCtxRelease_v2",
          (gpointer *) & primary_release))
    return GINT_TO_POINTER (FALSE);
  return GINT_TO_POINTER (CuInit (0) == CUDA_SUCCESS);
}

gboolean
gst_cuda_batch_infer_cuda_memory_usable (GstCudaBatchInfer * self)
{
  static GOnce once = G_ONCE_INIT;
  gint count = 0, device;

  if (!GPOINTER_TO_INT (g_once (&once, gst_cuda_batch_infer_load_cuda, NULL)))
    return FALSE;
  GST_OBJECT_LOCK (self);
  device = self->device_id;
  GST_OBJECT_UNLOCK (self);
  return CuDeviceGetCount (&count) == CUDA_SUCCESS && device >= 0
      && device < count;
}

/* Released with the GstCudaContext that wraps it. */
static void
gst_cuda_batch_infer_release_primary (gpointer data)
{
  primary_release ((CUdevice) (GPOINTER_TO_INT (data) - 1));
}

/* A GstCudaContext of the primary context of @device_id; %NULL where the
 * driver refuses. */
static GstCudaContext *
gst_cuda_batch_infer_wrap_primary (gint device_id)
{
  GstCudaContext *context;
  CUcontext primary;
  CUdevice device;

  if (CuDeviceGet (&device, device_id) != CUDA_SUCCESS
      || primary_retain (&primary, device) != CUDA_SUCCESS)
    return NULL;
  context = gst_cuda_context_new_wrapped (primary, device);
  if (context == NULL) {
    primary_release (device);
    return NULL;
  }
  /* + 1: device 0 is a valid key's data too */
  g_object_set_data_full (G_OBJECT (context), "cudabatchinfer-primary",
      GINT_TO_POINTER (device + 1), gst_cuda_batch_infer_release_primary);
  return context;
}

void
gst_cuda_batch_infer_cuda_open (GstCudaBatchInfer * self)
{
  GstCudaContext *context;
  GstContext *shared;
  gboolean cpu, have;
  gint device;

  GST_OBJECT_LOCK (self);
  device = self->device_id;
  /* the CPU backend would read every frame through the host */
  cpu = self->backend == GST_CUDA_BATCH_INFER_BACKEND_CPU;
  have = self->cuda_context != NULL;
  GST_OBJECT_UNLOCK (self);
  if (cpu || have || !gst_cuda_batch_infer_cuda_memory_usable (self))
    return;
  context = gst_cuda_batch_infer_wrap_primary (device);
  if (context == NULL) {
    GST_WARNING_OBJECT (self, "could not take the primary context of CUDA "
        "device %d: CUDA memory is read through the host", device);
    return;
  }
  GST_OBJECT_LOCK (self);
  if (self->cuda_context) {
    /* a context came from the pipeline meanwhile: it stays */
    GST_OBJECT_UNLOCK (self);
    gst_object_unref (context);
    return;
  }
  self->cuda_context = context;
  self->cuda_primary = context;
  self->cuda_device = device;
  GST_OBJECT_UNLOCK (self);
  shared = gst_context_new_cuda_context (context);
  GST_INFO_OBJECT (self, "sharing the primary context of CUDA device %d",
      device);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_have_context (GST_OBJECT (self), shared));
}

void
gst_cuda_batch_infer_cuda_close (GstCudaBatchInfer * self)
{
  GstCudaContext *context;

  GST_OBJECT_LOCK (self);
  context = self->cuda_context;
  self->cuda_context = NULL;
  self->cuda_primary = NULL;
  GST_OBJECT_UNLOCK (self);
  gst_clear_object (&context);
}

void
gst_cuda_batch_infer_cuda_set_context (GstCudaBatchInfer * self,
    GstContext * context)
{
  gint device;

  if (!gst_cuda_batch_infer_cuda_memory_usable (self))
    return;
  GST_OBJECT_LOCK (self);
  device = self->device_id;
  GST_OBJECT_UNLOCK (self);
  /* keeps a context it has: its own primary one once open */
  GST_OBJECT_LOCK (self);
  gst_cuda_handle_set_context (GST_ELEMENT (self), context, device,
      (GstCudaContext **) & self->cuda_context);
  GST_OBJECT_UNLOCK (self);
}

gboolean
gst_cuda_batch_infer_cuda_query_context (GstCudaBatchInfer * self,
    GstQuery * query)
{
  GstCudaContext *context = NULL;
  gboolean answered;

  /* a query may come from any thread while the element closes */
  GST_OBJECT_LOCK (self);
  if (self->cuda_context)
    context = gst_object_ref (self->cuda_context);
  GST_OBJECT_UNLOCK (self);
  answered = context && gst_cuda_handle_context_query (GST_ELEMENT (self),
      query, context);
  gst_clear_object (&context);
  return answered;
}

gboolean
gst_cuda_batch_infer_cuda_propose_pool (GstCudaBatchInfer * self,
    GstQuery * query)
{
  GstBufferPool *pool;
  GstStructure *config;
  GstVideoInfo info;
  GstCaps *caps;
  guint size;

  gst_query_parse_allocation (query, &caps, NULL);
  if (self->cuda_context == NULL || !gst_cuda_batch_infer_is_cuda_memory
      (caps) || !gst_video_info_from_caps (&info, caps)
      || gst_query_get_n_allocation_pools (query) > 0)
    return FALSE;
  pool = gst_cuda_buffer_pool_new (self->cuda_context);
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info),
      0, 0);
  if (!gst_buffer_pool_set_config (pool, config)) {
    GST_WARNING_OBJECT (self, "could not set up a CUDA buffer pool for %"
        GST_PTR_FORMAT, caps);
    gst_object_unref (pool);
    return FALSE;
  }
  /* the pool pitches its rows: the size it settled on */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);
  gst_query_add_allocation_pool (query, pool, size, 0, 0);
  gst_object_unref (pool);
  return TRUE;
}

gboolean
gst_cuda_batch_infer_reads_on_device (GstCudaBatchInfer * self,
    GstBuffer * buffer)
{
  GstMemory *mem;

  if (self->cuda_primary == NULL || gst_buffer_n_memory (buffer) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buffer, 0);
  /* another context's memory: a kernel of ours cannot read it */
  return gst_is_cuda_memory (mem)
      && gst_cuda_context_get_handle (GST_CUDA_MEMORY_CAST (mem)->context) ==
      gst_cuda_context_get_handle (self->cuda_primary);
}

gboolean
gst_cuda_batch_infer_map_on_device (GstCudaBatchInfer * self,
    GstVideoFrame * frame, const GstVideoInfo * info, GstBuffer * buffer)
{
#ifdef HAVE_GST_CUDA_1_24
  /* a producer may hand its frame over with its work still queued */
  gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (buffer,
              0)));
#endif
  return gst_video_frame_map (frame, info, buffer,
      (GstMapFlags) (GST_MAP_READ | GST_MAP_CUDA));
}

#endif
