/* Batch benchmark: steps per second of N Solo-12 environments (scenes/solo_trot_pd.yaml, the
 * trot gait under PD, ncp-pgs warm started) for N = 1, 2, 8 and 16, stepped
 *   - by an mr_batch on 1 thread and on 2 threads (batch.h), and
 *   - by N separate processes (fork), one simulator each, all started together, and
 *   - by the same two batches called for one step at a time (a learning loop's pattern: one
 *     wake-up and one wait of the pool per step instead of per 1000 steps).
 * Each run: every environment from the initial state, WARMUP unmeasured steps, then STEPS timed
 * steps per environment; throughput = N · STEPS / wall time. The five ways alternate over
 * rounds (default 7), and the medians are reported with the speed-up of 2 threads over 1 (scaling
 * efficiency = speed-up / 2) and the CPU time per step of each way (getrusage: user + system of
 * the process, or of the children), which shows the overhead of the threads independently of the
 * load that other programs put on the machine (the load average is printed).
 * On a loaded machine the wall-time ratio says how much CPU the scheduler gave, not how the pool
 * scales; so each batch run also reads every pool thread's CPU time on its share
 * (mr_batch_thread_cpu), and the *critical-path speed-up* = (1-thread CPU time) / (busiest
 * thread's CPU time on 2 threads) is the speed-up two idle cores would give: it includes the
 * imbalance between the shares and any extra work per step that sharing caches or memory adds,
 * but not the time a thread waits for a core.
 * Under load: `burners` child processes spinning on the CPU for the whole run (one is the load
 * of another program on one of two cores).
 * Then, for each N > 1, long runs of one-step calls (long_run): what a learning loop that never
 * stops sees of the pool's choice between its ways, on a batch of 1 thread, one of 2 and a second
 * one of 1 thread, in turn, the same three throughout; the second 1-thread batch is the control:
 * its ratio to the first is what the machine's noise alone gives a ratio of the same code.
 * Run: make bench (or build/bench/bench/batch [rounds [burners [N,...]]], default 7 rounds, no
 * burner, N = 1, 2, 8, 16). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "moreau/batch.h"
#include "moreau/world.h"

#define SCENE "scenes/solo_trot_pd.yaml"
/* the solver of every measurement in docs/benchmarks.md, "Batch", so that runs compare (the
 * scene's own is the default, ncp-hybrid, whose trot step is about 2/3 of this one's) */
#define SOLVER "ncp-pgs"
#define WARMUP 50
#define STEPS 1000
#define MAX_ROUNDS 31
#define NWAYS 5

static const char *const way_names[NWAYS] = {"batch, 1 thread", "batch, 2 threads", "N processes",
                                             "batch, 1 thread, 1 step per call",
                                             "batch, 2 threads, 1 step per call"};

typedef struct {
  double sps;  /* environment steps per second */
  double cpu;  /* CPU µs per environment step */
  double busy; /* CPU seconds of the busiest pool thread (batch ways only) */
} sample;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* user + system CPU seconds of this process (who = RUSAGE_SELF) or its reaped children */
static double cpu_seconds(int who) {
  struct rusage u;
  getrusage(who, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* one batch run: reset, warm up, time STEPS steps of every environment, `per_call` steps per
 * mr_batch_step (STEPS: one call; 1: a learning loop's pattern, one synchronisation per step) */
static int run_batch(mr_batch *b, int per_call, sample *out) {
  mr_error err;
  int n = mr_batch_size(b);
  mr_batch_time_threads(b, per_call == STEPS); /* a system call per call: one-call runs only */
  mr_batch_reset(b, -1);
  if (mr_batch_step(b, WARMUP, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  double c0 = cpu_seconds(RUSAGE_SELF), t0 = now();
  for (int k = 0; k < STEPS; k += per_call)
    if (mr_batch_step(b, per_call, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  double t1 = now(), c1 = cpu_seconds(RUSAGE_SELF);
  out->sps = n * (double)STEPS / (t1 - t0);
  out->cpu = 1e6 * (c1 - c0) / (n * (double)STEPS);
  out->busy = 0.0;
  for (int t = 0; t < mr_batch_threads(b); ++t)
    if (mr_batch_thread_cpu(b, t) > out->busy) out->busy = mr_batch_thread_cpu(b, t);
  return 0;
}

/* a child process: its own simulator, warmed up, then STEPS steps when `go` closes */
static void child(const mr_world *w, int ready, int go) {
  mr_error err;
  mr_sim *s = mr_sim_create(w, SOLVER, &err);
  int ok = s != NULL;
  for (int k = 0; ok && k < WARMUP; ++k)
    ok = mr_sim_step(s, &err) == MR_OK;
  char c = 1, buf;
  if (write(ready, &c, 1) != 1 || read(go, &buf, 1) != 0) ok = 0;
  for (int k = 0; ok && k < STEPS; ++k)
    ok = mr_sim_step(s, &err) == MR_OK;
  _exit(ok ? 0 : 1);
}

/* N processes started together: wall time from the start signal to the last exit */
static int run_processes(const mr_world *w, int n, sample *out) {
  int ready[2], go[2], failed = 0;
  if (pipe(ready) || pipe(go)) return perror("pipe"), 1;
  fflush(stdout);
  for (int i = 0; i < n; ++i) {
    pid_t p = fork();
    if (p < 0) return perror("fork"), 1;
    if (p == 0) {
      close(ready[0]), close(go[1]);
      child(w, ready[1], go[0]);
    }
  }
  close(ready[1]), close(go[0]);
  char c;
  for (int i = 0; i < n; ++i)
    if (read(ready[0], &c, 1) != 1) failed = 1;
  double c0 = cpu_seconds(RUSAGE_CHILDREN), t0 = now();
  close(go[1]); /* every child's read returns 0: go */
  for (int i = 0, st; i < n; ++i)
    if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) failed = 1;
  double t1 = now(), c1 = cpu_seconds(RUSAGE_CHILDREN);
  close(ready[0]);
  out->sps = n * (double)STEPS / (t1 - t0);
  /* the children's CPU time includes their warm-up: subtract its share */
  out->cpu = 1e6 * (c1 - c0) / (n * (double)(STEPS + WARMUP));
  return failed;
}

/* `rounds` rounds of the three ways for n environments; one table row per way */
static int bench_n(const mr_world *w, int n, int rounds) {
  mr_error err;
  mr_batch *b[2] = {mr_batch_create(w, n, 1, SOLVER, &err),
                    mr_batch_create(w, n, 2, SOLVER, &err)};
  if (!b[0] || !b[1]) return fprintf(stderr, "%s\n", err.msg), 1;
  static double sps[NWAYS][MAX_ROUNDS], cpu[NWAYS][MAX_ROUNDS], path[MAX_ROUNDS];
  double load[3] = {0};
  getloadavg(load, 3);
  for (int r = 0; r < rounds; ++r) {
    sample s[NWAYS];
    if (run_batch(b[0], STEPS, &s[0]) || run_batch(b[1], STEPS, &s[1]) ||
        run_processes(w, n, &s[2]) || run_batch(b[0], 1, &s[3]) || run_batch(b[1], 1, &s[4]))
      return 1;
    for (int k = 0; k < NWAYS; ++k)
      sps[k][r] = s[k].sps, cpu[k][r] = s[k].cpu;
    path[r] = s[0].busy / s[1].busy;
  }
  printf("| N | stepped by | env steps/s | vs 1 thread | CPU µs/step |\n");
  printf("|---:|---|---:|---:|---:|\n");
  double m[NWAYS];
  for (int k = 0; k < NWAYS; ++k)
    m[k] = bench_median(sps[k], rounds);
  for (int k = 0; k < NWAYS; ++k)
    printf("| %d | %s | %.0f | %.2f | %.1f |\n", n, way_names[k], m[k], m[k] / m[0],
           bench_median(cpu[k], rounds));
  double after[3] = {0};
  getloadavg(after, 3);
  double cp = bench_median(path, rounds);
  printf("\nN = %d: 2 threads / 1 thread = %.2f in wall time (scaling efficiency %.0f %%), "
         "%.2f on the critical path (efficiency %.0f %%); load average %.1f before, %.1f "
         "after\n",
         n, m[1] / m[0], 50.0 * m[1] / m[0], cp, 50.0 * cp, load[0], after[0]);
  printf("N = %d, 1 step per call: 2 threads / 1 thread = %.2f in wall time\n\n", n, m[4] / m[3]);
  mr_batch_free(b[0]), mr_batch_free(b[1]);
  return 0;
}

/* A learning loop's long run of one-step calls: LONG_STEPS environment steps in one-step calls
 * (LONG_STEPS / n calls), timed on 1 thread and then on 2, alternately, LONG_RUNS times, on the
 * same two batches throughout (the pool's choice between its two ways carries over, as in a
 * loop that never stops); the ratio of each pair. A pool that settled on the slower way for a
 * stretch of calls shows there as a ratio near 1 */
#define LONG_STEPS 40000
#define LONG_RUNS 5
static int long_run(const mr_world *w, int n) {
  mr_error err;
  /* a second one-thread batch, the control: its ratio to the first is the machine's noise */
  mr_batch *b[3] = {mr_batch_create(w, n, 1, SOLVER, &err), mr_batch_create(w, n, 2, SOLVER, &err),
                    mr_batch_create(w, n, 1, SOLVER, &err)};
  if (!b[0] || !b[1] || !b[2]) return fprintf(stderr, "%s\n", err.msg), 1;
  double ratio[2][LONG_RUNS];
  int calls = LONG_STEPS / n;
  for (int r = 0; r < LONG_RUNS; ++r) {
    double t[3];
    for (int k = 0; k < 3; ++k) {
      double t0 = now();
      for (int c = 0; c < calls; ++c)
        if (mr_batch_step(b[k], 1, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
      t[k] = now() - t0;
    }
    ratio[0][r] = t[0] / t[1], ratio[1][r] = t[0] / t[2];
  }
  const char *what[2] = {"2 threads / 1 thread", "1 thread / 1 thread (control)"};
  for (int k = 0; k < 2; ++k) {
    printf("N = %d, %d one-step calls per run, %s by run:", n, calls, what[k]);
    for (int r = 0; r < LONG_RUNS; ++r)
      printf(" %.2f", ratio[k][r]);
    printf("; median %.2f\n", bench_median(ratio[k], LONG_RUNS));
  }
  mr_batch_free(b[0]), mr_batch_free(b[1]), mr_batch_free(b[2]);
  return 0;
}

/* a CPU burner: a child process that spins until killed (the load of another program) */
static pid_t start_burner(void) {
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    volatile unsigned long x = 0;
    for (;;)
      x++;
  }
  return p;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7, burners = argc > 2 ? atoi(argv[2]) : 0;
  if (rounds < 1 || rounds > MAX_ROUNDS || burners < 0 || burners > 8)
    return fprintf(stderr, "usage: batch [rounds (1..%d) [burners (0..8) [N,...]]]\n", MAX_ROUNDS),
           1;
  int ns[8] = {1, 2, 8, 16}, nn = 4;
  if (argc > 3) {
    nn = 0;
    for (char *p = argv[3]; *p && nn < 8; p += strcspn(p, ","), p += *p == ',')
      ns[nn++] = atoi(p);
  }
  mr_error err;
  mr_world *w = mr_world_load(SCENE, &err);
  if (!w) return fprintf(stderr, "%s\n", err.msg), 1;
  pid_t burner[8];
  for (int k = 0; k < burners; ++k)
    burner[k] = start_burner();
  printf("Batch: %s (%s), %d warm-up then %d timed steps per environment, median of %d rounds; %ld "
         "processors online; %d CPU burner process%s running\n\n",
         SCENE, SOLVER, WARMUP, STEPS, rounds, sysconf(_SC_NPROCESSORS_ONLN), burners,
         burners == 1 ? "" : "es");
  int status = 0;
  for (int k = 0; k < nn && !status; ++k)
    status = bench_n(w, ns[k], rounds);
  printf("Long runs of one-step calls (%d environment steps a run):\n", LONG_STEPS);
  for (int k = 0; k < nn && !status; ++k)
    if (ns[k] > 1) status = long_run(w, ns[k]);
  for (int k = 0; k < burners; ++k)
    if (burner[k] > 0) kill(burner[k], SIGKILL), waitpid(burner[k], NULL, 0);
  mr_world_free(w);
  return status;
}
