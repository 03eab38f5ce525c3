/* cudabatchinfer: the KServe v2 protocol's JSON, with Triton's binary
 * tensor data extension
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A request is a JSON header and the input's raw little-endian bytes
 * after it; a reply the same with the outputs'. The header's length goes
 * in the HTTP header Inference-Header-Content-Length, both ways.
 */
#include "cbiremote.h"

#include <json-glib/json-glib.h>
#include <string.h>

/* a reply's outputs are told apart in the bits of a guint */
G_STATIC_ASSERT (CBI_MAX_OUTPUTS <= 32);

/* Returns: (transfer full) (nullable): the JSON object @json holds. */
static JsonNode *
cbi_remote_parse_object (const gchar * json, gsize len, GError ** error)
{
  JsonParser *parser = json_parser_new_immutable ();
  GError *parse_error = NULL;
  JsonNode *root = NULL;

  if (len > G_MAXSSIZE) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "a JSON reply of %"
        G_GSIZE_FORMAT " bytes", len);
  } else if (!json_parser_load_from_data (parser, json, (gssize) len,
          &parse_error)) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
        "is not JSON: %s", parse_error->message);
    g_clear_error (&parse_error);
  } else if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser))) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
        "is JSON, but not an object");
  } else {
    root = json_node_ref (json_parser_get_root (parser));
  }
  g_object_unref (parser);
  return root;
}

/* The array @member of @o, or %NULL. */
static JsonArray *
cbi_remote_array (JsonObject * o, const gchar * member)
{
  JsonNode *n = json_object_get_member (o, member);

  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

/* The string @member of @o, or %NULL. */
static const gchar *
cbi_remote_string (JsonObject * o, const gchar * member)
{
  JsonNode *n = json_object_get_member (o, member);

  return n && JSON_NODE_HOLDS_VALUE (n)
      && json_node_get_value_type (n) == G_TYPE_STRING ?
      json_node_get_string (n) : NULL;
}

/* The integer @member of @o (an integer JSON number), or @otherwise. */
static gint64
cbi_remote_int (JsonObject * o, const gchar * member, gint64 otherwise)
{
  JsonNode *n = o ? json_object_get_member (o, member) : NULL;

  return n && JSON_NODE_HOLDS_VALUE (n)
      && json_node_get_value_type (n) == G_TYPE_INT64 ?
      json_node_get_int (n) : otherwise;
}

/* A JSON array of integers into @dims (@n_dims): %FALSE where it is not
 * one, is longer than the engine's tensors, or holds a dimension that is
 * neither -1 (open) nor a size a frame's tensor can have. */
static gboolean
cbi_remote_dims (JsonArray * a, gint * n_dims, gint64 * dims)
{
  guint i, n = a ? json_array_get_length (a) : 0;

  if (a == NULL || n > CBI_REMOTE_MAX_DIMS)
    return FALSE;
  for (i = 0; i < n; i++) {
    JsonNode *d = json_array_get_element (a, i);
    if (!JSON_NODE_HOLDS_VALUE (d)
        || json_node_get_value_type (d) != G_TYPE_INT64)
      return FALSE;
    dims[i] = json_node_get_int (d);
    if (dims[i] < -1 || dims[i] > G_MAXINT32)
      return FALSE;
  }
  *n_dims = (gint) n;
  return TRUE;
}

/* The tensors of metadata array @member into @out (@n_out). */
static gboolean
cbi_remote_tensors (JsonObject * o, const gchar * member,
    CbiRemoteTensor * out, guint * n_out, GError ** error)
{
  JsonArray *a = cbi_remote_array (o, member);
  guint i, n = a ? json_array_get_length (a) : 0;

  if (a == NULL || n == 0 || n > CBI_MAX_OUTPUTS) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the model's metadata "
        "has %u %s (the engine takes 1 to %d)", n, member, CBI_MAX_OUTPUTS);
    return FALSE;
  }
  for (i = 0; i < n; i++) {
    JsonNode *e = json_array_get_element (a, i);
    JsonObject *t = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) :
        NULL;
    const gchar *name = t ? cbi_remote_string (t, "name") : NULL;
    const gchar *type = t ? cbi_remote_string (t, "datatype") : NULL;

    if (name == NULL || type == NULL || !cbi_remote_dims (cbi_remote_array (t,
                "shape"), &out[i].n_dims, out[i].dims)) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the model's "
          "metadata has %s without a name, a datatype or a shape of at "
          "most %d integers", member, CBI_REMOTE_MAX_DIMS);
      *n_out = i;
      return FALSE;
    }
    out[i].name = g_strdup (name);
    out[i].datatype = g_strdup (type);
  }
  *n_out = n;
  return TRUE;
}

CbiRemoteModel *
cbi_remote_model_parse (const gchar * json, gsize len, GError ** error)
{
  JsonNode *root = cbi_remote_parse_object (json, len, error);
  CbiRemoteModel *model;
  JsonObject *o;

  if (root == NULL)
    return NULL;
  o = json_node_get_object (root);
  model = g_new0 (CbiRemoteModel, 1);
  model->max_batch = -1;
  model->name = g_strdup (cbi_remote_string (o, "name"));
  model->platform = g_strdup (cbi_remote_string (o, "platform"));
  if (!cbi_remote_tensors (o, "inputs", model->inputs, &model->n_inputs, error)
      || !cbi_remote_tensors (o, "outputs", model->outputs,
          &model->n_outputs, error))
    g_clear_pointer (&model, cbi_remote_model_free);
  json_node_unref (root);
  return model;
}

void
cbi_remote_model_free (CbiRemoteModel * model)
{
  guint i;

  if (model == NULL)
    return;
  for (i = 0; i < model->n_inputs; i++) {
    g_free (model->inputs[i].name);
    g_free (model->inputs[i].datatype);
  }
  for (i = 0; i < model->n_outputs; i++) {
    g_free (model->outputs[i].name);
    g_free (model->outputs[i].datatype);
  }
  g_free (model->name);
  g_free (model->platform);
  g_free (model);
}

gint64
cbi_remote_config_max_batch (const gchar * json, gsize len)
{
  JsonNode *root = cbi_remote_parse_object (json, len, NULL);
  gint64 max_batch;

  if (root == NULL)
    return -1;
  max_batch = cbi_remote_int (json_node_get_object (root), "max_batch_size",
      -1);
  json_node_unref (root);
  return max_batch;
}

gchar *
cbi_remote_error_text (const gchar * json, gsize len)
{
  JsonNode *root = cbi_remote_parse_object (json, len, NULL);
  const gchar *message = root ? cbi_remote_string (json_node_get_object
      (root), "error") : NULL;
  gchar *text;

  if (message)
    text = g_strdup (message);
  else if (len == 0)
    text = g_strdup ("(an empty reply)");
  else
    text = g_utf8_make_valid (json, MIN (len, 200));
  g_clear_pointer (&root, json_node_unref);
  return text;
}

gchar *
cbi_remote_request_header (const gchar * name, const CbiShape * shape,
    const gchar * const *outputs, guint n_outputs, gsize align)
{
  JsonBuilder *b = json_builder_new_immutable ();
  JsonGenerator *gen = json_generator_new ();
  JsonNode *root;
  GString *text;
  gint64 count = 1;
  gint d;
  guint i;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "inputs");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, name);
  json_builder_set_member_name (b, "shape");
  json_builder_begin_array (b);
  for (d = 0; d < shape->n_dims; d++) {
    json_builder_add_int_value (b, shape->dims[d]);
    count *= shape->dims[d];
  }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "datatype");
  json_builder_add_string_value (b, "FP32");
  json_builder_set_member_name (b, "parameters");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "binary_data_size");
  json_builder_add_int_value (b, count * (gint64) sizeof (gfloat));
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "outputs");
  json_builder_begin_array (b);
  for (i = 0; i < n_outputs; i++) {
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, outputs[i]);
    json_builder_set_member_name (b, "parameters");
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "binary_data");
    json_builder_add_boolean_value (b, TRUE);
    json_builder_end_object (b);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  text = g_string_new (NULL);
  json_generator_to_gstring (gen, text);
  /* whitespace after the object is still JSON */
  while (align > 1 && text->len % align != 0)
    g_string_append_c (text, ' ');
  json_node_unref (root);
  g_object_unref (gen);
  g_object_unref (b);
  return g_string_free (text, FALSE);
}

/* Reply output @t (an object) against output @name of @shape: its
 * binary data's size, or -1 with @error. */
static gint64
cbi_remote_reply_output (JsonObject * t, const gchar * name,
    const CbiShape * shape, GError ** error)
{
  JsonNode *p = json_object_get_member (t, "parameters");
  const gchar *type = cbi_remote_string (t, "datatype");
  gint64 dims[CBI_REMOTE_MAX_DIMS], size, count = 1;
  gint n_dims = 0, d;
  gboolean same;

  if (g_strcmp0 (type, "FP32") != 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server sent "
        "output %s as %s: the element reads FP32", name, type ? type :
        "no datatype");
    return -1;
  }
  size = p && JSON_NODE_HOLDS_OBJECT (p) ?
      cbi_remote_int (json_node_get_object (p), "binary_data_size", -1) : -1;
  if (size < 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server sent "
        "output %s as JSON, not binary data: it lacks the binary tensor "
        "data extension", name);
    return -1;
  }
  same = cbi_remote_dims (cbi_remote_array (t, "shape"), &n_dims, dims)
      && n_dims == shape->n_dims;
  for (d = 0; same && d < n_dims; d++)
    same = dims[d] == shape->dims[d];
  for (d = 0; d < shape->n_dims; d++)
    count *= shape->dims[d];
  if (!same || size != count * (gint64) sizeof (gfloat)) {
    gchar *ours = cbi_shape_to_string (shape);
    GString *theirs = g_string_new ("[");

    for (d = 0; d < n_dims; d++)
      g_string_append_printf (theirs, "%s%" G_GINT64_FORMAT, d ? ", " : "",
          dims[d]);
    g_string_append_c (theirs, ']');
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server sent "
        "output %s of shape %s in %" G_GINT64_FORMAT " bytes; the element "
        "planned for %s", name, theirs->str, size, ours);
    g_string_free (theirs, TRUE);
    g_free (ours);
    return -1;
  }
  return size;
}

gboolean
cbi_remote_reply_parse (const gchar * json, gsize len, gsize binary_len,
    const gchar * const *names, const CbiShape * shapes, guint n_outputs,
    gsize * offsets, GError ** error)
{
  JsonNode *root = cbi_remote_parse_object (json, len, error);
  JsonArray *a;
  guint i, k, n, seen = 0;
  gsize at = 0;
  gboolean ok = root != NULL;

  a = ok ? cbi_remote_array (json_node_get_object (root), "outputs") : NULL;
  n = a ? json_array_get_length (a) : 0;
  if (ok && a == NULL) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
        "has no outputs");
    ok = FALSE;
  }
  /* the binary parts come in the reply's order of its outputs */
  for (i = 0; ok && i < n; i++) {
    JsonNode *e = json_array_get_element (a, i);
    JsonObject *t = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) :
        NULL;
    const gchar *name = t ? cbi_remote_string (t, "name") : NULL;
    gint64 size;

    for (k = 0; name && k < n_outputs && strcmp (names[k], name) != 0; k++);
    if (name == NULL || k == n_outputs || (seen & (1u << k))) {
      g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
          "has output %s %s", name ? name : "(no name)", name
          && k < n_outputs ? "twice" : "which the element did not ask for");
      ok = FALSE;
      break;
    }
    seen |= 1u << k;
    size = cbi_remote_reply_output (t, name, &shapes[k], error);
    if (size < 0 || (gsize) size > binary_len - at) {
      if (size >= 0)
        g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
            "ends before output %s's %" G_GINT64_FORMAT " bytes (%"
            G_GSIZE_FORMAT " bytes of binary data in all)", name, size,
            binary_len);
      ok = FALSE;
      break;
    }
    offsets[k] = at;
    at += size;
  }
  /* the reply's outputs are distinct and asked for (refused above
   * otherwise): it has them all where every bit is set */
  if (ok && seen != (1u << n_outputs) - 1) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
        "has %u of the %u outputs asked for", n, n_outputs);
    ok = FALSE;
  }
  if (ok && at != binary_len) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_REMOTE, "the server's reply "
        "has %" G_GSIZE_FORMAT " bytes of binary data for outputs of %"
        G_GSIZE_FORMAT, binary_len, at);
    ok = FALSE;
  }
  g_clear_pointer (&root, json_node_unref);
  return ok;
}
