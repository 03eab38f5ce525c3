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
};

static gpointer
cbi_worker_loop (gpointer user_data)
{
  CbiWorker *w = user_data;

  g_mutex_lock (&w->lock);
  for (;;) {
    CbiWorkerFunc func;

    while (w->func == NULL && !w->quit)
      g_cond_wait (&w->cond, &w->lock);
    if (w->func == NULL)
      break;
    func = w->func;
    g_mutex_unlock (&w->lock);
    func (w->data);
    g_mutex_lock (&w->lock);
    w->func = NULL;
    g_cond_broadcast (&w->cond);
  }
  g_mutex_unlock (&w->lock);
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
