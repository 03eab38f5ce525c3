/* cudabatchinfer: the CPU backend, on oneDNN 2.x
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every primitive is created at plan time with a user-managed scratchpad,
 * so one workspace block from the pool serves all of them and nothing is
 * allocated while a batch runs. Activations between layers use whatever
 * layout oneDNN prefers ("any"); only the graph's input and output are
 * plain NCHW, because those are what packing and unpacking touch.
 */
#include "cbibackend.h"
#include "cbicpuloops.h"
#include "cbierror.h"
#include "cbiplanmemory.h"
#include "cbimath.h"

#include <gst/gst.h>
#include <dnnl.h>
#include <dnnl_debug.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (cbi_cpu_debug);
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

static gboolean
cbi_dnnl_check (dnnl_status_t status, const gchar * what, const gchar * file,
    gint line, GError ** error)
{
  if (status == dnnl_success)
    return TRUE;
  GST_ERROR ("%s:%d: %s failed: %s", file, line, what,
      dnnl_status2str (status));
  g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "oneDNN: %s failed: %s",
      what, dnnl_status2str (status));
  return FALSE;
}

#define DNNL_CHECK(call, what) \
  cbi_dnnl_check ((call), (what), __FILE__, __LINE__, error)

static const CbiAllocator *
cbi_cpu_allocator (CbiBackend * backend)
{
  return cbi_host_allocator ();
}

static void
cbi_cpu_free (CbiBackend * backend)
{
  CbiCpu *cpu = backend->context;

  if (cpu->stream)
    dnnl_stream_destroy (cpu->stream);
  if (cpu->engine)
    dnnl_engine_destroy (cpu->engine);
  g_free (cpu);
  g_free (backend);
}

static void
cbi_cpu_free_plan (CbiBackend * backend, gpointer p, CbiPool * pool,
    CbiPool * staging)
{
  CbiCpuPlan *plan = p;
  guint i;

  for (i = 0; i < plan->steps->len; i++) {
    CbiCpuStep *step = &g_array_index (plan->steps, CbiCpuStep, i);
    if (step->prim)
      dnnl_primitive_destroy (step->prim);
    g_free (step->loop);
  }
  for (i = 0; i < plan->memories->len; i++)
    dnnl_memory_destroy (g_ptr_array_index (plan->memories, i));
  cbi_mem_plan_free (plan->memory);
  g_array_free (plan->steps, TRUE);
  g_ptr_array_free (plan->memories, TRUE);
  g_free (plan->mds);
  g_free (plan->mems);
  g_free (plan);
}

/* Wraps @handle in a dnnl_memory owned by the plan. */
static dnnl_memory_t
cbi_cpu_memory (CbiCpu * cpu, CbiCpuPlan * plan,
    const dnnl_memory_desc_t * md, gpointer handle, GError ** error)
{
  dnnl_memory_t mem = NULL;

  if (!DNNL_CHECK (dnnl_memory_create (&mem, md, cpu->engine, handle),
          "dnnl_memory_create"))
    return NULL;
  g_ptr_array_add (plan->memories, mem);
  return mem;
}

/* A memory for @md with a fresh block from the pool. */
static dnnl_memory_t
cbi_cpu_pooled_memory (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    const dnnl_memory_desc_t * md, const gchar * what, GError ** error)
{
  gpointer block = cbi_mem_plan_alloc (plan->memory,
      dnnl_memory_desc_get_size (md), what, error);

  return block ? cbi_cpu_memory (cpu, plan, md, block, error) : NULL;
}

/* A memory for activation @tensor (-1: a copy in another layout), where
 * the memory plan puts it. */
static dnnl_memory_t
cbi_cpu_activation (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    gint tensor, const dnnl_memory_desc_t * md, GError ** error)
{
  gpointer block = cbi_mem_plan_activation (plan->memory, tensor,
      dnnl_memory_desc_get_size (md), error);

  return block ? cbi_cpu_memory (cpu, plan, md, block, error) : NULL;
}

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
static gboolean
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

static gboolean
cbi_cpu_shape_md (dnnl_memory_desc_t * md, const CbiShape * shape,
    GError ** error)
{
  return cbi_cpu_plain_md (md, shape->n_dims, shape->dims, shape->n_dims,
      error);
}

/* A desc of @shape in whatever layout the primitive prefers. */
static gboolean
cbi_cpu_any_md (dnnl_memory_desc_t * md, const CbiShape * shape,
    GError ** error)
{
  dnnl_dims_t dims;

  memcpy (dims, shape->dims, shape->n_dims * sizeof (gint64));
  return DNNL_CHECK (dnnl_memory_desc_init_by_tag (md, shape->n_dims, dims,
          dnnl_f32, dnnl_format_tag_any), "activation desc");
}

/* Adds a step copying @from into @to, converting the layout. */
static gboolean
cbi_cpu_add_reorder (CbiCpu * cpu, CbiCpuPlan * plan,
    const dnnl_memory_desc_t * from_md, dnnl_memory_t from,
    const dnnl_memory_desc_t * to_md, dnnl_memory_t to, GError ** error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to} };
  gboolean ok;

  ok = DNNL_CHECK (dnnl_reorder_primitive_desc_create (&pd, from_md,
          cpu->engine, to_md, cpu->engine, NULL), "reorder desc")
      && cbi_cpu_add_step (plan, pd, args, 2, error);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  return ok;
}

/* A memory of @md over the data of @mem: another view of the same
 * elements (a reshape of a row-major tensor, or strides for a
 * transposition). */
static dnnl_memory_t
cbi_cpu_view (CbiCpu * cpu, CbiCpuPlan * plan, dnnl_memory_t mem,
    const dnnl_memory_desc_t * md, GError ** error)
{
  gpointer handle = NULL;

  dnnl_memory_get_data_handle (mem, &handle);
  return cbi_cpu_memory (cpu, plan, md, handle, error);
}

typedef struct
{
  dnnl_alg_kind_t alg;
  gfloat alpha;
  gfloat beta;
} CbiCpuEltwise;

static void
cbi_cpu_step (CbiCpuEltwise * step, dnnl_alg_kind_t alg, gfloat alpha,
    gfloat beta)
{
  step->alg = alg;
  step->alpha = alpha;
  step->beta = beta;
}

/* oneDNN's form of element-wise op @n: one or two eltwise steps. */
static guint
cbi_cpu_eltwise_steps (const CbiNode * n, CbiCpuEltwise steps[2])
{
  switch (cbi_op_info (n->op)->eltwise) {
    case CBI_K_RELU:           /* alpha is LeakyRelu's slope */
      cbi_cpu_step (&steps[0], dnnl_eltwise_relu, n->alpha, 0.0f);
      return 1;
    case CBI_K_SIGMOID:
      cbi_cpu_step (&steps[0], dnnl_eltwise_logistic, 0.0f, 0.0f);
      return 1;
    case CBI_K_TANH:
      cbi_cpu_step (&steps[0], dnnl_eltwise_tanh, 0.0f, 0.0f);
      return 1;
    case CBI_K_CLIP:
      cbi_cpu_step (&steps[0], dnnl_eltwise_clip, n->alpha, n->beta);
      return 1;
    case CBI_K_ELU:
      cbi_cpu_step (&steps[0], dnnl_eltwise_elu, n->alpha, 0.0f);
      return 1;
    case CBI_K_HARD_SIGMOID:   /* oneDNN 2.6 has none: linear, then clip */
      cbi_cpu_step (&steps[0], dnnl_eltwise_linear, n->alpha, n->beta);
      cbi_cpu_step (&steps[1], dnnl_eltwise_clip, 0.0f, 1.0f);
      return 2;
    case CBI_K_HARD_SWISH:     /* x relu6 (x + 3) / 6, as ONNX */
      cbi_cpu_step (&steps[0], dnnl_eltwise_hardswish, 0.0f, 0.0f);
      return 1;
    case CBI_K_IDENTITY:
      cbi_cpu_step (&steps[0], dnnl_eltwise_linear, 1.0f, 0.0f);
      return 1;
    default:
      return 0;
  }
}

/* An attribute with a user scratchpad and, as post-ops, the eltwise steps
 * of @post from @skip on. */
static gboolean
cbi_cpu_attr (const CbiNode * post, guint skip, dnnl_primitive_attr_t * attr,
    GError ** error)
{
  CbiCpuEltwise steps[2];
  dnnl_post_ops_t ops = NULL;
  guint n = post ? cbi_cpu_eltwise_steps (post, steps) : 0, i;
  gboolean ok;

  if (!DNNL_CHECK (dnnl_primitive_attr_create (attr),
          "dnnl_primitive_attr_create"))
    return FALSE;
  ok = DNNL_CHECK (dnnl_primitive_attr_set_scratchpad_mode (*attr,
          dnnl_scratchpad_mode_user), "set_scratchpad_mode");
  if (ok && n > skip) {
    ok = DNNL_CHECK (dnnl_post_ops_create (&ops), "dnnl_post_ops_create");
    for (i = skip; ok && i < n; i++)
      ok = DNNL_CHECK (dnnl_post_ops_append_eltwise (ops, 1.0f, steps[i].alg,
              steps[i].alpha, steps[i].beta), "append_eltwise");
    ok = ok && DNNL_CHECK (dnnl_primitive_attr_set_post_ops (*attr, ops),
        "set_post_ops");
    if (ops)
      dnnl_post_ops_destroy (ops);
  }
  return ok;
}

/* Adds the step of @pd: it reads @inputs and writes a new activation @out
 * in the layout @pd chose, with the shared scratchpad. */
static gboolean
cbi_cpu_finish (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    const_dnnl_primitive_desc_t pd, const dnnl_exec_arg_t * inputs,
    gint n_inputs, gint out, guint64 * workspace, GError ** error)
{
  const dnnl_memory_desc_t *scratch = cbi_cpu_scratchpad_md (pd);
  dnnl_exec_arg_t args[CBI_MAX_ARGS];
  dnnl_memory_t ymem, smem;

  plan->mds[out] = *dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0);
  ymem = cbi_cpu_activation (cpu, plan, pool, out, &plan->mds[out], error);
  smem = ymem ? cbi_cpu_memory (cpu, plan, scratch, DNNL_MEMORY_NONE,
      error) : NULL;
  if (smem == NULL)
    return FALSE;
  plan->mems[out] = ymem;
  *workspace = MAX (*workspace, dnnl_memory_desc_get_size (scratch));
  memcpy (args, inputs, n_inputs * sizeof (dnnl_exec_arg_t));
  args[n_inputs].arg = DNNL_ARG_DST;
  args[n_inputs].memory = ymem;
  args[n_inputs + 1].arg = DNNL_ARG_SCRATCHPAD;
  args[n_inputs + 1].memory = smem;
  return cbi_cpu_add_step (plan, pd, args, n_inputs + 2, error);
}

/* The weights in the layout the primitive chose: the constant data itself
 * when that is plain, else a reordered copy made once in the pool. */
static dnnl_memory_t
cbi_cpu_weights (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    const dnnl_memory_desc_t * user_md, const dnnl_memory_desc_t * md,
    gfloat * data, GError ** error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_exec_arg_t args[2];
  dnnl_memory_t user, mem;
  gboolean ok;

  user = cbi_cpu_memory (cpu, plan, user_md, data, error);
  if (user == NULL || dnnl_memory_desc_equal (md, user_md))
    return user;
  mem = cbi_cpu_pooled_memory (cpu, plan, pool, md, "convolution weights",
      error);
  if (mem == NULL)
    return NULL;
  args[0].arg = DNNL_ARG_FROM;
  args[0].memory = user;
  args[1].arg = DNNL_ARG_TO;
  args[1].memory = mem;
  ok = DNNL_CHECK (dnnl_reorder_primitive_desc_create (&pd, user_md,
          cpu->engine, md, cpu->engine, NULL), "weights reorder desc")
      && DNNL_CHECK (dnnl_primitive_create (&reorder, pd), "weights reorder")
      && DNNL_CHECK (dnnl_primitive_execute (reorder, cpu->stream, 2, args),
      "weights reorder execute")
      && DNNL_CHECK (dnnl_stream_wait (cpu->stream), "dnnl_stream_wait");
  if (reorder)
    dnnl_primitive_destroy (reorder);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  return ok ? mem : NULL;
}

/* Activation @t in layout @md: itself when it has it, else a copy made
 * by a reorder step, for a primitive or loop that needs that layout. */
static dnnl_memory_t
cbi_cpu_in_layout (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool, gint t,
    const dnnl_memory_desc_t * md, GError ** error)
{
  dnnl_memory_t mem;

  if (dnnl_memory_desc_equal (md, &plan->mds[t]))
    return plan->mems[t];
  mem = cbi_cpu_activation (cpu, plan, pool, -1, md, error);
  if (mem == NULL || !cbi_cpu_add_reorder (cpu, plan, &plan->mds[t],
          plan->mems[t], md, mem, error))
    return NULL;
  return mem;
}

/* Activation @t row-major, in its shape from @shapes. */
static dnnl_memory_t
cbi_cpu_plain (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool, gint t,
    const CbiShape * shapes, dnnl_memory_desc_t * md, GError ** error)
{
  if (!cbi_cpu_shape_md (md, &shapes[t], error))
    return NULL;
  return cbi_cpu_in_layout (cpu, plan, pool, t, md, error);
}

/* Activation @out was computed with 8 channels for the @shape's fewer:
 * a loop copies the real ones out, plain, where the layout is plain or
 * blocked by 8 (oneDNN's reorder of a channel slice is a slow reference
 * loop), else that reorder. */
static gboolean
cbi_cpu_narrow (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool, gint out,
    const CbiShape * shape, GError ** error)
{
  const dnnl_memory_desc_t wide = plan->mds[out];
  dnnl_memory_t wide_mem = plan->mems[out], mem;
  dnnl_dims_t dims;
  dnnl_memory_desc_t md;
  CbiCpuStep step = { NULL, 0, };
  CbiCpuChannels *ch;
  gint64 block = 0;

  memcpy (dims, wide.dims, 4 * sizeof (gint64));
  if (!DNNL_CHECK (dnnl_memory_desc_init_by_tag (&md, 4, dims, dnnl_f32,
              dnnl_nChw8c), "blocked desc"))
    return FALSE;
  if (dnnl_memory_desc_equal (&md, &wide))
    block = 8;
  else if (DNNL_CHECK (dnnl_memory_desc_init_by_tag (&md, 4, dims, dnnl_f32,
              dnnl_nchw), "plain desc") && dnnl_memory_desc_equal (&md, &wide))
    block = 1;
  if (!cbi_cpu_shape_md (&md, shape, error))
    return FALSE;
  if (block == 0) {
    const dnnl_dims_t origin = { 0, 0, 0, 0 };
    memcpy (dims, shape->dims, 4 * sizeof (gint64));
    if (!DNNL_CHECK (dnnl_memory_desc_init_submemory (&plan->mds[out], &wide,
                dims, origin), "output channels desc"))
      return FALSE;
    plan->mems[out] = cbi_cpu_view (cpu, plan, wide_mem, &plan->mds[out],
        error);
    return plan->mems[out] != NULL;
  }
  mem = cbi_cpu_activation (cpu, plan, pool, out, &md, error);
  if (mem == NULL)
    return FALSE;
  plan->mds[out] = md;
  plan->mems[out] = mem;
  ch = g_new0 (CbiCpuChannels, 1);
  dnnl_memory_get_data_handle (wide_mem, (void **) &ch->src);
  dnnl_memory_get_data_handle (mem, (void **) &ch->dst);
  ch->n = shape->dims[0];
  ch->c = shape->dims[1];
  ch->hw = shape->dims[2] * shape->dims[3];
  ch->src_channels = 8;
  ch->block = block;
  step.run = cbi_cpu_run_channels;
  step.loop = ch;
  g_array_append_val (plan->steps, step);
  return TRUE;
}

static gboolean
cbi_cpu_plan_conv (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiNode * n, const CbiNode * post, const CbiShape * shapes,
    CbiPool * pool, guint64 * workspace, GError ** error)
{
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiTensorInfo *b = n->n_inputs > 2 && n->inputs[2] >= 0 ?
      cbi_graph_tensor (graph, n->inputs[2]) : NULL;
  gint out = post ? post->output : n->output;
  const CbiConvAttrs *a = &n->conv;
  dnnl_dims_t wdims, bdims, ydims, strides, dil, pad_l, pad_r;
  dnnl_memory_desc_t wmd_any, wmd_user, bmd, ymd, xmd;
  gboolean transpose = n->op == CBI_OP_CONV_TRANSPOSE;
  dnnl_convolution_desc_t desc;
  dnnl_deconvolution_desc_t tdesc;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_memory_t xmem, wmem, bmem = NULL;
  gfloat *wdata = w->data, *bdata = b ? b->data : NULL;
  gint wnd, i;
  gboolean ok = FALSE;
  /* oneDNN's kernels for fewer than 8 output channels (an image's last
   * layer) are several times slower than for 8: such an output is
   * computed with zero filters up to 8 and read as its first channels */
  const gint64 oc = w->dims[0];
  gboolean widen = !transpose && a->group == 1 && oc < 8
      && cbi_graph_is_output (graph, out);

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

  if (a->group > 1) {
    wnd = 5;
    wdims[0] = a->group;
    wdims[1] = w->dims[0] / a->group;
    for (i = 1; i < 4; i++)
      wdims[i + 1] = w->dims[i];
  } else {
    wnd = 4;
    for (i = 0; i < 4; i++)
      wdims[i] = w->dims[i];
  }
  /* ConvTranspose weights are (in, out, h, w): oneDNN's iohw */
  if (transpose) {
    wdims[0] = w->dims[1];
    wdims[1] = w->dims[0];
  }
  for (i = 0; i < 4; i++)
    ydims[i] = shapes[out].dims[i];
  if (widen)
    wdims[0] = ydims[1] = 8;
  for (i = 0; i < 2; i++) {
    strides[i] = a->strides[i];
    dil[i] = a->dilations[i] - 1;       /* oneDNN counts the gaps */
    pad_l[i] = a->pads[i];
    /* extra output rows of ConvTranspose: less padding on that side */
    pad_r[i] = a->pads[i + 2] - a->output_padding[i];
  }
  bdims[0] = wdims[0];
  /* the source too in the layout the primitive prefers: a plain one (after
   * a Pad or an InstanceNormalization) would send it to a slow kernel */
  if (!cbi_cpu_any_md (&xmd, &shapes[n->inputs[0]], error))
    return FALSE;

  if (!DNNL_CHECK (dnnl_memory_desc_init_by_tag (&wmd_any, wnd, wdims,
              dnnl_f32, dnnl_format_tag_any), "weights desc")
      || !DNNL_CHECK (dnnl_memory_desc_init_by_tag (&wmd_user, wnd, wdims,
              dnnl_f32, transpose ? dnnl_iohw : wnd == 5 ? dnnl_goihw :
              dnnl_oihw), "weights desc")
      || !DNNL_CHECK (dnnl_memory_desc_init_by_tag (&bmd, 1, bdims, dnnl_f32,
              dnnl_x), "bias desc")
      || !DNNL_CHECK (dnnl_memory_desc_init_by_tag (&ymd, 4, ydims, dnnl_f32,
              dnnl_format_tag_any), "dst desc")
      || !(transpose ?
          DNNL_CHECK (dnnl_dilated_deconvolution_forward_desc_init (&tdesc,
                  dnnl_forward_inference, dnnl_deconvolution_direct,
                  &xmd, &wmd_any, b ? &bmd : NULL, &ymd,
                  strides, dil, pad_l, pad_r), "deconvolution desc") :
          DNNL_CHECK (dnnl_dilated_convolution_forward_desc_init (&desc,
                  dnnl_forward_inference, dnnl_convolution_auto,
                  &xmd, &wmd_any, bdata ? &bmd : NULL, &ymd,
                  strides, dil, pad_l, pad_r), "convolution desc"))
      || !cbi_cpu_attr (post, 0, &attr, error)
      || !DNNL_CHECK (dnnl_primitive_desc_create (&pd, transpose ?
              (const_dnnl_op_desc_t) & tdesc : (const_dnnl_op_desc_t) & desc,
              attr, cpu->engine, NULL), "convolution primitive desc"))
    goto done;

  xmd = *dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
  xmem = cbi_cpu_in_layout (cpu, plan, pool, n->inputs[0], &xmd, error);
  if (xmem == NULL)
    goto done;
  wmem = cbi_cpu_weights (cpu, plan, pool, &wmd_user,
      dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0), wdata,
      error);
  if (wmem == NULL)
    goto done;
  if (bdata && (bmem = cbi_cpu_memory (cpu, plan, &bmd, bdata, error)) == NULL)
    goto done;

  {
    dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, xmem},
      {DNNL_ARG_WEIGHTS, wmem},
      {DNNL_ARG_BIAS, bmem},
    };
    ok = cbi_cpu_finish (cpu, plan, pool, pd, args, bmem ? 3 : 2, out,
        workspace, error);
  }
  if (ok && widen)
    ok = cbi_cpu_narrow (cpu, plan, pool, out, &shapes[out], error);

done:
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}

/* A primitive for @op_desc, with the eltwise steps of @post from @skip on
 * as post-ops, reading @inputs and writing activation @out. */
static gboolean
cbi_cpu_plan_op (CbiCpu * cpu, CbiCpuPlan * plan, const_dnnl_op_desc_t op_desc,
    const CbiNode * post, guint skip, const dnnl_exec_arg_t * inputs,
    gint n_inputs, gint out, CbiPool * pool, guint64 * workspace,
    GError ** error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  gboolean ok;

  ok = cbi_cpu_attr (post, skip, &attr, error)
      && DNNL_CHECK (dnnl_primitive_desc_create (&pd, op_desc, attr,
          cpu->engine, NULL), "primitive desc")
      && cbi_cpu_finish (cpu, plan, pool, pd, inputs, n_inputs, out,
      workspace, error);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}

static gboolean cbi_cpu_reshape_output (CbiCpu * cpu, CbiCpuPlan * plan,
    gint out, const CbiShape * shapes, GError ** error);

static gboolean
cbi_cpu_plan_eltwise (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error)
{
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  dnnl_memory_desc_t md = plan->mds[n->inputs[0]];
  const gboolean one_d = md.ndims == 1;
  CbiCpuEltwise steps[2];
  dnnl_eltwise_desc_t desc;

  if (cbi_cpu_eltwise_steps (n, steps) == 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "node %s: op %s is not "
        "supported by the CPU backend", n->name, cbi_op_type_name (n->op));
    return FALSE;
  }
  /* oneDNN 2.6 drops the post-op of a 1-D eltwise (its output is all
   * zeros): such a tensor runs as 1 x n */
  if (one_d) {
    gint64 row[2] = { 1, md.dims[0] };
    if (!cbi_cpu_plain_md (&md, 2, row, 2, error)
        || (args[0].memory = cbi_cpu_view (cpu, plan, args[0].memory, &md,
                error)) == NULL)
      return FALSE;
  }
  /* the first step is the primitive, a second one its post-op */
  return DNNL_CHECK (dnnl_eltwise_forward_desc_init (&desc,
          dnnl_forward_inference, steps[0].alg, &md, steps[0].alpha,
          steps[0].beta), "eltwise desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, n, 1, args, 1, n->output, pool,
      workspace, error)
      && (!one_d || cbi_cpu_reshape_output (cpu, plan, n->output, shapes,
          error));
}

/* The second operand of node @n, which broadcasts to the first: an
 * activation of the same shape in the first's layout (reordered when it
 * differs), else row-major with leading ones up to the first's rank, as
 * oneDNN broadcasts it; a constant is used where it is. */
static dnnl_memory_t
cbi_cpu_second_operand (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    const CbiGraph * graph, const CbiNode * n, const CbiShape * shapes,
    dnnl_memory_desc_t * md, GError ** error)
{
  const CbiTensorInfo *b = cbi_graph_tensor (graph, n->inputs[1]);
  const CbiShape *as = &shapes[n->inputs[0]], *bs = &shapes[n->inputs[1]];
  dnnl_memory_desc_t own;
  dnnl_memory_t mem;

  if (b->data == NULL && cbi_shape_equal (as, bs)) {
    *md = plan->mds[n->inputs[0]];
    return cbi_cpu_in_layout (cpu, plan, pool, n->inputs[1], md, error);
  }
  if (!cbi_cpu_plain_md (md, bs->n_dims, bs->dims, as->n_dims, error))
    return NULL;
  if (b->data)
    return cbi_cpu_memory (cpu, plan, md, b->data, error);
  mem = cbi_cpu_plain (cpu, plan, pool, n->inputs[1], shapes, &own, error);
  return mem ? cbi_cpu_view (cpu, plan, mem, md, error) : NULL;
}

static gboolean
cbi_cpu_plan_binary (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiNode * n, const CbiNode * post, const CbiShape * shapes,
    CbiPool * pool, guint64 * workspace, GError ** error)
{
  const dnnl_memory_desc_t *md = &plan->mds[n->inputs[0]];
  static const dnnl_alg_kind_t algs[] = {
    [CBI_K_ADD] = dnnl_binary_add,
    [CBI_K_SUB] = dnnl_binary_sub,
    [CBI_K_MUL] = dnnl_binary_mul,
    [CBI_K_DIV] = dnnl_binary_div,
  };
  dnnl_alg_kind_t alg = algs[cbi_op_info (n->op)->binary];
  dnnl_exec_arg_t args[2];
  dnnl_memory_desc_t b_md;
  dnnl_binary_desc_t desc;

  args[0].arg = DNNL_ARG_SRC_0;
  args[0].memory = plan->mems[n->inputs[0]];
  args[1].arg = DNNL_ARG_SRC_1;
  args[1].memory = cbi_cpu_second_operand (cpu, plan, pool, graph, n, shapes,
      &b_md, error);
  return args[1].memory
      && DNNL_CHECK (dnnl_binary_desc_init (&desc, alg, md, &b_md, md),
      "binary desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, post, 0, args, 2,
      post ? post->output : n->output, pool, workspace, error);
}

/* MaxPool, AveragePool, and GlobalAveragePool as an average over the
 * whole plane. */
static gboolean
cbi_cpu_plan_pool (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error)
{
  const CbiShape *x = &shapes[n->inputs[0]];
  CbiConvAttrs global = { {1, 1}, {1, 1}, {0, 0, 0, 0}, 1,
  {x->dims[2], x->dims[3]}
  };
  const CbiConvAttrs *a = n->op == CBI_OP_GLOBAL_AVERAGE_POOL ? &global :
      &n->conv;
  dnnl_alg_kind_t alg = n->op == CBI_OP_MAX_POOL ? dnnl_pooling_max :
      a->count_include_pad ? dnnl_pooling_avg_include_padding :
      dnnl_pooling_avg_exclude_padding;
  dnnl_dims_t strides = { a->strides[0], a->strides[1] };
  dnnl_dims_t kernel = { a->kernel[0], a->kernel[1] };
  dnnl_dims_t dil = { a->dilations[0] - 1, a->dilations[1] - 1 };
  dnnl_dims_t pad_l = { a->pads[0], a->pads[1] };
  dnnl_dims_t pad_r = { a->pads[2], a->pads[3] };
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  dnnl_pooling_v2_desc_t desc;
  dnnl_memory_desc_t dst;

  return cbi_cpu_any_md (&dst, &shapes[n->output], error)
      && DNNL_CHECK (dnnl_pooling_v2_forward_desc_init (&desc,
          dnnl_forward_inference, alg, &plan->mds[n->inputs[0]], &dst,
          strides, kernel, dil, pad_l, pad_r), "pooling desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, NULL, 0, args, 1, n->output,
      pool, workspace, error);
}

static gboolean
cbi_cpu_plan_resize (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error)
{
  dnnl_alg_kind_t alg = n->mode == CBI_RESIZE_LINEAR ?
      dnnl_resampling_linear : dnnl_resampling_nearest;
  const float factors[2] = { n->alpha, n->beta };
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  dnnl_resampling_desc_t desc;
  dnnl_memory_desc_t dst;

  return cbi_cpu_any_md (&dst, &shapes[n->output], error)
      && DNNL_CHECK (dnnl_resampling_forward_desc_init (&desc,
          dnnl_forward_inference, alg, factors, &plan->mds[n->inputs[0]],
          &dst), "resampling desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, NULL, 0, args, 1, n->output,
      pool, workspace, error);
}

static gboolean
cbi_cpu_plan_concat (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiNode * n, const CbiShape * shapes, CbiPool * pool,
    guint64 * workspace, GError ** error)
{
  dnnl_memory_desc_t srcs[CBI_MAX_NODE_INPUTS], dst;
  dnnl_exec_arg_t args[CBI_MAX_NODE_INPUTS];
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  gboolean ok;
  gint axis;
  guint i;

  for (i = 0; i < n->n_inputs; i++) {
    gint t = n->inputs[i];
    gfloat *data = cbi_graph_tensor (graph, t)->data;
    args[i].arg = DNNL_ARG_MULTIPLE_SRC + i;
    /* a constant joins as it is, row-major */
    if (data && (!cbi_cpu_shape_md (&srcs[i], &shapes[t], error)
            || (args[i].memory = cbi_cpu_memory (cpu, plan, &srcs[i], data,
                    error)) == NULL))
      return FALSE;
    if (data == NULL) {
      srcs[i] = plan->mds[t];
      args[i].memory = plan->mems[t];
    }
  }
  /* shape inference checked the axis */
  axis = n->axis < 0 ? n->axis + shapes[n->output].n_dims : n->axis;
  ok = cbi_cpu_any_md (&dst, &shapes[n->output], error)
      && cbi_cpu_attr (NULL, 0, &attr, error)
      && DNNL_CHECK (dnnl_concat_primitive_desc_create (&pd, &dst,
          n->n_inputs, axis, srcs, attr, cpu->engine), "concat primitive desc")
      && cbi_cpu_finish (cpu, plan, pool, pd, args, n->n_inputs, n->output,
      workspace, error);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  return ok;
}

static gboolean
cbi_cpu_plan_pad (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, GError ** error)
{
  const gint64 *x = shapes[n->inputs[0]].dims;
  dnnl_memory_desc_t in_md, out_md;
  dnnl_memory_t in, out;
  CbiCpuStep step = { NULL, 0, };
  CbiCpuPad *pad;

  if (!cbi_cpu_shape_md (&in_md, &shapes[n->inputs[0]], error)
      || !cbi_cpu_shape_md (&out_md, &shapes[n->output], error))
    return FALSE;
  in = cbi_cpu_in_layout (cpu, plan, pool, n->inputs[0], &in_md, error);
  out = in ? cbi_cpu_activation (cpu, plan, pool, n->output, &out_md,
      error) : NULL;
  if (out == NULL)
    return FALSE;
  plan->mds[n->output] = out_md;
  plan->mems[n->output] = out;

  pad = g_new0 (CbiCpuPad, 1);
  step.run = cbi_cpu_run_pad;
  step.loop = pad;
  dnnl_memory_get_data_handle (in, (void **) &pad->src);
  dnnl_memory_get_data_handle (out, (void **) &pad->dst);
  pad->n = x[0];
  pad->c = x[1];
  pad->h = x[2];
  pad->w = x[3];
  pad->top = n->conv.pads[0];
  pad->left = n->conv.pads[1];
  pad->bottom = n->conv.pads[2];
  pad->right = n->conv.pads[3];
  pad->fill = n->mode;
  pad->value = n->alpha;
  g_array_append_val (plan->steps, step);
  return TRUE;
}

/* InstanceNormalization, and a Relu after it, in our own loop, in the
 * layout its input has when that is plain or channel-blocked by 8 or 16
 * (what convolutions give): no reorder either side. */
static gboolean
cbi_cpu_plan_instance_norm (CbiCpu * cpu, CbiCpuPlan * plan,
    const CbiGraph * graph, const CbiNode * n, const CbiNode * post,
    const CbiShape * shapes, CbiPool * pool, GError ** error)
{
  static const struct
  {
    dnnl_format_tag_t tag;
    gint64 block;
  } layouts[] = { {dnnl_nChw16c, 16}, {dnnl_nChw8c, 8}, {dnnl_nchw, 1} };
  const CbiShape *xs = &shapes[n->inputs[0]];
  gint out = post ? post->output : n->output;
  CbiCpuStep step = { NULL, 0, };
  CbiCpuInstanceNorm *norm;
  dnnl_memory_desc_t md;
  dnnl_memory_t in = NULL, mem;
  dnnl_dims_t dims;
  gint64 block = 1;
  guint i;

  if (cbi_graph_tensor (graph, n->inputs[1])->dims[0] != xs->dims[1]
      || cbi_graph_tensor (graph, n->inputs[2])->dims[0] != xs->dims[1]) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "node %s "
        "(InstanceNormalization): scale and B need %" G_GINT64_FORMAT
        " values", n->name, xs->dims[1]);
    return FALSE;
  }
  memcpy (dims, xs->dims, 4 * sizeof (gint64));
  for (i = 0; i < G_N_ELEMENTS (layouts) && in == NULL; i++) {
    if (!DNNL_CHECK (dnnl_memory_desc_init_by_tag (&md, 4, dims, dnnl_f32,
                layouts[i].tag), "instance norm desc"))
      return FALSE;
    if (dnnl_memory_desc_equal (&md, &plan->mds[n->inputs[0]])) {
      in = plan->mems[n->inputs[0]];
      block = layouts[i].block;
    }
  }
  /* md is plain NCHW now, for any other layout */
  if (in == NULL && (in = cbi_cpu_in_layout (cpu, plan, pool, n->inputs[0],
              &md, error)) == NULL)
    return FALSE;
  mem = cbi_cpu_activation (cpu, plan, pool, out, &md, error);
  if (mem == NULL)
    return FALSE;
  plan->mds[out] = md;
  plan->mems[out] = mem;

  norm = g_new0 (CbiCpuInstanceNorm, 1);
  dnnl_memory_get_data_handle (in, (void **) &norm->src);
  dnnl_memory_get_data_handle (mem, (void **) &norm->dst);
  norm->n = xs->dims[0];
  norm->c = xs->dims[1];
  norm->hw = xs->dims[2] * xs->dims[3];
  norm->block = block;
  norm->gamma = cbi_graph_tensor (graph, n->inputs[1])->data;
  norm->beta = cbi_graph_tensor (graph, n->inputs[2])->data;
  norm->epsilon = n->alpha;
  norm->relu = post != NULL;
  norm->slope = post ? post->alpha : 0.0f;
  step.run = cbi_cpu_run_instance_norm;
  step.loop = norm;
  g_array_append_val (plan->steps, step);
  return TRUE;
}

/* Gives output @out the row-major desc of its shape over the block the
 * primitive just wrote there in another shape of the same elements. */
static gboolean
cbi_cpu_reshape_output (CbiCpu * cpu, CbiCpuPlan * plan, gint out,
    const CbiShape * shapes, GError ** error)
{
  dnnl_memory_desc_t md;
  dnnl_memory_t mem;

  if (!cbi_cpu_shape_md (&md, &shapes[out], error))
    return FALSE;
  mem = cbi_cpu_view (cpu, plan, plan->mems[out], &md, error);
  if (mem == NULL)
    return FALSE;
  plan->mds[out] = md;
  plan->mems[out] = mem;
  return TRUE;
}

/* A new row-major activation @out of shape @shapes[@out], and a view of
 * it as @view_md, for a reorder to write. */
static dnnl_memory_t
cbi_cpu_output_view (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    gint out, const CbiShape * shapes, const dnnl_memory_desc_t * view_md,
    GError ** error)
{
  dnnl_memory_t mem;

  if (!cbi_cpu_shape_md (&plan->mds[out], &shapes[out], error))
    return NULL;
  mem = cbi_cpu_activation (cpu, plan, pool, out, &plan->mds[out], error);
  if (mem == NULL)
    return NULL;
  plan->mems[out] = mem;
  return cbi_cpu_view (cpu, plan, mem, view_md, error);
}

/* Reshape and Flatten: one reorder writes the input, whatever its layout,
 * row-major into the output's block. */
static gboolean
cbi_cpu_plan_reshape (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, GError ** error)
{
  gint x = n->inputs[0];
  dnnl_memory_desc_t row_major;
  dnnl_memory_t to;

  if (!cbi_cpu_shape_md (&row_major, &shapes[x], error))
    return FALSE;
  to = cbi_cpu_output_view (cpu, plan, pool, n->output, shapes, &row_major,
      error);
  return to && cbi_cpu_add_reorder (cpu, plan, &plan->mds[x], plan->mems[x],
      &row_major, to, error);
}

/* Writes @from (desc @from_md, dims S) into activation @out as the
 * row-major tensor of dims O[j] = S[perm[j]], which @out's shape then
 * reads (the same elements, maybe another rank). One reorder: the
 * destination is @from's dims with the strides the permutation gives. */
static gboolean
cbi_cpu_plan_permute (CbiCpu * cpu, CbiCpuPlan * plan, CbiPool * pool,
    const dnnl_memory_desc_t * from_md, dnnl_memory_t from,
    const gint64 * perm, gint out, const CbiShape * shapes, GError ** error)
{
  const gint rank = from_md->ndims;
  dnnl_dims_t strides;
  dnnl_memory_desc_t view_md;
  dnnl_memory_t to;
  gint64 stride = 1;
  gint j;

  for (j = rank - 1; j >= 0; j--) {
    strides[perm[j]] = stride;
    stride *= from_md->dims[perm[j]];
  }
  if (!DNNL_CHECK (dnnl_memory_desc_init_by_strides (&view_md, rank,
              from_md->dims, dnnl_f32, strides), "transposed desc"))
    return FALSE;
  to = cbi_cpu_output_view (cpu, plan, pool, out, shapes, &view_md, error);
  return to && cbi_cpu_add_reorder (cpu, plan, from_md, from, &view_md, to,
      error);
}

/* Transpose reorders its input, whatever its layout; DepthToSpace first
 * needs its input row-major, to view it in 6-D. */
static gboolean
cbi_cpu_plan_transpose (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, GError ** error)
{
  gint x = n->inputs[0];
  dnnl_memory_desc_t from_md = plan->mds[x], md;
  dnnl_memory_t from = plan->mems[x];
  gint64 perm[CBI_MAX_DIMS];
  CbiShape view;

  cbi_node_permutation (n, &shapes[x], &view, perm);
  if (n->op == CBI_OP_DEPTH_TO_SPACE
      && ((from = cbi_cpu_plain (cpu, plan, pool, x, shapes, &md,
                  error)) == NULL || !cbi_cpu_shape_md (&from_md, &view, error)
          || (from = cbi_cpu_view (cpu, plan, from, &from_md, error)) == NULL))
    return FALSE;
  return cbi_cpu_plan_permute (cpu, plan, pool, &from_md, from, perm,
      n->output, shapes, error);
}

/* Gemm as a oneDNN matmul: alpha folds into a copy of B laid out [K, N],
 * beta C into a bias of the whole [M, N] output, both made once here. */
static gboolean
cbi_cpu_plan_gemm (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiNode * n, const CbiNode * post, const CbiShape * shapes,
    CbiPool * pool, guint64 * workspace, GError ** error)
{
  const CbiShape *as = &shapes[n->inputs[0]], *ys = &shapes[n->output];
  const gint64 m = ys->dims[0], cols = ys->dims[1];
  const gint64 k = as->dims[n->ints[0] ? 0 : 1];
  dnnl_dims_t a_dims = { m, k }, a_strides = { k, 1 };
  dnnl_dims_t w_dims = { k, cols };
  dnnl_memory_desc_t a_md, a_plain, w_md, bias_md, y_md;
  dnnl_exec_arg_t args[3];
  dnnl_matmul_desc_t desc;
  gfloat *w, *bias = NULL;

  /* transA: the row-major [K, M] input read with swapped strides */
  if (n->ints[0]) {
    a_strides[0] = 1;
    a_strides[1] = m;
  }
  args[0].arg = DNNL_ARG_SRC;
  args[0].memory = cbi_cpu_plain (cpu, plan, pool, n->inputs[0], shapes,
      &a_plain, error);
  if (args[0].memory == NULL
      || !DNNL_CHECK (dnnl_memory_desc_init_by_strides (&a_md, 2, a_dims,
              dnnl_f32, a_strides), "gemm A desc")
      || (args[0].memory = cbi_cpu_view (cpu, plan, args[0].memory, &a_md,
              error)) == NULL)
    return FALSE;

  w = cbi_mem_plan_alloc (plan->memory, k * cols * sizeof (gfloat),
      "gemm weights", error);
  if (w == NULL)
    return FALSE;
  cbi_gemm_weights (graph, n, k, cols, w);
  if (cbi_gemm_has_bias (n)) {
    bias = cbi_mem_plan_alloc (plan->memory, m * cols * sizeof (gfloat),
        "gemm bias", error);
    if (bias == NULL)
      return FALSE;
    cbi_gemm_bias (graph, n, shapes, m, cols, bias);
  }

  args[1].arg = DNNL_ARG_WEIGHTS;
  args[2].arg = DNNL_ARG_BIAS;
  return cbi_cpu_plain_md (&w_md, 2, w_dims, 2, error)
      && cbi_cpu_shape_md (&bias_md, ys, error)
      && cbi_cpu_any_md (&y_md, ys, error)
      && (args[1].memory = cbi_cpu_memory (cpu, plan, &w_md, w, error))
      && (bias == NULL
      || (args[2].memory = cbi_cpu_memory (cpu, plan, &bias_md, bias, error)))
      && DNNL_CHECK (dnnl_matmul_desc_init (&desc, &a_md, &w_md,
          bias ? &bias_md : NULL, &y_md), "matmul desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, post, 0, args, bias ? 3 : 2,
      post ? post->output : n->output, pool, workspace, error);
}

/* MatMul: both operands row-major with leading ones up to the output's
 * rank, where oneDNN broadcasts their batch dimensions. */
static gboolean
cbi_cpu_plan_matmul (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiNode * n, const CbiNode * post, const CbiShape * shapes,
    CbiPool * pool, guint64 * workspace, GError ** error)
{
  const CbiShape *ys = &shapes[n->output];
  dnnl_memory_desc_t md[2], own, y_md;
  dnnl_exec_arg_t args[2];
  dnnl_matmul_desc_t desc;
  gint i;

  for (i = 0; i < 2; i++) {
    gint t = n->inputs[i];
    const CbiTensorInfo *info = cbi_graph_tensor (graph, t);
    dnnl_memory_t mem;
    if (!cbi_cpu_plain_md (&md[i], shapes[t].n_dims, shapes[t].dims,
            ys->n_dims, error))
      return FALSE;
    if (info->data)
      mem = cbi_cpu_memory (cpu, plan, &md[i], info->data, error);
    else if ((mem = cbi_cpu_plain (cpu, plan, pool, t, shapes, &own,
                error)) != NULL)
      mem = cbi_cpu_view (cpu, plan, mem, &md[i], error);
    if (mem == NULL)
      return FALSE;
    args[i].arg = i == 0 ? DNNL_ARG_SRC : DNNL_ARG_WEIGHTS;
    args[i].memory = mem;
  }
  return cbi_cpu_any_md (&y_md, ys, error)
      && DNNL_CHECK (dnnl_matmul_desc_init (&desc, &md[0], &md[1], NULL,
          &y_md), "matmul desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, post, 0, args, 2,
      post ? post->output : n->output, pool, workspace, error);
}

/* Softmax along one axis; the opset < 13 form normalises the input seen
 * as 2-D, everything from @axis on being one row. */
static gboolean
cbi_cpu_plan_softmax (CbiCpu * cpu, CbiCpuPlan * plan, const CbiNode * n,
    const CbiShape * shapes, CbiPool * pool, guint64 * workspace,
    GError ** error)
{
  const CbiShape *xs = &shapes[n->inputs[0]];
  dnnl_exec_arg_t args[1] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]} };
  dnnl_memory_desc_t x_md = plan->mds[n->inputs[0]], y_md, own;
  dnnl_softmax_v2_desc_t desc;
  gint axis = n->axis < 0 ? n->axis + xs->n_dims : n->axis;
  CbiShape rows = { 2, {1, 1} };
  gint d;

  if (n->mode == 1) {
    for (d = 0; d < xs->n_dims; d++)
      rows.dims[d < axis ? 0 : 1] *= xs->dims[d];
    args[0].memory = cbi_cpu_plain (cpu, plan, pool, n->inputs[0], shapes,
        &own, error);
    if (args[0].memory == NULL || !cbi_cpu_shape_md (&x_md, &rows, error)
        || (args[0].memory = cbi_cpu_view (cpu, plan, args[0].memory, &x_md,
                error)) == NULL)
      return FALSE;
    xs = &rows;
    axis = 1;
  }
  return cbi_cpu_any_md (&y_md, xs, error)
      && DNNL_CHECK (dnnl_softmax_v2_forward_desc_init (&desc,
          dnnl_forward_inference, dnnl_softmax_accurate, &x_md, &y_md, axis),
      "softmax desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, NULL, 0, args, 1, n->output, pool,
      workspace, error)
      && (n->mode == 0 || cbi_cpu_reshape_output (cpu, plan, n->output,
          shapes, error));
}

/* PRelu: the slope, row-major with leading ones, broadcasts as oneDNN's
 * weights. */
static gboolean
cbi_cpu_plan_prelu (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiNode * n, const CbiShape * shapes, CbiPool * pool,
    guint64 * workspace, GError ** error)
{
  const CbiShape *ss = &shapes[n->inputs[1]];
  dnnl_exec_arg_t args[2] = { {DNNL_ARG_SRC, plan->mems[n->inputs[0]]},
  {DNNL_ARG_WEIGHTS, NULL}
  };
  dnnl_memory_desc_t w_md;
  dnnl_prelu_desc_t desc;

  return cbi_cpu_plain_md (&w_md, ss->n_dims, ss->dims,
      shapes[n->inputs[0]].n_dims, error)
      && (args[1].memory = cbi_cpu_memory (cpu, plan, &w_md,
          cbi_graph_tensor (graph, n->inputs[1])->data, error))
      && DNNL_CHECK (dnnl_prelu_forward_desc_init (&desc,
          dnnl_forward_inference, &plan->mds[n->inputs[0]], &w_md),
      "prelu desc")
      && cbi_cpu_plan_op (cpu, plan, &desc, NULL, 0, args, 2, n->output, pool,
      workspace, error);
}

/* The graph's outputs must be row-major for unpacking and reading; a
 * blocked one gets a reorder step. */
static gboolean
cbi_cpu_plan_outputs (CbiCpu * cpu, CbiCpuPlan * plan, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, GError ** error)
{
  dnnl_memory_desc_t md;
  dnnl_memory_t mem;
  guint i;

  for (i = 0; i < graph->n_outputs; i++) {
    gint t = graph->outputs[i];
    mem = cbi_cpu_plain (cpu, plan, pool, t, shapes, &md, error);
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

static gpointer
cbi_cpu_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    guint64 * workspace, GError ** error)
{
  CbiCpu *cpu = backend->context;
  CbiCpuPlan *plan = g_new0 (CbiCpuPlan, 1);
  guint n_tensors = graph->tensors->len, i;
  dnnl_memory_t in;

  plan->steps = g_array_new (FALSE, FALSE, sizeof (CbiCpuStep));
  plan->memories = g_ptr_array_new ();
  plan->memory = cbi_mem_plan_new (graph, pool);
  plan->mds = g_new0 (dnnl_memory_desc_t, n_tensors);
  plan->mems = g_new0 (dnnl_memory_t, n_tensors);
  *workspace = 0;

  if (!cbi_cpu_shape_md (&plan->mds[graph->input], &shapes[graph->input],
          error))
    goto failed;
  plan->input_count = cbi_shape_count (&shapes[graph->input]);
  in = cbi_cpu_activation (cpu, plan, pool, graph->input,
      &plan->mds[graph->input], error);
  if (in == NULL)
    goto failed;
  plan->mems[graph->input] = in;
  dnnl_memory_get_data_handle (in, (void **) &plan->input);

  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    /* the activation after a primitive runs as its post-op; our
     * InstanceNormalization loop fuses a Relu */
    const CbiNode *fused = cbi_graph_fused_activation (graph, i);
    gboolean ok;

    if (fused)
      i++;

    if (n->op == CBI_OP_CONV || n->op == CBI_OP_CONV_TRANSPOSE)
      ok = cbi_cpu_plan_conv (cpu, plan, graph, n, fused, shapes, pool,
          workspace, error);
    else if (cbi_op_is_binary (n->op))
      ok = cbi_cpu_plan_binary (cpu, plan, graph, n, fused, shapes, pool,
          workspace, error);
    else if (n->op == CBI_OP_MAX_POOL || n->op == CBI_OP_AVERAGE_POOL
        || n->op == CBI_OP_GLOBAL_AVERAGE_POOL)
      ok = cbi_cpu_plan_pool (cpu, plan, n, shapes, pool, workspace, error);
    else if (n->op == CBI_OP_RESHAPE)
      ok = cbi_cpu_plan_reshape (cpu, plan, n, shapes, pool, error);
    else if (n->op == CBI_OP_TRANSPOSE || n->op == CBI_OP_DEPTH_TO_SPACE)
      ok = cbi_cpu_plan_transpose (cpu, plan, n, shapes, pool, error);
    else if (n->op == CBI_OP_GEMM)
      ok = cbi_cpu_plan_gemm (cpu, plan, graph, n, fused, shapes, pool,
          workspace, error);
    else if (n->op == CBI_OP_MATMUL)
      ok = cbi_cpu_plan_matmul (cpu, plan, graph, n, fused, shapes, pool,
          workspace, error);
    else if (n->op == CBI_OP_SOFTMAX)
      ok = cbi_cpu_plan_softmax (cpu, plan, n, shapes, pool, workspace, error);
    else if (n->op == CBI_OP_PRELU)
      ok = cbi_cpu_plan_prelu (cpu, plan, graph, n, shapes, pool, workspace,
          error);
    else if (n->op == CBI_OP_RESIZE)
      ok = cbi_cpu_plan_resize (cpu, plan, n, shapes, pool, workspace, error);
    else if (n->op == CBI_OP_CONCAT)
      ok = cbi_cpu_plan_concat (cpu, plan, graph, n, shapes, pool, workspace,
          error);
    else if (n->op == CBI_OP_PAD)
      ok = cbi_cpu_plan_pad (cpu, plan, n, shapes, pool, error);
    else if (n->op == CBI_OP_INSTANCE_NORM)
      ok = cbi_cpu_plan_instance_norm (cpu, plan, graph, n, fused, shapes,
          pool, error);
    else
      ok = cbi_cpu_plan_eltwise (cpu, plan, n, shapes, pool, workspace, error);
    if (!ok)
      goto failed;
    cbi_mem_plan_node_done (plan->memory, n);
    /* a fused Relu's input is the conv's own output: never allocated */
    if (fused)
      cbi_mem_plan_node_done (plan->memory, fused);
  }
  if (!cbi_cpu_plan_outputs (cpu, plan, graph, shapes, pool, error))
    goto failed;

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
  GST_DEBUG ("planned %u steps for %" G_GINT64_FORMAT " input elements, "
      "workspace %" G_GUINT64_FORMAT " bytes", plan->steps->len,
      plan->input_count, *workspace);
  return plan;

failed:
  cbi_cpu_free_plan (backend, plan, pool, staging);
  return NULL;
}

static gboolean
cbi_cpu_upload (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  cbi_pack_frames (batch, ((CbiCpuPlan *) p)->input);
  return TRUE;
}

static gboolean
cbi_cpu_compute (CbiBackend * backend, gpointer p, guint slot, GError ** error)
{
  CbiCpu *cpu = backend->context;
  CbiCpuPlan *plan = p;
  guint i;

  for (i = 0; i < plan->steps->len; i++) {
    CbiCpuStep *s = &g_array_index (plan->steps, CbiCpuStep, i);
    if (s->run) {
      /* our own loop reads what the primitives before it wrote */
      if (!DNNL_CHECK (dnnl_stream_wait (cpu->stream), "dnnl_stream_wait"))
        return FALSE;
      s->run (s->loop);
    } else if (!DNNL_CHECK (dnnl_primitive_execute (s->prim, cpu->stream,
                s->n_args, s->args), "dnnl_primitive_execute")) {
      return FALSE;
    }
  }
  return DNNL_CHECK (dnnl_stream_wait (cpu->stream), "dnnl_stream_wait");
}

static gboolean
cbi_cpu_upload_tensor (CbiBackend * backend, gpointer p, guint slot,
    const gfloat * input, GError ** error)
{
  CbiCpuPlan *plan = p;

  memcpy (plan->input, input, plan->input_count * sizeof (gfloat));
  return TRUE;
}

static gboolean
cbi_cpu_download (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  /* tensor outputs are read where the last step left them */
  if (batch && batch->out)
    cbi_unpack_frames (batch, ((CbiCpuPlan *) p)->outputs[0]);
  return TRUE;
}

/* The outputs are host memory already: read in place. */
static const gfloat *
cbi_cpu_output (CbiBackend * backend, gpointer p, guint slot, guint index,
    GError ** error)
{
  return ((CbiCpuPlan *) p)->outputs[index];
}

static const CbiBackendIface cbi_cpu_iface = {
  .name = "cpu",
  .allocator = cbi_cpu_allocator,
  .staging_allocator = NULL,    /* the tensors are host memory already */
  .free = cbi_cpu_free,
  .plan = cbi_cpu_plan,
  .free_plan = cbi_cpu_free_plan,
  .upload = cbi_cpu_upload,
  .upload_tensor = cbi_cpu_upload_tensor,
  .compute = cbi_cpu_compute,
  .download = cbi_cpu_download,
  .output = cbi_cpu_output,
  .device_memory = NULL,        /* host memory: no device figures */
  .finish = NULL,               /* compute waits on its stream */
};

CbiBackend *
cbi_backend_cpu_new (gint device_id, GError ** error)
{
  CbiBackend *backend = g_new0 (CbiBackend, 1);
  CbiCpu *cpu = g_new0 (CbiCpu, 1);

  GST_DEBUG_CATEGORY_INIT (cbi_cpu_debug, "cudabatchinfer-cpu", 0,
      "cudabatchinfer oneDNN CPU backend");
  backend->iface = &cbi_cpu_iface;
  backend->context = cpu;
  if (!DNNL_CHECK (dnnl_engine_create (&cpu->engine, dnnl_cpu, 0),
          "dnnl_engine_create")
      || !DNNL_CHECK (dnnl_stream_create (&cpu->stream, cpu->engine,
              dnnl_stream_default_flags), "dnnl_stream_create")) {
    cbi_cpu_free (backend);
    return NULL;
  }
  return backend;
}
