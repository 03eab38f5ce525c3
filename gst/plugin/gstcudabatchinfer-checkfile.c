/* GStreamer cudabatchinfer: the frames the warm-up's accuracy check runs
 * on, decoded from a file (precision-check-location)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pipeline of its own, filesrc ! decodebin ! videoconvert ! videoscale
 * ! capsfilter ! fakesink, gives the first frames of an image or a video
 * in the format and size of the frames the warm-up plans for. It runs at
 * the warm-up only, before the first batch, and is gone when the warm-up
 * ends: nothing of it stays for the batches after.
 */
#include "gstcudabatchinfer-checkfile.h"

#include <string.h>

/* the pipeline gives up when the next frame takes this long (a decoder
 * that hangs); the frames it gave by then are used */
#define CHECK_FILE_TIMEOUT (30 * GST_SECOND)

typedef struct
{
  GMutex lock;
  GstVideoInfo info;
  guint max;
  GPtrArray *frames;            /* copies, rows packed */
  gboolean out_of_memory;
  gboolean video;               /* decodebin exposed a video stream */
} CheckFile;

/* One frame: a copy, so that no decoder's pool waits for its buffers
 * back; a message on the bus for each, which the waiting thread counts
 * its timeout from, and one more once there are enough. */
static void
check_file_handoff (GstElement * sink, GstBuffer * buffer, GstPad * pad,
    gpointer user_data)
{
  CheckFile *c = user_data;
  const gsize row = (gsize) GST_VIDEO_INFO_WIDTH (&c->info)
      * GST_VIDEO_INFO_COMP_PSTRIDE (&c->info, 0);
  const guint height = GST_VIDEO_INFO_HEIGHT (&c->info);
  GstVideoFrame frame;
  gboolean taken = FALSE, full;
  guint8 *copy = NULL;
  guint y;

  g_mutex_lock (&c->lock);
  if (c->frames->len < c->max && !c->out_of_memory
      && gst_video_frame_map (&frame, &c->info, buffer, GST_MAP_READ)) {
    copy = g_try_malloc (row * height);
    for (y = 0; copy && y < height; y++)
      memcpy (copy + y * row, (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
          (&frame, 0) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
          row);
    gst_video_frame_unmap (&frame);
    if (copy)
      g_ptr_array_add (c->frames, copy);
    c->out_of_memory = copy == NULL;
    taken = TRUE;
  }
  full = c->frames->len == c->max || c->out_of_memory;
  g_mutex_unlock (&c->lock);
  if (taken)
    gst_element_post_message (sink, gst_message_new_application
        (GST_OBJECT (sink), gst_structure_new ("check-frame", "enough",
                G_TYPE_BOOLEAN, full, NULL)));
}

static void
check_file_pad_added (GstElement * decodebin, GstPad * pad, gpointer user_data)
{
  CheckFile *c = user_data;
  GstCaps *caps = gst_pad_get_current_caps (pad);

  if (caps == NULL)
    caps = gst_pad_query_caps (pad, NULL);
  g_mutex_lock (&c->lock);
  c->video = c->video || (!gst_caps_is_empty (caps)
      && g_str_has_prefix (gst_structure_get_name (gst_caps_get_structure
              (caps, 0)), "video/"));
  g_mutex_unlock (&c->lock);
  gst_caps_unref (caps);
}

/* Runs @pipeline until @c has its frames, the stream ends, fails, or the
 * next frame takes too long. Returns the error message (transfer full),
 * or %NULL. */
static GstMessage *
check_file_run (GstElement * pipeline, GstBus * bus, gboolean * timed_out)
{
  GstMessage *msg = NULL;
  gboolean done = FALSE;

  *timed_out = FALSE;
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    return gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  while (!done) {
    msg = gst_bus_timed_pop_filtered (bus, CHECK_FILE_TIMEOUT,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_APPLICATION);
    if (msg == NULL) {
      *timed_out = TRUE;
      break;
    }
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
      break;
    done = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_APPLICATION)
      gst_structure_get_boolean (gst_message_get_structure (msg), "enough",
          &done);
    g_clear_pointer (&msg, gst_message_unref);
  }
  return msg;
}

GPtrArray *
gst_cuda_batch_infer_decode_check_file (const gchar * location,
    const GstVideoInfo * info, guint max, GError ** error)
{
  CheckFile c = { 0, };
  GstElement *pipeline, *src, *dec, *filter, *sink;
  GstCaps *caps;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  gboolean timed_out;

  /* a device or a pipe never ends, and may block the pipeline's start */
  if (!g_file_test (location, G_FILE_TEST_IS_REGULAR)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "%s is not a file", location);
    return NULL;
  }
  pipeline = gst_parse_launch_full ("filesrc name=src ! decodebin name=dec "
      "! videoconvert ! videoscale ! capsfilter name=filter "
      "! fakesink name=sink signal-handoffs=true sync=false", NULL,
      GST_PARSE_FLAG_FATAL_ERRORS, &err);
  if (pipeline == NULL) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN,
        "cannot decode the check frames: %s (decodebin, videoconvert and "
        "videoscale are in gst-plugins-base)", err->message);
    g_clear_error (&err);
    return NULL;
  }
  g_mutex_init (&c.lock);
  c.info = *info;
  c.max = max;
  c.frames = g_ptr_array_new_with_free_func (g_free);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  dec = gst_bin_get_by_name (GST_BIN (pipeline), "dec");
  filter = gst_bin_get_by_name (GST_BIN (pipeline), "filter");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_object_set (src, "location", location, NULL);
  /* the format and size of the frames the warm-up plans for: any rate,
   * any pixel aspect (the picture is stretched to the size) */
  caps = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)), "width",
      G_TYPE_INT, GST_VIDEO_INFO_WIDTH (info), "height", G_TYPE_INT,
      GST_VIDEO_INFO_HEIGHT (info), NULL);
  g_object_set (filter, "caps", caps, NULL);
  gst_caps_unref (caps);
  g_signal_connect (sink, "handoff", G_CALLBACK (check_file_handoff), &c);
  g_signal_connect (dec, "pad-added", G_CALLBACK (check_file_pad_added), &c);

  bus = gst_element_get_bus (pipeline);
  msg = check_file_run (pipeline, bus, &timed_out);
  gst_element_set_state (pipeline, GST_STATE_NULL);

  /* the streaming threads are gone: the frames are this thread's; a
   * failure after the first frames leaves those */
  if (c.out_of_memory) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT,
        "could not allocate the check frames of %s (%u of %u)", location,
        c.frames->len + 1, max);
  } else if (c.frames->len > 0) {
    if (msg || timed_out)
      GST_INFO ("%s: %u check frames, then %s", location, c.frames->len,
          timed_out ? "a timeout" : "an error");
  } else if (msg != NULL) {
    gst_message_parse_error (msg, &err, &debug);
    if (!c.video)
      g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE,
          "%s has no video stream (%s)", location, err->message);
    else
      g_set_error (error, err->domain, err->code, "cannot decode the check "
          "frames from %s: %s (%s)", location, err->message,
          debug ? debug : "no details");
    g_clear_error (&err);
    g_free (debug);
  } else if (timed_out) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
        "%s gave no frame for %" GST_TIME_FORMAT, location,
        GST_TIME_ARGS (CHECK_FILE_TIMEOUT));
  } else {
    g_set_error (error, GST_STREAM_ERROR, c.video ? GST_STREAM_ERROR_FAILED :
        GST_STREAM_ERROR_WRONG_TYPE, c.video ? "%s ended before its first "
        "frame" : "%s has no video stream", location);
  }
  if (c.out_of_memory || c.frames->len == 0)
    g_clear_pointer (&c.frames, g_ptr_array_unref);
  g_clear_pointer (&msg, gst_message_unref);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (dec);
  gst_object_unref (filter);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_mutex_clear (&c.lock);
  return c.frames;
}
