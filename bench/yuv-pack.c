/* yuv-pack: what packing 4:2:0 frames straight from a decoder costs,
 * against packing RGB frames, and against converting them to RGB first as
 * videoconvert does.
 *
 *   yuv-pack [--batch 4] [--size 1920x1080] [--runs 15] [--threads 0]
 *
 * Ways, interleaved run by run, each timed over a whole batch (the
 * model's input of the frames' size, NCHW, CPU backend):
 *   pack-rgb     the pack of RGB frames
 *   pack-i420    the pack of I420 frames, converted on the way
 *   pack-nv12    the same of NV12 frames
 *   nhwc-rgb     pack-rgb into channels last (NHWC), as the CPU backend
 *                packs for a plan that takes it so
 *   nhwc-i420    pack-i420 into channels last
 *   convert      GStreamer's video converter, I420 to RGB, as videoconvert
 *                runs it (one thread), for every frame of the batch
 *   unpack-rgb   an image output back to RGB frames
 *   unpack-i420  the same to I420 frames
 *   stage-rgb    the CUDA backend's host side for RGB frames: their rows
 *                copied into (pinned) staging, as cuda/run.c does; the
 *                GPU packs them
 *   stage-i420   the same for I420 frames: their three planes' rows
 * Prints the median of each, per pixel, and the ratios measured in this
 * one run: pack-i420 / pack-rgb, and (convert + pack-rgb) / pack-i420,
 * what a pipeline with videoconvert spends on each frame over what it
 * spends without, on the CPU backend, and (convert + stage-rgb) /
 * stage-i420, the same on the CPU of a pipeline whose model runs on a
 * GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cpu/frames.h"
#include "cbiengine.h"

#include <gst/video/video.h>
#include "median.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

enum
{ PACK_RGB, PACK_I420, PACK_NV12, NHWC_RGB, NHWC_I420, CONVERT, UNPACK_RGB,
  UNPACK_I420, STAGE_RGB, STAGE_I420, WAYS
};

static const gchar *names[WAYS] = { "pack-rgb", "pack-i420", "pack-nv12",
  "nhwc-rgb", "nhwc-i420", "convert", "unpack-rgb", "unpack-i420",
  "stage-rgb", "stage-i420"
};

/* The CUDA backend's way in on the host (cuda/run.c): each frame's rows,
 * and a 4:2:0 frame's chroma rows, copied into staging. */
static void
stage (const CbiFrameBatch * b, guint8 * staging)
{
  const gboolean yuv = b->layout == CBI_PIXELS_YUV420;
  const gsize row = (gsize) b->width * (yuv ? 1 : b->pixel_stride);
  const gsize crow = (gsize) (b->width + 1) / 2, ch = (b->height + 1) / 2;
  guint8 *to = staging;
  guint i, y;

  for (i = 0; i < b->n_frames; i++) {
    for (y = 0; y < b->height; y++, to += row)
      memcpy (to, b->in[i] + (gsize) y * b->in_stride[i], row);
    for (y = 0; yuv && y < ch; y++, to += 2 * crow) {
      memcpy (to, b->in_cb[i] + y * b->in_chroma_stride[i], crow);
      memcpy (to + crow, b->in_cr[i] + y * b->in_chroma_stride[i], crow);
    }
  }
}

/* Frames of @info, @n of them in @buffers, mapped into @frames. */
static void
make_frames (const GstVideoInfo * info, guint n, GstBuffer ** buffers,
    GstVideoFrame * frames)
{
  guint i;
  gsize b;

  for (i = 0; i < n; i++) {
    GstMapInfo map;
    buffers[i] = gst_buffer_new_allocate (NULL, info->size, NULL);
    gst_buffer_map (buffers[i], &map, GST_MAP_WRITE);
    for (b = 0; b < map.size; b++)
      map.data[b] = (guint8) ((b + i * 977) * 2654435761u >> 24);
    gst_buffer_unmap (buffers[i], &map);
    gst_video_frame_map (&frames[i], info, buffers[i], GST_MAP_READWRITE);
  }
}

/* The batch of @n frames @frames, of the model's size. */
static void
batch_of (CbiFrameBatch * b, guint n, const GstVideoInfo * info,
    GstVideoFrame * frames, const guint8 ** planes, gint * strides,
    const CbiYuvMatrix * yuv)
{
  const gboolean is_yuv = GST_VIDEO_INFO_IS_YUV (info);
  guint c, i;

  memset (b, 0, sizeof (*b));
  b->width = GST_VIDEO_INFO_WIDTH (info);
  b->height = GST_VIDEO_INFO_HEIGHT (info);
  b->pixel_stride = 3;
  for (c = 0; c < 3; c++) {
    b->rgb_offset[c] = c;
    b->scale[c] = 1.0f / 255.0f;
  }
  b->extra_offset = -1;
  cbi_frame_batch_map_output_back (b);
  b->n_frames = b->n_slots = n;
  for (i = 0; i < n; i++) {
    planes[i] = GST_VIDEO_FRAME_COMP_DATA (&frames[i], 0);
    strides[i] = GST_VIDEO_FRAME_COMP_STRIDE (&frames[i], 0);
    if (is_yuv) {
      planes[n + i] = GST_VIDEO_FRAME_COMP_DATA (&frames[i], 1);
      planes[2 * n + i] = GST_VIDEO_FRAME_COMP_DATA (&frames[i], 2);
      strides[n + i] = GST_VIDEO_FRAME_COMP_STRIDE (&frames[i], 1);
    }
  }
  b->in = planes;
  b->in_stride = strides;
  b->out = (guint8 * const *) planes;
  b->out_stride = strides;
  if (is_yuv) {
    b->layout = CBI_PIXELS_YUV420;
    b->yuv = yuv;
    b->chroma_step = GST_VIDEO_INFO_COMP_PSTRIDE (info, 1);
    b->in_cb = planes + n;
    b->in_cr = planes + 2 * n;
    b->in_chroma_stride = strides + n;
    b->out_cb = (guint8 * const *) planes + n;
    b->out_cr = (guint8 * const *) planes + 2 * n;
    b->out_chroma_stride = strides + n;
  }
}

int
main (int argc, char **argv)
{
  guint n = 4, w = 1920, h = 1080, runs = 15, threads = 0;
  GstVideoFormat formats[3] = { GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_I420,
    GST_VIDEO_FORMAT_NV12
  };
  GstVideoInfo info[3];
  GstBuffer **buffers[3];
  GstVideoFrame *frames[3];
  const guint8 **planes[3];
  gint *strides[3];
  CbiFrameBatch batch[3];
  CbiYuvMatrix *yuv;
  GstVideoConverter *convert;
  GArray *times[WAYS];
  gdouble ns[WAYS];
  gfloat *tensor;
  guint8 *staging;
  guint i, k, r;

  gst_init (&argc, &argv);
  for (i = 1; i + 1 < (guint) argc; i += 2) {
    if (!strcmp (argv[i], "--batch"))
      n = atoi (argv[i + 1]);
    else if (!strcmp (argv[i], "--size"))
      sscanf (argv[i + 1], "%ux%u", &w, &h);
    else if (!strcmp (argv[i], "--runs"))
      runs = atoi (argv[i + 1]);
    else if (!strcmp (argv[i], "--threads"))
      threads = atoi (argv[i + 1]);
  }
  if (n == 0 || w < 2 || h < 2 || runs == 0) {
    fprintf (stderr, "usage: yuv-pack [--batch N] [--size WxH] [--runs N] "
        "[--threads N]\n");
    return 2;
  }
#ifdef _OPENMP
  if (threads > 0)
    omp_set_num_threads (threads);
#endif

  yuv = g_new (CbiYuvMatrix, n);
  for (i = 0; i < n; i++)
    cbi_yuv_matrix_init (&yuv[i], 0.2126, 0.0722, FALSE);
  for (k = 0; k < 3; k++) {
    gst_video_info_set_format (&info[k], formats[k], w, h);
    buffers[k] = g_new (GstBuffer *, n);
    frames[k] = g_new (GstVideoFrame, n);
    planes[k] = g_new0 (const guint8 *, 3 * n);
    strides[k] = g_new0 (gint, 2 * n);
    make_frames (&info[k], n, buffers[k], frames[k]);
    batch_of (&batch[k], n, &info[k], frames[k], planes[k], strides[k], yuv);
  }
  /* videoconvert's own options: one thread, its defaults otherwise */
  convert = gst_video_converter_new (&info[1], &info[0],
      gst_structure_new ("options", GST_VIDEO_CONVERTER_OPT_THREADS,
          G_TYPE_UINT, 1, NULL));
  tensor = g_malloc ((gsize) n * 3 * w * h * sizeof (gfloat));
  staging = g_malloc ((gsize) n * 3 * w * h);

  for (k = 0; k < WAYS; k++)
    times[k] = g_array_new (FALSE, FALSE, sizeof (gint64));
  /* one run of each untimed: page faults */
  cbi_pack_frames (&batch[0], tensor);
  cbi_unpack_frames (&batch[1], tensor);
  for (r = 0; r < runs; r++)
    for (k = 0; k < WAYS; k++) {
      gint64 t0 = g_get_monotonic_time (), dt;
      switch (k) {
        case PACK_RGB:
        case PACK_I420:
        case PACK_NV12:
          cbi_pack_frames (&batch[k - PACK_RGB], tensor);
          break;
        case NHWC_RGB:
        case NHWC_I420:
          cbi_pack_frames_channels_last (&batch[k - NHWC_RGB], tensor);
          break;
        case STAGE_RGB:
        case STAGE_I420:
          stage (&batch[k - STAGE_RGB], staging);
          break;
        case CONVERT:
          for (i = 0; i < n; i++)
            gst_video_converter_frame (convert, &frames[1][i], &frames[0][i]);
          break;
        case UNPACK_RGB:
          cbi_unpack_frames (&batch[0], tensor);
          break;
        default:
          cbi_unpack_frames (&batch[1], tensor);
          break;
      }
      dt = g_get_monotonic_time () - t0;
      g_array_append_val (times[k], dt);
    }

  printf ("yuv-pack: batch=%u size=%ux%u runs=%u threads=%u\n", n, w, h,
      runs, threads);
  for (k = 0; k < WAYS; k++) {
    ns[k] = bench_median_ns (times[k]);
    printf ("%-11s median=%.2f ms  %.2f ns/pixel\n", names[k], ns[k] / 1e6,
        ns[k] / ((gdouble) n * w * h));
    g_array_unref (times[k]);
  }
  printf ("ratio pack-i420/pack-rgb=%.2f pack-nv12/pack-rgb=%.2f "
      "nhwc-i420/nhwc-rgb=%.2f unpack-i420/unpack-rgb=%.2f "
      "(convert+pack-rgb)/pack-i420=%.2f "
      "(convert+nhwc-rgb)/nhwc-i420=%.2f\n",
      ns[PACK_I420] / ns[PACK_RGB], ns[PACK_NV12] / ns[PACK_RGB],
      ns[NHWC_I420] / ns[NHWC_RGB], ns[UNPACK_I420] / ns[UNPACK_RGB],
      (ns[CONVERT] + ns[PACK_RGB]) / ns[PACK_I420],
      (ns[CONVERT] + ns[NHWC_RGB]) / ns[NHWC_I420]);
  printf ("ratio stage-i420/stage-rgb=%.2f (convert+stage-rgb)/stage-i420=%.2f"
      "\n", ns[STAGE_I420] / ns[STAGE_RGB],
      (ns[CONVERT] + ns[STAGE_RGB]) / ns[STAGE_I420]);

  gst_video_converter_free (convert);
  for (k = 0; k < 3; k++) {
    for (i = 0; i < n; i++) {
      gst_video_frame_unmap (&frames[k][i]);
      gst_buffer_unref (buffers[k][i]);
    }
    g_free (buffers[k]);
    g_free (frames[k]);
    g_free (planes[k]);
    g_free (strides[k]);
  }
  g_free (yuv);
  g_free (tensor);
  g_free (staging);
  return 0;
}
