/* cudabatchinfer: the embedded default model (cbidefaultmodel.c)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/cbigraph.h"

G_BEGIN_DECLS

/* Returns: (transfer full): the embedded default model, a pencil-sketch
 * filter: RGB in 0..1 to RGB in 0..1, any frame size. */
CbiGraph *cbi_default_model_new (void);

G_END_DECLS
