/* GStreamer cudabatchinfer: batcher unit tests
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "gstcbibatcher.h"

GST_START_TEST (test_batcher_reports_full_at_capacity)
{
  GstCbiBatcher b;

  gst_cbi_batcher_init (&b, 3);
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

  gst_cbi_batcher_init (&b, 4);
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

  gst_cbi_batcher_init (&b, 1);
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

  gst_cbi_batcher_init (&b, 5);
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
  fail_unless_equals_int (gst_cbi_batcher_take (&b, &frames, &tags), 2);
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
  return s;
}

GST_CHECK_MAIN (batcher);
