/* cudabatchinfer: what every backend's planning shares (cbiplanner.h)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbiplanner.h"
#include "cbitypes.h"

gboolean
cbi_node_unsupported (const CbiNode * n, const gchar * backend_name,
    GError ** error)
{
  g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the %s backend cannot "
      "run node %s (%s)", backend_name, n->name, cbi_op_type_name (n->op));
  return FALSE;
}

gboolean
cbi_planners_support (const CbiPlanners * planners, const CbiGraph * graph,
    const CbiNode * n)
{
  return planners->nodes[cbi_op_info (n->op)->kind] != NULL
      && (planners->refuses == NULL || !planners->refuses (graph, n));
}

typedef struct
{
  const CbiPlanners *planners;
  gpointer plan;
  CbiMemPlan *memory;
} CbiPlannersRun;

/* Node @n, and @post fused into it, by its family's planner; then what
 * follows the chain's own op, in place. */
static gboolean
cbi_planners_step (const CbiNode * n, const CbiNode * post,
    gpointer user_data, GError ** error)
{
  CbiPlannersRun *run = user_data;
  const CbiPlanners *planners = run->planners;
  CbiPlanNodeFunc planner = planners->nodes[cbi_op_info (n->op)->kind];
  const CbiNode *last = post ? post : n;
  guint i;

  if (planner == NULL)
    return cbi_node_unsupported (n, planners->backend, error);
  if (!planner (run->plan, n, post, error))
    return FALSE;
  for (i = 0; cbi_op_is_eltwise (last->op) && i < last->n_then; i++)
    if (!planners->add_in_place (run->plan, last, &last->then[i], error))
      return FALSE;
  if (run->memory)
    cbi_mem_plan_step_done (run->memory, n, post);
  return TRUE;
}

gboolean
cbi_planners_run (const CbiPlanners * planners, const CbiGraph * graph,
    gpointer plan, CbiMemPlan * memory, GError ** error)
{
  CbiPlannersRun run = { planners, plan, memory };

  return cbi_graph_foreach_step (graph, cbi_planners_step, &run, error);
}
