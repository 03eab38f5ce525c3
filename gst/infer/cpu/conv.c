/* cudabatchinfer: the CPU backend's convolutions
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Conv and ConvTranspose as oneDNN (de)convolutions, weights reordered
 * once to the layout the primitive chose.
 */
#include "cbicpu.h"

#include <string.h>

/* Activation @out was computed with 8 channels for the @shape's fewer:
 * a loop copies the real ones out, plain, where the layout is plain,
 * blocked by 8 or channels last (oneDNN's reorder of a channel slice is a
 * slow reference loop), else that reorder. */
static gboolean
cbi_cpu_narrow (CbiCpuPlan * plan, gint out, const CbiShape * shape,
    GError ** error)
{
  const CbiMd wide = plan->mds[out];
  dnnl_memory_t wide_mem = plan->mems[out], mem;
  dnnl_dims_t dims;
  CbiMd md;
  CbiCpuChannels *ch;
  gint64 block = 0;

  memcpy (dims, cbi_md_dims (wide), 4 * sizeof (gint64));
  if (!DNNL_CHECK (cbi_md_tag (plan->descs, &md, 4, dims, dnnl_nChw8c),
          "blocked desc"))
    return FALSE;
  if (dnnl_memory_desc_equal (md, wide))
    block = 8;
  /* channels last with 8 channels is the same bytes as one block of 8 */
  else if (DNNL_CHECK (cbi_md_tag (plan->descs, &md, 4, dims, dnnl_nhwc),
          "channels-last desc") && dnnl_memory_desc_equal (md, wide))
    block = 8;
  else if (DNNL_CHECK (cbi_md_tag (plan->descs, &md, 4, dims, dnnl_nchw),
          "plain desc") && dnnl_memory_desc_equal (md, wide))
    block = 1;
  if (!cbi_cpu_shape_md (plan, &md, shape, error))
    return FALSE;
  if (block == 0) {
    const dnnl_dims_t origin = { 0, 0, 0, 0 };
    memcpy (dims, shape->dims, 4 * sizeof (gint64));
    if (!DNNL_CHECK (cbi_md_submemory (plan->descs, &plan->mds[out], wide,
                dims, origin), "output channels desc"))
      return FALSE;
    plan->mems[out] = cbi_cpu_view (plan, wide_mem, plan->mds[out], error);
    return plan->mems[out] != NULL;
  }
  mem = cbi_cpu_new_output (plan, out, md, error);
  if (mem == NULL)
    return FALSE;
  ch = g_new0 (CbiCpuChannels, 1);
  cbi_cpu_planes (&ch->io, wide_mem, mem, shape, block);
  ch->src_channels = 8;
  cbi_cpu_add_loop (plan, cbi_cpu_run_channels, ch);
  return TRUE;
}

/* A residual connection after convolution @n: the Add that alone reads
 * its output, the activation @add's other operand is (@tensor: planned
 * already, of the output's shape, with no reader left but the Add: the
 * convolution adds its result to it in place), the activation fused
 * after the Add (@post, nullable) and the tensor the chain ends in
 * (@out). */
typedef struct
{
  const CbiNode *add;
  gint tensor;
  const CbiNode *post;
  gint out;
} CbiCpuResidual;

static gboolean
cbi_cpu_conv_residual (CbiCpuPlan * plan, const CbiNode * n,
    CbiCpuResidual * res)
{
  const CbiGraph *graph = plan->graph;
  CbiCpuEltwise steps[2];
  guint at = 0;
  const CbiNode *add = cbi_cpu_sole_add (graph, n->output, &at);

  if (add == NULL)
    return FALSE;
  res->add = add;
  res->tensor = add->inputs[add->inputs[0] == n->output ? 1 : 0];
  res->post = cbi_graph_fused_activation (graph, at);
  res->out = res->post ? res->post->output : add->output;
  if (cbi_graph_tensor (graph, res->tensor)->data != NULL
      || plan->mems[res->tensor] == NULL || res->tensor == graph->input
      || cbi_graph_is_output (graph, res->tensor)
      || cbi_mem_plan_readers_left (plan->memory, res->tensor) != 1
      || cbi_mem_plan_is_view (plan->memory, res->tensor)
      || !cbi_shape_equal (&plan->shapes[res->tensor], &plan->shapes[n->output])
      || !cbi_shape_equal (&plan->shapes[add->output],
          &plan->shapes[n->output]))
    return FALSE;
  if (res->post) {
    const CbiEltwiseStep own = { cbi_op_info (res->post->op)->eltwise,
      res->post->alpha, res->post->beta
    };
    if (cbi_cpu_eltwise_form (&own, steps) != 1)
      return FALSE;
  }
  return TRUE;
}

/* A 3x3 convolution of stride 1 in float32 runs as Winograd's F(4x4,
 * 3x3) where oneDNN has a kernel for it (AVX-512): a quarter of the
 * multiplications of the direct kernel, which both onnxruntime and
 * OpenVINO run, for results within float32's rounding of it. It is taken
 * where each weight serves enough output values: at least this many
 * channels in and out (with fewer its transforms cost more than they
 * save), and this many output positions in a batch (8 frames of 14x14);
 * and where its memory fits (cbi_cpu_winograd_memory_fits ()). */
#define CBI_CPU_WINOGRAD_MIN_CHANNELS 32
#define CBI_CPU_WINOGRAD_MIN_POSITIONS 1568

static gboolean
cbi_cpu_conv_winograd_pays (const CbiNode * n, const CbiTensorInfo * w,
    const dnnl_dims_t ydims)
{
  const CbiConvAttrs *a = &n->conv;

  return n->op == CBI_OP_CONV && a->group == 1 && w->n_dims == 4
      && w->dims[2] == 3 && w->dims[3] == 3
      && a->strides[0] == 1 && a->strides[1] == 1
      && a->dilations[0] == 1 && a->dilations[1] == 1
      && w->dims[0] >= CBI_CPU_WINOGRAD_MIN_CHANNELS
      && w->dims[1] >= CBI_CPU_WINOGRAD_MIN_CHANNELS
      && ydims[0] * ydims[2] * ydims[3] >= CBI_CPU_WINOGRAD_MIN_POSITIONS;
}

/* Whether Winograd's @pd, for a convolution whose weights take @weights
 * bytes, adds no more memory to @plan than the activations planned before
 * it take: its scratch beyond the plan's largest so far (the transformed
 * tiles, as wide as the channels) and the growth of its weights (a tile's
 * 6x6 for the kernel's 3x3). Past that (a segmentation head of 2048
 * channels at 28x28: 370 MB more, three times the plan's activations) the
 * memory is the dearer of the two. */
static gboolean
cbi_cpu_winograd_memory_fits (CbiCpuPlan * plan,
    const_dnnl_primitive_desc_t pd, gsize weights)
{
  const gsize scratch =
      dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md (pd,
          dnnl_query_scratchpad_md, 0));
  const gsize transformed =
      dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md (pd,
          dnnl_query_weights_md, 0));
  guint64 placed, requested, more;

  cbi_mem_plan_activation_bytes (plan->memory, &placed, &requested);
  more = (scratch > plan->scratch_bytes ? scratch - plan->scratch_bytes : 0)
      + (transformed > weights ? transformed - weights : 0);
  GST_DEBUG ("Winograd's kernel adds %" G_GUINT64_FORMAT " bytes to the %"
      G_GUINT64_FORMAT " of activations so far", more, placed);
  return more <= placed;
}

/* @op's primitive (with @attr) into @pd, in Winograd's algorithm where
 * @op asks for it and oneDNN runs it in a fast kernel, else in @alg,
 * oneDNN's choice; and in the direct algorithm where the primitive made
 * is one of Winograd's kernels (F(4x4,3x3) or F(2x2,3x3); asked for, or
 * oneDNN's own choice for batches of 4 and more) and its memory does not fit (cbi_cpu_winograd_memory_fits () for
 * convolution @n of weights @w). */
static dnnl_status_t
cbi_cpu_conv_create (CbiCpuPlan * plan, const CbiNode * n,
    const CbiTensorInfo * w, CbiDnnlOp * op, const_dnnl_primitive_attr_t attr,
    dnnl_alg_kind_t alg, dnnl_primitive_desc_t * pd)
{
  const gsize weights = w->dims[0] * w->dims[1] * w->dims[2] * w->dims[3]
      * sizeof (gfloat);
  const gchar *impl = NULL;
  dnnl_status_t status = cbi_dnnl_op_create (pd, op, attr,
      plan->cpu->engine);

  if (op->alg == dnnl_convolution_winograd
      && (status != dnnl_success || !cbi_cpu_fast_impl (*pd, &impl))) {
    g_clear_pointer (pd, dnnl_primitive_desc_destroy);
    op->alg = alg;
    status = cbi_dnnl_op_create (pd, op, attr, plan->cpu->engine);
  }
  if (status != dnnl_success || !cbi_cpu_fast_impl (*pd, &impl)
      || strstr (impl, "wino") == NULL
      || cbi_cpu_winograd_memory_fits (plan, *pd, weights))
    return status;
  g_clear_pointer (pd, dnnl_primitive_desc_destroy);
  op->alg = dnnl_convolution_direct;
  return cbi_dnnl_op_create (pd, op, attr, plan->cpu->engine);
}

/* @op's primitive of convolution @n (weights @w) writing onto the
 * residual @res, in its layout, and adding to it (a sum post-op, then
 * the Add's activation), in Winograd's algorithm where @op asks for it
 * and it runs so (cbi_cpu_conv_create ()), else in @alg; FALSE (nothing
 * to free) where oneDNN would run that in its reference code, or not at
 * all. */
static gboolean
cbi_cpu_conv_with_residual (CbiCpuPlan * plan, const CbiNode * n,
    const CbiTensorInfo * w, CbiDnnlOp * op, const CbiCpuResidual * res,
    dnnl_alg_kind_t alg, dnnl_primitive_desc_t * pd,
    dnnl_primitive_attr_t * attr)
{
  const CbiMd dst = op->dst;
  const char *impl = NULL;

  op->dst = plan->mds[res->tensor];
  if (cbi_cpu_attr_residual (res->post, attr, NULL)
      && cbi_cpu_conv_create (plan, n, w, op, *attr, alg, pd) == dnnl_success
      && dnnl_primitive_desc_query (*pd, dnnl_query_impl_info_str, 0,
          &impl) == dnnl_success && impl != NULL
      && !g_str_has_prefix (impl, "ref"))
    return TRUE;
  GST_DEBUG ("the Add %s stays a step of its own (oneDNN: %s)",
      res->add->name, impl ? impl : "no primitive");
  if (*pd)
    dnnl_primitive_desc_destroy (*pd);
  if (*attr)
    dnnl_primitive_attr_destroy (*attr);
  *pd = NULL;
  *attr = NULL;
  op->dst = dst;
  return FALSE;
}

/* A grouped convolution of few channels a group (ResNeXt's 4 to 16) in
 * bfloat16 runs in oneDNN's kernels for vector units, while groups of
 * 32 channels run on a matrix unit (AMX) at many times their rate. Where
 * the CPU has one, runs of groups are merged into one of this many input
 * channels, its weights block-diagonal: the zeros between the merged
 * groups cost multiplications that the rate more than pays for, up to
 * this many times the products. */
#define CBI_CPU_MERGED_GROUP_CHANNELS 32
#define CBI_CPU_MAX_GROUP_MERGE 8

guint
cbi_cpu_conv_group_merge (gint64 groups, gint64 in_per_group)
{
  guint m;

  if (groups < 2 || in_per_group < 2
      || in_per_group >= CBI_CPU_MERGED_GROUP_CHANNELS)
    return 1;
  for (m = 2; m <= CBI_CPU_MAX_GROUP_MERGE && m <= groups; m++)
    if (groups % m == 0 && in_per_group * m >= CBI_CPU_MERGED_GROUP_CHANNELS)
      return m;
  return 1;
}

/* Whether oneDNN runs bfloat16 products on the CPU's matrix unit. */
static gboolean
cbi_cpu_has_matrix_unit (void)
{
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa ();

  return (isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx;
}

/* Weights (out, in / @groups, kh, kw) at @w as those of @groups / @merge
 * groups: (out, in / @groups * @merge, kh, kw), each merged group's
 * filters reading only the channels of the group they come from, zero
 * elsewhere; in @mp's memory. Returns: (transfer none): NULL on failure */
static gfloat *
cbi_cpu_merged_weights (CbiMemPlan * mp, const CbiTensorInfo * w,
    gint64 groups, guint merge, GError ** error)
{
  const gint64 out_per_group = w->dims[0] / groups, in = w->dims[1];
  const gint64 taps = w->dims[2] * w->dims[3];
  const gint64 row = in * merge * taps;
  gfloat *merged = cbi_mem_plan_alloc (mp, w->dims[0] * row * sizeof (gfloat),
      "merged groups' convolution weights", error);
  gint64 o;

  if (merged == NULL)
    return NULL;
  memset (merged, 0, w->dims[0] * row * sizeof (gfloat));
  for (o = 0; o < w->dims[0]; o++) {
    /* the place of output @o's group among those merged with it */
    const gint64 at = (o / out_per_group) % merge;
    memcpy (merged + o * row + at * in * taps, w->data + o * in * taps,
        in * taps * sizeof (gfloat));
  }
  return merged;
}

/* Along axis @d (0: rows, 1: columns) of convolution @n, of stride 1,
 * on input @in into output @out (weights @w, pads @a): the one tap that
 * reads the input at some output position, where every other reads
 * padding at all of them (an ASPP head's rates of 24 and 36 on a 14x14
 * map: all but the centre), else -1. */
static gint64
cbi_cpu_conv_live_tap (const CbiTensorInfo * w, const CbiConvAttrs * a,
    const CbiShape * in, const CbiShape * out, gint d)
{
  const gint64 k = w->dims[2 + d], size = in->dims[2 + d];
  const gint64 span = out->dims[2 + d];
  gint64 t, live = -1;

  if (k < 2 || a->strides[d] != 1)
    return -1;
  for (t = 0; t < k; t++) {
    /* the input positions tap @t reads, over the outputs, one by one */
    const gint64 first = t * a->dilations[d] - a->pads[d];
    if (first + span - 1 < 0 || first > size - 1)
      continue;
    if (live >= 0)
      return -1;
    live = t;
  }
  return live;
}

/* Convolution @n's weights @w and attributes @a without the taps that
 * multiply padding alone (cbi_cpu_conv_live_tap ()): along an axis where
 * one tap is live, a kernel of 1, that tap's weights, the padding less
 * its offset (the output the same). @live receives the weights, in
 * @mp's memory; FALSE where no axis has such taps, or on failure, @error
 * then set. */
static gboolean
cbi_cpu_conv_drop_dead_taps (CbiMemPlan * mp, const CbiNode * n,
    const CbiShape * in, const CbiShape * out, const CbiTensorInfo * w,
    CbiConvAttrs * a, CbiTensorInfo * live, GError ** error)
{
  gint64 tap[2], o, i, y, x, pads[4];
  gint d;

  if (n->op != CBI_OP_CONV || w->n_dims != 4 || w->data == NULL)
    return FALSE;
  memcpy (pads, a->pads, sizeof (pads));
  for (d = 0; d < 2; d++) {
    tap[d] = cbi_cpu_conv_live_tap (w, a, in, out, d);
    if (tap[d] < 0)
      continue;
    pads[d] -= tap[d] * a->dilations[d];
    pads[d + 2] = out->dims[2 + d] - in->dims[2 + d] - pads[d];
    if (pads[d] < 0 || pads[d + 2] < 0)
      tap[d] = -1;
  }
  if (tap[0] < 0 && tap[1] < 0)
    return FALSE;
  *live = *w;
  for (d = 0; d < 2; d++)
    if (tap[d] >= 0)
      live->dims[2 + d] = 1;
  live->data = cbi_mem_plan_alloc (mp, live->dims[0] * live->dims[1]
      * live->dims[2] * live->dims[3] * sizeof (gfloat),
      "convolution weights of live taps", error);
  if (live->data == NULL)
    return FALSE;
  for (o = 0; o < w->dims[0]; o++)
    for (i = 0; i < w->dims[1]; i++)
      for (y = 0; y < live->dims[2]; y++)
        for (x = 0; x < live->dims[3]; x++)
          live->data[((o * live->dims[1] + i) * live->dims[2] + y)
              * live->dims[3] + x] = w->data[((o * w->dims[1] + i)
                  * w->dims[2] + (tap[0] >= 0 ? tap[0] : y)) * w->dims[3]
              + (tap[1] >= 0 ? tap[1] : x)];
  for (d = 0; d < 2; d++) {
    if (tap[d] < 0)
      continue;
    a->pads[d] = pads[d];
    a->pads[d + 2] = pads[d + 2];
    a->dilations[d] = 1;
  }
  return TRUE;
}

/* Whether convolution @m takes bfloat16 operands (bf16.c). */
static gboolean
cbi_cpu_conv_takes_bf16 (CbiCpuPlan * plan, const CbiNode * m)
{
  return plan->conv_bf16 != NULL
      && plan->conv_bf16[m - cbi_graph_node (plan->graph, 0)];
}

/* The dims of convolution @n's weights @w as oneDNN takes them, with
 * runs of @merge groups merged (cbi_cpu_conv_group_merge ()) into
 * @wdims; returns how many there are. */
static gint
cbi_cpu_conv_weight_dims (const CbiNode * n, const CbiTensorInfo * w,
    guint merge, dnnl_dims_t wdims)
{
  const gint64 groups = n->conv.group / merge;
  gint i;

  /* ConvTranspose weights are (in, out, h, w): oneDNN's iohw */
  if (n->op == CBI_OP_CONV_TRANSPOSE) {
    wdims[0] = w->dims[1];
    wdims[1] = w->dims[0];
    wdims[2] = w->dims[2];
    wdims[3] = w->dims[3];
    return 4;
  }
  if (groups == 1) {
    for (i = 0; i < 4; i++)
      wdims[i] = w->dims[i] * (i == 1 ? merge : 1);
    return 4;
  }
  wdims[0] = groups;
  wdims[1] = w->dims[0] / groups;
  wdims[2] = w->dims[1] * merge;
  wdims[3] = w->dims[2];
  wdims[4] = w->dims[3];
  return 5;
}

gboolean
cbi_cpu_plan_conv (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const CbiTensorInfo *w = cbi_graph_tensor (plan->graph, n->inputs[1]);
  const CbiTensorInfo *b = n->n_inputs > 2 && n->inputs[2] >= 0 ?
      cbi_graph_tensor (plan->graph, n->inputs[2]) : NULL;
  gint out = post ? post->output : n->output;
  CbiConvAttrs conv = n->conv;
  const CbiConvAttrs *a = &conv;
  dnnl_dims_t wdims, bdims, xdims, ydims, strides, dil, pad_l, pad_r;
  CbiMd wmd_any, wmd_user, bmd, ymd, xmd;
  gboolean transpose = n->op == CBI_OP_CONV_TRANSPOSE;
  CbiDnnlOp op = { transpose ? CBI_DNNL_DECONVOLUTION : CBI_DNNL_CONVOLUTION,
    transpose ? dnnl_deconvolution_direct : dnnl_convolution_auto,
  };
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_memory_t xmem, wmem, bmem = NULL;
  gfloat *wdata = w->data, *bdata = b ? b->data : NULL;
  gint wnd, i, n_args;
  gboolean ok = FALSE, residual = FALSE, first;
  CbiCpuResidual res;
  CbiTensorInfo live;
  dnnl_exec_arg_t args[4];
  dnnl_data_type_t in_type, out_type;
  dnnl_format_tag_t layout;
  dnnl_alg_kind_t alg;
  gint attempt;
  /* groups merged in bfloat16 (cbi_cpu_conv_group_merge ()), 1 once
   * that has no fast kernel, and those of the primitive made */
  guint merge = !transpose && cbi_cpu_conv_takes_bf16 (plan, n)
      && cbi_cpu_has_matrix_unit ()? cbi_cpu_conv_group_merge (a->group,
      w->dims[1]) : 1;
  const gboolean regroups = merge > 1;
  guint merged = 1;
  void *held;
  /* oneDNN's kernels for fewer than 8 output channels (an image's last
   * layer) are several times slower than for 8: such an output is
   * computed with zero filters up to 8 and read as its first channels */
  const gint64 oc = w->dims[0];
  gboolean widen = !transpose && a->group == 1 && oc < 8
      && cbi_graph_is_output (plan->graph, out);

  cbi_node_pads (plan->graph, n, &plan->shapes[n->inputs[0]], conv.pads);
  if (cbi_cpu_conv_drop_dead_taps (plan->memory, n,
          &plan->shapes[n->inputs[0]], &plan->shapes[n->output], w, &conv,
          &live, error)) {
    w = &live;
    wdata = w->data;
  } else if (error && *error) {
    return FALSE;
  }
  if (widen) {
    gsize filter = w->dims[1] * w->dims[2] * w->dims[3];
    wdata = cbi_mem_plan_alloc (plan->memory, 8 * filter * sizeof (gfloat),
        "widened convolution weights", error);
    bdata = wdata ? cbi_mem_plan_alloc (plan->memory, 8 * sizeof (gfloat),
        "widened convolution bias", error) : NULL;
    if (bdata == NULL)
      return FALSE;
    memset (wdata, 0, 8 * filter * sizeof (gfloat));
    memset (bdata, 0, 8 * sizeof (gfloat));
    memcpy (wdata, w->data, oc * filter * sizeof (gfloat));
    if (b)
      memcpy (bdata, b->data, oc * sizeof (gfloat));
  }

  wnd = cbi_cpu_conv_weight_dims (n, w, 1, wdims);
  for (i = 0; i < 4; i++)
    ydims[i] = plan->shapes[out].dims[i];
  if (widen)
    wdims[0] = ydims[1] = 8;
  for (i = 0; i < 2; i++) {
    strides[i] = a->strides[i];
    dil[i] = a->dilations[i] - 1;       /* oneDNN counts the gaps */
    pad_l[i] = a->pads[i];
    /* extra output rows of ConvTranspose: less padding on that side */
    pad_r[i] = a->pads[i + 2] - a->output_padding[i];
  }
  /* one bias per output channel, whatever the grouping of the weights */
  bdims[0] = ydims[1];
  /* the source too in the layout the primitive prefers: a plain one (after
   * a Pad or an InstanceNormalization) would send it to a slow kernel;
   * but where the convolutions write channel blocks, the image's few
   * channels (the first layer, reading the input) stay as the frames are
   * packed, NCHW, which oneDNN's direct kernel reads as they are into
   * blocks (blocked too, the channels padded to 16 and a Winograd kernel
   * on them: 4x slower), in float32; in channels-last networks the
   * input's reorder and oneDNN's choice cost less than a reorder of the
   * first output. In bfloat16 the image is channels last in both (the
   * loop below). */
  first = !transpose && n->inputs[0] == plan->graph->input
      && plan->shapes[n->inputs[0]].dims[1] <= 4
      && plan->conv_layout != dnnl_format_tag_any;
  if (first)
    op.alg = dnnl_convolution_direct;
  alg = op.alg;
  if (!DNNL_CHECK (cbi_md_tag (plan->descs, &bmd, 1, bdims, dnnl_x),
          "bias desc"))
    goto done;
  op.bias = bdata ? bmd : NULL;
  op.strides = strides;
  op.dilation = dil;
  op.pad_l = pad_l;
  op.pad_r = pad_r;

  /* in bfloat16 (attempt 0, where bf16.c chose it: the image's
   * convolution in the wide plan only, its input then packed in bfloat16
   * channels last: plan.c), the operands are, and the output is where
   * its readers take bfloat16 (the wide plan's classes, the narrow
   * plan's convolutions: bf16.c); float32 (attempt 1) where oneDNN has no
   * fast kernel for those types. The image's in bfloat16 writes channels
   * last in any network: oneDNN's one fast kernel for 3 channels in
   * bfloat16 (brgconv) writes no channel blocks. */
  for (attempt = cbi_cpu_conv_takes_bf16 (plan, n) ? 0 : 1;
      attempt < 2 && pd == NULL; attempt++) {
    const gchar *impl;
    in_type = attempt == 0 ? dnnl_bf16 : dnnl_f32;
    merged = attempt == 0 ? merge : 1;
    if (regroups)
      wnd = cbi_cpu_conv_weight_dims (n, w, merged, wdims);
    memcpy (xdims, plan->shapes[n->inputs[0]].dims, 4 * sizeof (gint64));
    out_type = attempt == 0 && !widen && (plan->bf16_wide ?
        plan->tensor_bf16[out] : cbi_cpu_conv_link (plan->graph, post,
            out)) ? dnnl_bf16 : dnnl_f32;
    /* oneDNN's own choice of layout for bfloat16 is channel blocks: the
     * float32 ops around would reorder each activation they read; in
     * channels last (what it takes for float32 on AVX-512) they read it
     * as it is */
    layout = transpose ? dnnl_format_tag_any : plan->conv_layout;
    if (attempt == 0 && layout == dnnl_format_tag_any)
      layout = dnnl_nhwc;
    if (!(first && attempt == 1 ? cbi_cpu_shape_md (plan, &xmd,
                &plan->shapes[n->inputs[0]], error) :
            DNNL_CHECK (cbi_md_tag_typed (plan->descs, &xmd, 4, xdims,
                    in_type, first ? dnnl_nhwc : attempt == 0 ? layout :
                    dnnl_format_tag_any), "activation desc"))
        || !DNNL_CHECK (cbi_md_tag_typed (plan->descs, &wmd_any, wnd, wdims,
                in_type, dnnl_format_tag_any), "weights desc")
        || !DNNL_CHECK (cbi_md_tag_typed (plan->descs, &ymd, 4, ydims,
                out_type, first && attempt == 0 ? dnnl_nhwc : layout),
            "dst desc"))
      goto done;
    op.src = xmd;
    op.weights = wmd_any;
    op.dst = ymd;
    op.alg = attempt == 1 && !first && !widen
        && cbi_cpu_conv_winograd_pays (n, w, ydims) ?
        dnnl_convolution_winograd : alg;
    /* a residual connection's Add (and its activation) as post-ops: no
     * pass of its own over the output; the Add's planner then finds its
     * output written (cbi_cpu_plan_binary ()) */
    if (!widen && !transpose && post == NULL
        && cbi_cpu_conv_residual (plan, n, &res)
        && cbi_cpu_conv_with_residual (plan, n, w, &op, &res, alg, &pd, &attr)) {
      residual = TRUE;
      out = res.out;
      plan->bf16_ops += attempt == 0;
    } else if (!cbi_cpu_attr_chain (plan, post, &attr, error)) {
      goto done;
    } else if (attempt == 0) {
      if (cbi_dnnl_op_create (&pd, &op, attr, plan->cpu->engine)
          == dnnl_success && cbi_cpu_fast_impl (pd, &impl)) {
        plan->bf16_ops++;
        break;
      }
      GST_DEBUG ("%s stays float32 (oneDNN: %s)", n->name,
          pd && impl ? impl : "no bfloat16 primitive");
      g_clear_pointer (&pd, dnnl_primitive_desc_destroy);
      g_clear_pointer (&attr, dnnl_primitive_attr_destroy);
      /* merged groups with no fast kernel: in bfloat16 as they are */
      if (merged > 1) {
        merge = 1;
        attempt = -1;
      }
    } else if (!DNNL_CHECK (cbi_cpu_conv_create (plan, n, w, &op, attr, alg,
                &pd), "convolution primitive desc")) {
      goto done;
    }
  }

  if (merged > 1) {
    if ((wdata = cbi_cpu_merged_weights (plan->memory, w, a->group, merged,
                error)) == NULL)
      goto done;
    /* the live taps' weights, merged now */
    if (w == &live)
      cbi_mem_plan_give_back (plan->memory, live.data);
  }
  if (!DNNL_CHECK (cbi_md_tag (plan->descs, &wmd_user, wnd, wdims,
              transpose ? dnnl_iohw : wnd == 5 ? dnnl_goihw : dnnl_oihw),
          "weights desc"))
    goto done;
  xmem = cbi_cpu_in_layout_scratch (plan, n->inputs[0],
      dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0), error);
  if (xmem == NULL)
    goto done;
  wmem = cbi_cpu_constant_in (plan, wmd_user,
      dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0), wdata,
      "convolution weights", error);
  if (wmem == NULL)
    goto done;
  /* weights made here (widened, live taps, merged groups) reordered into
   * the primitive's layout: no step reads them as they were */
  if (wdata != cbi_graph_tensor (plan->graph, n->inputs[1])->data
      && dnnl_memory_get_data_handle (wmem, &held) == dnnl_success
      && held != wdata)
    cbi_mem_plan_give_back (plan->memory, wdata);
  if (bdata && (bmem = cbi_cpu_memory (plan, bmd, bdata, error)) == NULL)
    goto done;

  args[0].arg = DNNL_ARG_SRC;
  args[0].memory = xmem;
  args[1].arg = DNNL_ARG_WEIGHTS;
  args[1].memory = wmem;
  n_args = 2;
  if (bmem) {
    args[n_args].arg = DNNL_ARG_BIAS;
    args[n_args++].memory = bmem;
  }
  if (residual) {
    /* the output takes over the residual's block, which nothing reads
     * after the Add */
    plan->mems[out] = plan->mems[res.tensor];
    plan->mds[out] = plan->mds[res.tensor];
    cbi_mem_plan_hand_over (plan->memory, res.tensor, out);
    args[n_args].arg = DNNL_ARG_DST;
    args[n_args++].memory = plan->mems[out];
    ok = cbi_cpu_add_primitive (plan, pd, args, n_args, -1, error);
  } else {
    ok = cbi_cpu_add_primitive (plan, pd, args, n_args, out, error)
        && cbi_cpu_post_own (plan, post, out, error);
  }
  if (ok && widen)
    ok = cbi_cpu_narrow (plan, out, &plan->shapes[out], error);

done:
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}
