/* GStreamer cudabatchinfer tests: the modelinfo reader, and tensor outputs
 * where the runtime has no upstream GstTensorMeta (GStreamer before 1.26)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built everywhere. Where the build finds gstreamer-analytics-1.0 >= 1.26
 * it expects the element to find GstTensorMeta at run time instead;
 * cudabatchinfer-upstream-tensormeta.c then reads it back with upstream's
 * API.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/cudabatchinfer/gstbatchtensormeta.h>
#include <string.h>

#include "gstcbimodelinfo.h"
#include "cbimodeldir.h"

#define CAPS_RGB "video/x-raw,format=RGB,width=32,height=24,framerate=30/1"

#define MODELINFO_CLASSIFIER \
  "# written by hand, in the format of upstream's modelinfo-generator.py\n" \
  "[modelinfo]\n" \
  "version=1.0\n" \
  "group-id=test-classifier\n" \
  "\n" \
  "[input]\n" \
  "id=image-in\n" \
  "type=float32\n" \
  "dir=input\n" \
  "dims=-1,3,-1,-1\n" \
  "ranges=0.0,1.0\n" \
  "\n" \
  "[probabilities]\n" \
  "id=classification-generic-softmaxed\n" \
  "type=float32\n" \
  "dir=output\n" \
  "dims=-1,10\n" \
  "dims-order=row-major\n"

/* The id the reader gives output @name of @kf, which must succeed. */
static const gchar *
output_id (GKeyFile * kf, const gchar * name)
{
  GError *error = NULL;
  GQuark id = 0;

  fail_unless (gst_cbi_modelinfo_output_id (kf, name, &id, &error), "%s: %s",
      name, error ? error->message : "");
  fail_unless (error == NULL);
  return g_quark_to_string (id);
}

GST_START_TEST (test_modelinfo_ids_come_from_the_section_named_after_the_output)
{
  CbiModelDir md;
  GKeyFile *kf;
  GError *error = NULL;
  gchar *path = NULL;

  cbi_model_dir_init (&md, "classifier.onnx", "classifier.onnx.modelinfo",
      MODELINFO_CLASSIFIER);
  kf = gst_cbi_modelinfo_load (md.model, &path, &error);
  fail_unless (kf != NULL, "%s", error ? error->message : "");
  fail_unless_equals_string (path, md.modelinfo);
  fail_unless_equals_string (output_id (kf, "probabilities"),
      "classification-generic-softmaxed");
  /* an output the file says nothing of, and the header's own section */
  fail_unless_equals_string (output_id (kf, "logits"), "logits");
  fail_unless_equals_string (output_id (kf, "modelinfo"), "modelinfo");
  /* no file: every output by its name */
  fail_unless_equals_string (output_id (NULL, "probabilities"),
      "probabilities");
  g_key_file_unref (kf);
  g_free (path);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

GST_START_TEST (test_modelinfo_is_found_where_upstream_looks_for_it)
{
  CbiModelDir md;
  GKeyFile *kf;
  GError *error = NULL;
  gchar *path = NULL, *preferred;

  /* <model without .onnx>.modelinfo */
  cbi_model_dir_init (&md, "classifier.onnx", "classifier.modelinfo",
      MODELINFO_CLASSIFIER);
  kf = gst_cbi_modelinfo_load (md.model, &path, &error);
  fail_unless (kf != NULL, "%s", error ? error->message : "");
  fail_unless_equals_string (path, md.modelinfo);
  g_key_file_unref (kf);
  g_free (path);

  /* <model>.modelinfo comes first */
  preferred = g_strconcat (md.model, ".modelinfo", NULL);
  fail_unless (g_file_set_contents (preferred, "[modelinfo]\nversion=1.0\n"
          "[probabilities]\nid=first\n", -1, NULL));
  kf = gst_cbi_modelinfo_load (md.model, &path, &error);
  fail_unless (kf != NULL && error == NULL);
  fail_unless_equals_string (path, preferred);
  fail_unless_equals_string (output_id (kf, "probabilities"), "first");
  g_key_file_unref (kf);
  g_free (path);
  fail_unless_equals_int (g_remove (preferred), 0);
  g_free (preferred);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

GST_START_TEST (test_no_modelinfo_file_is_no_error)
{
  CbiModelDir md;
  GError *error = NULL;
  gchar *path = (gchar *) "unset";

  cbi_model_dir_init (&md, "classifier.onnx", NULL, NULL);
  fail_unless (gst_cbi_modelinfo_load (md.model, &path, &error) == NULL);
  fail_unless (error == NULL && path == NULL);
  /* a name without an extension, in a folder with a dot */
  fail_unless (gst_cbi_modelinfo_load ("/nonexistent.d/model", NULL,
          &error) == NULL);
  fail_unless (error == NULL);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

/* Loads @text as the modelinfo of a model and expects it refused with
 * @code of GKeyFile's errors, in a message naming the file and holding
 * @needle. */
static void
assert_modelinfo_refused (const gchar * text, gint code, const gchar * needle)
{
  CbiModelDir md;
  GError *error = NULL;
  gchar *path = NULL;

  cbi_model_dir_init (&md, "classifier.onnx", "classifier.onnx.modelinfo",
      text);
  fail_unless (gst_cbi_modelinfo_load (md.model, &path, &error) == NULL,
      "taken: %s", text);
  fail_unless (error != NULL);
  fail_unless (g_error_matches (error, G_KEY_FILE_ERROR, code),
      "%s: %s", text, error->message);
  fail_unless (g_str_has_prefix (error->message, md.modelinfo), "%s",
      error->message);
  fail_unless (strstr (error->message, needle) != NULL, "'%s' lacks '%s'",
      error->message, needle);
  fail_unless_equals_string (path, md.modelinfo);
  g_error_free (error);
  g_free (path);
  cbi_model_dir_clear (&md);
}

GST_START_TEST (test_malformed_modelinfo_files_are_refused_with_the_reason)
{
  assert_modelinfo_refused ("this is not a key file\n",
      G_KEY_FILE_ERROR_PARSE, "");
  assert_modelinfo_refused ("[probabilities]\nid=x\n",
      G_KEY_FILE_ERROR_KEY_NOT_FOUND, "no [modelinfo] section");
  assert_modelinfo_refused ("[modelinfo]\ngroup-id=g\n",
      G_KEY_FILE_ERROR_KEY_NOT_FOUND, "no [modelinfo] section");
  assert_modelinfo_refused ("[modelinfo]\nversion=2.0\n",
      G_KEY_FILE_ERROR_INVALID_VALUE, "version 2.0 is not supported");
  assert_modelinfo_refused ("[modelinfo]\nversion=1\n",
      G_KEY_FILE_ERROR_INVALID_VALUE, "not Major.Minor");
  assert_modelinfo_refused ("[modelinfo]\nversion=1.0.2\n",
      G_KEY_FILE_ERROR_INVALID_VALUE, "not Major.Minor");
  assert_modelinfo_refused ("[modelinfo]\nversion=one.zero\n",
      G_KEY_FILE_ERROR_INVALID_VALUE, "not Major.Minor");
}

GST_END_TEST;

GST_START_TEST (test_a_newer_minor_version_is_taken)
{
  CbiModelDir md;
  GKeyFile *kf;

  cbi_model_dir_init (&md, "classifier.onnx", "classifier.onnx.modelinfo",
      "[modelinfo]\nversion=1.7\n[probabilities]\nid=p\n");
  kf = gst_cbi_modelinfo_load (md.model, NULL, NULL);
  fail_unless (kf != NULL);
  fail_unless_equals_string (output_id (kf, "probabilities"), "p");
  g_key_file_unref (kf);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

/* Expects the section [out] of @text refused for output "out", with a
 * message holding @needle. */
static void
assert_section_refused (const gchar * section, const gchar * needle)
{
  gchar *text = g_strconcat ("[modelinfo]\nversion=1.0\n[out]\n", section,
      NULL);
  GKeyFile *kf = g_key_file_new ();
  GError *error = NULL;
  GQuark id = 0;

  fail_unless (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, NULL));
  fail_if (gst_cbi_modelinfo_output_id (kf, "out", &id, &error), "taken: %s",
      text);
  fail_unless (error != NULL);
  fail_unless (strstr (error->message, needle) != NULL, "'%s' lacks '%s'",
      error->message, needle);
  fail_unless_equals_int (id, 0);
  g_error_free (error);
  g_key_file_unref (kf);
  g_free (text);
}

GST_START_TEST (test_sections_that_contradict_the_output_are_refused)
{
  assert_section_refused ("id=x\ndir=input\n", "dir=input");
  assert_section_refused ("id=x\ntype=uint8\n", "type=uint8");
  assert_section_refused ("id=x\ndims-order=col-major\n",
      "dims-order=col-major");
  assert_section_refused ("type=float32\ndir=output\n", "[out] has no id");
  assert_section_refused ("id=\n", "[out] has no id");
}

GST_END_TEST;

/* The first message of @types on @bus, or %NULL; those before it are
 * dropped here, not by gst_bus_pop_filtered (), which drops them with the
 * bus locked: a message holding the last reference to the harness's pad
 * would post the pad's unlinking to that bus from there, and wait for the
 * lock forever (GStreamer 1.26). */
static GstMessage *
pop_message (GstBus * bus, GstMessageType types)
{
  GstMessage *msg;

  while ((msg = gst_bus_pop (bus)) && !(GST_MESSAGE_TYPE (msg) & types))
    gst_message_unref (msg);
  return msg;
}

/* Runs tests/models/classifier.onnx (or @model) on 3 frames, batch 2;
 * gives the element's bus, the state change's result and the outputs. */
static GstStateChangeReturn
run_classifier (const gchar * model, GstBus * bus, GstBuffer * outs[3])
{
  gchar *desc = g_strdup_printf ("cudabatchinfer model=\"%s\" batch=2",
      model);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstStateChangeReturn ret;
  GstHarness *h;
  guint i;

  fail_unless (e != NULL, "%s", desc);
  gst_element_set_bus (e, bus);
  /* the start alone first: where it fails, no harness */
  ret = gst_element_set_state (e, GST_STATE_PAUSED);
  gst_element_set_state (e, GST_STATE_NULL);
  if (ret != GST_STATE_CHANGE_FAILURE) {
    h = gst_harness_new_with_element (e, "sink", "src");
    gst_harness_set_src_caps_str (h, CAPS_RGB);
    for (i = 0; i < 3; i++) {
      GstBuffer *buf = gst_buffer_new_allocate (NULL, 32 * 24 * 3, NULL);
      gst_buffer_memset (buf, 0, 40 * i, 32 * 24 * 3);
      GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    }
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    for (i = 0; i < 3; i++)
      outs[i] = gst_harness_pull (h);
    gst_harness_teardown (h);
  }
  gst_object_unref (e);
  g_free (desc);
  return ret;
}

GST_START_TEST
    (test_tensor_outputs_carry_upstream_tensor_meta_only_where_it_exists) {
  gchar *model = g_build_filename (CBI_TEST_MODELS_DIR, "classifier.onnx",
      NULL);
  GstBus *bus = gst_bus_new ();
  GstBuffer *outs[3] = { NULL };
  guint i;

  fail_unless_equals_int (run_classifier (model, bus, outs),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < 3; i++) {
    GstBatchTensorMeta *m = gst_buffer_get_batch_tensor_meta (outs[i]);
    const GstBatchTensor *t;
    const gfloat *p;

    fail_unless (m != NULL && m->n_tensors == 1);
    t = gst_batch_tensor_meta_get_tensor (m, "probabilities");
    fail_unless (t != NULL && t->n_dims == 2 && t->dims[1] == 10);
    p = gst_batch_tensor_meta_get_data (m, t);
    fail_unless (p[0] >= 0.0f && p[0] <= 1.0f);
  }
#ifdef HAVE_GST_ANALYTICS_TENSOR_META
  /* the element registered it, and every frame carries one */
  fail_unless (g_type_from_name ("GstTensorMetaAPI") != 0);
  for (i = 0; i < 3; i++)
    fail_unless (gst_buffer_get_meta (outs[i],
            g_type_from_name ("GstTensorMetaAPI")) != NULL);
#else
  /* GStreamer 1.22: no library has it, and nothing registered its type */
  fail_unless (g_type_from_name ("GstTensorMetaAPI") == 0);
  fail_unless_equals_int (gst_buffer_get_n_meta (outs[0],
          GST_BATCH_TENSOR_META_API_TYPE), 1);
#endif
  fail_unless (pop_message (bus, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)
      == NULL);
  for (i = 0; i < 3; i++)
    gst_buffer_unref (outs[i]);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  g_free (model);
}

GST_END_TEST;

/* A malformed modelinfo beside the model: refused, with its name, where
 * the element reads it (it has GstTensorMeta to give ids to), and not
 * read at all where it does not. */
GST_START_TEST (test_a_malformed_modelinfo_is_refused_where_it_is_read)
{
  GstBus *bus = gst_bus_new ();
  GstBuffer *outs[3] = { NULL };
  GstStateChangeReturn ret;
  CbiModelDir md;
  guint i;

  cbi_model_dir_init (&md, "classifier.onnx", "classifier.onnx.modelinfo",
      "[modelinfo]\nversion=3.0\n");
  ret = run_classifier (md.model, bus, outs);
#ifdef HAVE_GST_ANALYTICS_TENSOR_META
  {
    GstMessage *msg = pop_message (bus, GST_MESSAGE_ERROR);
    GError *err = NULL;

    fail_unless_equals_int (ret, GST_STATE_CHANGE_FAILURE);
    fail_unless (msg != NULL);
    gst_message_parse_error (msg, &err, NULL);
    fail_unless (strstr (err->message, md.modelinfo) != NULL, "%s",
        err->message);
    fail_unless (strstr (err->message, "version 3.0") != NULL, "%s",
        err->message);
    g_error_free (err);
    gst_message_unref (msg);
  }
#else
  fail_unless_equals_int (ret, GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < 3; i++)
    fail_unless (gst_buffer_get_batch_tensor_meta (outs[i]) != NULL);
#endif
  for (i = 0; i < 3; i++)
    gst_clear_buffer (&outs[i]);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  cbi_model_dir_clear (&md);
}

GST_END_TEST;

static Suite *
cudabatchinfer_tensormeta_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-tensormeta");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_modelinfo_ids_come_from_the_section_named_after_the_output);
  tcase_add_test (tc, test_modelinfo_is_found_where_upstream_looks_for_it);
  tcase_add_test (tc, test_no_modelinfo_file_is_no_error);
  tcase_add_test (tc,
      test_malformed_modelinfo_files_are_refused_with_the_reason);
  tcase_add_test (tc, test_a_newer_minor_version_is_taken);
  tcase_add_test (tc, test_sections_that_contradict_the_output_are_refused);
  tcase_add_test (tc,
      test_tensor_outputs_carry_upstream_tensor_meta_only_where_it_exists);
  tcase_add_test (tc, test_a_malformed_modelinfo_is_refused_where_it_is_read);
  return s;
}

GST_CHECK_MAIN (cudabatchinfer_tensormeta);
