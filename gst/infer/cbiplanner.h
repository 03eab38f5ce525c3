/* cudabatchinfer: what every backend's planning shares
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A backend plans a graph with a table of planners, one per op family
 * (CbiOpKind), which this file walks: the loop over the nodes, whether a
 * backend supports an op, and the convention for a fused activation are
 * written once here, not in each backend.
 *
 * The fused activation: a planner given node @n and its fused activation
 * @post (cbi_graph_fused_activation()) runs @n and then @post's own op,
 * as an epilogue where it can or as a step in place on the output, and
 * writes @post's output. The element-wise ops merged after an element-wise
 * node (CbiNode.then, cbi_graph_fuse_eltwise_runs()), of @post or of an
 * element-wise @n, then run in place on that output, one step each,
 * added by the loop through the backend's add_in_place.
 */
#pragma once

#include "cbimemplan.h"
#include "graph/cbiops.h"
#include "graph/cbishapes.h"

G_BEGIN_DECLS

/* Plans node @n, and its fused activation @post (nullable), into the
 * backend plan @plan (a CbiCpuPlan, a CbiCudaPlan). */
typedef gboolean (*CbiPlanNodeFunc) (gpointer plan, const CbiNode * n,
    const CbiNode * post, GError ** error);

/**
 * CbiPlanners:
 * @backend: the backend's name, for messages
 * @nodes: the planner of each op family; %NULL where the backend has none
 * @refuses: (nullable): whether the backend refuses node @n of @graph
 *   whatever the shape, though it plans its family
 * @add_in_place: adds element-wise step @step of node @n in place on
 *   @n's output
 *
 * A backend's planning, as a table.
 */
typedef struct
{
  const gchar *backend;
  CbiPlanNodeFunc nodes[CBI_OP_N_KINDS];
    gboolean (*refuses) (const CbiGraph * graph, const CbiNode * n);
    gboolean (*add_in_place) (gpointer plan, const CbiNode * n,
      const CbiEltwiseStep * step, GError ** error);
} CbiPlanners;

/* The planners of a backend whose op families' planners are named
 * @prefix_conv, @prefix_eltwise ... (one per CbiOpKind but
 * CBI_OP_KIND_SHAPE_VALUE, which no backend plans), as every backend's
 * are: the table is written once, here. */
/* *INDENT-OFF* */
#define CBI_PLANNERS_INIT(name, prefix, refuses, add_in_place) {         \
  name, {                                                               \
    [CBI_OP_KIND_CONV] = prefix##_conv,                                 \
    [CBI_OP_KIND_ELTWISE] = prefix##_eltwise,                           \
    [CBI_OP_KIND_BINARY] = prefix##_binary,                             \
    [CBI_OP_KIND_PRELU] = prefix##_prelu,                               \
    [CBI_OP_KIND_POOL] = prefix##_pool,                                 \
    [CBI_OP_KIND_RESIZE] = prefix##_resize,                             \
    [CBI_OP_KIND_CONCAT] = prefix##_concat,                             \
    [CBI_OP_KIND_PAD] = prefix##_pad,                                   \
    [CBI_OP_KIND_NORM] = prefix##_instance_norm,                        \
    [CBI_OP_KIND_PERMUTE] = prefix##_permute,                           \
    [CBI_OP_KIND_RESHAPE] = prefix##_reshape,                           \
    [CBI_OP_KIND_MATRIX] = prefix##_matrix,                             \
    [CBI_OP_KIND_SOFTMAX] = prefix##_softmax,                           \
    [CBI_OP_KIND_COPY] = prefix##_copy,                                 \
    [CBI_OP_KIND_REDUCE] = prefix##_reduce,                             \
    [CBI_OP_KIND_LAYER_NORM] = prefix##_layer_norm,                     \
    [CBI_OP_KIND_SPLIT] = prefix##_split,                               \
    [CBI_OP_KIND_WHERE] = prefix##_where,                               \
    [CBI_OP_KIND_RECURRENT] = prefix##_recurrent,                       \
  }, refuses, add_in_place }
/* *INDENT-ON* */

/* Whether @planners can plan node @n of @graph: its family has a planner
 * that does not refuse it. */
gboolean cbi_planners_support (const CbiPlanners * planners,
    const CbiGraph * graph, const CbiNode * n);

/* Plans every node of @graph into @plan in order, a fused activation with
 * its producer, then the rest of each element-wise chain in place; after
 * each node, tells @memory (nullable: the backend places tensors itself)
 * which blocks its inputs may give back. Fails at the first node a
 * planner fails on, or that has none (naming it). */
gboolean cbi_planners_run (const CbiPlanners * planners,
    const CbiGraph * graph, gpointer plan, CbiMemPlan * memory,
    GError ** error);

/* Sets @error (CBI_ERROR_MODEL): the backend called @backend_name cannot
 * run node @n, naming it and its op. Returns FALSE. */
gboolean cbi_node_unsupported (const CbiNode * n, const gchar * backend_name,
    GError ** error);

G_END_DECLS
