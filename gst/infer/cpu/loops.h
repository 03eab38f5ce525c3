/* cudabatchinfer: the CPU backend's own loops, for what oneDNN 2.6 has no
 * primitive for or runs slowly
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"

G_BEGIN_DECLS
/**
 * CbiCpuPlanes:
 * @src: the input, nChw<block>c (@block 1: plain NCHW)
 * @dst: the output
 * @n: frames
 * @c: the real channels
 * @hw: positions of a plane
 * @block: channels interleaved per position
 *
 * Where a loop over the planes of a 4-D tensor reads and writes.
 */
    typedef struct
{
  const gfloat *src;
  gfloat *dst;
  gint64 n, c, hw;
  gint64 block;
} CbiCpuPlanes;

/* Pad of @planes planes of @h x @w positions, each position @pixel
 * floats (plain NCHW: a plane per frame and channel, 1 float; NHWC: a
 * plane per frame, its channels), into planes grown by the pads, as
 * CbiPadFill. */
typedef struct
{
  const gfloat *src;
  gfloat *dst;
  gint64 planes, pixel, h, w;   /* of the source */
  gint64 top, left, bottom, right;
  CbiPadFill fill;
  gfloat value;
} CbiCpuPad;

void cbi_cpu_run_pad (gconstpointer pad);

/* InstanceNormalization over @io (@block 1, 8 or 16; channel blocks are
 * padded with zeros past @c), into the same layout; then, when @relu, a
 * LeakyRelu of slope @slope (0: Relu). Statistics per (frame, channel) in
 * double. */
typedef struct
{
  CbiCpuPlanes io;
  const gfloat *gamma;
  const gfloat *beta;
  gfloat epsilon;
  gboolean relu;
  gfloat slope;
} CbiCpuInstanceNorm;

void cbi_cpu_run_instance_norm (gconstpointer norm);

/* The first @c channels of @src (@block 1 or 8) as plain NCHW in @dst:
 * the real channels of a convolution computed with more. */
typedef struct
{
  CbiCpuPlanes io;
  gint64 src_channels;          /* channels @src has, padding included */
} CbiCpuChannels;

void cbi_cpu_run_channels (gconstpointer channels);

/* The widest output row cbi_cpu_run_upsample () takes: it keeps two
 * rows of it on each thread's stack. */
#define CBI_CPU_UPSAMPLE_MAX_WIDTH 4096

/* Bilinear resize with half-pixel centres of @planes row-major planes of
 * @ih x @iw at @src into planes of @oh x @ow at @dst: each output row
 * blends two input rows (@y0, @y1, by @wy), each first blended along the
 * width (@x0, @x1, by @wx) once into a row of the output's width. The
 * tables follow the struct in its one allocation. */
typedef struct
{
  const gfloat *src;
  gfloat *dst;
  gint64 planes, ih, iw, oh, ow;
  const gint32 *x0, *x1, *y0, *y1;
  const gfloat *wx, *wy;
} CbiCpuUpsample;

/* A new CbiCpuUpsample (free with g_free ()) of @planes planes from @ih x
 * @iw to @oh x @ow, the output's position o taken from the input's (o +
 * 0.5) / @fy - 0.5 (and @fx along the width), clamped to the edges. */
CbiCpuUpsample *cbi_cpu_upsample_new (const gfloat * src, gfloat * dst,
    gint64 planes, gint64 ih, gint64 iw, gint64 oh, gint64 ow, gfloat fy,
    gfloat fx);
void cbi_cpu_run_upsample (gconstpointer upsample);

/* Slice, Gather and Expand: @view read from row-major @src into
 * row-major @dst. */
typedef struct
{
  const gfloat *src;
  gfloat *dst;
  CbiCopyView view;
} CbiCpuCopy;

void cbi_cpu_run_copy (gconstpointer copy);

/* Element-wise op @op (a CbiKEltwise, with @alpha and @beta) of the
 * @count floats of @src into @dst (may be @src), for what oneDNN 2.6's
 * eltwise lacks. A blocked layout's padding goes through it too: only
 * ops that keep 0 at 0 may run on one. */
typedef struct
{
  const gfloat *src;
  gfloat *dst;
  gint64 count;
  gint op;
  gfloat alpha, beta;
} CbiCpuEltwiseLoop;

void cbi_cpu_run_eltwise (gconstpointer eltwise);

/* A reduction (@op, a CbiKReduce) of plain @src seen as @outer x @r x
 * @inner into @dst, @outer x @inner: what oneDNN's reduction lacks
 * (ArgMax). */
typedef struct
{
  const gfloat *src;
  gfloat *dst;
  gint64 outer, r, inner;
  gint op;
} CbiCpuReduce;

void cbi_cpu_run_reduce (gconstpointer reduce);

/* What oneDNN's binary lacks: a binary op (Pow, or a first operand that
 * broadcasts, or a broadcast oneDNN runs in its reference code), @dst =
 * post (@a op @b), or, with @cond, Where, @dst =
 * @cond ? @a : @b; over @rank dims @dims (the output's, row-major), @a
 * (unless @a_full: it has the output's shape), @b and @cond read at their
 * strides (0 along a broadcast dimension); @post the @n_post element-wise
 * steps of the activation fused into it. @run (cbi_cpu_binary_run ()):
 * how many values at the end of the output's rows @a and @b (no @cond)
 * both read in a row as well, which run as one vectorised row; 1 where
 * they do not. */
typedef struct
{
  const gfloat *a, *b, *cond;
  gfloat *dst;
  gint64 count;
  gint rank;
  gint64 dims[CBI_MAX_DIMS];
  gboolean a_full;
  gint64 a_strides[CBI_MAX_DIMS];
  gint64 b_strides[CBI_MAX_DIMS];
  gint64 c_strides[CBI_MAX_DIMS];
  gint op;
  guint n_post;
  CbiEltwiseStep post[CBI_MAX_ELTWISE_STEPS];
  gint64 run;
} CbiCpuBinary;

/* @p's run: the product of the output's last dims along which @a (or
 * @a_full) and @b step as the output does (no @cond). */
gint64 cbi_cpu_binary_run (const CbiCpuBinary * p);

void cbi_cpu_run_binary (gconstpointer binary);

/* Softmax of plain @src seen as @outer x @axis x @inner along the
 * middle, into @dst, as oneDNN's accurate one (max, exp of the
 * difference, sum, divide): for an axis that is not the innermost (a
 * segmenter's classes in NCHW, a detector's box distributions), where
 * oneDNN 2.6 runs its reference code. */
typedef struct
{
  const gfloat *src;
  gfloat *dst;
  gint64 outer, axis, inner;
} CbiCpuSoftmax;

void cbi_cpu_run_softmax (gconstpointer softmax);

/* LayerNormalization of the plain float32 @src seen as @rows x @inner,
 * along the rows, times @gamma plus @beta (nullable), per position of a
 * row, into @dst as bfloat16: for a wide bfloat16 plan whose products
 * read it, where oneDNN 2.6's layer normalization writes the type it
 * reads and a reorder would convert its output in a pass of its own.
 * Mean and variance per row in float32, as oneDNN's. */
typedef struct
{
  const gfloat *src;
  guint16 *dst;
  const gfloat *gamma;
  const gfloat *beta;
  gint64 rows, inner;
  gfloat epsilon;
} CbiCpuLayerNorm;

void cbi_cpu_run_layer_norm_bf16 (gconstpointer norm);

G_END_DECLS
