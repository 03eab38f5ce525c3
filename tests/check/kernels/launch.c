/* GStreamer cudabatchinfer: the CUDA kernels' launchers (kernels/)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * On any machine: a launcher with nothing to do returns cudaSuccess, one
 * given arguments it cannot run returns cudaErrorInvalidValue, both
 * without a CUDA call, and a real launch without a GPU returns a CUDA
 * error, never an abort. On a machine with a GPU every kernel's output is
 * checked against the CPU math of math/cbimath.h and plain loops;
 * without one those tests are not registered (the program says so), and
 * the test of a launch without a device is registered only there.
 * (tests/check/kernels/host.c runs every kernel on the CPU, on any
 * machine.)
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cbichildprobe.h"
#include "cbibroadcastref.h"
#include "cbikernels.h"

/* The probe, in a child: why there is no CUDA device, or %NULL. */
static gchar *
no_device_reason (void)
{
  cudaError_t e;
  int n = 0;

  e = cudaGetDeviceCount (&n);
  if (e == cudaSuccess && n > 0)
    return NULL;
  return g_strdup (e == cudaSuccess ? "none found" : cudaGetErrorString (e));
}

/* Whether a CUDA device is here; says which tests are left out and why
 * when there is none. Asked in a child: CUDA initialised here would not
 * work in the tests check forks from this process. */
static gboolean
have_device (void)
{
  gchar *why = cbi_test_probe_in_child (no_device_reason);

  if (why == NULL)
    return TRUE;
  g_print ("SKIP the tests on a device: no CUDA device (%s)\n", why);
  g_free (why);
  return FALSE;
}

#define assert_cuda(call) fail_unless_equals_int ((call), cudaSuccess)

static gpointer
to_device (gconstpointer host, gsize bytes)
{
  void *d = NULL;

  assert_cuda (cudaMalloc (&d, MAX (bytes, 1)));
  if (host) {
    assert_cuda (cudaMemcpy (d, host, bytes, cudaMemcpyHostToDevice));
  } else {
    assert_cuda (cudaMemset (d, 0, bytes));
  }
  return d;
}

/* waits for the kernels before it, then copies @bytes of @dev into @host
 * and frees @dev */
static void
from_device (gpointer host, gpointer dev, gsize bytes)
{
  assert_cuda (cudaDeviceSynchronize ());
  assert_cuda (cudaMemcpy (host, dev, bytes, cudaMemcpyDeviceToHost));
  assert_cuda (cudaFree (dev));
}

/* whether @got is @want: NaN where NaN is wanted, else within @tol,
 * relative above 1 */
static gboolean
float_close (float got, float want, double tol)
{
  if (isnan (want))
    return isnan (got);
  if (isinf (want))
    return got == want;
  return fabs ((double) got - want) <= tol * fmax (1.0, fabs (want));
}

/* One assertion for the array: check marks every one it makes, and the
 * grid-stride tests have millions of elements. */
static void
assert_floats_close (const float *got, const float *want, gsize n,
    double tol, const gchar * what)
{
  gsize i;

  for (i = 0; i < n && float_close (got[i], want[i], tol); i++);
  fail_unless (i == n, "%s[%" G_GSIZE_FORMAT "] of %" G_GSIZE_FORMAT
      ": %.9g, want %.9g", what, i, n, got[i], want[i]);
}

static float *
random_floats (GRand * r, gsize n, double lo, double hi)
{
  float *v = g_new (float, n);
  gsize i;

  for (i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (r, lo, hi);
  return v;
}

static void
bgrx_frames (CbiKFrames * f, int width, int height)
{
  const CbiKFrames bgrx = { width, height, 4, {2, 1, 0}, 3,
  {1.0f / (255.0f * 0.229f), 1.0f / (255.0f * 0.224f),
      1.0f / (255.0f * 0.225f)},
  {-0.485f / 0.229f, -0.456f / 0.224f, -0.406f / 0.225f}
  };
  int c;

  *f = bgrx;
  /* results map back as the input came in */
  for (c = 0; c < 3; c++)
    cbi_byte_mapping (f->scale[c], f->bias[c], &f->out_scale[c],
        &f->out_offset[c]);
}

/* ---- without a device ---- */

GST_START_TEST (test_launchers_with_nothing_to_do_return_success)
{
  const int64_t dims[2] = { 3, 0 }, strides[2] = { 1, 0 };
  const int64_t empty[2] = { 0, 3 }, perm[2] = { 1, 0 };
  const CbiKPool pool = { {2, 2}, {2, 2}, {1, 1}, {0, 0}, 1, 0 };
  CbiKFrames f;

  bgrx_frames (&f, 4, 2);
  assert_cuda (cbi_k_pack (NULL, NULL, &f, 0, 0, 1, NULL));
  assert_cuda (cbi_k_unpack (NULL, NULL, NULL, &f, 3, 4, 2, 0, NULL));
  assert_cuda (cbi_k_eltwise (NULL, NULL, 0, CBI_K_RELU, 0, 0, NULL));
  assert_cuda (cbi_k_binary (NULL, NULL, NULL, 2, dims, strides, CBI_K_ADD,
          CBI_K_IDENTITY, 0, 0, NULL));
  assert_cuda (cbi_k_permute (NULL, NULL, 2, empty, perm, NULL));
  assert_cuda (cbi_k_concat (NULL, NULL, 0, 3, 5, 2, NULL));
  assert_cuda (cbi_k_pad (NULL, NULL, 0, 3, 3, 1, 1, 1, 1, CBI_K_PAD_REFLECT,
          0.0f, NULL));
  assert_cuda (cbi_k_resize (NULL, NULL, 0, 2, 2, 4, 4, 2.0f, 2.0f, 1, NULL));
  assert_cuda (cbi_k_pool (NULL, NULL, 0, 4, 4, 2, 2, &pool, NULL));
  assert_cuda (cbi_k_softmax (NULL, NULL, 0, 10, 1, NULL));
  assert_cuda (cbi_k_instance_norm (NULL, NULL, 0, 3, 16, NULL, NULL, 1e-5f,
          NULL));
  assert_cuda (cbi_k_bias_act (NULL, NULL, 2, 3, 0, CBI_K_RELU, 0, 0, NULL));
  assert_cuda (cbi_k_to_half (NULL, NULL, 0, 3, 4, CBI_K_HALF_FP16, NULL));
  assert_cuda (cbi_k_from_half (NULL, NULL, NULL, 2, 0, 4, CBI_K_HALF_BF16,
          CBI_K_RELU, 0, 0, NULL));
  assert_cuda (cbi_k_copy (NULL, NULL, 2, empty, strides, 0, -1, 0, NULL,
          NULL));
}

GST_END_TEST;

GST_START_TEST (test_launchers_refuse_arguments_they_cannot_run)
{
  const int64_t dims[7] = { 1, 1, 1, 1, 1, 1, 2 };
  const int64_t strides[7] = { 0, 0, 0, 0, 0, 0, 1 };
  const int64_t twice[2] = { 0, 0 }, dims2[2] = { 2, 3 };
  const CbiKPool no_stride = { {2, 2}, {0, 1}, {1, 1}, {0, 0}, 1, 0 };
  CbiKFrames f;

  bgrx_frames (&f, 4, 2);
  /* more frames than slots */
  fail_unless_equals_int (cbi_k_pack (NULL, NULL, &f, 3, 2, 1, NULL),
      cudaErrorInvalidValue);
  f.pixel_stride = 5;
  fail_unless_equals_int (cbi_k_pack (NULL, NULL, &f, 1, 2, 1, NULL),
      cudaErrorInvalidValue);
  bgrx_frames (&f, 4, 2);
  fail_unless_equals_int (cbi_k_unpack (NULL, NULL, NULL, &f, 2, 4, 2, 1,
          NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_eltwise (NULL, NULL, 4, (CbiKEltwise) 99, 0,
          0, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_binary (NULL, NULL, NULL, 7, dims, strides,
          CBI_K_ADD, CBI_K_IDENTITY, 0, 0, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_permute (NULL, NULL, 2, dims2, twice, NULL),
      cudaErrorInvalidValue);
  /* x's 3 columns at 3 do not fit in 5 */
  fail_unless_equals_int (cbi_k_concat (NULL, NULL, 2, 3, 5, 3, NULL),
      cudaErrorInvalidValue);
  /* reflecting 3 rows of a 3-row plane */
  fail_unless_equals_int (cbi_k_pad (NULL, NULL, 1, 3, 3, 3, 0, 0, 0,
          CBI_K_PAD_REFLECT, 0.0f, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_resize (NULL, NULL, 1, 2, 2, 4, 4, 0.0f,
          2.0f, 0, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_pool (NULL, NULL, 1, 4, 4, 2, 2, &no_stride,
          NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_softmax (NULL, NULL, 1, -1, 1, NULL),
      cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_instance_norm (NULL, NULL, -1, 3, 16, NULL,
          NULL, 1e-5f, NULL), cudaErrorInvalidValue);
  /* a gathered axis of 2 with 3 indices; a rank of 7 */
  fail_unless_equals_int (cbi_k_copy (NULL, NULL, 2, dims2, twice, 0, 0, 3,
          twice, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_copy (NULL, NULL, 7, dims, strides, 0, -1, 0,
          NULL, NULL), cudaErrorInvalidValue);
  /* a long index list needs an axis and the list */
  fail_unless_equals_int (cbi_k_copy_long (NULL, NULL, 2, dims2, twice, 0, -1,
          0, twice, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_copy_long (NULL, NULL, 2, dims2, twice, 0, 0,
          2, NULL, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_bias_act (NULL, NULL, 1, 3, 4,
          (CbiKEltwise) - 1, 0, 0, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_to_half (NULL, NULL, 1, 3, 4, (CbiKHalf) 2,
          NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_to_half (NULL, NULL, 1, -3, 4,
          CBI_K_HALF_FP16, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_from_half (NULL, NULL, NULL, 1, 3, 4,
          (CbiKHalf) - 1, CBI_K_RELU, 0, 0, NULL), cudaErrorInvalidValue);
  fail_unless_equals_int (cbi_k_from_half (NULL, NULL, NULL, 1, 3, 4,
          CBI_K_HALF_BF16, (CbiKEltwise) - 1, 0, 0, NULL),
      cudaErrorInvalidValue);
}

GST_END_TEST;

GST_START_TEST (test_a_launch_without_a_device_returns_an_error)
{
  cudaError_t e;
  CbiKFrames f;

  e = cbi_k_eltwise (NULL, NULL, 16, CBI_K_RELU, 0, 0, NULL);
  fail_if (e == cudaSuccess);
  fail_unless (cudaGetErrorString (e) != NULL);
  bgrx_frames (&f, 4, 2);
  fail_if (cbi_k_pack (NULL, NULL, &f, 1, 2, 1, NULL) == cudaSuccess);
}

GST_END_TEST;

/* ---- on a device: every kernel against the CPU ---- */

GST_START_TEST (test_pack_on_a_device_gives_the_cpu_values)
{
  const int w = 5, h = 3, n_frames = 2, n_slots = 3;
  const gsize plane = w * h, bytes = n_frames * plane * 4;
  const gsize floats = n_slots * 3 * plane;
  guint8 *frames = g_new (guint8, bytes);
  float *want = g_new0 (float, floats), *got = g_new (float, floats);
  GRand *r = g_rand_new_with_seed (1);
  CbiKFrames f;
  gsize i;
  int repeat;

  bgrx_frames (&f, w, h);
  for (i = 0; i < bytes; i++)
    frames[i] = (guint8) g_rand_int_range (r, 0, 256);

  for (repeat = 0; repeat < 2; repeat++) {
    gpointer d_frames = to_device (frames, bytes);
    gpointer d_tensor = to_device (NULL, floats * sizeof (float));
    int slot, c;
    gsize p;

    for (slot = 0; slot < n_slots; slot++) {
      int src = slot < n_frames ? slot : repeat ? n_frames - 1 : -1;
      for (c = 0; c < 3; c++)
        for (p = 0; p < plane; p++)
          want[(slot * 3 + c) * plane + p] = src < 0 ? 0.0f :
              (float) frames[(src * plane + p) * 4 + f.rgb_offset[c]] *
              f.scale[c] + f.bias[c];
    }
    assert_cuda (cbi_k_pack (d_frames, d_tensor, &f, n_frames, n_slots,
            repeat, NULL));
    from_device (got, d_tensor, floats * sizeof (float));
    assert_cuda (cudaFree (d_frames));
    /* no fused multiply-add: bit for bit */
    assert_floats_close (got, want, floats, 0.0, "packed");
  }
  g_rand_free (r);
  g_free (frames);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

static void
check_unpack (int channels, int out_w, int out_h)
{
  const int n_frames = 2;
  const gsize plane = out_w * out_h, in_bytes = n_frames * 5 * 3 * 4;
  const gsize floats = n_frames * channels * plane, bytes = n_frames * plane
      * 4;
  GRand *r = g_rand_new_with_seed (channels * 100 + out_w);
  float *tensor = random_floats (r, floats, -3.0, 3.0);
  guint8 *in = g_new (guint8, in_bytes), *want = g_new (guint8, bytes);
  guint8 *got = g_new (guint8, bytes);
  gpointer d_tensor, d_in, d_out;
  CbiUnpackMap m;
  CbiKFrames f;
  gsize i, p;
  int frame, c;

  bgrx_frames (&f, 5, 3);
  for (i = 0; i < in_bytes; i++)
    in[i] = (guint8) g_rand_int_range (r, 0, 256);
  cbi_unpack_map_init (&m, channels, f.out_scale, f.out_offset);
  for (frame = 0; frame < n_frames; frame++) {
    for (p = 0; p < plane; p++) {
      const float *s = tensor + frame * channels * plane + p;
      guint8 *px = want + (frame * plane + p) * 4;
      for (c = 0; c < 3; c++)
        px[f.rgb_offset[c]] = cbi_to_byte (s[(channels == 1 ? 0 : c) *
                plane], m.inv[c], m.off[c]);
      if (channels == 4)
        px[3] = cbi_to_byte (s[3 * plane], f.out_scale[0], 0.0f);
      else if (out_w == 5 && out_h == 3)
        px[3] = in[(frame * plane + p) * 4 + 3];
      else
        px[3] = 255;
    }
  }

  d_tensor = to_device (tensor, floats * sizeof (float));
  d_in = to_device (in, in_bytes);
  d_out = to_device (NULL, bytes);
  assert_cuda (cbi_k_unpack (d_tensor, d_in, d_out, &f, channels, out_w,
          out_h, n_frames, NULL));
  from_device (got, d_out, bytes);
  assert_cuda (cudaFree (d_tensor));
  assert_cuda (cudaFree (d_in));
  for (i = 0; i < bytes; i++)
    fail_unless_equals_int (got[i], want[i]);

  g_rand_free (r);
  g_free (tensor);
  g_free (in);
  g_free (want);
  g_free (got);
}

GST_START_TEST (test_unpack_on_a_device_gives_the_cpu_bytes)
{
  check_unpack (3, 5, 3);       /* fourth byte passes through */
  check_unpack (3, 10, 6);      /* another size: 255 */
  check_unpack (1, 5, 3);       /* grey */
  check_unpack (4, 10, 6);      /* the fourth channel */
}

GST_END_TEST;

GST_START_TEST (test_eltwise_on_a_device_gives_the_cpu_values)
{
  const struct
  {
    CbiKEltwise op;
    float alpha, beta;
  } ops[] = {
    {CBI_K_RELU, 0.0f, 0.0f}, {CBI_K_RELU, 0.1f, 0.0f},
    {CBI_K_SIGMOID, 0, 0}, {CBI_K_TANH, 0, 0}, {CBI_K_CLIP, -1.0f, 6.0f},
    {CBI_K_ELU, 0.7f, 0}, {CBI_K_HARD_SIGMOID, 0.2f, 0.5f},
    {CBI_K_HARD_SWISH, 0, 0}, {CBI_K_IDENTITY, 0, 0},
    {CBI_K_ERF, 0, 0}, {CBI_K_GELU_ERF, 0, 0}, {CBI_K_GELU_TANH, 0, 0},
    {CBI_K_SQRT, 0, 0}, {CBI_K_EXP, 0, 0}, {CBI_K_LOG, 0, 0},
    {CBI_K_NEG, 0, 0}, {CBI_K_ABS, 0, 0}, {CBI_K_RECIPROCAL, 0, 0},
    {CBI_K_POW, 2.0f, 0}, {CBI_K_POW, 0.75f, 0}, {CBI_K_SWISH, 1.0f, 0},
  };
  const gsize n = 200;
  float *x = g_new (float, n), *want = g_new (float, n);
  float *got = g_new (float, n);
  gsize k, i;

  for (i = 0; i < n - 4; i++)
    x[i] = -10.0f + 20.0f * i / (n - 5);
  x[n - 4] = NAN;
  x[n - 3] = INFINITY;
  x[n - 2] = -INFINITY;
  x[n - 1] = -0.0f;
  for (k = 0; k < G_N_ELEMENTS (ops); k++) {
    gpointer d = to_device (x, n * sizeof (float));
    for (i = 0; i < n; i++)
      want[i] = cbi_eltwise (ops[k].op, x[i], ops[k].alpha, ops[k].beta);
    /* in place */
    assert_cuda (cbi_k_eltwise (d, d, n, ops[k].op, ops[k].alpha,
            ops[k].beta, NULL));
    from_device (got, d, n * sizeof (float));
    assert_floats_close (got, want, n, 1e-6, "eltwise");
  }
  g_free (x);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

/* ReduceMean, ReduceSum, ReduceMax and ArgMax of x [2, 3, 4] over its
 * middle axis, against cbi_reduce () on the host. */
GST_START_TEST (test_reduce_on_a_device_gives_the_cpu_values)
{
  const CbiKReduce ops[] = { CBI_K_REDUCE_MEAN, CBI_K_REDUCE_SUM,
    CBI_K_REDUCE_MAX, CBI_K_REDUCE_ARGMAX, CBI_K_REDUCE_ARGMAX_LAST
  };
  GRand *r = g_rand_new_with_seed (5);
  float *x = random_floats (r, 24, -3.0, 3.0), want[8], got[8];
  gpointer d_x = to_device (x, 24 * sizeof (float));
  gsize k, i;

  for (k = 0; k < G_N_ELEMENTS (ops); k++) {
    gpointer d_y = to_device (NULL, 8 * sizeof (float));
    assert_cuda (cbi_k_reduce (d_x, d_y, 2, 3, 4, ops[k], NULL));
    from_device (got, d_y, 8 * sizeof (float));
    for (i = 0; i < 8; i++)
      want[i] = cbi_reduce (ops[k], x + (i / 4) * 12 + i % 4, 3, 4);
    assert_floats_close (got, want, 8, 1e-6, "reduce");
  }
  assert_cuda (cudaFree (d_x));
  g_rand_free (r);
  g_free (x);
}

GST_END_TEST;

/* LayerNormalization of 5 rows of 40: every row of mean 0 and variance 1
 * before gamma and beta. */
GST_START_TEST (test_layer_norm_on_a_device_normalises_every_row)
{
  GRand *r = g_rand_new_with_seed (6);
  float *x = random_floats (r, 200, -2.0, 5.0);
  float *gamma = random_floats (r, 40, 0.5, 1.5);
  float *beta = random_floats (r, 40, -0.5, 0.5);
  float *got = g_new (float, 200), *want = g_new (float, 200);
  gpointer d_x = to_device (x, 200 * sizeof (float));
  gpointer d_g = to_device (gamma, 40 * sizeof (float));
  gpointer d_b = to_device (beta, 40 * sizeof (float));
  gsize row, i;

  assert_cuda (cbi_k_layer_norm (d_x, d_x, 5, 40, d_g, d_b, 1e-5f, NULL));
  from_device (got, d_x, 200 * sizeof (float));
  for (row = 0; row < 5; row++) {
    double mean = 0.0, var = 0.0;
    for (i = 0; i < 40; i++)
      mean += x[row * 40 + i] / 40.0;
    for (i = 0; i < 40; i++)
      var += (x[row * 40 + i] - mean) * (x[row * 40 + i] - mean) / 40.0;
    for (i = 0; i < 40; i++)
      want[row * 40 + i] = gamma[i] * (x[row * 40 + i] - mean)
          / sqrt (var + 1e-5) + beta[i];
  }
  assert_floats_close (got, want, 200, 1e-5, "layer norm");
  assert_cuda (cudaFree (d_g));
  assert_cuda (cudaFree (d_b));
  g_rand_free (r);
  g_free (x);
  g_free (gamma);
  g_free (beta);
  g_free (got);
  g_free (want);
}

GST_END_TEST;

/* Where of a [2, 3, 4] activation, a scalar other and a per-channel
 * condition. */
GST_START_TEST (test_where_on_a_device_broadcasts_the_condition)
{
  const int64_t dims[3] = { 2, 3, 4 }, per_channel[3] = { 0, 1, 0 };
  const int64_t scalar[3] = { 0, 0, 0 };
  const float cond[3] = { 1.0f, 0.0f, 1.0f }, other = -7.0f;
  GRand *r = g_rand_new_with_seed (7);
  float *a = random_floats (r, 24, -3.0, 3.0), want[24], got[24];
  gpointer d_a = to_device (a, sizeof (want));
  gpointer d_c = to_device (cond, sizeof (cond));
  gpointer d_o = to_device (&other, sizeof (float));
  gpointer d_y = to_device (NULL, sizeof (want));
  gsize i;

  assert_cuda (cbi_k_where (d_c, d_a, d_o, d_y, 3, dims, scalar, per_channel,
          NULL));
  from_device (got, d_y, sizeof (got));
  for (i = 0; i < 24; i++)
    want[i] = cond[(i / 4) % 3] != 0.0f ? a[i] : other;
  assert_floats_close (got, want, 24, 0.0, "where");
  assert_cuda (cudaFree (d_a));
  assert_cuda (cudaFree (d_c));
  assert_cuda (cudaFree (d_o));
  g_rand_free (r);
  g_free (a);
}

GST_END_TEST;

GST_START_TEST (test_binary_on_a_device_broadcasts_as_numpy)
{
  const int64_t dims[4] = { 2, 3, 4, 5 };
  const int64_t per_channel[4] = { 0, 1, 0, 0 };
  const int64_t full[4] = { 60, 20, 5, 1 }, scalar[4] = { 0, 0, 0, 0 };
  const gsize n = 120;
  GRand *r = g_rand_new_with_seed (3);
  float *a = random_floats (r, n, -4.0, 4.0);
  float *b = random_floats (r, n, 0.5, 2.0);
  float *want = g_new (float, n), *got = g_new (float, n);
  gpointer d_a, d_b, d_y;
  gsize i;

  d_a = to_device (a, n * sizeof (float));
  d_b = to_device (b, n * sizeof (float));

  /* a + b[c], then clip to 0..6 */
  d_y = to_device (NULL, n * sizeof (float));
  assert_cuda (cbi_k_binary (d_a, d_b, d_y, 4, dims, per_channel, CBI_K_ADD,
          CBI_K_CLIP, 0.0f, 6.0f, NULL));
  from_device (got, d_y, n * sizeof (float));
  for (i = 0; i < n; i++)
    want[i] = CLAMP (a[i] + b[(i / 20) % 3], 0.0f, 6.0f);
  assert_floats_close (got, want, n, 0.0, "add per channel");

  d_y = to_device (NULL, n * sizeof (float));
  assert_cuda (cbi_k_binary (d_a, d_b, d_y, 4, dims, full, CBI_K_DIV,
          CBI_K_IDENTITY, 0, 0, NULL));
  from_device (got, d_y, n * sizeof (float));
  for (i = 0; i < n; i++)
    want[i] = a[i] / b[i];
  assert_floats_close (got, want, n, 0.0, "div");

  d_y = to_device (NULL, n * sizeof (float));
  assert_cuda (cbi_k_binary (d_a, d_b, d_y, 4, dims, scalar, CBI_K_PRELU,
          CBI_K_IDENTITY, 0, 0, NULL));
  from_device (got, d_y, n * sizeof (float));
  for (i = 0; i < n; i++)
    want[i] = a[i] > 0.0f ? a[i] : a[i] * b[0];
  assert_floats_close (got, want, n, 0.0, "prelu");

  assert_cuda (cudaFree (d_a));
  assert_cuda (cudaFree (d_b));
  g_rand_free (r);
  g_free (a);
  g_free (b);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

/* y[j...] = x[...] with y's dim j being x's dim perm[j], one coordinate
 * at a time */
static void
ref_permute (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * perm)
{
  int64_t x_strides[CBI_K_MAX_DIMS], coord[CBI_K_MAX_DIMS] = { 0, };
  int64_t count = 1, i, off;
  int j;

  for (j = rank - 1; j >= 0; j--) {
    x_strides[j] = count;
    count *= dims[j];
  }
  for (i = 0; i < count; i++) {
    off = 0;
    for (j = 0; j < rank; j++)
      off += coord[j] * x_strides[perm[j]];
    y[i] = x[off];
    /* next coordinate of y, row-major */
    for (j = rank - 1; j >= 0; j--) {
      if (++coord[j] < dims[perm[j]])
        break;
      coord[j] = 0;
    }
  }
}

GST_START_TEST (test_permute_on_a_device_moves_every_element)
{
  /* NCHW -> NHWC; DepthToSpace (DCR, block 2) of 8 channels */
  const int64_t dims[2][6] = { {2, 3, 4, 5}, {1, 2, 2, 2, 3, 4} };
  const int64_t perms[2][6] = { {0, 2, 3, 1}, {0, 3, 4, 1, 5, 2} };
  const int ranks[2] = { 4, 6 };
  const gsize n[2] = { 120, 96 };
  int k;

  for (k = 0; k < 2; k++) {
    float *x = g_new (float, n[k]), *want = g_new (float, n[k]);
    float *got = g_new (float, n[k]);
    gpointer d_x, d_y;
    gsize i;

    for (i = 0; i < n[k]; i++)
      x[i] = (float) i;
    ref_permute (x, want, ranks[k], dims[k], perms[k]);
    d_x = to_device (x, n[k] * sizeof (float));
    d_y = to_device (NULL, n[k] * sizeof (float));
    assert_cuda (cbi_k_permute (d_x, d_y, ranks[k], dims[k], perms[k], NULL));
    from_device (got, d_y, n[k] * sizeof (float));
    assert_cuda (cudaFree (d_x));
    assert_floats_close (got, want, n[k], 0.0, "permuted");
    g_free (x);
    g_free (want);
    g_free (got);
  }
}

GST_END_TEST;

GST_START_TEST (test_concat_on_a_device_fills_its_columns_only)
{
  const float x[6] = { 1, 2, 3, 4, 5, 6 };
  const float want[14] = { -1, -1, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, -1, -1 };
  float y[14];
  gpointer d_x, d_y;
  int i;

  for (i = 0; i < 14; i++)
    y[i] = -1.0f;
  d_x = to_device (x, sizeof (x));
  d_y = to_device (y, sizeof (y));
  assert_cuda (cbi_k_concat (d_x, d_y, 2, 3, 7, 2, NULL));
  from_device (y, d_y, sizeof (y));
  assert_cuda (cudaFree (d_x));
  assert_floats_close (y, want, 14, 0.0, "concatenated");
}

GST_END_TEST;

GST_START_TEST (test_copy_on_a_device_slices_gathers_and_repeats)
{
  /* x = 0..23 as [2, 3, 4]; a Slice of channels 2 and 0 (step -2) and
   * columns 1 and 3 (step 2); a Gather of channels 2, 0, 2 with the last
   * axis an Expand of column 0 (stride 0) */
  const int64_t slice_dims[3] = { 2, 2, 2 }, slice_strides[3] = { 12, -8, 2 };
  const int64_t gather_dims[3] = { 2, 3, 2 }, gather_strides[3] = { 12, 4, 0 };
  const int64_t index[3] = { 2, 0, 2 };
  const float slice_want[8] = { 9, 11, 1, 3, 21, 23, 13, 15 };
  const float gather_want[12] = { 8, 8, 0, 0, 8, 8, 20, 20, 12, 12, 20, 20 };
  float x[24], y[12];
  gpointer d_x, d_y;
  int i;

  for (i = 0; i < 24; i++)
    x[i] = (float) i;
  d_x = to_device (x, sizeof (x));
  d_y = to_device (NULL, sizeof (y));
  assert_cuda (cbi_k_copy (d_x, d_y, 3, slice_dims, slice_strides, 9, -1, 0,
          NULL, NULL));
  from_device (y, d_y, 8 * sizeof (float));
  assert_floats_close (y, slice_want, 8, 0.0, "sliced");
  d_y = to_device (NULL, sizeof (y));
  assert_cuda (cbi_k_copy (d_x, d_y, 3, gather_dims, gather_strides, 0, 1, 3,
          index, NULL));
  from_device (y, d_y, sizeof (y));
  assert_cuda (cudaFree (d_x));
  assert_floats_close (y, gather_want, 12, 0.0, "gathered");
}

GST_END_TEST;

static int64_t
ref_pad_index (int64_t i, int64_t size, CbiKPadFill fill)
{
  int64_t period = 2 * (size - 1);

  if (fill == CBI_K_PAD_EDGE)
    return CLAMP (i, 0, size - 1);
  if (fill == CBI_K_PAD_CONSTANT)
    return i >= 0 && i < size ? i : -1;
  i = ((i % period) + period) % period;
  return i < size ? i : period - i;
}

GST_START_TEST (test_pad_on_a_device_fills_as_numpy_pad)
{
  const int planes = 2, h = 3, w = 4, top = 2, left = 1, bottom = 1;
  const int right = 3, oh = h + top + bottom, ow = w + left + right;
  const gsize n = planes * oh * ow;
  float *x = g_new (float, planes * h * w), *want = g_new (float, n);
  float *got = g_new (float, n);
  int fill, i;

  for (i = 0; i < planes * h * w; i++)
    x[i] = (float) i;
  for (fill = CBI_K_PAD_CONSTANT; fill <= CBI_K_PAD_EDGE; fill++) {
    gpointer d_x = to_device (x, planes * h * w * sizeof (float));
    gpointer d_y = to_device (NULL, n * sizeof (float));
    int p, yy, xx;

    for (p = 0; p < planes; p++)
      for (yy = 0; yy < oh; yy++)
        for (xx = 0; xx < ow; xx++) {
          int64_t sy = ref_pad_index (yy - top, h, fill);
          int64_t sx = ref_pad_index (xx - left, w, fill);
          want[(p * oh + yy) * ow + xx] = sy < 0 || sx < 0 ? -7.5f :
              x[(p * h + sy) * w + sx];
        }
    assert_cuda (cbi_k_pad (d_x, d_y, planes, h, w, top, left, bottom,
            right, fill, -7.5f, NULL));
    from_device (got, d_y, n * sizeof (float));
    assert_cuda (cudaFree (d_x));
    assert_floats_close (got, want, n, 0.0, "padded");
  }
  g_free (x);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

/* negative pads crop: what a ConvTranspose with uneven pads needs */
GST_START_TEST (test_negative_pads_on_a_device_crop)
{
  const int planes = 2, h = 5, w = 6, oh = 5 - 2 - 1, ow = 6 - 0 - 3;
  float x[2 * 5 * 6], want[2 * 2 * 3], got[2 * 2 * 3];
  gpointer d_x, d_y;
  int p, yy, xx, i;

  for (i = 0; i < planes * h * w; i++)
    x[i] = (float) i;
  for (p = 0; p < planes; p++)
    for (yy = 0; yy < oh; yy++)
      for (xx = 0; xx < ow; xx++)
        want[(p * oh + yy) * ow + xx] = x[(p * h + yy + 2) * w + xx];
  d_x = to_device (x, sizeof (x));
  d_y = to_device (NULL, sizeof (got));
  assert_cuda (cbi_k_pad (d_x, d_y, planes, h, w, -2, 0, -1, -3,
          CBI_K_PAD_CONSTANT, 0.0f, NULL));
  from_device (got, d_y, sizeof (got));
  assert_cuda (cudaFree (d_x));
  assert_floats_close (got, want, G_N_ELEMENTS (got), 0.0, "cropped");
}

GST_END_TEST;

/* ONNX Resize along one axis, linear, half_pixel */
static void
ref_linear_tap (int64_t dst, double scale, int64_t in, int64_t * i0,
    int64_t * i1, double *w1)
{
  double s = CLAMP ((dst + 0.5) / scale - 0.5, 0.0, (double) (in - 1));

  *i0 = (int64_t) floor (s);
  *i1 = MIN (*i0 + 1, in - 1);
  *w1 = s - *i0;
}

GST_START_TEST (test_resize_on_a_device_matches_onnx_nearest_and_linear)
{
  const int planes = 2, ih = 3, iw = 4, oh = 6, ow = 8;
  const gsize n = planes * oh * ow;
  GRand *r = g_rand_new_with_seed (5);
  float *x = random_floats (r, planes * ih * iw, -1.0, 1.0);
  float *want = g_new (float, n), *got = g_new (float, n);
  int linear;

  for (linear = 0; linear < 2; linear++) {
    gpointer d_x = to_device (x, planes * ih * iw * sizeof (float));
    gpointer d_y = to_device (NULL, n * sizeof (float));
    int p, yy, xx;

    for (p = 0; p < planes; p++)
      for (yy = 0; yy < oh; yy++)
        for (xx = 0; xx < ow; xx++) {
          const float *s = x + p * ih * iw;
          int64_t y0, y1, x0, x1;
          double wy, wx;
          if (!linear) {
            want[(p * oh + yy) * ow + xx] = s[(yy / 2) * iw + xx / 2];
            continue;
          }
          ref_linear_tap (yy, 2.0, ih, &y0, &y1, &wy);
          ref_linear_tap (xx, 2.0, iw, &x0, &x1, &wx);
          want[(p * oh + yy) * ow + xx] = (float)
              ((1 - wy) * ((1 - wx) * s[y0 * iw + x0] + wx * s[y0 * iw + x1])
              + wy * ((1 - wx) * s[y1 * iw + x0] + wx * s[y1 * iw + x1]));
        }
    assert_cuda (cbi_k_resize (d_x, d_y, planes, ih, iw, oh, ow, 2.0f, 2.0f,
            linear, NULL));
    from_device (got, d_y, n * sizeof (float));
    assert_cuda (cudaFree (d_x));
    assert_floats_close (got, want, n, 1e-6, linear ? "linear" : "nearest");
  }
  g_rand_free (r);
  g_free (x);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

GST_START_TEST (test_pool_on_a_device_gives_the_cpu_values)
{
  /* 2 planes of 9 x 8, 3 x 3 windows, stride 2 down and 1 across,
   * dilation 2, pads 1 top and 2 left (and none after) */
  const int planes = 2, h = 9, w = 8, out_h = 3, out_w = 6;
  float want[2 * 3 * 6], got[2 * 3 * 6];
  int mode, n, oy, ox;
  GRand *r;
  float *x;

  r = g_rand_new_with_seed (7);
  x = random_floats (r, planes * h * w, -4.0, 4.0);
  /* max, average of the taps inside, average over the whole window */
  for (mode = 0; mode < 3; mode++) {
    CbiKPool p = { {3, 3}, {2, 1}, {2, 2}, {1, 2}, mode == 0, mode == 2 };
    float *d_x = to_device (x, sizeof (float) * planes * h * w);
    float *d_y = to_device (NULL, sizeof (got));
    for (n = 0; n < planes; n++)
      for (oy = 0; oy < out_h; oy++)
        for (ox = 0; ox < out_w; ox++)
          want[(n * out_h + oy) * out_w + ox] = cbi_pool_at (x + n * h * w,
              h, w, oy, ox, &p);
    assert_cuda (cbi_k_pool (d_x, d_y, planes, h, w, out_h, out_w, &p, NULL));
    from_device (got, d_y, sizeof (got));
    assert_cuda (cudaFree (d_x));
    assert_floats_close (got, want, G_N_ELEMENTS (got), 1e-6, "pool");
  }
  g_free (x);
  g_rand_free (r);
}

GST_END_TEST;

GST_START_TEST (test_softmax_on_a_device_sums_to_one_along_its_axis)
{
  /* a classifier's rows (inner 1) and channels of an image (inner 7) */
  const int64_t shapes[2][3] = { {3, 37, 1}, {2, 5, 7} };
  GRand *r = g_rand_new_with_seed (7);
  int k;

  for (k = 0; k < 2; k++) {
    const int64_t outer = shapes[k][0], axis = shapes[k][1];
    const int64_t inner = shapes[k][2];
    const gsize n = outer * axis * inner;
    float *x = random_floats (r, n, -20.0, 20.0), *want = g_new (float, n);
    float *got = g_new (float, n);
    gpointer d_x = to_device (x, n * sizeof (float));
    gpointer d_y = to_device (NULL, n * sizeof (float));
    int64_t o, i, a;

    for (o = 0; o < outer; o++)
      for (i = 0; i < inner; i++) {
        const float *xs = x + o * axis * inner + i;
        double m = -INFINITY, sum = 0.0;
        for (a = 0; a < axis; a++)
          m = fmax (m, xs[a * inner]);
        for (a = 0; a < axis; a++)
          sum += exp (xs[a * inner] - m);
        for (a = 0; a < axis; a++)
          want[o * axis * inner + i + a * inner] =
              (float) (exp (xs[a * inner] - m) / sum);
      }
    assert_cuda (cbi_k_softmax (d_x, d_y, outer, axis, inner, NULL));
    from_device (got, d_y, n * sizeof (float));
    assert_cuda (cudaFree (d_x));
    assert_floats_close (got, want, n, 1e-5, "softmax");
    g_free (x);
    g_free (want);
    g_free (got);
  }
  g_rand_free (r);
}

GST_END_TEST;

GST_START_TEST (test_instance_norm_on_a_device_normalises_every_plane)
{
  const int64_t n = 2, c = 3, hw = 1000;
  const gsize count = n * c * hw;
  const float gamma[3] = { 1.0f, 0.5f, -2.0f }, beta[3] = { 0.0f, 1.0f, 3.0f };
  GRand *r = g_rand_new_with_seed (9);
  float *x = random_floats (r, count, 4.0, 6.0), *want = g_new (float, count);
  float *got = g_new (float, count);
  gpointer d_x, d_y, d_gamma, d_beta;
  int64_t p, k;

  for (p = 0; p < n * c; p++) {
    const float *xp = x + p * hw;
    double mean = 0.0, var = 0.0;
    for (k = 0; k < hw; k++)
      mean += xp[k];
    mean /= hw;
    for (k = 0; k < hw; k++)
      var += (xp[k] - mean) * (xp[k] - mean);
    var /= hw;
    for (k = 0; k < hw; k++)
      want[p * hw + k] = (float) (gamma[p % c] * (xp[k] - mean) /
          sqrt (var + 1e-5) + beta[p % c]);
  }
  d_x = to_device (x, count * sizeof (float));
  d_y = to_device (NULL, count * sizeof (float));
  d_gamma = to_device (gamma, sizeof (gamma));
  d_beta = to_device (beta, sizeof (beta));
  assert_cuda (cbi_k_instance_norm (d_x, d_y, n, c, hw, d_gamma, d_beta,
          1e-5f, NULL));
  from_device (got, d_y, count * sizeof (float));
  assert_cuda (cudaFree (d_x));
  assert_cuda (cudaFree (d_gamma));
  assert_cuda (cudaFree (d_beta));
  assert_floats_close (got, want, count, 1e-5, "normalised");
  g_rand_free (r);
  g_free (x);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

GST_START_TEST (test_bias_act_on_a_device_adds_per_channel_then_activates)
{
  const int64_t n = 2, c = 3, hw = 7;
  const gsize count = n * c * hw;
  const float bias[3] = { -1.0f, 0.0f, 2.5f };
  GRand *r = g_rand_new_with_seed (11);
  float *y = random_floats (r, count, -5.0, 5.0), *want = g_new (float, count);
  float *got = g_new (float, count);
  gpointer d_y, d_bias;
  gsize i;

  for (i = 0; i < count; i++)
    want[i] = cbi_eltwise (CBI_K_HARD_SWISH, y[i] + bias[(i / hw) % c], 0, 0);
  d_y = to_device (y, count * sizeof (float));
  d_bias = to_device (bias, sizeof (bias));
  assert_cuda (cbi_k_bias_act (d_y, d_bias, n, c, hw, CBI_K_HARD_SWISH, 0, 0,
          NULL));
  from_device (got, d_y, count * sizeof (float));
  assert_cuda (cudaFree (d_bias));
  assert_floats_close (got, want, count, 1e-6, "bias and activation");
  g_rand_free (r);
  g_free (y);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

/* the bits of cbimath.h's conversions, moved to channels last and back,
 * with values past fp16's largest */
GST_START_TEST (test_half_on_a_device_gives_the_cpu_bits_channels_last)
{
  const int64_t n = 2, c = 5, hw = 9;
  const gsize count = n * c * hw;
  const float bias[5] = { -1.0f, 0.0f, 2.5f, 0.125f, -3.0f };
  GRand *r = g_rand_new_with_seed (12);
  float *x = random_floats (r, count, -1e5, 1e5), *want = g_new (float, count);
  float *got = g_new (float, count);
  uint16_t *h = g_new (uint16_t, count);
  gpointer d_x, d_h, d_y, d_bias;
  int type;
  int64_t b, ch, p;

  d_x = to_device (x, count * sizeof (float));
  d_bias = to_device (bias, sizeof (bias));
  assert_cuda (cudaMalloc (&d_h, count * sizeof (uint16_t)));
  assert_cuda (cudaMalloc (&d_y, count * sizeof (float)));
  for (type = CBI_K_HALF_FP16; type <= CBI_K_HALF_BF16; type++) {
    assert_cuda (cbi_k_to_half (d_x, d_h, n, c, hw, (CbiKHalf) type, NULL));
    assert_cuda (cbi_k_from_half (d_h, d_y, d_bias, n, c, hw, (CbiKHalf) type,
            CBI_K_RELU, 0, 0, NULL));
    assert_cuda (cudaDeviceSynchronize ());
    assert_cuda (cudaMemcpy (h, d_h, count * sizeof (uint16_t),
            cudaMemcpyDeviceToHost));
    assert_cuda (cudaMemcpy (got, d_y, count * sizeof (float),
            cudaMemcpyDeviceToHost));
    for (b = 0; b < n; b++)
      for (ch = 0; ch < c; ch++)
        for (p = 0; p < hw; p++) {
          int64_t i = (b * c + ch) * hw + p;
          uint16_t bits = cbi_half_from_float ((CbiKHalf) type, x[i]);
          fail_unless_equals_int (h[(b * hw + p) * c + ch], bits);
          want[i] = cbi_eltwise (CBI_K_RELU,
              cbi_half_to_float ((CbiKHalf) type, bits) + bias[ch], 0, 0);
        }
    assert_floats_close (got, want, count, 0.0, "from half");
  }
  assert_cuda (cudaFree (d_x));
  assert_cuda (cudaFree (d_h));
  assert_cuda (cudaFree (d_y));
  assert_cuda (cudaFree (d_bias));
  g_rand_free (r);
  g_free (x);
  g_free (h);
  g_free (want);
  g_free (got);
}

GST_END_TEST;

/* ---- shapes that break index math ---- */

/* a count whose launch's grid-stride loops go round: past CUDA's 65535
 * blocks of 256 */
#define GRID_TAIL_COUNT ((int64_t) 65535 * 256 + 37)

/* Values that need no random generator: millions of them come cheap. */
static float *
pattern_floats (gsize n)
{
  float *v = g_new (float, n);
  gsize i;

  for (i = 0; i < n; i++)
    v[i] = (float) ((gint64) (i * 37 % 97) - 48) / 8.0f;
  return v;
}

GST_START_TEST
    (test_elementwise_kernels_reach_one_element_odd_sizes_and_the_grid_tail) {
  const int64_t counts[3] = { 1, 7 * 5 * 3, GRID_TAIL_COUNT };
  const int64_t one = 1, zero = 0;
  const float bias = 0.25f;
  int k;

  for (k = 0; k < 3; k++) {
    const gsize n = counts[k];
    float *x = pattern_floats (n), *want = g_new (float, n);
    float *got = g_new (float, n);
    gpointer d_x = to_device (x, n * sizeof (float));
    gpointer d_y = to_device (NULL, n * sizeof (float));
    gpointer d_b = to_device (&bias, sizeof (float));
    int64_t dims[1] = { (int64_t) n };
    gsize i;

    /* element-wise, out of place */
    assert_cuda (cbi_k_eltwise (d_x, d_y, n, CBI_K_SIGMOID, 0, 0, NULL));
    from_device (got, d_y, n * sizeof (float));
    for (i = 0; i < n; i++)
      want[i] = cbi_eltwise (CBI_K_SIGMOID, x[i], 0, 0);
    assert_floats_close (got, want, n, 1e-6, "sigmoid");

    /* a scalar b */
    d_y = to_device (NULL, n * sizeof (float));
    assert_cuda (cbi_k_binary (d_x, d_b, d_y, 1, dims, &zero, CBI_K_SUB,
            CBI_K_RELU, 0, 0, NULL));
    from_device (got, d_y, n * sizeof (float));
    for (i = 0; i < n; i++)
      want[i] = MAX (x[i] - bias, 0.0f);
    assert_floats_close (got, want, n, 0.0, "x - b, relu");

    /* one channel's bias, in place */
    assert_cuda (cbi_k_bias_act (d_x, d_b, 1, 1, n, CBI_K_IDENTITY, 0, 0,
            NULL));
    assert_cuda (cudaDeviceSynchronize ());
    assert_cuda (cudaMemcpy (got, d_x, n * sizeof (float),
            cudaMemcpyDeviceToHost));
    for (i = 0; i < n; i++)
      want[i] = x[i] + bias;
    assert_floats_close (got, want, n, 0.0, "x + bias");

    /* a reduction of one element a row: its rows are the count */
    d_y = to_device (NULL, n * sizeof (float));
    assert_cuda (cbi_k_reduce (d_x, d_y, n, one, one, CBI_K_REDUCE_SUM, NULL));
    from_device (got, d_y, n * sizeof (float));
    assert_floats_close (got, want, n, 0.0, "sum of one");

    assert_cuda (cudaFree (d_x));
    assert_cuda (cudaFree (d_b));
    g_free (x);
    g_free (want);
    g_free (got);
  }
}

GST_END_TEST;

GST_START_TEST (test_binary_broadcasts_b_in_every_pattern)
{
  /* a full [2, 3, 4, 5], and one with dims of 1 itself */
  const int64_t dims[2][4] = { {2, 3, 4, 5}, {2, 1, 4, 1} };
  /* b's shapes: scalar, per channel, per row, per column, full, every
   * frame the same, per frame, per frame and row, per channel and
   * column, and against a's dims of 1 */
  const int64_t shapes[][4] = { {1, 1, 1, 1}, {1, 3, 1, 1}, {1, 1, 4, 1},
  {1, 1, 1, 5}, {2, 3, 4, 5}, {1, 3, 4, 5}, {2, 1, 1, 1}, {2, 1, 4, 1},
  {1, 3, 1, 5}, {1, 1, 4, 1}
  };
  const CbiKBinary ops[2] = { CBI_K_SUB, CBI_K_DIV };
  GRand *r = g_rand_new_with_seed (11);
  float *a = random_floats (r, 120, -4.0, 4.0);
  float *b = random_floats (r, 120, 0.5, 2.0);
  float want[120], got[120];
  gpointer d_a = to_device (a, 120 * sizeof (float));
  gpointer d_b = to_device (b, 120 * sizeof (float));
  gsize s, i;
  int d, o, j;

  for (d = 0; d < 2; d++)
    for (s = 0; s < G_N_ELEMENTS (shapes); s++) {
      int64_t strides[4], n = 1;
      gboolean fits = TRUE;

      for (j = 0; j < 4; j++) {
        fits = fits && (shapes[s][j] == 1 || shapes[s][j] == dims[d][j]);
        n *= dims[d][j];
      }
      if (!fits)
        continue;
      broadcast_strides (4, shapes[s], strides);
      for (o = 0; o < 2; o++) {
        gpointer d_y = to_device (NULL, n * sizeof (float));
        assert_cuda (cbi_k_binary (d_a, d_b, d_y, 4, dims[d], strides,
                ops[o], CBI_K_IDENTITY, 0, 0, NULL));
        from_device (got, d_y, n * sizeof (float));
        for (i = 0; i < (gsize) n; i++)
          want[i] = cbi_binary (ops[o], a[i],
              b[offset_of (i, 4, dims[d], strides)]);
        assert_floats_close (got, want, n, 0.0, "broadcast b");
      }
    }
  assert_cuda (cudaFree (d_a));
  assert_cuda (cudaFree (d_b));
  g_rand_free (r);
  g_free (a);
  g_free (b);
}

GST_END_TEST;

GST_START_TEST (test_where_broadcasts_condition_and_other_in_every_pattern)
{
  const int64_t dims[3] = { 2, 3, 5 };
  const int64_t shapes[][3] = { {1, 1, 1}, {1, 3, 1}, {1, 1, 5}, {2, 1, 1},
  {2, 3, 5}, {1, 3, 5}, {2, 1, 5}
  };
  GRand *r = g_rand_new_with_seed (12);
  float *a = random_floats (r, 30, -4.0, 4.0);
  float *other = random_floats (r, 30, 10.0, 20.0);
  float cond[30], want[30], got[30];
  gpointer d_a, d_o, d_c;
  gsize sc, so, i;

  for (i = 0; i < 30; i++)
    cond[i] = (float) (i * 7 % 3 == 0);
  d_a = to_device (a, sizeof (want));
  d_o = to_device (other, sizeof (want));
  d_c = to_device (cond, sizeof (cond));
  for (sc = 0; sc < G_N_ELEMENTS (shapes); sc++)
    for (so = 0; so < G_N_ELEMENTS (shapes); so++) {
      int64_t c_strides[3], o_strides[3];
      gpointer d_y = to_device (NULL, sizeof (got));

      broadcast_strides (3, shapes[sc], c_strides);
      broadcast_strides (3, shapes[so], o_strides);
      assert_cuda (cbi_k_where (d_c, d_a, d_o, d_y, 3, dims, o_strides,
              c_strides, NULL));
      from_device (got, d_y, sizeof (got));
      for (i = 0; i < 30; i++)
        want[i] = cond[offset_of (i, 3, dims, c_strides)] != 0.0f ? a[i] :
            other[offset_of (i, 3, dims, o_strides)];
      assert_floats_close (got, want, 30, 0.0, "where");
    }
  assert_cuda (cudaFree (d_a));
  assert_cuda (cudaFree (d_o));
  assert_cuda (cudaFree (d_c));
  g_rand_free (r);
  g_free (a);
  g_free (other);
}

GST_END_TEST;

static Suite *
kernels_launch_suite (void)
{
  Suite *s = suite_create ("kernels-launch");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_launchers_with_nothing_to_do_return_success);
  tcase_add_test (tc, test_launchers_refuse_arguments_they_cannot_run);
  if (!have_device ()) {
    tcase_add_test (tc, test_a_launch_without_a_device_returns_an_error);
    return s;
  }
  tcase_add_test (tc, test_pack_on_a_device_gives_the_cpu_values);
  tcase_add_test (tc, test_unpack_on_a_device_gives_the_cpu_bytes);
  tcase_add_test (tc, test_eltwise_on_a_device_gives_the_cpu_values);
  tcase_add_test (tc, test_binary_on_a_device_broadcasts_as_numpy);
  tcase_add_test (tc, test_reduce_on_a_device_gives_the_cpu_values);
  tcase_add_test (tc, test_layer_norm_on_a_device_normalises_every_row);
  tcase_add_test (tc, test_where_on_a_device_broadcasts_the_condition);
  tcase_add_test (tc, test_permute_on_a_device_moves_every_element);
  tcase_add_test (tc, test_concat_on_a_device_fills_its_columns_only);
  tcase_add_test (tc, test_copy_on_a_device_slices_gathers_and_repeats);
  tcase_add_test (tc, test_pad_on_a_device_fills_as_numpy_pad);
  tcase_add_test (tc, test_negative_pads_on_a_device_crop);
  tcase_add_test (tc, test_resize_on_a_device_matches_onnx_nearest_and_linear);
  tcase_add_test (tc, test_softmax_on_a_device_sums_to_one_along_its_axis);
  tcase_add_test (tc, test_pool_on_a_device_gives_the_cpu_values);
  tcase_add_test (tc, test_instance_norm_on_a_device_normalises_every_plane);
  tcase_add_test (tc,
      test_bias_act_on_a_device_adds_per_channel_then_activates);
  tcase_add_test (tc, test_half_on_a_device_gives_the_cpu_bits_channels_last);
  tcase_add_test (tc,
      test_elementwise_kernels_reach_one_element_odd_sizes_and_the_grid_tail);
  tcase_add_test (tc, test_binary_broadcasts_b_in_every_pattern);
  tcase_add_test (tc,
      test_where_broadcasts_condition_and_other_in_every_pattern);
  return s;
}

GST_CHECK_MAIN (kernels_launch);
