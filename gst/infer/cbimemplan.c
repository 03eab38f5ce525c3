/* cudabatchinfer: where a plan's tensors live
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbimemplan.h"

typedef struct
{
  gpointer block;
  gsize size;
} CbiMemBlock;

struct _CbiMemPlan
{
  const CbiGraph *graph;
  CbiPool *pool;
  GPtrArray *blocks;            /* every pool block the plan holds */
  guint64 placed_bytes;
  guint64 requested_bytes;
  /* planning only */
  GArray *spare;                /* CbiMemBlock: free for a later activation */
  GArray *scratch;              /* CbiMemBlock: the node being planned's */
  guint *readers_left;          /* per tensor */
  CbiMemBlock *tensor_block;    /* per tensor */
  gint *view_of;                /* per tensor: the tensor whose block it
                                 * reads into (cbi_mem_plan_view ()), or -1 */
};

CbiMemPlan *
cbi_mem_plan_new (const CbiGraph * graph, CbiPool * pool)
{
  CbiMemPlan *mp = g_new0 (CbiMemPlan, 1);
  guint n_tensors = graph ? graph->tensors->len : 0, i, j;

  mp->graph = graph;
  mp->pool = pool;
  mp->blocks = g_ptr_array_new ();
  mp->spare = g_array_new (FALSE, FALSE, sizeof (CbiMemBlock));
  mp->scratch = g_array_new (FALSE, FALSE, sizeof (CbiMemBlock));
  mp->readers_left = g_new0 (guint, n_tensors);
  mp->tensor_block = g_new0 (CbiMemBlock, n_tensors);
  mp->view_of = g_new (gint, n_tensors);
  for (i = 0; i < n_tensors; i++)
    mp->view_of[i] = -1;
  /* the lifetimes: one pass over the readers */
  for (i = 0; graph && i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    for (j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] >= 0)
        mp->readers_left[n->inputs[j]]++;
  }
  return mp;
}

void
cbi_mem_plan_done (CbiMemPlan * mp)
{
  g_clear_pointer (&mp->spare, g_array_unref);
  g_clear_pointer (&mp->scratch, g_array_unref);
  g_clear_pointer (&mp->readers_left, g_free);
  g_clear_pointer (&mp->tensor_block, g_free);
  g_clear_pointer (&mp->view_of, g_free);
}

void
cbi_mem_plan_free (CbiMemPlan * mp)
{
  guint i;

  if (mp == NULL)
    return;
  for (i = 0; i < mp->blocks->len; i++)
    cbi_pool_release (mp->pool, g_ptr_array_index (mp->blocks, i));
  g_ptr_array_free (mp->blocks, TRUE);
  cbi_mem_plan_done (mp);
  g_free (mp);
}

gpointer
cbi_mem_plan_alloc (CbiMemPlan * mp, gsize size, const gchar * what,
    GError ** error)
{
  gpointer block = cbi_pool_take (mp->pool, size, what, error);

  if (block)
    g_ptr_array_add (mp->blocks, block);
  return block;
}

void
cbi_mem_plan_give_back (CbiMemPlan * mp, gpointer block)
{
  if (g_ptr_array_remove_fast (mp->blocks, block))
    cbi_pool_release (mp->pool, block);
}

/* @out: the smallest spare block of @size bytes or more, else a new one */
static gboolean
cbi_mem_plan_take (CbiMemPlan * mp, gsize size, CbiMemBlock * out,
    GError ** error)
{
  CbiMemBlock b = { NULL, size };
  gint best = -1;
  guint i;

  mp->requested_bytes += size;
  for (i = 0; i < mp->spare->len; i++) {
    const CbiMemBlock *sp = &g_array_index (mp->spare, CbiMemBlock, i);
    if (sp->size >= size && (best < 0 || sp->size <
            g_array_index (mp->spare, CbiMemBlock, best).size))
      best = i;
  }
  if (best >= 0) {
    b = g_array_index (mp->spare, CbiMemBlock, best);
    g_array_remove_index_fast (mp->spare, best);
  } else {
    b.block = cbi_mem_plan_alloc (mp, size, "activations", error);
    if (b.block == NULL)
      return FALSE;
    mp->placed_bytes += size;
  }
  *out = b;
  return TRUE;
}

gpointer
cbi_mem_plan_activation (CbiMemPlan * mp, gint tensor, gsize size,
    GError ** error)
{
  CbiMemBlock b;

  g_return_val_if_fail (mp->spare != NULL, NULL);
  if (!cbi_mem_plan_take (mp, size, &b, error))
    return NULL;
  if (tensor >= 0)
    mp->tensor_block[tensor] = b;
  return b.block;
}

gpointer
cbi_mem_plan_scratch (CbiMemPlan * mp, gsize size, GError ** error)
{
  CbiMemBlock b;

  g_return_val_if_fail (mp->spare != NULL, NULL);
  if (!cbi_mem_plan_take (mp, size, &b, error))
    return NULL;
  g_array_append_val (mp->scratch, b);
  return b.block;
}

static void
cbi_mem_plan_node_done (CbiMemPlan * mp, const CbiNode * n)
{
  guint i;

  for (i = 0; i < n->n_inputs; i++) {
    gint t = n->inputs[i];
    if (t < 0 || cbi_graph_tensor (mp->graph, t)->data != NULL)
      continue;
    /* a view's readers are its block owner's too */
    if (mp->view_of[t] >= 0 && mp->readers_left[t] > 0) {
      mp->readers_left[t]--;
      t = mp->view_of[t];
    }
    if (--mp->readers_left[t] > 0 || cbi_graph_is_output (mp->graph, t)
        || mp->tensor_block[t].block == NULL)
      continue;
    g_array_append_val (mp->spare, mp->tensor_block[t]);
    mp->tensor_block[t].block = NULL;
  }
}

guint
cbi_mem_plan_readers_left (CbiMemPlan * mp, gint t)
{
  return mp->readers_left[t];
}

void
cbi_mem_plan_hand_over (CbiMemPlan * mp, gint from, gint to)
{
  if (mp->view_of[from] >= 0) {
    /* the block is another tensor's: @to is a view of it as well */
    cbi_mem_plan_view (mp, mp->view_of[from], to);
    return;
  }
  mp->tensor_block[to] = mp->tensor_block[from];
  mp->tensor_block[from].block = NULL;
}

void
cbi_mem_plan_view (CbiMemPlan * mp, gint from, gint to)
{
  gint owner = mp->view_of[from] >= 0 ? mp->view_of[from] : from;

  mp->view_of[to] = owner;
  mp->readers_left[owner] += mp->readers_left[to];
}

gboolean
cbi_mem_plan_is_view (CbiMemPlan * mp, gint t)
{
  return mp->view_of[t] >= 0;
}

void
cbi_mem_plan_step_done (CbiMemPlan * mp, const CbiNode * n,
    const CbiNode * post)
{
  cbi_mem_plan_node_done (mp, n);
  /* a fused activation's input is its producer's own output: never
   * placed */
  if (post)
    cbi_mem_plan_node_done (mp, post);
  g_array_append_vals (mp->spare, mp->scratch->data, mp->scratch->len);
  g_array_set_size (mp->scratch, 0);
}

typedef struct
{
  CbiMemPlan *mp;
  const CbiShape *shapes;
  gpointer *tensors;
} CbiMemDense;

static gboolean
cbi_mem_plan_dense (CbiMemDense * d, gint t, GError ** error)
{
  gsize bytes = cbi_shape_count (&d->shapes[t]) * sizeof (gfloat);

  d->tensors[t] = cbi_mem_plan_activation (d->mp, t, bytes, error);
  return d->tensors[t] != NULL;
}

static gboolean
cbi_mem_plan_dense_step (const CbiNode * n, const CbiNode * post,
    gpointer user_data, GError ** error)
{
  CbiMemDense *d = user_data;

  /* the output first: while its inputs still hold their blocks */
  if (!cbi_mem_plan_dense (d, post ? post->output : n->output, error))
    return FALSE;
  cbi_mem_plan_step_done (d->mp, n, post);
  return TRUE;
}

gboolean
cbi_mem_plan_place_dense (CbiMemPlan * mp, const CbiShape * shapes,
    gpointer * tensors, GError ** error)
{
  CbiMemDense d = { mp, shapes, tensors };

  return cbi_mem_plan_dense (&d, mp->graph->input, error)
      && cbi_graph_foreach_step (mp->graph, cbi_mem_plan_dense_step, &d, error);
}

void
cbi_mem_plan_activation_bytes (CbiMemPlan * mp, guint64 * placed,
    guint64 * requested)
{
  *placed = mp->placed_bytes;
  *requested = mp->requested_bytes;
}
