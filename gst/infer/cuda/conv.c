/* cudabatchinfer: the CUDA backend's convolutions
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Conv and ConvTranspose through cuDNN (its FP32 FMA math, no TF32, so
 * results stay within float rounding of the CPU backend), bias and a
 * fused activation in one kernel after it. ConvTranspose is the data
 * gradient of the convolution that maps its output back to its input.
 *
 * Under fp16 and bf16, a convolution that computes many products per
 * value it reads and writes takes 16-bit operands, channels last, on
 * tensor cores with float32 sums: one kernel writes its input so
 * (to-half.cu), its filter is converted once at planning, and the kernel
 * that brings its result back to float32 NCHW (from-half.cu) adds the
 * bias and the activation, the pass float32 makes anyway. Every other op
 * stays float32: a thin or depthwise convolution is bound by memory, and
 * the conversions would cost what the tensor cores save.
 */
#include "cbicuda.h"

#include <string.h>

/* a convolution takes 16-bit operands where it computes at least this
 * many products per value it reads and writes: each of those values is a
 * pass of a conversion kernel */
#define CBI_CUDA_HALF_PRODUCTS_PER_VALUE 64
/* and its channels fill the tensor cores' rows of 8 */
#define CBI_CUDA_HALF_CHANNELS 8

/* @x, @y and @w are float32 NCHW, or @elem_bytes 2: 16-bit channels last */
typedef struct
{
  CbiCudaDescs desc;
  gconstpointer x;
  gpointer y;
  gconstpointer w;
  gsize elem_bytes;
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
    gconstpointer x = (const guint8 *) c->x + k * c->desc.x_step *
        c->elem_bytes;
    gpointer y = (guint8 *) c->y + k * c->desc.y_step * c->elem_bytes;
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

/* a 16-bit convolution's input, float32 NCHW to channels last */
typedef struct
{
  const gfloat *x;
  guint16 *y;
  gint64 n, c, hw;
  CbiKHalf type;
} CbiCudaToHalf;

/* its result back, y = post (x + bias[c]) */
typedef struct
{
  const guint16 *x;
  gfloat *y;
  const gfloat *b;              /* nullable */
  gint64 n, c, hw;
  CbiKHalf type;
  CbiKEltwise post;
  gfloat alpha, beta;
} CbiCudaFromHalf;

/* *INDENT-OFF* */
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_bias_act, CbiCudaBiasAct, CUDA_CHECK, "bias",
    cbi_k_bias_act (p->y, p->b, p->n, p->c, p->hw, p->post, p->alpha,
        p->beta, stream))
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_to_half, CbiCudaToHalf, CUDA_CHECK,
    "conversion to 16 bits", cbi_k_to_half (p->x, p->y, p->n, p->c, p->hw,
        p->type, stream))
CBI_CUDA_DEFINE_RUN (cbi_cuda_run_from_half, CbiCudaFromHalf, CUDA_CHECK,
    "conversion from 16 bits", cbi_k_from_half (p->x, p->y, p->b, p->n, p->c,
        p->hw, p->type, p->post, p->alpha, p->beta, stream))
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
            c->desc.x, c->x, c->desc.w, c->w, c->desc.conv, c->desc.y,
            c->y, G_N_ELEMENTS (perf), &found, perf, plan->workspace,
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
        (cuda->cudnn, c->desc.w, c->w, c->desc.x, c->x, c->desc.conv,
            c->desc.y, c->y, G_N_ELEMENTS (perf), &found, perf,
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
   * with: under tf32, cuDNN's default lets it choose tensor cores; 16-bit
   * operands are low precision whatever the math */
  if (ok && best >= 0 && (plan->tf32 || c->elem_bytes == 2)) {
    ok = CUDNN_CHECK (cudnnSetConvolutionMathType (c->desc.conv, math),
        "math type");
    plan->low_precision_ops += c->elem_bytes == 2 || math != CUDNN_FMA_MATH;
  }
  return ok && best >= 0;
}

/* The shapes cuDNN sees for convolution @n: its input padded where
 * the pads differ between sides, its output before a transposed one's
 * crop. */
typedef struct
{
  CbiShape x, y;                /* padded input, full output */
  gint64 ph, pw;                /* the pads cuDNN applies on both sides */
  gint64 extra[4];              /* what a pad adds to the input first, and */
  gint64 crop[4];               /* what a crop cuts from the result after:
                                 * top, left, bottom, right */
} CbiCudaConvGeometry;

static void
cbi_cuda_conv_geometry (CbiCudaPlan * plan, const CbiNode * n,
    CbiCudaConvGeometry * g)
{
  CbiConvAttrs conv = n->conv;
  const CbiConvAttrs *a = &conv;

  memset (g, 0, sizeof (*g));
  g->x = plan->shapes[n->inputs[0]];
  g->y = plan->shapes[n->output];
  cbi_node_pads (plan->model, n, &g->x, conv.pads);
  g->ph = MIN (a->pads[0], a->pads[2]);
  g->pw = MIN (a->pads[1], a->pads[3]);
  if (n->op == CBI_OP_CONV_TRANSPOSE) {
    /* cuDNN crops both sides of the full result alike: it makes the
     * result for the smaller crop, a copy cuts the rest from one side.
     * The end's crop is its pad less the output padding (the import
     * refuses an output padding above the pad). */
    const gint64 end_h = a->pads[2] - a->output_padding[0];
    const gint64 end_w = a->pads[3] - a->output_padding[1];
    g->ph = MIN (a->pads[0], end_h);
    g->pw = MIN (a->pads[1], end_w);
    g->crop[0] = a->pads[0] - g->ph;
    g->crop[1] = a->pads[1] - g->pw;
    g->crop[2] = end_h - g->ph;
    g->crop[3] = end_w - g->pw;
    g->y.dims[2] += g->crop[0] + g->crop[2];
    g->y.dims[3] += g->crop[1] + g->crop[3];
  } else if (a->pads[0] != a->pads[2] || a->pads[1] != a->pads[3]) {
    /* cuDNN pads both sides alike: the extra rows and columns of one side
     * come from a zero-padded copy of the input first (the sub-pixel form
     * of a ConvTranspose pads its bottom and right only) */
    g->extra[0] = a->pads[0] - g->ph;
    g->extra[1] = a->pads[1] - g->pw;
    g->extra[2] = a->pads[2] - g->ph;
    g->extra[3] = a->pads[3] - g->pw;
    g->x.dims[2] += g->extra[0] + g->extra[2];
    g->x.dims[3] += g->extra[1] + g->extra[3];
  }
}

static gboolean
cbi_cuda_is_conv (const CbiNode * n)
{
  return n->op == CBI_OP_CONV || n->op == CBI_OP_CONV_TRANSPOSE;
}

/* Whether convolution @n of @g takes 16-bit operands in this plan. */
static gboolean
cbi_cuda_conv_in_half (CbiCudaPlan * plan, const CbiNode * n,
    const CbiCudaConvGeometry * g)
{
  const CbiTensorInfo *w = cbi_graph_tensor (plan->model, n->inputs[1]);
  const gint64 group = MAX (n->conv.group, 1);
  /* Conv weights are (out, in / group, kh, kw), ConvTranspose's (in,
   * out / group, kh, kw) */
  const gint64 in = n->op == CBI_OP_CONV ? w->dims[1] : w->dims[0] / group;
  const gint64 out = n->op == CBI_OP_CONV ? w->dims[0] / group : w->dims[1];
  /* each output value of a Conv sums in x kh x kw products; each input
   * value of a ConvTranspose spreads to (out / group) x kh x kw (its
   * output values sum fewer where it strides) */
  gdouble products = (gdouble) w->dims[1] * w->dims[2] * w->dims[3]
      * cbi_shape_count (n->op == CBI_OP_CONV ? &g->y : &g->x);

  return plan->half && in % CBI_CUDA_HALF_CHANNELS == 0
      && out % CBI_CUDA_HALF_CHANNELS == 0
      && products >= CBI_CUDA_HALF_PRODUCTS_PER_VALUE *
      (gdouble) (cbi_shape_count (&g->x) + cbi_shape_count (&g->y));
}

gboolean
cbi_cuda_plan_half_buffers (CbiCudaPlan * plan, GError ** error)
{
  const CbiGraph *graph = plan->model;
  gint64 x = 0, y = 0;
  guint i;

  for (i = 0; plan->half && i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    CbiCudaConvGeometry g;
    if (!cbi_cuda_is_conv (n))
      continue;
    cbi_cuda_conv_geometry (plan, n, &g);
    if (!cbi_cuda_conv_in_half (plan, n, &g))
      continue;
    x = MAX (x, cbi_shape_count (&g.x));
    y = MAX (y, cbi_shape_count (&g.y));
  }
  if (x == 0)
    return TRUE;
  return (plan->half_x = cbi_mem_plan_alloc (plan->memory, x * 2,
          "16-bit convolution inputs", error)) != NULL
      && (plan->half_y = cbi_mem_plan_alloc (plan->memory, y * 2,
          "16-bit convolution results", error)) != NULL;
}

/* The filter of @n in 16 bits, channels last (out, kh, kw, in / group for
 * Conv; ConvTranspose's in and out / group in those places), converted
 * once on the planning stream from the float32 copy @w. */
static guint16 *
cbi_cuda_half_filter (CbiCudaPlan * plan, const CbiNode * n, const gfloat * w,
    GError ** error)
{
  const CbiTensorInfo *info = cbi_graph_tensor (plan->model, n->inputs[1]);
  const gint64 count = cbi_shape_count (&plan->shapes[n->inputs[1]]);
  guint16 *h = cbi_mem_plan_alloc (plan->memory, count * 2,
      "16-bit convolution filters", error);

  /* the launch's status is CUDA's last error: none left from before */
  cudaGetLastError ();
  if (h && !CUDA_CHECK (cbi_k_to_half (w, h, info->dims[0], info->dims[1],
              info->dims[2] * info->dims[3], plan->half_type,
              plan->cuda->stream), "filter conversion"))
    return NULL;
  return h;
}

/* The descriptors of @c for @g: float32 NCHW, or 16-bit channels last
 * with float32 sums. */
static gboolean
cbi_cuda_conv_descs (CbiCudaPlan * plan, CbiCudaConv * c, const CbiNode * n,
    const CbiCudaConvGeometry * g, GError ** error)
{
  const CbiTensorInfo *w = cbi_graph_tensor (plan->model, n->inputs[1]);
  const gboolean half = c->elem_bytes == 2;
  const cudnnDataType_t type = !half ? CUDNN_DATA_FLOAT :
      plan->half_type == CBI_K_HALF_BF16 ? CUDNN_DATA_BFLOAT16 :
      CUDNN_DATA_HALF;
  const cudnnTensorFormat_t format = half ? CUDNN_TENSOR_NHWC :
      CUDNN_TENSOR_NCHW;
  /* in float32 no TF32: the results stay within float rounding of the
   * CPU's; under tf32, cuDNN's default lets tensor cores take it */
  const cudnnMathType_t math = half ? CUDNN_TENSOR_OP_MATH :
      plan->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;

  /* transposed weights are (in, out / group, h, w): the filter of the
   * forward convolution from the output's channels to the input's */
  return cbi_cuda_descs_init_typed (&c->desc, n, &g->x, &g->y, format, type,
      error)
      && CUDNN_CHECK (cudnnCreateFilterDescriptor (&c->desc.w), "filter")
      && CUDNN_CHECK (cudnnSetFilter4dDescriptor (c->desc.w, type, format,
          w->dims[0], w->dims[1], w->dims[2], w->dims[3]), "filter desc")
      && CUDNN_CHECK (cudnnCreateConvolutionDescriptor (&c->desc.conv),
      "convolution desc")
      && CUDNN_CHECK (cudnnSetConvolution2dDescriptor (c->desc.conv,
          g->ph, g->pw, n->conv.strides[0], n->conv.strides[1],
          n->conv.dilations[0], n->conv.dilations[1], CUDNN_CROSS_CORRELATION,
          CUDNN_DATA_FLOAT), "convolution desc")
      && CUDNN_CHECK (cudnnSetConvolutionGroupCount (c->desc.conv,
          n->conv.group), "group count")
      && CUDNN_CHECK (cudnnSetConvolutionMathType (c->desc.conv, math),
      "math type");
}

/* Bias and the fused activation @post in place on @y of shape @ys, where
 * either is there. */
static gboolean
cbi_cuda_add_bias_act (CbiCudaPlan * plan, const CbiNode * n,
    const CbiNode * post, gfloat * y, const CbiShape * ys, GError ** error)
{
  CbiCudaBiasAct *e;

  if ((n->n_inputs <= 2 || n->inputs[2] < 0) && post == NULL)
    return TRUE;
  e = cbi_cuda_add_step (plan, n, cbi_cuda_run_bias_act,
      sizeof (CbiCudaBiasAct));
  e->y = y;
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && (e->b =
          cbi_cuda_constant (plan, n->inputs[2], error)) == NULL)
    return FALSE;
  e->n = ys->dims[0];
  e->c = ys->dims[1];
  e->hw = ys->dims[2] * ys->dims[3];
  e->post = post ? cbi_op_info (post->op)->eltwise : CBI_K_IDENTITY;
  e->alpha = post ? post->alpha : 0.0f;
  e->beta = post ? post->beta : 0.0f;
  return TRUE;
}

/* The 16-bit result of @n back into @y (of shape @ys), with the bias
 * and @post (nullable) where @epilogue. */
static gboolean
cbi_cuda_add_from_half (CbiCudaPlan * plan, const CbiNode * n,
    const CbiNode * post, gboolean epilogue, gfloat * y, const CbiShape * ys,
    GError ** error)
{
  CbiCudaFromHalf *f = cbi_cuda_add_step (plan, n, cbi_cuda_run_from_half,
      sizeof (CbiCudaFromHalf));

  f->x = plan->half_y;
  f->y = y;
  f->n = ys->dims[0];
  f->c = ys->dims[1];
  f->hw = ys->dims[2] * ys->dims[3];
  f->type = plan->half_type;
  f->post = CBI_K_IDENTITY;
  if (!epilogue)
    return TRUE;
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && (f->b =
          cbi_cuda_constant (plan, n->inputs[2], error)) == NULL)
    return FALSE;
  if (post) {
    f->post = cbi_op_info (post->op)->eltwise;
    f->alpha = post->alpha;
    f->beta = post->beta;
  }
  return TRUE;
}

/* Adds the cuDNN step of @n reading @x and writing @y (float32 NCHW), or
 * with @half the plan's 16-bit buffers, and its input's conversion before
 * it; @w: the float32 filter. A 16-bit convolution that cannot be planned
 * (no algorithm of cuDNN's takes its configuration) leaves nothing
 * behind, so that the caller can plan it in float32. */
static gboolean
cbi_cuda_add_conv_step (CbiCudaPlan * plan, const CbiNode * n,
    const CbiCudaConvGeometry * g, gboolean half, const gfloat * x, gfloat * y,
    const gfloat * w, GError ** error)
{
  CbiCudaConv *c = cbi_cuda_add_step (plan, n, cbi_cuda_run_conv,
      sizeof (CbiCudaConv));
  guint16 *filter = NULL;
  CbiCudaToHalf *t;
  gsize ws = 0;
  gboolean ok;

  cbi_cuda_last_step (plan)->clear = cbi_cuda_descs_clear;
  cbi_cuda_last_step (plan)->workspace = cbi_cuda_conv_workspace;
  c->transpose = n->op == CBI_OP_CONV_TRANSPOSE;
  c->elem_bytes = half ? 2 : sizeof (gfloat);
  c->x = half ? (gconstpointer) plan->half_x : x;
  c->y = half ? (gpointer) plan->half_y : y;
  c->w = w;
  ok = (!half || (c->w = filter = cbi_cuda_half_filter (plan, n, w,
              error)) != NULL)
      && cbi_cuda_conv_descs (plan, c, n, g, error)
      && cbi_cuda_conv_algorithm (plan->cuda, plan, c, n, &ws, error);
  if (!ok) {
    if (half) {
      cbi_cuda_descs_clear (c);
      g_free (c);
      g_array_set_size (plan->steps, plan->steps->len - 1);
      if (filter)
        cbi_mem_plan_give_back (plan->memory, filter);
    }
    return FALSE;
  }
  plan->workspace_bytes = MAX (plan->workspace_bytes, ws);
  if (half) {
    /* the conversion of its input, before it */
    CbiCudaStep step = { n->name, cbi_cuda_run_to_half,
      g_malloc0 (sizeof (CbiCudaToHalf)),
    };
    t = step.params;
    t->x = x;
    t->y = plan->half_x;
    t->n = g->x.dims[0];
    t->c = g->x.dims[1];
    t->hw = g->x.dims[2] * g->x.dims[3];
    t->type = plan->half_type;
    g_array_insert_val (plan->steps, plan->steps->len - 1, step);
  }
  return TRUE;
}

gboolean
cbi_cuda_plan_conv (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCudaPlan *plan = user_plan;
  gint out = post ? post->output : n->output;
  const CbiShape *xs = &plan->shapes[n->inputs[0]], *ys = &plan->shapes[out];
  const gfloat *x = plan->tensors[n->inputs[0]];
  gfloat *y = plan->tensors[out];
  const gfloat *w;
  CbiCudaConvGeometry g;
  gboolean half, cropped;
  GError *local = NULL;

  cbi_cuda_conv_geometry (plan, n, &g);
  half = cbi_cuda_conv_in_half (plan, n, &g);
  cropped = g.crop[0] + g.crop[1] + g.crop[2] + g.crop[3] > 0;
  if (g.extra[0] + g.extra[1] + g.extra[2] + g.extra[3] > 0) {
    gfloat *block = cbi_mem_plan_alloc (plan->memory,
        cbi_shape_count (&g.x) * sizeof (gfloat), n->name, error);
    if (block == NULL)
      return FALSE;
    cbi_cuda_add_pad (plan, n, x, block, xs->dims[0] * xs->dims[1],
        xs->dims[2], xs->dims[3], g.extra, CBI_K_PAD_CONSTANT, 0.0f);
    x = block;
  }
  if (cropped && (y = cbi_mem_plan_alloc (plan->memory,
              cbi_shape_count (&g.y) * sizeof (gfloat), n->name,
              error)) == NULL)
    return FALSE;
  if ((w = cbi_cuda_constant (plan, n->inputs[1], error)) == NULL)
    return FALSE;
  if (half && !cbi_cuda_add_conv_step (plan, n, &g, TRUE, x, y, w, &local)) {
    GST_INFO ("node %s: no 16-bit plan (%s): float32", n->name, local->message);
    g_clear_error (&local);
    half = FALSE;
  }
  if (!half && !cbi_cuda_add_conv_step (plan, n, &g, FALSE, x, y, w, error))
    return FALSE;

  /* the result back in float32: with its epilogue where nothing is
   * cropped from it first */
  if (half && !cbi_cuda_add_from_half (plan, n, post, !cropped, y, &g.y, error))
    return FALSE;
  if (cropped) {
    /* the crop: a pad by minus the extra rows and columns */
    const gint64 cut[4] = { -g.crop[0], -g.crop[1], -g.crop[2], -g.crop[3] };
    cbi_cuda_add_pad (plan, n, y, plan->tensors[out],
        g.y.dims[0] * g.y.dims[1], g.y.dims[2], g.y.dims[3], cut,
        CBI_K_PAD_CONSTANT, 0.0f);
  }
  if (half && !cropped)
    return TRUE;
  return cbi_cuda_add_bias_act (plan, n, post, plan->tensors[out], ys, error);
}
