/* cudabatchinfer: graph rewrites the importer runs once a model is read:
 * lowerings (graph/subpixel.c) and fusions (graph/fuse.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"

G_BEGIN_DECLS

/* Rewrites ConvTranspose node @index, when it has the usual upsampling
 * form (one group, no dilation, stride s on both axes, an output s times
 * the input), as a convolution into s x s x Cout phase channels and a
 * DepthToSpace (CRD) right after it (subpixel.c). Returns whether it
 * did. */
gboolean cbi_graph_lower_conv_transpose (CbiGraph * graph, guint index);

/* Moves every Relu or Clip that right follows a DepthToSpace, Transpose
 * or Reshape (its only reader) before it, where it can fuse into the
 * convolution that feeds them (subpixel.c). */
void cbi_graph_sink_eltwise (CbiGraph * graph);

/* Replaces every LayerNorm written as its formula (ReduceMean over the
 * last axis, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul by a
 * constant scale, and an Add of a constant shift or none), nodes in that
 * order whose intermediate results nothing else reads, by one
 * LayerNormalization over the last axis (fuse.c). */
void cbi_graph_fuse_layer_norm (CbiGraph * graph);

/* Rewrites every HardSwish written as its formula (Add 3, Clip 0..6, Mul
 * by the input, Div by 6 or Mul by 1/6, nothing else reading between
 * them) into one HardSwish node (fuse.c). */
void cbi_graph_fuse_hard_swish (CbiGraph * graph);

/* Rewrites every exact GELU written as its formula, x * 0.5 * (1 + erf
 * (x / sqrt 2)) (the division a Div by sqrt 2 or a Mul by its inverse,
 * the half taken first or last, products either way round, nothing else
 * reading what lies between), as one Gelu node (gelu.c). */
void cbi_graph_fuse_gelu (CbiGraph * graph);

/* Rewrites every Mul of an activation x by Sigmoid (x), the Sigmoid read
 * nowhere else (SiLU as exporters write it), as one Swish node (fuse.c). */
void cbi_graph_fuse_swish (CbiGraph * graph);

/* Rewrites every Mul, Add or Sub of an activation and a constant of one value
 * into one CBI_OP_LINEAR node (alpha x + beta), merging runs of them
 * whose intermediate results nothing else reads; with @shapes (nullable:
 * a plan's, one per tensor), only where the output has the activation's
 * shape (a constant of more dimensions would broadcast it) (fuse.c). */
void cbi_graph_fuse_affine (CbiGraph * graph, const CbiShape * shapes);

/* Where one operand of a MatMul of two activations is a scale (alpha x)
 * that only it reads (an attention's query or key times 1 / sqrt (d)),
 * moves the scale after the product: it scales the product's output,
 * the product's epilogue on every backend, in the precision of its sums
 * (a bfloat16 product would read the scaled operand rounded). The scaled
 * operand's tensor then holds the unscaled product: @shapes (the plan's,
 * one per tensor) gives it the product's shape; the scales of both
 * operands become one. For a specialised graph (cbi_graph_specialise ()),
 * after cbi_graph_fuse_affine () (fuse.c). */
void cbi_graph_scale_products (CbiGraph * graph, CbiShape * shapes);

/* Rewrites every x + x * s (each either way round, the product read
 * nowhere else; s an activation, as a squeeze-and-excitation's scale in
 * PP-OCRv4's residual SE layers) as x * (1 + s): one pass over x instead
 * of two, 1 + s a Linear node over s's values (fuse.c). */
void cbi_graph_fuse_residual_scale (CbiGraph * graph);

/* Folds every Add of a constant of one value per channel (C x 1 x 1 or
 * 1 x C x 1 x 1) right after a Conv or ConvTranspose, whose output nothing
 * else reads, into its bias, and every Mul by such a constant or by one
 * value into its weights and bias (new constants: the old ones may have
 * other readers), a Mul then an Add both; also through a DepthToSpace
 * right after the convolution (a lowered ConvTranspose, a pixel shuffle),
 * each channel's value then going to the s x s channels it gathers
 * (fuse.c). */
void cbi_graph_fold_conv_bias (CbiGraph * graph);

/* Merges every Transpose that reads a Transpose, whose output nothing
 * else reads, with it: one Transpose of the two permutations composed, or
 * an Identity where they cancel (a channels-last input transposed back at
 * once) (fuse.c). */
void cbi_graph_fuse_transposes (CbiGraph * graph);

/* Removes every Identity node whose output is no graph output and is read
 * by no shape computation: its readers read its input (fuse.c). */
void cbi_graph_drop_identities (CbiGraph * graph);

/* Merges every run of element-wise nodes, each reading the one before,
 * whose intermediate results nothing else reads, into its first node,
 * the others as its @then (up to CBI_MAX_ELTWISE_STEPS in all): one pass
 * over the activation, and one epilogue of the producer before it
 * (fuse.c). */
void cbi_graph_fuse_eltwise_runs (CbiGraph * graph);

/* Moves every pooling that alone reads a channel Concat before it, one
 * per input, and rewrites every convolution of one group (whose output
 * is no wider than its input, and of 8 channels or more) that reads a
 * channel Concat as a sum of convolutions, one per input of the Concat,
 * where convolutions alone read it: the Concat's copy goes (concat.c). */
void cbi_graph_split_concats (CbiGraph * graph);
/* The channels (axis 1) of 4-D activation @t, as the weights and ops
 * before it fix them whatever the frame size (a convolution's filters,
 * the ops that keep them, parts and Concats of them), or -1 where the
 * graph does not (concat.c). */
gint64 cbi_graph_static_channels (const CbiGraph * graph, gint t);

G_END_DECLS
