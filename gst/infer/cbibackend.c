/* cudabatchinfer: choosing a backend
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every backend says which ops it plans (its planners); the
 * engine asks it for every node of the model before it takes it, so that
 * backend=auto runs a model on CUDA only where CUDA runs all of it, and
 * says which op sent it to the CPU otherwise.
 */
#include "cbibackend.h"
#include "cbitypes.h"

#include <gst/gst.h>

static const CbiBackendEntry cbi_backends[] = {
#ifdef HAVE_CUDA
  {CBI_BACKEND_CUDA, cbi_backend_cuda_new},
#endif
  {CBI_BACKEND_CPU, cbi_backend_cpu_new},
};

const CbiBackendEntry *
cbi_backend_table (guint * n_entries)
{
  *n_entries = G_N_ELEMENTS (cbi_backends);
  return cbi_backends;
}

gboolean
cbi_backend_supports_graph (CbiBackend * backend, const CbiGraph * graph,
    GError ** error)
{
  guint i;

  for (i = 0; backend->iface->planners && i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    /* computed while planning: no backend runs it */
    if (cbi_op_info (n->op)->kind == CBI_OP_KIND_SHAPE_VALUE)
      continue;
    if (!cbi_planners_support (backend->iface->planners, graph, n))
      return cbi_node_unsupported (n, backend->iface->name, error);
  }
  return TRUE;
}

gboolean
cbi_backend_has_precision (CbiBackend * backend, CbiPrecision precision,
    GError ** error)
{
  if (backend->iface->has_precision)
    return backend->iface->has_precision (backend, precision, error);
  if (precision == CBI_PRECISION_FP32)
    return TRUE;
  g_set_error (error, CBI_ERROR, CBI_ERROR_PRECISION, "the %s backend "
      "runs fp32 only, not %s", backend->iface->name,
      cbi_precision_name (precision));
  return FALSE;
}

/* The backend of @kind, which runs every node of @graph. */
static CbiBackend *
cbi_backend_open_kind (const CbiBackendEntry * table, guint n_entries,
    const CbiGraph * graph, CbiBackendKind kind, gint device_id,
    GError ** error)
{
  CbiBackend *backend = NULL;
  guint i;

  for (i = 0; i < n_entries && table[i].kind != kind; i++);
  if (i == n_entries) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND, "this build has "
        "no CUDA backend (nvcc and cuDNN were not found when it was built); "
        "use backend=cpu or backend=auto");
    return NULL;
  }
  backend = table[i].create (device_id, error);
  if (backend && !cbi_backend_supports_graph (backend, graph, error)) {
    backend->iface->free (backend);
    backend = NULL;
  }
  return backend;
}

CbiBackend *
cbi_backend_open (const CbiBackendEntry * table, guint n_entries,
    const CbiGraph * graph, CbiBackendKind kind, gint device_id,
    CbiBackendKind * opened, gchar ** fallback_reason, GError ** error)
{
  CbiBackend *backend = NULL;
  GError *cuda_error = NULL;

  *fallback_reason = NULL;
  if (kind == CBI_BACKEND_AUTO) {
    backend = cbi_backend_open_kind (table, n_entries, graph,
        CBI_BACKEND_CUDA, device_id, &cuda_error);
    kind = CBI_BACKEND_CUDA;
    if (backend == NULL) {
      *fallback_reason = g_strdup (cuda_error->message);
      g_clear_error (&cuda_error);
      kind = CBI_BACKEND_CPU;
    }
  }
  if (backend == NULL)
    backend = cbi_backend_open_kind (table, n_entries, graph, kind,
        device_id, error);
  if (backend == NULL)
    g_clear_pointer (fallback_reason, g_free);
  *opened = kind;
  return backend;
}
