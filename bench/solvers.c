/* Contact solver benchmark: every solver of the registry on hand-built problems
 * (tests/contact_problems.h): one sliding contact, a resting box (4 contacts), stacks of 2, 3
 * and 4 unit boxes (8, 12, 16 contacts) and a 1e3 kg box on a 1e-3 kg box (8 contacts).
 * Per solver and problem: iterations and median wall time to ε = 1e-6 on the solver's own
 * criterion, cold (λ = 0), warm (solved again from its own result and state) and "next step"
 * (g scaled by 1.01, warm started from the first result and state), and the NCP ε_abs reached; then
 * the median time of one dense Cholesky of a 3nc x 3nc matrix. Output: Markdown tables. Run: make
 * bench (or build/bench/bench/solvers [repeats]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/problem_io.h"
#include "../tests/contact_problems.h"
#include "core/arena.h"
#include "core/linalg.h"
#include "bench_util.h"
#include "moreau/contact.h"

#define N_PROBLEMS 6
#define MAX_REPEATS 101

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  return x[n / 2];
}

/* the problem set */
static const char *build_problem(cp_problem *cp, int k) {
  double ones[4] = {1, 1, 1, 1}, hl[2] = {1e-3, 1e3};
  switch (k) {
  case 0:
    cp_single(cp, 1.0, 0.1, 0.0, -9.81e-3, 0.5);
    return "1 contact, sliding";
  case 1:
    cp_stack(cp, 1, ones, 0.5);
    return "box, 4 contacts";
  case 2:
    cp_stack(cp, 2, ones, 0.5);
    return "stack of 2, 8 contacts";
  case 3:
    cp_stack(cp, 3, ones, 0.5);
    return "stack of 3, 12 contacts";
  case 4:
    cp_stack(cp, 4, ones, 0.5);
    return "stack of 4, 16 contacts";
  default:
    cp_stack(cp, 2, hl, 0.5);
    return "heavy on light 1e6, 8 contacts";
  }
}

typedef struct {
  int iterations, converged;
  double time_us, eps_model, eps_abs;
  mr_status status;
} run;

/* median over repeats of one solve, cold or warm from (lambda0, state0) */
static run bench_one(const char *name, const mr_contact_problem *p, mr_arena *a, int repeats,
                     const double *lambda0, const mr_solver_state *state0, double *lambda,
                     mr_solver_state *state) {
  double times[MAX_REPEATS], c[CP_MAX_N];
  static double y0[CP_MAX_N];
  mr_solver_settings s = mr_solver_settings_default();
  s.warm_start = lambda0 != NULL;
  run r = {0};
  if (state0) memcpy(y0, state0->y, sizeof y0);
  for (int k = 0; k < repeats; ++k) {
    mr_solver_stats st;
    mr_error err;
    if (lambda0) memcpy(lambda, lambda0, CP_MAX_N * sizeof(double));
    if (state0) {
      double *y = state->y;
      *state = *state0;
      state->y = y;
      memcpy(state->y, y0, sizeof y0);
    } else {
      state->valid = 0, state->rho = 0.0, state->eig_max = state->eig_min = 0.0;
    }
    r.status = mr_solve(name, p, &s, state, a, lambda, c, &st, &err);
    times[k] = st.time_us;
    r.iterations = st.iterations, r.converged = st.converged;
    r.eps_model = st.eps_model, r.eps_abs = st.eps_abs;
  }
  r.time_us = median(times, repeats);
  return r;
}

/* the solver table for one problem p, and its "next step" variant next */
static void bench_table(const char *title, const mr_contact_problem *p,
                        const mr_contact_problem *next, int repeats) {
  static double lam_cold[CP_MAX_N], lam_warm[CP_MAX_N], y_cold[CP_MAX_N], y_warm[CP_MAX_N];
  mr_arena a;
  if (mr_arena_init(&a, mr_solver_work_size(p->nc, p->nv)) != 0) return;
  printf("\n%s (nc = %d)\n\n", title, p->nc);
  printf("| solver | conv | cold iters | cold µs | ε_model | ε_abs (NCP) | warm iters | warm µs "
         "| next iters | next µs |\n");
  printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    mr_solver_state cold_state = {.cap = CP_MAX_N, .y = y_cold};
    mr_solver_state warm_state = {.cap = CP_MAX_N, .y = y_warm};
    run cold = bench_one(name, p, &a, repeats, NULL, NULL, lam_cold, &cold_state);
    run warm = bench_one(name, p, &a, repeats, lam_cold, &cold_state, lam_warm, &warm_state);
    run step = bench_one(name, next, &a, repeats, lam_cold, &cold_state, lam_warm, &warm_state);
    if (cold.status != MR_OK) {
      printf("| %s | error %s | | | | | | | | |\n", name, mr_status_name(cold.status));
      continue;
    }
    printf("| %s | %s | %d | %.1f | %.1e | %.1e | %d | %.1f | %d | %.1f |\n", name,
           cold.converged ? "yes" : "no", cold.iterations, cold.time_us, cold.eps_model,
           cold.eps_abs, warm.iterations, warm.time_us, step.iterations, step.time_us);
  }
  mr_arena_destroy(&a);
}

/* a hand-built problem; the "next step" has g scaled by 1.01, whose solution is 1.01 λ (the
 * problem is homogeneous) */
static void bench_problem(int k, int repeats) {
  static cp_problem cp, next;
  const char *title = build_problem(&cp, k);
  build_problem(&next, k);
  for (int i = 0; i < 3 * next.p.nc; ++i)
    next.g[i] *= 1.01;
  bench_table(title, &cp.p, &next.p, repeats);
}

/* a problem saved from a robot simulation (tests/fixtures, the moreau solve format) */
static void bench_file(const char *path, const char *title, int repeats) {
  mr_problem_file f, g;
  mr_error err;
  if (mr_problem_file_load(path, &f, &err) || mr_problem_file_load(path, &g, &err)) {
    printf("\n%s: %s (skipped)\n", title, err.msg);
    return;
  }
  if (3 * f.problem.nc > CP_MAX_N) {
    printf("\n%s: %d contacts, more than the benchmark's %d (skipped)\n", title, f.problem.nc,
           CP_MAX_NC);
  } else {
    for (int i = 0; i < 3 * g.problem.nc; ++i)
      g.g[i] *= 1.01;
    bench_table(title, &f.problem, &g.problem, repeats);
  }
  mr_problem_file_free(&f);
  mr_problem_file_free(&g);
}

/* median time of one Cholesky of G + I (n = 3nc) */
static void bench_cholesky(int repeats) {
  static cp_problem cp;
  static double A[CP_MAX_N * CP_MAX_N];
  printf("\nDense Cholesky of the 3nc x 3nc matrix G + I (mr_cholesky)\n\n");
  printf("| nc | n = 3nc | µs |\n|---:|---:|---:|\n");
  for (int k = 0; k < N_PROBLEMS - 1; ++k) {
    build_problem(&cp, k);
    int n = 3 * cp.p.nc, inner = 2000 / n;
    double times[MAX_REPEATS];
    for (int r = 0; r < repeats; ++r) {
      double t0 = bench_now_us();
      for (int j = 0; j < inner; ++j) {
        memcpy(A, cp.G, (size_t)n * n * sizeof(double));
        for (int i = 0; i < n; ++i)
          A[i * n + i] += 1.0;
        mr_cholesky(A, n);
      }
      times[r] = (bench_now_us() - t0) / inner;
    }
    printf("| %d | %d | %.2f |\n", cp.p.nc, n, median(times, repeats));
  }
}

int main(int argc, char **argv) {
  int repeats = argc > 1 ? atoi(argv[1]) : 21;
  if (repeats < 1) repeats = 1;
  if (repeats > MAX_REPEATS) repeats = MAX_REPEATS;
  printf("Contact solvers: eps_abs = 1e-6 on each solver's own criterion, max 10000 iterations, "
         "median of %d runs; warm = solved again from its own result and state; next = g scaled by "
         "1.01, warm started from the first result and state\n",
         repeats);
  for (int k = 0; k < N_PROBLEMS; ++k)
    bench_problem(k, repeats);
  /* contact problems of the robots, saved from simulations (moreau run --dump-problems) */
  bench_file("tests/fixtures/solo_stand_step100.json", "Solo-12 standing, step 100", repeats);
  bench_file("tests/fixtures/talos_stand_step8.json", "TALOS standing, step 8", repeats);
  bench_file("tests/fixtures/allegro_hold_step100.json", "Allegro hand holding a ball, step 100",
             repeats);
  bench_cholesky(repeats);
  return 0;
}
