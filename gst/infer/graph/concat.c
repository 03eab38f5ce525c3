/* cudabatchinfer: Concats that convolutions read, taken apart
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A Concat along the channels copies every one of its inputs into a new
 * tensor: a pass over memory that computes nothing. Where the Concat is
 * read by convolutions alone (SqueezeNet's fire modules, DenseNet's
 * blocks, an ASPP head, a U-Net's decoder, YOLOv8's C2f), each of them is
 * a sum of convolutions, one per input of the Concat, each with the
 * weights of that input's channels (a convolution of one group is linear
 * in its input channels): the first takes the bias, every other adds its
 * result onto the sum so far (an Add that backends run as the
 * convolution's sum epilogue), and the activation after the convolution
 * follows the last Add. That rewrite is made where the convolution's
 * output has no more channels than its input (each Add then reads and
 * writes less than the Concat's copy did), and 8 or more.
 *
 * A pooling that alone reads a channel Concat works on each channel on
 * its own, so it moves before the Concat, one pooling per input: the
 * Concat then copies the pooled, smaller tensors, or goes by the rewrite
 * above (SqueezeNet's MaxPools between fire modules).
 */
#include "graph/graph-private.h"
#include "graph/cbipasses.h"

#include <string.h>

/* Channel counts are followed back through at most this many nodes for
 * one tensor (binary ops follow both operands). */
#define CBI_CONCAT_MAX_VISITS 64

/* A value of an int64 input that is there but not a constant. */
#define CBI_CONCAT_UNKNOWN G_MININT64

/* Value @i of int64 input @k of node @n: @fallback where the input is
 * absent, CBI_CONCAT_UNKNOWN where it is not a constant of that many
 * values. */
static gint64
cbi_concat_int (const CbiGraph * graph, const CbiNode * n, guint k, gint64 i,
    gint64 fallback)
{
  const CbiTensorInfo *t;

  if (k >= n->n_inputs || n->inputs[k] < 0)
    return fallback;
  t = cbi_graph_tensor (graph, n->inputs[k]);
  if (t->dtype != CBI_DTYPE_INT64 || t->ints == NULL || t->n_dims != 1
      || i >= t->dims[0])
    return CBI_CONCAT_UNKNOWN;
  return t->ints[i];
}

/* The channels Slice @n leaves of @c, or -1 where its constants do not
 * say. */
static gint64
cbi_concat_sliced (const CbiGraph * graph, const CbiNode * n, gint64 c)
{
  const CbiTensorInfo *starts;
  gint64 i, start, end;

  if (c < 1 || n->n_inputs < 3 || n->inputs[1] < 0)
    return -1;
  starts = cbi_graph_tensor (graph, n->inputs[1]);
  if (starts->ints == NULL || starts->n_dims != 1)
    return -1;
  for (i = 0; i < starts->dims[0]; i++) {
    gint64 axis = cbi_concat_int (graph, n, 3, i, i);
    /* a negative axis is the channels' only at a rank not known here */
    if (axis < 0)
      return -1;
    if (axis != 1)
      continue;
    if (cbi_concat_int (graph, n, 4, i, 1) != 1)
      return -1;
    start = cbi_concat_int (graph, n, 1, i, CBI_CONCAT_UNKNOWN);
    end = cbi_concat_int (graph, n, 2, i, CBI_CONCAT_UNKNOWN);
    if (start == CBI_CONCAT_UNKNOWN || end == CBI_CONCAT_UNKNOWN)
      return -1;
    start = CLAMP (start < 0 ? start + c : start, 0, c);
    end = CLAMP (end < 0 ? end + c : end, 0, c);
    return end - start;
  }
  return c;
}

/* The channels a constant operand @k of a binary op gives its output
 * with @c, the other's: @c where it broadcasts along them (a rank below 3
 * aligns with the positions, or one value there), else -1. */
static gint64
cbi_concat_with_constant (const CbiTensorInfo * k, gint64 c)
{
  if (k->n_dims < 3)
    return c;
  return k->n_dims <= 4 && (k->dims[k->n_dims - 3] == 1
      || k->dims[k->n_dims - 3] == c) ? c : -1;
}

/* The number of channels (axis 1) of activation @t, as the weights and
 * ops before it fix it whatever the frame size, or -1 where that is not
 * known here (or @visits ran out). */
static gint64
cbi_concat_channels (const CbiGraph * graph, gint t, gint * visits)
{
  const CbiTensorInfo *info, *w, *a, *b;
  const CbiNode *n;
  gint p;
  gint64 c, other, sum = 0;
  guint i;

  if (t < 0 || --(*visits) < 0)
    return -1;
  info = cbi_graph_tensor (graph, t);
  if (t == graph->input)
    return info->n_dims == 4 && info->dims[1] > 0 ? info->dims[1] : -1;
  if ((p = cbi_graph_producer (graph, t)) < 0 || info->data != NULL)
    return -1;
  n = cbi_graph_node (graph, p);
  switch (cbi_op_info (n->op)->kind) {
    case CBI_OP_KIND_CONV:
      w = cbi_graph_tensor (graph, n->inputs[1]);
      if (w->data == NULL || w->n_dims != 4)
        return -1;
      return n->op == CBI_OP_CONV ? w->dims[0] : w->dims[1] * n->conv.group;
    case CBI_OP_KIND_ELTWISE:
    case CBI_OP_KIND_POOL:
    case CBI_OP_KIND_RESIZE:
    case CBI_OP_KIND_NORM:
    case CBI_OP_KIND_PRELU:
      return cbi_concat_channels (graph, n->inputs[0], visits);
    case CBI_OP_KIND_BINARY:
      /* two activations of as many channels, or an activation and a
       * constant that broadcasts along them */
      a = cbi_graph_tensor (graph, n->inputs[0]);
      b = cbi_graph_tensor (graph, n->inputs[1]);
      if (a->data && b->data)
        return -1;
      if (a->data || b->data)
        return cbi_concat_with_constant (a->data ? a : b,
            cbi_concat_channels (graph, n->inputs[a->data ? 1 : 0], visits));
      c = cbi_concat_channels (graph, n->inputs[0], visits);
      other = c < 0 ? -1 : cbi_concat_channels (graph, n->inputs[1], visits);
      return c == other ? c : -1;
    case CBI_OP_KIND_PERMUTE:
      if (n->op != CBI_OP_DEPTH_TO_SPACE || n->n_ints < 1 || n->ints[0] < 1)
        return -1;
      c = cbi_concat_channels (graph, n->inputs[0], visits);
      return c > 0 && c % (n->ints[0] * n->ints[0]) == 0 ?
          c / (n->ints[0] * n->ints[0]) : -1;
    case CBI_OP_KIND_COPY:
      if (n->op != CBI_OP_SLICE)
        return -1;
      return cbi_concat_sliced (graph, n,
          cbi_concat_channels (graph, n->inputs[0], visits));
    case CBI_OP_KIND_SPLIT:
      /* a part of the channels: its size (mode 0), or one of equal parts */
      if (n->axis != 1)
        return -1;
      if (n->mode == 0)
        return n->ints[1];
      c = cbi_concat_channels (graph, n->inputs[0], visits);
      other = n->ints[1] > 0 ? (c + n->ints[1] - 1) / n->ints[1] : 0;
      return c > 0 ? MIN (other, c - MIN (n->ints[0] * other, c)) : -1;
    case CBI_OP_KIND_CONCAT:
      if (n->axis != 1)
        return -1;
      for (i = 0; i < n->n_inputs; i++) {
        if ((c = cbi_concat_channels (graph, n->inputs[i], visits)) < 0)
          return -1;
        sum += c;
      }
      return sum;
    default:
      return -1;
  }
}

gint64
cbi_graph_static_channels (const CbiGraph * graph, gint t)
{
  gint visits = CBI_CONCAT_MAX_VISITS;

  return cbi_concat_channels (graph, t, &visits);
}

/* The channels of each input of channel Concat @c into @channels; FALSE
 * where one is a constant or not known. */
static gboolean
cbi_concat_input_channels (const CbiGraph * graph, const CbiNode * c,
    gint64 * channels)
{
  guint i;

  if (c->op != CBI_OP_CONCAT || c->n_inputs < 2 || c->n_inputs >
      CBI_MAX_NODE_INPUTS)
    return FALSE;
  for (i = 0; i < c->n_inputs; i++) {
    gint visits = CBI_CONCAT_MAX_VISITS;
    if (cbi_graph_tensor (graph, c->inputs[i])->data != NULL
        || (channels[i] = cbi_concat_channels (graph, c->inputs[i],
                &visits)) < 1)
      return FALSE;
  }
  return TRUE;
}

/* Whether node @r, a reader of channel Concat output @t of @total
 * channels, is a convolution this pass can take apart. */
static gboolean
cbi_concat_conv_splits (const CbiGraph * graph, const CbiNode * r, gint t,
    gint64 total)
{
  const CbiTensorInfo *w;
  guint k;

  if (r->op != CBI_OP_CONV || r->inputs[0] != t || r->conv.group != 1)
    return FALSE;
  for (k = 1; k < r->n_inputs; k++)
    if (r->inputs[k] == t)
      return FALSE;
  w = cbi_graph_tensor (graph, r->inputs[1]);
  /* fewer than 8 output channels (an image's last layer) keep the one
   * convolution, which the CPU computes widened to 8 (cpu/conv.c) */
  return w->data != NULL && w->n_dims == 4 && w->dims[1] == total
      && w->dims[0] >= 8 && w->dims[0] <= total
      && (r->n_inputs < 3 || r->inputs[2] < 0
      || cbi_graph_tensor (graph, r->inputs[2])->data != NULL);
}

/* A new constant of @w's input channels @from .. @from + @count. */
static gint
cbi_concat_weights_part (CbiGraph * graph, gint w, gint64 from, gint64 count,
    const gchar * name)
{
  const CbiTensorInfo *wi = cbi_graph_tensor (graph, w);
  gint64 dims[4], o, window = wi->dims[2] * wi->dims[3];
  gfloat *data = g_new (gfloat, wi->dims[0] * count * window);

  for (o = 0; o < wi->dims[0]; o++)
    memcpy (data + o * count * window,
        wi->data + (o * wi->dims[1] + from) * window,
        count * window * sizeof (gfloat));
  memcpy (dims, wi->dims, sizeof (dims));
  dims[1] = count;
  return cbi_graph_add_tensor (graph, name, 4, dims, data);
}

/* Rewrites convolution node @index, which reads Concat @c (a copy: the
 * nodes move) of inputs of @channels, as a sum of convolutions, one per
 * input; returns the number of nodes it now is. */
static guint
cbi_concat_split_conv (CbiGraph * graph, guint index, const CbiNode * c,
    const gint64 * channels)
{
  CbiNode conv = *cbi_graph_node (graph, index), part, add;
  gint sum = -1;
  gint64 from = 0;
  guint i, k, at = index;

  for (i = 0; i < c->n_inputs; i++) {
    part = conv;
    part.name = g_strdup_printf ("%s.part%u", conv.name, i);
    part.inputs[0] = c->inputs[i];
    part.inputs[1] = cbi_concat_weights_part (graph, conv.inputs[1], from,
        channels[i], part.name);
    from += channels[i];
    part.output = cbi_graph_add_tensor (graph, part.name, 0, NULL, NULL);
    if (i == 0) {
      /* the node itself becomes the first part, the one with the bias */
      *cbi_graph_node (graph, index) = part;
      sum = part.output;
      continue;
    }
    if (part.n_inputs > 2)
      part.inputs[2] = -1;
    g_array_insert_val (graph->nodes, ++at, part);
    /* every other part adds its own onto the sum so far */
    memset (&add, 0, sizeof (add));
    add.op = CBI_OP_ADD;
    add.name = g_strdup_printf ("%s.sum%u", conv.name, i);
    add.n_inputs = 2;
    add.inputs[0] = part.output;
    add.inputs[1] = sum;
    for (k = 2; k < CBI_MAX_NODE_INPUTS; k++)
      add.inputs[k] = -1;
    add.output = sum = i + 1 == c->n_inputs ? conv.output :
        cbi_graph_add_tensor (graph, add.name, 0, NULL, NULL);
    g_array_insert_val (graph->nodes, ++at, add);
  }
  g_free (conv.name);
  return at - index + 1;
}

/* Takes channel Concat node @index apart where convolutions alone read
 * it; TRUE where it did (the Concat is gone). */
static gboolean
cbi_concat_split_readers (CbiGraph * graph, guint index)
{
  CbiNode c = *cbi_graph_node (graph, index);
  gint64 channels[CBI_MAX_NODE_INPUTS], total = 0;
  guint i, readers = 0;

  if ((c.axis != 1 && c.axis != -3) || cbi_graph_is_output (graph, c.output)
      || !cbi_concat_input_channels (graph, &c, channels))
    return FALSE;
  for (i = 0; i < c.n_inputs; i++)
    total += channels[i];
  for (i = index + 1; i < graph->nodes->len; i++) {
    const CbiNode *r = cbi_graph_node (graph, i);
    guint k;
    for (k = 0; k < r->n_inputs; k++)
      if (r->inputs[k] == c.output) {
        if (!cbi_concat_conv_splits (graph, r, c.output, total))
          return FALSE;
        readers++;
        break;
      }
  }
  if (readers == 0 || readers != cbi_graph_count_consumers (graph, c.output))
    return FALSE;
  for (i = index + 1; i < graph->nodes->len; i++)
    if (cbi_graph_node (graph, i)->inputs[0] == c.output)
      i += cbi_concat_split_conv (graph, i, &c, channels) - 1;
  g_array_remove_index (graph->nodes, index);
  return TRUE;
}

/* Moves the pooling that alone reads channel Concat node @index before
 * it, one per input; TRUE where it did. */
static gboolean
cbi_concat_sink_pool (CbiGraph * graph, guint index)
{
  CbiNode c = *cbi_graph_node (graph, index), pool, *p;
  gint64 channels[CBI_MAX_NODE_INPUTS];
  guint i, at;

  if (c.axis != 1 || cbi_graph_is_output (graph, c.output)
      || cbi_graph_count_consumers (graph, c.output) != 1
      || !cbi_concat_input_channels (graph, &c, channels))
    return FALSE;
  for (at = index + 1; at < graph->nodes->len; at++)
    if (cbi_graph_node (graph, at)->inputs[0] == c.output)
      break;
  if (at == graph->nodes->len)
    return FALSE;
  p = cbi_graph_node (graph, at);
  if ((p->op != CBI_OP_MAX_POOL && p->op != CBI_OP_AVERAGE_POOL)
      || p->n_inputs != 1)
    return FALSE;
  pool = *p;
  /* the Concat, now of the pooled inputs, writes the pooling's output
   * where the pooling was; the poolings go before it */
  c.output = pool.output;
  for (i = 0; i < c.n_inputs; i++) {
    CbiNode part = pool;
    part.name = g_strdup_printf ("%s.part%u", pool.name, i);
    part.inputs[0] = c.inputs[i];
    part.output = cbi_graph_add_tensor (graph, part.name, 0, NULL, NULL);
    c.inputs[i] = part.output;
    g_array_insert_val (graph->nodes, at + i, part);
  }
  /* the old pooling node, now after the parts, becomes the Concat; the
   * Concat's old node (its name moved) goes */
  p = cbi_graph_node (graph, at + c.n_inputs);
  g_free (p->name);
  *p = c;
  cbi_graph_node (graph, index)->name = NULL;
  g_array_remove_index (graph->nodes, index);
  return TRUE;
}

void
cbi_graph_split_concats (CbiGraph * graph)
{
  guint i;

  for (i = 0; i < graph->nodes->len; i++) {
    if (cbi_graph_node (graph, i)->op != CBI_OP_CONCAT)
      continue;
    /* a sunk Concat sits further on, where this loop comes to it again */
    if (cbi_concat_sink_pool (graph, i) || cbi_concat_split_readers (graph, i))
      i--;
  }
}
