/* cudabatchinfer: binary ops with broadcasting
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread per element of y (and a): b is read at the offset its
 * strides give (cbi_strided_offset ()), after the launcher has merged the
 * dims b walks as one (cbi_coalesce_dims ()): a per-channel b of NCHW is
 * a walk of three dims, a b of a's shape or a scalar one of one dim.
 */
#include "cbikernels-private.cuh"

/* *INDENT-OFF* */
template <typename I>
/* *INDENT-ON* */
__global__ void
cbi_k_binary_kernel (const float *a, const float *b, float *y, I count,
    CbiKStrides < I > bs, CbiKBinary op, CbiKEltwise post, float alpha,
    float beta)
{
  CBI_K_FOR (I, i, count) {
    float v = cbi_binary (op, a[i], b[cbi_k_offset (i, bs)]);
    y[i] = cbi_eltwise (post, v, alpha, beta);
  }
}

cudaError_t
cbi_k_binary (const float *a, const float *b, float *y, int rank,
    const int64_t * dims, const int64_t * b_strides, CbiKBinary op,
    CbiKEltwise post, float alpha, float beta, cudaStream_t stream)
{
  int64_t d[CBI_K_MAX_DIMS], s[CBI_K_MAX_DIMS], count;
  unsigned int blocks;
  int j, r;

  if (rank < 0 || rank > CBI_K_MAX_DIMS || (rank > 0 && (dims == NULL
              || b_strides == NULL)) || op < CBI_K_ADD || op > CBI_K_BINARY_LAST
      || post < CBI_K_RELU || post > CBI_K_ELTWISE_LAST)
    return cudaErrorInvalidValue;
  for (j = 0; j < rank; j++) {
    if (b_strides[j] < 0)
      return cudaErrorInvalidValue;
    d[j] = dims[j];
    s[j] = b_strides[j];
  }
  count = cbi_k_count (rank, d);
  if (count < 0)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;

  r = cbi_coalesce_dims (rank, d, s);
  blocks = cbi_k_blocks (count);
  /* *INDENT-OFF* */
  if (cbi_k_fits_int (count) && cbi_k_fits_int (cbi_k_extent (r, d, s)))
    CBI_K_LAUNCH ((cbi_k_binary_kernel<int>), blocks, CBI_K_THREADS, 0, stream,
        a, b, y, (int) count, cbi_k_strides<int> (r, d, s), op, post, alpha,
        beta);
  else
    CBI_K_LAUNCH ((cbi_k_binary_kernel<int64_t>), blocks, CBI_K_THREADS, 0,
        stream, a, b, y, count, cbi_k_strides<int64_t> (r, d, s), op, post,
        alpha, beta);
  /* *INDENT-ON* */
  return cudaGetLastError ();
}
