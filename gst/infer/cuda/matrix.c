/* cudabatchinfer: the CUDA backend's Gemm and MatMul, on cuBLAS
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Row-major Y[M, N] = A[M, K] B[K, N] is the column-major Y^T = B^T A^T:
 * cuBLAS's A is our B. Gemm's alpha folds into a copy of B, beta C into a
 * bias that a copy puts in Y first. The operands stay float32 in memory
 * under every precision: the plan's compute type lets cuBLAS convert them
 * to tf32, bfloat16 or half on their way into the tensor cores, with
 * float32 sums, so no conversion step and no 16-bit copy is needed.
 */
#include "cbicuda.h"

/* Column-major C[m, n] = A[m, k] B[k, n], batched. */
typedef struct
{
  CbiCudaIO io;
  const gfloat *w;
  const gfloat *bias;           /* nullable: copied into y first */
  gint m, n, k, ldb;
  gboolean trans_b;
  gfloat alpha, beta;
  gint64 batches, stride_a, stride_b, stride_y;
  cublasComputeType_t compute;
} CbiCudaGemm;

static gboolean
cbi_cuda_run_gemm (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaGemm *g = params;

  if (g->bias && !CUDA_CHECK (cudaMemcpyAsync (g->io.y, g->bias, (gsize) g->m *
              g->n * sizeof (gfloat), cudaMemcpyDeviceToDevice, stream),
          "gemm bias"))
    return FALSE;
  return CUBLAS_CHECK (cublasGemmStridedBatchedEx (cuda->cublas,
          CUBLAS_OP_N, g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g->m, g->n,
          g->k, &g->alpha, g->w, CUDA_R_32F, g->m, g->stride_b, g->io.x,
          CUDA_R_32F, g->ldb, g->stride_a, &g->beta, g->io.y, CUDA_R_32F,
          g->m, g->stride_y, g->batches, g->compute, CUBLAS_GEMM_DEFAULT),
      "gemm");
}

/* A MatMul whose batch dimensions broadcast otherwise than "all" or "one
 * side": one GEMM per output matrix, each on its own A and B (replayed in
 * one CUDA graph all the same), from @one, set up for the first. */
static void
cbi_cuda_broadcast_matmul (CbiCudaPlan * plan, const CbiNode * n,
    const CbiCudaGemm * one, const CbiShape * as, const CbiShape * bs,
    const CbiShape * ys, gint64 rows, gint64 k, gint64 cols)
{
  const gint nb = ys->n_dims - 2;
  gint64 batches = 1, i;
  gint d;

  for (d = 0; d < nb; d++)
    batches *= ys->dims[d];
  for (i = 0; i < batches; i++) {
    CbiCudaGemm *g = cbi_cuda_add_step (plan, n, cbi_cuda_run_gemm,
        sizeof (CbiCudaGemm));
    gint64 rest = i, a = 0, b = 0, a_stride = 1, b_stride = 1;
    *g = *one;
    g->batches = 1;
    g->stride_a = g->stride_b = g->stride_y = 0;
    /* numpy broadcasting: batch dimensions aligned on the right, a
     * dimension of 1 repeated */
    for (d = nb - 1; d >= 0; d--) {
      const gint64 at = rest % ys->dims[d];
      const gint ad = d - nb + (as->n_dims - 2);
      const gint bd = d - nb + (bs->n_dims - 2);
      rest /= ys->dims[d];
      if (ad >= 0) {
        a += as->dims[ad] == 1 ? 0 : at * a_stride;
        a_stride *= as->dims[ad];
      }
      if (bd >= 0) {
        b += bs->dims[bd] == 1 ? 0 : at * b_stride;
        b_stride *= bs->dims[bd];
      }
    }
    g->io.x = one->io.x + a * rows * k;
    g->w = one->w + b * k * cols;
    g->io.y = one->io.y + i * rows * cols;
  }
}

/* Gemm: its folded weights and bias, made once here. */
static gboolean
cbi_cuda_gemm_constants (CbiCudaPlan * plan, const CbiNode * n,
    CbiCudaGemm * g, gint64 rows, gint64 k, gint64 cols, GError ** error)
{
  gfloat *wb = g_new (gfloat, k * cols);

  cbi_gemm_weights (plan->model, n, k, cols, wb);
  g->w = cbi_cuda_upload_made (plan, wb, k * cols, "gemm weights", error);
  g_free (wb);
  if (g->w == NULL)
    return FALSE;
  if (cbi_gemm_has_bias (n)) {
    gfloat *bias = g_new (gfloat, rows * cols);
    cbi_gemm_bias (plan->model, n, plan->shapes, rows, cols, bias);
    g->bias = cbi_cuda_upload_made (plan, bias, rows * cols,
        "gemm bias", error);
    g_free (bias);
    if (g->bias == NULL)
      return FALSE;
    g->beta = 1.0f;
  }
  /* a transposed A, stored K x M, is M x K to cuBLAS: its transpose is
   * the K x M operand */
  g->trans_b = n->ints[0] != 0;
  g->ldb = g->trans_b ? rows : k;
  g->batches = 1;
  return TRUE;
}

gboolean
cbi_cuda_plan_matrix (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  gint out = post ? post->output : n->output;
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]], *ys = &plan->shapes[out];
  const CbiTensorInfo *bt = cbi_graph_tensor (plan->model, n->inputs[1]);
  const gint64 rows = ys->dims[ys->n_dims - 2];
  const gint64 cols = ys->dims[ys->n_dims - 1];
  const gint64 k = bs->dims[bs->n_dims - (n->op == CBI_OP_GEMM
          && n->ints[1] ? 1 : 2)];
  gint64 batches = 1, a_batches = 1, b_batches = 1;
  CbiCudaGemm g = { 0, };
  gint d;

  for (d = 0; d < ys->n_dims - 2; d++)
    batches *= ys->dims[d];
  for (d = 0; d < as->n_dims - 2; d++)
    a_batches *= as->dims[d];
  for (d = 0; d < bs->n_dims - 2; d++)
    b_batches *= bs->dims[d];
  /* cuBLAS takes int sizes; the rows of every A matrix may go in one */
  if (rows * a_batches > G_MAXINT32 || cols > G_MAXINT32 || k > G_MAXINT32
      || batches > G_MAXINT32) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "node %s: a matrix "
        "product of %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " by %"
        G_GINT64_FORMAT " x %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
        " times) is past cuBLAS's int sizes", n->name, rows * a_batches, k,
        k, cols, batches);
    return FALSE;
  }
  plan->uses_cublas = TRUE;
  plan->low_precision_ops += plan->products != CUBLAS_COMPUTE_32F_PEDANTIC;
  g.compute = plan->products;
  g.io.x = plan->tensors[n->inputs[0]];
  g.io.y = plan->tensors[out];
  g.m = cols;
  g.k = k;
  g.n = rows;
  g.alpha = 1.0f;
  g.beta = 0.0f;

  if (n->op == CBI_OP_GEMM) {
    if (!cbi_cuda_gemm_constants (plan, n, &g, rows, k, cols, error))
      return FALSE;
  } else {
    /* one GEMM over every row when B is shared, else one per batch */
    if (bt->data
        && (g.w = cbi_cuda_constant (plan, n->inputs[1], error)) == NULL)
      return FALSE;
    if (!bt->data)
      g.w = plan->tensors[n->inputs[1]];
    g.ldb = k;
    if (b_batches == 1) {
      g.n = rows * a_batches;
      g.batches = 1;
    } else if (a_batches == batches && b_batches == batches) {
      g.batches = batches;
      g.stride_a = rows * k;
      g.stride_b = k * cols;
      g.stride_y = rows * cols;
    } else if (a_batches == 1 && b_batches == batches) {
      g.batches = batches;
      g.stride_b = k * cols;
      g.stride_y = rows * cols;
    } else {
      cbi_cuda_broadcast_matmul (plan, n, &g, as, bs, ys, rows, k, cols);
      g.batches = 0;
    }
  }
  if (g.batches > 0)
    *(CbiCudaGemm *) cbi_cuda_add_step (plan, n, cbi_cuda_run_gemm,
        sizeof (CbiCudaGemm)) = g;
  if (post)
    cbi_cuda_add_activation (plan, post, plan->tensors[out],
        cbi_shape_count (ys));
  return TRUE;
}
