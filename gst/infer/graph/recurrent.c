/* cudabatchinfer: recurrent layers (LSTM, GRU, RNN): their shapes, and
 * the weights and biases backends run them with
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Both backends run a layer alike: one matrix product of the whole
 * sequence by every direction's input weights, then per time step the
 * product of the previous h by the recurrent weights and the cell's own
 * math (math/cbimath.h, cbi_recurrent_unit ()). What they multiply
 * by is made here, once per plan, from ONNX's W [dirs, gates x hidden,
 * input], R [dirs, gates x hidden, hidden] and B [dirs, 2 x gates x
 * hidden].
 */
#include "graph/graph-private.h"
#include "graph/cbishapes.h"
#include "cbimath.h"

#include <string.h>

void
cbi_node_recurrent (const CbiNode * n, const CbiShape * x, CbiRecurrent * r)
{
  r->gates = n->op == CBI_OP_LSTM ? 4 : n->op == CBI_OP_GRU ? 3 : 1;
  r->dirs = n->mode == CBI_DIRECTION_BIDIRECTIONAL ? 2 : 1;
  r->hidden = n->ints[0];
  r->reset_after = n->op == CBI_OP_GRU && n->ints[1] != 0;
  r->steps = x->dims[0];
  r->batch = x->dims[1];
  r->input = x->dims[2];
}

gboolean
cbi_infer_recurrent (const CbiNode * n, CbiShape * shapes, GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiShape *y = &shapes[n->output];
  CbiRecurrent r;
  gint i;

  if (x->n_dims != 3)
    return cbi_shape_fail (error, n, "its input must be 3-D [sequence, "
        "batch, input], not %d-D", x->n_dims);
  cbi_node_recurrent (n, x, &r);
  for (i = 1; i < 6; i++) {
    const gint t = i < (gint) n->n_inputs ? n->inputs[i] : -1;
    const CbiShape *s = t >= 0 ? &shapes[t] : NULL;
    /* W, R, B, initial_h, initial_c */
    const gint64 want[5][3] = {
      {r.dirs, r.gates * r.hidden, r.input},
      {r.dirs, r.gates * r.hidden, r.hidden},
      {r.dirs, 2 * r.gates * r.hidden, 0},
      {r.dirs, r.batch, r.hidden},
      {r.dirs, r.batch, r.hidden},
    };
    CbiShape expected = { i == 3 ? 2 : 3, };
    gchar *got, *want_s;
    if (s == NULL)
      continue;
    memcpy (expected.dims, want[i - 1], sizeof (want[i - 1]));
    if (cbi_shape_equal (s, &expected))
      continue;
    got = cbi_shape_to_string (s);
    want_s = cbi_shape_to_string (&expected);
    cbi_shape_fail (error, n, "input %d has shape %s; %s expected for %d "
        "direction(s), hidden size %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
        " inputs and a batch of %" G_GINT64_FORMAT, i, got, want_s, r.dirs,
        r.hidden, r.input, r.batch);
    g_free (got);
    g_free (want_s);
    return FALSE;
  }
  y->n_dims = 4;
  y->dims[0] = r.steps;
  y->dims[1] = r.dirs;
  y->dims[2] = r.batch;
  y->dims[3] = r.hidden;
  return TRUE;
}

void
cbi_recurrent_input_weights (const CbiGraph * graph, const CbiNode * n,
    const CbiRecurrent * r, gfloat * wt)
{
  const gfloat *w = cbi_graph_tensor (graph, n->inputs[1])->data;
  const gint64 cols = r->dirs * r->gates * r->hidden;
  gint64 row, i;

  /* W [dirs x gates x hidden rows, input] transposed */
  for (row = 0; row < cols; row++)
    for (i = 0; i < r->input; i++)
      wt[i * cols + row] = w[row * r->input + i];
}

void
cbi_recurrent_weights (const CbiGraph * graph, const CbiNode * n,
    const CbiRecurrent * r, gint dir, gfloat * rt, gfloat * rt_h)
{
  const gint64 gh = r->gates * r->hidden, h2 = 2 * r->hidden;
  const gint64 cols = rt_h ? h2 : gh;
  const gfloat *w = cbi_graph_tensor (graph, n->inputs[2])->data +
      dir * gh * r->hidden;
  gint64 row, i;

  /* R's rows are the gates' units: column row of R^T; the h gate's to
   * @rt_h where it has its own product */
  for (row = 0; row < gh; row++)
    for (i = 0; i < r->hidden; i++) {
      const gfloat v = w[row * r->hidden + i];
      if (rt_h && row >= h2)
        rt_h[i * r->hidden + row - h2] = v;
      else
        rt[i * cols + row] = v;
    }
}

void
cbi_recurrent_bias (const CbiGraph * graph, const CbiNode * n,
    const CbiRecurrent * r, gfloat * bias, gfloat * r_bias)
{
  const gint64 cols = r->gates * r->hidden;
  const gint t = n->n_inputs > 3 ? n->inputs[3] : -1;
  const gfloat *b = t >= 0 ? cbi_graph_tensor (graph, t)->data : NULL;
  gint d;
  gint64 k;

  memset (bias, 0, r->dirs * cols * sizeof (gfloat));
  if (r_bias)
    memset (r_bias, 0, r->dirs * r->hidden * sizeof (gfloat));
  if (b == NULL)
    return;
  for (d = 0; d < r->dirs; d++) {
    const gfloat *wb = b + d * 2 * cols, *rb = wb + cols;
    for (k = 0; k < cols; k++) {
      /* the GRU's h gate keeps its recurrent bias apart: the reset gate
       * multiplies it (or the product it is added to) */
      if (n->op == CBI_OP_GRU && k >= 2 * r->hidden) {
        bias[d * cols + k] = wb[k];
        r_bias[d * r->hidden + k - 2 * r->hidden] = rb[k];
      } else {
        bias[d * cols + k] = wb[k] + rb[k];
      }
    }
  }
}

void
cbi_recurrent_step (const CbiRecurrent * r, const CbiRecurrentWalk * w,
    gint d, gint64 s, CbiKCell * cell)
{
  const gint64 gh = r->gates * r->hidden, bh = r->batch * r->hidden;
  const gboolean reverse = d == 1 || w->reverse;
  const gint64 t = reverse ? r->steps - 1 - s : s;
  const gint64 t_prev = reverse ? t + 1 : t - 1;

  cell->batch = r->batch;
  cell->hidden = r->hidden;
  cell->limit = CBI_CELL_TANH_LIMIT;
  cell->x = w->xw + t * r->batch * r->dirs * gh + d * gh;
  cell->x_stride = r->dirs * gh;
  cell->r_stride = gh;
  cell->bias = w->bias + d * gh;
  cell->r_bias = w->r_bias ? w->r_bias + d * r->hidden : NULL;
  cell->h_prev = s == 0 ? (w->h0 ? w->h0 + d * bh : NULL) :
      w->y + (t_prev * r->dirs + d) * bh;
  cell->r = cell->h_prev ? w->rbuf : NULL;
  cell->h = w->y + (t * r->dirs + d) * bh;
  cell->c = w->c;
  cell->c_prev = w->c == NULL ? NULL : s > 0 ? w->c :
      w->c0 ? w->c0 + d * bh : NULL;
}

gboolean
cbi_recurrent_walk (const CbiRecurrent * r, const CbiRecurrentWalk * w,
    gint d, CbiKCellOp op, const CbiRecurrentSteps * steps, gpointer data,
    GError ** error)
{
  const gint64 gh = r->gates * r->hidden;
  CbiKCell cell;
  gint64 s;

  for (s = 0; s < r->steps; s++) {
    gfloat *h;
    cbi_recurrent_step (r, w, d, s, &cell);
    if (w->rt_h == NULL) {
      /* every gate's recurrent product at once */
      if (cell.h_prev && !steps->product (data, cell.h_prev, w->rt, gh,
              w->rbuf, error))
        return FALSE;
      cell.op = op;
      if (!steps->cells (data, &cell, error))
        return FALSE;
      continue;
    }
    /* the reset gate first (GRU, linear_before_reset 0): z and r's
     * products, r h, then the h gate's product of r h */
    if (cell.h_prev) {
      h = cell.h;
      cell.op = CBI_K_CELL_GRU_RESET;
      cell.h = w->reset;
      if (!steps->product (data, cell.h_prev, w->rt, 2 * r->hidden, w->rbuf,
              error) || !steps->cells (data, &cell, error)
          || !steps->product (data, w->reset, w->rt_h, r->hidden,
              w->rbuf + 2 * r->hidden, error))
        return FALSE;
      cell.h = h;
    }
    cell.op = CBI_K_CELL_GRU_AFTER;
    if (!steps->cells (data, &cell, error))
      return FALSE;
  }
  return TRUE;
}
