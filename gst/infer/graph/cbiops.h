/* cudabatchinfer: the op table: what the engine knows of each op, and how an
 * element-wise op fuses into the node before it (graph/graph.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"

G_BEGIN_DECLS

/**
 * CbiOpKind:
 * @CBI_OP_KIND_CONV: Conv, ConvTranspose
 * @CBI_OP_KIND_ELTWISE: one value in, one out (CbiOpInfo.eltwise says how)
 * @CBI_OP_KIND_BINARY: Add, Sub, Mul, Div (CbiOpInfo.binary says which)
 * @CBI_OP_KIND_PRELU: PRelu, binary in form but its own primitive on oneDNN
 * @CBI_OP_KIND_POOL: MaxPool, AveragePool, GlobalAveragePool
 * @CBI_OP_KIND_RESIZE: Resize
 * @CBI_OP_KIND_CONCAT: Concat
 * @CBI_OP_KIND_PAD: Pad
 * @CBI_OP_KIND_NORM: InstanceNormalization
 * @CBI_OP_KIND_PERMUTE: Transpose, DepthToSpace (cbi_node_permutation())
 * @CBI_OP_KIND_RESHAPE: Reshape and Flatten (Squeeze and Unsqueeze become
 *   Reshapes at plan time)
 * @CBI_OP_KIND_MATRIX: Gemm, MatMul
 * @CBI_OP_KIND_SOFTMAX: Softmax
 * @CBI_OP_KIND_SHAPE_VALUE: shape computation, done at plan time: no
 *   backend plans it
 * @CBI_OP_KIND_COPY: Slice, Gather, Expand (a CbiCopyView)
 * @CBI_OP_KIND_REDUCE: ReduceMean, ReduceSum, ReduceMax, ArgMax
 *   (CbiNode.ints: the axes, none for all; CbiNode.mode: keepdims;
 *   ArgMax: one axis, and its index as a float, the last maximum's when
 *   CbiNode.alpha is 1, as select_last_index)
 * @CBI_OP_KIND_SPLIT: one output of Split (cbi_node_split_range ())
 * @CBI_OP_KIND_WHERE: Where, inputs a (an activation), b, and a constant
 *   condition (0 or 1) that b and it broadcast to a: c ? a : b
 * @CBI_OP_KIND_LAYER_NORM: LayerNormalization (CbiNode.axis: the first
 *   normalised axis; CbiNode.alpha: epsilon)
 * @CBI_OP_KIND_RECURRENT: LSTM, GRU and RNN (cbi_node_recurrent ())
 * @CBI_OP_KIND_REMOTE: an output of a model on an inference server: no
 *   local backend plans it
 *
 * The families of ops a backend plans alike: its planners are a table
 * indexed by kind.
 */
typedef enum
{
  CBI_OP_KIND_CONV,
  CBI_OP_KIND_ELTWISE,
  CBI_OP_KIND_BINARY,
  CBI_OP_KIND_PRELU,
  CBI_OP_KIND_POOL,
  CBI_OP_KIND_RESIZE,
  CBI_OP_KIND_CONCAT,
  CBI_OP_KIND_PAD,
  CBI_OP_KIND_NORM,
  CBI_OP_KIND_PERMUTE,
  CBI_OP_KIND_RESHAPE,
  CBI_OP_KIND_MATRIX,
  CBI_OP_KIND_SOFTMAX,
  CBI_OP_KIND_SHAPE_VALUE,
  CBI_OP_KIND_COPY,
  CBI_OP_KIND_REDUCE,
  CBI_OP_KIND_LAYER_NORM,
  CBI_OP_KIND_SPLIT,
  CBI_OP_KIND_WHERE,
  CBI_OP_KIND_RECURRENT,
  CBI_OP_KIND_REMOTE,
  CBI_OP_N_KINDS,
} CbiOpKind;

/**
 * CbiOpFuse:
 * @CBI_OP_FUSE_NONE: its output is not an activation's input
 * @CBI_OP_FUSE_ANY: any element-wise op after it runs as its epilogue
 * @CBI_OP_FUSE_RELU: only a Relu (or LeakyRelu) does
 *
 * Which element-wise op a node can take as a fused activation, on every
 * backend.
 */
typedef enum
{
  CBI_OP_FUSE_NONE,
  CBI_OP_FUSE_ANY,
  CBI_OP_FUSE_RELU,
} CbiOpFuse;

/**
 * CbiOpInfo:
 * @name: the ONNX name
 * @kind: its family
 * @eltwise: for an element-wise op, the CbiKEltwise (math/cbimath.h)
 *   it computes; else -1
 * @binary: for Add, Sub, Mul, Div and PRelu, the CbiKBinary; else -1
 * @spatial: it takes 4-D NCHW images
 * @fuse: which activation it takes as its epilogue
 * @int64_input: the input ONNX gives as an int64 tensor, an attribute in
 *   disguise (Pad's pads, Reshape's shape), which the importer folds into
 *   the node; -1 where every input is float
 *
 * What the engine knows of an op, in one table: every other place asks
 * it instead of restating it.
 */
typedef struct
{
  const gchar *name;
  CbiOpKind kind;
  gint eltwise;
  gint binary;
  gboolean spatial;
  CbiOpFuse fuse;
  gint int64_input;
} CbiOpInfo;

/* Returns: (transfer none): @op's row of the op table. */
const CbiOpInfo *cbi_op_info (CbiOpType op);
const gchar *cbi_op_type_name (CbiOpType op);
/* Whether @op maps each value on its own (and so fuses into a producer). */
gboolean cbi_op_is_eltwise (CbiOpType op);
/* Add, Sub, Mul and Div (not PRelu). */
gboolean cbi_op_is_binary (CbiOpType op);
/* The name of the first op of the table that computes @step. */
const gchar *cbi_eltwise_step_name (const CbiEltwiseStep * step);
/* Element-wise node @n as its steps, its own op first, then its @then:
 * fills @steps and returns how many. */
guint cbi_node_eltwise_steps (const CbiNode * n,
    CbiEltwiseStep steps[CBI_MAX_ELTWISE_STEPS]);

/* The element-wise node that can run as node @index's epilogue (a
 * backend's fused activation): the next node, when it is element-wise
 * and reads @index's output, which nothing else reads and which is no
 * graph output; else %NULL. Which producers can take one is the
 * backend's call. */
const CbiNode *cbi_graph_next_activation (const CbiGraph * graph,
    guint index);

/* The activation node @index runs as its epilogue on every backend: the
 * next activation (cbi_graph_next_activation()) where the op table says
 * node @index takes it; else %NULL. Its planner then writes the
 * activation's output and the activation is not planned on its own. */
const CbiNode *cbi_graph_fused_activation (const CbiGraph * graph,
    guint index);

/* Called for node @n with the activation fused into it (nullable). */
typedef gboolean (*CbiGraphStepFunc) (const CbiNode * n, const CbiNode * post,
    gpointer user_data, GError ** error);

/* Calls @func on every node of @graph in order, a fused activation
 * (cbi_graph_fused_activation()) as the @post of its producer instead of
 * on its own; stops at the first call that fails, and returns FALSE. */
gboolean cbi_graph_foreach_step (const CbiGraph * graph,
    CbiGraphStepFunc func, gpointer user_data, GError ** error);

G_END_DECLS
