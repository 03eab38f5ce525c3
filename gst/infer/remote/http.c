/* cudabatchinfer: HTTP for the remote backend, on libcurl
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A call's buffers and its curl handle live as long as its plan: the
 * request body is the plan's, packed in place, and the reply lands in a
 * buffer of the plan's, its binary part aligned where the outputs are
 * read. libcurl keeps the connections alive between calls.
 */
#include "http.h"
#include "cbitypes.h"

#include <curl/curl.h>
#include <gst/gst.h>
#include <string.h>

GST_DEBUG_CATEGORY_EXTERN (cbi_remote_debug);
#define GST_CAT_DEFAULT cbi_remote_debug

#define CBI_HTTP_JSON_HEADER "Inference-Header-Content-Length:"

struct _CbiHttp
{
  CURLM *multi;                 /* the I/O thread's only */
  CURL *get;                    /* the blocking GETs' */
  glong timeout_ms;
  GThread *thread;
  GMutex lock;                  /* guards the queues, @quit and the calls'
                                 * state (CbiHttpCall: under the lock) */
  GCond done;
  GQueue started;               /* calls to put on the wire */
  GQueue cancelled;             /* calls to take off it */
  gboolean quit;
};

struct _CbiHttpCall
{
  CbiHttp *http;
  CURL *easy;
  struct curl_slist *headers;
  guint8 *reply;
  gsize reply_len;
  gsize json_room;
  gsize body_len;
  /* the reply being read: the I/O thread's while the call runs */
  gsize at;
  gsize received;
  gssize json_len;              /* -1: the reply has no JSON length header */
  gboolean overflow;
  gchar curl_error[CURL_ERROR_SIZE];
  /* under the lock */
  gboolean running;
  CURLcode result;
  gint64 start_us;
  gint64 end_us;
};

/* libcurl's global state, once per process */
static gboolean
cbi_http_init_curl (GError ** error)
{
  static gsize done = 0;
  static CURLcode result = CURLE_OK;

  if (g_once_init_enter (&done)) {
    result = curl_global_init (CURL_GLOBAL_DEFAULT);
    g_once_init_leave (&done, 1);
  }
  if (result == CURLE_OK)
    return TRUE;
  g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "libcurl does not "
      "start: %s", curl_easy_strerror (result));
  return FALSE;
}

/* What every handle of ours has: no signals (threads), the timeout, plain
 * HTTP(S) only. */
static void
cbi_http_setup (CbiHttp * http, CURL * easy)
{
  curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, http->timeout_ms);
  curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, http->timeout_ms);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
}

/* The I/O thread: puts started calls on the wire, takes cancelled ones
 * off, drives every transfer and wakes the waiters of the finished. */
static gpointer
cbi_http_main (gpointer data)
{
  CbiHttp *http = data;
  CbiHttpCall *call;
  CURLMsg *msg;
  gint running, left;

  for (;;) {
    g_mutex_lock (&http->lock);
    while ((call = g_queue_pop_head (&http->cancelled))) {
      curl_multi_remove_handle (http->multi, call->easy);
      call->running = FALSE;
      call->result = CURLE_ABORTED_BY_CALLBACK;
    }
    if (http->quit) {
      g_cond_broadcast (&http->done);
      g_mutex_unlock (&http->lock);
      break;
    }
    while ((call = g_queue_pop_head (&http->started))) {
      CURLMcode added = curl_multi_add_handle (http->multi, call->easy);

      call->start_us = g_get_monotonic_time ();
      if (added != CURLM_OK) {
        /* it never goes on the wire: its waiter learns why */
        g_strlcpy (call->curl_error, curl_multi_strerror (added),
            sizeof (call->curl_error));
        call->result = CURLE_FAILED_INIT;
        call->running = FALSE;
      }
    }
    g_cond_broadcast (&http->done);
    g_mutex_unlock (&http->lock);

    curl_multi_perform (http->multi, &running);
    while ((msg = curl_multi_info_read (http->multi, &left))) {
      CURL *easy = msg->easy_handle;
      CURLcode result = msg->data.result;

      if (msg->msg != CURLMSG_DONE)
        continue;
      curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **) &call);
      curl_multi_remove_handle (http->multi, easy);
      g_mutex_lock (&http->lock);
      /* a cancel that came as it finished has nothing left to do */
      g_queue_remove (&http->cancelled, call);
      call->result = result;
      call->end_us = g_get_monotonic_time ();
      call->running = FALSE;
      g_cond_broadcast (&http->done);
      g_mutex_unlock (&http->lock);
    }
    curl_multi_poll (http->multi, NULL, 0, 1000, NULL);
  }
  return NULL;
}

CbiHttp *
cbi_http_new (guint64 timeout_ns, GError ** error)
{
  CbiHttp *http;
  GError *thread_error = NULL;

  if (!cbi_http_init_curl (error))
    return NULL;
  http = g_new0 (CbiHttp, 1);
  /* a timeout below 1 ms is 1 ms: libcurl's 0 means none */
  http->timeout_ms = timeout_ns ? (glong) CLAMP (timeout_ns / 1000000, 1,
      G_MAXLONG) : 0;
  http->multi = curl_multi_init ();
  http->get = curl_easy_init ();
  g_mutex_init (&http->lock);
  g_cond_init (&http->done);
  g_queue_init (&http->started);
  g_queue_init (&http->cancelled);
  if (http->multi == NULL || http->get == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "libcurl cannot make "
        "its handles (out of memory?)");
    cbi_http_free (http);
    return NULL;
  }
  cbi_http_setup (http, http->get);
  http->thread = g_thread_try_new ("cbi-remote-io", cbi_http_main, http,
      &thread_error);
  if (http->thread == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "no I/O thread for "
        "the server's requests: %s", thread_error->message);
    g_clear_error (&thread_error);
    cbi_http_free (http);
    return NULL;
  }
  return http;
}

void
cbi_http_free (CbiHttp * http)
{
  if (http == NULL)
    return;
  if (http->thread) {
    g_mutex_lock (&http->lock);
    http->quit = TRUE;
    g_mutex_unlock (&http->lock);
    curl_multi_wakeup (http->multi);
    g_thread_join (http->thread);
  }
  if (http->get)
    curl_easy_cleanup (http->get);
  if (http->multi)
    curl_multi_cleanup (http->multi);
  g_mutex_clear (&http->lock);
  g_cond_clear (&http->done);
  g_free (http);
}

/* what a GET reads at most: health, readiness, metadata and a model's
 * configuration are a few KiB */
#define CBI_HTTP_GET_MAX (1024 * 1024)

static size_t
cbi_http_append (char *data, size_t size, size_t n, void *user_data)
{
  GByteArray *body = user_data;

  if (size * n > CBI_HTTP_GET_MAX - body->len)
    return 0;
  g_byte_array_append (body, (const guint8 *) data, size * n);
  return size * n;
}

GBytes *
cbi_http_get (CbiHttp * http, const gchar * url, glong * status,
    GError ** error)
{
  GByteArray *body = g_byte_array_new ();
  gchar curl_error[CURL_ERROR_SIZE] = "";
  CURLcode result;

  curl_easy_setopt (http->get, CURLOPT_URL, url);
  curl_easy_setopt (http->get, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt (http->get, CURLOPT_WRITEFUNCTION, cbi_http_append);
  curl_easy_setopt (http->get, CURLOPT_WRITEDATA, body);
  curl_easy_setopt (http->get, CURLOPT_ERRORBUFFER, curl_error);
  result = curl_easy_perform (http->get);
  curl_easy_setopt (http->get, CURLOPT_ERRORBUFFER, NULL);
  if (result != CURLE_OK) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "GET %s: %s", url,
        result == CURLE_WRITE_ERROR ? "a reply of more than 1 MiB" :
        curl_error[0] ? curl_error : curl_easy_strerror (result));
    g_byte_array_unref (body);
    return NULL;
  }
  curl_easy_getinfo (http->get, CURLINFO_RESPONSE_CODE, status);
  return g_byte_array_free_to_bytes (body);
}

/* Each header line of the reply: a status line starts a reply (after a
 * 100 Continue, another), the JSON length places the body. */
static size_t
cbi_http_header (char *line, size_t size, size_t n, void *user_data)
{
  CbiHttpCall *call = user_data;
  const gsize len = size * n;
  const gsize key = strlen (CBI_HTTP_JSON_HEADER);

  if (len >= 5 && memcmp (line, "HTTP/", 5) == 0) {
    call->json_len = -1;
    call->at = call->received = 0;
  } else if (call->received == 0 && len > key
      && g_ascii_strncasecmp (line, CBI_HTTP_JSON_HEADER, key) == 0) {
    /* a header, never a trailer after the body: where the body goes is
     * settled by its first byte */
    gchar *value = g_strndup (line + key, len - key);
    guint64 v;

    if (g_ascii_string_to_unsigned (g_strstrip (value), 10, 0, G_MAXSSIZE,
            &v, NULL))
      call->json_len = (gssize) v;
    g_free (value);
  }
  return len;
}

static size_t
cbi_http_write (char *data, size_t size, size_t n, void *user_data)
{
  CbiHttpCall *call = user_data;
  const gsize len = size * n;

  if (call->received == 0 && call->json_len >= 0) {
    if ((gsize) call->json_len > call->json_room) {
      call->overflow = TRUE;
      return 0;
    }
    call->at = call->json_room - call->json_len;
  }
  if (len > call->reply_len - call->at) {
    call->overflow = TRUE;
    return 0;
  }
  memcpy (call->reply + call->at, data, len);
  call->at += len;
  call->received += len;
  return len;
}

CbiHttpCall *
cbi_http_call_new (CbiHttp * http, const gchar * url, gconstpointer body,
    gsize body_len, gsize json_len, guint8 * reply, gsize reply_len,
    gsize json_room, GError ** error)
{
  CbiHttpCall *call = g_new0 (CbiHttpCall, 1);
  gchar *length = g_strdup_printf (CBI_HTTP_JSON_HEADER " %" G_GSIZE_FORMAT,
      json_len);
  struct curl_slist *h;

  call->http = http;
  call->reply = reply;
  call->reply_len = reply_len;
  call->json_room = json_room;
  call->body_len = body_len;
  call->easy = curl_easy_init ();
  h = call->headers = curl_slist_append (NULL, length);
  h = h ? curl_slist_append (h, "Content-Type: application/octet-stream") :
      NULL;
  /* libcurl would wait for a 100 Continue before a large body: a round
   * trip, or a second where a server sends none */
  h = h ? curl_slist_append (h, "Expect:") : NULL;
  g_free (length);
  if (call->easy == NULL || h == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "libcurl cannot make "
        "a request's handle (out of memory?)");
    cbi_http_call_free (call);
    return NULL;
  }
  cbi_http_setup (http, call->easy);
  curl_easy_setopt (call->easy, CURLOPT_URL, url);
  curl_easy_setopt (call->easy, CURLOPT_HTTPHEADER, call->headers);
  curl_easy_setopt (call->easy, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt (call->easy, CURLOPT_POSTFIELDSIZE_LARGE,
      (curl_off_t) body_len);
  curl_easy_setopt (call->easy, CURLOPT_HEADERFUNCTION, cbi_http_header);
  curl_easy_setopt (call->easy, CURLOPT_HEADERDATA, call);
  curl_easy_setopt (call->easy, CURLOPT_WRITEFUNCTION, cbi_http_write);
  curl_easy_setopt (call->easy, CURLOPT_WRITEDATA, call);
  curl_easy_setopt (call->easy, CURLOPT_ERRORBUFFER, call->curl_error);
  curl_easy_setopt (call->easy, CURLOPT_PRIVATE, call);
  return call;
}

void
cbi_http_call_cancel (CbiHttpCall * call)
{
  CbiHttp *http = call->http;

  g_mutex_lock (&http->lock);
  if (call->running) {
    if (g_queue_remove (&http->started, call)) {
      call->running = FALSE;
    } else {
      g_queue_push_tail (&http->cancelled, call);
      curl_multi_wakeup (http->multi);
    }
    while (call->running && !http->quit)
      g_cond_wait (&http->done, &http->lock);
  }
  g_mutex_unlock (&http->lock);
}

void
cbi_http_call_free (CbiHttpCall * call)
{
  if (call == NULL)
    return;
  /* off the wire first */
  cbi_http_call_cancel (call);
  if (call->easy)
    curl_easy_cleanup (call->easy);
  curl_slist_free_all (call->headers);
  g_free (call);
}

void
cbi_http_call_start (CbiHttpCall * call)
{
  CbiHttp *http = call->http;

  /* a call still on the wire (its batch released uncollected, as a flush
   * does) comes off it before its buffers are written again */
  cbi_http_call_cancel (call);
  g_mutex_lock (&http->lock);
  call->at = call->received = 0;
  call->json_len = -1;
  call->overflow = FALSE;
  call->curl_error[0] = '\0';
  call->result = CURLE_OK;
  call->running = TRUE;
  call->start_us = call->end_us = g_get_monotonic_time ();
  g_queue_push_tail (&http->started, call);
  g_mutex_unlock (&http->lock);
  curl_multi_wakeup (http->multi);
}

gboolean
cbi_http_call_wait (CbiHttpCall * call, glong * status, const guint8 ** json,
    gsize * json_len, gsize * binary_len, GError ** error)
{
  CbiHttp *http = call->http;
  CURLcode result;
  gchar *url = NULL;

  g_mutex_lock (&http->lock);
  while (call->running && !http->quit)
    g_cond_wait (&http->done, &http->lock);
  result = call->running ? CURLE_ABORTED_BY_CALLBACK : call->result;
  g_mutex_unlock (&http->lock);
  curl_easy_getinfo (call->easy, CURLINFO_EFFECTIVE_URL, &url);
  *status = 0;
  curl_easy_getinfo (call->easy, CURLINFO_RESPONSE_CODE, status);
  /* a refusal (a 4xx or 5xx) says why in its body, whatever else went
   * wrong with it: its start is read as the message */
  if (*status != 200 && *status != 0) {
    *json = call->reply + call->at - call->received;
    *json_len = call->received;
    *binary_len = 0;
    return TRUE;
  }
  if (call->overflow && call->json_len < 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "POST %s: the reply "
        "is JSON of more than %" G_GSIZE_FORMAT " bytes, without binary "
        "data: the server lacks the binary tensor data extension, or sent "
        "outputs of other shapes than the element planned for", url,
        call->reply_len);
    return FALSE;
  }
  if (call->overflow) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "POST %s: the reply "
        "is larger than the model's outputs can be (%" G_GSIZE_FORMAT
        " bytes with a JSON header of %" G_GSIZE_FORMAT " at most): the "
        "server's model gives other shapes than the element planned for",
        url, call->reply_len - call->json_room, call->json_room);
    return FALSE;
  }
  if (result != CURLE_OK) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "POST %s: %s", url,
        call->curl_error[0] ? call->curl_error : curl_easy_strerror (result));
    return FALSE;
  }
  if (call->json_len < 0) {
    *json = call->reply;
    *json_len = call->received;
    *binary_len = 0;
    return TRUE;
  }
  if (call->received < (gsize) call->json_len) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "POST %s: the reply "
        "ends (%" G_GSIZE_FORMAT " bytes) inside its JSON header of %"
        G_GSSIZE_FORMAT, url, call->received, call->json_len);
    return FALSE;
  }
  *json = call->reply + call->json_room - call->json_len;
  *json_len = call->json_len;
  *binary_len = call->received - call->json_len;
  return TRUE;
}

void
cbi_http_call_figures (CbiHttpCall * call, guint64 * rtt_ns, guint64 * sent,
    guint64 * received)
{
  g_mutex_lock (&call->http->lock);
  *rtt_ns = call->end_us > call->start_us ?
      (guint64) (call->end_us - call->start_us) * 1000 : 0;
  *sent = call->body_len;
  *received = call->received;
  g_mutex_unlock (&call->http->lock);
}
