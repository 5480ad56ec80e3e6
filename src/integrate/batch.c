/* A batch of simulators on one world, stepped on a fixed pool of POSIX threads (batch.h).
 *
 * With T threads and n environments, thread t (t = 0 is the caller) has the environments
 * [⌊t n / T⌋, ⌊(t + 1) n / T⌋) as its share. Each call, every environment is claimed by exactly
 * one thread (an atomic compare-and-swap of the environment's stamp to the call's generation)
 * and stepped by it; a thread claims its own share first, then whatever the others have not
 * claimed yet (theirs from the end): on idle cores each thread steps its share, and a thread
 * that the machine does not schedule holds nobody up, since the others step its environments.
 * The simulators share only the read-only world, so each one's trajectory is that of mr_sim_step
 * called alone, bit for bit, whichever thread steps it and for any T.
 *
 * Pool protocol: mr_batch_step stores nsteps, then bumps a generation counter; each worker that
 * sees a new generation counts itself busy, claims and steps what it can, and uncounts itself;
 * the caller claims and steps meanwhile and then waits for busy = 0. A worker counts itself busy
 * before it claims, so a caller that finds every environment claimed and busy = 0 knows that no
 * environment is being stepped; a worker that sees a generation late finds nothing to claim and
 * touches nothing (every environment carries that generation or a later one). These counters
 * are atomics (sequentially consistent) and need no lock; the mutex and the two condition
 * variables serve only a thread that sleeps: a sleeper counts itself (sleepers, or the caller's
 * waiting flag) under the mutex before it re-checks its condition, and the other side, after its
 * store, takes the mutex and signals only when it reads a sleeper counted. Of the store and the
 * count one is seen by the other (both sequentially consistent), so no wake-up can be lost, and
 * a call whose threads are awake makes no system call. Every buffer exists from mr_batch_create
 * on.
 * Before sleeping on a condition variable, a worker may watch the generation and the caller the
 * busy count (atomic loads, no lock), for as long as the adaptive wait below finds it pays: a
 * learning loop that steps one step per call then finds the other thread still awake instead of
 * paying a wake-up (a system call on each side) per call, and a busy machine finds them asleep.
 * The waits re-check under the mutex, so no wake-up can be lost. */
#include "moreau/batch.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/linalg.h"
#include "moreau/control.h"

/* whether a thread's watching (or the caller's waking of the workers) pays: the running average
 * of how often its waits paid (on from 0.5), and of the paying waits' lengths; and whether the
 * thread has lately waited for a core (its run-queue time, sampled) */
typedef struct {
  double rate;    /* running average over about 8 waits of 1 (paid) and 0 (did not) */
  unsigned waits; /* waits so far (for the probes) */
  long sample_ns; /* when the run-queue time was last read (monotonic ns), 0 never */
  long queued_ns; /* the run-queue time then (ns) */
  int crowded;    /* the last sample found the thread waiting for a core */
} wait_stats;

/* the wall time per call of the two ways of a one-step call: the caller alone (0) and with the
 * workers (1) */
typedef struct {
  double ns[2];   /* running means (ns), 0 before the first */
  unsigned calls; /* one-step calls so far */
  int last;       /* the way of the call before, −1 none */
  int fast;       /* the way taken outside the probes */
  int busy_above; /* tasks running on the machine above which the workers' way lacks cores:
                   * the cores online less the workers */
  int skip;       /* this period's probe of the workers' way is skipped (the machine is busy) */
  int skipped;    /* probes of the workers' way skipped in a row */
} way_stats;

typedef struct {
  struct mr_batch *b;
  int t; /* thread index, 1 ... T − 1 */
} worker_arg;

struct mr_batch {
  const mr_world *w;
  int n, threads, nq, nv;
  mr_sim **sims;     /* [n] */
  mr_status *status; /* [n] of the last batch step */
  mr_error *errors;  /* [n] of the last batch step */
  double *cpu;       /* [threads] CPU seconds each thread spent on its share, last batch step */
  int timed;         /* read the thread CPU clocks (mr_batch_time_threads) */
  pthread_t *workers;
  worker_arg *args;     /* [threads] */
  int started;          /* workers running */
  int sync_ready;       /* mutex and condition variables initialised */
  pthread_mutex_t lock; /* held by a thread going to sleep, and by one waking it */
  pthread_cond_t go;    /* a new generation (or quit) */
  pthread_cond_t done;  /* busy reached 0 */
  atomic_ulong generation;
  atomic_ulong *claim;     /* [n] the generation that last claimed each environment */
  atomic_int busy;         /* workers claiming or stepping in the current generation */
  atomic_int sleepers;     /* workers asleep on go (or going to sleep) */
  atomic_int caller_waits; /* the caller asleep on done (or going to sleep) */
  atomic_ulong resumed;    /* the generation of a call that took the workers' way after calls by
                            * the caller alone (0 none): its waits are not evidence (below) */
  wait_stats wait;         /* the caller's waits for the workers (the adaptive wait, below) */
  way_stats way;           /* the one-step calls' two ways, timed (below) */
  atomic_int nsteps;       /* steps of the current generation (stored before the generation) */
  atomic_int quit;
};

/* ---- stepping ---- */

/* step environments [lo, hi) nsteps times each; a failure stops that environment */
static void step_range(mr_batch *b, int lo, int hi, int nsteps) {
  for (int i = lo; i < hi; ++i) {
    mr_error_clear(&b->errors[i]);
    b->status[i] = MR_OK;
    for (int k = 0; k < nsteps; ++k) {
      mr_status st = mr_sim_step(b->sims[i], &b->errors[i]);
      if (st != MR_OK) {
        b->status[i] = st;
        break;
      }
    }
  }
}

static double thread_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* claim environment i for generation g: 1 when this thread is the one to step it */
static int claim_env(mr_batch *b, int i, unsigned long g) {
  unsigned long old = atomic_load(&b->claim[i]);
  return old < g && atomic_compare_exchange_strong(&b->claim[i], &old, g);
}

/* share s's environments that this thread claims in generation g, stepped (backwards: taking
 * another thread's share from its end); returns how many */
static int step_claimed(mr_batch *b, int s, unsigned long g, int nsteps, int backwards) {
  long n = b->n, T = b->threads;
  int lo = (int)(s * n / T), hi = (int)((s + 1) * n / T), done = 0;
  for (int k = 0; k < hi - lo; ++k) {
    int i = backwards ? hi - 1 - k : lo + k;
    if (claim_env(b, i, g)) step_range(b, i, i + 1, nsteps), ++done;
  }
  return done;
}

/* thread t's work in generation g: its own share, then what the others have not claimed; when
 * timed, the CPU time it took (the thread CPU clock is a system call, a few µs on a virtual
 * machine: off unless asked for), recorded when this thread stepped something (a worker that
 * wakes after the call has returned steps nothing and writes nothing) */
static int step_share(mr_batch *b, int t, unsigned long g, int nsteps) {
  double c0 = b->timed ? thread_cpu_seconds() : 0.0;
  int done = step_claimed(b, t, g, nsteps, 0);
  for (int k = 1; k < b->threads; ++k)
    done += step_claimed(b, (t + k) % b->threads, g, nsteps, 1);
  if (b->timed && done) b->cpu[t] = thread_cpu_seconds() - c0;
  return done;
}

/* The adaptive wait. A thread that waits (the caller for the workers, a worker for the next
 * call) may watch its counter (atomic loads, no lock) before it sleeps on a condition variable:
 * when the other thread ends soon, the watcher is still awake and costs no wake-up (two system
 * calls and a context switch, several µs each on a virtual machine). But a watching thread holds
 * a core: on a machine with other work it takes the core from the thread it waits for, and two
 * threads end slower than one. So a thread watches only while watching pays: a wait pays when
 * it ends within SPIN_MAX_NS (and, for a worker, finds work: environments left to claim). It
 * keeps a running average of how often its waits paid; below one half watching is off (the
 * other thread is descheduled: the machine is oversubscribed; or the caller works between
 * calls), and one wait in PROBE still watches for SPIN_MAX_NS, so that watching turns on again
 * (the average set to 3/4) as soon as a wait pays (a thread asleep would wake too late to learn
 * that the machine has freed up). While on, it watches for up to SPIN_MAX_NS: how long a wait
 * lasts varies with the other thread's step (a few µs in twenty), and a watch cut short costs a
 * wake-up of tens of µs (watching for twice the typical wait, one wait in twenty of the
 * worker's in one-step calls of two Solo-12 ended asleep, most of the 2.4 µs a call that two
 * threads added over the ideal on idle cores). And a thread never watches
 * while the machine is oversubscribed: every SAMPLE_NS it reads how long it has waited for a core
 * lately (Linux's schedstat), and over a tenth of the time means other programs want the cores,
 * which a watch would only take from them and from the thread it waits for. The caller watches only
 * the busy count, which counts the workers stepping right now (a worker that has not started is
 * asleep or waiting for a core, and its environments are the caller's to take).
 *
 * A call of one step is short (tens of µs for a few robots), and on a busy machine a worker the
 * scheduler has set aside for a time slice (milliseconds) holds it up in the environment it has
 * claimed. No signal read from the system says in advance which of the two ways is faster, so
 * the caller times them: it steps every environment itself (the workers left asleep and the
 * generation untouched, so none of them claims anything) or with the workers, keeps the running
 * mean wall time of a call each way, and takes the faster, trying the other way for WAY_BURST
 * calls in every WAY_PERIOD so that its mean follows the machine. A call that changes the way
 * is not timed: the workers it finds asleep (or leaves watching for nothing) cost a wake-up that
 * the calls after it do not pay, and timing it would bias each way by the other. Nor do the
 * waits of a call that resumes the workers' way count for the adaptive wait: they spanned the
 * caller's calls alone, and counted as watches that did not pay they turned watching off, so
 * that every call of the next probe paid a wake-up and the workers' way, probe after probe,
 * looked slower than it is (the pool then stayed on the caller alone on idle cores). A sample
 * counts at most WAY_CLIP times the mean, so that one preempted call does not switch the way for
 * hundreds of calls, while slow calls that recur still move the mean within a few samples. On
 * idle cores the workers win by about the number of threads, and the probes cost about
 * WAY_BURST / WAY_PERIOD of that; on a machine that gives this process about one core, the
 * caller alone wins, and the batch then costs at most the probes over one thread. Those probes
 * of the workers' way are slow calls (a wake-up, then a worker waiting for a core), about 1 % of
 * the time under one other program on two cores; so while the machine's running tasks, read as
 * a probe starts, leave the workers no core, the probe is skipped (at most WAY_SKIP_MAX in a
 * row). */

/* WAY_BURST one-step calls in every WAY_PERIOD try the slower way; a sample counts at most
 * WAY_CLIP times the way's mean, which moves by WAY_GAIN of the difference, or by
 * WAY_PROBE_GAIN in a probe (the probed way's mean is a period old: its few samples replace it) */
#define WAY_PERIOD 1024
#define WAY_BURST 4
#define WAY_CLIP 2.0
#define WAY_GAIN 0.125
#define WAY_PROBE_GAIN 0.5
/* the workers' way stays the faster until the caller alone is faster by this factor: a few
 * wake-ups on idle cores must not send the calls to one thread. Not while the caller has lately
 * waited for a core (crowded, below): other programs then hold the cores, and the workers' way,
 * slower by less than the margin (under one other program on two cores, 16 Solo-12 a call: 200
 * µs against 182), would keep up to a third of the calls */
#define WAY_MARGIN (1.0 / 0.9)

/* at most WAY_SKIP_MAX probes of the workers' way in a row are skipped on a busy machine */
#define WAY_SKIP_MAX 7

/* a small file of /proc read into buf (size bytes, NUL-terminated): 0, or -1 when it cannot be
 * read */
static int read_proc(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  ssize_t k = read(fd, buf, size - 1);
  close(fd);
  if (k <= 0) return -1;
  buf[k] = 0;
  return 0;
}

/* the tasks running or waiting for a core on the whole machine, the calling thread included
 * (the fourth field of Linux's /proc/loadavg, "running/total"), or -1 when it cannot be read */
static int tasks_running(void) {
  char buf[128];
  if (read_proc("/proc/loadavg", buf, sizeof buf)) return -1;
  char *p = buf, *end = buf;
  for (int field = 0; field < 3; ++field, p = end)
    strtod(p, &end);
  long r = strtol(p, &end, 10);
  return end == p || *end != '/' ? -1 : (int)r;
}

/* the way of this one-step call: a burst each way first (the workers, then the caller alone),
 * then the faster (by WAY_MARGIN unless crowded: the caller's own last sample, taken during the
 * workers' calls) but for the probes. A probe of the workers' way is skipped while other
 * programs' tasks hold the cores it needs (read once as the probe starts; the workers sleep
 * meanwhile, so the caller is the only running task of the pool): on such a machine the
 * workers' way loses, and every probe of it would cost a few slow calls. At most WAY_SKIP_MAX in
 * a row are skipped, so that the pool still learns, within a few periods, what a machine that
 * only looks busy gives. */
static int choose_way(way_stats *w, int caller_crowded) {
  unsigned k = w->calls++;
  if (k < 2 * WAY_BURST) return k < WAY_BURST;
  w->fast = w->ns[1] <= (caller_crowded ? 1.0 : WAY_MARGIN) * w->ns[0];
  if (k % WAY_PERIOD >= WAY_BURST) return w->fast;
  if (k % WAY_PERIOD == 0 && w->fast == 0) {
    int running = tasks_running();
    w->skip = running > w->busy_above && w->skipped < WAY_SKIP_MAX;
    w->skipped = w->skip ? w->skipped + 1 : 0;
  }
  return w->fast == 0 && w->skip ? 0 : !w->fast;
}

/* a call's wall time ns, the way it went: counted when the call before went the same way */
static void way_timed(way_stats *w, int way, double ns) {
  double *m = &w->ns[way], gain = way == w->fast ? WAY_GAIN : WAY_PROBE_GAIN;
  if (w->last == way) *m = *m > 0.0 ? *m + gain * (fmin(ns, WAY_CLIP * *m) - *m) : ns;
  w->last = way;
}

/* the longest watch (ns): about four Solo-12 steps */
#define SPIN_MAX_NS 50000L
/* one wait in PROBE probes while watching is off */
#define PROBE 16

static long monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* the calling thread's time spent runnable but waiting for a core (ns, Linux's
 * /proc/thread-self/schedstat, second field), or -1 when it cannot be read */
static long queued_ns(void) {
  char buf[96];
  if (read_proc("/proc/thread-self/schedstat", buf, sizeof buf)) return -1;
  char *p = buf, *end;
  strtoll(p, &end, 10);
  long long q = strtoll(end, &p, 10);
  return p == end ? -1 : (long)q;
}

/* whether the machine is oversubscribed for this thread: of the wall time since the last
 * sample, more than CROWDED spent waiting for a core; sampled at most every SAMPLE_NS (three
 * system calls) */
#define SAMPLE_NS 2000000L
#define CROWDED 0.1
static int crowded(wait_stats *w, long now) {
  if (now - w->sample_ns < SAMPLE_NS) return w->crowded;
  long q = queued_ns();
  if (q >= 0 && w->sample_ns > 0)
    w->crowded = (double)(q - w->queued_ns) > CROWDED * (double)(now - w->sample_ns);
  w->sample_ns = now, w->queued_ns = q;
  return w->crowded;
}

/* whether watching (waking) is on, or this wait probes: not on a crowded machine */
static int pays(wait_stats *w) {
  if (crowded(w, monotonic_ns())) return 0;
  return w->rate >= 0.5 || ++w->waits % PROBE == 0;
}

/* how long to watch before sleeping (ns), 0 for not at all */
static long watch_ns(wait_stats *w) {
  return pays(w) ? SPIN_MAX_NS : 0;
}

/* a wait that spanned calls by the caller alone (the workers' way resumed): not evidence that
 * watching does not pay, since no call came to watch for; watching is turned on, and the waits
 * of the calls that follow decide */
static void resumed(wait_stats *w) {
  if (w->rate < 0.75) w->rate = 0.75;
}

/* a wait ended, and paid or not */
static void waited(wait_stats *w, int paid) {
  if (paid && w->rate < 0.5) {
    w->rate = 0.75;
  } else {
    w->rate += 0.125 * ((paid ? 1.0 : 0.0) - w->rate);
  }
}

/* one turn of a watch loop: the processor's spin-wait hint where there is one (it saves power
 * and leaves a hardware sibling thread its share of the core) */
static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* watch the generation until it differs from seen, for at most budget ns */
static void spin_for_generation(const mr_batch *b, unsigned long seen, long start, long budget) {
  if (budget <= 0) return;
  for (int k = 1; atomic_load(&b->generation) == seen; ++k) {
    relax();
    if (k % 64 == 0 && monotonic_ns() - start > budget) return;
  }
}

/* watch the busy count until it reaches 0 (workers are stepping meanwhile), for at most budget
 * ns */
static void spin_for_done(const mr_batch *b, long start, long budget) {
  if (budget <= 0) return;
  for (int k = 1; atomic_load(&b->busy) > 0; ++k) {
    relax();
    if (k % 64 == 0 && monotonic_ns() - start > budget) return;
  }
}

/* wake whoever sleeps on cv while *count says a sleeper is counted */
static void wake(mr_batch *b, pthread_cond_t *cv, atomic_int *count) {
  if (atomic_load(count) == 0) return;
  pthread_mutex_lock(&b->lock);
  pthread_cond_broadcast(cv);
  pthread_mutex_unlock(&b->lock);
}

static void *worker_main(void *p) {
  worker_arg *a = p;
  mr_batch *b = a->b;
  unsigned long seen = 0;
  wait_stats ws = {0.75, 0, 0, 0, 0};
  for (;;) {
    long start = monotonic_ns();
    spin_for_generation(b, seen, start, watch_ns(&ws));
    if (atomic_load(&b->generation) == seen && !atomic_load(&b->quit)) {
      pthread_mutex_lock(&b->lock);
      atomic_fetch_add(&b->sleepers, 1);
      while (atomic_load(&b->generation) == seen && !atomic_load(&b->quit))
        pthread_cond_wait(&b->go, &b->lock);
      atomic_fetch_sub(&b->sleepers, 1);
      pthread_mutex_unlock(&b->lock);
    }
    if (atomic_load(&b->quit)) return NULL;
    atomic_fetch_add(&b->busy, 1);
    seen = atomic_load(&b->generation);
    int nsteps = atomic_load(&b->nsteps);
    long wait = monotonic_ns() - start;
    /* a worker that wakes to find every environment taken waited for nothing */
    int work = step_share(b, a->t, seen, nsteps);
    if (atomic_load(&b->resumed) == seen)
      resumed(&ws);
    else
      waited(&ws, work && wait <= SPIN_MAX_NS);
    if (atomic_fetch_sub(&b->busy, 1) == 1) wake(b, &b->done, &b->caller_waits);
  }
}

/* the first failed environment named in err, the failures counted */
static mr_status batch_outcome(const mr_batch *b, mr_error *err) {
  int first = -1, failed = 0;
  for (int i = 0; i < b->n; ++i)
    if (b->status[i] != MR_OK) {
      if (first < 0) first = i;
      ++failed;
    }
  if (first < 0) return MR_OK;
  return mr_error_set(err, b->status[first],
                      "batch: %d of %d environments failed; environment %d: %s", failed, b->n,
                      first, b->errors[first].msg);
}

/* one step of every environment by the caller alone: the generation untouched, so no worker
 * claims anything */
static void step_alone(mr_batch *b) {
  double c0 = b->timed ? thread_cpu_seconds() : 0.0;
  step_range(b, 0, b->n, 1);
  if (b->timed) b->cpu[0] = thread_cpu_seconds() - c0;
}

mr_status mr_batch_step(mr_batch *b, int nsteps, mr_error *err) {
  if (nsteps < 0)
    return mr_error_set(err, MR_ERR_INVALID, "batch step: nsteps = %d is negative", nsteps);
  if (b->timed) memset(b->cpu, 0, (size_t)b->threads * sizeof *b->cpu);
  /* a one-step call goes the faster of its two ways (the adaptive ways above) */
  long t0 = monotonic_ns();
  int way = nsteps == 1 && b->started > 0 ? choose_way(&b->way, b->wait.crowded) : -1;
  if (way == 0) {
    step_alone(b);
    way_timed(&b->way, 0, (double)(monotonic_ns() - t0));
    return batch_outcome(b, err);
  }
  atomic_store(&b->nsteps, nsteps);
  /* the workers' way after the caller alone: the workers slept through those calls */
  int resuming = way == 1 && b->way.last == 0;
  if (resuming) atomic_store(&b->resumed, atomic_load(&b->generation) + 1);
  unsigned long g = atomic_fetch_add(&b->generation, 1) + 1;
  if (b->started > 0) wake(b, &b->go, &b->sleepers);
  step_share(b, 0, g, nsteps);
  if (b->started > 0) {
    long start = monotonic_ns();
    spin_for_done(b, start, watch_ns(&b->wait));
    if (atomic_load(&b->busy) > 0) {
      pthread_mutex_lock(&b->lock);
      atomic_store(&b->caller_waits, 1);
      while (atomic_load(&b->busy) > 0)
        pthread_cond_wait(&b->done, &b->lock);
      atomic_store(&b->caller_waits, 0);
      pthread_mutex_unlock(&b->lock);
    }
    long end = monotonic_ns();
    if (resuming)
      resumed(&b->wait);
    else
      waited(&b->wait, end - start <= SPIN_MAX_NS);
    if (way == 1) way_timed(&b->way, 1, (double)(end - t0));
  }
  return batch_outcome(b, err);
}

/* ---- creation ---- */

static mr_status start_workers(mr_batch *b, mr_error *err) {
  if (pthread_mutex_init(&b->lock, NULL) || pthread_cond_init(&b->go, NULL) ||
      pthread_cond_init(&b->done, NULL))
    return mr_error_set(err, MR_ERR_NOMEM, "batch: cannot initialise the thread pool's locks");
  b->sync_ready = 1;
  for (int t = 1; t < b->threads; ++t) {
    b->args[t] = (worker_arg){b, t};
    if (pthread_create(&b->workers[t], NULL, worker_main, &b->args[t]))
      return mr_error_set(err, MR_ERR_NOMEM, "batch: cannot start worker thread %d of %d", t,
                          b->threads - 1);
    b->started = t;
  }
  return MR_OK;
}

static mr_status create_sims(mr_batch *b, const char *solver, mr_error *err) {
  for (int i = 0; i < b->n; ++i) {
    b->sims[i] = mr_sim_create(b->w, solver, err);
    if (!b->sims[i]) return err ? err->status : MR_ERR_NOMEM;
  }
  return MR_OK;
}

mr_batch *mr_batch_create(const mr_world *w, int n, int threads, const char *solver,
                          mr_error *err) {
  if (!w) return mr_error_set(err, MR_ERR_INVALID, "batch: no world"), NULL;
  if (n < 1)
    return mr_error_set(err, MR_ERR_INVALID, "batch: n = %d environments, need at least 1", n),
           NULL;
  if (threads < 1)
    return mr_error_set(err, MR_ERR_INVALID, "batch: threads = %d, need at least 1", threads), NULL;
  mr_batch *b = calloc(1, sizeof *b);
  if (!b) return mr_error_set(err, MR_ERR_NOMEM, "batch: out of memory"), NULL;
  b->w = w, b->n = n, b->threads = threads < n ? threads : n;
  b->wait.rate = 0.75;
  b->way.last = -1;
  b->way.busy_above = (int)sysconf(_SC_NPROCESSORS_ONLN) - (b->threads - 1);
  b->nq = w->model->nq, b->nv = w->model->nv;
  b->sims = calloc((size_t)n, sizeof *b->sims);
  b->status = calloc((size_t)n, sizeof *b->status);
  b->errors = calloc((size_t)n, sizeof *b->errors);
  b->workers = calloc((size_t)b->threads, sizeof *b->workers);
  b->args = calloc((size_t)b->threads, sizeof *b->args);
  b->cpu = calloc((size_t)b->threads, sizeof *b->cpu);
  b->claim = calloc((size_t)n, sizeof *b->claim);
  if (!b->sims || !b->status || !b->errors || !b->workers || !b->args || !b->cpu || !b->claim) {
    mr_batch_free(b);
    return mr_error_set(err, MR_ERR_NOMEM, "batch: out of memory for %d environments", n), NULL;
  }
  if (create_sims(b, solver, err) != MR_OK || start_workers(b, err) != MR_OK) {
    mr_batch_free(b);
    return NULL;
  }
  return b;
}

void mr_batch_free(mr_batch *b) {
  if (!b) return;
  if (b->sync_ready) {
    atomic_store(&b->quit, 1);
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->go);
    pthread_mutex_unlock(&b->lock);
    for (int t = 1; t <= b->started; ++t)
      pthread_join(b->workers[t], NULL);
    pthread_cond_destroy(&b->done);
    pthread_cond_destroy(&b->go);
    pthread_mutex_destroy(&b->lock);
  }
  for (int i = 0; b->sims && i < b->n; ++i)
    mr_sim_free(b->sims[i]);
  free(b->sims), free(b->status), free(b->errors), free(b->workers), free(b->args);
  free(b->cpu), free(b->claim);
  free(b);
}

/* ---- access ---- */

int mr_batch_size(const mr_batch *b) {
  return b->n;
}
int mr_batch_threads(const mr_batch *b) {
  return b->threads;
}

mr_sim *mr_batch_sim(mr_batch *b, int i) {
  return i >= 0 && i < b->n ? b->sims[i] : NULL;
}

void mr_batch_time_threads(mr_batch *b, int on) {
  b->timed = on != 0;
  if (!b->timed) memset(b->cpu, 0, (size_t)b->threads * sizeof *b->cpu);
}

double mr_batch_thread_cpu(const mr_batch *b, int t) {
  return t >= 0 && t < b->threads ? b->cpu[t] : 0.0;
}

const mr_status *mr_batch_status(const mr_batch *b) {
  return b->status;
}

const char *mr_batch_error(const mr_batch *b, int i) {
  return i >= 0 && i < b->n ? b->errors[i].msg : NULL;
}

/* ---- bulk state and controls ---- */

void mr_batch_get_state(const mr_batch *b, double *q, double *v) {
  for (int i = 0; i < b->n; ++i) {
    if (q) memcpy(q + (size_t)i * b->nq, mr_sim_q(b->sims[i]), (size_t)b->nq * sizeof *q);
    if (v) memcpy(v + (size_t)i * b->nv, mr_sim_v(b->sims[i]), (size_t)b->nv * sizeof *v);
  }
}

mr_status mr_batch_set_state(mr_batch *b, const double *q, const double *v, mr_error *err) {
  for (int i = 0; i < b->n; ++i) {
    mr_error e = {0};
    const double *qi = q ? q + (size_t)i * b->nq : NULL;
    const double *vi = v ? v + (size_t)i * b->nv : NULL;
    mr_status st = mr_sim_set_state(b->sims[i], qi, vi, &e);
    if (st != MR_OK) return mr_error_set(err, st, "batch: environment %d: %s", i, e.msg);
  }
  return MR_OK;
}

void mr_batch_get_controls(const mr_batch *b, double *torque, double *target) {
  for (int i = 0; i < b->n; ++i) {
    if (torque)
      memcpy(torque + (size_t)i * b->nv, mr_sim_ctrl_torque(b->sims[i]),
             (size_t)b->nv * sizeof *torque);
    if (target)
      memcpy(target + (size_t)i * b->nq, mr_sim_ctrl_target(b->sims[i]),
             (size_t)b->nq * sizeof *target);
  }
}

/* the first non-finite entry of x [n × m] named in err */
static mr_status check_finite(const double *x, int n, int m, const char *what, mr_error *err) {
  long k = x ? mr_first_nonfinite(x, (long)n * m) : -1;
  if (k < 0) return MR_OK;
  return mr_error_set(err, MR_ERR_INVALID, "batch: environment %ld: %s[%ld] = %g is not finite",
                      k / m, what, k % m, x[k]);
}

mr_status mr_batch_set_controls(mr_batch *b, const double *torque, const double *target,
                                mr_error *err) {
  if (check_finite(torque, b->n, b->nv, "torque", err) ||
      check_finite(target, b->n, b->nq, "target", err))
    return MR_ERR_INVALID;
  for (int i = 0; i < b->n; ++i) {
    if (torque)
      memcpy(mr_sim_ctrl_torque(b->sims[i]), torque + (size_t)i * b->nv,
             (size_t)b->nv * sizeof *torque);
    if (target)
      memcpy(mr_sim_ctrl_target(b->sims[i]), target + (size_t)i * b->nq,
             (size_t)b->nq * sizeof *target);
  }
  return MR_OK;
}

void mr_batch_reset(mr_batch *b, int i) {
  for (int k = 0; k < b->n; ++k)
    if (i < 0 || k == i) mr_sim_reset(b->sims[k]);
}
