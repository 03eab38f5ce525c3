/* cudabatchinfer: model graph, what its files share and the engine does
 * not see
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * graph.c holds the graph, its tensors and nodes and the op table;
 * shapes.c what each node makes of its inputs' shapes and the geometry
 * backends read from it; resolve.c reads shape values at plan time,
 * infers the shapes of a whole graph and makes its specialised copy;
 * subpixel.c, fuse.c, gelu.c and concat.c rewrite a graph once it is
 * read.
 */
#pragma once

#include "graph/cbiops.h"
#include "graph/cbishapes.h"
#include "cbitypes.h"

G_BEGIN_DECLS

/* The GArray clear function of CbiGraph.nodes: frees the node's name. */
void cbi_node_clear (gpointer p);

/* Sets a CBI_ERROR_SHAPE error prefixed with node @n and its op;
 * returns FALSE, for a caller to return. */
gboolean cbi_shape_fail (GError ** error, const CbiNode * n,
    const gchar * format, ...) G_GNUC_PRINTF (3, 4);
/* Sets @s to @n_dims dimensions copied from @dims. */
void cbi_shape_set (CbiShape * s, gint n_dims, const gint64 * dims);
/* Whether @b broadcasts to @a as ONNX's unidirectional broadcasting does. */
gboolean cbi_shape_broadcasts_to (const CbiShape * b, const CbiShape * a);

/* @axis, negative from the end, as an index below @rank; -1 outside. */
gint cbi_axis (gint axis, gint rank);
/* Infers the shape of node @n's output into @shapes from its inputs'. */
gboolean cbi_infer_node (const CbiGraph * graph, const CbiNode * n,
    CbiShape * shapes, GError ** error);

/* LSTM, GRU and RNN (recurrent.c). */
gboolean cbi_infer_recurrent (const CbiNode * n, CbiShape * shapes,
    GError ** error);

G_END_DECLS
