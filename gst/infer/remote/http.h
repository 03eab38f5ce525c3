/* cudabatchinfer: HTTP for the remote backend, on libcurl
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Requests of batches go through one libcurl multi handle that one I/O
 * thread drives: several batches are on the wire at once, over the
 * multi handle's pool of kept-alive connections, while the threads that
 * submit and collect them never block on a socket.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _CbiHttp CbiHttp;
typedef struct _CbiHttpCall CbiHttpCall;

/* Returns: (transfer full) (nullable): the transport, with its I/O thread,
 * for requests of at most @timeout_ns each (0: none); %NULL with @error
 * (CBI_ERROR_REMOTE) where libcurl or the thread cannot start. */
CbiHttp *cbi_http_new (guint64 timeout_ns, GError ** error);
/* Stops the I/O thread; calls still on the wire are cancelled. Frees
 * @http, which no call may outlive. */
void cbi_http_free (CbiHttp * http);

/* GET @url on this thread. Returns: (transfer full) (nullable): the body,
 * with the HTTP status in @status; %NULL with @error (CBI_ERROR_REMOTE)
 * where no reply came (a refused connection, a timeout). */
GBytes *cbi_http_get (CbiHttp * http, const gchar * url, glong * status,
    GError ** error);

/* Returns: (transfer full): a call that POSTs @body_len bytes at @body
 * (transfer none: the caller's until the call is freed, sent as they are,
 * without a copy) to @url, with the Triton binary-data header
 * `Inference-Header-Content-Length: @json_len`, and reads its reply into
 * @reply (transfer none, @reply_len bytes, 64-byte aligned). A reply
 * with the same header has its JSON part put to end at
 * @reply + @json_room, so that the binary part after it starts there,
 * aligned; a reply without one is read from @reply on. The buffers and
 * the connection are set up once: each cbi_http_call_start() sends
 * again. Returns: (transfer full) (nullable): the call; %NULL with
 * @error (CBI_ERROR_REMOTE) where libcurl cannot make its handle. */
CbiHttpCall *cbi_http_call_new (CbiHttp * http, const gchar * url,
    gconstpointer body, gsize body_len, gsize json_len, guint8 * reply,
    gsize reply_len, gsize json_room, GError ** error);
/* Takes @call off the wire (cbi_http_call_cancel()) and frees it. */
void cbi_http_call_free (CbiHttpCall * call);

/* Hands @call to the I/O thread: it returns at once. A call still on the
 * wire is cancelled first. */
void cbi_http_call_start (CbiHttpCall * call);
/* Takes @call off the wire, where it is, and returns once the I/O thread
 * no longer touches it or its buffers: its reply is lost. */
void cbi_http_call_cancel (CbiHttpCall * call);
/* Waits for @call's reply (libcurl ends it at the timeout). Returns
 * whether a reply came: its HTTP status in @status; for a status other
 * than 200, the start of its body in @json, @json_len (its message), and
 * no binary part; for 200, where its JSON part starts (@json, @json_len:
 * the whole body without the header) and the binary part's bytes
 * (@binary_len, at @reply + @json_room where the reply had the header,
 * else 0). %FALSE with @error (CBI_ERROR_REMOTE) otherwise: no
 * connection, a reset, a timeout, a cut reply, or one larger than its
 * buffer. */
gboolean cbi_http_call_wait (CbiHttpCall * call, glong * status,
    const guint8 ** json, gsize * json_len, gsize * binary_len,
    GError ** error);
/* The last finished call's time on the wire (from its handing to libcurl
 * by the I/O thread to its last byte) and the body bytes it sent and
 * received. */
void cbi_http_call_figures (CbiHttpCall * call, guint64 * rtt_ns,
    guint64 * sent, guint64 * received);

G_END_DECLS
