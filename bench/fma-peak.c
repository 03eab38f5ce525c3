/* fma-peak: the float32 (or bfloat16) multiply-add peak of this CPU, in
 * GFLOP/s.
 *
 * A convolution cannot run faster than the CPU's fused multiply-adds, so
 * this figure is the ceiling for the CPU backend's arithmetic: comparing a
 * layer's GFLOP/s (bench/onednn-profile.py) with it tells whether a faster
 * layer is still to be had or whether only fewer operations would help.
 *
 * Each thread runs independent chains of vector FMAs on registers (no
 * memory traffic), enough of them to cover the FMA latency of any x86 core
 * with one or two FMA units, on the widest vectors the CPU has (AVX-512,
 * else AVX2 with FMA, else SSE multiply and add; --isa picks a narrower
 * one). The best of --repeats timings is printed for 1 thread and for
 * --threads threads.
 *
 * --isa avx512bf16 measures the bfloat16 peak instead, the ceiling of the
 * CPU backend's bf16 convolutions (precision=bf16): chains of VDPBF16PS,
 * each of which multiplies 32 pairs of bfloat16 and adds them, in pairs,
 * to 16 float32 sums (64 operations), on CPUs with AVX512-BF16.
 *
 *   fma-peak [--threads 2] [--repeats 10] [--iterations 20000000]
 *            [--isa avx512f|avx2|sse|avx512bf16]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib.h>
#include <immintrin.h>

/* twelve chains: 4 cycles of latency times up to 2 FMAs a cycle, and some
 * spare, all kept in registers (32 of them with AVX-512, 16 with AVX2) */
#define CHAINS 12

typedef struct _Work Work;

/* @lanes: the multiply-adds of one instruction */
typedef struct
{
  const gchar *isa;
  guint lanes;
  void (*run) (Work * work);
} Kernel;

/* one thread's share of a timing; the kernel writes its chains' sum to
 * sink, a store through a pointer that keeps the chains computed */
struct _Work
{
  const Kernel *kernel;
  gint64 iterations;
  gfloat sink;
};

/* the vector kernels are built for their instruction sets whatever the
 * compiler's default; pick_kernel () runs one only where the CPU has it */
static void run_avx512 (Work * work) __attribute__((target ("avx512f")));
static void run_avx512bf16 (Work * work)
    __attribute__((target ("avx512f,avx512bf16")));
static void run_avx2 (Work * work) __attribute__((target ("avx2,fma")));
static void run_sse (Work * work);

/* without FMA: a multiply and an add, counted as the two operations they
 * are */
#define SSE_MULADD(a, m, c) _mm_add_ps (_mm_mul_ps (a, m), c)

/* One kernel per instruction set: VEC its vector type of LANES floats,
 * SET1 a broadcast, MULADD (a, m, c) a * m + c, STORE an unaligned store.
 * The chains are named variables, not an array, so that they stay in
 * registers. */
/* *INDENT-OFF* */
#define DEFINE_KERNEL(name, VEC, LANES, SET1, MULADD, STORE)                 \
static void                                                                  \
name (Work * work)                                                           \
{                                                                            \
  VEC m = SET1 (0.999999f), c = SET1 (1e-6f);                                \
  VEC a0 = SET1 (0.f), a1 = SET1 (1.f), a2 = SET1 (2.f), a3 = SET1 (3.f),    \
      a4 = SET1 (4.f), a5 = SET1 (5.f), a6 = SET1 (6.f), a7 = SET1 (7.f),    \
      a8 = SET1 (8.f), a9 = SET1 (9.f), a10 = SET1 (10.f),                   \
      a11 = SET1 (11.f);                                                     \
  gfloat lanes[LANES];                                                       \
  gint64 i;                                                                  \
  guint k, l;                                                                \
                                                                             \
  for (i = 0; i < work->iterations; i++) {                                   \
    a0 = MULADD (a0, m, c); a1 = MULADD (a1, m, c); a2 = MULADD (a2, m, c);  \
    a3 = MULADD (a3, m, c); a4 = MULADD (a4, m, c); a5 = MULADD (a5, m, c);  \
    a6 = MULADD (a6, m, c); a7 = MULADD (a7, m, c); a8 = MULADD (a8, m, c);  \
    a9 = MULADD (a9, m, c); a10 = MULADD (a10, m, c);                        \
    a11 = MULADD (a11, m, c);                                                \
  }                                                                          \
  {                                                                          \
    VEC chain[CHAINS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11 };\
                                                                             \
    work->sink = 0.f;                                                        \
    for (k = 0; k < CHAINS; k++) {                                           \
      STORE (lanes, chain[k]);                                               \
      for (l = 0; l < LANES; l++)                                            \
        work->sink += lanes[l];                                              \
    }                                                                        \
  }                                                                          \
}

DEFINE_KERNEL (run_avx512, __m512, 16, _mm512_set1_ps, _mm512_fmadd_ps,
    _mm512_storeu_ps)
DEFINE_KERNEL (run_avx2, __m256, 8, _mm256_set1_ps, _mm256_fmadd_ps,
    _mm256_storeu_ps)
DEFINE_KERNEL (run_sse, __m128, 4, _mm_set1_ps, SSE_MULADD, _mm_storeu_ps)
/* *INDENT-ON* */

/* The bfloat16 kernel: each chain a float32 vector of sums, VDPBF16PS
 * adding to each lane the products of two pairs of bfloat16. */
/* *INDENT-OFF* */
#define DOT(a) a = _mm512_dpbf16_ps (a, x, y)
static void
run_avx512bf16 (Work * work)
{
  /* small operands: 2^-10 x 2^-10 a product, the sums stay finite */
  const __m512bh x = _mm512_cvtne2ps_pbh (_mm512_set1_ps (1.0f / 1024),
      _mm512_set1_ps (1.0f / 1024));
  const __m512bh y = x;
  __m512 a0 = _mm512_set1_ps (0.f), a1 = _mm512_set1_ps (1.f),
      a2 = _mm512_set1_ps (2.f), a3 = _mm512_set1_ps (3.f),
      a4 = _mm512_set1_ps (4.f), a5 = _mm512_set1_ps (5.f),
      a6 = _mm512_set1_ps (6.f), a7 = _mm512_set1_ps (7.f),
      a8 = _mm512_set1_ps (8.f), a9 = _mm512_set1_ps (9.f),
      a10 = _mm512_set1_ps (10.f), a11 = _mm512_set1_ps (11.f);
  gfloat lanes[16];
  gint64 i;
  guint k, l;

  for (i = 0; i < work->iterations; i++) {
    DOT (a0); DOT (a1); DOT (a2); DOT (a3); DOT (a4); DOT (a5);
    DOT (a6); DOT (a7); DOT (a8); DOT (a9); DOT (a10); DOT (a11);
  }
  {
    __m512 chain[CHAINS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10,
      a11 };

    work->sink = 0.f;
    for (k = 0; k < CHAINS; k++) {
      _mm512_storeu_ps (lanes, chain[k]);
      for (l = 0; l < 16; l++)
        work->sink += lanes[l];
    }
  }
}
#undef DOT
/* *INDENT-ON* */

/* the float32 ones, widest first, then bfloat16, used only when asked */
static const Kernel kernels[] = {
  {"avx512f", 16, run_avx512},
  {"avx2", 8, run_avx2},
  {"sse", 4, run_sse},
  {"avx512bf16", 32, run_avx512bf16},
};

static gboolean
cpu_has (const gchar * isa)
{
  __builtin_cpu_init ();
  if (g_str_equal (isa, "avx512f"))
    return __builtin_cpu_supports ("avx512f");
  if (g_str_equal (isa, "avx2"))
    return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
  if (g_str_equal (isa, "avx512bf16"))
    return __builtin_cpu_supports ("avx512f")
        && __builtin_cpu_supports ("avx512bf16");
  return TRUE;
}

/* the widest the CPU has, or the one asked for; NULL when the CPU lacks it
 * or it has no kernel here */
static const Kernel *
pick_kernel (const gchar * wanted)
{
  guint k;

  for (k = 0; k < G_N_ELEMENTS (kernels); k++) {
    if (wanted ? !g_str_equal (wanted, kernels[k].isa) :
        g_str_equal (kernels[k].isa, "avx512bf16"))
      continue;
    if (cpu_has (kernels[k].isa))
      return &kernels[k];
    if (wanted)
      return NULL;
  }
  return NULL;
}

static gpointer
thread_main (gpointer data)
{
  Work *work = data;

  work->kernel->run (work);
  return NULL;
}

/* GFLOP/s of one timing: all threads start together and the slowest one's
 * end is the end */
static gdouble
time_threads (const Kernel * kernel, guint threads, gint64 iterations)
{
  GThread **thread = g_new0 (GThread *, threads);
  Work *work = g_new0 (Work, threads);
  gint64 start, end;
  guint t;

  start = g_get_monotonic_time ();
  for (t = 0; t < threads; t++) {
    work[t].kernel = kernel;
    work[t].iterations = iterations;
    thread[t] = g_thread_new ("fma-peak", thread_main, &work[t]);
  }
  for (t = 0; t < threads; t++)
    g_thread_join (thread[t]);
  end = g_get_monotonic_time ();
  g_free (work);
  g_free (thread);

  /* a multiply-add is two operations */
  return 2.0 * threads * iterations * CHAINS * kernel->lanes
      / ((end - start) * 1e3);
}

static gdouble
best_of (const Kernel * kernel, guint threads, guint repeats, gint64 iterations)
{
  gdouble best = 0.0;
  guint r;

  for (r = 0; r < repeats; r++)
    best = MAX (best, time_threads (kernel, threads, iterations));
  return best;
}

int
main (int argc, char **argv)
{
  gint threads = 2, repeats = 10;
  gint64 iterations = 20000000;
  gchar *isa = NULL;
  GOptionEntry entries[] = {
    {"threads", 0, 0, G_OPTION_ARG_INT, &threads,
        "Threads of the second figure (2)", "N"},
    {"repeats", 0, 0, G_OPTION_ARG_INT, &repeats,
        "Timings per figure, the best is printed (10)", "N"},
    {"iterations", 0, 0, G_OPTION_ARG_INT64, &iterations,
        "Loop turns per thread and timing (20000000)", "N"},
    {"isa", 0, 0, G_OPTION_ARG_STRING, &isa,
        "Vectors to use: avx512f, avx2 (with FMA) or sse "
          "(multiply and add); default: the widest the CPU has; "
          "avx512bf16: the bfloat16 peak", "NAME"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- the CPU's float32 FMA peak");
  GError *err = NULL;
  const Kernel *kernel;
  gdouble one, many;
  int ret = 2;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    g_clear_error (&err);
    goto done;
  }
  if (threads < 1 || repeats < 1 || iterations < 1) {
    g_printerr ("--threads, --repeats and --iterations must be at least 1\n");
    goto done;
  }
  kernel = pick_kernel (isa);
  if (!kernel) {
    g_printerr ("this CPU cannot run --isa %s (avx512f, avx2, sse or "
        "avx512bf16)\n", isa);
    goto done;
  }

  one = best_of (kernel, 1, repeats, iterations);
  many = best_of (kernel, threads, repeats, iterations);
  g_print ("isa=%s gflops-1-thread=%.1f gflops-%d-threads=%.1f "
      "scaling=%.2f\n", kernel->isa, one, threads, many, many / one);
  ret = 0;

done:
  g_option_context_free (ctx);
  g_free (isa);
  return ret;
}
