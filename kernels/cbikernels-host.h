/* cudabatchinfer: the kernels compiled for the host (CBI_K_HOST)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same .cu files of kernels/, built by the host's C++ compiler, not nvcc,
 * so that every kernel runs in the tests of a machine without a GPU (as
 * HIP-CPU runs HIP): this header stands in for the CUDA runtime. "Device"
 * memory is host memory, a stream is ignored, a launch runs the whole grid
 * before it returns.
 *
 * A launch (CBI_K_LAUNCH in cbikernels-private.cuh) runs the blocks one
 * after another. A kernel whose threads never wait for each other runs
 * each thread to its end in turn, in the launching thread; one that waits
 * (__syncthreads, warp shuffles: CBI_K_LAUNCH_SYNC) runs the threads of a
 * block at once, a host thread each, meeting at barriers as a GPU's do.
 * A launch CUDA would refuse (no blocks, more than 1024 threads a block)
 * sets the error cudaGetLastError () returns, as CUDA's does.
 *
 * Included by cbikernels.h (the C part: types and the runtime calls the
 * launchers and the tests make) and by cbikernels-private.cuh (the C++
 * part: built-in variables, barriers, shuffles, the launch).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* CUDA's values, so that messages and tests read the same */
typedef enum
{
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
} cudaError_t;

typedef struct CbiKHostStream *cudaStream_t;

enum cudaMemcpyKind
{
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

cudaError_t cudaGetLastError (void);
const char *cudaGetErrorString (cudaError_t error);
/* one "device", the host */
cudaError_t cudaGetDeviceCount (int *count);
cudaError_t cudaMalloc (void **ptr, size_t size);
cudaError_t cudaFree (void *ptr);
cudaError_t cudaMemcpy (void *dst, const void *src, size_t size,
    enum cudaMemcpyKind kind);
cudaError_t cudaMemset (void *ptr, int value, size_t size);
cudaError_t cudaDeviceSynchronize (void);

/* Test-only knobs of the host build (the nvcc build has neither): the
 * most blocks a launch takes before its grid-stride loops go round
 * (CUDA's 65535 by default; lower, small shapes reach the loops' tail),
 * and the largest count that still runs with int indices (the int64_t
 * path of every kernel is taken above it: 0 forces it on any shape). */
extern int64_t cbi_k_host_max_blocks;
extern int64_t cbi_k_host_int_limit;

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus

#include <tuple>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
/* one block runs at a time: a block's shared memory is the kernel's */
#define __shared__ static

struct dim3
{
  unsigned int x, y, z;
};

/* the running thread's place, set by the launch for each thread */
extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

/* what the threads of the running block share */
struct CbiKHostBlock;
extern thread_local CbiKHostBlock *cbi_k_host_block;

void __syncthreads ();

/* Lane @lane's @v of the calling thread's warp, after every lane of the
 * warp has given its own. */
double cbi_k_host_shuffle (double v, int lane);

template < typename T > static inline T
__shfl_xor_sync (unsigned int mask, T v, int lane_mask)
{
  return (T) cbi_k_host_shuffle ((double) v,
      (int) (threadIdx.x % 32) ^ lane_mask);
}

template < typename T > static inline T
__shfl_down_sync (unsigned int mask, T v, unsigned int delta)
{
  int lane = (int) (threadIdx.x % 32) + (int) delta;
  double got = cbi_k_host_shuffle ((double) v, lane < 32 ? lane : -1);

  return lane < 32 ? (T) got : v;
}

/* Runs @thread (a thread's work: the kernel on its arguments @args) for
 * every thread of @grid blocks of @block threads; @waits: its threads meet
 * at barriers, so they run at once. Sets the error of a launch CUDA would
 * refuse instead. */
void cbi_k_host_run (int64_t grid, int64_t block, bool waits,
    void (*thread) (const void *args), const void *args);

/* Launches @kernel on @args, evaluated once (as a launch passes them by
 * value), over @grid blocks of @block threads. */
template < typename... Params, typename... Args > static inline void
cbi_k_host_launch (int64_t grid, int64_t block, bool waits,
    void (*kernel) (Params...), Args &&... args)
{
  struct Call
  {
    void (*kernel) (Params...);
    std::tuple < Params... > values;
  } call = { kernel, std::tuple < Params... > (std::forward < Args >
        (args)...) };

  cbi_k_host_run (grid, block, waits,[](const void *p) {
        const Call *c = (const Call *) p;
        std::apply (c->kernel, c->values);
      }, &call);
}

#endif /* __cplusplus */
