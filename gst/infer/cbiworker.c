/* cudabatchinfer: one thread that runs calls handed to it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU engine runs every batch, and its warm-up, on one worker so
 * that OpenMP sees one thread starting teams whoever submits: the
 * streaming thread, the batch-timeout task, the application's thread for
 * a flush or a state change. libgomp keeps a pool of threads for each
 * thread that starts a team, and once it holds more threads than cores
 * it cuts every spin to 100 rounds; two such callers on 2 cores made
 * every later batch wait as with OMP_WAIT_POLICY=passive.
 *
 * A call may also hand the thread, once it has returned, to a host that
 * runs the next calls from inside itself: the CPU backend keeps its
 * batches on one thread inside one OpenMP region that way while other
 * processes want the cores (cpu/share.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cbiworker.h"

struct _CbiWorker
{
  GThread *thread;
  GMutex call_lock;             /* held by the caller for a whole call */
  GMutex lock;                  /* guards what follows */
  GCond cond;
  CbiWorkerFunc func;           /* the call to run or running, %NULL: none */
  gpointer data;
  gboolean quit;
  CbiWorkerFunc host;           /* to run once the call returned; only the
                                 * worker's thread touches these three */
  gpointer host_data;
  gboolean hosted;              /* a host runs */
};

/* the worker whose thread this is */
static GPrivate cbi_worker_self;

/* Waits for the next call and runs it; FALSE once the worker is being
 * freed. */
static gboolean
cbi_worker_run_next (CbiWorker * w)
{
  CbiWorkerFunc func;
  gpointer data;

  g_mutex_lock (&w->lock);
  while (w->func == NULL && !w->quit)
    g_cond_wait (&w->cond, &w->lock);
  func = w->func;
  data = w->data;
  g_mutex_unlock (&w->lock);
  if (func == NULL)
    return FALSE;
  func (data);
  g_mutex_lock (&w->lock);
  w->func = NULL;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
  return TRUE;
}

static gpointer
cbi_worker_loop (gpointer user_data)
{
  CbiWorker *w = user_data;

  g_private_set (&cbi_worker_self, w);
  while (cbi_worker_run_next (w)) {
    CbiWorkerFunc host = w->host;

    if (host != NULL) {
      w->host = NULL;
      w->hosted = TRUE;
      host (w->host_data);
      w->hosted = FALSE;
    }
  }
  return NULL;
}

CbiWorker *
cbi_worker_new (const gchar * name, GError ** error)
{
  CbiWorker *w = g_new0 (CbiWorker, 1);

  g_mutex_init (&w->call_lock);
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
  w->thread = g_thread_try_new (name, cbi_worker_loop, w, error);
  if (w->thread == NULL) {
    g_cond_clear (&w->cond);
    g_mutex_clear (&w->lock);
    g_mutex_clear (&w->call_lock);
    g_free (w);
    return NULL;
  }
  return w;
}

void
cbi_worker_free (CbiWorker * worker)
{
  if (worker == NULL)
    return;
  g_return_if_fail (!cbi_worker_is_current (worker));

  /* after any call in progress has returned to its caller */
  g_mutex_lock (&worker->call_lock);
  g_mutex_lock (&worker->lock);
  worker->quit = TRUE;
  g_cond_broadcast (&worker->cond);
  g_mutex_unlock (&worker->lock);
  g_mutex_unlock (&worker->call_lock);
  g_thread_join (worker->thread);
  g_cond_clear (&worker->cond);
  g_mutex_clear (&worker->lock);
  g_mutex_clear (&worker->call_lock);
  g_free (worker);
}

gboolean
cbi_worker_is_current (CbiWorker * worker)
{
  return g_thread_self () == worker->thread;
}

void
cbi_worker_call (CbiWorker * worker, CbiWorkerFunc func, gpointer data)
{
  g_return_if_fail (func != NULL);

  if (cbi_worker_is_current (worker)) {
    func (data);
    return;
  }
  g_mutex_lock (&worker->call_lock);
  g_mutex_lock (&worker->lock);
  worker->func = func;
  worker->data = data;
  g_cond_broadcast (&worker->cond);
  while (worker->func != NULL)
    g_cond_wait (&worker->cond, &worker->lock);
  g_mutex_unlock (&worker->lock);
  g_mutex_unlock (&worker->call_lock);
}

CbiWorker *
cbi_worker_current (void)
{
  return g_private_get (&cbi_worker_self);
}

void
cbi_worker_host_next (CbiWorker * worker, CbiWorkerFunc host, gpointer data)
{
  g_return_if_fail (host != NULL);
  g_return_if_fail (cbi_worker_is_current (worker));
  /* its loop looks for a host only between calls of its own */
  g_return_if_fail (!worker->hosted);

  worker->host = host;
  worker->host_data = data;
}

void
cbi_worker_serve (CbiWorker * worker, CbiWorkerServeFunc more, gpointer data)
{
  g_return_if_fail (more != NULL);
  g_return_if_fail (cbi_worker_is_current (worker));
  /* from a call, it would take that call for the next one */
  g_return_if_fail (worker->hosted);

  while (cbi_worker_run_next (worker) && more (data));
}
