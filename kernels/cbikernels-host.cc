/* cudabatchinfer: the CUDA runtime the kernels' host build runs on
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * See cbikernels-host.h. A launch runs its blocks in turn in the
 * launching thread. Thread 0 of block 0 runs on a fiber (a ucontext with
 * a stack of its own): if it returns without having waited, the kernel's
 * threads never wait for each other, and every other thread runs in a
 * plain loop, no context switch (a grid of 65535 blocks of 256 takes well
 * under a second). If it waited, every block runs its threads as fibers:
 * a thread runs until it waits at a barrier of its block (__syncthreads)
 * or of its warp (a shuffle), and goes on once every thread it waits for
 * has come; the scheduler resumes the lowest thread that can go on, or
 * the highest on odd blocks (run_fibers ()). One block's fibers live at a
 * time, their stacks mapped once per launch.
 *
 * Built with ASan, every switch tells it which stack the thread goes to
 * (__sanitizer_start_switch_fiber, __sanitizer_finish_switch_fiber), so
 * that it follows the fibers' frames instead of reporting them.
 */
#include "cbikernels-host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define CBI_K_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CBI_K_HOST_ASAN 1
#endif
#endif
#ifdef CBI_K_HOST_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#define CBI_K_HOST_WARP 32
/* CUDA's limit on the threads of a block */
#define CBI_K_HOST_MAX_THREADS 1024
/* a thread's frames: a kernel's and the libm calls under it, ASan's
 * redzones included, need a few KiB */
#define CBI_K_HOST_STACK (64 * 1024)

int64_t cbi_k_host_max_blocks = 65535;
int64_t cbi_k_host_int_limit = INT64_MAX;
__thread CbiKHostLaunch cbi_k_host_last_launch;

__thread dim3 threadIdx, blockIdx, blockDim, gridDim;

/* this thread's last launch error, as CUDA keeps one */
static __thread cudaError_t last_error = cudaSuccess;

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
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
  }
  return "unknown error";
}

typedef enum
{
  FIBER_READY,
  FIBER_AT_BLOCK,
  FIBER_AT_WARP,
  FIBER_DONE,
} FiberState;

struct Fiber
{
  ucontext_t ctx;
  FiberState state;
  /* the generation of the barrier it waits at: it goes on once that
   * barrier has opened, and so moved on */
  uint64_t gen;
  void *fake_stack;
};

struct Barrier
{
  unsigned int arrived;
  uint64_t gen;
};

struct Launch
{
  void (*thread) (const void *);
  const void *args;
  unsigned int threads;
  /* thread 0 of block 0 waited: every block runs as fibers */
  bool fibers;
  /* the thread of the fiber running, -1 outside the fibers */
  int current;
  /* the threads of the block not yet returned */
  unsigned int live;
  /* thread 0's stack, and the others' once the block runs as fibers */
  char *stack0, *stacks;
  size_t page;
  /* one for each thread of the block */
  Fiber *fiber;
  ucontext_t sched;
  void *sched_fake;
  const void *sched_bottom;
  size_t sched_size;
  Barrier block;
  Barrier warp[CBI_K_HOST_MAX_THREADS / CBI_K_HOST_WARP];
  /* each lane's value of a warp's last two shuffles: a lane may give its
   * next one before a slower lane has read the one before */
  uint64_t lanes[2][CBI_K_HOST_MAX_THREADS];
};

static __thread Launch *running;

/* a 1-D grid's: an index (threadIdx, blockIdx) and a size (blockDim,
 * gridDim) */
static dim3
index_1d (unsigned int x)
{
  dim3 d = { x, 0, 0 };

  return d;
}

static dim3
size_1d (unsigned int x)
{
  dim3 d = { x, 1, 1 };

  return d;
}

static void fatal (const char *format, ...)
    __attribute__((noreturn, format (printf, 1, 2)));

static void
fatal (const char *format, ...)
{
  va_list ap;

  fputs ("cbikernels-host: ", stderr);
  va_start (ap, format);
  vfprintf (stderr, format, ap);
  va_end (ap);
  fputc ('\n', stderr);
  abort ();
}

/* @n stacks, each above a page that faults: an overflow stops there
 * instead of writing over the next thread's frames */
static char *
map_stacks (Launch * l, size_t n)
{
  const size_t step = l->page + CBI_K_HOST_STACK;
  char *m = (char *) mmap (NULL, n * step, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  size_t i;

  if (m == MAP_FAILED)
    fatal ("no memory for %zu fiber stacks", n);
  for (i = 0; i < n; i++)
    mprotect (m + i * step, l->page, PROT_NONE);
  return m;
}

static char *
stack_of (Launch * l, unsigned int t)
{
  if (t == 0)
    return l->stack0 + l->page;
  return l->stacks + (t - 1) * (l->page + CBI_K_HOST_STACK) + l->page;
}

static void
fiber_main (void)
{
  Launch *l = running;

#ifdef CBI_K_HOST_ASAN
  __sanitizer_finish_switch_fiber (NULL, &l->sched_bottom, &l->sched_size);
#endif
  l->thread (l->args);
  l->fiber[l->current].state = FIBER_DONE;
#ifdef CBI_K_HOST_ASAN
  /* NULL: the fiber ends, ASan may drop its fake stack */
  __sanitizer_start_switch_fiber (NULL, l->sched_bottom, l->sched_size);
#endif
  /* returns to uc_link, the scheduler */
}

static void
fiber_start (Launch * l, unsigned int t)
{
  Fiber *f = &l->fiber[t];

  getcontext (&f->ctx);
  f->ctx.uc_stack.ss_sp = stack_of (l, t);
  f->ctx.uc_stack.ss_size = CBI_K_HOST_STACK;
  f->ctx.uc_link = &l->sched;
  makecontext (&f->ctx, fiber_main, 0);
  f->state = FIBER_READY;
  f->fake_stack = NULL;
}

/* swapcontext (), as getcontext () then setcontext (): ASan intercepts
 * swapcontext () to warn that it cannot follow it and to clear the whole
 * target stack's shadow at every switch, which the fiber annotations make
 * needless. getcontext () returns a second time when the context saved
 * is resumed. */
static void
switch_context (ucontext_t * from, const ucontext_t * to)
{
  volatile bool resumed = false;

  getcontext (from);
  if (resumed)
    return;
  resumed = true;
  setcontext (to);
}

/* from the scheduler into thread @t's fiber, until it waits or returns */
static void
resume (Launch * l, unsigned int t)
{
  threadIdx = index_1d (t);
  l->current = (int) t;
#ifdef CBI_K_HOST_ASAN
  __sanitizer_start_switch_fiber (&l->sched_fake, stack_of (l, t),
      CBI_K_HOST_STACK);
#endif
  switch_context (&l->sched, &l->fiber[t].ctx);
#ifdef CBI_K_HOST_ASAN
  __sanitizer_finish_switch_fiber (l->sched_fake, NULL, NULL);
#endif
  l->current = -1;
}

/* from the running fiber back to the scheduler, until it resumes it */
static void
yield (Launch * l, Fiber * f)
{
#ifdef CBI_K_HOST_ASAN
  __sanitizer_start_switch_fiber (&f->fake_stack, l->sched_bottom,
      l->sched_size);
#endif
  switch_context (&f->ctx, &l->sched);
#ifdef CBI_K_HOST_ASAN
  __sanitizer_finish_switch_fiber (f->fake_stack, &l->sched_bottom,
      &l->sched_size);
#endif
}

static void
open_barrier (Barrier * b)
{
  b->arrived = 0;
  b->gen++;
}

/* The running fiber at @b, which opens once @expected threads have come:
 * the last one goes on, the others wait in the scheduler. */
static void
arrive (Launch * l, Barrier * b, unsigned int expected, FiberState state)
{
  Fiber *f = &l->fiber[l->current];

  if (++b->arrived >= expected) {
    open_barrier (b);
    return;
  }
  f->state = state;
  f->gen = b->gen;
  yield (l, f);
}

/* The launch of a thread that is about to wait, which makes the launch
 * one of fibers if it is thread 0 of block 0. */
static Launch *
waiting_launch (const char *what)
{
  Launch *l = running;

  if (l == NULL)
    fatal ("%s outside a kernel", what);
  if (l->current < 0)
    fatal ("%s in thread %u of block %u, though thread 0 of block 0 "
        "returned without waiting: this launch runs its threads one after "
        "another, and a thread cannot wait for the others", what,
        threadIdx.x, blockIdx.x);
  l->fibers = true;
  return l;
}

void
__syncthreads ()
{
  Launch *l = waiting_launch ("__syncthreads ()");

  /* the threads that have returned count as there, as on a GPU since
   * Volta */
  arrive (l, &l->block, l->live, FIBER_AT_BLOCK);
}

void
cbi_k_host_shuffle (unsigned int mask, const void *v, void *out, size_t size,
    int lane)
{
  Launch *l = waiting_launch ("a warp shuffle");
  const unsigned int t = (unsigned int) l->current;
  const unsigned int w = t / CBI_K_HOST_WARP, first = w * CBI_K_HOST_WARP;
  const unsigned int lanes = l->threads - first < CBI_K_HOST_WARP ?
      l->threads - first : CBI_K_HOST_WARP;
  /* taken before the barrier opens, which moves the generation on */
  uint64_t *slots = l->lanes[l->warp[w].gen & 1] + first;

  if (mask != 0xffffffffu)
    fatal ("a shuffle of lanes 0x%08x: the host build has whole warps only",
        mask);
  memcpy (slots + (t - first), v, size);
  /* every lane, none returned: a lane that has returned leaves the others
   * waiting forever, which the scheduler reports */
  arrive (l, &l->warp[w], lanes, FIBER_AT_WARP);
  if (lane < 0) {
    memcpy (out, v, size);
    return;
  }
  if ((unsigned int) lane >= lanes)
    fatal ("thread %u of block %u reads lane %d of a warp of %u lanes: "
        "undefined on a GPU", t, blockIdx.x, lane, lanes);
  memcpy (out, slots + lane, size);
}

static bool
ready (Launch * l, unsigned int t)
{
  const Fiber *f = &l->fiber[t];

  switch (f->state) {
    case FIBER_READY:
      return true;
    case FIBER_AT_BLOCK:
      return f->gen != l->block.gen;
    case FIBER_AT_WARP:
      return f->gen != l->warp[t / CBI_K_HOST_WARP].gen;
    case FIBER_DONE:
      break;
  }
  return false;
}

/* a thread has returned, maybe the last one the block barrier waited for */
static void
returned (Launch * l)
{
  l->live--;
  if (l->block.arrived > 0 && l->block.arrived >= l->live)
    open_barrier (&l->block);
}

/* Runs the block's threads as fibers to their ends; those from @first
 * on start here (thread 0 may be waiting already). Each step resumes the
 * lowest thread that can go on, or on odd blocks the highest: a warp
 * then runs as far as it can before those after (or before) it start,
 * two orders a GPU may run in, where a barrier missing between warps
 * shows, as thread order round-robin would hide it. */
static void
run_fibers (Launch * l, unsigned int first, bool low_first)
{
  unsigned int t, k;

  for (t = first; t < l->threads; t++)
    fiber_start (l, t);
  while (l->live > 0) {
    for (k = 0; k < l->threads; k++) {
      t = low_first ? k : l->threads - 1 - k;
      if (ready (l, t))
        break;
    }
    if (k == l->threads)
      fatal ("the threads of block %u wait for each other forever: a "
          "barrier some never reach, or a shuffle with a lane that has "
          "returned", blockIdx.x);
    l->fiber[t].state = FIBER_READY;
    resume (l, t);
    if (l->fiber[t].state == FIBER_DONE)
      returned (l);
  }
}

static void
run_block (Launch * l, unsigned int b)
{
  unsigned int t = 0;

  blockIdx = index_1d (b);
  l->live = l->threads;
  if (b == 0) {
    /* whether the kernel's threads wait for each other */
    fiber_start (l, 0);
    resume (l, 0);
    if (l->fiber[0].state == FIBER_DONE)
      returned (l);
    if (l->fibers) {
      if (l->threads > 1)
        l->stacks = map_stacks (l, l->threads - 1);
      run_fibers (l, 1, true);
      return;
    }
    t = 1;
  } else if (l->fibers) {
    run_fibers (l, 0, b % 2 == 0);
    return;
  }
  for (; t < l->threads; t++) {
    threadIdx = index_1d (t);
    l->thread (l->args);
  }
}

void
cbi_k_host_run (int64_t blocks, int64_t threads, size_t shmem,
    int index_bits, void (*thread) (const void *), const void *args)
{
  const size_t step = (size_t) sysconf (_SC_PAGESIZE) + CBI_K_HOST_STACK;
  Launch *l;
  unsigned int b;

  /* what CUDA refuses at the launch: the launcher chose it, so it is a
   * launcher's bug that the tests must see; and the kernels declare no
   * extern __shared__ array, which the host build has no memory for */
  if (blocks < 1 || blocks > INT32_MAX || threads < 1
      || threads > CBI_K_HOST_MAX_THREADS || shmem != 0) {
    last_error = cudaErrorInvalidConfiguration;
    return;
  }
  if (running != NULL)
    fatal ("a launch from a kernel");

  l = new Launch ();
  l->thread = thread;
  l->args = args;
  l->threads = (unsigned int) threads;
  l->current = -1;
  l->page = step - CBI_K_HOST_STACK;
  l->fiber = new Fiber[l->threads] ();
  l->stack0 = map_stacks (l, 1);
  running = l;
  blockDim = size_1d ((unsigned int) threads);
  gridDim = size_1d ((unsigned int) blocks);
  for (b = 0; b < (unsigned int) blocks; b++)
    run_block (l, b);
  running = NULL;

  cbi_k_host_last_launch.blocks = blocks;
  cbi_k_host_last_launch.threads = threads;
  cbi_k_host_last_launch.fibers = l->fibers;
  cbi_k_host_last_launch.index_bits = index_bits;
  munmap (l->stack0, step);
  if (l->stacks)
    munmap (l->stacks, (l->threads - 1) * step);
  delete[]l->fiber;
  delete l;
}
