/* cudabatchinfer: the CUDA backend's element-wise steps, as planners run
 * a fused activation's own op and the planning loop the ops merged after
 * it (cbiplanner.h's convention)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbicuda.h"

typedef struct
{
  CbiCudaIO io;
  gint64 count;
  CbiKEltwise op;
  gfloat alpha, beta;
} CbiCudaEltwise;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_eltwise, CbiCudaEltwise, CUDA_CHECK,
    "element-wise kernel", cbi_k_eltwise (p->io.x, p->io.y, p->count, p->op,
        p->alpha, p->beta, stream))
/* *INDENT-ON* */

/* Step @step of element-wise node @n from @x into @y. */
static void
cbi_cuda_add_eltwise_step (CbiCudaPlan * plan, const CbiNode * n,
    const CbiEltwiseStep * step, const gfloat * x, gfloat * y, gint64 count)
{
  CbiCudaEltwise *e = cbi_cuda_add_step (plan, n, cbi_cuda_run_eltwise,
      sizeof (CbiCudaEltwise));

  e->io.x = x;
  e->io.y = y;
  e->count = count;
  e->op = step->op;
  e->alpha = step->alpha;
  e->beta = step->beta;
}

/* The own op of element-wise node @n from @x into @y. */
void
cbi_cuda_add_eltwise (CbiCudaPlan * plan, const CbiNode * n,
    const gfloat * x, gfloat * y, gint64 count)
{
  const CbiEltwiseStep first = { cbi_op_info (n->op)->eltwise, n->alpha,
    n->beta
  };

  cbi_cuda_add_eltwise_step (plan, n, &first, x, y, count);
}

void
cbi_cuda_add_activation (CbiCudaPlan * plan, const CbiNode * post,
    gfloat * y, gint64 count)
{
  cbi_cuda_add_eltwise (plan, post, y, y, count);
}

gboolean
cbi_cuda_add_in_place (gpointer user_plan, const CbiNode * n,
    const CbiEltwiseStep * step, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  gfloat *y = plan->tensors[n->output];

  cbi_cuda_add_eltwise_step (plan, n, step, y, y,
      cbi_shape_count (&plan->shapes[n->output]));
  return TRUE;
}
