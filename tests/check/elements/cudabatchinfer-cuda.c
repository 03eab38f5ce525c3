/* GStreamer cudabatchinfer on the CUDA backend, against the CPU backend
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Needs an NVIDIA GPU: where this build has no CUDA backend or no device
 * is usable, the program says why and exits 77, which meson reports as
 * SKIP. scripts/gpu-check.sh runs it on a GPU machine.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>
#include <math.h>

#include "cbicudaprobe.h"
#include "cbidefaultmodel.h"
#include "cbiengine.h"
#include "config.h"
#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define W 64
#define H 48
#define FRAME_DURATION (GST_SECOND / 30)

/* Frame @i of @info: a pattern of position (in its first plane's rows,
 * and on through the others) and frame number. */
static GstBuffer *
make_frame (guint i, const GstVideoInfo * info)
{
  const gsize row = GST_VIDEO_INFO_PLANE_STRIDE (info, 0);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info->size, NULL);
  GstMapInfo map;
  gsize p;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (p = 0; p < map.size; p++)
    map.data[p] = (guint8) ((p % row) * 3 + (p / row) * 5 + i * 11);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

/* make_frame () of RGBx frames of @w x @h */
static GstBuffer *
make_frame_sized (guint i, guint w, guint h)
{
  GstVideoInfo info;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBx, w, h);
  return make_frame (i, &info);
}

/* Runs @n frames of @caps through "cudabatchinfer @props
 * backend=@backend" and returns the outputs (transfer full). */
static GPtrArray *
run_caps (const gchar * props, const gchar * backend, guint n,
    const gchar * caps)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer %s backend=%s", props,
      backend);
  GstHarness *h_ = gst_harness_new_parse (desc);
  GPtrArray *outs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GstCaps *c = gst_caps_from_string (caps);
  GstVideoInfo info;
  guint i;

  fail_unless (gst_video_info_from_caps (&info, c));
  gst_harness_set_src_caps (h_, c);
  gst_harness_set_sink_caps_str (h_, "video/x-raw");
  for (i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (h_, make_frame (i, &info)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h_, gst_event_new_eos ()));
  for (i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_pull (h_);
    fail_unless (out != NULL, "%s: no output %u", desc, i);
    g_ptr_array_add (outs, out);
  }
  gst_harness_teardown (h_);
  g_free (desc);
  return outs;
}

/* run_caps () of @n RGBx frames of @w x @h */
static GPtrArray *
run_sized (const gchar * props, const gchar * backend, guint n, guint w,
    guint h)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGBx,width=%u,"
      "height=%u,framerate=30/1", w, h);
  GPtrArray *outs = run_caps (props, backend, n, caps);

  g_free (caps);
  return outs;
}

/* run_sized () at the suite's frame size */
static GPtrArray *
run (const gchar * props, const gchar * backend, guint n)
{
  return run_sized (props, backend, n, W, H);
}

static gchar *
model_prop (const gchar * name)
{
  gchar *path;
  gchar *prop;

  if (name == NULL)
    return g_strdup ("");
  path = g_build_filename (CBI_TEST_MODELS_DIR, name, NULL);
  prop = g_strdup_printf ("model=\"%s\"", path);
  g_free (path);
  return prop;
}

/* Frames within 2 steps, tensors within 1e-3 (relative above 1). */
static void
assert_same_results (GstBuffer * cpu, GstBuffer * gpu, const gchar * what)
{
  GstBatchTensorMeta *tc = gst_buffer_get_batch_tensor_meta (cpu);
  GstBatchTensorMeta *tg = gst_buffer_get_batch_tensor_meta (gpu);
  GstMapInfo a, b;
  gsize i;
  guint t;

  fail_unless ((tc == NULL) == (tg == NULL), "%s: tensor meta on one side",
      what);
  if (tc) {
    fail_unless_equals_int (tc->n_tensors, tg->n_tensors);
    for (t = 0; t < tc->n_tensors; t++) {
      const gfloat *x = gst_batch_tensor_meta_get_data (tc, &tc->tensors[t]);
      const gfloat *y = gst_batch_tensor_meta_get_data (tg, &tg->tensors[t]);
      fail_unless_equals_uint64 (tc->tensors[t].size, tg->tensors[t].size);
      for (i = 0; i < tc->tensors[t].size / sizeof (gfloat); i++)
        fail_unless (isfinite (y[i]) && fabsf (x[i] - y[i]) <= 1e-3f *
            MAX (1.0f, fabsf (x[i])), "%s: %s[%" G_GSIZE_FORMAT "] cpu %f "
            "cuda %f", what, tc->tensors[t].name, i, x[i], y[i]);
    }
    return;
  }
  gst_buffer_map (cpu, &a, GST_MAP_READ);
  gst_buffer_map (gpu, &b, GST_MAP_READ);
  fail_unless_equals_uint64 (a.size, b.size);
  /* one assertion for the frame: check marks every one it makes, and a
   * 4K frame has 33 million bytes */
  for (i = 0; i < a.size && ABS ((gint) a.data[i] - (gint) b.data[i]) <= 2;
      i++);
  fail_unless (i == a.size, "%s: byte %" G_GSIZE_FORMAT " cpu %u cuda %u",
      what, i, i < a.size ? a.data[i] : 0, i < a.size ? b.data[i] : 0);
  gst_buffer_unmap (cpu, &a);
  gst_buffer_unmap (gpu, &b);
}

/* Frames of two sizes scaled to a fixed-size model and back: the CUDA
 * backend scales in its staging copies, the CPU in its pack and unpack,
 * with the same walk; the bytes agree as the unscaled ones do. */
GST_START_TEST (test_cuda_scales_frames_as_the_cpu)
{
  static const gchar *modes[] = { "stretch", "letterbox" };
  static const guint sizes[][2] = { {W, H}, {13, 29} };
  gchar *model = model_prop ("conv-fixed.onnx");
  guint m, z, i;

  for (m = 0; m < G_N_ELEMENTS (modes); m++)
    for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
      gchar *props = g_strdup_printf ("%s batch=4 scaling=%s", model,
          modes[m]);
      GPtrArray *cpu = run_sized (props, "cpu", 6, sizes[z][0], sizes[z][1]);
      GPtrArray *gpu = run_sized (props, "cuda", 6, sizes[z][0], sizes[z][1]);
      for (i = 0; i < cpu->len; i++) {
        gchar *what = g_strdup_printf ("%s %ux%u frame %u", modes[m],
            sizes[z][0], sizes[z][1], i);
        assert_same_results (g_ptr_array_index (cpu, i),
            g_ptr_array_index (gpu, i), what);
        g_free (what);
      }
      g_ptr_array_unref (cpu);
      g_ptr_array_unref (gpu);
      g_free (props);
    }
  g_free (model);
}

GST_END_TEST;

/* 4:2:0 frames, planar and interleaved, in two colorimetries, at the
 * model's size (converted in the pack kernel) and scaled (converted in
 * the staging copy): the CUDA backend gives the CPU's frames. */
GST_START_TEST (test_cuda_packs_and_unpacks_yuv420_as_the_cpu)
{
  static const gchar *formats[] = { "I420", "NV12", "NV21", "YV12" };
  static const gchar *colorimetries[] = { "bt601", "1:3:5:1" };
  gchar *conv = model_prop ("conv-relu.onnx");
  gchar *fixed = model_prop ("conv-fixed.onnx");
  guint f, c, scaled, i;

  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    for (c = 0; c < G_N_ELEMENTS (colorimetries); c++)
      for (scaled = 0; scaled < 2; scaled++) {
        gchar *props = g_strdup_printf ("%s batch=4%s", scaled ? fixed : conv,
            scaled ? " scaling=letterbox" : "");
        gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,"
            "height=%u,framerate=30/1,colorimetry=%s", formats[f],
            scaled ? 13 : W, scaled ? 29 : H, colorimetries[c]);
        GPtrArray *cpu = run_caps (props, "cpu", 6, caps);
        GPtrArray *gpu = run_caps (props, "cuda", 6, caps);
        for (i = 0; i < cpu->len; i++)
          assert_same_results (g_ptr_array_index (cpu, i),
              g_ptr_array_index (gpu, i), caps);
        g_ptr_array_unref (cpu);
        g_ptr_array_unref (gpu);
        g_free (caps);
        g_free (props);
      }
  g_free (conv);
  g_free (fixed);
}

GST_END_TEST;

static const gchar *models[] = {
  NULL, "conv-relu.onnx", "eltwise.onnx", "binary.onnx", "unet.onnx",
  "upconv.onnx", "pads.onnx", "style.onnx", "superres.onnx",
  "classifier.onnx", "half-shapes.onnx",
};

GST_START_TEST (test_cuda_gives_the_cpu_results_on_every_test_model)
{
  guint m, i;

  for (m = 0; m < G_N_ELEMENTS (models); m++) {
    gchar *model = model_prop (models[m]);
    gchar *props = g_strdup_printf ("%s batch=4", model);
    GPtrArray *cpu = run (props, "cpu", 6);
    GPtrArray *gpu = run (props, "cuda", 6);
    for (i = 0; i < cpu->len; i++)
      assert_same_results (g_ptr_array_index (cpu, i),
          g_ptr_array_index (gpu, i), models[m] ? models[m] : "sketch");
    g_ptr_array_unref (cpu);
    g_ptr_array_unref (gpu);
    g_free (props);
    g_free (model);
  }
}

GST_END_TEST;

GST_START_TEST (test_cuda_maps_a_probability_map_to_bytes_as_the_cpu)
{
  gchar *model = model_prop ("prob-map.onnx");
  gchar *props = g_strdup_printf ("%s batch=4 output-scale=\"<255.0>\" "
      "output-offset=\"<0.0>\"", model);
  GPtrArray *cpu = run (props, "cpu", 6);
  GPtrArray *gpu = run (props, "cuda", 6);
  guint i;

  for (i = 0; i < cpu->len; i++)
    assert_same_results (g_ptr_array_index (cpu, i),
        g_ptr_array_index (gpu, i), "prob-map");
  g_ptr_array_unref (cpu);
  g_ptr_array_unref (gpu);
  g_free (props);
  g_free (model);
}

GST_END_TEST;

/* 20 batches after the warm-up, the last one padded */
GST_START_TEST (test_cuda_batches_after_warmup_allocate_nothing)
{
  GPtrArray *outs = run ("batch=4", "cuda", 78);
  guint i;

  for (i = 0; i < outs->len; i++) {
    GstBatchMemoryMeta *m =
        gst_buffer_get_batch_memory_meta (g_ptr_array_index (outs, i));
    fail_unless (m != NULL);
    fail_unless_equals_string (m->backend, "cuda");
    fail_unless (m->warmed_up && !m->replanned, "batch %" G_GUINT64_FORMAT,
        m->batch_index);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    fail_unless (m->device_total_bytes > 0);
    /* nor outside the pool: the device's free memory stays put */
    fail_unless_equals_uint64 (m->device_fresh_bytes, 0);
  }
  g_ptr_array_unref (outs);
}

GST_END_TEST;

/* @model on CUDA at @precision, with the properties @props: the
 * warm-up's check against float32 passes, and the float32 run's memory
 * went back before the first batch. Returns the convolutions and matrix
 * products that ran in it; @error_out (nullable) the check's relative
 * error. */
static guint
assert_precision_passes_with_error (const gchar * model,
    const gchar * precision, const gchar * props, gdouble * error_out)
{
  gchar *m = model_prop (model);
  gchar *desc = g_strdup_printf ("cudabatchinfer %s batch=4 backend=cuda "
      "precision=%s %s", m, precision, props);
  GstHarness *h = gst_harness_new_parse (desc);
  GstStructure *stats;
  gdouble err = -1.0;
  guint i, ops = 0;

  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=64,"
      "height=48,framerate=30/1");
  for (i = 0; i < 10; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame_sized (i, W, H)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (i = 0; i < 10; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchMemoryMeta *meta = gst_buffer_get_batch_memory_meta (out);
    fail_unless (meta != NULL && meta->warmed_up && !meta->replanned);
    fail_unless_equals_string (meta->backend, "cuda");
    fail_unless_equals_uint64 (meta->fresh_allocations, 0);
    fail_unless_equals_uint64 (meta->device_fresh_bytes, 0);
    gst_buffer_unref (out);
  }
  g_object_get (h->element, "stats", &stats, NULL);
  fail_unless (gst_structure_get_double (stats, "precision-relative-error",
          &err));
  /* none that the precision changes leaves the model in fp32 */
  fail_unless (gst_structure_get_uint (stats, "low-precision-ops", &ops));
  fail_unless_equals_string (gst_structure_get_string (stats, "precision"),
      ops > 0 ? precision : "fp32");
  /* checked where it ran: within the default tolerance */
  fail_unless (ops > 0 ? err >= 0.0 && err <= 0.05 : err == -1.0, "%s %s: %g",
      model, precision, err);
  gst_structure_free (stats);
  gst_harness_teardown (h);
  g_free (desc);
  g_free (m);
  if (error_out)
    *error_out = err;
  return ops;
}

static guint
assert_precision_passes (const gchar * model, const gchar * precision,
    const gchar * props)
{
  return assert_precision_passes_with_error (model, precision, props, NULL);
}

/* tf32 (Ampere or later: the H200 of the GPU check has it) on the
 * super-resolution net: the convolutions whose algorithms may take
 * tensor cores */
GST_START_TEST (test_cuda_tf32_passes_and_allocates_nothing_after)
{
  guint ops = assert_precision_passes ("superres.onnx", "tf32", "");

  fail_unless (ops <= 2, "%u", ops);
}

GST_END_TEST;

/* fp16 (Volta or later) and bf16 (Ampere or later) take the 3x3
 * convolutions of 16 channels in and out, channels last on tensor cores:
 * the residual net's three, the overflow model's heavy one, which bf16
 * holds; and half-shapes.onnx's strided one padded on one side, strided
 * ConvTranspose cropped and grouped one, with the algorithms timed too */
GST_START_TEST (test_cuda_fp16_and_bf16_pass_and_allocate_nothing_after)
{
  fail_unless_equals_int (assert_precision_passes ("ops-residual.onnx",
          "fp16", ""), 3);
  fail_unless_equals_int (assert_precision_passes ("ops-residual.onnx",
          "bf16", ""), 3);
  fail_unless_equals_int (assert_precision_passes ("fp16-overflow.onnx",
          "bf16", ""), 1);
  fail_unless_equals_int (assert_precision_passes ("half-shapes.onnx",
          "fp16", "algo-search=heuristic"), 3);
  fail_unless_equals_int (assert_precision_passes ("half-shapes.onnx",
          "bf16", "algo-search=exhaustive cuda-graph=true"), 3);
}

GST_END_TEST;

/* cuBLAS's products take each precision's compute type: bf16-products
 * .onnx's two MatMuls and Gemm head, with float32 operands in memory,
 * all run in tf32, bf16 and fp16 within the check, and bfloat16's 8-bit
 * significand shows in the check's error (a compute type cuBLAS ignored
 * would leave it at 0); a recurrent layer's sequence product runs in the
 * precision too, its steps in float32: one for ops-lstm.onnx's LSTM,
 * three for ops-gru-rnn.onnx's GRUs and RNN (their 3-channel stem
 * convolution stays float32 in 16 bits; tf32 may take it) */
GST_START_TEST (test_cuda_matrix_products_run_in_each_precision)
{
  const gchar *precisions[] = { "tf32", "bf16", "fp16" };
  gdouble err = -1.0;
  guint i, conv;

  for (i = 0; i < G_N_ELEMENTS (precisions); i++) {
    fail_unless_equals_int (assert_precision_passes_with_error
        ("bf16-products.onnx", precisions[i], "", &err), 3);
    if (i == 1)
      fail_unless (err > 0.0, "bf16 products as exact as float32");
    conv = assert_precision_passes ("ops-lstm.onnx", precisions[i], "") - 1;
    fail_unless (i == 0 ? conv <= 1 : conv == 0, "%s: %u", precisions[i],
        conv + 1);
    conv = assert_precision_passes ("ops-gru-rnn.onnx", precisions[i],
        "cuda-graph=true") - 3;
    fail_unless (i == 0 ? conv <= 1 : conv == 0, "%s: %u", precisions[i],
        conv + 3);
  }
}

GST_END_TEST;

/* Asserts that the warm-up message @s of precision=auto on
 * fp16-overflow.onnx left fp16 for its values, and took bf16 or, where a
 * lower one was not clearly faster than fp32 (above
 * CBI_ENGINE_AUTO_FASTER_PERCENT of its time), left it for that (both
 * times) and took the next. */
static void
assert_auto_left_fp16 (const GstStructure * s)
{
  const GValue *rejected = gst_structure_get_value (s, "precision-rejected");
  const gchar *took = gst_structure_get_string (s, "precision");
  const gchar *next[] = { "bf16", "tf32", "fp32" };
  guint i, n;

  fail_unless (rejected != NULL);
  n = gst_value_array_get_size (rejected);
  fail_unless (n >= 1 && n <= 3, "%u", n);
  for (i = 0; i < n; i++) {
    const GstStructure *r =
        gst_value_get_structure (gst_value_array_get_value (rejected, i));
    guint64 t = 0, t32 = 0;
    if (i == 0) {
      fail_unless_equals_string (gst_structure_get_string (r, "precision"),
          "fp16");
      fail_unless_equals_string (gst_structure_get_string (r, "reason"),
          "accuracy");
      continue;
    }
    fail_unless_equals_string (gst_structure_get_string (r, "precision"),
        next[i - 1]);
    fail_unless_equals_string (gst_structure_get_string (r, "reason"),
        "slower");
    fail_unless (gst_structure_get_uint64 (r, "batch-time", &t)
        && gst_structure_get_uint64 (r, "fp32-batch-time", &t32)
        && t32 > 0 && t * 100 > t32 * CBI_ENGINE_AUTO_FASTER_PERCENT,
        "%" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT, t, t32);
  }
  /* float32 may also follow a tf32 that changes no op */
  if (g_strcmp0 (took, "fp32") != 0)
    fail_unless_equals_string (took, next[n - 1]);
}

/* fp16-overflow.onnx gives values past fp16's largest: its check fails
 * naming the output, and auto steps back to bf16 (or past it, where it
 * runs no faster than fp32) */
GST_START_TEST (test_cuda_fp16_overflow_fails_and_auto_takes_bf16)
{
  gchar *m = model_prop ("fp16-overflow.onnx");
  gchar *desc = g_strdup_printf ("cudabatchinfer %s batch=4 backend=cuda "
      "precision=fp16", m);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_bus_new ();
  GstHarness *h;
  GstStructure *stats;
  GstMessage *msg;
  GError *err = NULL;
  guint i;

  fail_unless (e != NULL);
  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=64,"
      "height=48,framerate=30/1");
  gst_harness_push (h, make_frame_sized (0, W, H));
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "fp16 passed its check");
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_SETTINGS), "%s", err->message);
  fail_unless (strstr (err->message, "precision fp16 overflows: output "
          "\"output\"") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_bus (e, NULL);
  gst_harness_teardown (h);
  gst_object_unref (e);
  gst_object_unref (bus);
  g_free (desc);

  desc = g_strdup_printf ("cudabatchinfer %s batch=4 backend=cuda "
      "precision=auto", m);
  e = gst_parse_launch (desc, NULL);
  fail_unless (e != NULL);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=64,"
      "height=48,framerate=30/1");
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame_sized (i, W, H)),
        GST_FLOW_OK);
  for (i = 0; i < 4; i++)
    gst_buffer_unref (gst_harness_pull (h));
  /* fp16 left for its values; bf16 passes, and runs unless it ran no
   * faster than fp32 on this GPU (a small model), when it is left for
   * that and the next one, tf32, is tried the same way */
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) != NULL
      && !gst_structure_has_name (gst_message_get_structure (msg),
          "cudabatchinfer-warmup"))
    gst_message_unref (msg);
  fail_unless (msg != NULL, "no warm-up message");
  assert_auto_left_fp16 (gst_message_get_structure (msg));
  gst_message_unref (msg);
  g_object_get (h->element, "stats", &stats, NULL);
  fail_if (g_strcmp0 (gst_structure_get_string (stats, "precision"),
          "fp16") == 0);
  gst_structure_free (stats);
  gst_element_set_bus (e, NULL);
  gst_harness_teardown (h);
  gst_object_unref (e);
  gst_object_unref (bus);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* @n frames through @model on CUDA with properties @a, then @b: the same
 * results. */
static void
assert_settings_agree (const gchar * model, const gchar * a, const gchar * b,
    guint n)
{
  gchar *m = model_prop (model);
  gchar *pa = g_strdup_printf ("%s batch=4 %s", m, a);
  gchar *pb = g_strdup_printf ("%s batch=4 %s", m, b);
  GPtrArray *x = run (pa, "cuda", n), *y = run (pb, "cuda", n);
  guint i;

  for (i = 0; i < x->len; i++)
    assert_same_results (g_ptr_array_index (x, i), g_ptr_array_index (y, i), b);
  g_ptr_array_unref (x);
  g_ptr_array_unref (y);
  g_free (pa);
  g_free (pb);
  g_free (m);
}

GST_START_TEST (test_heuristic_and_exhaustive_search_give_the_same_frames)
{
  assert_settings_agree ("style.onnx", "algo-search=heuristic",
      "algo-search=exhaustive", 4);
}

GST_END_TEST;

GST_START_TEST (test_replayed_cuda_graph_gives_the_frames_of_the_steps)
{
  /* 11 frames: two full batches and a padded one, all replayed */
  assert_settings_agree ("unet.onnx", "cuda-graph=false", "cuda-graph=true",
      11);
}

GST_END_TEST;

GST_START_TEST (test_a_short_batch_on_a_plan_of_its_own_gives_the_same_frames)
{
  /* without padding the last 2 frames get a plan of their own, which
   * reads the weights the first plan uploaded (after the exhaustive
   * search's probe handed them over) */
  assert_settings_agree ("style.onnx", "pad-mode=repeat-last",
      "pad-mode=none algo-search=exhaustive", 6);
  assert_settings_agree ("classifier.onnx", "pad-mode=repeat-last",
      "pad-mode=none algo-search=heuristic", 6);
}

GST_END_TEST;

GST_START_TEST (test_batches_in_flight_give_the_frames_of_one_at_a_time)
{
  /* 3 in flight: one uploads while one computes and one downloads; 13
   * frames end on a padded batch. The classifier's tensors come back per
   * slot too. */
  assert_settings_agree ("unet.onnx", "max-inflight=1", "max-inflight=3", 13);
  assert_settings_agree ("superres.onnx", "max-inflight=1",
      "max-inflight=3", 13);
  assert_settings_agree ("classifier.onnx", "max-inflight=1",
      "max-inflight=3", 13);
}

GST_END_TEST;

/* 16 frames of 3840x2160 through 32 channels are 4.2e9 elements, past
 * the 2^31 cuDNN takes in a tensor: the batch of 16 convolves them in
 * calls of a few frames, which must give what 16 batches of one give. */
GST_START_TEST (test_a_4k_batch_past_cudnns_tensor_limit_gives_every_frame)
{
  gchar *m = model_prop ("ops-wide-conv.onnx");
  gchar *one = g_strdup_printf ("%s batch=1 algo-search=heuristic", m);
  gchar *all = g_strdup_printf ("%s batch=16 algo-search=heuristic", m);
  GPtrArray *x = run_sized (one, "cuda", 16, 3840, 2160);
  GPtrArray *y = run_sized (all, "cuda", 16, 3840, 2160);
  guint i;

  for (i = 0; i < x->len; i++) {
    GstBatchMemoryMeta *meta =
        gst_buffer_get_batch_memory_meta (g_ptr_array_index (y, i));
    fail_unless_equals_int (meta->batch_size, 16);
    assert_same_results (g_ptr_array_index (x, i), g_ptr_array_index (y, i),
        "4K, batch 16 against batch 1");
  }
  g_ptr_array_unref (x);
  g_ptr_array_unref (y);
  g_free (one);
  g_free (all);
  g_free (m);
}

GST_END_TEST;

/* Whether the CUDA backend opens on device @id. */
static gboolean
have_device (gint id)
{
  gboolean fallback;
  CbiEngine *e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CUDA,
      id, 0, &fallback, NULL);

  cbi_engine_free (e);
  return e != NULL;
}

/* One element's run in its own thread: @data is its properties; returns
 * its outputs. */
static gpointer
run_in_a_thread (gpointer data)
{
  return run (data, "cuda", 12);
}

GST_START_TEST (test_two_elements_at_once_share_nothing)
{
  gchar *model = model_prop ("unet.onnx");
  gchar *props[2];
  GThread *threads[2];
  GPtrArray *outs[2], *cpu;
  int devices = 0;
  guint t, i;

  /* on two GPUs where there are two, else both on the one */
  devices = have_device (1) ? 2 : 1;
  for (t = 0; t < 2; t++)
    props[t] = g_strdup_printf ("%s batch=4 device-id=%d", model,
        devices > 1 ? (int) t : 0);
  cpu = run (props[0], "cpu", 12);
  for (t = 0; t < 2; t++)
    threads[t] = g_thread_new ("element", run_in_a_thread, props[t]);
  for (t = 0; t < 2; t++)
    outs[t] = g_thread_join (threads[t]);
  for (t = 0; t < 2; t++) {
    for (i = 0; i < cpu->len; i++)
      assert_same_results (g_ptr_array_index (cpu, i),
          g_ptr_array_index (outs[t], i), props[t]);
    g_ptr_array_unref (outs[t]);
    g_free (props[t]);
  }
  g_ptr_array_unref (cpu);
  g_free (model);
}

GST_END_TEST;

#ifdef HAVE_CUDA
/* The probe of a second device, in a child: why there is none, or NULL. */
static gchar *
no_second_device (void)
{
  return have_device (1) ? NULL : g_strdup ("one device");
}

/* CUDA binds a device to each thread: the application's thread that
 * warms the element up and stops it must find its own device after. */
GST_START_TEST (test_the_element_leaves_the_threads_device_alone)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGBx,width=64,"
      "height=48");
  int device = -1;

  fail_unless_equals_int (cudaSetDevice (1), cudaSuccess);
  g_object_set (e, "backend", 2 /* cuda */ , "device-id", 0, "batch", 4,
      "warmup-caps", caps, NULL);
  gst_caps_unref (caps);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (cudaGetDevice (&device), cudaSuccess);
  fail_unless_equals_int (device, 1);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (cudaGetDevice (&device), cudaSuccess);
  fail_unless_equals_int (device, 1);
  gst_object_unref (e);
}

GST_END_TEST;
#endif

static Suite *
cudabatchinfer_cuda_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-cuda");
  TCase *tc = tcase_create ("general");
  gchar *why G_GNUC_UNUSED;

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_cuda_gives_the_cpu_results_on_every_test_model);
  tcase_add_test (tc, test_cuda_scales_frames_as_the_cpu);
  tcase_add_test (tc, test_cuda_packs_and_unpacks_yuv420_as_the_cpu);
  tcase_add_test (tc, test_cuda_maps_a_probability_map_to_bytes_as_the_cpu);
  tcase_add_test (tc, test_cuda_batches_after_warmup_allocate_nothing);
  tcase_add_test (tc, test_cuda_tf32_passes_and_allocates_nothing_after);
  tcase_add_test (tc, test_cuda_fp16_and_bf16_pass_and_allocate_nothing_after);
  tcase_add_test (tc, test_cuda_matrix_products_run_in_each_precision);
  tcase_add_test (tc, test_cuda_fp16_overflow_fails_and_auto_takes_bf16);
  tcase_add_test (tc,
      test_heuristic_and_exhaustive_search_give_the_same_frames);
  tcase_add_test (tc, test_replayed_cuda_graph_gives_the_frames_of_the_steps);
  tcase_add_test (tc, test_batches_in_flight_give_the_frames_of_one_at_a_time);
  tcase_add_test (tc, test_two_elements_at_once_share_nothing);
  tcase_add_test (tc,
      test_a_short_batch_on_a_plan_of_its_own_gives_the_same_frames);
  tcase_add_test (tc,
      test_a_4k_batch_past_cudnns_tensor_limit_gives_every_frame);
#ifdef HAVE_CUDA
  why = cbi_test_probe_in_child (no_second_device);
  if (why == NULL)
    tcase_add_test (tc, test_the_element_leaves_the_threads_device_alone);
  else
    g_print ("SKIP test_the_element_leaves_the_threads_device_alone: "
        "needs two GPUs (%s)\n", why);
  g_free (why);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  gchar *why;

  gst_check_init (&argc, &argv);
  why = cbi_test_cuda_unavailable ();
  if (why) {
    g_print ("SKIP: the CUDA tests need an NVIDIA GPU: %s\n", why);
    g_free (why);
    return 77;
  }
  return gst_check_run_suite (cudabatchinfer_cuda_suite (),
      "cudabatchinfer-cuda", __FILE__);
}
