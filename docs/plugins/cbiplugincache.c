/* GStreamer cudabatchinfer: the plugin's documentation cache
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Describes a loaded plugin in the JSON of GStreamer's plugin cache
 * (docs/plugins/gst_plugins_cache.json upstream, written there by
 * gst-hotdoc-plugins-scanner and gst-plugins-doc-cache-generator.py, which
 * Debian does not ship): per element its rank, metadata, type hierarchy,
 * pad templates with their caps, properties with type, flags, default and
 * range, signals, and the enum and flags types the plugin marked as its
 * API. The text is laid out as that generator's json.dump (indent=4,
 * sort_keys=True, ensure_ascii=False) lays it out, so that a checked-in
 * cache and a freshly built one compare byte for byte.
 *
 * Where upstream's scanner writes a figure wrongly this one writes it
 * right: unsigned ranges as unsigned, signed 64-bit defaults as signed,
 * a percent sign once (upstream doubles it, escaping for a printf that
 * never reads it). It adds the default of an array property
 * (GstValueArray), which upstream leaves out, so the cache says what
 * gst-inspect says. Compared with upstream's 1.22 caches of base and good
 * plugins that Debian builds, these and the versions' own changes are
 * the only differences. A type the plugin marks as its API that is not an
 * enum or flags (a pad or base class of its own) is refused, not
 * described: none of ours is one.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cbiplugincache.h"

#include <stdlib.h>
#include <string.h>

/* A JSON tree: strings and booleans are all this cache holds as leaves. */
typedef enum
{
  CBI_JSON_STRING,
  CBI_JSON_BOOL,
  CBI_JSON_ARRAY,
  CBI_JSON_OBJECT,
} CbiJsonKind;

typedef struct
{
  CbiJsonKind kind;
  gchar *key;                   /* member name inside an object */
  gchar *string;
  gboolean boolean;
  GPtrArray *children;          /* of CbiJson, owned */
} CbiJson;

static void
cbi_json_free (gpointer data)
{
  CbiJson *node = data;

  g_free (node->key);
  g_free (node->string);
  if (node->children)
    g_ptr_array_unref (node->children);
  g_free (node);
}

static CbiJson *
cbi_json_add (CbiJson * parent, const gchar * key, CbiJsonKind kind)
{
  CbiJson *node = g_new0 (CbiJson, 1);

  node->kind = kind;
  if (kind == CBI_JSON_ARRAY || kind == CBI_JSON_OBJECT)
    node->children = g_ptr_array_new_with_free_func (cbi_json_free);
  if (parent) {
    g_assert ((parent->kind == CBI_JSON_OBJECT) == (key != NULL));
    node->key = g_strdup (key);
    g_ptr_array_add (parent->children, node);
  }
  return node;
}

static void
cbi_json_take_string (CbiJson * parent, const gchar * key, gchar * value)
{
  cbi_json_add (parent, key, CBI_JSON_STRING)->string = value;
}

static void
cbi_json_set_string (CbiJson * parent, const gchar * key, const gchar * value)
{
  /* upstream's scanner writes a NULL string as NULL */
  cbi_json_take_string (parent, key, g_strdup (value ? value : "NULL"));
}

static void
G_GNUC_PRINTF (3, 4)
cbi_json_set_printf (CbiJson * parent, const gchar * key, const gchar * format,
    ...)
{
  va_list args;

  va_start (args, format);
  cbi_json_take_string (parent, key, g_strdup_vprintf (format, args));
  va_end (args);
}

static void
cbi_json_set_bool (CbiJson * parent, const gchar * key, gboolean value)
{
  cbi_json_add (parent, key, CBI_JSON_BOOL)->boolean = !!value;
}

static gint
cbi_json_compare_keys (gconstpointer a, gconstpointer b)
{
  const CbiJson *x = *(CbiJson * const *) a, *y = *(CbiJson * const *) b;

  /* strcmp orders UTF-8 by code point, as Python's sort_keys does */
  return strcmp (x->key, y->key);
}

/* Python's json escapes: the two that must be, the five control
 * characters with a short form, and \u00XX for the other controls;
 * anything else, UTF-8 included, as it is (ensure_ascii=False). */
static void
cbi_json_write_string (GString * out, const gchar * s)
{
  /* the characters with a two-character escape, and their letters */
  static const gchar escaped[] = "\"\\\n\r\t\b\f", letters[] = "\"\\nrtbf";

  g_string_append_c (out, '"');
  for (; *s; s++) {
    guchar c = (guchar) * s;
    const gchar *e = strchr (escaped, c);

    if (e) {
      g_string_append_c (out, '\\');
      g_string_append_c (out, letters[e - escaped]);
    } else if (c < 0x20) {
      g_string_append_printf (out, "\\u%04x", c);
    } else {
      g_string_append_c (out, c);
    }
  }
  g_string_append_c (out, '"');
}

static void
cbi_json_write (GString * out, CbiJson * node, guint depth)
{
  guint i;

  switch (node->kind) {
    case CBI_JSON_STRING:
      cbi_json_write_string (out, node->string);
      return;
    case CBI_JSON_BOOL:
      g_string_append (out, node->boolean ? "true" : "false");
      return;
    case CBI_JSON_ARRAY:
    case CBI_JSON_OBJECT:
      break;
  }
  if (node->children->len == 0) {
    g_string_append (out, node->kind == CBI_JSON_OBJECT ? "{}" : "[]");
    return;
  }
  if (node->kind == CBI_JSON_OBJECT)
    g_ptr_array_sort (node->children, cbi_json_compare_keys);
  g_string_append_c (out, node->kind == CBI_JSON_OBJECT ? '{' : '[');
  for (i = 0; i < node->children->len; i++) {
    CbiJson *child = g_ptr_array_index (node->children, i);

    g_string_append (out, i ? ",\n" : "\n");
    g_string_append_printf (out, "%*s", 4 * (depth + 1), "");
    if (node->kind == CBI_JSON_OBJECT) {
      cbi_json_write_string (out, child->key);
      g_string_append (out, ": ");
    }
    cbi_json_write (out, child, depth + 1);
  }
  g_string_append_printf (out, "\n%*s%c", 4 * depth, "",
      node->kind == CBI_JSON_OBJECT ? '}' : ']');
}

/* What one plugin's description is being built from: where the types it
 * marked as API go, and the first error. */
typedef struct
{
  CbiJson *other_types;
  GHashTable *seen;             /* type names already in other_types */
  gchar *error;
} CbiScan;

static void
cbi_scan_fail (CbiScan * scan, gchar * message)
{
  if (scan->error == NULL)
    scan->error = message;
  else
    g_free (message);
}

static void
cbi_describe_value_entry (CbiJson * values, const gchar * name,
    const gchar * nick, gchar * value)
{
  CbiJson *v = cbi_json_add (values, NULL, CBI_JSON_OBJECT);

  cbi_json_set_string (v, "desc", name);
  cbi_json_set_string (v, "name", nick);
  cbi_json_take_string (v, "value", value);
}

/* An enum's values in decimal, a flags type's in hexadecimal. */
static void
cbi_describe_enum_or_flags (CbiJson * types, GType type,
    GstPluginAPIFlags api_flags)
{
  CbiJson *t = cbi_json_add (types, g_type_name (type), CBI_JSON_OBJECT);
  gboolean is_flags = G_TYPE_IS_FLAGS (type);
  gpointer klass = g_type_class_ref (type);
  CbiJson *values;
  guint i, n;

  n = is_flags ? G_FLAGS_CLASS (klass)->n_values :
      G_ENUM_CLASS (klass)->n_values;
  cbi_json_set_string (t, "kind", is_flags ? "flags" : "enum");
  if (!is_flags && (api_flags & GST_PLUGIN_API_FLAG_IGNORE_ENUM_MEMBERS)) {
    cbi_json_set_bool (t, "ignore-enum-members", TRUE);
    n = 0;
  }
  values = cbi_json_add (t, "values", CBI_JSON_ARRAY);
  for (i = 0; i < n; i++) {
    if (is_flags) {
      GFlagsValue *f = &G_FLAGS_CLASS (klass)->values[i];

      cbi_describe_value_entry (values, f->value_name, f->value_nick,
          g_strdup_printf ("0x%08x", f->value));
    } else {
      GEnumValue *e = &G_ENUM_CLASS (klass)->values[i];

      cbi_describe_value_entry (values, e->value_name, e->value_nick,
          g_strdup_printf ("%d", e->value));
    }
  }
  g_type_class_unref (klass);
}

/* A type the plugin marked as its API (gst_type_mark_as_plugin_api) is
 * described once, under other-types. */
static void
cbi_scan_type (CbiScan * scan, GType type)
{
  GstPluginAPIFlags flags;

  if (type == G_TYPE_INVALID || type == G_TYPE_NONE
      || g_hash_table_contains (scan->seen, g_type_name (type))
      || !gst_type_is_plugin_api (type, &flags))
    return;
  g_hash_table_add (scan->seen, (gpointer) g_type_name (type));
  if (G_TYPE_IS_ENUM (type) || G_TYPE_IS_FLAGS (type))
    cbi_describe_enum_or_flags (scan->other_types, type, flags);
  else
    /* a pad or object type of the plugin's own: upstream describes its
     * properties and signals; none of ours is one yet */
    cbi_scan_fail (scan, g_strdup_printf ("%s is a plugin API type this "
            "scanner does not describe (only enums and flags)",
            g_type_name (type)));
}

static gchar *
cbi_flags_to_nicks (GType type, guint value)
{
  GFlagsClass *klass = g_type_class_ref (type);
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < klass->n_values; i++)
    if (klass->values[i].value == value) {
      g_string_assign (s, klass->values[i].value_nick);
      goto done;
    }
  /* the largest values first, as gst-inspect and upstream write them */
  for (i = klass->n_values; i-- > 0 && value;) {
    guint v = klass->values[i].value;

    if (v && (value & v) == v) {
      if (s->len)
        g_string_append_c (s, '+');
      g_string_append (s, klass->values[i].value_nick);
      value &= ~v;
    }
  }
  if (s->len == 0)
    g_string_assign (s, "(none)");
done:
  g_type_class_unref (klass);
  return g_string_free (s, FALSE);
}

/* The default, min and max of a numeric property whose GParamSpec is a
 * SpecType, each in the printf @format. */
#define CBI_JSON_SET_RANGE(p, SpecType, spec, format, def) G_STMT_START {  \
  SpecType *range_ = (SpecType *) (spec);                                 \
                                                                          \
  cbi_json_set_printf (p, "default", format, def);                        \
  cbi_json_set_printf (p, "min", format, range_->minimum);                \
  cbi_json_set_printf (p, "max", format, range_->maximum);                \
} G_STMT_END

static void
cbi_describe_value (CbiJson * p, GParamSpec * spec, const GValue * value)
{
  GType vtype = G_VALUE_TYPE (value);

  if (vtype == G_TYPE_STRING) {
    cbi_json_set_string (p, "default", g_value_get_string (value));
  } else if (vtype == G_TYPE_BOOLEAN) {
    cbi_json_set_string (p, "default",
        g_value_get_boolean (value) ? "true" : "false");
  } else if (vtype == G_TYPE_INT) {
    CBI_JSON_SET_RANGE (p, GParamSpecInt, spec, "%d", g_value_get_int (value));
  } else if (vtype == G_TYPE_UINT) {
    CBI_JSON_SET_RANGE (p, GParamSpecUInt, spec, "%u",
        g_value_get_uint (value));
  } else if (vtype == G_TYPE_INT64) {
    CBI_JSON_SET_RANGE (p, GParamSpecInt64, spec, "%" G_GINT64_FORMAT,
        g_value_get_int64 (value));
  } else if (vtype == G_TYPE_UINT64) {
    CBI_JSON_SET_RANGE (p, GParamSpecUInt64, spec, "%" G_GUINT64_FORMAT,
        g_value_get_uint64 (value));
  } else if (vtype == G_TYPE_LONG) {
    CBI_JSON_SET_RANGE (p, GParamSpecLong, spec, "%ld",
        g_value_get_long (value));
  } else if (vtype == G_TYPE_ULONG) {
    CBI_JSON_SET_RANGE (p, GParamSpecULong, spec, "%lu",
        g_value_get_ulong (value));
  } else if (vtype == G_TYPE_FLOAT) {
    /* %g of a float promoted to double, as upstream writes it */
    CBI_JSON_SET_RANGE (p, GParamSpecFloat, spec, "%g",
        g_value_get_float (value));
  } else if (vtype == G_TYPE_DOUBLE) {
    CBI_JSON_SET_RANGE (p, GParamSpecDouble, spec, "%g",
        g_value_get_double (value));
  } else if (G_TYPE_IS_ENUM (vtype)) {
    GEnumClass *klass = g_type_class_ref (vtype);
    GEnumValue *v = g_enum_get_value (klass, g_value_get_enum (value));

    cbi_json_set_printf (p, "default", "%s (%d)", v ? v->value_nick : "",
        g_value_get_enum (value));
    g_type_class_unref (klass);
  } else if (G_TYPE_IS_FLAGS (vtype)) {
    cbi_json_take_string (p, "default", cbi_flags_to_nicks (vtype,
            g_value_get_flags (value)));
  } else if (vtype == GST_TYPE_CAPS) {
    const GstCaps *caps = gst_value_get_caps (value);

    if (caps)
      cbi_json_take_string (p, "default", gst_caps_to_string (caps));
  } else if (vtype == GST_TYPE_STRUCTURE) {
    const GstStructure *s = gst_value_get_structure (value);

    if (s)
      cbi_json_take_string (p, "default", gst_structure_to_string (s));
  } else if (vtype == GST_TYPE_FRACTION) {
    GstParamSpecFraction *s = GST_PARAM_SPEC_FRACTION (spec);

    cbi_json_set_printf (p, "default", "%d/%d",
        gst_value_get_fraction_numerator (value),
        gst_value_get_fraction_denominator (value));
    cbi_json_set_printf (p, "min", "%d/%d", s->min_num, s->min_den);
    cbi_json_set_printf (p, "max", "%d/%d", s->max_num, s->max_den);
  } else if (vtype == GST_TYPE_ARRAY) {
    cbi_json_take_string (p, "default", gst_value_serialize (value));
  }
}

static const gchar *
cbi_mutable_name (GParamFlags flags)
{
  if (flags & GST_PARAM_MUTABLE_PLAYING)
    return "playing";
  if (flags & GST_PARAM_MUTABLE_PAUSED)
    return "paused";
  if (flags & GST_PARAM_MUTABLE_READY)
    return "ready";
  return "null";
}

/* The properties @type itself installs, read from a fresh @object: what
 * an application gets before it sets anything. */
static void
cbi_describe_properties (CbiScan * scan, CbiJson * parent, GObject * object,
    GType type)
{
  GParamSpec **specs;
  CbiJson *props = NULL;
  guint i, n;

  specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (object), &n);
  for (i = 0; i < n; i++) {
    GParamSpec *spec = specs[i];
    GValue value = G_VALUE_INIT;
    CbiJson *p;

    if (spec->owner_type != type)
      continue;
    if (props == NULL)
      props = cbi_json_add (parent, "properties", CBI_JSON_OBJECT);
    p = cbi_json_add (props, spec->name, CBI_JSON_OBJECT);
    cbi_json_set_string (p, "blurb", g_param_spec_get_blurb (spec));
    cbi_json_set_bool (p, "conditionally-available",
        spec->flags & GST_PARAM_CONDITIONALLY_AVAILABLE);
    cbi_json_set_bool (p, "construct", spec->flags & G_PARAM_CONSTRUCT);
    cbi_json_set_bool (p, "construct-only",
        spec->flags & G_PARAM_CONSTRUCT_ONLY);
    cbi_json_set_bool (p, "controllable", spec->flags & GST_PARAM_CONTROLLABLE);
    cbi_json_set_string (p, "mutable", cbi_mutable_name (spec->flags));
    cbi_json_set_bool (p, "readable", spec->flags & G_PARAM_READABLE);
    cbi_json_set_string (p, "type", g_type_name (spec->value_type));
    cbi_json_set_bool (p, "writable", spec->flags & G_PARAM_WRITABLE);
    cbi_scan_type (scan, spec->value_type);

    g_value_init (&value, spec->value_type);
    if ((spec->flags & G_PARAM_READABLE)
        && !(spec->flags & GST_PARAM_DOC_SHOW_DEFAULT))
      g_object_get_property (object, spec->name, &value);
    else
      g_param_value_set_default (spec, &value);
    cbi_describe_value (p, spec, &value);
    g_value_unset (&value);
  }
  g_free (specs);
}

static void
cbi_describe_signals (CbiScan * scan, CbiJson * parent, GType type)
{
  CbiJson *signals = NULL;
  guint *ids, n, i, j;

  ids = g_signal_list_ids (type, &n);
  for (i = 0; i < n; i++) {
    GSignalQuery q;
    CbiJson *s, *args;

    g_signal_query (ids[i], &q);
    if (signals == NULL)
      signals = cbi_json_add (parent, "signals", CBI_JSON_OBJECT);
    s = cbi_json_add (signals, q.signal_name, CBI_JSON_OBJECT);
    args = cbi_json_add (s, "args", CBI_JSON_ARRAY);
    for (j = 0; j < q.n_params; j++) {
      GType t = q.param_types[j] & ~G_SIGNAL_TYPE_STATIC_SCOPE;
      CbiJson *a = cbi_json_add (args, NULL, CBI_JSON_OBJECT);

      cbi_json_take_string (a, "name", g_strdup_printf ("arg%u", j));
      cbi_json_set_string (a, "type", g_type_name (t));
      cbi_scan_type (scan, t);
    }
    cbi_json_set_string (s, "return-type", g_type_name (q.return_type));
    cbi_scan_type (scan, q.return_type);
    if (q.signal_flags & G_SIGNAL_RUN_FIRST)
      cbi_json_set_string (s, "when", "first");
    else if (q.signal_flags & G_SIGNAL_RUN_LAST)
      cbi_json_set_string (s, "when", "last");
    else if (q.signal_flags & G_SIGNAL_RUN_CLEANUP)
      cbi_json_set_string (s, "when", "cleanup");
    if (q.signal_flags & G_SIGNAL_NO_RECURSE)
      cbi_json_set_bool (s, "no-recurse", TRUE);
    if (q.signal_flags & G_SIGNAL_DETAILED)
      cbi_json_set_bool (s, "detailed", TRUE);
    if (q.signal_flags & G_SIGNAL_ACTION)
      cbi_json_set_bool (s, "action", TRUE);
    if (q.signal_flags & G_SIGNAL_NO_HOOKS)
      cbi_json_set_bool (s, "no-hooks", TRUE);
  }
  g_free (ids);
}

static gboolean
cbi_caps_field_to_text (GQuark field, const GValue * value, gpointer data)
{
  GString *out = data;
  const gchar *name = g_quark_to_string (field);
  gchar *text = gst_value_serialize (value);

  /* as gst-inspect lays caps out, less the type casts in the lists of
   * formats and rates, which say nothing to a reader */
  if (g_str_equal (name, "format") || g_str_equal (name, "rate")) {
    GString *clean = g_string_new (text);

    g_string_replace (clean, "(string)", "", 0);
    g_string_replace (clean, "(rate)", "", 0);
    g_free (text);
    text = g_string_free (clean, FALSE);
  }
  g_string_append_printf (out, "%15s: %s\n", name, text);
  g_free (text);
  return TRUE;
}

static gchar *
cbi_caps_to_text (const GstCaps * caps)
{
  GString *out;
  guint i;

  if (gst_caps_is_any (caps))
    return g_strdup ("ANY");
  if (gst_caps_is_empty (caps))
    return g_strdup ("EMPTY");
  out = g_string_new (NULL);
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_caps_get_structure (caps, i);
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (f && (gst_caps_features_is_any (f)
            || !gst_caps_features_is_equal (f,
                GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))) {
      gchar *features = gst_caps_features_to_string (f);

      /* upstream's layout: a blank line before a structure with features
       * only */
      g_string_append_printf (out, "%s%s(%s):\n", i ? "\n" : "",
          gst_structure_get_name (s), features);
      g_free (features);
    } else {
      g_string_append_printf (out, "%s:\n", gst_structure_get_name (s));
    }
    gst_structure_foreach (s, cbi_caps_field_to_text, out);
  }
  return g_string_free (out, FALSE);
}

static void
cbi_describe_pad_templates (CbiScan * scan, CbiJson * parent,
    GstElementFactory * factory, GstElement * element)
{
  const GList *l = gst_element_factory_get_static_pad_templates (factory);
  CbiJson *templates = NULL;

  for (; l; l = l->next) {
    GstStaticPadTemplate *st = l->data;
    GstPadTemplate *tmpl =
        gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (element),
        st->name_template);
    GstCaps *caps;
    CbiJson *t;
    GType pad_type;

    if (templates == NULL)
      templates = cbi_json_add (parent, "pad-templates", CBI_JSON_OBJECT);
    t = cbi_json_add (templates, st->name_template, CBI_JSON_OBJECT);
    /* the documentation caps: the template's own unless the element set
     * a fuller list for the reader */
    caps = gst_pad_template_get_documentation_caps (tmpl);
    cbi_json_take_string (t, "caps", cbi_caps_to_text (caps));
    gst_caps_unref (caps);
    cbi_json_set_string (t, "direction", st->direction == GST_PAD_SRC ? "src"
        : st->direction == GST_PAD_SINK ? "sink" : "unknown");
    cbi_json_set_string (t, "presence", st->presence == GST_PAD_ALWAYS ?
        "always" : st->presence == GST_PAD_SOMETIMES ? "sometimes" :
        st->presence == GST_PAD_REQUEST ? "request" : "unknown");
    pad_type = GST_PAD_TEMPLATE_GTYPE (tmpl);
    if (pad_type != G_TYPE_NONE && pad_type != GST_TYPE_PAD) {
      cbi_json_set_string (t, "type", g_type_name (pad_type));
      cbi_scan_type (scan, pad_type);
    }
  }
}

/* The rank by name, or the nearest name and the distance to it. */
static gchar *
cbi_rank_name (guint rank)
{
  static const struct
  {
    guint rank;
    const gchar *name;
  } ranks[] = {
    {GST_RANK_NONE, "none"},
    {GST_RANK_MARGINAL, "marginal"},
    {GST_RANK_SECONDARY, "secondary"},
    {GST_RANK_PRIMARY, "primary"},
  };
  guint i, best = 0;

  for (i = 0; i < G_N_ELEMENTS (ranks); i++) {
    if (rank == ranks[i].rank)
      return g_strdup (ranks[i].name);
    if (abs ((gint) rank - (gint) ranks[i].rank) <
        abs ((gint) rank - (gint) ranks[best].rank))
      best = i;
  }
  return g_strdup_printf ("%s %c %d", ranks[best].name,
      rank > ranks[best].rank ? '+' : '-',
      abs ((gint) rank - (gint) ranks[best].rank));
}

static void
cbi_describe_element (CbiScan * scan, CbiJson * elements,
    GstElementFactory * factory)
{
  GstElement *element = gst_element_factory_create (factory, NULL);
  CbiJson *e, *hierarchy;
  gchar **keys, **k;
  GType type, *ifaces;
  guint n_ifaces, i;

  if (element == NULL) {
    cbi_scan_fail (scan, g_strdup_printf ("cannot make a %s",
            GST_OBJECT_NAME (factory)));
    return;
  }
  type = G_OBJECT_TYPE (element);
  e = cbi_json_add (elements, GST_OBJECT_NAME (factory), CBI_JSON_OBJECT);
  cbi_json_take_string (e, "rank",
      cbi_rank_name (gst_plugin_feature_get_rank (GST_PLUGIN_FEATURE
              (factory))));
  keys = gst_element_factory_get_metadata_keys (factory);
  for (k = keys; k && *k; k++)
    cbi_json_set_string (e, *k, gst_element_factory_get_metadata (factory, *k));
  g_strfreev (keys);

  hierarchy = cbi_json_add (e, "hierarchy", CBI_JSON_ARRAY);
  for (;; type = g_type_parent (type)) {
    cbi_json_set_string (hierarchy, NULL, g_type_name (type));
    cbi_scan_type (scan, type);
    if (type == G_TYPE_OBJECT)
      break;
  }
  type = G_OBJECT_TYPE (element);
  ifaces = g_type_interfaces (type, &n_ifaces);
  if (n_ifaces) {
    CbiJson *list = cbi_json_add (e, "interfaces", CBI_JSON_ARRAY);

    for (i = 0; i < n_ifaces; i++) {
      cbi_json_set_string (list, NULL, g_type_name (ifaces[i]));
      cbi_scan_type (scan, ifaces[i]);
    }
  }
  g_free (ifaces);

  cbi_describe_properties (scan, e, G_OBJECT (element), type);
  cbi_describe_signals (scan, e, type);
  cbi_describe_pad_templates (scan, e, factory, element);
  gst_object_unref (element);
}

/**
 * cbi_plugin_cache_describe:
 * @plugin: (transfer none): a loaded plugin
 *
 * Describes @plugin's elements and tracers as GStreamer's plugin cache
 * does, numbers in the C locale (the caller sets LC_NUMERIC). The cache
 * names the plugin's file without its folder, `lib` prefix and extension,
 * so that it does not depend on where the plugin was built.
 *
 * Returns: (transfer full) (nullable): the JSON text, ending in a newline,
 * or %NULL with a message on stderr when an element cannot be made or
 * described
 */
gchar *
cbi_plugin_cache_describe (GstPlugin * plugin)
{
  const gchar *name = gst_plugin_get_name (plugin);
  gchar *base = g_path_get_basename (gst_plugin_get_filename (plugin));
  gchar *dot = strchr (base, '.');
  CbiScan scan = { NULL, };
  CbiJson *root, *p, *elements, *tracers;
  GList *features, *l;
  GString *out;

  root = cbi_json_add (NULL, NULL, CBI_JSON_OBJECT);
  p = cbi_json_add (root, name, CBI_JSON_OBJECT);
  cbi_json_set_string (p, "description", gst_plugin_get_description (plugin));
  if (dot)
    *dot = '\0';
  cbi_json_set_string (p, "filename",
      g_str_has_prefix (base, "lib") ? base + 3 : base);
  g_free (base);
  cbi_json_set_string (p, "license", gst_plugin_get_license (plugin));
  cbi_json_set_string (p, "package", gst_plugin_get_package (plugin));
  cbi_json_set_string (p, "source", gst_plugin_get_source (plugin));
  cbi_json_set_string (p, "url", gst_plugin_get_origin (plugin));
  elements = cbi_json_add (p, "elements", CBI_JSON_OBJECT);
  tracers = cbi_json_add (p, "tracers", CBI_JSON_OBJECT);
  scan.other_types = cbi_json_add (p, "other-types", CBI_JSON_OBJECT);
  scan.seen = g_hash_table_new (g_str_hash, g_str_equal);

  features = gst_registry_get_feature_list_by_plugin (gst_registry_get (),
      name);
  for (l = features; l; l = l->next) {
    if (GST_IS_ELEMENT_FACTORY (l->data)) {
      if (!gst_element_factory_get_skip_documentation (l->data))
        cbi_describe_element (&scan, elements, l->data);
    } else if (GST_IS_TRACER_FACTORY (l->data)) {
      cbi_json_add (tracers, GST_OBJECT_NAME (l->data), CBI_JSON_OBJECT);
    }
  }
  gst_plugin_feature_list_free (features);
  g_hash_table_unref (scan.seen);

  if (scan.error) {
    g_printerr ("%s: %s\n", name, scan.error);
    g_free (scan.error);
    cbi_json_free (root);
    return NULL;
  }
  out = g_string_new (NULL);
  cbi_json_write (out, root, 0);
  g_string_append_c (out, '\n');
  cbi_json_free (root);
  return g_string_free (out, FALSE);
}
