/* GStreamer cudabatchinfer: a frame's slice of the model's output tensors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/cudabatchinfer/cudabatchinfer-prelude.h>

G_BEGIN_DECLS

/**
 * GST_BATCH_TENSOR_META_API_TYPE:
 *
 * The #GType of the #GstBatchTensorMeta API, for gst_buffer_get_meta() and
 * gst_buffer_iterate_meta_filtered().
 */
#define GST_BATCH_TENSOR_META_API_TYPE (gst_batch_tensor_meta_api_get_type ())
/**
 * GST_BATCH_TENSOR_META_INFO:
 *
 * The #GstMetaInfo of #GstBatchTensorMeta, for gst_buffer_add_meta().
 */
#define GST_BATCH_TENSOR_META_INFO (gst_batch_tensor_meta_get_info ())
/**
 * GST_BATCH_TENSOR_MAX_DIMS:
 *
 * The most dimensions a #GstBatchTensor has.
 */
#define GST_BATCH_TENSOR_MAX_DIMS 8
/**
 * GST_BATCH_TENSOR_MAX_TENSORS:
 *
 * The most tensors a #GstBatchTensorMeta holds.
 */
#define GST_BATCH_TENSOR_MAX_TENSORS 8
/**
 * GstBatchTensorDataType:
 * @GST_BATCH_TENSOR_DATA_TYPE_FLOAT32: 32-bit IEEE float, host byte order
 *
 * The type of a tensor's elements.
 *
 * Since: 1.0
 */
typedef enum
{
  GST_BATCH_TENSOR_DATA_TYPE_FLOAT32,
} GstBatchTensorDataType;

/**
 * GstBatchTensor:
 * @name: (not nullable): interned name of the model output
 * @n_dims: number of dimensions
 * @dims: (array length=n_dims): the dimensions, outermost first; the
 *   first is the batch dimension, 1 for one frame's slice
 * @data_type: the type of the elements
 * @offset: where the elements start in the meta's data, in bytes
 * @size: their size in bytes
 *
 * One model output, for one frame, in row-major order.
 *
 * Since: 1.0
 */
typedef struct _GstBatchTensor GstBatchTensor;

struct _GstBatchTensor
{
  const gchar *name;
  guint n_dims;
  gsize dims[GST_BATCH_TENSOR_MAX_DIMS];
  GstBatchTensorDataType data_type;
  gsize offset;
  gsize size;
};

typedef struct _GstBatchTensorMeta GstBatchTensorMeta;

/**
 * GstBatchTensorMeta:
 * @meta: parent #GstMeta
 * @n_tensors: number of tensors
 * @tensors: (array length=n_tensors): the tensors, in the model's output
 *   order
 * @data: (transfer full): the buffer holding every tensor's elements; the
 *   meta keeps it mapped for reading while it lives
 *
 * What the model computed for the frame it is attached to, when the
 * model's output is not an image: the cudabatchinfer element passes the
 * frame through and attaches this.
 *
 * Since: 1.0
 */
struct _GstBatchTensorMeta
{
  GstMeta meta;

  guint n_tensors;
  GstBatchTensor tensors[GST_BATCH_TENSOR_MAX_TENSORS];
  GstBuffer *data;

  /*< private > */
  GstMapInfo map;
};

GST_CUDABATCHINFER_API GType gst_batch_tensor_meta_api_get_type (void);

GST_CUDABATCHINFER_API const GstMetaInfo *gst_batch_tensor_meta_get_info (void);

GST_CUDABATCHINFER_API
    GstBatchTensorMeta * gst_buffer_add_batch_tensor_meta (GstBuffer * buffer,
    GstBuffer * data, guint n_tensors, const GstBatchTensor * tensors);

GST_CUDABATCHINFER_API
    GstBatchTensorMeta * gst_buffer_get_batch_tensor_meta (GstBuffer * buffer);

GST_CUDABATCHINFER_API
    const GstBatchTensor *gst_batch_tensor_meta_get_tensor (GstBatchTensorMeta *
    meta, const gchar * name);

GST_CUDABATCHINFER_API
    gconstpointer gst_batch_tensor_meta_get_data (GstBatchTensorMeta * meta,
    const GstBatchTensor * tensor);

G_END_DECLS
