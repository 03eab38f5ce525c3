/* libFuzzer target for the ONNX importer: any bytes must give a graph or
 * an error, never a crash, a hang or a leak.
 *
 *   bash scripts/fuzz.sh [SECONDS]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "onnx/cbionnx.h"
#include "graph/cbishapes.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  CbiGraph *graph;

  /* no folder: external data is refused, the fuzzer reads no files */
  graph = cbi_onnx_load_from_data (data, size, NULL, &error);
  if (graph) {
    /* plan-time shape computation reads the file's nodes too: specialise
     * for a small input (1 for the batch, 8 for any other free size) */
    const CbiTensorInfo *in = cbi_graph_tensor (graph, graph->input);
    CbiShape *shapes = g_new0 (CbiShape, graph->tensors->len), input;
    CbiGraph *planned;
    gint d;

    input.n_dims = in->n_dims;
    for (d = 0; d < in->n_dims; d++)
      input.dims[d] = d == 0 || in->dims[d] > 64 ? 1 :
          in->dims[d] > 0 ? in->dims[d] : 8;
    planned = cbi_graph_specialise (graph, &input, shapes, &error);
    g_clear_pointer (&planned, cbi_graph_free);
    g_clear_error (&error);
    g_free (shapes);
    cbi_graph_free (graph);
  }
  g_clear_error (&error);
  return 0;
}
