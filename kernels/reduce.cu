/* cudabatchinfer: ReduceMean, ReduceSum, ReduceMax and ArgMax over the
 * middle axis of outer x r x inner
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per (outer, inner) output, cbi_reduce () of cbimath.h down
 * its column; neighbouring threads read neighbouring values.
 */
#include "cbikernels-private.cuh"

__global__ void
cbi_k_reduce_kernel (const float *x, float *y, int64_t count, int64_t r,
    int64_t inner, CbiKReduce op)
{
  CBI_K_FOR (int64_t, i, count) {
    int64_t o = i / inner;
    y[i] = cbi_reduce (op, x + o * r * inner + (i - o * inner), r, inner);
  }
}

cudaError_t
cbi_k_reduce (const float *x, float *y, int64_t outer, int64_t r,
    int64_t inner, CbiKReduce op, cudaStream_t stream)
{
  int64_t count = outer * inner;

  if (outer < 0 || r < 1 || inner < 1 || op < CBI_K_REDUCE_MEAN
      || op > CBI_K_REDUCE_ARGMAX_LAST)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_reduce_kernel), cbi_k_blocks (count), CBI_K_THREADS, 0,
      stream, x, y, count, r, inner, op);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
