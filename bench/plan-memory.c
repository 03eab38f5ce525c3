/* plan-memory: the bytes the CUDA backend reserves for activations,
 * computed on any machine from the engine's memory plan.
 *
 *   plan-memory [--batch 4] [--size 64] [model.onnx ...]
 *
 * For each model (none: the default model) at a batch of --batch and, where
 * the model leaves them open, frames of --size x --size: the activations'
 * float32 bytes as the CUDA backend took them before the shared memory
 * plan (a block for each: the input and every node's output but those of
 * activations fused into a convolution, a binary op or a GEMM), and as it
 * places them now (cbi_mem_plan_place_dense (), what the backend calls).
 * Prints one line per model:
 *   model=style.onnx input=4x3x64x64 tensors=41 before=... after=... ratio=...
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "onnx/cbionnx.h"
#include "cbidefaultmodel.h"
#include "graph/cbiops.h"
#include "graph/cbishapes.h"
#include "cbimemplan.h"

#include <stdlib.h>

/* The activation bytes of a block per activation, with the fusions the
 * CUDA backend made before InstanceNormalization took its Relu. */
static guint64
bytes_without_reuse (const CbiGraph * g, const CbiShape * shapes)
{
  guint64 bytes = cbi_shape_count (&shapes[g->input]) * sizeof (gfloat);
  guint i;

  for (i = 0; i < g->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (g, i);
    const CbiNode *next = cbi_graph_next_activation (g, i);
    if (next && cbi_op_info (n->op)->fuse == CBI_OP_FUSE_ANY) {
      n = next;
      i++;
    }
    bytes += cbi_shape_count (&shapes[n->output]) * sizeof (gfloat);
  }
  return bytes;
}

static gboolean
report (const gchar * name, CbiGraph * g, gint64 batch, gint64 size)
{
  const CbiTensorInfo *in = cbi_graph_tensor (g, g->input);
  CbiShape input, *shapes = g_new0 (CbiShape, g->tensors->len);
  gpointer *tensors = g_new0 (gpointer, g->tensors->len);
  CbiPool *pool = cbi_pool_new (cbi_host_allocator (), 0);
  GError *error = NULL;
  guint64 before, placed, requested;
  CbiMemPlan *mp = NULL;
  gchar *shape;
  gint d;

  input.n_dims = in->n_dims;
  for (d = 0; d < in->n_dims; d++)
    input.dims[d] = d == 0 ? batch : in->dims[d] > 0 ? in->dims[d] : size;
  if (cbi_graph_infer_shapes (g, &input, shapes, &error)) {
    mp = cbi_mem_plan_new (g, pool);
    cbi_mem_plan_place_dense (mp, shapes, tensors, &error);
  }
  shape = cbi_shape_to_string (&input);
  if (error) {
    g_print ("model=%s input=%s error=\"%s\"\n", name, shape, error->message);
  } else {
    before = bytes_without_reuse (g, shapes);
    cbi_mem_plan_activation_bytes (mp, &placed, &requested);
    g_print ("model=%s input=%s tensors=%u before=%" G_GUINT64_FORMAT
        " after=%" G_GUINT64_FORMAT " ratio=%.2f\n", name, shape,
        g->tensors->len, before, placed, (gdouble) before / placed);
  }
  g_free (shape);
  cbi_mem_plan_free (mp);
  cbi_pool_free (pool);
  g_free (tensors);
  g_free (shapes);
  cbi_graph_free (g);
  return error == NULL;
}

int
main (int argc, char **argv)
{
  gint64 batch = 4, size = 64;
  gboolean ok = TRUE, any = FALSE;
  gint i;

  for (i = 1; i < argc; i++) {
    if (g_str_equal (argv[i], "--batch") && i + 1 < argc) {
      batch = g_ascii_strtoll (argv[++i], NULL, 10);
    } else if (g_str_equal (argv[i], "--size") && i + 1 < argc) {
      size = g_ascii_strtoll (argv[++i], NULL, 10);
    } else {
      GError *error = NULL;
      CbiGraph *g = cbi_onnx_load (argv[i], &error);
      gchar *base = g_path_get_basename (argv[i]);
      any = TRUE;
      if (g == NULL)
        g_print ("model=%s error=\"%s\"\n", base, error->message);
      else
        ok &= report (base, g, batch, size);
      g_clear_error (&error);
      g_free (base);
    }
  }
  if (!any)
    ok = report ("default", cbi_default_model_new (), batch, size);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
