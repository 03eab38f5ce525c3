/* cudabatchinfer: shapes: inference over a graph for one input shape, its
 * specialised copy, and the geometry backends read from a node (its
 * views, pads, Gemm's operands) (graph/shapes.c, graph/resolve.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"
#include "cbimath.h"

G_BEGIN_DECLS

/* Computes the shape of every tensor when the input has shape @input,
 * which must have the input's rank and agree with its fixed dimensions;
 * @shapes (caller-allocated, one per tensor) receives them, constants
 * included. Fails with a message naming the node when a shape does not
 * fit (kernel larger than the padded input, channel mismatch). */
gboolean cbi_graph_infer_shapes (const CbiGraph * graph,
    const CbiShape * input, CbiShape * shapes, GError ** error);

/* What backends plan for input shape @input: the graph with its shape
 * values computed (CBI_OP_SHAPE_VALUE nodes evaluated, once, here) and
 * put into what they feed (a Reshape's shape, Resize's scales, Slice's
 * bounds...), those nodes and every int64 input dropped, Squeeze and
 * Unsqueeze as Reshapes; a product's scaled operands as a scale of its
 * output (cbi_graph_scale_products()); @shapes as
 * cbi_graph_infer_shapes() fills it, but for the tensor of an operand
 * so rewritten, which holds the unscaled product. The result shares
 * @graph's tensors (their data too): free it with
 * cbi_graph_free() before @graph. Returns: (transfer full) the graph, or
 * NULL with @error set as cbi_graph_infer_shapes() does. */
CbiGraph *cbi_graph_specialise (const CbiGraph * graph,
    const CbiShape * input, CbiShape * shapes, GError ** error);

/* Slice along a dimension of @len: ONNX's @start, @end (either clamped
 * into range, negative ones counted from the end) and @step (not 0);
 * returns how many values it takes, the first at *@first. */
gint64 cbi_slice_range (gint64 start, gint64 end, gint64 step, gint64 len,
    gint64 * first);

/* The input shape for @batch frames of @height x @width: [batch, the
 * model's channels, height, width] (a 4-D input is NCHW). */
void cbi_graph_frame_shape (const CbiGraph * graph, gint64 batch,
    gint64 height, gint64 width, CbiShape * shape);

/* Transpose and DepthToSpace node @n, on an input of shape @input, as
 * one transposition of a row-major view of that input: @view receives the
 * view's shape (the input's own, or DepthToSpace's 6-D split: DCR reads
 * [N, b, b, C', H, W], CRD [N, C', b, b, H, W]) and @perm (room for
 * CBI_MAX_DIMS) which view axis each output axis is. */
void cbi_node_permutation (const CbiNode * n, const CbiShape * input,
    CbiShape * view, gint64 * perm);

/* The pads (top, left, bottom, right) of Conv or pooling node @n of
 * @graph on an input of shape @input (4-D), into @pads (room for 4): its own, or what auto_pad
 * SAME asks for that size; for ceil_mode, the end pads grow by what the
 * last, partial window reaches past the input, so the backends' floor
 * rounding gives ONNX's ceil. */
void cbi_node_pads (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * input, gint64 * pads);

/* Reduction node @n on an input of shape @input as @outer x @r x @inner
 * (row-major), the @r values of each (outer, inner) reduced: whether its
 * axes are neighbours (so such a view exists). */
gboolean cbi_node_reduce_view (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * r, gint64 * inner);

/* The CbiKReduce (math/cbimath.h) reduction node @n computes. */
gint cbi_node_reduce_op (const CbiNode * n);

/* Split node @n (one output of an ONNX Split, on CbiNode.axis: parts of
 * the sizes given, CbiNode.mode 0: ints[0] its start, ints[1] its length,
 * ints[2] 1 for the last part; or of equal sizes, mode 1: ints[0] its
 * index, ints[1] the number of parts, the last one smaller as ONNX's
 * num_outputs) on an input of shape @input: the part as @outer x @inner
 * rows of the input's @outer x @total, from column @start. */
void cbi_node_split_range (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * total, gint64 * start, gint64 * inner);

/* LayerNormalization node @n on an input of shape @input as @rows x
 * @inner (row-major): each row normalised on its own. */
void cbi_node_layer_norm_view (const CbiNode * n, const CbiShape * input,
    gint64 * rows, gint64 * inner);

/* Softmax node @n on an input of shape @input as @outer x @axis x
 * @inner (row-major), normalised along the middle: the opset 13 form
 * over its axis, the opset < 13 form (CbiNode.mode 1) over everything
 * from its axis on (@inner 1). */
void cbi_node_softmax_view (const CbiNode * n, const CbiShape * input,
    gint64 * outer, gint64 * axis, gint64 * inner);

/* Concat node @n, of output shape @output, as @outer rows of @inner
 * elements per position along its axis; returns the axis, counted from
 * the front. */
gint cbi_node_concat_view (const CbiNode * n, const CbiShape * output,
    gint64 * outer, gint64 * inner);

/* Binary node @n with its operands in the order backends run best: the
 * first an activation of the output's shape, the other broadcast. Where
 * @n has a first operand that broadcasts (or a constant) and a commutative
 * op (Add, Mul, Min, Max) with an activation of the output's shape second
 * (squeeze-and-excitation's s * x), @swapped (caller's) receives @n with
 * its inputs swapped and is returned; else @n. @shapes: the plan's. */
const CbiNode *cbi_node_binary_operands (const CbiGraph * graph,
    const CbiNode * n, const CbiShape * shapes, CbiNode * swapped);

/* @view: the strided read that expands a row-major tensor of shape @x to
 * shape @y, which @x broadcasts to (numpy rules): a stride of 0 repeats
 * a broadcast dimension. */
void cbi_copy_view_expand (const CbiShape * x, const CbiShape * y,
    CbiCopyView * view);

/* Whether a tensor of shape @from laid out with @from_strides (in
 * elements) can be read as shape @to (the same elements in row-major
 * order, as Reshape takes them) without moving any: @to_strides then
 * receives the strides that view has. A row-major tensor always can; a
 * channels-last one where only the channels are split or merged. */
gboolean cbi_shape_view_strides (const CbiShape * from,
    const gint64 * from_strides, const CbiShape * to, gint64 * to_strides);

/* Gemm node @n as the backends run it, Y = A W + bias. W, @k x @cols
 * into @weights (caller-allocated): alpha B, transposed when transB says
 * so. */
void cbi_gemm_weights (const CbiGraph * graph, const CbiNode * n, gint64 k,
    gint64 cols, gfloat * weights);
/* Whether Gemm node @n has a bias: a C and a non-zero beta. */
gboolean cbi_gemm_has_bias (const CbiNode * n);
/* The rows of Gemm node @n's C (shapes @shapes): 1 where one row
 * broadcasts over the output's @rows ([N], [1, N] or a scalar), else
 * @rows. */
gint64 cbi_gemm_bias_rows (const CbiNode * n, const CbiShape * shapes,
    gint64 rows);
/* The bias, @rows x @cols into @bias: beta C broadcast to the output
 * (@rows 1: its one row, where cbi_gemm_bias_rows () says so). */
void cbi_gemm_bias (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * shapes, gint64 rows, gint64 cols, gfloat * bias);

/**
 * CbiRecurrent:
 * @gates: gates per hidden unit: 4 (LSTM), 3 (GRU), 1 (RNN)
 * @dirs: directions, 1 or 2
 * @hidden: hidden units
 * @reset_after: GRU: linear_before_reset (the reset gate applied after
 *   the recurrent product)
 * @steps: the sequence's length, the input's first axis
 * @batch: the sequences side by side, its second
 * @input: values per step of a sequence, its third
 *
 * A recurrent layer (LSTM, GRU, RNN) for one input shape: its output is
 * [@steps, @dirs, @batch, @hidden] (ONNX's Y).
 */
typedef struct
{
  gint gates;
  gint dirs;
  gint64 hidden;
  gboolean reset_after;
  gint64 steps, batch, input;
} CbiRecurrent;

/**
 * CbiRecurrentWalk:
 * @xw: the input product, [steps x batch, dirs x gates x hidden]
 * @y: the output Y, [steps, dirs, batch, hidden]
 * @h0: (nullable): initial_h, [dirs, batch, hidden]; NULL: zeros
 * @c0: (nullable): LSTM: initial_c, the same; NULL: zeros
 * @c: (nullable): LSTM: the cell state, [batch, hidden]
 * @rbuf: the recurrent product of a step, [batch, gates x hidden]
 * @bias: cbi_recurrent_bias ()'s @bias
 * @r_bias: (nullable): its @r_bias
 * @reverse: a one-direction layer walks from its last step
 * @rt: the direction's recurrent weights (cbi_recurrent_weights ())
 * @rt_h: (nullable): the h gate's apart (GRU, linear_before_reset 0)
 * @reset: with @rt_h: r h, [batch, hidden]
 *
 * Where a backend put one direction of a recurrent layer's buffers, so
 * that cbi_recurrent_step () and cbi_recurrent_walk () set up each step
 * alike on each.
 */
typedef struct
{
  const gfloat *xw;
  gfloat *y;
  const gfloat *h0, *c0;
  gfloat *c;
  gfloat *rbuf;
  const gfloat *bias, *r_bias;
  gboolean reverse;
  const gfloat *rt, *rt_h;
  gfloat *reset;
} CbiRecurrentWalk;

/**
 * CbiRecurrentSteps:
 * @product: @y ([batch, @cols], rows gates x hidden apart) = @a ([batch,
 *   hidden], dense) times @w ([hidden, @cols], dense)
 * @cells: one step's cells (cbi_recurrent_unit () over @cell)
 *
 * What a backend does for the parts of a time step: the CPU computes them
 * as it walks, CUDA queues them as it plans.
 */
typedef struct
{
  gboolean (*product) (gpointer data, const gfloat * a, const gfloat * w,
      gint64 cols, gfloat * y, GError ** error);
  gboolean (*cells) (gpointer data, const CbiKCell * cell, GError ** error);
} CbiRecurrentSteps;

/* Recurrent node @n on an input of shape @x (3-D) into @r. */
void cbi_node_recurrent (const CbiNode * n, const CbiShape * x,
    CbiRecurrent * r);
/* @wt (caller's, @r->input x @r->dirs x gates x hidden): every
 * direction's input weights W, transposed, side by side, so that one
 * matrix product of the sequence's steps by them gives every gate of
 * every direction. */
void cbi_recurrent_input_weights (const CbiGraph * graph, const CbiNode * n,
    const CbiRecurrent * r, gfloat * wt);
/* Direction @dir's recurrent weights R, transposed, into @rt (caller's,
 * @r->hidden x gates x hidden); with @rt_h (nullable; the GRU's reset
 * gate first, whose h gate has a product of its own), the z and r gates'
 * into @rt (hidden x 2 hidden) and the h gate's into @rt_h (hidden x
 * hidden). */
void cbi_recurrent_weights (const CbiGraph * graph, const CbiNode * n,
    const CbiRecurrent * r, gint dir, gfloat * rt, gfloat * rt_h);
/* @bias (caller's, dirs x gates x hidden): each gate's input and
 * recurrent biases summed (zeros without B), but for the GRU's h gate,
 * whose recurrent bias goes to @r_bias (caller's, dirs x hidden; nullable
 * for LSTM and RNN). CbiKCell reads them so. */
void cbi_recurrent_bias (const CbiGraph * graph, const CbiNode * n,
    const CbiRecurrent * r, gfloat * bias, gfloat * r_bias);
/* Sets @cell (a CbiKCell, math/cbimath.h: its @op is the caller's) to
 * step @s (counted from where direction @d starts: its last time step
 * when it walks backwards) of direction @d over @w's buffers: this step's
 * input product, the previous h (NULL on the first step without
 * initial_h, and then @r too), the recurrent product, c, and where h
 * goes in Y. */
void cbi_recurrent_step (const CbiRecurrent * r, const CbiRecurrentWalk * w,
    gint d, gint64 s, CbiKCell * cell);
/* Every time step of direction @d over @w, in order, through @steps
 * (@data theirs): the recurrent product and the cells of @op, or with
 * @w->rt_h the reset gate's two products and the two halves of the GRU's
 * cell. Stops at the first part that fails. */
gboolean cbi_recurrent_walk (const CbiRecurrent * r,
    const CbiRecurrentWalk * w, gint d, CbiKCellOp op,
    const CbiRecurrentSteps * steps, gpointer data, GError ** error);

G_END_DECLS
