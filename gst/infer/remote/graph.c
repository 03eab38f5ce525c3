/* cudabatchinfer: a server's model as the engine sees it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The engine plans with a graph: its input's shape says what frames the
 * model takes, its outputs' shapes what comes back. Without a local copy
 * of the model, that graph is the server's metadata: one CBI_OP_REMOTE
 * node per output. With one, the local graph gives the shapes and the
 * metadata must agree with it.
 */
#include "cbiremote.h"

#include <string.h>

/* The image input of @model: one FP32 tensor of 4 dimensions, 3 channels
 * first or last. */
static const CbiRemoteTensor *
cbi_remote_image_input (const CbiRemoteModel * model, GError ** error)
{
  const CbiRemoteTensor *in = &model->inputs[0];

  if (model->n_inputs != 1) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
        "takes %u inputs; the element sends one, the frames", model->n_inputs);
    return NULL;
  }
  if (strcmp (in->datatype, "FP32") != 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
        "takes input %s as %s; the element sends FP32", in->name, in->datatype);
    return NULL;
  }
  if (in->n_dims != 4 || (in->dims[1] != 3 && in->dims[3] != 3)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
        "takes input %s of %d dimensions (%" G_GINT64_FORMAT " at 1, %"
        G_GINT64_FORMAT " at 3); video frames need N x 3 x H x W or N x H "
        "x W x 3", in->name, in->n_dims, in->n_dims > 1 ? in->dims[1] : 0,
        in->n_dims > 3 ? in->dims[3] : 0);
    return NULL;
  }
  return in;
}

gboolean
cbi_remote_channels_last (const CbiRemoteModel * model)
{
  const CbiRemoteTensor *in = &model->inputs[0];

  return in->n_dims == 4 && in->dims[1] != 3 && in->dims[3] == 3;
}

/* An FP32 output, or @error. */
static gboolean
cbi_remote_check_output (const CbiRemoteTensor * out, GError ** error)
{
  if (strcmp (out->datatype, "FP32") == 0)
    return TRUE;
  g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model gives "
      "output %s as %s; the element reads FP32", out->name, out->datatype);
  return FALSE;
}

CbiGraph *
cbi_remote_graph_new (const CbiRemoteModel * model, GError ** error)
{
  const CbiRemoteTensor *in = cbi_remote_image_input (model, error);
  const gboolean last = cbi_remote_channels_last (model);
  gint64 dims[4];
  CbiGraph *g;
  guint i;
  gint x;

  if (in == NULL)
    return NULL;
  for (i = 0; i < model->n_outputs; i++)
    if (!cbi_remote_check_output (&model->outputs[i], error))
      return NULL;
  g = cbi_graph_new ();
  /* the engine's input is channels first; the wire's as the server has it */
  dims[0] = -1;
  dims[1] = 3;
  dims[2] = last ? in->dims[1] : in->dims[2];
  dims[3] = last ? in->dims[2] : in->dims[3];
  x = cbi_graph_add_tensor (g, in->name, 4, dims, NULL);
  g->input = x;
  g->input_channels_last = last;
  for (i = 0; i < model->n_outputs; i++) {
    const CbiRemoteTensor *out = &model->outputs[i];
    gint y = cbi_graph_add_tensor (g, out->name, out->n_dims, out->dims, NULL);
    CbiNode *n = cbi_graph_node (g, cbi_graph_add_node (g, CBI_OP_REMOTE,
            out->name, 1, &x, y, NULL));

    n->mode = last ? 1 : 0;
    n->n_ints = out->n_dims;
    memcpy (n->ints, out->dims, sizeof (gint64) * out->n_dims);
    g->outputs[i] = y;
  }
  g->n_outputs = model->n_outputs;
  return g;
}

/* Whether dimension @theirs of the server's agrees with @ours of the
 * model file: equal, or either open (the batch: the server's must be). */
static gboolean
cbi_remote_dim_agrees (gint64 theirs, gint64 ours)
{
  return theirs < 0 || ours <= 0 || theirs == ours;
}

gboolean
cbi_remote_graph_check (const CbiGraph * graph, const CbiRemoteModel * model,
    GError ** error)
{
  const CbiRemoteTensor *in = cbi_remote_image_input (model, error);
  const CbiTensorInfo *ours;
  gint64 wire[4];
  guint i, k;
  gint d;

  if (in == NULL)
    return FALSE;
  ours = cbi_graph_tensor (graph, graph->input);
  if (ours->n_dims != 4 || graph->input_channels_last
      != cbi_remote_channels_last (model)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
        "takes its frames channels %s, the model file's channels %s",
        cbi_remote_channels_last (model) ? "last" : "first",
        graph->input_channels_last ? "last" : "first");
    return FALSE;
  }
  memcpy (wire, ours->dims, sizeof (wire));
  if (graph->input_channels_last) {
    wire[1] = ours->dims[2];
    wire[2] = ours->dims[3];
    wire[3] = ours->dims[1];
  } else if (strcmp (ours->name, in->name) != 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
        "takes input %s, the model file's is %s", in->name, ours->name);
    return FALSE;
  }
  for (d = 0; d < 4; d++) {
    if (!cbi_remote_dim_agrees (in->dims[d], wire[d])) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
          "takes input %s with %" G_GINT64_FORMAT " at dimension %d, the "
          "model file's %" G_GINT64_FORMAT, in->name, in->dims[d], d, wire[d]);
      return FALSE;
    }
  }
  for (i = 0; i < graph->n_outputs; i++) {
    const CbiTensorInfo *y = cbi_graph_tensor (graph, graph->outputs[i]);
    const CbiRemoteTensor *out = NULL;

    for (k = 0; k < model->n_outputs && out == NULL; k++)
      if (strcmp (model->outputs[k].name, y->name) == 0)
        out = &model->outputs[k];
    if (out == NULL) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the model file has "
          "output %s, which the server's model has not", y->name);
      return FALSE;
    }
    if (!cbi_remote_check_output (out, error))
      return FALSE;
    /* a file need not give its outputs' shapes: then the engine infers
     * them, and the reply is checked against those */
    if (y->n_dims == 0)
      continue;
    if (out->n_dims != y->n_dims) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
          "gives output %s of %d dimensions, the model file's %d",
          out->name, out->n_dims, y->n_dims);
      return FALSE;
    }
    for (d = 1; d < out->n_dims; d++) {
      if (!cbi_remote_dim_agrees (out->dims[d], y->dims[d])) {
        g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model "
            "gives output %s with %" G_GINT64_FORMAT " at dimension %d, the "
            "model file's %" G_GINT64_FORMAT, out->name, out->dims[d], d,
            y->dims[d]);
        return FALSE;
      }
    }
  }
  return TRUE;
}
