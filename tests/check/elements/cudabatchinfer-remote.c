/* GStreamer cudabatchinfer element tests: backend=remote against a KServe
 * v2 server (tests/remote/v2server.py: the standard library and
 * onnxruntime) that the tests start on 127.0.0.1 and stop
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where the test Python (CBI_TEST_PYTHON, the project's .venv) cannot
 * start the server, the program says why and exits 77, which meson
 * reports as skipped.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/cudabatchinfer/gstbatchmemorymeta.h>
#include <curl/curl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

#include "cbiengine.h"
#include "cbibackend.h"
#include "remote/cbiremote.h"

#define W 64
#define H 48
#define FRAME_DURATION (GST_SECOND / 30)

/* A server the test started: its process and URL. Spawned and reaped by
 * hand, not through GSubprocess: check forks a process per test, and
 * GLib's child watch thread would not be in it. */
typedef struct
{
  GPid pid;
  gchar *url;
} TestServer;

static size_t
discard (char *data, size_t size, size_t n, void *user_data)
{
  return size * n;
}

/* Whether GET @url answers 200 within a second. */
static gboolean
http_ok (const gchar * url)
{
  CURL *c = curl_easy_init ();
  long status = 0;
  CURLcode rc;

  curl_easy_setopt (c, CURLOPT_URL, url);
  curl_easy_setopt (c, CURLOPT_TIMEOUT_MS, 1000L);
  curl_easy_setopt (c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, discard);
  rc = curl_easy_perform (c);
  if (rc == CURLE_OK)
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup (c);
  return rc == CURLE_OK && status == 200;
}

/* Whether the server at @url says it is ready. */
static gboolean
http_ok_at (const gchar * url)
{
  gchar *ready = g_strconcat (url, "/v2/health/ready", NULL);
  gboolean ok = http_ok (ready);

  g_free (ready);
  return ok;
}

/* The first line the server writes on @fd (its port), or %NULL where it
 * ends first. */
static gchar *
read_first_line (gint fd)
{
  GString *line = g_string_new (NULL);
  gchar c;

  while (read (fd, &c, 1) == 1 && c != '\n')
    g_string_append_c (line, c);
  if (line->len == 0)
    return g_string_free (line, TRUE);
  return g_string_free (line, FALSE);
}

static void
server_kill (GPid pid)
{
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  g_spawn_close_pid (pid);
}

/* Starts the server with @args (NULL-terminated: --model NAME=PATH...),
 * and waits until its health endpoint says it is ready. Returns %FALSE
 * with @why where it cannot start. */
static gboolean
server_try_start (TestServer * s, const gchar * const *args, gchar ** why)
{
  const gchar *python = g_getenv ("CBI_TEST_PYTHON");
  GPtrArray *argv = g_ptr_array_new ();
  GError *err = NULL;
  gchar *line, *ready;
  gint out = -1, tries;
  gboolean spawned;

  memset (s, 0, sizeof (*s));
  g_ptr_array_add (argv, (gpointer) (python ? python : "python3"));
  g_ptr_array_add (argv, (gpointer) CBI_TEST_REMOTE_SERVER);
  for (; *args; args++)
    g_ptr_array_add (argv, (gpointer) * args);
  g_ptr_array_add (argv, NULL);
  spawned = g_spawn_async_with_pipes (NULL, (gchar **) argv->pdata, NULL,
      G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &s->pid, NULL, &out, NULL, &err);
  g_ptr_array_free (argv, TRUE);
  if (!spawned) {
    *why = g_strdup (err->message);
    g_error_free (err);
    return FALSE;
  }
  line = read_first_line (out);
  close (out);
  if (line == NULL || !g_str_has_prefix (line, "PORT ")) {
    *why = g_strdup_printf ("the server did not start (%s): see its "
        "error above", python ? python : "python3");
    g_free (line);
    server_kill (s->pid);
    return FALSE;
  }
  s->url = g_strdup_printf ("http://127.0.0.1:%s", line + 5);
  g_free (line);
  ready = g_strconcat (s->url, "/v2/health/ready", NULL);
  for (tries = 0; tries < 300 && !http_ok (ready); tries++)
    g_usleep (100 * 1000);
  g_free (ready);
  return TRUE;
}

/* The server of @args, or where CBI_TEST_SERVER_URL names one (a real
 * KServe or Triton server that tests/remote/servers.py started, serving
 * the test models as named here), that one. */
static void
server_start (TestServer * s, const gchar * const *args)
{
  const gchar *url = g_getenv ("CBI_TEST_SERVER_URL");
  gchar *why = NULL;

  if (url && *url) {
    s->pid = 0;
    s->url = g_strdup (url);
    return;
  }
  fail_unless (server_try_start (s, args, &why), "%s", why);
}

static void
server_stop (TestServer * s)
{
  if (s->pid)
    server_kill (s->pid);
  g_free (s->url);
}

/* A server of tests/models/style.onnx as "style", with @extra (NULL or
 * one more argument pair). */
static void
style_server (TestServer * s, const gchar * extra_flag,
    const gchar * extra_value)
{
  const gchar *args[] = { "--model", "style=" CBI_TEST_MODELS_DIR
        "/style.onnx", extra_flag, extra_value, NULL
  };

  server_start (s, args);
}

/* A @W x @H RGB frame of gradients, a different one per @index. */
static GstBuffer *
test_frame (guint index)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * 3, NULL);
  GstMapInfo map;
  guint x, y;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++) {
      guint8 *p = map.data + (y * W + x) * 3;
      p[0] = (guint8) (x * 255 / (W - 1));
      p[1] = (guint8) (y * 255 / (H - 1));
      p[2] = (guint8) ((x * 7 + y * 11 + index * 40) & 0xff);
    }
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = index * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

/* A harness around "cudabatchinfer @props", its messages on @bus. */
static GstHarness *
harness_new (const gchar * props, GstBus ** bus)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer %s", props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstHarness *h;

  fail_unless (e != NULL, "could not make %s", desc);
  *bus = gst_bus_new ();
  gst_element_set_bus (e, *bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=64,"
      "height=48,framerate=30/1");
  gst_object_unref (e);
  g_free (desc);
  return h;
}

static void
harness_free (GstHarness * h, GstBus * bus)
{
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

/* Pushes @n frames and EOS; returns how many the element took. */
static guint
push_frames (GstHarness * h, guint n)
{
  guint i, taken = 0;

  for (i = 0; i < n; i++)
    taken += gst_harness_push (h, test_frame (i)) == GST_FLOW_OK;
  gst_harness_push_event (h, gst_event_new_eos ());
  return taken;
}

static guint64
stats_u64 (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;

  g_object_get (e, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, field, &v), "no %s in %"
      GST_PTR_FORMAT, field, s);
  gst_structure_free (s);
  return v;
}

static gchar *
stats_string (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  gchar *v;

  g_object_get (e, "stats", &s, NULL);
  v = g_strdup (gst_structure_get_string (s, field));
  gst_structure_free (s);
  return v;
}

/* The error on @bus, which must be there: its message (transfer full),
 * its domain and code checked. */
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

/* Asserts that "cudabatchinfer @props" fails READY->PAUSED with a
 * RESOURCE error of @code whose message holds @what and @also
 * (nullable). */
static void
assert_paused_fails (const gchar * props, gint code, const gchar * what,
    const gchar * also)
{
  gchar *desc = g_strdup_printf ("cudabatchinfer %s", props);
  GstElement *e = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_bus_new ();
  gchar *text;

  fail_unless (e != NULL, "could not make %s", desc);
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  text = pop_error (bus, GST_RESOURCE_ERROR, code);
  fail_unless (strstr (text, what) != NULL && (also == NULL
          || strstr (text, also) != NULL), "%s", text);
  g_free (text);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  g_free (desc);
}

/* Runs @n frames through "cudabatchinfer @props" and returns the output
 * buffers (transfer full), asserting one per frame. */
static GPtrArray *
run_frames (const gchar * props, guint n)
{
  GstBus *bus;
  GstHarness *h = harness_new (props, &bus);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstBuffer *b;

  fail_unless_equals_int (push_frames (h, n), n);
  while ((b = gst_harness_try_pull (h)) != NULL)
    g_ptr_array_add (out, b);
  fail_unless_equals_int (out->len, n);
  fail_unless_equals_int (stats_u64 (h->element, "frames-out"), n);
  harness_free (h, bus);
  return out;
}

/* The engine with the server's model and with the file on the CPU give
 * the same tensors, within 1e-5 of each value's size. */
static void
assert_engines_agree (const gchar * url, const gchar * remote_model,
    const gchar * file, gint64 n, gint64 d1, gint64 d2, gint64 d3)
{
  CbiRemoteConfig config = { url, remote_model, NULL, 10 * GST_SECOND };
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR, file, NULL);
  GError *err = NULL;
  CbiEngine *remote = cbi_engine_new_remote (&config, NULL, 0, &err);
  CbiGraph *graph = cbi_engine_load_model (path, &err);
  gboolean fallback;
  CbiEngine *cpu;
  CbiShape shape = { 4, {n, d1, d2, d3} };
  const gint64 count = n * d1 * d2 * d3;
  gfloat *x = g_new (gfloat, count);
  CbiBatchReport report;
  guint ticket_r, ticket_c, k;
  gint64 i;

  fail_unless (remote != NULL, "%s", err ? err->message : "");
  fail_unless_equals_string (cbi_engine_backend_name (remote), "remote");
  fail_unless (graph != NULL);
  cpu = cbi_engine_new (graph, CBI_BACKEND_CPU, 0, 0, &fallback, &err);
  fail_unless (cpu != NULL);
  for (i = 0; i < count; i++)
    x[i] = (gfloat) sin ((gdouble) i * 0.37) * 0.8f;
  fail_unless (cbi_engine_run_tensor (remote, &shape, x, &ticket_r, &report,
          &err), "%s", err ? err->message : "");
  fail_unless (report.remote_rtt_ns > 0);
  fail_unless (report.remote_bytes_sent > (guint64) count * 4);
  fail_unless (report.remote_bytes_received > 0);
  fail_unless (cbi_engine_run_tensor (cpu, &shape, x, &ticket_c, &report,
          &err));
  fail_unless_equals_int (cbi_engine_n_outputs (remote),
      cbi_engine_n_outputs (cpu));
  for (k = 0; k < cbi_engine_n_outputs (cpu); k++) {
    CbiShape sr, sc;
    const gfloat *yr = cbi_engine_get_output (remote, ticket_r, k, &sr, &err);
    const gfloat *yc = cbi_engine_get_output (cpu, ticket_c, k, &sc, &err);
    gint64 m = 1;
    gint d;

    fail_unless (yr != NULL && yc != NULL);
    fail_unless (cbi_shape_equal (&sr, &sc));
    for (d = 0; d < sc.n_dims; d++)
      m *= sc.dims[d];
    for (i = 0; i < m; i++)
      fail_unless (fabsf (yr[i] - yc[i]) <= 1e-5f * MAX (1.0f,
              fabsf (yc[i])), "%s output %u value %" G_GINT64_FORMAT
          ": %g remote, %g cpu", file, k, i, yr[i], yc[i]);
  }
  g_free (x);
  g_free (path);
  cbi_engine_free (remote);
  cbi_engine_free (cpu);
}

GST_START_TEST (test_remote_tensors_equal_the_cpu_backends)
{
  TestServer s;
  const gchar *args[] = {
    "--model", "style=" CBI_TEST_MODELS_DIR "/style.onnx",
    "--model", "classifier=" CBI_TEST_MODELS_DIR "/classifier.onnx",
    "--model", "nhwc=" CBI_TEST_MODELS_DIR "/nhwc-transposed.onnx",
    NULL
  };

  server_start (&s, args);
  assert_engines_agree (s.url, "style", "style.onnx", 4, 3, 24, 32);
  assert_engines_agree (s.url, "classifier", "classifier.onnx", 3, 3, 16, 16);
  /* a channels-last model: its tensor is N x H x W x C as the file has
   * it */
  assert_engines_agree (s.url, "nhwc", "nhwc-transposed.onnx", 2, 16, 16, 3);
  server_stop (&s);
}

GST_END_TEST;

GST_START_TEST (test_remote_frames_pad_keep_timestamps_and_allocate_nothing)
{
  TestServer s;
  GPtrArray *remote, *cpu;
  gchar *props, *cpu_props;
  guint i, j;
  guint64 max_batch_index = 0;

  style_server (&s, NULL, NULL);
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style "
      "batch=8 max-inflight=2", s.url);
  cpu_props = g_strdup_printf ("backend=cpu model=%s/style.onnx batch=8",
      CBI_TEST_MODELS_DIR);
  remote = run_frames (props, 20);
  cpu = run_frames (cpu_props, 20);
  for (i = 0; i < 20; i++) {
    GstBuffer *b = g_ptr_array_index (remote, i);
    GstBatchMemoryMeta *m = gst_buffer_get_batch_memory_meta (b);
    GstMapInfo mr, mc;

    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * FRAME_DURATION);
    fail_unless (m != NULL);
    fail_unless_equals_string (m->backend, "remote");
    fail_unless_equals_int (m->batch_size, 8);
    fail_unless_equals_int (m->padded, i >= 16 ? 4 : 0);
    fail_unless_equals_uint64 (m->fresh_allocations, 0);
    fail_unless (m->round_trip_time > 0 && m->round_trip_time <= m->batch_time);
    /* 8 frames of 3 x 48 x 64 floats and the JSON header */
    fail_unless (m->bytes_sent > 8 * 3 * H * W * 4);
    fail_unless (m->bytes_received > 8 * 3 * H * W * 4);
    max_batch_index = MAX (max_batch_index, m->batch_index);
    /* the server's onnxruntime and the CPU backend's oneDNN round the
     * last float bit apart: a byte may land one step apart */
    fail_unless (gst_buffer_map (b, &mr, GST_MAP_READ));
    fail_unless (gst_buffer_map (g_ptr_array_index (cpu, i), &mc,
            GST_MAP_READ));
    fail_unless_equals_int (mr.size, mc.size);
    for (j = 0; j < mr.size; j++)
      fail_unless (ABS ((gint) mr.data[j] - (gint) mc.data[j]) <= 1,
          "frame %u byte %u: %u remote, %u cpu", i, j, mr.data[j], mc.data[j]);
    gst_buffer_unmap (b, &mr);
    gst_buffer_unmap (g_ptr_array_index (cpu, i), &mc);
  }
  fail_unless_equals_uint64 (max_batch_index, 2);
  g_ptr_array_unref (remote);
  g_ptr_array_unref (cpu);
  g_free (props);
  g_free (cpu_props);
  server_stop (&s);
}

GST_END_TEST;

GST_START_TEST (test_remote_stats_say_backend_remote_and_the_server)
{
  TestServer s;
  GstBus *bus;
  GstHarness *h;
  gchar *props, *v;

  style_server (&s, NULL, NULL);
  props = g_strdup_printf ("backend=remote server-url=%s/ remote-model=style "
      "batch=4", s.url);
  h = harness_new (props, &bus);
  fail_unless_equals_int (push_frames (h, 6), 6);
  v = stats_string (h->element, "backend");
  fail_unless_equals_string (v, "remote");
  g_free (v);
  v = stats_string (h->element, "server-url");
  fail_unless (g_str_has_prefix (v, s.url), "%s", v);
  g_free (v);
  fail_unless_equals_uint64 (stats_u64 (h->element, "frames-in"), 6);
  fail_unless_equals_uint64 (stats_u64 (h->element, "frames-out"), 6);
  fail_unless (stats_u64 (h->element, "remote-bytes-sent") >=
      2 * 4 * 3 * H * W * 4);
  fail_unless (stats_u64 (h->element, "remote-round-trip-time") > 0);
  harness_free (h, bus);
  g_free (props);
  server_stop (&s);
}

GST_END_TEST;

GST_START_TEST (test_remote_server_down_fails_paused_naming_the_url)
{
  TestServer s;
  gchar *url, *props;

  /* a port that was just free: the server stopped */
  style_server (&s, NULL, NULL);
  url = g_strdup (s.url);
  server_stop (&s);
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style",
      url);
  assert_paused_fails (props, GST_RESOURCE_ERROR_READ,
      "cannot reach the inference server", url);
  g_free (props);
  g_free (url);
}

GST_END_TEST;

GST_START_TEST (test_remote_bad_settings_fail_paused_saying_which)
{
  TestServer s;
  gchar *props;

  style_server (&s, NULL, NULL);
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=nope",
      s.url);
  /* 404 here, 400 from Triton */
  assert_paused_fails (props, GST_RESOURCE_ERROR_READ, "model nope is not "
      "ready", "answered 4");
  g_free (props);
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style "
      "remote-model-version=7", s.url);
  assert_paused_fails (props, GST_RESOURCE_ERROR_READ, "version 7", NULL);
  g_free (props);
  props = g_strdup_printf ("backend=remote server-url=%s", s.url);
  assert_paused_fails (props, GST_RESOURCE_ERROR_READ, "remote-model is "
      "unset", NULL);
  g_free (props);
  assert_paused_fails ("backend=remote server-url=ftp://x remote-model=a",
      GST_RESOURCE_ERROR_READ, "http://host:port", NULL);
  server_stop (&s);
}

GST_END_TEST;

GST_START_TEST (test_remote_model_file_that_differs_names_both)
{
  TestServer s;
  gchar *props;

  style_server (&s, NULL, NULL);
  /* the classifier's input is "input", the style model's "image" */
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style "
      "model=%s/classifier.onnx", s.url, CBI_TEST_MODELS_DIR);
  assert_paused_fails (props, GST_RESOURCE_ERROR_SETTINGS, "input image",
      "is input");
  g_free (props);
  /* the same file is accepted, and its shapes used */
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style "
      "model=%s/style.onnx batch=4", s.url, CBI_TEST_MODELS_DIR);
  g_ptr_array_unref (run_frames (props, 5));
  g_free (props);
  server_stop (&s);
}

GST_END_TEST;

GST_START_TEST (test_remote_batch_above_max_batch_size_names_both)
{
  TestServer s;
  gchar *props;

  style_server (&s, "--max-batch", "style=4");
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style "
      "batch=8 warmup-caps=video/x-raw,format=RGB,width=64,height=48", s.url);
  assert_paused_fails (props, GST_RESOURCE_ERROR_SETTINGS,
      "batches of 4 at most", "not 8");
  g_free (props);
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=style "
      "batch=4", s.url);
  g_ptr_array_unref (run_frames (props, 5));
  g_free (props);
  server_stop (&s);
}

GST_END_TEST;

GST_START_TEST (test_remote_warmup_sends_a_real_batch_to_the_server)
{
  TestServer s;
  gchar *props;

  /* the server fails every request: the warm-up's batch is one */
  style_server (&s, "--model", "failing=" CBI_TEST_MODELS_DIR
      "/style.onnx:error500:0");
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=failing "
      "batch=4 warmup-caps=video/x-raw,format=RGB,width=64,height=48", s.url);
  assert_paused_fails (props, GST_RESOURCE_ERROR_READ, "answered 500",
      "injected failure");
  g_free (props);
  server_stop (&s);
}

GST_END_TEST;

/* One fault of the server's, after its first batch. */
typedef struct
{
  const gchar *fault;
  const gchar *props;           /* more of the element's */
  const gchar *says;            /* in the error's message */
} Fault;

static const Fault faults[] = {
  {"error500:1", "", "injected failure on request 2"},
  {"reset:1", "", "POST"},
  {"truncate:1", "", "POST"},
  {"badjson:1", "", "not JSON"},
  {"shape:1", "", "planned for"},
  {"json:1", "", "binary tensor data extension"},
  {"slow:5:1", "remote-timeout=300000000", "timed out after"},
  {"duplicate:1", "", "larger than the model's outputs can be"},
  {"die:1", "", "POST"},
};

/* Each fault gives an error naming it, no crash, no hang past
 * remote-timeout, and loses no frame: every frame in is out or
 * counted as dropped. One batch on the wire at a time: two would reach
 * the server in either order, and the fault hit either. */
GST_START_TEST (test_remote_faults_mid_stream_are_errors_that_lose_nothing)
{
  guint f;

  for (f = 0; f < G_N_ELEMENTS (faults); f++) {
    TestServer s;
    gchar *spec = g_strdup_printf ("faulty=%s/style.onnx:%s",
        CBI_TEST_MODELS_DIR, faults[f].fault);
    const gchar *args[] = { "--model", spec, NULL };
    gchar *props, *text;
    GstHarness *h;
    GstBus *bus;
    guint64 in, out, dropped;
    gint64 start = g_get_monotonic_time ();

    server_start (&s, args);
    props = g_strdup_printf ("backend=remote server-url=%s remote-model=faulty"
        " batch=4 warmup=false max-inflight=1 %s", s.url, faults[f].props);
    h = harness_new (props, &bus);
    push_frames (h, 12);
    text = pop_error (bus, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ);
    fail_unless (strstr (text, faults[f].says) != NULL, "%s: %s",
        faults[f].fault, text);
    in = stats_u64 (h->element, "frames-in");
    out = stats_u64 (h->element, "frames-out");
    dropped = stats_u64 (h->element, "frames-dropped");
    fail_unless (out >= 4, "%s: the first batch's frames came out (%"
        G_GUINT64_FORMAT ")", faults[f].fault, out);
    fail_unless_equals_uint64 (in, out + dropped);
    fail_unless (g_get_monotonic_time () - start < 20 * G_USEC_PER_SEC);
    harness_free (h, bus);
    g_free (text);
    g_free (props);
    g_free (spec);
    server_stop (&s);
  }
}

GST_END_TEST;

/* A flush while batches are on the wire drops them, and the slots they
 * held carry the next batches' own requests and results: nothing stale,
 * nothing lost, no error. */
GST_START_TEST (test_remote_flush_with_batches_on_the_wire_loses_nothing)
{
  TestServer s;
  GstHarness *h;
  GstBus *bus;
  GstBuffer *b;
  GstMessage *m;
  gchar *props;
  guint i, n = 0;

  /* after the first, the k-th request takes k x 400 ms: at the flush,
   * which waits for the batch being collected (the second), the third is
   * still on the wire, in the slot that the third batch after the flush
   * takes */
  style_server (&s, "--model", "slow=" CBI_TEST_MODELS_DIR
      "/style.onnx:slower:0.4:1");
  props = g_strdup_printf ("backend=remote server-url=%s remote-model=slow "
      "batch=4 max-inflight=3 warmup=false", s.url);
  h = harness_new (props, &bus);
  for (i = 0; i < 12; i++)
    fail_unless_equals_int (gst_harness_push (h, test_frame (i)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  {
    GstSegment seg;

    gst_segment_init (&seg, GST_FORMAT_TIME);
    gst_harness_push_event (h, gst_event_new_segment (&seg));
  }
  while ((b = gst_harness_try_pull (h)) != NULL)
    gst_buffer_unref (b);
  for (i = 100; i < 112; i++)
    fail_unless_equals_int (gst_harness_push (h, test_frame (i)), GST_FLOW_OK);
  gst_harness_push_event (h, gst_event_new_eos ());
  while ((b = gst_harness_try_pull (h)) != NULL) {
    GstBatchMemoryMeta *meta = gst_buffer_get_batch_memory_meta (b);

    fail_unless (GST_BUFFER_PTS (b) >= 100 * FRAME_DURATION,
        "a frame from before the flush came out");
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), (100 + n) * FRAME_DURATION);
    fail_unless (meta != NULL && meta->round_trip_time > 0);
    n++;
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (n, 12);
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (m == NULL, "an error after the flush");
  fail_unless_equals_uint64 (stats_u64 (h->element, "frames-in"),
      stats_u64 (h->element, "frames-out") + stats_u64 (h->element,
          "frames-dropped"));
  harness_free (h, bus);
  g_free (props);
  server_stop (&s);
}

GST_END_TEST;

/* A reply that names an output twice, its bytes within what two outputs
 * of that size take, is refused: the other output would be read from
 * nowhere. */
GST_START_TEST (test_remote_reply_with_an_output_twice_is_refused)
{
  const gchar *json = "{\"outputs\": ["
      "{\"name\": \"a\", \"datatype\": \"FP32\", \"shape\": [1, 4], "
      "\"parameters\": {\"binary_data_size\": 16}},"
      "{\"name\": \"a\", \"datatype\": \"FP32\", \"shape\": [1, 4], "
      "\"parameters\": {\"binary_data_size\": 16}}]}";
  const gchar *names[] = { "a", "b" };
  const CbiShape shapes[] = { {2, {1, 4}}, {2, {1, 4}} };
  gsize offsets[2];
  GError *err = NULL;

  fail_if (cbi_remote_reply_parse (json, strlen (json), 32, names, shapes,
          2, offsets, &err));
  fail_unless (strstr (err->message, "output a twice") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  /* each once, in another order than asked: each read where it is */
  json = "{\"outputs\": ["
      "{\"name\": \"b\", \"datatype\": \"FP32\", \"shape\": [1, 4], "
      "\"parameters\": {\"binary_data_size\": 16}},"
      "{\"name\": \"a\", \"datatype\": \"FP32\", \"shape\": [1, 4], "
      "\"parameters\": {\"binary_data_size\": 16}}]}";
  fail_unless (cbi_remote_reply_parse (json, strlen (json), 32, names,
          shapes, 2, offsets, &err), "%s", err ? err->message : "");
  fail_unless_equals_int (offsets[0], 16);
  fail_unless_equals_int (offsets[1], 0);
}

GST_END_TEST;

static Suite *
remote_suite (void)
{
  Suite *s = suite_create ("cudabatchinfer-remote");
  TCase *tc = tcase_create ("remote");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_remote_tensors_equal_the_cpu_backends);
  tcase_add_test (tc,
      test_remote_frames_pad_keep_timestamps_and_allocate_nothing);
  tcase_add_test (tc, test_remote_stats_say_backend_remote_and_the_server);
  tcase_add_test (tc, test_remote_server_down_fails_paused_naming_the_url);
  tcase_add_test (tc, test_remote_bad_settings_fail_paused_saying_which);
  tcase_add_test (tc, test_remote_model_file_that_differs_names_both);
  tcase_add_test (tc, test_remote_batch_above_max_batch_size_names_both);
  tcase_add_test (tc, test_remote_warmup_sends_a_real_batch_to_the_server);
  tcase_add_test (tc,
      test_remote_faults_mid_stream_are_errors_that_lose_nothing);
  tcase_add_test (tc, test_remote_flush_with_batches_on_the_wire_loses_nothing);
  tcase_add_test (tc, test_remote_reply_with_an_output_twice_is_refused);
  return s;
}

int
main (int argc, char **argv)
{
  TestServer probe;
  const gchar *args[] = { "--model", "style=" CBI_TEST_MODELS_DIR
        "/style.onnx", NULL
  };
  gchar *why = NULL;
  Suite *s;
  int failed;

  gst_check_init (&argc, &argv);
  curl_global_init (CURL_GLOBAL_DEFAULT);
  /* the test Python is the project's venv, made by scripts/install-deps.sh:
   * without it there is no server to test against */
  if (g_getenv ("CBI_TEST_SERVER_URL")) {
    if (!http_ok_at (g_getenv ("CBI_TEST_SERVER_URL"))) {
      g_print ("the server at CBI_TEST_SERVER_URL is not ready\n");
      return 1;
    }
  } else if (!server_try_start (&probe, args, &why)) {
    g_print ("SKIP: the test server (tests/remote/v2server.py) does not "
        "start: %s\n", why);
    g_free (why);
    return 77;
  } else {
    server_stop (&probe);
  }
  s = remote_suite ();
  failed = gst_check_run_suite (s, "cudabatchinfer-remote", __FILE__);
  curl_global_cleanup ();
  return failed;
}
