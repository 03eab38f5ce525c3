/* GStreamer cudabatchinfer: every CUDA kernel run on the CPU (kernels-host)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The .cu files of kernels/ built for the host (CBI_K_HOST,
 * cbikernels-host.h), so on any machine, each kernel against the math of
 * math/cbimath.h or plain loops, on shapes chosen to break index math:
 * one element; odd sizes; the same with the int64_t path forced
 * (cbi_k_host_int_limit); a count past 65535 blocks of 256 threads, so
 * that the grid-stride loops run their tail; and Binary and Where in
 * every broadcast pattern. The kernels whose threads wait for each other
 * (softmax's rows, layer and instance normalisation) run as fibers, and
 * 65535 blocks of 256 fibers would take minutes: they reach their loops'
 * tail on a grid of two blocks (cbi_k_host_max_blocks).
 *
 * Every test also checks what the launch ran (cbi_k_host_last_launch):
 * the int or int64_t version asked for, fibers or a plain loop, and for
 * the tail CUDA's 65535 blocks with fewer threads than elements. Inputs
 * are functions of their index, so that a reference recomputes any of
 * tens of millions without a copy: a tail takes at most ~230 MB.
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cbibroadcastref.h"
#include "cbikernels.h"

/* CUDA's grid: 65535 blocks of 256 threads */
#define GRID_BLOCKS 65535
#define GRID_THREADS ((int64_t) GRID_BLOCKS * 256)
/* the grid of a kernel of fibers for its tail */
#define FIBER_TAIL_BLOCKS 2

typedef enum
{
  SHAPE_ONE,
  SHAPE_ODD,
  SHAPE_INT64,
  SHAPE_TAIL,
} Shape;

static const gchar *const shape_names[] = { "one element", "odd sizes",
  "odd sizes, int64_t path", "past 65535 blocks"
};

static void
reset_knobs (void)
{
  cbi_k_host_max_blocks = GRID_BLOCKS;
  cbi_k_host_int_limit = G_MAXINT64;
}

/* Runs @check on each shape, with the int64_t path forced for
 * SHAPE_INT64. */
static void
for_each_shape (void (*check) (Shape))
{
  int s;

  for (s = SHAPE_ONE; s <= SHAPE_TAIL; s++) {
    reset_knobs ();
    if (s == SHAPE_INT64)
      cbi_k_host_int_limit = 0;
    check ((Shape) s);
  }
  reset_knobs ();
}

/* The value at index @i of input @seed: multiples of 1/16 in -6.2 .. 6.2,
 * exact in a float, with no period a shape here lines up with. */
static float
pattern (int64_t i, int seed)
{
  guint64 k = (guint64) i * 7919u + (guint64) seed * 104729u;

  return (float) ((gint64) (k % 199u) - 99) / 16.0f;
}

static float *
pattern_floats (int64_t n, int seed)
{
  float *v = g_new (float, MAX (n, 1));
  int64_t i;

  for (i = 0; i < n; i++)
    v[i] = pattern (i, seed);
  return v;
}

/* @n floats that the kernel must all overwrite: NaN, which no reference
 * gives where it is left */
static float *
unwritten_floats (int64_t n)
{
  float *v = g_new (float, MAX (n, 1));

  memset (v, 0xff, MAX (n, 1) * sizeof (float));
  return v;
}

/* @got is @want: NaN for NaN, else equal (@tol 0) or within @tol,
 * relative above 1 */
static gboolean
same_float (float got, float want, double tol)
{
  if (isnan (want))
    return isnan (got);
  if (tol == 0.0 || isinf (want))
    return got == want;
  return fabs ((double) got - want) <= tol * fmax (1.0, fabs (want));
}

/* The first value of an array that differs from its reference: one
 * assertion for the array, as check counts every one it makes and the
 * tails have millions of values. */
typedef struct
{
  gchar what[160];
  int64_t bad;
  double got, want;
} Compare;

/* @what: what the array is, g_strdup_printf ()'d, taken */
static void
compare_init (Compare * c, Shape s, gchar * what)
{
  g_snprintf (c->what, sizeof (c->what), "%s (%s)", what, shape_names[s]);
  g_free (what);
  c->bad = -1;
}

/* whether value @i is right; records the first that is not */
static inline gboolean
compare (Compare * c, int64_t i, float got, float want, double tol)
{
  if (same_float (got, want, tol))
    return TRUE;
  c->bad = i;
  c->got = got;
  c->want = want;
  return FALSE;
}

static void
compare_done (const Compare * c)
{
  fail_unless (c->bad < 0, "%s: [%" G_GINT64_FORMAT "] is %.9g, want %.9g",
      c->what, c->bad, c->got, c->want);
}

#define assert_cuda(call) fail_unless_equals_int ((call), cudaSuccess)

/* What the last launch ran: the int version, or the int64_t one for
 * SHAPE_INT64 (@both: the kernel has the two; else it has the int64_t
 * one only); a plain loop or, @fibers, fibers; and for the tail all the
 * blocks of its grid, fewer threads than the @threads it wants. */
static void
assert_launch (Shape s, gboolean both, gboolean fibers, int64_t threads)
{
  const CbiKHostLaunch *l = &cbi_k_host_last_launch;

  fail_unless_equals_int (l->fibers, fibers);
  fail_unless_equals_int (l->index_bits, both && s != SHAPE_INT64 ? 32 : 64);
  fail_unless_equals_int64 (l->threads, 256);
  if (s == SHAPE_TAIL) {
    fail_unless_equals_int64 (l->blocks, fibers ? FIBER_TAIL_BLOCKS :
        GRID_BLOCKS);
    fail_unless (threads > l->blocks * l->threads, "%" G_GINT64_FORMAT
        " threads wanted fit in one pass of the grid", threads);
  }
}

/* ---- broadcasting, as numpy ---- */

static int64_t
count_of (int rank, const int64_t * dims)
{
  int64_t n = 1;
  int j;

  for (j = 0; j < rank; j++)
    n *= dims[j];
  return n;
}

static const gchar *
broadcast_name (int rank, const int64_t * shape, gchar * buf)
{
  int j;

  for (j = 0; j < rank; j++) {
    buf[2 * j] = ' ';
    buf[2 * j + 1] = shape[j] == 1 ? '1' : 'n';
  }
  buf[2 * rank] = '\0';
  return buf;
}

/* ---- frames ---- */

/* frames of @ps bytes a pixel: RGB, or BGRx; ImageNet's scale and bias,
 * and their inverse for unpacking */
static void
frames_format (CbiKFrames * f, int width, int height, int ps)
{
  const float mean[3] = { 0.485f, 0.456f, 0.406f };
  const float std[3] = { 0.229f, 0.224f, 0.225f };
  int c;

  memset (f, 0, sizeof (*f));
  f->width = width;
  f->height = height;
  f->pixel_stride = ps;
  f->extra_offset = ps == 4 ? 3 : -1;
  for (c = 0; c < 3; c++) {
    f->rgb_offset[c] = ps == 4 ? 2 - c : c;
    f->scale[c] = 1.0f / (255.0f * std[c]);
    f->bias[c] = -mean[c] / std[c];
    cbi_byte_mapping (f->scale[c], f->bias[c], &f->out_scale[c],
        &f->out_offset[c]);
  }
}

static guint8
frame_byte (int64_t i)
{
  return (guint8) (i * 37 + 11);
}

/* ---- pack ---- */

static void
check_pack (Shape s)
{
  const int width = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? 1831 : 9;
  const int height = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? 1833 : 7;
  const int64_t plane = (int64_t) width * height;
  int v;

  /* (pixel stride, frames, slots, repeat the last frame) */
  for (v = 0; v < 6; v++) {
    const int ps = v % 2 ? 4 : 3;
    const int n_frames = s == SHAPE_ONE ? (v < 2 ? 1 : 0) :
        s == SHAPE_TAIL ? 2 : 3;
    const int n_slots = s == SHAPE_ONE ? 1 : 5;
    const int repeat = v >= 2 && v < 4;
    const int64_t n_bytes = MAX (n_frames, 1) * plane * ps;
    const int64_t n = n_slots * 3 * plane;
    guint8 *frames;
    float *tensor;
    CbiKFrames f;
    Compare cmp;
    int64_t i;

    /* one pass over the tail's 200 MB: BGRx with repeats */
    if (s == SHAPE_TAIL && v != 3)
      continue;
    frames_format (&f, width, height, ps);
    frames = g_new (guint8, n_bytes);
    for (i = 0; i < n_bytes; i++)
      frames[i] = frame_byte (i);
    tensor = unwritten_floats (n);
    assert_cuda (cbi_k_pack (frames, tensor, &f, n_frames, n_slots, repeat,
            NULL));
    assert_launch (s, TRUE, FALSE, n_slots * plane);

    compare_init (&cmp, s,
        g_strdup_printf ("pack of %d frames into %d slots, %d bytes a "
            "pixel, repeat %d", n_frames, n_slots, ps, repeat));
    for (i = 0; i < n; i++) {
      const int64_t slot = i / (3 * plane), c = i / plane % 3, p = i % plane;
      const int64_t src = slot < n_frames ? slot : repeat && n_frames > 0 ?
          n_frames - 1 : -1;
      float want = src < 0 ? 0.0f :
          cbi_from_byte (frames[(src * plane + p) * ps + f.rgb_offset[c]],
          f.scale[c], f.bias[c]);
      if (!compare (&cmp, i, tensor[i], want, 0.0))
        break;
    }
    compare_done (&cmp);
    g_free (frames);
    g_free (tensor);
  }
}

GST_START_TEST
    (test_pack_matches_cbimath_on_one_pixel_odd_frames_int64_and_the_tail) {
  for_each_shape (check_pack);
}

GST_END_TEST;

/* ---- pack 4:2:0 ---- */

static void
check_pack_yuv (Shape s)
{
  const int width = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? 1831 : 9;
  const int height = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? 1833 : 7;
  const int64_t plane = (int64_t) width * height;
  const int64_t frame = cbi_k_yuv_frame_bytes (width, height);
  /* BT.709, limited range, as cbi_yuv_matrix_init () makes it; planes of
   * their own, or interleaved as NV21 (Cr first) */
  const CbiKYuv layouts[2] = {
    {{298, 459, 541, -55, -136}, 1, 0, ((width + 1) / 2) * ((height + 1) / 2)},
    {{298, 459, 541, -55, -136}, 2, 1, 0},
  };
  const int n_frames = s == SHAPE_ONE ? 1 : 2;
  /* the tail: more pixels than one pass of the grid */
  const int n_slots = s == SHAPE_TAIL ? 5 : 3;
  const int64_t n = n_slots * 3 * plane;
  guint8 *frames;
  float *tensor;
  CbiKFrames f;
  Compare cmp;
  int64_t i;
  int l;

  for (l = 0; l < 2; l++) {
    const CbiKYuv yuv = layouts[l];
    frames_format (&f, width, height, 3);
    /* a BGR model: channel 0 reads blue */
    f.rgb_offset[0] = 2;
    f.rgb_offset[2] = 0;
    frames = g_new (guint8, n_frames * frame);
    for (i = 0; i < n_frames * frame; i++)
      frames[i] = frame_byte (i);
    tensor = unwritten_floats (n);
    assert_cuda (cbi_k_pack_yuv (frames, tensor, &f, &yuv, n_frames, n_slots,
            1, NULL));
    assert_launch (s, TRUE, FALSE, n_slots * plane);

    compare_init (&cmp, s, g_strdup_printf ("pack of %d 4:2:0 frames of "
            "%dx%d into %d slots, chroma step %d", n_frames, width, height,
            n_slots, yuv.chroma_step));
    for (i = 0; i < n; i++) {
      const int64_t slot = i / (3 * plane), c = i / plane % 3, p = i % plane;
      const int64_t src = MIN (slot, n_frames - 1);
      const guint8 *luma = frames + src * frame;
      const int64_t x = p % width, y = p / width;
      const int64_t k = (y / 2) * ((width + 1) / 2) * yuv.chroma_step
          + x / 2 * yuv.chroma_step;
      guint8 rgb[3];
      float want;

      cbi_yuv_to_rgb (yuv.to_rgb, luma[p], luma[plane + k + yuv.cb_offset],
          luma[plane + k + yuv.cr_offset], rgb);
      want = cbi_from_byte (rgb[f.rgb_offset[c]], f.scale[c], f.bias[c]);
      if (!compare (&cmp, i, tensor[i], want, 0.0))
        break;
    }
    compare_done (&cmp);
    g_free (frames);
    g_free (tensor);
  }
}

GST_START_TEST
    (test_pack_yuv_matches_cbimath_on_one_pixel_odd_frames_int64_and_the_tail) {
  for_each_shape (check_pack_yuv);
}

GST_END_TEST;

/* ---- unpack ---- */

static void
check_unpack (Shape s)
{
  const int width = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? 1831 : 9;
  const int height = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? 1833 : 7;
  const int n_frames = s == SHAPE_ONE ? 1 : 5;
  const int64_t count = n_frames * (int64_t) width * height;

  /* channels, pixel stride, the input frames given, an output smaller
   * than the input (whose fourth byte then cannot pass) */
  static const int variants[][4] = {
    {1, 3, 0, 0}, {3, 3, 0, 0}, {4, 3, 0, 0}, {1, 4, 0, 0}, {3, 4, 0, 0},
    {4, 4, 0, 0}, {1, 4, 1, 0}, {3, 4, 1, 0}, {4, 4, 1, 0}, {3, 3, 1, 0},
    {1, 4, 1, 1}, {3, 4, 1, 1},
  };
  gsize v;

  for (v = 0; v < G_N_ELEMENTS (variants); v++) {
    const int channels = variants[v][0], ps = variants[v][1];
    const gboolean with_input = variants[v][2];
    const gboolean other_size = variants[v][3] && s != SHAPE_ONE;
    const int out_w = other_size ? width - 4 : width;
    const int out_h = other_size ? height - 2 : height;
    const int64_t plane = (int64_t) out_w * out_h;
    const int64_t n_pixels = n_frames * plane;
    float *tensor;
    guint8 *in = NULL, *out;
    CbiKFrames f;
    CbiUnpackMap m;
    Compare cmp;
    int64_t i;

    /* the tail: one channel into RGB, 120 MB */
    if (s == SHAPE_TAIL && v != 0)
      continue;
    frames_format (&f, width, height, ps);
    tensor = g_new (float, n_frames * channels * plane);
    for (i = 0; i < n_frames * channels * plane; i++)
      tensor[i] = pattern (i, 1) / 3.0f;
    if (with_input) {
      in = g_new (guint8, count * ps);
      for (i = 0; i < count * ps; i++)
        in[i] = frame_byte (i);
    }
    out = g_new (guint8, n_pixels * ps);
    memset (out, 0x5a, n_pixels * ps);
    assert_cuda (cbi_k_unpack (tensor, in, out, &f, channels, out_w, out_h,
            n_frames, NULL));
    assert_launch (s, TRUE, FALSE, n_pixels);

    cbi_unpack_map_init (&m, channels, f.out_scale, f.out_offset);
    compare_init (&cmp, s,
        g_strdup_printf ("unpack of %d channels into %d bytes a pixel, "
            "%dx%d, input frames %d", channels, ps, out_w, out_h, with_input));
    for (i = 0; i < n_pixels * ps; i++) {
      const int64_t q = i / ps, frame = q / plane, p = q % plane;
      const int byte = (int) (i % ps);
      const float *src = tensor + frame * channels * plane + p;
      int c, want;

      for (c = 0; c < 3 && f.rgb_offset[c] != byte; c++);
      if (c < 3)
        want = cbi_to_byte (src[m.src[c] * plane], m.inv[c], m.off[c]);
      else if (channels == 4)
        want = cbi_to_byte (src[3 * plane], m.inv[3], m.off[3]);
      else if (with_input && !other_size)
        want = in[i];
      else
        want = 255;
      if (!compare (&cmp, i, out[i], want, 0.0))
        break;
    }
    compare_done (&cmp);
    g_free (tensor);
    g_free (in);
    g_free (out);
  }
}

GST_START_TEST
    (test_unpack_matches_cbimath_on_one_pixel_odd_frames_int64_and_the_tail) {
  for_each_shape (check_unpack);
}

GST_END_TEST;

/* ---- eltwise ---- */

static void
check_eltwise (Shape s)
{
  const int64_t n = s == SHAPE_ONE ? 1 : s == SHAPE_TAIL ? GRID_THREADS + 999 :
      7 * 5 * 3;
  int op;

  for (op = CBI_K_RELU; op <= CBI_K_ELTWISE_LAST; op++) {
    /* each op's parameters where it has some */
    const float alpha = op == CBI_K_CLIP ? -1.0f : op == CBI_K_POW ? 3.0f :
        op == CBI_K_RELU ? 0.125f : 0.5f;
    const float beta = op == CBI_K_CLIP ? 2.0f : 0.25f;
    /* odd ops out of place, even ones in place */
    const gboolean in_place = op % 2 == 0;
    float *x, *y;
    Compare cmp;
    int64_t i;

    /* the tail: one op, in place, 67 MB */
    if (s == SHAPE_TAIL && op != CBI_K_HARD_SWISH)
      continue;
    x = pattern_floats (n, op);
    y = in_place ? x : unwritten_floats (n);
    assert_cuda (cbi_k_eltwise (x, y, n, op, alpha, beta, NULL));
    assert_launch (s, FALSE, FALSE, n);

    compare_init (&cmp, s, g_strdup_printf ("eltwise op %d, in place %d", op,
            in_place));
    for (i = 0; i < n; i++)
      if (!compare (&cmp, i, y[i], cbi_eltwise (op, pattern (i, op), alpha,
                  beta), 0.0))
        break;
    compare_done (&cmp);
    if (!in_place)
      g_free (y);
    g_free (x);
  }
}

GST_START_TEST
    (test_eltwise_matches_cbimath_on_one_element_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_eltwise);
}

GST_END_TEST;

/* ---- binary ---- */

/* y = post (a op b) over @dims, b of @b_shape broadcast (numpy), in place
 * when @in_place; checked against cbi_binary () of each element */
static void
run_binary (Shape s, int rank, const int64_t * dims, const int64_t * b_shape,
    CbiKBinary op, CbiKEltwise post, gboolean in_place)
{
  int64_t strides[CBI_K_MAX_DIMS];
  const int64_t n = count_of (rank, dims);
  float *a = pattern_floats (n, 1);
  float *b = pattern_floats (count_of (rank, b_shape), 2);
  float *y = in_place ? a : unwritten_floats (n);
  gchar b_name[2 * CBI_K_MAX_DIMS + 1];
  Compare cmp;
  int64_t i;

  broadcast_strides (rank, b_shape, strides);
  assert_cuda (cbi_k_binary (a, b, y, rank, dims, strides, op, post, 0.5f,
          0.0f, NULL));
  assert_launch (s, TRUE, FALSE, n);

  compare_init (&cmp, s, g_strdup_printf ("binary op %d, post %d, b's dims%s",
          op, post, broadcast_name (rank, b_shape, b_name)));
  for (i = 0; i < n; i++) {
    float want = cbi_eltwise (post, cbi_binary (op, pattern (i, 1),
            b[offset_of (i, rank, dims, strides)]), 0.5f, 0.0f);
    if (!compare (&cmp, i, y[i], want, 0.0))
      break;
  }
  compare_done (&cmp);
  if (!in_place)
    g_free (y);
  g_free (a);
  g_free (b);
}

static void
check_binary (Shape s)
{
  const int64_t ones[4] = { 1, 1, 1, 1 }, odd[4] = { 3, 5, 7, 9 };
  const int64_t per_channel[4] = { 1, 5, 1, 1 };
  const int64_t tail[3] = { 7, 5, 479371 }, tail_b[3] = { 1, 5, 1 };
  int op;

  switch (s) {
    case SHAPE_ONE:
      run_binary (s, 0, ones, ones, CBI_K_SUB, CBI_K_IDENTITY, FALSE);
      run_binary (s, 4, ones, ones, CBI_K_DIV, CBI_K_RELU, TRUE);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      for (op = CBI_K_ADD; op <= CBI_K_BINARY_LAST; op++)
        run_binary (s, 4, odd, per_channel, op, op % 2 ? CBI_K_RELU :
            CBI_K_IDENTITY, op % 3 == 0);
      break;
    case SHAPE_TAIL:
      g_assert (count_of (3, tail) > GRID_THREADS);
      run_binary (s, 3, tail, tail_b, CBI_K_MUL, CBI_K_ELU, TRUE);
      break;
  }
}

GST_START_TEST
    (test_binary_matches_cbimath_on_one_element_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_binary);
}

GST_END_TEST;

/* b's shapes against a's [N, C, H, W]: scalar, per channel, per row, per
 * column, full, every frame the same (batch-broadcast), per frame, per
 * frame and row, per channel and column, per frame and channel, one
 * frame's plane; each dim 1 or a's (for an a with dims of 1 itself,
 * only those that fit) */
static const int64_t b_patterns[][4] = {
  {1, 1, 1, 1}, {1, 5, 1, 1}, {1, 1, 7, 1}, {1, 1, 1, 9}, {3, 5, 7, 9},
  {1, 5, 7, 9}, {3, 1, 1, 1}, {3, 1, 7, 1}, {1, 5, 1, 9}, {3, 5, 1, 1},
  {1, 1, 7, 9},
};

/* the pattern's dims that a's dims of 1 leave: 1 there, else its own */
static gboolean
pattern_fits (const int64_t * a_dims, const int64_t * pattern, int64_t * b)
{
  int j;

  for (j = 0; j < 4; j++) {
    if (pattern[j] != 1 && a_dims[j] == 1)
      return FALSE;
    b[j] = pattern[j];
  }
  return TRUE;
}

GST_START_TEST (test_binary_broadcasts_b_in_every_pattern_as_numpy)
{
  /* a full, and an a with dims of 1 itself */
  const int64_t a_dims[2][4] = { {3, 5, 7, 9}, {3, 1, 7, 1} };
  int path, d;
  gsize p;

  for (path = 0; path < 2; path++)
    for (d = 0; d < 2; d++)
      for (p = 0; p < G_N_ELEMENTS (b_patterns); p++) {
        const Shape s = path ? SHAPE_INT64 : SHAPE_ODD;
        int64_t b[4];

        if (!pattern_fits (a_dims[d], b_patterns[p], b))
          continue;
        cbi_k_host_int_limit = path ? 0 : G_MAXINT64;
        run_binary (s, 4, a_dims[d], b, CBI_K_SUB, CBI_K_IDENTITY, FALSE);
        run_binary (s, 4, a_dims[d], b, CBI_K_PRELU, CBI_K_IDENTITY, TRUE);
      }
}

GST_END_TEST;

/* ---- recurrent cells ---- */

/* One step of @op over @batch x @hidden units, x rows wider than the
 * gates (a direction's columns of a bidirectional product), with or
 * without a recurrent product and a previous h and c, against
 * cbi_recurrent_unit () run here. */
static void
run_cell (Shape s, CbiKCellOp op, int64_t batch, int64_t hidden,
    gboolean first_step)
{
  const int gates = op == CBI_K_CELL_LSTM ? 4 : op == CBI_K_CELL_RNN ? 1 : 3;
  const int64_t gh = gates * hidden, x_stride = 2 * gh, n = batch * hidden;
  float *x = pattern_floats (batch * x_stride, 1);
  float *r = pattern_floats (batch * gh, 2);
  float *bias = pattern_floats (gh, 3), *r_bias = pattern_floats (hidden, 4);
  float *h_prev = pattern_floats (n, 5), *c_prev = pattern_floats (n, 6);
  float *h = unwritten_floats (n), *c = unwritten_floats (n);
  float *want_h = unwritten_floats (n), *want_c = unwritten_floats (n);
  CbiKCell cell = { op, batch, hidden, x, x_stride, first_step ? NULL : r,
    gh, bias, r_bias, first_step ? NULL : h_prev, first_step ? NULL : c_prev,
    c, h, CBI_CELL_TANH_LIMIT
  };
  CbiKCell want = cell;
  Compare cmp;
  int64_t i;

  /* the patterns' range, down to what gates see in a trained layer */
  for (i = 0; i < batch * x_stride; i++)
    x[i] /= 4.0f;
  assert_cuda (cbi_k_recurrent_cell (&cell, NULL));
  if (s == SHAPE_TAIL) {
    /* on the small grid check_cells () sets */
    fail_unless_equals_int64 (cbi_k_host_last_launch.blocks, FIBER_TAIL_BLOCKS);
    fail_unless (n > FIBER_TAIL_BLOCKS * 256);
  } else {
    assert_launch (s, FALSE, FALSE, n);
  }
  want.h = want_h;
  want.c = want_c;
  for (i = 0; i < n; i++)
    cbi_recurrent_unit (&want, i);

  compare_init (&cmp, s, g_strdup_printf ("recurrent cell %d, %s step", op,
          first_step ? "first" : "later"));
  for (i = 0; i < n; i++)
    if (!compare (&cmp, i, h[i], want_h[i], 0.0)
        || (op == CBI_K_CELL_LSTM && !compare (&cmp, i, c[i], want_c[i], 0.0)))
      break;
  compare_done (&cmp);
  g_free (x);
  g_free (r);
  g_free (bias);
  g_free (r_bias);
  g_free (h_prev);
  g_free (c_prev);
  g_free (h);
  g_free (c);
  g_free (want_h);
  g_free (want_c);
}

static void
check_cells (Shape s)
{
  int op;

  for (op = CBI_K_CELL_LSTM; op <= CBI_K_CELL_RNN; op++)
    switch (s) {
      case SHAPE_ONE:
        run_cell (s, (CbiKCellOp) op, 1, 1, TRUE);
        run_cell (s, (CbiKCellOp) op, 1, 1, FALSE);
        break;
      case SHAPE_ODD:
      case SHAPE_INT64:
        run_cell (s, (CbiKCellOp) op, 3, 7, TRUE);
        run_cell (s, (CbiKCellOp) op, 5, 9, FALSE);
        break;
      case SHAPE_TAIL:
        /* a step has batch x hidden units, far fewer than 65535 blocks
         * of threads: the loop's tail on a grid of two blocks */
        cbi_k_host_max_blocks = FIBER_TAIL_BLOCKS;
        run_cell (s, (CbiKCellOp) op, 3, 199, FALSE);
        break;
    }
}

GST_START_TEST
    (test_recurrent_cell_matches_cbimath_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_cells);
}

GST_END_TEST;

GST_START_TEST (test_recurrent_cell_refuses_what_it_cannot_run)
{
  float v[12] = { 0, };
  CbiKCell ok = { CBI_K_CELL_LSTM, 1, 1, v, 4, NULL, 4, v, NULL, NULL, NULL,
    v + 4, v + 8, CBI_CELL_TANH_LIMIT
  };
  CbiKCell bad = ok;

  fail_unless_equals_int (cbi_k_recurrent_cell (&ok, NULL), cudaSuccess);
  fail_unless_equals_int (cbi_k_recurrent_cell (NULL, NULL),
      cudaErrorInvalidValue);
  bad.c = NULL;
  fail_unless_equals_int (cbi_k_recurrent_cell (&bad, NULL),
      cudaErrorInvalidValue);
  bad = ok;
  bad.op = (CbiKCellOp) 99;
  fail_unless_equals_int (cbi_k_recurrent_cell (&bad, NULL),
      cudaErrorInvalidValue);
  bad = ok;
  bad.hidden = 0;
  fail_unless_equals_int (cbi_k_recurrent_cell (&bad, NULL),
      cudaErrorInvalidValue);
}

GST_END_TEST;

/* ---- where ---- */

/* y = c ? a : b over @dims, c of @c_shape and b of @b_shape broadcast */
static void
run_where (Shape s, int rank, const int64_t * dims, const int64_t * c_shape,
    const int64_t * b_shape, gboolean in_place)
{
  int64_t c_strides[CBI_K_MAX_DIMS], b_strides[CBI_K_MAX_DIMS];
  const int64_t n = count_of (rank, dims), c_n = count_of (rank, c_shape);
  float *a = pattern_floats (n, 3);
  float *b = pattern_floats (count_of (rank, b_shape), 4);
  float *c = g_new (float, c_n);
  float *y = in_place ? a : unwritten_floats (n);
  gchar c_name[2 * CBI_K_MAX_DIMS + 1], b_name[2 * CBI_K_MAX_DIMS + 1];
  Compare cmp;
  int64_t i;

  /* true and false in no pattern of the dims */
  for (i = 0; i < c_n; i++)
    c[i] = pattern (i, 5) > 0.0f ? 1.0f : 0.0f;
  broadcast_strides (rank, c_shape, c_strides);
  broadcast_strides (rank, b_shape, b_strides);
  assert_cuda (cbi_k_where (c, a, b, y, rank, dims, b_strides, c_strides,
          NULL));
  assert_launch (s, FALSE, FALSE, n);

  compare_init (&cmp, s, g_strdup_printf ("where, c's dims%s, b's dims%s",
          broadcast_name (rank, c_shape, c_name), broadcast_name (rank, b_shape,
              b_name)));
  for (i = 0; i < n; i++) {
    float want = cbi_where (c[offset_of (i, rank, dims, c_strides)],
        pattern (i, 3), b[offset_of (i, rank, dims, b_strides)]);
    if (!compare (&cmp, i, y[i], want, 0.0))
      break;
  }
  compare_done (&cmp);
  if (!in_place)
    g_free (y);
  g_free (a);
  g_free (b);
  g_free (c);
}

static void
check_where (Shape s)
{
  const int64_t ones[3] = { 1, 1, 1 }, odd[3] = { 3, 5, 7 };
  const int64_t per_row[3] = { 1, 5, 1 };
  const int64_t tail[3] = { 7, 5, 479371 }, tail_c[3] = { 1, 1, 479371 };

  switch (s) {
    case SHAPE_ONE:
      run_where (s, 0, ones, ones, ones, FALSE);
      run_where (s, 3, ones, ones, ones, TRUE);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      run_where (s, 3, odd, per_row, ones, FALSE);
      run_where (s, 3, odd, odd, per_row, TRUE);
      break;
    case SHAPE_TAIL:
      g_assert (count_of (3, tail) > GRID_THREADS);
      run_where (s, 3, tail, tail_c, ones, TRUE);
      break;
  }
}

GST_START_TEST
    (test_where_matches_cbimath_on_one_element_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_where);
}

GST_END_TEST;

GST_START_TEST (test_where_broadcasts_condition_and_b_in_every_pattern_as_numpy)
{
  /* a full, and an a with a dim of 1 itself */
  const int64_t a_dims[2][3] = { {3, 5, 7}, {3, 1, 7} };
  int d, cp, bp, j;

  /* every subset of the dims broadcast, for each of c and b */
  for (d = 0; d < 2; d++)
    for (cp = 0; cp < 8; cp++)
      for (bp = 0; bp < 8; bp++) {
        int64_t c_shape[3], b_shape[3];

        for (j = 0; j < 3; j++) {
          c_shape[j] = cp & (1 << j) ? 1 : a_dims[d][j];
          b_shape[j] = bp & (1 << j) ? 1 : a_dims[d][j];
        }
        run_where (SHAPE_ODD, 3, a_dims[d], c_shape, b_shape, (cp + bp) % 2);
      }
}

GST_END_TEST;

/* ---- permute ---- */

/* y = x transposed by @perm; checked by unravelling each index of y */
static void
run_permute (Shape s, int rank, const int64_t * dims, const int64_t * perm)
{
  int64_t y_dims[CBI_K_MAX_DIMS], x_strides[CBI_K_MAX_DIMS];
  int64_t row_major[CBI_K_MAX_DIMS], st = 1;
  const int64_t n = count_of (rank, dims);
  float *x = pattern_floats (n, 6), *y = unwritten_floats (n);
  gchar perm_name[CBI_K_MAX_DIMS + 1];
  Compare cmp;
  int64_t i;
  int j;

  for (j = rank - 1; j >= 0; j--) {
    row_major[j] = st;
    st *= dims[j];
  }
  for (j = 0; j < rank; j++) {
    y_dims[j] = dims[perm[j]];
    x_strides[j] = row_major[perm[j]];
  }
  assert_cuda (cbi_k_permute (x, y, rank, dims, perm, NULL));
  assert_launch (s, TRUE, FALSE, n);

  for (j = 0; j < rank; j++)
    perm_name[j] = (gchar) ('0' + perm[j]);
  perm_name[rank] = '\0';
  compare_init (&cmp, s, g_strdup_printf ("permute of rank %d by %s", rank,
          perm_name));
  for (i = 0; i < n; i++)
    if (!compare (&cmp, i, y[i], x[offset_of (i, rank, y_dims, x_strides)],
            0.0))
      break;
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
check_permute (Shape s)
{
  const int64_t ones[4] = { 1, 1, 1, 1 }, reverse[4] = { 3, 2, 1, 0 };
  const int64_t odd[4] = { 3, 5, 7, 9 };
  /* DepthToSpace (DCR) of [1, 2 x 2 x 3, 5, 7]: a 6-D view */
  const int64_t d2s[6] = { 1, 2, 2, 3, 5, 7 }, d2s_perm[6] = { 0, 3, 4, 1, 5,
    2
  };
  const int64_t tail[3] = { 7, 5, 479371 }, tail_perm[3] = { 2, 0, 1 };
  int64_t perm[4];
  int k;

  switch (s) {
    case SHAPE_ONE:
      run_permute (s, 0, ones, reverse);
      run_permute (s, 4, ones, reverse);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      /* all 24 permutations of 4 dims */
      for (k = 0; k < 24; k++) {
        int left[4] = { 0, 1, 2, 3 }, r = k, j, m;

        for (j = 0; j < 4; j++) {
          int pick = r % (4 - j);

          r /= 4 - j;
          perm[j] = left[pick];
          for (m = pick; m < 3 - j; m++)
            left[m] = left[m + 1];
        }
        run_permute (s, 4, odd, perm);
      }
      run_permute (s, 6, d2s, d2s_perm);
      break;
    case SHAPE_TAIL:
      run_permute (s, 3, tail, tail_perm);
      break;
  }
}

GST_START_TEST
    (test_permute_moves_every_element_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_permute);
}

GST_END_TEST;

/* ---- concat ---- */

static void
run_concat (Shape s, int64_t outer, int64_t x_inner, int64_t y_inner,
    int64_t offset)
{
  float *x = pattern_floats (outer * x_inner, 7);
  /* the columns of the other inputs, which must stay */
  float *y = pattern_floats (outer * y_inner, 8);
  Compare cmp;
  int64_t i;

  assert_cuda (cbi_k_concat (x, y, outer, x_inner, y_inner, offset, NULL));
  assert_launch (s, TRUE, FALSE, outer * x_inner);

  compare_init (&cmp, s,
      g_strdup_printf ("concat of %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
          " into columns %" G_GINT64_FORMAT ".. of %" G_GINT64_FORMAT, outer,
          x_inner, offset, y_inner));
  for (i = 0; i < outer * y_inner; i++) {
    const int64_t row = i / y_inner, col = i % y_inner;
    float want = col >= offset && col < offset + x_inner ?
        pattern (row * x_inner + col - offset, 7) : pattern (i, 8);
    if (!compare (&cmp, i, y[i], want, 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
check_concat (Shape s)
{
  switch (s) {
    case SHAPE_ONE:
      run_concat (s, 1, 1, 1, 0);
      run_concat (s, 1, 1, 3, 2);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      run_concat (s, 15, 63, 100, 0);
      run_concat (s, 15, 63, 100, 17);
      run_concat (s, 15, 63, 100, 37);
      run_concat (s, 7, 5, 5, 0);
      break;
    case SHAPE_TAIL:
      run_concat (s, 7, 2396855, 2396858, 1);
      break;
  }
}

GST_START_TEST
    (test_concat_fills_its_columns_only_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_concat);
}

GST_END_TEST;

/* ---- copy ---- */

/* y of @dims read from x at @offset + index x @strides, the index along
 * @axis through @index (as device memory, cbi_k_copy_long (), when
 * @long_list); x has @x_n values */
static void
run_copy_as (Shape s, int rank, const int64_t * dims, const int64_t * strides,
    int64_t offset, int axis, const int64_t * index, int64_t x_n,
    gboolean long_list)
{
  const int64_t n = count_of (rank, dims);
  float *x = pattern_floats (x_n, 9), *y = unwritten_floats (n);
  const int n_index = axis >= 0 ? (int) dims[axis] : 0;
  Compare cmp;
  int64_t i;

  if (long_list) {
    assert_cuda (cbi_k_copy_long (x, y, rank, dims, strides, offset, axis,
            n_index, index, NULL));
  } else {
    assert_cuda (cbi_k_copy (x, y, rank, dims, strides, offset, axis,
            n_index, index, NULL));
  }
  assert_launch (s, FALSE, FALSE, n);

  compare_init (&cmp, s, g_strdup_printf ("copy of rank %d, axis %d", rank,
          axis));
  for (i = 0; i < n; i++) {
    int64_t rest = i, off = offset;
    int d;

    for (d = rank - 1; d >= 0; d--) {
      int64_t k = rest % dims[d];

      rest /= dims[d];
      off += (d == axis ? index[k] : k) * strides[d];
    }
    g_assert (off >= 0 && off < x_n);
    if (!compare (&cmp, i, y[i], x[off], 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
run_copy (Shape s, int rank, const int64_t * dims, const int64_t * strides,
    int64_t offset, int axis, const int64_t * index, int64_t x_n)
{
  run_copy_as (s, rank, dims, strides, offset, axis, index, x_n, FALSE);
}

static void
check_copy (Shape s)
{
  const int64_t one[1] = { 1 }, unit[1] = { 1 };
  /* x is [3, 5, 7, 9]: channels 1 and 3, rows 6, 4, 2, 0 */
  const int64_t slice[4] = { 3, 2, 4, 9 }, slice_st[4] = { 315, 126, -18, 1 };
  /* channels 4, 0, 3, 1, 2, 2, 0 */
  const int64_t gather[4] = { 3, 7, 7, 9 }, gather_st[4] = { 315, 63, 9, 1 };
  const int64_t gather_i[7] = { 4, 0, 3, 1, 2, 2, 0 };
  /* [5, 1] expanded to [3, 5, 7] */
  const int64_t expand[3] = { 3, 5, 7 }, expand_st[3] = { 0, 1, 0 };
  /* 5 values, gathered along the rows, each row one repeated */
  const int64_t tail[2] = { 5, 3355597 }, tail_st[2] = { 1, 0 };
  const int64_t tail_i[5] = { 4, 0, 3, 1, 2 };
  /* 100 columns of [3, 7, 80] gathered (more than a view holds: a
   * Gather of indices computed from a width), backwards and repeated */
  const int64_t wide[3] = { 3, 7, 100 }, wide_st[3] = { 560, 80, 1 };
  int64_t wide_i[100];
  int k;

  for (k = 0; k < 100; k++)
    wide_i[k] = (79 - k * 3 % 80 + 80) % 80;
  switch (s) {
    case SHAPE_ONE:
      run_copy (s, 0, one, unit, 0, -1, NULL, 1);
      run_copy (s, 1, one, unit, 2, -1, NULL, 3);
      run_copy (s, 1, one, unit, 0, 0, tail_i + 2, 4);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      run_copy (s, 4, slice, slice_st, 63 + 6 * 9, -1, NULL, 945);
      run_copy (s, 4, gather, gather_st, 0, 1, gather_i, 945);
      run_copy (s, 3, expand, expand_st, 0, -1, NULL, 5);
      run_copy_as (s, 3, wide, wide_st, 0, 2, wide_i, 3 * 7 * 80, TRUE);
      break;
    case SHAPE_TAIL:
      g_assert (count_of (2, tail) > GRID_THREADS);
      run_copy (s, 2, tail, tail_st, 0, 0, tail_i, 5);
      break;
  }
}

GST_START_TEST
    (test_copy_slices_gathers_and_expands_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_copy);
}

GST_END_TEST;

/* ---- pad ---- */

/* numpy.pad's source index along an axis of @size, -1 for the constant */
static int64_t
numpy_pad_index (int64_t i, int64_t size, CbiKPadFill fill)
{
  if (i >= 0 && i < size)
    return i;
  if (fill == CBI_K_PAD_CONSTANT)
    return -1;
  if (fill == CBI_K_PAD_EDGE)
    return i < 0 ? 0 : size - 1;
  /* reflect: mirrored about the border, which is not repeated */
  return i < 0 ? -i : 2 * (size - 1) - i;
}

static void
run_pad (Shape s, int64_t planes, int height, int width, const int *pads,
    CbiKPadFill fill)
{
  const int top = pads[0], left = pads[1], bottom = pads[2], right = pads[3];
  const int64_t out_h = height + top + bottom, out_w = width + left + right;
  const int64_t n = planes * out_h * out_w;
  float *x = pattern_floats (planes * height * width, 10);
  float *y = unwritten_floats (n);
  Compare cmp;
  int64_t i;

  assert_cuda (cbi_k_pad (x, y, planes, height, width, top, left, bottom,
          right, fill, 0.5f, NULL));
  assert_launch (s, TRUE, FALSE, n);

  compare_init (&cmp, s, g_strdup_printf ("pad %d of %dx%d by %d %d %d %d",
          fill, height, width, top, left, bottom, right));
  for (i = 0; i < n; i++) {
    const int64_t p = i / (out_h * out_w), r = i % (out_h * out_w);
    const int64_t sy = numpy_pad_index (r / out_w - top, height, fill);
    const int64_t sx = numpy_pad_index (r % out_w - left, width, fill);
    float want = sy < 0 || sx < 0 ? 0.5f : x[(p * height + sy) * width + sx];
    if (!compare (&cmp, i, y[i], want, 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
check_pad (Shape s)
{
  const int none[4] = { 0, 0, 0, 0 }, crop_to_one[4] = { -1, -1, -1, -1 };
  const int grow[4] = { 2, 3, 1, 4 }, crop[4] = { -1, 2, -2, -3 };
  const int tail[4] = { 912, 912, 912, 912 };
  int fill;

  for (fill = CBI_K_PAD_CONSTANT; fill <= CBI_K_PAD_EDGE; fill++) {
    switch (s) {
      case SHAPE_ONE:
        run_pad (s, 1, 1, 1, none, fill);
        run_pad (s, 1, 3, 3, crop_to_one, fill);
        break;
      case SHAPE_ODD:
      case SHAPE_INT64:
        run_pad (s, 15, 7, 9, grow, fill);
        run_pad (s, 15, 7, 9, crop, fill);
        break;
      case SHAPE_TAIL:
        /* the border repeated out to 1831 x 1833: 67 MB */
        if (fill == CBI_K_PAD_EDGE)
          run_pad (s, 5, 7, 9, tail, fill);
        break;
    }
  }
}

GST_START_TEST (test_pad_fills_as_numpy_pad_at_one_odd_sizes_int64_and_the_tail)
{
  for_each_shape (check_pad);
}

GST_END_TEST;

/* ---- pool ---- */

static void
run_pool (Shape s, int64_t planes, int height, int width, int out_h,
    int out_w, const CbiKPool * p)
{
  const int64_t n = planes * out_h * out_w;
  float *x = pattern_floats (planes * height * width, 11);
  float *y = unwritten_floats (n);
  Compare cmp;
  int64_t i;

  assert_cuda (cbi_k_pool (x, y, planes, height, width, out_h, out_w, p, NULL));
  assert_launch (s, FALSE, FALSE, n);

  compare_init (&cmp, s,
      g_strdup_printf ("pool (max %d, count pads %d) of %dx%d into %dx%d",
          p->max, p->count_pad, height, width, out_h, out_w));
  for (i = 0; i < n; i++) {
    const int64_t plane = i / ((int64_t) out_h * out_w);
    const int64_t r = i % ((int64_t) out_h * out_w);
    float want = cbi_pool_at (x + plane * height * width, height, width,
        r / out_w, r % out_w, p);
    if (!compare (&cmp, i, y[i], want, 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
check_pool (Shape s)
{
  /* kernel, stride, dilation, pad, max, count_pad */
  CbiKPool one = { {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 0 };
  CbiKPool odd = { {3, 2}, {2, 1}, {2, 1}, {1, 2}, 1, 0 };
  /* windows far past the plane, which have no taps */
  CbiKPool tail = { {3, 3}, {1, 1}, {1, 1}, {912, 912}, 1, 0 };
  int v;

  /* max, average of the taps, average of the whole window */
  for (v = 0; v < 3; v++) {
    one.max = odd.max = v == 0;
    one.count_pad = odd.count_pad = v == 2;
    switch (s) {
      case SHAPE_ONE:
        run_pool (s, 1, 1, 1, 1, 1, &one);
        break;
      case SHAPE_ODD:
      case SHAPE_INT64:
        /* past the bottom and right pads: windows with no taps */
        run_pool (s, 15, 7, 9, 5, 12, &odd);
        break;
      case SHAPE_TAIL:
        if (v == 0)
          run_pool (s, 5, 7, 9, 1831, 1833, &tail);
        break;
    }
  }
}

GST_START_TEST
    (test_pool_matches_cbimath_windows_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_pool);
}

GST_END_TEST;

/* ---- resize ---- */

static void
run_resize (Shape s, int64_t planes, int in_h, int in_w, int out_h, int out_w,
    int linear)
{
  const float scale_h = (float) out_h / in_h, scale_w = (float) out_w / in_w;
  const int64_t n = planes * out_h * out_w;
  float *x = pattern_floats (planes * in_h * in_w, 12);
  float *y = unwritten_floats (n);
  Compare cmp;
  int64_t i;

  assert_cuda (cbi_k_resize (x, y, planes, in_h, in_w, out_h, out_w, scale_h,
          scale_w, linear, NULL));
  assert_launch (s, TRUE, FALSE, n);

  compare_init (&cmp, s,
      g_strdup_printf ("resize (linear %d) of %dx%d to %dx%d", linear, in_h,
          in_w, out_h, out_w));
  for (i = 0; i < n; i++) {
    const int64_t p = i / ((int64_t) out_h * out_w);
    const int64_t r = i % ((int64_t) out_h * out_w);
    const float *src = x + p * in_h * in_w;
    float want;

    if (linear) {
      CbiLinearTap h = cbi_resize_linear (r / out_w, scale_h, in_h);
      CbiLinearTap w = cbi_resize_linear (r % out_w, scale_w, in_w);

      want = cbi_bilinear (src[h.i0 * in_w + w.i0], src[h.i0 * in_w + w.i1],
          src[h.i1 * in_w + w.i0], src[h.i1 * in_w + w.i1], h, w);
    } else {
      want = src[cbi_resize_nearest (r / out_w, scale_h, in_h) * in_w
          + cbi_resize_nearest (r % out_w, scale_w, in_w)];
    }
    if (!compare (&cmp, i, y[i], want, 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
check_resize (Shape s)
{
  int linear;

  for (linear = 0; linear < 2; linear++) {
    switch (s) {
      case SHAPE_ONE:
        run_resize (s, 1, 1, 1, 1, 1, linear);
        break;
      case SHAPE_ODD:
      case SHAPE_INT64:
        run_resize (s, 15, 7, 9, 14, 27, linear);
        run_resize (s, 15, 7, 9, 3, 4, linear);
        run_resize (s, 15, 7, 9, 10, 13, linear);
        break;
      case SHAPE_TAIL:
        if (linear)
          run_resize (s, 5, 611, 611, 1832, 1833, linear);
        break;
    }
  }
}

GST_START_TEST
    (test_resize_matches_cbimath_taps_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_resize);
}

GST_END_TEST;

/* ---- softmax ---- */

static void
run_softmax (Shape s, int64_t outer, int64_t axis, int64_t inner,
    gboolean in_place)
{
  const int64_t n = outer * axis * inner;
  float *x = pattern_floats (n, 13), *y = in_place ? x : unwritten_floats (n);
  Compare cmp;
  int64_t o, j;

  assert_cuda (cbi_k_softmax (x, y, outer, axis, inner, NULL));
  /* a warp a row, or a thread a column */
  assert_launch (s, FALSE, inner == 1, inner == 1 ? outer * 32 : outer * inner);

  compare_init (&cmp, s,
      g_strdup_printf ("softmax of %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
          " x %" G_GINT64_FORMAT, outer, axis, inner));
  for (o = 0; o < outer * inner && cmp.bad < 0; o++) {
    const int64_t base = o / inner * axis * inner + o % inner;
    double m = -INFINITY, sum = 0.0;
    int64_t k;

    for (k = 0; k < axis; k++)
      m = fmax (m, pattern (base + k * inner, 13));
    for (k = 0; k < axis; k++)
      sum += exp (pattern (base + k * inner, 13) - m);
    for (k = 0; k < axis; k++) {
      j = base + k * inner;
      if (!compare (&cmp, j, y[j], exp (pattern (j, 13) - m) / sum, 2e-6))
        break;
    }
  }
  compare_done (&cmp);
  if (!in_place)
    g_free (y);
  g_free (x);
}

static void
check_softmax (Shape s)
{
  switch (s) {
    case SHAPE_ONE:
      run_softmax (s, 1, 1, 1, FALSE);
      run_softmax (s, 1, 1, 2, FALSE);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      /* rows shorter and longer than a warp */
      run_softmax (s, 105, 9, 1, FALSE);
      run_softmax (s, 15, 37, 1, TRUE);
      run_softmax (s, 3, 5, 63, FALSE);
      run_softmax (s, 1, 7, 9, TRUE);
      break;
    case SHAPE_TAIL:
      /* columns past the grid, in place: 134 MB */
      run_softmax (s, 7, 2, 2396855, TRUE);
      /* 105 rows on 2 blocks of 8 warps */
      cbi_k_host_max_blocks = FIBER_TAIL_BLOCKS;
      run_softmax (s, 105, 37, 1, FALSE);
      break;
  }
}

GST_START_TEST (test_softmax_sums_to_one_at_one_odd_sizes_int64_and_the_tails)
{
  for_each_shape (check_softmax);
}

GST_END_TEST;

/* ---- instance normalisation ---- */

static void
run_instance_norm (Shape s, int64_t n, int64_t c, int64_t hw)
{
  const int64_t count = n * c * hw;
  float *x = pattern_floats (count, 14), *y = unwritten_floats (count);
  float *gamma = pattern_floats (c, 15), *beta = pattern_floats (c, 16);
  Compare cmp;
  int64_t p, k;

  assert_cuda (cbi_k_instance_norm (x, y, n, c, hw, gamma, beta, 1e-5f, NULL));
  /* a block a plane */
  assert_launch (s, FALSE, TRUE, n * c * 256);

  compare_init (&cmp, s,
      g_strdup_printf ("instance norm of %" G_GINT64_FORMAT " x %"
          G_GINT64_FORMAT " planes of %" G_GINT64_FORMAT, n, c, hw));
  for (p = 0; p < n * c && cmp.bad < 0; p++) {
    const float *xp = x + p * hw;
    double mean = 0.0, var = 0.0, factor;

    for (k = 0; k < hw; k++)
      mean += xp[k];
    mean /= hw;
    for (k = 0; k < hw; k++)
      var += (xp[k] - mean) * (xp[k] - mean);
    factor = gamma[p % c] / sqrt (var / hw + 1e-5);
    for (k = 0; k < hw; k++)
      if (!compare (&cmp, p * hw + k, y[p * hw + k], factor * (xp[k] - mean)
              + beta[p % c], 2e-5))
        break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
  g_free (gamma);
  g_free (beta);
}

static void
check_instance_norm (Shape s)
{
  switch (s) {
    case SHAPE_ONE:
      run_instance_norm (s, 1, 1, 1);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      /* planes smaller and larger than a block */
      run_instance_norm (s, 3, 5, 63);
      run_instance_norm (s, 1, 3, 7 * 77);
      break;
    case SHAPE_TAIL:
      /* 15 planes on 2 blocks */
      cbi_k_host_max_blocks = FIBER_TAIL_BLOCKS;
      run_instance_norm (s, 3, 5, 63);
      break;
  }
}

GST_START_TEST
    (test_instance_norm_normalises_every_plane_at_one_odd_sizes_and_the_tail) {
  for_each_shape (check_instance_norm);
}

GST_END_TEST;

/* ---- layer normalisation ---- */

static void
run_layer_norm (Shape s, int64_t rows, int64_t inner, gboolean with_beta)
{
  const int64_t count = rows * inner;
  float *x = pattern_floats (count, 17), *y = unwritten_floats (count);
  float *gamma = pattern_floats (inner, 18), *beta = pattern_floats (inner, 19);
  Compare cmp;
  int64_t r, k;

  assert_cuda (cbi_k_layer_norm (x, y, rows, inner, gamma, with_beta ? beta :
          NULL, 1e-5f, NULL));
  /* a warp a row */
  assert_launch (s, FALSE, TRUE, rows * 32);

  compare_init (&cmp, s,
      g_strdup_printf ("layer norm of %" G_GINT64_FORMAT " rows of %"
          G_GINT64_FORMAT ", beta %d", rows, inner, with_beta));
  for (r = 0; r < rows && cmp.bad < 0; r++) {
    const float *xr = x + r * inner;
    double mean = 0.0, var = 0.0;

    for (k = 0; k < inner; k++)
      mean += xr[k];
    mean /= inner;
    for (k = 0; k < inner; k++)
      var += (xr[k] - mean) * (xr[k] - mean);
    var /= inner;
    for (k = 0; k < inner; k++) {
      double want = gamma[k] / sqrt (var + 1e-5) * (xr[k] - mean)
          + (with_beta ? beta[k] : 0.0);
      if (!compare (&cmp, r * inner + k, y[r * inner + k], want, 2e-5))
        break;
    }
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
  g_free (gamma);
  g_free (beta);
}

static void
check_layer_norm (Shape s)
{
  switch (s) {
    case SHAPE_ONE:
      run_layer_norm (s, 1, 1, TRUE);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      /* rows shorter and longer than a warp */
      run_layer_norm (s, 105, 9, TRUE);
      run_layer_norm (s, 15, 63, FALSE);
      run_layer_norm (s, 7, 5, TRUE);
      break;
    case SHAPE_TAIL:
      /* 105 rows on 2 blocks of 8 warps */
      cbi_k_host_max_blocks = FIBER_TAIL_BLOCKS;
      run_layer_norm (s, 105, 37, TRUE);
      break;
  }
}

GST_START_TEST
    (test_layer_norm_normalises_every_row_at_one_odd_sizes_and_the_tail) {
  for_each_shape (check_layer_norm);
}

GST_END_TEST;

/* ---- bias and activation ---- */

static void
run_bias_act (Shape s, int64_t n, int64_t c, int64_t hw, gboolean with_bias,
    CbiKEltwise post)
{
  const int64_t count = n * c * hw;
  float *y = pattern_floats (count, 20), *bias = pattern_floats (c, 21);
  Compare cmp;
  int64_t i;

  assert_cuda (cbi_k_bias_act (y, with_bias ? bias : NULL, n, c, hw, post,
          0.5f, 0.25f, NULL));
  assert_launch (s, TRUE, FALSE, count);

  compare_init (&cmp, s,
      g_strdup_printf ("bias %d and activation %d of %" G_GINT64_FORMAT " x %"
          G_GINT64_FORMAT " x %" G_GINT64_FORMAT, with_bias, post, n, c, hw));
  for (i = 0; i < count; i++) {
    float b = with_bias ? bias[i / hw % c] : 0.0f;
    if (!compare (&cmp, i, y[i], cbi_eltwise (post, pattern (i, 20) + b, 0.5f,
                0.25f), 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (y);
  g_free (bias);
}

static void
check_bias_act (Shape s)
{
  switch (s) {
    case SHAPE_ONE:
      run_bias_act (s, 1, 1, 1, TRUE, CBI_K_RELU);
      run_bias_act (s, 1, 1, 1, FALSE, CBI_K_SIGMOID);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      run_bias_act (s, 3, 5, 63, TRUE, CBI_K_ELU);
      run_bias_act (s, 3, 5, 63, FALSE, CBI_K_RELU);
      run_bias_act (s, 7, 3, 1, TRUE, CBI_K_IDENTITY);
      break;
    case SHAPE_TAIL:
      run_bias_act (s, 7, 5, 479371, TRUE, CBI_K_HARD_SIGMOID);
      break;
  }
}

GST_START_TEST
    (test_bias_act_adds_per_channel_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_bias_act);
}

GST_END_TEST;

/* ---- 16-bit floats, channels last ---- */

/* the reference walks the tensors in NCHW order, the kernels the other:
 * float32 NCHW in and out, 16-bit channels last, every value of the
 * pattern scaled past fp16's largest (65504) on one side of zero */
static void
run_half (Shape s, int64_t n, int64_t c, int64_t hw, CbiKHalf type,
    gboolean with_bias, CbiKEltwise post)
{
  const int64_t count = n * c * hw;
  float *x = pattern_floats (count, 23), *y = unwritten_floats (count);
  float *bias = pattern_floats (c, 24);
  uint16_t *h = g_new (uint16_t, MAX (count, 1));
  Compare cmp;
  int64_t b, ch, p, bad = -1;

  for (p = 0; p < count; p++)
    x[p] *= 16384.0f;
  memset (h, 0xaa, MAX (count, 1) * sizeof (uint16_t));
  assert_cuda (cbi_k_to_half (x, h, n, c, hw, type, NULL));
  assert_launch (s, TRUE, FALSE, count);
  for (b = 0; b < n && bad < 0; b++)
    for (ch = 0; ch < c && bad < 0; ch++)
      for (p = 0; p < hw; p++)
        if (h[(b * hw + p) * c + ch] != cbi_half_from_float (type,
                x[(b * c + ch) * hw + p])) {
          bad = (b * c + ch) * hw + p;
          break;
        }
  fail_unless (bad < 0, "to half %d of %" G_GINT64_FORMAT " x %"
      G_GINT64_FORMAT " x %" G_GINT64_FORMAT " (%s): NCHW [%" G_GINT64_FORMAT
      "] is not where channels last puts it", type, n, c, hw, shape_names[s],
      bad);

  assert_cuda (cbi_k_from_half (h, y, with_bias ? bias : NULL, n, c, hw, type,
          post, 0.5f, 0.25f, NULL));
  assert_launch (s, TRUE, FALSE, count);
  compare_init (&cmp, s, g_strdup_printf ("from half %d, bias %d and "
          "activation %d of %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " x %"
          G_GINT64_FORMAT, type, with_bias, post, n, c, hw));
  for (b = 0, bad = -1; b < n && bad < 0; b++)
    for (ch = 0; ch < c && bad < 0; ch++)
      for (p = 0; p < hw; p++) {
        int64_t i = (b * c + ch) * hw + p;
        float v = cbi_half_to_float (type, cbi_half_from_float (type, x[i]));
        if (!compare (&cmp, i, y[i], cbi_eltwise (post, v + (with_bias ?
                        bias[ch] : 0.0f), 0.5f, 0.25f), 0.0)) {
          bad = i;
          break;
        }
      }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
  g_free (h);
  g_free (bias);
}

static void
check_half (Shape s)
{
  switch (s) {
    case SHAPE_ONE:
      run_half (s, 1, 1, 1, CBI_K_HALF_FP16, TRUE, CBI_K_IDENTITY);
      run_half (s, 1, 1, 1, CBI_K_HALF_BF16, FALSE, CBI_K_RELU);
      break;
    case SHAPE_ODD:
    case SHAPE_INT64:
      run_half (s, 3, 5, 63, CBI_K_HALF_FP16, TRUE, CBI_K_RELU);
      run_half (s, 3, 5, 63, CBI_K_HALF_BF16, TRUE, CBI_K_IDENTITY);
      run_half (s, 2, 7, 1, CBI_K_HALF_FP16, FALSE, CBI_K_SIGMOID);
      break;
    case SHAPE_TAIL:
      run_half (s, 3, 7, 799001, CBI_K_HALF_FP16, TRUE, CBI_K_CLIP);
      break;
  }
}

GST_START_TEST (test_half_kernels_move_channels_last_and_back_and_overflow)
{
  for_each_shape (check_half);
}

GST_END_TEST;

/* ---- reduce ---- */

static void
run_reduce (Shape s, int64_t outer, int64_t r, int64_t inner, CbiKReduce op)
{
  const int64_t n = outer * inner;
  float *x = pattern_floats (outer * r * inner, 22), *y = unwritten_floats (n);
  Compare cmp;
  int64_t i;

  assert_cuda (cbi_k_reduce (x, y, outer, r, inner, op, NULL));
  assert_launch (s, FALSE, FALSE, n);

  compare_init (&cmp, s,
      g_strdup_printf ("reduce %d of %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
          " x %" G_GINT64_FORMAT, op, outer, r, inner));
  for (i = 0; i < n; i++) {
    const float *column = x + i / inner * r * inner + i % inner;
    if (!compare (&cmp, i, y[i], cbi_reduce (op, column, r, inner), 0.0))
      break;
  }
  compare_done (&cmp);
  g_free (x);
  g_free (y);
}

static void
check_reduce (Shape s)
{
  int op;

  for (op = CBI_K_REDUCE_MEAN; op <= CBI_K_REDUCE_ARGMAX_LAST; op++) {
    switch (s) {
      case SHAPE_ONE:
        run_reduce (s, 1, 1, 1, op);
        break;
      case SHAPE_ODD:
      case SHAPE_INT64:
        run_reduce (s, 3, 5, 63, op);
        run_reduce (s, 15, 9, 1, op);
        run_reduce (s, 1, 7, 5, op);
        break;
      case SHAPE_TAIL:
        /* 200 MB */
        if (op == CBI_K_REDUCE_MAX)
          run_reduce (s, 7, 2, 2396855, op);
        break;
    }
  }
}

GST_START_TEST
    (test_reduce_matches_cbimath_columns_at_one_odd_sizes_int64_and_the_tail) {
  for_each_shape (check_reduce);
}

GST_END_TEST;

static Suite *
kernels_host_suite (void)
{
  Suite *s = suite_create ("kernels-host");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, NULL, reset_knobs);
  tcase_add_test (tc,
      test_pack_matches_cbimath_on_one_pixel_odd_frames_int64_and_the_tail);
  tcase_add_test (tc,
      test_pack_yuv_matches_cbimath_on_one_pixel_odd_frames_int64_and_the_tail);
  tcase_add_test (tc,
      test_unpack_matches_cbimath_on_one_pixel_odd_frames_int64_and_the_tail);
  tcase_add_test (tc,
      test_eltwise_matches_cbimath_on_one_element_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_binary_matches_cbimath_on_one_element_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc, test_binary_broadcasts_b_in_every_pattern_as_numpy);
  tcase_add_test (tc,
      test_where_matches_cbimath_on_one_element_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_where_broadcasts_condition_and_b_in_every_pattern_as_numpy);
  tcase_add_test (tc,
      test_recurrent_cell_matches_cbimath_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc, test_recurrent_cell_refuses_what_it_cannot_run);
  tcase_add_test (tc,
      test_permute_moves_every_element_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_concat_fills_its_columns_only_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_copy_slices_gathers_and_expands_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_pad_fills_as_numpy_pad_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_pool_matches_cbimath_windows_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_resize_matches_cbimath_taps_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_softmax_sums_to_one_at_one_odd_sizes_int64_and_the_tails);
  tcase_add_test (tc,
      test_instance_norm_normalises_every_plane_at_one_odd_sizes_and_the_tail);
  tcase_add_test (tc,
      test_layer_norm_normalises_every_row_at_one_odd_sizes_and_the_tail);
  tcase_add_test (tc,
      test_bias_act_adds_per_channel_at_one_odd_sizes_int64_and_the_tail);
  tcase_add_test (tc,
      test_half_kernels_move_channels_last_and_back_and_overflow);
  tcase_add_test (tc,
      test_reduce_matches_cbimath_columns_at_one_odd_sizes_int64_and_the_tail);
  return s;
}

GST_CHECK_MAIN (kernels_host);
