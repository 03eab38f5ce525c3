/* GStreamer cudabatchinfer element tests: live streams under load:
 * interval, QoS, max-latency and drop-policy, and the latency the element
 * reports
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/check/gsttestclock.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>

#include "cbicudaprobe.h"

#define W 32
#define H 24
#define CAPS_RGB "video/x-raw,format=RGB,width=32,height=24,framerate=30/1"
/* a large MatMul with a tensor output (tests/models/generate.py) */
#define SLOW_MATMUL "model=" CBI_TEST_MODELS_DIR "/slow-matmul.onnx"

/* Frame @i of a 30 fps stream: exactly i / 30 s, so that three frames
 * span 100 ms. */
static GstClockTime
pts_of (guint i)
{
  return gst_util_uint64_scale_int (i, GST_SECOND, 30);
}

static GstBuffer *
make_frame (guint i)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);

  gst_buffer_memset (buf, 0, (guint8) (i * 37 + 11), W * H * 3);
  GST_BUFFER_PTS (buf) = pts_of (i);
  GST_BUFFER_DURATION (buf) = pts_of (i + 1) - pts_of (i);
  GST_BUFFER_OFFSET (buf) = i;
  return buf;
}

/* The backends the loop tests run on: the CPU, and CUDA where a device is
 * usable (the suite registers the second turn only there). */
static const gchar *backends[] = { "cpu", "cuda" };

/* An element of "cudabatchinfer backend=@backend @props" with its bus,
 * and a harness on its always pads (PLAYING), caps set. */
static GstHarness *
harness_new_on (const gchar * backend, const gchar * props, GstBus ** bus)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer backend=%s %s", backend,
      props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstHarness *h;

  fail_unless (e != NULL, "could not make %s", desc);
  g_free (desc);
  *bus = gst_bus_new ();
  gst_element_set_bus (e, *bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  return h;
}

static GstHarness *
harness_new (const gchar * props, GstBus ** bus)
{
  return harness_new_on ("cpu", props, bus);
}

static void
harness_free (GstHarness * h, GstBus * bus)
{
  gst_harness_teardown (h);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

static void
push (GstHarness * h, guint i)
{
  fail_unless_equals_int (gst_harness_push (h, make_frame (i)), GST_FLOW_OK);
}

static guint64
stat_of (GstElement * e, const gchar * field)
{
  GstStructure *s;
  guint64 v = 0;

  g_object_get (e, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, field, &v), "no stat %s", field);
  gst_structure_free (s);
  return v;
}

/* The @field of stream @k in the stats' `streams` array. */
static guint64
stream_stat_of (GstElement * e, guint k, const gchar * field)
{
  const GstStructure *st;
  const GValue *streams;
  GstStructure *s;
  guint64 v = 0;

  g_object_get (e, "stats", &s, NULL);
  streams = gst_structure_get_value (s, "streams");
  fail_unless (streams != NULL && gst_value_array_get_size (streams) > k);
  st = gst_value_get_structure (gst_value_array_get_value (streams, k));
  fail_unless (gst_structure_get_uint64 (st, field, &v), "no stat %s", field);
  gst_structure_free (s);
  return v;
}

/* Frames in = out + dropped, as stats says; returns frames-out. */
static guint64
assert_frames_add_up (GstElement * e)
{
  guint64 in = stat_of (e, "frames-in"), out = stat_of (e, "frames-out"),
      dropped = stat_of (e, "frames-dropped");

  fail_unless_equals_uint64 (in, out + dropped);
  return out;
}

/* Pulls the output of frame @i, checks its timestamps and that it was
 * inferred (@inferred) or not, and returns it. */
static GstBuffer *
pull_frame (GstHarness * h, guint i, gboolean inferred)
{
  GstBuffer *out = gst_harness_pull (h);
  GstBatchMemoryMeta *meta;

  fail_unless (out != NULL, "no output for frame %u", i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (out), pts_of (i));
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
  meta = gst_buffer_get_batch_memory_meta (out);
  fail_unless (meta != NULL);
  fail_unless_equals_int (meta->inferred, inferred);
  return out;
}

static gboolean
same_bytes (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;
  gboolean same;

  fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
  fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
  same = ma.size == mb.size && memcmp (ma.data, mb.data, ma.size) == 0;
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return same;
}

GST_START_TEST (test_interval_infers_every_kth_frame_and_repeats_its_image)
{
  GstBus *bus;
  GstHarness *h = harness_new_on (backends[__i__], "batch=2 interval=3", &bus);
  GstBuffer *last = NULL, *out;
  guint i;

  for (i = 0; i < 14; i++)
    push (h, i);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 0; i < 14; i++) {
    out = pull_frame (h, i, i % 3 == 0);
    /* a skipped frame goes out as the last result of its stream */
    if (i % 3 == 0)
      gst_buffer_replace (&last, out);
    else
      fail_unless (same_bytes (out, last), "frame %u is not frame %u's "
          "result", i, i - i % 3);
    gst_buffer_unref (out);
  }
  gst_buffer_unref (last);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-inferred"), 5);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-skipped"), 9);
  /* frames 0 and 3, 6 and 9, then 12 padded */
  fail_unless_equals_uint64 (stat_of (h->element, "batches"), 3);
  fail_unless_equals_uint64 (stat_of (h->element, "padded-frames"), 1);
  fail_unless_equals_uint64 (assert_frames_add_up (h->element), 14);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST
    (test_interval_skipped_frames_carry_the_last_tensors_by_reference) {
  GstBus *bus;
  GstHarness *h =
      harness_new_on (backends[__i__], SLOW_MATMUL " batch=2 interval=2", &bus);
  GstBatchTensorMeta *tm;
  GstBuffer *out, *data = NULL;
  guint i;

  for (i = 0; i < 8; i++)
    push (h, i);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 0; i < 8; i++) {
    out = pull_frame (h, i, i % 2 == 0);
    tm = gst_buffer_get_batch_tensor_meta (out);
    fail_unless (tm != NULL, "frame %u has no tensors", i);
    fail_unless_equals_int (tm->n_tensors, 1);
    fail_unless_equals_int (tm->tensors[0].dims[1], 2048);
    /* the same tensors, not a copy */
    if (i % 2 == 0)
      gst_buffer_replace (&data, tm->data);
    else
      fail_unless (tm->data == data, "frame %u does not hold frame %u's "
          "tensors", i, i - 1);
    gst_buffer_unref (out);
  }
  gst_buffer_unref (data);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-inferred"), 4);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-skipped"), 4);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_interval_starts_again_after_a_flushing_seek)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=1 interval=4", &bus);
  GstSegment segment;
  guint i;

  push (h, 0);
  push (h, 1);
  gst_buffer_unref (pull_frame (h, 0, TRUE));
  /* frame 1 waits to ride with the next batch; the seek drops it */
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  /* the first frame after the seek is inferred, then every fourth */
  for (i = 2; i < 7; i++)
    push (h, i);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 2; i < 7; i++)
    gst_buffer_unref (pull_frame (h, i, i == 2 || i == 6));
  fail_unless_equals_uint64 (stat_of (h->element, "frames-dropped"), 1);
  fail_unless_equals_uint64 (assert_frames_add_up (h->element), 6);
  harness_free (h, bus);
}

GST_END_TEST;

/* A harness on stream @k of @e: requests sink_k, which adds src_k. */
static GstHarness *
stream_harness (GstElement * e, guint k)
{
  gchar *sink = g_strdup_printf ("sink_%u", k);
  gchar *src = g_strdup_printf ("src_%u", k);
  GstHarness *h = gst_harness_new_with_element (e, sink, src);

  g_free (sink);
  g_free (src);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  return h;
}

/* Waits for EOS out of @h's src_K: its stream's frames are all counted
 * by then. */
static void
wait_eos (GstHarness * h)
{
  GstEvent *event;
  gboolean eos = FALSE;

  while (!eos && (event = gst_harness_pull_event (h))) {
    eos = GST_EVENT_TYPE (event) == GST_EVENT_EOS;
    gst_event_unref (event);
  }
  fail_unless (eos, "no EOS");
}

GST_START_TEST (test_interval_counts_each_stream_on_its_own)
{
  GstElement *e = gst_parse_launch ("cudabatchinfer backend=cpu batch=2 "
      "interval=2", NULL);
  GstHarness *h0 = stream_harness (e, 0), *h1 = stream_harness (e, 1);
  guint i;

  /* stream 0 every frame, stream 1 one frame in three */
  for (i = 0; i < 9; i++) {
    push (h0, i);
    if (i % 3 == 0)
      push (h1, i);
  }
  fail_unless (gst_harness_push_event (h0, gst_event_new_eos ()));
  fail_unless (gst_harness_push_event (h1, gst_event_new_eos ()));
  for (i = 0; i < 9; i++)
    gst_buffer_unref (pull_frame (h0, i, i % 2 == 0));
  for (i = 0; i < 9; i += 3)
    gst_buffer_unref (pull_frame (h1, i, i == 0 || i == 6));
  wait_eos (h0);
  wait_eos (h1);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-inferred"), 5);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-skipped"), 4);
  fail_unless_equals_uint64 (stream_stat_of (e, 1, "frames-inferred"), 2);
  fail_unless_equals_uint64 (stream_stat_of (e, 1, "frames-skipped"), 1);
  fail_unless_equals_uint64 (stat_of (e, "frames-inferred"), 7);
  fail_unless_equals_uint64 (assert_frames_add_up (e), 12);
  gst_harness_teardown (h1);
  gst_harness_teardown (h0);
  gst_object_unref (e);
}

GST_END_TEST;

/* The QoS messages on @bus: how many, and the last's figures. */
static guint
qos_messages (GstBus * bus, const gchar * reason, guint64 * processed,
    guint64 * dropped)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_QOS))) {
    const GstStructure *s = gst_message_get_structure (msg);
    GstFormat format;

    if (g_strcmp0 (gst_structure_get_string (s, "reason"), reason) == 0) {
      gst_message_parse_qos_stats (msg, &format, processed, dropped);
      fail_unless_equals_int (format, GST_FORMAT_BUFFERS);
      fail_unless_equals_string (gst_structure_get_string (s, "pad"), "sink");
      n++;
    }
    gst_message_unref (msg);
  }
  return n;
}

GST_START_TEST (test_qos_drops_frames_already_late_for_the_sink_uninferred)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=2", &bus);
  guint64 processed = 0, dropped = 0;
  guint i;

  /* the sink says: what runs up to frame 4 is late */
  fail_unless (gst_harness_push_upstream_event (h,
          gst_event_new_qos (GST_QOS_TYPE_UNDERFLOW, 0.8,
              pts_of (4) - pts_of (3), pts_of (3))));
  for (i = 0; i < 8; i++)
    push (h, i);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 5; i < 8; i++)
    gst_buffer_unref (pull_frame (h, i, TRUE));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-late"), 5);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-inferred"), 3);
  fail_unless_equals_uint64 (assert_frames_add_up (h->element), 3);
  fail_unless_equals_int (qos_messages (bus, "late", &processed, &dropped), 5);
  fail_unless_equals_uint64 (dropped, 5);
  fail_unless_equals_uint64 (processed, 0);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_qos_false_infers_late_frames_all_the_same)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=2 qos=false", &bus);
  guint i;

  fail_unless (gst_harness_push_upstream_event (h,
          gst_event_new_qos (GST_QOS_TYPE_UNDERFLOW, 0.8, pts_of (2),
              pts_of (2))));
  for (i = 0; i < 4; i++)
    push (h, i);
  for (i = 0; i < 4; i++)
    gst_buffer_unref (pull_frame (h, i, TRUE));
  fail_unless_equals_uint64 (stat_of (h->element, "frames-late"), 0);
  harness_free (h, bus);
}

GST_END_TEST;

/* Holds each push of the element's src pad until the test lets it go:
 * the model's pace, as seen from the frames that wait for a place in
 * flight. Records the pipeline clock's time at each output. */
typedef struct
{
  GMutex lock;
  GCond cond;
  guint entered;
  guint released;
  GstClock *clock;
  GArray *times;                /* the clock at each output */
  GArray *offsets;              /* each output's frame */
  GstPad *pad;
  gulong probe;
} Gate;

static GstPadProbeReturn
gate_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Gate *g = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 offset = GST_BUFFER_OFFSET (buf);
  GstClockTime now;

  g_mutex_lock (&g->lock);
  g->entered++;
  g_cond_broadcast (&g->cond);
  while (g->released < g->entered)
    g_cond_wait (&g->cond, &g->lock);
  now = gst_clock_get_time (g->clock);
  g_array_append_val (g->times, now);
  g_array_append_val (g->offsets, offset);
  g_mutex_unlock (&g->lock);
  return GST_PAD_PROBE_OK;
}

static void
gate_start (Gate * g, GstHarness * h, const gchar * pad_name)
{
  g_mutex_init (&g->lock);
  g_cond_init (&g->cond);
  g->entered = g->released = 0;
  g->clock = GST_CLOCK (gst_harness_get_testclock (h));
  g->times = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  g->offsets = g_array_new (FALSE, FALSE, sizeof (guint64));
  g->pad = gst_element_get_static_pad (h->element, pad_name);
  g->probe = gst_pad_add_probe (g->pad, GST_PAD_PROBE_TYPE_BUFFER,
      gate_probe, g, NULL);
}

/* Waits until @n outputs have reached the gate. */
static void
gate_wait (Gate * g, guint n)
{
  g_mutex_lock (&g->lock);
  while (g->entered < n)
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
}

/* Lets the output held at the gate go, and waits for the next batch's to
 * reach it: a place in flight freed, and the frames that waited went. */
static void
gate_step (Gate * g)
{
  g_mutex_lock (&g->lock);
  g->released++;
  g_cond_broadcast (&g->cond);
  while (g->entered < g->released + 1)
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
}

/* Lets every output through from now on. */
static void
gate_open (Gate * g)
{
  g_mutex_lock (&g->lock);
  g->released = G_MAXUINT / 2;
  g_cond_broadcast (&g->cond);
  g_mutex_unlock (&g->lock);
}

static void
gate_free (Gate * g)
{
  gst_pad_remove_probe (g->pad, g->probe);
  gst_object_unref (g->pad);
  gst_object_unref (g->clock);
  g_array_unref (g->times);
  g_array_unref (g->offsets);
  g_mutex_clear (&g->lock);
  g_cond_clear (&g->cond);
}

/* A live source at 30 fps and a model that gives a result every 100 ms
 * (every third frame's time, one batch of one frame in flight): pushes
 * @n frames at their time on the test clock, and lets one output go every
 * third frame. Returns the frames that came out, in order. */
static GArray *
run_live_source (GstHarness * h, Gate * g, guint n)
{
  GstTestClock *clock = gst_harness_get_testclock (h);
  GArray *out;
  guint i;

  gate_start (g, h, "src");
  for (i = 0; i < n; i++) {
    gst_test_clock_set_time (clock, pts_of (i));
    push (h, i);
    if (i == 0)
      gate_wait (g, 1);
    else if (i % 3 == 0)
      gate_step (g);
  }
  gate_open (g);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  gst_object_unref (clock);
  out = g_array_ref (g->offsets);
  return out;
}

/* Each output's latency, the clock at its push minus its running time,
 * is at most @bound. */
static void
assert_latency_within (Gate * g, guint count, GstClockTime bound)
{
  guint i;

  for (i = 0; i < count; i++) {
    GstClockTime at = g_array_index (g->times, GstClockTime, i);
    guint64 frame = g_array_index (g->offsets, guint64, i);
    fail_unless (at - pts_of (frame) <= bound, "frame %" G_GUINT64_FORMAT
        " came out %" GST_TIME_FORMAT " after its time",
        frame, GST_TIME_ARGS (at - pts_of (frame)));
  }
}

/* run_live_source () for 24 frames: the frames that come out, pulled and
 * in the order they passed the gate, are @expected. */
static void
expect_live_outputs (GstHarness * h, Gate * g, const guint64 * expected,
    guint n)
{
  GArray *out;
  guint i;

  gst_harness_use_testclock (h);
  out = run_live_source (h, g, 24);
  for (i = 0; i < n; i++)
    gst_buffer_unref (pull_frame (h, expected[i], TRUE));
  fail_unless_equals_int (out->len, n);
  for (i = 0; i < out->len; i++)
    fail_unless_equals_uint64 (g_array_index (out, guint64, i), expected[i]);
  g_array_unref (out);
}

GST_START_TEST (test_oldest_policy_keeps_a_live_source_within_max_latency)
{
  GstBus *bus;
  GstHarness *h = harness_new_on (backends[__i__],
      SLOW_MATMUL " batch=1 max-inflight=1 "
      "drop-policy=oldest max-latency=100000000", &bus);
  const guint64 expected[] = { 0, 1, 4, 7, 10, 13, 16, 19, 21, 22, 23 };
  guint64 processed = 0, dropped = 0;
  Gate g;

  /* frames wait until three span 100 ms; then the oldest is dropped for
   * each new one while no place is free; at EOS the last ones go */
  expect_live_outputs (h, &g, expected, G_N_ELEMENTS (expected));
  /* while the source runs, no frame is more than 100 ms old when its
   * batch goes, nor more than 100 + 100 when its result does */
  assert_latency_within (&g, 8, 200 * GST_MSECOND);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-shed"), 13);
  fail_unless_equals_uint64 (assert_frames_add_up (h->element), 11);
  fail_unless_equals_int (qos_messages (bus, "drop-policy", &processed,
          &dropped), 13);
  fail_unless_equals_uint64 (dropped, 13);
  fail_unless_equals_uint64 (processed, 11);
  gate_free (&g);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_latest_only_policy_sends_the_newest_frame)
{
  GstBus *bus;
  GstHarness *h = harness_new_on (backends[__i__],
      SLOW_MATMUL " batch=1 max-inflight=1 " "drop-policy=latest-only", &bus);
  const guint64 expected[] = { 0, 3, 6, 9, 12, 15, 18, 21, 23 };
  Gate g;

  expect_live_outputs (h, &g, expected, G_N_ELEMENTS (expected));
  /* the freshest frame goes: each result 100 ms after its frame */
  assert_latency_within (&g, 8, 100 * GST_MSECOND);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-shed"), 15);
  fail_unless_equals_uint64 (assert_frames_add_up (h->element), 9);
  gate_free (&g);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_drop_policy_fills_whole_batches_while_the_model_keeps_up)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=4 drop-policy=latest-only", &bus);
  guint i;

  /* a place is free for each batch: nothing waits, nothing is dropped */
  for (i = 0; i < 12; i++) {
    push (h, i);
    if (i % 4 == 3)
      for (guint j = i - 3; j <= i; j++)
        gst_buffer_unref (pull_frame (h, j, TRUE));
  }
  fail_unless_equals_uint64 (stat_of (h->element, "batches"), 3);
  fail_unless_equals_uint64 (stat_of (h->element, "padded-frames"), 0);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-shed"), 0);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_max_latency_without_a_policy_cuts_the_batch_short)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=8 max-latency=100000000", &bus);
  GstBatchMemoryMeta *meta;
  GstBuffer *out;
  guint i;

  /* frame 3 comes 100 ms after frame 0: the four go, padded */
  for (i = 0; i < 3; i++)
    push (h, i);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  push (h, 3);
  for (i = 0; i < 4; i++) {
    out = pull_frame (h, i, TRUE);
    meta = gst_buffer_get_batch_memory_meta (out);
    fail_unless_equals_int (meta->frames, 4);
    fail_unless_equals_int (meta->padded, 4);
    gst_buffer_unref (out);
  }
  fail_unless_equals_uint64 (stat_of (h->element, "frames-dropped"), 0);
  harness_free (h, bus);
}

GST_END_TEST;

/* Frames 0 to @n - 1 of a live source come at once, at frame @n - 1's
 * time on the clock (a CPU batch held the streaming thread while they
 * waited upstream), into "cudabatchinfer @props": frames @first_kept on
 * come out, the ones before are shed on arrival. */
static void
assert_shed_on_arrival (const gchar * props, guint n, guint first_kept)
{
  GstBus *bus;
  GstHarness *h = harness_new (props, &bus);
  GstTestClock *clock;
  guint i;

  gst_harness_use_testclock (h);
  clock = gst_harness_get_testclock (h);
  gst_test_clock_set_time (clock, pts_of (n - 1));
  for (i = 0; i < n; i++)
    push (h, i);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = first_kept; i < n; i++)
    gst_buffer_unref (pull_frame (h, i, TRUE));
  fail_unless_equals_uint64 (stat_of (h->element, "frames-shed"), first_kept);
  fail_unless_equals_uint64 (assert_frames_add_up (h->element), n - first_kept);
  gst_object_unref (clock);
  harness_free (h, bus);
}

GST_START_TEST (test_frames_older_than_max_latency_are_shed_on_arrival)
{
  /* at frame 10's time, frames 0 to 6 are more than 100 ms old */
  assert_shed_on_arrival ("batch=2 drop-policy=oldest max-latency=100000000",
      11, 7);
}

GST_END_TEST;

GST_START_TEST (test_latest_only_sheds_frames_a_frame_late_on_arrival)
{
  /* at frame 5's time, a frame more than a frame old (0 to 3) has a newer
   * one behind it */
  assert_shed_on_arrival ("batch=1 drop-policy=latest-only", 6, 4);
}

GST_END_TEST;

GST_START_TEST (test_drop_policy_counts_each_stream_and_keeps_its_order)
{
  GstElement *e = gst_parse_launch ("cudabatchinfer backend=cpu batch=2 "
      "drop-policy=oldest max-latency=50000000", NULL);
  GstHarness *h0 = stream_harness (e, 0), *h1 = stream_harness (e, 1);
  GstTestClock *clock;
  guint i;

  gst_harness_use_testclock (h0);
  clock = gst_harness_get_testclock (h0);
  gst_test_clock_set_time (clock, pts_of (6));
  /* at frame 6's time, frames more than 50 ms old are shed */
  for (i = 0; i < 7; i++)
    push (h0, i);
  for (i = 4; i < 7; i++)
    push (h1, i);
  fail_unless (gst_harness_push_event (h0, gst_event_new_eos ()));
  fail_unless (gst_harness_push_event (h1, gst_event_new_eos ()));
  for (i = 5; i < 7; i++) {
    gst_buffer_unref (pull_frame (h0, i, TRUE));
    gst_buffer_unref (pull_frame (h1, i, TRUE));
  }
  wait_eos (h0);
  wait_eos (h1);
  fail_unless (gst_harness_try_pull (h0) == NULL);
  fail_unless (gst_harness_try_pull (h1) == NULL);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-shed"), 5);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-dropped"), 5);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-out"), 2);
  fail_unless_equals_uint64 (stream_stat_of (e, 1, "frames-shed"), 1);
  fail_unless_equals_uint64 (stream_stat_of (e, 1, "frames-out"), 2);
  fail_unless_equals_uint64 (stat_of (e, "frames-shed"), 6);
  fail_unless_equals_uint64 (assert_frames_add_up (e), 4);
  gst_object_unref (clock);
  gst_harness_teardown (h1);
  gst_harness_teardown (h0);
  gst_object_unref (e);
}

GST_END_TEST;

/* Holds the always src pad's task in the sync handler of the first batch's
 * message (post-messages=true) until released: its place in flight stays
 * taken, for request pads too, whose results it hands over. */
typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean held;
  gboolean released;
} BatchHold;

static GstBusSyncReply
hold_first_batch (GstBus * bus, GstMessage * msg, gpointer data)
{
  BatchHold *b = data;

  if (!gst_message_has_name (msg, "cudabatchinfer-batch"))
    return GST_BUS_PASS;
  g_mutex_lock (&b->lock);
  if (!b->held) {
    b->held = TRUE;
    g_cond_broadcast (&b->cond);
    while (!b->released)
      g_cond_wait (&b->cond, &b->lock);
  }
  g_mutex_unlock (&b->lock);
  return GST_BUS_PASS;
}

GST_START_TEST
    (test_an_event_waits_for_the_frames_before_it_when_later_ones_are_shed) {
  GstElement *e = gst_parse_launch ("cudabatchinfer backend=cpu batch=1 "
      "max-inflight=1 drop-policy=latest-only post-messages=true", NULL);
  GstBus *bus = gst_bus_new ();
  GstHarness *h;
  GstStructure *mark = gst_structure_new_empty ("mark");
  GstEvent *event;
  GstBuffer *out;
  BatchHold b = { 0, };

  g_mutex_init (&b.lock);
  g_cond_init (&b.cond);
  gst_element_set_bus (e, bus);
  gst_bus_set_sync_handler (bus, hold_first_batch, &b, NULL);
  h = stream_harness (e, 0);
  /* frame 0 in flight, held; then 1, an event, 2 and 3, which shed 1 and
   * 2: the event goes out after frame 0, not before it */
  push (h, 0);
  g_mutex_lock (&b.lock);
  while (!b.held)
    g_cond_wait (&b.cond, &b.lock);
  g_mutex_unlock (&b.lock);
  push (h, 1);
  fail_unless (gst_harness_push_event (h,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, mark)));
  push (h, 2);
  push (h, 3);
  g_mutex_lock (&b.lock);
  b.released = TRUE;
  g_cond_broadcast (&b.cond);
  g_mutex_unlock (&b.lock);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  out = pull_frame (h, 0, TRUE);
  gst_buffer_unref (out);
  while ((event = gst_harness_pull_event (h))
      && GST_EVENT_TYPE (event) != GST_EVENT_CUSTOM_DOWNSTREAM)
    gst_event_unref (event);
  fail_unless (event != NULL, "the event did not come out");
  gst_event_unref (event);
  gst_buffer_unref (pull_frame (h, 3, TRUE));
  wait_eos (h);
  /* each frame counted once: in 4 = out 2 + dropped 2 */
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-in"), 4);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-out"), 2);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-dropped"), 2);
  fail_unless_equals_uint64 (stream_stat_of (e, 0, "frames-shed"), 2);
  fail_unless_equals_uint64 (assert_frames_add_up (e), 2);
  gst_harness_teardown (h);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
  g_mutex_clear (&b.lock);
  g_cond_clear (&b.cond);
}

GST_END_TEST;

GST_START_TEST (test_interval_and_drop_policy_keep_every_frame_accounted)
{
  GstBus *bus;
  GstHarness *h = harness_new_on (backends[__i__],
      "batch=2 max-inflight=1 interval=2 "
      "drop-policy=oldest max-latency=150000000", &bus);
  guint64 out, pulled = 0;
  GstBuffer *buf;
  Gate g;
  guint i;

  gst_harness_use_testclock (h);
  gate_start (&g, h, "src");
  for (i = 0; i < 40; i++) {
    push (h, i);
    if (i == 6)
      gate_wait (&g, 1);
    else if (i > 6 && i % 5 == 0)
      gate_step (&g);
  }
  gate_open (&g);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  out = assert_frames_add_up (h->element);
  /* in order, and each skipped frame behind an inferred one */
  while ((buf = gst_harness_try_pull (h))) {
    GstBatchMemoryMeta *meta = gst_buffer_get_batch_memory_meta (buf);
    fail_unless (pulled > 0 || meta->inferred);
    pulled++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_uint64 (pulled, out);
  fail_unless (stat_of (h->element, "frames-shed") > 0);
  fail_unless_equals_uint64 (stat_of (h->element, "frames-inferred")
      + stat_of (h->element, "frames-skipped"), out);
  gate_free (&g);
  harness_free (h, bus);
}

GST_END_TEST;

/* The latency the element reports is exactly what the documentation
 * says: min ((batch x interval - 1) frame durations, batch-timeout) +
 * latency-batch-time, which `latency` in stats gives too. */
GST_START_TEST (test_latency_is_the_documented_formula_exactly)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=8 interval=2", &bus);
  GstClockTime batch_time, upstream = 7 * GST_MSECOND;

  gst_harness_set_upstream_latency (h, upstream);
  batch_time = stat_of (h->element, "latency-batch-time");
  fail_unless (batch_time > 0);
  fail_unless_equals_uint64 (stat_of (h->element, "latency"),
      gst_util_uint64_scale_int (15 * GST_SECOND, 1, 30) + batch_time);
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      upstream + stat_of (h->element, "latency"));

  g_object_set (h->element, "batch-timeout", 100 * GST_MSECOND, NULL);
  fail_unless_equals_uint64 (stat_of (h->element, "latency"),
      100 * GST_MSECOND + batch_time);
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      upstream + 100 * GST_MSECOND + batch_time);
  harness_free (h, bus);
}

GST_END_TEST;

/* A live pipeline, as gst-launch-1.0 runs one: the latency it settles on
 * is the source's plus the element's formula, batch 8 and a 100 ms
 * timeout. */
GST_START_TEST (test_a_live_pipeline_reports_the_documented_latency)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc is-live=true "
      "num-buffers=40 ! " CAPS_RGB " ! cudabatchinfer name=inf backend=cpu "
      "batch=8 batch-timeout=100000000 ! fakesink name=sink sync=true",
      NULL);
  GstElement *inf = gst_bin_get_by_name (GST_BIN (pipe), "inf");
  GstPad *src = gst_element_get_static_pad (inf, "src");
  GstBus *bus = gst_element_get_bus (pipe);
  GstQuery *q = gst_query_new_latency ();
  GstClockTime min, max, source = GST_SECOND / 30;
  GstMessage *msg;
  gboolean live;

  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_EOS |
      GST_MESSAGE_ERROR);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  /* the element's src pad: what comes to the sink (which adds its
   * processing-deadline, 20 ms by default, to the pipeline's) */
  fail_unless (gst_pad_query (src, q));
  gst_query_parse_latency (q, &live, &min, &max);
  fail_unless (live);
  /* videotestsrc's is a frame's duration */
  fail_unless_equals_uint64 (min, source + 100 * GST_MSECOND
      + stat_of (inf, "latency-batch-time"));
  fail_unless_equals_uint64 (min, source + stat_of (inf, "latency"));
  fail_unless_equals_uint64 (stat_of (inf, "frames-in"), 40);
  assert_frames_add_up (inf);
  gst_query_unref (q);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (inf);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

static Suite *
overload_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-overload");
  TCase *tc = tcase_create ("general");
  /* on CUDA too where a device is: its batches are collected from the
   * device while the next is queued, its places in flight held longer */
  gint n = cbi_test_have_cuda ("the overload tests on a GPU") ? 2 : 1;

  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc,
      test_interval_infers_every_kth_frame_and_repeats_its_image, 0, n);
  tcase_add_loop_test (tc,
      test_interval_skipped_frames_carry_the_last_tensors_by_reference, 0, n);
  tcase_add_test (tc, test_interval_starts_again_after_a_flushing_seek);
  tcase_add_test (tc, test_interval_counts_each_stream_on_its_own);
  tcase_add_test (tc,
      test_qos_drops_frames_already_late_for_the_sink_uninferred);
  tcase_add_test (tc, test_qos_false_infers_late_frames_all_the_same);
  tcase_add_loop_test (tc,
      test_oldest_policy_keeps_a_live_source_within_max_latency, 0, n);
  tcase_add_loop_test (tc, test_latest_only_policy_sends_the_newest_frame, 0,
      n);
  tcase_add_test (tc,
      test_drop_policy_fills_whole_batches_while_the_model_keeps_up);
  tcase_add_test (tc, test_max_latency_without_a_policy_cuts_the_batch_short);
  tcase_add_test (tc, test_frames_older_than_max_latency_are_shed_on_arrival);
  tcase_add_test (tc, test_latest_only_sheds_frames_a_frame_late_on_arrival);
  tcase_add_test (tc, test_drop_policy_counts_each_stream_and_keeps_its_order);
  tcase_add_loop_test (tc,
      test_interval_and_drop_policy_keep_every_frame_accounted, 0, n);
  tcase_add_test (tc,
      test_an_event_waits_for_the_frames_before_it_when_later_ones_are_shed);
  tcase_add_test (tc, test_latency_is_the_documented_formula_exactly);
  tcase_add_test (tc, test_a_live_pipeline_reports_the_documented_latency);
  return s;
}

GST_CHECK_MAIN (overload);
