/* cudabatchinfer: the CPU backend's Gemm and MatMul
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Both as oneDNN matmul. In a bfloat16 plan, a product that computes
 * many products per value it converts (bf16.c's rules) takes bfloat16
 * operands with float32 sums and output: its activation operands are
 * converted by a reorder before it, constant ones once at planning.
 */
#include "cbicpu.h"

#include <string.h>

/* @md's dims in bfloat16, or float32, row-major. */
static gboolean
cbi_cpu_bf16_md (CbiCpuPlan * plan, CbiMd md, CbiMd * out, GError ** error)
{
  return cbi_cpu_plain_md_typed (plan, out, cbi_md_n_dims (md),
      cbi_md_dims (md), 0, dnnl_bf16, error);
}

static gboolean
cbi_cpu_f32_md (CbiCpuPlan * plan, CbiMd md, CbiMd * out, GError ** error)
{
  return cbi_cpu_plain_md (plan, out, cbi_md_n_dims (md), cbi_md_dims (md),
      0, error);
}

gboolean
cbi_cpu_product_bf16 (CbiCpuPlan * plan, const gchar * name,
    const CbiDnnlOp * op, gfloat * weights, const_dnnl_primitive_attr_t attr,
    dnnl_exec_arg_t * args, dnnl_primitive_desc_t * pd, GError ** error)
{
  CbiDnnlOp low = *op;
  CbiMd wmd_any;
  dnnl_memory_t x, w;
  const gchar *impl;
  dnnl_dims_t dims;
  const gint rank = cbi_md_n_dims (op->weights);

  memcpy (dims, cbi_md_dims (op->weights), rank * sizeof (dnnl_dim_t));
  /* constant weights in the layout oneDNN packs them in */
  if (!cbi_cpu_bf16_md (plan, op->src, &low.src, error)
      || !(weights ? DNNL_CHECK (cbi_md_tag_typed (plan->descs, &wmd_any,
                  rank, dims, dnnl_bf16, dnnl_format_tag_any),
              "weights desc") : cbi_cpu_bf16_md (plan, op->weights,
              &wmd_any, error)))
    return FALSE;
  low.weights = wmd_any;
  if (cbi_dnnl_op_create (pd, &low, attr, plan->cpu->engine) != dnnl_success
      || !cbi_cpu_fast_impl (*pd, &impl)) {
    GST_DEBUG ("%s stays float32 (oneDNN: %s)", name, *pd && impl ? impl :
        "no bfloat16 primitive");
    g_clear_pointer (pd, dnnl_primitive_desc_destroy);
    return FALSE;
  }
  /* the copies only this product reads: their blocks are free for the
   * activations after it; a source that a product wrote in bfloat16
   * (cbi_cpu_plan_matmul ()) is read as it is */
  if (dnnl_memory_desc_equal (op->src, low.src)) {
    x = args[0].memory;
  } else {
    x = cbi_cpu_scratch_memory (plan, low.src, error);
    if (x == NULL || !cbi_cpu_add_reorder (plan, op->src, args[0].memory,
            low.src, x, error))
      goto failed;
  }
  if (weights) {
    w = cbi_cpu_constant_in (plan, op->weights,
        dnnl_primitive_desc_query_md (*pd, dnnl_query_weights_md, 0),
        weights, "matrix product weights", error);
  } else if (dnnl_memory_desc_equal (op->weights, dnnl_primitive_desc_query_md
          (*pd, dnnl_query_weights_md, 0))) {
    /* bfloat16 already, in the layout the kernel reads (a Transpose
     * wrote it so for products, layout.c) */
    w = args[1].memory;
  } else {
    CbiMd wmd = dnnl_primitive_desc_query_md (*pd, dnnl_query_weights_md, 0);
    w = cbi_cpu_scratch_memory (plan, wmd, error);
    if (w && !cbi_cpu_add_reorder (plan, op->weights, args[1].memory, wmd, w,
            error))
      w = NULL;
  }
  if (w == NULL)
    goto failed;
  args[0].memory = x;
  args[1].memory = w;
  return TRUE;

failed:
  g_clear_pointer (pd, dnnl_primitive_desc_destroy);
  return FALSE;
}

/* The step of float32 matrix product @op of node @n (and @post) on
 * @args: where its weights are the constant @weights of a 2-D product,
 * they are packed once, here, in the layout oneDNN's kernel reads (given
 * row-major, oneDNN packs them anew at every call, which takes as long
 * as the product itself: a transformer's projections ran at half
 * speed); as they are where it has no fast kernel for that. */
static gboolean
cbi_cpu_product_f32 (CbiCpuPlan * plan, const CbiDnnlOp * op_in,
    const CbiNode * n, const CbiNode * post, dnnl_exec_arg_t * args,
    gint n_args, gfloat * weights, GError ** error)
{
  const gint out = post ? post->output : n->output;
  CbiDnnlOp f32 = *op_in, packed;
  const CbiDnnlOp *op = &f32;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_dims_t dims;
  const gchar *impl;
  gboolean ok;
  gint i;

  /* a bfloat16 operand or destination (a chain of bfloat16 products,
   * cbi_cpu_plan_matmul (); a Transpose's output, layout.c) where this
   * one stays float32 */
  if (cbi_md_data_type (f32.dst) != dnnl_f32
      && !cbi_cpu_f32_md (plan, f32.dst, &f32.dst, error))
    return FALSE;
  for (i = 0; i < 2; i++) {
    const CbiMd from = i == 0 ? op_in->src : op_in->weights;
    CbiMd *to = i == 0 ? &f32.src : &f32.weights;
    dnnl_memory_t x;
    if (cbi_md_data_type (from) == dnnl_f32)
      continue;
    if (!cbi_cpu_f32_md (plan, from, to, error)
        || (x = cbi_cpu_scratch_memory (plan, *to, error)) == NULL
        || !cbi_cpu_add_reorder (plan, from, args[i].memory, *to, x, error))
      return FALSE;
    args[i].memory = x;
  }
  packed = f32;
  if (weights == NULL || cbi_md_n_dims (op->weights) != 2)
    return cbi_cpu_plan_op (plan, op, n, post, args, n_args, error);
  memcpy (dims, cbi_md_dims (op->weights), 2 * sizeof (dnnl_dim_t));
  ok = DNNL_CHECK (cbi_md_tag (plan->descs, &packed.weights, 2, dims,
          dnnl_format_tag_any), "weights desc")
      && cbi_cpu_attr_chain (plan, post, &attr, error)
      && DNNL_CHECK (cbi_dnnl_op_create (&pd, &packed, attr,
          plan->cpu->engine), "matrix product primitive desc");
  if (ok && !cbi_cpu_fast_impl (pd, &impl)) {
    GST_DEBUG ("%s: weights as they are (oneDNN: %s)", n->name, impl);
    dnnl_primitive_desc_destroy (pd);
    dnnl_primitive_attr_destroy (attr);
    return cbi_cpu_plan_op (plan, op, n, post, args, n_args, error);
  }
  ok = ok && (args[1].memory = cbi_cpu_constant_in (plan, op->weights,
          dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0),
          weights, "matrix product weights", error)) != NULL;
  return cbi_cpu_add_primitive_owned (ok, pd, attr, plan, args, n_args, out,
      error) && cbi_cpu_post_own (plan, post, out, error);
}

/* The step of matrix product @op of node @n (and @post) on @args (src,
 * weights, then bias), in bfloat16 where the plan is and it gains
 * (@products products into @outputs values, @converted values converted
 * in @conversions reorders), else float32 (cbi_cpu_product_f32 ()). On
 * return args[1] holds the weights the step reads. */
static gboolean
cbi_cpu_add_product (CbiCpuPlan * plan, const CbiDnnlOp * op,
    const CbiNode * n, const CbiNode * post, dnnl_exec_arg_t * args,
    gint n_args, gfloat * weights, gdouble products, gdouble outputs,
    gdouble converted, guint conversions, GError ** error)
{
  const gint out = post ? post->output : n->output;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  GError *local = NULL;
  gboolean ok;

  if (!plan->bf16 || !(plan->bf16_wide ? products > 0.0 :
          cbi_cpu_bf16_pays (products, outputs, converted, conversions)))
    return cbi_cpu_product_f32 (plan, op, n, post, args, n_args, weights,
        error);
  if (!cbi_cpu_attr_chain (plan, post, &attr, error)) {
    if (attr)
      dnnl_primitive_attr_destroy (attr);
    return FALSE;
  }
  if (!cbi_cpu_product_bf16 (plan, n->name, op, weights, attr, args, &pd,
          &local)) {
    dnnl_primitive_attr_destroy (attr);
    if (local) {
      g_propagate_error (error, local);
      return FALSE;
    }
    return cbi_cpu_product_f32 (plan, op, n, post, args, n_args, weights,
        error);
  }
  ok = cbi_cpu_add_primitive_owned (TRUE, pd, attr, plan, args, n_args, out,
      error) && cbi_cpu_post_own (plan, post, out, error);
  plan->bf16_ops += ok;
  return ok;
}

/* Whether activation @t is bfloat16 and row-major, as a product that
 * feeds products writes it (cbi_cpu_product_feeds_products ()): @md, the
 * 2-D row-major desc of its rows, then receives its bfloat16 form. */
static gboolean
cbi_cpu_bf16_rows (CbiCpuPlan * plan, gint t, CbiMd * md)
{
  CbiMd rows;

  if (cbi_md_data_type (plan->mds[t]) != dnnl_bf16
      || !cbi_cpu_shape_md (plan, &rows, &plan->shapes[t], NULL)
      || !cbi_cpu_bf16_md (plan, rows, &rows, NULL)
      || !dnnl_memory_desc_equal (rows, plan->mds[t]))
    return FALSE;
  return cbi_cpu_bf16_md (plan, *md, md, NULL);
}

/* Gemm as a oneDNN matmul: alpha folds into a copy of B laid out [K, N],
 * beta C into a bias, both made once here. The bias is one row
 * broadcast over the output where C is (a classifier's head): oneDNN
 * runs a matmul with a bias of the whole output in its reference code. */
static gboolean
cbi_cpu_plan_gemm (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *as = &plan->shapes[n->inputs[0]], *ys =
      &plan->shapes[n->output];
  const gint64 m = ys->dims[0], cols = ys->dims[1];
  const gint64 k = as->dims[n->ints[0] ? 0 : 1];
  const gint64 bias_rows = cbi_gemm_has_bias (n) ?
      cbi_gemm_bias_rows (n, plan->shapes, m) : 0;
  dnnl_dims_t a_dims = { m, k }, a_strides = { k, 1 };
  dnnl_dims_t w_dims = { k, cols }, bias_dims = { bias_rows, cols };
  CbiMd a_plain, bias_md;
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  dnnl_exec_arg_t args[3];
  gfloat *w, *bias = NULL;
  void *read = NULL;

  /* transA: the row-major [K, M] input read with swapped strides */
  if (n->ints[0]) {
    a_strides[0] = 1;
    a_strides[1] = m;
  }
  args[0].arg = DNNL_ARG_SRC;
  if (!DNNL_CHECK (cbi_md_strides (plan->descs, &op.src, 2, a_dims,
              a_strides), "gemm A desc"))
    return FALSE;
  if (!n->ints[0] && cbi_cpu_bf16_rows (plan, n->inputs[0], &op.src))
    /* written in bfloat16 for products (layout.c): read as it is */
    args[0].memory = plan->mems[n->inputs[0]];
  else
    args[0].memory = cbi_cpu_plain (plan, n->inputs[0], &a_plain, error);
  if (args[0].memory == NULL
      || (args[0].memory = cbi_cpu_view (plan, args[0].memory, op.src,
              error)) == NULL)
    return FALSE;

  w = cbi_mem_plan_alloc (plan->memory, k * cols * sizeof (gfloat),
      "gemm weights", error);
  if (w == NULL)
    return FALSE;
  cbi_gemm_weights (plan->graph, n, k, cols, w);
  if (bias_rows > 0) {
    bias = cbi_mem_plan_alloc (plan->memory,
        bias_rows * cols * sizeof (gfloat), "gemm bias", error);
    if (bias == NULL)
      return FALSE;
    cbi_gemm_bias (plan->graph, n, plan->shapes, bias_rows, cols, bias);
  }

  args[1].arg = DNNL_ARG_WEIGHTS;
  args[2].arg = DNNL_ARG_BIAS;
  if (!cbi_cpu_plain_md (plan, &op.weights, 2, w_dims, 2, error)
      || !cbi_cpu_plain_md (plan, &bias_md, 2, bias_dims, 2, error)
      || !cbi_cpu_any_md (plan, &op.dst, ys, error)
      || !(args[1].memory = cbi_cpu_memory (plan, op.weights, w, error))
      || (bias && !(args[2].memory = cbi_cpu_memory (plan, bias_md, bias,
                  error))))
    return FALSE;
  op.bias = bias ? bias_md : NULL;
  if (!cbi_cpu_add_product (plan, &op, n, post, args, bias ? 3 : 2, w,
          (gdouble) m * k * cols, (gdouble) m * cols, (gdouble) m * k, 1,
          error))
    return FALSE;
  /* the product reads a copy of the weights: packed, or bfloat16 */
  dnnl_memory_get_data_handle (args[1].memory, &read);
  if (read != w)
    cbi_mem_plan_give_back (plan->memory, w);
  return TRUE;
}

/* Whether MatMul @n multiplies by constant weights that every batch
 * shares (a [K, N] matrix, or leading ones before it): then its first
 * operand's rows, all its leading dimensions folded, make one 2-D
 * product, whose weights oneDNN packs (cbi_cpu_product_f32 ()). */
static gboolean
cbi_cpu_matmul_shares_weights (CbiCpuPlan * plan, const CbiNode * n)
{
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  const CbiShape *bs = &plan->shapes[n->inputs[1]];
  gint d;

  if (cbi_graph_tensor (plan->graph, n->inputs[1])->data == NULL
      || as->n_dims < 2 || bs->n_dims < 2)
    return FALSE;
  for (d = 0; d < bs->n_dims - 2; d++)
    if (bs->dims[d] != 1)
      return FALSE;
  return TRUE;
}

/* The Add of a bias after MatMul @n (a Linear layer as exporters write
 * it for more than two dimensions: MatMul, then Add of a constant row):
 * the Add alone reads the product, its other operand a constant of one
 * value per column (@bias: [N], or leading ones before it), its output of
 * the product's shape. @post receives the activation fused after the Add
 * (nullable). NULL where @n has no such Add. */
static const CbiNode *
cbi_cpu_matmul_bias (CbiCpuPlan * plan, const CbiNode * n, gint * bias,
    const CbiNode ** post)
{
  const CbiGraph *graph = plan->graph;
  const CbiShape *ys = &plan->shapes[n->output];
  const gint64 cols = ys->dims[ys->n_dims - 1];
  const CbiTensorInfo *c;
  guint at = 0;
  const CbiNode *add = cbi_cpu_sole_add (graph, n->output, &at);
  gint d;

  if (add == NULL)
    return NULL;
  *bias = add->inputs[add->inputs[0] == n->output ? 1 : 0];
  c = cbi_graph_tensor (graph, *bias);
  if (c->data == NULL || c->n_dims < 1 || c->n_dims > ys->n_dims
      || c->dims[c->n_dims - 1] != cols
      || !cbi_shape_equal (&plan->shapes[add->output], ys))
    return NULL;
  for (d = 0; d < c->n_dims - 1; d++)
    if (c->dims[d] != 1)
      return NULL;
  *post = cbi_graph_fused_activation (graph, at);
  /* merged steps after the activation run in place when the Add's turn
   * comes, unless they ran as the product's post-ops (plan->chained):
   * another node planned between the two would change that */
  if (*post && (*post)->n_then > 0)
    return NULL;
  return add;
}

/* Whether the product that writes tensor @out (its activation @post,
 * nullable, fused) may write it in bfloat16: in a wide bfloat16 plan,
 * where every reader of @out is a MatMul by constant weights that every
 * batch shares, reading it as its first operand (a Linear layer's output
 * read by the next Linear layer), or it only moves into products
 * (cbi_cpu_moves_into_products ()), which then take it as it is: no
 * conversion between them; and only oneDNN's steps, no loop of ours,
 * run on it in place. */
static gboolean
cbi_cpu_product_feeds_products (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, gint out)
{
  const CbiGraph *graph = plan->graph;
  guint i, k, readers = 0;

  if (!plan->bf16_wide || cbi_graph_is_output (graph, out)
      || !cbi_cpu_step_in_onednn (n, post))
    return FALSE;
  /* or through Transposes and views (an attention's query, key and
   * values, moved into heads): they keep the type */
  if (cbi_cpu_moves_into_products (plan, out))
    return TRUE;
  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *m = cbi_graph_node (graph, i);
    for (k = 0; k < m->n_inputs; k++) {
      if (m->inputs[k] != out)
        continue;
      if (m->op != CBI_OP_MATMUL || k != 0
          || !cbi_cpu_matmul_shares_weights (plan, m))
        return FALSE;
      readers++;
    }
  }
  return readers > 0;
}

/* MatMul: both operands row-major with leading ones up to the output's
 * rank, where oneDNN broadcasts their batch dimensions; a product by
 * shared constant weights as one 2-D product of all the rows, its output
 * then read in the node's shape, and where an Add of a bias row follows,
 * that bias the product's and the Add's activation its post-op: the Add
 * is no pass of its own (its planner finds its output written). */
static gboolean
cbi_cpu_plan_matmul (CbiCpuPlan * plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  const CbiShape *ys = &plan->shapes[n->output];
  const CbiShape *as = &plan->shapes[n->inputs[0]];
  gfloat *weights = cbi_graph_tensor (plan->graph, n->inputs[1])->data;
  const gboolean rows = cbi_cpu_matmul_shares_weights (plan, n);
  const gint64 k = as->dims[as->n_dims - 1], cols = ys->dims[ys->n_dims - 1];
  const gint64 flat[2][2] = { {cbi_shape_count (as) / k, k}, {k, cols} };
  const gint64 flat_out[2] = { cbi_shape_count (ys) / cols, cols };
  CbiMd md[2], own, bias_md;
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  dnnl_exec_arg_t args[3];
  gdouble products, converted;
  const CbiNode *add = NULL, *add_post = NULL;
  gint i, bias = -1;

  for (i = 0; i < 2; i++) {
    gint t = n->inputs[i];
    const CbiTensorInfo *info = cbi_graph_tensor (plan->graph, t);
    dnnl_memory_t mem;
    if (!(rows ? cbi_cpu_plain_md (plan, &md[i], 2, flat[i], 2, error) :
            cbi_cpu_plain_md (plan, &md[i], plan->shapes[t].n_dims,
                plan->shapes[t].dims, ys->n_dims, error)))
      return FALSE;
    if (info->data)
      mem = cbi_cpu_memory (plan, md[i], info->data, error);
    else if (cbi_cpu_bf16_rows (plan, t, &md[i]))
      /* a product, a softmax (norm.c) or a Transpose (layout.c) wrote it
       * in bfloat16, row-major: read as it is */
      mem = cbi_cpu_view (plan, plan->mems[t], md[i], error);
    else if ((mem = cbi_cpu_plain (plan, t, &own, error)) != NULL)
      mem = cbi_cpu_view (plan, mem, md[i], error);
    if (mem == NULL)
      return FALSE;
    args[i].arg = i == 0 ? DNNL_ARG_SRC : DNNL_ARG_WEIGHTS;
    args[i].memory = mem;
  }
  op.src = md[0];
  op.weights = md[1];
  /* each output value sums K products, K the first operand's last dim */
  products = (gdouble) cbi_shape_count (ys) * as->dims[as->n_dims - 1];
  converted = cbi_shape_count (as) + (weights ? 0.0 :
      cbi_shape_count (&plan->shapes[n->inputs[1]]));
  if (rows && post == NULL)
    add = cbi_cpu_matmul_bias (plan, n, &bias, &add_post);
  if (add) {
    const gint64 bias_dims[2] = { 1, cols };
    if (!cbi_cpu_plain_md (plan, &bias_md, 2, bias_dims, 2, error)
        || (args[2].memory = cbi_cpu_memory (plan, bias_md,
                cbi_graph_tensor (plan->graph, bias)->data, error)) == NULL)
      return FALSE;
    args[2].arg = DNNL_ARG_BIAS;
    op.bias = bias_md;
    /* the product writes what the Add (and its activation) would */
    n = add;
    post = add_post;
  }
  if (rows) {
    const gint out = post ? post->output : n->output;
    /* bfloat16 where the next products read it (their
     * cbi_cpu_product_bf16 () then converts nothing; one that stays
     * float32 writes float32, cbi_cpu_product_f32 ()) */
    if (!cbi_cpu_plain_md (plan, &op.dst, 2, flat_out, 2, error)
        || (cbi_cpu_product_feeds_products (plan, n, post, out)
            && !cbi_cpu_bf16_md (plan, op.dst, &op.dst, error)))
      return FALSE;
    return cbi_cpu_add_product (plan, &op, n, post, args, add ? 3 : 2,
        weights, products, cbi_shape_count (ys), converted, 1, error)
        && cbi_cpu_reshape_output (plan, out, error);
  }
  return cbi_cpu_any_md (plan, &op.dst, ys, error)
      && cbi_cpu_add_product (plan, &op, n, post, args, 2, weights, products,
      cbi_shape_count (ys), converted, weights ? 1 : 2, error);
}

/* Gemm and MatMul. */
gboolean
cbi_cpu_plan_matrix (gpointer user_plan, const CbiNode * n,
    const CbiNode * post, GError ** error)
{
  CbiCpuPlan *plan = user_plan;
  return (n->op == CBI_OP_GEMM ? cbi_cpu_plan_gemm : cbi_cpu_plan_matmul)
      (plan, n, post, error);
}
