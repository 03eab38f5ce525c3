/* cudabatchinfer: the CPU backend's plan, the pieces every planner builds
 * it with: memories over pool blocks (activations where the memory plan
 * puts them), descs, reorders, primitive and loop steps
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbicpu.h"

#include <string.h>

/* Wraps @handle in a dnnl_memory owned by the plan. */
dnnl_memory_t
cbi_cpu_memory (CbiCpuPlan * plan, CbiMd md, gpointer handle, GError ** error)
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
cbi_cpu_pooled_memory (CbiCpuPlan * plan, CbiMd md,
    const gchar * what, GError ** error)
{
  gpointer block = cbi_mem_plan_alloc (plan->memory,
      dnnl_memory_desc_get_size (md), what, error);

  return block ? cbi_cpu_memory (plan, md, block, error) : NULL;
}

/* Constant @data (desc @user_md) in the layout and type @md a primitive
 * chose: the data itself where that is its own, else a reordered copy made
 * once in the pool, for @what. */
dnnl_memory_t
cbi_cpu_constant_in (CbiCpuPlan * plan, CbiMd user_md, CbiMd md,
    gfloat * data, const gchar * what, GError ** error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_exec_arg_t args[2];
  dnnl_memory_t user, mem;
  gboolean ok;

  user = cbi_cpu_memory (plan, user_md, data, error);
  if (user == NULL || dnnl_memory_desc_equal (md, user_md))
    return user;
  mem = cbi_cpu_pooled_memory (plan, md, what, error);
  if (mem == NULL)
    return NULL;
  args[0].arg = DNNL_ARG_FROM;
  args[0].memory = user;
  args[1].arg = DNNL_ARG_TO;
  args[1].memory = mem;
  ok = DNNL_CHECK (dnnl_reorder_primitive_desc_create (&pd, user_md,
          plan->cpu->engine, md, plan->cpu->engine, NULL),
      "constant reorder desc")
      && DNNL_CHECK (dnnl_primitive_create (&reorder, pd), "weights reorder")
      && DNNL_CHECK (dnnl_primitive_execute (reorder, plan->cpu->stream, 2,
          args), "constant reorder execute")
      && DNNL_CHECK (dnnl_stream_wait (plan->cpu->stream), "dnnl_stream_wait");
  if (reorder)
    dnnl_primitive_destroy (reorder);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  return ok ? mem : NULL;
}

const CbiNode *
cbi_cpu_sole_add (const CbiGraph * graph, gint t, guint * at)
{
  const CbiNode *add = NULL;
  guint i;

  if (cbi_graph_is_output (graph, t) || cbi_graph_count_consumers (graph,
          t) != 1)
    return NULL;
  for (i = 0; i < graph->nodes->len && add == NULL; i++) {
    const CbiNode *m = cbi_graph_node (graph, i);
    if (m->op == CBI_OP_ADD && m->n_inputs == 2
        && (m->inputs[0] == t || m->inputs[1] == t)) {
      add = m;
      *at = i;
    }
  }
  return add && add->inputs[0] != add->inputs[1] ? add : NULL;
}

/* Whether @pd runs one of oneDNN's fast kernels, not its reference code. */
gboolean
cbi_cpu_fast_impl (const_dnnl_primitive_desc_t pd, const gchar ** impl)
{
  *impl = NULL;
  return dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
      impl) == dnnl_success && *impl != NULL && !g_str_has_prefix (*impl,
      "ref");
}

/* A memory of desc @md that only the node being planned uses
 * (cbi_mem_plan_scratch ()). */
dnnl_memory_t
cbi_cpu_scratch_memory (CbiCpuPlan * plan, CbiMd md, GError ** error)
{
  gpointer block = cbi_mem_plan_scratch (plan->memory,
      dnnl_memory_desc_get_size (md), error);

  return block ? cbi_cpu_memory (plan, md, block, error) : NULL;
}

/* A memory for activation @tensor (-1: a copy in another layout), where
 * the memory plan puts it. */
dnnl_memory_t
cbi_cpu_activation (CbiCpuPlan * plan, gint tensor, CbiMd md, GError ** error)
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
cbi_cpu_new_output (CbiCpuPlan * plan, gint out, CbiMd md, GError ** error)
{
  plan->mems[out] = cbi_cpu_activation (plan, out, md, error);
  /* the memory's own copy of @md, which may be a primitive desc's */
  if (plan->mems[out] != NULL)
    dnnl_memory_get_memory_desc (plan->mems[out], &plan->mds[out]);
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

static CbiMd
cbi_cpu_scratchpad_md (const_dnnl_primitive_desc_t pd)
{
  return dnnl_primitive_desc_query_md (pd, dnnl_query_scratchpad_md, 0);
}

gboolean
cbi_cpu_plain_md_typed (CbiCpuPlan * plan, CbiMd * md, gint n_dims,
    const gint64 * dims, gint rank, dnnl_data_type_t type, GError ** error)
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
  return DNNL_CHECK (cbi_md_tag_typed (plan->descs, md, rank, padded, type,
          tags[rank - 1]), "row-major desc");
}

/* A row-major desc of @n_dims (a scalar as [1]), the leading ones of
 * @rank - @n_dims prepended: how ONNX aligns a broadcast operand. */
gboolean
cbi_cpu_plain_md (CbiCpuPlan * plan, CbiMd * md, gint n_dims,
    const gint64 * dims, gint rank, GError ** error)
{
  return cbi_cpu_plain_md_typed (plan, md, n_dims, dims, rank, dnnl_f32, error);
}

gboolean
cbi_cpu_shape_md (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    GError ** error)
{
  return cbi_cpu_plain_md (plan, md, shape->n_dims, shape->dims, shape->n_dims,
      error);
}

/* A desc of @shape in whatever layout the primitive prefers, of values of
 * @type. */
static gboolean
cbi_cpu_any_md_typed (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    dnnl_data_type_t type, GError ** error)
{
  dnnl_dims_t dims;

  memcpy (dims, shape->dims, shape->n_dims * sizeof (gint64));
  return DNNL_CHECK (cbi_md_tag_typed (plan->descs, md, shape->n_dims, dims,
          type, dnnl_format_tag_any), "activation desc");
}

gboolean
cbi_cpu_any_md (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    GError ** error)
{
  return cbi_cpu_any_md_typed (plan, md, shape, dnnl_f32, error);
}

gboolean
cbi_cpu_any_md_as (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    CbiMd like, GError ** error)
{
  return cbi_cpu_any_md_typed (plan, md, shape, cbi_md_data_type (like), error);
}

/* Adds a step copying @from into @to, converting the layout. */
gboolean
cbi_cpu_add_reorder (CbiCpuPlan * plan, CbiMd from_md,
    dnnl_memory_t from, CbiMd to_md, dnnl_memory_t to, GError ** error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}
  };
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
cbi_cpu_view (CbiCpuPlan * plan, dnnl_memory_t mem, CbiMd md, GError ** error)
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
  CbiMd scratch = cbi_cpu_scratchpad_md (pd);
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
cbi_cpu_add_primitive (CbiCpuPlan * plan,
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
 * by a reorder step, in a block of its own (@scratch: one that the
 * activations planned after the node get back; the node only reads it,
 * so a view where the layouts differ in name only). */
static dnnl_memory_t
cbi_cpu_converted (CbiCpuPlan * plan, gint t, CbiMd md, gboolean scratch,
    GError ** error)
{
  dnnl_memory_t mem;

  if (dnnl_memory_desc_equal (md, plan->mds[t]))
    return plan->mems[t];
  /* where the two layouts put every value at the same place a reorder
   * would copy the bytes as they are */
  if (scratch && cbi_md_same_places (md, plan->mds[t]))
    return cbi_cpu_view (plan, plan->mems[t], md, error);
  mem = scratch ? cbi_cpu_scratch_memory (plan, md, error) :
      cbi_cpu_activation (plan, -1, md, error);
  if (mem == NULL || !cbi_cpu_add_reorder (plan, plan->mds[t],
          plan->mems[t], md, mem, error))
    return NULL;
  return mem;
}

/* Activation @t in layout @md, for a primitive or loop that needs that
 * layout. */
dnnl_memory_t
cbi_cpu_in_layout (CbiCpuPlan * plan, gint t, CbiMd md, GError ** error)
{
  return cbi_cpu_converted (plan, t, md, FALSE, error);
}

dnnl_memory_t
cbi_cpu_in_layout_scratch (CbiCpuPlan * plan, gint t, CbiMd md, GError ** error)
{
  return cbi_cpu_converted (plan, t, md, TRUE, error);
}

/* Activation @t row-major, in its shape from @shapes. */
dnnl_memory_t
cbi_cpu_plain (CbiCpuPlan * plan, gint t, CbiMd * md, GError ** error)
{
  if (!cbi_cpu_shape_md (plan, md, &plan->shapes[t], error))
    return NULL;
  return cbi_cpu_in_layout (plan, t, *md, error);
}

/* Adds the step of @pd (nullable: its creation failed, as @ok says) as
 * cbi_cpu_add_primitive () does, then frees @pd and @attr (nullable). */
gboolean
cbi_cpu_add_primitive_owned (gboolean ok, dnnl_primitive_desc_t pd,
    dnnl_primitive_attr_t attr, CbiCpuPlan * plan,
    const dnnl_exec_arg_t * inputs, gint n_inputs, gint out, GError ** error)
{
  ok = ok && cbi_cpu_add_primitive (plan, pd, inputs, n_inputs, out, error);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}

/* Gives output @out the row-major desc of its shape over the block the
 * primitive just wrote there in another shape of the same elements. */
gboolean
cbi_cpu_reshape_output (CbiCpuPlan * plan, gint out, GError ** error)
{
  const CbiShape *shape = &plan->shapes[out];
  CbiMd md;
  dnnl_memory_t mem;

  /* in the type the primitive wrote (bfloat16 where a product feeds
   * products in it) */
  if (!cbi_cpu_plain_md_typed (plan, &md, shape->n_dims, shape->dims,
          shape->n_dims, cbi_md_data_type (plan->mds[out]), error))
    return FALSE;
  mem = cbi_cpu_view (plan, plan->mems[out], md, error);
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
    CbiMd view_md, GError ** error)
{
  CbiMd md;
  dnnl_memory_t mem;

  mem = cbi_cpu_shape_md (plan, &md, &plan->shapes[out], error) ?
      cbi_cpu_new_output (plan, out, md, error) : NULL;
  return mem ? cbi_cpu_view (plan, mem, view_md, error) : NULL;
}
