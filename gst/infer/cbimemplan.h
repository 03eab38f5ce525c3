/* cudabatchinfer: where a plan's tensors live
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One memory planner for every backend. It knows each activation's
 * readers from the graph; a backend asks it for each activation's block
 * as it plans the nodes, in graph order, and says when a node is
 * planned. Layers run one after another, so once the last reader of an
 * activation is planned, its block is free for a later activation of the
 * same plan: the planner hands the smallest such block that is large
 * enough, else takes a new one from the pool. The graph's outputs keep
 * their blocks (unpacking and reading come after the last layer); the
 * input's block is free after its last reader, as every batch writes it
 * anew before the first.
 */
#pragma once

#include "graph/cbiops.h"
#include "cbipool.h"

G_BEGIN_DECLS

typedef struct _CbiMemPlan CbiMemPlan;

/* Returns: (transfer full): the memory of one backend plan, its blocks
 * from @pool (transfer none: it must outlive the memory plan). @graph
 * (transfer none, nullable: a plan of blocks only, for staging) is read
 * here, by cbi_mem_plan_step_done() and by cbi_mem_plan_place_dense():
 * it must outlive the planning. Free with cbi_mem_plan_free(). */
CbiMemPlan *cbi_mem_plan_new (const CbiGraph * graph, CbiPool * pool);
/* Gives every block back to the pool and frees @mp. */
void cbi_mem_plan_free (CbiMemPlan * mp);
/* Frees what only planning needed; the blocks stay the plan's. */
void cbi_mem_plan_done (CbiMemPlan * mp);

/* Returns: (transfer none): a block of @size bytes (at least one float)
 * that the plan keeps until cbi_mem_plan_free() or
 * cbi_mem_plan_give_back(): weights, workspace, transfer buffers. %NULL
 * with @error set (CBI_ERROR_MEMORY, naming @what and the limit) when the
 * pool refuses. */
gpointer cbi_mem_plan_alloc (CbiMemPlan * mp, gsize size, const gchar * what,
    GError ** error);
/* Gives @block, from cbi_mem_plan_alloc(), back to the pool now. */
void cbi_mem_plan_give_back (CbiMemPlan * mp, gpointer block);

/* Returns: (transfer none): the block of activation @tensor, @size bytes:
 * a block free since its tensors' last readers were planned, else a new
 * one. @tensor -1 is a copy that lives as long as the plan. Placing a
 * tensor again leaves its first block to the plan (a kept copy). %NULL
 * with @error set when the pool refuses. */
gpointer cbi_mem_plan_activation (CbiMemPlan * mp, gint tensor, gsize size,
    GError ** error);
/* Returns: (transfer none): a block of @size bytes that only the node
 * being planned reads and writes (a conversion of an operand for its own
 * primitive): free for the activations planned after it once
 * cbi_mem_plan_step_done() runs. %NULL with @error set when the pool
 * refuses. */
gpointer cbi_mem_plan_scratch (CbiMemPlan * mp, gsize size, GError ** error);
/* How many of the nodes that read activation @t are not planned yet. */
guint cbi_mem_plan_readers_left (CbiMemPlan * mp, gint t);
/* Activation @to takes over the block of activation @from, whose last
 * reader is the node that writes @to there (in place); where @from is a
 * view (cbi_mem_plan_view()), @to becomes a view of the same block. */
void cbi_mem_plan_hand_over (CbiMemPlan * mp, gint from, gint to);
/* Activation @to reads its elements where activation @from has them (a
 * part of @from, no copy): @from's block stays until the readers of
 * both are planned. A view is never written in place. */
void cbi_mem_plan_view (CbiMemPlan * mp, gint from, gint to);
/* Whether activation @t is a view of another's block
 * (cbi_mem_plan_view()). */
gboolean cbi_mem_plan_is_view (CbiMemPlan * mp, gint t);
/* Node @n, and the activation @post (nullable) fused into it, are
 * planned: the blocks of the activations they read last become free for
 * the activations planned after them. */
void cbi_mem_plan_step_done (CbiMemPlan * mp, const CbiNode * n,
    const CbiNode * post);

/* Places every activation as a backend of plain row-major float tensors
 * stores it (the CUDA backend): the input, then each node's output in
 * graph order, a fused activation's (cbi_graph_fused_activation()) in
 * place of its producer's, each the size of its shape in @shapes. A
 * node's output never shares a block with its inputs. @tensors (one per
 * tensor, caller-allocated) receives the blocks; the others are left as
 * they are. */
gboolean cbi_mem_plan_place_dense (CbiMemPlan * mp, const CbiShape * shapes,
    gpointer * tensors, GError ** error);

/* The bytes of the activations' blocks (@placed) and of the activations
 * asked for (@requested: what a block for every one would take). */
void cbi_mem_plan_activation_bytes (CbiMemPlan * mp, guint64 * placed,
    guint64 * requested);

G_END_DECLS
