/* cudabatchinfer: transpositions (Transpose, DepthToSpace)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y, written in order; it reads x at the offset
 * y's index has under the permuted strides of x (cbi_permute_strides ()),
 * with the dims that stay neighbours merged first.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_permute_kernel (const float *x, float *y, I count, CbiKStrides < I > xs)
{
  CBI_K_FOR (I, i, count) {
    y[i] = x[cbi_k_offset (i, xs)];
  }
}

cudaError_t
cbi_k_permute (const float *x, float *y, int rank, const int64_t * dims,
    const int64_t * perm, cudaStream_t stream)
{
  int64_t y_dims[CBI_K_MAX_DIMS], x_strides[CBI_K_MAX_DIMS], count;
  unsigned int blocks;
  int seen = 0, j, r;

  if (rank < 0 || rank > CBI_K_MAX_DIMS || (rank > 0 && (dims == NULL
              || perm == NULL)))
    return cudaErrorInvalidValue;
  for (j = 0; j < rank; j++) {
    if (perm[j] < 0 || perm[j] >= rank || (seen & (1 << perm[j])))
      return cudaErrorInvalidValue;
    seen |= 1 << perm[j];
  }
  count = cbi_k_count (rank, dims);
  if (count < 0)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;

  cbi_permute_strides (rank, dims, perm, y_dims, x_strides);
  r = cbi_coalesce_dims (rank, y_dims, x_strides);
  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count))
    CBI_K_LAUNCH ((cbi_k_permute_kernel<int>), blocks, CBI_K_THREADS, 0, stream,
        x, y, (int) count, cbi_k_strides<int> (r, y_dims, x_strides));
  else
    CBI_K_LAUNCH ((cbi_k_permute_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, x, y, count, cbi_k_strides<int64_t> (r, y_dims, x_strides));
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
