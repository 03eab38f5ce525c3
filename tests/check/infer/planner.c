/* GStreamer cudabatchinfer: what every backend's planning shares
 * (cbiplanner.h), with a backend that writes down what it is asked
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU and CUDA backends run the same loop over the nodes and follow
 * one convention for a fused activation: the planner of a node runs its
 * activation's own op; the ops merged after an element-wise node run in
 * place after it, through the backend's add_in_place, in order. A
 * recording backend shows that order whatever the real backends do.
 */
#include <gst/check/gstcheck.h>

#include "cbiplanner.h"
#include "cbitypes.h"
#include "graph/cbipasses.h"

/* what the recording backend was asked, one line a call */
typedef struct
{
  GString *log;
  guint fail_at;                /* the call that fails, 0 for none */
  guint calls;
} Recorder;

static gboolean
record_node (gpointer plan, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  Recorder *r = plan;

  g_string_append_printf (r->log, "plan %s%s%s\n", n->name,
      post ? " + " : "", post ? post->name : "");
  if (++r->calls == r->fail_at) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BACKEND, "told to fail");
    return FALSE;
  }
  return TRUE;
}

static gboolean
record_in_place (gpointer plan, const CbiNode * n,
    const CbiEltwiseStep * step, GError ** error)
{
  Recorder *r = plan;

  g_string_append_printf (r->log, "in place on %s: %s %g\n", n->name,
      cbi_eltwise_step_name (step), step->alpha);
  return TRUE;
}

static gboolean
refuse_softmax (const CbiGraph * graph, const CbiNode * n)
{
  return n->op == CBI_OP_SOFTMAX;
}

static void
recording_planners (CbiPlanners * p)
{
  guint k;

  memset (p, 0, sizeof (*p));
  p->backend = "recording";
  for (k = 0; k < CBI_OP_N_KINDS; k++)
    p->nodes[k] = record_node;
  p->add_in_place = record_in_place;
}

/* x -> Conv "conv" -> a -> Relu "relu" (then Sigmoid, x 0.5) -> b ->
 * Tanh "tanh" (then Relu) -> y: a convolution that takes an activation
 * with a chain after it, and an element-wise node with its own chain */
static CbiGraph *
chain_graph (void)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 dims[4] = { -1, 3, -1, -1 }, wdims[4] = { 3, 3, 1, 1 };
  gint x = cbi_graph_add_tensor (g, "x", 4, dims, NULL);
  gint w = cbi_graph_add_tensor (g, "w", 4, wdims, g_new0 (gfloat, 9));
  gint a = cbi_graph_add_tensor (g, "a", 4, dims, NULL);
  gint b = cbi_graph_add_tensor (g, "b", 4, dims, NULL);
  gint y = cbi_graph_add_tensor (g, "y", 4, dims, NULL);
  const gint conv_in[2] = { x, w };
  CbiNode *relu, *tanh_node;

  g->input = x;
  g->outputs[g->n_outputs++] = y;
  cbi_graph_add_node (g, CBI_OP_CONV, "conv", 2, conv_in, a, NULL);
  relu = cbi_graph_node (g, cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1,
          &a, b, NULL));
  relu->then[0].op = cbi_op_info (CBI_OP_SIGMOID)->eltwise;
  relu->then[1].op = cbi_op_info (CBI_OP_LINEAR)->eltwise;
  relu->then[1].alpha = 0.5f;
  relu->n_then = 2;
  tanh_node = cbi_graph_node (g, cbi_graph_add_node (g, CBI_OP_TANH, "tanh",
          1, &b, y, NULL));
  tanh_node->then[0].op = cbi_op_info (CBI_OP_RELU)->eltwise;
  tanh_node->n_then = 1;
  return g;
}

GST_START_TEST
    (test_the_loop_plans_a_fused_activation_with_its_producer_then_its_chain_in_place)
{
  CbiGraph *g = chain_graph ();
  Recorder r = { g_string_new (NULL), 0, 0 };
  CbiPlanners p;
  GError *err = NULL;

  recording_planners (&p);
  fail_unless (cbi_planners_run (&p, g, &r, NULL, &err), "%s",
      err ? err->message : "");
  fail_unless_equals_string (r.log->str,
      "plan conv + relu\n"
      "in place on relu: Sigmoid 0\n"
      "in place on relu: Linear 0.5\n"
      "plan tanh\n" "in place on tanh: Relu 0\n");
  g_string_free (r.log, TRUE);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_the_loop_stops_at_the_first_planner_that_fails)
{
  CbiGraph *g = chain_graph ();
  Recorder r = { g_string_new (NULL), 1, 0 };
  CbiPlanners p;
  GError *err = NULL;

  recording_planners (&p);
  fail_if (cbi_planners_run (&p, g, &r, NULL, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_BACKEND));
  /* nothing of the chain after a node that failed */
  fail_unless_equals_string (r.log->str, "plan conv + relu\n");
  g_clear_error (&err);
  g_string_free (r.log, TRUE);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_a_family_without_planner_is_unsupported_and_named)
{
  CbiGraph *g = chain_graph ();
  Recorder r = { g_string_new (NULL), 0, 0 };
  CbiPlanners p;
  GError *err = NULL;
  const CbiNode *tanh_node = cbi_graph_node (g, 2);

  recording_planners (&p);
  p.nodes[CBI_OP_KIND_ELTWISE] = NULL;
  fail_if (cbi_planners_support (&p, g, tanh_node));
  fail_unless (cbi_planners_support (&p, g, cbi_graph_node (g, 0)));
  fail_if (cbi_planners_run (&p, g, &r, NULL, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_MODEL));
  fail_unless_equals_string (err->message,
      "the recording backend cannot run node tanh (Tanh)");
  g_clear_error (&err);
  g_string_free (r.log, TRUE);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_a_refused_node_is_unsupported_though_its_family_is_planned)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 dims[2] = { -1, 10 };
  gint x = cbi_graph_add_tensor (g, "x", 2, dims, NULL);
  gint y = cbi_graph_add_tensor (g, "y", 2, dims, NULL);
  CbiPlanners p;

  g->input = x;
  g->outputs[g->n_outputs++] = y;
  cbi_graph_add_node (g, CBI_OP_SOFTMAX, "softmax", 1, &x, y, NULL);
  recording_planners (&p);
  fail_unless (cbi_planners_support (&p, g, cbi_graph_node (g, 0)));
  p.refuses = refuse_softmax;
  fail_if (cbi_planners_support (&p, g, cbi_graph_node (g, 0)));
  cbi_graph_free (g);
}

GST_END_TEST;

static Suite *
infer_planner_suite (void)
{
  Suite *s = suite_create ("infer-planner");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_the_loop_plans_a_fused_activation_with_its_producer_then_its_chain_in_place);
  tcase_add_test (tc, test_the_loop_stops_at_the_first_planner_that_fails);
  tcase_add_test (tc, test_a_family_without_planner_is_unsupported_and_named);
  tcase_add_test (tc,
      test_a_refused_node_is_unsupported_though_its_family_is_planned);
  return s;
}

GST_CHECK_MAIN (infer_planner);
