/* cbi-run-tensor: runs one input tensor through an ONNX model on the
 * engine's CPU backend, for the ONNX conformance runner
 * (tests/conformance/onnx-node-tests.py)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: cbi-run-tensor [--backend=cpu|cuda] [--precision=NAME] [--wide]
 *     MODEL.onnx INPUT.bin DIM[,DIM...] OUTDIR
 *
 * The backend is the CPU's unless --backend says otherwise (cuda needs a
 * build with CUDA and a GPU: the GPU check compares the two). The plan
 * runs in float32 unless --precision names another (fp32, tf32, bf16,
 * fp16: cbi_engine_set_precision(), unchecked: the caller compares);
 * a backend that cannot run it exits with status 4, saying why. --wide
 * plans it as a warm-up that checks it does first
 * (cbi_engine_set_precision_wide (): the CPU's wide bfloat16 plan), not
 * as an unchecked plan does (its narrow one).
 *
 * INPUT.bin holds the model's one input as raw little-endian float32 in
 * row-major order, of the shape DIM,DIM,... (an empty string for a
 * scalar). Each output i of the model is written to OUTDIR/output_<i>.bin
 * in the same form, and one line per output goes to stdout:
 *
 *   output <i> <dims, comma separated>
 *
 * Exit status: 0 on success; 3 when the engine refuses the model:
 * cbi_onnx_load() or cbi_engine_new() fails, or the run fails planning it
 * with CBI_ERROR_MODEL or CBI_ERROR_SHAPE (an op, attribute or shape it
 * does not support); 1 when the run fails otherwise; 2 for a usage error
 * (arguments, a missing file, an input of another size). On failure the
 * message goes to stderr.
 */
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

#include "cbiengine.h"
#include "cbitypes.h"
#include "onnx/cbionnx.h"

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2
#define EXIT_REFUSED 3
#define EXIT_NO_PRECISION 4

/* Raw data is little-endian float32: swap on a big-endian host. */
static void
floats_to_from_le (gfloat * data, gsize n)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
  guint32 *w = (guint32 *) data;
  gsize i;

  for (i = 0; i < n; i++)
    w[i] = GUINT32_SWAP_LE_BE (w[i]);
#endif
}

static gboolean
parse_shape (const gchar * str, CbiShape * shape)
{
  gchar **tokens = g_strsplit (str, ",", -1);
  guint n = g_strv_length (tokens), i;
  gboolean ok = n <= CBI_MAX_DIMS;

  shape->n_dims = n;
  for (i = 0; ok && i < n; i++) {
    guint64 dim;

    ok = g_ascii_string_to_unsigned (tokens[i], 10, 0, G_MAXINT32, &dim, NULL);
    shape->dims[i] = dim;
  }
  g_strfreev (tokens);
  return ok;
}

/* Prints @error (freed) and returns the exit status for it: a refusal at
 * @load_time, or a model or shape the engine cannot plan, else a failed
 * run. */
static int
fail (const gchar * what, GError * error, gboolean load_time)
{
  gboolean refused = load_time
      || g_error_matches (error, CBI_ERROR, CBI_ERROR_MODEL)
      || g_error_matches (error, CBI_ERROR, CBI_ERROR_SHAPE);

  g_printerr ("%s: %s\n", what, error->message);
  g_error_free (error);
  return refused ? EXIT_REFUSED : EXIT_RUN_FAILED;
}

/* Writes the engine's outputs; returns an exit status. */
static int
write_outputs (CbiEngine * engine, guint ticket, const gchar * out_dir)
{
  guint i, n = cbi_engine_n_outputs (engine);

  for (i = 0; i < n; i++) {
    CbiShape shape;
    GError *error = NULL;
    const gfloat *data = cbi_engine_get_output (engine, ticket, i, &shape,
        &error);
    gchar *name, *path;
    gfloat *copy;
    gsize size;
    gboolean ok;
    gint d;

    if (data == NULL)
      return fail ("output", error, FALSE);
    size = cbi_shape_count (&shape) * sizeof (gfloat);
    copy = g_memdup2 (data, size);
    floats_to_from_le (copy, size / sizeof (gfloat));
    name = g_strdup_printf ("output_%u.bin", i);
    path = g_build_filename (out_dir, name, NULL);
    ok = g_file_set_contents (path, (const gchar *) copy, size, &error);
    g_free (path);
    g_free (name);
    g_free (copy);
    if (!ok)
      return fail ("output", error, FALSE);

    g_print ("output %u ", i);
    for (d = 0; d < shape.n_dims; d++)
      g_print ("%s%" G_GINT64_FORMAT, d ? "," : "", shape.dims[d]);
    g_print ("\n");
  }
  return EXIT_SUCCESS;
}

int
main (int argc, char **argv)
{
  CbiShape shape;
  CbiGraph *graph;
  CbiEngine *engine;
  CbiBatchReport report;
  guint ticket;
  GError *error = NULL;
  gboolean used_fallback;
  gchar *input = NULL;
  gsize size;
  CbiBackendKind backend = CBI_BACKEND_CPU;
  CbiPrecision precision = CBI_PRECISION_FP32;
  gboolean wide = FALSE;
  int status;

  /* the engine logs through GStreamer debug categories */
  gst_init (&argc, &argv);
  while (argc > 1 && g_str_has_prefix (argv[1], "--")) {
    const gchar *arg = argv[1];
    if (g_str_has_prefix (arg, "--backend=")) {
      const gchar *name = arg + strlen ("--backend=");
      backend = strcmp (name, "cuda") == 0 ? CBI_BACKEND_CUDA :
          strcmp (name, "cpu") == 0 ? CBI_BACKEND_CPU : CBI_BACKEND_AUTO;
    } else if (strcmp (arg, "--wide") == 0) {
      wide = TRUE;
    } else if (g_str_has_prefix (arg, "--precision=")) {
      for (precision = CBI_PRECISION_FP32; precision < CBI_PRECISION_AUTO
          && strcmp (arg + strlen ("--precision="),
              cbi_precision_name (precision)) != 0; precision++);
    } else {
      backend = CBI_BACKEND_AUTO;       /* unknown: the usage below */
    }
    argv[1] = argv[0];
    argv++;
    argc--;
  }

  if (argc != 5 || backend == CBI_BACKEND_AUTO
      || precision == CBI_PRECISION_AUTO || !parse_shape (argv[3], &shape)) {
    g_printerr ("usage: %s [--backend=cpu|cuda] [--precision=fp32|tf32|"
        "bf16|fp16] [--wide] MODEL.onnx INPUT.bin DIM[,DIM...] OUTDIR\n",
        argv[0]);
    return EXIT_USAGE;
  }
  if (!g_file_test (argv[1], G_FILE_TEST_IS_REGULAR)) {
    g_printerr ("model: no file %s\n", argv[1]);
    return EXIT_USAGE;
  }
  if (!g_file_get_contents (argv[2], &input, &size, &error)) {
    g_printerr ("input: %s\n", error->message);
    g_error_free (error);
    return EXIT_USAGE;
  }
  if (size != cbi_shape_count (&shape) * sizeof (gfloat)) {
    g_printerr ("input: %s has %" G_GSIZE_FORMAT " bytes, not the %"
        G_GINT64_FORMAT " of float32 of shape %s\n", argv[2], size,
        cbi_shape_count (&shape) * (gint64) sizeof (gfloat), argv[3]);
    g_free (input);
    return EXIT_USAGE;
  }
  floats_to_from_le ((gfloat *) input, size / sizeof (gfloat));

  graph = cbi_onnx_load (argv[1], &error);
  if (graph == NULL) {
    g_free (input);
    return fail ("load", error, TRUE);
  }
  engine = cbi_engine_new (graph, backend, 0, 0, &used_fallback, &error);
  if (engine == NULL) {
    g_free (input);
    return fail ("engine", error, TRUE);
  }

  if (!cbi_engine_set_precision (engine, precision, 0.0, &error)) {
    g_printerr ("precision: %s\n", error->message);
    g_error_free (error);
    cbi_engine_free (engine);
    g_free (input);
    return EXIT_NO_PRECISION;
  }
  cbi_engine_set_precision_wide (engine, wide);
  if (cbi_engine_run_tensor (engine, &shape, (const gfloat *) input, &ticket,
          &report, &error))
    status = write_outputs (engine, ticket, argv[4]);
  else
    status = fail ("run", error, FALSE);

  cbi_engine_free (engine);
  g_free (input);
  return status;
}
