/* cudabatchinfer: the one place in the CPU backend that knows which
 * oneDNN C API it is built against
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * oneDNN 2.x (Debian 12 has 2.6) describes a memory with a struct its
 * caller owns and a primitive with an op descriptor handed to
 * dnnl_primitive_desc_create(); 3.x (Debian 13 has 3.7) with an opaque
 * memory desc that must be destroyed and one constructor per primitive.
 * The backend writes each desc and primitive once, through this header,
 * and builds against either (the version is oneDNN's own
 * DNNL_VERSION_MAJOR):
 *
 * - a #CbiMd is a read-only handle of a memory desc, which both APIs'
 *   calls take as it is (dnnl_memory_create(), dnnl_memory_desc_equal(),
 *   dnnl_memory_desc_get_size(), the reorder's constructor); the descs the
 *   backend makes belong to a #CbiMdArena and go with it; one a primitive
 *   desc or a memory returns is theirs (borrowed);
 * - a #CbiDnnlOp says which primitive to make and with what;
 *   cbi_dnnl_op_create() makes its primitive desc.
 */
#pragma once

#include <dnnl.h>
#include <glib.h>

G_BEGIN_DECLS
#if DNNL_VERSION_MAJOR >= 3
typedef const_dnnl_memory_desc_t CbiMd;
#else
typedef const dnnl_memory_desc_t *CbiMd;
#endif

/* The owner of the descs made during one planning. */
typedef struct _CbiMdArena CbiMdArena;

/* Returns: (transfer full): an empty arena */
CbiMdArena *cbi_md_arena_new (void);
/* Destroys @arena (nullable) and every desc made in it. */
void cbi_md_arena_free (CbiMdArena * arena);

/* Each makes a desc in @arena and sets @md (transfer none: @arena's) to
 * it; float32, the data type of every activation but the bfloat16 ones
 * between convolutions (cbi_md_tag_typed()). */
dnnl_status_t cbi_md_tag (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_format_tag_t tag);
dnnl_status_t cbi_md_tag_typed (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_data_type_t type, dnnl_format_tag_t tag);
dnnl_status_t cbi_md_strides (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, const dnnl_dims_t strides);
dnnl_status_t cbi_md_strides_typed (CbiMdArena * arena, CbiMd * md,
    gint n_dims, const dnnl_dims_t dims, dnnl_data_type_t type,
    const dnnl_dims_t strides);
/* The part of @parent of @dims at @offsets. */
dnnl_status_t cbi_md_submemory (CbiMdArena * arena, CbiMd * md, CbiMd parent,
    const dnnl_dims_t dims, const dnnl_dims_t offsets);

/* The number of dimensions and the dimensions (transfer none: @md's) of
 * @md. */
gint cbi_md_n_dims (CbiMd md);
const dnnl_dim_t *cbi_md_dims (CbiMd md);
/* The data type of @md's values. */
dnnl_data_type_t cbi_md_data_type (CbiMd md);

/* Whether @md is a dense-or-strided plain layout (no blocks, padding or
 * offset): @strides (nullable) then receives its strides. */
gboolean cbi_md_plain_strides (CbiMd md, dnnl_dims_t strides);

/* Whether @a and @b put every element at the same place: the same
 * dimensions, data type and size, and layouts that differ only where it
 * moves nothing (a block that takes a dimension whole, the stride of a
 * dimension of 1), as channels last and blocks of 16 channels do for 16
 * channels. A primitive that reads one can read the other's data. */
gboolean cbi_md_same_places (CbiMd a, CbiMd b);

/* Appends the sum post-op (the destination's values before the
 * primitive added to its result) to @ops. */
dnnl_status_t cbi_dnnl_append_sum (dnnl_post_ops_t ops);
/* Appends the element-wise post-op @alg (@alpha, @beta) to @ops. */
dnnl_status_t cbi_dnnl_append_eltwise (dnnl_post_ops_t ops,
    dnnl_alg_kind_t alg, gfloat alpha, gfloat beta);

typedef enum
{
  CBI_DNNL_CONVOLUTION,
  CBI_DNNL_DECONVOLUTION,
  CBI_DNNL_ELTWISE,
  CBI_DNNL_BINARY,
  CBI_DNNL_PRELU,
  CBI_DNNL_POOLING,
  CBI_DNNL_RESAMPLING,
  CBI_DNNL_SOFTMAX,
  CBI_DNNL_REDUCTION,
  CBI_DNNL_LAYER_NORM,
  CBI_DNNL_MATMUL,
} CbiDnnlKind;

/* A forward-inference primitive to make: @kind's fields, the others
 * unused. Every desc is borrowed for the call.
 * - CONVOLUTION, DECONVOLUTION: @alg, @src, @weights, @bias (nullable),
 *   @dst, @strides, @dilation (oneDNN's: 0 for none), @pad_l, @pad_r;
 * - ELTWISE: @alg, @src (the destination has its desc), @alpha, @beta;
 * - BINARY: @alg, @src, @src1, @dst;
 * - PRELU: @src (and destination), @weights;
 * - POOLING: @alg, @src, @dst, @strides, @kernel, @dilation, @pad_l,
 *   @pad_r;
 * - RESAMPLING: @alg, @src, @dst, @factors;
 * - SOFTMAX: @alg, @src, @dst, @axis;
 * - REDUCTION: @alg, @src, @dst, @alpha (p), @beta (eps);
 * - LAYER_NORM: @src (and destination), @alpha (epsilon), @flags;
 * - MATMUL: @src, @weights, @bias (nullable), @dst. */
typedef struct
{
  CbiDnnlKind kind;
  dnnl_alg_kind_t alg;
  CbiMd src, src1, weights, bias, dst;
  const dnnl_dim_t *strides, *kernel, *dilation, *pad_l, *pad_r;
  const gfloat *factors;
  gfloat alpha, beta;
  gint axis;
  guint flags;
} CbiDnnlOp;

/* Makes @op's primitive desc (transfer full) with @attr (nullable) on
 * @engine. */
dnnl_status_t cbi_dnnl_op_create (dnnl_primitive_desc_t * pd,
    const CbiDnnlOp * op, const_dnnl_primitive_attr_t attr,
    dnnl_engine_t engine);
/* Makes the primitive desc (transfer full) of the concatenation of the
 * @n descs @srcs along @axis into @dst. */
dnnl_status_t cbi_dnnl_concat_create (dnnl_primitive_desc_t * pd,
    CbiMd dst, gint n, gint axis, const CbiMd * srcs,
    const_dnnl_primitive_attr_t attr, dnnl_engine_t engine);

G_END_DECLS
