/* GStreamer cudabatchinfer element: upstream's GstTensorMeta, where the
 * runtime has it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* GStreamer 1.26 made GstTensorMeta public (libgstanalytics-1.0); its
 * tensor decoders, and 1.28's, read it. The plugin builds on 1.22, which
 * has no such header, and finds the API at run time: the first call opens
 * libgstanalytics-1.0.so.0 with GModule (the process's copy where it is
 * loaded already) and looks up the four functions the element calls. Only
 * functions: no structure's layout is mirrored here, GstTensor and
 * GstTensorMeta stay incomplete types. Two enum values are mirrored; where
 * the build finds gstreamer-analytics-1.0 >= 1.26, static assertions check
 * them and the functions' types against the real header. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcbitensormeta.h"

#include <gmodule.h>
#include <string.h>

#ifdef HAVE_GST_ANALYTICS_TENSOR_META
#include <gst/analytics/gsttensormeta.h>
#endif

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_batch_infer_debug);
#define GST_CAT_DEFAULT gst_cuda_batch_infer_debug

#define ANALYTICS_LIBRARY "libgstanalytics-1.0.so.0"

/* GstTensorDataType and GstTensorDimOrder (gsttensor.h, Since: 1.26) */
#define CBI_TENSOR_DATA_TYPE_FLOAT32 11
#define CBI_TENSOR_DIM_ORDER_ROW_MAJOR 0

/* GstTensor and GstTensorMeta, never looked into */
struct _GstTensor;
struct _GstTensorMeta;

/* The functions, as gsttensormeta.h and gsttensor.h declare them (an enum
 * whose values are all positive is an unsigned int to GCC and Clang) */
typedef const GstMetaInfo *(*CbiTensorMetaGetInfo) (void);
typedef void (*CbiTensorMetaSet) (struct _GstTensorMeta * tmeta,
    guint num_tensors, struct _GstTensor ** tensors);
typedef struct _GstTensor *(*CbiTensorNewSimple) (GQuark id,
    guint data_type, GstBuffer * data, guint dims_order, gsize num_dims,
    gsize * dims);
typedef void (*CbiTensorFree) (struct _GstTensor * tensor);

#ifdef HAVE_GST_ANALYTICS_TENSOR_META
G_STATIC_ASSERT (CBI_TENSOR_DATA_TYPE_FLOAT32 == GST_TENSOR_DATA_TYPE_FLOAT32);
G_STATIC_ASSERT (CBI_TENSOR_DIM_ORDER_ROW_MAJOR ==
    GST_TENSOR_DIM_ORDER_ROW_MAJOR);
G_STATIC_ASSERT (sizeof (GstTensorDataType) == sizeof (guint));
G_STATIC_ASSERT (sizeof (GstTensorDimOrder) == sizeof (guint));
G_STATIC_ASSERT (__builtin_types_compatible_p (__typeof__
        (&gst_tensor_meta_get_info), CbiTensorMetaGetInfo));
G_STATIC_ASSERT (__builtin_types_compatible_p (__typeof__
        (&gst_tensor_meta_set), CbiTensorMetaSet));
G_STATIC_ASSERT (__builtin_types_compatible_p (__typeof__
        (&gst_tensor_new_simple), CbiTensorNewSimple));
G_STATIC_ASSERT (__builtin_types_compatible_p (__typeof__
        (&gst_tensor_free), CbiTensorFree));
#endif

typedef struct
{
  CbiTensorMetaGetInfo meta_get_info;
  CbiTensorMetaSet meta_set;
  CbiTensorNewSimple new_simple;
  CbiTensorFree free;
} CbiTensorApi;

/* g_once: the API, or %NULL where this GStreamer has none */
static gpointer
gst_cbi_tensor_api_load (gpointer unused)
{
  static CbiTensorApi api;
  const struct
  {
    const gchar *name;
    gpointer *func;
  } symbols[] = {
    {"gst_tensor_meta_get_info", (gpointer *) & api.meta_get_info},
    {"gst_tensor_meta_set", (gpointer *) & api.meta_set},
    {"gst_tensor_new_simple", (gpointer *) & api.new_simple},
    {"gst_tensor_free", (gpointer *) & api.free},
  };
  CbiTensorApi *found = NULL;
  GModule *module;
  guint i;

  module = g_module_open (ANALYTICS_LIBRARY,
      G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (module == NULL) {
    GST_INFO ("no GstTensorMeta (GStreamer 1.26 brought it): tensor outputs "
        "carry GstBatchTensorMeta alone: %s", g_module_error ());
    goto done;
  }
  for (i = 0; i < G_N_ELEMENTS (symbols); i++) {
    if (!g_module_symbol (module, symbols[i].name, symbols[i].func)) {
      GST_INFO ("no GstTensorMeta: " ANALYTICS_LIBRARY " has no %s (it is "
          "GStreamer 1.26's): tensor outputs carry GstBatchTensorMeta alone",
          symbols[i].name);
      goto done;
    }
  }
  /* the meta's functions must outlive every buffer that carries it */
  g_module_make_resident (module);
  found = &api;
  GST_INFO ("GstTensorMeta found in %s: tensor outputs carry it too",
      g_module_name (module));

done:
  if (found == NULL && module != NULL)
    g_module_close (module);
  return found;
}

static const CbiTensorApi *
gst_cbi_tensor_api (void)
{
  static GOnce once = G_ONCE_INIT;

  return g_once (&once, gst_cbi_tensor_api_load, NULL);
}

gboolean
gst_cbi_tensor_meta_available (void)
{
  return gst_cbi_tensor_api () != NULL;
}

gboolean
gst_cbi_tensor_meta_add (GstBuffer * buffer, GstBatchTensorMeta * from,
    const GQuark * ids)
{
  const CbiTensorApi *api = gst_cbi_tensor_api ();
  struct _GstTensor **tensors = NULL;
  struct _GstTensorMeta *tmeta;
  gboolean ok = FALSE;
  guint i, made = 0;

  g_return_val_if_fail (GST_IS_BUFFER (buffer) && from != NULL, FALSE);

  if (api == NULL || from->n_tensors == 0)
    goto done;
  /* upstream frees the array with g_free () and each tensor with
   * gst_tensor_free () */
  tensors = g_new0 (struct _GstTensor *, from->n_tensors);
  for (; made < from->n_tensors; made++) {
    const GstBatchTensor *t = &from->tensors[made];
    gsize dims[GST_BATCH_TENSOR_MAX_DIMS];
    GstBuffer *data;

    if (t->n_dims == 0)
      goto done;
    memcpy (dims, t->dims, t->n_dims * sizeof (gsize));
    /* The element's tensor buffers are system memory (a default
     * GstBufferPool's), whose bytes stay where they are while the buffer
     * lives, mapped or not; the wrapper keeps a reference to it, so that
     * it goes back to its pool once no tensor uses it, its memory never
     * shared (a shared one is not writable, and the pool would drop it). */
    data = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY,
        from->map.data + t->offset, t->size, 0, t->size,
        gst_buffer_ref (from->data), (GDestroyNotify) gst_buffer_unref);
    tensors[made] = api->new_simple (ids[made], CBI_TENSOR_DATA_TYPE_FLOAT32,
        data, CBI_TENSOR_DIM_ORDER_ROW_MAJOR, t->n_dims, dims);
    if (tensors[made] == NULL) {
      gst_buffer_unref (data);
      goto done;
    }
  }
  /* a meta of its own, even where the frame has one from another
   * element: gst_buffer_add_tensor_meta () would give that one, and
   * gst_tensor_meta_set () free its tensors */
  tmeta = (struct _GstTensorMeta *) gst_buffer_add_meta (buffer,
      api->meta_get_info (), NULL);
  if (tmeta == NULL)
    goto done;
  api->meta_set (tmeta, from->n_tensors, g_steal_pointer (&tensors));
  ok = TRUE;

done:
  for (i = 0; tensors && i < made; i++)
    api->free (tensors[i]);
  g_free (tensors);
  return ok;
}
