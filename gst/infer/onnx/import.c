/* cudabatchinfer: ONNX model import
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Everything here reads untrusted bytes: every count, size and name is
 * checked before use, and every failure says which tensor, node or field
 * it was about.
 */
#include "onnx/onnx-private.h"
#include "cbitypes.h"

#include <glib/gstdio.h>
#include <string.h>

#define CBI_ONNX_MIN_IR 3
#define CBI_ONNX_MIN_OPSET 7
#define CBI_ONNX_MAX_OPSET 23

/* The smallest fixed height or width read as an image's, not a channel
 * count's: a 4-D tensor of a few values per axis (an operator's test
 * case) stays channels first */
#define CBI_ONNX_MIN_IMAGE_SIDE 16

/* Whether a 4-D input of @dims is an image channels last (N, H, W, C), as
 * Keras and TensorFlow export them: its last dimension a fixed 1, 3 or
 * 4, its second and third an image's height and width (dynamic, or at
 * least CBI_ONNX_MIN_IMAGE_SIDE). */
static gboolean
cbi_onnx_is_channels_last (const gint64 * dims)
{
  gboolean last = dims[3] == 1 || dims[3] == 3 || dims[3] == 4;
  gboolean h = dims[1] < 1 || dims[1] >= CBI_ONNX_MIN_IMAGE_SIDE;
  gboolean w = dims[2] < 1 || dims[2] >= CBI_ONNX_MIN_IMAGE_SIDE;

  return last && h && w;
}

/* A channels-last input @name of @dims: the graph takes frames as every
 * image model does, N x C x H x W, and a Transpose gives the model its
 * N x H x W x C under @name. It costs no pass where the model transposes
 * back at once (cbi_graph_fuse_transposes() cancels the two), and on the
 * CPU none either way: packing writes the transposed layout itself. */
static gboolean
cbi_onnx_add_channels_last_input (CbiImporter * im, const gchar * name,
    const gint64 * dims, GError ** error)
{
  const gint64 nchw[4] = { -1, dims[3], dims[1], dims[2] };
  gchar *first;
  gint x, y, index;
  gboolean ok;
  CbiNode *n;

  /* the model's name first: it checks that there is one */
  if (!cbi_onnx_add (im, name, 4, dims, NULL, &y, error))
    return FALSE;
  first = g_strconcat (name, ".channels_first", NULL);
  ok = !cbi_onnx_defined (im, first)
      && cbi_onnx_add (im, first, 4, nchw, NULL, &x, error);
  if (ok) {
    im->graph->input = x;
    im->graph->input_channels_last = TRUE;
    index = cbi_graph_add_node (im->graph, CBI_OP_TRANSPOSE, first, 1, &x, y,
        NULL);
    n = cbi_graph_node (im->graph, index);
    n->n_ints = 4;
    n->ints[0] = 0;
    n->ints[1] = 2;
    n->ints[2] = 3;
    n->ints[3] = 1;
  } else if (error && *error == NULL) {
    cbi_onnx_fail (error, "input %s: the name %s is taken", name, first);
  }
  g_free (first);
  return ok;
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
      if (in == NULL || *in == '\0' || cbi_onnx_defined (im, in))
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
        if (p && !cbi_onnx_defined (im, n->input[j]) && done[p - 1])
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
    if (cbi_onnx_defined (im, g->input[i]->name ? g->input[i]->name : ""))
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
  if (rank == 4 && cbi_onnx_is_channels_last (dims))
    return cbi_onnx_add_channels_last_input (im, input->name, dims, error);
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
  CbiImporter im = { NULL, NULL, NULL, NULL, base_dir, NULL, 0, 0,
    CBI_ONNX_FOLD_BUDGET
  };
  Onnx__ModelProto *m;
  const Onnx__GraphProto *g;
  guint *order = NULL;
  gboolean ok, *folded = NULL;
  gsize i;

  m = onnx__model_proto__unpack (NULL, size, data);
  if (m == NULL) {
    /* protobuf cannot tell a file cut short from other bytes, and a copy
     * or download cut short is the likelier of the two */
    cbi_onnx_fail (error, "cannot parse the %" G_GSIZE_FORMAT " bytes as "
        "an ONNX model (the file may be truncated, or not an ONNX model)",
        size);
    return NULL;
  }
  im.graph = cbi_graph_new ();
  im.names = g_hash_table_new (g_str_hash, g_str_equal);
  im.aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      (GDestroyNotify) cbi_onnx_alias_free);
  im.consts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      (GDestroyNotify) cbi_onnx_const_free);

  ok = cbi_onnx_check_model (m, &im.opset, error);
  g = im.onnx = m->graph;
  for (i = 0; ok && i < g->n_initializer; i++)
    ok = cbi_onnx_add_constant (&im, g->initializer[i]->name,
        g->initializer[i], error);
  ok = ok && cbi_onnx_add_input (&im, g, error)
      && (order = cbi_onnx_sort (&im, g, error)) != NULL;
  /* constants first, so that translation sees only activations and
   * constants */
  if (ok)
    folded = g_new0 (gboolean, g->n_node);
  for (i = 0; ok && i < g->n_node; i++)
    ok = cbi_onnx_fold (&im, g->node[order[i]], &folded[i], error);
  /* a dynamic quantization's chain runs as float32 ops; the rest by the
   * op table */
  for (i = 0; ok && i < g->n_node; i++) {
    gboolean handled = folded[i];
    /* what reads constants found since (an activation's channels:
     * cbi_onnx_fold_channels ()) folds now */
    ok = handled || cbi_onnx_fold (&im, g->node[order[i]], &handled, error);
    ok = ok && (handled || cbi_onnx_add_dynamic_quant (&im,
            g->node[order[i]], &handled, error));
    ok = ok && (handled || cbi_onnx_add_node (&im, g->node[order[i]], error));
  }
  /* shape values that nothing reads now (a Shape whose channels folded),
   * the last first: a chain of them goes whole */
  for (i = ok ? im.graph->nodes->len : 0; i-- > 0;) {
    const CbiNode *node = cbi_graph_node (im.graph, i);
    if (node->op == CBI_OP_SHAPE_VALUE
        && cbi_graph_count_consumers (im.graph, node->output) == 0)
      g_array_remove_index (im.graph->nodes, i);
  }
  for (i = 0; ok && i < g->n_output; i++) {
    const gchar *out = g->output[i]->name ? g->output[i]->name : "";
    gint t = cbi_onnx_lookup (&im, out);
    if (t < 0 || t == im.graph->input
        || cbi_graph_tensor (im.graph, t)->data != NULL)
      ok = cbi_onnx_fail (error, "output '%s' is not computed by any node",
          out);
    else if (cbi_graph_tensor (im.graph, t)->dtype != CBI_DTYPE_FLOAT)
      ok = cbi_onnx_fail (error, "output '%s' is computed from shapes "
          "(int64); only float32 outputs are supported", out);
    im.graph->outputs[im.graph->n_outputs++] = t;
  }
  if (ok) {
    cbi_graph_fuse_transposes (im.graph);
    cbi_graph_drop_identities (im.graph);
    cbi_graph_fold_conv_bias (im.graph);
    cbi_graph_fuse_gelu (im.graph);
    cbi_graph_fuse_swish (im.graph);
    cbi_graph_sink_eltwise (im.graph);
    cbi_graph_fuse_layer_norm (im.graph);
    cbi_graph_fuse_hard_swish (im.graph);
    cbi_graph_fuse_residual_scale (im.graph);
    cbi_graph_fuse_affine (im.graph, NULL);
    cbi_graph_fuse_eltwise_runs (im.graph);
    cbi_graph_split_concats (im.graph);
  }

  g_free (order);
  g_free (folded);
  g_hash_table_unref (im.names);
  g_hash_table_unref (im.aliases);
  g_hash_table_unref (im.consts);
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
