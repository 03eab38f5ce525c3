/* cudabatchinfer: ONNX model import
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"

G_BEGIN_DECLS

/**
 * cbi_onnx_load:
 * @path: (type filename): an ONNX model file
 * @error: (nullable): where a reason goes, in the CBI_ERROR domain
 *   (CBI_ERROR_MODEL), naming the node, tensor or field at fault
 *
 * Parses @path (protobuf, through the parser protobuf-c generates from
 * the ONNX schema) into the engine's graph: initializers (raw or typed
 * data, or external data in the model's folder), the one image input with
 * its symbolic dimensions as -1, and the nodes in topological order. Nodes
 * whose inputs are all constants (Constant, and the shape, arithmetic and
 * (de)quantization ops exporters write on weights) are computed once here
 * and become constants; only the float32 constants the remaining nodes
 * read enter the graph. Refuses, with a message, what the engine cannot
 * run: an op outside the supported list, a data type other than float32
 * outside folded constants, a missing input, a cycle, dimensions that
 * overflow, data that does not match its tensor's size, a constant
 * subgraph that cannot be computed (mismatched shapes, overflow).
 *
 * Returns: (transfer full) (nullable): the graph, or %NULL with @error set
 */
CbiGraph *cbi_onnx_load (const gchar * path, GError ** error);

/**
 * cbi_onnx_load_from_data:
 * @data: (array length=size): the bytes of an ONNX model
 * @size: their count
 * @base_dir: (type filename) (nullable): folder external data is relative
 *   to; %NULL refuses external data
 * @error: (nullable): as for cbi_onnx_load()
 *
 * Returns: (transfer full) (nullable): as for cbi_onnx_load()
 */
CbiGraph *cbi_onnx_load_from_data (const guint8 * data, gsize size,
    const gchar * base_dir, GError ** error);

G_END_DECLS
