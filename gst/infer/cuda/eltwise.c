/* cudabatchinfer: the CUDA backend's element-wise and binary ops
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One kernel each (kernels/eltwise.cu, binary.cu); which op is the op
 * table's CbiKEltwise or CbiKBinary.
 */
#include "cbicuda.h"

#include <string.h>

gboolean
cbi_cuda_plan_eltwise (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  cbi_cuda_add_eltwise (plan, n, plan->tensors[n->inputs[0]],
      plan->tensors[n->output], cbi_shape_count (&plan->shapes[n->inputs[0]]));
  return TRUE;
}

/* a op b, b read at @b_strides, then the fused activation @post */
typedef struct
{
  CbiCudaIO io;
  const gfloat *b;
  gint rank;
  gint64 dims[CBI_K_MAX_DIMS];
  gint64 b_strides[CBI_K_MAX_DIMS];
  CbiKBinary op;
  CbiKEltwise post;
  gfloat alpha, beta;
} CbiCudaBinary;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_binary, CbiCudaBinary, CUDA_CHECK,
    "binary kernel", cbi_k_binary (p->io.x, p->b, p->io.y, p->rank, p->dims,
        p->b_strides, p->op, p->post, p->alpha, p->beta, stream))
/* *INDENT-ON* */

/* Add, Sub, Mul, Div, Min, Max, Pow and PRelu: the kernel reads the first
 * operand at the output's shape and broadcasts the second; a first
 * operand that broadcasts is swapped with the second where the op
 * commutes, else expanded to the output's shape by a copy first. */
gboolean
cbi_cuda_plan_binary (gpointer user_plan, const CbiNode * node,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiNode swapped;
  const CbiNode *n = cbi_node_binary_operands (plan->model, node,
      plan->shapes, &swapped);
  gint out = post ? post->output : n->output, i;
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]];
  const CbiShape *ys = &plan->shapes[n->output];
  const gfloat *a;
  CbiCudaBinary *s;

  for (i = 0; i < 2; i++)
    if (cbi_graph_tensor (plan->model, n->inputs[i])->data
        && cbi_cuda_constant (plan, n->inputs[i], error) == NULL)
      return FALSE;
  a = plan->tensors[n->inputs[0]];
  if (!cbi_shape_equal (as, ys)) {
    gfloat *full = cbi_mem_plan_alloc (plan->memory,
        cbi_shape_count (ys) * sizeof (gfloat), "a broadcast operand", error);
    if (full == NULL)
      return FALSE;
    cbi_cuda_add_expand (plan, n, a, as, full, ys);
    a = full;
  }
  s = cbi_cuda_add_step (plan, n, cbi_cuda_run_binary, sizeof (CbiCudaBinary));
  s->io.x = a;
  s->b = plan->tensors[n->inputs[1]];
  s->io.y = plan->tensors[out];
  s->op = cbi_op_info (n->op)->binary;
  s->rank = ys->n_dims;
  memcpy (s->dims, ys->dims, ys->n_dims * sizeof (gint64));
  cbi_broadcast_strides (ys->n_dims, bs->n_dims, bs->dims, s->b_strides);
  s->post = post ? cbi_op_info (post->op)->eltwise : CBI_K_IDENTITY;
  s->alpha = post ? post->alpha : 0.0f;
  s->beta = post ? post->beta : 0.0f;
  return TRUE;
}

/* c ? a : b, b and the condition read at their strides */
typedef struct
{
  CbiCudaIO io;
  const gfloat *b, *cond;
  gint rank;
  gint64 dims[CBI_K_MAX_DIMS];
  gint64 b_strides[CBI_K_MAX_DIMS];
  gint64 c_strides[CBI_K_MAX_DIMS];
} CbiCudaWhere;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_where, CbiCudaWhere, CUDA_CHECK,
    "where kernel", cbi_k_where (p->cond, p->io.x, p->b, p->io.y, p->rank,
        p->dims, p->b_strides, p->c_strides, stream))
/* *INDENT-ON* */

/* PRelu: the binary kernel, its slope broadcast as a second operand. */
gboolean
cbi_cuda_plan_prelu (gpointer plan, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  return cbi_cuda_plan_binary (plan, n, post, error);
}

gboolean
cbi_cuda_plan_where (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]];
  const CbiShape *cs = &plan->shapes[n->inputs[2]];
  gint b = n->inputs[1];
  CbiCudaWhere *s;
  gfloat *cond;

  if (cbi_graph_tensor (plan->model, b)->data
      && cbi_cuda_constant (plan, b, error) == NULL)
    return FALSE;
  cond = cbi_cuda_constant (plan, n->inputs[2], error);
  if (cond == NULL)
    return FALSE;
  s = CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_where, CbiCudaWhere);
  s->b = plan->tensors[b];
  s->cond = cond;
  s->rank = as->n_dims;
  memcpy (s->dims, as->dims, as->n_dims * sizeof (gint64));
  cbi_broadcast_strides (as->n_dims, bs->n_dims, bs->dims, s->b_strides);
  cbi_broadcast_strides (as->n_dims, cs->n_dims, cs->dims, s->c_strides);
  return TRUE;
}
