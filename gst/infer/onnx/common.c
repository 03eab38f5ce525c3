/* cudabatchinfer: ONNX model import, what its files share: errors,
 * constants, tensors read from the file, attributes, node inputs
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The importer's leaf: it calls nothing else of the importer. Everything
 * here reads untrusted bytes: every count, size and name is checked
 * before use, and every failure says which tensor, node or field it was
 * about.
 */
#include "onnx/onnx-private.h"
#include "cbitypes.h"

#include <glib/gstdio.h>
#include <sys/stat.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

gboolean
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

const gchar *
cbi_onnx_name (const gchar * name)
{
  return name && *name ? name : "(unnamed)";
}

gsize
cbi_onnx_dtype_size (gint dtype)
{
  switch (dtype) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
      return 4;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
      return 8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
      return 1;
    default:
      return 0;
  }
}

const gchar *
cbi_onnx_dtype_name (gint dtype)
{
  const ProtobufCEnumValue *v =
      protobuf_c_enum_descriptor_get_value
      (&onnx__tensor_proto__data_type__descriptor, dtype);

  return v ? v->name : "unknown";
}

CbiOnnxConst *
cbi_onnx_const_new (gint dtype, gint n_dims, const gint64 * dims, gint64 count)
{
  CbiOnnxConst *c = g_new0 (CbiOnnxConst, 1);

  c->dtype = dtype;
  c->n_dims = n_dims;
  if (n_dims > 0)
    memcpy (c->dims, dims, n_dims * sizeof (gint64));
  c->count = count;
  c->index = -1;
  c->data = g_malloc0 (MAX (count, 1) * cbi_onnx_dtype_size (dtype));
  return c;
}

void
cbi_onnx_const_free (CbiOnnxConst * c)
{
  g_free (c->data);
  g_free (c);
}

CbiOnnxConst *
cbi_onnx_const (CbiImporter * im, const gchar * name)
{
  CbiOnnxConst *c = name ? g_hash_table_lookup (im->consts, name) : NULL;

  return c && c->data ? c : NULL;
}

gboolean
cbi_onnx_defined (CbiImporter * im, const gchar * name)
{
  return g_hash_table_contains (im->names, name)
      || g_hash_table_contains (im->consts, name);
}

gchar *
cbi_onnx_internal_name (CbiImporter * im, const Onnx__NodeProto * n,
    const gchar * what)
{
  /* after the node's first output, which a valid model names once: a
   * node's own name may be empty, or the same as another's */
  const gchar *base = n->n_output > 0 && n->output[0] && *n->output[0] ?
      n->output[0] : cbi_onnx_name (n->name);
  gchar *name = g_strdup_printf ("%s.%s", base, what);
  guint k;

  for (k = 2; cbi_onnx_defined (im, name); k++) {
    g_free (name);
    name = g_strdup_printf ("%s.%s.%u", base, what, k);
  }
  return name;
}

gboolean
cbi_onnx_keep_const (CbiImporter * im, const gchar * name, CbiOnnxConst * c,
    GError ** error)
{
  if (name == NULL || *name == '\0' || cbi_onnx_defined (im, name)) {
    cbi_onnx_const_free (c);
    return cbi_onnx_fail (error, "tensor name '%s' is empty or defined "
        "twice", cbi_onnx_name (name));
  }
  g_hash_table_insert (im->consts, g_strdup (name), c);
  return TRUE;
}

void
cbi_onnx_tensor_view (const CbiTensorInfo * info, gint t, gint n_dims,
    const gint64 * dims, CbiOnnxConst * view)
{
  gint d;

  memset (view, 0, sizeof (*view));
  view->dtype = info->ints ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64 :
      ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  view->n_dims = n_dims;
  memcpy (view->dims, dims, n_dims * sizeof (gint64));
  view->count = 1;
  for (d = 0; d < n_dims; d++)
    view->count *= dims[d];
  view->data = info->ints ? (gpointer) info->ints : info->data;
  view->index = t;
}

gint
cbi_onnx_lookup (CbiImporter * im, const gchar * name)
{
  CbiOnnxConst *c;
  gint index = GPOINTER_TO_INT (g_hash_table_lookup (im->names, name)) - 1;

  if (index >= 0 || (c = cbi_onnx_const (im, name)) == NULL
      || c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
    return index;
  /* a float32 constant enters the graph when a node reads it, so those
   * only folding read take no room there */
  index = cbi_graph_add_tensor (im->graph, name, c->n_dims, c->dims, c->data);
  c->data = NULL;
  c->index = index;
  g_hash_table_insert (im->names, cbi_graph_tensor (im->graph, index)->name,
      GINT_TO_POINTER (index + 1));
  return index;
}

gboolean
cbi_onnx_add (CbiImporter * im, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data, gint * index, GError ** error)
{
  if (name == NULL || *name == '\0' || cbi_onnx_defined (im, name)) {
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

gboolean
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
    const gchar * name, gsize bytes, gpointer data, GError ** error)
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
      || fread (data, 1, bytes, f) != bytes) {
    cbi_onnx_fail (error, "tensor %s: reading %" G_GSIZE_FORMAT " bytes "
        "of '%s' failed", name, bytes, path);
  } else {
    ok = TRUE;
  }
  if (f)
    fclose (f);
  g_free (path);
  return ok;
}

/* The typed data of @t into @c's block: ONNX keeps float32 in float_data,
 * int64 in int64_data, and the narrower integers and bools one per
 * int32_data value. */
static gboolean
cbi_onnx_typed_data (const Onnx__TensorProto * t, const gchar * name,
    CbiOnnxConst * c, GError ** error)
{
  gsize n, i;

  switch (c->dtype) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
      n = t->n_float_data;
      break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
      n = t->n_int64_data;
      break;
    default:
      n = t->n_int32_data;
      break;
  }
  if (n == 0 && c->count > 0)
    return cbi_onnx_fail (error, "tensor %s has no data", name);
  if (n != (gsize) c->count)
    return cbi_onnx_fail (error, "tensor %s holds %" G_GSIZE_FORMAT
        " values for %" G_GINT64_FORMAT " elements", name, n, c->count);
  for (i = 0; i < n; i++) {
    switch (c->dtype) {
      case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        ((gfloat *) c->data)[i] = t->float_data[i];
        break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        ((gint64 *) c->data)[i] = t->int64_data[i];
        break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
        ((gint32 *) c->data)[i] = t->int32_data[i];
        break;
      default:                 /* uint8, int8, bool: the low byte */
        ((guint8 *) c->data)[i] = (guint8) t->int32_data[i];
        break;
    }
  }
  return TRUE;
}

gboolean
cbi_onnx_read_tensor (CbiImporter * im, const Onnx__TensorProto * t,
    CbiOnnxConst ** out, GError ** error)
{
  const gchar *name = cbi_onnx_name (t->name);
  gsize size = cbi_onnx_dtype_size (t->data_type), bytes;
  CbiOnnxConst *c;
  gint64 count;
  gboolean ok;

  *out = NULL;
  if (size == 0)
    return cbi_onnx_fail (error, "tensor %s has data type %s; only float32 "
        "is supported (and int64, int32, int8, uint8, bool for constants "
        "that fold away at load)", name, cbi_onnx_dtype_name (t->data_type));
  if (t->n_dims > CBI_MAX_DIMS)
    return cbi_onnx_fail (error, "tensor %s has %" G_GSIZE_FORMAT
        " dimensions; at most %d are supported", name, t->n_dims, CBI_MAX_DIMS);
  if (!cbi_onnx_count (name, t->dims, t->n_dims, &count, error))
    return FALSE;
  bytes = (gsize) count *size;
  if (t->has_raw_data && t->raw_data.len != bytes)
    return cbi_onnx_fail (error, "tensor %s holds %" G_GSIZE_FORMAT
        " bytes of data for %" G_GINT64_FORMAT " values of %" G_GSIZE_FORMAT
        " bytes", name, t->raw_data.len, count, size);

  c = g_new0 (CbiOnnxConst, 1);
  c->dtype = t->data_type;
  c->n_dims = t->n_dims;
  /* protobuf-c leaves an empty repeated field's array NULL */
  if (t->n_dims > 0)
    memcpy (c->dims, t->dims, t->n_dims * sizeof (gint64));
  c->count = count;
  c->index = -1;
  /* the file's sizes are untrusted: a failed allocation is an error */
  c->data = g_try_malloc0 (MAX (bytes, 1));
  if (c->data == NULL) {
    g_free (c);
    return cbi_onnx_fail (error, "tensor %s: no memory for its %"
        G_GSIZE_FORMAT " bytes", name, bytes);
  }

  if (t->has_data_location
      && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    ok = cbi_onnx_external (im, t, name, bytes, c->data, error);
  } else if (t->has_raw_data) {
    /* ONNX raw data is little-endian, as are the hosts this builds for */
    if (bytes > 0)
      memcpy (c->data, t->raw_data.data, bytes);
    ok = TRUE;
  } else {
    ok = cbi_onnx_typed_data (t, name, c, error);
  }
  if (ok)
    *out = c;
  else
    cbi_onnx_const_free (c);
  return ok;
}

gboolean
cbi_onnx_add_constant (CbiImporter * im, const gchar * name,
    const Onnx__TensorProto * t, GError ** error)
{
  CbiOnnxConst *c;

  return cbi_onnx_read_tensor (im, t, &c, error)
      && cbi_onnx_keep_const (im, name, c, error);
}

const Onnx__AttributeProto *
cbi_onnx_attr (const Onnx__NodeProto * n, const gchar * name)
{
  gsize i;

  for (i = 0; i < n->n_attribute; i++)
    if (g_strcmp0 (n->attribute[i]->name, name) == 0)
      return n->attribute[i];
  return NULL;
}

gfloat
cbi_onnx_float (const Onnx__NodeProto * n, const gchar * name, gfloat def)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, name);

  return a && a->has_f ? a->f : def;
}

gchar *
cbi_onnx_string (const Onnx__NodeProto * n, const gchar * attr,
    const gchar * def)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, attr);

  if (a == NULL || !a->has_s)
    return g_strdup (def);
  return g_strndup ((const gchar *) a->s.data, a->s.len);
}

gint64
cbi_onnx_int (const Onnx__NodeProto * n, const gchar * name, gint64 def)
{
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, name);

  return a && a->has_i ? a->i : def;
}

/* Input @i of @n: its tensor index, -1 for an absent optional input. */
gint
cbi_onnx_node_input (CbiImporter * im, const Onnx__NodeProto * n, gsize i)
{
  if (i >= n->n_input || n->input[i] == NULL || *n->input[i] == '\0')
    return -1;
  return cbi_onnx_lookup (im, n->input[i]);
}

/* The int64 constant at input @i of @n (a folded one too), or NULL. */
const CbiOnnxConst *
cbi_onnx_int_input (CbiImporter * im, const Onnx__NodeProto * n, gsize i)
{
  const CbiOnnxConst *c = i < n->n_input ? cbi_onnx_const (im,
      n->input[i]) : NULL;

  return c && c->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? c : NULL;
}

/* The float32 constant at input @i of @n, for a value translation keeps
 * in the node (Clip's bounds, Resize's scales, what BatchNormalization
 * folds): its data (owned by the importer or the graph), @count and
 * @n_dims, or NULL. A constant still outside the graph stays there, so
 * the graph holds only what its nodes read. */
const gfloat *
cbi_onnx_floats_input (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    gint64 * count, gint * n_dims)
{
  const CbiOnnxConst *c;
  const CbiTensorInfo *info;
  gint t;

  *count = 0;
  *n_dims = -1;
  if (i >= n->n_input || n->input[i] == NULL || *n->input[i] == '\0')
    return NULL;
  c = cbi_onnx_const (im, n->input[i]);
  if (c) {
    if (c->dtype != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
      return NULL;
    *count = c->count;
    *n_dims = c->n_dims;
    return c->data;
  }
  t = cbi_onnx_lookup (im, n->input[i]);
  info = t >= 0 ? cbi_graph_tensor (im->graph, t) : NULL;
  if (info == NULL || info->data == NULL
      || !cbi_onnx_count (info->name, info->dims, info->n_dims, count, NULL))
    return NULL;
  *n_dims = info->n_dims;
  return info->data;
}

/* Clip's bound from input @i (opset 11 on) or attribute @attr (before),
 * @def when absent. */
gboolean
cbi_onnx_clip_bound (CbiImporter * im, const Onnx__NodeProto * n, gsize i,
    const gchar * attr, gfloat def, gfloat * bound, GError ** error)
{
  const gfloat *data;
  gint64 count;
  gint n_dims;

  *bound = cbi_onnx_float (n, attr, def);
  if (i >= n->n_input || n->input[i] == NULL || *n->input[i] == '\0')
    return TRUE;
  data = cbi_onnx_floats_input (im, n, i, &count, &n_dims);
  if (data == NULL || count != 1)
    return cbi_onnx_fail (error, "node %s (Clip): its bounds must be scalar "
        "constants", cbi_onnx_name (n->name));
  *bound = data[0];
  return TRUE;
}
