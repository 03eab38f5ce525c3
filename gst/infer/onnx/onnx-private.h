/* cudabatchinfer: ONNX model import, what its files share
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Calls run one way, from the top: import.c reads the file (model
 * checks, the input, the order of the nodes) and drives the import;
 * ops.c, the op table, translates each node that does not fold into the
 * engine's graph, through nodes.c (convolutions, pooling, Resize, Pad,
 * BatchNormalization), nodes-eltwise.c (the element-wise ops) and
 * nodes-layout.c (the layout, matrix and reduction ops); shape.c keeps
 * the nodes that compute shapes for plan time; fold.c and foldmath.c
 * compute the nodes whose inputs are all constants, once, at load, with
 * values.c; common.c, the leaf, has errors, constants, tensors read from
 * the file, attributes and node inputs. Everything they read is
 * untrusted: every count, size and name is checked before use.
 */
#pragma once

#include "onnx/cbionnx.h"
#include "graph/cbiops.h"
#include "graph/cbipasses.h"
#include "graph/cbishapes.h"
#include "onnx.pb-c.h"

G_BEGIN_DECLS

/* float32 tensors up to 2 GiB, the protobuf limit of a model file */
#define CBI_ONNX_MAX_ELEMENTS (G_GINT64_CONSTANT (1) << 29)

/**
 * CbiOnnxConst:
 * @dtype: an ONNX TensorProto data type: FLOAT, INT64, INT32, INT8, UINT8
 *   or BOOL
 * @n_dims: the rank
 * @dims: the dimensions
 * @count: the element count
 * @data: (nullable): @count values of @dtype, owned; NULL once a float32
 *   constant moved into the graph
 * @index: the graph's tensor index once it moved, else -1
 *
 * A constant of the import: an initializer, a Constant's value or a
 * folded node's output. int64 and float values stay apart: only float32
 * ones become graph tensors, and only when a translated node reads them;
 * the others feed folding and the few attributes-in-disguise translation
 * reads (Reshape's shape, Pad's pads).
 */
typedef struct
{
  gint dtype;
  gint n_dims;
  gint64 dims[CBI_MAX_DIMS];
  gint64 count;
  gpointer data;
  gint index;
} CbiOnnxConst;

typedef struct _CbiOnnxAlias CbiOnnxAlias;

typedef struct
{
  CbiGraph *graph;
  GHashTable *names;            /* tensor name -> index + 1 */
  GHashTable *aliases;          /* name -> CbiOnnxAlias, owned: the values
                                 * of a dynamic quantization
                                 * (nodes-dynquant.c) */
  GHashTable *consts;           /* name -> CbiOnnxConst, owned */
  const gchar *base_dir;
  const Onnx__GraphProto *onnx;
  gint64 opset;
  gint64 folded_bytes;          /* what folding made, against its budget */
  gint64 fold_budget;           /* CBI_ONNX_FOLD_BUDGET loading the model,
                                 * CBI_ONNX_SHAPE_BUDGET planning a shape */
} CbiImporter;

/* *INDENT-OFF* */
/* Sets @error (CBI_ERROR_MODEL) to the printf-formatted message; returns
 * FALSE. The attribute lets -Wformat check every caller. */
gboolean cbi_onnx_fail (GError ** error, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);
/* *INDENT-ON* */

/* @name, or "(unnamed)" for a NULL or empty one: for messages. */
const gchar *cbi_onnx_name (const gchar * name);
/* The graph index of tensor @name, or -1; a float32 constant not yet in
 * the graph is moved there first. */
gint cbi_onnx_lookup (CbiImporter * im, const gchar * name);
/* @view (transfer none: it borrows @info's values): graph tensor @t,
 * @info, as a constant of @n_dims @dims, int64 where @info has ints, else
 * float32 (a constant's, or an activation's shape alone). */
void cbi_onnx_tensor_view (const CbiTensorInfo * info, gint t, gint n_dims,
    const gint64 * dims, CbiOnnxConst * view);
/* Whether @name is a graph tensor or a constant. */
gboolean cbi_onnx_defined (CbiImporter * im, const gchar * name);
/* Constant @name (owned by the importer) while it is not in the graph,
 * else NULL. */
CbiOnnxConst *cbi_onnx_const (CbiImporter * im, const gchar * name);
/* Returns: (transfer full): a name for tensor @what the import makes for
 * node @n (a folded constant), taken by no tensor yet: after the node's
 * first output, since a node's own name may be empty or shared. */
gchar *cbi_onnx_internal_name (CbiImporter * im, const Onnx__NodeProto * n,
    const gchar * what);
/* Keeps @c (transfer full, freed on failure) as constant @name; fails
 * when the name is empty or taken. */
gboolean cbi_onnx_keep_const (CbiImporter * im, const gchar * name,
    CbiOnnxConst * c, GError ** error);
/* Returns: (transfer full): a constant of @count zeroed values (the
 * caller checked @count against its limits). */
CbiOnnxConst *cbi_onnx_const_new (gint dtype, gint n_dims,
    const gint64 * dims, gint64 count);
void cbi_onnx_const_free (CbiOnnxConst * c);
/* Bytes of one value of ONNX type @dtype; 0 for a type not read. */
gsize cbi_onnx_dtype_size (gint dtype);
/* "INT64": for messages */
const gchar *cbi_onnx_dtype_name (gint dtype);
/* Adds tensor @name to the graph, taking @data (transfer full, freed on
 * failure); fails when the name is empty or taken. */
gboolean cbi_onnx_add (CbiImporter * im, const gchar * name, gint n_dims,
    const gint64 * dims, gfloat * data, gint * index, GError ** error);
/* The element count of @dims into @count; fails on a negative dimension
 * or more than CBI_ONNX_MAX_ELEMENTS. */
gboolean cbi_onnx_count (const gchar * name, const gint64 * dims,
    gsize n_dims, gint64 * count, GError ** error);
/* The data of @t, an initializer or a Constant's value, into a new
 * constant *@out (transfer full) of its type: float32, or for constants
 * that fold away int64, int32, int8, uint8, bool. */
gboolean cbi_onnx_read_tensor (CbiImporter * im, const Onnx__TensorProto * t,
    CbiOnnxConst ** out, GError ** error);
/* Keeps tensor @t (an initializer or a Constant's value) as constant
 * @name. */
gboolean cbi_onnx_add_constant (CbiImporter * im, const gchar * name,
    const Onnx__TensorProto * t, GError ** error);

/* Attribute @name of @n (owned by @n), or NULL. */
const Onnx__AttributeProto *cbi_onnx_attr (const Onnx__NodeProto * n,
    const gchar * name);
gint64 cbi_onnx_int (const Onnx__NodeProto * n, const gchar * name,
    gint64 def);
gfloat cbi_onnx_float (const Onnx__NodeProto * n, const gchar * name,
    gfloat def);
/* Returns: (transfer full): the string attribute @attr, or a copy of
 * @def. */
gchar *cbi_onnx_string (const Onnx__NodeProto * n, const gchar * attr,
    const gchar * def);

/* Computes node @n once when every input it has is a constant and its op
 * folds (fold.c): its outputs become constants and @folded is set.
 * A node that does not fold is left, @folded unset, for translation.
 * Fails, naming the node, on bad shapes, types or sizes. */
gboolean cbi_onnx_fold (CbiImporter * im, const Onnx__NodeProto * n,
    gboolean * folded, GError ** error);

/* Folding's shared parts (values.c), for fold.c and foldmath.c. */

/* folded outputs: one at most 2^26 values (256 MiB of float32), all of
 * them together at most 256 MiB, each value counted as 4 bytes at least:
 * a file of a few bytes can ask for no more memory, nor more work (each
 * value folded costs a few operations), than that; a QDQ model of 64
 * million float32 weights still fits */
#define CBI_ONNX_FOLD_MAX_ELEMENTS (G_GINT64_CONSTANT (1) << 26)
#define CBI_ONNX_FOLD_BUDGET (G_GINT64_CONSTANT (256) << 20)
/* what the values computed from the input's size at each plan (a class
 * token expanded to the batch, an anchor grid from a feature map's size)
 * may take together: they are made again for every new size, and a few
 * bytes of a file that expand a constant to millions of values would make
 * each plan seconds long */
#define CBI_ONNX_SHAPE_BUDGET (G_GINT64_CONSTANT (32) << 20)

/* A walk over the index space of @dims, row-major, keeping the offsets
 * (in elements) of up to three inputs read with @strides: a stride of 0
 * repeats a broadcast dimension. */
typedef struct
{
  gint n_dims;
  gint64 dims[CBI_MAX_DIMS];
  gint64 idx[CBI_MAX_DIMS];
  gint64 strides[3][CBI_MAX_DIMS];
  gint64 off[3];
} CbiOnnxWalk;

/* Starts @w over @dims; input @k's strides are left at 0 (set them, or
 * use cbi_onnx_walk_broadcast). */
void cbi_onnx_walk_init (CbiOnnxWalk * w, gint n_dims, const gint64 * dims);
/* Input @k, of shape @c, read broadcast to the walk's dimensions (numpy
 * rules, aligned from the right; the caller checked they agree). */
void cbi_onnx_walk_broadcast (CbiOnnxWalk * w, gint k, const CbiOnnxConst * c);
void cbi_onnx_walk_next (CbiOnnxWalk * w);

/* The numpy broadcast of the shapes of @n_in constants into @dims and
 * @n_dims; fails naming node @n when two dimensions differ and neither is
 * 1. */
gboolean cbi_onnx_fold_broadcast (const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, gint * n_dims, gint64 * dims,
    GError ** error);
/* A new output of node @n, zeroed, after checking its rank, its size and
 * the import's folding budget. */
gboolean cbi_onnx_fold_new (CbiImporter * im, const Onnx__NodeProto * n,
    gint dtype, gint n_dims, const gint64 * dims, CbiOnnxConst ** out,
    GError ** error);

/* Value @i of @c, any type, as a double / as an integer (float32 is
 * refused by the callers where it matters). */
gdouble cbi_onnx_get_f (const CbiOnnxConst * c, gint64 i);
gint64 cbi_onnx_get_i (const CbiOnnxConst * c, gint64 i);
/* Stores @v as value @i of @c, an integer or bool type: wrapped to its
 * width, as C and numpy cast. */
void cbi_onnx_set_i (CbiOnnxConst * c, gint64 i, gint64 v);
gboolean cbi_onnx_is_int (gint dtype);

/* A folding function (the dispatch table of fold.c holds them): @in
 * holds @n_in inputs, NULL for absent optional ones; on success *@out is
 * the new output (transfer full). */
typedef gboolean (*CbiOnnxFoldFunc) (CbiImporter * im,
    const Onnx__NodeProto * n, const CbiOnnxConst * const *in, guint n_in,
    CbiOnnxConst ** out, GError ** error);

/* The folding functions that compute values (foldmath.c). */
gboolean cbi_onnx_fold_arith (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_unary (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_equal (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_where (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_cast (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_range (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_dequantize (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_scatter_nd (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
gboolean cbi_onnx_fold_quantize (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);
/* The folding functions of float32 layers (foldfloat.c): Relu,
 * LeakyRelu, Sigmoid, Tanh, Exp, Log, Abs, Reciprocal, Erf; MatMul. */
gboolean cbi_onnx_fold_activation (CbiImporter * im,
    const Onnx__NodeProto * n, const CbiOnnxConst * const *in, guint n_in,
    CbiOnnxConst ** out, GError ** error);
gboolean cbi_onnx_fold_matmul (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);

/* Whether op @op folds (computes from constants; Constant aside). */
gboolean cbi_onnx_folds (const gchar * op);
/* Computes node @n, a folding op, on the constants @in (NULL for absent
 * inputs) into *@out (transfer full); fails naming the node. */
gboolean cbi_onnx_fold_run (CbiImporter * im, const Onnx__NodeProto * n,
    const CbiOnnxConst * const *in, guint n_in, CbiOnnxConst ** out,
    GError ** error);

/* Plan-time shapes (shape.c). */

/* Whether @n computes a shape value: a Shape, or a folding op reading
 * shape values and constants only. */
/* Where node @n computes the channels of a 4-D activation that the graph
 * fixes whatever the frame size (cbi_graph_static_channels ()): a Shape
 * of its channels' axis alone, or a Gather of index 1 from its whole
 * Shape, keeps its output as that constant (@folded TRUE: the node is
 * done), so that what exporters compute from it (YOLOv8's chunk bounds)
 * folds at load; else @folded FALSE and nothing changed. */
gboolean cbi_onnx_fold_channels (CbiImporter * im, const Onnx__NodeProto * n,
    gboolean * folded, GError ** error);
gboolean cbi_onnx_is_shape_node (CbiImporter * im, const Onnx__NodeProto * n);
/* Adds shape node @n as a CBI_OP_SHAPE_VALUE node, which the graph's
 * evaluator (made on first use, owned by the graph) computes at plan
 * time. */
gboolean cbi_onnx_add_shape_node (CbiImporter * im,
    const Onnx__NodeProto * n, GError ** error);
/* Slice, Gather, Expand, Squeeze or Unsqueeze of an activation. */
gboolean cbi_onnx_add_copy_node (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);
/* Input @i of @n, an int64 (or int32) constant or a shape value, as a
 * graph tensor into *@index (-1 when absent); an int64 constant enters
 * the graph with its values. */
gboolean cbi_onnx_int_tensor (CbiImporter * im, const Onnx__NodeProto * n,
    gsize i, gint * index, GError ** error);

/**
 * CbiOnnxNode:
 * @type: the engine's op
 * @n_inputs: how many of the ONNX node's inputs the graph node reads
 * @alpha: the op's first parameter (CbiNode.alpha)
 * @beta: its second (CbiNode.beta)
 * @mode: CbiNode.mode
 * @axis: CbiNode.axis
 * @conv: window attributes, where @has_conv
 * @has_conv: Conv, ConvTranspose, pooling and Pad keep @conv
 * @computed: plan-time inputs (Pad's pads; Resize's scales and sizes),
 *   -1 where there are none
 *
 * What translation reads of one ONNX node that becomes one graph node.
 */
typedef struct
{
  CbiOpType type;
  guint n_inputs;
  gfloat alpha;
  gfloat beta;
  gint mode;
  gint axis;
  CbiConvAttrs conv;
  gboolean has_conv;
  gint computed[2];
} CbiOnnxNode;

/* Adds the graph nodes of ONNX node @n itself. */
typedef gboolean (*CbiOnnxAddFunc) (CbiImporter * im,
    const Onnx__NodeProto * n, GError ** error);
/* Reads @n's attributes and constant inputs into @node. */
typedef gboolean (*CbiOnnxReadFunc) (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, GError ** error);
/* Checks the graph inputs @inputs (@node->n_inputs, -1 for absent ones)
 * @node will read. */
typedef gboolean (*CbiOnnxCheckFunc) (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, const gint * inputs,
    GError ** error);

/* Translates node @n into the graph by its row of the op table (ops.c),
 * or fails naming the node and what it does not support. */
gboolean cbi_onnx_add_node (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);

/* What node translation's files share (common.c). */

/* Input @i of @n: its tensor index, -1 for an absent optional input. */
gint cbi_onnx_node_input (CbiImporter * im, const Onnx__NodeProto * n,
    gsize i);
/* The int64 constant at input @i of @n (a folded one too), or NULL;
 * owned by the importer. */
const CbiOnnxConst *cbi_onnx_int_input (CbiImporter * im,
    const Onnx__NodeProto * n, gsize i);
/* The float32 constant at input @i of @n: its data (owned by the importer
 * or the graph), @count and @n_dims, or NULL. */
const gfloat *cbi_onnx_floats_input (CbiImporter * im,
    const Onnx__NodeProto * n, gsize i, gint64 * count, gint * n_dims);
/* Clip's (or Pad's value) bound from input @i or attribute @attr, @def
 * when absent. */
gboolean cbi_onnx_clip_bound (CbiImporter * im, const Onnx__NodeProto * n,
    gsize i, const gchar * attr, gfloat def, gfloat * bound, GError ** error);

/* nodes-dynquant.c: when @n is part of a dynamic quantization chain
 * (DynamicQuantizeLinear, MatMulInteger, ConvInteger, their Cast and
 * Muls), translates it as float32 and sets @handled; fails naming the
 * node when it reads such a value otherwise. */
gboolean cbi_onnx_add_dynamic_quant (CbiImporter * im,
    const Onnx__NodeProto * n, gboolean * handled, GError ** error);
void cbi_onnx_alias_free (CbiOnnxAlias * a);

/* The op table's functions: nodes-recurrent.c (LSTM, GRU, RNN) */
gboolean cbi_onnx_add_recurrent (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);

/* The op table's functions: nodes.c (windows, normalisations, Concat,
 * BatchNormalization) */
gboolean cbi_onnx_add_batch_norm (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);
gboolean cbi_onnx_check_conv (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error);
gboolean cbi_onnx_read_min_max (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_pool (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_resize (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_pad (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_epsilon (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_check_instance_norm (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, const gint * inputs,
    GError ** error);
gboolean cbi_onnx_read_layer_norm (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_check_layer_norm (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, const gint * inputs,
    GError ** error);
gboolean cbi_onnx_read_concat (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_check_constants (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, const gint * inputs,
    GError ** error);
gboolean cbi_onnx_check_present (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, const gint * inputs, GError ** error);

/* nodes-eltwise.c: the element-wise ops' parameters, and Where on a
 * constant condition */
gboolean cbi_onnx_read_leaky_relu (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_elu (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_hard_sigmoid (CbiImporter * im,
    const Onnx__NodeProto * n, CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_gelu (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_pow (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_read_clip (CbiImporter * im, const Onnx__NodeProto * n,
    CbiOnnxNode * node, GError ** error);
gboolean cbi_onnx_add_where (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);

/* nodes-layout.c: Split, and what the layout, matrix and reduction ops
 * keep of their attributes */
gboolean cbi_onnx_add_split (CbiImporter * im, const Onnx__NodeProto * n,
    GError ** error);
/* Keeps in @node what the shape-changing, matrix and reduction ops read
 * from @n's attributes and constant inputs. */
gboolean cbi_onnx_layout_op (CbiImporter * im, const Onnx__NodeProto * n,
    CbiNode * node, GError ** error);

G_END_DECLS
