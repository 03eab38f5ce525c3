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

#define CBI_MAX_DIMS 4
#define CBI_MAX_NODE_INPUTS 8

/* Element-wise ops carry their parameters in CbiNode.alpha and .beta:
 * RELU (alpha: the negative slope, 0 for Relu, as LeakyRelu), CLIP (alpha
 * min, beta max), ELU (alpha), HARD_SIGMOID (max (0, min (1, alpha x +
 * beta))). The binary ops ADD, SUB, MUL and DIV take an activation first
 * and, second, an activation of the same shape or a constant that
 * broadcasts per channel or as a scalar (shape [1, C or 1, 1, 1]). */
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
} CbiOpType;

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
} CbiTensorInfo;

typedef struct
{
  gint64 strides[2];
  gint64 dilations[2];
  gint64 pads[4];               /* top, left, bottom, right (ONNX order) */
  gint64 group;
  gint64 kernel[2];             /* pooling only: conv kernels are weights */
  gboolean count_include_pad;   /* average pooling */
  gint64 output_padding[2];     /* ConvTranspose */
} CbiConvAttrs;

typedef struct
{
  CbiOpType op;
  gchar *name;
  guint n_inputs;
  gint inputs[CBI_MAX_NODE_INPUTS];     /* tensor indices, -1 = absent */
  gint output;
  CbiConvAttrs conv;
  gfloat alpha;                 /* RESIZE: the height scale; PAD: the value;
                                 * INSTANCE_NORM: epsilon */
  gfloat beta;                  /* RESIZE: the width scale */
  gint mode;                    /* RESIZE: a CbiResizeMode; PAD: a CbiPadFill */
} CbiNode;

typedef struct
{
  GArray *tensors;              /* CbiTensorInfo */
  GArray *nodes;                /* CbiNode */
  gint input;
  gint output;
} CbiGraph;

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
const gchar *cbi_op_type_name (CbiOpType op);
/* Whether @op maps each value on its own (and so fuses into a producer). */
gboolean cbi_op_is_eltwise (CbiOpType op);
gboolean cbi_op_is_binary (CbiOpType op);

/* Computes the NCHW shape of every activation for a batch of @batch frames
 * of @height x @width; @shapes (caller-allocated, one gint64[4] per tensor)
 * receives them. Fails with a message naming the node when a shape does not
 * fit (kernel larger than the padded input, channel mismatch). */
gboolean cbi_graph_infer_shapes (const CbiGraph * graph, gint64 batch,
    gint64 height, gint64 width, gint64 (*shapes)[4], GError ** error);

/* Number of nodes reading tensor @index. */
guint cbi_graph_count_consumers (const CbiGraph * graph, gint index);

/* Returns: (transfer full): the embedded default model, a pencil-sketch
 * filter: RGB in 0..1 to RGB in 0..1, any frame size. */
CbiGraph *cbi_default_model_new (void);

G_END_DECLS
