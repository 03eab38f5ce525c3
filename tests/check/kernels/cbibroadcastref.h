/* cudabatchinfer kernel tests: numpy's broadcasting, the reference way
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the kernel tests of a device (launch.c) and of the host build
 * (host.c) both compare Binary and Where with: plain index arithmetic,
 * none of cbimath.h's strided walks, which they check.
 */
#pragma once

#include <stdint.h>

/* The strides at which a @rank-D @shape (each dim 1 or the output's) is
 * read for each output index: its own row-major ones, 0 along a dim of
 * 1. */
static inline void
broadcast_strides (int rank, const int64_t * shape, int64_t * strides)
{
  int64_t s = 1;
  int j;

  for (j = rank - 1; j >= 0; j--) {
    strides[j] = shape[j] == 1 ? 0 : s;
    s *= shape[j];
  }
}

/* the offset of element @i of row-major @dims at @strides, by unravelling
 * it, every dim modulo its size */
static inline int64_t
offset_of (int64_t i, int rank, const int64_t * dims, const int64_t * strides)
{
  int64_t off = 0;
  int j;

  for (j = rank - 1; j >= 0; j--) {
    off += (i % dims[j]) * strides[j];
    i /= dims[j];
  }
  return off;
}
