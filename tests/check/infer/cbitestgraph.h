/* GStreamer cudabatchinfer: small graphs for the engine tests
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"

/* x [N, 3, H, W] -> Relu "relu" -> a -> @op "probabilities" -> y: frames
 * in, frames out where @op keeps the shape (Sigmoid); any op of one input
 * for a backend to run or refuse (Softmax). */
static inline CbiGraph *
cbi_test_graph_ending_in (CbiOpType op)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 dims[4] = { -1, 3, -1, -1 };
  gint x = cbi_graph_add_tensor (g, "x", 4, dims, NULL);
  gint a = cbi_graph_add_tensor (g, "a", 4, dims, NULL);
  gint y = cbi_graph_add_tensor (g, "y", 4, dims, NULL);

  g->input = x;
  g->outputs[g->n_outputs++] = y;
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &x, a, NULL);
  cbi_graph_add_node (g, op, "probabilities", 1, &a, y, NULL);
  return g;
}
