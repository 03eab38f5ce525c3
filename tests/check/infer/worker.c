/* GStreamer cudabatchinfer: the CPU engine's compute thread (cbiworker.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "cbiengine.h"
#include "cbiworker.h"
#include "cbitestengine.h"
#include "cbitestframes.h"

/* The threads of this process now. */
static guint
count_threads_named (const gchar * name)
{
  GDir *dir = g_dir_open ("/proc/self/task", 0, NULL);
  const gchar *tid;
  guint n = 0;

  fail_unless (dir != NULL);
  while ((tid = g_dir_read_name (dir))) {
    gchar *path = g_build_filename ("/proc/self/task", tid, "comm", NULL);
    gchar *comm = NULL;

    if (name == NULL || (g_file_get_contents (path, &comm, NULL, NULL)
            && g_strcmp0 (g_strchomp (comm), name) == 0))
      n++;
    g_free (comm);
    g_free (path);
  }
  g_dir_close (dir);
  return n;
}

static guint
count_threads (void)
{
  return count_threads_named (NULL);
}

typedef struct
{
  CbiEngine *engine;
  const CbiFrameBatch *batch;
  GMutex lock;
  GCond cond;
  gboolean ran, counted;
} OtherCaller;

/* Runs a batch, then stays until the test has counted the threads. */
static gpointer
run_from_another_thread (gpointer data)
{
  OtherCaller *c = data;
  CbiBatchReport r;
  gboolean ok = cbi_engine_run (c->engine, c->batch, &r, NULL);

  g_mutex_lock (&c->lock);
  c->ran = ok;
  g_cond_broadcast (&c->cond);
  while (!c->counted)
    g_cond_wait (&c->cond, &c->lock);
  g_mutex_unlock (&c->lock);
  return NULL;
}

typedef struct
{
  CbiWorker *worker;
  GThread *ran_on;
  GThread *inner_ran_on;
} WorkerCall;

static void
note_inner_thread (gpointer data)
{
  WorkerCall *c = data;

  c->inner_ran_on = g_thread_self ();
}

/* Notes its thread, then calls the worker from inside the call. */
static void
note_thread_and_call_again (gpointer data)
{
  WorkerCall *c = data;

  c->ran_on = g_thread_self ();
  cbi_worker_call (c->worker, note_inner_thread, c);
}

GST_START_TEST (test_a_worker_call_runs_on_its_thread_and_a_nested_one_at_once)
{
  WorkerCall c = { NULL, NULL, NULL };
  GError *err = NULL;

  c.worker = cbi_worker_new ("test-worker", &err);
  fail_unless (c.worker != NULL, "%s", err ? err->message : "");
  fail_if (cbi_worker_is_current (c.worker));
  /* a call inside a call would wait for itself if it were queued */
  cbi_worker_call (c.worker, note_thread_and_call_again, &c);
  fail_unless (c.ran_on != NULL && c.ran_on != g_thread_self ());
  fail_unless (c.inner_ran_on == c.ran_on);
  cbi_worker_free (c.worker);
}

GST_END_TEST;

/* A host on a worker, and the calls it serves. */
typedef struct
{
  CbiWorker *worker;
  gint to_serve;                /* the host stops after this many, -1: never */
  gint served;
  gboolean in_host;
  gint hosts_returned;
  gint in_host_calls;           /* calls that found themselves in the host */
  gint calls;
} HostedCalls;

static gboolean
host_serves_more (gpointer data)
{
  HostedCalls *h = data;

  h->served++;
  return h->to_serve < 0 || h->served < h->to_serve;
}

static void
host_serving (gpointer data)
{
  HostedCalls *h = data;

  fail_unless (cbi_worker_current () == h->worker);
  h->in_host = TRUE;
  cbi_worker_serve (h->worker, host_serves_more, h);
  h->in_host = FALSE;
  h->hosts_returned++;
}

static void
note_whether_hosted (gpointer data)
{
  HostedCalls *h = data;

  fail_unless (cbi_worker_current () == h->worker);
  h->calls++;
  if (h->in_host)
    h->in_host_calls++;
}

static void
ask_for_a_host (gpointer data)
{
  HostedCalls *h = data;

  note_whether_hosted (h);
  cbi_worker_host_next (h->worker, host_serving, h);
}

GST_START_TEST (test_a_host_runs_the_next_calls_until_it_says_stop)
{
  HostedCalls h = { NULL, 2, 0, FALSE, 0, 0, 0 };
  GError *err = NULL;
  gint i;

  h.worker = cbi_worker_new ("test-worker", &err);
  fail_unless (h.worker != NULL, "%s", err ? err->message : "");
  fail_unless (cbi_worker_current () == NULL);
  /* the call that asks returns first; the next two run in the host, the
   * one after them on the worker's own loop again */
  cbi_worker_call (h.worker, ask_for_a_host, &h);
  for (i = 0; i < 3; i++)
    cbi_worker_call (h.worker, note_whether_hosted, &h);
  fail_unless_equals_int (h.calls, 4);
  fail_unless_equals_int (h.in_host_calls, 2);
  fail_unless_equals_int (h.hosts_returned, 1);
  /* a host that never says stop ends when the worker is freed */
  h.to_serve = -1;
  cbi_worker_call (h.worker, ask_for_a_host, &h);
  cbi_worker_call (h.worker, note_whether_hosted, &h);
  fail_unless_equals_int (h.in_host_calls, 3);
  cbi_worker_free (h.worker);
  fail_unless_equals_int (h.hosts_returned, 2);
}

GST_END_TEST;

GST_START_TEST (test_cpu_batches_from_any_thread_share_one_openmp_pool)
{
  CbiFrameBatch layout = cbi_test_rgb_batch (8, 8, 4, NULL, NULL, NULL);
  OtherCaller c = { NULL, &layout };
  GThread *others[2];
  guint before, i;
  CbiBatchReport w;
  CbiEngine *e;

  /* a team of two: the engine's compute thread and one OpenMP worker.
   * The warm-up (a state change), this thread and two others (the
   * streaming thread, the batch-timeout task) all submit; were each to
   * start its own team, libgomp would keep a worker for each and, with
   * more threads than cores, throttle every spin */
  /* the compute threads of the engines before this one, and their OpenMP
   * workers (which take the name), end on their own once released; in
   * one process for all tests (valgrind) they may still be on their way
   * out: wait for them, up to 10 s */
  for (i = 0; i < 1000 && count_threads_named ("cbi-compute") > 0; i++)
    g_usleep (10000);
  before = count_threads ();
  e = cbi_test_cpu_engine (0);
  c.engine = e;
  cbi_engine_set_threads (e, 2);
  fail_unless (cbi_engine_warmup (e, &layout, &w, NULL));
  fail_unless_equals_int (w.threads, 2);
  fail_unless (cbi_engine_run (e, &layout, &w, NULL));
  fail_unless_equals_int (w.threads, 2);
  g_mutex_init (&c.lock);
  g_cond_init (&c.cond);
  for (i = 0; i < G_N_ELEMENTS (others); i++) {
    g_mutex_lock (&c.lock);
    c.ran = FALSE;
    g_mutex_unlock (&c.lock);
    others[i] = g_thread_new ("other", run_from_another_thread, &c);
    g_mutex_lock (&c.lock);
    while (!c.ran)
      g_cond_wait (&c.cond, &c.lock);
    g_mutex_unlock (&c.lock);
  }
  fail_unless_equals_int (count_threads (), before + 2 + 2);

  g_mutex_lock (&c.lock);
  c.counted = TRUE;
  g_cond_broadcast (&c.cond);
  g_mutex_unlock (&c.lock);
  for (i = 0; i < G_N_ELEMENTS (others); i++)
    g_thread_join (others[i]);
  cbi_engine_free (e);
  /* the compute thread's OpenMP worker ends on its own once released:
   * wait for it, up to 10 s (a thread that stays is what this is for) */
  for (i = 0; i < 1000 && count_threads () > before; i++)
    g_usleep (10000);
  fail_unless_equals_int (count_threads (), before);
  g_cond_clear (&c.cond);
  g_mutex_clear (&c.lock);
}

GST_END_TEST;

static Suite *
worker_suite (void)
{
  Suite *s = suite_create ("cbiworker");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc,
      test_a_worker_call_runs_on_its_thread_and_a_nested_one_at_once);
  tcase_add_test (tc, test_a_host_runs_the_next_calls_until_it_says_stop);
  tcase_add_test (tc, test_cpu_batches_from_any_thread_share_one_openmp_pool);
  return s;
}

GST_CHECK_MAIN (worker);
