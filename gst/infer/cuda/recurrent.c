/* cudabatchinfer: the CUDA backend's recurrent layers (LSTM, GRU, RNN)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * As the CPU backend runs them (graph/recurrent.c): one cuBLAS product of
 * the whole sequence by every direction's input weights, then for each
 * direction and time step the product of the previous h by the recurrent
 * weights and the cell kernel (kernels/recurrent.cu) writing that step's
 * h into its place in Y, all queued on the batch's stream in order. The
 * sequence's product takes the plan's compute type (bfloat16 or half
 * operands under those precisions, as the CPU's wide bfloat16 plan
 * takes bfloat16 there); the steps' products stay float32 (tf32 under
 * tf32), as on the CPU: their rounding would carry from step to step.
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
  cublasComputeType_t compute;
} CbiCudaProduct;

static gboolean
cbi_cuda_run_product (CbiCuda * cuda, CbiCudaPlan * plan,
    gconstpointer params, cudaStream_t stream, GError ** error)
{
  const CbiCudaProduct *p = params;
  const gfloat one = 1.0f, zero = 0.0f;

  return CUBLAS_CHECK (cublasGemmEx (cuda->cublas, CUBLAS_OP_N, CUBLAS_OP_N,
          p->cols, p->rows, p->k, &one, p->w, CUDA_R_32F, p->cols, p->a,
          CUDA_R_32F, p->k, &zero, p->y, CUDA_R_32F, p->ldy, p->compute,
          CUBLAS_GEMM_DEFAULT), "recurrent product");
}

typedef struct
{
  CbiKCell cell;
} CbiCudaCell;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_cell, CbiCudaCell, CUDA_CHECK,
    "recurrent cell kernel", cbi_k_recurrent_cell (&p->cell, stream))
/* *INDENT-ON* */

/* The parts of a step (CbiRecurrentSteps), queued as the walk comes to
 * them. */
typedef struct
{
  CbiCudaPlan *plan;
  const CbiNode *n;
  const CbiRecurrent *r;
} CbiCudaRecurrentWalk;

/* Queues @y (@rows x @cols, rows @ldy apart) = @a (@rows x @k) @w (@k x
 * @cols) in @compute, within cuBLAS's int sizes. */
static gboolean
cbi_cuda_add_product (CbiCudaPlan * plan, const CbiNode * n,
    const gfloat * a, gint64 rows, gint64 k, const gfloat * w, gint64 cols,
    gfloat * y, gint64 ldy, cublasComputeType_t compute, GError ** error)
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
  p->compute = compute;
  return TRUE;
}

static gboolean
cbi_cuda_step_product (gpointer data, const gfloat * a, const gfloat * w,
    gint64 cols, gfloat * y, GError ** error)
{
  const CbiCudaRecurrentWalk *wk = data;

  return cbi_cuda_add_product (wk->plan, wk->n, a, wk->r->batch,
      wk->r->hidden, w, cols, y, wk->r->gates * wk->r->hidden,
      wk->plan->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 :
      CUBLAS_COMPUTE_32F_PEDANTIC, error);
}

static gboolean
cbi_cuda_step_cells (gpointer data, const CbiKCell * cell, GError ** error)
{
  const CbiCudaRecurrentWalk *wk = data;
  CbiCudaCell *c = cbi_cuda_add_step (wk->plan, wk->n, cbi_cuda_run_cell,
      sizeof (CbiCudaCell));

  c->cell = *cell;
  return TRUE;
}

static const CbiRecurrentSteps cbi_cuda_recurrent_steps = {
  cbi_cuda_step_product, cbi_cuda_step_cells
};

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

gboolean
cbi_cuda_plan_recurrent (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiRecurrent r;
  CbiRecurrentWalk walk = { NULL, };
  CbiCudaRecurrentWalk wk = { plan, n, &r };
  gint64 gh, cols, bh;
  gint d;
  gboolean reset_first, ok = FALSE;
  gfloat *wt, *rt, *rt_h = NULL, *bias, *r_bias = NULL;
  const gfloat *dwt, *drt, *drt_h = NULL;
  gfloat *rbuf, *c = NULL, *reset = NULL;
  CbiKCellOp op;

  cbi_node_recurrent (n, &plan->shapes[n->inputs[0]], &r);
  gh = r.gates * r.hidden;
  cols = r.dirs * gh;
  bh = r.batch * r.hidden;
  reset_first = n->op == CBI_OP_GRU && !r.reset_after;
  plan->uses_cublas = TRUE;
  plan->low_precision_ops += plan->products != CUBLAS_COMPUTE_32F_PEDANTIC;

  /* the constants made on the host, laid out as the CPU's */
  wt = g_new (gfloat, r.input * cols);
  rt = g_new (gfloat, r.dirs * r.hidden * gh);
  bias = g_new (gfloat, cols);
  if (n->op == CBI_OP_GRU)
    r_bias = g_new (gfloat, r.dirs * r.hidden);
  if (reset_first)
    rt_h = g_new (gfloat, r.dirs * r.hidden * r.hidden);
  cbi_recurrent_input_weights (plan->model, n, &r, wt);
  cbi_recurrent_bias (plan->model, n, &r, bias, r_bias);
  for (d = 0; d < r.dirs; d++)
    cbi_recurrent_weights (plan->model, n, &r, d, rt + d * r.hidden * gh,
        rt_h ? rt_h + d * r.hidden * r.hidden : NULL);

  if (!(dwt = cbi_cuda_upload_made (plan, wt, r.input * cols,
              "recurrent input weights", error))
      || !(drt = cbi_cuda_upload_made (plan, rt, r.dirs * r.hidden * gh,
              "recurrent weights", error))
      || !(walk.bias = cbi_cuda_upload_made (plan, bias, cols,
              "recurrent bias", error))
      || (r_bias && !(walk.r_bias = cbi_cuda_upload_made (plan, r_bias,
                  r.dirs * r.hidden, "recurrent h bias", error)))
      || (rt_h && !(drt_h = cbi_cuda_upload_made (plan, rt_h, r.dirs *
                  r.hidden * r.hidden, "recurrent h weights", error)))
      || !(walk.xw = cbi_mem_plan_alloc (plan->memory, r.steps * r.batch *
              cols * sizeof (gfloat), "recurrent input product", error))
      || !(rbuf = cbi_mem_plan_alloc (plan->memory, r.dirs * r.batch * gh *
              sizeof (gfloat), "recurrent product", error))
      || (n->op == CBI_OP_LSTM && !(c = cbi_mem_plan_alloc (plan->memory,
                  r.dirs * bh * sizeof (gfloat), "recurrent state", error)))
      || (reset_first && !(reset = cbi_mem_plan_alloc (plan->memory,
                  r.dirs * bh * sizeof (gfloat), "recurrent reset", error)))
      || !cbi_cuda_recurrent_state (plan, n, 4, &walk.h0, error)
      || !cbi_cuda_recurrent_state (plan, n, 5, &walk.c0, error)
      /* the input product: the whole sequence at once */
      || !cbi_cuda_add_product (plan, n, plan->tensors[n->inputs[0]],
          r.steps * r.batch, r.input, dwt, cols, (gfloat *) walk.xw, cols,
          plan->products, error))
    goto done;

  walk.y = plan->tensors[n->output];
  walk.reverse = n->mode == CBI_DIRECTION_REVERSE;
  op = n->op == CBI_OP_LSTM ? CBI_K_CELL_LSTM : n->op == CBI_OP_RNN ?
      CBI_K_CELL_RNN : CBI_K_CELL_GRU;
  ok = TRUE;
  for (d = 0; ok && d < r.dirs; d++) {
    walk.rt = drt + d * r.hidden * gh;
    walk.rt_h = drt_h ? drt_h + d * r.hidden * r.hidden : NULL;
    walk.rbuf = rbuf + d * r.batch * gh;
    walk.c = c ? c + d * bh : NULL;
    walk.reset = reset ? reset + d * bh : NULL;
    ok = cbi_recurrent_walk (&r, &walk, d, op, &cbi_cuda_recurrent_steps,
        &wk, error);
  }

done:
  g_free (wt);
  g_free (rt);
  g_free (bias);
  g_free (r_bias);
  g_free (rt_h);
  return ok;
}
