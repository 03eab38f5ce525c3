/* cudabatchinfer: ONNX model import, the recurrent layers (LSTM, GRU, RNN)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What text recognisers (CRNN) put over a feature map's width, as
 * PyTorch, Keras and Paddle export them: ONNX's default activations,
 * every sequence of the batch the whole length, the output of every step
 * (Y). What else the ops allow is refused by name: the last step's
 * states (Y_h, Y_c) read by another node, sequence_lens, peepholes,
 * clipping, other activations, batch-first layout.
 */
#include "onnx/onnx-private.h"

#include <string.h>

/* Whether a node or the graph's outputs read tensor @name. */
static gboolean
cbi_onnx_is_read (CbiImporter * im, const gchar * name)
{
  const Onnx__GraphProto *g = im->onnx;
  gsize i, j;

  if (name == NULL || *name == '\0')
    return FALSE;
  for (i = 0; i < g->n_output; i++)
    if (g_strcmp0 (g->output[i]->name, name) == 0)
      return TRUE;
  for (i = 0; i < g->n_node; i++)
    for (j = 0; j < g->node[i]->n_input; j++)
      if (g_strcmp0 (g->node[i]->input[j], name) == 0)
        return TRUE;
  return FALSE;
}

/* Whether attribute "activations" of @n, when given, is ONNX's default
 * for @op on every direction. */
static gboolean
cbi_onnx_default_activations (const Onnx__NodeProto * n, CbiOpType op,
    gint dirs)
{
  static const gchar *const lstm[] = { "Sigmoid", "Tanh", "Tanh" };
  static const gchar *const gru[] = { "Sigmoid", "Tanh" };
  static const gchar *const rnn[] = { "Tanh" };
  const Onnx__AttributeProto *a = cbi_onnx_attr (n, "activations");
  const gchar *const *want = op == CBI_OP_LSTM ? lstm : op == CBI_OP_GRU ?
      gru : rnn;
  const gsize per_dir = op == CBI_OP_LSTM ? 3 : op == CBI_OP_GRU ? 2 : 1;
  gsize i;

  if (a == NULL)
    return TRUE;
  if (a->n_strings != per_dir * dirs)
    return FALSE;
  for (i = 0; i < a->n_strings; i++) {
    const gchar *w = want[i % per_dir];
    if (a->strings[i].len != strlen (w)
        || g_ascii_strncasecmp ((const gchar *) a->strings[i].data, w,
            a->strings[i].len) != 0)
      return FALSE;
  }
  return TRUE;
}

/* Reads direction and the attributes that must keep their defaults. */
static gboolean
cbi_onnx_recurrent_attrs (const Onnx__NodeProto * n, CbiOpType op,
    CbiDirection * dir, GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  gchar *d = cbi_onnx_string (n, "direction", "forward");
  gboolean ok = TRUE;

  if (g_strcmp0 (d, "forward") == 0)
    *dir = CBI_DIRECTION_FORWARD;
  else if (g_strcmp0 (d, "reverse") == 0)
    *dir = CBI_DIRECTION_REVERSE;
  else if (g_strcmp0 (d, "bidirectional") == 0)
    *dir = CBI_DIRECTION_BIDIRECTIONAL;
  else
    ok = cbi_onnx_fail (error, "node %s (%s): direction '%s' is not one of "
        "forward, reverse, bidirectional", name, n->op_type, d);
  g_free (d);
  if (!ok)
    return FALSE;
  if (cbi_onnx_attr (n, "clip"))
    return cbi_onnx_fail (error, "node %s (%s): clip is not supported",
        name, n->op_type);
  if (cbi_onnx_int (n, "layout", 0) != 0)
    return cbi_onnx_fail (error, "node %s (%s): layout 1 (batch first) is "
        "not supported; the sequence must be the first axis", name, n->op_type);
  if (cbi_onnx_int (n, "input_forget", 0) != 0)
    return cbi_onnx_fail (error, "node %s (%s): input_forget is not "
        "supported", name, n->op_type);
  if (!cbi_onnx_default_activations (n, op,
          *dir == CBI_DIRECTION_BIDIRECTIONAL ? 2 : 1))
    return cbi_onnx_fail (error, "node %s (%s): only the default "
        "activations are supported", name, n->op_type);
  return TRUE;
}

gboolean
cbi_onnx_add_recurrent (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error)
{
  const gchar *name = cbi_onnx_name (n->name);
  const CbiOpType op = g_strcmp0 (n->op_type, "LSTM") == 0 ? CBI_OP_LSTM :
      g_strcmp0 (n->op_type, "GRU") == 0 ? CBI_OP_GRU : CBI_OP_RNN;
  const gint64 hidden = cbi_onnx_int (n, "hidden_size", 0);
  /* ONNX's inputs X, W, R, B, (sequence_lens), initial_h, initial_c, as
   * the graph node reads them */
  static const gsize onnx_input[6] = { 0, 1, 2, 3, 5, 6 };
  gint in[6], out, index, i;
  CbiDirection dir = CBI_DIRECTION_FORWARD;
  CbiNode *g;

  if (!cbi_onnx_recurrent_attrs (n, op, &dir, error))
    return FALSE;
  if (hidden < 1 || hidden > G_MAXINT32)
    return cbi_onnx_fail (error, "node %s (%s): hidden_size %" G_GINT64_FORMAT
        " is not a positive size", name, n->op_type, hidden);
  if (n->n_input < 3)
    return cbi_onnx_fail (error, "node %s (%s): X, W and R are needed", name,
        n->op_type);
  if (n->n_input > 4 && n->input[4] && *n->input[4])
    return cbi_onnx_fail (error, "node %s (%s): sequence_lens is not "
        "supported: every sequence of the batch runs the whole length",
        name, n->op_type);
  if (op == CBI_OP_LSTM && n->n_input > 7 && n->input[7] && *n->input[7])
    return cbi_onnx_fail (error, "node %s (%s): peepholes (input P) are not "
        "supported", name, n->op_type);
  for (i = 1; i < (gint) n->n_output; i++)
    if (cbi_onnx_is_read (im, n->output[i]))
      return cbi_onnx_fail (error, "node %s (%s): its output %s (the last "
          "step's %s) is read; only Y, every step's h, is supported", name,
          n->op_type, n->output[i], i == 1 ? "h" : "cell state");
  if (n->output[0] == NULL || *n->output[0] == '\0')
    return cbi_onnx_fail (error, "node %s (%s): it has no output Y", name,
        n->op_type);

  for (i = 0; i < 6; i++) {
    const CbiTensorInfo *info;
    in[i] = onnx_input[i] < n->n_input && (op == CBI_OP_LSTM || i < 5) ?
        cbi_onnx_node_input (im, n, onnx_input[i]) : -1;
    info = in[i] >= 0 ? cbi_graph_tensor (im->graph, in[i]) : NULL;
    if (i < 3 && info == NULL)
      return cbi_onnx_fail (error, "node %s (%s): input %d is absent", name,
          n->op_type, i);
    if (info == NULL)
      continue;
    if (i == 0 && (info->data || info->dtype != CBI_DTYPE_FLOAT))
      return cbi_onnx_fail (error, "node %s (%s): its input X must be an "
          "activation", name, n->op_type);
    /* the weights are read once, at plan time */
    if (i > 0 && i < 4 && (info->data == NULL
            || info->dtype != CBI_DTYPE_FLOAT))
      return cbi_onnx_fail (error, "node %s (%s): input %s must be a "
          "float32 constant", name, n->op_type, n->input[onnx_input[i]]);
    if (i >= 4 && info->ints != NULL)
      return cbi_onnx_fail (error, "node %s (%s): input %s is an int64 "
          "constant; float32 is needed", name, n->op_type,
          n->input[onnx_input[i]]);
  }
  if (!cbi_onnx_add (im, n->output[0], 0, NULL, NULL, &out, error))
    return FALSE;
  index = cbi_graph_add_node (im->graph, op, name, 6, in, out, NULL);
  g = cbi_graph_node (im->graph, index);
  g->mode = dir;
  g->n_ints = 2;
  g->ints[0] = hidden;
  g->ints[1] = cbi_onnx_int (n, "linear_before_reset", 0) != 0;
  return TRUE;
}
