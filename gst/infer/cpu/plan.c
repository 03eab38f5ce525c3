/* cudabatchinfer: the CPU backend's planning
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend plan itself: each node by its op family's planner (one per
 * CbiOpKind, cbiplanner.h walks the table), then the reorders of the
 * input and output packing can do instead, the workspace bound.
 */
#include "cbicpu.h"

#include <string.h>

/* *INDENT-OFF* */
const CbiPlanners cbi_cpu_planners = CBI_PLANNERS_INIT ("cpu", cbi_cpu_plan,
    NULL, cbi_cpu_add_in_place);
/* *INDENT-ON* */

void
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
  if (plan->input_reorder.prim)
    dnnl_primitive_destroy (plan->input_reorder.prim);
  if (plan->output_reorder.prim)
    dnnl_primitive_destroy (plan->output_reorder.prim);
  for (i = 0; i < plan->memories->len; i++)
    dnnl_memory_destroy (g_ptr_array_index (plan->memories, i));
  cbi_mem_plan_free (plan->memory);
  g_array_free (plan->steps, TRUE);
  g_ptr_array_free (plan->memories, TRUE);
  g_free (plan->mds);
  g_free (plan->conv_bf16);
  g_free (plan->tensor_bf16);
  cbi_md_arena_free (plan->descs);
  g_free (plan->mems);
  g_free (plan);
}

/* The graph's outputs must be row-major for unpacking and reading; a
 * blocked one gets a reorder step. */
static gboolean
cbi_cpu_plan_outputs (CbiCpuPlan * plan, GError ** error)
{
  CbiMd md;
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
cbi_cpu_is_reorder (const CbiCpuStep * step, CbiMd from_md, CbiMd to_md)
{
  CbiMd md[2] = { NULL, NULL };

  return step->prim != NULL && step->n_args == 2
      && step->args[0].arg == DNNL_ARG_FROM && step->args[1].arg == DNNL_ARG_TO
      && dnnl_memory_get_memory_desc (step->args[0].memory, &md[0])
      == dnnl_success && dnnl_memory_desc_equal (from_md, md[0])
      && dnnl_memory_get_memory_desc (step->args[1].memory, &md[1])
      == dnnl_success && dnnl_memory_desc_equal (to_md, md[1]);
}

/* Where the plan begins with a reorder of the input to channels last
 * (float32, or bfloat16 for a first convolution in it), and nothing else
 * reads the input, the reorder is kept aside: packing writes that layout
 * and type itself (the reorder was a pass over the batch's input, a
 * tenth of a small classifier's batch); a tensor copied in runs it. Its
 * output is written before any other step runs either way. */
static void
cbi_cpu_keep_input_reorder (CbiCpuPlan * plan)
{
  const CbiGraph *graph = plan->graph;
  const CbiShape *shape = &plan->shapes[graph->input];
  CbiMd nhwc, nhwc_bf16;
  CbiCpuStep *first;
  dnnl_dims_t dims;
  guint i, j, readers = 0;

  if (plan->steps->len == 0 || shape->n_dims != 4 || shape->dims[1] != 3
      || !cbi_cpu_nhwc_md (plan, &nhwc, shape, NULL))
    return;
  memcpy (dims, shape->dims, 4 * sizeof (gint64));
  if (cbi_md_tag_typed (plan->descs, &nhwc_bf16, 4, dims, dnnl_bf16,
          dnnl_acdb) != dnnl_success)
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
      || first->args[0].memory != plan->mems[graph->input])
    return;
  plan->input_bf16 = cbi_cpu_is_reorder (first, plan->mds[graph->input],
      nhwc_bf16);
  if (!plan->input_bf16
      && !cbi_cpu_is_reorder (first, plan->mds[graph->input], nhwc))
    return;
  dnnl_memory_get_data_handle (first->args[1].memory,
      &plan->input_channels_last);
  plan->input_reorder = *first;
  g_array_remove_index (plan->steps, 0);
  GST_DEBUG ("packing writes the input channels last, in %s",
      plan->input_bf16 ? "bfloat16" : "float32");
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
  CbiMd nhwc, plain;
  gpointer to = NULL;
  CbiCpuStep *last;

  if (plan->steps->len == 0 || shape->n_dims != 4
      || (shape->dims[1] != 3 && shape->dims[1] != 4)
      || !cbi_cpu_nhwc_md (plan, &nhwc, shape, NULL)
      || !cbi_cpu_shape_md (plan, &plain, shape, NULL))
    return;
  last = &g_array_index (plan->steps, CbiCpuStep, plan->steps->len - 1);
  /* a plain copy of the tensor, not a Transpose into the output */
  if (!cbi_cpu_is_reorder (last, nhwc, plain))
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

/* The layout the convolutions of @plan's graph write. Left to oneDNN, it takes
 * channels last on AVX-512, for its brgemm kernels. Where every
 * convolution has one group and channels in multiples of 16 (an image's
 * three in excepted), as in ResNets and VGGs, channel blocks of 16 let it
 * take its jit kernels and Winograd's for 3x3, faster there; any
 * depthwise or grouped convolution, or channel counts that do not fit the
 * blocks (most mobile networks), make them slower than channels last.
 * A network's last convolutions that do not fit (a segmentation's 21
 * classes behind 512 channels, a detector's box distributions) leave
 * it the blocks where their products are at most 1/this of all the
 * convolutions' and they run at a quarter of the image's positions or
 * fewer: padded to the block, they cost a few products more, while
 * channels last would slow every other convolution. One that writes a few
 * channels at the image's size marks an image-to-image network, whose
 * decoder (upsampling, the encoder's skips joined) costs copies of
 * full-size activations in channel blocks.
 * Not in a bfloat16 plan: oneDNN's bfloat16 convolutions in channel blocks
 * are its older jit kernels, which never use AMX; its brgemm ones, AMX's
 * included, read and write channels last. */
#define CBI_CPU_UNBLOCKED_SHARE 32
#define CBI_CPU_UNBLOCKED_SCALE 4

static dnnl_format_tag_t
cbi_cpu_conv_layout (const CbiCpuPlan * plan)
{
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa ();
  const CbiShape *image = &plan->shapes[plan->graph->input];
  gdouble products = 0, unfit = 0;
  guint i;

  if ((isa & dnnl_cpu_isa_avx512_core) != dnnl_cpu_isa_avx512_core
      || plan->bf16)
    return dnnl_format_tag_any;
  for (i = 0; i < plan->graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (plan->graph, i);
    const CbiShape *y = &plan->shapes[n->output];
    gint64 in;
    gdouble own;
    if (n->op == CBI_OP_CONV_TRANSPOSE)
      return dnnl_format_tag_any;
    if (n->op != CBI_OP_CONV)
      continue;
    if (n->conv.group != 1)
      return dnnl_format_tag_any;
    own = cbi_cpu_conv_products (plan, n);
    products += own;
    in = plan->shapes[n->inputs[0]].dims[1];
    if (y->dims[1] % 16 == 0 && (in % 16 == 0 || in <= 4))
      continue;
    if (y->n_dims != 4 || image->n_dims != 4 || y->dims[2] * y->dims[3]
        * CBI_CPU_UNBLOCKED_SCALE > image->dims[2] * image->dims[3])
      return dnnl_format_tag_any;
    unfit += own;
  }
  if (products == 0 || unfit * CBI_CPU_UNBLOCKED_SHARE > products)
    return dnnl_format_tag_any;
  GST_DEBUG ("the convolutions write channel blocks of 16 (%.2f %% of their "
      "products on channels padded to the blocks)", 100 * unfit / products);
  return dnnl_nChw16c;
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
  plan->descs = cbi_md_arena_new ();
  plan->mds = g_new0 (CbiMd, n_tensors);
  plan->mems = g_new0 (dnnl_memory_t, n_tensors);
  plan->cpu = cpu;
  plan->graph = graph;
  plan->shapes = shapes;
  plan->bf16 = backend->precision == CBI_PRECISION_BF16;
  plan->conv_layout = cbi_cpu_conv_layout (plan);
  plan->bf16_wide = plan->bf16 && backend->precision_wide;
  /* where the wide plan fails, the narrow one may not */
  backend->precision_narrows = plan->bf16_wide;
  if (plan->bf16) {
    cbi_cpu_choose_bf16 (plan);
    if (plan->bf16_wide)
      cbi_cpu_choose_bf16_tensors (plan);
  }

  if (!cbi_cpu_shape_md (plan, &plan->mds[graph->input],
          &plan->shapes[graph->input], error))
    goto failed;
  plan->input_count = cbi_shape_count (&plan->shapes[graph->input]);
  in = cbi_cpu_activation (plan, graph->input, plan->mds[graph->input], error);
  if (in == NULL)
    goto failed;
  plan->mems[graph->input] = in;
  dnnl_memory_get_data_handle (in, (void **) &plan->input);

  /* the activation after a primitive runs as its post-op; our
   * InstanceNormalization loop fuses a Relu */
  if (!cbi_planners_run (&cbi_cpu_planners, graph, plan, plan->memory, error))
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
  backend->low_precision_ops = plan->bf16_ops;
  /* the narrow plan differs where the wide one takes bfloat16 at all:
   * more convolutions and products, or more activations */
  backend->precision_narrows = plan->bf16_wide && plan->bf16_ops > 0;
  /* the memories and primitives keep copies of the descs they need */
  g_clear_pointer (&plan->mds, g_free);
  g_clear_pointer (&plan->conv_bf16, g_free);
  g_clear_pointer (&plan->tensor_bf16, g_free);
  g_clear_pointer (&plan->descs, cbi_md_arena_free);
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
