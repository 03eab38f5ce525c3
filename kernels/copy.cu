/* cudabatchinfer: strided copies (Slice, Gather, Expand)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y, written in order; it reads x at the view's
 * offset plus each index times its stride (0 repeats, as Expand), the
 * gathered axis through the index list. The view is the CPU backend's
 * (cbi_cpu_run_copy ()), passed by value.
 */
#include "cbikernels-private.cuh"

#include <string.h>

typedef struct
{
  int rank;
  int axis;
  int64_t dims[CBI_K_MAX_DIMS];
  int64_t strides[CBI_K_MAX_DIMS];
  int64_t offset;
  int64_t index[CBI_K_MAX_GATHER];
} CbiKCopyView;

__global__ void
cbi_k_copy_kernel (const float *x, float *y, int64_t count, CbiKCopyView v)
{
  CBI_K_FOR (int64_t, i, count) {
    int64_t rest = i, off = v.offset;
    int d;

    for (d = v.rank - 1; d >= 0; d--) {
      int64_t idx = rest % v.dims[d];
      rest /= v.dims[d];
      off += (d == v.axis ? v.index[idx] : idx) * v.strides[d];
    }
    y[i] = x[off];
  }
}

cudaError_t
cbi_k_copy (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * strides, int64_t offset, int axis, int n_index,
    const int64_t * index, cudaStream_t stream)
{
  CbiKCopyView v;
  int64_t count;
  int d;

  if (rank < 0 || rank > CBI_K_MAX_DIMS || n_index < 0
      || n_index > CBI_K_MAX_GATHER || axis >= rank
      || (axis >= 0 && (index == NULL || dims[axis] != n_index)))
    return cudaErrorInvalidValue;
  memset (&v, 0, sizeof (v));
  v.rank = rank;
  v.axis = axis;
  v.offset = offset;
  for (d = 0; d < rank; d++) {
    v.dims[d] = dims[d];
    v.strides[d] = strides[d];
  }
  for (d = 0; d < n_index; d++)
    v.index[d] = index[d];
  count = cbi_k_count (rank, dims);
  if (count < 0)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;
  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_copy_kernel), cbi_k_blocks (count), CBI_K_THREADS, 0,
      stream, x, y, count, v);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
