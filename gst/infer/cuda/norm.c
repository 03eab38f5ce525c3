/* cudabatchinfer: the CUDA backend's normalisations
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Softmax and InstanceNormalization, a kernel each (kernels/softmax.cu,
 * instance-norm.cu).
 */
#include "cbicuda.h"

typedef struct
{
  CbiCudaIO io;
  gint64 outer, axis, inner;
} CbiCudaSoftmax;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_softmax, CbiCudaSoftmax, CUDA_CHECK,
    "softmax kernel",
    cbi_k_softmax (p->io.x, p->io.y, p->outer, p->axis, p->inner, stream))
/* *INDENT-ON* */

/* Softmax along one axis: the input seen as outer x axis x inner; the
 * opset < 13 form (mode 1) takes everything from the axis on as one. */
gboolean
cbi_cuda_plan_softmax (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  CbiCudaSoftmax *s =
      CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_softmax, CbiCudaSoftmax);

  cbi_node_softmax_view (n, &plan->shapes[n->inputs[0]], &s->outer,
      &s->axis, &s->inner);
  return TRUE;
}

typedef struct
{
  CbiCudaIO io;
  const gfloat *gamma, *beta;
  gint64 n, c, hw;
  gfloat epsilon;
} CbiCudaInstanceNorm;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_instance_norm, CbiCudaInstanceNorm,
    CUDA_CHECK, "instance norm kernel", cbi_k_instance_norm (p->io.x,
        p->io.y, p->n, p->c, p->hw, p->gamma, p->beta, p->epsilon, stream))
/* *INDENT-ON* */

/* InstanceNormalization, and the Relu the op table lets it take, in
 * place after it. */
gboolean
cbi_cuda_plan_instance_norm (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const gint out = post ? post->output : n->output;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  CbiCudaInstanceNorm *p = cbi_cuda_add_step (plan, n,
      cbi_cuda_run_instance_norm, sizeof (CbiCudaInstanceNorm));

  p->io.x = plan->tensors[n->inputs[0]];
  p->io.y = plan->tensors[out];
  p->n = xs->dims[0];
  p->c = xs->dims[1];
  p->hw = xs->dims[2] * xs->dims[3];
  p->epsilon = n->alpha;
  if ((p->gamma = cbi_cuda_constant (plan, n->inputs[1],
              error)) == NULL
      || (p->beta = cbi_cuda_constant (plan, n->inputs[2], error)) == NULL)
    return FALSE;
  if (post)
    cbi_cuda_add_activation (plan, post, plan->tensors[out],
        cbi_shape_count (xs));
  return TRUE;
}

/* ReduceMean, ReduceSum, ReduceMax of neighbouring axes */
typedef struct
{
  CbiCudaIO io;
  gint64 outer, r, inner;
  CbiKReduce op;
} CbiCudaReduce;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_reduce, CbiCudaReduce, CUDA_CHECK,
    "reduction kernel",
    cbi_k_reduce (p->io.x, p->io.y, p->outer, p->r, p->inner, p->op, stream))
/* *INDENT-ON* */

gboolean
cbi_cuda_plan_reduce (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  gint64 outer, r, inner;
  CbiCudaReduce *s;

  if (!cbi_node_reduce_view (n, &plan->shapes[n->inputs[0]], &outer, &r,
          &inner)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the cuda backend cannot "
        "run node %s (%s): its axes are not neighbours", n->name,
        cbi_op_type_name (n->op));
    return FALSE;
  }
  s = CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_reduce, CbiCudaReduce);
  s->outer = outer;
  s->r = r;
  s->inner = inner;
  s->op = (CbiKReduce) cbi_node_reduce_op (n);
  return TRUE;
}

typedef struct
{
  CbiCudaIO io;
  const gfloat *gamma, *beta;
  gint64 rows, inner;
  gfloat epsilon;
} CbiCudaLayerNorm;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_layer_norm, CbiCudaLayerNorm, CUDA_CHECK,
    "layer norm kernel", cbi_k_layer_norm (p->io.x, p->io.y, p->rows,
        p->inner, p->gamma, p->beta, p->epsilon, stream))
/* *INDENT-ON* */

gboolean
cbi_cuda_plan_layer_norm (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const gboolean bias = n->n_inputs > 2 && n->inputs[2] >= 0;
  CbiCudaLayerNorm *p;
  gfloat *gamma, *beta = NULL;

  gamma = cbi_cuda_constant (plan, n->inputs[1], error);
  if (gamma == NULL || (bias && (beta = cbi_cuda_constant (plan,
                  n->inputs[2], error)) == NULL))
    return FALSE;
  p = CBI_CUDA_ADD_IO_STEP (plan, n, cbi_cuda_run_layer_norm, CbiCudaLayerNorm);
  p->gamma = gamma;
  p->beta = beta;
  p->epsilon = n->alpha;
  cbi_node_layer_norm_view (n, &plan->shapes[n->inputs[0]], &p->rows,
      &p->inner);
  return TRUE;
}
