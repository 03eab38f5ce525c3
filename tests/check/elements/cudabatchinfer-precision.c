/* GStreamer cudabatchinfer element tests: the precision property and the
 * warm-up's accuracy check against a float32 run
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * bf16 runs on a CPU with bfloat16 arithmetic (AVX512-BF16 or AMX); on
 * another, each bf16 test asserts the refusal instead, and says so.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <math.h>
#include <string.h>

#include "cbibackend.h"
#include "cbiengine.h"

#define W 32
#define H 24
#define FRAME_DURATION (GST_SECOND / 30)

/* Whether the CPU backend runs bf16 here, as the engine decides it. */
static gboolean
cpu_has_bf16 (void)
{
  CbiBackend *cpu = cbi_backend_cpu_new (0, NULL);
  gboolean has;

  fail_unless (cpu != NULL);
  has = cbi_backend_has_precision (cpu, CBI_PRECISION_BF16, NULL);
  cpu->iface->free (cpu);
  if (!has)
    g_print ("this CPU has no bfloat16 arithmetic: the bf16 test asserts "
        "its refusal instead of running it\n");
  return has;
}

/* A harness around cudabatchinfer (backend=cpu) running
 * tests/models/@model (NULL: the default model) with @props, its
 * messages on @bus. */
static GstHarness *
precision_harness (const gchar * model, const gchar * props, GstBus ** bus)
{
  gchar *path = model ? g_build_filename (CBI_TEST_MODELS_DIR, model,
      NULL) : NULL;
  gchar *desc = g_strdup_printf ("cudabatchinfer backend=cpu %s%s%s %s",
      path ? "model=\"" : "", path ? path : "", path ? "\"" : "", props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstHarness *h;

  fail_unless (e != NULL, "could not make %s", desc);
  *bus = gst_bus_new ();
  gst_element_set_bus (e, *bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  g_free (desc);
  g_free (path);
  return h;
}

/* Asserts that cudabatchinfer (backend=cpu, the default model) with
 * @props fails READY->PAUSED with a RESOURCE SETTINGS error whose message
 * holds @what and @also (nullable). */
static void
assert_paused_fails (const gchar * props, const gchar * what,
    const gchar * also)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer backend=cpu %s", props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *m;
  GError *err = NULL;

  fail_unless (e != NULL, "could not make %s", desc);
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (m != NULL, "no error for %s", desc);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_SETTINGS), "%s", err->message);
  fail_unless (strstr (err->message, what) != NULL
      && (also == NULL || strstr (err->message, also) != NULL), "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (m);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  g_free (desc);
}

static void
precision_teardown (GstHarness * h, GstBus * bus)
{
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

/* A @w x @h frame of gradients, a different one per @index. */
static GstBuffer *
test_frame_sized (guint index, guint w, guint h)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, w * h * 3, NULL);
  GstMapInfo map;
  guint x, y;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      guint8 *p = map.data + (y * w + x) * 3;
      p[0] = (guint8) (x * 255 / (w - 1));
      p[1] = (guint8) (y * 255 / (h - 1));
      p[2] = (guint8) ((x * 7 + y * 11 + index * 40) & 0xff);
    }
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = index * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

static GstBuffer *
test_frame (guint index)
{
  return test_frame_sized (index, W, H);
}

/* Pushes @n frames of @w x @h and EOS; @ok: whether the element takes
 * them. */
static void
push_frames_sized (GstHarness * h, guint n, gboolean ok, guint w, guint ht)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=%u,"
      "height=%u,framerate=30/1", w, ht);
  guint i;

  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  for (i = 0; i < n; i++) {
    GstFlowReturn ret = gst_harness_push (h, test_frame_sized (i, w, ht));
    if (ok) {
      fail_unless_equals_int (ret, GST_FLOW_OK);
    } else if (ret != GST_FLOW_OK) {
      return;
    }
  }
  gst_harness_push_event (h, gst_event_new_eos ());
}

static void
push_frames (GstHarness * h, guint n, gboolean ok)
{
  push_frames_sized (h, n, ok, W, H);
}

/* The warm-up message on @bus (transfer full), or NULL. */
static GstStructure *
pop_warmup (GstBus * bus)
{
  GstMessage *m;
  GstStructure *s = NULL;

  while (s == NULL
      && (m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) != NULL) {
    if (gst_structure_has_name (gst_message_get_structure (m),
            "cudabatchinfer-warmup"))
      s = gst_structure_copy (gst_message_get_structure (m));
    gst_message_unref (m);
  }
  return s;
}

/* Asserts that under precision=auto the warm-up message @s took @low,
 * which passes its check, or float32 where @low was not clearly faster
 * on this machine (above CBI_ENGINE_AUTO_FASTER_PERCENT of its time,
 * which a bf16 as fast as float32 can be, or a little faster): then @low
 * is the one precision left, for that reason, with both median batch
 * times. */
static void
assert_auto_took (const GstStructure * s, const gchar * low)
{
  const gchar *took = gst_structure_get_string (s, "precision");
  const GValue *rejected = gst_structure_get_value (s, "precision-rejected");
  const GstStructure *r;
  guint64 t = 0, t32 = 0;

  if (g_strcmp0 (took, low) == 0) {
    fail_unless (rejected == NULL);
    return;
  }
  fail_unless_equals_string (took, "fp32");
  fail_unless (rejected != NULL && gst_value_array_get_size (rejected) == 1);
  r = gst_value_get_structure (gst_value_array_get_value (rejected, 0));
  fail_unless_equals_string (gst_structure_get_string (r, "precision"), low);
  fail_unless_equals_string (gst_structure_get_string (r, "reason"), "slower");
  fail_unless (!gst_structure_has_field (r, "output"));
  fail_unless (gst_structure_get_uint64 (r, "batch-time", &t)
      && gst_structure_get_uint64 (r, "fp32-batch-time", &t32));
  fail_unless (t32 > 0 && t * 100 > t32 * CBI_ENGINE_AUTO_FASTER_PERCENT,
      "%" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT, t, t32);
}

/* The error on @bus: asserts its domain and code, returns its message
 * (transfer full). */
static gchar *
pop_error (GstBus * bus, GQuark domain, gint code)
{
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *text;

  fail_unless (m != NULL, "no error message");
  gst_message_parse_error (m, &err, NULL);
  fail_unless (g_error_matches (err, domain, code), "%s", err->message);
  text = g_strdup (err->message);
  g_error_free (err);
  gst_message_unref (m);
  return text;
}

/* The accuracy structure of output @i in warm-up message @s. */
static const GstStructure *
accuracy_of (const GstStructure * s, guint i)
{
  const GValue *array = gst_structure_get_value (s, "accuracy");

  fail_unless (array != NULL, "no accuracy in %" GST_PTR_FORMAT, s);
  fail_unless (i < gst_value_array_get_size (array));
  return gst_value_get_structure (gst_value_array_get_value (array, i));
}

/* A copy of field @field of @e's stats, which must have it, in @v
 * (unset, of the field's type after) */
static void
stats_field (GstElement * e, const gchar * field, GValue * v)
{
  GstStructure *stats;
  const GValue *in;

  g_object_get (e, "stats", &stats, NULL);
  in = gst_structure_get_value (stats, field);
  fail_unless (in != NULL, "no %s in %" GST_PTR_FORMAT, field, stats);
  g_value_init (v, G_VALUE_TYPE (in));
  g_value_copy (in, v);
  gst_structure_free (stats);
}

static gdouble
stats_double (GstElement * e, const gchar * field)
{
  GValue v = G_VALUE_INIT;
  gdouble d;

  stats_field (e, field, &v);
  d = g_value_get_double (&v);
  g_value_unset (&v);
  return d;
}

/* (transfer none): an interned copy of string @field of the stats */
static const gchar *
stats_string (GstElement * e, const gchar * field)
{
  GValue v = G_VALUE_INIT;
  const gchar *str;

  stats_field (e, field, &v);
  str = g_intern_string (g_value_get_string (&v));
  g_value_unset (&v);
  return str;
}

static guint
stats_uint (GstElement * e, const gchar * field)
{
  GValue v = G_VALUE_INIT;
  guint u;

  stats_field (e, field, &v);
  u = g_value_get_uint (&v);
  g_value_unset (&v);
  return u;
}

/* Asserts that every byte of @out is within @steps of @in's. */
static void
assert_bytes_within (GstBuffer * in, GstBuffer * out, guint steps)
{
  GstMapInfo a, b;
  gsize k;

  fail_unless (gst_buffer_map (in, &a, GST_MAP_READ));
  fail_unless (gst_buffer_map (out, &b, GST_MAP_READ));
  fail_unless_equals_uint64 (a.size, b.size);
  for (k = 0; k < a.size; k++)
    if (ABS ((gint) a.data[k] - (gint) b.data[k]) > (gint) steps)
      break;
  fail_unless (k == a.size, "byte %" G_GSIZE_FORMAT ": %u, not %u", k,
      k < a.size ? b.data[k] : 0, k < a.size ? a.data[k] : 0);
  gst_buffer_unmap (out, &b);
  gst_buffer_unmap (in, &a);
}

/* Asserts that precision=bf16 fails READY->PAUSED on this CPU, saying
 * why. */
/* Runs @n frames of @w x @ht through @model with @props on a harness
 * (@h, its messages on @bus: the caller tears them down). Returns the
 * warm-up message (transfer full). */
static GstStructure *
run_frames (const gchar * model, const gchar * props, guint n, guint w,
    guint ht, GstHarness ** h, GstBus ** bus)
{
  GstStructure *s;
  guint i;

  *h = precision_harness (model, props, bus);
  push_frames_sized (*h, n, TRUE, w, ht);
  for (i = 0; i < n; i++)
    gst_buffer_unref (gst_harness_pull (*h));
  s = pop_warmup (*bus);
  fail_unless (s != NULL, "no warm-up message");
  return s;
}

static void
assert_bf16_refused (void)
{
  assert_paused_fails ("precision=bf16", "no bfloat16 arithmetic", NULL);
}

GST_START_TEST (test_fp32_is_the_default_and_its_warmup_checks_nothing)
{
  GstBus *bus;
  GstHarness *h = precision_harness (NULL, "batch=2", &bus);
  GstStructure *s;
  gint precision = -1;
  guint i;

  g_object_get (h->element, "precision", &precision, NULL);
  fail_unless_equals_int (precision, 0);
  push_frames (h, 2, TRUE);
  for (i = 0; i < 2; i++)
    gst_buffer_unref (gst_harness_pull (h));
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "fp32");
  fail_unless (!gst_structure_has_field (s, "accuracy"));
  fail_unless (!gst_structure_has_field (s, "precision-rejected"));
  fail_unless (stats_double (h->element, "precision-relative-error") == -1.0);
  gst_structure_free (s);
  precision_teardown (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_fp16_and_tf32_on_the_cpu_fail_saying_what_it_has)
{
  assert_paused_fails ("precision=fp16", "fp16", "runs fp32");
  assert_paused_fails ("precision=tf32", "tf32", "runs fp32");
}

GST_END_TEST;

GST_START_TEST (test_bf16_superres_passes_and_allocates_nothing_after)
{
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  const GstStructure *a;
  gdouble psnr = 0.0, rel = 1.0;
  guint i;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    return;
  }
  h = precision_harness ("superres.onnx", "batch=4 precision=bf16", &bus);
  /* 5 frames: a full batch, then one padded from 1 to 4 */
  push_frames (h, 5, TRUE);
  for (i = 0; i < 5; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (out);
    fail_unless (m != NULL && m->warmed_up && !m->replanned);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    gst_buffer_unref (out);
  }
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "bf16");
  a = accuracy_of (s, 0);
  fail_unless (gst_structure_get_double (a, "psnr", &psnr));
  fail_unless (gst_structure_get_double (a, "relative-error", &rel));
  /* a quarter of a byte's step on average at most, a few steps at worst */
  fail_unless (psnr > 40.0, "PSNR %g", psnr);
  fail_unless (rel <= 0.05, "relative error %g", rel);
  fail_unless_equals_string (gst_structure_get_string (a, "output"), "output");
  fail_unless (stats_double (h->element, "precision-relative-error") == rel);
  /* both convolutions: the wide plan takes the image's too */
  fail_unless_equals_int (stats_uint (h->element, "low-precision-ops"), 2);
  fail_unless (rel > 0.0, "bfloat16 changed nothing");
  gst_structure_free (s);
  precision_teardown (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_bf16_classifier_scores_report_top1_agreement)
{
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  const GstStructure *a;
  gdouble top1 = -1.0, rel = 0.0;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    return;
  }
  /* 320x240: its second convolution computes enough for bfloat16 */
  s = run_frames ("classifier.onnx", "batch=2 precision=bf16", 2, 320, 240,
      &h, &bus);
  a = accuracy_of (s, 0);
  fail_unless (gst_structure_get_double (a, "top1-agreement", &top1));
  /* two frames: none, one or both agree */
  fail_unless (top1 == 0.0 || top1 == 0.5 || top1 == 1.0, "%g", top1);
  fail_unless (gst_structure_get_double (a, "relative-error", &rel));
  fail_unless (rel > 0.0 && rel < 0.05, "%g", rel);
  fail_unless (!gst_structure_has_field (a, "psnr"));
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "bf16");
  gst_structure_free (s);
  precision_teardown (h, bus);
}

GST_END_TEST;

/* fp16-overflow.onnx gives values past 72000, past fp16's largest:
 * bfloat16 has float32's range and holds them (tests/check/infer/
 * overflow.c fails fp16 on it) */
GST_START_TEST (test_bf16_holds_what_overflows_fp16)
{
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  const GstStructure *a;
  gdouble rel = 1.0;
  guint64 nonfinite = 1;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    return;
  }
  s = run_frames ("fp16-overflow.onnx", "batch=2 precision=bf16", 2, 64,
      48, &h, &bus);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "bf16");
  fail_unless_equals_int (stats_uint (h->element, "low-precision-ops"), 2);
  a = accuracy_of (s, 0);
  fail_unless (gst_structure_get_double (a, "relative-error", &rel));
  fail_unless (rel > 0.0 && rel < 0.01, "%g", rel);
  fail_unless (gst_structure_get_uint64 (a, "nonfinite-values", &nonfinite));
  fail_unless_equals_uint64 (nonfinite, 0);
  gst_structure_free (s);
  precision_teardown (h, bus);
}

GST_END_TEST;

/* bf16-cancel.onnx adds 100 to the image and takes it off again: bfloat16
 * rounds 100 + x to halves, an error of up to a quarter of the range */
GST_START_TEST (test_bf16_past_the_tolerance_fails_naming_the_output)
{
  GstBus *bus;
  GstHarness *h;
  gchar *text;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    return;
  }
  h = precision_harness ("bf16-cancel.onnx", "batch=2 precision=bf16", &bus);
  push_frames (h, 2, FALSE);
  text = pop_error (bus, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless (strstr (text, "bf16") && strstr (text, "output \"output\"")
      && strstr (text, "25.1 %") && strstr (text, "precision-tolerance (5 %)"),
      "%s", text);
  fail_unless (gst_harness_try_pull (h) == NULL);
  g_free (text);
  precision_teardown (h, bus);

  /* a tolerance past that error lets it through */
  h = precision_harness ("bf16-cancel.onnx",
      "batch=2 precision=bf16 precision-tolerance=0.3", &bus);
  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  gst_buffer_unref (gst_harness_pull (h));
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  fail_unless (fabs (stats_double (h->element, "precision-relative-error")
          - 64.0 / 255.0) < 1e-9);
  precision_teardown (h, bus);
}

GST_END_TEST;

/* bf16-narrow.onnx keeps 100 + x between two 1x1 convolutions that only
 * the wide bfloat16 plan runs in bfloat16: the check refuses that plan,
 * and the narrow one (its 3x3 convolution alone) passes; a tolerance past
 * the wide plan's error keeps the wide plan */
GST_START_TEST (test_bf16_that_fails_the_check_runs_on_fewer_convolutions)
{
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  GstBuffer *in = test_frame (0), *out;
  gdouble rel = 1.0;
  guint i;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    gst_buffer_unref (in);
    return;
  }
  h = precision_harness ("bf16-narrow.onnx", "batch=4 precision=bf16", &bus);
  push_frames (h, 4, TRUE);
  out = gst_harness_pull (h);
  for (i = 1; i < 4; i++)
    gst_buffer_unref (gst_harness_pull (h));
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "bf16");
  fail_unless (gst_structure_get_double (accuracy_of (s, 0), "relative-error",
          &rel));
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  fail_unless (rel <= 0.05, "relative error %g", rel);
  fail_unless_equals_int (stats_uint (h->element, "low-precision-ops"), 1);
  assert_bytes_within (in, out, 2);
  gst_buffer_unref (out);
  gst_structure_free (s);
  precision_teardown (h, bus);

  h = precision_harness ("bf16-narrow.onnx",
      "batch=4 precision=bf16 precision-tolerance=0.5", &bus);
  push_frames (h, 4, TRUE);
  for (i = 0; i < 4; i++)
    gst_buffer_unref (gst_harness_pull (h));
  fail_unless_equals_int (stats_uint (h->element, "low-precision-ops"), 4);
  fail_unless (stats_double (h->element, "precision-relative-error") > 0.05);
  precision_teardown (h, bus);
  gst_buffer_unref (in);
}

GST_END_TEST;

GST_START_TEST (test_auto_steps_back_to_fp32_when_bf16_fails_the_check)
{
  GstBus *bus;
  GstHarness *h = precision_harness ("bf16-cancel.onnx",
      "batch=2 precision=auto", &bus);
  gboolean has_bf16 = cpu_has_bf16 ();
  GstStructure *s;
  const GValue *rejected;
  GstBuffer *in = test_frame (0), *out;

  push_frames (h, 2, TRUE);
  out = gst_harness_pull (h);
  gst_buffer_unref (gst_harness_pull (h));
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "fp32");
  rejected = gst_structure_get_value (s, "precision-rejected");
  if (has_bf16) {
    const GstStructure *r;
    gdouble err = 0.0;
    fail_unless (rejected != NULL && gst_value_array_get_size (rejected) == 1);
    r = gst_value_get_structure (gst_value_array_get_value (rejected, 0));
    fail_unless_equals_string (gst_structure_get_string (r, "precision"),
        "bf16");
    fail_unless_equals_string (gst_structure_get_string (r, "output"),
        "output");
    fail_unless_equals_string (gst_structure_get_string (r, "reason"),
        "accuracy");
    fail_unless (!gst_structure_has_field (r, "batch-time"));
    fail_unless (gst_structure_get_double (r, "relative-error", &err)
        && err > 0.05, "%g", err);
  } else {
    fail_unless (rejected == NULL);
  }
  /* float32 gives the image back */
  assert_bytes_within (in, out, 1);
  gst_buffer_unref (in);
  gst_buffer_unref (out);
  gst_structure_free (s);
  precision_teardown (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_without_a_warmup_auto_runs_fp32_unchecked)
{
  GstBus *bus;
  GstHarness *h = precision_harness ("bf16-cancel.onnx",
      "batch=2 precision=auto warmup=false", &bus);
  GstBuffer *in = test_frame (1), *out;

  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  out = gst_harness_pull (h);
  fail_unless (pop_warmup (bus) == NULL);
  /* bfloat16 would put bytes up to a quarter of the range off: float32
   * gives each back within a step */
  assert_bytes_within (in, out, 1);
  gst_buffer_unref (in);
  gst_buffer_unref (out);
  precision_teardown (h, bus);
}

GST_END_TEST;

/* no-products.onnx (HardSigmoid of the image) has no convolution or
 * product: bfloat16 changes none of its ops */
GST_START_TEST (test_bf16_that_changes_nothing_runs_fp32_with_a_warning)
{
  GstBus *bus;
  GstHarness *h;
  GstMessage *m;
  GError *err = NULL;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    return;
  }
  h = precision_harness ("no-products.onnx", "batch=2 precision=bf16", &bus);
  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  gst_buffer_unref (gst_harness_pull (h));
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (m != NULL, "no warning");
  gst_message_parse_warning (m, &err, NULL);
  fail_unless (strstr (err->message, "fp32, not bf16") != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (m);
  fail_unless_equals_string (stats_string (h->element, "precision"), "fp32");
  fail_unless_equals_int (stats_uint (h->element, "low-precision-ops"), 0);
  precision_teardown (h, bus);
}

GST_END_TEST;

/* Under backend=auto (the element's default), @precision where the
 * backend that runs has it, else float32 with a warning. */
static void
assert_runs_or_warns (const gchar * precision)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer precision=%s batch=2",
      precision);
  gchar *not = g_strdup_printf ("fp32, not %s", precision);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_bus_new ();
  GstHarness *h;
  GstMessage *m;
  const gchar *backend, *ran;

  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  gst_buffer_unref (gst_harness_pull (h));
  backend = stats_string (h->element, "backend");
  ran = stats_string (h->element, "precision");
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  /* the CPU has neither */
  if (g_str_equal (backend, "cpu"))
    fail_unless_equals_string (ran, "fp32");
  if (g_str_equal (ran, "fp32")) {
    GError *err = NULL;
    fail_unless (m != NULL, "no warning");
    gst_message_parse_warning (m, &err, NULL);
    fail_unless (strstr (err->message, not) != NULL, "%s", err->message);
    g_error_free (err);
  } else {
    fail_unless_equals_string (ran, precision);
  }
  if (m)
    gst_message_unref (m);
  precision_teardown (h, bus);
  gst_object_unref (e);
  g_free (not);
  g_free (desc);
}

/* bf16-products.onnx: two MatMuls over the image's rows and a Gemm head
 * (transB), heavy enough at batch 8 for bfloat16 operands; the image's
 * frames and the scores both pass the check */
GST_START_TEST (test_bf16_matrix_products_pass_the_check)
{
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  gdouble rel = 1.0;
  guint i, j;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    return;
  }
  h = precision_harness ("bf16-products.onnx", "batch=8 precision=bf16", &bus);
  push_frames_sized (h, 9, TRUE, 64, 48);
  for (i = 0; i < 9; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (out);
    fail_unless (m != NULL && m->warmed_up);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    gst_buffer_unref (out);
  }
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "bf16");
  fail_unless_equals_int (stats_uint (h->element, "low-precision-ops"), 3);
  for (j = 0; j < 2; j++) {
    const GstStructure *a = accuracy_of (s, j);
    fail_unless (gst_structure_get_double (a, "relative-error", &rel));
    fail_unless (rel > 0.0 && rel < 0.02, "output %u: %g", j, rel);
  }
  fail_unless (gst_structure_has_field (accuracy_of (s, 1), "top1-agreement"));
  gst_structure_free (s);
  precision_teardown (h, bus);
}

GST_END_TEST;

/* "@props precision-check-location=<tests/models/@file>" (transfer
 * full) */
static gchar *
with_check_location (const gchar * props, const gchar * file)
{
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR, file, NULL);
  gchar *all = g_strdup_printf ("%s precision-check-location=\"%s\"",
      props, path);

  g_free (path);
  return all;
}

/* precision-check-location: bf16-cancel.onnx loses nothing on black
 * frames (100 + 0 is exact in bfloat16): given a black picture, the
 * check passes where the test frames fail it by 25.1 %; the picture is
 * 80x60, scaled to the stream's 32x24 */
GST_START_TEST (test_check_frames_from_a_picture_replace_the_test_frames)
{
  gchar *png = g_build_filename (CBI_TEST_MODELS_DIR, "black.png", NULL);
  gchar *props = with_check_location ("batch=2 precision=bf16", "black.png");
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  guint frames = 0;
  gchar *location = NULL;

  if (!cpu_has_bf16 ()) {
    assert_bf16_refused ();
    g_free (props);
    g_free (png);
    return;
  }
  h = precision_harness ("bf16-cancel.onnx", props, &bus);
  g_object_get (h->element, "precision-check-location", &location, NULL);
  fail_unless_equals_string (location, png);
  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  gst_buffer_unref (gst_harness_pull (h));
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_uint (s, "check-frames", &frames));
  /* one picture, repeated to fill the batch */
  fail_unless_equals_int (frames, 1);
  fail_unless_equals_string (gst_structure_get_string (s, "precision"), "bf16");
  fail_unless (stats_double (h->element, "precision-relative-error") == 0.0);
  gst_structure_free (s);
  precision_teardown (h, bus);
  g_free (location);
  g_free (props);
  g_free (png);
}

GST_END_TEST;

/* Whether cudabatchinfer (backend=cpu) with nan-unless-black.onnx (NaN
 * for any input value but 0) and @props warns of NaN values at the
 * warm-up. */
static gboolean
warns_of_nan (const gchar * props)
{
  GstBus *bus;
  GstHarness *h = precision_harness ("nan-unless-black.onnx", props, &bus);
  GstMessage *m;
  gboolean nan = FALSE;

  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  gst_buffer_unref (gst_harness_pull (h));
  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    gst_message_parse_warning (m, &err, NULL);
    nan = nan || strstr (err->message, "NaN") != NULL;
    g_error_free (err);
    gst_message_unref (m);
  }
  precision_teardown (h, bus);
  return nan;
}

/* the same without bfloat16, on any CPU: the test frames give NaN, the
 * black picture none */
GST_START_TEST (test_check_frames_are_what_the_warmup_runs_on_any_cpu)
{
  gchar *props = with_check_location ("batch=2", "black.png");

  fail_unless (warns_of_nan ("batch=2"));
  fail_if (warns_of_nan (props));
  g_free (props);
}

GST_END_TEST;

/* a video gives its first frames, up to the batch: the check on colour
 * bars runs superres in bf16 within the tolerance */
GST_START_TEST (test_check_frames_from_a_video_fill_the_batch)
{
  gchar *props = with_check_location ("batch=4 precision=auto",
      "smpte-6.ogv");
  GstBus *bus;
  GstHarness *h;
  GstStructure *s;
  guint frames = 0, i;

  h = precision_harness ("superres.onnx", props, &bus);
  push_frames (h, 4, TRUE);
  for (i = 0; i < 4; i++)
    gst_buffer_unref (gst_harness_pull (h));
  s = pop_warmup (bus);
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_uint (s, "check-frames", &frames));
  fail_unless_equals_int (frames, 4);
  /* auto's check ran on them, and bf16 passed it */
  if (cpu_has_bf16 ())
    assert_auto_took (s, "bf16");
  gst_structure_free (s);
  precision_teardown (h, bus);
  g_free (props);
}

GST_END_TEST;

/* a file that is not there, or has no video (the model itself): the
 * warm-up fails with the decoder's error, naming the file */
GST_START_TEST (test_check_frames_that_cannot_be_read_fail_the_warmup)
{
  gchar *onnx = g_build_filename (CBI_TEST_MODELS_DIR, "conv-relu.onnx",
      NULL);
  const gchar *locations[2] = { "/nonexistent/check.png", onnx };
  const GQuark domains[2] = { GST_RESOURCE_ERROR, GST_STREAM_ERROR };
  guint i;

  for (i = 0; i < 2; i++) {
    gchar *props = g_strdup_printf ("batch=2 precision-check-location=\"%s\"",
        locations[i]);
    GstBus *bus;
    GstHarness *h = precision_harness (NULL, props, &bus);
    GstMessage *m;
    GError *err = NULL;
    GstBuffer *out;
    gboolean pulled;

    push_frames (h, 2, FALSE);
    m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    out = gst_harness_try_pull (h);
    pulled = out != NULL;
    if (out)
      gst_buffer_unref (out);
    /* the element gone before anything is asserted: a failure leaves no
     * pipeline behind for the tests after it (valgrind runs them in one
     * process) */
    precision_teardown (h, bus);
    g_free (props);
    fail_unless (m != NULL, "no error for %s", locations[i]);
    gst_message_parse_error (m, &err, NULL);
    gst_message_unref (m);
    fail_unless (err->domain == domains[i], "%s: %s", locations[i],
        err->message);
    fail_unless (strstr (err->message, "precision-check-location") != NULL
        && strstr (err->message, locations[i]) != NULL, "%s", err->message);
    fail_if (pulled);
    g_error_free (err);
  }
  g_free (onnx);
}

GST_END_TEST;

/* warmup=false: nothing reads the check frames, and a precision the
 * backend backend=auto took lacks runs fp32: both said at READY->PAUSED */
GST_START_TEST (test_without_warmup_what_is_not_applied_is_warned_of)
{
  GstElement *e = gst_parse_launch ("cudabatchinfer batch=2 warmup=false "
      "precision=fp16 precision-check-location=/nonexistent/check.png", NULL);
  GstBus *bus = gst_bus_new ();
  GstHarness *h;
  GstMessage *m;
  gboolean check = FALSE, fp32 = FALSE;

  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  push_frames (h, 2, TRUE);
  gst_buffer_unref (gst_harness_pull (h));
  gst_buffer_unref (gst_harness_pull (h));
  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)) != NULL) {
    GError *err = NULL;
    gst_message_parse_warning (m, &err, NULL);
    check = check || strstr (err->message, "precision-check-location") != NULL;
    fp32 = fp32 || strstr (err->message, "fp32, not fp16") != NULL;
    g_error_free (err);
    gst_message_unref (m);
  }
  fail_unless (check, "no warning of the check frames");
  if (g_str_equal (stats_string (h->element, "backend"), "cpu"))
    fail_unless (fp32, "no warning of fp32");
  precision_teardown (h, bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* tf32 is a GPU's: where backend=auto runs on a backend without it (the
 * CPU, a GPU older than Ampere), float32 with a warning; so is fp16,
 * which no CPU of this build runs */
GST_START_TEST (test_gpu_precisions_under_backend_auto_run_fp32_without)
{
  assert_runs_or_warns ("tf32");
  assert_runs_or_warns ("fp16");
}

GST_END_TEST;

GST_START_TEST (test_precision_properties_read_back_as_set)
{
  GstElement *e = gst_element_factory_make ("cudabatchinfer", NULL);
  gdouble tolerance = 0.0;
  gint precision = -1;

  g_object_get (e, "precision-tolerance", &tolerance, NULL);
  fail_unless (tolerance == 0.05, "%g", tolerance);
  gst_util_set_object_arg (G_OBJECT (e), "precision", "bf16");
  g_object_set (e, "precision-tolerance", 0.01, NULL);
  g_object_get (e, "precision", &precision, "precision-tolerance",
      &tolerance, NULL);
  fail_unless_equals_int (precision, CBI_PRECISION_BF16);
  fail_unless (tolerance == 0.01);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
precision_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-precision");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_fp32_is_the_default_and_its_warmup_checks_nothing);
  tcase_add_test (tc, test_fp16_and_tf32_on_the_cpu_fail_saying_what_it_has);
  tcase_add_test (tc, test_bf16_superres_passes_and_allocates_nothing_after);
  tcase_add_test (tc, test_bf16_classifier_scores_report_top1_agreement);
  tcase_add_test (tc, test_bf16_holds_what_overflows_fp16);
  tcase_add_test (tc, test_bf16_matrix_products_pass_the_check);
  tcase_add_test (tc, test_check_frames_from_a_picture_replace_the_test_frames);
  tcase_add_test (tc, test_check_frames_from_a_video_fill_the_batch);
  tcase_add_test (tc, test_check_frames_are_what_the_warmup_runs_on_any_cpu);
  tcase_add_test (tc, test_check_frames_that_cannot_be_read_fail_the_warmup);
  tcase_add_test (tc, test_bf16_past_the_tolerance_fails_naming_the_output);
  tcase_add_test (tc,
      test_bf16_that_fails_the_check_runs_on_fewer_convolutions);
  tcase_add_test (tc, test_auto_steps_back_to_fp32_when_bf16_fails_the_check);
  tcase_add_test (tc, test_without_a_warmup_auto_runs_fp32_unchecked);
  tcase_add_test (tc, test_bf16_that_changes_nothing_runs_fp32_with_a_warning);
  tcase_add_test (tc, test_gpu_precisions_under_backend_auto_run_fp32_without);
  tcase_add_test (tc, test_without_warmup_what_is_not_applied_is_warned_of);
  tcase_add_test (tc, test_precision_properties_read_back_as_set);
  return s;
}

GST_CHECK_MAIN (precision);
