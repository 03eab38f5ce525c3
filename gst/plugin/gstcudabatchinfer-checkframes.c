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
#include "gstcudabatchinfer-private.h"

#include <string.h>

/* the pipeline ends once it has given this many frames, and gives up
 * after this long without the next one (a source that never ends, or a
 * decoder that hangs) */
#define CHECK_FRAMES_TIMEOUT (30 * GST_SECOND)

typedef struct
{
  GMutex lock;
  GstElement *sink;
  GstVideoInfo info;
  guint max;
  GPtrArray *frames;            /* copies, rows packed */
} CheckFrames;

static void
check_frames_handoff (GstElement * sink, GstBuffer * buffer, GstPad * pad,
    gpointer user_data)
{
  CheckFrames *c = user_data;
  const gsize row = (gsize) GST_VIDEO_INFO_WIDTH (&c->info)
      * GST_VIDEO_INFO_COMP_PSTRIDE (&c->info, 0);
  const guint height = GST_VIDEO_INFO_HEIGHT (&c->info);
  GstVideoFrame frame;
  gboolean full = FALSE;
  guint8 *copy;
  guint y;

  g_mutex_lock (&c->lock);
  /* a copy, so that no decoder's pool waits for its buffers back */
  if (c->frames->len < c->max
      && gst_video_frame_map (&frame, &c->info, buffer, GST_MAP_READ)) {
    copy = g_malloc (row * height);
    for (y = 0; y < height; y++)
      memcpy (copy + y * row, (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
          (&frame, 0) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
          row);
    gst_video_frame_unmap (&frame);
    g_ptr_array_add (c->frames, copy);
    full = c->frames->len == c->max;
  }
  g_mutex_unlock (&c->lock);
  /* enough: the bus tells the waiting thread */
  if (full)
    gst_element_post_message (sink, gst_message_new_application
        (GST_OBJECT (sink), gst_structure_new_empty ("check-frames-done")));
}

GPtrArray *
gst_cuda_batch_infer_decode_check_frames (const gchar * location,
    const GstVideoInfo * info, guint max, GError ** error)
{
  CheckFrames c = { 0, };
  GstElement *pipeline, *src, *filter;
  GstCaps *caps;
  GstBus *bus;
  GstMessage *msg = NULL;
  GError *err = NULL;
  gboolean done = FALSE;

  pipeline = gst_parse_launch ("filesrc name=src ! decodebin ! videoconvert "
      "! videoscale ! capsfilter name=filter ! fakesink name=sink "
      "signal-handoffs=true sync=false", &err);
  if (pipeline == NULL) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN,
        "cannot decode the check frames: %s (decodebin, videoconvert and "
        "videoscale are in gst-plugins-base)", err->message);
    g_clear_error (&err);
    return NULL;
  }
  g_clear_error (&err);
  g_mutex_init (&c.lock);
  c.info = *info;
  c.max = max;
  c.frames = g_ptr_array_new_with_free_func (g_free);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  filter = gst_bin_get_by_name (GST_BIN (pipeline), "filter");
  c.sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_object_set (src, "location", location, NULL);
  /* the format and size of the frames the warm-up plans for: any rate,
   * any pixel aspect (the picture is stretched to the size) */
  caps = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)), "width",
      G_TYPE_INT, GST_VIDEO_INFO_WIDTH (info), "height", G_TYPE_INT,
      GST_VIDEO_INFO_HEIGHT (info), NULL);
  g_object_set (filter, "caps", caps, NULL);
  gst_caps_unref (caps);
  g_signal_connect (c.sink, "handoff", G_CALLBACK (check_frames_handoff), &c);

  bus = gst_element_get_bus (pipeline);
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  while (!done && msg == NULL) {
    msg = gst_bus_timed_pop_filtered (bus, CHECK_FRAMES_TIMEOUT,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_APPLICATION);
    if (msg == NULL)
      break;
    done = GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ERROR;
    if (done)
      g_clear_pointer (&msg, gst_message_unref);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);

  /* the streaming threads are gone: the frames are this thread's */
  if (msg != NULL) {
    gst_message_parse_error (msg, &err, NULL);
    g_set_error (error, err->domain, err->code, "cannot decode the check "
        "frames from %s: %s", location, err->message);
    g_clear_error (&err);
  } else if (!done) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
        "%s gave no frame for %" GST_TIME_FORMAT ": the check frames must "
        "come from a file that ends or gives %u frames", location,
        GST_TIME_ARGS (CHECK_FRAMES_TIMEOUT), max);
  } else if (c.frames->len == 0) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE,
        "%s has no video frame to check with", location);
  }
  if (msg != NULL || !done || c.frames->len == 0)
    g_clear_pointer (&c.frames, g_ptr_array_unref);
  g_clear_pointer (&msg, gst_message_unref);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (filter);
  gst_object_unref (c.sink);
  gst_object_unref (pipeline);
  g_mutex_clear (&c.lock);
  return c.frames;
}
