/* cudabatchinfer: ONNX model import, what its files share
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cbionnx.c reads the file (model checks, tensors, external data, the
 * input, the order of the nodes) and drives the import; cbionnx-nodes.c
 * translates each node into the engine's graph. Everything they read is
 * untrusted: every count, size and name is checked before use.
 */
#pragma once

#include "cbionnx.h"
#include "onnx.pb-c.h"

G_BEGIN_DECLS

/* float32 tensors up to 2 GiB, the protobuf limit of a model file */
#define CBI_ONNX_MAX_ELEMENTS (G_GINT64_CONSTANT (1) << 29)

/* int64 constants are only ever attributes in disguise (Pad's pads,
 * Reshape's shape): a few values, kept out of the graph */
#define CBI_ONNX_MAX_INTS 64

typedef struct
{
  CbiGraph *graph;
  GHashTable *names;            /* tensor name -> index + 1 */
  GHashTable *ints;             /* int64 constant name -> GArray of gint64 */
  const gchar *base_dir;
  const Onnx__GraphProto *onnx;
  gint64 opset;
} CbiImporter;

/* *INDENT-OFF* */
/* Sets @error (CBI_ERROR_MODEL) to the printf-formatted message; returns
 * FALSE. The attribute lets -Wformat check every caller. */
gboolean cbi_onnx_fail (GError ** error, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);
/* *INDENT-ON* */

/* @name, or "(unnamed)" for a NULL or empty one: for messages. */
const gchar *cbi_onnx_name (const gchar * name);
/* The graph index of tensor @name, or -1. */
gint cbi_onnx_lookup (CbiImporter * im, const gchar * name);
/* Adds tensor @name to the graph, taking @data (transfer full, freed on
 * failure); fails when the name is empty or taken. */
gboolean cbi_onnx_add (CbiImporter * im, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data, gint * index, GError ** error);
/* The element count of @dims into @count; fails on a negative dimension
 * or more than CBI_ONNX_MAX_ELEMENTS. */
gboolean cbi_onnx_count (const gchar * name, const gint64 * dims,
    gsize n_dims, gint64 * count, GError ** error);
/* Keeps tensor @t (an initializer or a Constant's value) as constant
 * @name: float32 in the graph, int64 in the importer. */
gboolean cbi_onnx_add_constant (CbiImporter * im, const gchar * name,
    const Onnx__TensorProto * t, GError ** error);

/* Attribute @name of @n (owned by @n), or NULL. */
const Onnx__AttributeProto *cbi_onnx_attr (const Onnx__NodeProto * n,
    const gchar * name);
gint64 cbi_onnx_int (const Onnx__NodeProto * n, const gchar * name,
    gint64 def);
gfloat cbi_onnx_float (const Onnx__NodeProto * n, const gchar * name,
    gfloat def);
/* Returns: (transfer full): the string attribute @attr, or a copy of
 * @def. */
gchar *cbi_onnx_string (const Onnx__NodeProto * n, const gchar * attr,
    const gchar * def);

/* Translates node @n into the graph (cbionnx-nodes.c), or fails naming
 * the node and what it does not support. */
gboolean cbi_onnx_add_node (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);

G_END_DECLS
