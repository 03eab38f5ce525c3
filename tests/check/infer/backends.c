/* GStreamer cudabatchinfer: which backend the engine takes
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A table with a fake "cuda" backend that opens only for device 0 and
 * runs no Softmax, beside the real CPU backend.
 */
#include <gst/check/gstcheck.h>

#include "cbibackend.h"
#include "cbidefaultmodel.h"
#include "graph/cbiops.h"
#include "cbitypes.h"
#include "cbiworker.h"
#include "cbitestgraph.h"
#include "onnx/cbionnx.h"
#include "graph/cbishapes.h"
/* the CPU backend's own header sets its debug category as the default */
#undef GST_CAT_DEFAULT
#include "cpu/cbicpu.h"
#include "cbimath.h"
/* plain arithmetic of the CUDA backend's, no CUDA */
#include "cuda/cbicudalimits.h"

#include <math.h>
#include <omp.h>

static gboolean
fake_refuses (const CbiGraph * graph, const CbiNode * node)
{
  return node->op == CBI_OP_SOFTMAX;
}

static gboolean
fake_plan_node (gpointer plan, const CbiNode * n, const CbiNode * post,
    GError ** error)
{
  return cbi_node_unsupported (n, "cuda", error);
}

/* every family planned, Softmax refused (fake_cuda_new () fills it) */
static CbiPlanners fake_planners = { "cuda", {NULL,}, fake_refuses, };

static void
fake_free (CbiBackend * backend)
{
  g_free (backend);
}

static const CbiBackendIface fake_iface = {
  .name = "cuda",
  .free = fake_free,
  .planners = &fake_planners,
};

static CbiBackend *
fake_cuda_new (gint device_id, GError ** error)
{
  CbiBackend *backend;
  guint k;

  if (device_id != 0) {
    g_set_error (error, CBI_ERROR, CBI_ERROR_NO_BACKEND, "no usable CUDA "
        "device %d (a test)", device_id);
    return NULL;
  }
  for (k = 0; k < CBI_OP_N_KINDS; k++)
    fake_planners.nodes[k] = fake_plan_node;
  backend = g_new0 (CbiBackend, 1);
  backend->iface = &fake_iface;
  return backend;
}

static const CbiBackendEntry table[] = {
  {CBI_BACKEND_CUDA, fake_cuda_new},
  {CBI_BACKEND_CPU, cbi_backend_cpu_new},
};

/* Opens @kind on device @device for @g (transfer full); returns the
 * backend's name or NULL, @reason and @error as cbi_backend_open () sets
 * them. */
static const gchar *
open_name (CbiGraph * g, CbiBackendKind kind, gint device, gchar ** reason,
    GError ** error)
{
  CbiBackendKind opened;
  CbiBackend *b = cbi_backend_open (table, G_N_ELEMENTS (table), g, kind,
      device, &opened, reason, error);
  const gchar *name = b ? b->iface->name : NULL;

  if (b) {
    fail_unless_equals_string (name, opened == CBI_BACKEND_CUDA ? "cuda" :
        "cpu");
    b->iface->free (b);
  }
  cbi_graph_free (g);
  return name;
}

GST_START_TEST (test_auto_takes_cuda_where_it_runs_every_op)
{
  gchar *reason = NULL;

  fail_unless_equals_string (open_name (cbi_test_graph_ending_in
          (CBI_OP_SIGMOID), CBI_BACKEND_AUTO, 0, &reason, NULL), "cuda");
  fail_unless (reason == NULL);
}

GST_END_TEST;

GST_START_TEST (test_auto_takes_the_cpu_and_names_the_op_cuda_lacks)
{
  gchar *reason = NULL;

  fail_unless_equals_string (open_name (cbi_test_graph_ending_in
          (CBI_OP_SOFTMAX), CBI_BACKEND_AUTO, 0, &reason, NULL), "cpu");
  fail_unless (reason != NULL);
  fail_unless (strstr (reason, "probabilities (Softmax)") != NULL, "%s",
      reason);
  g_free (reason);
}

GST_END_TEST;

GST_START_TEST (test_auto_takes_the_cpu_and_says_why_cuda_did_not_open)
{
  gchar *reason = NULL;

  fail_unless_equals_string (open_name (cbi_test_graph_ending_in
          (CBI_OP_SIGMOID), CBI_BACKEND_AUTO, 1, &reason, NULL), "cpu");
  fail_unless_equals_string (reason, "no usable CUDA device 1 (a test)");
  g_free (reason);
}

GST_END_TEST;

GST_START_TEST (test_cuda_by_name_fails_on_an_op_it_lacks)
{
  gchar *reason = NULL;
  GError *err = NULL;

  fail_unless (open_name (cbi_test_graph_ending_in (CBI_OP_SOFTMAX),
          CBI_BACKEND_CUDA, 0, &reason, &err) == NULL);
  fail_unless (g_error_matches (err, CBI_ERROR, CBI_ERROR_MODEL));
  fail_unless (strstr (err->message, "Softmax") != NULL, "%s", err->message);
  fail_unless (reason == NULL);
  g_error_free (err);
}

GST_END_TEST;

GST_START_TEST (test_the_engine_says_why_auto_fell_back)
{
  gboolean fallback;
  CbiEngine *e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_AUTO,
      0, 0, &fallback, NULL);

  fail_unless (e != NULL);
  /* a reason exactly where there was a fallback, here or on a GPU */
  fail_unless_equals_int (cbi_engine_fallback_reason (e) != NULL, fallback);
  if (fallback)
    fail_unless_equals_string (cbi_engine_backend_name (e), "cpu");
  cbi_engine_free (e);
}

GST_END_TEST;

/* 3840x2160 frames: 8294400 pixels */
#define PX_4K G_GINT64_CONSTANT (8294400)

GST_START_TEST (test_a_batch_past_cudnns_limit_splits_into_equal_calls)
{
  /* RGB in, 8 channels out: all 16 frames fit in one call */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (16, 3 * PX_4K, 8 * PX_4K),
      16);
  /* 32 channels: 16 frames are 4.2e9 elements, 8 are 2.12e9, under 2^31 */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (16, 3 * PX_4K,
          32 * PX_4K), 8);
  /* the input can be the larger one (a convolution that narrows) */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (16, 64 * PX_4K, PX_4K), 4);
  /* 2^31 - 1 elements is the most one call takes */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (2,
          (CBI_CUDNN_MAX_ELEMENTS - 1) / 2, 1), 2);
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (2,
          CBI_CUDNN_MAX_ELEMENTS / 2, 1), 1);
  /* a batch of 12 of which 5 would fit: calls of equal frames, so 4 */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (12, 1, (CBI_CUDNN_MAX_ELEMENTS
              - 1) / 5), 4);
  /* a prime batch goes frame by frame */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (13, 1,
          CBI_CUDNN_MAX_ELEMENTS / 4), 1);
  /* one frame past the limit: no call can take it */
  fail_unless_equals_int64 (cbi_cuda_batch_chunk (16, 300 * PX_4K, 1), 0);
}

GST_END_TEST;

GST_START_TEST (test_the_first_algorithm_whose_workspace_fits_is_taken)
{
  const gboolean ok[4] = { TRUE, FALSE, TRUE, TRUE };
  const gsize bytes[4] = { 900, 10, 500, 0 };

  /* the best ranked, when it fits */
  fail_unless_equals_int (cbi_cuda_first_fitting (ok, bytes, 4, 1000), 0);
  /* the second cannot run, whatever its size */
  fail_unless_equals_int (cbi_cuda_first_fitting (ok, bytes, 4, 600), 2);
  fail_unless_equals_int (cbi_cuda_first_fitting (ok, bytes, 4, 100), 3);
  /* nothing fits, or nothing ranked */
  fail_unless_equals_int (cbi_cuda_first_fitting (ok, bytes, 3, 100), -1);
  fail_unless_equals_int (cbi_cuda_first_fitting (ok, bytes, 0, 1000), -1);
}

GST_END_TEST;

GST_START_TEST (test_every_backend_of_this_build_runs_every_op)
{
  guint n, i;
  const CbiBackendEntry *builtin = cbi_backend_table (&n);
  gint op;

  for (i = 0; i < n; i++) {
    CbiBackend *b = builtin[i].create (0, NULL);
    /* CUDA without a device cannot be asked */
    if (b == NULL)
      continue;
    for (op = 0; op <= CBI_OP_PRELU; op++) {
      CbiNode node = { op, (gchar *) "n", };
      fail_unless (cbi_planners_support (b->iface->planners, NULL, &node),
          "%s lacks %s", b->iface->name, cbi_op_type_name (op));
    }
    b->iface->free (b);
  }
}

GST_END_TEST;

static gpointer
test_alloc (gsize size, gpointer user_data)
{
  return g_malloc (size);
}

static void
test_free (gpointer block, gsize size, gpointer user_data)
{
  g_free (block);
}

/* Step @i of @plan's primitive desc (transfer none), or NULL for one of
 * our loops. */
static const_dnnl_primitive_desc_t
step_primitive (const CbiCpuPlan * plan, guint i)
{
  const CbiCpuStep *step = &g_array_index (plan->steps, CbiCpuStep, i);
  const_dnnl_primitive_desc_t pd = NULL;

  if (step->prim == NULL)
    return NULL;
  fail_unless (dnnl_primitive_get_primitive_desc (step->prim, &pd)
      == dnnl_success);
  return pd;
}

static dnnl_primitive_kind_t
step_kind (const_dnnl_primitive_desc_t pd)
{
  dnnl_primitive_kind_t kind = dnnl_undefined_primitive;

  fail_unless (dnnl_primitive_desc_query (pd, dnnl_query_primitive_kind, 0,
          &kind) == dnnl_success);
  return kind;
}

/* The kinds the engine's pooling and softmax primitives report: oneDNN
 * 2.x's second versions of them, which 3.x made the only ones */
#if DNNL_VERSION_MAJOR >= 3
#define POOLING_KIND dnnl_pooling
#define SOFTMAX_KIND dnnl_softmax
#else
#define POOLING_KIND dnnl_pooling_v2
#define SOFTMAX_KIND dnnl_softmax_v2
#endif

/* How many of @plan's steps are oneDNN primitives of @kind. */
static guint
count_steps_of_kind (const CbiCpuPlan * plan, dnnl_primitive_kind_t kind)
{
  guint i, count = 0;

  for (i = 0; i < plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (plan, i);
    count += pd != NULL && step_kind (pd) == kind;
  }
  return count;
}

/* How many of @plan's steps are oneDNN binary primitives; @slow
 * (optional) receives how many of them run oneDNN's reference code. */
static guint
count_binary_steps (const CbiCpuPlan * plan, guint * slow)
{
  guint i, count = 0;

  if (slow)
    *slow = 0;
  for (i = 0; i < plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (plan, i);
    const gchar *impl = NULL;

    if (pd == NULL || step_kind (pd) != dnnl_binary)
      continue;
    count++;
    fail_unless (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
            &impl) == dnnl_success && impl != NULL);
    if (slow)
      *slow += g_str_has_prefix (impl, "ref");
  }
  return count;
}

/* A CPU backend's plan of a test model for one input shape, and what it
 * needs freed with it (planned_free ()). */
typedef struct
{
  CbiGraph *graph, *specialised;
  CbiShape *shapes;
  CbiPool *pool;
  CbiBackend *backend;
  CbiCpuPlan *plan;
} Planned;

/* Loads tests/models/@file for input @in and opens the CPU backend;
 * planned_plan () then plans it, with the backend's settings as the test
 * leaves them. */
static void
planned_open (Planned * p, const gchar * file, const CbiShape * in)
{
  static const CbiAllocator host = { "test", test_alloc, test_free, NULL };
  gchar *path = g_build_filename (CBI_TEST_MODELS_DIR, file, NULL);
  GError *err = NULL;

  memset (p, 0, sizeof (*p));
  p->graph = cbi_onnx_load (path, &err);
  fail_unless (p->graph != NULL, "%s", err ? err->message : "");
  p->backend = cbi_backend_cpu_new (0, &err);
  fail_unless (p->backend != NULL, "%s", err ? err->message : "");
  p->pool = cbi_pool_new (&host, 0);
  p->shapes = g_new0 (CbiShape, p->graph->tensors->len);
  p->specialised = cbi_graph_specialise (p->graph, in, p->shapes, &err);
  fail_unless (p->specialised != NULL, "%s", err ? err->message : "");
  g_free (path);
}

static void
planned_plan (Planned * p)
{
  guint64 workspace = 0;
  GError *err = NULL;

  p->plan = p->backend->iface->plan (p->backend, p->specialised, p->shapes,
      p->pool, NULL, FALSE, &workspace, &err);
  fail_unless (p->plan != NULL, "%s", err ? err->message : "");
}

static void
planned_free (Planned * p)
{
  if (p->plan)
    p->backend->iface->free_plan (p->backend, p->plan, p->pool, NULL);
  p->backend->iface->free (p->backend);
  cbi_graph_free (p->specialised);
  cbi_graph_free (p->graph);
  cbi_pool_free (p->pool);
  g_free (p->shapes);
}

/* Plans tests/models/@file for input @in in bfloat16's wide plan; FALSE
 * (logged, @p freed) where the CPU has no bfloat16. */
static gboolean
planned_wide_bf16 (Planned * p, const gchar * file, const CbiShape * in)
{
  GError *err = NULL;

  planned_open (p, file, in);
  if (!cbi_backend_has_precision (p->backend, CBI_PRECISION_BF16, &err)) {
    GST_INFO ("no bf16 on this CPU: %s", err->message);
    g_clear_error (&err);
    planned_free (p);
    return FALSE;
  }
  p->backend->precision = CBI_PRECISION_BF16;
  p->backend->precision_wide = TRUE;
  planned_plan (p);
  return TRUE;
}

/* ops-se-blocks.onnx (tests/models/generate.py): a squeeze-and-excitation
 * scale, N x C x 1 x 1, and a per-channel constant times activations
 * that the convolutions of 16 channels write in channel blocks (on
 * AVX-512; oneDNN's choice elsewhere): both binary steps run oneDNN's jit
 * kernel, which takes broadcast operands only in the first's layout, not
 * its reference code (tens of times slower: RegNet's scales). onnx.c
 * checks the values against onnxruntime. */
GST_START_TEST (test_a_broadcast_operand_takes_the_first_operands_blocks)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint slow = 0;
  Planned p;

  planned_open (&p, "ops-se-blocks.onnx", &in);
  planned_plan (&p);
  fail_unless_equals_int (count_binary_steps (p.plan, &slow), 2);
  fail_unless_equals_int (slow, 0);
  planned_free (&p);
}

GST_END_TEST;

/* Whether oneDNN's float32 convolutions take channel blocks of 16 here:
 * the CPU backend's rule (cpu/plan.c) needs AVX-512. */
static gboolean
blocks_here (void)
{
  return (dnnl_get_effective_cpu_isa () & dnnl_cpu_isa_avx512_core)
      == dnnl_cpu_isa_avx512_core;
}

/* ops-residual.onnx (tests/models/generate.py): of its three Adds after
 * a convolution, the identity block's and the projection block's become
 * their convolution's sum post-op, in the other operand's block; the one
 * whose other operand is read again stays a binary step, as the Mul
 * after it does. Its convolutions, one group and 16 channels each, write
 * channel blocks of 16 where the CPU has AVX-512 (else oneDNN picks).
 * onnx.c checks the values against onnxruntime. */
GST_START_TEST (test_the_cpu_adds_a_residual_in_place_as_its_convolutions_sum)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  Planned p;

  planned_open (&p, "ops-residual.onnx", &in);
  planned_plan (&p);
  fail_unless_equals_int (count_binary_steps (p.plan, NULL), 2);
  fail_unless_equals_int (p.plan->conv_layout,
      blocks_here ()? dnnl_nChw16c : dnnl_format_tag_any);
  planned_free (&p);
}

GST_END_TEST;

/* The layout @file's float32 plan on @in gives its convolutions. */
static dnnl_format_tag_t
planned_conv_layout (const gchar * file, const CbiShape * in)
{
  dnnl_format_tag_t layout;
  Planned p;

  planned_open (&p, file, in);
  planned_plan (&p);
  layout = p.plan->conv_layout;
  planned_free (&p);
  return layout;
}

/* ops-class-head.onnx (tests/models/generate.py): convolutions of 16
 * and 32 channels, then the classes' convolution to 5 channels, a small
 * share of the products at a quarter of the image's positions: the
 * classes do not cost the others their channel blocks of 16 (AVX-512).
 * ops-image-head.onnx: the same body, but its last convolution writes 3
 * channels at the image's size, as an image-to-image network's does: the
 * layout is oneDNN's choice. onnx.c checks the values of both against
 * onnxruntime. */
GST_START_TEST (test_a_class_head_keeps_the_blocks_an_image_head_does_not)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };

  fail_unless_equals_int (planned_conv_layout ("ops-class-head.onnx", &in),
      blocks_here ()? dnnl_nChw16c : dnnl_format_tag_any);
  fail_unless_equals_int (planned_conv_layout ("ops-image-head.onnx", &in),
      dnnl_format_tag_any);
}

GST_END_TEST;

/* ops-concat-convs.onnx (tests/models/generate.py): the convolutions
 * that read a Concat are, in the graph, a convolution per part and an
 * Add of each onto the sum so far (onnx.c); on the CPU every such Add is
 * the next part's sum post-op, so of the plan's steps only the widening
 * convolution's Concat copies, and only the Add of the two heads (of two
 * sums, neither a convolution's own output) is a binary step; nothing
 * else runs between the convolutions but the two poolings */
GST_START_TEST (test_a_concat_read_by_convolutions_copies_nothing_on_the_cpu)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  Planned p;

  planned_open (&p, "ops-concat-convs.onnx", &in);
  planned_plan (&p);
  fail_unless_equals_int (count_steps_of_kind (p.plan, dnnl_concat), 1);
  fail_unless_equals_int (count_steps_of_kind (p.plan, dnnl_convolution), 12);
  fail_unless_equals_int (count_steps_of_kind (p.plan, POOLING_KIND), 2);
  fail_unless_equals_int (count_binary_steps (p.plan, NULL), 1);
  planned_free (&p);
}

GST_END_TEST;

/* The bytes that oneDNN's Winograd kernel for a 3x3 convolution of
 * @channels in and out on @in (N x C x H x W, padded to keep its size)
 * adds to a plan with no scratch yet: its scratch and the growth of its
 * weights, what the CPU backend weighs against the activations planned
 * before it (cpu/conv.c); 0 where this CPU has no fast Winograd kernel
 * (oneDNN 2.x has one for AVX-512); through the engine's wrappers, which
 * take oneDNN 2.x's and 3.x's API alike */
static gsize
onednn_winograd_bytes (const CbiShape * in, gint64 channels)
{
  CbiMdArena *arena = cbi_md_arena_new ();
  dnnl_engine_t engine = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  const dnnl_dims_t xd = { in->dims[0], channels, in->dims[2], in->dims[3] };
  const dnnl_dims_t wd = { channels, channels, 3, 3 }, one = { 1, 1 };
  const dnnl_dims_t none = { 0, 0 };
  CbiDnnlOp op = { CBI_DNNL_CONVOLUTION, dnnl_convolution_winograd, };
  const gchar *impl = NULL;
  gsize bytes = 0;

  fail_unless (dnnl_engine_create (&engine, dnnl_cpu, 0) == dnnl_success);
  fail_unless (dnnl_primitive_attr_create (&attr) == dnnl_success);
  dnnl_primitive_attr_set_scratchpad_mode (attr, dnnl_scratchpad_mode_user);
  fail_unless (cbi_md_tag (arena, &op.src, 4, xd, dnnl_format_tag_any)
      == dnnl_success);
  fail_unless (cbi_md_tag (arena, &op.weights, 4, wd, dnnl_format_tag_any)
      == dnnl_success);
  fail_unless (cbi_md_tag (arena, &op.dst, 4, xd, dnnl_format_tag_any)
      == dnnl_success);
  op.strides = one;
  op.dilation = none;
  op.pad_l = one;
  op.pad_r = one;
  if (cbi_dnnl_op_create (&pd, &op, attr, engine) == dnnl_success
      && dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &impl)
      == dnnl_success && impl != NULL && !g_str_has_prefix (impl, "ref")) {
    const gsize weights = channels * channels * 9 * sizeof (gfloat);
    gsize scratch = dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md
        (pd, dnnl_query_scratchpad_md, 0));
    gsize transformed = dnnl_memory_desc_get_size
        (dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0));
    bytes = scratch + (transformed > weights ? transformed - weights : 0);
  }
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  dnnl_primitive_attr_destroy (attr);
  dnnl_engine_destroy (engine);
  cbi_md_arena_free (arena);
  return bytes;
}

/* How many of ops-winograd.onnx's two convolutions of @channels (32)
 * on @in run as Winograd's: the first where what its kernel adds fits
 * in the activations planned before it (the image and the stem's
 * output); the second, where the first did, adds only its weights'
 * growth, and else the first's scratch where that fits in those and the
 * first's output. */
static guint
expected_winograds (const CbiShape * in, gint64 channels)
{
  const gsize bytes = onednn_winograd_bytes (in, channels);
  const gsize image = cbi_shape_count (in) * sizeof (gfloat);
  const gsize act = in->dims[0] * channels * in->dims[2] * in->dims[3]
      * sizeof (gfloat);

  if (bytes == 0)
    return 0;
  if (bytes <= image + act)
    return 2;
  return bytes <= image + 2 * act ? 1 : 0;
}

/* How many of @plan's convolutions run as Winograd's, of @convs. */
static guint
count_winograds (const CbiCpuPlan * plan, guint * convs)
{
  guint i, winograd = 0;

  *convs = 0;
  for (i = 0; i < plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (plan, i);
    const gchar *impl = NULL;
    if (pd == NULL || step_kind (pd) != dnnl_convolution)
      continue;
    (*convs)++;
    fail_unless (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
            &impl) == dnnl_success && impl != NULL);
    winograd += strstr (impl, "wino") != NULL;
  }
  return winograd;
}

/* That every convolution of @plan that runs as Winograd's adds, in
 * scratch and in the growth of its weights, no more bytes than all the
 * plan's activations take: what it may add at most (cpu/conv.c weighs it
 * against those planned before it). */
static void
assert_winograds_fit_the_activations (const CbiCpuPlan * plan)
{
  guint64 placed, requested;
  guint i;

  cbi_mem_plan_activation_bytes (plan->memory, &placed, &requested);
  for (i = 0; i < plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (plan, i);
    const gchar *impl = NULL;
    CbiMd wmd;
    gsize scratch, transformed, weights = sizeof (gfloat);
    gint d;
    if (pd == NULL || step_kind (pd) != dnnl_convolution
        || dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
            &impl) != dnnl_success || strstr (impl, "wino") == NULL)
      continue;
    wmd = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
    for (d = 0; d < cbi_md_n_dims (wmd); d++)
      weights *= cbi_md_dims (wmd)[d];
    scratch = dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md (pd,
            dnnl_query_scratchpad_md, 0));
    transformed = dnnl_memory_desc_get_size (wmd);
    fail_unless (scratch + (transformed > weights ? transformed - weights : 0)
        <= placed, "step %u (%s): Winograd's scratch %" G_GSIZE_FORMAT
        " and weights %" G_GSIZE_FORMAT " against %" G_GUINT64_FORMAT
        " bytes of activations", i, impl, scratch, transformed, placed);
  }
}

/* ops-winograd.onnx (tests/models/generate.py): of its 3x3 convolutions
 * of stride 1, the two of 32 channels in and out run as Winograd's where
 * oneDNN has it on this CPU and it fits the activations' memory (a batch
 * of 2 at 112x112: what it adds within the activations planned before
 * it), the second with the residual Add as its sum post-op; the image's,
 * and those of 16 channels, stay direct; at 28x28, where Winograd's
 * scratch outgrows the activations, all of them do; and at a batch of 8,
 * where oneDNN's own choice is Winograd's for all four, none whose
 * memory does not fit takes it. onnx.c checks the values against
 * onnxruntime. */
GST_START_TEST (test_wide_3x3_convolutions_run_as_winograds_where_it_pays)
{
  const CbiShape in = { 4, {2, 3, 112, 112} }, small = { 4, {2, 3, 28, 28} };
  const CbiShape batch8 = { 4, {8, 3, 28, 28} };
  guint convs;
  Planned p;

  planned_open (&p, "ops-winograd.onnx", &in);
  planned_plan (&p);
  fail_unless_equals_int (count_winograds (p.plan, &convs),
      expected_winograds (&in, 32));
  fail_unless_equals_int (convs, 6);
  fail_unless_equals_int (count_binary_steps (p.plan, NULL), 0);
  planned_free (&p);

  planned_open (&p, "ops-winograd.onnx", &small);
  planned_plan (&p);
  fail_unless_equals_int (count_winograds (p.plan, &convs),
      expected_winograds (&small, 32));
  assert_winograds_fit_the_activations (p.plan);
  planned_free (&p);

  /* a batch of 8, where oneDNN's own choice for any of them is Winograd's
   * kernel, whose scratch (sized by the threads) outgrows activations
   * this small */
  planned_open (&p, "ops-winograd.onnx", &batch8);
  planned_plan (&p);
  assert_winograds_fit_the_activations (p.plan);
  planned_free (&p);
}

GST_END_TEST;

/* Groups merge into runs of 32 input channels, at most 8 of them, and
 * only where they divide the groups: depthwise convolutions (one channel
 * a group) and groups of 32 or more stay as they are. */
GST_START_TEST (test_narrow_groups_merge_into_runs_of_32_channels)
{
  fail_unless_equals_int (cbi_cpu_conv_group_merge (32, 4), 8);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (32, 8), 4);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (32, 16), 2);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (64, 12), 4);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (32, 32), 1);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (128, 1), 1);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (1, 4), 1);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (3, 4), 1);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (64, 2), 1);
  fail_unless_equals_int (cbi_cpu_conv_group_merge (6, 10), 6);
}

GST_END_TEST;

/* ops-narrow-groups.onnx (tests/models/generate.py): in bfloat16 on a
 * CPU whose matrix unit oneDNN uses, its grouped convolutions of 4 and
 * 8 input channels a group run as 2 groups of 32 (16 and 8 merged), the
 * one of 32 a group as its 4; elsewhere, or in float32, every one keeps
 * its groups. onnx.c checks the values against onnxruntime in both
 * precisions. */
GST_START_TEST (test_narrow_groups_run_merged_in_bf16_on_a_matrix_unit)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  const gint64 as_written[] = { 16, 8, 4 }, merged[] = { 2, 2, 4 };
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa ();
  const gboolean matrix_unit = (isa & dnnl_cpu_isa_avx512_core_amx)
      == dnnl_cpu_isa_avx512_core_amx;
  guint i, grouped = 0;
  Planned p;

  if (!planned_wide_bf16 (&p, "ops-narrow-groups.onnx", &in))
    return;
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    CbiMd wmd, src;
    if (pd == NULL || step_kind (pd) != dnnl_convolution)
      continue;
    wmd = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
    src = dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
    if (cbi_md_n_dims (wmd) != 5)
      continue;
    fail_unless (grouped < G_N_ELEMENTS (merged));
    fail_unless_equals_int64 (cbi_md_dims (wmd)[0], matrix_unit
        && cbi_md_data_type (src) == dnnl_bf16 ? merged[grouped] :
        as_written[grouped]);
    grouped++;
  }
  fail_unless_equals_int (grouped, 3);
  planned_free (&p);

  planned_open (&p, "ops-narrow-groups.onnx", &in);
  planned_plan (&p);
  grouped = 0;
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    CbiMd wmd;
    if (pd == NULL || step_kind (pd) != dnnl_convolution)
      continue;
    wmd = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
    if (cbi_md_n_dims (wmd) == 5)
      fail_unless_equals_int64 (cbi_md_dims (wmd)[0], as_written[grouped++]);
  }
  fail_unless_equals_int (grouped, 3);
  planned_free (&p);
}

GST_END_TEST;

/* The index of @graph's tensor named @name. */
static gint
tensor_named (const CbiGraph * graph, const gchar * name)
{
  guint t;

  for (t = 0; t < graph->tensors->len; t++)
    if (g_strcmp0 (cbi_graph_tensor (graph, t)->name, name) == 0)
      return t;
  fail ("no tensor %s", name);
  return -1;
}

/* Whether @plan's tensors @a and @b start at the same address. */
static gboolean
same_block (const CbiCpuPlan * plan, gint a, gint b)
{
  void *at_a = NULL, *at_b = NULL;

  fail_unless (dnnl_memory_get_data_handle (plan->mems[a], &at_a)
      == dnnl_success);
  fail_unless (dnnl_memory_get_data_handle (plan->mems[b], &at_b)
      == dnnl_success);
  return at_a == at_b;
}

/* Whether @plan's 4-D tensor @t is channels last: plain strides, the
 * channels' the smallest. */
static gboolean
channels_last (const CbiCpuPlan * plan, gint t)
{
  dnnl_dims_t strides;
  CbiMd md;

  fail_unless (dnnl_memory_get_memory_desc (plan->mems[t], &md)
      == dnnl_success);
  return cbi_md_n_dims (md) == 4 && cbi_md_plain_strides (md, strides)
      && strides[1] == 1 && strides[3] == cbi_md_dims (md)[1];
}

/* ops-channels-last-block.onnx (tests/models/generate.py): the Transpose
 * back to channels first, of the product's row-major output, is a view
 * of it in channels last, in float32 and in bf16's wide plan; the one to
 * channels last after the depthwise convolution is a view of its output
 * wherever that is channels last (bf16's wide plan writes it so where
 * oneDNN has a bfloat16 kernel), a copy where it is channel blocks.
 * onnx.c checks the values against onnxruntime in both precisions. */
GST_START_TEST (test_a_transpose_to_the_layout_its_input_has_is_a_view)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  gint depthwise, to_last, product, to_first, pass;
  Planned p;

  for (pass = 0; pass < 2; pass++) {
    if (pass == 0) {
      planned_open (&p, "ops-channels-last-block.onnx", &in);
      planned_plan (&p);
    } else if (!planned_wide_bf16 (&p, "ops-channels-last-block.onnx", &in)) {
      return;
    }
    depthwise = tensor_named (p.specialised, "d");
    to_last = tensor_named (p.specialised, "dl");
    product = tensor_named (p.specialised, "m2");
    to_first = tensor_named (p.specialised, "back");
    fail_unless (same_block (p.plan, product, to_first));
    fail_unless (channels_last (p.plan, to_first));
    if (channels_last (p.plan, depthwise))
      fail_unless (same_block (p.plan, depthwise, to_last));
    else
      fail_if (same_block (p.plan, depthwise, to_last));
    planned_free (&p);
  }
}

GST_END_TEST;

/* Our layer normalization into bfloat16: each row's values within
 * bfloat16's rounding (half a unit of its 8 bits) of the normalisation
 * computed in double, rows of a length past a multiple of the loop's
 * lanes, with and without a shift; a constant row gives the shift. */
GST_START_TEST (test_layer_norm_into_bf16_rounds_each_normalised_value)
{
  enum
  { ROWS = 4, INNER = 37 };
  gfloat src[ROWS * INNER], gamma[INNER], beta[INNER];
  guint16 dst[ROWS * INNER];
  CbiCpuLayerNorm norm = { src, dst, gamma, NULL, ROWS, INNER, 1e-5f };
  gint r, j, with_shift;

  for (j = 0; j < INNER; j++) {
    gamma[j] = 0.5f + j / (gfloat) INNER;
    beta[j] = 0.25f - j / (2.0f * INNER);
  }
  for (r = 0; r < ROWS; r++)
    for (j = 0; j < INNER; j++)
      src[r * INNER + j] = r == 3 ? 7.0f : 100.0f * r + sinf (r + j * 1.3f)
          * (r + 1);
  for (with_shift = 0; with_shift < 2; with_shift++) {
    norm.beta = with_shift ? beta : NULL;
    cbi_cpu_run_layer_norm_bf16 (&norm);
    for (r = 0; r < ROWS; r++) {
      gdouble mean = 0.0, var = 0.0;
      for (j = 0; j < INNER; j++)
        mean += src[r * INNER + j] / (gdouble) INNER;
      for (j = 0; j < INNER; j++)
        var += (src[r * INNER + j] - mean) * (src[r * INNER + j] - mean)
            / INNER;
      for (j = 0; j < INNER; j++) {
        const gdouble want = (src[r * INNER + j] - mean) / sqrt (var + 1e-5)
            * gamma[j] + (with_shift ? beta[j] : 0.0);
        const gdouble got = cbi_bf16_to_float (dst[r * INNER + j]);
        fail_unless (fabs (got - want) <= fabs (want) / 256.0 + 1e-5,
            "row %d, %d: %g for %g", r, j, got, want);
      }
    }
  }
}

GST_END_TEST;

/* ops-channels-last-block.onnx in bf16's wide plan, where the CPU has
 * it: its LayerNormalization, whose output the products read, is our
 * loop writing bfloat16, no oneDNN layer normalization and no conversion
 * after it. */
GST_START_TEST (test_a_layer_norm_that_products_read_writes_bf16)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint i, loops = 0;
  CbiMd md;
  Planned p;

  if (!planned_wide_bf16 (&p, "ops-channels-last-block.onnx", &in))
    return;
  for (i = 0; i < p.plan->steps->len; i++) {
    const CbiCpuStep *step = &g_array_index (p.plan->steps, CbiCpuStep, i);
    loops += step->prim == NULL && step->run == cbi_cpu_run_layer_norm_bf16;
  }
  fail_unless_equals_int (loops, 1);
  fail_unless_equals_int (count_steps_of_kind (p.plan,
          dnnl_layer_normalization), 0);
  fail_unless (dnnl_memory_get_memory_desc (p.plan->mems[tensor_named
              (p.specialised, "ln")], &md) == dnnl_success);
  fail_unless_equals_int (cbi_md_data_type (md), dnnl_bf16);
  planned_free (&p);
}

GST_END_TEST;

/* ops-dead-taps.onnx (tests/models/generate.py): on a 6x8 map, the 3x3
 * convolution of dilation 8 runs as a 1x1 one (its centre taps' weights)
 * and the one of dilation 6 as a 1x3 one; on a 20x20 map both keep their
 * 3x3 taps. onnx.c checks the values against onnxruntime. */
GST_START_TEST (test_taps_that_only_read_padding_are_dropped)
{
  const CbiShape small = { 4, {2, 3, 6, 8} }, large = { 4, {2, 3, 20, 20} };
  gint pass;
  Planned p;

  for (pass = 0; pass < 2; pass++) {
    guint i, k1x1 = 0, k1x3 = 0, k3x3 = 0;
    planned_open (&p, "ops-dead-taps.onnx", pass == 0 ? &small : &large);
    planned_plan (&p);
    for (i = 0; i < p.plan->steps->len; i++) {
      const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
      const dnnl_dim_t *dims;
      if (pd == NULL || step_kind (pd) != dnnl_convolution)
        continue;
      dims = cbi_md_dims (dnnl_primitive_desc_query_md (pd,
              dnnl_query_weights_md, 0));
      /* the stem and the head are 1x1 too: 3 to 8, 8 to 16 */
      k1x1 += dims[2] == 1 && dims[3] == 1 && dims[1] == 8 && dims[0] == 8;
      k1x3 += dims[2] == 1 && dims[3] == 3;
      k3x3 += dims[2] == 3 && dims[3] == 3;
    }
    fail_unless_equals_int (k1x1, pass == 0 ? 1 : 0);
    fail_unless_equals_int (k1x3, pass == 0 ? 1 : 0);
    fail_unless_equals_int (k3x3, pass == 0 ? 0 : 2);
    planned_free (&p);
  }
}

GST_END_TEST;

/* How many of @plan's convolutions read bfloat16. */
static guint
count_bf16_convolutions (const CbiCpuPlan * plan)
{
  guint i, low = 0;

  for (i = 0; i < plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (plan, i);
    low += pd != NULL && step_kind (pd) == dnnl_convolution
        && cbi_md_data_type (dnnl_primitive_desc_query_md (pd,
            dnnl_query_src_md, 0)) == dnnl_bf16;
  }
  return low;
}

/* ops-depth-to-space.onnx (tests/models/generate.py) in bf16's wide
 * plan, where the CPU has it: each DepthToSpace of a convolution's
 * output in bfloat16 channels last is one reorder of bfloat16 into
 * bfloat16 (the next convolution reads it as it is), no float32 copy and
 * no conversion; its value check is onnx.c's in bf16. */
GST_START_TEST (test_a_bf16_depth_to_space_moves_bfloat16)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint i, shuffles = 0, low = 0;
  Planned p;

  if (!planned_wide_bf16 (&p, "ops-depth-to-space.onnx", &in))
    return;
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    CbiMd src, dst;
    if (pd == NULL || step_kind (pd) != dnnl_reorder)
      continue;
    src = dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
    dst = dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0);
    if (cbi_md_n_dims (src) != 6)
      continue;
    shuffles++;
    low += cbi_md_data_type (src) == dnnl_bf16
        && cbi_md_data_type (dst) == dnnl_bf16;
  }
  fail_unless_equals_int (shuffles, 2);
  /* where the convolutions before them run in bfloat16 */
  if (count_bf16_convolutions (p.plan) == 3)
    fail_unless_equals_int (low, 2);
  planned_free (&p);
}

GST_END_TEST;

/* ops-upsample-output.onnx (tests/models/generate.py): the bilinear
 * Resize that writes the graph's output runs as our loop into the
 * row-major output, from a row-major copy of its input: no resampling
 * primitive, and no reorder of the whole output after it (every reorder
 * in the plan writes less than the output's bytes: the image's, the
 * small input's). onnx.c checks the values against onnxruntime. */
GST_START_TEST (test_an_upsampled_output_is_resampled_row_major_by_our_loop)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  const gsize output_bytes = 2 * 5 * 15 * 20 * sizeof (gfloat);
  guint i, loops = 0;
  Planned p;

  planned_open (&p, "ops-upsample-output.onnx", &in);
  planned_plan (&p);
  fail_unless_equals_int (count_steps_of_kind (p.plan, dnnl_resampling), 0);
  for (i = 0; i < p.plan->steps->len; i++) {
    const CbiCpuStep *step = &g_array_index (p.plan->steps, CbiCpuStep, i);
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    loops += step->run == cbi_cpu_run_upsample;
    if (pd && step_kind (pd) == dnnl_reorder)
      fail_unless (dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md
              (pd, dnnl_query_dst_md, 0)) < output_bytes);
  }
  fail_unless_equals_int (loops, 1);
  planned_free (&p);
}

GST_END_TEST;

/* bf16-products.onnx (tests/models/generate.py): the image's rows, N x 3
 * x 48 x 64, times constant [64, 256] and [256, 64] matrices that every
 * batch shares, and a Gemm: in float32 each is one 2-D oneDNN matmul (the
 * MatMuls' rows folded), whose weights oneDNN then packs once */
GST_START_TEST (test_a_product_by_shared_weights_is_one_2d_product)
{
  const CbiShape in = { 4, {2, 3, 48, 64} };
  guint i, products = 0;
  Planned p;

  planned_open (&p, "bf16-products.onnx", &in);
  planned_plan (&p);
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);

    if (pd == NULL || step_kind (pd) != dnnl_matmul)
      continue;
    products++;
    fail_unless_equals_int (cbi_md_n_dims (dnnl_primitive_desc_query_md (pd,
                dnnl_query_src_md, 0)), 2);
    fail_unless_equals_int (cbi_md_n_dims (dnnl_primitive_desc_query_md (pd,
                dnnl_query_weights_md, 0)), 2);
  }
  fail_unless_equals_int (products, 3);
  planned_free (&p);
}

GST_END_TEST;

/* ops-leading-broadcast.onnx (tests/models/generate.py): three binary ops
 * whose constant broadcasts along leading dimensions, which oneDNN 2.6's
 * binary runs in its reference code (the first two, at least): no binary
 * step is left there, and those that are our loop instead run over rows
 * that both operands read in a row (48 values and more). onnx.c checks
 * the values. */
GST_START_TEST (test_a_leading_broadcast_runs_in_rows_not_in_reference_code)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint i, slow = 0, loops = 0, rows = 0, steps;
  Planned p;

  planned_open (&p, "ops-leading-broadcast.onnx", &in);
  planned_plan (&p);
  steps = count_binary_steps (p.plan, &slow);
  fail_unless_equals_int (slow, 0);
  for (i = 0; i < p.plan->steps->len; i++) {
    const CbiCpuStep *step = &g_array_index (p.plan->steps, CbiCpuStep, i);
    if (step->prim == NULL && step->run == cbi_cpu_run_binary) {
      loops++;
      rows += ((const CbiCpuBinary *) step->loop)->run >= 48;
    }
  }
  /* which of them oneDNN runs fast is its version's choice */
  fail_unless_equals_int (steps + loops, 3);
  fail_unless_equals_int (rows, loops);
  planned_free (&p);
}

GST_END_TEST;

/* ops-linear-bias.onnx (tests/models/generate.py): each MatMul by
 * constant weights takes the Add of a bias row after it as its bias (and
 * the Relu after that as its post-op): two matmul steps, no binary step
 * or loop. onnx.c checks the values. */
GST_START_TEST (test_a_bias_added_after_a_product_is_the_products_bias)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint i, loops = 0, products = 0;
  Planned p;

  planned_open (&p, "ops-linear-bias.onnx", &in);
  planned_plan (&p);
  fail_unless_equals_int (count_binary_steps (p.plan, NULL), 0);
  for (i = 0; i < p.plan->steps->len; i++) {
    const CbiCpuStep *step = &g_array_index (p.plan->steps, CbiCpuStep, i);
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);

    loops += step->prim == NULL && step->run == cbi_cpu_run_binary;
    products += pd != NULL && step_kind (pd) == dnnl_matmul;
  }
  fail_unless_equals_int (loops, 0);
  fail_unless_equals_int (products, 2);
  planned_free (&p);
}

GST_END_TEST;

/* Whether oneDNN runs @op (its descs made by the caller) in a kernel
 * other than its reference code on this CPU, through the engine's
 * wrappers (oneDNN 2.x's and 3.x's API alike). */
static gboolean
onednn_runs_fast (const CbiDnnlOp * op)
{
  dnnl_engine_t engine = NULL;
  dnnl_primitive_desc_t pd = NULL;
  const gchar *impl = NULL;
  gboolean fast = FALSE;

  fail_unless (dnnl_engine_create (&engine, dnnl_cpu, 0) == dnnl_success);
  if (cbi_dnnl_op_create (&pd, op, NULL, engine) == dnnl_success
      && dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &impl)
      == dnnl_success && impl != NULL)
    fast = !g_str_has_prefix (impl, "ref");
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  dnnl_engine_destroy (engine);
  return fast;
}

/* Whether oneDNN has a fast softmax along the last axis of @dims (3-D)
 * from float32 into bfloat16 on this CPU. */
static gboolean
onednn_has_bf16_softmax (const dnnl_dims_t dims)
{
  CbiMdArena *arena = cbi_md_arena_new ();
  CbiDnnlOp op = { CBI_DNNL_SOFTMAX, dnnl_softmax_accurate, };
  gboolean has;

  fail_unless (cbi_md_tag_typed (arena, &op.src, 3, dims, dnnl_f32,
          dnnl_abc) == dnnl_success);
  fail_unless (cbi_md_tag_typed (arena, &op.dst, 3, dims, dnnl_bf16,
          dnnl_abc) == dnnl_success);
  op.axis = 2;
  has = onednn_runs_fast (&op);
  cbi_md_arena_free (arena);
  return has;
}

/* Whether oneDNN has a fast bfloat16 product of row-major @a by @b
 * (4-D, batched) on this CPU, writing float32. */
static gboolean
onednn_has_bf16_batched_matmul (const dnnl_dims_t a, const dnnl_dims_t b)
{
  CbiMdArena *arena = cbi_md_arena_new ();
  CbiDnnlOp op = { CBI_DNNL_MATMUL, };
  const dnnl_dims_t c = { a[0], a[1], a[2], b[3] };
  gboolean has;

  fail_unless (cbi_md_tag_typed (arena, &op.src, 4, a, dnnl_bf16,
          dnnl_abcd) == dnnl_success);
  fail_unless (cbi_md_tag_typed (arena, &op.weights, 4, b, dnnl_bf16,
          dnnl_abcd) == dnnl_success);
  fail_unless (cbi_md_tag_typed (arena, &op.dst, 4, c, dnnl_f32,
          dnnl_abcd) == dnnl_success);
  has = onednn_runs_fast (&op);
  cbi_md_arena_free (arena);
  return has;
}

/* ops-qkv-attention.onnx in bfloat16's wide plan, where the CPU has it:
 * the product that makes the query, key and values writes bfloat16, the
 * Transposes and views that move them into heads keep it, and the
 * attention's two products read them as they are. No reorder converts
 * a 4-D float32 tensor into bfloat16 in its own layout (before, the
 * query, the key and the values each took one before their product);
 * the one 4-D conversion left moves too (the heads merged, for the
 * Gemm after them, which reads it as it is). */
GST_START_TEST (test_bf16_attention_operands_are_converted_where_they_move)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  const dnnl_dims_t q = { 2, 2, 48, 4 }, kt = { 2, 2, 4, 48 };
  CbiMdArena *arena;
  guint i, products = 0, low = 0, conversions = 0, moves = 0;
  Planned p;

  if (!planned_wide_bf16 (&p, "ops-qkv-attention.onnx", &in))
    return;
  arena = cbi_md_arena_new ();
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    dnnl_primitive_kind_t kind = pd ? step_kind (pd) : dnnl_undefined_primitive;
    CbiMd src, dst, row_major[2];

    if (kind != dnnl_matmul && kind != dnnl_reorder)
      continue;
    src = dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
    if (cbi_md_n_dims (src) != 4)
      continue;
    if (kind == dnnl_matmul) {
      products++;
      low += cbi_md_data_type (src) == dnnl_bf16
          && cbi_md_data_type (dnnl_primitive_desc_query_md (pd,
              dnnl_query_weights_md, 0)) == dnnl_bf16;
      continue;
    }
    dst = dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0);
    if (cbi_md_data_type (src) != dnnl_f32
        || cbi_md_data_type (dst) != dnnl_bf16)
      continue;
    fail_unless (cbi_md_tag_typed (arena, &row_major[0], 4,
            cbi_md_dims (src), dnnl_f32, dnnl_abcd) == dnnl_success);
    fail_unless (cbi_md_tag_typed (arena, &row_major[1], 4,
            cbi_md_dims (dst), dnnl_bf16, dnnl_abcd) == dnnl_success);
    if (dnnl_memory_desc_equal (src, row_major[0])
        && dnnl_memory_desc_equal (dst, row_major[1]))
      conversions++;
    else
      moves++;
  }
  fail_unless_equals_int (products, 2);
  fail_unless_equals_int (conversions, 0);
  fail_unless_equals_int (moves, 1);
  if (onednn_has_bf16_batched_matmul (q, kt)) {
    fail_unless_equals_int (low, 2);
  } else {
    GST_INFO ("oneDNN has no fast bfloat16 batched product here");
  }
  cbi_md_arena_free (arena);
  planned_free (&p);
}

GST_END_TEST;

/* ops-qkv-attention.onnx (tests/models/generate.py): the query, key and
 * values are parts of one row-major product along its first axis (two
 * Gathers of one index, a Slice and a Squeeze): views of its block, so no
 * copy loop runs and no reorder reads a part of it (a 5-D source of one
 * along the first axis); the values, read after the scores, keep that
 * block from the tensors planned in between, which onnx.c's values
 * against onnxruntime check. */
GST_START_TEST (test_attention_parts_of_one_product_are_views_of_it)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint i, copies = 0, part_reads = 0;
  Planned p;

  planned_open (&p, "ops-qkv-attention.onnx", &in);
  planned_plan (&p);
  for (i = 0; i < p.plan->steps->len; i++) {
    const CbiCpuStep *step = &g_array_index (p.plan->steps, CbiCpuStep, i);
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    CbiMd md;

    copies += step->prim == NULL && step->run == cbi_cpu_run_copy;
    if (pd == NULL || step_kind (pd) != dnnl_reorder)
      continue;
    md = dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
    part_reads += cbi_md_n_dims (md) == 5 && cbi_md_dims (md)[0] == 1;
  }
  fail_unless_equals_int (copies, 0);
  fail_unless_equals_int (part_reads, 0);
  planned_free (&p);
}

GST_END_TEST;

/* ops-attention.onnx in bfloat16's wide plan, where the CPU has it: the
 * Softmax, which only the product by the values reads, writes bfloat16,
 * and that product reads it as it is: no reorder in the plan reads the
 * Softmax's output (N x 48 x 48) */
GST_START_TEST (test_a_bf16_softmax_feeds_its_product_without_a_conversion)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  const dnnl_dims_t scores = { 2, 48, 48 };
  guint i, softmaxes = 0, low = 0, converted = 0;
  Planned p;

  if (!planned_wide_bf16 (&p, "ops-attention.onnx", &in))
    return;
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    dnnl_primitive_kind_t kind = pd ? step_kind (pd) : dnnl_undefined_primitive;
    CbiMd md;

    if (kind == SOFTMAX_KIND) {
      softmaxes++;
      low += cbi_md_data_type (dnnl_primitive_desc_query_md (pd,
              dnnl_query_dst_md, 0)) == dnnl_bf16;
    }
    if (kind != dnnl_reorder)
      continue;
    md = dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0);
    converted += cbi_md_n_dims (md) == 3 && cbi_md_dims (md)[1] == 48
        && cbi_md_dims (md)[2] == 48;
  }
  fail_unless_equals_int (softmaxes, 1);
  if (onednn_has_bf16_softmax (scores)) {
    fail_unless_equals_int (low, 1);
    fail_unless_equals_int (converted, 0);
  } else {
    GST_INFO ("oneDNN has no fast softmax writing bfloat16 here");
  }
  planned_free (&p);
}

GST_END_TEST;

/* ops-linear-bias.onnx in bfloat16's wide plan, where the CPU has it:
 * where both products take bfloat16, the first writes its output (after
 * its bias and Relu) in bfloat16 for the second, which reads it as it
 * is: one conversion into bfloat16 in the plan, the image's rows, where
 * each product converted its own input before */
GST_START_TEST (test_a_bf16_product_feeds_the_next_without_a_conversion)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  guint i, products = 0, low = 0, reorders = 0;
  Planned p;

  if (!planned_wide_bf16 (&p, "ops-linear-bias.onnx", &in))
    return;
  for (i = 0; i < p.plan->steps->len; i++) {
    const_dnnl_primitive_desc_t pd = step_primitive (p.plan, i);
    dnnl_primitive_kind_t kind = pd ? step_kind (pd) : dnnl_undefined_primitive;

    /* conversions into bfloat16 */
    reorders += kind == dnnl_reorder
        && cbi_md_data_type (dnnl_primitive_desc_query_md (pd,
            dnnl_query_dst_md, 0)) == dnnl_bf16;
    if (kind != dnnl_matmul)
      continue;
    products++;
    low += cbi_md_data_type (dnnl_primitive_desc_query_md (pd,
            dnnl_query_weights_md, 0)) == dnnl_bf16;
  }
  fail_unless_equals_int (products, 2);
  if (low == 2) {
    fail_unless_equals_int (reorders, 1);
  } else {
    GST_INFO ("oneDNN runs %u of the products in bfloat16 here", low);
  }
  planned_free (&p);
}

GST_END_TEST;

/* The same model planned in bfloat16, where the CPU has it: its
 * convolutions' layout is oneDNN's choice, never the channel blocks of
 * the float32 plan, in which oneDNN's bfloat16 convolutions are its older
 * jit kernels (no AMX); the float32 plan keeps them. */
GST_START_TEST (test_a_bf16_plan_leaves_the_channel_blocks_to_float32)
{
  const CbiShape in = { 4, {2, 3, 6, 8} };
  GError *err = NULL;
  Planned p;

  planned_open (&p, "ops-residual.onnx", &in);
  if (!cbi_backend_has_precision (p.backend, CBI_PRECISION_BF16, &err)) {
    GST_INFO ("no bf16 on this CPU: %s", err->message);
    g_clear_error (&err);
  } else {
    p.backend->precision = CBI_PRECISION_BF16;
    p.backend->precision_wide = TRUE;
    planned_plan (&p);
    fail_unless_equals_int (p.plan->conv_layout, dnnl_format_tag_any);
    fail_unless (p.backend->low_precision_ops > 0);
  }
  planned_free (&p);
}

GST_END_TEST;

/* What the probes of a CbiCpuShare read, moved by each fake batch: a
 * batch of 10 ms in which the team's threads wait @wait_per_batch for
 * cores, summed, and the process's cores are idle @idle_per_batch. */
typedef struct
{
  gint64 now;
  guint64 wait, idle;
  guint64 wait_per_batch, idle_per_batch;
  gboolean readable;
  gboolean wait_restarts;       /* each batch sets the wait back to 0, as a
                                 * thread that left the team and a new one
                                 * with its id would */
  gint in_parallel;             /* of the last batch */
  gint team;                    /* omp_get_num_threads () in it */
} FakeCores;

static gboolean
fake_team_wait_ns (const pid_t * tids, gint n, guint64 * ns, gpointer data)
{
  FakeCores *f = data;

  fail_unless (n >= 2);
  *ns = f->wait;
  return f->readable;
}

static gboolean
fake_idle_ns (guint64 * ns, gpointer data)
{
  *ns = ((FakeCores *) data)->idle;
  return TRUE;
}

static gint64
fake_now_ns (gpointer data)
{
  return ((FakeCores *) data)->now;
}

static const CbiCpuShareProbes fake_probes = {
  fake_team_wait_ns, fake_idle_ns, fake_now_ns,
};

static gboolean
fake_batch (gpointer data, GError ** error)
{
  FakeCores *f = data;

  f->in_parallel = omp_in_parallel ();
  f->team = omp_get_num_threads ();
  f->now += 10 * 1000000;
  f->wait = f->wait_restarts ? 0 : f->wait + f->wait_per_batch;
  f->idle += f->idle_per_batch;
  return TRUE;
}

/* Runs @n fake batches on @share; returns how many ran on one thread. */
static guint
run_fake_batches (CbiCpuShare * share, FakeCores * f, guint n)
{
  guint i, solo_runs = 0;
  gboolean solo;

  for (i = 0; i < n; i++) {
    fail_unless (cbi_cpu_share_run (share, fake_batch, f, &solo, NULL));
    /* one thread: inside a region of two, so that oneDNN runs alone */
    fail_unless_equals_int (f->in_parallel, solo);
    if (solo)
      fail_unless_equals_int (f->team, 2);
    solo_runs += solo ? 1 : 0;
  }
  return solo_runs;
}

/* A share watching the fake cores @f, with OpenMP set to a team of two
 * (@before: the count to give back to share_done()). */
static CbiCpuShare *
share_for_two_threads (FakeCores * f, gint * before)
{
  CbiCpuShare *share = cbi_cpu_share_new_with_probes (&fake_probes, f);

  *before = omp_get_max_threads ();
  omp_set_num_threads (2);
  return share;
}

static void
share_done (CbiCpuShare * share, gint before)
{
  omp_set_num_threads (before);
  cbi_cpu_share_free (share);
}

GST_START_TEST (test_a_team_with_the_cores_to_itself_stays_a_team)
{
  FakeCores f = { 1, 0, 0, 4 * 1000000, 0, TRUE };
  gint before;
  CbiCpuShare *share = share_for_two_threads (&f, &before);

  /* two threads waiting 4 of 10 ms for cores between them: each a fifth
   * of the time, below a quarter */
  fail_unless_equals_int (run_fake_batches (share, &f, 50), 0);
  share_done (share, before);
}

GST_END_TEST;

GST_START_TEST
    (test_a_team_that_waits_for_cores_runs_on_one_thread_until_they_are_idle) {
  FakeCores f = { 1, 0, 0, 8 * 1000000, 0, TRUE };
  gint before;
  CbiCpuShare *share = share_for_two_threads (&f, &before);

  /* two threads waiting 8 of 10 ms between them: after the first 50 ms on
   * the team, the batches run alone, as long as no core is idle */
  fail_unless_equals_int (run_fake_batches (share, &f, 30), 25);
  /* off a worker (cbiworker.h), each opens a region of its own */
  fail_unless_equals_int (cbi_cpu_share_solo_regions (share), 25);
  /* the cores idle 3 of every 10 ms is not half a core */
  f.idle_per_batch = 3 * 1000000;
  fail_unless_equals_int (run_fake_batches (share, &f, 30), 30);
  /* idle 6 of 10 ms: within two windows (of 100 ms: the one open when it
   * began, and the next) the team is back, and stays while it waits no
   * more */
  f.idle_per_batch = 6 * 1000000;
  f.wait_per_batch = 0;
  fail_unless (run_fake_batches (share, &f, 30) <= 20);
  fail_unless_equals_int (f.in_parallel, FALSE);
  fail_unless_equals_int (run_fake_batches (share, &f, 10), 0);
  share_done (share, before);
}

GST_END_TEST;

GST_START_TEST (test_a_wait_that_goes_back_is_no_wait)
{
  FakeCores f = { 1, G_GUINT64_CONSTANT (1) << 40, 0, 0, 0, TRUE, TRUE };
  gint before;
  CbiCpuShare *share = share_for_two_threads (&f, &before);

  fail_unless_equals_int (run_fake_batches (share, &f, 20), 0);
  share_done (share, before);
}

GST_END_TEST;

GST_START_TEST (test_a_share_that_cannot_read_the_wait_keeps_the_team)
{
  FakeCores f = { 1, 0, 0, 9 * 1000000, 0, FALSE };
  gint before;
  CbiCpuShare *share = share_for_two_threads (&f, &before);

  fail_unless_equals_int (run_fake_batches (share, &f, 20), 0);
  /* and one thread of OpenMP is one thread, watched or not */
  omp_set_num_threads (1);
  f.readable = TRUE;
  fail_unless_equals_int (run_fake_batches (share, &f, 20), 0);
  share_done (share, before);
}

GST_END_TEST;

/* Fake batches on a share, run by a worker as the CPU engine runs them. */
typedef struct
{
  CbiCpuShare *share;
  FakeCores *f;
  guint n, solo_runs;
} WorkerBatches;

static void
run_fake_batches_on_the_worker (gpointer data)
{
  WorkerBatches *w = data;

  /* this thread's own count: a team of two */
  omp_set_num_threads (2);
  w->solo_runs = run_fake_batches (w->share, w->f, w->n);
}

/* Runs @n fake batches on @share, each a call of its own to @worker;
 * returns how many ran on one thread. */
static guint
run_fake_batches_on (CbiWorker * worker, CbiCpuShare * share, FakeCores * f,
    guint n)
{
  WorkerBatches w = { share, f, 1, 0 };
  guint i, solo_runs = 0;

  for (i = 0; i < n; i++) {
    cbi_worker_call (worker, run_fake_batches_on_the_worker, &w);
    solo_runs += w.solo_runs;
  }
  return solo_runs;
}

static void
leave_the_share (gpointer data)
{
  cbi_cpu_share_leave (data);
}

GST_START_TEST
    (test_batches_in_a_row_on_one_thread_share_one_region_on_a_worker) {
  FakeCores f = { 1, 0, 0, 8 * 1000000, 0, TRUE };
  GError *err = NULL;
  CbiWorker *worker = cbi_worker_new ("test-worker", &err);
  CbiCpuShare *share = cbi_cpu_share_new_with_probes (&fake_probes, &f);

  fail_unless (worker != NULL, "%s", err ? err->message : "");
  /* 25 batches on one thread, in the one region the worker's thread stays
   * in between them: OpenMP's second thread is not woken for each */
  fail_unless_equals_int (run_fake_batches_on (worker, share, &f, 30), 25);
  fail_unless_equals_int (cbi_cpu_share_solo_regions (share), 1);
  /* the team back: the region is left, the next batches run on the team */
  f.idle_per_batch = 6 * 1000000;
  f.wait_per_batch = 0;
  fail_unless (run_fake_batches_on (worker, share, &f, 30) <= 20);
  fail_unless_equals_int (f.in_parallel, FALSE);
  fail_unless_equals_int (run_fake_batches_on (worker, share, &f, 10), 0);
  /* and on one thread again, in a second region */
  f.idle_per_batch = 0;
  f.wait_per_batch = 8 * 1000000;
  fail_unless_equals_int (run_fake_batches_on (worker, share, &f, 10), 5);
  fail_unless_equals_int (cbi_cpu_share_solo_regions (share), 2);
  /* a share left for a fixed team ends the region once that call returns */
  cbi_worker_call (worker, leave_the_share, share);
  fail_unless_equals_int (run_fake_batches_on (worker, share, &f, 1), 0);
  fail_unless_equals_int (f.in_parallel, FALSE);
  /* back on one thread after a window, and a worker freed in the region
   * leaves it */
  fail_unless_equals_int (run_fake_batches_on (worker, share, &f, 10), 6);
  cbi_worker_free (worker);
  cbi_cpu_share_free (share);
}

GST_END_TEST;

/* A convolution reads its input through a view rather than a reorder
 * where its layout and the input's put every value at the same place: the
 * CRNNs' first convolution writes channels last, and with 16 channels
 * that is the blocks of 16 channels the next one reads. */
static gboolean
same_places (gint n, const dnnl_dim_t * dims, dnnl_data_type_t ta,
    dnnl_format_tag_t a, dnnl_data_type_t tb, dnnl_format_tag_t b)
{
  CbiMdArena *arena = cbi_md_arena_new ();
  CbiMd ma = NULL, mb = NULL;
  gboolean same;

  fail_unless (cbi_md_tag_typed (arena, &ma, n, dims, ta, a) == dnnl_success);
  fail_unless (cbi_md_tag_typed (arena, &mb, n, dims, tb, b) == dnnl_success);
  same = cbi_md_same_places (ma, mb);
  fail_unless_equals_int (cbi_md_same_places (mb, ma), same);
  cbi_md_arena_free (arena);
  return same;
}

GST_START_TEST (test_layouts_alike_in_all_but_name_share_their_data)
{
  const dnnl_dim_t c16[4] = { 8, 16, 16, 160 }, c32[4] = { 8, 32, 16, 160 };
  const dnnl_dim_t c24[4] = { 8, 24, 1, 1 }, v16[4] = { 8, 16, 1, 1 };

  fail_unless (same_places (4, c16, dnnl_bf16, dnnl_acdb, dnnl_bf16,
          dnnl_aBcd16b));
  fail_unless (same_places (4, c16, dnnl_f32, dnnl_acdb, dnnl_f32,
          dnnl_aBcd16b));
  /* one value per channel: row-major and channels last alike (the
   * strides of dimensions of 1 differ) */
  fail_unless (same_places (4, v16, dnnl_f32, dnnl_abcd, dnnl_f32, dnnl_acdb));
  /* two blocks of channels, a padded block, a transposition, a type */
  fail_if (same_places (4, c32, dnnl_bf16, dnnl_acdb, dnnl_bf16, dnnl_aBcd16b));
  fail_if (same_places (4, c24, dnnl_f32, dnnl_abcd, dnnl_f32, dnnl_aBcd16b));
  fail_if (same_places (4, c16, dnnl_f32, dnnl_abcd, dnnl_f32, dnnl_acdb));
  fail_if (same_places (4, c16, dnnl_f32, dnnl_acdb, dnnl_bf16, dnnl_acdb));
}

GST_END_TEST;

static Suite *
backends_suite (void)
{
  Suite *s = suite_create ("cbibackends");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_auto_takes_cuda_where_it_runs_every_op);
  tcase_add_test (tc, test_auto_takes_the_cpu_and_names_the_op_cuda_lacks);
  tcase_add_test (tc, test_auto_takes_the_cpu_and_says_why_cuda_did_not_open);
  tcase_add_test (tc, test_cuda_by_name_fails_on_an_op_it_lacks);
  tcase_add_test (tc, test_the_engine_says_why_auto_fell_back);
  tcase_add_test (tc, test_every_backend_of_this_build_runs_every_op);
  tcase_add_test (tc,
      test_the_cpu_adds_a_residual_in_place_as_its_convolutions_sum);
  tcase_add_test (tc, test_layouts_alike_in_all_but_name_share_their_data);
  tcase_add_test (tc, test_a_broadcast_operand_takes_the_first_operands_blocks);
  tcase_add_test (tc, test_a_bf16_plan_leaves_the_channel_blocks_to_float32);
  tcase_add_test (tc, test_narrow_groups_merge_into_runs_of_32_channels);
  tcase_add_test (tc, test_narrow_groups_run_merged_in_bf16_on_a_matrix_unit);
  tcase_add_test (tc, test_a_transpose_to_the_layout_its_input_has_is_a_view);
  tcase_add_test (tc, test_layer_norm_into_bf16_rounds_each_normalised_value);
  tcase_add_test (tc, test_a_layer_norm_that_products_read_writes_bf16);
  tcase_add_test (tc, test_taps_that_only_read_padding_are_dropped);
  tcase_add_test (tc, test_a_bf16_depth_to_space_moves_bfloat16);
  tcase_add_test (tc,
      test_a_concat_read_by_convolutions_copies_nothing_on_the_cpu);
  tcase_add_test (tc,
      test_wide_3x3_convolutions_run_as_winograds_where_it_pays);
  tcase_add_test (tc,
      test_a_class_head_keeps_the_blocks_an_image_head_does_not);
  tcase_add_test (tc,
      test_an_upsampled_output_is_resampled_row_major_by_our_loop);
  tcase_add_test (tc, test_a_product_by_shared_weights_is_one_2d_product);
  tcase_add_test (tc, test_a_bias_added_after_a_product_is_the_products_bias);
  tcase_add_test (tc, test_a_bf16_product_feeds_the_next_without_a_conversion);
  tcase_add_test (tc,
      test_a_bf16_softmax_feeds_its_product_without_a_conversion);
  tcase_add_test (tc, test_attention_parts_of_one_product_are_views_of_it);
  tcase_add_test (tc,
      test_bf16_attention_operands_are_converted_where_they_move);
  tcase_add_test (tc,
      test_a_leading_broadcast_runs_in_rows_not_in_reference_code);
  tcase_add_test (tc, test_a_batch_past_cudnns_limit_splits_into_equal_calls);
  tcase_add_test (tc, test_the_first_algorithm_whose_workspace_fits_is_taken);
  tcase_add_test (tc, test_a_team_with_the_cores_to_itself_stays_a_team);
  tcase_add_test (tc,
      test_a_team_that_waits_for_cores_runs_on_one_thread_until_they_are_idle);
  tcase_add_test (tc, test_a_share_that_cannot_read_the_wait_keeps_the_team);
  tcase_add_test (tc, test_a_wait_that_goes_back_is_no_wait);
  tcase_add_test (tc,
      test_batches_in_a_row_on_one_thread_share_one_region_on_a_worker);
  return s;
}

GST_CHECK_MAIN (backends);
