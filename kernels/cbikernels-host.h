/* cudabatchinfer: the kernels compiled for the host (CBI_K_HOST)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same .cu files of kernels/, built by the host's C++ compiler, not
 * nvcc and without the CUDA toolkit, so that every kernel runs in the
 * tests of any machine (as HIP-CPU runs HIP): this header stands in for
 * what the kernels and launchers use of the CUDA runtime. "Device" memory
 * is host memory, a stream is ignored, a launch runs the whole grid before
 * it returns.
 *
 * A launch (CBI_K_LAUNCH of cbikernels-private.cuh) runs the blocks one
 * after another in the launching thread. Thread 0 of block 0 runs first,
 * on a fiber: if it never waits (__syncthreads, a shuffle) the kernel's
 * threads are independent, and every other thread runs to its end in
 * turn in a plain loop; if it waits, every block runs its threads as
 * fibers, switching at each barrier, as a GPU's threads meet there
 * (cbikernels-host.cc). A launch CUDA would refuse (no blocks, more than
 * 1024 threads a block), or one with dynamic shared memory, which no
 * kernel takes, sets the error cudaGetLastError () returns.
 *
 * Included by cbikernels.h (the C part: the runtime calls the launchers
 * make, and the test knobs) and by cbikernels-private.cuh (the C++ part:
 * built-in variables, barriers, shuffles, the launch). No kernel takes an
 * atomic: none stands in for one, untested.
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
  cudaErrorInvalidConfiguration = 9,
} cudaError_t;

typedef struct CbiKHostStream *cudaStream_t;

cudaError_t cudaGetLastError (void);
const char *cudaGetErrorString (cudaError_t error);

/* Test-only knobs of the host build (the nvcc build has neither): the
 * most blocks a launch takes before its grid-stride loops go round
 * (CUDA's 65535 by default; lower, a kernel whose blocks run as fibers
 * reaches its loops' tail on a small shape), and the largest count that
 * still runs with int indices (the int64_t path of every kernel is taken
 * above it: 0 forces it on any shape). */
extern int64_t cbi_k_host_max_blocks;
extern int64_t cbi_k_host_int_limit;

/* What the last launch of the calling thread ran, for tests to check that
 * a shape reached what it was meant to: its blocks and threads a block,
 * whether its threads waited for each other (ran as fibers), and its
 * index type: 64 for a kernel that takes an int64_t (the int64_t version
 * of one that has both), else 32. */
typedef struct
{
  int64_t blocks;
  int64_t threads;
  int fibers;
  int index_bits;
} CbiKHostLaunch;

extern __thread CbiKHostLaunch cbi_k_host_last_launch;

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus

#include <tuple>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
/* the blocks of a launch run one after another in the launching thread:
 * a block's shared memory is the kernel's, per host thread */
#define __shared__ static thread_local

struct dim3
{
  unsigned int x, y, z;
};

/* the running thread's place, set by the launch before it runs a thread */
extern __thread dim3 threadIdx, blockIdx, blockDim, gridDim;

void __syncthreads ();

/* The @size bytes at @v of lane @lane (-1: the caller's own) of the
 * calling thread's warp, after every lane of the warp has given its own:
 * a warp shuffle of the lanes of @mask (the kernels name them all). */
void cbi_k_host_shuffle (unsigned int mask, const void *v, void *out,
    size_t size, int lane);

/* *INDENT-OFF* */
template <typename T>
static inline T
cbi_k_host_shfl (unsigned int mask, T v, int lane)
{
  T got;

  static_assert (sizeof (T) <= 8, "a shuffle moves at most 8 bytes");
  cbi_k_host_shuffle (mask, &v, &got, sizeof (T), lane);
  return got;
}

/* CUDA's rules for a lane outside the warp: __shfl_sync wraps it, the
 * others give the caller's own value */
template <typename T>
static inline T
__shfl_sync (unsigned int mask, T v, int lane)
{
  return cbi_k_host_shfl (mask, v, lane & 31);
}

template <typename T>
static inline T
__shfl_xor_sync (unsigned int mask, T v, int lane_mask)
{
  int lane = (int) (threadIdx.x % 32) ^ lane_mask;

  return cbi_k_host_shfl (mask, v, lane >= 0 && lane < 32 ? lane : -1);
}

template <typename T>
static inline T
__shfl_down_sync (unsigned int mask, T v, unsigned int delta)
{
  int64_t lane = threadIdx.x % 32 + (int64_t) delta;

  return cbi_k_host_shfl (mask, v, lane < 32 ? (int) lane : -1);
}

template <typename T>
static inline T
__shfl_up_sync (unsigned int mask, T v, unsigned int delta)
{
  int64_t lane = threadIdx.x % 32 - (int64_t) delta;

  return cbi_k_host_shfl (mask, v, lane >= 0 ? (int) lane : -1);
}

/* *INDENT-ON* */

/* one rounding each, never fused (the host build has -ffp-contract=off) */
static inline float
__fmul_rn (float a, float b)
{
  return a * b;
}

static inline float
__fadd_rn (float a, float b)
{
  return a + b;
}

/* Runs @thread (one thread's work: the kernel on the arguments @args) for
 * every thread of @blocks blocks of @threads, as the header's comment
 * says; sets the error of a launch CUDA would refuse instead. */
void cbi_k_host_run (int64_t blocks, int64_t threads, size_t shmem,
    int index_bits, void (*thread) (const void *args), const void *args);

/* The parameters of kernel K, by value, as a launch copies them, and its
 * index type. */
/* *INDENT-OFF* */
template <typename F> struct CbiKHostParams;
template <typename... P> struct CbiKHostParams<void (*) (P...)>
{
  typedef std::tuple<typename std::decay<P>::type...> type;
  static const int index_bits =
      (std::is_same<typename std::decay<P>::type, int64_t>::value || ...) ?
      64 : 32;
};

/* Launches kernel @K on @args, converted to its parameters once (as a
 * launch passes them by value). @K is a template argument, so that the
 * call of every thread is a direct one the compiler inlines. */
template <auto K, typename... Args>
static inline void
cbi_k_host_launch (int64_t blocks, int64_t threads, size_t shmem,
    Args &&... args)
{
  typedef CbiKHostParams<decltype (K)> Kernel;
  const typename Kernel::type values (std::forward<Args> (args)...);

  cbi_k_host_run (blocks, threads, shmem, Kernel::index_bits,
      [] (const void *p) {
        std::apply (K, *(const typename Kernel::type *) p);
      }, &values);
}
/* *INDENT-ON* */

#endif /* __cplusplus */
