/* GStreamer cudabatchinfer element tests
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/check/gsttestclock.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <omp.h>

#include "cbicudaprobe.h"

#define W 32
#define H 24
#define FRAME_DURATION (GST_SECOND / 30)
#define CAPS_RGB "video/x-raw,format=RGB,width=32,height=24,framerate=30/1"

/* The backend that backend=auto, the default, picks here: set once by the
 * suite, which probes for a usable GPU before it registers the tests. */
static const gchar *auto_backend = "cpu";

/* Makes an element from "cudabatchinfer " + @props, optionally with a bus
 * to read its messages, and a harness around it (PLAYING). */
static GstHarness *
harness_new (const gchar * props, GstBus ** bus)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer %s", props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstHarness *h;

  fail_unless (e != NULL, "could not make %s", desc);
  g_free (desc);
  if (bus) {
    *bus = gst_bus_new ();
    gst_element_set_bus (e, *bus);
  }
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  return h;
}

static void
harness_free (GstHarness * h, GstBus * bus)
{
  gst_harness_teardown (h);
  if (bus) {
    gst_bus_set_flushing (bus, TRUE);
    gst_object_unref (bus);
  }
}

static guint8
pattern (guint frame, guint x, guint y, guint c)
{
  return (guint8) (x * 7 + y * 13 + frame * 29 + c * 50 + (x * y) % 17);
}

/* A frame numbered @i with every timestamp field set from @i. */
static GstBuffer *
make_frame (guint i, guint width, guint height, guint bpp)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, width * height * bpp, NULL);
  GstMapInfo map;
  guint x, y, c;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (y = 0; y < height; y++)
    for (x = 0; x < width; x++)
      for (c = 0; c < bpp; c++)
        map.data[(y * width + x) * bpp + c] = pattern (i, x, y, c);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
  GST_BUFFER_DTS (buf) = i * FRAME_DURATION + 1;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  GST_BUFFER_OFFSET (buf) = i;
  GST_BUFFER_OFFSET_END (buf) = i + 1;
  if (i == 0)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
  if (i % 5 == 3)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  return buf;
}

static void
push_frames (GstHarness * h, guint first, guint n)
{
  guint i;

  for (i = first; i < first + n; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame (i, W, H, 3)),
        GST_FLOW_OK);
}

/* Pulls an output and checks it carries frame @i's timestamps and flags. */
static GstBuffer *
pull_frame (GstHarness * h, guint i)
{
  GstBuffer *out = gst_harness_pull (h);

  fail_unless (out != NULL, "no output for frame %u", i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * FRAME_DURATION);
  fail_unless_equals_uint64 (GST_BUFFER_DTS (out), i * FRAME_DURATION + 1);
  fail_unless_equals_uint64 (GST_BUFFER_DURATION (out), FRAME_DURATION);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET_END (out), i + 1);
  fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (out,
          GST_BUFFER_FLAG_DISCONT), i == 0);
  fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (out,
          GST_BUFFER_FLAG_DELTA_UNIT), i % 5 == 3);
  return out;
}

/* Pulls the outputs of frames @first .. @end - 1, checking each as
 * pull_frame () does, and releases them. */
static void
pull_frames (GstHarness * h, guint first, guint end)
{
  guint i;

  for (i = first; i < end; i++)
    gst_buffer_unref (pull_frame (h, i));
}

/* A byte within one step of @expected (float rounding at .5). */
#define fail_unless_near(actual, expected) G_STMT_START { \
  gint _a = (actual), _e = (expected); \
  fail_unless (ABS (_a - _e) <= 1, "%s is %d, expected %d", #actual, _a, _e); \
} G_STMT_END

/* Whether EOS is among the events the harness received. */
static gboolean
has_eos (GstHarness * h)
{
  GstEvent *ev;
  gboolean eos = FALSE;

  while (!eos && (ev = gst_harness_try_pull_event (h))) {
    eos = GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  return eos;
}

static GstBatchMemoryMeta *
meta_of (GstBuffer * buf)
{
  GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (buf);

  fail_unless (m != NULL, "output buffer without GstBatchMemoryMeta");
  return m;
}

/* The batch of @buf ran on the warmed-up plan and allocated nothing. */
#define fail_unless_steady(buf) G_STMT_START { \
  GstBatchMemoryMeta *_m = meta_of (buf); \
  fail_unless (_m->warmed_up, "batch %" G_GUINT64_FORMAT " not warmed up", \
      _m->batch_index); \
  fail_unless (!_m->replanned, "batch %" G_GUINT64_FORMAT " replanned", \
      _m->batch_index); \
  fail_unless_equals_uint64 (_m->fresh_allocations, 0); \
} G_STMT_END

static guint64
stat_of (GstHarness * h, const gchar * field)
{
  GstStructure *s;
  guint64 v = G_MAXUINT64;

  g_object_get (h->element, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, field, &v), "no %s", field);
  gst_structure_free (s);
  return v;
}

/* Runs @n frames through @props and checks count, order and timestamps;
 * returns the outputs (transfer full). */
static GPtrArray *
run_frames (const gchar * props, guint n)
{
  GstHarness *h = harness_new (props, NULL);
  GPtrArray *outs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  guint i;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, n);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 0; i < n; i++)
    g_ptr_array_add (outs, pull_frame (h, i));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  harness_free (h, NULL);
  return outs;
}

static void
assert_same_pixels (GstBuffer * a, GstBuffer * b, guint frame)
{
  GstMapInfo ma, mb;
  gsize i;

  gst_buffer_map (a, &ma, GST_MAP_READ);
  gst_buffer_map (b, &mb, GST_MAP_READ);
  fail_unless_equals_uint64 (ma.size, mb.size);
  for (i = 0; i < ma.size; i++)
    fail_unless (ABS ((gint) ma.data[i] - (gint) mb.data[i]) <= 1,
        "frame %u byte %" G_GSIZE_FORMAT ": %u vs %u", frame, i, ma.data[i],
        mb.data[i]);
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
}

GST_START_TEST (test_batch1_outputs_each_frame_with_its_timestamps)
{
  GPtrArray *outs = run_frames ("batch=1", 5);
  guint i;

  for (i = 0; i < outs->len; i++) {
    GstBatchMemoryMeta *m = meta_of (g_ptr_array_index (outs, i));
    fail_unless_equals_uint64 (m->batch_index, i);
    fail_unless_equals_int (m->batch_size, 1);
    fail_unless_equals_int (m->padded, 0);
  }
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_120_frames_at_batch16_give_120_outputs_in_8_batches)
{
  GPtrArray *outs = run_frames ("batch=16", 120);
  guint i;

  fail_unless_equals_int (outs->len, 120);
  for (i = 0; i < 120; i++) {
    GstBatchMemoryMeta *m = meta_of (g_ptr_array_index (outs, i));
    fail_unless_equals_uint64 (m->batch_index, i / 16);
    fail_unless_equals_int (m->frame_index, i % 16);
    fail_unless_equals_int (m->batch_size, 16);
    fail_unless_equals_int (m->frames, i < 112 ? 16 : 8);
    fail_unless_equals_int (m->padded, i < 112 ? 0 : 8);
  }
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_fewer_frames_than_batch_come_out_at_eos)
{
  GstHarness *h = harness_new ("batch=16", NULL);
  guint i;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 5);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 0; i < 5; i++) {
    GstBuffer *out = pull_frame (h, i);
    fail_unless_equals_int (meta_of (out)->padded, 11);
    gst_buffer_unref (out);
  }
  /* results first, then EOS */
  fail_unless (has_eos (h), "no EOS after the results");
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_eos_with_nothing_pending_pushes_only_eos)
{
  GstHarness *h = harness_new ("batch=4", NULL);

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 8);
  /* both batches were full: EOS only waits for them to be pushed */
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 8);
  fail_unless (has_eos (h));
  fail_unless_equals_uint64 (stat_of (h, "batches"), 2);
  fail_unless_equals_uint64 (stat_of (h, "padded-frames"), 0);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_a_set_thread_count_stays_and_0_starts_on_the_team)
{
  /* a count set is used as it is, so no batch is counted whatever else
   * this machine runs. threads=0 runs batches on one thread once the
   * team's threads waited for cores over a window of batches that ran on
   * the team: its first batch always runs on the team (no warm-up here,
   * whose batches would be the first). Whether later ones go to one
   * thread depends on this machine's load and cores (never on one core),
   * so that is all it guarantees on any machine. */
  const gchar *props[2] = { "batch=2 backend=cpu threads=2",
    "batch=2 backend=cpu threads=0 warmup=false"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    GstHarness *h = harness_new (props[i], NULL);

    gst_harness_set_src_caps_str (h, CAPS_RGB);
    push_frames (h, 0, 8);
    pull_frames (h, 0, 8);
    fail_unless_equals_uint64 (stat_of (h, "batches"), 4);
    if (i == 0) {
      fail_unless_equals_uint64 (stat_of (h, "single-thread-batches"), 0);
    } else {
      fail_unless (stat_of (h, "single-thread-batches") < 4,
          "the first batch ran on one thread");
    }
    harness_free (h, NULL);
  }
}

GST_END_TEST;

static void
check_pad_mode_matches_batch1 (const gchar * props)
{
  GPtrArray *ref = run_frames ("batch=1", 21);
  GPtrArray *outs = run_frames (props, 21);
  guint i;

  for (i = 0; i < 21; i++)
    assert_same_pixels (g_ptr_array_index (ref, i),
        g_ptr_array_index (outs, i), i);
  g_ptr_array_unref (ref);
  g_ptr_array_unref (outs);
}

GST_START_TEST (test_repeat_last_padding_never_changes_real_results)
{
  check_pad_mode_matches_batch1 ("batch=8 pad-mode=repeat-last");
}

GST_END_TEST;

GST_START_TEST (test_zero_padding_never_changes_real_results)
{
  check_pad_mode_matches_batch1 ("batch=8 pad-mode=zero");
}

GST_END_TEST;

GST_START_TEST (test_no_padding_gives_the_same_real_results)
{
  check_pad_mode_matches_batch1 ("batch=8 pad-mode=none");
}

GST_END_TEST;

GST_START_TEST (test_output_is_a_sketch_of_the_input)
{
  /* flat input: no edges inside the frame, so the paper colour */
  GstHarness *h = harness_new ("batch=2", NULL);
  GstBuffer *in = gst_buffer_new_allocate (NULL, W * H * 3, NULL), *out;
  GstMapInfo map;

  gst_buffer_memset (in, 0, 128, W * H * 3);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  out = gst_harness_pull (h);
  gst_buffer_map (out, &map, GST_MAP_READ);
  /* middle pixel: paper (1.0, 0.97, 0.9) x 255, within float rounding */
  fail_unless_near (map.data[((H / 2) * W + W / 2) * 3 + 0], 255);
  fail_unless_near (map.data[((H / 2) * W + W / 2) * 3 + 1], 247);
  fail_unless_near (map.data[((H / 2) * W + W / 2) * 3 + 2], 230);
  /* the frame border is an edge against the zero padding: dark */
  fail_unless (map.data[0] < 128, "corner is %u", map.data[0]);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_alpha_passes_through_untouched)
{
  GstHarness *h = harness_new ("batch=2", NULL);
  GstBuffer *in, *out;
  GstMapInfo mi, mo;
  guint p;

  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=BGRA,width=32,height=24,framerate=30/1");
  in = make_frame (0, W, H, 4);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  out = gst_harness_pull (h);
  gst_buffer_map (in, &mi, GST_MAP_READ);
  gst_buffer_map (out, &mo, GST_MAP_READ);
  for (p = 0; p < W * H; p++)
    fail_unless_equals_int (mo.data[p * 4 + 3], mi.data[p * 4 + 3]);
  gst_buffer_unmap (in, &mi);
  gst_buffer_unmap (out, &mo);
  gst_buffer_unref (in);
  gst_buffer_unref (out);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_meta_fields_are_consistent)
{
  GPtrArray *outs = run_frames ("batch=4", 10);
  GstStructure *s;
  guint i, frames;

  for (i = 0; i < outs->len; i++) {
    GstBatchMemoryMeta *m = meta_of (g_ptr_array_index (outs, i));
    fail_unless_equals_int (m->batch_size, m->frames + m->padded);
    fail_unless (m->frame_index < m->frames);
    fail_unless (m->warmed_up);
    fail_unless (!m->replanned);
    fail_unless (m->allocated_bytes > 0);
    fail_unless (m->allocated_bytes <= m->reserved_bytes);
    fail_unless (m->peak_allocated_bytes >= m->allocated_bytes);
    fail_unless (m->peak_reserved_bytes >= m->reserved_bytes);
    fail_unless (m->peak_allocated_bytes <= m->peak_reserved_bytes);
    fail_unless (GST_CLOCK_TIME_IS_VALID (m->batch_time) && m->batch_time > 0);
    fail_unless_equals_string (m->backend, auto_backend);
    fail_unless_equals_int (m->device_id, 0);
    /* a device's memory is reported, and the CPU has none */
    if (g_str_equal (auto_backend, "cuda"))
      fail_unless (m->device_total_bytes > 0);
    else
      fail_unless_equals_uint64 (m->device_total_bytes, 0);
  }
  s = gst_batch_memory_meta_to_structure (meta_of (g_ptr_array_index (outs,
              9)));
  fail_unless_equals_string (gst_structure_get_name (s),
      "cudabatchinfer-batch");
  fail_unless (gst_structure_get_uint (s, "frames", &frames));
  fail_unless_equals_int (frames, 2);
  fail_unless (gst_structure_has_field (s, "fresh-allocations"));
  fail_unless (gst_structure_has_field (s, "peak-reserved-bytes"));
  gst_structure_free (s);
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_output_buffers_are_recycled_once_downstream_lets_go)
{
  GstHarness *h = harness_new ("batch=16", NULL);
  GHashTable *meta_of_buffer = g_hash_table_new (NULL, NULL);
  guint b, i;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  for (b = 0; b < 8; b++) {
    push_frames (h, b * 16, 16);
    for (i = 0; i < 16; i++) {
      GstBuffer *out = pull_frame (h, b * 16 + i);
      GstBatchMemoryMeta *m = meta_of (out), *before;
      fail_unless (gst_buffer_is_writable (out));
      /* a recycled buffer keeps its meta: no allocation for it either */
      before = g_hash_table_lookup (meta_of_buffer, out);
      fail_unless (before == NULL || before == m);
      g_hash_table_insert (meta_of_buffer, out, m);
      gst_buffer_unref (out);
    }
  }
  /* one batch of buffers per batch in flight (max-inflight=2), allocated
   * once, reused for every batch */
  fail_unless (g_hash_table_size (meta_of_buffer) <= 2 * 16,
      "%u output buffers for 2 batches of 16",
      g_hash_table_size (meta_of_buffer));
  g_hash_table_unref (meta_of_buffer);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_meta_is_copied_with_the_buffer)
{
  GPtrArray *outs = run_frames ("batch=2", 2);
  GstBuffer *copy = gst_buffer_copy (g_ptr_array_index (outs, 1));
  GstBatchMemoryMeta *a = meta_of (g_ptr_array_index (outs, 1));
  GstBatchMemoryMeta *b = meta_of (copy);

  fail_unless (a != b);
  fail_unless_equals_int (b->frame_index, 1);
  fail_unless_equals_uint64 (b->reserved_bytes, a->reserved_bytes);
  fail_unless_equals_string (b->backend, a->backend);
  gst_buffer_unref (copy);
  g_ptr_array_unref (outs);
}

GST_END_TEST;

/* The three seed observations of the project. */

static GPtrArray *
run_120_at_16 (const gchar * props)
{
  gchar *all = g_strdup_printf ("batch=16 %s", props);
  GPtrArray *outs = run_frames (all, 120);

  g_free (all);
  return outs;
}

GST_START_TEST (test_warmup_and_padding_leave_every_batch_without_fresh_memory)
{
  GPtrArray *outs = run_120_at_16 ("warmup=true pad-mode=repeat-last");
  guint i;

  for (i = 0; i < 120; i++) {
    GstBatchMemoryMeta *m = meta_of (g_ptr_array_index (outs, i));
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    fail_unless_equals_uint64 (m->fresh_bytes, 0);
    fail_unless (!m->replanned, "batch %" G_GUINT64_FORMAT " replanned",
        m->batch_index);
  }
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_without_warmup_the_first_batch_replans_and_allocates)
{
  GPtrArray *outs = run_120_at_16 ("warmup=false");
  guint i;

  for (i = 0; i < 120; i++) {
    GstBatchMemoryMeta *m = meta_of (g_ptr_array_index (outs, i));
    fail_unless_equals_int (m->warmed_up, FALSE);
    if (m->batch_index == 0) {
      fail_unless (m->replanned);
      fail_unless (m->fresh_allocations > 0);
      fail_unless (m->fresh_bytes > 0);
    } else {
      fail_unless (!m->replanned);
      fail_unless_equals_uint64 (m->fresh_allocations, 0);
    }
  }
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_without_padding_the_last_batch_replans)
{
  GPtrArray *outs = run_120_at_16 ("pad-mode=none");
  GstBatchMemoryMeta *last = meta_of (g_ptr_array_index (outs, 119));
  guint i;

  for (i = 0; i < 112; i++) {
    GstBatchMemoryMeta *m = meta_of (g_ptr_array_index (outs, i));
    fail_unless (!m->replanned);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
  }
  fail_unless_equals_int (last->batch_size, 8);
  fail_unless_equals_int (last->padded, 0);
  fail_unless (last->replanned);
  fail_unless (!last->warmed_up);
  fail_unless (last->fresh_allocations > 0);
  g_ptr_array_unref (outs);
}

GST_END_TEST;

/* Pushes frame @frame alone, the first of a batch, and checks that the
 * batch's deadline waits on @clock until @deadline. */
static void
push_and_expect_deadline (GstHarness * h, GstTestClock * clock, guint frame,
    GstClockTime deadline)
{
  push_frames (h, frame, 1);
  gst_test_clock_wait_for_next_pending_id (clock, NULL);
  fail_unless_equals_uint64 (gst_test_clock_get_next_entry_time (clock),
      deadline);
}

/* Lets the pending deadline fire and pulls frame @frame, alone in its
 * batch. */
static void
fire_deadline_and_pull (GstHarness * h, guint frame)
{
  fail_unless (gst_harness_crank_single_clock_wait (h));
  gst_buffer_unref (pull_frame (h, frame));
}

GST_START_TEST (test_batch_timeout_pushes_a_partial_batch_on_the_clock)
{
  GstHarness *h = harness_new ("batch=16 batch-timeout=100000000", NULL);
  GstTestClock *clock;
  GstBuffer *out;
  guint i;

  gst_harness_use_testclock (h);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 3);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);

  clock = gst_harness_get_testclock (h);
  gst_test_clock_wait_for_next_pending_id (clock, NULL);
  fail_unless_equals_uint64 (gst_test_clock_get_next_entry_time (clock),
      100 * GST_MSECOND);
  fail_unless (gst_harness_crank_single_clock_wait (h));
  for (i = 0; i < 3; i++) {
    out = pull_frame (h, i);
    fail_unless_equals_int (meta_of (out)->padded, 13);
    gst_buffer_unref (out);
  }
  /* the next frame starts a new batch with a new deadline */
  push_and_expect_deadline (h, clock, 3,
      3 * FRAME_DURATION + 100 * GST_MSECOND);
  fire_deadline_and_pull (h, 3);
  fail_unless_equals_uint64 (stat_of (h, "batches"), 2);
  gst_object_unref (clock);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_batch_timeout_counts_from_a_late_frame_running_time)
{
  GstHarness *h = harness_new ("batch=16 batch-timeout=100000000", NULL);
  GstTestClock *clock;

  gst_harness_use_testclock (h);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  clock = gst_harness_get_testclock (h);
  /* frame 15 (500 ms) reaches the element at 520 ms: it has waited 20 */
  gst_test_clock_set_time (clock, 520 * GST_MSECOND);
  push_and_expect_deadline (h, clock, 15,
      15 * FRAME_DURATION + 100 * GST_MSECOND);
  fire_deadline_and_pull (h, 15);

  /* a frame early on the clock waits the timeout from its arrival */
  push_and_expect_deadline (h, clock, 60,
      gst_clock_get_time (GST_CLOCK (clock)) + 100 * GST_MSECOND);
  fire_deadline_and_pull (h, 60);
  gst_object_unref (clock);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST
    (test_a_frame_past_its_deadline_waits_a_frame_for_the_ones_behind) {
  GstHarness *h = harness_new ("batch=4 batch-timeout=100000000", NULL);
  GstTestClock *clock;
  GstClockTime now = 700 * GST_MSECOND;

  gst_harness_use_testclock (h);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  clock = gst_harness_get_testclock (h);
  /* frame 15 (500 ms) reaches the element at 700 ms, 100 ms past its
   * deadline: a source catching up after a slow batch, its next frames
   * right behind. The batch waits one frame (33 ms), not none */
  gst_test_clock_set_time (clock, now);
  push_and_expect_deadline (h, clock, 15, now + FRAME_DURATION);
  push_frames (h, 16, 3);
  pull_frames (h, 15, 19);
  fail_unless_equals_uint64 (stat_of (h, "padded-frames"), 0);

  /* alone, it goes once that frame's time has passed, padded */
  push_and_expect_deadline (h, clock, 19, now + FRAME_DURATION);
  fire_deadline_and_pull (h, 19);
  fail_unless_equals_uint64 (stat_of (h, "padded-frames"), 3);
  gst_object_unref (clock);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_drain_query_pushes_pending_frames)
{
  GstHarness *h = harness_new ("batch=16", NULL);
  GstQuery *q = gst_query_new_drain ();

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 5);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  fail_unless (gst_pad_peer_query (h->srcpad, q));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 5);
  pull_frames (h, 0, 5);
  gst_query_unref (q);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_flush_signal_pushes_the_partial_batch)
{
  GstHarness *h = harness_new ("batch=16 pad-mode=zero", NULL);

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 7);
  g_signal_emit_by_name (h->element, "flush");
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 7);
  pull_frames (h, 0, 7);
  fail_unless_equals_uint64 (stat_of (h, "padded-frames"), 9);
  harness_free (h, NULL);
}

GST_END_TEST;

static guint
count_messages (GstBus * bus, const gchar * name)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    if (gst_message_has_name (msg, name))
      n++;
    gst_message_unref (msg);
  }
  return n;
}

GST_START_TEST (test_caps_change_drains_then_warms_up_for_the_new_size)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=4", &bus);
  GstBuffer *out;
  guint i;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  fail_unless_equals_int (count_messages (bus, "cudabatchinfer-warmup"), 1);
  push_frames (h, 0, 3);
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=16,height=12,framerate=30/1");
  /* the old frames came out, at the old size, before the new caps */
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 3);
  for (i = 0; i < 3; i++) {
    out = pull_frame (h, i);
    fail_unless_equals_uint64 (gst_buffer_get_size (out), W * H * 3);
    gst_buffer_unref (out);
  }
  fail_unless_equals_int (count_messages (bus, "cudabatchinfer-warmup"), 1);

  for (i = 3; i < 7; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame (i, 16, 12, 3)),
        GST_FLOW_OK);
  for (i = 3; i < 7; i++) {
    out = pull_frame (h, i);
    fail_unless_equals_uint64 (gst_buffer_get_size (out), 16 * 12 * 3);
    fail_unless_steady (out);
    gst_buffer_unref (out);
  }
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_flushing_seek_drops_pending_frames_and_counts_them)
{
  GstHarness *h = harness_new ("batch=16", NULL);
  GstSegment segment;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 5);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  fail_unless_equals_uint64 (stat_of (h, "frames-dropped"), 5);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);

  push_frames (h, 0, 16);
  /* frames-out counts a batch once its pushes have returned, which may be
   * after the harness holds its last buffer; EOS waits for that */
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  pull_frames (h, 0, 16);
  fail_unless_equals_uint64 (stat_of (h, "frames-in"), 21);
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 16);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_stats_count_frames_batches_and_padding)
{
  GstHarness *h = harness_new ("batch=16", NULL);

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 40);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_uint64 (stat_of (h, "frames-in"), 40);
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 40);
  fail_unless_equals_uint64 (stat_of (h, "batches"), 3);
  fail_unless_equals_uint64 (stat_of (h, "padded-frames"), 8);
  fail_unless_equals_uint64 (stat_of (h, "replans"), 0);
  fail_unless_equals_uint64 (stat_of (h, "fresh-allocations-after-warmup"), 0);
  fail_unless (stat_of (h, "warmup-time") > 0);
  fail_unless (stat_of (h, "reserved-bytes") > 0);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_latency_adds_batching_and_a_slow_warmup_batch_time)
{
  GstHarness *h = harness_new ("batch=16", NULL);
  GstClockTime batch_time;

  gst_harness_set_upstream_latency (h, 0);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  batch_time = stat_of (h, "latency-batch-time");
  /* a slow batch of the warm-up's, not a usual one */
  fail_unless (batch_time >= stat_of (h, "steady-batch-time"));
  fail_unless (batch_time > 0);
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      gst_util_uint64_scale_int (15 * GST_SECOND, 1, 30) + batch_time);

  g_object_set (h->element, "batch-timeout", 100 * GST_MSECOND, NULL);
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      100 * GST_MSECOND + batch_time);
  harness_free (h, NULL);
}

GST_END_TEST;

/* Takes @e, set up with warmup-caps, to PAUSED with @bus as its bus;
 * returns (transfer full) the warm-up message it posted on the way. */
static GstMessage *
pause_for_warmup_message (GstElement * e, GstBus * bus)
{
  GstMessage *msg;

  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL && gst_message_has_name (msg,
          "cudabatchinfer-warmup"));
  return msg;
}

/* The threads the warm-up of an element with @threads reports. */
static guint
warmup_threads (guint threads)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  GstBus *bus = gst_bus_new ();
  GstCaps *caps = gst_caps_from_string (CAPS_RGB);
  GstMessage *msg;
  guint used = 0;

  g_object_set (e, "batch", 2, "backend", 1, "threads", threads,
      "warmup-caps", caps, NULL);
  gst_caps_unref (caps);
  msg = pause_for_warmup_message (e, bus);
  fail_unless (gst_structure_get_uint (gst_message_get_structure (msg),
          "threads", &used));
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
  return used;
}

GST_START_TEST (test_threads_property_sets_the_cpu_compute_threads)
{
  /* the warm-up runs in this thread: its own count is given back after */
  const gint ours = omp_get_max_threads ();

  fail_unless_equals_int (warmup_threads (ours + 2), ours + 2);
  fail_unless_equals_int (omp_get_max_threads (), ours);
  fail_unless_equals_int (warmup_threads (1), 1);
  /* 0: OpenMP's default, this thread's */
  fail_unless_equals_int (warmup_threads (0), ours);
  fail_unless_equals_int (omp_get_max_threads (), ours);
}

GST_END_TEST;

/* Back to NULL, then gone: @e and its @bus. */
static void
stop_and_free (GstElement * e, GstBus * bus)
{
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_START_TEST (test_warmup_caps_warm_up_on_ready_to_paused)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  GstBus *bus = gst_bus_new ();
  GstCaps *caps = gst_caps_from_string (CAPS_RGB);
  GstStructure *stats;
  guint64 fresh, reserved;
  GstMessage *msg;

  g_object_set (e, "batch", 4, "warmup-caps", caps, NULL);
  gst_caps_unref (caps);
  msg = pause_for_warmup_message (e, bus);
  stats = (GstStructure *) gst_message_get_structure (msg);
  fail_unless (gst_structure_get_uint64 (stats, "fresh-allocations", &fresh));
  fail_unless (gst_structure_get_uint64 (stats, "reserved-bytes", &reserved));
  fail_unless (fresh > 0);
  /* what stays reserved: the batch's input and output at least */
  fail_unless (reserved >= 2 * 4 * 3 * W * H * sizeof (gfloat));
  gst_message_unref (msg);
  stop_and_free (e, bus);
}

GST_END_TEST;

/* backend=auto: the warm-up message and the stats say which backend runs
 * and, on the CPU, why (here: no usable GPU, or none in this build). */
GST_START_TEST (test_warmup_message_and_stats_name_the_backend_and_why)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  GstBus *bus = gst_bus_new ();
  GstCaps *caps = gst_caps_from_string (CAPS_RGB);
  const GstStructure *warm;
  const gchar *reason;
  GstStructure *stats;
  GstMessage *msg;
  guint64 device_fresh;

  g_object_set (e, "batch", 4, "warmup-caps", caps, NULL);
  gst_caps_unref (caps);
  msg = pause_for_warmup_message (e, bus);
  warm = gst_message_get_structure (msg);
  g_object_get (e, "stats", &stats, NULL);
  fail_unless_equals_string (gst_structure_get_string (warm, "backend"),
      auto_backend);
  fail_unless_equals_string (gst_structure_get_string (stats, "backend"),
      auto_backend);
  reason = gst_structure_get_string (warm, "fallback-reason");
  if (g_str_equal (auto_backend, "cpu")) {
    fail_unless (reason != NULL && (strstr (reason, "no usable CUDA device")
            || strstr (reason, "no CUDA backend")), "%s", reason);
  } else {
    fail_unless (reason == NULL, "%s", reason);
  }
  fail_unless_equals_string (gst_structure_get_string (stats,
          "fallback-reason"), reason);
  fail_unless (gst_structure_get_uint64 (stats,
          "device-fresh-bytes-after-warmup", &device_fresh));
  fail_unless_equals_uint64 (device_fresh, 0);
  gst_structure_free (stats);
  gst_message_unref (msg);
  stop_and_free (e, bus);
}

GST_END_TEST;

GST_START_TEST (test_matching_caps_after_warmup_caps_do_not_warm_up_again)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=4 warmup-caps=\"video/x-raw,"
      "format=RGB,width=32,height=24\"", &bus);
  guint i;

  /* the warm-up ran on READY to PAUSED, inside harness_new */
  fail_unless_equals_int (count_messages (bus, "cudabatchinfer-warmup"), 1);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  fail_unless_equals_int (count_messages (bus, "cudabatchinfer-warmup"), 0);
  push_frames (h, 0, 4);
  for (i = 0; i < 4; i++) {
    GstBuffer *out = pull_frame (h, i);
    fail_unless_steady (out);
    gst_buffer_unref (out);
  }
  harness_free (h, bus);
}

GST_END_TEST;

/* Bad input */

/* The embedded model takes any frame size, so what it cannot take are the
 * formats outside the templates; a fixed-size model's check comes with
 * model files. */
/* Pushes a buffer of @size bytes with a video meta of @format, @width x
 * @height in @n_planes planes of rows of @stride bytes into a batch=1
 * element on CAPS_RGB (32x24). Returns what the push returned, and in
 * @err the error posted, if any. */
static GstFlowReturn
push_with_video_meta (GstVideoFormat format, guint width, guint height,
    guint n_planes, gint stride, gsize size, GError ** err)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=1", &bus);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0, };
  gint strides[GST_VIDEO_MAX_PLANES] = { stride, stride };
  GstMessage *msg;
  GstFlowReturn ret;

  gst_buffer_memset (buf, 0, 128, size);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, format,
      width, height, n_planes, offset, strides);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  ret = gst_harness_push (h, buf);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  if (msg) {
    gst_message_parse_error (msg, err, NULL);
    gst_message_unref (msg);
  }
  harness_free (h, bus);
  return ret;
}

static const struct
{
  GstVideoFormat format;
  guint width, height, n_planes;
  gint stride;
  const gchar *why;
} refused_metas[] = {
  /* what gst_video_frame_map() refuses with a critical */
  {GST_VIDEO_FORMAT_RGB, W / 2, H, 1, W * 3, "contradicts the caps"},
  {GST_VIDEO_FORMAT_RGB, W, H / 2, 1, W * 3, "contradicts the caps"},
  {GST_VIDEO_FORMAT_BGR, W, H, 1, W * 3, "contradicts the caps"},
  {GST_VIDEO_FORMAT_RGB, W, H, 2, W * 3, "contradicts the caps"},
  /* what it maps, for the packing to read past the buffer */
  {GST_VIDEO_FORMAT_RGB, W, H, 1, 2 * W * 3, "rows past the end"},
  {GST_VIDEO_FORMAT_RGB, W, H, 1, W, "rows shorter than"},
};

/* gst-check fails a test on any critical it was not told to expect: the
 * element must not call gst_video_frame_map() on these metas */
GST_START_TEST (test_a_bad_video_meta_is_a_stream_error_not_a_critical)
{
  GError *err = NULL;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (refused_metas); i++) {
    fail_unless_equals_int (push_with_video_meta (refused_metas[i].format,
            refused_metas[i].width, refused_metas[i].height,
            refused_metas[i].n_planes, refused_metas[i].stride, W * H * 3,
            &err), GST_FLOW_ERROR);
    fail_unless (g_error_matches (err, GST_STREAM_ERROR,
            GST_STREAM_ERROR_FORMAT), "meta %u: %s", i,
        err ? err->message : "no error");
    fail_unless (strstr (err->message, refused_metas[i].why) != NULL,
        "meta %u: %s", i, err->message);
    g_clear_error (&err);
  }
  /* a meta that agrees, and one of a larger frame with longer rows, which
   * the caps' frame is cropped from, still map */
  fail_unless_equals_int (push_with_video_meta (GST_VIDEO_FORMAT_RGB, W, H,
          1, W * 3, W * H * 3, &err), GST_FLOW_OK);
  fail_unless_equals_int (push_with_video_meta (GST_VIDEO_FORMAT_RGB, 2 * W,
          2 * H, 1, 2 * W * 3, 4 * W * H * 3, &err), GST_FLOW_OK);
  fail_unless (err == NULL, "%s", err ? err->message : "");
}

GST_END_TEST;

GST_START_TEST (test_formats_it_cannot_take_are_not_negotiated)
{
  GstHarness *h = harness_new ("batch=4", NULL);

  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=GRAY8,width=32,height=24,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (h, make_frame (0, W, H, 1)),
      GST_FLOW_NOT_NEGOTIATED);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_batch_cannot_change_while_playing)
{
  GstHarness *h = harness_new ("batch=4", NULL);
  guint batch;

  g_object_set (h->element, "batch", 8, NULL);
  g_object_get (h->element, "batch", &batch, NULL);
  fail_unless_equals_int (batch, 4);
  /* pad-mode is not pipeline-shaping: it may change */
  g_object_set (h->element, "pad-mode", 1, NULL);
  harness_free (h, NULL);
}

GST_END_TEST;

/* Sets @e to PAUSED, expects failure and an error message whose text
 * contains @needle; returns the error's domain. */
static GQuark
expect_start_error (GstElement * e, const gchar * needle)
{
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  GQuark domain;

  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error message");
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (strstr (err->message, needle) != NULL, "'%s' lacks '%s'",
      err->message, needle);
  domain = err->domain;
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
  return domain;
}

GST_START_TEST (test_memory_limit_fails_warmup_with_an_error_naming_it)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  GstCaps *caps = gst_caps_from_string (CAPS_RGB);

  /* room for the output buffers and the test frames (16 x 2 frames of
   * 32x24 each), not for the engine */
  g_object_set (e, "memory-limit", (guint64) (2 * 16 * 2 * 96 * 24 + 4096),
      "warmup-caps", caps, NULL);
  gst_caps_unref (caps);
  fail_unless_equals_int (expect_start_error (e, "Warm-up failed"),
      GST_RESOURCE_ERROR);
}

GST_END_TEST;

/* Sets CAPS_RGB on @h, whose element must refuse them: the first frame
 * is not negotiated; returns (transfer full) the error posted on @bus. */
static GError *
caps_refusal (GstHarness * h, GstBus * bus)
{
  GstMessage *msg;
  GError *err = NULL;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  fail_unless_equals_int (gst_harness_push (h, make_frame (0, W, H, 3)),
      GST_FLOW_NOT_NEGOTIATED);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  gst_message_unref (msg);
  return err;
}

/* 4 x 2 RGB frames of 32x24: GStreamer's size of such a frame (rows of
 * 96 bytes) for a batch per batch in flight */
#define OUTPUT_BUFFER_BYTES (4 * 2 * 96 * 24)
G_STATIC_ASSERT (OUTPUT_BUFFER_BYTES + 4096 == 22528);

GST_START_TEST (test_memory_limit_counts_the_output_buffers_before_they_exist)
{
  GstBus *bus;
  GstHarness *h;
  GError *err = NULL;

  /* room for the engine: the output buffers are counted and reported */
  h = harness_new ("batch=4 max-inflight=2 memory-limit=100000000", NULL);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  fail_unless_equals_uint64 (stat_of (h, "output-buffer-bytes"),
      OUTPUT_BUFFER_BYTES);
  harness_free (h, NULL);

  /* no room for them: refused before the pool is made */
  h = harness_new ("batch=4 max-inflight=2 memory-limit=18432", &bus);
  err = caps_refusal (h, bus);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NO_SPACE_LEFT));
  fail_unless (strstr (err->message, "output buffers (8 frames, 18432 "
          "bytes) do not fit the memory limit of 18432 bytes") != NULL, "%s",
      err->message);
  g_error_free (err);
  fail_unless_equals_uint64 (stat_of (h, "reserved-bytes"), 0);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_output_buffer_bytes_count_only_buffers_the_limit_let_in)
{
  GstBus *bus;
  GstHarness *h;
  GError *err;

  /* refused at the first caps: no output buffers are the element's */
  h = harness_new ("batch=4 max-inflight=2 memory-limit=18432", &bus);
  err = caps_refusal (h, bus);
  g_error_free (err);
  fail_unless_equals_uint64 (stat_of (h, "output-buffer-bytes"), 0);
  harness_free (h, bus);

  /* caps let in, then caps whose buffers do not fit (no warm-up: the
   * engine takes nothing): the stats keep the first caps' buffers */
  h = harness_new ("batch=4 max-inflight=2 warmup=false memory-limit=40000",
      &bus);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  fail_unless_equals_uint64 (stat_of (h, "output-buffer-bytes"),
      OUTPUT_BUFFER_BYTES);
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=64,height=48,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (h, make_frame (0, 64, 48, 3)),
      GST_FLOW_NOT_NEGOTIATED);
  fail_unless_equals_uint64 (stat_of (h, "output-buffer-bytes"),
      OUTPUT_BUFFER_BYTES);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_refused_caps_post_one_error_and_fail_at_once_after)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=4 memory-limit=1000", &bus);
  GstMessage *msg;
  guint i, errors = 0;

  /* upstream sends sticky caps the element refused again before each
   * buffer: they must not warm up or post their error again */
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  for (i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame (i, W, H, 3)),
        GST_FLOW_NOT_NEGOTIATED);
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
    errors++;
    gst_message_unref (msg);
  }
  /* each warm-up that fails posts one */
  fail_unless_equals_int (errors, 1);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_failed_allocation_in_a_batch_is_a_flow_error)
{
  GstBus *bus;
  /* room for the output buffers, not for the engine */
  GstHarness *h = harness_new ("batch=4 warmup=false memory-limit=22528",
      &bus);
  GstMessage *msg;
  GError *err = NULL;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 3);
  fail_unless_equals_int (gst_harness_push (h, make_frame (3, W, H, 3)),
      GST_FLOW_ERROR);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "Batch 0 failed") != NULL, "%s",
      err->message);
  fail_unless (strstr (err->message, "memory limit") != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (msg);
  harness_free (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_warmup_caps_in_a_format_it_cannot_take_fail_the_start)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  GstCaps *caps =
      gst_caps_from_string ("video/x-raw,format=Y444,width=32,height=24");

  g_object_set (e, "warmup-caps", caps, NULL);
  gst_caps_unref (caps);
  fail_unless_equals_int (expect_start_error (e, "warmup-caps"),
      GST_CORE_ERROR);
}

GST_END_TEST;

GST_START_TEST (test_flush_signal_without_a_stream_does_nothing)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);

  g_signal_emit_by_name (e, "flush");
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  g_signal_emit_by_name (e, "flush");
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_batch_timeout_still_works_after_a_flushing_seek)
{
  GstHarness *h = harness_new ("batch=16 batch-timeout=100000000", NULL);
  GstSegment segment;
  guint i;

  gst_harness_use_testclock (h);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  for (i = 0; i < 20; i++) {
    push_frames (h, 0, 2);
    fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
    fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
    fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  }
  fail_unless_equals_uint64 (stat_of (h, "frames-dropped"), 40);
  push_frames (h, 0, 3);
  fail_unless (gst_harness_crank_single_clock_wait (h));
  pull_frames (h, 0, 3);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_an_onnx_model_file_runs_with_warmup_and_padding)
{
  gchar *props = g_strdup_printf ("batch=4 model=%s/conv-relu.onnx",
      CBI_TEST_MODELS_DIR);
  GPtrArray *outs = run_frames (props, 10);
  guint i;

  for (i = 0; i < outs->len; i++)
    fail_unless_steady (g_ptr_array_index (outs, i));
  g_ptr_array_unref (outs);
  g_free (props);
}

GST_END_TEST;

/* The frame of tests/models/conv-relu.in.bin through conv-relu.onnx,
 * normalised and in BGR order, against generate.py's reference. */
GST_START_TEST (test_input_mean_std_and_bgr_order_match_the_reference)
{
  gchar *props = g_strdup_printf ("batch=2 model=%s/conv-relu.onnx "
      "input-mean=\"<0.5, 0.4, 0.3>\" input-std=\"<0.2, 0.25, 0.3>\" "
      "channel-order=bgr", CBI_TEST_MODELS_DIR);
  gchar *in_path = g_build_filename (CBI_TEST_MODELS_DIR,
      "conv-relu.in.bin", NULL);
  gchar *ref_path = g_build_filename (CBI_TEST_MODELS_DIR,
      "conv-relu.norm.out.bin", NULL);
  GstHarness *h = harness_new (props, NULL);
  gchar *in = NULL, *ref = NULL;
  gsize in_size = 0, ref_size = 0, i;
  GstBuffer *out;
  GstMapInfo map;

  fail_unless (g_file_get_contents (in_path, &in, &in_size, NULL));
  fail_unless (g_file_get_contents (ref_path, &ref, &ref_size, NULL));
  fail_unless_equals_uint64 (in_size, 8 * 6 * 3);
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=8,height=6,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (h,
          gst_buffer_new_wrapped (g_memdup2 (in, in_size), in_size)),
      GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  out = gst_harness_pull (h);
  gst_buffer_map (out, &map, GST_MAP_READ);
  fail_unless_equals_uint64 (map.size, ref_size);
  for (i = 0; i < ref_size; i++)
    fail_unless_near (map.data[i], (guint8) ref[i]);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  harness_free (h, NULL);
  g_free (in);
  g_free (ref);
  g_free (in_path);
  g_free (ref_path);
  g_free (props);
}

GST_END_TEST;

GST_START_TEST (test_an_input_std_of_zero_fails_the_start)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);

  gst_util_set_object_arg (G_OBJECT (e), "input-std", "<1.0, 0.0, 1.0>");
  fail_unless_equals_int (expect_start_error (e, "input-std"),
      GST_RESOURCE_ERROR);
}

GST_END_TEST;

GST_START_TEST (test_a_fixed_size_model_warms_up_on_ready_to_paused)
{
  gchar *props = g_strdup_printf ("batch=2 model=%s/conv-fixed.onnx",
      CBI_TEST_MODELS_DIR);
  GstBus *bus;
  GstHarness *h = harness_new (props, &bus);
  GstBuffer *out;

  /* no warmup-caps: the model's 8x6 was enough, inside harness_new */
  fail_unless_equals_int (count_messages (bus, "cudabatchinfer-warmup"), 1);
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=8,height=6,framerate=30/1");
  fail_unless_equals_int (count_messages (bus, "cudabatchinfer-warmup"), 0);
  fail_unless_equals_int (gst_harness_push (h, make_frame (0, 8, 6, 3)),
      GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  out = pull_frame (h, 0);
  fail_unless_steady (out);
  gst_buffer_unref (out);
  harness_free (h, bus);
  g_free (props);
}

GST_END_TEST;

GST_START_TEST (test_caps_of_another_size_than_a_fixed_model_are_refused)
{
  gchar *props = g_strdup_printf ("batch=2 model=%s/conv-fixed.onnx",
      CBI_TEST_MODELS_DIR);
  GstBus *bus;
  GstHarness *h = harness_new (props, &bus);
  GError *err = NULL;

  err = caps_refusal (h, bus);
  fail_unless (strstr (err->message, "cannot take 32x24 frames") != NULL,
      "%s", err->message);
  g_error_free (err);
  harness_free (h, bus);
  g_free (props);
}

GST_END_TEST;

/* a model exported for one frame (a Reshape to [1, -1]) would mix the
 * frames of a batch into one row: refused, saying what to do */
GST_START_TEST (test_a_model_that_fixes_its_batch_is_refused_saying_why)
{
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR,
      "reshape-fixed-batch.onnx", NULL);
  gchar *props = g_strdup_printf ("batch=2 model=%s", path);
  GstBus *bus;
  GstHarness *h = harness_new (props, &bus);
  GError *err = NULL;

  err = caps_refusal (h, bus);
  fail_unless (g_error_matches (err, GST_CORE_ERROR,
          GST_CORE_ERROR_NEGOTIATION), "%s", err->message);
  fail_unless (strstr (err->message, "output output does not grow with the "
          "batch (its first dimension is 1 for 2 frames): the model fixes "
          "its batch size") != NULL, "%s", err->message);
  g_error_free (err);
  harness_free (h, bus);
  g_free (props);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_a_bad_model_file_fails_the_start_with_the_reason)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR,
      "bad-unsupported-op.onnx", NULL);

  g_object_set (e, "model", path, NULL);
  fail_unless_equals_int (expect_start_error (e, "op Softplus is not "
          "supported"), GST_RESOURCE_ERROR);
  g_free (path);
}

GST_END_TEST;

GST_START_TEST (test_backend_cuda_without_gpu_fails_the_state_change)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);

  g_object_set (e, "backend", 2, NULL);
  fail_unless_equals_int (expect_start_error (e, "backend"), GST_LIBRARY_ERROR);
}

GST_END_TEST;

static void
catch_fallback_warning (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (level == GST_LEVEL_WARNING
      && g_str_has_prefix (gst_debug_message_get (message),
          "running on the CPU: ")
      && strlen (gst_debug_message_get (message)) >
      strlen ("running on the CPU: "))
    *(gboolean *) user_data = TRUE;
}

GST_START_TEST (test_backend_auto_falls_back_to_the_cpu_with_a_warning)
{
  gboolean warned = FALSE;
  GPtrArray *outs;

  gst_debug_set_active (TRUE);
  gst_debug_set_threshold_for_name ("cudabatchinfer", GST_LEVEL_WARNING);
  gst_debug_add_log_function (catch_fallback_warning, &warned, NULL);
  outs = run_frames ("batch=2 backend=auto", 2);
  gst_debug_remove_log_function (catch_fallback_warning);
  fail_unless (warned, "no warning about the CPU fallback");
  fail_unless_equals_string (meta_of (g_ptr_array_index (outs, 0))->backend,
      "cpu");
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_backend_auto_runs_on_cuda_where_a_device_is_usable)
{
  GPtrArray *outs = run_frames ("batch=2 backend=auto", 2);

  fail_unless_equals_string (meta_of (g_ptr_array_index (outs, 0))->backend,
      "cuda");
  g_ptr_array_unref (outs);
}

GST_END_TEST;

GST_START_TEST (test_repeated_state_changes_do_not_leak_or_hang)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  guint i;

  g_object_set (e, "batch", 2, NULL);
  for (i = 0; i < 5; i++) {
    fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PLAYING),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_stop_in_the_middle_of_a_batch_drops_cleanly)
{
  GstHarness *h = harness_new ("batch=16 batch-timeout=1000000000", NULL);

  gst_harness_use_testclock (h);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 9);
  fail_unless_equals_int (gst_element_set_state (h->element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  /* and it starts again */
  fail_unless_equals_int (gst_element_set_state (h->element,
          GST_STATE_PLAYING), GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_uint64 (stat_of (h, "frames-in"), 0);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_batches_in_flight_give_the_same_frames_in_order)
{
  GPtrArray *ref = run_frames ("batch=4 max-inflight=1", 30);
  GPtrArray *outs = run_frames ("batch=4 max-inflight=4", 30);
  guint i;

  /* run_frames checked order and timestamps; the pixels are the same */
  for (i = 0; i < ref->len; i++) {
    assert_same_pixels (g_ptr_array_index (outs, i),
        g_ptr_array_index (ref, i), i);
    fail_unless_equals_uint64 (meta_of (g_ptr_array_index (outs,
                i))->batch_index, i / 4);
  }
  g_ptr_array_unref (ref);
  g_ptr_array_unref (outs);
}

GST_END_TEST;

/* Holds the element's pushes downstream until released, to keep batches
 * in flight. */
typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean blocked;
  GstPad *pad;
  gulong probe;
} Blocker;

static GstPadProbeReturn
blocker_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Blocker *b = data;

  g_mutex_lock (&b->lock);
  b->blocked = TRUE;
  g_cond_broadcast (&b->cond);
  g_mutex_unlock (&b->lock);
  return GST_PAD_PROBE_OK;
}

static void
blocker_start (Blocker * b, GstHarness * h)
{
  g_mutex_init (&b->lock);
  g_cond_init (&b->cond);
  b->blocked = FALSE;
  b->pad = gst_element_get_static_pad (h->element, "src");
  b->probe = gst_pad_add_probe (b->pad, GST_PAD_PROBE_TYPE_BLOCK |
      GST_PAD_PROBE_TYPE_BUFFER, blocker_probe, b, NULL);
}

static void
blocker_wait (Blocker * b)
{
  g_mutex_lock (&b->lock);
  while (!b->blocked)
    g_cond_wait (&b->cond, &b->lock);
  g_mutex_unlock (&b->lock);
}

static void
blocker_release (Blocker * b)
{
  gst_pad_remove_probe (b->pad, b->probe);
  gst_object_unref (b->pad);
  g_mutex_clear (&b->lock);
  g_cond_clear (&b->cond);
}

/* Batch=4, max-inflight=2: puts frames 0-7 in flight as two batches, the
 * push of the first held by @b. */
static void
hold_two_batches (GstHarness * h, Blocker * b)
{
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  blocker_start (b, h);
  push_frames (h, 0, 4);
  blocker_wait (b);
  /* a second batch joins the first, whose push is held */
  push_frames (h, 4, 4);
}

static gpointer
push_frames_thread (gpointer data)
{
  GstHarness *h = data;

  push_frames (h, 2, 2);
  return NULL;
}

GST_START_TEST (test_max_inflight_batches_hold_the_streaming_thread_back)
{
  GstHarness *h = harness_new ("batch=2 max-inflight=1", NULL);
  GThread *pusher;
  Blocker b;

  gst_harness_set_src_caps_str (h, CAPS_RGB);
  blocker_start (&b, h);
  push_frames (h, 0, 2);
  blocker_wait (&b);
  /* the one batch allowed is being pushed: the next waits for its place */
  pusher = g_thread_new ("pusher", push_frames_thread, h);
  g_usleep (G_USEC_PER_SEC / 10);
  fail_unless_equals_uint64 (stat_of (h, "batches"), 1);
  blocker_release (&b);
  g_thread_join (pusher);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  pull_frames (h, 0, 4);
  fail_unless_equals_uint64 (stat_of (h, "batches"), 2);
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 4);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_flushing_seek_drops_batches_in_flight_and_counts_them)
{
  GstHarness *h = harness_new ("batch=4 max-inflight=2", NULL);
  GstSegment segment;
  Blocker b;

  hold_two_batches (h, &b);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  blocker_release (&b);
  /* every frame of both batches is accounted for: none came out */
  fail_unless_equals_uint64 (stat_of (h, "frames-dropped"), 8);
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 0);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  push_frames (h, 0, 6);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  pull_frames (h, 0, 6);
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 6);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_stop_with_batches_in_flight_drops_them_cleanly)
{
  GstHarness *h = harness_new ("batch=4 max-inflight=2", NULL);
  Blocker b;

  hold_two_batches (h, &b);
  fail_unless_equals_int (gst_element_set_state (h->element,
          GST_STATE_READY), GST_STATE_CHANGE_SUCCESS);
  blocker_release (&b);
  fail_unless_equals_uint64 (stat_of (h, "frames-dropped"), 8);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  /* and it starts again */
  fail_unless_equals_int (gst_element_set_state (h->element,
          GST_STATE_PLAYING), GST_STATE_CHANGE_SUCCESS);
  harness_free (h, NULL);
}

GST_END_TEST;

/* A flushing seek made by the application as it reads the first batch's
 * message, in a sync handler: it arrives from the src pad task itself,
 * which was about to push that batch. */
typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  GstPad *sinkpad;
} ReentrantFlush;

static GstBusSyncReply
flush_on_first_batch (GstBus * bus, GstMessage * msg, gpointer data)
{
  ReentrantFlush *f = data;

  if (!gst_message_has_name (msg, "cudabatchinfer-batch") || f->done)
    return GST_BUS_PASS;
  fail_unless (gst_pad_send_event (f->sinkpad, gst_event_new_flush_start ()));
  fail_unless (gst_pad_send_event (f->sinkpad,
          gst_event_new_flush_stop (TRUE)));
  g_mutex_lock (&f->lock);
  f->done = TRUE;
  g_cond_broadcast (&f->cond);
  g_mutex_unlock (&f->lock);
  return GST_BUS_PASS;
}

GST_START_TEST (test_a_flush_from_the_push_task_drops_its_batch_once)
{
  GstBus *bus;
  GstHarness *h = harness_new ("batch=2 max-inflight=2 post-messages=true",
      &bus);
  ReentrantFlush f;
  GstSegment segment;

  g_mutex_init (&f.lock);
  g_cond_init (&f.cond);
  f.done = FALSE;
  f.sinkpad = gst_element_get_static_pad (h->element, "sink");
  gst_bus_set_sync_handler (bus, flush_on_first_batch, &f, NULL);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  push_frames (h, 0, 2);
  g_mutex_lock (&f.lock);
  while (!f.done)
    g_cond_wait (&f.cond, &f.lock);
  g_mutex_unlock (&f.lock);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  push_frames (h, 2, 4);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  pull_frames (h, 2, 6);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  fail_unless_equals_uint64 (stat_of (h, "frames-in"), 6);
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 4);
  fail_unless_equals_uint64 (stat_of (h, "frames-dropped"), 2);
  gst_object_unref (f.sinkpad);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  harness_free (h, bus);
  g_mutex_clear (&f.lock);
  g_cond_clear (&f.cond);
}

GST_END_TEST;

static GstPadProbeReturn
refuse_as_not_linked (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  gst_buffer_unref (GST_PAD_PROBE_INFO_BUFFER (info));
  GST_PAD_PROBE_INFO_FLOW_RETURN (info) = GST_FLOW_NOT_LINKED;
  return GST_PAD_PROBE_HANDLED;
}

GST_START_TEST (test_a_refused_push_is_returned_upstream_and_drops_the_rest)
{
  GstHarness *h = harness_new ("batch=2 max-inflight=2", NULL);
  GstPad *src = gst_element_get_static_pad (h->element, "src");
  GstQuery *drain = gst_query_new_drain ();
  guint i;

  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, refuse_as_not_linked,
      NULL, NULL);
  gst_harness_set_src_caps_str (h, CAPS_RGB);
  /* the refusal reaches upstream with one of the next frames, however far
   * the push task has come */
  for (i = 0; i < 6; i++) {
    GstFlowReturn ret = gst_harness_push (h, make_frame (i, W, H, 3));
    fail_unless (ret == GST_FLOW_OK || ret == GST_FLOW_NOT_LINKED);
  }
  fail_unless (gst_pad_peer_query (h->srcpad, drain));
  gst_query_unref (drain);
  fail_unless_equals_int (gst_harness_push (h, make_frame (6, W, H, 3)),
      GST_FLOW_NOT_LINKED);
  /* nothing came out, and every frame is accounted for */
  fail_unless_equals_uint64 (stat_of (h, "frames-out"), 0);
  fail_unless_equals_uint64 (stat_of (h, "frames-in"), 7);
  fail_unless_equals_uint64 (stat_of (h, "frames-dropped"), 7);
  gst_object_unref (src);
  harness_free (h, NULL);
}

GST_END_TEST;

GST_START_TEST (test_plugin_loads_without_a_gpu)
{
  GstElementFactory *f = gst_element_factory_find ("cudabatchinfer");
  GstPlugin *p;

  fail_unless (f != NULL);
  p = gst_plugin_feature_get_plugin (GST_PLUGIN_FEATURE (f));
  fail_unless_equals_string (gst_plugin_get_name (p), "cudabatchinfer");
  gst_object_unref (p);
  gst_object_unref (f);
}

GST_END_TEST;

static Suite *
cudabatchinfer_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_plugin_loads_without_a_gpu);
  tcase_add_test (tc, test_batch1_outputs_each_frame_with_its_timestamps);
  tcase_add_test (tc, test_120_frames_at_batch16_give_120_outputs_in_8_batches);
  tcase_add_test (tc, test_fewer_frames_than_batch_come_out_at_eos);
  tcase_add_test (tc, test_eos_with_nothing_pending_pushes_only_eos);
  tcase_add_test (tc, test_repeat_last_padding_never_changes_real_results);
  tcase_add_test (tc, test_zero_padding_never_changes_real_results);
  tcase_add_test (tc, test_no_padding_gives_the_same_real_results);
  tcase_add_test (tc, test_output_is_a_sketch_of_the_input);
  tcase_add_test (tc, test_alpha_passes_through_untouched);
  tcase_add_test (tc, test_meta_fields_are_consistent);
  tcase_add_test (tc, test_meta_is_copied_with_the_buffer);
  tcase_add_test (tc, test_output_buffers_are_recycled_once_downstream_lets_go);
  tcase_add_test (tc,
      test_warmup_and_padding_leave_every_batch_without_fresh_memory);
  tcase_add_test (tc,
      test_without_warmup_the_first_batch_replans_and_allocates);
  tcase_add_test (tc, test_without_padding_the_last_batch_replans);
  tcase_add_test (tc, test_batch_timeout_pushes_a_partial_batch_on_the_clock);
  tcase_add_test (tc, test_batch_timeout_counts_from_a_late_frame_running_time);
  tcase_add_test (tc,
      test_a_frame_past_its_deadline_waits_a_frame_for_the_ones_behind);
  tcase_add_test (tc, test_drain_query_pushes_pending_frames);
  tcase_add_test (tc, test_flush_signal_pushes_the_partial_batch);
  tcase_add_test (tc, test_caps_change_drains_then_warms_up_for_the_new_size);
  tcase_add_test (tc, test_flushing_seek_drops_pending_frames_and_counts_them);
  tcase_add_test (tc, test_stats_count_frames_batches_and_padding);
  tcase_add_test (tc, test_latency_adds_batching_and_a_slow_warmup_batch_time);
  tcase_add_test (tc, test_warmup_caps_warm_up_on_ready_to_paused);
  tcase_add_test (tc, test_warmup_message_and_stats_name_the_backend_and_why);
  tcase_add_test (tc, test_threads_property_sets_the_cpu_compute_threads);
  tcase_add_test (tc, test_a_set_thread_count_stays_and_0_starts_on_the_team);
  tcase_add_test (tc,
      test_matching_caps_after_warmup_caps_do_not_warm_up_again);
  tcase_add_test (tc, test_formats_it_cannot_take_are_not_negotiated);
  tcase_add_test (tc, test_a_bad_video_meta_is_a_stream_error_not_a_critical);
  tcase_add_test (tc, test_batch_cannot_change_while_playing);
  tcase_add_test (tc, test_memory_limit_fails_warmup_with_an_error_naming_it);
  tcase_add_test (tc, test_refused_caps_post_one_error_and_fail_at_once_after);
  tcase_add_test (tc,
      test_memory_limit_counts_the_output_buffers_before_they_exist);
  tcase_add_test (tc,
      test_output_buffer_bytes_count_only_buffers_the_limit_let_in);
  tcase_add_test (tc, test_failed_allocation_in_a_batch_is_a_flow_error);
  tcase_add_test (tc, test_an_onnx_model_file_runs_with_warmup_and_padding);
  tcase_add_test (tc, test_a_bad_model_file_fails_the_start_with_the_reason);
  tcase_add_test (tc, test_a_fixed_size_model_warms_up_on_ready_to_paused);
  tcase_add_test (tc, test_caps_of_another_size_than_a_fixed_model_are_refused);
  tcase_add_test (tc, test_a_model_that_fixes_its_batch_is_refused_saying_why);
  tcase_add_test (tc, test_input_mean_std_and_bgr_order_match_the_reference);
  tcase_add_test (tc, test_an_input_std_of_zero_fails_the_start);
  tcase_add_test (tc,
      test_warmup_caps_in_a_format_it_cannot_take_fail_the_start);
  tcase_add_test (tc, test_flush_signal_without_a_stream_does_nothing);
  tcase_add_test (tc, test_batch_timeout_still_works_after_a_flushing_seek);
  if (cbi_test_have_cuda ("the element's tests on a GPU")) {
    auto_backend = "cuda";
    tcase_add_test (tc,
        test_backend_auto_runs_on_cuda_where_a_device_is_usable);
  } else {
    tcase_add_test (tc, test_backend_cuda_without_gpu_fails_the_state_change);
    tcase_add_test (tc, test_backend_auto_falls_back_to_the_cpu_with_a_warning);
  }
  tcase_add_test (tc, test_repeated_state_changes_do_not_leak_or_hang);
  tcase_add_test (tc, test_stop_in_the_middle_of_a_batch_drops_cleanly);
  tcase_add_test (tc, test_batches_in_flight_give_the_same_frames_in_order);
  tcase_add_test (tc, test_max_inflight_batches_hold_the_streaming_thread_back);
  tcase_add_test (tc,
      test_flushing_seek_drops_batches_in_flight_and_counts_them);
  tcase_add_test (tc, test_stop_with_batches_in_flight_drops_them_cleanly);
  tcase_add_test (tc, test_a_flush_from_the_push_task_drops_its_batch_once);
  tcase_add_test (tc,
      test_a_refused_push_is_returned_upstream_and_drops_the_rest);
  return s;
}

GST_CHECK_MAIN (cudabatchinfer);
