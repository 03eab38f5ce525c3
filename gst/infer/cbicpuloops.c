/* cudabatchinfer: the CPU backend's own loops
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Spread over the OpenMP threads oneDNN already runs on. They read what
 * the primitives before them wrote, so the backend waits on its stream
 * before each.
 */
#include "cbicpuloops.h"
#include "cbimath.h"

#include <math.h>
#include <string.h>

/* the graph's fills are the kernels' */
G_STATIC_ASSERT ((gint) CBI_PAD_FILL_CONSTANT == (gint) CBI_K_PAD_CONSTANT);
G_STATIC_ASSERT ((gint) CBI_PAD_FILL_REFLECT == (gint) CBI_K_PAD_REFLECT);
G_STATIC_ASSERT ((gint) CBI_PAD_FILL_EDGE == (gint) CBI_K_PAD_EDGE);

void
cbi_cpu_run_pad (gconstpointer pad)
{
  const CbiCpuPad *p = pad;
  const gint64 oh = p->h + p->top + p->bottom, ow = p->w + p->left + p->right;
  const gint64 planes = p->n * p->c;
  gint64 plane;

#pragma omp parallel for schedule(static)
  for (plane = 0; plane < planes; plane++) {
    const gfloat *src = p->src + plane * p->h * p->w;
    gfloat *dst = p->dst + plane * oh * ow;
    gint64 y, x;
    for (y = 0; y < oh; y++) {
      gint64 sy = cbi_pad_index (y - p->top, p->h, (CbiKPadFill) p->fill);
      for (x = 0; x < ow; x++) {
        gint64 sx = cbi_pad_index (x - p->left, p->w, (CbiKPadFill) p->fill);
        dst[y * ow + x] = sy < 0 || sx < 0 ? p->value : src[sy * p->w + sx];
      }
    }
  }
}

/* One (frame, channel block): @b channels interleaved over the plane's
 * positions; lanes past @lanes are padding and stay zero. Two passes for
 * the statistics (mean, then squared deviations), one to write. @b is a
 * constant in each caller, so the lane loops vectorise. */
G_ALWAYS_INLINE static inline void
cbi_cpu_instance_norm_block (const CbiCpuInstanceNorm * p, const gfloat * src,
    gfloat * dst, gint64 first_channel, gint64 lanes, const gint64 b)
{
  gdouble sum[16] = { 0, }, dev[16] = { 0, };
  gfloat scale[16] = { 0, }, shift[16] = { 0, };
  gint64 i, j;

  for (i = 0; i < p->io.hw; i++)
    for (j = 0; j < b; j++)
      sum[j] += src[i * b + j];
  for (j = 0; j < b; j++)
    sum[j] /= p->io.hw;
  for (i = 0; i < p->io.hw; i++)
    for (j = 0; j < b; j++) {
      gdouble d = src[i * b + j] - sum[j];
      dev[j] += d * d;
    }
  for (j = 0; j < lanes; j++) {
    gdouble inv = 1.0 / sqrt (dev[j] / p->io.hw + p->epsilon);
    scale[j] = p->gamma[first_channel + j] * inv;
    shift[j] = p->beta[first_channel + j] - sum[j] * scale[j];
  }
  for (i = 0; i < p->io.hw; i++)
    for (j = 0; j < b; j++) {
      gfloat y = src[i * b + j] * scale[j] + shift[j];
      if (p->relu && y < 0.0f)
        y *= p->slope;
      dst[i * b + j] = j < lanes ? y : 0.0f;
    }
}

void
cbi_cpu_run_instance_norm (gconstpointer norm)
{
  const CbiCpuInstanceNorm *p = norm;
  const gint64 blocks = (p->io.c + p->io.block - 1) / p->io.block;
  const gint64 count = p->io.n * blocks;
  gint64 k;

#pragma omp parallel for schedule(static)
  for (k = 0; k < count; k++) {
    gint64 first = (k % blocks) * p->io.block;
    gint64 offset = k * p->io.hw * p->io.block;
    gint64 lanes = MIN (p->io.block, p->io.c - first);
    if (p->io.block == 16)
      cbi_cpu_instance_norm_block (p, p->io.src + offset, p->io.dst + offset,
          first, lanes, 16);
    else if (p->io.block == 8)
      cbi_cpu_instance_norm_block (p, p->io.src + offset, p->io.dst + offset,
          first, lanes, 8);
    else
      cbi_cpu_instance_norm_block (p, p->io.src + offset, p->io.dst + offset,
          first, lanes, 1);
  }
}

void
cbi_cpu_run_channels (gconstpointer channels)
{
  const CbiCpuChannels *p = channels;
  const gint64 planes = p->io.n * p->io.c, b = p->io.block;
  gint64 plane;

#pragma omp parallel for schedule(static)
  for (plane = 0; plane < planes; plane++) {
    gint64 f = plane / p->io.c, c = plane % p->io.c, i;
    const gfloat *src =
        p->io.src + ((f * p->src_channels + c - c % b) * p->io.hw)
        + c % b;
    gfloat *dst = p->io.dst + plane * p->io.hw;
    for (i = 0; i < p->io.hw; i++)
      dst[i] = src[i * b];
  }
}

/* The input offset of output position @idx along dimension @d of @v. */
static inline gint64
cbi_cpu_copy_step (const CbiCopyView * v, gint d, gint64 idx)
{
  return (d == v->axis ? v->index[idx] : idx) * v->strides[d];
}

void
cbi_cpu_run_copy (gconstpointer copy)
{
  const CbiCpuCopy *c = copy;
  const CbiCopyView *v = &c->view;
  const gint last = v->n_dims - 1;
  const gint64 width = v->n_dims > 0 ? v->dims[last] : 1;
  gint64 rows = 1, row;
  gint d;

  for (d = 0; d < last; d++)
    rows *= v->dims[d];
#pragma omp parallel for schedule(static)
  for (row = 0; row < rows; row++) {
    gint64 rest = row, off = v->offset, j;
    gfloat *dst = c->dst + row * width;
    gint k;
    for (k = last - 1; k >= 0; k--) {
      off += cbi_cpu_copy_step (v, k, rest % v->dims[k]);
      rest /= v->dims[k];
    }
    if (v->n_dims == 0)
      dst[0] = c->src[off];
    else if (v->axis != last && v->strides[last] == 1)
      memcpy (dst, c->src + off, width * sizeof (gfloat));      /* a row */
    else
      for (j = 0; j < width; j++)
        dst[j] = c->src[off + cbi_cpu_copy_step (v, last, j)];
  }
}

void
cbi_cpu_run_eltwise (gconstpointer eltwise)
{
  const CbiCpuEltwiseLoop *e = eltwise;
  gint64 i;

#pragma omp parallel for schedule(static)
  for (i = 0; i < e->count; i++)
    e->dst[i] = cbi_eltwise ((CbiKEltwise) e->op, e->src[i], e->alpha, e->beta);
}

void
cbi_cpu_run_reduce (gconstpointer reduce)
{
  const CbiCpuReduce *p = reduce;
  const gint64 count = p->outer * p->inner;
  gint64 i;

#pragma omp parallel for schedule(static)
  for (i = 0; i < count; i++) {
    gint64 o = i / p->inner;
    p->dst[i] = cbi_reduce ((CbiKReduce) p->op, p->src + o * p->r * p->inner
        + (i - o * p->inner), p->r, p->inner);
  }
}

void
cbi_cpu_run_binary (gconstpointer binary)
{
  const CbiCpuBinary *p = binary;
  gint64 i;

#pragma omp parallel for schedule(static)
  for (i = 0; i < p->count; i++) {
    const gfloat b = p->b[cbi_strided_offset (i, p->rank, p->dims,
            p->b_strides)];
    gfloat y;
    guint s;

    if (p->cond) {
      p->dst[i] = cbi_where (p->cond[cbi_strided_offset (i, p->rank,
                  p->dims, p->c_strides)], p->a[i], b);
      continue;
    }
    y = cbi_binary ((CbiKBinary) p->op, p->a[i], b);
    for (s = 0; s < p->n_post; s++)
      y = cbi_eltwise ((CbiKEltwise) p->post[s].op, y, p->post[s].alpha,
          p->post[s].beta);
    p->dst[i] = y;
  }
}
