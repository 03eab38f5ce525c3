/* GStreamer cudabatchinfer: the engine's memory planner and op table
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "cbimemplan.h"
#include "graph/cbishapes.h"

/* Blocks that are never touched: the planner only hands them out. */
static gpointer
untouched_alloc (gsize size, gpointer user_data)
{
  return g_malloc (1);
}

static void
untouched_free (gpointer block, gsize size, gpointer user_data)
{
  g_free (block);
}

static CbiPool *
untouched_pool (void)
{
  const CbiAllocator a = { "test", untouched_alloc, untouched_free, NULL };

  return cbi_pool_new (&a, 0);
}

static gint
add_activation (CbiGraph * g, const gchar * name)
{
  const gint64 dims[4] = { -1, 4, 8, 8 };

  return cbi_graph_add_tensor (g, name, 4, dims, NULL);
}

/* Places @g's activations densely for an input of [1, 4, 8, 8]; @tensors
 * receives the blocks, @reserved what the pool reserved. */
static void
place (CbiGraph * g, gpointer * tensors, guint64 * reserved,
    guint64 * requested)
{
  const CbiShape in = { 4, {1, 4, 8, 8} };
  CbiShape *shapes = g_new0 (CbiShape, g->tensors->len);
  CbiPool *pool = untouched_pool ();
  GError *err = NULL;
  CbiPoolStats st;
  CbiMemPlan *mp;
  guint64 placed;

  fail_unless (cbi_graph_infer_shapes (g, &in, shapes, &err), "%s",
      err ? err->message : "");
  mp = cbi_mem_plan_new (g, pool);
  fail_unless (cbi_mem_plan_place_dense (mp, shapes, tensors, &err));
  cbi_mem_plan_activation_bytes (mp, &placed, requested);
  cbi_pool_get_stats (pool, &st);
  *reserved = st.reserved_bytes;
  fail_unless_equals_uint64 (placed, st.reserved_bytes);
  cbi_mem_plan_free (mp);
  cbi_pool_get_stats (pool, &st);
  fail_unless_equals_uint64 (st.allocated_bytes, 0);
  cbi_pool_free (pool);
  g_free (shapes);
}

GST_START_TEST (test_a_chain_reuses_the_block_of_a_tensor_read_two_nodes_ago)
{
  CbiGraph *g = cbi_graph_new ();
  gint x, a, b, c;
  gpointer tensors[4] = { NULL, };
  guint64 reserved, requested;
  const guint64 bytes = 4 * 8 * 8 * sizeof (gfloat);

  g->input = x = add_activation (g, "x");
  a = add_activation (g, "a");
  b = add_activation (g, "b");
  c = add_activation (g, "c");
  g->outputs[g->n_outputs++] = c;
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &x, a, NULL);
  cbi_graph_add_node (g, CBI_OP_SIGMOID, "sigmoid", 1, &a, b, NULL);
  cbi_graph_add_node (g, CBI_OP_TANH, "tanh", 1, &b, c, NULL);
  place (g, tensors, &reserved, &requested);

  /* x is read last by relu, a by sigmoid: b and c take their blocks */
  fail_unless (tensors[b] == tensors[x]);
  fail_unless (tensors[c] == tensors[a]);
  /* a node never writes where it reads */
  fail_unless (tensors[a] != tensors[x]);
  fail_unless (tensors[b] != tensors[a]);
  fail_unless (tensors[c] != tensors[b]);
  fail_unless_equals_uint64 (requested, 4 * bytes);
  fail_unless_equals_uint64 (reserved, 2 * bytes);
  cbi_graph_free (g);
}

GST_END_TEST;

/* Views (cbi_mem_plan_view ()): a and its parts q and v, v also
 * reshaped (hand over of a view), read by the last node: a's block stays
 * out of the spare blocks until that node is planned, though a's own
 * readers are planned before, and is free after it. */
GST_START_TEST (test_a_block_with_views_stays_until_their_last_reader)
{
  CbiGraph *g = cbi_graph_new ();
  CbiPool *pool = untouched_pool ();
  const gsize bytes = 4 * 8 * 8 * sizeof (gfloat);
  gint x, a, q, v, v2, b, c, in2[2];
  gpointer block_a, block_b, block_c;
  GError *err = NULL;
  CbiMemPlan *mp;
  guint i;

  g->input = x = add_activation (g, "x");
  a = add_activation (g, "a");
  q = add_activation (g, "q");
  v = add_activation (g, "v");
  v2 = add_activation (g, "v2");
  b = add_activation (g, "b");
  c = add_activation (g, "c");
  g->outputs[g->n_outputs++] = c;
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &x, a, NULL);
  cbi_graph_add_node (g, CBI_OP_GATHER, "query", 1, &a, q, NULL);
  cbi_graph_add_node (g, CBI_OP_GATHER, "values", 1, &a, v, NULL);
  cbi_graph_add_node (g, CBI_OP_RESHAPE, "reshape", 1, &v, v2, NULL);
  cbi_graph_add_node (g, CBI_OP_TANH, "tanh", 1, &q, b, NULL);
  in2[0] = v2;
  in2[1] = b;
  cbi_graph_add_node (g, CBI_OP_ADD, "add", 2, in2, c, NULL);

  mp = cbi_mem_plan_new (g, pool);
  block_a = cbi_mem_plan_activation (mp, a, bytes, &err);
  fail_unless (block_a != NULL);
  for (i = 0; i < 4; i++) {
    const CbiNode *n = cbi_graph_node (g, i);
    if (i == 1 || i == 2)
      cbi_mem_plan_view (mp, a, n->output);
    else if (i == 3)
      cbi_mem_plan_hand_over (mp, v, v2);
    fail_unless (i < 1 || cbi_mem_plan_is_view (mp, n->output));
    cbi_mem_plan_step_done (mp, n, NULL);
  }
  /* a's own readers are planned; q and v2 are read yet */
  block_b = cbi_mem_plan_activation (mp, b, bytes, &err);
  cbi_mem_plan_step_done (mp, cbi_graph_node (g, 4), NULL);
  block_c = cbi_mem_plan_activation (mp, c, bytes, &err);
  fail_unless (block_b != NULL && block_c != NULL);
  fail_if (block_b == block_a);
  fail_if (block_c == block_a);
  fail_if (cbi_mem_plan_is_view (mp, b));
  cbi_mem_plan_step_done (mp, cbi_graph_node (g, 5), NULL);
  /* every view read: a's block is free again (b's too) */
  block_b = cbi_mem_plan_activation (mp, -1, bytes, &err);
  block_c = cbi_mem_plan_activation (mp, -1, bytes, &err);
  fail_unless (block_b == block_a || block_c == block_a);
  cbi_mem_plan_free (mp);
  cbi_pool_free (pool);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_outputs_keep_their_blocks_and_fused_outputs_take_none)
{
  CbiGraph *g = cbi_graph_new ();
  gint x, a, sum, y, in2[2];
  gpointer tensors[5] = { NULL, };
  guint64 reserved, requested;

  g->input = x = add_activation (g, "x");
  a = add_activation (g, "a");
  sum = add_activation (g, "sum");
  y = add_activation (g, "y");
  /* a is an output that Add reads too: nothing may take its block */
  g->outputs[g->n_outputs++] = a;
  g->outputs[g->n_outputs++] = y;
  cbi_graph_add_node (g, CBI_OP_TANH, "tanh", 1, &x, a, NULL);
  in2[0] = a;
  in2[1] = a;
  cbi_graph_add_node (g, CBI_OP_ADD, "add", 2, in2, sum, NULL);
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &sum, y, NULL);
  place (g, tensors, &reserved, &requested);

  /* the Relu runs in Add's epilogue: Add writes y, its own sum is never
   * stored; y takes x's block, free since Tanh */
  fail_unless (cbi_graph_fused_activation (g, 1) == cbi_graph_node (g, 2));
  fail_unless (tensors[sum] == NULL);
  fail_unless (tensors[y] == tensors[x]);
  fail_unless (tensors[a] != tensors[x] && tensors[a] != tensors[y]);
  cbi_graph_free (g);
}

GST_END_TEST;

/* Random graphs of Relu, Tanh, Add and Concat (channels grow, so sizes
 * differ): whatever the planner does, two activations alive at once never
 * share a block. An activation lives from the node that writes it to its
 * last reader; a graph output to the end. */
GST_START_TEST (test_activations_alive_at_once_never_share_a_block)
{
  GRand *rand = g_rand_new_with_seed (11);
  guint round, reused = 0;

  for (round = 0; round < 40; round++) {
    CbiGraph *g = cbi_graph_new ();
    const guint n_nodes = g_rand_int_range (rand, 3, 24);
    gint start[64], end[64];
    gpointer tensors[64] = { NULL, };
    guint64 reserved, requested;
    guint i, j;

    g->input = add_activation (g, "x");
    start[g->input] = -1;
    for (i = 0; i < n_nodes; i++) {
      const gint last = g->tensors->len - 1;
      gint in[2], out;
      CbiOpType op;
      gchar *name = g_strdup_printf ("t%u", i);
      in[0] = g_rand_int_range (rand, MAX (0, last - 3), last + 1);
      in[1] = g_rand_int_range (rand, MAX (0, last - 3), last + 1);
      switch (g_rand_int_range (rand, 0, 4)) {
        case 0:
          op = CBI_OP_RELU;
          break;
        case 1:
          op = CBI_OP_TANH;
          break;
        case 2:
          op = CBI_OP_CONCAT;
          break;
        default:
          op = CBI_OP_ADD;
          /* an operand of the same shape: the first again, at worst */
          if (cbi_graph_tensor (g, in[1])->dims[1]
              != cbi_graph_tensor (g, in[0])->dims[1])
            in[1] = in[0];
          break;
      }
      out = add_activation (g, name);
      g_free (name);
      if (op == CBI_OP_CONCAT)
        cbi_graph_tensor (g, out)->dims[1] =
            cbi_graph_tensor (g, in[0])->dims[1]
            + cbi_graph_tensor (g, in[1])->dims[1];
      else
        cbi_graph_tensor (g, out)->dims[1] =
            cbi_graph_tensor (g, in[0])->dims[1];
      cbi_graph_node (g, cbi_graph_add_node (g, op, "n",
              op == CBI_OP_RELU || op == CBI_OP_TANH ? 1 : 2, in, out,
              NULL))->axis = 1;
      start[out] = i;
    }
    g->outputs[g->n_outputs++] = g->tensors->len - 1;
    if (g_rand_boolean (rand))
      g->outputs[g->n_outputs++] = g_rand_int_range (rand, 0,
          g->tensors->len - 1);
    for (i = 0; i < g->tensors->len; i++)
      end[i] = cbi_graph_is_output (g, i) ? G_MAXINT : start[i];
    for (i = 0; i < g->nodes->len; i++)
      for (j = 0; j < cbi_graph_node (g, i)->n_inputs; j++) {
        gint t = cbi_graph_node (g, i)->inputs[j];
        end[t] = MAX (end[t], (gint) i);
      }

    place (g, tensors, &reserved, &requested);
    reused += reserved < requested;
    for (i = 0; i < g->tensors->len; i++)
      for (j = i + 1; j < g->tensors->len; j++)
        if (tensors[i] && tensors[i] == tensors[j])
          fail_unless (end[i] < start[j] || end[j] < start[i],
              "round %u: tensors %u [%d, %d] and %u [%d, %d] share a block",
              round, i, start[i], end[i], j, start[j], end[j]);
    cbi_graph_free (g);
  }
  /* and the planner does reuse */
  fail_unless (reused > 20, "%u of 40 graphs reused a block", reused);
  g_rand_free (rand);
}

GST_END_TEST;

GST_START_TEST (test_the_op_table_decides_which_activation_fuses)
{
  static const struct
  {
    CbiOpType producer;
    CbiOpType activation;
    gboolean fused;
  } cases[] = {
    {CBI_OP_CONV, CBI_OP_SIGMOID, TRUE},
    {CBI_OP_MATMUL, CBI_OP_CLIP, TRUE},
    {CBI_OP_ADD, CBI_OP_RELU, TRUE},
    {CBI_OP_INSTANCE_NORM, CBI_OP_RELU, TRUE},
    {CBI_OP_INSTANCE_NORM, CBI_OP_SIGMOID, FALSE},
    {CBI_OP_MAX_POOL, CBI_OP_RELU, FALSE},
    {CBI_OP_PRELU, CBI_OP_RELU, FALSE},
    {CBI_OP_RELU, CBI_OP_TANH, FALSE},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    CbiGraph *g = cbi_graph_new ();
    gint x = add_activation (g, "x"), a = add_activation (g, "a");
    gint y = add_activation (g, "y");
    g->input = x;
    g->outputs[g->n_outputs++] = y;
    cbi_graph_add_node (g, cases[i].producer, "p", 1, &x, a, NULL);
    cbi_graph_add_node (g, cases[i].activation, "act", 1, &a, y, NULL);
    fail_unless_equals_int (cbi_graph_fused_activation (g, 0) != NULL,
        cases[i].fused);
    cbi_graph_free (g);
  }
  /* names and families come from the same rows */
  fail_unless_equals_string (cbi_op_type_name (CBI_OP_INSTANCE_NORM),
      "InstanceNormalization");
  fail_unless (cbi_op_is_eltwise (CBI_OP_HARD_SWISH));
  fail_unless (!cbi_op_is_binary (CBI_OP_PRELU));
  fail_unless_equals_int (cbi_op_info (CBI_OP_RESHAPE)->int64_input, 1);
}

GST_END_TEST;

static Suite *
planmemory_suite (void)
{
  Suite *s = suite_create ("cbimemplan");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_a_chain_reuses_the_block_of_a_tensor_read_two_nodes_ago);
  tcase_add_test (tc,
      test_outputs_keep_their_blocks_and_fused_outputs_take_none);
  tcase_add_test (tc, test_activations_alive_at_once_never_share_a_block);
  tcase_add_test (tc, test_a_block_with_views_stays_until_their_last_reader);
  tcase_add_test (tc, test_the_op_table_decides_which_activation_fuses);
  return s;
}

GST_CHECK_MAIN (planmemory);
