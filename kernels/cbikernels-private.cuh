/* cudabatchinfer: what the kernel files share (CUDA C++ only)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>
#ifdef CBI_K_HOST
#include "cbikernels-host.h"
#else
#include <cuda_runtime.h>
#endif

#include "cbikernels.h"

/* threads per block of every kernel */
#define CBI_K_THREADS 256
/* grid-stride loops cover the rest (the host build's tests lower it) */
#ifdef CBI_K_HOST
#define CBI_K_MAX_BLOCKS cbi_k_host_max_blocks
#else
#define CBI_K_MAX_BLOCKS 65535
#endif

/* Launches @kernel (in parentheses: a template's arguments have commas)
 * over @blocks blocks of @threads threads with @shmem bytes of dynamic
 * shared memory on @stream, on the arguments that follow: <<<...>>> under
 * nvcc; in the host build the grid run on the CPU before it returns
 * (cbikernels-host.h), the threads of a kernel that waits at barriers or
 * shuffles as fibers. */
#define CBI_K_STRIP(...) __VA_ARGS__
#ifdef CBI_K_HOST
#define CBI_K_LAUNCH(kernel, blocks, threads, shmem, stream, ...) \
  cbi_k_host_launch<CBI_K_STRIP kernel> ((blocks), (threads), (shmem), \
      __VA_ARGS__)
#else
#define CBI_K_LAUNCH(kernel, blocks, threads, shmem, stream, ...) \
  CBI_K_STRIP kernel<<<(blocks), (threads), (shmem), (stream)>>> (__VA_ARGS__)
#endif

/* Blocks of CBI_K_THREADS for @count elements, one per thread up to
 * CBI_K_MAX_BLOCKS blocks. */
static inline unsigned int
cbi_k_blocks (int64_t count)
{
  int64_t b = (count + CBI_K_THREADS - 1) / CBI_K_THREADS;

  return (unsigned int) (b < CBI_K_MAX_BLOCKS ? b : CBI_K_MAX_BLOCKS);
}

/* Whether a kernel whose largest index or offset is @count - 1 can run
 * with int arithmetic: its indices fit, and so does an index plus the
 * grid's stride (at most CBI_K_MAX_BLOCKS x CBI_K_THREADS), the last step
 * of a grid-stride loop. */
static inline bool
cbi_k_fits_int (int64_t count)
{
#ifdef CBI_K_HOST
  if (count > cbi_k_host_int_limit)
    return false;
#endif
  return count <= (int64_t) INT32_MAX
      - (int64_t) CBI_K_MAX_BLOCKS * CBI_K_THREADS;
}

/* A grid-stride loop over 0 .. @count - 1 with an index of type I (int
 * only where cbi_k_fits_int () said so). */
#define CBI_K_FOR(I, i, count) \
  for (I i = (I) (blockIdx.x * (int64_t) blockDim.x + threadIdx.x); \
       i < (count); i += (I) ((int64_t) blockDim.x * gridDim.x))

/* The dims and strides of a strided walk (cbi_strided_offset ()), passed
 * by value to a kernel, in the index type it runs with. */
template <typename I>
struct CbiKStrides
{
  int rank;
  I dims[CBI_K_MAX_DIMS];
  I strides[CBI_K_MAX_DIMS];
};

template <typename I>
static inline CbiKStrides<I>
cbi_k_strides (int rank, const int64_t * dims, const int64_t * strides)
{
  CbiKStrides<I> s = { rank, };
  int j;

  for (j = 0; j < rank; j++) {
    s.dims[j] = (I) dims[j];
    s.strides[j] = (I) strides[j];
  }
  return s;
}

__device__ static inline int
cbi_k_offset (int i, const CbiKStrides<int> & s)
{
  return cbi_strided_offset32 (i, s.rank, s.dims, s.strides);
}

__device__ static inline int64_t
cbi_k_offset (int64_t i, const CbiKStrides<int64_t> & s)
{
  return cbi_strided_offset (i, s.rank, s.dims, s.strides);
}

/* One past the largest offset a walk of @rank dims @dims at @strides
 * (none negative) reaches; 1 for rank 0. */
static inline int64_t
cbi_k_extent (int rank, const int64_t * dims, const int64_t * strides)
{
  int64_t e = 1;
  int j;

  for (j = 0; j < rank; j++)
    e += (dims[j] - 1) * strides[j];
  return e;
}

/* The element count of @rank dims @dims, or -1 if one is negative. */
static inline int64_t
cbi_k_count (int rank, const int64_t * dims)
{
  int64_t n = 1;
  int j;

  for (j = 0; j < rank; j++) {
    if (dims[j] < 0)
      return -1;
    n *= dims[j];
  }
  return n;
}
