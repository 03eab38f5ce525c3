/* GStreamer cudabatchinfer: engine unit tests (pool, graph, packing, CPU
 * backend)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <math.h>
#include <omp.h>

#include "cbiengine.h"
#include "cbidefaultmodel.h"
#include "graph/cbipasses.h"
#include "graph/cbishapes.h"
#include "cbiworker.h"
#include "cbierror.h"
#include "onnx/cbionnx.h"
#include "cbitestframes.h"
#include "cbicudaprobe.h"

/* An allocator that counts what it hands out, to prove the pool gives
 * everything back. */
typedef struct
{
  gint live;
  gint calls;
  gint fail_after;              /* fail the call after this many; -1 never */
} Counting;

static gpointer
counting_alloc (gsize size, gpointer user_data)
{
  Counting *c = user_data;

  if (c->fail_after >= 0 && c->calls >= c->fail_after)
    return NULL;
  c->calls++;
  c->live++;
  return g_malloc (size);
}

static void
counting_free (gpointer block, gsize size, gpointer user_data)
{
  Counting *c = user_data;

  c->live--;
  g_free (block);
}

static CbiPool *
counting_pool (Counting * c, guint64 limit)
{
  CbiAllocator a = { "counting", counting_alloc, counting_free, c };

  c->live = c->calls = 0;
  c->fail_after = -1;
  return cbi_pool_new (&a, limit);
}

GST_START_TEST (test_pool_counts_fresh_allocations_once)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b;

  a = cbi_pool_alloc (pool, 1000);
  cbi_pool_release (pool, a);
  b = cbi_pool_alloc (pool, 1000);
  fail_unless (a == b);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.fresh_allocations, 1);
  fail_unless_equals_uint64 (s.fresh_bytes, 1000);
  fail_unless_equals_uint64 (s.allocated_bytes, 1000);
  fail_unless_equals_uint64 (s.reserved_bytes, 1000);
  cbi_pool_release (pool, b);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_reuses_a_cached_block_only_when_it_fits)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b, d;

  a = cbi_pool_alloc (pool, 1000);
  cbi_pool_release (pool, a);
  /* larger: fresh */
  b = cbi_pool_alloc (pool, 2000);
  /* far smaller: not worth the waste, fresh */
  d = cbi_pool_alloc (pool, 100);
  fail_unless (b != a && d != a);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.fresh_allocations, 3);
  fail_unless_equals_uint64 (s.reserved_bytes, 3100);
  fail_unless_equals_uint64 (s.allocated_bytes, 2100);
  cbi_pool_release (pool, b);
  cbi_pool_release (pool, d);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_trim_gives_back_cached_blocks_only)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b;

  a = cbi_pool_alloc (pool, 100);
  b = cbi_pool_alloc (pool, 200);
  cbi_pool_release (pool, a);
  cbi_pool_trim (pool);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_int (c.live, 1);
  fail_unless_equals_uint64 (s.reserved_bytes, 200);
  fail_unless_equals_uint64 (s.allocated_bytes, 200);
  cbi_pool_release (pool, b);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_peaks_restart_at_current_values)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 0);
  CbiPoolStats s;
  gpointer a, b;

  a = cbi_pool_alloc (pool, 100);
  b = cbi_pool_alloc (pool, 300);
  cbi_pool_release (pool, b);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.peak_allocated_bytes, 400);
  cbi_pool_reset_peaks (pool);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.peak_allocated_bytes, 100);
  fail_unless_equals_uint64 (s.peak_reserved_bytes, 400);
  cbi_pool_release (pool, a);
  cbi_pool_free (pool);
}

GST_END_TEST;

GST_START_TEST (test_pool_refuses_past_its_limit_and_allocator_failures)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 1000);
  CbiPoolStats s;
  gpointer a;

  a = cbi_pool_alloc (pool, 800);
  fail_unless (a != NULL);
  fail_unless (cbi_pool_alloc (pool, 300) == NULL);
  c.fail_after = c.calls;
  fail_unless (cbi_pool_alloc (pool, 100) == NULL);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.failed_allocations, 2);
  fail_unless_equals_uint64 (s.fresh_allocations, 1);
  cbi_pool_release (pool, a);
  cbi_pool_free (pool);
  fail_unless_equals_int (c.live, 0);
}

GST_END_TEST;

GST_START_TEST (test_pool_trims_cached_blocks_before_refusing_at_the_limit)
{
  Counting c;
  CbiPool *pool = counting_pool (&c, 1000);
  CbiPoolStats s;
  gpointer a;

  a = cbi_pool_alloc (pool, 300);
  cbi_pool_release (pool, a);
  /* 300 cached + 800 is past the limit, 800 alone is not */
  a = cbi_pool_alloc (pool, 800);
  fail_unless (a != NULL);
  cbi_pool_get_stats (pool, &s);
  fail_unless_equals_uint64 (s.reserved_bytes, 800);
  fail_unless_equals_uint64 (s.failed_allocations, 0);
  fail_unless_equals_int (c.live, 1);
  cbi_pool_release (pool, a);
  cbi_pool_free (pool);
}

GST_END_TEST;

GST_START_TEST (test_default_model_keeps_the_frame_size)
{
  CbiGraph *g = cbi_default_model_new ();
  CbiShape *shapes = g_new0 (CbiShape, g->tensors->len), in;

  cbi_graph_frame_shape (g, 16, 7, 9, &in);
  fail_unless (cbi_graph_infer_shapes (g, &in, shapes, NULL));
  fail_unless_equals_int (g->n_outputs, 1);
  fail_unless_equals_int (shapes[g->outputs[0]].n_dims, 4);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[0], 16);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[1], 3);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[2], 7);
  fail_unless_equals_int (shapes[g->outputs[0]].dims[3], 9);
  g_free (shapes);
  cbi_graph_free (g);
}

GST_END_TEST;

GST_START_TEST (test_shape_inference_names_the_node_that_does_not_fit)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 in_dims[4] = { -1, 1, -1, -1 }, w_dims[4] = { 1, 1, 5, 5 };
  const gint64 any[4] = { -1, -1, -1, -1 };
  CbiConvAttrs valid = { {1, 1}, {1, 1}, {0, 0, 0, 0}, 1 };
  gint in[2];
  CbiShape *shapes, fits, too_small;
  GError *err = NULL;

  g->input = in[0] = cbi_graph_add_tensor (g, "x", 4, in_dims, NULL);
  in[1] = cbi_graph_add_tensor (g, "w", 4, w_dims, g_new0 (gfloat, 25));
  g->outputs[g->n_outputs++] = cbi_graph_add_tensor (g, "y", 4, any, NULL);
  cbi_graph_add_node (g, CBI_OP_CONV, "big_kernel", 2, in, g->outputs[0],
      &valid);
  shapes = g_new0 (CbiShape, g->tensors->len);
  cbi_graph_frame_shape (g, 1, 5, 5, &fits);
  cbi_graph_frame_shape (g, 1, 4, 5, &too_small);
  fail_unless (cbi_graph_infer_shapes (g, &fits, shapes, NULL));
  fail_if (cbi_graph_infer_shapes (g, &too_small, shapes, &err));
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_SHAPE));
  fail_unless (strstr (err->message, "big_kernel") != NULL, "%s", err->message);
  g_error_free (err);
  g_free (shapes);
  cbi_graph_free (g);
}

GST_END_TEST;

/* 2x2 BGRx frames: pixel bytes B, G, R, x. */
static void
init_bgrx_batch (CbiFrameBatch * b, guint n_frames, guint n_slots,
    CbiPadMode mode)
{
  memset (b, 0, sizeof (*b));
  b->width = 2;
  b->height = 2;
  b->pixel_stride = 4;
  b->rgb_offset[0] = 2;
  b->rgb_offset[1] = 1;
  b->rgb_offset[2] = 0;
  b->extra_offset = 3;
  b->scale[0] = b->scale[1] = b->scale[2] = 1.0f / 255.0f;
  cbi_frame_batch_map_output_back (b);
  b->n_frames = n_frames;
  b->n_slots = n_slots;
  b->pad_mode = mode;
}

GST_START_TEST (test_pack_puts_channels_in_model_order_and_fills_padding)
{
  guint8 f0[16], f1[16];
  const guint8 *in[2] = { f0, f1 };
  const gint stride[2] = { 8, 8 };
  gfloat t[4 * 12];
  CbiFrameBatch b;
  guint i;

  for (i = 0; i < 16; i++) {
    f0[i] = i;
    f1[i] = 100 + i;
  }
  init_bgrx_batch (&b, 2, 4, CBI_PAD_REPEAT_LAST);
  b.in = in;
  b.in_stride = stride;
  cbi_pack_frames (&b, t);
  /* slot 0, R plane, pixel 0 is byte 2 */
  fail_unless_equals_float (t[0], 2 / 255.0f);
  /* slot 0, B plane, pixel 1 is byte 4 */
  fail_unless_equals_float (t[2 * 4 + 1], 4 / 255.0f);
  /* slot 1, G plane, pixel 3 is byte 13 of frame 1 */
  fail_unless_equals_float (t[12 + 4 + 3], 113 / 255.0f);
  /* slots 2 and 3 repeat slot 1 */
  fail_unless (memcmp (t + 24, t + 12, 12 * sizeof (gfloat)) == 0);
  fail_unless (memcmp (t + 36, t + 12, 12 * sizeof (gfloat)) == 0);

  b.pad_mode = CBI_PAD_ZERO;
  cbi_pack_frames (&b, t);
  for (i = 24; i < 48; i++)
    fail_unless_equals_float (t[i], 0.0f);
}

GST_END_TEST;

GST_START_TEST (test_pack_scales_and_shifts_each_channel_and_unpack_undoes_it)
{
  guint8 px[16], back[16];
  const guint8 *in[1] = { px };
  guint8 *out[1] = { back };
  const gint stride[1] = { 8 };
  gfloat t[12];
  CbiFrameBatch b;
  guint i;

  for (i = 0; i < 16; i++)
    px[i] = 17 * i;
  init_bgrx_batch (&b, 1, 1, CBI_PAD_ZERO);
  b.scale[0] = 2.0f / 255.0f;
  b.bias[0] = -1.0f;
  b.scale[1] = 1.0f / 51.0f;
  b.bias[1] = 0.25f;
  b.bias[2] = 0.5f;
  cbi_frame_batch_map_output_back (&b);
  b.in = in;
  b.in_stride = stride;
  b.out = out;
  b.out_stride = stride;
  cbi_pack_frames (&b, t);
  /* pixel 1: B 68, G 85, R 102 */
  fail_unless (ABS (t[1] - (102 * 2.0f / 255.0f - 1.0f)) < 1e-6f);
  fail_unless (ABS (t[4 + 1] - (85 / 51.0f + 0.25f)) < 1e-6f);
  fail_unless (ABS (t[8 + 1] - (68 / 255.0f + 0.5f)) < 1e-6f);
  memset (back, 0, sizeof (back));
  cbi_unpack_frames (&b, t);
  fail_unless (memcmp (back, px, sizeof (px)) == 0);
}

GST_END_TEST;

GST_START_TEST (test_unpack_clamps_and_copies_the_fourth_byte)
{
  guint8 in_px[16], out_px[16];
  const guint8 *in[1] = { in_px };
  guint8 *out[1] = { out_px };
  const gint stride[1] = { 8 };
  const gfloat t[12] = {
    -1.0f, 0.0f, 0.5f, 2.0f,    /* R */
    1.0f, 1.0f, 1.0f, 1.0f,     /* G */
    NAN, 0.25f, 0.75f, 0.0f,    /* B */
  };
  CbiFrameBatch b;
  guint i;

  for (i = 0; i < 16; i++)
    in_px[i] = 200 + i;
  memset (out_px, 0, sizeof (out_px));
  init_bgrx_batch (&b, 1, 4, CBI_PAD_ZERO);
  b.in = in;
  b.in_stride = stride;
  b.out = out;
  b.out_stride = stride;
  cbi_unpack_frames (&b, t);
  fail_unless_equals_int (out_px[2], 0);        /* R -1 clamps to 0 */
  fail_unless_equals_int (out_px[6], 0);
  /* 0.5 is 127.5: either neighbour, by float rounding */
  fail_unless (out_px[10] == 127 || out_px[10] == 128, "%u", out_px[10]);
  fail_unless_equals_int (out_px[14], 255);     /* 2.0 clamps */
  fail_unless_equals_int (out_px[1], 255);
  fail_unless_equals_int (out_px[0], 0);        /* NaN is 0 */
  fail_unless_equals_int (out_px[4], 64);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (out_px[i * 4 + 3], in_px[i * 4 + 3]);
}

GST_END_TEST;

static CbiEngine *
cpu_engine (guint64 limit)
{
  gboolean fallback;
  GError *err = NULL;
  CbiEngine *e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CPU, 0,
      limit, &fallback, &err);

  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_if (fallback);
  return e;
}

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
  CbiEngine *e = cpu_engine (0);
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
  CbiEngine *e = cpu_engine (0);
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
  CbiEngine *e = cpu_engine (0);
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 4, NULL, NULL, NULL);
  CbiBatchReport w, r;
  guint8 row[8];
  guint i, below = 0, above = 0;

  fail_unless (cbi_engine_warmup (e, &layout, &w, NULL));
  fail_unless (w.fresh_allocations > 0);
  fail_unless (w.steady_time_ns > 0);
  /* the median of the timed batches: one slow sample cannot move it */
  for (i = 0; i < CBI_WARMUP_TIMED_BATCHES; i++) {
    fail_unless (w.steady_samples_ns[i] > 0);
    below += w.steady_samples_ns[i] < w.steady_time_ns;
    above += w.steady_samples_ns[i] > w.steady_time_ns;
  }
  fail_unless (below <= CBI_WARMUP_TIMED_BATCHES / 2
      && above <= CBI_WARMUP_TIMED_BATCHES / 2);
  fail_unless (w.pool.reserved_bytes > 0);
  fail_unless (w.pool.peak_reserved_bytes >= w.pool.reserved_bytes);
  run_step_edge (e, 4, row, &r);
  fail_if (r.replanned);
  fail_unless_equals_uint64 (r.fresh_allocations, 0);
  fail_unless_equals_uint64 (r.pool.reserved_bytes, w.pool.reserved_bytes);
  cbi_engine_free (e);
}

GST_END_TEST;

/* The threads of this process now. */
static guint
count_threads_named (const gchar * name)
{
  GDir *dir = g_dir_open ("/proc/self/task", 0, NULL);
  const gchar *tid;
  guint n = 0;

  fail_unless (dir != NULL);
  while ((tid = g_dir_read_name (dir))) {
    gchar *path = g_build_filename ("/proc/self/task", tid, "comm", NULL);
    gchar *comm = NULL;

    if (name == NULL || (g_file_get_contents (path, &comm, NULL, NULL)
            && g_strcmp0 (g_strchomp (comm), name) == 0))
      n++;
    g_free (comm);
    g_free (path);
  }
  g_dir_close (dir);
  return n;
}

static guint
count_threads (void)
{
  return count_threads_named (NULL);
}

typedef struct
{
  CbiEngine *engine;
  const CbiFrameBatch *batch;
  GMutex lock;
  GCond cond;
  gboolean ran, counted;
} OtherCaller;

/* Runs a batch, then stays until the test has counted the threads. */
static gpointer
run_from_another_thread (gpointer data)
{
  OtherCaller *c = data;
  CbiBatchReport r;
  gboolean ok = cbi_engine_run (c->engine, c->batch, &r, NULL);

  g_mutex_lock (&c->lock);
  c->ran = ok;
  g_cond_broadcast (&c->cond);
  while (!c->counted)
    g_cond_wait (&c->cond, &c->lock);
  g_mutex_unlock (&c->lock);
  return NULL;
}

typedef struct
{
  CbiWorker *worker;
  GThread *ran_on;
  GThread *inner_ran_on;
} WorkerCall;

static void
note_inner_thread (gpointer data)
{
  WorkerCall *c = data;

  c->inner_ran_on = g_thread_self ();
}

/* Notes its thread, then calls the worker from inside the call. */
static void
note_thread_and_call_again (gpointer data)
{
  WorkerCall *c = data;

  c->ran_on = g_thread_self ();
  cbi_worker_call (c->worker, note_inner_thread, c);
}

GST_START_TEST (test_a_worker_call_runs_on_its_thread_and_a_nested_one_at_once)
{
  WorkerCall c = { NULL, NULL, NULL };
  GError *err = NULL;

  c.worker = cbi_worker_new ("test-worker", &err);
  fail_unless (c.worker != NULL, "%s", err ? err->message : "");
  fail_if (cbi_worker_is_current (c.worker));
  /* a call inside a call would wait for itself if it were queued */
  cbi_worker_call (c.worker, note_thread_and_call_again, &c);
  fail_unless (c.ran_on != NULL && c.ran_on != g_thread_self ());
  fail_unless (c.inner_ran_on == c.ran_on);
  cbi_worker_free (c.worker);
}

GST_END_TEST;

/* A host on a worker, and the calls it serves. */
typedef struct
{
  CbiWorker *worker;
  gint to_serve;                /* the host stops after this many, -1: never */
  gint served;
  gboolean in_host;
  gint hosts_returned;
  gint in_host_calls;           /* calls that found themselves in the host */
  gint calls;
} HostedCalls;

static gboolean
host_serves_more (gpointer data)
{
  HostedCalls *h = data;

  h->served++;
  return h->to_serve < 0 || h->served < h->to_serve;
}

static void
host_serving (gpointer data)
{
  HostedCalls *h = data;

  fail_unless (cbi_worker_current () == h->worker);
  h->in_host = TRUE;
  cbi_worker_serve (h->worker, host_serves_more, h);
  h->in_host = FALSE;
  h->hosts_returned++;
}

static void
note_whether_hosted (gpointer data)
{
  HostedCalls *h = data;

  fail_unless (cbi_worker_current () == h->worker);
  h->calls++;
  if (h->in_host)
    h->in_host_calls++;
}

static void
ask_for_a_host (gpointer data)
{
  HostedCalls *h = data;

  note_whether_hosted (h);
  cbi_worker_host_next (h->worker, host_serving, h);
}

GST_START_TEST (test_a_host_runs_the_next_calls_until_it_says_stop)
{
  HostedCalls h = { NULL, 2, 0, FALSE, 0, 0, 0 };
  GError *err = NULL;
  gint i;

  h.worker = cbi_worker_new ("test-worker", &err);
  fail_unless (h.worker != NULL, "%s", err ? err->message : "");
  fail_unless (cbi_worker_current () == NULL);
  /* the call that asks returns first; the next two run in the host, the
   * one after them on the worker's own loop again */
  cbi_worker_call (h.worker, ask_for_a_host, &h);
  for (i = 0; i < 3; i++)
    cbi_worker_call (h.worker, note_whether_hosted, &h);
  fail_unless_equals_int (h.calls, 4);
  fail_unless_equals_int (h.in_host_calls, 2);
  fail_unless_equals_int (h.hosts_returned, 1);
  /* a host that never says stop ends when the worker is freed */
  h.to_serve = -1;
  cbi_worker_call (h.worker, ask_for_a_host, &h);
  cbi_worker_call (h.worker, note_whether_hosted, &h);
  fail_unless_equals_int (h.in_host_calls, 3);
  cbi_worker_free (h.worker);
  fail_unless_equals_int (h.hosts_returned, 2);
}

GST_END_TEST;

GST_START_TEST (test_cpu_batches_from_any_thread_share_one_openmp_pool)
{
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 4, NULL, NULL, NULL);
  OtherCaller c = { NULL, &layout };
  GThread *others[2];
  guint before, i;
  CbiBatchReport w;
  CbiEngine *e;

  /* a team of two: the engine's compute thread and one OpenMP worker.
   * The warm-up (a state change), this thread and two others (the
   * streaming thread, the batch-timeout task) all submit; were each to
   * start its own team, libgomp would keep a worker for each and, with
   * more threads than cores, throttle every spin */
  /* the compute threads of the engines before this one, and their OpenMP
   * workers (which take the name), end on their own once released; in
   * one process for all tests (valgrind) they may still be on their way
   * out: wait for them, up to 10 s */
  for (i = 0; i < 1000 && count_threads_named ("cbi-compute") > 0; i++)
    g_usleep (10000);
  before = count_threads ();
  e = cpu_engine (0);
  c.engine = e;
  cbi_engine_set_threads (e, 2);
  fail_unless (cbi_engine_warmup (e, &layout, &w, NULL));
  fail_unless_equals_int (w.threads, 2);
  fail_unless (cbi_engine_run (e, &layout, &w, NULL));
  fail_unless_equals_int (w.threads, 2);
  g_mutex_init (&c.lock);
  g_cond_init (&c.cond);
  for (i = 0; i < G_N_ELEMENTS (others); i++) {
    g_mutex_lock (&c.lock);
    c.ran = FALSE;
    g_mutex_unlock (&c.lock);
    others[i] = g_thread_new ("other", run_from_another_thread, &c);
    g_mutex_lock (&c.lock);
    while (!c.ran)
      g_cond_wait (&c.cond, &c.lock);
    g_mutex_unlock (&c.lock);
  }
  fail_unless_equals_int (count_threads (), before + 2 + 2);

  g_mutex_lock (&c.lock);
  c.counted = TRUE;
  g_cond_broadcast (&c.cond);
  g_mutex_unlock (&c.lock);
  for (i = 0; i < G_N_ELEMENTS (others); i++)
    g_thread_join (others[i]);
  cbi_engine_free (e);
  /* the compute thread's OpenMP worker ends on its own once released:
   * wait for it, up to 10 s (a thread that stays is what this is for) */
  for (i = 0; i < 1000 && count_threads () > before; i++)
    g_usleep (10000);
  fail_unless_equals_int (count_threads (), before);
  g_cond_clear (&c.cond);
  g_mutex_clear (&c.lock);
}

GST_END_TEST;

GST_START_TEST (test_submitted_batches_take_slots_in_turn_and_refuse_a_busy_one)
{
  CbiEngine *e = cpu_engine (0);
  guint8 in_px[8 * 8 * 3], out_px[8 * 8 * 3];
  const guint8 *in[1] = { in_px };
  guint8 *out[1] = { out_px };
  const gint stride[1] = { 24 };
  CbiFrameBatch b = cbi_test_rgb_batch (8, 8, 2, in, out, stride);
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 2, NULL, NULL, NULL);
  CbiBatchReport r;
  GError *err = NULL;
  guint t0, t1, t2;

  memset (in_px, 128, sizeof (in_px));
  fail_unless (cbi_engine_set_inflight (e, 2, NULL));
  fail_unless (cbi_engine_submit (e, &b, &t0, &r, NULL));
  fail_unless (cbi_engine_submit (e, &b, &t1, &r, NULL));
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
  /* slot 0 is free again, slot 1 still busy: the next takes slot 0 */
  fail_unless (cbi_engine_submit (e, &b, &t2, &r, NULL));
  fail_unless_equals_int (t2, 0);
  fail_unless (cbi_engine_collect (e, t1, &b, &r, NULL));
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
  CbiEngine *e = cpu_engine (0);
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
    y = cbi_engine_get_output (e, 0, &shape, NULL);
    fail_unless (y != NULL);
    fail_unless_equals_int (shape.dims[0], i + 1);
    cbi_engine_release (e, tickets[i]);
  }
  cbi_engine_free (e);
}

GST_END_TEST;

/* The peak bytes a warm-up of @batch reserves on this CPU, without a limit:
 * oneDNN sizes its workspaces for the CPU it runs on. */
static guint64
warmup_peak_reserved (const CbiFrameBatch * batch)
{
  CbiEngine *e = cpu_engine (0);
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
  CbiEngine *e = cpu_engine (frames_bytes);
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
  e = cpu_engine (limit + big_frames);
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
  fail_unless (cbi_engine_run_tensor (b, &in, x, &tensor, NULL));
  fail_unless (frames.pool.reserved_bytes < tensor.pool.reserved_bytes,
      "frames %" G_GUINT64_FORMAT " bytes, tensor %" G_GUINT64_FORMAT,
      frames.pool.reserved_bytes, tensor.pool.reserved_bytes);
  cbi_engine_free (a);
  cbi_engine_free (b);
}

GST_END_TEST;

/* A ConvTranspose graph: x [2, 3, 5, 4] -> ConvTranspose (3 -> 2, kernel
 * @k, stride @s, pads @p, output_padding @op, with bias) -> y. */
static CbiGraph *
conv_transpose_graph (gint64 k, gint64 s, gint64 p, gint64 op)
{
  CbiGraph *g = cbi_graph_new ();
  const gint64 x_dims[4] = { -1, 3, 5, 4 }, w_dims[4] = { 3, 2, k, k };
  const gint64 b_dims[1] = { 2 };
  CbiConvAttrs a = { {s, s}, {1, 1}, {p, p, p, p}, 1, {0, 0}, FALSE,
  {op, op}
  };
  gfloat *w = g_new (gfloat, 3 * 2 * k * k), *b = g_new (gfloat, 2);
  gint in[3], i;

  for (i = 0; i < 3 * 2 * k * k; i++)
    w[i] = ((i * 37) % 17 - 8) / 8.0f;
  b[0] = 0.25f;
  b[1] = -0.5f;
  g->input = in[0] = cbi_graph_add_tensor (g, "x", 4, x_dims, NULL);
  in[1] = cbi_graph_add_tensor (g, "w", 4, w_dims, w);
  in[2] = cbi_graph_add_tensor (g, "b", 1, b_dims, b);
  g->outputs[g->n_outputs++] = cbi_graph_add_tensor (g, "y", 0, NULL, NULL);
  cbi_graph_add_node (g, CBI_OP_CONV_TRANSPOSE, "up", 3, in, g->outputs[0], &a);
  return g;
}

/* Runs @g (transfer full) on a fixed input; returns its output. */
static gfloat *
run_tensor_graph (CbiGraph * g, CbiShape * out)
{
  const CbiShape in = { 4, {2, 3, 5, 4} };
  gfloat x[2 * 3 * 5 * 4];
  GError *err = NULL;
  CbiBatchReport r;
  gboolean fallback;
  CbiEngine *e;
  const gfloat *y;
  gfloat *copy;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (x); i++)
    x[i] = ((gint) (i * 13) % 11 - 5) / 5.0f;
  e = cbi_engine_new (g, CBI_BACKEND_CPU, 0, 0, &fallback, &err);
  fail_unless (e != NULL);
  fail_unless (cbi_engine_run_tensor (e, &in, x, &r, &err), "%s",
      err ? err->message : "");
  y = cbi_engine_get_output (e, 0, out, &err);
  fail_unless (y != NULL);
  copy = g_memdup2 (y, cbi_shape_count (out) * sizeof (gfloat));
  cbi_engine_free (e);
  return copy;
}

GST_START_TEST (test_strided_conv_transpose_runs_as_conv_and_depth_to_space)
{
  /* PyTorch's two usual x2 upsamplers */
  const gint64 forms[2][4] = { {3, 2, 1, 1}, {4, 2, 1, 0} };
  guint f;

  for (f = 0; f < G_N_ELEMENTS (forms); f++) {
    const gint64 *k = forms[f];
    CbiGraph *lowered = conv_transpose_graph (k[0], k[1], k[2], k[3]);
    CbiShape a, b;
    gfloat *direct, *sub;
    gint64 i;

    fail_unless (cbi_graph_lower_conv_transpose (lowered, 0));
    fail_unless_equals_int (lowered->nodes->len, 2);
    fail_unless_equals_int (cbi_graph_node (lowered, 0)->op, CBI_OP_CONV);
    fail_unless_equals_int (cbi_graph_node (lowered, 1)->op,
        CBI_OP_DEPTH_TO_SPACE);
    direct = run_tensor_graph (conv_transpose_graph (k[0], k[1], k[2], k[3]),
        &a);
    sub = run_tensor_graph (lowered, &b);
    fail_unless (cbi_shape_equal (&a, &b));
    fail_unless_equals_int (a.dims[2], 10);
    fail_unless_equals_int (a.dims[3], 8);
    for (i = 0; i < cbi_shape_count (&a); i++)
      fail_unless (fabsf (direct[i] - sub[i]) < 1e-5f, "form %u, value %"
          G_GINT64_FORMAT ": %f vs %f", f, i, direct[i], sub[i]);
    g_free (direct);
    g_free (sub);
  }
}

GST_END_TEST;

GST_START_TEST (test_an_activation_after_depth_to_space_moves_before_it)
{
  CbiGraph *g = conv_transpose_graph (3, 2, 1, 1), *direct;
  gint relu_in, relu_out;
  CbiShape a, b;
  gfloat *x, *y;
  gint64 i;

  /* ConvTranspose -> Relu, lowered: Conv -> DepthToSpace -> Relu, then
   * Conv -> Relu -> DepthToSpace */
  relu_in = g->outputs[0];
  relu_out = cbi_graph_add_tensor (g, "z", 0, NULL, NULL);
  cbi_graph_add_node (g, CBI_OP_RELU, "relu", 1, &relu_in, relu_out, NULL);
  g->outputs[0] = relu_out;
  direct = conv_transpose_graph (3, 2, 1, 1);
  relu_in = direct->outputs[0];
  relu_out = cbi_graph_add_tensor (direct, "z", 0, NULL, NULL);
  cbi_graph_add_node (direct, CBI_OP_RELU, "relu", 1, &relu_in, relu_out, NULL);
  direct->outputs[0] = relu_out;

  fail_unless (cbi_graph_lower_conv_transpose (g, 0));
  cbi_graph_sink_eltwise (g);
  fail_unless_equals_int (g->nodes->len, 3);
  fail_unless_equals_int (cbi_graph_node (g, 0)->op, CBI_OP_CONV);
  fail_unless_equals_int (cbi_graph_node (g, 1)->op, CBI_OP_RELU);
  fail_unless_equals_int (cbi_graph_node (g, 2)->op, CBI_OP_DEPTH_TO_SPACE);
  fail_unless_equals_int (cbi_graph_node (g, 2)->output, g->outputs[0]);

  x = run_tensor_graph (direct, &a);
  y = run_tensor_graph (g, &b);
  fail_unless (cbi_shape_equal (&a, &b));
  for (i = 0; i < cbi_shape_count (&a); i++)
    fail_unless (fabsf (x[i] - y[i]) < 1e-5f && y[i] >= 0.0f,
        "value %" G_GINT64_FORMAT ": %f vs %f", i, x[i], y[i]);
  g_free (x);
  g_free (y);
}

GST_END_TEST;

GST_START_TEST (test_conv_transpose_of_other_forms_is_left_as_it_is)
{
  /* stride 1, and an output that is not twice the input */
  CbiGraph *g1 = conv_transpose_graph (3, 1, 1, 0);
  CbiGraph *g2 = conv_transpose_graph (3, 2, 0, 0);

  fail_if (cbi_graph_lower_conv_transpose (g1, 0));
  fail_if (cbi_graph_lower_conv_transpose (g2, 0));
  fail_unless_equals_int (g1->nodes->len, 1);
  fail_unless_equals_int (g2->nodes->len, 1);
  cbi_graph_free (g1);
  cbi_graph_free (g2);
}

GST_END_TEST;

/* Test model @file (tests/models) on the CPU backend. */
static CbiEngine *
cpu_engine_for_model (const gchar * file)
{
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR, file, NULL);
  GError *err = NULL;
  gboolean fallback;
  CbiEngine *e;

  e = cbi_engine_new (cbi_onnx_load (path, &err), CBI_BACKEND_CPU, 0, 0,
      &fallback, &err);
  fail_unless (e != NULL, "%s: %s", file, err ? err->message : "");
  g_free (path);
  return e;
}

/* Runs @in through @e inside an OpenMP region of two threads, on its
 * first: as the CPU backend runs a batch on one thread. */
static gboolean
run_tensor_in_a_region (CbiEngine * e, const CbiShape * in, const gfloat * x,
    GError ** error)
{
  gboolean ok = FALSE;
  CbiBatchReport r;

#pragma omp parallel num_threads (2)
  {
    if (omp_get_thread_num () == 0)
      ok = cbi_engine_run_tensor (e, in, x, &r, error);
  }
  return ok;
}

GST_START_TEST (test_a_batch_on_one_thread_gives_the_teams_output)
{
  const CbiShape in = { 4, {2, 3, 16, 16} };
  gfloat x[2 * 3 * 16 * 16], *team, max_err = 0.0f, ref = 0.0f;
  GError *err = NULL;
  CbiBatchReport r;
  const gfloat *y;
  CbiEngine *e;
  CbiShape out;
  gint64 i;

  for (i = 0; i < (gint64) G_N_ELEMENTS (x); i++)
    x[i] = ((gint) (i * 29) % 23 - 11) / 11.0f;
  /* two threads whatever the machine has: the compute thread's own count,
   * not this thread's */
  e = cpu_engine_for_model ("style.onnx");
  cbi_engine_set_threads (e, 2);
  fail_unless (cbi_engine_run_tensor (e, &in, x, &r, &err), "%s",
      err ? err->message : "");
  fail_unless_equals_int (r.threads, 2);
  y = cbi_engine_get_output (e, 0, &out, &err);
  team = g_memdup2 (y, cbi_shape_count (&out) * sizeof (gfloat));
  fail_unless (run_tensor_in_a_region (e, &in, x, &err), "%s",
      err ? err->message : "");
  y = cbi_engine_get_output (e, 0, &out, &err);
  for (i = 0; i < cbi_shape_count (&out); i++) {
    max_err = MAX (max_err, fabsf (y[i] - team[i]));
    ref = MAX (ref, fabsf (team[i]));
  }
  fail_unless (ref > 0.0f && max_err <= 1e-6f * ref, "max error %g over %g",
      max_err, ref);
  g_free (team);
  cbi_engine_free (e);
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
  guint i, c;

  for (i = 0; i < S * S; i++)
    for (c = 0; c < 3; c++) {
      in_px[i * 3 + c] = (i * 37 + c * 91) % 256;
      x[c * S * S + i] = in_px[i * 3 + c] / 255.0f;
    }
  b.out_width = b.out_height = O;
  b.out_channels = 3;
  b.out_stride = out_stride;
  e = cpu_engine_for_model ("ops-shuffle-transpose.onnx");
  fail_unless (cbi_engine_run (e, &b, &r, &err), "%s", err ? err->message : "");
  fail_unless (cbi_engine_run_tensor (e, &shape, x, &r, &err), "%s",
      err ? err->message : "");
  y = cbi_engine_get_output (e, 0, &out, &err);
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
  tcase_add_test (tc, test_pool_counts_fresh_allocations_once);
  tcase_add_test (tc, test_pool_reuses_a_cached_block_only_when_it_fits);
  tcase_add_test (tc, test_pool_trim_gives_back_cached_blocks_only);
  tcase_add_test (tc, test_pool_peaks_restart_at_current_values);
  tcase_add_test (tc, test_pool_refuses_past_its_limit_and_allocator_failures);
  tcase_add_test (tc,
      test_pool_trims_cached_blocks_before_refusing_at_the_limit);
  tcase_add_test (tc, test_default_model_keeps_the_frame_size);
  tcase_add_test (tc, test_shape_inference_names_the_node_that_does_not_fit);
  tcase_add_test (tc, test_pack_puts_channels_in_model_order_and_fills_padding);
  tcase_add_test (tc,
      test_pack_scales_and_shifts_each_channel_and_unpack_undoes_it);
  tcase_add_test (tc, test_unpack_clamps_and_copies_the_fourth_byte);
  tcase_add_test (tc, test_default_model_draws_a_dark_line_on_an_edge);
  tcase_add_test (tc, test_engine_replans_only_for_a_new_shape);
  tcase_add_test (tc, test_a_batch_on_one_thread_gives_the_teams_output);
  tcase_add_test (tc,
      test_warmup_leaves_no_fresh_memory_and_times_a_median_batch);
  tcase_add_test (tc, test_a_failed_plan_returns_its_memory_and_an_error);
  tcase_add_test (tc,
      test_a_worker_call_runs_on_its_thread_and_a_nested_one_at_once);
  tcase_add_test (tc, test_a_host_runs_the_next_calls_until_it_says_stop);
  tcase_add_test (tc, test_cpu_batches_from_any_thread_share_one_openmp_pool);
  tcase_add_test (tc,
      test_unpacked_frames_match_the_tensor_after_a_last_transpose);
  tcase_add_test (tc,
      test_warmup_frames_count_against_the_limit_before_they_exist);
  tcase_add_test (tc,
      test_submitted_batches_take_slots_in_turn_and_refuse_a_busy_one);
  tcase_add_test (tc,
      test_a_plan_with_a_batch_in_flight_outlives_the_plan_cache);
  /* where CUDA runs, the GPU suite covers the engine's choice */
  why_no_cuda = cbi_test_cuda_unavailable ();
  if (why_no_cuda)
    tcase_add_test (tc, test_cuda_backend_request_fails_cleanly_without_it);
  else
    tcase_add_test (tc,
        test_a_cuda_plan_that_unpacks_frames_keeps_no_host_tensor);
  g_free (why_no_cuda);
  tcase_add_test (tc,
      test_strided_conv_transpose_runs_as_conv_and_depth_to_space);
  tcase_add_test (tc, test_conv_transpose_of_other_forms_is_left_as_it_is);
  tcase_add_test (tc, test_an_activation_after_depth_to_space_moves_before_it);
  return s;
}

GST_CHECK_MAIN (engine);
