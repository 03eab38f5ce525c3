/* cudabatchinfer: the CUDA backend's recurrent layers (LSTM, GRU, RNN)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * As the CPU backend runs them (graph/recurrent.c): one cuBLAS product of
 * the whole sequence by every direction's input weights, then for each
 * direction and time step the product of the previous h by the recurrent
 * weights and the cell kernel (kernels/recurrent.cu) writing that step's
 * h into its place in Y, all queued on the batch's stream in order.
 */
#include "cbicuda.h"
#include "graph/cbishapes.h"

/* Row-major @y (@rows x @cols, rows @ldy apart) = @a (@rows x @k, dense)
 * @w (@k x @cols, dense): column-major y^T = w^T a^T. */
typedef struct
{
  const gfloat *a, *w;
  gfloat *y;
  gint rows, cols, k, ldy;
} CbiCudaProduct;

static gboolean
cbi_cuda_run_product (CbiCuda * cuda, CbiCudaPlan * plan,
    gconstpointer params, cudaStream_t stream, GError ** error)
{
  const CbiCudaProduct *p = params;
  const gfloat one = 1.0f, zero = 0.0f;

  return CUBLAS_CHECK (cublasSgemm (cuda->cublas, CUBLAS_OP_N, CUBLAS_OP_N,
          p->cols, p->rows, p->k, &one, p->w, p->cols, p->a, p->k, &zero,
          p->y, p->ldy), "recurrent product");
}

typedef struct
{
  CbiKCell cell;
} CbiCudaCell;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_cell, CbiCudaCell, CUDA_CHECK,
    "recurrent cell kernel", cbi_k_recurrent_cell (&p->cell, stream))
/* *INDENT-ON* */

static gboolean
cbi_cuda_add_product (CbiCudaPlan * plan, const CbiNode * n,
    const gfloat * a, gint64 rows, gint64 k, const gfloat * w, gint64 cols,
    gfloat * y, gint64 ldy, GError ** error)
{
  CbiCudaProduct *p;

  if (rows > G_MAXINT32 || cols > G_MAXINT32 || k > G_MAXINT32
      || ldy > G_MAXINT32) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s: a recurrent "
        "product of %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " is past "
        "cuBLAS's int sizes", n->name, rows, cols);
    return FALSE;
  }
  p = cbi_cuda_add_step (plan, n, cbi_cuda_run_product,
      sizeof (CbiCudaProduct));
  p->a = a;
  p->w = w;
  p->y = y;
  p->rows = rows;
  p->cols = cols;
  p->k = k;
  p->ldy = ldy;
  return TRUE;
}

static void
cbi_cuda_add_cells (CbiCudaPlan * plan, const CbiNode * n,
    const CbiKCell * cell)
{
  CbiCudaCell *c = cbi_cuda_add_step (plan, n, cbi_cuda_run_cell,
      sizeof (CbiCudaCell));
  c->cell = *cell;
}

/* Input @i of @n (initial_h, initial_c) on the device; NULL when absent. */
static gboolean
cbi_cuda_recurrent_state (CbiCudaPlan * plan, const CbiNode * n, guint i,
    const gfloat ** state, GError ** error)
{
  const gint t = i < n->n_inputs ? n->inputs[i] : -1;

  *state = NULL;
  if (t < 0)
    return TRUE;
  if (cbi_graph_tensor (plan->model, t)->data == NULL) {
    *state = plan->tensors[t];
    return TRUE;
  }
  return (*state = cbi_cuda_constant (plan, t, error)) != NULL;
}

/* Uploads @count floats of @host (freed) for @what. */
static const gfloat *
cbi_cuda_recurrent_upload (CbiCudaPlan * plan, gfloat * host, gsize count,
    const gchar * what, GError ** error)
{
  const gfloat *dev = cbi_cuda_upload_made (plan, host, count, what, error);

  g_free (host);
  return dev;
}

gboolean
cbi_cuda_plan_recurrent (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiRecurrent r;
  gint64 gh, cols, bh, s, i, j;
  gint d;
  gfloat *wt, *rt, *rt_zr, *rt_h = NULL, *bias, *r_bias;
  const gfloat *dwt, *drt_zr, *drt_h = NULL, *dbias, *dr_bias = NULL;
  const gfloat *h0, *c0;
  gfloat *xw, *rbuf, *c, *reset = NULL, *y = plan->tensors[n->output];
  CbiRecurrentWalk walk = { NULL, };
  CbiKCell cell = { 0, };
  CbiKCellOp op;

  cbi_node_recurrent (n, &plan->shapes[n->inputs[0]], &r);
  gh = r.gates * r.hidden;
  cols = r.dirs * gh;
  bh = r.batch * r.hidden;
  plan->uses_cublas = TRUE;

  /* the constants made on the host, as the CPU's */
  wt = g_new (gfloat, r.input * cols);
  rt = g_new (gfloat, r.hidden * gh);
  rt_zr = g_new (gfloat, r.dirs * r.hidden * gh);
  bias = g_new (gfloat, cols);
  r_bias = g_new (gfloat, r.dirs * r.hidden);
  if (n->op == CBI_OP_GRU && !r.reset_after)
    rt_h = g_new (gfloat, r.dirs * r.hidden * r.hidden);
  cbi_recurrent_input_weights (plan->model, n, &r, wt);
  cbi_recurrent_bias (plan->model, n, &r, bias, r_bias);
  for (d = 0; d < r.dirs; d++) {
    gfloat *zr = rt_zr + d * r.hidden * gh;
    const gint64 zr_cols = rt_h ? 2 * r.hidden : gh;
    cbi_recurrent_weights (plan->model, n, &r, d, rt);
    for (i = 0; i < r.hidden; i++)
      for (j = 0; j < gh; j++) {
        if (j < zr_cols)
          zr[i * zr_cols + j] = rt[i * gh + j];
        else
          rt_h[(d * r.hidden + i) * r.hidden + j - zr_cols] = rt[i * gh + j];
      }
  }
  g_free (rt);
  if (n->op != CBI_OP_GRU) {
    g_free (r_bias);
    r_bias = NULL;
  }
  dwt = cbi_cuda_recurrent_upload (plan, wt, r.input * cols,
      "recurrent input weights", error);
  drt_zr = dwt ? cbi_cuda_recurrent_upload (plan, rt_zr, r.dirs * r.hidden *
      gh, "recurrent weights", error) : (g_free (rt_zr), NULL);
  dbias = drt_zr ? cbi_cuda_recurrent_upload (plan, bias, cols,
      "recurrent bias", error) : (g_free (bias), NULL);
  if (r_bias)
    dr_bias = dbias ? cbi_cuda_recurrent_upload (plan, r_bias, r.dirs *
        r.hidden, "recurrent h bias", error) : (g_free (r_bias), NULL);
  if (rt_h)
    drt_h = dbias && (r_bias == NULL || dr_bias) ?
        cbi_cuda_recurrent_upload (plan, rt_h, r.dirs * r.hidden * r.hidden,
        "recurrent h weights", error) : (g_free (rt_h), NULL);
  if (dbias == NULL || (r_bias && dr_bias == NULL) || (rt_h && drt_h == NULL))
    return FALSE;

  if (!(xw = cbi_mem_plan_alloc (plan->memory, r.steps * r.batch * cols *
              sizeof (gfloat), "recurrent input product", error))
      || !(rbuf = cbi_mem_plan_alloc (plan->memory, r.batch * gh *
              sizeof (gfloat), "recurrent product", error))
      || !(c = cbi_mem_plan_alloc (plan->memory, bh * sizeof (gfloat),
              "recurrent state", error))
      || (rt_h && !(reset = cbi_mem_plan_alloc (plan->memory,
                  bh * sizeof (gfloat), "recurrent reset", error)))
      || !cbi_cuda_recurrent_state (plan, n, 4, &h0, error)
      || !cbi_cuda_recurrent_state (plan, n, 5, &c0, error)
      || !cbi_cuda_add_product (plan, n, plan->tensors[n->inputs[0]],
          r.steps * r.batch, r.input, dwt, cols, xw, cols, error))
    return FALSE;

  walk.xw = xw;
  walk.y = y;
  walk.h0 = h0;
  walk.c0 = c0;
  walk.c = n->op == CBI_OP_LSTM ? c : NULL;
  walk.rbuf = rbuf;
  walk.bias = dbias;
  walk.r_bias = dr_bias;
  walk.reverse = n->mode == CBI_DIRECTION_REVERSE;
  op = n->op == CBI_OP_LSTM ? CBI_K_CELL_LSTM : n->op == CBI_OP_RNN ?
      CBI_K_CELL_RNN : CBI_K_CELL_GRU;
  for (d = 0; d < r.dirs; d++) {
    const gfloat *rd = drt_zr + d * r.hidden * gh;
    for (s = 0; s < r.steps; s++) {
      gfloat *h;
      cbi_recurrent_step (&r, &walk, d, s, &cell);
      if (drt_h == NULL) {
        if (cell.h_prev && !cbi_cuda_add_product (plan, n, cell.h_prev,
                r.batch, r.hidden, rd, gh, rbuf, gh, error))
          return FALSE;
        cell.op = op;
        cbi_cuda_add_cells (plan, n, &cell);
        continue;
      }
      /* linear_before_reset 0: r h first, then the h gate's product */
      if (cell.h_prev) {
        if (!cbi_cuda_add_product (plan, n, cell.h_prev, r.batch, r.hidden,
                rd, 2 * r.hidden, rbuf, gh, error))
          return FALSE;
        h = cell.h;
        cell.op = CBI_K_CELL_GRU_RESET;
        cell.h = reset;
        cbi_cuda_add_cells (plan, n, &cell);
        if (!cbi_cuda_add_product (plan, n, reset, r.batch, r.hidden,
                drt_h + d * r.hidden * r.hidden, r.hidden,
                rbuf + 2 * r.hidden, gh, error))
          return FALSE;
        cell.h = h;
      }
      cell.op = CBI_K_CELL_GRU_AFTER;
      cbi_cuda_add_cells (plan, n, &cell);
    }
  }
  return TRUE;
}
