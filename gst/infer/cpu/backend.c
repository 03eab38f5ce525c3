/* cudabatchinfer: the CPU backend, on oneDNN 2.x
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every primitive is created at plan time with a user-managed scratchpad,
 * so one workspace block from the pool serves all of them and nothing is
 * allocated while a batch runs. Activations between layers use whatever
 * layout oneDNN prefers ("any"); only the graph's input and output are
 * plain NCHW, because those are what packing and unpacking touch. Here:
 * the context, running a batch, the interface table; planning is plan.c
 * and the op families' files.
 */
#include "cbicpu.h"

#include <dnnl_debug.h>
#include <string.h>

GST_DEBUG_CATEGORY (cbi_cpu_debug);

gboolean
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

static const CbiAllocator *
cbi_cpu_allocator (CbiBackend * backend)
{
  return cbi_host_allocator ();
}

static void
cbi_cpu_free (CbiBackend * backend)
{
  CbiCpu *cpu = backend->context;

  if (cpu->share)
    cbi_cpu_share_free (cpu->share);
  if (cpu->stream)
    dnnl_stream_destroy (cpu->stream);
  if (cpu->engine)
    dnnl_engine_destroy (cpu->engine);
  g_free (cpu);
  g_free (backend);
}

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
  g_free (plan->mems);
  g_free (plan);
}

static gboolean
cbi_cpu_upload (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCpuPlan *plan = p;

  if (plan->input_reorder.prim)
    cbi_pack_frames_channels_last (batch, plan->input_channels_last);
  else
    cbi_pack_frames (batch, plan->input);
  return TRUE;
}

/* Runs primitive step @s and waits for it: a reorder kept aside. */
static gboolean
cbi_cpu_run_reorder (CbiCpu * cpu, const CbiCpuStep * s, GError ** error)
{
  return DNNL_CHECK (dnnl_primitive_execute (s->prim, cpu->stream,
          s->n_args, s->args), "dnnl_primitive_execute")
      && DNNL_CHECK (dnnl_stream_wait (cpu->stream), "dnnl_stream_wait");
}

typedef struct
{
  CbiCpu *cpu;
  CbiCpuPlan *plan;
} CbiCpuRun;

/* Every step of a plan in order. */
static gboolean
cbi_cpu_run_steps (gpointer data, GError ** error)
{
  CbiCpu *cpu = ((CbiCpuRun *) data)->cpu;
  CbiCpuPlan *plan = ((CbiCpuRun *) data)->plan;
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
cbi_cpu_compute (CbiBackend * backend, gpointer p, guint slot, GError ** error)
{
  CbiCpu *cpu = backend->context;
  CbiCpuRun run = { cpu, p };

  backend->ran_solo = FALSE;
  if (!backend->share_cores) {
    cbi_cpu_share_leave (cpu->share);
    return cbi_cpu_run_steps (&run, error);
  }
  return cbi_cpu_share_run (cpu->share, cbi_cpu_run_steps, &run,
      &backend->ran_solo, error);
}

static gboolean
cbi_cpu_upload_tensor (CbiBackend * backend, gpointer p, guint slot,
    const gfloat * input, GError ** error)
{
  CbiCpuPlan *plan = p;

  memcpy (plan->input, input, plan->input_count * sizeof (gfloat));
  return plan->input_reorder.prim == NULL
      || cbi_cpu_run_reorder (backend->context, &plan->input_reorder, error);
}

static gboolean
cbi_cpu_download (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCpuPlan *plan = p;
  gboolean frames = batch && batch->out;

  /* tensor outputs are read where the last step left them, row-major */
  if (plan->output_reorder.prim == NULL) {
    if (frames)
      cbi_unpack_frames (batch, plan->outputs[0]);
    return TRUE;
  }
  if (!frames)
    return cbi_cpu_run_reorder (backend->context, &plan->output_reorder, error);
  cbi_unpack_frames_channels_last (batch, plan->output_channels_last);
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
  .supports_op = cbi_cpu_supports_op,
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
  cpu->share = cbi_cpu_share_new ();
  if (!DNNL_CHECK (dnnl_engine_create (&cpu->engine, dnnl_cpu, 0),
          "dnnl_engine_create")
      || !DNNL_CHECK (dnnl_stream_create (&cpu->stream, cpu->engine,
              dnnl_stream_default_flags), "dnnl_stream_create")) {
    cbi_cpu_free (backend);
    return NULL;
  }
  return backend;
}
