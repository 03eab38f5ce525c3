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

#include <string.h>

static const CbiAllocator *
cbi_cpu_allocator (CbiBackend * backend)
{
  return cbi_host_allocator ();
}

static void
cbi_cpu_free (CbiBackend * backend)
{
  CbiCpu *cpu = backend->context;

  g_clear_pointer (&cpu->share, cbi_cpu_share_free);
  g_clear_pointer (&cpu->stream, dnnl_stream_destroy);
  g_clear_pointer (&cpu->engine, dnnl_engine_destroy);
  g_free (cpu);
  g_free (backend);
}

static gboolean
cbi_cpu_upload (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiCpuPlan *plan = p;

  if (batch->in_device) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "frames in a GPU's "
        "memory reached the cpu backend: only the cuda backend reads them");
    return FALSE;
  }
  if (plan->input_reorder.prim && plan->input_bf16)
    cbi_pack_frames_channels_last_bf16 (batch, plan->input_channels_last);
  else if (plan->input_reorder.prim)
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

/* bfloat16 where the CPU multiplies it itself (AVX512-BF16, AMX):
 * elsewhere oneDNN would convert every operand, slower than float32. */
static gboolean
cbi_cpu_has_precision (CbiBackend * backend, CbiPrecision precision,
    GError ** error)
{
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa ();

  if (precision == CBI_PRECISION_FP32)
    return TRUE;
  if (precision == CBI_PRECISION_BF16) {
    if ((isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16)
      return TRUE;
    g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "this CPU has no "
        "bfloat16 arithmetic (oneDNN finds neither AVX512-BF16 nor AMX): "
        "the CPU backend runs fp32 here");
    return FALSE;
  }
  g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "the CPU backend "
      "runs fp32, and bf16 where the CPU has AVX512-BF16 or AMX, not %s",
      cbi_precision_name (precision));
  return FALSE;
}

static const CbiBackendIface cbi_cpu_iface = {
  .name = "cpu",
  .allocator = cbi_cpu_allocator,
  .staging_allocator = NULL,    /* the tensors are host memory already */
  .free = cbi_cpu_free,
  .plan = cbi_cpu_plan,
  .free_plan = cbi_cpu_free_plan,
  .planners = &cbi_cpu_planners,
  .upload = cbi_cpu_upload,     /* packs straight into the input */
  .upload_tensor = cbi_cpu_upload_tensor,
  .compute = cbi_cpu_compute,   /* on this thread, or shared (share.c) */
  .download = cbi_cpu_download,
  .output = cbi_cpu_output,
  .device_memory = NULL,        /* host memory: no device figures */
  .finish = NULL,               /* compute waits on its stream */
  .has_precision = cbi_cpu_has_precision,
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
