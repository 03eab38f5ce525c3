/* cudabatchinfer: the CPU backend's ops that move values
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Resize, Concat, Pad (our loop), Reshape, Transpose and DepthToSpace
 * (one reorder each).
 */
#include "cbicpu.h"

#include <string.h>

/* An upsampled graph output (a segmentation's scores): resampled
 * row-major from a row-major copy of the smaller input, by our loop where
 * it is bilinear, else oneDNN's. Resampled into oneDNN's own layout, the
 * whole output was then reordered; from another layout straight into
 * row-major is oneDNN's reference code; and its row-major kernel takes
 * several times longer than our loop, which blends each input row along
 * the width once and then writes the output's rows as blends of two. */
static gboolean
cbi_cpu_plan_upsampled_output (CbiCpuPlan * plan, const CbiNode * n,
    CbiDnnlOp * op, dnnl_exec_arg_t * args, GError ** error)
{
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  const CbiShape *ys = &plan->shapes[n->output];
  dnnl_memory_t to;
  gpointer from = NULL, dst = NULL;

  if ((args[0].memory = cbi_cpu_plain (plan, n->inputs[0], &op->src,
              error)) == NULL || !cbi_cpu_shape_md (plan, &op->dst, ys, error))
    return FALSE;
  if (n->mode != CBI_RESIZE_LINEAR || ys->dims[3] > CBI_CPU_UPSAMPLE_MAX_WIDTH)
    return cbi_cpu_plan_op (plan, op, n, NULL, args, 1, error);
  if ((to = cbi_cpu_new_output (plan, n->output, op->dst, error)) == NULL)
    return FALSE;
  dnnl_memory_get_data_handle (args[0].memory, &from);
  dnnl_memory_get_data_handle (to, &dst);
  cbi_cpu_add_loop (plan, cbi_cpu_run_upsample, cbi_cpu_upsample_new (from,
          dst, xs->dims[0] * xs->dims[1], xs->dims[2], xs->dims[3],
          ys->dims[2], ys->dims[3], n->alpha, n->beta));
  return TRUE;
}

gboolean
cbi_cpu_plan_resize (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  dnnl_alg_kind_t alg = n->mode == CBI_RESIZE_LINEAR ?
      dnnl_resampling_linear : dnnl_resampling_nearest;
  const float factors[2] = { n->alpha, n->beta };
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  CbiDnnlOp op = { CBI_DNNL_RESAMPLING, alg, plan->mds[n->inputs[0]], };

  op.factors = factors;
  if (cbi_graph_is_output (plan->graph, n->output)
      && plan->shapes[n->output].n_dims == 4
      && cbi_shape_count (&plan->shapes[n->output]) >
      cbi_shape_count (&plan->shapes[n->inputs[0]]))
    return cbi_cpu_plan_upsampled_output (plan, n, &op, args, error);
  return cbi_cpu_any_md_as (plan, &op.dst, &plan->shapes[n->output], op.src,
      error)
      && cbi_cpu_plan_op (plan, &op, n, NULL, args, 1, error);
}

gboolean
cbi_cpu_plan_concat (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  CbiMd srcs[CBI_MAX_NODE_INPUTS], dst;
  dnnl_exec_arg_t args[CBI_MAX_NODE_INPUTS];
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  gboolean ok;
  gint64 outer, inner;
  gint axis;
  guint i;
  gboolean bf16 = TRUE;

  /* bfloat16 where every input is (bf16.c); an input of another type than
   * the others (a convolution that found no bfloat16 kernel) joins
   * converted, row-major */
  for (i = 0; i < n->n_inputs; i++) {
    gint t = n->inputs[i];
    bf16 = bf16 && cbi_graph_tensor (plan->graph, t)->data == NULL
        && cbi_md_data_type (plan->mds[t]) == dnnl_bf16;
  }
  for (i = 0; i < n->n_inputs; i++) {
    gint t = n->inputs[i];
    gfloat *data = cbi_graph_tensor (plan->graph, t)->data;
    args[i].arg = DNNL_ARG_MULTIPLE_SRC + i;
    /* a constant joins as it is, row-major */
    if (data && (!cbi_cpu_shape_md (plan, &srcs[i], &plan->shapes[t], error)
            || (args[i].memory = cbi_cpu_memory (plan, srcs[i], data,
                    error)) == NULL))
      return FALSE;
    if (data == NULL && !bf16 && cbi_md_data_type (plan->mds[t]) != dnnl_f32) {
      if ((args[i].memory = cbi_cpu_plain (plan, t, &srcs[i], error)) == NULL)
        return FALSE;
    } else if (data == NULL) {
      srcs[i] = plan->mds[t];
      args[i].memory = plan->mems[t];
    }
  }
  /* shape inference checked the axis */
  axis = cbi_node_concat_view (n, &plan->shapes[n->output], &outer, &inner);
  ok = cbi_cpu_any_md_as (plan, &dst, &plan->shapes[n->output], srcs[0], error)
      && cbi_cpu_attr (NULL, &attr, error)
      && DNNL_CHECK (cbi_dnnl_concat_create (&pd, dst, n->n_inputs, axis,
          srcs, attr, plan->cpu->engine), "concat primitive desc");
  return cbi_cpu_add_primitive_owned (ok, pd, attr, plan, args, n->n_inputs,
      n->output, error);
}

/* The channels-last desc of 4-D @shape. */
gboolean
cbi_cpu_nhwc_md (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    GError ** error)
{
  dnnl_dims_t dims;

  memcpy (dims, shape->dims, 4 * sizeof (gint64));
  return DNNL_CHECK (cbi_md_tag (plan->descs, md, 4, dims, dnnl_acdb),
      "channels-last desc");
}

/* Whether activation @t has the channels-last layout of its 4-D shape in
 * values of @type (bfloat16 where a bfloat16 convolution wrote it so);
 * @md: that desc. */
static gboolean
cbi_cpu_is_nhwc_of (CbiCpuPlan * plan, gint t, dnnl_data_type_t type,
    CbiMd * md)
{
  const CbiShape *s = &plan->shapes[t];
  dnnl_dims_t dims;

  if (s->n_dims != 4)
    return FALSE;
  memcpy (dims, s->dims, 4 * sizeof (gint64));
  return cbi_md_tag_typed (plan->descs, md, 4, dims, type, dnnl_acdb)
      == dnnl_success && dnnl_memory_desc_equal (*md, plan->mds[t]);
}

/* Whether activation @t has the float32 channels-last layout of its 4-D
 * shape, as convolutions leave it; @md: that desc. */
gboolean
cbi_cpu_is_nhwc (CbiCpuPlan * plan, gint t, CbiMd * md)
{
  return cbi_cpu_is_nhwc_of (plan, t, dnnl_f32, md);
}

gboolean
cbi_cpu_plan_pad (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const gint64 *x = plan->shapes[n->inputs[0]].dims;
  const CbiShape *ys = &plan->shapes[n->output];
  CbiMd in_md, out_md;
  dnnl_memory_t in, out;
  gboolean nhwc;
  CbiCpuPad *pad;

  /* channels-last input (what convolutions give here) is padded as it
   * is: a reorder to NCHW and back around the pad cost more than it */
  nhwc = cbi_cpu_is_nhwc (plan, n->inputs[0], &in_md);
  if (nhwc ? !cbi_cpu_nhwc_md (plan, &out_md, ys, error)
      : !cbi_cpu_shape_md (plan, &in_md, &plan->shapes[n->inputs[0]], error)
      || !cbi_cpu_shape_md (plan, &out_md, ys, error))
    return FALSE;
  in = cbi_cpu_in_layout (plan, n->inputs[0], in_md, error);
  out = in ? cbi_cpu_new_output (plan, n->output, out_md, error) : NULL;
  if (out == NULL)
    return FALSE;

  pad = g_new0 (CbiCpuPad, 1);
  dnnl_memory_get_data_handle (in, (void **) &pad->src);
  dnnl_memory_get_data_handle (out, (void **) &pad->dst);
  pad->planes = nhwc ? x[0] : x[0] * x[1];
  pad->pixel = nhwc ? x[1] : 1;
  pad->h = x[2];
  pad->w = x[3];
  pad->top = n->conv.pads[0];
  pad->left = n->conv.pads[1];
  pad->bottom = n->conv.pads[2];
  pad->right = n->conv.pads[3];
  pad->fill = n->mode;
  pad->value = n->alpha;
  cbi_cpu_add_loop (plan, cbi_cpu_run_pad, pad);
  return TRUE;
}

/* Whether view @v reads consecutive elements of its input, in the order
 * of its own row-major walk: one run from its offset on. */
static gboolean
cbi_cpu_view_is_run (const CbiCopyView * v)
{
  gint64 run = 1;
  gint d;

  if (v->axis >= 0)
    return FALSE;
  for (d = v->n_dims - 1; d >= 0; d--) {
    if (v->dims[d] != 1 && v->strides[d] != run)
      return FALSE;
    run *= v->dims[d];
  }
  return TRUE;
}

/* Whether oneDNN runs element-wise node @n, its own op and those merged
 * after it: its primitives keep the type they read. */
static gboolean
cbi_cpu_eltwise_in_onednn (const CbiNode * n)
{
  const CbiEltwiseStep own = { cbi_op_info (n->op)->eltwise, n->alpha,
    n->beta
  };
  CbiCpuEltwise steps[2];

  return cbi_cpu_eltwise_form (&own, steps) > 0
      && cbi_cpu_step_in_onednn (n, NULL);
}

/* How far cbi_cpu_moves_into_products () follows a tensor's readers */
#define CBI_CPU_MOVES_DEPTH 16

/* Every reader of @t a MatMul (or a Gemm's untransposed A), or a
 * Transpose, a Reshape, Squeeze or Unsqueeze, a Gather or Slice of one
 * run (views, no copy), an element-wise op oneDNN runs, each of whose
 * output again moves into products, at most @depth steps on. */
static gboolean
cbi_cpu_moves_within (CbiCpuPlan * plan, gint t, gint depth)
{
  const CbiGraph *graph = plan->graph;
  guint i, k, readers = 0;

  if (!plan->bf16_wide || depth < 0 || cbi_graph_is_output (graph, t))
    return FALSE;
  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *m = cbi_graph_node (graph, i);
    const CbiOpInfo *info = cbi_op_info (m->op);
    for (k = 0; k < m->n_inputs; k++) {
      if (m->inputs[k] != t)
        continue;
      readers++;
      if (m->op == CBI_OP_MATMUL || (m->op == CBI_OP_GEMM && k == 0
              && m->ints[0] == 0))
        continue;
      if (!((m->op == CBI_OP_TRANSPOSE && m->n_ints > 0)
              || info->kind == CBI_OP_KIND_RESHAPE
              || (info->kind == CBI_OP_KIND_COPY && m->op != CBI_OP_EXPAND
                  && cbi_cpu_view_is_run (&m->view))
              || (info->kind == CBI_OP_KIND_ELTWISE
                  && cbi_graph_fused_activation (graph, i) == NULL
                  && cbi_cpu_eltwise_in_onednn (m)))
          || !cbi_cpu_moves_within (plan, m->output, depth - 1))
        return FALSE;
    }
  }
  return readers > 0;
}

gboolean
cbi_cpu_moves_into_products (CbiCpuPlan * plan, gint t)
{
  return cbi_cpu_moves_within (plan, t, CBI_CPU_MOVES_DEPTH);
}

/* Writes @from (desc @from_md, dims S) into activation @out as the
 * row-major tensor of dims O[j] = S[perm[j]], which @out's shape then
 * reads (the same elements, maybe another rank). One reorder: the
 * destination is @from's dims with the strides the permutation gives. */
static gboolean
cbi_cpu_add_permute (CbiCpuPlan * plan, CbiMd from_md, dnnl_memory_t from,
    const gint64 * perm, gint out, dnnl_data_type_t type, GError ** error)
{
  const CbiShape *ys = &plan->shapes[out];
  const gint rank = cbi_md_n_dims (from_md);
  const dnnl_dim_t *from_dims = cbi_md_dims (from_md);
  dnnl_dims_t strides, dims;
  CbiMd view_md, out_md;
  dnnl_memory_t to;
  gint64 stride = 1;
  gint j;

  for (j = rank - 1; j >= 0; j--) {
    strides[perm[j]] = stride;
    stride *= from_dims[perm[j]];
  }
  memcpy (dims, from_dims, rank * sizeof (dnnl_dim_t));
  if (!DNNL_CHECK (cbi_md_strides_typed (plan->descs, &view_md, rank, dims,
              type, strides), "transposed desc")
      || !cbi_cpu_plain_md_typed (plan, &out_md, ys->n_dims, ys->dims,
          ys->n_dims, type, error)
      || (to = cbi_cpu_new_output (plan, out, out_md, error)) == NULL
      || (to = cbi_cpu_view (plan, to, view_md, error)) == NULL)
    return FALSE;
  return cbi_cpu_add_reorder (plan, from_md, from, view_md, to, error);
}

/* Reshape and Flatten: a view of the input where its layout allows one,
 * else one reorder writes the input, whatever its layout, row-major into
 * the output's block. */
gboolean
cbi_cpu_plan_reshape (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  gint x = n->inputs[0];
  CbiMd row_major;
  dnnl_memory_t to;
  dnnl_dims_t from_strides, strides, dims;

  /* a view of the input's block where its layout reads as the output's
   * shape (row-major, or channels last with the channels split or
   * merged) and nothing else reads it after: no copy */
  if (x != plan->graph->input && !cbi_graph_is_output (plan->graph, x)
      && !cbi_graph_is_output (plan->graph, n->output)
      && cbi_mem_plan_readers_left (plan->memory, x) == 1
      && cbi_md_plain_strides (plan->mds[x], from_strides)
      && cbi_shape_view_strides (&plan->shapes[x], from_strides,
          &plan->shapes[n->output], strides)) {
    const CbiShape *ys = &plan->shapes[n->output];
    memcpy (dims, ys->dims, ys->n_dims * sizeof (gint64));
    if (!DNNL_CHECK (cbi_md_strides_typed (plan->descs, &row_major,
                ys->n_dims, dims, cbi_md_data_type (plan->mds[x]), strides),
            "reshape view desc")
        || (to = cbi_cpu_view (plan, plan->mems[x], row_major, error)) == NULL)
      return FALSE;
    plan->mems[n->output] = to;
    plan->mds[n->output] = row_major;
    cbi_mem_plan_hand_over (plan->memory, x, n->output);
    return TRUE;
  }
  if (!cbi_cpu_shape_md (plan, &row_major, &plan->shapes[x], error))
    return FALSE;
  to = cbi_cpu_output_view (plan, n->output, row_major, error);
  return to && cbi_cpu_add_reorder (plan, plan->mds[x], plan->mems[x],
      row_major, to, error);
}

/* DepthToSpace of a channels-last input into a channels-last output, one
 * reorder: both seen through the 6-D view @view of the input (CRD: N, C',
 * b, b, H, W; DCR: N, b, b, C', H, W) with the strides each layout gives
 * it. A row-major DepthToSpace would cost a reorder to row-major before it
 * and one back after it, for the convolution that reads it: as much again
 * as the DepthToSpace, on the text detector's upsampling head. */
static gboolean
cbi_cpu_plan_depth_to_space_nhwc (CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * view, GError ** error)
{
  const gint x = n->inputs[0];
  const gint64 *in = plan->shapes[x].dims;
  const gint64 b = n->ints[0], c = in[1] / (b * b), h = in[2], w = in[3];
  /* where N, C', the row and column phases, H and W sit in @view */
  const gint crd[6] = { 0, 1, 2, 3, 4, 5 }, dcr[6] = { 0, 3, 1, 2, 4, 5 };
  const gint *at = n->mode == 1 ? crd : dcr;
  const dnnl_data_type_t type = cbi_md_data_type (plan->mds[x]);
  dnnl_dims_t from_strides, to_strides, dims, out_dims;
  CbiMd from_md, to_md, out_md;
  dnnl_memory_t from, to;

  memcpy (dims, view->dims, 6 * sizeof (gint64));
  from_strides[at[0]] = h * w * in[1];
  from_strides[at[4]] = w * in[1];
  from_strides[at[5]] = in[1];
  /* the input channel of output channel c and phases i, j (of C' in
   * all): CRD c b b + i b + j, DCR i b C' + j C' + c */
  from_strides[at[1]] = n->mode == 1 ? b * b : 1;
  from_strides[at[2]] = n->mode == 1 ? b : b * c;
  from_strides[at[3]] = n->mode == 1 ? 1 : c;
  /* the output, N x (H b) x (W b) x C' */
  to_strides[at[0]] = h * b * w * b * c;
  to_strides[at[4]] = b * w * b * c;
  to_strides[at[2]] = w * b * c;
  to_strides[at[5]] = b * c;
  to_strides[at[3]] = c;
  to_strides[at[1]] = 1;
  memcpy (out_dims, plan->shapes[n->output].dims, 4 * sizeof (gint64));
  if (!DNNL_CHECK (cbi_md_tag_typed (plan->descs, &out_md, 4, out_dims, type,
              dnnl_acdb), "depth-to-space output desc")
      || !DNNL_CHECK (cbi_md_strides_typed (plan->descs, &from_md, 6, dims,
              type, from_strides), "depth-to-space input view")
      || !DNNL_CHECK (cbi_md_strides_typed (plan->descs, &to_md, 6, dims,
              type, to_strides), "depth-to-space output view"))
    return FALSE;
  from = cbi_cpu_view (plan, plan->mems[x], from_md, error);
  to = from ? cbi_cpu_new_output (plan, n->output, out_md, error) : NULL;
  to = to ? cbi_cpu_view (plan, to, to_md, error) : NULL;
  return to && cbi_cpu_add_reorder (plan, from_md, from, to_md, to, error);
}

/* A Transpose of an input (by @perm) whose layout, read in the permuted
 * order, is the output's row-major or, in 4-D, channels-last layout: a
 * view of the input's block, no copy. A permute to channels last after a
 * convolution that writes channels last, and back after the products
 * that read it row-major (ConvNeXt's blocks), move nothing; the readers
 * take the view in the layouts they read. FALSE, nothing planned, where
 * the layouts differ; else @ok says whether the planning worked. */
static gboolean
cbi_cpu_transpose_view (CbiCpuPlan * plan, const CbiNode * n,
    const gint64 * perm, gboolean * ok, GError ** error)
{
  const CbiGraph *graph = plan->graph;
  const gint x = n->inputs[0];
  const CbiShape *ys = &plan->shapes[n->output];
  dnnl_dims_t from_strides, strides, dims;
  dnnl_data_type_t type;
  CbiMd md, like;
  gint j;

  if (x == graph->input || cbi_graph_is_output (graph, x)
      || cbi_graph_is_output (graph, n->output)
      || cbi_graph_tensor (graph, x)->data != NULL || plan->mems[x] == NULL
      || cbi_md_n_dims (plan->mds[x]) != ys->n_dims
      || !cbi_md_plain_strides (plan->mds[x], from_strides))
    return FALSE;
  type = cbi_md_data_type (plan->mds[x]);
  for (j = 0; j < ys->n_dims; j++) {
    dims[j] = ys->dims[j];
    strides[j] = from_strides[perm[j]];
  }
  if (!DNNL_CHECK (cbi_md_strides_typed (plan->descs, &md, ys->n_dims, dims,
              type, strides), "transposed view desc")
      || !cbi_cpu_plain_md_typed (plan, &like, ys->n_dims, ys->dims,
          ys->n_dims, type, error)) {
    *ok = FALSE;                /* @error is set */
    return TRUE;
  }
  if (!dnnl_memory_desc_equal (md, like)
      && (ys->n_dims != 4 || cbi_md_tag_typed (plan->descs, &like, 4, dims,
              type, dnnl_acdb) != dnnl_success
          || !dnnl_memory_desc_equal (md, like)))
    return FALSE;
  *ok = (plan->mems[n->output] = cbi_cpu_view (plan, plan->mems[x], like,
          error)) != NULL;
  if (!*ok)
    return TRUE;
  plan->mds[n->output] = like;
  /* alone reading it, the output takes the block over (a convolution may
   * then write into it in place); else the block stays until both
   * tensors' readers are planned */
  if (cbi_mem_plan_readers_left (plan->memory, x) == 1)
    cbi_mem_plan_hand_over (plan->memory, x, n->output);
  else
    cbi_mem_plan_view (plan->memory, x, n->output);
  return TRUE;
}

/* Transpose reorders its input, whatever its layout; DepthToSpace reads a
 * channels-last input as it is, else first needs it row-major, to view it
 * in 6-D. */
gboolean
cbi_cpu_plan_permute (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  gint x = n->inputs[0];
  CbiMd from_md = plan->mds[x], md;
  dnnl_memory_t from = plan->mems[x];
  gint64 perm[CBI_MAX_DIMS];
  CbiShape view;
  gboolean ok = FALSE;

  cbi_node_permutation (n, &plan->shapes[x], &view, perm);
  if (n->op == CBI_OP_TRANSPOSE && cbi_cpu_transpose_view (plan, n, perm,
          &ok, error))
    return ok;
  if (n->op == CBI_OP_DEPTH_TO_SPACE && cbi_cpu_is_nhwc_of (plan, x,
          cbi_md_data_type (from_md), &md))
    return cbi_cpu_plan_depth_to_space_nhwc (plan, n, &view, error);
  if (n->op == CBI_OP_DEPTH_TO_SPACE
      && ((from = cbi_cpu_plain (plan, x, &md, error)) == NULL
          || !cbi_cpu_shape_md (plan, &from_md, &view, error)
          || (from = cbi_cpu_view (plan, from, from_md, error)) == NULL))
    return FALSE;
  /* a query, key or values on their way to an attention's products: the
   * reorder that moves them converts them too, where the product would
   * convert them in a pass of its own */
  return cbi_cpu_add_permute (plan, from_md, from, perm, n->output,
      n->op == CBI_OP_TRANSPOSE
      && cbi_cpu_moves_into_products (plan, n->output) ? dnnl_bf16 :
      dnnl_f32, error);
}

/* Whether every node that reads activation @t is a convolution or a
 * Concat (and one does): what they take best channels last. */
static gboolean
cbi_cpu_read_channels_last (CbiCpuPlan * plan, gint t)
{
  const GArray *nodes = plan->graph->nodes;
  guint i, j, readers = 0;

  if (cbi_graph_is_output (plan->graph, t))
    return FALSE;
  for (i = 0; i < nodes->len; i++) {
    const CbiNode *m = &g_array_index (nodes, CbiNode, i);
    for (j = 0; j < m->n_inputs; j++) {
      if (m->inputs[j] != t)
        continue;
      if (m->op != CBI_OP_CONV && m->op != CBI_OP_CONCAT)
        return FALSE;
      readers++;
    }
  }
  return readers > 0;
}

/* Writes the part of activation @x at @offsets, of @out's shape, into a
 * new output @out: one reorder from the input in its own layout, seen
 * through a sub-memory desc, into channels last where the readers take it
 * so, else row-major. FALSE, nothing planned, where the input's layout
 * has no such part (a channel block cut through); else @ok says whether
 * the planning worked. */
static gboolean
cbi_cpu_copy_part (CbiCpuPlan * plan, gint x, const dnnl_dims_t offsets,
    gint out, gboolean * ok, GError ** error)
{
  const CbiShape *ys = &plan->shapes[out];
  dnnl_dims_t dims;
  CbiMd part, ymd;
  dnnl_memory_t from, to;

  memcpy (dims, ys->dims, ys->n_dims * sizeof (gint64));
  if (ys->n_dims != cbi_md_n_dims (plan->mds[x])
      || cbi_md_submemory (plan->descs, &part, plan->mds[x], dims,
          offsets) != dnnl_success)
    return FALSE;
  /* a bfloat16 part stays so where its readers take it (bf16.c: a
   * Split's or a Slice's, read by convolutions and Concats) */
  if (ys->n_dims == 4 && cbi_cpu_read_channels_last (plan, out)
      && cbi_md_data_type (part) == dnnl_bf16 && plan->tensor_bf16 != NULL
      && plan->tensor_bf16[out])
    *ok = DNNL_CHECK (cbi_md_tag_typed (plan->descs, &ymd, 4, dims,
            dnnl_bf16, dnnl_acdb), "channels-last desc");
  else
    *ok = ys->n_dims == 4 && cbi_cpu_read_channels_last (plan, out) ?
        cbi_cpu_nhwc_md (plan, &ymd, ys, error) :
        cbi_cpu_shape_md (plan, &ymd, ys, error);
  *ok = *ok
      && (from = cbi_cpu_view (plan, plan->mems[x], part, error)) != NULL
      && (to = cbi_cpu_new_output (plan, out, ymd, error)) != NULL
      && cbi_cpu_add_reorder (plan, part, from, ymd, to, error);
  return TRUE;
}

/* Where the Slice of view @v, of an input of shape @xs, takes a range
 * of steps of one along each axis: the range's start along each into
 * @offsets. */
static gboolean
cbi_cpu_slice_offsets (const CbiCopyView * v, const CbiShape * xs,
    dnnl_dims_t offsets)
{
  gint64 stride = 1, rest = v->offset;
  gint d;

  if (v->axis >= 0 || v->n_dims != xs->n_dims)
    return FALSE;
  for (d = xs->n_dims - 1; d >= 0; d--) {
    if (v->strides[d] != stride && v->dims[d] > 1)
      return FALSE;
    stride *= xs->dims[d];
  }
  for (d = xs->n_dims - 1; d >= 0; d--) {
    offsets[d] = rest % xs->dims[d];
    rest /= xs->dims[d];
  }
  for (d = 0; d < xs->n_dims; d++)
    if (offsets[d] + v->dims[d] > xs->dims[d])
      return FALSE;
  return TRUE;
}

gboolean
cbi_cpu_slice_is_part (const CbiCpuPlan * plan, const CbiNode * n)
{
  dnnl_dims_t offsets;

  return n->op == CBI_OP_SLICE
      && cbi_cpu_slice_offsets (&n->view, &plan->shapes[n->inputs[0]], offsets);
}

/* A Slice or a Gather of one index whose elements lie in one run of a
 * row-major input (the query, key and value of an attention,
 * each a part of one product's output along its first axis): the output
 * is those elements where they are, a view of the input's block, no
 * copy. */
static gboolean
cbi_cpu_plan_part_view (CbiCpuPlan * plan, const CbiNode * n, gboolean * ok,
    GError ** error)
{
  const CbiGraph *graph = plan->graph;
  const gint x = n->inputs[0];
  const CbiShape *xs = &plan->shapes[x], *ys = &plan->shapes[n->output];
  dnnl_data_type_t type;
  CbiMd row_major, out_md;
  guint8 *data = NULL;
  gsize size;

  if (!cbi_cpu_view_is_run (&n->view) || x == graph->input
      || cbi_graph_is_output (graph, x)
      || cbi_graph_is_output (graph, n->output)
      || cbi_graph_tensor (graph, x)->data != NULL || plan->mems[x] == NULL)
    return FALSE;
  type = cbi_md_data_type (plan->mds[x]);
  /* bfloat16 stays so only on its way into products: the other readers
   * of a Gather's or Slice's output take float32 (bf16.c) */
  if ((type != dnnl_f32 && (type != dnnl_bf16
              || !cbi_cpu_moves_into_products (plan, n->output)))
      || !cbi_cpu_plain_md_typed (plan, &row_major, xs->n_dims, xs->dims,
          xs->n_dims, type, NULL)
      || !dnnl_memory_desc_equal (row_major, plan->mds[x]))
    return FALSE;
  size = type == dnnl_bf16 ? 2 : sizeof (gfloat);
  dnnl_memory_get_data_handle (plan->mems[x], (void **) &data);
  *ok = cbi_cpu_plain_md_typed (plan, &out_md, ys->n_dims, ys->dims,
      ys->n_dims, type, error)
      && (plan->mems[n->output] = cbi_cpu_memory (plan, out_md,
          data + n->view.offset * size, error)) != NULL;
  if (*ok) {
    plan->mds[n->output] = out_md;
    cbi_mem_plan_view (plan->memory, x, n->output);
  }
  return TRUE;
}

/* Slice, Gather and Expand: our strided copy of the input, row-major,
 * into a row-major output; a Slice of one range a reorder of that part
 * of the input; a run of a row-major input a view of it. */
gboolean
cbi_cpu_plan_copy (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  CbiMd in_md, out_md;
  dnnl_memory_t in, out;
  CbiCpuCopy *copy;
  dnnl_dims_t offsets;
  gboolean ok = FALSE;

  if (n->op != CBI_OP_EXPAND && cbi_cpu_plan_part_view (plan, n, &ok, error))
    return ok;
  /* a Slice of steps of one (a range along each axis) is a part of the
   * input: read in its own layout, not made row-major first */
  if (n->op == CBI_OP_SLICE
      && cbi_cpu_slice_offsets (&n->view, &plan->shapes[n->inputs[0]], offsets)
      && cbi_cpu_copy_part (plan, n->inputs[0], offsets, n->output, &ok, error))
    return ok;
  in = cbi_cpu_plain (plan, n->inputs[0], &in_md, error);
  out = in && cbi_cpu_shape_md (plan, &out_md, &plan->shapes[n->output],
      error) ? cbi_cpu_new_output (plan, n->output, out_md, error) : NULL;
  if (out == NULL)
    return FALSE;
  copy = g_new0 (CbiCpuCopy, 1);
  dnnl_memory_get_data_handle (in, (void **) &copy->src);
  dnnl_memory_get_data_handle (out, (void **) &copy->dst);
  copy->view = n->view;
  cbi_cpu_add_loop (plan, cbi_cpu_run_copy, copy);
  return TRUE;
}

/* One part of Split: a part of the input in its own layout
 * (cbi_cpu_copy_part ()), else a reorder from the plain input seen
 * through a sub-memory desc of the part's rows into a new plain
 * output. */
gboolean
cbi_cpu_plan_split (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  gint64 outer, total, start, inner;
  CbiMd xmd, rows, part, ymd;
  dnnl_memory_t x, y;
  gboolean ok = FALSE;

  cbi_node_split_range (n, &plan->shapes[n->inputs[0]], &outer, &total,
      &start, &inner);
  {
    const CbiShape *xs = &plan->shapes[n->inputs[0]];
    const gint axis = n->axis < 0 ? n->axis + xs->n_dims : n->axis;
    dnnl_dims_t offsets = { 0, };
    offsets[axis] = start / (total / xs->dims[axis]);
    if (cbi_cpu_copy_part (plan, n->inputs[0], offsets, n->output, &ok, error))
      return ok;
  }
  {
    const gint64 all[2] = { outer, total }, own[2] = { outer, inner };
    const dnnl_dims_t dims = { outer, inner }, offsets = { 0, start };
    x = cbi_cpu_plain (plan, n->inputs[0], &xmd, error);
    if (x == NULL || !cbi_cpu_plain_md (plan, &rows, 2, all, 2, error)
        || !DNNL_CHECK (cbi_md_submemory (plan->descs, &part, rows, dims,
                offsets), "split part desc")
        || !cbi_cpu_plain_md (plan, &ymd, 2, own, 2, error))
      return FALSE;
  }
  x = cbi_cpu_view (plan, x, part, error);
  y = x ? cbi_cpu_new_output (plan, n->output, ymd, error) : NULL;
  return y && cbi_cpu_add_reorder (plan, part, x, ymd, y, error)
      && cbi_cpu_reshape_output (plan, n->output, error);
}
