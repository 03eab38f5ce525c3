/* cudabatchinfer: the remote backend, a KServe v2 (Open Inference
 * protocol) client
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The server does the arithmetic; the engine keeps batching, padding,
 * warm-up and timestamps. A plan holds, per batch slot, one request body
 * (its JSON header written once, the frames packed straight after it)
 * and one reply buffer, both from the pool: the wire is the only copy
 * each way. compute() puts a slot's request on the wire and returns;
 * finish() waits for its reply, so that batches overlap on the wire as
 * they do on a GPU's stream (max-inflight).
 */
#include "cbiremote.h"
#include "cpu/frames.h"
#include "http.h"

#include <gst/gst.h>
#include <string.h>

GST_DEBUG_CATEGORY (cbi_remote_debug);
#define GST_CAT_DEFAULT cbi_remote_debug

/* room for a reply's JSON header, before its binary part: a header names
 * the outputs and their shapes, far less than this */
#define CBI_REMOTE_JSON_ROOM (64 * 1024)
/* the request's JSON header is padded to this, so the frames after it
 * are aligned as the pool's blocks are */
#define CBI_REMOTE_ALIGN 64

typedef struct
{
  gchar *url;                   /* the server's, without a trailing / */
  gchar *model_url;             /* .../v2/models/<name>[/versions/<v>] */
  gchar *infer_url;
  CbiHttp *http;
  CbiRemoteModel *model;
} CbiRemote;

typedef struct
{
  guint8 *request;              /* pool: JSON header, then the input */
  gsize header_len;
  guint8 *reply;                /* pool: room for the JSON, then outputs */
  CbiHttpCall *call;
  gboolean on_wire;             /* started, not yet waited for */
  const gfloat *outputs[CBI_MAX_OUTPUTS];
} CbiRemoteSlot;

typedef struct
{
  CbiRemoteSlot slots[CBI_MAX_INFLIGHT];
  guint n_slots;
  CbiShape input;               /* as the server takes it */
  gboolean channels_last;
  gsize input_bytes;
  guint n_outputs;
  gchar *names[CBI_MAX_OUTPUTS];
  CbiShape outputs[CBI_MAX_OUTPUTS];
  gsize output_bytes;
} CbiRemotePlan;

static const CbiAllocator *
cbi_remote_allocator (CbiBackend * backend)
{
  return cbi_host_allocator ();
}

static void
cbi_remote_free (CbiBackend * backend)
{
  CbiRemote *remote = backend->context;

  cbi_http_free (remote->http);
  cbi_remote_model_free (remote->model);
  g_free (remote->url);
  g_free (remote->model_url);
  g_free (remote->infer_url);
  g_free (remote);
  g_free (backend);
}

/* The bytes of a float32 tensor of @shape; 0 where they overflow. */
static gsize
cbi_remote_bytes (const CbiShape * shape)
{
  gsize n = sizeof (gfloat);
  gint d;

  for (d = 0; d < shape->n_dims; d++)
    if (shape->dims[d] < 0 || !g_size_checked_mul (&n, n,
            (gsize) shape->dims[d]))
      return 0;
  return n;
}

static void
cbi_remote_free_plan (CbiBackend * backend, gpointer p, CbiPool * pool,
    CbiPool * staging)
{
  CbiRemotePlan *plan = p;
  guint k;

  for (k = 0; k < plan->n_slots; k++) {
    CbiRemoteSlot *s = &plan->slots[k];
    /* off the wire before its buffers go */
    cbi_http_call_free (s->call);
    if (s->request)
      cbi_pool_release (pool, s->request);
    if (s->reply)
      cbi_pool_release (pool, s->reply);
  }
  for (k = 0; k < plan->n_outputs; k++)
    g_free (plan->names[k]);
  g_free (plan);
}

static gpointer
cbi_remote_plan (CbiBackend * backend, const CbiGraph * graph,
    const CbiShape * shapes, CbiPool * pool, CbiPool * staging,
    gboolean unpack_frames, guint64 * workspace_bytes, GError ** error)
{
  CbiRemote *remote = backend->context;
  const CbiShape *x = &shapes[graph->input];
  CbiRemotePlan *plan = g_new0 (CbiRemotePlan, 1);
  gchar *header = NULL;
  guint k;

  *workspace_bytes = 0;
  plan->input = *x;
  plan->channels_last = graph->input_channels_last;
  if (plan->channels_last) {
    plan->input.dims[1] = x->dims[2];
    plan->input.dims[2] = x->dims[3];
    plan->input.dims[3] = x->dims[1];
  }
  plan->input_bytes = cbi_remote_bytes (&plan->input);
  plan->n_outputs = graph->n_outputs;
  for (k = 0; k < graph->n_outputs; k++) {
    gsize bytes = cbi_remote_bytes (&shapes[graph->outputs[k]]);

    plan->names[k] = g_strdup (cbi_graph_tensor (graph,
            graph->outputs[k])->name);
    plan->outputs[k] = shapes[graph->outputs[k]];
    if (bytes == 0 || !g_size_checked_add (&plan->output_bytes,
            plan->output_bytes, bytes))
      plan->output_bytes = G_MAXSIZE;
  }
  if (plan->input_bytes == 0 || plan->output_bytes > G_MAXSIZE / 2) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model %s "
        "gives an output of no elements, or of more bytes than a reply can "
        "hold", remote->model->name);
    goto failed;
  }
  /* a server's model that fixes its batch (Triton's max_batch_size 0)
   * takes no other */
  if (remote->model->inputs[0].dims[0] > 0
      && remote->model->inputs[0].dims[0] != x->dims[0]) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model %s "
        "takes batches of %" G_GINT64_FORMAT " only, not %" G_GINT64_FORMAT
        ": set batch to it", remote->model->name,
        remote->model->inputs[0].dims[0], x->dims[0]);
    goto failed;
  }
  if (remote->model->max_batch > 0 && x->dims[0] > remote->model->max_batch) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_MODEL, "the server's model %s "
        "takes batches of %" G_GINT64_FORMAT " at most (its max_batch_size)"
        ", not %" G_GINT64_FORMAT ": lower batch, or raise max_batch_size "
        "in its configuration", remote->model->name, remote->model->max_batch,
        x->dims[0]);
    goto failed;
  }
  header = cbi_remote_request_header (remote->model->inputs[0].name,
      &plan->input, (const gchar * const *) plan->names, plan->n_outputs,
      CBI_REMOTE_ALIGN);
  plan->n_slots = MAX (backend->inflight, 1);
  for (k = 0; k < plan->n_slots; k++) {
    CbiRemoteSlot *s = &plan->slots[k];

    s->header_len = strlen (header);
    s->request = cbi_pool_take (pool, s->header_len + plan->input_bytes,
        "a request to the server", error);
    s->reply = s->request ? cbi_pool_take (pool, CBI_REMOTE_JSON_ROOM +
        plan->output_bytes, "a reply from the server", error) : NULL;
    if (s->reply == NULL)
      goto failed;
    memcpy (s->request, header, s->header_len);
    s->call = cbi_http_call_new (remote->http, remote->infer_url, s->request,
        s->header_len + plan->input_bytes, s->header_len, s->reply,
        CBI_REMOTE_JSON_ROOM + plan->output_bytes, CBI_REMOTE_JSON_ROOM, error);
    if (s->call == NULL)
      goto failed;
  }
  GST_DEBUG ("planned %s: %" G_GSIZE_FORMAT " bytes out, %" G_GSIZE_FORMAT
      " back, %u slots", remote->infer_url, plan->input_bytes,
      plan->output_bytes, plan->n_slots);
  g_free (header);
  return plan;

failed:
  g_free (header);
  cbi_remote_free_plan (backend, plan, pool, staging);
  return NULL;
}

/* Slot @slot's input in its request body, to be written: a request of
 * the slot's still on the wire (its batch released uncollected, as a
 * flush does) comes off it first. */
static gfloat *
cbi_remote_input (CbiRemotePlan * plan, guint slot)
{
  CbiRemoteSlot *s = &plan->slots[slot];

  if (s->on_wire) {
    cbi_http_call_cancel (s->call);
    s->on_wire = FALSE;
  }
  return (gfloat *) (gpointer) (s->request + s->header_len);
}

static gboolean
cbi_remote_upload (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiRemotePlan *plan = p;

  if (batch->in_device) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_SHAPE, "frames in a GPU's "
        "memory reached the remote backend: only the cuda backend reads "
        "them");
    return FALSE;
  }
  if (plan->channels_last)
    cbi_pack_frames_channels_last (batch, cbi_remote_input (plan, slot));
  else
    cbi_pack_frames (batch, cbi_remote_input (plan, slot));
  return TRUE;
}

/* A channels-first tensor goes to a server that takes it channels last
 * transposed: the tensor API's path (tests, conformance), never frames'. */
static gboolean
cbi_remote_upload_tensor (CbiBackend * backend, gpointer p, guint slot,
    const gfloat * input, GError ** error)
{
  CbiRemotePlan *plan = p;
  gfloat *to = cbi_remote_input (plan, slot);
  const gint64 *d = plan->input.dims;
  gint64 i, y, x, c;

  if (!plan->channels_last) {
    memcpy (to, input, plan->input_bytes);
    return TRUE;
  }
  for (i = 0; i < d[0]; i++)
    for (y = 0; y < d[1]; y++)
      for (x = 0; x < d[2]; x++)
        for (c = 0; c < d[3]; c++)
          to[((i * d[1] + y) * d[2] + x) * d[3] + c] =
              input[((i * d[3] + c) * d[1] + y) * d[2] + x];
  return TRUE;
}

static gboolean
cbi_remote_compute (CbiBackend * backend, gpointer p, guint slot,
    GError ** error)
{
  CbiRemoteSlot *s = &((CbiRemotePlan *) p)->slots[slot];

  cbi_http_call_start (s->call);
  s->on_wire = TRUE;
  return TRUE;
}

/* Nothing to start: the reply is read as it comes (finish ()). */
static gboolean
cbi_remote_download (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  return TRUE;
}

static gboolean
cbi_remote_finish (CbiBackend * backend, gpointer p, guint slot,
    const CbiFrameBatch * batch, GError ** error)
{
  CbiRemote *remote = backend->context;
  CbiRemotePlan *plan = p;
  CbiRemoteSlot *s = &plan->slots[slot];
  gsize offsets[CBI_MAX_OUTPUTS], json_len, binary_len;
  const guint8 *json;
  glong status = 0;
  guint k;

  if (!s->on_wire) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_BUSY, "no request of slot %u "
        "is on the wire", slot);
    return FALSE;
  }
  s->on_wire = FALSE;
  memset (s->outputs, 0, sizeof (s->outputs));
  if (!cbi_http_call_wait (s->call, &status, &json, &json_len, &binary_len,
          error))
    return FALSE;
  if (status != 200) {
    gchar *text = cbi_remote_error_text ((const gchar *) json, json_len);

    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server at %s "
        "answered %ld to a batch for model %s: %s", remote->url, status,
        remote->model->name, text);
    g_free (text);
    return FALSE;
  }
  if (!cbi_remote_reply_parse ((const gchar *) json, json_len, binary_len,
          (const gchar * const *) plan->names, plan->outputs, plan->n_outputs,
          offsets, error))
    return FALSE;
  for (k = 0; k < plan->n_outputs; k++)
    s->outputs[k] = (const gfloat *) (gconstpointer) (s->reply +
        CBI_REMOTE_JSON_ROOM + offsets[k]);
  if (batch && batch->out)
    cbi_unpack_frames (batch, s->outputs[0]);
  return TRUE;
}

static const gfloat *
cbi_remote_output (CbiBackend * backend, gpointer p, guint slot, guint index,
    GError ** error)
{
  const gfloat *out = ((CbiRemotePlan *) p)->slots[slot].outputs[index];

  if (out == NULL)
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "slot %u has no reply "
        "to read output %u from", slot, index);
  return out;
}

static void
cbi_remote_figures (CbiBackend * backend, gpointer p, guint slot,
    guint64 * rtt_ns, guint64 * sent, guint64 * received)
{
  cbi_http_call_figures (((CbiRemotePlan *) p)->slots[slot].call, rtt_ns,
      sent, received);
}

static const CbiBackendIface cbi_remote_iface = {
  .name = "remote",
  .allocator = cbi_remote_allocator,
  .staging_allocator = NULL,    /* the request is the staging */
  .free = cbi_remote_free,
  .plan = cbi_remote_plan,
  .free_plan = cbi_remote_free_plan,
  .planners = NULL,             /* the server runs every op */
  .upload = cbi_remote_upload,  /* packs straight into the request */
  .upload_tensor = cbi_remote_upload_tensor,
  .compute = cbi_remote_compute,        /* puts the request on the wire */
  .download = cbi_remote_download,
  .finish = cbi_remote_finish,  /* waits for the reply, unpacks it */
  .output = cbi_remote_output,  /* in the reply, in place */
  .device_memory = NULL,
  .has_precision = NULL,        /* float32 on the wire */
  .wire_figures = cbi_remote_figures,
};

/* GET @path under @base: %TRUE where the server answered 200; the body in
 * @body where given. @what names the step in @error. */
static gboolean
cbi_remote_get (CbiRemote * remote, const gchar * base, const gchar * path,
    const gchar * what, GBytes ** body, GError ** error)
{
  gchar *url = g_strconcat (base, path, NULL);
  GError *get_error = NULL;
  glong status = 0;
  GBytes *reply = cbi_http_get (remote->http, url, &status, &get_error);
  gboolean ok = reply != NULL && status == 200;

  if (reply == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "cannot reach the "
        "inference server at %s: %s", remote->url, get_error->message);
  } else if (!ok) {
    gsize len;
    const gchar *data = g_bytes_get_data (reply, &len);
    gchar *text = cbi_remote_error_text (data, len);

    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "%s: GET %s answered "
        "%ld: %s", what, url, status, text);
    g_free (text);
  }
  g_clear_error (&get_error);
  if (ok && body)
    *body = g_bytes_ref (reply);
  g_clear_pointer (&reply, g_bytes_unref);
  g_free (url);
  return ok;
}

/* The server ready, the model ready, its metadata, and where Triton says
 * it, its largest batch. */
static gboolean
cbi_remote_open (CbiRemote * remote, const CbiRemoteConfig * config,
    GError ** error)
{
  GBytes *metadata = NULL, *model_config = NULL;
  gchar *what;
  gboolean ok;
  gsize len;
  const gchar *data;

  if (!cbi_remote_get (remote, remote->url, "/v2/health/ready",
          "the inference server is not ready", NULL, error))
    return FALSE;
  what = g_strdup_printf ("model %s%s%s is not ready on the server",
      config->model, config->version && *config->version ? " version " :
      "", config->version ? config->version : "");
  ok = cbi_remote_get (remote, remote->model_url, "/ready", what, NULL, error)
      && cbi_remote_get (remote, remote->model_url, "", "the server gives no "
      "metadata of the model", &metadata, error);
  g_free (what);
  if (!ok)
    return FALSE;
  data = g_bytes_get_data (metadata, &len);
  remote->model = cbi_remote_model_parse (data, len, error);
  g_bytes_unref (metadata);
  if (remote->model == NULL)
    return FALSE;
  if (remote->model->name == NULL)
    remote->model->name = g_strdup (config->model);
  /* Triton's configuration extension; other servers have none */
  if (cbi_remote_get (remote, remote->model_url, "/config", "", &model_config,
          NULL)) {
    data = g_bytes_get_data (model_config, &len);
    remote->model->max_batch = cbi_remote_config_max_batch (data, len);
    g_bytes_unref (model_config);
  }
  GST_INFO ("%s: model %s (%s), %u inputs, %u outputs, largest batch %"
      G_GINT64_FORMAT, remote->url, remote->model->name,
      remote->model->platform ? remote->model->platform : "platform unsaid",
      remote->model->n_inputs, remote->model->n_outputs,
      remote->model->max_batch);
  return TRUE;
}

CbiBackend *
cbi_backend_remote_new (const CbiRemoteConfig * config, GError ** error)
{
  CbiBackend *backend;
  CbiRemote *remote;
  gchar *name, *version = NULL;

  GST_DEBUG_CATEGORY_INIT (cbi_remote_debug, "cudabatchinfer-remote", 0,
      "cudabatchinfer remote backend (KServe v2 client)");
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND, "the remote backend "
      "sends tensors as this machine holds them, and the protocol's binary "
      "data is little-endian: this machine is not");
  return NULL;
#endif
  if (config->url == NULL || !(g_str_has_prefix (config->url, "http://")
          || g_str_has_prefix (config->url, "https://"))) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "server-url must be "
        "http://host:port (or https://), not %s", config->url ? config->url :
        "unset");
    return NULL;
  }
  if (config->model == NULL || *config->model == '\0') {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "remote-model is unset: "
        "name the model on the server");
    return NULL;
  }
  remote = g_new0 (CbiRemote, 1);
  backend = g_new0 (CbiBackend, 1);
  backend->iface = &cbi_remote_iface;
  backend->context = remote;
  remote->url = g_strdup (config->url);
  while (g_str_has_suffix (remote->url, "/"))
    remote->url[strlen (remote->url) - 1] = '\0';
  name = g_uri_escape_string (config->model, NULL, FALSE);
  if (config->version && *config->version)
    version = g_uri_escape_string (config->version, NULL, FALSE);
  remote->model_url = g_strconcat (remote->url, "/v2/models/", name,
      version ? "/versions/" : "", version ? version : "", NULL);
  remote->infer_url = g_strconcat (remote->model_url, "/infer", NULL);
  g_free (name);
  g_free (version);
  remote->http = cbi_http_new (config->timeout_ns, error);
  if (remote->http == NULL || !cbi_remote_open (remote, config, error)) {
    cbi_remote_free (backend);
    return NULL;
  }
  return backend;
}

const CbiRemoteModel *
cbi_backend_remote_model (CbiBackend * backend)
{
  return ((CbiRemote *) backend->context)->model;
}
