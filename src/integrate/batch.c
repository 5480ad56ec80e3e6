/* A batch of simulators on one world, stepped on a fixed pool of POSIX threads (batch.h).
 *
 * With T threads and n environments, thread t (t = 0 is the caller) owns the environments
 * [⌊t n / T⌋, ⌊(t + 1) n / T⌋): a static partition, so which thread steps an environment never
 * depends on timing, and since the simulators share only the read-only world, each one's
 * trajectory is that of mr_sim_step called alone, bit for bit, for any T.
 *
 * Pool protocol (one mutex, two condition variables): mr_batch_step stores nsteps, bumps a
 * generation counter, sets pending = T − 1 and broadcasts `go`; each worker that sees a new
 * generation steps its share, decrements pending and signals `done` at zero; the caller steps
 * share 0 meanwhile and waits for pending = 0. Every buffer exists from mr_batch_create on.
 * Before sleeping on a condition variable, a worker may watch the generation and the caller
 * pending (atomic loads, no lock), for as long as the adaptive wait below finds it pays: a
 * learning loop that steps one step per call then finds the other thread still awake instead of
 * paying a wake-up (a system call on each side) per call, and a busy machine finds them asleep.
 * Every change is still made under the mutex and followed by the broadcast or signal, and the
 * waits re-check under the mutex, so no wake-up can be lost. */
#include "moreau/batch.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "moreau/control.h"

/* the waiting history of one thread: exponential averages over about 8 waits */
typedef struct {
  double short_rate; /* fraction of waits that ended within SPIN_MAX_NS */
  double short_ns;   /* the duration of those */
} wait_stats;

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
  pthread_mutex_t lock; /* guards the fields below */
  pthread_cond_t go;    /* a new generation (or quit) */
  pthread_cond_t done;  /* pending reached 0 */
  atomic_ulong generation;
  atomic_int pending; /* workers still stepping the current generation */
  atomic_int running; /* workers stepping their share right now */
  wait_stats wait;    /* the caller's waits for the workers (the adaptive wait, below) */
  int nsteps;         /* steps of the current generation */
  int quit;
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

/* thread t's environments, and when timed the CPU time they took on this thread (the thread
 * CPU clock is a system call, a few µs on a virtual machine: off unless asked for) */
static void step_share(mr_batch *b, int t, int nsteps) {
  long n = b->n, T = b->threads;
  double c0 = b->timed ? thread_cpu_seconds() : 0.0;
  step_range(b, (int)(t * n / T), (int)((t + 1) * n / T), nsteps);
  if (b->timed) b->cpu[t] = thread_cpu_seconds() - c0;
}

/* The adaptive wait. A thread that waits (the caller for the workers' shares, a worker for the
 * next call) may watch its counter (atomic loads, no lock) before it sleeps on a condition
 * variable: when the other thread ends its work soon, the watcher is still awake and costs no
 * wake-up (two system calls and a context switch, several µs each on a virtual machine). But a
 * watching thread holds a core: on a machine with other work, it takes the core from the very
 * thread it waits for, and two threads end slower than one. So each thread watches only when
 * watching has been paying: it keeps a running estimate of how often its recent waits ended
 * within SPIN_MAX_NS (measured, whether it watched or slept) and of how long those took, and
 * watches for at most twice that typical wait, and only when most recent waits were that short;
 * waits that end later (the other thread was descheduled: the machine is oversubscribed, or a
 * learning loop works between calls) turn watching off until short waits come back (observed
 * while sleeping, by the wait's duration). The caller also watches only while a worker is
 * running its share (a worker that has not started is asleep or waiting for a core). */

/* the longest watch (ns): about four Solo-12 steps */
#define SPIN_MAX_NS 50000L

static long monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* how long to watch before sleeping (ns), 0 for not at all */
static long watch_ns(const wait_stats *w) {
  if (w->short_rate < 0.5) return 0;
  double t = 2.0 * w->short_ns + 1000.0;
  return t < SPIN_MAX_NS ? (long)t : SPIN_MAX_NS;
}

/* a wait of `ns` nanoseconds ended: update the history */
static void waited(wait_stats *w, long ns) {
  int quick = ns <= SPIN_MAX_NS;
  w->short_rate += 0.125 * ((quick ? 1.0 : 0.0) - w->short_rate);
  if (quick) w->short_ns += 0.125 * ((double)ns - w->short_ns);
}

/* watch the generation until it differs from seen, for at most budget ns */
static void spin_for_generation(const mr_batch *b, unsigned long seen, long start, long budget) {
  if (budget <= 0) return;
  for (int k = 1; atomic_load(&b->generation) == seen; ++k)
    if (k % 64 == 0 && monotonic_ns() - start > budget) return;
}

/* watch pending until it reaches 0, for at most budget ns, while a worker is running its share */
static void spin_for_done(const mr_batch *b, long start, long budget) {
  if (budget <= 0) return;
  for (int k = 1; atomic_load(&b->pending) > 0; ++k)
    if (k % 64 == 0 && (monotonic_ns() - start > budget || atomic_load(&b->running) == 0)) return;
}

static void *worker_main(void *p) {
  worker_arg *a = p;
  mr_batch *b = a->b;
  unsigned long seen = 0;
  wait_stats ws = {0.0, 0.0};
  for (;;) {
    long start = monotonic_ns();
    spin_for_generation(b, seen, start, watch_ns(&ws));
    pthread_mutex_lock(&b->lock);
    while (b->generation == seen && !b->quit)
      pthread_cond_wait(&b->go, &b->lock);
    if (b->quit) {
      pthread_mutex_unlock(&b->lock);
      return NULL;
    }
    seen = atomic_load(&b->generation);
    int nsteps = b->nsteps;
    pthread_mutex_unlock(&b->lock);
    waited(&ws, monotonic_ns() - start);
    atomic_fetch_add(&b->running, 1);
    step_share(b, a->t, nsteps);
    atomic_fetch_sub(&b->running, 1);
    pthread_mutex_lock(&b->lock);
    if (--b->pending == 0) pthread_cond_signal(&b->done);
    pthread_mutex_unlock(&b->lock);
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

mr_status mr_batch_step(mr_batch *b, int nsteps, mr_error *err) {
  if (nsteps < 0)
    return mr_error_set(err, MR_ERR_INVALID, "batch step: nsteps = %d is negative", nsteps);
  if (b->started > 0) {
    pthread_mutex_lock(&b->lock);
    b->nsteps = nsteps;
    b->pending = b->started;
    ++b->generation;
    pthread_cond_broadcast(&b->go);
    pthread_mutex_unlock(&b->lock);
  }
  step_share(b, 0, nsteps);
  if (b->started > 0) {
    long start = monotonic_ns();
    spin_for_done(b, start, watch_ns(&b->wait));
    pthread_mutex_lock(&b->lock);
    while (b->pending > 0)
      pthread_cond_wait(&b->done, &b->lock);
    pthread_mutex_unlock(&b->lock);
    waited(&b->wait, monotonic_ns() - start);
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
  b->nq = w->model->nq, b->nv = w->model->nv;
  b->sims = calloc((size_t)n, sizeof *b->sims);
  b->status = calloc((size_t)n, sizeof *b->status);
  b->errors = calloc((size_t)n, sizeof *b->errors);
  b->workers = calloc((size_t)b->threads, sizeof *b->workers);
  b->args = calloc((size_t)b->threads, sizeof *b->args);
  b->cpu = calloc((size_t)b->threads, sizeof *b->cpu);
  if (!b->sims || !b->status || !b->errors || !b->workers || !b->args || !b->cpu) {
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
    pthread_mutex_lock(&b->lock);
    b->quit = 1;
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
  free(b->cpu);
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
  for (long k = 0; x && k < (long)n * m; ++k)
    if (!isfinite(x[k]))
      return mr_error_set(err, MR_ERR_INVALID, "batch: environment %ld: %s[%ld] = %g is not finite",
                          k / m, what, k % m, x[k]);
  return MR_OK;
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
