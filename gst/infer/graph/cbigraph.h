/* cudabatchinfer: model graph (the engine's IR)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The form every model takes inside the engine, whichever file it came
 * from: named float32 tensors (constants carry their data) and nodes in
 * topological order, with ONNX operator semantics. A dimension of -1 is
 * symbolic: the batch dimension becomes N, spatial ones come from the caps.
 */
#pragma once

#include "cbitypes.h"

G_BEGIN_DECLS

/* (CBI_MAX_DIMS, CBI_MAX_OUTPUTS, CbiShape and the CbiGraph type are the
 * engine's public types: cbitypes.h) */
#define CBI_MAX_NODE_INPUTS 8

/* Element-wise ops carry their parameters in CbiNode.alpha and .beta:
 * RELU (alpha: the negative slope, 0 for Relu, as LeakyRelu), CLIP (alpha
 * min, beta max), ELU (alpha), HARD_SIGMOID (max (0, min (1, alpha x +
 * beta))), POW (alpha: the constant exponent). The binary ops ADD, SUB,
 * MUL, DIV, MIN, MAX and POW_BINARY (Pow of an exponent that is not one
 * constant value) take two operands, activations or constants (one an
 * activation), which broadcast together as numpy does (aligned from the
 * right, the output of the shape they broadcast to). */
typedef enum
{
  CBI_OP_CONV,
  CBI_OP_RELU,
  CBI_OP_SIGMOID,
  CBI_OP_TANH,
  CBI_OP_CLIP,
  CBI_OP_ELU,
  CBI_OP_HARD_SIGMOID,
  CBI_OP_HARD_SWISH,
  CBI_OP_IDENTITY,
  CBI_OP_ADD,
  CBI_OP_SUB,
  CBI_OP_MUL,
  CBI_OP_DIV,
  CBI_OP_MAX_POOL,
  CBI_OP_AVERAGE_POOL,
  CBI_OP_RESIZE,
  CBI_OP_CONCAT,
  CBI_OP_CONV_TRANSPOSE,
  CBI_OP_PAD,
  CBI_OP_INSTANCE_NORM,
  CBI_OP_DEPTH_TO_SPACE,
  CBI_OP_RESHAPE,
  CBI_OP_TRANSPOSE,
  CBI_OP_GEMM,
  CBI_OP_MATMUL,
  CBI_OP_SOFTMAX,
  CBI_OP_GLOBAL_AVERAGE_POOL,
  CBI_OP_PRELU,
  /* plan-time shape computation and the layout ops it feeds */
  CBI_OP_SHAPE_VALUE,
  CBI_OP_SLICE,
  CBI_OP_GATHER,
  CBI_OP_EXPAND,
  CBI_OP_SQUEEZE,
  CBI_OP_UNSQUEEZE,
  /* ops on activations, issue 10 */
  CBI_OP_ERF,
  CBI_OP_GELU,
  CBI_OP_GELU_TANH,
  CBI_OP_SQRT,
  CBI_OP_EXP,
  CBI_OP_LOG,
  CBI_OP_NEG,
  CBI_OP_ABS,
  CBI_OP_RECIPROCAL,
  CBI_OP_POW,
  CBI_OP_MIN,
  CBI_OP_MAX,
  CBI_OP_REDUCE_MEAN,
  CBI_OP_REDUCE_SUM,
  CBI_OP_REDUCE_MAX,
  CBI_OP_LAYER_NORM,
  CBI_OP_ARGMAX,
  CBI_OP_SPLIT,
  CBI_OP_WHERE,
  CBI_OP_POW_BINARY,
  /* alpha x + beta, from products and sums by scalar constants
   * (cbi_graph_fuse_affine ()) */
  CBI_OP_LINEAR,
  /* recurrent layers over the first axis of a [T, batch, input] input
   * (cbi_node_recurrent ()) */
  CBI_OP_LSTM,
  CBI_OP_GRU,
  CBI_OP_RNN,
  /* x sigmoid (alpha x), from x * Sigmoid (x) (cbi_graph_fuse_swish ()) */
  CBI_OP_SWISH,
  /* an output of a model that an inference server runs (the remote
   * backend, remote/graph.c): its shape in @ints, -1 where open */
  CBI_OP_REMOTE,
} CbiOpType;

/* the last op: the op table has a row for each up to it */
#define CBI_OP_LAST CBI_OP_REMOTE

/* Gather on an activation: this many indices a view holds itself (the
 * CUDA kernel takes them as a parameter); more go to its long_index */
#define CBI_MAX_GATHER 64

/**
 * CbiDType:
 * @CBI_DTYPE_FLOAT: float32: activations and weights, what backends run
 * @CBI_DTYPE_INT64: a shape value: an int64 constant (Slice's bounds,
 *   Gather's indices, a Reshape's shape), or the output of a
 *   CBI_OP_SHAPE_VALUE node, computed at plan time from the planned
 *   shapes (int64 in the subgraphs exporters write, though a Cast or
 *   Equal among them may make it float32 or bool while it is computed)
 *
 * The two kinds of tensors a graph keeps apart: backends see only float
 * ones (cbi_graph_specialise()).
 */
typedef enum
{
  CBI_DTYPE_FLOAT,
  CBI_DTYPE_INT64,
} CbiDType;

/**
 * CbiCopyView:
 * @n_dims: the rank the output is walked with
 * @dims: its dimensions
 * @strides: input elements per step along each (0 repeats, as Expand)
 * @offset: the input element of the first output element
 * @axis: the dimension read through @index (Gather of a list), else -1
 * @n_index: how many indices @index has
 * @index: input positions along @axis, for each step along it
 * @long_index: (nullable): the positions instead, where there are more
 *   than %CBI_MAX_GATHER (indices computed at plan time from a shape), owned
 *   by the specialised graph the view belongs to
 *
 * Slice, Gather and Expand as one strided read of a row-major input into
 * a row-major output, worked out at plan time for the planned shapes.
 */
typedef struct
{
  gint n_dims;
  gint64 dims[CBI_MAX_DIMS];
  gint64 strides[CBI_MAX_DIMS];
  gint64 offset;
  gint axis;
  gint n_index;
  gint64 index[CBI_MAX_GATHER];
  const gint64 *long_index;
} CbiCopyView;


/**
 * CbiPadFill:
 * @CBI_PAD_FILL_CONSTANT: the node's alpha
 * @CBI_PAD_FILL_REFLECT: mirrored at the border, the border not repeated
 * @CBI_PAD_FILL_EDGE: the border value repeated
 */
typedef enum
{
  CBI_PAD_FILL_CONSTANT,
  CBI_PAD_FILL_REFLECT,
  CBI_PAD_FILL_EDGE,
} CbiPadFill;

/**
 * CbiResizeMode:
 * @CBI_RESIZE_NEAREST: nearest neighbour (integer scales)
 * @CBI_RESIZE_LINEAR: bilinear, half-pixel centres
 */
typedef enum
{
  CBI_RESIZE_NEAREST,
  CBI_RESIZE_LINEAR,
} CbiResizeMode;

typedef struct
{
  gchar *name;
  gint n_dims;
  gint64 dims[CBI_MAX_DIMS];
  gfloat *data;                 /* constant data, or NULL for activations */
  CbiDType dtype;
  gint64 *ints;                 /* an int64 constant's data, else NULL */
} CbiTensorInfo;

/**
 * CbiAutoPad:
 * @CBI_AUTO_PAD_NOTSET: the pads as given (VALID is pads of 0)
 * @CBI_AUTO_PAD_SAME_UPPER: an output of ceil (input / stride), the odd
 *   pad at the end
 * @CBI_AUTO_PAD_SAME_LOWER: the same, the odd pad at the beginning
 *
 * ONNX auto_pad: the SAME modes pad by what the input size asks, known
 * only once a plan's shapes are (cbi_node_pads ()).
 */
typedef enum
{
  CBI_AUTO_PAD_NOTSET,
  CBI_AUTO_PAD_SAME_UPPER,
  CBI_AUTO_PAD_SAME_LOWER,
} CbiAutoPad;

typedef struct
{
  gint64 strides[2];
  gint64 dilations[2];
  gint64 pads[4];               /* top, left, bottom, right (ONNX order);
                                 * read them through cbi_node_pads () */
  gint64 group;
  gint64 kernel[2];             /* pooling only: conv kernels are weights */
  gboolean count_include_pad;   /* average pooling */
  gint64 output_padding[2];     /* ConvTranspose */
  CbiAutoPad auto_pad;          /* Conv and pooling */
  gboolean ceil_mode;           /* pooling: the output size rounded up */
} CbiConvAttrs;

/* The element-wise ops one node runs, itself included (CbiNode @then). */
#define CBI_MAX_ELTWISE_STEPS 5

/**
 * CbiEltwiseStep:
 * @op: a CbiKEltwise (math/cbimath.h)
 * @alpha: its first parameter, as a node's @alpha
 * @beta: its second parameter, as a node's @beta
 *
 * One element-wise op of a run merged into one node
 * (cbi_graph_fuse_eltwise_runs()).
 */
typedef struct
{
  gint op;
  gfloat alpha;
  gfloat beta;
} CbiEltwiseStep;

/**
 * CbiDirection:
 * @CBI_DIRECTION_FORWARD: the sequence from its first step
 * @CBI_DIRECTION_REVERSE: from its last
 * @CBI_DIRECTION_BIDIRECTIONAL: both, each with its own weights
 *
 * Which way a recurrent layer (LSTM, GRU, RNN) walks its sequence.
 */
typedef enum
{
  CBI_DIRECTION_FORWARD,
  CBI_DIRECTION_REVERSE,
  CBI_DIRECTION_BIDIRECTIONAL,
} CbiDirection;

typedef struct
{
  CbiOpType op;
  gchar *name;
  guint n_inputs;
  gint inputs[CBI_MAX_NODE_INPUTS];     /* tensor indices, -1 = absent;
                                         * after the float ones, the int64
                                         * ones read at plan time (SLICE:
                                         * starts, ends, axes, steps;
                                         * GATHER: indices; EXPAND,
                                         * RESHAPE: the shape; SQUEEZE,
                                         * UNSQUEEZE: axes; PAD: pads;
                                         * RESIZE: scales, sizes) */
  gint output;
  CbiConvAttrs conv;
  gfloat alpha;                 /* RESIZE: the height scale; PAD: the value;
                                 * INSTANCE_NORM: epsilon */
  gfloat beta;                  /* RESIZE: the width scale */
  gint mode;                    /* RESIZE: a CbiResizeMode; PAD: a CbiPadFill;
                                 * DEPTH_TO_SPACE: 1 for CRD, 0 for DCR;
                                 * SOFTMAX: 1 for the opset < 13 form (the
                                 * input seen as 2-D at @axis);
                                 * SHAPE_VALUE: the evaluator's node;
                                 * SQUEEZE: 1 for no axes (every 1 goes);
                                 * LSTM, GRU, RNN: a CbiDirection */
  gint axis;                    /* CONCAT, SOFTMAX, GATHER (normalised to
                                 * >= 0 at shape inference, so may be
                                 * negative here) */
  gint n_ints;
  gint64 ints[CBI_MAX_DIMS];    /* RESHAPE: the target shape (ONNX rules: 0
                                 * copies, -1 infers); TRANSPOSE: the
                                 * permutation; DEPTH_TO_SPACE: the block
                                 * size; GEMM: transA, transB (alpha and beta
                                 * in @alpha and @beta); SQUEEZE,
                                 * UNSQUEEZE: constant axes (mode 1: none
                                 * given); LSTM, GRU, RNN: hidden_size,
                                 * linear_before_reset; REMOTE: the
                                 * output's shape (-1: open) */
  CbiCopyView view;             /* SLICE, GATHER, EXPAND: set at plan time
                                 * (cbi_graph_specialise()), with the
                                 * output's shape in @ints */
  guint n_then;                 /* element-wise: the element-wise ops that
                                 * follow it, in order, on its output
                                 * (cbi_graph_fuse_eltwise_runs()) */
  CbiEltwiseStep then[CBI_MAX_ELTWISE_STEPS - 1];
} CbiNode;

typedef struct _CbiShapeEval CbiShapeEval;
typedef struct _CbiShapeRun CbiShapeRun;

/**
 * CbiShapeEval:
 * @begin: starts computing the shape values of @graph for one input
 *   shape; returns (transfer full) the run
 * @eval: computes CBI_OP_SHAPE_VALUE node @n, every node before it done;
 *   @shapes holds the shapes planned so far (Shape reads its input's)
 * @read: tensor @t's values, which @eval computed: up to @max of them,
 *   as integers into @ints and as doubles into @floats (room for @max),
 *   its shape into @shape (whenever it was computed, so a caller can ask
 *   for its size with @max 0); FALSE when it has more than @max, is
 *   bool, or none was computed
 * @end: frees a run
 * @free: frees the evaluator
 * @n_evals: how many nodes @eval computed so far, all runs together
 *   (planning computes them once per input shape, never per batch)
 *
 * What computes a graph's CBI_OP_SHAPE_VALUE nodes (the importer's,
 * which knows the ONNX ops): the graph owns it.
 */
struct _CbiShapeEval
{
  CbiShapeRun *(*begin) (CbiShapeEval * self, const CbiGraph * graph);
  gboolean (*eval) (CbiShapeRun * run, const CbiNode * n,
      const CbiShape * shapes, GError ** error);
  gboolean (*read) (CbiShapeRun * run, gint t, gint max, gint64 * ints,
      gdouble * floats, CbiShape * shape);
  void (*end) (CbiShapeRun * run);
  void (*free) (CbiShapeEval * self);
  guint n_evals;
};

struct _CbiGraph
{
  GArray *tensors;              /* CbiTensorInfo */
  GArray *nodes;                /* CbiNode */
  gint input;
  gboolean input_channels_last; /* the file's input is N x H x W x C: @input
                                 * is its channels-first proxy, which a
                                 * Transpose turns into the file's tensor */
  gint outputs[CBI_MAX_OUTPUTS];
  guint n_outputs;
  CbiShapeEval *shape_eval;     /* (nullable) owned */
  GPtrArray *plan_values;       /* (nullable) a specialised graph's: the
                                 * data of the float values its shape
                                 * computations made, owned */
};

/* Returns: (transfer full): an empty graph; free with cbi_graph_free(). */
CbiGraph *cbi_graph_new (void);
void cbi_graph_free (CbiGraph * graph);

/* Adds a tensor; @data (transfer full, nullable) is g_malloc'ed constant
 * data of the tensor's element count. Returns the tensor's index. */
gint cbi_graph_add_tensor (CbiGraph * graph, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data);
/* Adds a node; returns its index. */
gint cbi_graph_add_node (CbiGraph * graph, CbiOpType op, const gchar * name,
    guint n_inputs, const gint * inputs, gint output,
    const CbiConvAttrs * conv);

CbiTensorInfo *cbi_graph_tensor (const CbiGraph * graph, gint index);
CbiNode *cbi_graph_node (const CbiGraph * graph, guint index);
/* Adds an int64 constant (a shape value) of @n_dims, @dims; @ints
 * (transfer full) holds its values. Returns the tensor's index. */
gint cbi_graph_add_ints (CbiGraph * graph, const gchar * name, gint n_dims,
    const gint64 * dims, gint64 * ints);

/* Whether @t is a graph output. */
gboolean cbi_graph_is_output (const CbiGraph * graph, gint t);

gboolean cbi_shape_equal (const CbiShape * a, const CbiShape * b);
/* The shape @a and @b broadcast to together, as numpy (and ONNX's
 * multidirectional broadcasting) align them from the right, into @out;
 * FALSE when two dimensions differ and neither is 1. */
gboolean cbi_shape_broadcast (const CbiShape * a, const CbiShape * b,
    CbiShape * out);
/* "2x3x4": for messages; free with g_free() */
gchar *cbi_shape_to_string (const CbiShape * shape);

/* The index of the node that writes tensor @t, or -1 (a constant, the
 * input, or @t < 0). */
gint cbi_graph_producer (const CbiGraph * graph, gint t);
/* Number of nodes reading tensor @index. */
guint cbi_graph_count_consumers (const CbiGraph * graph, gint index);

G_END_DECLS
