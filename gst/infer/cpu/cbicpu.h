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
#include "cpu/frames.h"
#include "cpu/loops.h"
#include "cbitypes.h"
#include "cbimemplan.h"
#include "cpu/onednn.h"

#include <gst/gst.h>
#include <sys/types.h>

G_BEGIN_DECLS GST_DEBUG_CATEGORY_EXTERN (cbi_cpu_debug);
#define GST_CAT_DEFAULT cbi_cpu_debug

/* share.c: whether a batch runs on the OpenMP team or on one thread, by
 * how long the team waited for cores (threads=0 only) */
#define CBI_CPU_MAX_TEAM 256
typedef struct _CbiCpuShare CbiCpuShare;
typedef gboolean (*CbiCpuShareFunc) (gpointer data, GError ** error);
/* a team's threads waited for a core more than 1/this of the time each
 * over a window of batches: the next batches run on one thread */
#define CBI_SHARE_WAIT_RATIO 4
/* the batches on the team add up to this before their wait is judged */
#define CBI_SHARE_TEAM_WINDOW_NS (50 * G_GINT64_CONSTANT (1000000))
/* on one thread for at least this long before the idle time is read */
#define CBI_SHARE_WINDOW_NS (100 * G_GINT64_CONSTANT (1000000))
/* Where a share reads what it decides on, each with the data given to
 * cbi_cpu_share_new_with_probes(): the run-queue delay so far of threads
 * @tids, summed; the idle time so far of the process's cores; a monotonic
 * clock; all in ns. The first two return FALSE where they cannot tell. */
typedef struct
{
  gboolean (*team_wait_ns) (const pid_t * tids, gint n, guint64 * ns,
      gpointer data);
  gboolean (*idle_ns) (guint64 * ns, gpointer data);
  gint64 (*now_ns) (gpointer data);
} CbiCpuShareProbes;
/* Returns: (transfer full): watches the cores for one backend, through
 * /proc */
CbiCpuShare *cbi_cpu_share_new (void);
/* Returns: (transfer full): the same through @probes (copied) and @data
 * (transfer none): for tests */
CbiCpuShare *cbi_cpu_share_new_with_probes (const CbiCpuShareProbes * probes,
    gpointer data);
void cbi_cpu_share_free (CbiCpuShare * share);
/* Runs @run (@data) on the team, or on one thread while other threads
 * keep the cores busy; @solo: whether it ran on one thread. */
gboolean cbi_cpu_share_run (CbiCpuShare * share, CbiCpuShareFunc run,
    gpointer data, gboolean * solo, GError ** error);
/* For batches that no longer go through @share (a fixed number of
 * threads): back to the team, out of the region of batches on one thread
 * once the current call returns. */
void cbi_cpu_share_leave (CbiCpuShare * share);
/* How many OpenMP regions the batches on one thread have opened: one per
 * batch, except on a worker (cbiworker.h), where the batches in a row on
 * one thread share one. */
guint cbi_cpu_share_solo_regions (CbiCpuShare * share);

typedef struct
{
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  CbiCpuShare *share;
} CbiCpu;

#define CBI_MAX_ARGS (CBI_MAX_NODE_INPUTS + 2)

/* A oneDNN primitive with its arguments, or (prim NULL) one of our loops
 * (cpu/loops.h) run on @loop, which the step owns. */
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
  /* the reorder of the input to channels last, run only for a tensor
   * copied in (prim NULL: none); frames are packed straight into
   * @input_channels_last: floats, or bfloat16 values where @input_bf16 */
  CbiCpuStep input_reorder;
  gpointer input_channels_last;
  gboolean input_bf16;
  /* the reorder of output 0 from channels last to row-major, run only for
   * a batch read as a tensor (prim NULL: none); frames are unpacked
   * straight from @output_channels_last */
  CbiCpuStep output_reorder;
  const gfloat *output_channels_last;
  gint64 input_count;
  gfloat *outputs[CBI_MAX_OUTPUTS];     /* row-major */
  gpointer workspace;
  dnnl_memory_t *mems;          /* per tensor, borrowed from @memories */
  /* planning only */
  CbiMdArena *descs;            /* every desc made while planning */
  CbiMd *mds;                   /* per tensor: its memory's desc */
  CbiCpu *cpu;
  const CbiGraph *graph;
  const CbiShape *shapes;       /* every tensor's */
  guint64 scratch_bytes;        /* the largest scratchpad of a primitive */
  /* the layout of the convolutions' outputs: oneDNN's choice
   * (dnnl_format_tag_any) or a channel-blocked one (plan.c) */
  dnnl_format_tag_t conv_layout;
  /* the plan runs in CBI_PRECISION_BF16; planning only: per node, the
   * convolutions that take bfloat16 operands (bf16.c), NULL in float32 */
  gboolean bf16;
  /* every convolution and matrix product in bfloat16, not only those the
   * rules of bf16.c choose, and activations in bfloat16 between them
   * (CbiBackend.precision_wide) */
  gboolean bf16_wide;
  gboolean *conv_bf16;
  gboolean *tensor_bf16;        /* per tensor: bfloat16 (bf16.c) */
  /* the activation whose merged ops the last primitive with it fused
   * took as post-ops (cbi_cpu_attr_chain ()) */
  const CbiNode *chained;
  guint bf16_ops;               /* the convolutions and matrix products
                                 * planned in bfloat16 */
} CbiCpuPlan;

/* One oneDNN eltwise step: the form of an element-wise op (postops.c). */
typedef struct
{
  dnnl_alg_kind_t alg;
  gfloat alpha;
  gfloat beta;
} CbiCpuEltwise;

/* Logs a failed oneDNN call at @file:@line and sets @error. */
gboolean cbi_dnnl_check (dnnl_status_t status, const gchar * what,
    const gchar * file, gint line, GError ** error);

#define DNNL_CHECK(call, what) \
  cbi_dnnl_check ((call), (what), __FILE__, __LINE__, error)

/* plan.c: memories, descs and primitives */
dnnl_memory_t cbi_cpu_activation (CbiCpuPlan * plan, gint tensor,
    CbiMd md, GError ** error);
gboolean cbi_cpu_add_reorder (CbiCpuPlan * plan,
    CbiMd from_md, dnnl_memory_t from,
    CbiMd to_md, dnnl_memory_t to, GError ** error);
gboolean cbi_cpu_any_md (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    GError ** error);
/* The desc of @shape in the layout a primitive chooses and the data type
 * of @like (bfloat16 where a primitive keeps its input's, bf16.c). */
gboolean cbi_cpu_any_md_as (CbiCpuPlan * plan, CbiMd * md,
    const CbiShape * shape, CbiMd like, GError ** error);
gboolean cbi_cpu_add_primitive (CbiCpuPlan * plan,
    const_dnnl_primitive_desc_t pd, const dnnl_exec_arg_t * inputs,
    gint n_inputs, gint out, GError ** error);
void cbi_cpu_free_plan (CbiBackend * backend, gpointer p, CbiPool * pool,
    CbiPool * staging);
dnnl_memory_t cbi_cpu_in_layout (CbiCpuPlan * plan, gint t,
    CbiMd md, GError ** error);
/* cbi_cpu_in_layout () for the node being planned alone, which only
 * reads it: a copy takes a block that the activations planned after the
 * node get back (cbi_cpu_scratch_memory ()), and where @md puts every
 * value where @t's layout has it (cbi_md_same_places ()) the node reads
 * @t's data through a view instead. */
dnnl_memory_t cbi_cpu_in_layout_scratch (CbiCpuPlan * plan, gint t,
    CbiMd md, GError ** error);
dnnl_memory_t cbi_cpu_memory (CbiCpuPlan * plan, CbiMd md,
    gpointer handle, GError ** error);
dnnl_memory_t cbi_cpu_output_view (CbiCpuPlan * plan, gint out,
    CbiMd view_md, GError ** error);
dnnl_memory_t cbi_cpu_plain (CbiCpuPlan * plan, gint t, CbiMd * md,
    GError ** error);
gboolean cbi_cpu_plain_md (CbiCpuPlan * plan, CbiMd * md, gint n_dims,
    const gint64 * dims, gint rank, GError ** error);
/* The same of values of @type. */
gboolean cbi_cpu_plain_md_typed (CbiCpuPlan * plan, CbiMd * md, gint n_dims,
    const gint64 * dims, gint rank, dnnl_data_type_t type, GError ** error);
gpointer cbi_cpu_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace, GError ** error);
gboolean cbi_cpu_plan_op (CbiCpuPlan * plan,
    const CbiDnnlOp * op, const CbiNode * n, const CbiNode * post,
    const dnnl_exec_arg_t * inputs, gint n_inputs, GError ** error);
dnnl_memory_t cbi_cpu_pooled_memory (CbiCpuPlan * plan,
    CbiMd md, const gchar * what, GError ** error);
/* A memory of @md that only the node being planned uses: its block is
 * free for the activations planned after it (cbi_mem_plan_scratch ()). */
dnnl_memory_t cbi_cpu_scratch_memory (CbiCpuPlan * plan, CbiMd md,
    GError ** error);
/* The Add that alone reads tensor @t (no graph output), of @t and another
 * tensor, and its node index into @at; NULL where @t has no such reader:
 * what a producer may take into its own step (a convolution's residual
 * sum, a product's bias). */
const CbiNode *cbi_cpu_sole_add (const CbiGraph * graph, gint t, guint * at);
/* Whether oneDNN gives @pd a fast kernel, not its reference code; @impl
 * receives the kernel's name (transfer none: @pd's). */
gboolean cbi_cpu_fast_impl (const_dnnl_primitive_desc_t pd,
    const gchar ** impl);
/* Constant @data (desc @user_md) in the layout and type @md a primitive
 * chose: @data itself where @md is @user_md, else a copy reordered once
 * in the plan's memory, for @what. */
dnnl_memory_t cbi_cpu_constant_in (CbiCpuPlan * plan, CbiMd user_md,
    CbiMd md, gfloat * data, const gchar * what, GError ** error);
gboolean cbi_cpu_reshape_output (CbiCpuPlan * plan, gint out, GError ** error);
/* The channels-last desc of 4-D @shape. */
gboolean cbi_cpu_nhwc_md (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    GError ** error);
/* Whether activation @t is in the channels-last layout of its 4-D shape
 * (as convolutions leave it); @md receives that desc. */
gboolean cbi_cpu_is_nhwc (CbiCpuPlan * plan, gint t, CbiMd * md);
gboolean cbi_cpu_shape_md (CbiCpuPlan * plan, CbiMd * md, const CbiShape * shape,
    GError ** error);
dnnl_memory_t cbi_cpu_view (CbiCpuPlan * plan, dnnl_memory_t mem,
    CbiMd md, GError ** error);

void cbi_cpu_planes (CbiCpuPlanes * io, dnnl_memory_t src, dnnl_memory_t dst,
    const CbiShape * shape, gint64 block);
void cbi_cpu_add_loop (CbiCpuPlan * plan, void (*run) (gconstpointer loop),
    gpointer loop);
dnnl_memory_t cbi_cpu_new_output (CbiCpuPlan * plan, gint out,
    CbiMd md, GError ** error);
gboolean cbi_cpu_add_primitive_owned (gboolean ok, dnnl_primitive_desc_t pd,
    dnnl_primitive_attr_t attr, CbiCpuPlan * plan,
    const dnnl_exec_arg_t * inputs, gint n_inputs, gint out, GError ** error);

/* matrix.c: matmul @op (its src and weights float32, as bound in
 * @args[0] and @args[1]; @weights: the constant data of the weights
 * (caller's), NULL where they are an activation) in bfloat16, its sums
 * and output float32: the primitive desc (transfer full) with @attr, and
 * @args bound to bfloat16 copies (the plan's: the weights converted
 * once, an activation by a reorder before the product), or FALSE,
 * nothing added, where oneDNN has no fast kernel for it (@error set only
 * where planning failed). @name names the node in the log. */
gboolean cbi_cpu_product_bf16 (CbiCpuPlan * plan, const gchar * name,
    const CbiDnnlOp * op, gfloat * weights, const_dnnl_primitive_attr_t attr,
    dnnl_exec_arg_t * args, dnnl_primitive_desc_t * pd, GError ** error);

/* postops.c: whether the ops that run in place on the output of node @n
 * with @post fused (nullable) all have oneDNN forms: no loop of ours, which
 * reads float32, runs on it. */
gboolean cbi_cpu_step_in_onednn (const CbiNode * n, const CbiNode * post);

/* postops.c: oneDNN's form of element-wise op @e: one or two eltwise
 * steps, or 0 where it has none */
guint cbi_cpu_eltwise_form (const CbiEltwiseStep * e, CbiCpuEltwise steps[2]);
/* postops.c: an attribute with a user scratchpad and, as post-ops,
 * oneDNN's form of the own op of activation @post (nullable) */
gboolean cbi_cpu_attr (const CbiNode * post, dnnl_primitive_attr_t * attr,
    GError ** error);
/* postops.c: cbi_cpu_attr () with, where oneDNN can take them, the ops
 * merged after @post's own op as post-ops too: @plan's chained is then
 * @post, whose steps in place cbi_cpu_add_in_place () leaves out */
gboolean cbi_cpu_attr_chain (CbiCpuPlan * plan, const CbiNode * post,
    dnnl_primitive_attr_t * attr, GError ** error);
/* postops.c: an attribute with a user scratchpad and, as post-ops, the
 * sum (the result added to what the destination holds), then oneDNN's
 * one-step form of the own op of activation @post (nullable) */
gboolean cbi_cpu_attr_residual (const CbiNode * post,
    dnnl_primitive_attr_t * attr, GError ** error);
/* postops.c: after the primitive that wrote output @out with
 * cbi_cpu_attr (@post), @post's own op in place where the primitive could
 * not take it as a post-op */
gboolean cbi_cpu_post_own (CbiCpuPlan * plan, const CbiNode * post,
    gint out, GError ** error);
/* postops.c: a oneDNN eltwise step in place on output @out */
gboolean cbi_cpu_add_eltwise_in_place (CbiCpuPlan * plan, gint out,
    const CbiCpuEltwise * step, GError ** error);
/* postops.c: our loop for element-wise op @e from @src into @dst (may be
 * @src), both of desc @md */
gboolean cbi_cpu_add_eltwise_loop (CbiCpuPlan * plan, const CbiEltwiseStep * e,
    dnnl_memory_t src, dnnl_memory_t dst, CbiMd md,
    GError ** error);
/* postops.c: the add_in_place of the CPU's CbiPlanners */
gboolean cbi_cpu_add_in_place (gpointer plan, const CbiNode * n,
    const CbiEltwiseStep * step, GError ** error);

/* The op families' planners (CbiPlanNodeFunc, cbiplanner.h): each adds
 * the steps of node @n of the CbiCpuPlan @plan, with the fused activation
 * @post (nullable) where the op table allows one; the activations it
 * writes come from the memory plan; the plan's scratch_bytes grows to the
 * scratchpad its primitives need. */
/* conv.c: how many groups of a grouped convolution of @groups groups of
 * @in_per_group input channels each run as one in bfloat16 on a matrix
 * unit (1: none merged) */
guint cbi_cpu_conv_group_merge (gint64 groups, gint64 in_per_group);
gboolean cbi_cpu_plan_conv (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_eltwise (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_binary (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_prelu (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_pool (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_resize (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_concat (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_pad (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_copy (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
/* layout.c: whether node @n is a Slice of a range along each axis, which
 * cbi_cpu_plan_copy () plans as a part of its input in the input's own
 * layout */
gboolean cbi_cpu_slice_is_part (const CbiCpuPlan * plan, const CbiNode * n);
/* layout.c: whether activation @t, in a wide bfloat16 plan, reaches only
 * MatMuls, through views, Transposes and oneDNN's element-wise ops that
 * keep its type: then bfloat16 from where it is written, and the
 * products read it as it is */
gboolean cbi_cpu_moves_into_products (CbiCpuPlan * plan, gint t);
gboolean cbi_cpu_plan_reshape (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_permute (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_matrix (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_instance_norm (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_softmax (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_reduce (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_layer_norm (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_recurrent (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_split (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);
gboolean cbi_cpu_plan_where (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);

/* bf16.c: sets @plan->conv_bf16: which convolutions of the bfloat16 plan
 * take bfloat16 operands (the wide plan: all, the image's too; the
 * narrow one: the groups that gain) */
void cbi_cpu_choose_bf16 (CbiCpuPlan * plan);
/* bf16.c: sets @plan->tensor_bf16 (after cbi_cpu_choose_bf16 ()): the
 * activations that are bfloat16, from the convolutions in bfloat16
 * through the oneDNN primitives that keep the type they read */
void cbi_cpu_choose_bf16_tensors (CbiCpuPlan * plan);
/* bf16.c: the products convolution (or ConvTranspose) @n computes for
 * @plan's shapes */
gdouble cbi_cpu_conv_products (const CbiCpuPlan * plan, const CbiNode * n);
/* bf16.c: whether ops that compute @products products into @outputs
 * output values, converting @converted values in @conversions reorders
 * into bfloat16, gain from it (the rules of the convolution groups) */
gboolean cbi_cpu_bf16_pays (gdouble products, gdouble outputs,
    gdouble converted, guint conversions);
/* bf16.c: whether activation @out, written by a convolution with @post
 * fused (nullable), passes in bfloat16 to the convolutions that read it:
 * only convolutions read it, as their input; it is no output of the
 * graph; no loop of ours runs on it (an activation that is no post-op,
 * or steps after it) */
gboolean cbi_cpu_conv_link (const CbiGraph * graph, const CbiNode * post,
    gint out);

/* plan.c: the planners, for the interface table */
extern const CbiPlanners cbi_cpu_planners;

G_END_DECLS
