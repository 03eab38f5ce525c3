/* cudabatchinfer: the CPU backend's planning
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Memories over pool blocks (activations where the engine's memory plan
 * puts them), descs, reorders, and the plan itself: each node by its op
 * family's planner (one per CbiOpKind).
 */
#include "cbicpu.h"

#include <string.h>

/* Wraps @handle in a dnnl_memory owned by the plan. */
dnnl_memory_t
cbi_cpu_memory (CbiCpuPlan * plan, const dnnl_memory_desc_t * md,
    gpointer handle, GError ** error)
{
  dnnl_memory_t mem = NULL;

  if (!DNNL_CHECK (dnnl_memory_create (&mem, md, plan->cpu->engine, handle),
          "dnnl_memory_create"))
    return NULL;
  g_ptr_array_add (plan->memories, mem);
  return mem;
}

/* A memory for @md with a fresh block from the pool. */
dnnl_memory_t
cbi_cpu_pooled_memory (CbiCpuPlan * plan, const dnnl_memory_desc_t * md,
    const gchar * what, GError ** error)
{
  gpointer block = cbi_mem_plan_alloc (plan->memory,
      dnnl_memory_desc_get_size (md), what, error);

  return block ? cbi_cpu_memory (plan, md, block, error) : NULL;
}

/* A memory for activation @tensor (-1: a copy in another layout), where
 * the memory plan puts it. */
dnnl_memory_t
cbi_cpu_activation (CbiCpuPlan * plan, gint tensor,
    const dnnl_memory_desc_t * md, GError ** error)
{
  gpointer block = cbi_mem_plan_activation (plan->memory, tensor,
      dnnl_memory_desc_get_size (md), error);

  return block ? cbi_cpu_memory (plan, md, block, error) : NULL;
}

/* Adds a step running our loop @run on @loop (transfer full). */
void
cbi_cpu_add_loop (CbiCpuPlan * plan, void (*run) (gconstpointer loop),
    gpointer loop)
{
  CbiCpuStep step = { NULL, 0, };

  step.run = run;
  step.loop = loop;
  g_array_append_val (plan->steps, step);
}

/* Our loop over the planes of @shape (4-D), from @src into @dst. */
void
cbi_cpu_planes (CbiCpuPlanes * io, dnnl_memory_t src, dnnl_memory_t dst,
    const CbiShape * shape, gint64 block)
{
  dnnl_memory_get_data_handle (src, (void **) &io->src);
  dnnl_memory_get_data_handle (dst, (void **) &io->dst);
  io->n = shape->dims[0];
  io->c = shape->dims[1];
  io->hw = shape->dims[2] * shape->dims[3];
  io->block = block;
}

/* Activation @out as a new memory of @md, where
 * the memory plan puts it: the one the nodes after it read. */
dnnl_memory_t
cbi_cpu_new_output (CbiCpuPlan * plan, gint out, const dnnl_memory_desc_t * md,
    GError ** error)
{
  plan->mds[out] = *md;
  plan->mems[out] = cbi_cpu_activation (plan, out, &plan->mds[out], error);
  return plan->mems[out];
}

/* Adds a step running primitive @pd on @args (its arguments, all of
 * them: the memories it reads, writes and its scratchpad). */
static gboolean
cbi_cpu_add_step (CbiCpuPlan * plan, const_dnnl_primitive_desc_t pd,
    const dnnl_exec_arg_t * args, gint n_args, GError ** error)
{
  CbiCpuStep step = { NULL, n_args, };

  if (!DNNL_CHECK (dnnl_primitive_create (&step.prim, pd),
          "dnnl_primitive_create"))
    return FALSE;
  memcpy (step.args, args, n_args * sizeof (dnnl_exec_arg_t));
  g_array_append_val (plan->steps, step);
  return TRUE;
}

static const dnnl_memory_desc_t *
cbi_cpu_scratchpad_md (const_dnnl_primitive_desc_t pd)
{
  return dnnl_primitive_desc_query_md (pd, dnnl_query_scratchpad_md, 0);
}

/* A row-major desc of @n_dims (a scalar as [1]), the leading ones of
 * @rank - @n_dims prepended: how ONNX aligns a broadcast operand. */
gboolean
cbi_cpu_plain_md (dnnl_memory_desc_t * md, gint n_dims, const gint64 * dims,
    gint rank, GError ** error)
{
  static const dnnl_format_tag_t tags[CBI_MAX_DIMS] = {
    dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef
  };
  dnnl_dims_t padded;
  gint d, lead;

  rank = MAX (MAX (rank, n_dims), 1);
  lead = rank - n_dims;
  for (d = 0; d < rank; d++)
    padded[d] = d < lead ? 1 : dims[d - lead];
  return DNNL_CHECK (dnnl_memory_desc_init_by_tag (md, rank, padded,
          dnnl_f32, tags[rank - 1]), "row-major desc");
}

gboolean
cbi_cpu_shape_md (dnnl_memory_desc_t * md, const CbiShape * shape,
    GError ** error)
{
  return cbi_cpu_plain_md (md, shape->n_dims, shape->dims, shape->n_dims,
      error);
}

/* A desc of @shape in whatever layout the primitive prefers. */
gboolean
cbi_cpu_any_md (dnnl_memory_desc_t * md, const CbiShape * shape,
    GError ** error)
{
  dnnl_dims_t dims;

  memcpy (dims, shape->dims, shape->n_dims * sizeof (gint64));
  return DNNL_CHECK (dnnl_memory_desc_init_by_tag (md, shape->n_dims, dims,
          dnnl_f32, dnnl_format_tag_any), "activation desc");
}

/* Adds a step copying @from into @to, converting the layout. */
gboolean
cbi_cpu_add_reorder (CbiCpuPlan * plan, const dnnl_memory_desc_t * from_md,
    dnnl_memory_t from, const dnnl_memory_desc_t * to_md, dnnl_memory_t to,
    GError ** error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to} };
  gboolean ok;

  ok = DNNL_CHECK (dnnl_reorder_primitive_desc_create (&pd, from_md,
          plan->cpu->engine, to_md, plan->cpu->engine, NULL), "reorder desc")
      && cbi_cpu_add_step (plan, pd, args, 2, error);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  return ok;
}

/* A memory of @md over the data of @mem: another view of the same
 * elements (a reshape of a row-major tensor, or strides for a
 * transposition). */
dnnl_memory_t
cbi_cpu_view (CbiCpuPlan * plan, dnnl_memory_t mem,
    const dnnl_memory_desc_t * md, GError ** error)
{
  gpointer handle = NULL;

  dnnl_memory_get_data_handle (mem, &handle);
  return cbi_cpu_memory (plan, md, handle, error);
}

/* The same with a scratchpad of @pd's size from the plan's workspace
 * added to @args (all the others). */
static gboolean
cbi_cpu_add_step_scratch (CbiCpuPlan * plan, const_dnnl_primitive_desc_t pd,
    const dnnl_exec_arg_t * args, gint n_args, GError ** error)
{
  const dnnl_memory_desc_t *scratch = cbi_cpu_scratchpad_md (pd);
  dnnl_exec_arg_t all[CBI_MAX_ARGS];
  dnnl_memory_t smem;

  smem = cbi_cpu_memory (plan, scratch, DNNL_MEMORY_NONE, error);
  if (smem == NULL)
    return FALSE;
  plan->scratch_bytes =
      MAX (plan->scratch_bytes, dnnl_memory_desc_get_size (scratch));
  memcpy (all, args, n_args * sizeof (dnnl_exec_arg_t));
  all[n_args].arg = DNNL_ARG_SCRATCHPAD;
  all[n_args].memory = smem;
  return cbi_cpu_add_step (plan, pd, all, n_args + 1, error);
}

/* Adds the step of @pd reading @inputs and writing output @out, made
 * anew in the layout @pd chose; with @out -1, @inputs hold the
 * destination too (an op in place). */
gboolean
cbi_cpu_finish (CbiCpuPlan * plan,
    const_dnnl_primitive_desc_t pd, const dnnl_exec_arg_t * inputs,
    gint n_inputs, gint out, GError ** error)
{
  dnnl_exec_arg_t args[CBI_MAX_ARGS];
  dnnl_memory_t ymem;

  if (out < 0)
    return cbi_cpu_add_step_scratch (plan, pd, inputs, n_inputs, error);
  ymem = cbi_cpu_new_output (plan, out,
      dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0), error);
  if (ymem == NULL)
    return FALSE;
  memcpy (args, inputs, n_inputs * sizeof (dnnl_exec_arg_t));
  args[n_inputs].arg = DNNL_ARG_DST;
  args[n_inputs].memory = ymem;
  return cbi_cpu_add_step_scratch (plan, pd, args, n_inputs + 1, error);
}

/* Activation @t in layout @md: itself when it has it, else a copy made
 * by a reorder step, for a primitive or loop that needs that layout. */
dnnl_memory_t
cbi_cpu_in_layout (CbiCpuPlan * plan, gint t, const dnnl_memory_desc_t * md,
    GError ** error)
{
  dnnl_memory_t mem;

  if (dnnl_memory_desc_equal (md, &plan->mds[t]))
    return plan->mems[t];
  mem = cbi_cpu_activation (plan, -1, md, error);
  if (mem == NULL || !cbi_cpu_add_reorder (plan, &plan->mds[t],
          plan->mems[t], md, mem, error))
    return NULL;
  return mem;
}

/* Activation @t row-major, in its shape from @shapes. */
dnnl_memory_t
cbi_cpu_plain (CbiCpuPlan * plan, gint t, dnnl_memory_desc_t * md,
    GError ** error)
{
  if (!cbi_cpu_shape_md (md, &plan->shapes[t], error))
    return NULL;
  return cbi_cpu_in_layout (plan, t, md, error);
}

/* Adds the step of @pd (nullable: its creation failed, as @ok says) as
 * cbi_cpu_finish () does, then frees @pd and @attr (nullable). */
gboolean
cbi_cpu_finish_owned (gboolean ok, dnnl_primitive_desc_t pd,
    dnnl_primitive_attr_t attr, CbiCpuPlan * plan,
    const dnnl_exec_arg_t * inputs, gint n_inputs, gint out, GError ** error)
{
  ok = ok && cbi_cpu_finish (plan, pd, inputs, n_inputs, out, error);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}

/* A primitive for @op_desc, node @n's, with activation @post (nullable)
 * after it (cbi_cpu_attr(), cbi_cpu_post_rest()), reading @inputs and
 * writing the output of @post, else of @n. */
gboolean
cbi_cpu_plan_op (CbiCpuPlan * plan, const_dnnl_op_desc_t op_desc,
    const CbiNode * n, const CbiNode * post,
    const dnnl_exec_arg_t * inputs, gint n_inputs, GError ** error)
{
  const gint out = post ? post->output : n->output;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  gboolean ok;

  ok = cbi_cpu_attr (post, &attr, error)
      && DNNL_CHECK (dnnl_primitive_desc_create (&pd, op_desc, attr,
          plan->cpu->engine, NULL), "primitive desc");
  return cbi_cpu_finish_owned (ok, pd, attr, plan, inputs,
      n_inputs, out, error) && cbi_cpu_post_rest (plan, post, out, error);
}

/* Gives output @out the row-major desc of its shape over the block the
 * primitive just wrote there in another shape of the same elements. */
gboolean
cbi_cpu_reshape_output (CbiCpuPlan * plan, gint out, GError ** error)
{
  dnnl_memory_desc_t md;
  dnnl_memory_t mem;

  if (!cbi_cpu_shape_md (&md, &plan->shapes[out], error))
    return FALSE;
  mem = cbi_cpu_view (plan, plan->mems[out], &md, error);
  if (mem == NULL)
    return FALSE;
  plan->mds[out] = md;
  plan->mems[out] = mem;
  return TRUE;
}

/* A new row-major activation @out of shape @plan->shapes[@out], and a view of
 * it as @view_md, for a reorder to write. */
dnnl_memory_t
cbi_cpu_output_view (CbiCpuPlan * plan, gint out,
    const dnnl_memory_desc_t * view_md, GError ** error)
{
  dnnl_memory_desc_t md;
  dnnl_memory_t mem;

  mem = cbi_cpu_shape_md (&md, &plan->shapes[out], error) ?
      cbi_cpu_new_output (plan, out, &md, error) : NULL;
  return mem ? cbi_cpu_view (plan, mem, view_md, error) : NULL;
}

/* *INDENT-OFF* */
static const CbiCpuPlanFunc cbi_cpu_planners[CBI_OP_N_KINDS] = {
  [CBI_OP_KIND_CONV] = cbi_cpu_plan_conv,
  [CBI_OP_KIND_ELTWISE] = cbi_cpu_plan_eltwise,
  [CBI_OP_KIND_BINARY] = cbi_cpu_plan_binary,
  [CBI_OP_KIND_PRELU] = cbi_cpu_plan_prelu,
  [CBI_OP_KIND_POOL] = cbi_cpu_plan_pool,
  [CBI_OP_KIND_RESIZE] = cbi_cpu_plan_resize,
  [CBI_OP_KIND_CONCAT] = cbi_cpu_plan_concat,
  [CBI_OP_KIND_PAD] = cbi_cpu_plan_pad,
  [CBI_OP_KIND_NORM] = cbi_cpu_plan_instance_norm,
  [CBI_OP_KIND_PERMUTE] = cbi_cpu_plan_transpose,
  [CBI_OP_KIND_RESHAPE] = cbi_cpu_plan_reshape,
  [CBI_OP_KIND_MATRIX] = cbi_cpu_plan_matrix,
  [CBI_OP_KIND_SOFTMAX] = cbi_cpu_plan_softmax,
  [CBI_OP_KIND_COPY] = cbi_cpu_plan_copy,
  [CBI_OP_KIND_REDUCE] = cbi_cpu_plan_reduce,
  [CBI_OP_KIND_LAYER_NORM] = cbi_cpu_plan_layer_norm,
  [CBI_OP_KIND_SPLIT] = cbi_cpu_plan_split,
  [CBI_OP_KIND_WHERE] = cbi_cpu_plan_where,
};
/* *INDENT-ON* */

gboolean
cbi_cpu_supports_op (CbiBackend * backend, const CbiGraph * graph,
    const CbiNode * n)
{
  return cbi_cpu_planners[cbi_op_info (n->op)->kind] != NULL;
}

/* Node @n, and @post fused into it, by its family's planner. */
static gboolean
cbi_cpu_plan_step (const CbiNode * n, const CbiNode * post,
    gpointer user_data, GError ** error)
{
  CbiCpuPlan *plan = user_data;
  CbiCpuPlanFunc planner = cbi_cpu_planners[cbi_op_info (n->op)->kind];

  if (planner == NULL)
    return cbi_node_unsupported (n, "cpu", error);
  if (!planner (plan, n, post, error))
    return FALSE;
  cbi_mem_plan_step_done (plan->memory, n, post);
  return TRUE;
}

/* The graph's outputs must be row-major for unpacking and reading; a
 * blocked one gets a reorder step. */
static gboolean
cbi_cpu_plan_outputs (CbiCpuPlan * plan, GError ** error)
{
  dnnl_memory_desc_t md;
  dnnl_memory_t mem;
  guint i;

  for (i = 0; i < plan->graph->n_outputs; i++) {
    gint t = plan->graph->outputs[i];
    mem = cbi_cpu_plain (plan, t, &md, error);
    if (mem == NULL)
      return FALSE;
    dnnl_memory_get_data_handle (mem, (void **) &plan->outputs[i]);
  }
  return TRUE;
}

static gboolean
cbi_cpu_bind_workspace (CbiCpuPlan * plan, guint64 workspace)
{
  guint i, j;

  for (i = 0; i < plan->steps->len; i++) {
    CbiCpuStep *s = &g_array_index (plan->steps, CbiCpuStep, i);
    for (j = 0; j < (guint) s->n_args; j++)
      if (s->args[j].arg == DNNL_ARG_SCRATCHPAD
          && dnnl_memory_set_data_handle (s->args[j].memory,
              plan->workspace) != dnnl_success)
        return FALSE;
  }
  return TRUE;
}

/* Whether @step is a reorder from a memory of @from_md to one of @to_md
 * (neither may be NULL). */
static gboolean
cbi_cpu_is_reorder (const CbiCpuStep * step, const dnnl_memory_desc_t * from_md,
    const dnnl_memory_desc_t * to_md)
{
  const dnnl_memory_desc_t *md[2] = { NULL, NULL };

  return step->prim != NULL && step->n_args == 2
      && step->args[0].arg == DNNL_ARG_FROM && step->args[1].arg == DNNL_ARG_TO
      && dnnl_memory_get_memory_desc (step->args[0].memory, &md[0])
      == dnnl_success && dnnl_memory_desc_equal (from_md, md[0])
      && dnnl_memory_get_memory_desc (step->args[1].memory, &md[1])
      == dnnl_success && dnnl_memory_desc_equal (to_md, md[1]);
}

/* Where the plan begins with a reorder of the input to channels last,
 * and nothing else reads the input, the reorder is kept aside: packing
 * writes that layout itself (the reorder was a pass over the batch's
 * input, a tenth of a small classifier's batch); a tensor copied in runs
 * it. Its output is written before any other step runs either way. */
static void
cbi_cpu_keep_input_reorder (CbiCpuPlan * plan)
{
  const CbiGraph *graph = plan->graph;
  const CbiShape *shape = &plan->shapes[graph->input];
  dnnl_memory_desc_t nhwc;
  CbiCpuStep *first;
  guint i, j, readers = 0;

  if (plan->steps->len == 0 || shape->n_dims != 4 || shape->dims[1] != 3
      || !cbi_cpu_nhwc_md (&nhwc, shape, NULL))
    return;
  for (i = 0; i < graph->n_outputs; i++)
    if (graph->outputs[i] == graph->input)
      return;
  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = &g_array_index (graph->nodes, CbiNode, i);
    if (cbi_op_info (n->op)->kind == CBI_OP_KIND_SHAPE_VALUE)
      continue;
    for (j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] == graph->input) {
        readers++;
        break;
      }
  }
  first = &g_array_index (plan->steps, CbiCpuStep, 0);
  if (readers != 1 || first->prim == NULL
      || first->args[0].memory != plan->mems[graph->input]
      || !cbi_cpu_is_reorder (first, &plan->mds[graph->input], &nhwc))
    return;
  dnnl_memory_get_data_handle (first->args[1].memory,
      (void **) &plan->input_channels_last);
  plan->input_reorder = *first;
  g_array_remove_index (plan->steps, 0);
  GST_DEBUG ("packing writes the input channels last");
}

/* Where the plan ends with a plain copy of output 0 (3 or 4 channels, an
 * image) from channels last to row-major, the reorder is kept aside: a
 * batch that unpacks frames reads the channels-last data (the reorder
 * was a pass over the batch's output: a sixth of the super-resolution
 * net's batch), one read as a tensor runs it. */
static void
cbi_cpu_keep_output_reorder (CbiCpuPlan * plan)
{
  const CbiShape *shape = &plan->shapes[plan->graph->outputs[0]];
  dnnl_memory_desc_t nhwc, plain;
  gpointer to = NULL;
  CbiCpuStep *last;

  if (plan->steps->len == 0 || shape->n_dims != 4
      || (shape->dims[1] != 3 && shape->dims[1] != 4)
      || !cbi_cpu_nhwc_md (&nhwc, shape, NULL)
      || !cbi_cpu_shape_md (&plain, shape, NULL))
    return;
  last = &g_array_index (plan->steps, CbiCpuStep, plan->steps->len - 1);
  /* a plain copy of the tensor, not a Transpose into the output */
  if (!cbi_cpu_is_reorder (last, &nhwc, &plain))
    return;
  dnnl_memory_get_data_handle (last->args[1].memory, &to);
  if (to != (gpointer) plan->outputs[0])
    return;
  dnnl_memory_get_data_handle (last->args[0].memory,
      (void **) &plan->output_channels_last);
  plan->output_reorder = *last;
  g_array_set_size (plan->steps, plan->steps->len - 1);
  GST_DEBUG ("unpacking reads the output channels last");
}

gpointer
cbi_cpu_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace, GError ** error)
{
  CbiCpu *cpu = backend->context;
  CbiCpuPlan *plan = g_new0 (CbiCpuPlan, 1);
  guint n_tensors = graph->tensors->len;
  dnnl_memory_t in;

  plan->steps = g_array_new (FALSE, FALSE, sizeof (CbiCpuStep));
  plan->memories = g_ptr_array_new ();
  plan->memory = cbi_mem_plan_new (graph, pool);
  plan->mds = g_new0 (dnnl_memory_desc_t, n_tensors);
  plan->mems = g_new0 (dnnl_memory_t, n_tensors);
  plan->cpu = cpu;
  plan->graph = graph;
  plan->shapes = shapes;

  if (!cbi_cpu_shape_md (&plan->mds[graph->input], &plan->shapes[graph->input],
          error))
    goto failed;
  plan->input_count = cbi_shape_count (&plan->shapes[graph->input]);
  in = cbi_cpu_activation (plan, graph->input, &plan->mds[graph->input], error);
  if (in == NULL)
    goto failed;
  plan->mems[graph->input] = in;
  dnnl_memory_get_data_handle (in, (void **) &plan->input);

  /* the activation after a primitive runs as its post-op; our
   * InstanceNormalization loop fuses a Relu */
  if (!cbi_graph_foreach_step (graph, cbi_cpu_plan_step, plan, error))
    goto failed;
  cbi_cpu_keep_input_reorder (plan);
  if (!cbi_cpu_plan_outputs (plan, error))
    goto failed;
  cbi_cpu_keep_output_reorder (plan);

  *workspace = plan->scratch_bytes;
  if (*workspace > 0) {
    plan->workspace = cbi_mem_plan_alloc (plan->memory, *workspace,
        "workspace", error);
    if (plan->workspace == NULL)
      goto failed;
  }
  if (!cbi_cpu_bind_workspace (plan, *workspace)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND,
        "oneDNN: could not bind the workspace");
    goto failed;
  }
  cbi_mem_plan_done (plan->memory);
  plan->graph = NULL;
  plan->shapes = NULL;
  GST_DEBUG ("planned %u steps for %" G_GINT64_FORMAT " input elements, "
      "workspace %" G_GUINT64_FORMAT " bytes", plan->steps->len,
      plan->input_count, *workspace);
  return plan;

failed:
  cbi_cpu_free_plan (backend, plan, pool, staging);
  return NULL;
}
