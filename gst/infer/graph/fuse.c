/* cudabatchinfer: graph rewrites that merge the forms exporters write
 * into one op
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A LayerNorm that an exporter wrote as its formula (PaddlePaddle's and
 * older PyTorch exports: ReduceMean, Sub, Pow 2, ReduceMean, Add epsilon,
 * Sqrt, Div, Mul by the scale, Add the shift) becomes one
 * LayerNormalization: one pass for the statistics instead of nine over
 * the tensor.
 *
 * A HardSwish written as its formula (PaddlePaddle's exports of MobileNetV3
 * and PP-LCNet: Add 3, Clip 0..6, Mul by the input, Div by 6) becomes one
 * HardSwish, which fuses into the convolution before it: one pass instead
 * of three binary ones over the tensor.
 *
 * Products and sums by one constant value (PP-LCNet's learnable affine
 * block, x * a + b after each activation) become one element-wise
 * alpha x + beta, which fuses into the producer as an activation where a
 * binary op could not.
 *
 * A Conv followed by an Add of one value per channel (PaddlePaddle's
 * convolutions without bias and elementwise_add) takes the values as its
 * bias, and one followed by a Mul of one value per channel or for all
 * (a dequantized Conv's scale, a BatchNormalization written as a Mul and
 * an Add) takes them into its weights and bias: the activation after
 * them fuses into the Conv.
 *
 * x * Sigmoid (x), SiLU as PyTorch exports it (YOLOv8, EfficientNet),
 * becomes one Swish, an element-wise op that fuses into the producer of
 * x where x has no other reader.
 *
 * An Identity (what exporters leave of a Dropout) goes: its readers read
 * its input, and the activation before it can fuse into its producer.
 *
 * A run of element-wise ops (PP-LCNetV3's alpha x + beta, HardSwish,
 * alpha x + beta after each convolution) becomes one node with steps,
 * which fuses whole into the producer: one epilogue instead of a pass over
 * the activation for each op after the first.
 */
#include "graph/cbiops.h"
#include "graph/cbipasses.h"
#include "cbimath.h"

#include <string.h>

/* Whether node @n is a ReduceMean of @x over the last axis, kept. */
static gboolean
cbi_fuse_is_row_mean (const CbiNode * n, gint x)
{
  return n->op == CBI_OP_REDUCE_MEAN && n->inputs[0] == x && n->n_ints == 1
      && n->ints[0] == -1 && n->mode == 1;
}

/* The element count of constant @t when its values run along the last
 * axis (leading ones only), else -1. */
static gint64
cbi_fuse_row_count (const CbiTensorInfo * t)
{
  gint64 values = 1;
  gint d;

  if (t->data == NULL)
    return -1;
  for (d = 0; d < t->n_dims; d++)
    values *= t->dims[d];
  return t->n_dims == 0 || t->dims[t->n_dims - 1] == values ? values : -1;
}

/* Whether node @n is binary op @op of @a and @b, or (@b -1) of @a and a
 * constant along the last axis of @count values (0: any count). */
static gboolean
cbi_fuse_is_binary (const CbiGraph * graph, const CbiNode * n, CbiOpType op,
    gint a, gint b, gint64 count)
{
  gint64 values;

  if (n->op != op || n->inputs[0] != a)
    return FALSE;
  if (b >= 0)
    return n->inputs[1] == b;
  values = cbi_fuse_row_count (cbi_graph_tensor (graph, n->inputs[1]));
  return values > 0 && (count == 0 || values == count);
}

/* Whether tensor @t is read by @readers nodes and is no graph output. */
static gboolean
cbi_fuse_private (const CbiGraph * graph, gint t, guint readers)
{
  return cbi_graph_count_consumers (graph, t) == readers
      && !cbi_graph_is_output (graph, t);
}

/* How many nodes from @i make a LayerNorm: 9 with the shift, 8 without,
 * or 0. */
static guint
cbi_fuse_layer_norm_at (const CbiGraph * graph, guint i)
{
  const CbiNode *mean, *sub, *pow, *var, *eps, *sqrt, *div, *mul, *add;
  gint64 scale;

  if (i + 7 >= graph->nodes->len)
    return 0;
  mean = cbi_graph_node (graph, i);
  sub = cbi_graph_node (graph, i + 1);
  pow = cbi_graph_node (graph, i + 2);
  var = cbi_graph_node (graph, i + 3);
  eps = cbi_graph_node (graph, i + 4);
  sqrt = cbi_graph_node (graph, i + 5);
  div = cbi_graph_node (graph, i + 6);
  mul = cbi_graph_node (graph, i + 7);
  if (!cbi_fuse_is_row_mean (mean, mean->inputs[0])
      || !cbi_fuse_is_binary (graph, sub, CBI_OP_SUB, mean->inputs[0],
          mean->output, 0)
      || pow->op != CBI_OP_POW || pow->alpha != 2.0f
      || pow->inputs[0] != sub->output
      || !cbi_fuse_is_row_mean (var, pow->output)
      || !cbi_fuse_is_binary (graph, eps, CBI_OP_ADD, var->output, -1, 1)
      || sqrt->op != CBI_OP_SQRT || sqrt->inputs[0] != eps->output
      || !cbi_fuse_is_binary (graph, div, CBI_OP_DIV, sub->output,
          sqrt->output, 0)
      || !cbi_fuse_is_binary (graph, mul, CBI_OP_MUL, div->output, -1, 0))
    return 0;
  if (!cbi_fuse_private (graph, mean->output, 1)
      || !cbi_fuse_private (graph, sub->output, 2)
      || !cbi_fuse_private (graph, pow->output, 1)
      || !cbi_fuse_private (graph, var->output, 1)
      || !cbi_fuse_private (graph, eps->output, 1)
      || !cbi_fuse_private (graph, sqrt->output, 1)
      || !cbi_fuse_private (graph, div->output, 1))
    return 0;
  /* the shift: an Add of as many values as the scale */
  scale = cbi_fuse_row_count (cbi_graph_tensor (graph, mul->inputs[1]));
  add = i + 8 < graph->nodes->len ? cbi_graph_node (graph, i + 8) : NULL;
  if (add && cbi_fuse_private (graph, mul->output, 1)
      && cbi_fuse_is_binary (graph, add, CBI_OP_ADD, mul->output, -1, scale))
    return 9;
  return 8;
}

void
cbi_graph_fuse_layer_norm (CbiGraph * graph)
{
  guint i, count;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n, *last;
    gint x, gamma, beta = -1;
    gfloat epsilon;

    count = cbi_fuse_layer_norm_at (graph, i);
    if (count == 0)
      continue;
    n = cbi_graph_node (graph, i);
    x = n->inputs[0];
    epsilon = cbi_graph_tensor (graph,
        cbi_graph_node (graph, i + 4)->inputs[1])->data[0];
    gamma = cbi_graph_node (graph, i + 7)->inputs[1];
    if (count == 9)
      beta = cbi_graph_node (graph, i + 8)->inputs[1];
    last = cbi_graph_node (graph, i + count - 1);
    n->output = last->output;
    n->op = CBI_OP_LAYER_NORM;
    n->inputs[0] = x;
    n->inputs[1] = gamma;
    n->inputs[2] = beta;
    n->n_inputs = count == 9 ? 3 : 2;
    n->axis = -1;
    n->alpha = epsilon;
    n->n_ints = 0;
    n->mode = 0;
    g_array_remove_range (graph->nodes, i + 1, count - 1);
  }
}

/* Whether tensor @t is a constant of one value, @value. */
static gboolean
cbi_fuse_is_scalar (const CbiGraph * graph, gint t, gfloat value)
{
  const CbiTensorInfo *c = cbi_graph_tensor (graph, t);

  return cbi_fuse_row_count (c) == 1 && c->data[0] == value;
}

/* Whether nodes @i to @i + 3 are x * clip (x + 3, 0, 6) / 6 of one
 * activation x, the Mul's operands in either order and the division by 6
 * or a product by 1/6, with nothing else reading what lies between. */
static gboolean
cbi_fuse_hard_swish_at (const CbiGraph * graph, guint i)
{
  const CbiNode *add, *clip, *mul, *div;
  gint x;

  if (i + 3 >= graph->nodes->len)
    return FALSE;
  add = cbi_graph_node (graph, i);
  clip = cbi_graph_node (graph, i + 1);
  mul = cbi_graph_node (graph, i + 2);
  div = cbi_graph_node (graph, i + 3);
  x = add->inputs[0];
  if (add->op != CBI_OP_ADD || cbi_graph_tensor (graph, x)->data != NULL
      || !cbi_fuse_is_scalar (graph, add->inputs[1], 3.0f)
      || clip->op != CBI_OP_CLIP || clip->inputs[0] != add->output
      || clip->alpha != 0.0f || clip->beta != 6.0f
      || mul->op != CBI_OP_MUL
      || !((mul->inputs[0] == x && mul->inputs[1] == clip->output)
          || (mul->inputs[1] == x && mul->inputs[0] == clip->output))
      || div->inputs[0] != mul->output
      || !((div->op == CBI_OP_DIV
              && cbi_fuse_is_scalar (graph, div->inputs[1], 6.0f))
          || (div->op == CBI_OP_MUL
              && cbi_fuse_is_scalar (graph, div->inputs[1], 1.0f / 6.0f))))
    return FALSE;
  return cbi_fuse_private (graph, add->output, 1)
      && cbi_fuse_private (graph, clip->output, 1)
      && cbi_fuse_private (graph, mul->output, 1);
}

void
cbi_graph_fuse_hard_swish (CbiGraph * graph)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n;

    if (!cbi_fuse_hard_swish_at (graph, i))
      continue;
    n = cbi_graph_node (graph, i);
    n->output = cbi_graph_node (graph, i + 3)->output;
    n->op = CBI_OP_HARD_SWISH;
    n->n_inputs = 1;
    n->inputs[1] = -1;
    g_array_remove_range (graph->nodes, i + 1, 3);
  }
}

/* The index of the node that writes tensor @t, or -1. */
static gint
cbi_fuse_producer (const CbiGraph * graph, gint t)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++)
    if (cbi_graph_node (graph, i)->output == t)
      return (gint) i;
  return -1;
}

void
cbi_graph_fuse_swish (CbiGraph * graph)
{
  guint j = 0;

  while (j < graph->nodes->len) {
    CbiNode *mul = cbi_graph_node (graph, j);
    gint k, s = -1;

    /* Mul (x, Sigmoid (x)), either way round, the Sigmoid read only there */
    for (k = 0; mul->op == CBI_OP_MUL && mul->n_inputs == 2 && k < 2; k++) {
      gint p = mul->inputs[k] >= 0 && mul->inputs[1 - k] >= 0
          && cbi_fuse_private (graph, mul->inputs[k], 1) ?
          cbi_fuse_producer (graph, mul->inputs[k]) : -1;
      const CbiNode *sig = p >= 0 ? cbi_graph_node (graph, p) : NULL;
      if (sig && sig->op == CBI_OP_SIGMOID && sig->n_then == 0
          && sig->inputs[0] == mul->inputs[1 - k]) {
        s = p;
        break;
      }
    }
    if (s < 0) {
      j++;
      continue;
    }
    mul->op = CBI_OP_SWISH;
    mul->inputs[0] = mul->inputs[1 - k];
    mul->inputs[1] = -1;
    mul->n_inputs = 1;
    mul->alpha = 1.0f;
    mul->beta = 0.0f;
    /* the Sigmoid comes before its reader: the Mul moves up one */
    g_array_remove_index (graph->nodes, s);
  }
}

/* Whether tensor @t is a float32 activation: neither a constant nor an
 * int64 value computed from shapes. */
static gboolean
cbi_fuse_is_activation (const CbiGraph * graph, gint t)
{
  const CbiTensorInfo *info = cbi_graph_tensor (graph, t);

  return info->data == NULL && info->dtype == CBI_DTYPE_FLOAT;
}

void
cbi_graph_fuse_residual_scale (CbiGraph * graph)
{
  guint k = 0;

  while (k < graph->nodes->len) {
    CbiNode *add = cbi_graph_node (graph, k), *mul = NULL, one;
    gint side, j = -1, x = -1, scale = -1, m, i;
    gchar *name;

    /* Add (x, Mul (x, s)), each either way round, the Mul read only there */
    for (side = 0; add->op == CBI_OP_ADD && add->n_inputs == 2 && side < 2;
        side++) {
      x = add->inputs[1 - side];
      j = add->inputs[side] >= 0 && x >= 0
          && cbi_fuse_private (graph, add->inputs[side], 1) ?
          cbi_fuse_producer (graph, add->inputs[side]) : -1;
      mul = j >= 0 ? cbi_graph_node (graph, j) : NULL;
      if (mul && mul->op == CBI_OP_MUL && mul->n_inputs == 2
          && mul->n_then == 0) {
        for (m = 0; m < 2; m++)
          if (mul->inputs[m] == x && mul->inputs[1 - m] != x
              && mul->inputs[1 - m] >= 0)
            scale = 1 - m;
        if (scale >= 0)
          break;
      }
    }
    /* both activations of float32: no element-wise node reads a
     * constant (the importer folds those) or a value computed from
     * shapes */
    if (scale < 0 || !cbi_fuse_is_activation (graph, x)
        || !cbi_fuse_is_activation (graph, mul->inputs[scale])) {
      k++;
      continue;
    }
    /* x (1 + s): 1 + s is over s's values, which broadcast into x's (a
     * squeeze-and-excitation's one per channel); the Add's pass goes */
    memset (&one, 0, sizeof (one));
    one.op = CBI_OP_LINEAR;
    one.name = g_strconcat (mul->name, "/plus_one", NULL);
    one.n_inputs = 1;
    one.inputs[0] = mul->inputs[scale];
    for (i = 1; i < CBI_MAX_NODE_INPUTS; i++)
      one.inputs[i] = -1;
    one.alpha = 1.0f;
    one.beta = 1.0f;
    name = g_strconcat (one.name, ":0", NULL);
    one.output = cbi_graph_add_tensor (graph, name, 0, NULL, NULL);
    g_free (name);
    mul->inputs[scale] = one.output;
    mul->output = add->output;
    g_array_remove_index (graph->nodes, k);
    g_array_insert_val (graph->nodes, j, one);
    /* the nodes from j on moved: look again from the Mul */
    k = j + 1;
  }
}

/* Whether node @n is a Mul, an Add or a Sub of an activation and a
 * constant of one value, as alpha x + beta into @alpha and @beta, x the
 * activation @x. */
static gboolean
cbi_fuse_affine_of (const CbiGraph * graph, const CbiNode * n,
    gfloat * alpha, gfloat * beta, gint * x)
{
  const CbiTensorInfo *c;
  gboolean first;

  if ((n->op != CBI_OP_MUL && n->op != CBI_OP_ADD && n->op != CBI_OP_SUB)
      || n->n_inputs != 2)
    return FALSE;
  /* the constant second, or (Sub: c - x) first */
  first = cbi_graph_tensor (graph, n->inputs[0])->data != NULL;
  if (first && (n->op != CBI_OP_SUB
          || cbi_graph_tensor (graph, n->inputs[1])->data != NULL))
    return FALSE;
  c = cbi_graph_tensor (graph, n->inputs[first ? 0 : 1]);
  if (cbi_fuse_row_count (c) != 1)
    return FALSE;
  /* exact: x - c is x + (-c), c - x is (-1) x + c */
  *x = n->inputs[first ? 1 : 0];
  *alpha = n->op == CBI_OP_MUL ? c->data[0] : first ? -1.0f : 1.0f;
  *beta = n->op == CBI_OP_ADD ? c->data[0] : n->op == CBI_OP_SUB ?
      (first ? c->data[0] : -c->data[0]) : 0.0f;
  return TRUE;
}

void
cbi_graph_fuse_affine (CbiGraph * graph, const CbiShape * shapes)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i), *next;
    gfloat alpha, beta, a2, b2;
    gint x, x2;

    if (!cbi_fuse_affine_of (graph, n, &alpha, &beta, &x)
        || (shapes && !cbi_shape_equal (&shapes[x], &shapes[n->output])))
      continue;
    /* a * x + b, then c * (that) + d: one (a c) x + (b c + d) */
    while (i + 1 < graph->nodes->len
        && cbi_fuse_affine_of (graph, next = cbi_graph_node (graph, i + 1),
            &a2, &b2, &x2) && x2 == n->output
        && cbi_fuse_private (graph, n->output, 1)
        && (shapes == NULL
            || cbi_shape_equal (&shapes[x2], &shapes[next->output]))) {
      alpha *= a2;
      beta = beta * a2 + b2;
      n->output = next->output;
      g_array_remove_index (graph->nodes, i + 1);
    }
    n->op = CBI_OP_LINEAR;
    n->alpha = alpha;
    n->beta = beta;
    n->n_inputs = 1;
    n->inputs[0] = x;
    n->inputs[1] = -1;
  }
}

/* Moves the scale node @at, which only product @i reads (as operand
 * @k), after it: the product reads the scale's input, writes the scale's
 * old output (its shape in @shapes now the product's), and the scale
 * reads that and writes the product's output. */
static void
cbi_fuse_scale_after (CbiGraph * graph, CbiShape * shapes, guint at,
    guint i, guint k)
{
  CbiNode *nodes = (CbiNode *) graph->nodes->data, scale = nodes[at];
  const gint scaled = scale.output, y = nodes[i].output;

  /* the nodes between keep their order; the array's clear function
   * never sees the move */
  memmove (&nodes[at], &nodes[at + 1], (i - at) * sizeof (CbiNode));
  nodes[i] = scale;
  nodes[i - 1].inputs[k] = scale.inputs[0];
  nodes[i - 1].output = scaled;
  shapes[scaled] = shapes[y];
  nodes[i].inputs[0] = scaled;
  nodes[i].output = y;
}

void
cbi_graph_scale_products (CbiGraph * graph, CbiShape * shapes)
{
  guint i, k;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *m = cbi_graph_node (graph, i), *after;
    if (m->op != CBI_OP_MATMUL || m->n_inputs != 2)
      continue;
    for (k = 0; k < 2; k++) {
      const gint t = m->inputs[k];
      const gint at = t >= 0 ? cbi_fuse_producer (graph, t) : -1;
      const CbiNode *scale = at >= 0 ? cbi_graph_node (graph, at) : NULL;
      if (cbi_graph_tensor (graph, m->inputs[1 - k])->data != NULL)
        break;                  /* a layer's weights: its bias Add follows */
      if (scale == NULL || (guint) at > i || scale->op != CBI_OP_LINEAR
          || scale->beta != 0.0f || scale->n_then > 0
          || !cbi_fuse_private (graph, t, 1))
        continue;
      after = i + 1 < graph->nodes->len ? cbi_graph_node (graph, i + 1) : NULL;
      if (after && after->op == CBI_OP_LINEAR && after->beta == 0.0f
          && after->n_then == 0 && after->inputs[0] == m->output
          && cbi_fuse_private (graph, m->output, 1)) {
        /* the other operand's scale, moved before: one scale of both */
        after->alpha *= scale->alpha;
        m->inputs[k] = scale->inputs[0];
        g_array_remove_index (graph->nodes, at);
      } else if (cbi_graph_fused_activation (graph, i) == NULL) {
        cbi_fuse_scale_after (graph, shapes, at, i, k);
      } else {
        continue;               /* its activation stays its epilogue */
      }
      /* the product is at i - 1 now: its other operand next */
      m = cbi_graph_node (graph, --i);
    }
  }
}

/* Whether element-wise node @n may join a run. Erf may not: oneDNN has no
 * form of it, so on the CPU it runs as a loop of ours over the whole
 * tensor, the padding of a blocked layout included, which only an op that
 * keeps 0 at 0 may do (alone, Erf does). */
static gboolean
cbi_fuse_runs_eltwise (const CbiNode * n)
{
  return cbi_op_is_eltwise (n->op) && cbi_op_info (n->op)->eltwise != CBI_K_ERF;
}

void
cbi_graph_fuse_eltwise_runs (CbiGraph * graph)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i), *next;

    if (!cbi_fuse_runs_eltwise (n))
      continue;
    while (n->n_then < G_N_ELEMENTS (n->then)
        && (next = (CbiNode *) cbi_graph_next_activation (graph, i))
        && cbi_fuse_runs_eltwise (next)) {
      CbiEltwiseStep *step = &n->then[n->n_then++];
      step->op = cbi_op_info (next->op)->eltwise;
      step->alpha = next->alpha;
      step->beta = next->beta;
      n->output = next->output;
      g_array_remove_index (graph->nodes, i + 1);
    }
  }
}

/* Whether every reader of tensor @t is a node on activations (no shape
 * computation, which may hold the tensor's index elsewhere). */
static gboolean
cbi_fuse_read_by_ops_only (const CbiGraph * graph, gint t)
{
  guint i, j;

  for (i = 0; i < graph->nodes->len; i++) {
    const CbiNode *n = cbi_graph_node (graph, i);
    for (j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] == t && n->op == CBI_OP_SHAPE_VALUE)
        return FALSE;
  }
  return TRUE;
}

/* The Transpose node whose output is tensor @t and nothing else reads, or
 * %NULL; its index into @index. */
static CbiNode *
cbi_fuse_private_transpose (CbiGraph * graph, gint t, guint * index)
{
  guint i;

  if (!cbi_fuse_private (graph, t, 1))
    return NULL;
  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i);
    if (n->output == t) {
      *index = i;
      return n->op == CBI_OP_TRANSPOSE && n->n_ints > 0 ? n : NULL;
    }
  }
  return NULL;
}

/* Whether @perm is a permutation of 0 .. @n - 1: shape inference refuses
 * one that is not, later; composing it first would read past the other
 * one's axes. */
static gboolean
cbi_fuse_is_permutation (const gint64 * perm, gint n)
{
  guint64 seen = 0;
  gint d;

  for (d = 0; d < n; d++) {
    if (perm[d] < 0 || perm[d] >= n || perm[d] >= 64
        || (seen & (G_GUINT64_CONSTANT (1) << perm[d])))
      return FALSE;
    seen |= G_GUINT64_CONSTANT (1) << perm[d];
  }
  return TRUE;
}

void
cbi_graph_fuse_transposes (CbiGraph * graph)
{
  guint i, first;
  gint d;

  for (i = 0; i < graph->nodes->len; i++) {
    CbiNode *n = cbi_graph_node (graph, i), *before;
    gint64 perm[CBI_MAX_DIMS];
    gboolean identity = TRUE;

    if (n->op != CBI_OP_TRANSPOSE || n->n_ints == 0)
      continue;
    before = cbi_fuse_private_transpose (graph, n->inputs[0], &first);
    if (before == NULL || before->n_ints != n->n_ints
        || !cbi_fuse_is_permutation (n->ints, n->n_ints)
        || !cbi_fuse_is_permutation (before->ints, before->n_ints))
      continue;
    /* output axis d of the second is axis perm[d] of the first's input */
    for (d = 0; d < n->n_ints; d++) {
      perm[d] = before->ints[n->ints[d]];
      identity = identity && perm[d] == d;
    }
    n->inputs[0] = before->inputs[0];
    memcpy (n->ints, perm, n->n_ints * sizeof (gint64));
    if (identity) {
      n->op = CBI_OP_IDENTITY;
      n->n_ints = 0;
    }
    g_array_remove_index (graph->nodes, first);
    if (first < i)
      i--;
  }
}

void
cbi_graph_drop_identities (CbiGraph * graph)
{
  guint i, j, k;

  for (i = 0; i < graph->nodes->len;) {
    const CbiNode *n = cbi_graph_node (graph, i);
    gint from = n->inputs[0], to = n->output;

    if (n->op != CBI_OP_IDENTITY || cbi_graph_is_output (graph, to)
        || !cbi_fuse_read_by_ops_only (graph, to)) {
      i++;
      continue;
    }
    for (j = 0; j < graph->nodes->len; j++) {
      CbiNode *reader = cbi_graph_node (graph, j);
      for (k = 0; k < reader->n_inputs; k++)
        if (reader->inputs[k] == to)
          reader->inputs[k] = from;
    }
    g_array_remove_index (graph->nodes, i);
  }
}

/* The per-channel values of constant @t, as an Add to a @channels-channel
 * NCHW activation reads them (C x 1 x 1 or 1 x C x 1 x 1); else NULL. */
static const gfloat *
cbi_fuse_channel_values (const CbiGraph * graph, gint t, gint64 channels)
{
  const CbiTensorInfo *c = cbi_graph_tensor (graph, t);
  gint d, at;

  if (c->data == NULL || c->dtype != CBI_DTYPE_FLOAT
      || c->n_dims < 3 || c->n_dims > 4)
    return NULL;
  at = c->n_dims - 3;
  for (d = 0; d < c->n_dims; d++)
    if (c->dims[d] != (d == at ? channels : 1))
      return NULL;
  return c->data;
}

/* A scalar constant @t's value; else NULL. */
static const gfloat *
cbi_fuse_scalar_value (const CbiGraph * graph, gint t)
{
  const CbiTensorInfo *c = cbi_graph_tensor (graph, t);
  gint d;

  if (c->data == NULL || c->dtype != CBI_DTYPE_FLOAT || c->n_dims > 4)
    return NULL;
  for (d = 0; d < c->n_dims; d++)
    if (c->dims[d] != 1)
      return NULL;
  return c->data;
}

/* Constant @t's data to write: its own where node @n is its one reader,
 * else a copy (@count values, zeros for @t -1) added as tensor @name
 * of @n_dims @dims, which @n then reads at input @i. */
static gfloat *
cbi_fuse_own_constant (CbiGraph * graph, CbiNode * n, guint i, gint64 count,
    const gchar * what, gint n_dims, const gint64 * dims)
{
  const gint t = i < n->n_inputs ? n->inputs[i] : -1;
  CbiTensorInfo *c = t >= 0 ? cbi_graph_tensor (graph, t) : NULL;
  gfloat *data;
  gchar *name;

  if (c && cbi_graph_count_consumers (graph, t) == 1)
    return c->data;
  data = c ? g_memdup2 (c->data, count * sizeof (gfloat)) :
      g_new0 (gfloat, count);
  name = g_strconcat (n->name, what, NULL);
  n->inputs[i] = cbi_graph_add_tensor (graph, name, n_dims, dims, data);
  n->n_inputs = MAX (n->n_inputs, i + 1);
  g_free (name);
  return data;
}

/* Constant @t, once no node reads it: its data goes (the tensor stays,
 * read and written by none, so that no index moves). */
static void
cbi_fuse_release_constant (CbiGraph * graph, gint t)
{
  CbiTensorInfo *c = cbi_graph_tensor (graph, t);

  if (c->data == NULL || cbi_graph_count_consumers (graph, t) > 0)
    return;
  g_free (c->data);
  c->data = NULL;
}

/* The output channels of Conv or ConvTranspose @n: a ConvTranspose's
 * weights are (in, out / group, kh, kw). */
static gint64
cbi_fuse_conv_channels (const CbiGraph * graph, const CbiNode * n)
{
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);

  return n->op == CBI_OP_CONV ? w->dims[0] : w->dims[1] * MAX (n->conv.group,
      1);
}

/* Which value of a per-channel constant output channel @o of a
 * convolution takes: itself, or through the DepthToSpace after it
 * (block @s, @crd its mode; @channels the DepthToSpace's output
 * channels) the channel it moves to. */
static inline gint64
cbi_fuse_channel_of (gint64 o, gint64 s, gboolean crd, gint64 channels)
{
  if (s == 1)
    return o;
  return crd ? o / (s * s) : o % channels;
}

/* Conv or ConvTranspose @n's output multiplied by @scale (one value per
 * output channel, through a DepthToSpace of block @s as
 * cbi_fuse_channel_of () maps them, or @one for all), in its weights and
 * bias. */
static void
cbi_fuse_scale_conv (CbiGraph * graph, CbiNode * n, const gfloat * scale,
    gboolean one, gint64 s, gboolean crd)
{
  const CbiTensorInfo *w = cbi_graph_tensor (graph, n->inputs[1]);
  const gint64 c = cbi_fuse_conv_channels (graph, n);
  const gboolean transpose = n->op == CBI_OP_CONV_TRANSPOSE;
  const gint n_dims = w->n_dims;
  /* a ConvTranspose's input rows: each group's hold its out / group
   * channels side by side */
  const gint64 rows = w->dims[0], cols = transpose ? w->dims[1] : 1;
  const gint64 per_group = rows / MAX (n->conv.group, 1);
  gint64 dims[CBI_MAX_DIMS], per = 1, r, j, i;
  gfloat *weights, *bias;
  gint d;

  memcpy (dims, w->dims, sizeof (dims));
  for (d = transpose ? 2 : 1; d < n_dims; d++)
    per *= dims[d];
  weights = cbi_fuse_own_constant (graph, n, 1, rows * cols * per,
      "/scaled_weights", n_dims, dims);
  bias = cbi_fuse_own_constant (graph, n, 2, c, "/scaled_bias", 1, &c);
  for (r = 0; r < rows; r++)
    for (j = 0; j < cols; j++) {
      const gint64 o = transpose ? r / per_group * cols + j : r;
      const gfloat f = scale[one ? 0 : cbi_fuse_channel_of (o, s, crd,
              c / (s * s))];
      for (i = 0; i < per; i++)
        weights[(r * cols + j) * per + i] *= f;
    }
  for (r = 0; r < c; r++)
    bias[r] *= scale[one ? 0 : cbi_fuse_channel_of (r, s, crd, c / (s * s))];
}

/* Folds node @at (an Add or Mul of a per-channel or single-value
 * constant, either operand, and @src, which nothing else reads) into Conv
 * or ConvTranspose @n, whose output reaches it directly (@s 1) or through
 * a DepthToSpace of block @s and mode @crd. Returns whether it did: @at is
 * then gone. */
static gboolean
cbi_fuse_fold_into_conv (CbiGraph * graph, CbiNode * n, guint at, gint src,
    gint64 s, gboolean crd)
{
  CbiNode *next = cbi_graph_node (graph, at);
  const gint64 c = cbi_fuse_conv_channels (graph, n);
  /* the convolution's output has its weights' rank */
  const gint rank = cbi_graph_tensor (graph, n->inputs[1])->n_dims;
  const gfloat *values, *one = NULL, *old;
  gfloat *bias;
  gint64 k;
  gchar *name;
  gint t, side;

  if ((next->op != CBI_OP_ADD && next->op != CBI_OP_MUL)
      || next->n_inputs != 2 || !cbi_fuse_private (graph, src, 1)
      || s > c || c % (s * s) != 0)
    return FALSE;
  /* exporters write either order (Paddle2ONNX: the constant first) */
  if (next->inputs[0] == src)
    side = 1;
  else if (next->inputs[1] == src)
    side = 0;
  else
    return FALSE;
  t = next->inputs[side];
  /* a constant of more dims would broadcast the output to them */
  if (t < 0 || cbi_graph_tensor (graph, t)->n_dims > rank)
    return FALSE;
  values = rank == 4 ? cbi_fuse_channel_values (graph, t, c / (s * s)) : NULL;
  one = values ? NULL : cbi_fuse_scalar_value (graph, t);
  if (values == NULL && one == NULL)
    return FALSE;
  if (next->op == CBI_OP_MUL) {
    /* a scale per channel or for all (a dequantized Conv's,
     * onnx/nodes-dynquant.c; a BatchNormalization written out) */
    cbi_fuse_scale_conv (graph, n, values ? values : one, values == NULL, s,
        crd);
  } else {
    old = n->n_inputs > 2 && n->inputs[2] >= 0 ?
        cbi_graph_tensor (graph, n->inputs[2])->data : NULL;
    bias = g_new (gfloat, c);
    for (k = 0; k < c; k++)
      bias[k] = (old ? old[k] : 0.0f) + (values ? values[cbi_fuse_channel_of
              (k, s, crd, c / (s * s))] : one[0]);
    name = g_strconcat (n->name, "/bias", NULL);
    n->inputs[2] = cbi_graph_add_tensor (graph, name, 1, &c, bias);
    n->n_inputs = 3;
    g_free (name);
  }
  /* what read the Add or Mul's output reads the convolution's, or the
   * DepthToSpace's */
  if (s > 1)
    cbi_graph_node (graph, at - 1)->output = next->output;
  else
    n->output = next->output;
  g_array_remove_index (graph->nodes, at);
  cbi_fuse_release_constant (graph, t);
  return TRUE;
}

void
cbi_graph_fold_conv_bias (CbiGraph * graph)
{
  guint i = 0;

  while (i + 1 < graph->nodes->len) {
    CbiNode *n = cbi_graph_node (graph, i), *next = cbi_graph_node (graph,
        i + 1);
    gboolean folded = FALSE;

    if (n->op != CBI_OP_CONV && n->op != CBI_OP_CONV_TRANSPOSE) {
      i++;
      continue;
    }
    if (next->op == CBI_OP_DEPTH_TO_SPACE && next->inputs[0] == n->output
        && next->n_ints > 0 && next->ints[0] > 1 && i + 2 < graph->nodes->len
        && cbi_fuse_private (graph, n->output, 1))
      /* a ConvTranspose lowered (subpixel.c), or a pixel shuffle: each
       * value of the shuffled channel goes to its s x s phase channels */
      folded = cbi_fuse_fold_into_conv (graph, n, i + 2, next->output,
          next->ints[0], next->mode == 1);
    else
      folded = cbi_fuse_fold_into_conv (graph, n, i + 1, n->output, 1, FALSE);
    /* the next node may fold too: a Mul, then an Add */
    if (!folded)
      i++;
  }
}
