/* cudabatchinfer: the CPU backend's private header
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend's files share what is here: the context, the plan and its
 * steps, the oneDNN check, the helpers that make memories and primitives
 * (plan.c), and each op family's planner (conv.c, eltwise.c, pool.c,
 * layout.c, matrix.c, norm.c).
 */
#pragma once

#include "cbibackend.h"
#include "cbicpuloops.h"
#include "cbierror.h"
#include "cbiplanmemory.h"

#include <gst/gst.h>
#include <dnnl.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (cbi_cpu_debug);
#define GST_CAT_DEFAULT cbi_cpu_debug

typedef struct
{
  dnnl_engine_t engine;
  dnnl_stream_t stream;
} CbiCpu;

#define CBI_MAX_ARGS (CBI_MAX_NODE_INPUTS + 2)

/* A oneDNN primitive with its arguments, or (prim NULL) one of our loops
 * (cbicpuloops.h) run on @loop, which the step owns. */
typedef struct
{
  dnnl_primitive_t prim;
  gint n_args;
  dnnl_exec_arg_t args[CBI_MAX_ARGS];
  void (*run) (gconstpointer loop);
  gpointer loop;
} CbiCpuStep;

typedef struct
{
  GArray *steps;                /* CbiCpuStep */
  GPtrArray *memories;          /* dnnl_memory_t, destroyed with the plan */
  CbiMemPlan *memory;           /* every pool block, released with the plan */
  gfloat *input;                /* row-major (NCHW for images) */
  gint64 input_count;
  gfloat *outputs[CBI_MAX_OUTPUTS];     /* row-major */
  gpointer workspace;
  dnnl_memory_desc_t *mds;      /* per tensor */
  dnnl_memory_t *mems;          /* per tensor, borrowed from @memories */
} CbiCpuPlan;

/* Logs a failed oneDNN call at @file:@line and sets @error. */
gboolean cbi_dnnl_check (dnnl_status_t status, const gchar * what,
    const gchar * file, gint line, GError ** error);

#define DNNL_CHECK(call, what) \
  cbi_dnnl_check ((call), (what), __FILE__, __LINE__, error)

/* plan.c: memories, descs and primitives */
dnnl_memory_t cbi_cpu_activation (CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, gint tensor, const dnnl_memory_desc_t * md,
    GError ** error);
gboolean cbi_cpu_add_reorder (CbiCpu * cpu, CbiCpuPlan * plan,
    const dnnl_memory_desc_t * from_md, dnnl_memory_t from,
    const dnnl_memory_desc_t * to_md, dnnl_memory_t to, GError ** error);
gboolean cbi_cpu_any_md (dnnl_memory_desc_t * md, const CbiShape * shape,
    GError ** error);
gboolean cbi_cpu_finish (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    const_dnnl_primitive_desc_t pd, const dnnl_exec_arg_t * inputs,
    gint n_inputs, gint out, guint64 * workspace, GError ** error);
void cbi_cpu_free_plan (CbiBackend * backend, gpointer p, CbiPool * pool,
    CbiPool * staging);
dnnl_memory_t cbi_cpu_in_layout (CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, gint t, const dnnl_memory_desc_t * md, GError ** error);
dnnl_memory_t cbi_cpu_memory (CbiCpu * cpu, CbiCpuPlan * plan,
    const dnnl_memory_desc_t * md, gpointer handle, GError ** error);
dnnl_memory_t cbi_cpu_output_view (CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, gint out, const CbiShape * shapes,
    const dnnl_memory_desc_t * view_md, GError ** error);
dnnl_memory_t cbi_cpu_plain (CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, gint t, const CbiShape * shapes, dnnl_memory_desc_t * md,
    GError ** error);
gboolean cbi_cpu_plain_md (dnnl_memory_desc_t * md, gint n_dims,
    const gint64 * dims, gint rank, GError ** error);
gpointer cbi_cpu_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    guint64 * workspace, GError ** error);
gboolean cbi_cpu_plan_op (CbiCpu * cpu, CbiCpuPlan * plan,
    const_dnnl_op_desc_t op_desc, const CbiNode * n, const CbiNode * post,
    guint skip, const dnnl_exec_arg_t * inputs, gint n_inputs, CbiPool * pool,
    guint64 * workspace, GError ** error);
dnnl_memory_t cbi_cpu_pooled_memory (CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, const dnnl_memory_desc_t * md, const gchar * what,
    GError ** error);
gboolean cbi_cpu_reshape_output (CbiCpu * cpu, CbiCpuPlan * plan, gint out,
    const CbiShape * shapes, GError ** error);
gboolean cbi_cpu_shape_md (dnnl_memory_desc_t * md, const CbiShape * shape,
    GError ** error);
dnnl_memory_t cbi_cpu_view (CbiCpu * cpu, CbiCpuPlan * plan, dnnl_memory_t mem,
    const dnnl_memory_desc_t * md, GError ** error);

void cbi_cpu_planes (CbiCpuPlanes * io, dnnl_memory_t src, dnnl_memory_t dst,
    const CbiShape * shape, gint64 block);
void cbi_cpu_add_loop (CbiCpuPlan * plan, void (*run) (gconstpointer loop),
    gpointer loop);
dnnl_memory_t cbi_cpu_new_output (CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, gint out, const dnnl_memory_desc_t * md,
    GError ** error);
gboolean cbi_cpu_finish_owned (gboolean ok, dnnl_primitive_desc_t pd,
    dnnl_primitive_attr_t attr, CbiCpu * cpu, CbiCpuPlan * plan,
    CbiPool * pool, const dnnl_exec_arg_t * inputs, gint n_inputs, gint out,
    guint64 * workspace, GError ** error);

/* eltwise.c: an attribute with a user scratchpad and, as post-ops, the
 * oneDNN eltwise steps of activation @post (nullable) from @skip on */
gboolean cbi_cpu_attr (const CbiNode * post, guint skip,
    dnnl_primitive_attr_t * attr, GError ** error);

/* An op family's planner: adds the steps of node @n, with the fused
 * activation @post (nullable) where the op table allows one; the
 * activations it writes come from the memory plan; @workspace grows to
 * the scratchpad its primitives need. */
typedef gboolean (*CbiCpuPlanFunc) (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);

gboolean cbi_cpu_plan_conv (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_eltwise (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_binary (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_prelu (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_pool (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_resize (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_concat (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_pad (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_reshape (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_transpose (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_matrix (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_instance_norm (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);
gboolean cbi_cpu_plan_softmax (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error);

/* Whether a planner takes @n. */
gboolean cbi_cpu_supports_op (CbiBackend * backend, const CbiGraph * graph,
    const CbiNode * n);

G_END_DECLS
