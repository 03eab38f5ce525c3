/* cudabatchinfer: ONNX model import
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Everything here reads untrusted bytes: every count, size and name is
 * checked before use, and every failure says which tensor, node or field
 * it was about.
 */
#include "cbionnx.h"
#include "cbierror.h"
#include "onnx.pb-c.h"

#include <glib/gstdio.h>
#include <sys/stat.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

/* float32 tensors up to 2 GiB, the protobuf limit of a model file */
#define CBI_ONNX_MAX_ELEMENTS (G_GINT64_CONSTANT (1) << 29)
#define CBI_ONNX_MIN_IR 3
#define CBI_ONNX_MIN_OPSET 7
#define CBI_ONNX_MAX_OPSET 23

typedef struct
{
  CbiGraph *graph;
  GHashTable *names;            /* tensor name -> index + 1 */
  GHashTable *ints;             /* int64 constant name -> GArray of gint64 */
  const gchar *base_dir;
  const Onnx__GraphProto *onnx;
  gint64 opset;
} CbiImporter;

/* int64 constants are only ever attributes in disguise (Pad's pads,
 * Reshape's shape): a few values, kept out of the graph */
#define CBI_ONNX_MAX_INTS 64

/* *INDENT-OFF* */
/* printf-like: the attribute lets -Wformat check every caller */
static gboolean cbi_onnx_fail (GError ** error, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);
/* *INDENT-ON* */

static gboolean
cbi_onnx_fail (GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *msg;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, CBI_ERROR, CBI_ERROR_MODEL, msg);
  g_free (msg);
  return FALSE;
}

static const gchar *
cbi_onnx_name (const gchar * name)
{
  return name && *name ? name : "(unnamed)";
}

static gint
cbi_onnx_lookup (CbiImporter * im, const gchar * name)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (im->names, name)) - 1;
}

static gboolean
cbi_onnx_add (CbiImporter * im, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data, gint * index, GError ** error)
{
  if (name == NULL || *name == '\0' || cbi_onnx_lookup (im, name) >= 0) {
    g_free (data);
    return cbi_onnx_fail (error, "tensor name '%s' is empty or defined "
        "twice", cbi_onnx_name (name));
  }
  *index = cbi_graph_add_tensor (im->graph, name, n_dims, dims, data);
  /* the key is the graph's copy of the name: it lives as long as the map */
  g_hash_table_insert (im->names, cbi_graph_tensor (im->graph, *index)->name,
      GINT_TO_POINTER (*index + 1));
  return TRUE;
}

static gboolean
cbi_onnx_count (const gchar * name, const gint64 * dims, gsize n_dims,
    gint64 * count, GError ** error)
{
  gsize i;

  *count = 1;
  for (i = 0; i < n_dims; i++) {
    if (dims[i] < 0)
      return cbi_onnx_fail (error, "tensor %s has a negative dimension", name);
    if (dims[i] > 0 && *count > CBI_ONNX_MAX_ELEMENTS / dims[i])
      return cbi_onnx_fail (error, "tensor %s is too large (its dimensions "
          "overflow %" G_GINT64_FORMAT " elements)", name,
          CBI_ONNX_MAX_ELEMENTS);
    *count *= dims[i];
  }
  return TRUE;
}

/* A location is the model folder's own when it is relative and never
 * steps up. */
static gboolean
cbi_onnx_location_is_inside (const gchar * location)
{
  gchar **parts;
  gboolean inside = TRUE;
  guint i;

  if (location == NULL || *location == '\0' || g_path_is_absolute (location))
    return FALSE;
  parts = g_strsplit_set (location, "/\\", -1);
  for (i = 0; parts[i]; i++)
    if (strcmp (parts[i], "..") == 0)
      inside = FALSE;
  g_strfreev (parts);
  return inside;
}

static gboolean
cbi_onnx_external (CbiImporter * im, const Onnx__TensorProto * t,
    const gchar * name, gsize bytes, gfloat ** data, GError ** error)
{
  const gchar *location = NULL;
  gint64 offset = 0, length = -1;
  GStatBuf st;
  gchar *path;
  FILE *f = NULL;
  gboolean ok = FALSE;
  gsize i;

  for (i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (g_strcmp0 (e->key, "location") == 0)
      location = e->value;
    else if (g_strcmp0 (e->key, "offset") == 0)
      offset = g_ascii_strtoll (e->value ? e->value : "", NULL, 10);
    else if (g_strcmp0 (e->key, "length") == 0)
      length = g_ascii_strtoll (e->value ? e->value : "", NULL, 10);
  }
  if (im->base_dir == NULL || !cbi_onnx_location_is_inside (location))
    return cbi_onnx_fail (error, "tensor %s: external data location '%s' "
        "is not inside the model's folder", name, location ? location : "");
  if (offset < 0 || (length >= 0 && (guint64) length != bytes))
    return cbi_onnx_fail (error, "tensor %s: external data offset %"
        G_GINT64_FORMAT " or length %" G_GINT64_FORMAT " does not fit its %"
        G_GSIZE_FORMAT " bytes", name, offset, length, bytes);

  path = g_build_filename (im->base_dir, location, NULL);
  if (g_stat (path, &st) != 0 || !S_ISREG (st.st_mode)) {
    cbi_onnx_fail (error, "tensor %s: external data file '%s' cannot be "
        "read", name, path);
  } else if ((guint64) offset + bytes > (guint64) st.st_size) {
    cbi_onnx_fail (error, "tensor %s needs %" G_GSIZE_FORMAT " bytes at "
        "offset %" G_GINT64_FORMAT " of '%s', which has %" G_GINT64_FORMAT,
        name, bytes, offset, path, (gint64) st.st_size);
  } else if ((f = g_fopen (path, "rb")) == NULL
      || fseeko (f, offset, SEEK_SET) != 0
      || (*data = g_try_malloc (MAX (bytes, 1))) == NULL
      || fread (*data, 1, bytes, f) != bytes) {
    cbi_onnx_fail (error, "tensor %s: reading %" G_GSIZE_FORMAT " bytes "
        "of '%s' failed", name, bytes, path);
  } else {
    ok = TRUE;
  }
  if (!ok)
    g_clear_pointer (data, g_free);
  if (f)
    fclose (f);
  g_free (path);
  return ok;
}

/* The float32 data of @t, as a new block of its element count. */
static gboolean
cbi_onnx_tensor_data (CbiImporter * im, const Onnx__TensorProto * t,
    gfloat ** data, GError ** error)
{
  const gchar *name = cbi_onnx_name (t->name);
  gint64 count;
  gsize bytes;

  *data = NULL;
  if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value
        (&onnx__tensor_proto__data_type__descriptor, t->data_type);
    return cbi_onnx_fail (error, "tensor %s has data type %s; only float32 "
        "is supported", name, v ? v->name : "unknown");
  }
  if (t->n_dims > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "tensor %s has %" G_GSIZE_FORMAT
        " dimensions; at most %d are supported", name, t->n_dims, CBI_MAX_DIMS);
  if (!cbi_onnx_count (name, t->dims, t->n_dims, &count, error))
    return FALSE;
  bytes = (gsize) count *sizeof (gfloat);

  if (t->has_data_location
      && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return cbi_onnx_external (im, t, name, bytes, data, error);
  if (t->has_raw_data) {
    if (t->raw_data.len != bytes)
      return cbi_onnx_fail (error, "tensor %s holds %" G_GSIZE_FORMAT
          " bytes of data for %" G_GINT64_FORMAT " floats", name,
          t->raw_data.len, count);
    /* ONNX raw data is little-endian, as are the hosts this builds for */
    *data = g_memdup2 (t->raw_data.data, MAX (bytes, 1));
    return TRUE;
  }
  if (t->n_float_data > 0 || count == 0) {
    if (t->n_float_data != (gsize) count)
      return cbi_onnx_fail (error, "tensor %s holds %" G_GSIZE_FORMAT
          " floats for %" G_GINT64_FORMAT " elements", name, t->n_float_data,
          count);
    *data = count ? g_memdup2 (t->float_data, bytes) : g_new0 (gfloat, 1);
    return TRUE;
  }
  return cbi_onnx_fail (error, "tensor %s has no data", name);
}

/* Keeps int64 constant @t (a handful of values) for the ops that read
 * one. */
static gboolean
cbi_onnx_add_ints (CbiImporter * im, const gchar * name,
    const Onnx__TensorProto * t, GError ** error)
{
  GArray *values;
  gint64 count;
  gsize i;

  if (!cbi_onnx_count (cbi_onnx_name (name), t->dims, t->n_dims, &count, error))
    return FALSE;
  if (count > CBI_ONNX_MAX_INTS || (t->has_raw_data
          && t->raw_data.len != (gsize) count * sizeof (gint64))
      || (!t->has_raw_data && t->n_int64_data != (gsize) count))
    return cbi_onnx_fail (error, "tensor %s: int64 constants of up to %d "
        "values with matching data are supported", cbi_onnx_name (name),
        CBI_ONNX_MAX_INTS);
  if (name == NULL || cbi_onnx_lookup (im, name) >= 0
      || g_hash_table_contains (im->ints, name))
    return cbi_onnx_fail (error, "tensor name '%s' is empty or defined "
        "twice", cbi_onnx_name (name));
  values = g_array_sized_new (FALSE, FALSE, sizeof (gint64), count);
  for (i = 0; i < (gsize) count; i++) {
    gint64 v;
    if (t->has_raw_data)
      memcpy (&v, t->raw_data.data + i * sizeof (gint64), sizeof (gint64));
    else
      v = t->int64_data[i];
    g_array_append_val (values, v);
  }
  g_hash_table_insert (im->ints, g_strdup (name), values);
  return TRUE;
}

static gboolean
cbi_onnx_add_constant (CbiImporter * im, const gchar * name,
    const Onnx__TensorProto * t, GError ** error)
{
  gfloat *data;
  gint index;

  if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64
      && !(t->has_data_location
          && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
    return cbi_onnx_add_ints (im, name, t, error);

  if (!cbi_onnx_tensor_data (im, t, &data, error))
    return FALSE;
  return cbi_onnx_add (im, name, t->n_dims, t->dims, data, &index, error);
}

static const Onnx__AttributeProto *
cbi_onnx_attr (const Onnx__NodeProto * n, const gchar * name)
{
  gsize i;

  for (i = 0; i < n->n_attribute; i++)
    if (g_strcmp0 (n->attribute[i]->name, name) == 0)
      return n->attribute[i];
  return NULL;
}

/* Copies the ints of attribute @name into @out when it has exactly @n. */
static gboolean
cbi_onnx_ints (const Onnx__NodeProto * n, const gchar * name, gsize count,
    gint64 * out, GError ** error)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, name);

  if (a == NULL)
    return TRUE;
  if (a->n_ints != count)
    return cbi_onnx_fail (error, "node %s: attribute %s has %" G_GSIZE_FORMAT
        " values, expected %" G_GSIZE_FORMAT " (2-D convolution)",
        cbi_onnx_name (n->name), name, a->n_ints, count);
  memcpy (out, a->ints, count * sizeof (gint64));
  return TRUE;
}

/* auto_pad: NOTSET (pads as given) or VALID (no pads); SAME_* would need
 * the input size. */
static gboolean
cbi_onnx_auto_pad (const Onnx__NodeProto * n, CbiConvAttrs * c, GError ** error)
{
  const Onnx__AttributeProto *auto_pad = cbi_onnx_attr (n, "auto_pad");
  const gchar *name = cbi_onnx_name (n->name);

  if (auto_pad && auto_pad->has_s) {
    gchar *mode = g_strndup ((const gchar *) auto_pad->s.data,
        auto_pad->s.len);
    gboolean known = strcmp (mode, "NOTSET") == 0
        || strcmp (mode, "VALID") == 0;
    if (strcmp (mode, "VALID") == 0)
      memset (c->pads, 0, sizeof (c->pads));
    if (!known)
      cbi_onnx_fail (error, "node %s: auto_pad %s is not supported (pads "
          "must be explicit)", name, mode);
    g_free (mode);
    if (!known)
      return FALSE;
  }
  return TRUE;
}

static gboolean
cbi_onnx_conv_attrs (const Onnx__NodeProto * n, const CbiTensorInfo * w,
    CbiConvAttrs * c, GError ** error)
{
  const Onnx__AttributeProto *group = cbi_onnx_attr (n, "group");
  const gchar *name = cbi_onnx_name (n->name);
  gint64 kernel[2] = { w->dims[2], w->dims[3] };
  guint i;

  memset (c, 0, sizeof (*c));
  c->strides[0] = c->strides[1] = 1;
  c->dilations[0] = c->dilations[1] = 1;
  c->group = group && group->has_i ? group->i : 1;
  if (!cbi_onnx_ints (n, "strides", 2, c->strides, error)
      || !cbi_onnx_ints (n, "dilations", 2, c->dilations, error)
      || !cbi_onnx_ints (n, "pads", 4, c->pads, error)
      || !cbi_onnx_ints (n, "kernel_shape", 2, kernel, error))
    return FALSE;
  if (kernel[0] != w->dims[2] || kernel[1] != w->dims[3])
    return cbi_onnx_fail (error, "node %s: kernel_shape does not match the "
        "weights", name);
  for (i = 0; i < 4; i++)
    if (c->pads[i] < 0 || (i < 2 && (c->strides[i] < 1 || c->dilations[i] < 1)))
      return cbi_onnx_fail (error, "node %s: negative pads or strides or "
          "dilations below 1", name);
  if (c->group < 1)
    return cbi_onnx_fail (error, "node %s: group %" G_GINT64_FORMAT, name,
        c->group);
  return cbi_onnx_auto_pad (n, c, error);
}

static gfloat
cbi_onnx_float (const Onnx__NodeProto * n, const gchar * name, gfloat def)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, name);

  return a && a->has_f ? a->f : def;
}

/* What ConvTranspose adds to Conv's attributes: output_padding, within
 * the end padding; no group, no output_shape. */
static gboolean
cbi_onnx_transpose_attrs (const Onnx__NodeProto * n, CbiConvAttrs * c,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gint d;

  if (c->group != 1 || cbi_onnx_attr (n, "output_shape"))
    return cbi_onnx_fail (error, "node %s (ConvTranspose): group and "
        "output_shape are not supported", name);
  if (!cbi_onnx_ints (n, "output_padding", 2, c->output_padding, error))
    return FALSE;
  for (d = 0; d < 2; d++)
    if (c->output_padding[d] < 0 || c->output_padding[d] > c->pads[d + 2])
      return cbi_onnx_fail (error, "node %s (ConvTranspose): "
          "output_padding beyond the end padding is not supported", name);
  return TRUE;
}

/* Input @i of @n: its tensor index, -1 for an absent optional input. */
static gint
cbi_onnx_node_input (CbiImporter * im, const Onnx__NodeProto * n, gsize i)
{
  if (i >= n->n_input || n->input[i] == NULL || *n->input[i] == '\0')
    return -1;
  return cbi_onnx_lookup (im, n->input[i]);
}

/* Clip's bound from input @i (opset 11 on) or attribute @attr (before),
 * @def when absent. */
static gboolean
cbi_onnx_clip_bound (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    const gchar * attr, gfloat def, gfloat * bound, GError ** error)
{
  gint t = cbi_onnx_node_input (im, n, i);
  const CbiTensorInfo *info;
  gint64 count;

  *bound = cbi_onnx_float (n, attr, def);
  if (t < 0)
    return TRUE;
  info = cbi_graph_tensor (im->graph, t);
  if (info->data == NULL || !cbi_onnx_count (info->name, info->dims,
          info->n_dims, &count, NULL) || count != 1)
    return cbi_onnx_fail (error, "node %s (Clip): its bounds must be scalar "
        "constants", cbi_onnx_name (n->name));
  *bound = info->data[0];
  return TRUE;
}

/* The element-wise ops: their type and parameters, or an error naming an
 * op outside the supported list. */
static gboolean
cbi_onnx_eltwise (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOpType * type, gfloat * alpha, gfloat * beta, GError ** error)
{
  const gchar *op = n->op_type ? n->op_type : "";

  *alpha = *beta = 0.0f;
  if (strcmp (op, "Relu") == 0) {
    *type = CBI_OP_RELU;
  } else if (strcmp (op, "LeakyRelu") == 0) {
    *type = CBI_OP_RELU;
    *alpha = cbi_onnx_float (n, "alpha", 0.01f);
  } else if (strcmp (op, "Sigmoid") == 0) {
    *type = CBI_OP_SIGMOID;
  } else if (strcmp (op, "Tanh") == 0) {
    *type = CBI_OP_TANH;
  } else if (strcmp (op, "Elu") == 0) {
    *type = CBI_OP_ELU;
    *alpha = cbi_onnx_float (n, "alpha", 1.0f);
  } else if (strcmp (op, "HardSigmoid") == 0) {
    *type = CBI_OP_HARD_SIGMOID;
    *alpha = cbi_onnx_float (n, "alpha", 0.2f);
    *beta = cbi_onnx_float (n, "beta", 0.5f);
  } else if (strcmp (op, "HardSwish") == 0) {
    *type = CBI_OP_HARD_SWISH;
  } else if (strcmp (op, "Identity") == 0) {
    *type = CBI_OP_IDENTITY;
  } else if (strcmp (op, "Clip") == 0) {
    *type = CBI_OP_CLIP;
    if (!cbi_onnx_clip_bound (im, n, 1, "min", -G_MAXFLOAT, alpha, error)
        || !cbi_onnx_clip_bound (im, n, 2, "max", G_MAXFLOAT, beta, error))
      return FALSE;
    /* min (max (x, min), max) is max everywhere when min > max */
    if (*alpha > *beta)
      *alpha = *beta;
  } else {
    return cbi_onnx_fail (error, "node %s: op %s is not supported",
        cbi_onnx_name (n->name), op);
  }
  return TRUE;
}

/* MaxPool and AveragePool: 2-D windows, floor rounding (ceil_mode 0). */
static gboolean
cbi_onnx_pool_attrs (const Onnx__NodeProto * n, CbiConvAttrs * c,
    GError ** error)
{
  const Onnx__AttributeProto *ceil = cbi_onnx_attr (n, "ceil_mode");
  const Onnx__AttributeProto *incl = cbi_onnx_attr (n, "count_include_pad");
  const Onnx__AttributeProto *kernel = cbi_onnx_attr (n, "kernel_shape");
  const gchar *name = cbi_onnx_name (n->name);
  gint i;

  memset (c, 0, sizeof (*c));
  c->strides[0] = c->strides[1] = 1;
  c->dilations[0] = c->dilations[1] = 1;
  c->group = 1;
  if (kernel == NULL || kernel->n_ints != 2)
    return cbi_onnx_fail (error, "node %s: a 2-D kernel_shape is needed", name);
  memcpy (c->kernel, kernel->ints, sizeof (c->kernel));
  c->count_include_pad = incl && incl->has_i && incl->i != 0;
  if (ceil && ceil->has_i && ceil->i != 0)
    return cbi_onnx_fail (error, "node %s: ceil_mode 1 is not supported", name);
  if (n->n_output > 1 && n->output[1] && *n->output[1])
    return cbi_onnx_fail (error, "node %s: the Indices output of MaxPool is "
        "not supported", name);
  if (!cbi_onnx_ints (n, "strides", 2, c->strides, error)
      || !cbi_onnx_ints (n, "dilations", 2, c->dilations, error)
      || !cbi_onnx_ints (n, "pads", 4, c->pads, error)
      || !cbi_onnx_auto_pad (n, c, error))
    return FALSE;
  for (i = 0; i < 4; i++)
    if (c->pads[i] < 0 || (i < 2 && (c->kernel[i] < 1 || c->strides[i] < 1
                || c->dilations[i] < 1)))
      return cbi_onnx_fail (error, "node %s: negative pads, or a kernel, "
          "strides or dilations below 1", name);
  return TRUE;
}

static gchar *
cbi_onnx_string (const Onnx__NodeProto * n, const gchar * attr,
    const gchar * def)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, attr);

  if (a == NULL || !a->has_s)
    return g_strdup (def);
  return g_strndup ((const gchar *) a->s.data, a->s.len);
}

/* Resize (opset 10 on: X, roi, scales, sizes) and Upsample (scales as an
 * input, or as an attribute before opset 9): constant scales of 1 for N
 * and C, nearest with integer scales or linear with half-pixel centres. */
static gboolean
cbi_onnx_resize (CbiImporter * im, const Onnx__NodeProto * n,
    CbiResizeMode * mode, gfloat * scale_h, gfloat * scale_w, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "scales");
  gchar *m = cbi_onnx_string (n, "mode", "nearest");
  gchar *coord = cbi_onnx_string (n, "coordinate_transformation_mode",
      "half_pixel");
  const gfloat *scales = NULL;
  gboolean upsample = g_strcmp0 (n->op_type, "Upsample") == 0, ok = FALSE;
  gint t;

  t = cbi_onnx_node_input (im, n, upsample ? 1 : 2);
  if (t >= 0 && cbi_graph_tensor (im->graph, t)->n_dims == 1
      && cbi_graph_tensor (im->graph, t)->dims[0] == 4)
    scales = cbi_graph_tensor (im->graph, t)->data;
  else if (attr && attr->n_floats == 4)
    scales = attr->floats;

  if (cbi_onnx_attr (n, "antialias") && cbi_onnx_attr (n, "antialias")->i) {
    cbi_onnx_fail (error, "node %s (%s): antialias is not supported", name,
        n->op_type);
  } else if (scales == NULL || scales[0] != 1.0f || scales[1] != 1.0f
      || scales[2] <= 0.0f || scales[3] <= 0.0f) {
    cbi_onnx_fail (error, "node %s (%s): only constant scales (1, 1, h, w) "
        "are supported", name, n->op_type);
  } else if (g_strcmp0 (m, "nearest") == 0) {
    *mode = CBI_RESIZE_NEAREST;
    ok = scales[2] == (gint) scales[2] && scales[3] == (gint) scales[3];
    if (!ok)
      cbi_onnx_fail (error, "node %s: nearest resizing needs integer "
          "scales", name);
  } else if (g_strcmp0 (m, "linear") == 0 || g_strcmp0 (m, "bilinear") == 0) {
    *mode = CBI_RESIZE_LINEAR;
    ok = upsample || g_strcmp0 (coord, "half_pixel") == 0
        || g_strcmp0 (coord, "pytorch_half_pixel") == 0;
    if (!ok)
      cbi_onnx_fail (error, "node %s: linear resizing with %s coordinates "
          "is not supported (half_pixel is)", name, coord);
  } else {
    cbi_onnx_fail (error, "node %s: mode %s is not supported", name, m);
  }
  if (ok) {
    *scale_h = scales[2];
    *scale_w = scales[3];
  }
  g_free (m);
  g_free (coord);
  return ok;
}

/* Pad: pads from an int64 constant (opset 11 on) or an attribute, on
 * height and width only; the constant value from a scalar input or the
 * 'value' attribute. */
static gboolean
cbi_onnx_pad (CbiImporter * im, const Onnx__NodeProto * n, CbiConvAttrs * c,
    gint * fill, gfloat * value, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *attr = cbi_onnx_attr (n, "pads");
  gchar *mode = cbi_onnx_string (n, "mode", "constant");
  GArray *ints = n->n_input > 1 && n->input[1] ?
      g_hash_table_lookup (im->ints, n->input[1]) : NULL;
  const gint64 *pads = ints && ints->len == 8 ? (const gint64 *) ints->data :
      attr && attr->n_ints == 8 ? attr->ints : NULL;
  gboolean ok = TRUE;

  memset (c, 0, sizeof (*c));
  if (strcmp (mode, "constant") == 0)
    *fill = CBI_PAD_FILL_CONSTANT;
  else if (strcmp (mode, "reflect") == 0)
    *fill = CBI_PAD_FILL_REFLECT;
  else if (strcmp (mode, "edge") == 0)
    *fill = CBI_PAD_FILL_EDGE;
  else
    ok = cbi_onnx_fail (error, "node %s (Pad): mode %s is not supported",
        name, mode);
  g_free (mode);
  if (!ok)
    return FALSE;
  if (n->n_input > 3 && n->input[3] && *n->input[3])
    return cbi_onnx_fail (error, "node %s (Pad): axes are not supported", name);
  /* [N, C, H, W] begins, then ends */
  if (pads == NULL || pads[0] || pads[1] || pads[4] || pads[5]
      || pads[2] < 0 || pads[3] < 0 || pads[6] < 0 || pads[7] < 0)
    return cbi_onnx_fail (error, "node %s (Pad): only constant, "
        "non-negative pads of height and width are supported", name);
  c->pads[0] = pads[2];
  c->pads[1] = pads[3];
  c->pads[2] = pads[6];
  c->pads[3] = pads[7];
  return cbi_onnx_clip_bound (im, n, 2, "value", 0.0f, value, error);
}

/* How many node inputs of the ONNX graph read @name. */
static guint
cbi_onnx_readers (CbiImporter * im, const gchar * name)
{
  guint count = 0;
  gsize i, j;

  for (i = 0; i < im->onnx->n_node; i++)
    for (j = 0; j < im->onnx->node[i]->n_input; j++)
      if (g_strcmp0 (im->onnx->node[i]->input[j], name) == 0)
        count++;
  return count;
}

/* The 1-D constant of @count floats at input @i of @n, or NULL. */
static const gfloat *
cbi_onnx_vector (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    gint64 count)
{
  gint t = cbi_onnx_node_input (im, n, i);
  const CbiTensorInfo *info = t >= 0 ? cbi_graph_tensor (im->graph, t) : NULL;

  if (info == NULL || info->data == NULL || info->n_dims != 1
      || info->dims[0] != count)
    return NULL;
  return info->data;
}

/* A BatchNormalization right after a Conv (its only reader) is folded into
 * the Conv's weights and bias, as inference frameworks do: no op at run
 * time. Its output name then stands for the Conv's output. */
static gboolean
cbi_onnx_fold_batch_norm (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gint x = cbi_onnx_node_input (im, n, 0), w_index = -1, b_index = -1;
  gfloat eps = cbi_onnx_float (n, "epsilon", 1e-5f);
  const gfloat *scale, *shift, *mean, *var, *bias = NULL;
  CbiNode *conv = NULL;
  CbiTensorInfo *w;
  gint64 o, out_c, count, block, k_dims[1];
  gfloat *weights, *biases;
  gchar *w_name, *b_name;
  gboolean ok;
  guint i;

  for (i = 0; x >= 0 && i < im->graph->nodes->len; i++)
    if (cbi_graph_node (im->graph, i)->output == x
        && cbi_graph_node (im->graph, i)->op == CBI_OP_CONV)
      conv = cbi_graph_node (im->graph, i);
  if (conv == NULL || cbi_onnx_readers (im, n->input[0]) != 1)
    return cbi_onnx_fail (error, "node %s (BatchNormalization): only a "
        "BatchNormalization right after a Conv (its only reader) is "
        "supported; it is folded into the Conv", name);

  w = cbi_graph_tensor (im->graph, conv->inputs[1]);
  out_c = w->dims[0];
  scale = cbi_onnx_vector (im, n, 1, out_c);
  shift = cbi_onnx_vector (im, n, 2, out_c);
  mean = cbi_onnx_vector (im, n, 3, out_c);
  var = cbi_onnx_vector (im, n, 4, out_c);
  if (conv->n_inputs > 2 && conv->inputs[2] >= 0)
    bias = cbi_graph_tensor (im->graph, conv->inputs[2])->data;
  if (!scale || !shift || !mean || !var)
    return cbi_onnx_fail (error, "node %s (BatchNormalization): scale, B, "
        "mean and var must be constants of %" G_GINT64_FORMAT " values",
        name, out_c);

  cbi_onnx_count (w->name, w->dims, w->n_dims, &count, NULL);
  block = count / out_c;
  weights = g_memdup2 (w->data, count * sizeof (gfloat));
  biases = g_new (gfloat, out_c);
  for (o = 0; o < out_c; o++) {
    gfloat k = scale[o] / sqrtf (var[o] + eps);
    gint64 j;
    for (j = 0; j < block; j++)
      weights[o * block + j] *= k;
    biases[o] = ((bias ? bias[o] : 0.0f) - mean[o]) * k + shift[o];
  }

  /* the Conv's own constants may be shared: the folded ones are new */
  w_name = g_strconcat (name, ".folded_weight", NULL);
  b_name = g_strconcat (name, ".folded_bias", NULL);
  k_dims[0] = out_c;
  ok = cbi_onnx_add (im, w_name, 4, w->dims, weights, &w_index, error)
      && cbi_onnx_add (im, b_name, 1, k_dims, biases, &b_index, error);
  if (!ok && w_index < 0)
    g_free (biases);
  g_free (w_name);
  g_free (b_name);
  if (!ok)
    return FALSE;
  conv->inputs[1] = w_index;
  conv->inputs[2] = b_index;
  conv->n_inputs = 3;
  if (cbi_onnx_lookup (im, n->output[0]) >= 0)
    return cbi_onnx_fail (error, "tensor name '%s' is defined twice",
        n->output[0]);
  g_hash_table_insert (im->names, n->output[0], GINT_TO_POINTER (x + 1));
  return TRUE;
}

static gint64
cbi_onnx_int (const Onnx__NodeProto * n, const gchar * name, gint64 def)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, name);

  return a && a->has_i ? a->i : def;
}

/* The int64 constant at input @i of @n, or NULL. */
static GArray *
cbi_onnx_int_input (CbiImporter * im, const Onnx__NodeProto * n, gsize i)
{
  if (i >= n->n_input || n->input[i] == NULL)
    return NULL;
  return g_hash_table_lookup (im->ints, n->input[i]);
}

/* What the shape-changing and matrix ops keep in CbiNode: Reshape's
 * target, Flatten's axis (as a Reshape of mode 1), Transpose's
 * permutation, DepthToSpace's block, Gemm's transpositions, Softmax's
 * axis. */
static gboolean
cbi_onnx_layout_op (CbiImporter * im, const Onnx__NodeProto * n,
    CbiNode * node, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const Onnx__AttributeProto *a;
  GArray *ints;
  gchar *mode;
  guint i;

  switch (node->op) {
    case CBI_OP_RESHAPE:
      if (strcmp (n->op_type, "Flatten") == 0) {
        node->mode = 1;
        node->axis = cbi_onnx_int (n, "axis", 1);
        return TRUE;
      }
      ints = cbi_onnx_int_input (im, n, 1);
      if (ints == NULL || ints->len > CBI_MAX_DIMS)
        return cbi_onnx_fail (error, "node %s (Reshape): the shape must be "
            "an int64 constant of up to %d values", name, CBI_MAX_DIMS);
      for (i = 0; i < ints->len; i++)
        if (g_array_index (ints, gint64, i) == 0
            && cbi_onnx_int (n, "allowzero", 0) != 0)
          return cbi_onnx_fail (error, "node %s (Reshape): allowzero with a "
              "0 in the shape is not supported", name);
      node->n_ints = ints->len;
      memcpy (node->ints, ints->data, ints->len * sizeof (gint64));
      return TRUE;
    case CBI_OP_TRANSPOSE:
      a = cbi_onnx_attr (n, "perm");
      if (a && a->n_ints > CBI_MAX_DIMS)
        return cbi_onnx_fail (error, "node %s (Transpose): %" G_GSIZE_FORMAT
            " axes; at most %d are supported", name, a->n_ints, CBI_MAX_DIMS);
      /* none: the axes reversed, once the rank is known */
      node->n_ints = a ? a->n_ints : 0;
      if (a)
        memcpy (node->ints, a->ints, a->n_ints * sizeof (gint64));
      return TRUE;
    case CBI_OP_DEPTH_TO_SPACE:{
      gboolean ok = TRUE;
      mode = cbi_onnx_string (n, "mode", "DCR");
      node->mode = strcmp (mode, "CRD") == 0;
      node->n_ints = 1;
      node->ints[0] = cbi_onnx_int (n, "blocksize", 0);
      if (!node->mode && strcmp (mode, "DCR") != 0)
        ok = cbi_onnx_fail (error, "node %s (DepthToSpace): mode %s is not "
            "supported (DCR and CRD are)", name, mode);
      else if (node->ints[0] < 1)
        ok = cbi_onnx_fail (error, "node %s (DepthToSpace): blocksize must "
            "be 1 or more", name);
      g_free (mode);
      return ok;
    }
    case CBI_OP_GEMM:
      node->alpha = cbi_onnx_float (n, "alpha", 1.0f);
      node->beta = cbi_onnx_float (n, "beta", 1.0f);
      node->n_ints = 2;
      node->ints[0] = cbi_onnx_int (n, "transA", 0) != 0;
      node->ints[1] = cbi_onnx_int (n, "transB", 0) != 0;
      return TRUE;
    case CBI_OP_SOFTMAX:
      /* before opset 13, the input is seen as 2-D, split at axis */
      node->mode = im->opset < 13;
      node->axis = cbi_onnx_int (n, "axis", im->opset < 13 ? 1 : -1);
      return TRUE;
    default:
      return TRUE;
  }
}

/* The ops that take their first input as an activation and the rest as
 * constants (or, for MatMul, a constant or an activation); the first
 * input count is what the engine reads. */
static gboolean
cbi_onnx_layout_type (const gchar * op, CbiOpType * type, guint * n_inputs)
{
  static const struct
  {
    const gchar *name;
    CbiOpType type;
    guint n_inputs;
  } ops[] = {
    {"DepthToSpace", CBI_OP_DEPTH_TO_SPACE, 1},
    {"Reshape", CBI_OP_RESHAPE, 1},
    {"Flatten", CBI_OP_RESHAPE, 1},
    {"Transpose", CBI_OP_TRANSPOSE, 1},
    {"Gemm", CBI_OP_GEMM, 3},
    {"MatMul", CBI_OP_MATMUL, 2},
    {"Softmax", CBI_OP_SOFTMAX, 1},
    {"GlobalAveragePool", CBI_OP_GLOBAL_AVERAGE_POOL, 1},
    {"PRelu", CBI_OP_PRELU, 2},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (ops); i++) {
    if (strcmp (op, ops[i].name) == 0) {
      *type = ops[i].type;
      *n_inputs = ops[i].n_inputs;
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean
cbi_onnx_add_node (CbiImporter * im, const Onnx__NodeProto * n, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const gchar *op = n->op_type ? n->op_type : "";
  gint inputs[CBI_MAX_NODE_INPUTS], output, index;
  CbiNode *node;
  gfloat alpha = 0.0f, beta = 0.0f;
  gint mode = CBI_RESIZE_NEAREST;
  CbiConvAttrs conv = { {0,}, };
  CbiOpType type = CBI_OP_IDENTITY;
  guint n_inputs, i;

  if (n->domain && *n->domain && strcmp (n->domain, "ai.onnx") != 0)
    return cbi_onnx_fail (error, "node %s: op %s of domain %s is not "
        "supported", name, op, n->domain);
  if (n->n_output < 1)
    return cbi_onnx_fail (error, "node %s has no output", name);

  if (strcmp (op, "BatchNormalization") == 0) {
    return cbi_onnx_fold_batch_norm (im, n, error);
  } else if (strcmp (op, "Constant") == 0) {
    const Onnx__AttributeProto *v = cbi_onnx_attr (n, "value");
    if (v == NULL || v->t == NULL)
      return cbi_onnx_fail (error, "node %s: only Constant with a 'value' "
          "tensor is supported", name);
    return cbi_onnx_add_constant (im, n->output[0], v->t, error);
  } else if (strcmp (op, "Conv") == 0) {
    type = CBI_OP_CONV;
    n_inputs = MIN (n->n_input, 3);
  } else if (strcmp (op, "ConvTranspose") == 0) {
    type = CBI_OP_CONV_TRANSPOSE;
    n_inputs = MIN (n->n_input, 3);
  } else if (strcmp (op, "Add") == 0 || strcmp (op, "Sub") == 0
      || strcmp (op, "Mul") == 0 || strcmp (op, "Div") == 0) {
    type = op[0] == 'A' ? CBI_OP_ADD : op[0] == 'S' ? CBI_OP_SUB :
        op[0] == 'M' ? CBI_OP_MUL : CBI_OP_DIV;
    n_inputs = 2;
  } else if (strcmp (op, "MaxPool") == 0 || strcmp (op, "AveragePool") == 0) {
    type = op[0] == 'M' ? CBI_OP_MAX_POOL : CBI_OP_AVERAGE_POOL;
    n_inputs = 1;
    if (!cbi_onnx_pool_attrs (n, &conv, error))
      return FALSE;
  } else if (strcmp (op, "Resize") == 0 || strcmp (op, "Upsample") == 0) {
    type = CBI_OP_RESIZE;
    n_inputs = 1;
    if (!cbi_onnx_resize (im, n, (CbiResizeMode *) & mode, &alpha, &beta,
            error))
      return FALSE;
  } else if (strcmp (op, "InstanceNormalization") == 0) {
    type = CBI_OP_INSTANCE_NORM;
    n_inputs = 3;
    alpha = cbi_onnx_float (n, "epsilon", 1e-5f);
  } else if (strcmp (op, "Pad") == 0) {
    type = CBI_OP_PAD;
    n_inputs = 1;
    if (!cbi_onnx_pad (im, n, &conv, &mode, &alpha, error))
      return FALSE;
  } else if (strcmp (op, "Concat") == 0) {
    const Onnx__AttributeProto *axis = cbi_onnx_attr (n, "axis");
    type = CBI_OP_CONCAT;
    n_inputs = n->n_input;
    if (axis == NULL || !axis->has_i)
      return cbi_onnx_fail (error, "node %s (Concat): no axis", name);
    alpha = axis->i;            /* kept as the node's axis below */
    if (n_inputs < 1 || n_inputs > CBI_MAX_NODE_INPUTS)
      return cbi_onnx_fail (error, "node %s (Concat): %" G_GSIZE_FORMAT
          " inputs; 1 to %d are supported", name, n->n_input,
          CBI_MAX_NODE_INPUTS);
  } else if (cbi_onnx_layout_type (op, &type, &n_inputs)) {
    n_inputs = MIN (n_inputs, n->n_input);
  } else if (cbi_onnx_eltwise (im, n, &type, &alpha, &beta, error)) {
    n_inputs = 1;
  } else {
    return FALSE;
  }

  /* an int64 constant anywhere but where Pad and Reshape take theirs */
  for (i = 0; i < n->n_input; i++)
    if (n->input[i] && g_hash_table_contains (im->ints, n->input[i])
        && !((type == CBI_OP_PAD || type == CBI_OP_RESHAPE) && i == 1))
      return cbi_onnx_fail (error, "tensor %s has data type INT64; only "
          "float32 is supported here (node %s)", n->input[i], name);
  for (i = 0; i < n_inputs; i++)
    inputs[i] = cbi_onnx_node_input (im, n, i);
  /* constant first: commutative ops swap, the others are refused */
  if (cbi_op_is_binary (type) && n->n_input == 2 && inputs[0] >= 0
      && inputs[1] >= 0 && cbi_graph_tensor (im->graph, inputs[0])->data
      && (type == CBI_OP_ADD || type == CBI_OP_MUL)) {
    gint t = inputs[0];
    inputs[0] = inputs[1];
    inputs[1] = t;
  }
  if (cbi_op_is_binary (type) && (n->n_input != 2 || inputs[1] < 0))
    return cbi_onnx_fail (error, "node %s (%s): two inputs expected", name, op);
  if (n_inputs < 1 || inputs[0] < 0
      || cbi_graph_tensor (im->graph, inputs[0])->data != NULL)
    return cbi_onnx_fail (error, "node %s (%s): its first input must be "
        "an activation", name, op);
  for (i = 1; type == CBI_OP_CONCAT && i < n_inputs; i++)
    if (inputs[i] < 0)
      return cbi_onnx_fail (error, "node %s (Concat): input %u is absent",
          name, i);


  if (type == CBI_OP_INSTANCE_NORM) {
    for (i = 1; i < 3; i++) {
      const CbiTensorInfo *t = inputs[i] >= 0 ?
          cbi_graph_tensor (im->graph, inputs[i]) : NULL;
      if (t == NULL || t->data == NULL || t->n_dims != 1)
        return cbi_onnx_fail (error, "node %s (InstanceNormalization): "
            "scale and B must be 1-D constants", name);
    }
  }

  if (type == CBI_OP_CONV || type == CBI_OP_CONV_TRANSPOSE) {
    gboolean transpose = type == CBI_OP_CONV_TRANSPOSE;
    const CbiTensorInfo *w = n_inputs > 1 && inputs[1] >= 0 ?
        cbi_graph_tensor (im->graph, inputs[1]) : NULL;
    const CbiTensorInfo *b = n_inputs > 2 && inputs[2] >= 0 ?
        cbi_graph_tensor (im->graph, inputs[2]) : NULL;
    if (w == NULL || w->data == NULL || w->n_dims != 4)
      return cbi_onnx_fail (error, "node %s (Conv): the weights must be a "
          "4-D constant (2-D convolution)", name);
    if (b && (b->data == NULL || b->n_dims != 1
            || b->dims[0] != w->dims[transpose ? 1 : 0]))
      return cbi_onnx_fail (error, "node %s (%s): the bias must be a "
          "constant of %" G_GINT64_FORMAT " values", name, op,
          w->dims[transpose ? 1 : 0]);
    if (!cbi_onnx_conv_attrs (n, w, &conv, error))
      return FALSE;
    if (transpose && !cbi_onnx_transpose_attrs (n, &conv, error))
      return FALSE;
  }

  for (i = 1; i < n_inputs; i++) {
    const CbiTensorInfo *t = inputs[i] >= 0 ?
        cbi_graph_tensor (im->graph, inputs[i]) : NULL;
    gboolean constant = t && t->data;
    if (((type == CBI_OP_GEMM || type == CBI_OP_PRELU) && !constant)
        || (type == CBI_OP_MATMUL && t == NULL))
      return cbi_onnx_fail (error, "node %s (%s): input %u must be a "
          "float32 constant", name, op, i);
  }

  if (!cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &output, error))
    return FALSE;
  index = cbi_graph_add_node (im->graph, type, name, n_inputs, inputs, output,
      type == CBI_OP_CONV || type == CBI_OP_CONV_TRANSPOSE
      || type == CBI_OP_MAX_POOL || type == CBI_OP_AVERAGE_POOL
      || type == CBI_OP_PAD ? &conv : NULL);
  node = cbi_graph_node (im->graph, index);
  node->alpha = alpha;
  node->beta = beta;
  node->mode = mode;
  if (type == CBI_OP_CONCAT) {
    node->axis = (gint) alpha;
    node->alpha = 0.0f;
  }
  if (!cbi_onnx_layout_op (im, n, node, error))
    return FALSE;
  /* a strided ConvTranspose runs faster as a convolution */
  if (type == CBI_OP_CONV_TRANSPOSE)
    cbi_graph_lower_conv_transpose (im->graph, index);
  return TRUE;
}

/* Node indices of @g in an order where every input is produced before it
 * is read (Kahn's algorithm, stable for sorted files). */
static guint *
cbi_onnx_sort (CbiImporter * im, const Onnx__GraphProto * g, GError ** error)
{
  GHashTable *producer = g_hash_table_new (g_str_hash, g_str_equal);
  guint *order = g_new (guint, g->n_node + 1), *waiting;
  gboolean *done = g_new0 (gboolean, g->n_node);
  gsize i, j, emitted = 0;
  gboolean progress = TRUE;

  waiting = g_new0 (guint, g->n_node);
  for (i = 0; i < g->n_node; i++)
    for (j = 0; j < g->node[i]->n_output; j++)
      if (g->node[i]->output[j] && *g->node[i]->output[j])
        g_hash_table_insert (producer, g->node[i]->output[j],
            GUINT_TO_POINTER (i + 1));

  /* every input is known somewhere: a node, an initializer or the input */
  for (i = 0; i < g->n_node && order; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (j = 0; j < n->n_input; j++) {
      const gchar *in = n->input[j];
      if (in == NULL || *in == '\0' || cbi_onnx_lookup (im, in) >= 0
          || g_hash_table_contains (im->ints, in))
        continue;
      if (!g_hash_table_contains (producer, in)) {
        cbi_onnx_fail (error, "node %s reads '%s', which is no initializer, "
            "input or node output (a missing initializer?)",
            cbi_onnx_name (n->name), in);
        g_clear_pointer (&order, g_free);
        break;
      }
      waiting[i]++;
    }
  }

  while (order && emitted < g->n_node && progress) {
    progress = FALSE;
    for (i = 0; i < g->n_node; i++) {
      const Onnx__NodeProto *n = g->node[i];
      guint ready = 0;
      if (done[i])
        continue;
      for (j = 0; j < n->n_input; j++) {
        guint p = GPOINTER_TO_UINT (g_hash_table_lookup (producer,
                n->input[j] ? n->input[j] : ""));
        if (p && cbi_onnx_lookup (im, n->input[j]) < 0
            && !g_hash_table_contains (im->ints, n->input[j]) && done[p - 1])
          ready++;
      }
      if (ready == waiting[i]) {
        done[i] = TRUE;
        order[emitted++] = i;
        progress = TRUE;
      }
    }
  }
  if (order && emitted < g->n_node) {
    i = 0;
    while (done[i])
      i++;
    cbi_onnx_fail (error, "the graph has a cycle through node %s",
        cbi_onnx_name (g->node[i]->name));
    g_clear_pointer (&order, g_free);
  }
  g_hash_table_unref (producer);
  g_free (done);
  g_free (waiting);
  return order;
}

static gboolean
cbi_onnx_add_input (CbiImporter * im, const Onnx__GraphProto * g,
    GError ** error)
{
  const Onnx__ValueInfoProto *input = NULL;
  const Onnx__TypeProto__Tensor *tt;
  gint64 dims[CBI_MAX_DIMS];
  gsize i, n_data = 0, rank;

  for (i = 0; i < g->n_input; i++) {
    if (cbi_onnx_lookup (im, g->input[i]->name ? g->input[i]->name : "") >= 0)
      continue;                 /* an initializer listed as input */
    input = g->input[i];
    n_data++;
  }
  if (n_data != 1)
    return cbi_onnx_fail (error, "the model has %" G_GSIZE_FORMAT " inputs "
        "besides its initializers; the engine takes one image", n_data);

  tt = input->type && input->type->value_case ==
      ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? input->type->tensor_type : NULL;
  if (tt == NULL || tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
      || tt->shape == NULL || tt->shape->n_dim < 1
      || tt->shape->n_dim > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "input %s must be a float32 tensor of 1 to "
        "%d dimensions (N, C, H, W for images)", cbi_onnx_name (input->name),
        CBI_MAX_DIMS);
  rank = tt->shape->n_dim;
  for (i = 0; i < rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    gboolean fixed = d->value_case ==
        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
        && d->dim_value > 0;
    /* the batch dimension is always N, whatever the file says */
    dims[i] = fixed && i > 0 ? d->dim_value : -1;
    if (fixed && d->dim_value > G_MAXINT)
      return cbi_onnx_fail (error, "input %s: dimension %" G_GSIZE_FORMAT
          " is too large", input->name, i);
  }
  if (rank == 4 && dims[1] < 1)
    return cbi_onnx_fail (error, "input %s: the channel count must be "
        "fixed", cbi_onnx_name (input->name));
  return cbi_onnx_add (im, input->name, rank, dims, NULL, &im->graph->input,
      error);
}

static gboolean
cbi_onnx_check_model (const Onnx__ModelProto * m, gint64 * opset_out,
    GError ** error)
{
  gint64 opset = -1;
  gsize i;

  if (m->graph == NULL)
    return cbi_onnx_fail (error, "the file has no graph");
  if (!m->has_ir_version || m->ir_version < CBI_ONNX_MIN_IR)
    return cbi_onnx_fail (error, "IR version %" G_GINT64_FORMAT " is not "
        "supported (%d or later)", m->has_ir_version ? m->ir_version : 0,
        CBI_ONNX_MIN_IR);
  for (i = 0; i < m->n_opset_import; i++) {
    const gchar *d = m->opset_import[i]->domain;
    if (d == NULL || *d == '\0' || strcmp (d, "ai.onnx") == 0)
      opset = m->opset_import[i]->version;
  }
  if (opset < CBI_ONNX_MIN_OPSET || opset > CBI_ONNX_MAX_OPSET)
    return cbi_onnx_fail (error, "opset %" G_GINT64_FORMAT " is not "
        "supported (%d to %d)", opset, CBI_ONNX_MIN_OPSET, CBI_ONNX_MAX_OPSET);
  if (m->graph->n_output < 1 || m->graph->n_output > CBI_MAX_OUTPUTS)
    return cbi_onnx_fail (error, "the graph has %" G_GSIZE_FORMAT " outputs;"
        " 1 to %d are supported", m->graph->n_output, CBI_MAX_OUTPUTS);
  *opset_out = opset;
  return TRUE;
}

CbiGraph *
cbi_onnx_load_from_data (const guint8 * data, gsize size,
    const gchar * base_dir, GError ** error)
{
  CbiImporter im = { NULL, NULL, NULL, base_dir, NULL, 0 };
  Onnx__ModelProto *m;
  const Onnx__GraphProto *g;
  guint *order = NULL;
  gboolean ok;
  gsize i;

  m = onnx__model_proto__unpack (NULL, size, data);
  if (m == NULL) {
    cbi_onnx_fail (error, "not an ONNX model: the bytes do not parse as a "
        "ModelProto");
    return NULL;
  }
  im.graph = cbi_graph_new ();
  im.names = g_hash_table_new (g_str_hash, g_str_equal);
  im.ints = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      (GDestroyNotify) g_array_unref);

  ok = cbi_onnx_check_model (m, &im.opset, error);
  g = im.onnx = m->graph;
  for (i = 0; ok && i < g->n_initializer; i++)
    ok = cbi_onnx_add_constant (&im, g->initializer[i]->name,
        g->initializer[i], error);
  ok = ok && cbi_onnx_add_input (&im, g, error)
      && (order = cbi_onnx_sort (&im, g, error)) != NULL;
  for (i = 0; ok && i < g->n_node; i++)
    ok = cbi_onnx_add_node (&im, g->node[order[i]], error);
  for (i = 0; ok && i < g->n_output; i++) {
    const gchar *out = g->output[i]->name ? g->output[i]->name : "";
    gint t = cbi_onnx_lookup (&im, out);
    if (t < 0 || t == im.graph->input
        || cbi_graph_tensor (im.graph, t)->data != NULL)
      ok = cbi_onnx_fail (error, "output '%s' is not computed by any node",
          out);
    im.graph->outputs[im.graph->n_outputs++] = t;
  }
  if (ok)
    cbi_graph_sink_eltwise (im.graph);

  g_free (order);
  g_hash_table_unref (im.names);
  g_hash_table_unref (im.ints);
  onnx__model_proto__free_unpacked (m, NULL);
  if (!ok)
    g_clear_pointer (&im.graph, cbi_graph_free);
  return im.graph;
}

CbiGraph *
cbi_onnx_load (const gchar * path, GError ** error)
{
  GError *read_error = NULL;
  gchar *contents = NULL, *dir;
  gsize size = 0;
  CbiGraph *graph;

  if (!g_file_get_contents (path, &contents, &size, &read_error)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "cannot read model: %s",
        read_error->message);
    g_clear_error (&read_error);
    return NULL;
  }
  dir = g_path_get_dirname (path);
  graph = cbi_onnx_load_from_data ((const guint8 *) contents, size, dir, error);
  g_free (dir);
  g_free (contents);
  return graph;
}
