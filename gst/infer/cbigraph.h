/* cudabatchinfer: model graph (the engine's IR)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The form every model takes inside the engine, whichever file it came
 * from: named float32 tensors (constants carry their data) and nodes in
 * topological order, with ONNX operator semantics. A dimension of -1 is
 * symbolic: the batch dimension becomes N, spatial ones come from the caps.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* DepthToSpace is a 6-D transposition; image ops take 4-D (NCHW) */
#define CBI_MAX_DIMS 6
#define CBI_MAX_NODE_INPUTS 8
#define CBI_MAX_OUTPUTS 8

typedef struct _CbiGraph CbiGraph;

/* Element-wise ops carry their parameters in CbiNode.alpha and .beta:
 * RELU (alpha: the negative slope, 0 for Relu, as LeakyRelu), CLIP (alpha
 * min, beta max), ELU (alpha), HARD_SIGMOID (max (0, min (1, alpha x +
 * beta))), POW (alpha: the constant exponent). The binary ops ADD, SUB,
 * MUL, DIV, MIN, MAX and POW_BINARY (Pow of an exponent that is not one
 * constant value) take an activation first
 * and, second, an activation of the same shape or a constant that
 * broadcasts as ONNX does (numpy rules, aligned from the right) to the
 * first's shape. */
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
} CbiOpType;

/* the last op: the op table has a row for each up to it */
#define CBI_OP_LAST CBI_OP_LINEAR

/* Gather on an activation: at most this many indices (a CUDA kernel
 * takes them as a parameter) */
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
} CbiCopyView;

/**
 * CbiShape:
 * @n_dims: the rank
 * @dims: the dimensions, outermost first
 *
 * The shape of one tensor for one planned input shape.
 */
typedef struct
{
  gint n_dims;
  gint64 dims[CBI_MAX_DIMS];
} CbiShape;

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
 * @op: a CbiKEltwise (kernels/cbimath.h)
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
                                 * SQUEEZE: 1 for no axes (every 1 goes) */
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
                                 * given) */
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
 *   its shape into @shape; FALSE when it has more than @max or none was
 *   computed
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
  gint outputs[CBI_MAX_OUTPUTS];
  guint n_outputs;
  CbiShapeEval *shape_eval;     /* (nullable) owned */
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
 * @eltwise: for an element-wise op, the CbiKEltwise (kernels/cbimath.h)
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

/* Adds an int64 constant (a shape value) of @n_dims, @dims; @ints
 * (transfer full) holds its values. Returns the tensor's index. */
gint cbi_graph_add_ints (CbiGraph * graph, const gchar * name, gint n_dims,
    const gint64 * dims, gint64 * ints);

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
 * Unsqueeze as Reshapes; @shapes as cbi_graph_infer_shapes() fills it.
 * The result shares @graph's tensors (their data too): free it with
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

/* The CbiKReduce (kernels/cbimath.h) reduction node @n computes. */
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

/* Gemm node @n as the backends run it, Y = A W + bias. W, @k x @cols
 * into @weights (caller-allocated): alpha B, transposed when transB says
 * so. */
void cbi_gemm_weights (const CbiGraph * graph, const CbiNode * n, gint64 k,
    gint64 cols, gfloat * weights);
/* Whether Gemm node @n has a bias: a C and a non-zero beta. */
gboolean cbi_gemm_has_bias (const CbiNode * n);
/* The bias, @rows x @cols into @bias: beta C broadcast to the output. */
void cbi_gemm_bias (const CbiGraph * graph, const CbiNode * n,
    const CbiShape * shapes, gint64 rows, gint64 cols, gfloat * bias);

/* Whether @t is a graph output. */
gboolean cbi_graph_is_output (const CbiGraph * graph, gint t);

gint64 cbi_shape_count (const CbiShape * shape);
gboolean cbi_shape_equal (const CbiShape * a, const CbiShape * b);
/* "2x3x4": for messages; free with g_free() */
gchar *cbi_shape_to_string (const CbiShape * shape);

/* Rewrites ConvTranspose node @index, when it has the usual upsampling
 * form (one group, no dilation, stride s on both axes, an output s times
 * the input), as a convolution into s x s x Cout phase channels and a
 * DepthToSpace (CRD) right after it (cbisubpixel.c). Returns whether it
 * did. */
gboolean cbi_graph_lower_conv_transpose (CbiGraph * graph, guint index);

/* Moves every Relu or Clip that right follows a DepthToSpace, Transpose
 * or Reshape (its only reader) before it, where it can fuse into the
 * convolution that feeds them (cbisubpixel.c). */
void cbi_graph_sink_eltwise (CbiGraph * graph);

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

/* Replaces every LayerNorm written as its formula (ReduceMean over the
 * last axis, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul by a
 * constant scale, and an Add of a constant shift or none), nodes in that
 * order whose intermediate results nothing else reads, by one
 * LayerNormalization over the last axis (cbifuse.c). */
void cbi_graph_fuse_layer_norm (CbiGraph * graph);

/* Rewrites every HardSwish written as its formula (Add 3, Clip 0..6, Mul
 * by the input, Div by 6 or Mul by 1/6, nothing else reading between
 * them) into one HardSwish node (cbifuse.c). */
void cbi_graph_fuse_hard_swish (CbiGraph * graph);

/* Rewrites every Mul or Add of an activation and a constant of one value
 * into one CBI_OP_LINEAR node (alpha x + beta), merging runs of them
 * whose intermediate results nothing else reads (cbifuse.c). */
void cbi_graph_fuse_affine (CbiGraph * graph);

/* Folds every Add of a constant of one value per channel (C x 1 x 1 or
 * 1 x C x 1 x 1) right after a Conv, whose output nothing else reads, into
 * the Conv's bias (a new constant: the old ones may have other readers)
 * (cbifuse.c). */
void cbi_graph_fold_conv_bias (CbiGraph * graph);

/* Removes every Identity node whose output is no graph output and is read
 * by no shape computation: its readers read its input (cbifuse.c). */
void cbi_graph_drop_identities (CbiGraph * graph);

/* Merges every run of element-wise nodes, each reading the one before,
 * whose intermediate results nothing else reads, into its first node,
 * the others as its @then (up to CBI_MAX_ELTWISE_STEPS in all): one pass
 * over the activation, and one epilogue of the producer before it
 * (cbifuse.c). */
void cbi_graph_fuse_eltwise_runs (CbiGraph * graph);

/* Number of nodes reading tensor @index. */
guint cbi_graph_count_consumers (const CbiGraph * graph, gint index);

/* Returns: (transfer full): the embedded default model, a pencil-sketch
 * filter: RGB in 0..1 to RGB in 0..1, any frame size. */
CbiGraph *cbi_default_model_new (void);

G_END_DECLS
