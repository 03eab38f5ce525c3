/* cudabatchinfer: the CPU backend's recurrent layers (LSTM, GRU, RNN)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * As graph/recurrent.c lays them out: one oneDNN matmul of the whole
 * sequence by every direction's input weights, then one loop of ours per
 * direction that walks its time steps: the product of the previous h by
 * the recurrent weights, then cbi_recurrent_unit () (math/cbimath.h,
 * the CUDA kernel's math) for each unit, writing that step's h straight
 * into its place in Y. A step's product is small (batch x hidden x gates
 * x hidden): a oneDNN primitive a step costs more in calls than it
 * computes, so the walk is one loop, the two directions of a layer side
 * by side on the team's threads, a step on more threads only where it is
 * wide. Every buffer is the plan's, made once: a batch allocates nothing.
 */
#include "cbicpu.h"
#include "cpu/wide.h"
#include "cbimath.h"
#include "graph/cbishapes.h"

#include <string.h>

/* one step's product, in multiply-adds, from which it is shared out
 * among the threads */
#define CBI_CPU_RECURRENT_THREADED (G_GINT64_CONSTANT (1) << 18)
/* and the columns of a block a thread takes then (a multiple of 64) */
#define CBI_CPU_RECURRENT_COLUMNS 256

/* One direction @d of a recurrent layer of cells @op, walked by
 * cbi_cpu_run_recurrent () over @walk's buffers; @zeros: gates x hidden
 * zeros, what a cell reads for what it lacks. */
typedef struct
{
  CbiRecurrent r;
  CbiRecurrentWalk walk;
  gint d;
  CbiKCellOp op;
  const gfloat *zeros;
} CbiCpuRecurrent;

/* A layer's directions, which run side by side on the team's threads:
 * nothing of one is read by the other. */
typedef struct
{
  gint dirs;
  CbiCpuRecurrent dir[2];
} CbiCpuRecurrentLayer;

/* Sixteen floats: GCC's and clang's vector extension, which each clone
 * of CBI_CPU_WIDE builds from the registers it has (one AVX-512, two
 * AVX2). The unaligned one loads and stores at any float, and may alias
 * the floats it reads. */
typedef gfloat CbiCpuV16 __attribute__((vector_size (64)));
typedef gfloat CbiCpuV16u
    __attribute__((vector_size (64), aligned (4), __may_alias__));

/* Rows @a0 and @a1 (@k values each) times @w (@k rows @ldw apart) into
 * @y0 and @y1, columns @c0 to @c1: 64 columns at once (both rows: eight
 * sums, which AVX-512's registers hold from the first row of @w to the
 * last, so that neither a store and its reload nor one multiply-add's
 * latency holds up the next), then 16, then one. Each sum adds a row of
 * @w per value of @a, in order. Inlined into each clone of its caller,
 * whose registers it needs. */
static inline G_ALWAYS_INLINE void
cbi_cpu_recurrent_pair (const gfloat * a0, const gfloat * a1, gint64 k,
    const gfloat * w, gint64 ldw, gint64 c0, gint64 c1, gfloat * y0,
    gfloat * y1)
{
  gint64 c = c0, j;

  for (; c + 64 <= c1; c += 64) {
    CbiCpuV16 s00 = { 0 }, s01 = { 0 }, s02 = { 0 }, s03 = { 0 };
    CbiCpuV16 s10 = { 0 }, s11 = { 0 }, s12 = { 0 }, s13 = { 0 };
    for (j = 0; j < k; j++) {
      const CbiCpuV16u *wr = (const CbiCpuV16u *) (w + j * ldw + c);
      const CbiCpuV16 w0 = wr[0], w1 = wr[1], w2 = wr[2], w3 = wr[3];
      s00 += a0[j] * w0;
      s01 += a0[j] * w1;
      s02 += a0[j] * w2;
      s03 += a0[j] * w3;
      s10 += a1[j] * w0;
      s11 += a1[j] * w1;
      s12 += a1[j] * w2;
      s13 += a1[j] * w3;
    }
    ((CbiCpuV16u *) (y0 + c))[0] = s00;
    ((CbiCpuV16u *) (y0 + c))[1] = s01;
    ((CbiCpuV16u *) (y0 + c))[2] = s02;
    ((CbiCpuV16u *) (y0 + c))[3] = s03;
    ((CbiCpuV16u *) (y1 + c))[0] = s10;
    ((CbiCpuV16u *) (y1 + c))[1] = s11;
    ((CbiCpuV16u *) (y1 + c))[2] = s12;
    ((CbiCpuV16u *) (y1 + c))[3] = s13;
  }
  for (; c + 16 <= c1; c += 16) {
    CbiCpuV16 s0 = { 0 }, s1 = { 0 };
    for (j = 0; j < k; j++) {
      const CbiCpuV16 wv = *(const CbiCpuV16u *) (w + j * ldw + c);
      s0 += a0[j] * wv;
      s1 += a1[j] * wv;
    }
    *(CbiCpuV16u *) (y0 + c) = s0;
    *(CbiCpuV16u *) (y1 + c) = s1;
  }
  for (; c < c1; c++) {
    gfloat s0 = 0.0f, s1 = 0.0f;
    for (j = 0; j < k; j++) {
      s0 += a0[j] * w[j * ldw + c];
      s1 += a1[j] * w[j * ldw + c];
    }
    y0[c] = s0;
    y1[c] = s1;
  }
}

/* Item @item of cbi_cpu_recurrent_product (): rows 2 @item / @blocks
 * and the next (the same one past the last row) over columns @width
 * (@item mod @blocks) to that plus @width, within @cols. */
static inline G_ALWAYS_INLINE void
cbi_cpu_recurrent_item (const gfloat * a, gint64 rows, gint64 k,
    const gfloat * w, gint64 cols, gfloat * y, gint64 ldy, gint64 item,
    gint64 width, gint64 blocks)
{
  const gint64 i0 = 2 * (item / blocks), i1 = MIN (i0 + 1, rows - 1);
  const gint64 c0 = (item % blocks) * width;

  cbi_cpu_recurrent_pair (a + i0 * k, a + i1 * k, k, w, cols, c0,
      MIN (c0 + width, cols), y + i0 * ldy, y + i1 * ldy);
}

/* @y (@rows x @cols, rows @ldy apart) = @a (@rows x @k, dense) @w (@k x
 * @cols, dense), two rows at a time (an odd last row twice over, which
 * writes the same sums twice). A step's product is shared out among the
 * threads only where it is wide (an OpenMP region costs more than a
 * narrow step computes, even one that an if clause keeps on one thread),
 * in pairs of rows by blocks of columns, so that a batch of one or two
 * keeps every thread busy too; a narrow one takes whole rows. */
CBI_CPU_WIDE static void
cbi_cpu_recurrent_product (const gfloat * a, gint64 rows, gint64 k,
    const gfloat * w, gint64 cols, gfloat * y, gint64 ldy)
{
  const gboolean wide = rows * k * cols >= CBI_CPU_RECURRENT_THREADED;
  const gint64 width = wide ? CBI_CPU_RECURRENT_COLUMNS : MAX (cols, 1);
  const gint64 blocks = (cols + width - 1) / width;
  const gint64 items = (rows + 1) / 2 * blocks;
  gint64 item;

  if (!wide) {
    for (item = 0; item < items; item++)
      cbi_cpu_recurrent_item (a, rows, k, w, cols, y, ldy, item, width, blocks);
    return;
  }
#pragma omp parallel for schedule(static)
  for (item = 0; item < items; item++)
    cbi_cpu_recurrent_item (a, rows, k, w, cols, y, ldy, item, width, blocks);
}

/* Row @b of @cell: its units' gate sums read straight (@zeros, at least
 * gates x hidden of them, where the cell has no recurrent product,
 * previous h or c), then cbimath.h's cell, a loop per op so that each
 * vectorises (the cell math is plain arithmetic). */
CBI_CPU_WIDE static void
cbi_cpu_recurrent_row (const CbiKCell * cell, gint64 b, const gfloat * zeros)
{
  const gint64 hd = cell->hidden, base = b * hd;
  const gfloat *x = cell->x + b * cell->x_stride, *bias = cell->bias;
  const gfloat *r = cell->r ? cell->r + b * cell->r_stride : zeros;
  const gfloat *hp = cell->h_prev ? cell->h_prev + base : zeros;
  const gfloat *rb = cell->r_bias ? cell->r_bias : zeros;
  const gfloat limit = cell->limit;
  gfloat *h = cell->h + base;
  gint64 j;

  switch (cell->op) {
    case CBI_K_CELL_LSTM:{
      const gfloat *cp = cell->c_prev ? cell->c_prev + base : zeros;
      gfloat *c = cell->c + base;
#pragma omp simd
      for (j = 0; j < hd; j++)
        h[j] = cbi_lstm_cell (x[j] + r[j] + bias[j],
            x[hd + j] + r[hd + j] + bias[hd + j],
            x[2 * hd + j] + r[2 * hd + j] + bias[2 * hd + j],
            x[3 * hd + j] + r[3 * hd + j] + bias[3 * hd + j], cp[j], &c[j],
            limit);
      break;
    }
    case CBI_K_CELL_GRU_RESET:
#pragma omp simd
      for (j = 0; j < hd; j++)
        h[j] = cbi_gru_reset (x[hd + j] + r[hd + j] + bias[hd + j], hp[j],
            limit);
      break;
    case CBI_K_CELL_GRU:
#pragma omp simd
      for (j = 0; j < hd; j++)
        h[j] = cbi_gru_cell (x[j] + r[j] + bias[j],
            x[hd + j] + r[hd + j] + bias[hd + j],
            x[2 * hd + j] + bias[2 * hd + j], r[2 * hd + j] + rb[j], hp[j],
            1, limit);
      break;
    case CBI_K_CELL_GRU_AFTER:
#pragma omp simd
      for (j = 0; j < hd; j++)
        h[j] = cbi_gru_cell (x[j] + r[j] + bias[j], 0.0f,
            x[2 * hd + j] + bias[2 * hd + j], r[2 * hd + j] + rb[j], hp[j],
            0, limit);
      break;
    case CBI_K_CELL_RNN:
    default:
#pragma omp simd
      for (j = 0; j < hd; j++)
        h[j] = cbi_cell_tanh (x[j] + r[j] + bias[j], limit);
      break;
  }
}

static void
cbi_cpu_recurrent_cells (const CbiKCell * cell, const gfloat * zeros)
{
  gint64 b;

  /* as cbi_cpu_recurrent_product () */
  if (cell->batch * cell->hidden * cell->hidden < CBI_CPU_RECURRENT_THREADED) {
    for (b = 0; b < cell->batch; b++)
      cbi_cpu_recurrent_row (cell, b, zeros);
    return;
  }
#pragma omp parallel for schedule(static)
  for (b = 0; b < cell->batch; b++)
    cbi_cpu_recurrent_row (cell, b, zeros);
}

/* The parts of a step (CbiRecurrentSteps), computed as the walk comes to
 * them; @data is the CbiCpuRecurrent. */
static gboolean
cbi_cpu_step_product (gpointer data, const gfloat * a, const gfloat * w,
    gint64 cols, gfloat * y, GError ** error)
{
  const CbiCpuRecurrent *l = data;

  cbi_cpu_recurrent_product (a, l->r.batch, l->r.hidden, w, cols, y,
      l->r.gates * l->r.hidden);
  return TRUE;
}

static gboolean
cbi_cpu_step_cells (gpointer data, const CbiKCell * cell, GError ** error)
{
  const CbiCpuRecurrent *l = data;

  cbi_cpu_recurrent_cells (cell, l->zeros);
  return TRUE;
}

static const CbiRecurrentSteps cbi_cpu_recurrent_steps = {
  cbi_cpu_step_product, cbi_cpu_step_cells
};

static void
cbi_cpu_run_recurrent (gconstpointer p)
{
  const CbiCpuRecurrentLayer *layer = p;
  gint d;

  /* the steps' own loops inside run on this thread (no nested teams) */
#pragma omp parallel for schedule(static) if (layer->dirs > 1)
  for (d = 0; d < layer->dirs; d++)
    cbi_recurrent_walk (&layer->dir[d].r, &layer->dir[d].walk,
        layer->dir[d].d, layer->dir[d].op, &cbi_cpu_recurrent_steps,
        (gpointer) & layer->dir[d], NULL);
}

/* Input @i of @n (initial_h, initial_c): a constant of the plan's, or an
 * activation row-major; NULL when absent (zero). */
static gboolean
cbi_cpu_recurrent_state (CbiCpuPlan * plan, const CbiNode * n, guint i,
    const gfloat ** state, GError ** error)
{
  const gint t = i < n->n_inputs ? n->inputs[i] : -1;
  const CbiTensorInfo *info = t >= 0 ? cbi_graph_tensor (plan->graph, t) : NULL;
  dnnl_memory_t mem;
  CbiMd md;

  *state = NULL;
  if (info == NULL)
    return TRUE;
  if (info->data) {
    *state = info->data;
    return TRUE;
  }
  if ((mem = cbi_cpu_plain (plan, t, &md, error)) == NULL)
    return FALSE;
  dnnl_memory_get_data_handle (mem, (void **) state);
  return TRUE;
}

/* Adds the oneDNN matmul of the sequence [steps x batch, input] by
 * @wt into the input product @xw (float32): in bfloat16 operands in the
 * wide bfloat16 plan, as its matrix products are (matrix.c), the steps
 * after it float32 either way. */
static gboolean
cbi_cpu_recurrent_input (CbiCpuPlan * plan, const CbiNode * n,
    const CbiRecurrent * r, const gfloat * wt, gfloat * xw, GError ** error)
{
  const gint64 cols = r->dirs * r->gates * r->hidden;
  dnnl_dims_t x_dims = { r->steps * r->batch, r->input };
  dnnl_dims_t w_dims = { r->input, cols };
  dnnl_dims_t y_dims = { r->steps * r->batch, cols };
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_exec_arg_t args[3];
  dnnl_memory_t x;
  GError *local = NULL;
  gboolean ok, bf16;
  CbiMd md;

  args[0].arg = DNNL_ARG_SRC;
  args[1].arg = DNNL_ARG_WEIGHTS;
  args[2].arg = DNNL_ARG_DST;
  if ((x = cbi_cpu_plain (plan, n->inputs[0], &md, error)) == NULL
      || !cbi_cpu_plain_md (plan, &op.src, 2, x_dims, 2, error)
      || !cbi_cpu_plain_md (plan, &op.weights, 2, w_dims, 2, error)
      || !cbi_cpu_plain_md (plan, &op.dst, 2, y_dims, 2, error)
      || !(args[0].memory = cbi_cpu_view (plan, x, op.src, error))
      || !(args[1].memory = cbi_cpu_memory (plan, op.weights, (gpointer) wt,
              error))
      || !(args[2].memory = cbi_cpu_memory (plan, op.dst, xw, error)))
    return FALSE;
  /* its destination is in @args: a step "in place" */
  ok = cbi_cpu_attr (NULL, &attr, error);
  bf16 = ok && plan->bf16 && plan->bf16_wide && cbi_cpu_product_bf16 (plan,
      n->name, &op, (gfloat *) wt, attr, args, &pd, &local);
  if (local) {
    g_propagate_error (error, local);
    ok = FALSE;
  } else if (ok && !bf16) {
    ok = DNNL_CHECK (cbi_dnnl_op_create (&pd, &op, attr, plan->cpu->engine),
        "recurrent input product");
  }
  ok = cbi_cpu_add_primitive_owned (ok, pd, attr, plan, args, 3, -1, error);
  plan->bf16_ops += ok && bf16;
  return ok;
}

/* The plan's copy of @bytes for @what, zeroed. */
static gfloat *
cbi_cpu_recurrent_block (CbiCpuPlan * plan, gint64 count, const gchar * what,
    GError ** error)
{
  gfloat *block = cbi_mem_plan_alloc (plan->memory, MAX (count, 1) *
      sizeof (gfloat), what, error);

  if (block)
    memset (block, 0, MAX (count, 1) * sizeof (gfloat));
  return block;
}

/* LSTM, GRU and RNN. */
gboolean
cbi_cpu_plan_recurrent (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const CbiShape *ys = &plan->shapes[n->output];
  const gboolean reset_first = n->op == CBI_OP_GRU && n->ints[1] == 0;
  CbiCpuRecurrent l = { {0,}, };
  CbiCpuRecurrentLayer layer = { 0, };
  gint64 gh, cols, bh;
  gfloat *wt, *rt, *rt_h = NULL, *bias, *r_bias = NULL, *reset = NULL, *y;
  gfloat *rbuf, *c = NULL;
  CbiMd md;
  gint d;

  cbi_node_recurrent (n, &plan->shapes[n->inputs[0]], &l.r);
  gh = l.r.gates * l.r.hidden;
  cols = l.r.dirs * gh;
  bh = l.r.batch * l.r.hidden;
  if (!(wt = cbi_cpu_recurrent_block (plan, l.r.input * cols,
              "recurrent input weights", error))
      || !(rt = cbi_cpu_recurrent_block (plan, l.r.dirs * l.r.hidden * gh,
              "recurrent weights", error))
      || !(bias = cbi_cpu_recurrent_block (plan, cols, "recurrent bias", error))
      || !(l.walk.xw = cbi_cpu_recurrent_block (plan, l.r.steps * l.r.batch *
              cols, "recurrent input product", error))
      || !(rbuf = cbi_cpu_recurrent_block (plan, l.r.dirs * l.r.batch * gh,
              "recurrent product", error))
      || !(l.zeros = cbi_cpu_recurrent_block (plan, gh, "recurrent zeros",
              error))
      || (n->op == CBI_OP_LSTM && !(c = cbi_cpu_recurrent_block (plan,
                  l.r.dirs * bh, "recurrent state", error)))
      || (n->op == CBI_OP_GRU && !(r_bias = cbi_cpu_recurrent_block (plan,
                  l.r.dirs * l.r.hidden, "recurrent h bias", error)))
      || (reset_first && (!(rt_h = cbi_cpu_recurrent_block (plan, l.r.dirs *
                      l.r.hidden * l.r.hidden, "recurrent h weights", error))
              || !(reset = cbi_cpu_recurrent_block (plan, l.r.dirs * bh,
                      "recurrent reset", error)))))
    return FALSE;
  cbi_recurrent_input_weights (plan->graph, n, &l.r, wt);
  cbi_recurrent_bias (plan->graph, n, &l.r, bias, r_bias);
  for (d = 0; d < l.r.dirs; d++)
    cbi_recurrent_weights (plan->graph, n, &l.r, d, rt + d * l.r.hidden * gh,
        rt_h ? rt_h + d * l.r.hidden * l.r.hidden : NULL);

  if (!cbi_cpu_recurrent_state (plan, n, 4, &l.walk.h0, error)
      || !cbi_cpu_recurrent_state (plan, n, 5, &l.walk.c0, error)
      || !cbi_cpu_recurrent_input (plan, n, &l.r, wt, (gfloat *) l.walk.xw,
          error)
      || !cbi_cpu_shape_md (plan, &md, ys, error)
      || cbi_cpu_new_output (plan, n->output, md, error) == NULL)
    return FALSE;
  dnnl_memory_get_data_handle (plan->mems[n->output], (void **) &y);
  l.walk.y = y;
  l.walk.bias = bias;
  l.walk.r_bias = r_bias;
  l.walk.reverse = n->mode == CBI_DIRECTION_REVERSE;
  l.op = n->op == CBI_OP_LSTM ? CBI_K_CELL_LSTM : n->op == CBI_OP_RNN ?
      CBI_K_CELL_RNN : CBI_K_CELL_GRU;
  layer.dirs = l.r.dirs;
  for (d = 0; d < l.r.dirs; d++) {
    l.d = d;
    l.walk.rt = rt + d * l.r.hidden * gh;
    l.walk.rt_h = rt_h ? rt_h + d * l.r.hidden * l.r.hidden : NULL;
    l.walk.rbuf = rbuf + d * l.r.batch * gh;
    l.walk.c = c ? c + d * bh : NULL;
    l.walk.reset = reset ? reset + d * bh : NULL;
    layer.dir[d] = l;
  }
  cbi_cpu_add_loop (plan, cbi_cpu_run_recurrent, g_memdup2 (&layer,
          sizeof (layer)));
  return TRUE;
}
