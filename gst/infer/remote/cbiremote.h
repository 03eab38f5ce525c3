/* cudabatchinfer: the remote backend, a KServe v2 (Open Inference
 * protocol) client
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "cbibackend.h"

G_BEGIN_DECLS

/* The most outputs of a server's model and dimensions of its tensors the
 * backend reads: the engine's own limits. */
#define CBI_REMOTE_MAX_DIMS CBI_MAX_DIMS

/**
 * CbiRemoteTensor:
 * @name: as the server names it
 * @datatype: the protocol's name of its type ("FP32", "UINT8", ...)
 * @n_dims: its rank
 * @dims: its dimensions, -1 where the server leaves one open
 *
 * One input or output of a server's model, from its metadata.
 */
typedef struct
{
  gchar *name;
  gchar *datatype;
  gint n_dims;
  gint64 dims[CBI_REMOTE_MAX_DIMS];
} CbiRemoteTensor;

/**
 * CbiRemoteModel:
 * @name: the model's name
 * @platform: (nullable): what runs it on the server ("onnxruntime_onnx")
 * @inputs: (array length=n_inputs): its inputs
 * @outputs: (array length=n_outputs): its outputs
 * @max_batch: the largest batch it takes (Triton's model configuration),
 *   -1 where the server does not say
 *
 * What the server says of a model (`GET v2/models/<name>`).
 */
typedef struct
{
  gchar *name;
  gchar *platform;
  CbiRemoteTensor inputs[CBI_MAX_OUTPUTS];
  guint n_inputs;
  CbiRemoteTensor outputs[CBI_MAX_OUTPUTS];
  guint n_outputs;
  gint64 max_batch;
} CbiRemoteModel;

/* protocol.c: the protocol's JSON, through json-glib */

/* Returns: (transfer full) (nullable): the model of a metadata reply,
 * %NULL with @error (CBI_ERROR_REMOTE) where it is not one, or names
 * more inputs or outputs than the engine holds. */
CbiRemoteModel *cbi_remote_model_parse (const gchar * json, gsize len,
    GError ** error);
void cbi_remote_model_free (CbiRemoteModel * model);
/* Triton's `max_batch_size` in a model configuration reply; -1 where it
 * has none (another server, or not a configuration). */
gint64 cbi_remote_config_max_batch (const gchar * json, gsize len);
/* Returns: (transfer full): the message of an error reply (`{"error":
 * "..."}`), else the reply itself, cut short, as text. */
gchar *cbi_remote_error_text (const gchar * json, gsize len);

/* Returns: (transfer full): the JSON header of an inference request of one
 * FP32 input, @name of @shape, sent as binary data, that asks for
 * @outputs (@n_outputs names) as binary data; padded with spaces to a
 * multiple of @align bytes, so that the data after it is aligned. */
gchar *cbi_remote_request_header (const gchar * name, const CbiShape * shape,
    const gchar * const *outputs, guint n_outputs, gsize align);

/* Reads an inference reply's JSON header (@json, @len), which the binary
 * data (@binary_len bytes) follows: each output of @names (@n_outputs)
 * must be there, FP32, of @shapes and sent as binary data. @offsets
 * receives where each one's data starts in the binary part. %FALSE with
 * @error (CBI_ERROR_REMOTE) naming what differs. */
gboolean cbi_remote_reply_parse (const gchar * json, gsize len,
    gsize binary_len, const gchar * const *names, const CbiShape * shapes,
    guint n_outputs, gsize * offsets, GError ** error);

/* graph.c: the model as the engine sees it */

/* Returns: (transfer full) (nullable): a graph of @model's input and
 * outputs, each output a CBI_OP_REMOTE node of the input: what the engine
 * plans with where no local copy of the model is given. %NULL with
 * @error (CBI_ERROR_MODEL) where the model does not take video frames. */
CbiGraph *cbi_remote_graph_new (const CbiRemoteModel * model,
    GError ** error);
/* Whether @graph (a local copy of the model) has the server's @model's
 * input and outputs: names, types, ranks, channels and fixed sizes;
 * otherwise @error (CBI_ERROR_MODEL) names the server's figure and
 * ours. */
gboolean cbi_remote_graph_check (const CbiGraph * graph,
    const CbiRemoteModel * model, GError ** error);
/* Whether the server's model takes its frames channels last (N x H x W
 * x 3). */
gboolean cbi_remote_channels_last (const CbiRemoteModel * model);

/* backend.c */

/* Returns: (transfer full) (nullable): the backend for the model on the
 * server of @config, once the server and the model said they are ready
 * and the model's metadata was read (cbi_backend_remote_model());
 * %NULL with @error (CBI_ERROR_REMOTE) otherwise. */
CbiBackend *cbi_backend_remote_new (const CbiRemoteConfig * config,
    GError ** error);
/* Returns: (transfer none): what the server said of the model. */
const CbiRemoteModel *cbi_backend_remote_model (CbiBackend * backend);

G_END_DECLS
