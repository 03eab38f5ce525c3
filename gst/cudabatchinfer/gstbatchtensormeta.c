/* GStreamer cudabatchinfer: a frame's slice of the model's output tensors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstbatchtensormeta
 * @title: GstBatchTensorMeta
 * @short_description: the model's outputs for one frame
 *
 * When a model's first output is not an image (a classifier's scores,
 * embeddings, landmarks), the cudabatchinfer element passes every frame
 * through unchanged and attaches a #GstBatchTensorMeta holding the frame's
 * slice of each model output. An application reads it in a pad probe or
 * an appsink:
 *
 * |[<!-- language="C" -->
 * GstBatchTensorMeta *m = gst_buffer_get_batch_tensor_meta (buffer);
 * const GstBatchTensor *t;
 *
 * if (m && (t = gst_batch_tensor_meta_get_tensor (m, "probabilities"))) {
 *   const gfloat *p = gst_batch_tensor_meta_get_data (m, t);
 *   gsize i, n = t->size / sizeof (gfloat), best = 0;
 *
 *   for (i = 1; i < n; i++)
 *     if (p[i] > p[best])
 *       best = i;
 *   g_print ("class %" G_GSIZE_FORMAT ": %.3f\n", best, p[best]);
 * }
 * ]|
 *
 * Build against it with `pkg-config --cflags --libs
 * gstreamer-cudabatchinfer-1.0`.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstbatchtensormeta.h"
#include "gstbatchmeta-private.h"

#include <string.h>

static gboolean
gst_batch_tensor_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstBatchTensorMeta *m = (GstBatchTensorMeta *) meta;

  m->n_tensors = 0;
  m->data = NULL;
  memset (&m->map, 0, sizeof (m->map));
  return TRUE;
}

/* Takes a ref on @data and maps it: what free gives back. */
static gboolean
gst_batch_tensor_meta_set (GstBatchTensorMeta * m, GstBuffer * data,
    guint n_tensors, const GstBatchTensor * tensors)
{
  if (!gst_buffer_map (data, &m->map, GST_MAP_READ))
    return FALSE;
  m->data = gst_buffer_ref (data);
  m->n_tensors = n_tensors;
  memcpy (m->tensors, tensors, n_tensors * sizeof (GstBatchTensor));
  return TRUE;
}

static void
gst_batch_tensor_meta_free (GstMeta * meta, GstBuffer * buffer)
{
  GstBatchTensorMeta *m = (GstBatchTensorMeta *) meta;

  if (m->data) {
    gst_buffer_unmap (m->data, &m->map);
    gst_clear_buffer (&m->data);
  }
}

static gboolean
gst_batch_tensor_meta_transform (GstBuffer * dest, GstMeta * meta,
    GstBuffer * src, GQuark type, gpointer data)
{
  GstBatchTensorMeta *s = (GstBatchTensorMeta *) meta;

  if (!GST_META_TRANSFORM_IS_COPY (type) || s->data == NULL)
    return FALSE;
  /* the elements are never written after the meta is added: share them */
  return gst_buffer_add_batch_tensor_meta (dest, s->data, s->n_tensors,
      s->tensors) != NULL;
}

/**
 * gst_batch_tensor_meta_get_info:
 *
 * What gst_buffer_add_batch_tensor_meta() adds, for code that adds metas
 * by their #GstMetaInfo.
 *
 * Returns: (transfer none): the #GstMetaInfo of #GstBatchTensorMeta
 * (#GST_BATCH_TENSOR_META_INFO), registered on the first call, owned by
 * GStreamer
 */
/* What the model said of a frame does not follow the frame's pixels
 * through a transform: no tags, and only copies keep it. */
GST_BATCH_META_DEFINE (gst_batch_tensor_meta, GstBatchTensorMeta,
    gst_batch_tensor_meta_init, gst_batch_tensor_meta_free,
    gst_batch_tensor_meta_transform);

/**
 * gst_buffer_add_batch_tensor_meta:
 * @buffer: (transfer none): a writable #GstBuffer
 * @data: (transfer none): the elements of every tensor; the meta takes a
 *   reference and keeps it mapped for reading, so it must not be written
 *   afterwards
 * @n_tensors: number of tensors, at most %GST_BATCH_TENSOR_MAX_TENSORS
 * @tensors: (array length=n_tensors) (transfer none): the tensors,
 *   copied; each must lie within @data
 *
 * Adds a #GstBatchTensorMeta to @buffer that describes @n_tensors tensors
 * whose elements lie in @data. The element calls it; an application that
 * produces such tensors itself can too.
 *
 * Returns: (transfer none) (nullable): the meta, owned by @buffer, or
 * %NULL when a tensor does not fit @data or @data cannot be mapped
 */
GstBatchTensorMeta *
gst_buffer_add_batch_tensor_meta (GstBuffer * buffer, GstBuffer * data,
    guint n_tensors, const GstBatchTensor * tensors)
{
  GstBatchTensorMeta *m;
  gsize size;
  guint i;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (GST_IS_BUFFER (data), NULL);
  g_return_val_if_fail (n_tensors <= GST_BATCH_TENSOR_MAX_TENSORS, NULL);

  size = gst_buffer_get_size (data);
  for (i = 0; i < n_tensors; i++)
    if (tensors[i].offset > size || tensors[i].size > size - tensors[i].offset
        || tensors[i].n_dims > GST_BATCH_TENSOR_MAX_DIMS)
      return NULL;
  m = (GstBatchTensorMeta *) gst_buffer_add_meta (buffer,
      GST_BATCH_TENSOR_META_INFO, NULL);
  if (m && !gst_batch_tensor_meta_set (m, data, n_tensors, tensors)) {
    gst_buffer_remove_meta (buffer, (GstMeta *) m);
    return NULL;
  }
  return m;
}

/**
 * gst_buffer_get_batch_tensor_meta:
 * @buffer: (transfer none): a #GstBuffer
 *
 * Finds the model's outputs the element attached to @buffer.
 *
 * Returns: (transfer none) (nullable): the #GstBatchTensorMeta of @buffer,
 * owned by @buffer, or %NULL when it has none
 */
GstBatchTensorMeta *
gst_buffer_get_batch_tensor_meta (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  return (GstBatchTensorMeta *) gst_buffer_get_meta (buffer,
      GST_BATCH_TENSOR_META_API_TYPE);
}

/**
 * gst_batch_tensor_meta_get_tensor:
 * @meta: (transfer none): a #GstBatchTensorMeta
 * @name: (transfer none): a model output's name
 *
 * Finds one of the model's outputs by the name the model gives it.
 *
 * Returns: (transfer none) (nullable): the tensor of that name, owned by
 * @meta, or %NULL
 */
const GstBatchTensor *
gst_batch_tensor_meta_get_tensor (GstBatchTensorMeta * meta, const gchar * name)
{
  guint i;

  g_return_val_if_fail (meta != NULL && name != NULL, NULL);

  for (i = 0; i < meta->n_tensors; i++)
    if (strcmp (meta->tensors[i].name, name) == 0)
      return &meta->tensors[i];
  return NULL;
}

/**
 * gst_batch_tensor_meta_get_data:
 * @meta: (transfer none): a #GstBatchTensorMeta
 * @tensor: (transfer none): one of @meta's tensors
 *
 * Where @tensor's elements start in the buffer @meta keeps mapped.
 *
 * Returns: (transfer none): the first of @tensor's elements (@tensor->size
 * bytes), valid while @meta lives
 */
gconstpointer
gst_batch_tensor_meta_get_data (GstBatchTensorMeta * meta,
    const GstBatchTensor * tensor)
{
  g_return_val_if_fail (meta != NULL && tensor != NULL, NULL);

  return meta->map.data + tensor->offset;
}
