/* cudabatchinfer: the CUDA runtime the kernels' host build runs on
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * See cbikernels-host.h. A block whose threads wait for each other runs
 * its threads as host threads, each with its own threadIdx: they meet at
 * a barrier of the whole block (__syncthreads) or of their warp (a
 * shuffle: each lane leaves its value, all meet, each reads the lane it
 * asked for, all meet again before a value is overwritten).
 */
#include "cbikernels-host.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <thread>
#include <vector>

#define CBI_K_HOST_WARP 32
/* CUDA's limit on the threads of a block */
#define CBI_K_HOST_MAX_BLOCK 1024

int64_t cbi_k_host_max_blocks = 65535;
int64_t cbi_k_host_int_limit = INT64_MAX;

thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

struct CbiKHostBlock
{
  pthread_barrier_t block;
  pthread_barrier_t warp[CBI_K_HOST_MAX_BLOCK / CBI_K_HOST_WARP];
  double lanes[CBI_K_HOST_MAX_BLOCK];
};

thread_local CbiKHostBlock *cbi_k_host_block;

/* this thread's last launch error, as CUDA keeps one */
static thread_local cudaError_t last_error = cudaSuccess;

extern "C" cudaError_t
cudaGetLastError (void)
{
  cudaError_t e = last_error;

  last_error = cudaSuccess;
  return e;
}

extern "C" const char *
cudaGetErrorString (cudaError_t error)
{
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
  }
  return "unknown error";
}

extern "C" cudaError_t
cudaGetDeviceCount (int *count)
{
  *count = 1;
  return cudaSuccess;
}

extern "C" cudaError_t
cudaMalloc (void **ptr, size_t size)
{
  *ptr = malloc (size > 0 ? size : 1);
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

extern "C" cudaError_t
cudaFree (void *ptr)
{
  free (ptr);
  return cudaSuccess;
}

extern "C" cudaError_t
cudaMemcpy (void *dst, const void *src, size_t size, enum cudaMemcpyKind kind)
{
  memcpy (dst, src, size);
  return cudaSuccess;
}

extern "C" cudaError_t
cudaMemset (void *ptr, int value, size_t size)
{
  memset (ptr, value, size);
  return cudaSuccess;
}

/* every launch has run when it returns */
extern "C" cudaError_t
cudaDeviceSynchronize (void)
{
  return cudaSuccess;
}

void
__syncthreads ()
{
  pthread_barrier_wait (&cbi_k_host_block->block);
}

double
cbi_k_host_shuffle (double v, int lane)
{
  CbiKHostBlock *b = cbi_k_host_block;
  const unsigned int warp = threadIdx.x / CBI_K_HOST_WARP;
  double *lanes = b->lanes + warp * CBI_K_HOST_WARP;
  double got;

  lanes[threadIdx.x % CBI_K_HOST_WARP] = v;
  pthread_barrier_wait (&b->warp[warp]);
  got = lane >= 0 ? lanes[lane] : v;
  pthread_barrier_wait (&b->warp[warp]);
  return got;
}

/* The built-in variables of thread @t of block @b. */
static void
place (unsigned int t, unsigned int b, unsigned int block, unsigned int grid)
{
  threadIdx.x = t;
  threadIdx.y = threadIdx.z = 0;
  blockIdx.x = b;
  blockIdx.y = blockIdx.z = 0;
  blockDim.x = block;
  blockDim.y = blockDim.z = 1;
  gridDim.x = grid;
  gridDim.y = gridDim.z = 1;
}

/* Block @b of @grid, its @block threads at once, each a host thread. */
static void
run_block_threads (CbiKHostBlock * shared, unsigned int b, unsigned int grid,
    unsigned int block, void (*thread) (const void *), const void *args)
{
  std::vector < std::thread > threads;
  unsigned int t;

  threads.reserve (block);
  /* *INDENT-OFF* */
  for (t = 0; t < block; t++)
    threads.emplace_back ([=] {
      place (t, b, block, grid);
      cbi_k_host_block = shared;
      thread (args);
    });
  for (std::thread &th : threads)
    th.join ();
  /* *INDENT-ON* */
}

void
cbi_k_host_run (int64_t grid, int64_t block, bool waits,
    void (*thread) (const void *), const void *args)
{
  CbiKHostBlock *shared = NULL;
  unsigned int b, t, w;

  /* what CUDA refuses at the launch: the launcher chose it, so it is a
   * launcher's bug that the tests must see */
  if (grid < 1 || grid > INT32_MAX || block < 1 || block > CBI_K_HOST_MAX_BLOCK) {
    last_error = cudaErrorInvalidConfiguration;
    return;
  }
  if (waits) {
    /* whole warps: a shuffle waits for 32 lanes */
    if (block % CBI_K_HOST_WARP != 0) {
      last_error = cudaErrorInvalidConfiguration;
      return;
    }
    shared = new CbiKHostBlock;
    pthread_barrier_init (&shared->block, NULL, (unsigned int) block);
    for (w = 0; w < block / CBI_K_HOST_WARP; w++)
      pthread_barrier_init (&shared->warp[w], NULL, CBI_K_HOST_WARP);
  }
  for (b = 0; b < (unsigned int) grid; b++) {
    if (waits) {
      run_block_threads (shared, b, (unsigned int) grid,
          (unsigned int) block, thread, args);
      continue;
    }
    for (t = 0; t < (unsigned int) block; t++) {
      place (t, b, (unsigned int) block, (unsigned int) grid);
      thread (args);
    }
  }
  if (shared) {
    pthread_barrier_destroy (&shared->block);
    for (w = 0; w < block / CBI_K_HOST_WARP; w++)
      pthread_barrier_destroy (&shared->warp[w]);
    delete shared;
  }
}
