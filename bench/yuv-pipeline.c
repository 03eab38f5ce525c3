/* yuv-pipeline: the CPU a pipeline spends per frame with videoconvert
 * before the element and without it, on decoded 4:2:0 video.
 *
 * Encodes FRAMES frames of WIDTHxHEIGHT colour bars to Theora 4:2:0 in a
 * temporary folder (theoraenc: what a software decoder gives back is
 * I420), then, for each stream count, runs one after the other in this
 * process:
 *   videoconvert: S x (filesrc ! decodebin ! videoconvert
 *                 ! video/x-raw,format=RGB ! inf.sink_K)
 *   direct:       S x (filesrc ! decodebin ! inf.sink_K)
 * into one cudabatchinfer batch=S (the request pads), each src_K to a
 * fakesink, and then the decoding alone (S x (filesrc ! decodebin
 * ! fakesink)); prints the process's CPU time (user + system, from
 * getrusage) per frame of each, their ratio, and the ratio of what each
 * spends past the decoding (videoconvert and the element, or the element
 * alone). The encoding and the
 * element's warm-up are outside the figures: each pipeline is timed from
 * PAUSED (warmed up, prerolled) to EOS.
 *
 *   yuv-pipeline [--streams 4,16] [--frames 30] [--width 1920]
 *                [--height 1080] [--model file.onnx] [--props "..."]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static gdouble
cpu_seconds (void)
{
  struct rusage u;

  getrusage (RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
      u.ru_stime.tv_usec / 1e6;
}

/* Runs @desc to EOS: %FALSE on an error. @cpu: the CPU seconds from
 * PAUSED to EOS. */
static gboolean
run (const gchar * desc, gdouble * cpu, gdouble * wall)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);
  GstMessage *msg;
  gdouble c0;
  gint64 t0;
  gboolean ok;

  if (pipeline == NULL) {
    g_printerr ("%s: %s\n", desc, error->message);
    g_clear_error (&error);
    return FALSE;
  }
  /* prerolled, or an error: its message, not a wait for ever */
  ok = gst_element_set_state (pipeline, GST_STATE_PAUSED) !=
      GST_STATE_CHANGE_FAILURE;
  if (ok) {
    msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
        GST_CLOCK_TIME_NONE, GST_MESSAGE_ASYNC_DONE | GST_MESSAGE_ERROR);
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      gchar *debug = NULL;
      gst_message_parse_error (msg, &error, &debug);
      g_printerr ("%s: %s (%s)\n", desc, error->message, debug);
      g_clear_error (&error);
      g_free (debug);
      ok = FALSE;
    }
    gst_message_unref (msg);
  }
  c0 = cpu_seconds ();
  t0 = g_get_monotonic_time ();
  if (ok)
    ok = gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE;
  if (!ok) {
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (pipeline);
    return FALSE;
  }
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline),
      GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  *cpu = cpu_seconds () - c0;
  *wall = (g_get_monotonic_time () - t0) / 1e6;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &error, NULL);
    g_printerr ("%s: %s\n", desc, error->message);
    g_clear_error (&error);
    ok = FALSE;
  }
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return ok;
}

/* @convert: with videoconvert; -1: the decoding alone */
static gchar *
pipeline_of (const gchar * file, guint streams, gint convert,
    const gchar * model, const gchar * props)
{
  GString *d = g_string_new (NULL);
  guint k;

  if (convert < 0) {
    for (k = 0; k < streams; k++)
      g_string_append_printf (d, " filesrc location=\"%s\" ! decodebin "
          "! fakesink sync=false", file);
    return g_string_free (d, FALSE);
  }
  g_string_append_printf (d, "cudabatchinfer name=inf batch=%u %s%s%s",
      streams, props, model ? " model=" : "", model ? model : "");
  for (k = 0; k < streams; k++) {
    g_string_append_printf (d, " filesrc location=\"%s\" ! decodebin%s "
        "! inf.sink_%u inf.src_%u ! fakesink sync=false", file, convert ?
        " ! videoconvert ! video/x-raw,format=RGB" : "", k, k);
  }
  return g_string_free (d, FALSE);
}

int
main (int argc, char **argv)
{
  const gchar *streams_arg = "4,16", *model = NULL, *props = "";
  guint frames = 30, width = 1920, height = 1080, i;
  gchar *dir, *file, *encode, **counts;
  gdouble cpu, wall;
  int status = 0;

  gst_init (&argc, &argv);
  for (i = 1; i + 1 < (guint) argc; i += 2) {
    if (!strcmp (argv[i], "--streams"))
      streams_arg = argv[i + 1];
    else if (!strcmp (argv[i], "--frames"))
      frames = atoi (argv[i + 1]);
    else if (!strcmp (argv[i], "--width"))
      width = atoi (argv[i + 1]);
    else if (!strcmp (argv[i], "--height"))
      height = atoi (argv[i + 1]);
    else if (!strcmp (argv[i], "--model"))
      model = argv[i + 1];
    else if (!strcmp (argv[i], "--props"))
      props = argv[i + 1];
  }
  if (frames == 0 || width < 2 || height < 2) {
    g_printerr ("usage: yuv-pipeline [--streams 4,16] [--frames N] "
        "[--width W] [--height H] [--model file.onnx] [--props \"...\"]\n");
    return 2;
  }

  dir = g_dir_make_tmp ("yuv-pipeline-XXXXXX", NULL);
  file = g_build_filename (dir, "bars.ogv", NULL);
  encode = g_strdup_printf ("videotestsrc num-buffers=%u pattern=smpte "
      "horizontal-speed=4 ! video/x-raw,format=I420,width=%u,height=%u,"
      "framerate=30/1 ! theoraenc ! oggmux ! filesink location=\"%s\"",
      frames, width, height, file);
  if (!run (encode, &cpu, &wall)) {
    g_printerr ("yuv-pipeline: could not encode the test video (theoraenc, "
        "gst-plugins-base)\n");
    return 1;
  }

  printf ("yuv-pipeline: %u frames of %ux%u I420 (Theora) per stream, "
      "model %s %s\n", frames, width, height, model ? model : "(embedded)",
      props);
  counts = g_strsplit (streams_arg, ",", -1);
  for (i = 0; counts[i] && status == 0; i++) {
    guint s = atoi (counts[i]);
    gchar *with = pipeline_of (file, s, TRUE, model, props);
    gchar *without = pipeline_of (file, s, FALSE, model, props);
    gchar *decode = pipeline_of (file, s, -1, model, props);
    gdouble cw, ww, cd, wd, cx, wx;
    if (s == 0 || !run (with, &cw, &ww) || !run (without, &cd, &wd)
        || !run (decode, &cx, &wx)) {
      status = 1;
    } else {
      const gdouble n = (gdouble) s * frames;
      printf ("streams=%u videoconvert: %.2f ms CPU/frame (%.1f s wall)  "
          "direct: %.2f ms CPU/frame (%.1f s wall)  decoding alone: %.2f ms "
          "CPU/frame\n", s, cw / n * 1e3, ww, cd / n * 1e3, wd, cx / n * 1e3);
      printf ("streams=%u ratio direct/videoconvert=%.2f (%.0f %% less CPU); "
          "past the decoding: %.2f (%.0f %% less)\n", s, cd / cw,
          100.0 * (1.0 - cd / cw), (cd - cx) / (cw - cx),
          100.0 * (1.0 - (cd - cx) / (cw - cx)));
    }
    g_free (with);
    g_free (without);
    g_free (decode);
  }
  g_strfreev (counts);
  g_unlink (file);
  g_rmdir (dir);
  g_free (file);
  g_free (dir);
  g_free (encode);
  return status;
}
