/* cudabatchinfer: the CPU backend's descs and primitive descs, written for
 * oneDNN's 2.x C API and its 3.x one (onednn.h)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cpu/onednn.h"

#include <string.h>

/* Every desc made during a planning: the memories and primitives made
 * from them keep their own copies, so all of them go together when the
 * planning ends. */
struct _CbiMdArena
{
  GPtrArray *descs;
};

/* What cbi_md_plain_strides () and cbi_md_element_strides () read of a
 * blocked layout. */
typedef struct
{
  int n_dims;
  int n_blocks;
  const dnnl_dim_t *dims;
  const dnnl_dim_t *strides;
  const dnnl_dim_t *blocks;
  const dnnl_dim_t *block_dims;
} CbiMdBlocking;

#if DNNL_VERSION_MAJOR >= 3

static void
cbi_md_destroy (gpointer md)
{
  dnnl_memory_desc_destroy (md);
}

/* Takes the desc @made, when @status says it was made, into @arena. */
static dnnl_status_t
cbi_md_take (CbiMdArena * arena, CbiMd * md, dnnl_status_t status,
    dnnl_memory_desc_t made)
{
  if (status != dnnl_success)
    return status;
  g_ptr_array_add (arena->descs, made);
  *md = made;
  return dnnl_success;
}

dnnl_status_t
cbi_md_tag_typed (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_data_type_t type, dnnl_format_tag_t tag)
{
  dnnl_memory_desc_t made = NULL;

  dnnl_status_t status =
      dnnl_memory_desc_create_with_tag (&made, n_dims, dims, type, tag);

  return cbi_md_take (arena, md, status, made);
}

dnnl_status_t
cbi_md_strides_typed (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_data_type_t type, const dnnl_dims_t strides)
{
  dnnl_memory_desc_t made = NULL;

  dnnl_status_t status =
      dnnl_memory_desc_create_with_strides (&made, n_dims, dims, type,
      strides);

  return cbi_md_take (arena, md, status, made);
}

dnnl_status_t
cbi_md_submemory (CbiMdArena * arena, CbiMd * md, CbiMd parent,
    const dnnl_dims_t dims, const dnnl_dims_t offsets)
{
  dnnl_memory_desc_t made = NULL;

  dnnl_status_t status =
      dnnl_memory_desc_create_submemory (&made, parent, dims, offsets);

  return cbi_md_take (arena, md, status, made);
}

/* @md's blocking: its strides and inner blocks (transfer none: @md's),
 * or FALSE for a layout of another kind, or with an offset or padding. */
static gboolean
cbi_md_blocking (CbiMd md, CbiMdBlocking * b)
{
  dnnl_format_kind_t kind = dnnl_format_kind_undef;
  const dnnl_dims_t *dims = NULL, *padded = NULL, *strides = NULL;
  const dnnl_dims_t *blks = NULL, *idxs = NULL;
  dnnl_dim_t offset = -1;
  int n = 0;

  if (dnnl_memory_desc_query (md, dnnl_query_format_kind, &kind)
      != dnnl_success || kind != dnnl_blocked
      || dnnl_memory_desc_query (md, dnnl_query_submemory_offset_s64,
          &offset) != dnnl_success || offset != 0
      || dnnl_memory_desc_query (md, dnnl_query_ndims_s32, &n) != dnnl_success
      || dnnl_memory_desc_query (md, dnnl_query_dims, &dims) != dnnl_success
      || dnnl_memory_desc_query (md, dnnl_query_padded_dims, &padded)
      != dnnl_success
      || memcmp (*dims, *padded, n * sizeof (dnnl_dim_t)) != 0
      || dnnl_memory_desc_query (md, dnnl_query_strides, &strides)
      != dnnl_success
      || dnnl_memory_desc_query (md, dnnl_query_inner_nblks_s32, &b->n_blocks)
      != dnnl_success)
    return FALSE;
  if (b->n_blocks > 0
      && (dnnl_memory_desc_query (md, dnnl_query_inner_blks, &blks)
          != dnnl_success
          || dnnl_memory_desc_query (md, dnnl_query_inner_idxs, &idxs)
          != dnnl_success))
    return FALSE;
  b->n_dims = n;
  b->dims = *dims;
  b->strides = *strides;
  b->blocks = blks ? *blks : NULL;
  b->block_dims = idxs ? *idxs : NULL;
  return TRUE;
}

gint
cbi_md_n_dims (CbiMd md)
{
  int n = 0;

  dnnl_memory_desc_query (md, dnnl_query_ndims_s32, &n);
  return n;
}

const dnnl_dim_t *
cbi_md_dims (CbiMd md)
{
  const dnnl_dims_t *dims = NULL;

  dnnl_memory_desc_query (md, dnnl_query_dims, &dims);
  return *dims;
}

dnnl_data_type_t
cbi_md_data_type (CbiMd md)
{
  dnnl_data_type_t type = dnnl_data_type_undef;

  dnnl_memory_desc_query (md, dnnl_query_data_type, &type);
  return type;
}

dnnl_status_t
cbi_dnnl_append_sum (dnnl_post_ops_t ops)
{
  return dnnl_post_ops_append_sum (ops, 1.0f, 0, dnnl_data_type_undef);
}

dnnl_status_t
cbi_dnnl_append_eltwise (dnnl_post_ops_t ops, dnnl_alg_kind_t alg,
    gfloat alpha, gfloat beta)
{
  return dnnl_post_ops_append_eltwise (ops, alg, alpha, beta);
}

dnnl_status_t
cbi_dnnl_op_create (dnnl_primitive_desc_t * pd, const CbiDnnlOp * op,
    const_dnnl_primitive_attr_t attr, dnnl_engine_t engine)
{
  const dnnl_prop_kind_t prop = dnnl_forward_inference;

  switch (op->kind) {
    case CBI_DNNL_CONVOLUTION:
      return dnnl_convolution_forward_primitive_desc_create (pd, engine, prop,
          op->alg, op->src, op->weights, op->bias, op->dst, op->strides,
          op->dilation, op->pad_l, op->pad_r, attr);
    case CBI_DNNL_DECONVOLUTION:
      return dnnl_deconvolution_forward_primitive_desc_create (pd, engine,
          prop, op->alg, op->src, op->weights, op->bias, op->dst, op->strides,
          op->dilation, op->pad_l, op->pad_r, attr);
    case CBI_DNNL_ELTWISE:
      return dnnl_eltwise_forward_primitive_desc_create (pd, engine, prop,
          op->alg, op->src, op->src, op->alpha, op->beta, attr);
    case CBI_DNNL_BINARY:
      return dnnl_binary_primitive_desc_create (pd, engine, op->alg, op->src,
          op->src1, op->dst, attr);
    case CBI_DNNL_PRELU:
      return dnnl_prelu_forward_primitive_desc_create (pd, engine, prop,
          op->src, op->weights, op->src, attr);
    case CBI_DNNL_POOLING:
      return dnnl_pooling_forward_primitive_desc_create (pd, engine, prop,
          op->alg, op->src, op->dst, op->strides, op->kernel, op->dilation,
          op->pad_l, op->pad_r, attr);
    case CBI_DNNL_RESAMPLING:
      return dnnl_resampling_forward_primitive_desc_create (pd, engine, prop,
          op->alg, op->factors, op->src, op->dst, attr);
    case CBI_DNNL_SOFTMAX:
      return dnnl_softmax_forward_primitive_desc_create (pd, engine, prop,
          op->alg, op->src, op->dst, op->axis, attr);
    case CBI_DNNL_REDUCTION:
      return dnnl_reduction_primitive_desc_create (pd, engine, op->alg,
          op->src, op->dst, op->alpha, op->beta, attr);
    case CBI_DNNL_LAYER_NORM:
      return dnnl_layer_normalization_forward_primitive_desc_create (pd,
          engine, prop, op->src, op->src, NULL, op->alpha, op->flags, attr);
    case CBI_DNNL_MATMUL:
      return dnnl_matmul_primitive_desc_create (pd, engine, op->src,
          op->weights, op->bias, op->dst, attr);
  }
  return dnnl_invalid_arguments;
}

dnnl_status_t
cbi_dnnl_concat_create (dnnl_primitive_desc_t * pd, CbiMd dst, gint n,
    gint axis, const CbiMd * srcs, const_dnnl_primitive_attr_t attr,
    dnnl_engine_t engine)
{
  return dnnl_concat_primitive_desc_create (pd, engine, dst, n, axis, srcs,
      attr);
}

#else /* oneDNN 2.x */

static void
cbi_md_destroy (gpointer md)
{
  g_free (md);
}

/* A new zeroed desc in @arena, for a 2.x init call to fill. */
static dnnl_memory_desc_t *
cbi_md_new (CbiMdArena * arena)
{
  dnnl_memory_desc_t *made = g_new0 (dnnl_memory_desc_t, 1);

  g_ptr_array_add (arena->descs, made);
  return made;
}

dnnl_status_t
cbi_md_tag_typed (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_data_type_t type, dnnl_format_tag_t tag)
{
  dnnl_memory_desc_t *made = cbi_md_new (arena);

  *md = made;
  return dnnl_memory_desc_init_by_tag (made, n_dims, dims, type, tag);
}

dnnl_status_t
cbi_md_strides_typed (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_data_type_t type, const dnnl_dims_t strides)
{
  dnnl_memory_desc_t *made = cbi_md_new (arena);

  *md = made;
  return dnnl_memory_desc_init_by_strides (made, n_dims, dims, type, strides);
}

dnnl_status_t
cbi_md_submemory (CbiMdArena * arena, CbiMd * md, CbiMd parent,
    const dnnl_dims_t dims, const dnnl_dims_t offsets)
{
  dnnl_memory_desc_t *made = cbi_md_new (arena);

  *md = made;
  return dnnl_memory_desc_init_submemory (made, parent, dims, offsets);
}

static gboolean
cbi_md_blocking (CbiMd md, CbiMdBlocking * b)
{
  if (md->format_kind != dnnl_blocked || md->offset0 != 0
      || memcmp (md->dims, md->padded_dims,
          md->ndims * sizeof (dnnl_dim_t)) != 0)
    return FALSE;
  b->n_dims = md->ndims;
  b->dims = md->dims;
  b->strides = md->format_desc.blocking.strides;
  b->n_blocks = md->format_desc.blocking.inner_nblks;
  b->blocks = md->format_desc.blocking.inner_blks;
  b->block_dims = md->format_desc.blocking.inner_idxs;
  return TRUE;
}

gint
cbi_md_n_dims (CbiMd md)
{
  return md->ndims;
}

const dnnl_dim_t *
cbi_md_dims (CbiMd md)
{
  return md->dims;
}

dnnl_data_type_t
cbi_md_data_type (CbiMd md)
{
  return md->data_type;
}

dnnl_status_t
cbi_dnnl_append_sum (dnnl_post_ops_t ops)
{
  return dnnl_post_ops_append_sum (ops, 1.0f);
}

dnnl_status_t
cbi_dnnl_append_eltwise (dnnl_post_ops_t ops, dnnl_alg_kind_t alg,
    gfloat alpha, gfloat beta)
{
  return dnnl_post_ops_append_eltwise (ops, 1.0f, alg, alpha, beta);
}

/* 2.x: an op desc of @op's kind, then its primitive desc */
dnnl_status_t
cbi_dnnl_op_create (dnnl_primitive_desc_t * pd, const CbiDnnlOp * op,
    const_dnnl_primitive_attr_t attr, dnnl_engine_t engine)
{
  const dnnl_prop_kind_t prop = dnnl_forward_inference;
  union
  {
    dnnl_convolution_desc_t conv;
    dnnl_deconvolution_desc_t deconv;
    dnnl_eltwise_desc_t eltwise;
    dnnl_binary_desc_t binary;
    dnnl_prelu_desc_t prelu;
    dnnl_pooling_v2_desc_t pooling;
    dnnl_resampling_desc_t resampling;
    dnnl_softmax_v2_desc_t softmax;
    dnnl_reduction_desc_t reduction;
    dnnl_layer_normalization_desc_t layer_norm;
    dnnl_matmul_desc_t matmul;
  } d;
  dnnl_status_t status = dnnl_invalid_arguments;

  switch (op->kind) {
    case CBI_DNNL_CONVOLUTION:
      status = dnnl_dilated_convolution_forward_desc_init (&d.conv, prop,
          op->alg, op->src, op->weights, op->bias, op->dst, op->strides,
          op->dilation, op->pad_l, op->pad_r);
      break;
    case CBI_DNNL_DECONVOLUTION:
      status = dnnl_dilated_deconvolution_forward_desc_init (&d.deconv, prop,
          op->alg, op->src, op->weights, op->bias, op->dst, op->strides,
          op->dilation, op->pad_l, op->pad_r);
      break;
    case CBI_DNNL_ELTWISE:
      status = dnnl_eltwise_forward_desc_init (&d.eltwise, prop, op->alg,
          op->src, op->alpha, op->beta);
      break;
    case CBI_DNNL_BINARY:
      status = dnnl_binary_desc_init (&d.binary, op->alg, op->src, op->src1,
          op->dst);
      break;
    case CBI_DNNL_PRELU:
      status = dnnl_prelu_forward_desc_init (&d.prelu, prop, op->src,
          op->weights);
      break;
    case CBI_DNNL_POOLING:
      status = dnnl_pooling_v2_forward_desc_init (&d.pooling, prop, op->alg,
          op->src, op->dst, op->strides, op->kernel, op->dilation, op->pad_l,
          op->pad_r);
      break;
    case CBI_DNNL_RESAMPLING:
      status = dnnl_resampling_forward_desc_init (&d.resampling, prop,
          op->alg, op->factors, op->src, op->dst);
      break;
    case CBI_DNNL_SOFTMAX:
      status = dnnl_softmax_v2_forward_desc_init (&d.softmax, prop, op->alg,
          op->src, op->dst, op->axis);
      break;
    case CBI_DNNL_REDUCTION:
      status = dnnl_reduction_desc_init (&d.reduction, op->alg, op->src,
          op->dst, op->alpha, op->beta);
      break;
    case CBI_DNNL_LAYER_NORM:
      status = dnnl_layer_normalization_forward_desc_init (&d.layer_norm,
          prop, op->src, NULL, op->alpha, op->flags);
      break;
    case CBI_DNNL_MATMUL:
      status = dnnl_matmul_desc_init (&d.matmul, op->src, op->weights,
          op->bias, op->dst);
      break;
  }
  if (status != dnnl_success)
    return status;
  return dnnl_primitive_desc_create (pd, &d, attr, engine, NULL);
}

dnnl_status_t
cbi_dnnl_concat_create (dnnl_primitive_desc_t * pd, CbiMd dst, gint n,
    gint axis, const CbiMd * srcs, const_dnnl_primitive_attr_t attr,
    dnnl_engine_t engine)
{
  dnnl_memory_desc_t *all = g_new (dnnl_memory_desc_t, MAX (n, 1));
  dnnl_status_t status;
  gint i;

  /* 2.x takes the sources' descs as one array of structs */
  for (i = 0; i < n; i++)
    all[i] = *srcs[i];
  status = dnnl_concat_primitive_desc_create (pd, dst, n, axis, all, attr,
      engine);
  g_free (all);
  return status;
}

#endif

CbiMdArena *
cbi_md_arena_new (void)
{
  CbiMdArena *arena = g_new0 (CbiMdArena, 1);

  arena->descs = g_ptr_array_new_with_free_func (cbi_md_destroy);
  return arena;
}

void
cbi_md_arena_free (CbiMdArena * arena)
{
  if (arena == NULL)
    return;
  g_ptr_array_free (arena->descs, TRUE);
  g_free (arena);
}

dnnl_status_t
cbi_md_tag (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, dnnl_format_tag_t tag)
{
  return cbi_md_tag_typed (arena, md, n_dims, dims, dnnl_f32, tag);
}

gboolean
cbi_md_plain_strides (CbiMd md, dnnl_dims_t strides)
{
  CbiMdBlocking b;

  if (!cbi_md_blocking (md, &b) || b.n_blocks != 0)
    return FALSE;
  if (strides)
    memcpy (strides, b.strides, b.n_dims * sizeof (dnnl_dim_t));
  return TRUE;
}

/* The distance between neighbours along each dimension of @md, where
 * that is one figure per dimension: a blocked layout whose inner blocks
 * each take the whole of a dimension (so a dimension's outer index is
 * always 0), as a block of 16 channels does for 16 channels. */
static gboolean
cbi_md_element_strides (CbiMd md, dnnl_dims_t strides)
{
  CbiMdBlocking b;
  dnnl_dim_t inner = 1;
  gint d, k;

  if (!cbi_md_blocking (md, &b))
    return FALSE;
  memcpy (strides, b.strides, b.n_dims * sizeof (dnnl_dim_t));
  for (k = b.n_blocks - 1; k >= 0; k--) {
    d = b.block_dims[k];
    if (b.blocks[k] != b.dims[d])
      return FALSE;
    strides[d] = inner;
    inner *= b.blocks[k];
  }
  return TRUE;
}

gboolean
cbi_md_same_places (CbiMd a, CbiMd b)
{
  dnnl_dims_t sa, sb;
  const dnnl_dim_t *dims = cbi_md_dims (a);
  gint n = cbi_md_n_dims (a), d;

  if (n != cbi_md_n_dims (b) || cbi_md_data_type (a) != cbi_md_data_type (b)
      || memcmp (dims, cbi_md_dims (b), n * sizeof (dnnl_dim_t)) != 0
      || dnnl_memory_desc_get_size (a) != dnnl_memory_desc_get_size (b)
      || !cbi_md_element_strides (a, sa) || !cbi_md_element_strides (b, sb))
    return FALSE;
  for (d = 0; d < n; d++)
    if (dims[d] > 1 && sa[d] != sb[d])
      return FALSE;
  return TRUE;
}

dnnl_status_t
cbi_md_strides (CbiMdArena * arena, CbiMd * md, gint n_dims,
    const dnnl_dims_t dims, const dnnl_dims_t strides)
{
  return cbi_md_strides_typed (arena, md, n_dims, dims, dnnl_f32, strides);
}
