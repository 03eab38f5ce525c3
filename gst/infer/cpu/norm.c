/* cudabatchinfer: the CPU backend's normalisations
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * InstanceNormalization in our loop (a Relu fused), Softmax as oneDNN's.
 */
#include "cbicpu.h"

#include <string.h>

/* InstanceNormalization, and a Relu after it, in our own loop, in the
 * layout its input has when that is plain, channel-blocked by 8 or 16 or
 * channels-last with 8 or 16 channels (what convolutions give): no
 * reorder either side. */
gboolean
cbi_cpu_plan_instance_norm (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  /* channels-last with 8 or 16 channels is one channel block of that
   * size: the convolutions' NHWC then needs no reorder either side */
  const gint64 channels = plan->shapes[n->inputs[0]].dims[1];
  const struct
  {
    dnnl_format_tag_t tag;
    gint64 block;
  } layouts[] = { {dnnl_nChw16c, 16}, {dnnl_nChw8c, 8},
  {dnnl_nhwc, channels == 8 || channels == 16 ? channels : 0},
  {dnnl_nchw, 1}
  };
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  gint out = post ? post->output : n->output;
  CbiCpuInstanceNorm *norm;
  CbiMd md = NULL;
  dnnl_memory_t in = NULL, mem;
  dnnl_dims_t dims;
  gint64 block = 1;
  guint i;

  if (cbi_graph_tensor (plan->graph, n->inputs[1])->dims[0] != xs->dims[1]
      || cbi_graph_tensor (plan->graph, n->inputs[2])->dims[0] != xs->dims[1]) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "node %s "
        "(InstanceNormalization): scale and B need %" G_GINT64_FORMAT
        " values", n->name, xs->dims[1]);
    return FALSE;
  }
  memcpy (dims, xs->dims, 4 * sizeof (gint64));
  for (i = 0; i < G_N_ELEMENTS (layouts) && in == NULL; i++) {
    if (layouts[i].block == 0)
      continue;
    if (!DNNL_CHECK (cbi_md_tag (plan->descs, &md, 4, dims, layouts[i].tag),
            "instance norm desc"))
      return FALSE;
    if (dnnl_memory_desc_equal (md, plan->mds[n->inputs[0]])) {
      in = plan->mems[n->inputs[0]];
      block = layouts[i].block;
    }
  }
  /* md is plain NCHW now, for any other layout */
  if (in == NULL && (in = cbi_cpu_in_layout (plan, n->inputs[0],
              md, error)) == NULL)
    return FALSE;
  mem = cbi_cpu_new_output (plan, out, md, error);
  if (mem == NULL)
    return FALSE;

  norm = g_new0 (CbiCpuInstanceNorm, 1);
  cbi_cpu_planes (&norm->io, in, mem, xs, block);
  norm->gamma = cbi_graph_tensor (plan->graph, n->inputs[1])->data;
  norm->beta = cbi_graph_tensor (plan->graph, n->inputs[2])->data;
  norm->epsilon = n->alpha;
  norm->relu = post != NULL;
  norm->slope = post ? post->alpha : 0.0f;
  cbi_cpu_add_loop (plan, cbi_cpu_run_instance_norm, norm);
  return TRUE;
}

/* Softmax along one axis; the opset < 13 form normalises the input seen
 * as 2-D, everything from @axis on being one row. Along the last axis,
 * where it only moves into products (cbi_cpu_moves_into_products ():
 * attention's weights, read by the product by the values), it writes
 * bfloat16 in a wide bfloat16 plan: oneDNN's
 * softmax reads float32 and writes bfloat16 in one pass, where the
 * product converted it in a pass of its own. */
gboolean
cbi_cpu_plan_softmax (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  CbiDnnlOp op = { CBI_DNNL_SOFTMAX, dnnl_softmax_accurate,
    plan->mds[n->inputs[0]],
  };
  CbiMd own;
  gint axis = n->axis < 0 ? n->axis + xs->n_dims : n->axis;
  CbiShape rows = { 2, {1, 1} };
  gint64 inner;

  cbi_node_softmax_view (n, xs, &rows.dims[0], &rows.dims[1], &inner);
  if (inner > 1) {
    /* along an axis that is not the last: oneDNN 2.6 runs its reference
     * code there (30x slower than ours on a YOLOv8 head's box
     * distributions) */
    CbiCpuSoftmax *loop = g_new0 (CbiCpuSoftmax, 1);
    dnnl_memory_t x = cbi_cpu_plain (plan, n->inputs[0], &own, error), y;
    y = x && cbi_cpu_shape_md (plan, &own, &plan->shapes[n->output], error) ?
        cbi_cpu_new_output (plan, n->output, own, error) : NULL;
    if (y == NULL) {
      g_free (loop);
      return FALSE;
    }
    dnnl_memory_get_data_handle (x, (void **) &loop->src);
    dnnl_memory_get_data_handle (y, (void **) &loop->dst);
    loop->outer = rows.dims[0];
    loop->axis = rows.dims[1];
    loop->inner = inner;
    cbi_cpu_add_loop (plan, cbi_cpu_run_softmax, loop);
    return TRUE;
  }
  if (n->mode == 1) {
    /* the opset < 13 form: rows of everything from the axis on */
    cbi_node_softmax_view (n, xs, &rows.dims[0], &rows.dims[1], &inner);
    args[0].memory = cbi_cpu_plain (plan, n->inputs[0], &own, error);
    if (args[0].memory == NULL || !cbi_cpu_shape_md (plan, &op.src, &rows,
            error) || (args[0].memory = cbi_cpu_view (plan, args[0].memory,
                op.src, error)) == NULL)
      return FALSE;
    xs = &rows;
    axis = 1;
  }
  op.axis = axis;
  if (n->mode == 0 && cbi_cpu_moves_into_products (plan, n->output)) {
    const gchar *impl;
    dnnl_primitive_desc_t pd = NULL;
    gboolean fast;
    if ((args[0].memory = cbi_cpu_plain (plan, n->inputs[0], &op.src,
                error)) == NULL
        || !cbi_cpu_plain_md_typed (plan, &op.dst, xs->n_dims, xs->dims, 0,
            dnnl_bf16, error))
      return FALSE;
    fast = cbi_dnnl_op_create (&pd, &op, NULL, plan->cpu->engine)
        == dnnl_success && cbi_cpu_fast_impl (pd, &impl);
    if (pd)
      dnnl_primitive_desc_destroy (pd);
    if (fast)
      return cbi_cpu_plan_op (plan, &op, n, NULL, args, 1, error);
    /* no fast kernel writes bfloat16 here: float32, from the row-major
     * copy, as below */
  }
  return cbi_cpu_any_md (plan, &op.dst, xs, error)
      && cbi_cpu_plan_op (plan, &op, n, NULL, args, 1, error)
      && (n->mode == 0 || cbi_cpu_reshape_output (plan, n->output, error));
}

/* ReduceMean, ReduceSum, ReduceMax as a oneDNN reduction of the plain
 * input into its shape with the reduced axes kept as ones, then seen in
 * the output's shape (keepdims 0 drops them). */
gboolean
cbi_cpu_plan_reduce (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const CbiShape *xs = &plan->shapes[n->inputs[0]];
  dnnl_alg_kind_t alg = n->op == CBI_OP_REDUCE_MEAN ? dnnl_reduction_mean :
      n->op == CBI_OP_REDUCE_SUM ? dnnl_reduction_sum : dnnl_reduction_max;
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, NULL} };
  CbiDnnlOp op = { CBI_DNNL_REDUCTION, alg, };
  CbiMd xmd, ymd;
  CbiShape kept = *xs;
  gboolean plane_only = TRUE;
  gint d, i;

  if (n->op == CBI_OP_ARGMAX) {
    /* our loop: oneDNN 2.6 has no index reduction */
    CbiCpuReduce *loop = g_new0 (CbiCpuReduce, 1);
    dnnl_memory_t x = cbi_cpu_plain (plan, n->inputs[0], &xmd, error);
    if (x == NULL || !cbi_cpu_shape_md (plan, &ymd, &plan->shapes[n->output],
            error)
        || cbi_cpu_new_output (plan, n->output, ymd, error) == NULL) {
      g_free (loop);
      return FALSE;
    }
    cbi_node_reduce_view (n, xs, &loop->outer, &loop->r, &loop->inner);
    dnnl_memory_get_data_handle (x, (void **) &loop->src);
    dnnl_memory_get_data_handle (plan->mems[n->output], (void **) &loop->dst);
    loop->op = cbi_node_reduce_op (n);
    cbi_cpu_add_loop (plan, cbi_cpu_run_reduce, loop);
    return TRUE;
  }

  /* the kept shape: every reduced axis 1 */
  for (d = 0; d < xs->n_dims; d++) {
    gboolean reduced = n->n_ints == 0;
    for (i = 0; i < n->n_ints; i++)
      reduced |= n->ints[i] == d || n->ints[i] + xs->n_dims == d;
    if (reduced)
      kept.dims[d] = 1;
    plane_only &= reduced == (d >= 2);
  }
  /* the mean of each plane, kept 4-D (the dynamo exporter's
   * GlobalAveragePool): oneDNN's pooling reads the activation in the
   * layout it has, where a reduction would take it row-major through a
   * reorder */
  if (n->op == CBI_OP_REDUCE_MEAN && plane_only && xs->n_dims == 4
      && plan->shapes[n->output].n_dims == 4) {
    CbiNode pool = *n;
    pool.op = CBI_OP_GLOBAL_AVERAGE_POOL;
    return cbi_cpu_plan_pool (plan, &pool, NULL, error);
  }
  return (args[0].memory = cbi_cpu_plain (plan, n->inputs[0], &op.src, error))
      && cbi_cpu_shape_md (plan, &op.dst, &kept, error)
      && cbi_cpu_plan_op (plan, &op, n, NULL, args, 1, error)
      && cbi_cpu_reshape_output (plan, n->output, error);
}

/* LayerNormalization @n of input @x (row-major float32, as
 * cbi_cpu_plain () gives it), seen as @rows, in our loop into a bfloat16
 * output, which products read as it is. */
static gboolean
cbi_cpu_plan_layer_norm_bf16 (CbiCpuPlan * plan, const CbiNode * n,
    dnnl_memory_t x, const gint64 rows[2], GError ** error)
{
  const CbiShape *ys = &plan->shapes[n->output];
  CbiCpuLayerNorm *loop;
  CbiMd md;
  dnnl_memory_t y;

  if (!cbi_cpu_plain_md_typed (plan, &md, ys->n_dims, ys->dims, ys->n_dims,
          dnnl_bf16, error)
      || (y = cbi_cpu_new_output (plan, n->output, md, error)) == NULL)
    return FALSE;
  loop = g_new0 (CbiCpuLayerNorm, 1);
  dnnl_memory_get_data_handle (x, (void **) &loop->src);
  dnnl_memory_get_data_handle (y, (void **) &loop->dst);
  loop->gamma = cbi_graph_tensor (plan->graph, n->inputs[1])->data;
  loop->beta = n->n_inputs > 2 && n->inputs[2] >= 0 ?
      cbi_graph_tensor (plan->graph, n->inputs[2])->data : NULL;
  loop->rows = rows[0];
  loop->inner = rows[1];
  loop->epsilon = n->alpha;
  cbi_cpu_add_loop (plan, cbi_cpu_run_layer_norm_bf16, loop);
  return TRUE;
}

/* LayerNormalization as oneDNN's over the input seen as rows x inner,
 * the scale and shift one value per position of a row; in a wide
 * bfloat16 plan, where its output moves into products, ours writing
 * bfloat16 (cbi_cpu_plan_layer_norm_bf16 ()). */
gboolean
cbi_cpu_plan_layer_norm (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  const gboolean bias = n->n_inputs > 2 && n->inputs[2] >= 0;
  dnnl_exec_arg_t args[3] = { {DNNL_ARG_SRC, NULL}, {DNNL_ARG_SCALE, NULL},
  {DNNL_ARG_SHIFT, NULL}
  };
  CbiDnnlOp op = { CBI_DNNL_LAYER_NORM, dnnl_alg_kind_undef, };
  CbiMd xmd, vmd;
  gint64 rows[2];
  dnnl_memory_t x;

  cbi_node_layer_norm_view (n, &plan->shapes[n->inputs[0]], &rows[0], &rows[1]);
  x = cbi_cpu_plain (plan, n->inputs[0], &xmd, error);
  if (x != NULL && cbi_cpu_moves_into_products (plan, n->output))
    return cbi_cpu_plan_layer_norm_bf16 (plan, n, x, rows, error);
  if (x == NULL || !cbi_cpu_plain_md (plan, &op.src, 2, rows, 2, error)
      || !cbi_cpu_plain_md (plan, &vmd, 1, &rows[1], 1, error)
      || (args[0].memory = cbi_cpu_view (plan, x, op.src, error)) == NULL
      || (args[1].memory = cbi_cpu_memory (plan, vmd,
              cbi_graph_tensor (plan->graph, n->inputs[1])->data,
              error)) == NULL
      || (bias && (args[2].memory = cbi_cpu_memory (plan, vmd,
                  cbi_graph_tensor (plan->graph, n->inputs[2])->data,
                  error)) == NULL))
    return FALSE;
  op.alpha = n->alpha;
  op.flags = dnnl_use_scale | (bias ? dnnl_use_shift : 0);
  return cbi_cpu_plan_op (plan, &op, n, NULL, args, bias ? 3 : 2, error)
      && cbi_cpu_reshape_output (plan, n->output, error);
}
