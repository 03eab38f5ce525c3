/* libFuzzer target for the ONNX importer: any bytes must give a graph or
 * an error, never a crash, a hang or a leak.
 *
 *   bash scripts/fuzz.sh [SECONDS]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbionnx.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  CbiGraph *graph;

  /* no folder: external data is refused, the fuzzer reads no files */
  graph = cbi_onnx_load_from_data (data, size, NULL, &error);
  if (graph)
    cbi_graph_free (graph);
  g_clear_error (&error);
  return 0;
}
