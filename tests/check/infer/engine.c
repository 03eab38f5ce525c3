/* GStreamer cudabatchinfer: engine unit tests (cbiengine.c): plans, the
 * warm-up, batches in flight, memory limits, the backend asked for
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "cbiengine.h"
#include "cbitypes.h"
#include "cbitestengine.h"
#include "cbitestframes.h"
#include "cbicudaprobe.h"

/* Runs one RGB frame of 8x8 whose left half is black and right half white
 * through the default model; returns the output's green row 4. */
static void
run_step_edge (CbiEngine * e, guint slots, guint8 * row_out, CbiBatchReport * r)
{
  guint8 in_px[8 * 8 * 3], out_px[8 * 8 * 3];
  const guint8 *in[1] = { in_px };
  guint8 *out[1] = { out_px };
  const gint stride[1] = { 24 };
  CbiFrameBatch b = cbi_test_rgb_batch (8, 8, slots, in, out, stride);
  guint x, y;

  for (y = 0; y < 8; y++)
    for (x = 0; x < 8; x++)
      memset (in_px + (y * 8 + x) * 3, x < 4 ? 0 : 255, 3);
  fail_unless (cbi_engine_run (e, &b, r, NULL));
  for (x = 0; x < 8; x++)
    row_out[x] = out_px[(4 * 8 + x) * 3 + 1];
}

GST_START_TEST (test_default_model_draws_a_dark_line_on_an_edge)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  CbiBatchReport r;
  guint8 row[8];

  run_step_edge (e, 1, row, &r);
  /* flat black area away from the border: paper green 0.97 */
  fail_unless_equals_int (row[2], 247);
  /* the black-to-white step between x=3 and x=4: a dark line */
  fail_unless_equals_int (row[3], 0);
  fail_unless_equals_int (row[4], 0);
  fail_unless_equals_int (row[5], 247);
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_engine_replans_only_for_a_new_shape)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  CbiBatchReport r;
  guint8 row[8];

  run_step_edge (e, 4, row, &r);
  fail_unless (r.replanned);
  fail_unless (r.fresh_allocations > 0);
  run_step_edge (e, 4, row, &r);
  fail_if (r.replanned);
  fail_unless_equals_uint64 (r.fresh_allocations, 0);
  run_step_edge (e, 2, row, &r);
  fail_unless (r.replanned);
  fail_unless_equals_int (r.slots, 2);
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_warmup_leaves_no_fresh_memory_and_times_a_median_batch)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 4, NULL, NULL, NULL);
  CbiBatchReport w, r;
  guint8 row[8];
  guint i, n, below = 0, above = 0;

  fail_unless (cbi_engine_warmup (e, &layout, &w, NULL));
  fail_unless (w.fresh_allocations > 0);
  fail_unless (w.steady_time_ns > 0);
  n = w.n_steady_samples;
  fail_unless (n >= CBI_WARMUP_MIN_TIMED_BATCHES
      && n <= CBI_WARMUP_TIMED_BATCHES, "%u timed batches", n);
  /* the median of the timed batches: one slow sample cannot move it */
  for (i = 0; i < n; i++) {
    fail_unless (w.steady_samples_ns[i] > 0);
    below += w.steady_samples_ns[i] < w.steady_time_ns;
    above += w.steady_samples_ns[i] > w.steady_time_ns;
  }
  fail_unless (below <= n / 2 && above <= n / 2, "%u below, %u above of %u",
      below, above, n);
  fail_unless (w.pool.reserved_bytes > 0);
  fail_unless (w.pool.peak_reserved_bytes >= w.pool.reserved_bytes);
  run_step_edge (e, 4, row, &r);
  fail_if (r.replanned);
  fail_unless_equals_uint64 (r.fresh_allocations, 0);
  fail_unless_equals_uint64 (r.pool.reserved_bytes, w.pool.reserved_bytes);
  cbi_engine_free (e);
}

GST_END_TEST;

/* The sample a warm-up reports as its latency batch time: of its timed
 * batches, no more than a tenth are slower (nearest rank: none, of fewer
 * than ten), and it is one of them. Relations between the samples, never
 * a time: they hold on any machine under any load. */
GST_START_TEST (test_warmup_latency_time_is_the_90th_percentile_of_its_samples)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 4, NULL, NULL, NULL);
  CbiBatchReport w;
  guint i, n, slower = 0, same = 0;

  fail_unless (cbi_engine_warmup (e, &layout, &w, NULL));
  n = w.n_steady_samples;
  for (i = 0; i < n; i++) {
    slower += w.steady_samples_ns[i] > w.latency_time_ns;
    same += w.steady_samples_ns[i] == w.latency_time_ns;
  }
  fail_unless (same >= 1, "%" G_GUINT64_FORMAT " ns is none of the %u "
      "samples", w.latency_time_ns, n);
  fail_unless (slower <= n / 10, "%u of %u samples slower", slower, n);
  /* and at least a tenth of them are as slow or slower: not the max of a
   * large count, which one outlier would set */
  fail_unless ((slower + same) * 10 >= n, "%u of %u samples as slow", slower
      + same, n);
  fail_unless (w.latency_time_ns >= w.steady_time_ns);
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_submitted_batches_take_slots_in_turn_and_refuse_a_busy_one)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  guint8 in_px[8 * 8 * 3], out_px[8 * 8 * 3];
  const guint8 *in[1] = { in_px };
  guint8 *out[1] = { out_px };
  const gint stride[1] = { 24 };
  CbiFrameBatch b = cbi_test_rgb_batch (8, 8, 2, in, out, stride);
  /* the same read as a tensor: its plan keeps the outputs */
  CbiFrameBatch bt = cbi_test_rgb_batch (8, 8, 2, in, NULL, stride);
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 2, NULL, NULL, NULL);
  CbiBatchReport r;
  CbiShape shape;
  const gfloat *v;
  GError *err = NULL;
  guint t0, t1, t2;

  memset (in_px, 128, sizeof (in_px));
  fail_unless (cbi_engine_set_inflight (e, 2, NULL));
  fail_unless (cbi_engine_submit (e, &b, &t0, &r, NULL));
  fail_unless (cbi_engine_submit (e, &bt, &t1, &r, NULL));
  fail_unless_equals_int (t0, 0);
  fail_unless_equals_int (t1, 1);
  fail_if (cbi_engine_submit (e, &b, &t2, &r, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_BUSY));
  g_clear_error (&err);
  /* plans and warm-ups wait until nothing is in flight */
  fail_if (cbi_engine_set_inflight (e, 3, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_BUSY));
  g_clear_error (&err);
  fail_if (cbi_engine_warmup (e, &layout, &r, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_BUSY));
  g_clear_error (&err);

  fail_unless (cbi_engine_collect (e, t0, &b, &r, NULL));
  cbi_engine_release (e, t0);
  /* slot 0 is free again, slot 1 still busy: the next takes slot 0, on
   * the plan the refused warm-up left */
  fail_unless (cbi_engine_submit (e, &b, &t2, &r, NULL));
  fail_if (r.replanned);
  fail_unless_equals_int (t2, 0);
  /* the refused warm-up left the plans of the batches in flight alone:
   * their outputs are still there (valgrind and ASan see a read of a
   * freed plan) */
  fail_unless (cbi_engine_collect (e, t1, &bt, &r, NULL));
  v = cbi_engine_get_output (e, t1, 0, &shape, NULL);
  fail_unless (v != NULL && isfinite (v[0]) && isfinite (v[cbi_shape_count
              (&shape) - 1]));
  cbi_engine_release (e, t1);
  fail_unless (cbi_engine_collect (e, t2, &b, &r, NULL));
  cbi_engine_release (e, t2);
  /* a released batch is gone */
  fail_if (cbi_engine_collect (e, t2, &b, &r, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_BUSY));
  g_clear_error (&err);
  fail_unless (cbi_engine_set_inflight (e, 3, NULL));
  fail_unless (cbi_engine_warmup (e, &layout, &r, NULL));
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_a_plan_with_a_batch_in_flight_outlives_the_plan_cache)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  guint8 in_px[6][8 * 8 * 3], out_px[6][8 * 8 * 3];
  const guint8 *in[6];
  guint8 *out[6];
  gint stride[6];
  CbiBatchReport r;
  guint tickets[6], i;

  for (i = 0; i < 6; i++) {
    memset (in_px[i], 40 * i, sizeof (in_px[i]));
    in[i] = in_px[i];
    out[i] = out_px[i];
    stride[i] = 24;
  }
  /* six shapes in flight at once: more than the cache keeps */
  fail_unless (cbi_engine_set_inflight (e, 6, NULL));
  for (i = 0; i < 6; i++) {
    CbiFrameBatch b = cbi_test_rgb_batch (8, 8, i + 1, in, out, stride);
    b.n_frames = i + 1;
    fail_unless (cbi_engine_submit (e, &b, &tickets[i], &r, NULL));
    fail_unless (r.replanned);
  }
  for (i = 0; i < 6; i++) {
    CbiFrameBatch b = cbi_test_rgb_batch (8, 8, i + 1, in, out, stride);
    const gfloat *y;
    CbiShape shape;
    b.n_frames = i + 1;
    fail_unless (cbi_engine_collect (e, tickets[i], &b, &r, NULL));
    /* read from the batch's own plan: freed, it would not be there */
    y = cbi_engine_get_output (e, tickets[i], 0, &shape, NULL);
    fail_unless (y != NULL);
    fail_unless_equals_int (shape.dims[0], i + 1);
    cbi_engine_release (e, tickets[i]);
  }
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_outputs_are_read_by_the_ticket_of_their_batch)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  guint8 in_px[3][8 * 8 * 3];
  const guint8 *in[3] = { in_px[0], in_px[1], in_px[2] };
  const gint stride[3] = { 24, 24, 24 };
  CbiFrameBatch one = cbi_test_rgb_batch (8, 8, 1, in, NULL, stride);
  CbiFrameBatch two = cbi_test_rgb_batch (8, 8, 2, in, NULL, stride);
  CbiFrameBatch three = cbi_test_rgb_batch (8, 8, 3, in, NULL, stride);
  CbiBatchReport r;
  GError *err = NULL;
  CbiShape shape;
  guint t0, t1, t2;

  memset (in_px, 128, sizeof (in_px));
  fail_unless (cbi_engine_set_inflight (e, 2, NULL));
  fail_unless (cbi_engine_submit (e, &one, &t0, &r, NULL));
  fail_unless (cbi_engine_submit (e, &two, &t1, &r, NULL));
  /* not collected yet: nothing to read */
  fail_if (cbi_engine_get_output (e, t0, 0, &shape, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  g_clear_error (&err);
  fail_unless (cbi_engine_collect (e, t0, &one, &r, NULL));
  fail_unless (cbi_engine_collect (e, t1, &two, &r, NULL));
  /* the first batch's own outputs, though another was collected after */
  fail_unless (cbi_engine_get_output (e, t0, 0, &shape, NULL) != NULL);
  fail_unless_equals_int (shape.dims[0], 1);
  fail_unless (cbi_engine_get_output (e, t1, 0, &shape, NULL) != NULL);
  fail_unless_equals_int (shape.dims[0], 2);
  cbi_engine_release (e, t0);
  cbi_engine_release (e, t1);
  /* released, still readable, until the slot takes another batch */
  fail_unless (cbi_engine_get_output (e, t0, 0, &shape, NULL) != NULL);
  fail_unless_equals_int (shape.dims[0], 1);
  fail_unless (cbi_engine_submit (e, &three, &t2, &r, NULL));
  fail_unless_equals_int (t2, t0);
  fail_if (cbi_engine_get_output (e, t0, 0, &shape, &err));
  fail_unless (strstr (err->message, "another batch ran") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  fail_unless (cbi_engine_get_output (e, t1, 0, &shape, NULL) != NULL);
  fail_unless_equals_int (shape.dims[0], 2);
  cbi_engine_release (e, t2);
  /* no such slot, and no such output */
  fail_if (cbi_engine_get_output (e, 2, 0, &shape, NULL));
  fail_if (cbi_engine_get_output (e, t1, 1, &shape, &err));
  fail_unless (strstr (err->message, "the model has fewer") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  cbi_engine_free (e);
}

GST_END_TEST;

/* Frames given to the warm-up are its test frames: nan-unless-black.onnx
 * gives NaN for every value of the input but 0, so the NaN scan counts
 * the non-black values of the batch. Two frames, black and not, of 7
 * pixels a row in rows of 24 bytes (3 bytes of padding, 0xff), fill 4
 * slots in turn: 2 x 7 x 5 x 3 NaN, neither the padding nor the
 * engine's own pattern read. */
GST_START_TEST (test_warmup_runs_the_frames_it_is_given_in_turn)
{
  CbiEngine *e = cbi_test_cpu_engine_for_model ("nan-unless-black.onnx");
  guint8 black[24 * 5], grey[24 * 5];
  const guint8 *in[2] = { black, grey };
  const gint stride[2] = { 24, 24 };
  CbiFrameBatch layout = cbi_test_rgb_batch (7, 5, 4, in, NULL, stride);
  CbiBatchReport r;
  GError *err = NULL;
  guint y;

  for (y = 0; y < 5; y++) {
    memset (black + y * 24, 0, 21);
    memset (grey + y * 24, 0x10, 21);
    memset (black + y * 24 + 21, 0xff, 3);
    memset (grey + y * 24 + 21, 0xff, 3);
  }
  layout.n_frames = 2;
  fail_unless (cbi_engine_warmup (e, &layout, &r, &err), "%s",
      err ? err->message : "");
  fail_unless_equals_int (r.nonfinite_output, 0);
  fail_unless_equals_uint64 (r.nonfinite_values, 2 * 7 * 5 * 3);

  /* without frames, its own pattern */
  layout.n_frames = 0;
  fail_unless (cbi_engine_warmup (e, &layout, &r, NULL));
  fail_unless (r.nonfinite_values != 2 * 7 * 5 * 3, "%" G_GUINT64_FORMAT,
      r.nonfinite_values);
  cbi_engine_free (e);
}

GST_END_TEST;

/* The peak bytes a warm-up of @batch reserves on this CPU, without a limit:
 * oneDNN sizes its workspaces for the CPU it runs on. */
static guint64
warmup_peak_reserved (const CbiFrameBatch * batch)
{
  CbiEngine *e = cbi_test_cpu_engine (0);
  CbiBatchReport w;

  fail_unless (cbi_engine_warmup (e, batch, &w, NULL));
  cbi_engine_free (e);
  return w.pool.peak_reserved_bytes;
}

GST_START_TEST (test_warmup_frames_count_against_the_limit_before_they_exist)
{
  /* 4 RGB frames of 64x64 in, 4 out: the default model keeps the size */
  const guint64 frames_bytes = 4 * 2 * 64 * 64 * 3;
  CbiFrameBatch layout = cbi_test_rgb_batch (64, 64, 4, NULL, NULL, NULL);
  CbiEngine *e = cbi_test_cpu_engine (frames_bytes);
  CbiBatchReport w;
  CbiPoolStats s;
  GError *err = NULL;
  gchar *expected;

  fail_if (cbi_engine_warmup (e, &layout, &w, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_MEMORY));
  expected = g_strdup_printf ("test frames (%" G_GUINT64_FORMAT " bytes) do "
      "not fit the memory limit left to the engine: %" G_GUINT64_FORMAT,
      frames_bytes, frames_bytes);
  fail_unless (strstr (err->message, expected) != NULL, "%s", err->message);
  g_free (expected);
  g_clear_error (&err);
  /* refused before the pool was asked for anything */
  cbi_engine_get_pool_stats (e, &s);
  fail_unless_equals_uint64 (s.fresh_allocations, 0);
  fail_unless_equals_uint64 (s.failed_allocations, 0);
  /* the frames and what the pool needs, both: it runs */
  cbi_engine_set_memory_limit (e, frames_bytes +
      warmup_peak_reserved (&layout));
  fail_unless (cbi_engine_warmup (e, &layout, &w, &err), "%s",
      err ? err->message : "");
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_a_failed_plan_returns_its_memory_and_an_error)
{
  CbiFrameBatch big = cbi_test_rgb_batch (64, 64, 4, NULL, NULL, NULL);
  CbiFrameBatch small = cbi_test_rgb_batch (4, 4, 1, NULL, NULL, NULL);
  /* the pool may take what the small shape needs here, whatever the CPU,
   * once the big shape's test frames (4 in, 4 out) are counted */
  const guint64 big_frames = 4 * 2 * 64 * 64 * 3;
  guint64 limit = warmup_peak_reserved (&small);
  CbiEngine *e;
  CbiBatchReport w;
  CbiPoolStats s;
  GError *err = NULL;
  gchar *expected;

  fail_unless (warmup_peak_reserved (&big) > limit);
  e = cbi_test_cpu_engine (limit + big_frames);
  fail_if (cbi_engine_warmup (e, &big, &w, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_MEMORY));
  expected = g_strdup_printf ("memory limit left to the engine: %"
      G_GUINT64_FORMAT " bytes", limit);
  fail_unless (strstr (err->message, expected) != NULL, "%s", err->message);
  g_free (expected);
  g_error_free (err);
  cbi_engine_get_pool_stats (e, &s);
  fail_unless_equals_uint64 (s.allocated_bytes, 0);
  fail_unless (s.failed_allocations > 0);
  /* and a shape that fits still runs: the failure kept nothing */
  fail_unless (cbi_engine_warmup (e, &small, &w, NULL));
  cbi_engine_free (e);
}

GST_END_TEST;

GST_START_TEST (test_cuda_backend_request_fails_cleanly_without_it)
{
  gboolean fallback;
  GError *err = NULL;
  CbiEngine *e;

  e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CUDA, 0, 0,
      &fallback, &err);
  fail_unless (e == NULL);
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_NO_BACKEND));
  g_error_free (err);
  e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_AUTO, 0, 0,
      &fallback, NULL);
  fail_unless (e != NULL);
  fail_unless (fallback);
  fail_unless_equals_string (cbi_engine_backend_name (e), "cpu");
  cbi_engine_free (e);
}

GST_END_TEST;

/* On CUDA, output 0 of a batch that unpacks it into frames goes from the
 * device straight to the frames: the plan keeps no pinned host copy of
 * it, so it holds less than a plan for the same shape whose output is
 * read as a tensor (the frames take a quarter of a 3-channel float
 * output on the device and in pinned memory: half of it). */
GST_START_TEST (test_a_cuda_plan_that_unpacks_frames_keeps_no_host_tensor)
{
  const CbiShape in = { 4, {4, 3, 8, 8} };
  gfloat x[4 * 3 * 8 * 8] = { 0, };
  CbiBatchReport frames, tensor;
  gboolean fallback;
  CbiEngine *a, *b;
  guint8 row[8];

  a = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CUDA, 0, 0,
      &fallback, NULL);
  b = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CUDA, 0, 0,
      &fallback, NULL);
  fail_unless (a != NULL && b != NULL);
  run_step_edge (a, 4, row, &frames);
  fail_unless (cbi_engine_run_tensor (b, &in, x, NULL, &tensor, NULL));
  fail_unless (frames.pool.reserved_bytes < tensor.pool.reserved_bytes,
      "frames %" G_GUINT64_FORMAT " bytes, tensor %" G_GUINT64_FORMAT,
      frames.pool.reserved_bytes, tensor.pool.reserved_bytes);
  cbi_engine_free (a);
  cbi_engine_free (b);
}

GST_END_TEST;

/* Frames unpacked by the engine against the same batch read as a tensor
 * and mapped to bytes here: the CPU backend unpacks channels-last data
 * where the plan's last step was a plain reorder of it, and must not take
 * another last reorder (a Transpose) for one. Square frames, so that the
 * Transpose keeps the shape. */
GST_START_TEST (test_unpacked_frames_match_the_tensor_after_a_last_transpose)
{
  enum
  { S = 4, O = 2 * S };
  guint8 in_px[S * S * 3], out_px[O * O * 3];
  const guint8 *ins[1] = { in_px };
  guint8 *outs[1] = { out_px };
  const gint in_stride[1] = { S * 3 }, out_stride[1] = { O * 3 };
  const CbiShape shape = { 4, {1, 3, S, S} };
  gfloat x[3 * S * S];
  CbiFrameBatch b = cbi_test_rgb_batch (S, S, 1, ins, outs, in_stride);
  GError *err = NULL;
  CbiBatchReport r;
  const gfloat *y;
  CbiEngine *e;
  CbiShape out;
  guint i, c, ticket;

  for (i = 0; i < S * S; i++)
    for (c = 0; c < 3; c++) {
      in_px[i * 3 + c] = (i * 37 + c * 91) % 256;
      x[c * S * S + i] = in_px[i * 3 + c] / 255.0f;
    }
  b.out_width = b.out_height = O;
  b.out_channels = 3;
  b.out_stride = out_stride;
  e = cbi_test_cpu_engine_for_model ("ops-shuffle-transpose.onnx");
  fail_unless (cbi_engine_run (e, &b, &r, &err), "%s", err ? err->message : "");
  fail_unless (cbi_engine_run_tensor (e, &shape, x, &ticket, &r, &err), "%s",
      err ? err->message : "");
  y = cbi_engine_get_output (e, ticket, 0, &out, &err);
  fail_unless (y != NULL, "%s", err ? err->message : "");
  fail_unless_equals_int (out.dims[2], O);
  fail_unless_equals_int (out.dims[3], O);
  for (i = 0; i < O * O; i++)
    for (c = 0; c < 3; c++) {
      gint want = (gint) lrintf (CLAMP (y[c * O * O + i], 0.0f, 1.0f) * 255);
      gint got = out_px[i * 3 + c];
      fail_unless (ABS (got - want) <= 1, "pixel %u channel %u: frames %d, "
          "tensor %d", i, c, got, want);
    }
  cbi_engine_free (e);
}

GST_END_TEST;

static Suite *
engine_suite (void)
{
  Suite *s = suite_create ("cbiengine");
  TCase *tc = tcase_create ("general");
  gchar *why_no_cuda;

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_warmup_runs_the_frames_it_is_given_in_turn);
  tcase_add_test (tc, test_default_model_draws_a_dark_line_on_an_edge);
  tcase_add_test (tc, test_engine_replans_only_for_a_new_shape);
  tcase_add_test (tc,
      test_warmup_leaves_no_fresh_memory_and_times_a_median_batch);
  tcase_add_test (tc,
      test_warmup_latency_time_is_the_90th_percentile_of_its_samples);
  tcase_add_test (tc, test_a_failed_plan_returns_its_memory_and_an_error);
  tcase_add_test (tc,
      test_unpacked_frames_match_the_tensor_after_a_last_transpose);
  tcase_add_test (tc,
      test_warmup_frames_count_against_the_limit_before_they_exist);
  tcase_add_test (tc,
      test_submitted_batches_take_slots_in_turn_and_refuse_a_busy_one);
  tcase_add_test (tc,
      test_a_plan_with_a_batch_in_flight_outlives_the_plan_cache);
  tcase_add_test (tc, test_outputs_are_read_by_the_ticket_of_their_batch);
  /* where CUDA runs, the GPU suite covers the engine's choice */
  why_no_cuda = cbi_test_cuda_unavailable ();
  if (why_no_cuda)
    tcase_add_test (tc, test_cuda_backend_request_fails_cleanly_without_it);
  else
    tcase_add_test (tc,
        test_a_cuda_plan_that_unpacks_frames_keeps_no_host_tensor);
  g_free (why_no_cuda);
  return s;
}

GST_CHECK_MAIN (engine);
