/* cudabatchinfer: the CUDA backend's planning
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A plan holds every device tensor, the weights, the workspace and the
 * pinned staging buffers, all from the engine's pools, and a list of
 * steps that compute queues on one stream: nothing is allocated and
 * nothing waits while a batch is queued. The activations sit where the
 * engine's memory plan puts them; each op family's planner (one per
 * CbiOpKind, cbiplanner.h walks the table) adds the steps of its nodes.
 */
#include "cbicuda.h"

#include <string.h>

/* What the CUDA backend refuses whatever the shape, though it plans the
 * op's family: the engine asks before it takes CUDA, so that backend=auto
 * goes to the CPU at once rather than at the warm-up. */
static gboolean
cbi_cuda_refuses (const CbiGraph * graph, const CbiNode * n)
{
  if (cbi_op_info (n->op)->kind == CBI_OP_KIND_REDUCE) {
    /* the kernel reduces one run of neighbouring axes; the rank is known
     * at import, which is all the axes need */
    const CbiTensorInfo *x = cbi_graph_tensor (graph, n->inputs[0]);
    CbiShape rank = { x->n_dims, };
    gint64 outer, r, inner;

    return x->n_dims > 0
        && !cbi_node_reduce_view (n, &rank, &outer, &r, &inner);
  }
  return FALSE;
}

/* *INDENT-OFF* */
const CbiPlanners cbi_cuda_planners = CBI_PLANNERS_INIT ("cuda", cbi_cuda_plan,
    cbi_cuda_refuses, cbi_cuda_add_in_place);
/* *INDENT-ON* */

void
cbi_cuda_free_plan (CbiBackend * backend, gpointer p, CbiPool * pool,
    CbiPool * staging)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = p;
  guint i;

  /* nothing queued may still use the blocks */
  cudaSetDevice (cuda->device);
  cudaStreamSynchronize (cuda->stream);
  for (i = 0; i < plan->n_slots; i++)
    cudaStreamSynchronize (cuda->slot_streams[i]);
  if (plan->graph)
    cudaGraphExecDestroy (plan->graph);
  for (i = 0; i < plan->steps->len; i++) {
    CbiCudaStep *s = &g_array_index (plan->steps, CbiCudaStep, i);
    if (s->clear)
      s->clear (s->params);
    g_free (s->params);
  }
  cbi_mem_plan_free (plan->memory);
  cbi_mem_plan_free (plan->staging);
  cbi_cuda_drop_constants (cuda, plan, pool);
  g_array_free (plan->steps, TRUE);
  g_ptr_array_free (plan->constants, TRUE);
  g_free (plan->tensors);
  g_free (plan);
}

/* A device buffer of @bytes for @what and its pinned staging twin; none
 * for 0 bytes. */
static gboolean
cbi_cuda_plan_transfer (CbiCudaPlan * plan, gsize bytes, guint8 ** device,
    guint8 ** staging, const gchar * what, GError ** error)
{
  return bytes == 0
      || ((*device = cbi_mem_plan_alloc (plan->memory, bytes, what,
              error)) != NULL
      && (*staging = cbi_mem_plan_alloc (plan->staging, bytes, what,
              error)) != NULL);
}

/* The staging and device buffers of frames in and out, and of every
 * output read on the host, for each batch in flight. */
static gboolean
cbi_cuda_plan_slot (CbiCudaPlan * plan, CbiCudaSlot * slot,
    const CbiGraph * graph, GError ** error)
{
  guint i;

  if (!cbi_cuda_plan_transfer (plan, plan->frames_in_bytes,
          &slot->frames_in, &slot->staging_in, "input frames", error)
      || !cbi_cuda_plan_transfer (plan, plan->frames_out_bytes,
          &slot->frames_out, &slot->staging_out, "output frames", error))
    return FALSE;
  /* output 0 of a plan that unpacks it is read as frames only */
  for (i = plan->unpack_frames ? 1 : 0; i < graph->n_outputs; i++)
    if ((slot->host_outputs[i] = cbi_mem_plan_alloc (plan->staging,
                plan->output_bytes[i], "outputs", error)) == NULL)
      return FALSE;
  return TRUE;
}

static gboolean
cbi_cuda_plan_io (CbiCuda * cuda, CbiCudaPlan * plan, const CbiGraph * graph,
    guint n_slots, GError ** error)
{
  const CbiShape *in = &plan->shapes[graph->input];
  const CbiShape *o = &plan->shapes[graph->outputs[0]];
  guint i;

  /* 4 bytes a pixel covers every packed format */
  if (in->n_dims == 4)
    plan->frames_in_bytes = (gsize) in->dims[0] * in->dims[2] * in->dims[3]
        * 4;
  if (plan->unpack_frames && (o->n_dims != 4 || o->dims[1] > 4)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "output 0 is no image "
        "(%d-D, %" G_GINT64_FORMAT " channels): it cannot be unpacked into "
        "frames", o->n_dims, o->n_dims > 1 ? o->dims[1] : 0);
    return FALSE;
  }
  if (plan->unpack_frames)
    plan->frames_out_bytes = (gsize) o->dims[0] * o->dims[2] * o->dims[3]
        * 4;
  for (i = 0; i < graph->n_outputs; i++) {
    plan->outputs[i] = plan->tensors[graph->outputs[i]];
    plan->output_bytes[i] =
        cbi_shape_count (&plan->shapes[graph->outputs[i]]) * sizeof (gfloat);
  }
  plan->n_slots = MAX (n_slots, 1);
  for (i = 0; i < plan->n_slots; i++) {
    if (cuda->slot_streams[i] == NULL
        && !CUDA_CHECK (cudaStreamCreateWithFlags (&cuda->slot_streams[i],
                cudaStreamNonBlocking), "cudaStreamCreate"))
      return FALSE;
    if (!cbi_cuda_plan_slot (plan, &plan->slots[i], graph, error))
      return FALSE;
  }
  return TRUE;
}

/* Every node by its family's planner, a fused activation with its
 * producer; the memory plan placed every tensor already. */
static gboolean
cbi_cuda_plan_nodes (CbiCudaPlan * plan, GError ** error)
{
  return cbi_cuda_plan_half_buffers (plan, error)
      && cbi_planners_run (&cbi_cuda_planners, plan->model, plan, NULL, error);
}

/* A plan whose activations sit where the engine's memory plan puts
 * them. */
static CbiCudaPlan *
cbi_cuda_plan_new (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean exhaustive)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan = g_new0 (CbiCudaPlan, 1);

  plan->steps = g_array_new (FALSE, FALSE, sizeof (CbiCudaStep));
  plan->memory = cbi_mem_plan_new (graph, pool);
  plan->staging = cbi_mem_plan_new (NULL, staging);
  plan->constants = g_ptr_array_new ();
  plan->tensors = g_new0 (gfloat *, graph->tensors->len);
  plan->cuda = cuda;
  plan->pool = pool;
  plan->model = graph;
  plan->shapes = shapes;
  plan->exhaustive = exhaustive;
  plan->tf32 = backend->precision == CBI_PRECISION_TF32;
  plan->half = backend->precision == CBI_PRECISION_FP16
      || backend->precision == CBI_PRECISION_BF16;
  plan->half_type = backend->precision == CBI_PRECISION_BF16 ?
      CBI_K_HALF_BF16 : CBI_K_HALF_FP16;
  switch (backend->precision) {
    case CBI_PRECISION_TF32:
      plan->products = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case CBI_PRECISION_BF16:
      plan->products = CUBLAS_COMPUTE_32F_FAST_16BF;
      break;
    case CBI_PRECISION_FP16:
      plan->products = CUBLAS_COMPUTE_32F_FAST_16F;
      break;
    default:
      plan->products = CUBLAS_COMPUTE_32F_PEDANTIC;
      break;
  }
  return plan;
}

/* An exhaustive search runs the candidate algorithms: it needs the
 * tensors' memory and a workspace, here the largest one a heuristic
 * pass asked for, at least 64 MiB. The heuristic pass reads no tensor:
 * it plans on the plan's own, so the search costs its workspace and
 * nothing more. */
static gboolean
cbi_cuda_plan_search_workspace (CbiBackend * backend, CbiCudaPlan * plan,
    const CbiGraph * graph, const CbiShape * shapes, CbiPool * pool,
    CbiPool * staging, GError ** error)
{
  CbiCudaPlan *probe = cbi_cuda_plan_new (backend, graph, shapes, pool,
      staging, FALSE);
  gboolean ok;

  memcpy (probe->tensors, plan->tensors,
      graph->tensors->len * sizeof (gfloat *));
  ok = cbi_cuda_plan_nodes (probe, error);
  /* under a memory limit, no more than the heuristics asked for */
  plan->search_bytes = cbi_pool_get_limit (pool) ?
      probe->workspace_bytes : MAX (probe->workspace_bytes, 64 << 20);
  /* the weights it uploaded stay, for the plan */
  g_ptr_array_extend_and_steal (plan->constants, probe->constants);
  probe->constants = g_ptr_array_new ();
  cbi_cuda_free_plan (backend, probe, pool, staging);
  return ok && (plan->workspace = cbi_mem_plan_alloc (plan->memory,
          plan->search_bytes, "the algorithm search", error)) != NULL;
}

/* The search's workspace goes back; the chosen algorithms' comes, sized
 * by cuDNN for each step; and cuBLAS's own, for a plan that uses it. */
static gboolean
cbi_cuda_plan_workspace (CbiCuda * cuda, CbiCudaPlan * plan, GError ** error)
{
  guint i;

  if (plan->workspace) {
    cbi_mem_plan_give_back (plan->memory, plan->workspace);
    plan->workspace = NULL;
  }
  plan->workspace_bytes = 0;
  for (i = 0; i < plan->steps->len; i++) {
    CbiCudaStep *s = &g_array_index (plan->steps, CbiCudaStep, i);
    gsize ws = 0;
    if (s->workspace && !s->workspace (cuda, s->params, &ws, error))
      return FALSE;
    plan->workspace_bytes = MAX (plan->workspace_bytes, ws);
  }
  if (plan->workspace_bytes > 0 && (plan->workspace =
          cbi_mem_plan_alloc (plan->memory, plan->workspace_bytes,
              "workspace", error)) == NULL)
    return FALSE;
  return !plan->uses_cublas || (plan->cublas_workspace =
      cbi_mem_plan_alloc (plan->memory, CBI_CUDA_CUBLAS_WORKSPACE, "cuBLAS",
          error)) != NULL;
}

gpointer
cbi_cuda_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace, GError ** error)
{
  CbiCuda *cuda = backend->context;
  CbiCudaPlan *plan;

  if (!cbi_cuda_select (cuda, error)
      || !cbi_cuda_use_stream (cuda, cuda->stream, error))
    return NULL;
  plan = cbi_cuda_plan_new (backend, graph, shapes, pool, staging,
      backend->exhaustive_search);
  plan->unpack_frames = unpack_frames;
  if (!cbi_mem_plan_place_dense (plan->memory, shapes,
          (gpointer *) plan->tensors, error))
    goto failed;
  plan->input = plan->tensors[graph->input];
  plan->input_count = cbi_shape_count (&shapes[graph->input]);
  if ((backend->exhaustive_search
          && !cbi_cuda_plan_search_workspace (backend, plan, graph, shapes,
              pool, staging, error))
      || !cbi_cuda_plan_nodes (plan, error)
      || !cbi_cuda_plan_io (cuda, plan, graph, backend->inflight, error)
      || !cbi_cuda_plan_workspace (cuda, plan, error)
      /* the weights went up on the stream: there before the plan is */
      || !CUDA_CHECK (cudaStreamSynchronize (cuda->stream), "weights upload"))
    goto failed;
  *workspace = plan->workspace_bytes;
  backend->low_precision_ops = plan->low_precision_ops;
  plan->shapes = NULL;
  plan->model = NULL;
  cbi_mem_plan_done (plan->memory);
  GST_DEBUG ("planned %u steps, workspace %" G_GSIZE_FORMAT " bytes",
      plan->steps->len, plan->workspace_bytes);
  return plan;

failed:
  cbi_cuda_free_plan (backend, plan, pool, staging);
  return NULL;
}
