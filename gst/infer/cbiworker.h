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

G_END_DECLS
