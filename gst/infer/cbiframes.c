/* cudabatchinfer: a batch of frames as the engine sees them
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cbiframes.h"
#include "cbimath.h"

void
cbi_frame_batch_map_output_back (CbiFrameBatch * b)
{
  guint c;

  for (c = 0; c < 3; c++)
    cbi_byte_mapping (b->scale[c], b->bias[c], &b->out_scale[c],
        &b->out_offset[c]);
}
