/* cudabatchinfer: ONNX model import, constant folding of float32 layers:
 * activations and MatMul on constants
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a model computes from its weights alone, once, at load: Swin V2's
 * continuous position bias is a small MLP (MatMul, Relu, MatMul, Sigmoid)
 * over a constant table of relative coordinates. The element-wise ops
 * compute as the backends do (cbi_eltwise () of math/cbimath.h);
 * MatMul sums in double, rounded once. fold.c has the dispatch.
 */
#include "onnx/onnx-private.h"
#include "cbimath.h"

#include <string.h>

#define FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* a MatMul folds when its multiply-adds are at most this many */
#define CBI_ONNX_FOLD_MAX_PRODUCT (G_GINT64_CONSTANT (1) << 28)

static gboolean
cbi_onnx_float_fail (const Onnx__NodeProto * n, const gchar * what,
    GError ** error)
{
  return cbi_onnx_fail (error, "node %s (%s): %s", cbi_onnx_name (n->name),
      n->op_type, what);
}

gboolean
cbi_onnx_fold_activation (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  static const struct
  {
    const gchar *op;
    CbiKEltwise k;
  } ops[] = {
    {"Relu", CBI_K_RELU}, {"LeakyRelu", CBI_K_RELU},
    {"Sigmoid", CBI_K_SIGMOID}, {"Tanh", CBI_K_TANH}, {"Exp", CBI_K_EXP},
    {"Log", CBI_K_LOG}, {"Abs", CBI_K_ABS}, {"Reciprocal", CBI_K_RECIPROCAL},
    {"Erf", CBI_K_ERF},
  };
  const CbiOnnxConst *x = in[0];
  CbiKEltwise k = CBI_K_IDENTITY;
  gfloat alpha = 0.0f;
  gint64 i;
  guint j;

  for (j = 0; j < G_N_ELEMENTS (ops); j++)
    if (strcmp (n->op_type, ops[j].op) == 0)
      k = ops[j].k;
  if (strcmp (n->op_type, "LeakyRelu") == 0)
    alpha = cbi_onnx_float (n, "alpha", 0.01f);
  if (x == NULL || x->dtype != FLOAT)
    return cbi_onnx_float_fail (n, "its input must be float32", error);
  if (!cbi_onnx_fold_new (im, n, FLOAT, x->n_dims, x->dims, out, error))
    return FALSE;
  for (i = 0; i < x->count; i++)
    ((gfloat *) (*out)->data)[i] = cbi_eltwise (k,
        ((const gfloat *) x->data)[i], alpha, 0.0f);
  return TRUE;
}

/* MatMul of two float32 constants of rank 2 or more, their batch
 * dimensions broadcast as numpy's. */
gboolean
cbi_onnx_fold_matmul (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error)
{
  const CbiOnnxConst *a = in[0], *b = in[1];
  gint64 dims[CBI_MAX_DIMS], rows, k, cols, batches = 1, i, r, c, j;
  gint rank, d;

  if (a == NULL || b == NULL || a->dtype != FLOAT || b->dtype != FLOAT)
    return cbi_onnx_float_fail (n, "both inputs must be float32", error);
  if (a->n_dims < 2 || b->n_dims < 2)
    return cbi_onnx_float_fail (n, "1-D operands are not supported", error);
  rank = MAX (a->n_dims, b->n_dims);
  rows = a->dims[a->n_dims - 2];
  k = a->dims[a->n_dims - 1];
  cols = b->dims[b->n_dims - 1];
  if (b->dims[b->n_dims - 2] != k)
    return cbi_onnx_float_fail (n, "A's columns are not B's rows", error);
  for (d = 0; d < rank - 2; d++) {
    const gint da = d - (rank - a->n_dims), db = d - (rank - b->n_dims);
    const gint64 sa = da >= 0 ? a->dims[da] : 1, sb = db >= 0 ? b->dims[db] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return cbi_onnx_float_fail (n, "the batch dimensions do not "
          "broadcast", error);
    dims[d] = MAX (sa, sb);
    batches *= dims[d];
  }
  dims[rank - 2] = rows;
  dims[rank - 1] = cols;
  if (batches * rows * cols > 0 && k > CBI_ONNX_FOLD_MAX_PRODUCT /
      (batches * rows * cols))
    return cbi_onnx_float_fail (n, "too large a product to fold", error);
  if (!cbi_onnx_fold_new (im, n, FLOAT, rank, dims, out, error))
    return FALSE;
  for (i = 0; i < batches; i++) {
    /* the batch's matrices of A and B, a dimension of 1 repeated */
    gint64 rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    const gfloat *am, *bm;
    gfloat *y = (gfloat *) (*out)->data + i * rows * cols;
    for (d = rank - 3; d >= 0; d--) {
      const gint da = d - (rank - a->n_dims), db = d - (rank - b->n_dims);
      const gint64 at = rest % dims[d];
      rest /= dims[d];
      if (da >= 0) {
        ia += a->dims[da] == 1 ? 0 : at * sa;
        sa *= a->dims[da];
      }
      if (db >= 0) {
        ib += b->dims[db] == 1 ? 0 : at * sb;
        sb *= b->dims[db];
      }
    }
    am = (const gfloat *) a->data + ia * rows * k;
    bm = (const gfloat *) b->data + ib * k * cols;
    for (r = 0; r < rows; r++)
      for (c = 0; c < cols; c++) {
        gdouble sum = 0.0;
        for (j = 0; j < k; j++)
          sum += (gdouble) am[r * k + j] * bm[j * cols + c];
        y[r * cols + c] = (gfloat) sum;
      }
  }
  return TRUE;
}
