/* GStreamer cudabatchinfer element tests: request pads, many streams in
 * one batch
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/check/gsttestclock.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <glib/gstdio.h>

#define FRAME_DURATION (GST_SECOND / 30)
#define CAPS_RGB "video/x-raw,format=RGB,width=32,height=24,framerate=30/1"
#define CAPS_RGB_SMALL \
    "video/x-raw,format=RGB,width=16,height=12,framerate=30/1"
#define CAPS_BGRX "video/x-raw,format=BGRx,width=32,height=24,framerate=30/1"
/* a 1x1 convolution with identity weights at a fixed 8x8 */
#define IDENTITY_FIXED "model=" CBI_TEST_MODELS_DIR "/identity-fixed.onnx"

/* An element made from "cudabatchinfer @props" (backend=cpu: these tests
 * are about pads, not devices), with its bus. */
static GstElement *
element_new (const gchar * props, GstBus ** bus)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer backend=cpu %s", props);
  GstElement *e = gst_parse_launch (desc, NULL);

  fail_unless (e != NULL, "could not make %s", desc);
  g_free (desc);
  *bus = gst_bus_new ();
  gst_element_set_bus (e, *bus);
  return e;
}

/* A harness on stream @k of @e: requests sink_k, which adds src_k. */
static GstHarness *
stream_harness (GstElement * e, guint k, const gchar * caps)
{
  gchar *sink = g_strdup_printf ("sink_%u", k);
  gchar *src = g_strdup_printf ("src_%u", k);
  GstHarness *h = gst_harness_new_with_element (e, sink, src);

  g_free (sink);
  g_free (src);
  if (caps)
    gst_harness_set_src_caps_str (h, caps);
  return h;
}

static void
bus_free (GstBus * bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

/* An element made from @props with harnesses on streams 0 and 1, both
 * with CAPS_RGB. */
typedef struct
{
  GstBus *bus;
  GstElement *e;
  GstHarness *h0;
  GstHarness *h1;
} TwoStreams;

static TwoStreams
two_streams (const gchar * props)
{
  TwoStreams t;

  t.e = element_new (props, &t.bus);
  t.h0 = stream_harness (t.e, 0, CAPS_RGB);
  t.h1 = stream_harness (t.e, 1, CAPS_RGB);
  return t;
}

/* Tears down both harnesses (the release of their pads), then the
 * element and its bus. */
static void
two_streams_free (TwoStreams * t)
{
  gst_harness_teardown (t->h1);
  gst_harness_teardown (t->h0);
  gst_object_unref (t->e);
  bus_free (t->bus);
}

/* Frame @i of stream @k: its timestamps and offsets say both. */
static GstBuffer *
make_frame (guint k, guint i, gsize size)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);

  gst_buffer_memset (buf, 0, (guint8) (k * 40 + i), size);
  GST_BUFFER_PTS (buf) = i * FRAME_DURATION + k;
  GST_BUFFER_DTS (buf) = i * FRAME_DURATION + k + 1;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  GST_BUFFER_OFFSET (buf) = 1000 * k + i;
  GST_BUFFER_OFFSET_END (buf) = 1000 * k + i + 1;
  if (i % 3 == 1)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  return buf;
}

static void
push (GstHarness * h, guint k, guint i)
{
  fail_unless_equals_int (gst_harness_push (h, make_frame (k, i,
              32 * 24 * 3)), GST_FLOW_OK);
}

/* Pulls frame @i of stream @k and checks what it carried through. */
static GstBatchMemoryMeta *
pull_checked (GstHarness * h, guint k, guint i, GstBuffer ** out)
{
  GstBatchMemoryMeta *meta;

  *out = gst_harness_pull (h);
  fail_unless (*out != NULL, "stream %u: no frame %u", k, i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (*out), i * FRAME_DURATION + k);
  fail_unless_equals_uint64 (GST_BUFFER_DTS (*out), i * FRAME_DURATION + k + 1);
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (*out), FRAME_DURATION);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (*out), 1000 * k + i);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (*out), 1000 * k + i + 1);
  fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (*out,
          GST_BUFFER_FLAG_DELTA_UNIT), i % 3 == 1);
  meta = gst_buffer_get_batch_memory_meta (*out);
  fail_unless (meta != NULL);
  fail_unless_equals_int (meta->stream, k);
  return meta;
}

static void
pull_frames (GstHarness * h, guint k, guint first, guint end)
{
  GstBuffer *out;
  guint i;

  for (i = first; i < end; i++) {
    pull_checked (h, k, i, &out);
    gst_buffer_unref (out);
  }
}

/* Waits for the event of @type on @h, skipping others. */
static void
expect_event (GstHarness * h, GstEventType type)
{
  GstEvent *ev;

  while ((ev = gst_harness_pull_event (h)) != NULL) {
    gboolean found = GST_EVENT_TYPE (ev) == type;
    gst_event_unref (ev);
    if (found)
      return;
  }
  fail ("no %s event", gst_event_type_get_name (type));
}

/* @field of stream @pad in the stats, or of the element where @pad is
 * NULL. */
static guint64
stat_of (GstElement * e, const gchar * pad, const gchar * field)
{
  GstStructure *s;
  guint64 v = G_MAXUINT64;
  guint i;

  g_object_get (e, "stats", &s, NULL);
  if (pad == NULL) {
    fail_unless (gst_structure_get_uint64 (s, field, &v));
  } else {
    const GValue *streams = gst_structure_get_value (s, "streams");
    fail_unless (streams != NULL);
    for (i = 0; i < gst_value_array_get_size (streams); i++) {
      const GstStructure *st =
          gst_value_get_structure (gst_value_array_get_value (streams, i));
      if (g_strcmp0 (gst_structure_get_string (st, "pad"), pad) == 0)
        fail_unless (gst_structure_get_uint64 (st, field, &v));
    }
    fail_unless (v != G_MAXUINT64, "no stream %s in the stats", pad);
  }
  gst_structure_free (s);
  return v;
}

/* Reads the stats until @field of @pad says @want: the src pad tasks count
 * a frame once it is pushed, just after the harness has it. */
static void
wait_stat (GstElement * e, const gchar * pad, const gchar * field, guint64 want)
{
  guint tries;

  for (tries = 0; tries < 1000 && stat_of (e, pad, field) != want; tries++)
    g_usleep (1000);
  fail_unless_equals_uint64 (stat_of (e, pad, field), want);
}

GST_START_TEST (test_requesting_sink_k_adds_src_k_and_releasing_removes_both)
{
  GstBus *bus;
  GstElement *e = element_new ("", &bus);
  GstPad *s3, *s0, *src;

  s3 = gst_element_request_pad_simple (e, "sink_3");
  fail_unless (s3 != NULL);
  src = gst_element_get_static_pad (e, "src_3");
  fail_unless (src != NULL);
  gst_object_unref (src);
  /* the lowest free K */
  s0 = gst_element_request_pad_simple (e, "sink_%u");
  fail_unless_equals_string (GST_PAD_NAME (s0), "sink_0");

  gst_element_release_request_pad (e, s3);
  gst_object_unref (s3);
  src = gst_element_get_static_pad (e, "src_3");
  fail_unless (src == NULL);
  fail_unless (gst_element_get_static_pad (e, "sink_3") == NULL);
  gst_element_release_request_pad (e, s0);
  gst_object_unref (s0);
  /* the always pads stay */
  fail_unless_equals_int (e->numpads, 2);
  gst_object_unref (e);
  bus_free (bus);
}

GST_END_TEST;

GST_START_TEST (test_two_streams_share_a_batch_and_each_result_goes_to_its_pad)
{
  TwoStreams t = two_streams ("batch=4");
  GstBatchMemoryMeta *meta;
  GstBuffer *out;
  GstCaps *caps;
  guint i;

  /* 0, 1, 0, 1: one full batch, nothing padded */
  for (i = 0; i < 2; i++) {
    push (t.h0, 0, i);
    push (t.h1, 1, i);
  }
  for (i = 0; i < 2; i++) {
    meta = pull_checked (t.h0, 0, i, &out);
    fail_unless_equals_int (meta->streams, 2);
    fail_unless_equals_uint64 (meta->stream_mask, 3);
    fail_unless_equals_int (meta->padded, 0);
    fail_unless_equals_int (meta->frame_index, 2 * i);
    fail_unless_equals_uint64 (meta->batch_index, 0);
    fail_unless_equals_uint64 (meta->fresh_allocations, 0);
    gst_buffer_unref (out);
    meta = pull_checked (t.h1, 1, i, &out);
    fail_unless_equals_int (meta->frame_index, 2 * i + 1);
    gst_buffer_unref (out);
  }
  /* each src pad has the caps of its own sink pad */
  caps = gst_pad_get_current_caps (GST_PAD_PEER (t.h1->sinkpad));
  fail_unless (caps != NULL);
  gst_caps_unref (caps);

  wait_stat (t.e, "sink_0", "frames-out", 2);
  wait_stat (t.e, "sink_1", "frames-out", 2);
  fail_unless_equals_uint64 (stat_of (t.e, "sink_1", "frames-in"), 2);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "frames-out"), 4);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "batches"), 1);
  two_streams_free (&t);
}

GST_END_TEST;

GST_START_TEST (test_a_fast_stream_fills_batches_without_waiting_for_a_slow_one)
{
  TwoStreams t = two_streams ("batch=4");
  GstBatchMemoryMeta *meta;
  GstBuffer *out;
  guint i;

  /* stream 1 sent one frame and went quiet: stream 0's frames do not wait
   * for it, and its frame goes in the first batch, the oldest one */
  push (t.h1, 1, 0);
  for (i = 0; i < 7; i++)
    push (t.h0, 0, i);
  meta = pull_checked (t.h1, 1, 0, &out);
  fail_unless_equals_uint64 (meta->batch_index, 0);
  fail_unless_equals_uint64 (meta->stream_mask, 3);
  gst_buffer_unref (out);
  for (i = 0; i < 7; i++) {
    meta = pull_checked (t.h0, 0, i, &out);
    fail_unless_equals_uint64 (meta->batch_index, i < 3 ? 0 : 1);
    fail_unless_equals_int (meta->streams, i < 3 ? 2 : 1);
    gst_buffer_unref (out);
  }
  two_streams_free (&t);
}

GST_END_TEST;

GST_START_TEST (test_eos_on_one_pad_pads_its_last_frames_and_the_others_go_on)
{
  TwoStreams t = two_streams ("batch=4");
  GstBatchMemoryMeta *meta;
  GstBuffer *out;
  guint i;

  push (t.h0, 0, 0);
  push (t.h0, 0, 1);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_eos ()));
  /* the short batch ran at the warmed-up size, then EOS follows */
  for (i = 0; i < 2; i++) {
    meta = pull_checked (t.h0, 0, i, &out);
    fail_unless_equals_int (meta->padded, 2);
    fail_unless (meta->warmed_up);
    fail_unless_equals_uint64 (meta->fresh_allocations, 0);
    gst_buffer_unref (out);
  }
  expect_event (t.h0, GST_EVENT_EOS);

  for (i = 0; i < 4; i++)
    push (t.h1, 1, i);
  pull_frames (t.h1, 1, 0, 4);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "fresh-allocations-after-"
          "warmup"), 0);
  two_streams_free (&t);
}

GST_END_TEST;

/* Notes what src_0 pushes, in order: B a buffer, C the custom event. */
static GstPadProbeReturn
note_order (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GString *order = data;

  if (GST_IS_BUFFER (info->data))
    g_string_append_c (order, 'B');
  else if (GST_EVENT_TYPE (info->data) == GST_EVENT_CUSTOM_DOWNSTREAM)
    g_string_append_c (order, 'C');
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_an_event_waits_behind_its_streams_frames_without_a_cut)
{
  TwoStreams t = two_streams ("batch=4");
  GstPad *src0 = gst_element_get_static_pad (t.e, "src_0");
  GString *order = g_string_new (NULL);
  GstBuffer *out;
  guint i;

  /* src_0's task writes, this thread reads once it has both */
  gst_pad_add_probe (src0, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, note_order, order, NULL);
  push (t.h0, 0, 0);
  /* a custom serialised event after frame 0 of stream 0: it does not cut
   * the batch, and comes out after that frame */
  fail_unless (gst_harness_push_event (t.h0,
          gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
              gst_structure_new_empty ("after-frame-0"))));
  for (i = 1; i < 4; i++)
    push (t.h1, 1, i - 1);
  pull_checked (t.h0, 0, 0, &out);
  gst_buffer_unref (out);
  expect_event (t.h0, GST_EVENT_CUSTOM_DOWNSTREAM);
  fail_unless_equals_string (order->str, "BC");
  pull_frames (t.h1, 1, 0, 3);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "padded-frames"), 0);
  gst_object_unref (src0);
  two_streams_free (&t);
  g_string_free (order, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_a_flush_on_one_pad_drops_only_that_streams_frames)
{
  TwoStreams t = two_streams ("batch=4");
  GstSegment segment;
  GstBuffer *out;
  guint i;

  push (t.h0, 0, 0);
  push (t.h0, 0, 1);
  push (t.h1, 1, 0);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_segment (&segment)));
  for (i = 1; i < 4; i++)
    push (t.h1, 1, i);
  /* stream 1's frames are a full batch: stream 0's two went */
  pull_frames (t.h1, 1, 0, 4);
  fail_unless_equals_uint64 (stat_of (t.e, "sink_0", "frames-dropped"), 2);
  fail_unless_equals_uint64 (stat_of (t.e, "sink_1", "frames-dropped"), 0);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "padded-frames"), 0);

  /* stream 0 goes on after its flush */
  for (i = 2; i < 6; i++)
    push (t.h0, 0, i);
  pull_frames (t.h0, 0, 2, 6);
  fail_unless ((out = gst_harness_try_pull (t.h0)) == NULL);
  two_streams_free (&t);
}

GST_END_TEST;

/* Pops the error on @bus and checks its text names both pads. */
static void
expect_error_naming (GstBus * bus, const gchar * a, const gchar * b)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  GError *err = NULL;

  fail_unless (msg != NULL, "no error posted");
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, a) && strstr (err->message, b),
      "the error does not name %s and %s: %s", a, b, err->message);
  g_error_free (err);
  gst_message_unref (msg);
}

GST_START_TEST (test_other_caps_on_a_second_pad_are_refused_naming_both_pads)
{
  GstBus *bus;
  GstElement *e = element_new ("batch=4", &bus);
  GstHarness *h0 = stream_harness (e, 0, CAPS_RGB);
  GstHarness *h1 = stream_harness (e, 1, NULL);
  GstHarness *h2 = stream_harness (e, 2, NULL);

  push (h0, 0, 0);
  gst_harness_set_src_caps_str (h1, CAPS_RGB_SMALL);
  fail_unless_equals_int (gst_harness_push (h1, make_frame (1, 0,
              16 * 12 * 3)), GST_FLOW_NOT_NEGOTIATED);
  expect_error_naming (bus, "sink_1", "sink_0");
  /* another format of the same size is refused too: a batch packs one */
  gst_harness_set_src_caps_str (h2, CAPS_BGRX);
  fail_unless_equals_int (gst_harness_push (h2, make_frame (2, 0,
              32 * 24 * 4)), GST_FLOW_NOT_NEGOTIATED);
  expect_error_naming (bus, "sink_2", "sink_0");

  /* stream 0 goes on as it was */
  push (h0, 0, 1);
  fail_unless (gst_harness_push_event (h0, gst_event_new_eos ()));
  pull_frames (h0, 0, 0, 2);
  gst_harness_teardown (h2);
  gst_harness_teardown (h1);
  gst_harness_teardown (h0);
  gst_object_unref (e);
  bus_free (bus);
}

GST_END_TEST;

GST_START_TEST (test_a_caps_query_on_a_new_pad_asks_for_the_others_frames)
{
  GstBus *bus;
  GstElement *e = element_new ("batch=4", &bus);
  GstHarness *h0 = stream_harness (e, 0, NULL);
  GstHarness *h1 = stream_harness (e, 1, NULL);
  GstCaps *caps, *want = gst_caps_from_string ("video/x-raw,format=RGB,"
      "width=32,height=24");

  /* nothing streams yet: any size */
  caps = gst_pad_peer_query_caps (h1->srcpad, NULL);
  fail_if (gst_caps_is_subset (caps, want));
  gst_caps_unref (caps);
  gst_harness_set_src_caps_str (h0, CAPS_RGB);
  push (h0, 0, 0);
  /* stream 0 set the frames: upstream of sink_1 is asked for those */
  caps = gst_pad_peer_query_caps (h1->srcpad, NULL);
  fail_unless (gst_caps_is_subset (caps, want), "caps %" GST_PTR_FORMAT, caps);
  fail_if (gst_caps_is_empty (caps));
  gst_caps_unref (caps);
  gst_caps_unref (want);
  gst_harness_teardown (h1);
  gst_harness_teardown (h0);
  gst_object_unref (e);
  bus_free (bus);
}

GST_END_TEST;

GST_START_TEST (test_a_new_size_replans_once_the_other_streams_ended)
{
  TwoStreams t = two_streams ("batch=2");
  GstSegment segment;
  GstBuffer *out;

  push (t.h0, 0, 0);
  push (t.h1, 1, 0);
  pull_frames (t.h0, 0, 0, 1);
  pull_frames (t.h1, 1, 0, 1);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_eos ()));
  /* stream 0 ended: stream 1 may change the size for both */
  gst_harness_set_src_caps_str (t.h1, CAPS_RGB_SMALL);
  fail_unless_equals_int (gst_harness_push (t.h1, make_frame (1, 1,
              16 * 12 * 3)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (t.h1, gst_event_new_eos ()));
  out = gst_harness_pull (t.h1);
  fail_unless_equals_int (gst_buffer_get_size (out), 16 * 12 * 3);
  fail_unless (gst_buffer_get_batch_memory_meta (out)->warmed_up);
  gst_buffer_unref (out);
  fail_unless (gst_bus_pop_filtered (t.bus, GST_MESSAGE_ERROR) == NULL);

  /* stream 0 comes back after a seek with its old frames: refused, and
   * said so, not packed as the new size */
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_harness_push (t.h0, make_frame (0, 1,
              32 * 24 * 3)), GST_FLOW_NOT_NEGOTIATED);
  expect_error_naming (t.bus, "sink_0", "16x12");
  two_streams_free (&t);
}

GST_END_TEST;

GST_START_TEST (test_the_timeout_counts_from_the_oldest_frame_of_any_stream)
{
  TwoStreams t = two_streams ("batch=4 batch-timeout=100000000");
  GstTestClock *clock;
  GstBatchMemoryMeta *meta;
  GstBuffer *out;

  gst_harness_use_testclock (t.h0);
  clock = gst_harness_get_testclock (t.h0);
  push (t.h0, 0, 0);
  gst_test_clock_wait_for_next_pending_id (clock, NULL);
  fail_unless_equals_uint64 (gst_test_clock_get_next_entry_time (clock),
      100 * GST_MSECOND);
  /* a later frame of the other stream does not move the deadline */
  push (t.h1, 1, 2);
  fail_unless_equals_uint64 (gst_test_clock_get_next_entry_time (clock),
      100 * GST_MSECOND);
  fail_unless (gst_harness_crank_single_clock_wait (t.h0));
  meta = pull_checked (t.h0, 0, 0, &out);
  fail_unless_equals_int (meta->frames, 2);
  fail_unless_equals_int (meta->padded, 2);
  gst_buffer_unref (out);
  pull_frames (t.h1, 1, 2, 3);
  gst_object_unref (clock);
  two_streams_free (&t);
}

GST_END_TEST;

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_releasing_a_pad_mid_stream_pushes_its_frames_first)
{
  TwoStreams t = two_streams ("batch=8");
  GstPad *src1 = gst_element_get_static_pad (t.e, "src_1");
  gint pushed = 0;

  gst_pad_add_probe (src1, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &pushed,
      NULL);
  gst_object_unref (src1);
  push (t.h0, 0, 0);
  push (t.h1, 1, 0);
  push (t.h1, 1, 1);
  /* the harness releases sink_1: its two frames go out on src_1 first */
  gst_harness_teardown (t.h1);
  fail_unless_equals_int (g_atomic_int_get (&pushed), 2);
  fail_unless (gst_element_get_static_pad (t.e, "src_1") == NULL);

  /* stream 0's frame went in that batch, and stream 0 goes on */
  pull_frames (t.h0, 0, 0, 1);
  push (t.h0, 0, 1);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_eos ()));
  pull_frames (t.h0, 0, 1, 2);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "frames-dropped"), 0);
  gst_harness_teardown (t.h0);
  gst_object_unref (t.e);
  bus_free (t.bus);
}

GST_END_TEST;

static GstPadProbeReturn
hold_buffers (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
release_on_first_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstElement *e = data;
  GstPad *sink = gst_element_get_static_pad (e, "sink_1");

  /* from src_1's own task, as an appsink callback might */
  if (sink) {
    gst_element_release_request_pad (e, sink);
    gst_object_unref (sink);
  }
  return GST_PAD_PROBE_REMOVE;
}

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean removed;
} PadGone;

static void
note_src_1_removed (GstElement * e, GstPad * pad, PadGone * gone)
{
  if (g_strcmp0 (GST_PAD_NAME (pad), "src_1") != 0)
    return;
  g_mutex_lock (&gone->lock);
  gone->removed = TRUE;
  g_cond_broadcast (&gone->cond);
  g_mutex_unlock (&gone->lock);
}

GST_START_TEST (test_releasing_a_pad_from_its_own_src_task)
{
  GstBus *bus;
  GstElement *e = element_new ("batch=2", &bus);
  GstHarness *h0 = stream_harness (e, 0, CAPS_RGB);
  GstPad *sink1 = gst_element_request_pad_simple (e, "sink_1");
  GstPad *src1 = gst_element_get_static_pad (e, "src_1");
  GstPad *feed = gst_pad_new ("feed", GST_PAD_SRC);
  GstCaps *caps = gst_caps_from_string (CAPS_RGB);
  GstSegment segment;
  PadGone gone;
  gint64 deadline;
  gboolean removed;

  g_mutex_init (&gone.lock);
  g_cond_init (&gone.cond);
  gone.removed = FALSE;
  g_signal_connect (e, "pad-removed", G_CALLBACK (note_src_1_removed), &gone);
  gst_pad_add_probe (src1, GST_PAD_PROBE_TYPE_BUFFER,
      release_on_first_buffer, e, NULL);
  fail_unless_equals_int (gst_pad_link (feed, sink1), GST_PAD_LINK_OK);
  /* nobody but the element holds the pads: they go with the release */
  gst_object_unref (src1);
  gst_object_unref (sink1);
  gst_pad_set_active (feed, TRUE);
  fail_unless (gst_pad_push_event (feed, gst_event_new_stream_start ("s1")));
  fail_unless (gst_pad_push_event (feed, gst_event_new_caps (caps)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (feed, gst_event_new_segment (&segment)));
  fail_unless_equals_int (gst_pad_push (feed, make_frame (1, 0,
              32 * 24 * 3)), GST_FLOW_OK);
  push (h0, 0, 0);
  /* stream 0 goes on; sink_1 and src_1 go, from src_1's task, beside
   * stream 0's batches (slowly under valgrind) */
  pull_frames (h0, 0, 0, 1);
  push (h0, 0, 1);
  fail_unless (gst_harness_push_event (h0, gst_event_new_eos ()));
  pull_frames (h0, 0, 1, 2);
  deadline = g_get_monotonic_time () + 120 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&gone.lock);
  while (!gone.removed && g_cond_wait_until (&gone.cond, &gone.lock, deadline));
  removed = gone.removed;
  g_mutex_unlock (&gone.lock);

  /* torn down before judging: a failure must not leave the element
   * running for the suite's cleanup to wait on */
  gst_pad_set_active (feed, FALSE);
  gst_object_unref (feed);
  gst_caps_unref (caps);
  gst_harness_teardown (h0);
  gst_object_unref (e);
  bus_free (bus);
  g_mutex_clear (&gone.lock);
  g_cond_clear (&gone.cond);
  fail_unless (removed, "src_1 was not removed in 120 s");
}

GST_END_TEST;

/* A pad of the test's own that feeds sink_1 of @e (requested here) with
 * @caps, started: stream-start, caps and a time segment sent. */
static GstPad *
feed_sink_1 (GstElement * e, const gchar * caps)
{
  GstPad *sink1 = gst_element_request_pad_simple (e, "sink_1");
  GstPad *feed = gst_pad_new ("feed", GST_PAD_SRC);
  GstCaps *c = gst_caps_from_string (caps);
  GstSegment segment;

  fail_unless_equals_int (gst_pad_link (feed, sink1), GST_PAD_LINK_OK);
  gst_object_unref (sink1);
  gst_pad_set_active (feed, TRUE);
  fail_unless (gst_pad_push_event (feed, gst_event_new_stream_start ("s1")));
  fail_unless (gst_pad_push_event (feed, gst_event_new_caps (c)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (feed, gst_event_new_segment (&segment)));
  gst_caps_unref (c);
  return feed;
}

/* Releases sink_1 from the always src pad's task once the test has left a
 * frame of it pending. */
typedef struct
{
  GstElement *e;
  GMutex lock;
  GCond cond;
  gboolean pending;
  gboolean released;
} ReleaseLater;

static GstBusSyncReply
release_once_pending (GstBus * bus, GstMessage * msg, gpointer data)
{
  ReleaseLater *r = data;
  gint64 end = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  GstPad *sink;

  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT
      || !gst_message_has_name (msg, "cudabatchinfer-batch"))
    return GST_BUS_PASS;
  g_mutex_lock (&r->lock);
  while (!r->pending && g_cond_wait_until (&r->cond, &r->lock, end));
  g_mutex_unlock (&r->lock);
  sink = gst_element_get_static_pad (r->e, "sink_1");
  if (sink) {
    gst_element_release_request_pad (r->e, sink);
    gst_object_unref (sink);
    g_mutex_lock (&r->lock);
    r->released = TRUE;
    g_cond_broadcast (&r->cond);
    g_mutex_unlock (&r->lock);
  }
  return GST_BUS_PASS;
}

GST_START_TEST (test_releasing_a_pad_from_the_batch_message_handler)
{
  GstBus *bus;
  GstElement *e = element_new ("batch=2 max-inflight=1 post-messages=true",
      &bus);
  GstHarness *h0 = stream_harness (e, 0, CAPS_RGB);
  GstPad *feed = feed_sink_1 (e, CAPS_RGB);
  /* released at the first batch's message, nothing to wait for */
  ReleaseLater r = { e, };
  guint i;

  g_mutex_init (&r.lock);
  g_cond_init (&r.cond);
  r.pending = TRUE;
  gst_bus_set_sync_handler (bus, release_once_pending, &r, NULL);
  /* the first batch's message releases sink_1: its later frames are
   * refused, stream 0 goes on */
  push (h0, 0, 0);
  push (h0, 0, 1);
  pull_frames (h0, 0, 0, 2);
  for (i = 0; i < 2; i++)
    gst_pad_push (feed, make_frame (1, i, 32 * 24 * 3));
  push (h0, 0, 2);
  push (h0, 0, 3);
  pull_frames (h0, 0, 2, 4);
  fail_unless (gst_element_get_static_pad (e, "sink_1") == NULL);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);

  gst_pad_set_active (feed, FALSE);
  gst_object_unref (feed);
  gst_harness_teardown (h0);
  gst_object_unref (e);
  bus_free (bus);
  g_mutex_clear (&r.lock);
  g_cond_clear (&r.cond);
}

GST_END_TEST;

GST_START_TEST (test_a_branch_that_does_not_read_does_not_stop_the_others)
{
  TwoStreams t = two_streams ("batch=2 max-inflight=1");
  GstPad *src1 = gst_element_get_static_pad (t.e, "src_1");
  gulong probe;
  guint i;

  /* src_1's branch takes nothing (a sink prerolling, a full queue): its
   * results wait, and stream 0's batches go on, many more than a queue
   * holds */
  probe = gst_pad_add_probe (src1, GST_PAD_PROBE_TYPE_BLOCK |
      GST_PAD_PROBE_TYPE_BUFFER, hold_buffers, NULL, NULL);
  push (t.h1, 1, 0);
  push (t.h1, 1, 1);
  for (i = 0; i < 40; i += 2) {
    push (t.h0, 0, i);
    push (t.h0, 0, i + 1);
    pull_frames (t.h0, 0, i, i + 2);
  }
  fail_unless (gst_harness_try_pull (t.h1) == NULL);
  gst_pad_remove_probe (src1, probe);
  gst_object_unref (src1);
  pull_frames (t.h1, 1, 0, 2);
  two_streams_free (&t);
}

GST_END_TEST;

GST_START_TEST (test_the_latency_query_on_src_k_adds_the_batching_latency)
{
  TwoStreams t = two_streams ("batch=4 batch-timeout=50000000");
  GstQuery *q = gst_query_new_latency ();
  GstClockTime min, max;
  gboolean live;

  gst_harness_set_live (t.h1, TRUE);
  fail_unless (gst_pad_peer_query (t.h1->sinkpad, q));
  gst_query_parse_latency (q, &live, &min, &max);
  fail_unless (live);
  /* the timeout, plus a batch's time as the warm-up measured it */
  fail_unless (min > 50 * GST_MSECOND, "min latency %" GST_TIME_FORMAT,
      GST_TIME_ARGS (min));
  gst_query_unref (q);
  two_streams_free (&t);
}

GST_END_TEST;

/* A hundred NULL-PLAYING cycles of "cudabatchinfer @props" with four
 * streams of @widths x @heights RGB; twenty under valgrind (meson's
 * valgrind setup sets CBI_TEST_UNDER_VALGRIND), where each cycle's warm-up
 * costs a hundred times more and a leak or a bad read shows in any cycle
 * alike, the two of them with a full batch included. */
static void
null_playing_cycles (const gchar * props, const guint widths[4],
    const guint heights[4])
{
  GstBus *bus;
  GstElement *e = element_new (props, &bus);
  GstHarness *h[4];
  gchar *caps[4];
  guint k, cycle;
  const guint cycles = g_getenv ("CBI_TEST_UNDER_VALGRIND") ? 20 : 100;

  for (k = 0; k < 4; k++) {
    caps[k] = g_strdup_printf ("video/x-raw,format=RGB,width=%u,height=%u,"
        "framerate=30/1", widths[k], heights[k]);
    h[k] = stream_harness (e, k, caps[k]);
  }
  for (cycle = 0; cycle < cycles; cycle++) {
    if (cycle > 0) {
      fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
          GST_STATE_CHANGE_SUCCESS);
      fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PLAYING),
          GST_STATE_CHANGE_SUCCESS);
      for (k = 0; k < 4; k++) {
        gst_harness_play (h[k]);
        gst_harness_set_src_caps_str (h[k], caps[k]);
      }
    }
    /* every few cycles a full batch runs, else the state change drops a
     * partial one */
    for (k = 0; k < 4; k++)
      if (cycle % 10 == 0 || k < 2)
        fail_unless_equals_int (gst_harness_push (h[k], make_frame (k, 0,
                    widths[k] * heights[k] * 3)), GST_FLOW_OK);
    if (cycle % 10 == 0)
      for (k = 0; k < 4; k++)
        pull_frames (h[k], k, 0, 1);
  }
  for (k = 0; k < 4; k++) {
    gst_harness_teardown (h[k]);
    g_free (caps[k]);
  }
  gst_object_unref (e);
  bus_free (bus);
}

GST_START_TEST (test_four_streams_survive_repeated_null_playing_cycles)
{
  static const guint widths[4] = { 32, 32, 32, 32 };
  static const guint heights[4] = { 24, 24, 24, 24 };

  null_playing_cycles ("batch=4", widths, heights);
}

GST_END_TEST;

GST_START_TEST (test_four_scaled_streams_of_four_sizes_survive_repeated_cycles)
{
  static const guint widths[4] = { 32, 16, 4, 20 };
  static const guint heights[4] = { 24, 8, 8, 10 };

  /* each stream's own pool comes and goes with the engine */
  null_playing_cycles ("batch=4 scaling=letterbox " IDENTITY_FIXED, widths,
      heights);
}

GST_END_TEST;

GST_START_TEST (test_the_stats_and_the_batch_message_name_the_streams)
{
  GstBus *bus;
  GstElement *e = element_new ("batch=2 post-messages=true", &bus);
  GstHarness *h0 = stream_harness (e, 0, CAPS_RGB);
  GstHarness *h5 = stream_harness (e, 5, CAPS_RGB);
  GstMessage *msg;
  const GstStructure *s;
  guint64 mask = 0;
  guint streams = 0;

  push (h0, 0, 0);
  push (h5, 5, 0);
  pull_frames (h0, 0, 0, 1);
  pull_frames (h5, 5, 0, 1);
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    s = gst_message_get_structure (msg);
    if (gst_structure_has_name (s, "cudabatchinfer-batch")) {
      fail_unless (gst_structure_get_uint64 (s, "stream-mask", &mask));
      fail_unless (gst_structure_get_uint (s, "streams", &streams));
      fail_if (gst_structure_has_field (s, "stream"));
    }
    gst_message_unref (msg);
  }
  fail_unless_equals_uint64 (mask, (1 << 0) | (1 << 5));
  fail_unless_equals_int (streams, 2);
  wait_stat (e, "sink_5", "frames-out", 1);
  fail_unless_equals_uint64 (stat_of (e, "sink_5", "frames-in"), 1);
  gst_harness_teardown (h5);
  gst_harness_teardown (h0);
  gst_object_unref (e);
  bus_free (bus);
}

GST_END_TEST;

static void
count_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gint * n)
{
  GstBatchMemoryMeta *meta = gst_buffer_get_batch_memory_meta (buf);

  /* every frame from a warmed-up batch, the last of each stream too */
  if (meta && meta->warmed_up && meta->fresh_allocations == 0)
    g_atomic_int_inc (n);
}

/* Runs @desc to EOS; fails on an error. */
static void
run_to_eos (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS in 120 s");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *debug = NULL;
    gst_message_parse_error (msg, &err, &debug);
    fail ("%s (%s)", err->message, debug);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
}

/* Encodes @frames frames of @width x @height as Theora in Ogg at @path
 * (gst-plugins-base, which scripts/install-deps.sh installs). */
static void
encode_clip (const gchar * path, guint frames, guint width, guint height,
    guint pattern)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=%u ! "
      "video/x-raw,width=%u,height=%u,framerate=30/1 ! theoraenc ! oggmux ! "
      "filesink location=%s", frames, pattern, width, height, path);
  GstElement *p = gst_parse_launch (desc, NULL);

  fail_unless (p != NULL, "could not make %s", desc);
  g_free (desc);
  run_to_eos (p);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
}

/* Three clips of other lengths and sizes, decoded, through one element
 * at batch 8: scaled to one size upstream (@scaling NULL), or each at its
 * own size with the element's @scaling; every frame comes out, at the size
 * it went in, from a warmed-up batch that allocated nothing. */
static void
run_three_decoded_files (const gchar * scaling)
{
  static const guint frames[3] = { 17, 30, 41 };
  static const guint widths[3] = { 96, 160, 64 };
  static const guint heights[3] = { 64, 120, 48 };
  gchar *dir = g_dir_make_tmp ("cbi-streams-XXXXXX", NULL);
  GString *desc = g_string_new ("cudabatchinfer name=inf backend=cpu "
      "batch=8");
  GstElement *pipeline, *e;
  gchar *paths[3];
  gint out[3] = { 0, 0, 0 };
  guint k;

  fail_unless (dir != NULL);
  if (scaling)
    g_string_append_printf (desc, " scaling=%s %s", scaling, IDENTITY_FIXED);
  for (k = 0; k < 3; k++) {
    paths[k] = g_strdup_printf ("%s/clip%u.ogg", dir, k);
    encode_clip (paths[k], frames[k], widths[k], heights[k], k);
    /* without scaling, one size for all: the streams of one element batch
     * together */
    g_string_append_printf (desc, " filesrc location=%s ! decodebin ! "
        "videoconvert ! %s ! inf.sink_%u inf.src_%u ! fakesink name=out%u "
        "signal-handoffs=true", paths[k], scaling ? "video/x-raw,format=RGB"
        : "videoscale ! video/x-raw,format=RGB,width=80,height=60", k, k, k);
  }
  pipeline = gst_parse_launch (desc->str, NULL);
  fail_unless (pipeline != NULL, "could not make %s", desc->str);
  for (k = 0; k < 3; k++) {
    gchar *name = g_strdup_printf ("out%u", k);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
    g_signal_connect (sink, "handoff", G_CALLBACK (count_handoff), &out[k]);
    gst_object_unref (sink);
    g_free (name);
  }
  run_to_eos (pipeline);
  e = gst_bin_get_by_name (GST_BIN (pipeline), "inf");
  for (k = 0; k < 3; k++) {
    gchar *pad = g_strdup_printf ("sink_%u", k);
    gchar *name = g_strdup_printf ("out%u", k);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
    GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
    GstCaps *caps = gst_pad_get_current_caps (sinkpad);
    GstVideoInfo info;

    fail_unless_equals_int (g_atomic_int_get (&out[k]), frames[k]);
    fail_unless_equals_uint64 (stat_of (e, pad, "frames-in"), frames[k]);
    fail_unless_equals_uint64 (stat_of (e, pad, "frames-out"), frames[k]);
    fail_unless_equals_uint64 (stat_of (e, pad, "frames-dropped"), 0);
    fail_unless (caps != NULL && gst_video_info_from_caps (&info, caps));
    fail_unless_equals_int (info.width, scaling ? widths[k] : 80);
    fail_unless_equals_int (info.height, scaling ? heights[k] : 60);
    gst_caps_unref (caps);
    gst_object_unref (sinkpad);
    gst_object_unref (sink);
    g_free (name);
    g_free (pad);
  }
  fail_unless_equals_uint64 (stat_of (e, NULL, "fresh-allocations-after-"
          "warmup"), 0);
  gst_object_unref (e);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  for (k = 0; k < 3; k++) {
    g_unlink (paths[k]);
    g_free (paths[k]);
  }
  g_rmdir (dir);
  g_free (dir);
  g_string_free (desc, TRUE);
}

GST_START_TEST (test_three_decoded_files_of_other_lengths_and_sizes_come_out)
{
  run_three_decoded_files (NULL);
}

GST_END_TEST;

GST_START_TEST (test_three_decoded_files_letterboxed_come_out_at_their_sizes)
{
  run_three_decoded_files ("letterbox");
}

GST_END_TEST;


/* Scaling. identity-fixed.onnx gives back what it takes, at 8x8: a frame
 * that fits its window at scale 1 comes back byte for byte, and a frame of
 * one colour comes back of that colour whatever the scale, unless the
 * black of the bars leaks into it. */

/* Frame @i of stream @k, @width x @height RGB: bright and of one colour
 * where @pattern is FALSE (a bar leaking into it shows), else byte b is
 * (b * 7 + 40 k + i) % 256. */
static GstBuffer *
scaled_frame (guint k, guint i, guint width, guint height, gboolean pattern)
{
  GstBuffer *buf = make_frame (k, i, width * height * 3);
  GstMapInfo map;
  gsize b;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (b = 0; b < map.size; b++)
    map.data[b] = pattern ? (guint8) (b * 7 + k * 40 + i) :
        (guint8) (200 + 10 * (b % 3) + k * 5 + i);
  gst_buffer_unmap (buf, &map);
  return buf;
}

static void
push_scaled (GstHarness * h, guint k, guint i, guint width, guint height,
    gboolean pattern)
{
  fail_unless_equals_int (gst_harness_push (h, scaled_frame (k, i, width,
              height, pattern)), GST_FLOW_OK);
}

/* Fails unless @out has @want's bytes, naming the first that differs. */
static void
assert_same_bytes (GstBuffer * out, GstBuffer * want, const gchar * what)
{
  GstMapInfo a, b;
  gsize n;

  fail_unless (gst_buffer_map (out, &a, GST_MAP_READ));
  fail_unless (gst_buffer_map (want, &b, GST_MAP_READ));
  fail_unless_equals_uint64 (a.size, b.size);
  for (n = 0; n < a.size; n++)
    fail_unless (a.data[n] == b.data[n], "%s: byte %" G_GSIZE_FORMAT " is "
        "%u, not %u", what, n, a.data[n], b.data[n]);
  gst_buffer_unmap (out, &a);
  gst_buffer_unmap (want, &b);
}

static void
assert_caps_size (GstHarness * h, gint width, gint height)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstVideoInfo info;

  fail_unless (caps != NULL && gst_video_info_from_caps (&info, caps));
  fail_unless_equals_int (info.width, width);
  fail_unless_equals_int (info.height, height);
  gst_caps_unref (caps);
}

/* Pulls frame @i of stream @k, of @width x @height, and checks its bytes
 * against scaled_frame()'s and that its batch allocated nothing. */
static void
pull_scaled (GstHarness * h, guint k, guint i, guint width, guint height,
    gboolean pattern)
{
  GstBuffer *out, *want = scaled_frame (k, i, width, height, pattern);
  GstBatchMemoryMeta *meta = pull_checked (h, k, i, &out);
  gchar *what = g_strdup_printf ("stream %u frame %u (%ux%u)", k, i, width,
      height);

  fail_unless_equals_uint64 (meta->fresh_allocations, 0);
  fail_unless (meta->warmed_up);
  assert_same_bytes (out, want, what);
  g_free (what);
  gst_buffer_unref (out);
  gst_buffer_unref (want);
}

GST_START_TEST (test_letterbox_gives_each_stream_its_frames_at_its_own_size)
{
  TwoStreams t;
  guint i;

  t.e = element_new ("batch=4 scaling=letterbox " IDENTITY_FIXED, &t.bus);
  /* 16x8 is 8x4 in the model, between bars of 2 rows; 4x8 fits at scale
   * 1 between bars of 2 columns */
  t.h0 = stream_harness (t.e, 0,
      "video/x-raw,format=RGB,width=16,height=8,framerate=30/1");
  t.h1 = stream_harness (t.e, 1,
      "video/x-raw,format=RGB,width=4,height=8,framerate=30/1");
  for (i = 0; i < 4; i++) {
    fail_unless_equals_int (gst_harness_push (t.h0, scaled_frame (0, i, 16, 8,
                FALSE)), GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_push (t.h1, scaled_frame (1, i, 4, 8,
                TRUE)), GST_FLOW_OK);
  }
  for (i = 0; i < 4; i++) {
    pull_scaled (t.h0, 0, i, 16, 8, FALSE);
    pull_scaled (t.h1, 1, i, 4, 8, TRUE);
  }
  /* each src pad says its own stream's size */
  assert_caps_size (t.h0, 16, 8);
  assert_caps_size (t.h1, 4, 8);
  two_streams_free (&t);
}

GST_END_TEST;

GST_START_TEST (test_a_stream_changes_its_size_while_the_other_goes_on)
{
  TwoStreams t;
  guint i;

  t.e = element_new ("batch=4 scaling=stretch " IDENTITY_FIXED, &t.bus);
  t.h0 = stream_harness (t.e, 0, CAPS_RGB);
  t.h1 = stream_harness (t.e, 1,
      "video/x-raw,format=RGB,width=8,height=8,framerate=30/1");
  push_scaled (t.h0, 0, 0, 32, 24, FALSE);
  fail_unless_equals_int (gst_harness_push (t.h1, scaled_frame (1, 0, 8, 8,
              TRUE)), GST_FLOW_OK);
  /* stream 1's 8x8 frame goes first, at its size, in its own batch */
  gst_harness_set_src_caps_str (t.h1,
      "video/x-raw,format=RGB,width=24,height=4,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (t.h1, scaled_frame (1, 1, 24, 4,
              FALSE)), GST_FLOW_OK);
  push_scaled (t.h0, 0, 1, 32, 24, FALSE);
  push_scaled (t.h0, 0, 2, 32, 24, FALSE);
  fail_unless_equals_int (gst_harness_push (t.h1, scaled_frame (1, 2, 24, 4,
              FALSE)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_eos ()));
  fail_unless (gst_harness_push_event (t.h1, gst_event_new_eos ()));
  pull_scaled (t.h1, 1, 0, 8, 8, TRUE);
  pull_scaled (t.h1, 1, 1, 24, 4, FALSE);
  pull_scaled (t.h1, 1, 2, 24, 4, FALSE);
  for (i = 0; i < 3; i++)
    pull_scaled (t.h0, 0, i, 32, 24, FALSE);
  fail_unless_equals_uint64 (stat_of (t.e, NULL, "frames-dropped"), 0);
  two_streams_free (&t);
}

GST_END_TEST;

/* Pushes frames @first..@end - 1 of @width x @height on the always pad
 * and checks what comes back. */
static void
push_pull_scaled (GstHarness * h, guint first, guint end, guint width,
    guint height, gboolean pattern)
{
  guint i;

  for (i = first; i < end; i++)
    fail_unless_equals_int (gst_harness_push (h, scaled_frame (0, i, width,
                height, pattern)), GST_FLOW_OK);
  for (i = first; i < end; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBuffer *want = scaled_frame (0, i, width, height, pattern);
    gchar *what = g_strdup_printf ("always pad frame %u (%ux%u)", i, width,
        height);

    fail_unless (out != NULL, "no %s", what);
    assert_same_bytes (out, want, what);
    g_free (what);
    gst_buffer_unref (out);
    gst_buffer_unref (want);
  }
}

GST_START_TEST (test_scaling_on_the_always_pad_follows_its_caps)
{
  GstHarness *h = gst_harness_new_parse ("cudabatchinfer backend=cpu "
      "batch=2 scaling=letterbox " IDENTITY_FIXED);

  /* 8x4 and 4x8 fit the model at scale 1, between bars: patterns come
   * back byte for byte; 32x24 is scaled down and up: one colour comes back */
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=8,height=4,framerate=30/1");
  push_pull_scaled (h, 0, 2, 8, 4, TRUE);
  assert_caps_size (h, 8, 4);
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=4,height=8,framerate=30/1");
  push_pull_scaled (h, 2, 4, 4, 8, TRUE);
  assert_caps_size (h, 4, 8);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_pull_scaled (h, 4, 6, 32, 24, FALSE);
  assert_caps_size (h, 32, 24);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* With "cudabatchinfer @props", sink_0 streams CAPS_RGB and sink_1 brings
 * @caps, frames of @size bytes: refused, naming both pads, while stream 0
 * goes on. */
static void
assert_second_pad_refused (const gchar * props, const gchar * caps, gsize size)
{
  GstBus *bus;
  GstElement *e = element_new (props, &bus);
  GstHarness *h0 = stream_harness (e, 0, CAPS_RGB);
  GstHarness *h1 = stream_harness (e, 1, NULL);

  push (h0, 0, 0);
  gst_harness_set_src_caps_str (h1, caps);
  fail_unless_equals_int (gst_harness_push (h1, make_frame (1, 0, size)),
      GST_FLOW_NOT_NEGOTIATED);
  expect_error_naming (bus, "sink_1", "sink_0");
  fail_unless (gst_harness_push_event (h0, gst_event_new_eos ()));
  pull_frames (h0, 0, 0, 1);
  gst_harness_teardown (h1);
  gst_harness_teardown (h0);
  gst_object_unref (e);
  bus_free (bus);
}

GST_START_TEST (test_scaled_streams_still_need_one_format)
{
  assert_second_pad_refused ("batch=4 scaling=letterbox " IDENTITY_FIXED,
      CAPS_BGRX, 32 * 24 * 4);
}

GST_END_TEST;

GST_START_TEST (test_scaling_a_model_of_any_size_still_needs_one_size)
{
  /* the built-in model takes any size: nothing to scale to */
  assert_second_pad_refused ("batch=4 scaling=letterbox", CAPS_RGB_SMALL,
      16 * 12 * 3);
}

GST_END_TEST;

GST_START_TEST
    (test_a_scaled_stream_released_by_the_collector_loses_only_its_frame) {
  GstBus *bus;
  ReleaseLater r = { NULL, };
  GstHarness *h0;
  GstPad *feed;
  gint64 end = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  GstBuffer *out;

  r.e = element_new ("batch=3 max-inflight=1 post-messages=true "
      "scaling=letterbox " IDENTITY_FIXED, &bus);
  g_mutex_init (&r.lock);
  g_cond_init (&r.cond);
  h0 = stream_harness (r.e, 0,
      "video/x-raw,format=RGB,width=16,height=8,framerate=30/1");
  feed = feed_sink_1 (r.e,
      "video/x-raw,format=RGB,width=20,height=10,framerate=30/1");
  gst_bus_set_sync_handler (bus, release_once_pending, &r, NULL);

  /* a full batch goes; its message waits for stream 1's second frame to
   * be pending, then releases sink_1 without waiting for that frame */
  fail_unless_equals_int (gst_harness_push (h0, scaled_frame (0, 0, 16, 8,
              FALSE)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h0, scaled_frame (0, 1, 16, 8,
              FALSE)), GST_FLOW_OK);
  fail_unless_equals_int (gst_pad_push (feed, scaled_frame (1, 0, 20, 10,
              FALSE)), GST_FLOW_OK);
  fail_unless_equals_int (gst_pad_push (feed, scaled_frame (1, 1, 20, 10,
              FALSE)), GST_FLOW_OK);
  g_mutex_lock (&r.lock);
  r.pending = TRUE;
  g_cond_broadcast (&r.cond);
  while (!r.released && g_cond_wait_until (&r.cond, &r.lock, end));
  g_mutex_unlock (&r.lock);
  fail_unless (r.released);
  /* the last reference to the stream goes with its pads */
  gst_pad_set_active (feed, FALSE);
  gst_object_unref (feed);

  /* the released stream's frame is dropped from the next batch; stream 0
   * loses nothing */
  fail_unless_equals_int (gst_harness_push (h0, scaled_frame (0, 2, 16, 8,
              FALSE)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h0, gst_event_new_eos ()));
  pull_scaled (h0, 0, 0, 16, 8, FALSE);
  pull_scaled (h0, 0, 1, 16, 8, FALSE);
  /* stream 1's frame was left out of the batch, not run for nobody */
  out = gst_harness_pull (h0);
  fail_unless (out != NULL);
  fail_unless_equals_int (gst_buffer_get_batch_memory_meta (out)->frames, 1);
  gst_buffer_unref (out);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  /* both of stream 1's: the one whose result found no stream to go to,
   * and the pending one */
  fail_unless_equals_uint64 (stat_of (r.e, NULL, "frames-dropped"), 2);
  fail_unless_equals_uint64 (stat_of (r.e, "sink_0", "frames-dropped"), 0);

  gst_harness_teardown (h0);
  gst_object_unref (r.e);
  bus_free (bus);
  g_mutex_clear (&r.lock);
  g_cond_clear (&r.cond);
}

GST_END_TEST;

GST_START_TEST (test_a_scaled_streams_buffers_count_in_memory_limit)
{
  TwoStreams t;

  /* a batch of four 1920x1080 frames is 24 MB: past the limit, with the
   * other stream's and the engine's memory */
  t.e = element_new ("batch=4 scaling=letterbox memory-limit=4000000 "
      IDENTITY_FIXED, &t.bus);
  t.h0 = stream_harness (t.e, 0, CAPS_RGB);
  t.h1 = stream_harness (t.e, 1,
      "video/x-raw,format=RGB,width=1920,height=1080,framerate=30/1");
  push (t.h0, 0, 0);
  fail_unless_equals_int (gst_harness_push (t.h1, make_frame (1, 0,
              1920 * 1080 * 3)), GST_FLOW_NOT_NEGOTIATED);
  expect_error_naming (t.bus, "src_1", "memory limit");
  /* stream 0 goes on */
  fail_unless (gst_harness_push_event (t.h0, gst_event_new_eos ()));
  pull_frames (t.h0, 0, 0, 1);
  fail_unless (stat_of (t.e, NULL, "output-buffer-bytes") < 4000000);
  two_streams_free (&t);
}

GST_END_TEST;

static Suite *
cudabatchinfer_streams_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-streams");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  tcase_add_test (tc,
      test_letterbox_gives_each_stream_its_frames_at_its_own_size);
  tcase_add_test (tc, test_a_stream_changes_its_size_while_the_other_goes_on);
  tcase_add_test (tc, test_scaling_on_the_always_pad_follows_its_caps);
  tcase_add_test (tc,
      test_a_scaled_stream_released_by_the_collector_loses_only_its_frame);
  tcase_add_test (tc, test_a_scaled_streams_buffers_count_in_memory_limit);
  tcase_add_test (tc, test_scaled_streams_still_need_one_format);
  tcase_add_test (tc, test_scaling_a_model_of_any_size_still_needs_one_size);
  tcase_add_test (tc,
      test_three_decoded_files_letterboxed_come_out_at_their_sizes);
  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_requesting_sink_k_adds_src_k_and_releasing_removes_both);
  tcase_add_test (tc,
      test_two_streams_share_a_batch_and_each_result_goes_to_its_pad);
  tcase_add_test (tc,
      test_a_fast_stream_fills_batches_without_waiting_for_a_slow_one);
  tcase_add_test (tc,
      test_eos_on_one_pad_pads_its_last_frames_and_the_others_go_on);
  tcase_add_test (tc,
      test_an_event_waits_behind_its_streams_frames_without_a_cut);
  tcase_add_test (tc, test_a_flush_on_one_pad_drops_only_that_streams_frames);
  tcase_add_test (tc,
      test_other_caps_on_a_second_pad_are_refused_naming_both_pads);
  tcase_add_test (tc,
      test_a_caps_query_on_a_new_pad_asks_for_the_others_frames);
  tcase_add_test (tc, test_a_new_size_replans_once_the_other_streams_ended);
  tcase_add_test (tc,
      test_the_timeout_counts_from_the_oldest_frame_of_any_stream);
  tcase_add_test (tc, test_releasing_a_pad_mid_stream_pushes_its_frames_first);
  tcase_add_test (tc, test_releasing_a_pad_from_its_own_src_task);
  tcase_add_test (tc, test_releasing_a_pad_from_the_batch_message_handler);
  tcase_add_test (tc,
      test_a_branch_that_does_not_read_does_not_stop_the_others);
  tcase_add_test (tc,
      test_the_latency_query_on_src_k_adds_the_batching_latency);
  tcase_add_test (tc, test_four_streams_survive_repeated_null_playing_cycles);
  tcase_add_test (tc,
      test_four_scaled_streams_of_four_sizes_survive_repeated_cycles);
  tcase_add_test (tc, test_the_stats_and_the_batch_message_name_the_streams);
  tcase_add_test (tc,
      test_three_decoded_files_of_other_lengths_and_sizes_come_out);
  return s;
}

GST_CHECK_MAIN (cudabatchinfer_streams);
