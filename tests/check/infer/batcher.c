/* GStreamer cudabatchinfer: batcher unit tests
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "gstcbibatcher.h"

GST_START_TEST (test_batcher_reports_full_at_capacity)
{
  GstCbiBatcher b;

  gst_cbi_batcher_init (&b, 3, 3);
  fail_if (gst_cbi_batcher_push (&b, gst_buffer_new (), NULL));
  fail_if (gst_cbi_batcher_push (&b, gst_buffer_new (), NULL));
  fail_unless (gst_cbi_batcher_push (&b, gst_buffer_new (), NULL));
  fail_unless_equals_int (b.count, 3);
  gst_cbi_batcher_clear (&b);
}

GST_END_TEST;

GST_START_TEST (test_batcher_drop_unrefs_and_counts)
{
  GstCbiBatcher b;
  GstBuffer *buf = gst_buffer_new ();

  gst_cbi_batcher_init (&b, 4, 4);
  gst_cbi_batcher_push (&b, gst_buffer_ref (buf), NULL);
  gst_cbi_batcher_push (&b, gst_buffer_new (), NULL);
  ASSERT_MINI_OBJECT_REFCOUNT (buf, "buf", 2);
  fail_unless_equals_int (gst_cbi_batcher_drop (&b), 2);
  fail_unless_equals_int (b.count, 0);
  ASSERT_MINI_OBJECT_REFCOUNT (buf, "buf", 1);
  fail_unless_equals_int (gst_cbi_batcher_drop (&b), 0);
  /* reusable after a drop */
  fail_if (gst_cbi_batcher_push (&b, buf, NULL));
  gst_cbi_batcher_clear (&b);
  fail_unless (b.frames == NULL);
}

GST_END_TEST;

static void
note_freed (gpointer data, GstMiniObject * where_it_was)
{
  *(gboolean *) data = TRUE;
}

GST_START_TEST (test_batcher_push_past_capacity_unrefs_the_buffer)
{
  GstCbiBatcher b;
  GstBuffer *extra = gst_buffer_new ();
  gboolean freed = FALSE;

  gst_cbi_batcher_init (&b, 1, 1);
  fail_unless (gst_cbi_batcher_push (&b, gst_buffer_new (), NULL));
  gst_mini_object_weak_ref (GST_MINI_OBJECT_CAST (extra), note_freed, &freed);
  /* a caller's mistake, reported as one; the buffer was given away all
   * the same (kept alive, the leaks tracer fails the test too) */
  ASSERT_CRITICAL (gst_cbi_batcher_push (&b, extra, NULL));
  fail_unless (freed, "the buffer refused past capacity is still alive");
  fail_unless_equals_int (b.count, 1);
  gst_cbi_batcher_clear (&b);
}

GST_END_TEST;

GST_START_TEST (test_batcher_drops_one_stream_and_keeps_the_others_in_order)
{
  GstCbiFrameTag a = { &a, 1, 0 }, b_tag = { &b_tag, 7, 3 };
  GstBuffer *keep[2] = { gst_buffer_new (), gst_buffer_new () };
  GstBuffer **frames;
  GstCbiFrameTag *tags;
  GstCbiBatcher b;

  gst_cbi_batcher_init (&b, 5, 5);
  frames = g_new0 (GstBuffer *, 5);
  tags = g_new0 (GstCbiFrameTag, 5);
  gst_cbi_batcher_push (&b, gst_buffer_new (), &a);
  gst_cbi_batcher_push (&b, gst_buffer_ref (keep[0]), &b_tag);
  gst_cbi_batcher_push (&b, gst_buffer_new (), &a);
  gst_cbi_batcher_push (&b, gst_buffer_ref (keep[1]), NULL);
  fail_unless (gst_cbi_batcher_has_stream (&b, &a));
  fail_unless_equals_int (gst_cbi_batcher_drop_stream (&b, &a), 2);
  fail_if (gst_cbi_batcher_has_stream (&b, &a));
  fail_unless (gst_cbi_batcher_has_stream (&b, &b_tag));
  fail_unless_equals_int (gst_cbi_batcher_take (&b, frames, tags, 5), 2);
  fail_unless (frames[0] == keep[0] && frames[1] == keep[1]);
  fail_unless (tags[0].stream == &b_tag && tags[0].serial == 7);
  fail_unless_equals_int (tags[0].index, 3);
  fail_unless (tags[1].stream == NULL);
  fail_unless_equals_int (tags[1].index, -1);
  fail_unless_equals_int (b.count, 0);
  gst_buffer_unref (frames[0]);
  gst_buffer_unref (frames[1]);
  ASSERT_MINI_OBJECT_REFCOUNT (keep[0], "keep", 1);
  gst_buffer_unref (keep[0]);
  gst_buffer_unref (keep[1]);
  g_free (frames);
  g_free (tags);
  gst_cbi_batcher_clear (&b);
}

GST_END_TEST;

/* Frames of stream @s (a tag's pointer) to infer (@skip FALSE) or not. */
static void
push_tagged (GstCbiBatcher * b, gpointer s, gboolean skip, GstClockTime t)
{
  GstCbiFrameTag tag = { s, 1, 0, t, skip };

  gst_cbi_batcher_push (b, gst_buffer_new (), &tag);
}

GST_START_TEST (test_batcher_is_ready_at_batch_frames_to_infer_or_capacity)
{
  GstCbiBatcher b;
  guint i;
  gint a;

  gst_cbi_batcher_init (&b, 2, 5);
  push_tagged (&b, &a, FALSE, 0);
  push_tagged (&b, &a, TRUE, 1);
  push_tagged (&b, &a, TRUE, 2);
  /* skipped frames take no slot */
  fail_if (gst_cbi_batcher_ready (&b));
  fail_unless_equals_int (b.inferred, 1);
  push_tagged (&b, &a, FALSE, 3);
  fail_unless (gst_cbi_batcher_ready (&b));
  gst_cbi_batcher_drop (&b);
  fail_unless_equals_int (b.inferred, 0);
  /* five frames that all skip fill it too */
  for (i = 0; i < 5; i++)
    push_tagged (&b, &a, TRUE, i);
  fail_unless (gst_cbi_batcher_ready (&b));
  gst_cbi_batcher_clear (&b);
}

GST_END_TEST;

GST_START_TEST (test_batcher_take_moves_one_batch_and_its_trailing_skips)
{
  GstBuffer *frames[8];
  GstCbiFrameTag tags[8];
  GstCbiBatcher b;
  guint i, n;
  gint a;

  gst_cbi_batcher_init (&b, 2, 8);
  /* I S I S S I S: a batch of 2 takes the first five */
  push_tagged (&b, &a, FALSE, 0);
  push_tagged (&b, &a, TRUE, 1);
  push_tagged (&b, &a, FALSE, 2);
  push_tagged (&b, &a, TRUE, 3);
  push_tagged (&b, &a, TRUE, 4);
  push_tagged (&b, &a, FALSE, 5);
  push_tagged (&b, &a, TRUE, 6);
  n = gst_cbi_batcher_take (&b, frames, tags, 8);
  fail_unless_equals_int (n, 5);
  for (i = 0; i < n; i++)
    fail_unless_equals_uint64 (tags[i].running, i);
  fail_unless_equals_int (b.count, 2);
  fail_unless_equals_int (b.inferred, 1);
  fail_unless_equals_uint64 (b.tags[0].running, 5);
  fail_unless (b.frames[2] == NULL);
  for (i = 0; i < n; i++)
    gst_buffer_unref (frames[i]);
  /* @max cuts a batch short */
  push_tagged (&b, &a, FALSE, 7);
  n = gst_cbi_batcher_take (&b, frames, tags, 1);
  fail_unless_equals_int (n, 1);
  fail_unless_equals_uint64 (tags[0].running, 5);
  gst_buffer_unref (frames[0]);
  gst_cbi_batcher_clear (&b);
}

GST_END_TEST;

GST_START_TEST (test_batcher_remove_lets_the_next_skipped_frame_be_inferred)
{
  GstCbiFrameTag tag;
  GstCbiBatcher b;
  GstBuffer *out;
  gint a, c;

  gst_cbi_batcher_init (&b, 4, 8);
  push_tagged (&b, &a, FALSE, 0);
  push_tagged (&b, &c, FALSE, 1);
  push_tagged (&b, &a, TRUE, 2);
  push_tagged (&b, &a, TRUE, 3);
  fail_unless_equals_int (gst_cbi_batcher_oldest (&b, &a, 1), 0);
  fail_unless_equals_int (gst_cbi_batcher_oldest (&b, &c, 1), 1);
  out = gst_cbi_batcher_remove (&b, 0, &tag);
  fail_unless (out != NULL && tag.running == 0 && !tag.skip);
  gst_buffer_unref (out);
  /* a's next frame takes the inference it lost, not the one after */
  fail_unless_equals_int (b.count, 3);
  fail_unless_equals_int (b.inferred, 2);
  fail_if (b.tags[1].skip);
  fail_unless (b.tags[2].skip);
  /* removing a skipped frame changes nothing else */
  out = gst_cbi_batcher_remove (&b, 2, &tag);
  fail_unless (tag.skip);
  gst_buffer_unref (out);
  fail_unless_equals_int (b.inferred, 2);
  fail_unless_equals_int (gst_cbi_batcher_oldest (&b, &a, 1), 1);
  fail_unless_equals_int (gst_cbi_batcher_oldest (&b, NULL, 0), -1);
  /* another stream at the same address (a released one's frames still
   * waiting) is told apart by its serial */
  fail_unless_equals_int (gst_cbi_batcher_oldest (&b, &a, 2), -1);
  gst_cbi_batcher_clear (&b);
}

GST_END_TEST;

static Suite *
batcher_suite (void)
{
  Suite *s = suite_create ("cbibatcher");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_batcher_reports_full_at_capacity);
  tcase_add_test (tc, test_batcher_drop_unrefs_and_counts);
  tcase_add_test (tc, test_batcher_push_past_capacity_unrefs_the_buffer);
  tcase_add_test (tc,
      test_batcher_drops_one_stream_and_keeps_the_others_in_order);
  tcase_add_test (tc,
      test_batcher_is_ready_at_batch_frames_to_infer_or_capacity);
  tcase_add_test (tc, test_batcher_take_moves_one_batch_and_its_trailing_skips);
  tcase_add_test (tc,
      test_batcher_remove_lets_the_next_skipped_frame_be_inferred);
  return s;
}

GST_CHECK_MAIN (batcher);
