/* cudabatchinfer: the CUDA backend's convolutions
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Conv and ConvTranspose through cuDNN (its FP32 FMA math, no TF32, so
 * results stay within float rounding of the CPU backend), bias and a
 * fused activation in one kernel after it. ConvTranspose is the data
 * gradient of the convolution that maps its output back to its input.
 */
#include "cbicuda.h"

typedef struct
{
  CbiCudaDescs desc;
  CbiCudaIO io;
  const gfloat *w;
  gboolean transpose;
  cudnnConvolutionFwdAlgo_t fwd_algo;
  cudnnConvolutionBwdDataAlgo_t bwd_algo;
} CbiCudaConv;

/* One call per chunk of frames where the batch is past cuDNN's limit
 * (CbiCudaDescs), each with the same algorithm and workspace. */
static gboolean
cbi_cuda_run_conv (CbiCuda * cuda, CbiCudaPlan * plan, gconstpointer params,
    cudaStream_t stream, GError ** error)
{
  const CbiCudaConv *c = params;
  gint64 k;

  for (k = 0; k < c->desc.calls; k++) {
    const gfloat *x = c->io.x + k * c->desc.x_step;
    gfloat *y = c->io.y + k * c->desc.y_step;
    if (c->transpose ?
        !CUDNN_CHECK (cudnnConvolutionBackwardData (cuda->cudnn,
                &cbi_cuda_one, c->desc.w, c->w, c->desc.x, x, c->desc.conv,
                c->bwd_algo, plan->workspace, plan->workspace_bytes,
                &cbi_cuda_zero, c->desc.y, y), "transposed convolution") :
        !CUDNN_CHECK (cudnnConvolutionForward (cuda->cudnn, &cbi_cuda_one,
                c->desc.x, x, c->desc.w, c->w, c->desc.conv, c->fwd_algo,
                plan->workspace, plan->workspace_bytes, &cbi_cuda_zero,
                c->desc.y, y), "convolution"))
      return FALSE;
  }
  return TRUE;
}

/* What cuDNN says the chosen algorithm needs (the search's and
 * heuristics' figures are hints). */
static gboolean
cbi_cuda_conv_workspace (CbiCuda * cuda, gconstpointer params, gsize * bytes,
    GError ** error)
{
  const CbiCudaConv *c = params;

  if (c->transpose)
    return CUDNN_CHECK (cudnnGetConvolutionBackwardDataWorkspaceSize
        (cuda->cudnn, c->desc.w, c->desc.x, c->desc.conv, c->desc.y,
            c->bwd_algo, bytes), "workspace size");
  return CUDNN_CHECK (cudnnGetConvolutionForwardWorkspaceSize (cuda->cudnn,
          c->desc.x, c->desc.w, c->desc.conv, c->desc.y, c->fwd_algo, bytes),
      "workspace size");
}

/* y += bias[c], then the fused activation @post */
typedef struct
{
  gfloat *y;
  const gfloat *b;              /* nullable */
  gint64 n, c, hw;
  CbiKEltwise post;
  gfloat alpha, beta;
} CbiCudaBiasAct;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_bias_act, CbiCudaBiasAct, CUDA_CHECK, "bias",
    cbi_k_bias_act (p->y, p->b, p->n, p->c, p->hw, p->post, p->alpha,
        p->beta, stream))
/* *INDENT-ON* */

/* The bytes a workspace may take: what the memory limit leaves the
 * pool, or without one what the device has free. */
static guint64
cbi_cuda_workspace_budget (CbiCudaPlan * plan)
{
  const guint64 limit = cbi_pool_get_limit (plan->pool);
  size_t free_bytes = 0, total = 0;
  CbiPoolStats st;

  if (limit > 0) {
    cbi_pool_get_stats (plan->pool, &st);
    return limit > st.reserved_bytes ? limit - st.reserved_bytes : 0;
  }
  if (cudaMemGetInfo (&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError ();
    return G_MAXUINT64;
  }
  return free_bytes;
}

/* Of @found ranked candidates (@perf, cuDNN's Perf structs), the first
 * that can run and whose workspace fits @budget: its index, or -1. */
#define CBI_CUDA_FIRST_FITTING(perf, found, budget, best) G_STMT_START {     \
  gboolean _ok[G_N_ELEMENTS (perf)];                                        \
  gsize _bytes[G_N_ELEMENTS (perf)];                                        \
  gint _i;                                                                  \
  for (_i = 0; _i < (found); _i++) {                                        \
    _ok[_i] = (perf)[_i].status == CUDNN_STATUS_SUCCESS;                    \
    _bytes[_i] = (perf)[_i].memory;                                         \
  }                                                                         \
  (best) = cbi_cuda_first_fitting (_ok, _bytes, (found), (budget));         \
} G_STMT_END

/* The algorithm for @c: the fastest that can run (@exhaustive: cuDNN
 * times them on the plan's tensors, with workspaces up to the search's)
 * or the heuristics' best ranked one whose workspace fits what the
 * budget has left; @ws receives its workspace size. */
static gboolean
cbi_cuda_conv_algorithm (CbiCuda * cuda, CbiCudaPlan * plan, CbiCudaConv * c,
    const CbiNode * n, gsize * ws, GError ** error)
{
  const guint64 budget = plan->exhaustive ? plan->search_bytes :
      cbi_cuda_workspace_budget (plan);
  cudnnMathType_t math = CUDNN_FMA_MATH;
  gint found = 0, best = -1;
  gboolean ok;

  if (!c->transpose) {
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    ok = plan->exhaustive ?
        CUDNN_CHECK (cudnnFindConvolutionForwardAlgorithmEx (cuda->cudnn,
            c->desc.x, c->io.x, c->desc.w, c->w, c->desc.conv, c->desc.y,
            c->io.y, G_N_ELEMENTS (perf), &found, perf, plan->workspace,
            plan->search_bytes),
        "convolution algorithm search") :
        CUDNN_CHECK (cudnnGetConvolutionForwardAlgorithm_v7 (cuda->cudnn,
            c->desc.x, c->desc.w, c->desc.conv, c->desc.y, G_N_ELEMENTS (perf),
            &found, perf), "convolution heuristics");
    if (ok)
      CBI_CUDA_FIRST_FITTING (perf, found, budget, best);
    if (best >= 0) {
      c->fwd_algo = perf[best].algo;
      *ws = perf[best].memory;
      math = perf[best].mathType;
    }
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[8];
    ok = plan->exhaustive ?
        CUDNN_CHECK (cudnnFindConvolutionBackwardDataAlgorithmEx
        (cuda->cudnn, c->desc.w, c->w, c->desc.x, c->io.x, c->desc.conv,
            c->desc.y, c->io.y, G_N_ELEMENTS (perf), &found, perf,
            plan->workspace, plan->search_bytes),
        "transposed convolution algorithm search") :
        CUDNN_CHECK (cudnnGetConvolutionBackwardDataAlgorithm_v7 (cuda->cudnn,
            c->desc.w, c->desc.x, c->desc.conv, c->desc.y,
            G_N_ELEMENTS (perf), &found, perf),
        "transposed convolution heuristics");
    if (ok)
      CBI_CUDA_FIRST_FITTING (perf, found, budget, best);
    if (best >= 0) {
      c->bwd_algo = perf[best].algo;
      *ws = perf[best].memory;
      math = perf[best].mathType;
    }
  }
  if (ok && best < 0)
    g_set_error (error, CBI_ERROR, CBI_ERROR_MEMORY, "cuDNN: no %s"
        "convolution algorithm for node %s whose workspace fits the %"
        G_GUINT64_FORMAT " bytes left (of %d it ranked)", c->transpose ?
        "transposed " : "", n->name, budget, found);
  /* the math the algorithm was ranked (or timed) with is the one it runs
   * with: under tf32, cuDNN's default lets it choose tensor cores */
  if (ok && best >= 0 && plan->tf32) {
    ok = CUDNN_CHECK (cudnnSetConvolutionMathType (c->desc.conv, math),
        "math type");
    plan->tf32_ops += math != CUDNN_FMA_MATH;
  }
  return ok && best >= 0;
}

gboolean
cbi_cuda_plan_conv (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  const CbiTensorInfo *w = cbi_graph_tensor (plan->model, n->inputs[1]);
  gboolean transpose = n->op == CBI_OP_CONV_TRANSPOSE;
  gint out = post ? post->output : n->output;
  const CbiShape *xs = &plan->shapes[n->inputs[0]], *ys = &plan->shapes[out];
  CbiConvAttrs conv = n->conv;
  const CbiConvAttrs *a = &conv;
  const gfloat *x = plan->tensors[n->inputs[0]];
  gint64 ph, pw;
  CbiShape padded = *xs, full = *ys;
  gint64 crop[4] = { 0, 0, 0, 0 };
  gfloat *y = plan->tensors[out];
  CbiCudaConv *c;
  gsize ws = 0;

  cbi_node_pads (plan->model, n, xs, conv.pads);
  ph = MIN (a->pads[0], a->pads[2]);
  pw = MIN (a->pads[1], a->pads[3]);
  if (transpose) {
    /* cuDNN crops both sides of the full result alike: it makes the
     * result for the smaller crop, a copy cuts the rest from one side.
     * The end's crop is its pad less the output padding (the import
     * refuses an output padding above the pad). */
    const gint64 end_h = a->pads[2] - a->output_padding[0];
    const gint64 end_w = a->pads[3] - a->output_padding[1];
    ph = MIN (a->pads[0], end_h);
    pw = MIN (a->pads[1], end_w);
    crop[0] = a->pads[0] - ph;
    crop[1] = a->pads[1] - pw;
    crop[2] = end_h - ph;
    crop[3] = end_w - pw;
    full.dims[2] += crop[0] + crop[2];
    full.dims[3] += crop[1] + crop[3];
  } else if (a->pads[0] != a->pads[2] || a->pads[1] != a->pads[3]) {
    /* cuDNN pads both sides alike: the extra rows and columns of one side
     * come from a zero-padded copy of the input first (the sub-pixel form
     * of a ConvTranspose pads its bottom and right only) */
    const gint64 extra[4] = { a->pads[0] - ph, a->pads[1] - pw,
      a->pads[2] - ph, a->pads[3] - pw
    };
    gfloat *block;
    padded.dims[2] += extra[0] + extra[2];
    padded.dims[3] += extra[1] + extra[3];
    block = cbi_mem_plan_alloc (plan->memory, cbi_shape_count (&padded) *
        sizeof (gfloat), n->name, error);
    if (block == NULL)
      return FALSE;
    cbi_cuda_add_pad (plan, n, x, block, xs->dims[0] * xs->dims[1],
        xs->dims[2], xs->dims[3], extra, CBI_K_PAD_CONSTANT, 0.0f);
    x = block;
    xs = &padded;
  }
  if (crop[0] + crop[1] + crop[2] + crop[3] > 0 && (y =
          cbi_mem_plan_alloc (plan->memory, cbi_shape_count (&full) *
              sizeof (gfloat), n->name, error)) == NULL)
    return FALSE;
  c = cbi_cuda_add_step (plan, n, cbi_cuda_run_conv, sizeof (CbiCudaConv));
  cbi_cuda_last_step (plan)->clear = cbi_cuda_descs_clear;
  cbi_cuda_last_step (plan)->workspace = cbi_cuda_conv_workspace;
  c->io.x = x;
  c->io.y = y;
  c->transpose = transpose;
  if ((c->w = cbi_cuda_constant (plan, n->inputs[1], error)) == NULL)
    return FALSE;
  /* transposed weights are (in, out / group, h, w): the filter of the
   * forward convolution from the output's channels to the input's */
  if (!cbi_cuda_descs_init (&c->desc, n, xs, &full, error)
      || !CUDNN_CHECK (cudnnCreateFilterDescriptor (&c->desc.w), "filter")
      || !CUDNN_CHECK (cudnnSetFilter4dDescriptor (c->desc.w,
              CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, w->dims[0], w->dims[1],
              w->dims[2], w->dims[3]), "filter desc")
      || !CUDNN_CHECK (cudnnCreateConvolutionDescriptor (&c->desc.conv),
          "convolution desc")
      || !CUDNN_CHECK (cudnnSetConvolution2dDescriptor (c->desc.conv,
              ph, pw, a->strides[0], a->strides[1],
              a->dilations[0], a->dilations[1], CUDNN_CROSS_CORRELATION,
              CUDNN_DATA_FLOAT), "convolution desc")
      || !CUDNN_CHECK (cudnnSetConvolutionGroupCount (c->desc.conv,
              a->group), "group count")
      /* in float32 no TF32: the results stay within float rounding of
       * the CPU's; under tf32, cuDNN's default lets tensor cores take it */
      || !CUDNN_CHECK (cudnnSetConvolutionMathType (c->desc.conv,
              plan->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH), "math type")
      || !cbi_cuda_conv_algorithm (plan->cuda, plan, c, n, &ws, error))
    return FALSE;
  plan->workspace_bytes = MAX (plan->workspace_bytes, ws);

  if (y != plan->tensors[out]) {
    /* the crop: a pad by minus the extra rows and columns */
    const gint64 cut[4] = { -crop[0], -crop[1], -crop[2], -crop[3] };
    cbi_cuda_add_pad (plan, n, y, plan->tensors[out],
        full.dims[0] * full.dims[1], full.dims[2], full.dims[3], cut,
        CBI_K_PAD_CONSTANT, 0.0f);
  }
  if ((n->n_inputs > 2 && n->inputs[2] >= 0) || post) {
    CbiCudaBiasAct *e = cbi_cuda_add_step (plan, n, cbi_cuda_run_bias_act,
        sizeof (CbiCudaBiasAct));
    e->y = plan->tensors[out];
    if (n->n_inputs > 2 && n->inputs[2] >= 0 && (e->b =
            cbi_cuda_constant (plan, n->inputs[2], error)) == NULL)
      return FALSE;
    e->n = ys->dims[0];
    e->c = ys->dims[1];
    e->hw = ys->dims[2] * ys->dims[3];
    e->post = post ? cbi_op_info (post->op)->eltwise : CBI_K_IDENTITY;
    e->alpha = post ? post->alpha : 0.0f;
    e->beta = post ? post->beta : 0.0f;
  }
  return TRUE;
}
