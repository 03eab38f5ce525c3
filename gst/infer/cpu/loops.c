/* cudabatchinfer: the CPU backend's own loops
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Spread over the OpenMP threads oneDNN already runs on. They read what
 * the primitives before them wrote, so the backend waits on its stream
 * before each.
 */
#include "cpu/loops.h"
#include "cpu/wide.h"
#include "cbimath.h"

#include <math.h>
#include <string.h>

/* the graph's fills are the kernels' */
G_STATIC_ASSERT ((gint) CBI_PAD_FILL_CONSTANT == (gint) CBI_K_PAD_CONSTANT);
G_STATIC_ASSERT ((gint) CBI_PAD_FILL_REFLECT == (gint) CBI_K_PAD_REFLECT);
G_STATIC_ASSERT ((gint) CBI_PAD_FILL_EDGE == (gint) CBI_K_PAD_EDGE);

/* Columns [@from, @to) of an output row, through the fill rule. */
static inline void
cbi_cpu_pad_border (const CbiCpuPad * p, const gfloat * srow, gfloat * row,
    gint64 from, gint64 to)
{
  gint64 x, k;

  for (x = from; x < to; x++) {
    gint64 sx = cbi_pad_index (x - p->left, p->w, (CbiKPadFill) p->fill);
    for (k = 0; k < p->pixel; k++)
      row[x * p->pixel + k] = sx < 0 ? p->value : srow[sx * p->pixel + k];
  }
}

void
cbi_cpu_run_pad (gconstpointer pad)
{
  const CbiCpuPad *p = pad;
  const gint64 oh = p->h + p->top + p->bottom, ow = p->w + p->left + p->right;
  const gint64 px = p->pixel;
  /* the columns read straight from a source row: one copy; the border's
   * few columns go through the fill rule */
  const gint64 x0 = CLAMP (p->left, 0, ow);
  const gint64 x1 = CLAMP (p->left + p->w, x0, ow);
  gint64 plane;

#pragma omp parallel for schedule(static)
  for (plane = 0; plane < p->planes; plane++) {
    const gfloat *src = p->src + plane * p->h * p->w * px;
    gfloat *dst = p->dst + plane * oh * ow * px;
    gint64 y, x;
    for (y = 0; y < oh; y++) {
      gint64 sy = cbi_pad_index (y - p->top, p->h, (CbiKPadFill) p->fill);
      gfloat *row = dst + y * ow * px;
      const gfloat *srow;
      if (sy < 0) {
        for (x = 0; x < ow * px; x++)
          row[x] = p->value;
        continue;
      }
      srow = src + sy * p->w * px;
      cbi_cpu_pad_border (p, srow, row, 0, x0);
      memcpy (row + x0 * px, srow + (x0 - p->left) * px,
          (x1 - x0) * px * sizeof (gfloat));
      cbi_cpu_pad_border (p, srow, row, x1, ow);
    }
  }
}

/* The statistics of one (frame, channel block), @b channels interleaved
 * over the plane's positions, in one pass: the sums of x - k and of its
 * square, k being each lane's first value, so that the variance keeps its
 * digits in double (it had a pass of its own for that: one more read of
 * a plane that does not stay in cache). A plain plane (@b 1) is summed 8
 * positions at a time, each into an accumulator of its own, so the loop
 * vectorises without reordering a sum the compiler may not reorder. */
G_ALWAYS_INLINE static inline void
cbi_cpu_instance_norm_stats (const gfloat * src, gint64 hw, const gint64 b,
    gdouble mean[16], gdouble var[16])
{
  const gint64 w = b == 1 ? 8 : b, n = b == 1 ? hw / 8 : hw;
  gdouble s1[16] = { 0, }, s2[16] = { 0, };
  gfloat k[16];
  gint64 i, j;

  for (j = 0; j < w; j++)
    k[j] = src[b == 1 ? 0 : j];
  for (i = 0; i < n; i++)
    for (j = 0; j < w; j++) {
      gdouble d = src[i * w + j] - k[j];
      s1[j] += d;
      s2[j] += d * d;
    }
  if (b == 1) {
    for (i = n * 8; i < hw; i++) {
      gdouble d = src[i] - k[0];
      s1[0] += d;
      s2[0] += d * d;
    }
    for (j = 1; j < 8; j++) {
      s1[0] += s1[j];
      s2[0] += s2[j];
    }
  }
  for (j = 0; j < b; j++) {
    gdouble m = s1[j] / hw;
    mean[j] = k[j] + m;
    var[j] = MAX (s2[j] / hw - m * m, 0.0);
  }
}

/* One (frame, channel block): @b channels interleaved over the plane's
 * positions; lanes past @lanes are padding and stay zero. @b is a
 * constant in each caller, so the lane loops vectorise. */
G_ALWAYS_INLINE static inline void
cbi_cpu_instance_norm_block (const CbiCpuInstanceNorm * p, const gfloat * src,
    gfloat * dst, gint64 first_channel, gint64 lanes, const gint64 b)
{
  gdouble mean[16], var[16];
  gfloat scale[16] = { 0, }, shift[16] = { 0, };
  gint64 i, j;

  cbi_cpu_instance_norm_stats (src, p->io.hw, b, mean, var);
  for (j = 0; j < lanes; j++) {
    gdouble inv = 1.0 / sqrt (var[j] + p->epsilon);
    scale[j] = p->gamma[first_channel + j] * inv;
    shift[j] = p->beta[first_channel + j] - mean[j] * scale[j];
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

/* Where output position @o of @out reads an input of @in positions,
 * scaled by @factor: from @i0 and @i1, @w of the way to @i1. */
static void
cbi_cpu_upsample_axis (gint64 in, gint64 out, gfloat factor, gint32 * i0,
    gint32 * i1, gfloat * w)
{
  gint64 o, a;

  for (o = 0; o < out; o++) {
    gdouble at = MAX ((o + 0.5) / factor - 0.5, 0.0);
    a = MIN ((gint64) floor (at), in - 1);
    i0[o] = a;
    i1[o] = MIN (a + 1, in - 1);
    w[o] = (gfloat) (at - a);
  }
}

CbiCpuUpsample *
cbi_cpu_upsample_new (const gfloat * src, gfloat * dst, gint64 planes,
    gint64 ih, gint64 iw, gint64 oh, gint64 ow, gfloat fy, gfloat fx)
{
  CbiCpuUpsample *u = g_malloc0 (sizeof (CbiCpuUpsample)
      + 2 * (ow + oh) * sizeof (gint32) + (ow + oh) * sizeof (gfloat));
  gint32 *x0 = (gint32 *) (u + 1), *x1 = x0 + ow, *y0 = x1 + ow, *y1 = y0 + oh;
  gfloat *wx = (gfloat *) (y1 + oh), *wy = wx + ow;

  u->src = src;
  u->dst = dst;
  u->planes = planes;
  u->ih = ih;
  u->iw = iw;
  u->oh = oh;
  u->ow = ow;
  cbi_cpu_upsample_axis (iw, ow, fx, x0, x1, wx);
  cbi_cpu_upsample_axis (ih, oh, fy, y0, y1, wy);
  u->x0 = x0;
  u->x1 = x1;
  u->y0 = y0;
  u->y1 = y1;
  u->wx = wx;
  u->wy = wy;
  return u;
}

/* Input row @r of @plane blended along the width into @out. */
static inline void
cbi_cpu_upsample_row (const CbiCpuUpsample * u, const gfloat * plane,
    gint64 r, gfloat * out)
{
  const gfloat *row = plane + r * u->iw;
  gint64 x;

#pragma omp simd
  for (x = 0; x < u->ow; x++) {
    gfloat a = row[u->x0[x]], b = row[u->x1[x]];
    out[x] = a + (b - a) * u->wx[x];
  }
}

void
cbi_cpu_run_upsample (gconstpointer upsample)
{
  const CbiCpuUpsample *u = upsample;
  gint64 plane;

#pragma omp parallel for schedule(static)
  for (plane = 0; plane < u->planes; plane++) {
    /* input row r blended along the width sits in rows[r % 2]: the two
     * rows an output row reads are one apart (or the same, at the edge) */
    gfloat rows[2][CBI_CPU_UPSAMPLE_MAX_WIDTH];
    gint64 have[2] = { -1, -1 }, y, x;
    const gfloat *src = u->src + plane * u->ih * u->iw;
    gfloat *dst = u->dst + plane * u->oh * u->ow;

    for (y = 0; y < u->oh; y++) {
      const gint64 r0 = u->y0[y], r1 = u->y1[y];
      const gfloat w = u->wy[y];
      const gfloat *t0 = rows[r0 % 2], *t1 = rows[r1 % 2];
      gfloat *out = dst + y * u->ow;
      if (have[r0 % 2] != r0)
        cbi_cpu_upsample_row (u, src, have[r0 % 2] = r0, rows[r0 % 2]);
      if (have[r1 % 2] != r1)
        cbi_cpu_upsample_row (u, src, have[r1 % 2] = r1, rows[r1 % 2]);
#pragma omp simd
      for (x = 0; x < u->ow; x++)
        out[x] = t0[x] + (t1[x] - t0[x]) * w;
    }
  }
}

/* The input offset of output position @idx along dimension @d of @v,
 * whose Gather positions are @index. */
static inline gint64
cbi_cpu_copy_step (const CbiCopyView * v, const gint64 * index, gint d,
    gint64 idx)
{
  return (d == v->axis ? index[idx] : idx) * v->strides[d];
}

void
cbi_cpu_run_copy (gconstpointer copy)
{
  const CbiCpuCopy *c = copy;
  const CbiCopyView *v = &c->view;
  const gint last = v->n_dims - 1;
  const gint64 width = v->n_dims > 0 ? v->dims[last] : 1;
  /* a Gather's positions: in the view, or past its room (long_index) */
  const gint64 *index = v->long_index ? v->long_index : v->index;
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
      off += cbi_cpu_copy_step (v, index, k, rest % v->dims[k]);
      rest /= v->dims[k];
    }
    if (v->n_dims == 0)
      dst[0] = c->src[off];
    else if (v->axis != last && v->strides[last] == 1)
      memcpy (dst, c->src + off, width * sizeof (gfloat));      /* a row */
    else
      for (j = 0; j < width; j++)
        dst[j] = c->src[off + cbi_cpu_copy_step (v, index, last, j)];
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

/* the values of a row one thread takes at a time */
#define CBI_CPU_ROW_PIECE 16384

gint64
cbi_cpu_binary_run (const CbiCpuBinary * p)
{
  gint64 run = 1;
  gint d;

  for (d = p->rank - 1; p->cond == NULL && d >= 0; d--) {
    if (p->b_strides[d] != run || (!p->a_full && p->a_strides[d] != run))
      break;
    run *= p->dims[d];
  }
  return run;
}

/* One row of @n values of @a op @b into @y, then @p's post steps: the
 * switch outside the loop, so that each op's loop vectorises. */
CBI_CPU_WIDE static void
cbi_cpu_binary_row (const CbiCpuBinary * p, const gfloat * a,
    const gfloat * b, gfloat * y, const gint64 n)
{
  gint64 j;
  guint s;

  switch ((CbiKBinary) p->op) {
    case CBI_K_ADD:
#pragma omp simd
      for (j = 0; j < n; j++)
        y[j] = a[j] + b[j];
      break;
    case CBI_K_SUB:
#pragma omp simd
      for (j = 0; j < n; j++)
        y[j] = a[j] - b[j];
      break;
    case CBI_K_MUL:
#pragma omp simd
      for (j = 0; j < n; j++)
        y[j] = a[j] * b[j];
      break;
    case CBI_K_DIV:
#pragma omp simd
      for (j = 0; j < n; j++)
        y[j] = a[j] / b[j];
      break;
    default:
      for (j = 0; j < n; j++)
        y[j] = cbi_binary ((CbiKBinary) p->op, a[j], b[j]);
      break;
  }
  for (s = 0; s < p->n_post; s++)
    for (j = 0; j < n; j++)
      y[j] = cbi_eltwise ((CbiKEltwise) p->post[s].op, y[j],
          p->post[s].alpha, p->post[s].beta);
}

void
cbi_cpu_run_binary (gconstpointer binary)
{
  const CbiCpuBinary *p = binary;
  gint64 i;

  /* rows both operands read in a row: a broadcast along the leading
   * dimensions (a position table added to every frame, an attention
   * mask added to every window) */
  if (p->run > 1) {
    /* rows in pieces, so that few long rows still share the threads */
    const gint64 pieces = (p->run + CBI_CPU_ROW_PIECE - 1) / CBI_CPU_ROW_PIECE;
    const gint64 total = p->count / p->run * pieces;
#pragma omp parallel for schedule(static)
    for (i = 0; i < total; i++) {
      const gint64 row = (i / pieces) * p->run;
      const gint64 from = (i % pieces) * CBI_CPU_ROW_PIECE;
      const gfloat *a = p->a_full ? p->a + row : p->a +
          cbi_strided_offset (row, p->rank, p->dims, p->a_strides);
      const gfloat *b = p->b + cbi_strided_offset (row, p->rank, p->dims,
          p->b_strides);
      cbi_cpu_binary_row (p, a + from, b + from, p->dst + row + from,
          MIN (CBI_CPU_ROW_PIECE, p->run - from));
    }
    return;
  }
#pragma omp parallel for schedule(static)
  for (i = 0; i < p->count; i++) {
    const gfloat b = p->b[cbi_strided_offset (i, p->rank, p->dims,
            p->b_strides)];
    const gfloat a = p->a_full ? p->a[i] : p->a[cbi_strided_offset (i,
            p->rank, p->dims, p->a_strides)];
    gfloat y;
    guint s;

    if (p->cond) {
      p->dst[i] = cbi_where (p->cond[cbi_strided_offset (i, p->rank,
                  p->dims, p->c_strides)], a, b);
      continue;
    }
    y = cbi_binary ((CbiKBinary) p->op, a, b);
    for (s = 0; s < p->n_post; s++)
      y = cbi_eltwise ((CbiKEltwise) p->post[s].op, y, p->post[s].alpha,
          p->post[s].beta);
    p->dst[i] = y;
  }
}

/* the softmax's columns taken at a time: their maxima and sums on the
 * stack */
#define CBI_CPU_SOFTMAX_BLOCK 256

/* Columns [0, @n) of one block: @x and @y point at their first value,
 * a step of the axis is @inner values on. Each pass runs along a step,
 * whose columns are neighbours, and the exponentials are cbimath.h's,
 * which vectorise. */
CBI_CPU_WIDE static void
cbi_cpu_softmax_block (const gfloat * x, gfloat * y, const gint64 axis,
    const gint64 inner, const gint64 n)
{
  gfloat m[CBI_CPU_SOFTMAX_BLOCK], sum[CBI_CPU_SOFTMAX_BLOCK];
  gint64 k, i;

  for (i = 0; i < n; i++) {
    m[i] = x[i];
    sum[i] = 0.0f;
  }
  /* a NaN anywhere in a column makes it all NaN, through the exp */
  for (k = 1; k < axis; k++)
#pragma omp simd
    for (i = 0; i < n; i++) {
      const gfloat v = x[k * inner + i];
      m[i] = v > m[i] || v != v ? v : m[i];
    }
  for (k = 0; k < axis; k++)
#pragma omp simd
    for (i = 0; i < n; i++) {
      const gfloat e = cbi_exp (x[k * inner + i] - m[i]);
      y[k * inner + i] = e;
      sum[i] += e;
    }
  for (i = 0; i < n; i++)
    sum[i] = 1.0f / sum[i];
  for (k = 0; k < axis; k++)
#pragma omp simd
    for (i = 0; i < n; i++)
      y[k * inner + i] *= sum[i];
}

/* One (outer, block of the inner columns) at a time. */
void
cbi_cpu_run_softmax (gconstpointer softmax)
{
  const CbiCpuSoftmax *p = softmax;
  const gint64 blocks = (p->inner + CBI_CPU_SOFTMAX_BLOCK - 1) /
      CBI_CPU_SOFTMAX_BLOCK;
  gint64 b;

#pragma omp parallel for schedule(static)
  for (b = 0; b < p->outer * blocks; b++) {
    const gint64 o = b / blocks, i0 = (b - o * blocks) * CBI_CPU_SOFTMAX_BLOCK;

    cbi_cpu_softmax_block (p->src + o * p->axis * p->inner + i0,
        p->dst + o * p->axis * p->inner + i0, p->axis, p->inner,
        MIN (CBI_CPU_SOFTMAX_BLOCK, p->inner - i0));
  }
}

/* lanes of the row sums: independent accumulators, so that the sums
 * vectorise without a reordering the compiler may not make */
#define CBI_CPU_NORM_LANES 16

/* cbi_bf16_from_float () as a select, which vectorises: a NaN keeps its
 * sign and top mantissa bits, quieted */
G_ALWAYS_INLINE static inline guint16
cbi_cpu_bf16_of (gfloat f)
{
  const guint32 bits = cbi_float_bits (f);
  const guint32 rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;

  return (guint16) ((bits & 0x7fffffffu) > 0x7f800000u ?
      (bits >> 16) | 0x40u : rounded);
}

/* The sum of @x[0..@n) less @shift (squared where @square), lane by
 * lane, then the lanes' */
G_ALWAYS_INLINE static inline gfloat
cbi_cpu_row_sum (const gfloat * x, gint64 n, gfloat shift, gboolean square)
{
  gfloat lane[CBI_CPU_NORM_LANES] = { 0, }, sum = 0.0f;
  const gint64 full = n - n % CBI_CPU_NORM_LANES;
  gint64 i, j;

  for (i = 0; i < full; i += CBI_CPU_NORM_LANES) {
#pragma omp simd
    for (j = 0; j < CBI_CPU_NORM_LANES; j++) {
      const gfloat d = x[i + j] - shift;
      lane[j] += square ? d * d : d;
    }
  }
  for (i = full; i < n; i++) {
    const gfloat d = x[i] - shift;
    sum += square ? d * d : d;
  }
  for (j = 0; j < CBI_CPU_NORM_LANES; j++)
    sum += lane[j];
  return sum;
}

/* One row of @p, @r, built for wider vectors: the row stays in the
 * first level cache across its three passes */
CBI_CPU_WIDE static void
cbi_cpu_layer_norm_row (const CbiCpuLayerNorm * p, gint64 r)
{
  /* locals, not @p's fields, which the compiler would otherwise reload
   * after each store (the stores might alias them) */
  const gint64 n = p->inner;
  const gfloat *restrict x = p->src + r * n;
  const gfloat *restrict gamma = p->gamma, *restrict beta = p->beta;
  guint16 *restrict y = p->dst + r * n;
  const gfloat mean = cbi_cpu_row_sum (x, n, 0.0f, FALSE) / n;
  const gfloat var = cbi_cpu_row_sum (x, n, mean, TRUE) / n;
  const gfloat inv = 1.0f / sqrtf (var + p->epsilon);
  gint64 j;

  if (beta) {
#pragma omp simd
    for (j = 0; j < n; j++)
      y[j] = cbi_cpu_bf16_of ((x[j] - mean) * inv * gamma[j] + beta[j]);
  } else {
#pragma omp simd
    for (j = 0; j < n; j++)
      y[j] = cbi_cpu_bf16_of ((x[j] - mean) * inv * gamma[j]);
  }
}

void
cbi_cpu_run_layer_norm_bf16 (gconstpointer norm)
{
  const CbiCpuLayerNorm *p = norm;
  gint64 r;

#pragma omp parallel for schedule(static)
  for (r = 0; r < p->rows; r++)
    cbi_cpu_layer_norm_row (p, r);
}
