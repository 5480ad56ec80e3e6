/* Time step benchmark: the wall time of mr_sim_step and its stages (mr_step_timing, timed by
 * mr_sim_time_stages, which adds its clock reads to the step: kinematics,
 * collision, dynamics = CRBA + LDLᵀ + RNEA + free velocity, problem assembly, consistent law,
 * solver with its criterion, integration) on three scenes: Solo-12 standing and pushed
 * (scenes/b8_solo_push.yaml), TALOS standing and pushed (scenes/b8_talos_push.yaml) and the Allegro
 * hand holding a ball (scenes/b8_allegro_hold.yaml). Per scene, solver and start (cold: warm_start
 * false, warm: the solver starts from last step's forces and state), the first WARMUP steps are run
 * unmeasured, then the next n steps are timed one by one: median and 10th percentile of the step
 * time, the median of every stage, the mean number of contacts and solver iterations and the steps
 * whose solver stopped before its tolerance. Output: Markdown tables. Run: make bench (or
 * build/bench/bench/step [steps [solver...]]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "moreau/contact.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define WARMUP 100
#define MAX_STEPS 5000
#define NSTAGES 8

static const char *const scenes[] = {"scenes/b8_solo_push.yaml", "scenes/b8_talos_push.yaml",
                                     "scenes/b8_allegro_hold.yaml"};

typedef struct {
  double t[NSTAGES][MAX_STEPS]; /* per stage (mr_step_timing order, total last), per step */
  double contacts, iterations;  /* means over the measured steps */
  long not_converged;
  int n;      /* measured steps */
  int failed; /* the run stopped on an error */
  char msg[96];
} series;

/* the q-quantile (0..1) of x[0..n), sorting x */
static double quantile(double *x, int n, double q) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  return x[(int)(q * (n - 1) + 0.5)];
}

/* the stage times of a step, mr_step_timing order, total last */
static void stages(const mr_step_timing *tm, double out[NSTAGES]) {
  double v[NSTAGES] = {tm->kinematics,  tm->collision, tm->dynamics,    tm->assembly,
                       tm->consistency, tm->solver,    tm->integration, tm->total};
  memcpy(out, v, sizeof v);
}

/* WARMUP unmeasured steps, then n timed steps */
static void run_series(mr_scene *sc, const char *solver, int warm, int n, series *r) {
  mr_error err;
  memset(r, 0, sizeof *r);
  sc->settings.warm_start = warm;
  mr_sim *s = mr_sim_from_scene(sc, solver, &err);
  if (!s) {
    r->failed = 1;
    snprintf(r->msg, sizeof r->msg, "%.90s", err.msg);
    return;
  }
  mr_sim_time_stages(s, 1);
  for (int k = 0; k < WARMUP + n; ++k) {
    if (mr_sim_step(s, &err)) {
      r->failed = 1;
      snprintf(r->msg, sizeof r->msg, "step %d: %.70s", k + 1, err.msg);
      break;
    }
    if (k < WARMUP) continue;
    const mr_step_stats *st = mr_sim_last(s);
    double v[NSTAGES];
    stages(&st->timing, v);
    for (int j = 0; j < NSTAGES; ++j)
      r->t[j][r->n] = v[j];
    r->contacts += st->ncontacts;
    r->iterations += st->iterations;
    r->not_converged += !st->converged;
    r->n++;
  }
  if (r->n) r->contacts /= r->n, r->iterations /= r->n;
  mr_sim_free(s);
}

static void print_row(const char *solver, int warm, series *r) {
  printf("| %s | %s |", solver, warm ? "warm" : "cold");
  if (r->n == 0) {
    printf(" failed: %s ||||||||||||\n", r->msg);
    return;
  }
  double med = quantile(r->t[NSTAGES - 1], r->n, 0.5);
  double p10 = quantile(r->t[NSTAGES - 1], r->n, 0.1);
  printf(" %.1f | %.1f |", med, p10);
  for (int j = 0; j < NSTAGES - 1; ++j)
    printf(" %.1f |", quantile(r->t[j], r->n, 0.5));
  printf(" %.1f | %.1f | %ld/%d |%s%s\n", r->contacts, r->iterations, r->not_converged, r->n,
         r->failed ? " stopped: " : "", r->failed ? r->msg : "");
}

static int wanted(const char *name, int argc, char **argv) {
  if (argc <= 2) return 1;
  for (int k = 2; k < argc; ++k)
    if (!strcmp(argv[k], name)) return 1;
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 400;
  if (n < 1 || n > MAX_STEPS) {
    fprintf(stderr, "usage: step [steps (1..%d, default 400)] [solver...]\n", MAX_STEPS);
    return 2;
  }
  static series r;
  printf("Time step: %d warm-up steps, then %d timed steps; median and 10th percentile of the "
         "step time and median of each stage, in µs\n",
         WARMUP, n);
  for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; ++i) {
    mr_scene sc;
    mr_error err;
    if (mr_scene_load(scenes[i], &sc, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      mr_scene_free(&sc);
      return 1;
    }
    printf("\n%s (nv = %d, Δt = %g s)\n\n", scenes[i], sc.model->nv, sc.timestep);
    printf("| solver | start | step median | step p10 | kinematics | collision | dynamics | "
           "assembly | consistency | solver | integration | contacts | iterations | not converged "
           "|\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < mr_solver_count(); ++k) {
      const mr_solver_info *info = mr_solver_at(k);
      if (!info->solve || !wanted(info->name, argc, argv)) continue;
      for (int warm = 0; warm < 2; ++warm) {
        run_series(&sc, info->name, warm, n, &r);
        print_row(info->name, warm, &r);
        fflush(stdout);
      }
    }
    mr_scene_free(&sc);
  }
  return 0;
}
