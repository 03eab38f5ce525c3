/* cudabatchinfer: Where with a broadcast second operand and condition
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y (and a): b and the condition are read at the
 * offsets their strides give (cbi_strided_offset ()), cbi_where () of
 * cbimath.h picks.
 */
#include "cbikernels-private.cuh"

struct CbiKWhereDims
{
  int rank;
  int64_t dims[CBI_K_MAX_DIMS];
  int64_t b_strides[CBI_K_MAX_DIMS];
  int64_t c_strides[CBI_K_MAX_DIMS];
};

__global__ void
cbi_k_where_kernel (const float *c, const float *a, const float *b, float *y,
    int64_t count, CbiKWhereDims w)
{
  CBI_K_FOR (int64_t, i, count) {
    y[i] = cbi_where (c[cbi_strided_offset (i, w.rank, w.dims, w.c_strides)],
        a[i], b[cbi_strided_offset (i, w.rank, w.dims, w.b_strides)]);
  }
}

cudaError_t
cbi_k_where (const float *c, const float *a, const float *b, float *y,
    int rank, const int64_t * dims, const int64_t * b_strides,
    const int64_t * c_strides, cudaStream_t stream)
{
  CbiKWhereDims w;
  int64_t count;
  int j;

  if (rank < 0 || rank > CBI_K_MAX_DIMS || (rank > 0 && (dims == NULL
              || b_strides == NULL || c_strides == NULL)))
    return cudaErrorInvalidValue;
  w.rank = rank;
  for (j = 0; j < rank; j++) {
    if (b_strides[j] < 0 || c_strides[j] < 0)
      return cudaErrorInvalidValue;
    w.dims[j] = dims[j];
    w.b_strides[j] = b_strides[j];
    w.c_strides[j] = c_strides[j];
  }
  count = cbi_k_count (rank, w.dims);
  if (count < 0)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;

  /* *INDENT-OFF* */
  CBI_K_LAUNCH ((cbi_k_where_kernel), cbi_k_blocks (count), CBI_K_THREADS, 0,
      stream, c, a, b, y, count, w);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
