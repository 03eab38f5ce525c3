/* cudabatchinfer: one thread that runs calls handed to it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS typedef struct _CbiWorker CbiWorker;

/**
 * CbiWorkerFunc:
 * @data: what cbi_worker_call() was given
 *
 * A call that runs on the worker's thread.
 */
typedef void (*CbiWorkerFunc) (gpointer data);

/* Starts a thread named @name that waits for calls.
 * Returns: (transfer full) (nullable): the worker, to be freed with
 * cbi_worker_free(); %NULL with @error set when no thread could be
 * started. */
CbiWorker *cbi_worker_new (const gchar * name, GError ** error);

/* Ends the thread once the call it runs, if any, returns, and frees
 * @worker. Not to be called from a call on the worker. */
void cbi_worker_free (CbiWorker * worker);

/* Runs @func (@data) on the worker's thread and returns once it has
 * returned. Calls from several threads run one after the other; a call
 * made from the worker's own thread (a call inside a call) runs at once,
 * there. @data stays the caller's. */
void cbi_worker_call (CbiWorker * worker, CbiWorkerFunc func, gpointer data);

/* Whether the calling thread is @worker's. */
gboolean cbi_worker_is_current (CbiWorker * worker);

/* Returns: (transfer none) (nullable): the worker whose thread calls, or
 * %NULL on any other thread. */
CbiWorker *cbi_worker_current (void);

/**
 * CbiWorkerServeFunc:
 * @data: what cbi_worker_serve() was given
 *
 * Returns: whether cbi_worker_serve() goes on to the next call.
 */
typedef gboolean (*CbiWorkerServeFunc) (gpointer data);

/* From a call running on @worker: once that call has returned to its
 * caller, the worker's thread runs @host (@data) before it waits for the
 * next call. A host holds the thread for as long as it likes (inside an
 * OpenMP region, say) and runs the calls that come meanwhile with
 * cbi_worker_serve(). The last host asked for in a call wins; not to be
 * called from a call that a host serves. @data (transfer none) must
 * outlive the worker or the host's return. */
void cbi_worker_host_next (CbiWorker * worker, CbiWorkerFunc host,
    gpointer data);

/* From a host on @worker's thread (only there): runs the calls made to @worker as the
 * worker does, each returned to its caller, until @more (@data) returns
 * FALSE after one of them or the worker is being freed. */
void cbi_worker_serve (CbiWorker * worker, CbiWorkerServeFunc more,
    gpointer data);

G_END_DECLS
