/* scale-pack: what scaling frames to the model's size costs where frames
 * are packed, against packing frames that already have it.
 *
 *   scale-pack [--batch 8] [--from 1920x1080] [--to 640x640] [--runs 15]
 *
 * Four ways, interleaved run by run, each timed over a whole batch:
 *   pack      the CPU backend's pack of frames of the model's size
 *   pack-lbox the same with frames of --from, letterboxed to --to
 *   copy      the CUDA backend's copy into staging, frames of the model's
 *             size (a memcpy per row, on the streaming thread)
 *   copy-lbox the same copy, scaling frames of --from on the way
 * Prints the median of each, per model pixel, and the two ratios
 * (scaled / plain) measured in this one run. No GPU needed: the CUDA
 * path's copy is host code.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cpu/frames.h"

#include "median.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The batch of @n frames of @w x @h at @data, packed to @mw x @mh. */
static CbiFrameBatch
batch_of (guint n, guint w, guint h, guint mw, guint mh, const guint8 ** in,
    const gint * stride, const guint * in_w, const guint * in_h,
    CbiScaling scaling)
{
  CbiFrameBatch b;
  guint c;

  memset (&b, 0, sizeof (b));
  b.width = mw;
  b.height = mh;
  b.pixel_stride = 3;
  for (c = 0; c < 3; c++) {
    b.rgb_offset[c] = c;
    b.scale[c] = 1.0f / 255.0f;
  }
  b.extra_offset = -1;
  cbi_frame_batch_map_output_back (&b);
  b.n_frames = b.n_slots = n;
  b.in = in;
  b.in_stride = stride;
  b.scaling = scaling;
  b.in_width = in_w;
  b.in_height = in_h;
  return b;
}

/* The CUDA backend's way in (cuda/run.c): rows copied, or scaled, into
 * staging. */
static void
stage (const CbiFrameBatch * b, guint8 * staging)
{
  const gsize row = (gsize) b->width * b->pixel_stride;
  guint i, y;

  for (i = 0; i < b->n_frames; i++)
    for (y = 0; y < b->height; y++)
      if (cbi_frame_batch_scales (b))
        cbi_frame_batch_scale_row_in (b, i, y, 0, b->width,
            staging + (i * b->height + y) * row);
      else
        memcpy (staging + (i * b->height + y) * row,
            b->in[i] + (gsize) y * b->in_stride[i], row);
}

int
main (int argc, char **argv)
{
  guint n = 8, fw = 1920, fh = 1080, mw = 640, mh = 640, runs = 15;
  guint i, r, k;
  const guint8 **big_in, **small_in;
  guint8 *big, *small, *staging;
  gint *big_stride, *small_stride;
  guint *big_w, *big_h;
  gfloat *tensor;
  GArray *times[4];
  CbiFrameBatch plain, scaled;
  const gchar *names[4] = { "pack", "pack-lbox", "copy", "copy-lbox" };
  gdouble ns[4];

  for (i = 1; i + 1 < (guint) argc; i += 2) {
    if (!strcmp (argv[i], "--batch"))
      n = atoi (argv[i + 1]);
    else if (!strcmp (argv[i], "--from"))
      sscanf (argv[i + 1], "%ux%u", &fw, &fh);
    else if (!strcmp (argv[i], "--to"))
      sscanf (argv[i + 1], "%ux%u", &mw, &mh);
    else if (!strcmp (argv[i], "--runs"))
      runs = atoi (argv[i + 1]);
  }
  if (n == 0 || fw == 0 || fh == 0 || mw == 0 || mh == 0 || runs == 0) {
    fprintf (stderr, "usage: scale-pack [--batch N] [--from WxH] [--to WxH] "
        "[--runs N]\n");
    return 2;
  }

  big = g_malloc ((gsize) n * fw * fh * 3);
  small = g_malloc ((gsize) n * mw * mh * 3);
  staging = g_malloc ((gsize) n * mw * mh * 3);
  tensor = g_malloc ((gsize) n * 3 * mw * mh * sizeof (gfloat));
  big_in = g_new (const guint8 *, n);
  small_in = g_new (const guint8 *, n);
  big_stride = g_new (gint, n);
  small_stride = g_new (gint, n);
  big_w = g_new (guint, n);
  big_h = g_new (guint, n);
  for (i = 0; i < n * fw * fh * 3; i++)
    big[i] = (guint8) (i * 2654435761u >> 24);
  for (i = 0; i < n * mw * mh * 3; i++)
    small[i] = (guint8) (i * 2654435761u >> 24);
  for (i = 0; i < n; i++) {
    big_in[i] = big + (gsize) i *fw * fh * 3;
    small_in[i] = small + (gsize) i *mw * mh * 3;
    big_stride[i] = fw * 3;
    small_stride[i] = mw * 3;
    big_w[i] = fw;
    big_h[i] = fh;
  }
  plain = batch_of (n, mw, mh, mw, mh, small_in, small_stride, NULL, NULL,
      CBI_SCALE_NONE);
  scaled = batch_of (n, fw, fh, mw, mh, big_in, big_stride, big_w, big_h,
      CBI_SCALE_LETTERBOX);

  for (k = 0; k < 4; k++)
    times[k] = g_array_new (FALSE, FALSE, sizeof (gint64));
  /* one run of each untimed: page faults */
  cbi_pack_frames (&plain, tensor);
  stage (&plain, staging);
  for (r = 0; r < runs; r++)
    for (k = 0; k < 4; k++) {
      gint64 t0 = g_get_monotonic_time (), dt;
      if (k == 0)
        cbi_pack_frames (&plain, tensor);
      else if (k == 1)
        cbi_pack_frames (&scaled, tensor);
      else if (k == 2)
        stage (&plain, staging);
      else
        stage (&scaled, staging);
      dt = g_get_monotonic_time () - t0;
      g_array_append_val (times[k], dt);
    }

  printf ("scale-pack: batch=%u from=%ux%u to=%ux%u runs=%u\n", n, fw, fh, mw,
      mh, runs);
  for (k = 0; k < 4; k++) {
    ns[k] = bench_median_ns (times[k]);
    printf ("%-9s median=%.2f ms  %.2f ns/model-pixel\n", names[k],
        ns[k] / 1e6, ns[k] / ((gdouble) n * mw * mh));
    g_array_unref (times[k]);
  }
  printf ("ratio pack-lbox/pack=%.2f copy-lbox/copy=%.2f\n", ns[1] / ns[0],
      ns[3] / ns[2]);

  g_free (big);
  g_free (small);
  g_free (staging);
  g_free (tensor);
  g_free (big_in);
  g_free (small_in);
  g_free (big_stride);
  g_free (small_stride);
  g_free (big_w);
  g_free (big_h);
  return 0;
}
