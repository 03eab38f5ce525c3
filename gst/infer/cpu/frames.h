/* cudabatchinfer: the CPU backend's frame packing and unpacking, also
 * the host reference the CUDA pack and unpack kernels are tested against
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "cbiframes.h"

G_BEGIN_DECLS

/* Host reference of frame packing: fills @tensor (NCHW float, @n_slots x 3 x
 * height x width) from the real frames, then the padding slots. One pass
 * over each frame. */
void cbi_pack_frames (const CbiFrameBatch * batch, gfloat * tensor);
/* The same into NHWC (@n_slots x height x width x 3): what a first
 * convolution that takes its input channels last reads, without a
 * reorder. */
void cbi_pack_frames_channels_last (const CbiFrameBatch * batch,
    gfloat * tensor);
/* The same in bfloat16, each value rounded to nearest even: what a first
 * convolution that runs in bfloat16 reads (a bf16 plan's). */
void cbi_pack_frames_channels_last_bf16 (const CbiFrameBatch * batch,
    guint16 * tensor);
/* Host reference of unpacking: writes the first @n_frames slots of @tensor
 * (NCHW float, @out_channels channels of @out_width x @out_height) to the
 * output frames, clamped to 0..255. A fourth byte the model does not give
 * is copied from the input frame when the sizes match, else opaque
 * (255). */
void cbi_unpack_frames (const CbiFrameBatch * batch, const gfloat * tensor);
/* The same from NHWC (@out_channels of each position together): the
 * layout a last convolution or reorder left, without a reorder to NCHW. */
void cbi_unpack_frames_channels_last (const CbiFrameBatch * batch,
    const gfloat * tensor);

G_END_DECLS
