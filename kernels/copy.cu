/* cudabatchinfer: strided copies (Slice, Gather, Expand)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y, written in order; it reads x at the view's
 * offset plus each index times its stride (0 repeats, as Expand), the
 * gathered axis through the index list. The view is the CPU backend's
 * (cbi_cpu_run_copy ()), passed by value; a list longer than it holds
 * (indices computed at plan time from a shape) is read from device
 * memory.
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

/* @long_index (device memory, nullable): the gathered axis's indices
 * where there are more than the view holds */
__global__ void
cbi_k_copy_kernel (const float *x, float *y, int64_t count, CbiKCopyView v,
    const int64_t * long_index)
{
  CBI_K_FOR (int64_t, i, count) {
    int64_t rest = i, off = v.offset;
    int d;

    for (d = v.rank - 1; d >= 0; d--) {
      int64_t idx = rest % v.dims[d];
      rest /= v.dims[d];
      if (d == v.axis)
        idx = long_index ? long_index[idx] : v.index[idx];
      off += idx * v.strides[d];
    }
    y[i] = x[off];
  }
}

/* Either launcher: @index (host, up to CBI_K_MAX_GATHER, copied into the
 * view) or @long_index (device, any number). */
static cudaError_t
cbi_k_copy_any (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * strides, int64_t offset, int axis, int n_index,
    const int64_t * index, const int64_t * long_index, cudaStream_t stream)
{
  CbiKCopyView v;
  int64_t count;
  int d;

  if (rank < 0 || rank > CBI_K_MAX_DIMS || n_index < 0
      || (long_index == NULL && n_index > CBI_K_MAX_GATHER) || axis >= rank
      || (axis >= 0 && ((index == NULL && long_index == NULL)
              || dims[axis] != n_index)))
    return cudaErrorInvalidValue;
  memset (&v, 0, sizeof (v));
  v.rank = rank;
  v.axis = axis;
  v.offset = offset;
  for (d = 0; d < rank; d++) {
    v.dims[d] = dims[d];
    v.strides[d] = strides[d];
  }
  for (d = 0; long_index == NULL && d < n_index; d++)
    v.index[d] = index[d];
  count = cbi_k_count (rank, dims);
  if (count < 0)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;
  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_copy_kernel), cbi_k_blocks (count), CBI_K_THREADS, 0,
      stream, x, y, count, v, long_index);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}

cudaError_t
cbi_k_copy (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * strides, int64_t offset, int axis, int n_index,
    const int64_t * index, cudaStream_t stream)
{
  return cbi_k_copy_any (x, y, rank, dims, strides, offset, axis, n_index,
      index, NULL, stream);
}

cudaError_t
cbi_k_copy_long (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * strides, int64_t offset, int axis, int n_index,
    const int64_t * device_index, cudaStream_t stream)
{
  if (axis < 0 || device_index == NULL)
    return cudaErrorInvalidValue;
  return cbi_k_copy_any (x, y, rank, dims, strides, offset, axis, n_index,
      NULL, device_index, stream);
}
