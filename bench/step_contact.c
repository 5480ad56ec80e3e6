/* Cost and accuracy of the Jacobians of a simulator step with contacts (mr_sim_step_derivatives)
 * against central differences of the step, on shipped scenes with their robots in contact, and
 * the Allegro hand holding a ball (contacts between two moving bodies; timed only: mr_sim hands
 * a free body's velocity back in the frame of q⁺, which the Jacobians do not follow,
 * docs/derivatives.md):
 *
 *   step          one mr_sim_step (the unit of the ratios)
 *   step derivs   mr_sim_step_derivatives: the step and its six Jacobians in q, v, τ
 *   FD step       the same Jacobians by central differences of mr_sim_step: 2 (2 nv + n_act)
 *                 steps (set the perturbed state, step), n_act the dofs that take a torque.
 *                 mr_sim_set_state drops the solver's warm start, so these steps solve cold;
 *                 the ratio is also given against 2 (2 nv + n_act) times a warm step, the
 *                 least any differencing of the step could cost
 *
 * Timings: the state at t = 0.1 s of each scene, timed in interleaved rounds (each round times
 * every function in turn), 30 rounds; median and 10th percentile in µs per call.
 *
 * Accuracy: with the solver converged to ε 1e-12 (eps_rel 0), the largest error of central
 * differences with step h over all entries of ∂v⁺/∂(q, v, τ), relative to 1 + |entry|, against
 * (a) the analytical Jacobians and (b) Richardson's combination of the differences at 2h and h
 * with h = 1e-6 (the reference of the tests, tests/test_derivatives.c), for h = 1e-2 … 1e-9. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "moreau/control.h"
#include "moreau/sim_derivatives.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

enum { NROUNDS = 30, NMAX = 64 };

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  mr_sim *sim;
  const mr_model *m;
  double q[NMAX], v[NMAX], t;
  int act[NMAX], nact; /* the dofs that take a joint torque */
} bench_case;

/* v⁺ of the step from the case's state moved along input k by h (k < nv: q ⊕ h e_k; < 2nv: v;
 * else the torque of act[k − 2nv]) */
static void moved_step(bench_case *c, int k, double h, double *vn) {
  const mr_model *m = c->m;
  const int nv = m->nv;
  double q[NMAX], v[NMAX], e[NMAX] = {0};
  memcpy(q, c->q, (size_t)m->nq * sizeof(double));
  memcpy(v, c->v, (size_t)nv * sizeof(double));
  if (k < nv) {
    e[k] = 1.0;
    mr_integrate(m, c->q, e, h, q);
  } else if (k < 2 * nv) {
    v[k - nv] += h;
  }
  mr_sim_set_time(c->sim, c->t);
  mr_sim_set_state(c->sim, q, v, NULL);
  if (k >= 2 * nv) mr_sim_set_joint_torque(c->sim, c->act[k - 2 * nv], h, NULL);
  mr_sim_step(c->sim, NULL);
  if (k >= 2 * nv) mr_sim_set_joint_torque(c->sim, c->act[k - 2 * nv], 0.0, NULL);
  memcpy(vn, mr_sim_v(c->sim), (size_t)nv * sizeof(double));
}

/* ∂v⁺ by central differences into D (nv x (2 nv + nact), row-major) */
static void fd_jacobian(bench_case *c, double h, double *D) {
  const int nv = c->m->nv, ni = 2 * nv + c->nact;
  double vp[NMAX], vm[NMAX];
  for (int k = 0; k < ni; ++k) {
    moved_step(c, k, h, vp);
    moved_step(c, k, -h, vm);
    for (int r = 0; r < nv; ++r)
      D[r * ni + k] = (vp[r] - vm[r]) / (2 * h);
  }
}

/* the analytical ∂v⁺ in the layout of fd_jacobian */
static void analytical(bench_case *c, mr_sim_derivatives *x, double *D) {
  const int nv = c->m->nv, ni = 2 * nv + c->nact;
  mr_sim_set_time(c->sim, c->t);
  mr_sim_set_state(c->sim, c->q, c->v, NULL);
  mr_sim_step_derivatives(c->sim, x, NULL);
  const mr_step_derivatives *sd = mr_sim_derivatives_get(x);
  for (int r = 0; r < nv; ++r)
    for (int k = 0; k < ni; ++k)
      D[r * ni + k] = k < nv       ? sd->dvn_dq[r * nv + k]
                      : k < 2 * nv ? sd->dvn_dv[r * nv + k - nv]
                                   : sd->dvn_dtau[r * nv + c->act[k - 2 * nv]];
}

static double max_rel(const double *A, const double *B, int n) {
  double e = 0.0;
  for (int i = 0; i < n; ++i)
    e = fmax(e, fabs(A[i] - B[i]) / (1.0 + fabs(B[i])));
  return e;
}

/* the scene file's text with `extra` appended (keys of its last robot, which ends the file) */
static int load_scene(const char *path, const char *extra, mr_scene *sc, mr_error *e) {
  if (!extra) return mr_scene_load(path, sc, e);
  static char text[1 << 16];
  FILE *f = fopen(path, "r");
  if (!f) return mr_error_set(e, MR_ERR_IO, "%s: cannot open", path);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  if (n + strlen(extra) >= sizeof text) return mr_error_set(e, MR_ERR_IO, "%s: too long", path);
  strcpy(text + n, extra);
  return mr_scene_parse(text, path, "scenes", sc, e);
}

static int setup(bench_case *c, const char *path, const char *extra, mr_scene *sc,
                 int converged) {
  mr_error e;
  if (load_scene(path, extra, sc, &e) != MR_OK) {
    printf("%s: %s\n", path, e.msg);
    return -1;
  }
  if (converged) sc->settings.eps_abs = 1e-12, sc->settings.eps_rel = 0.0,
                 sc->settings.max_iter = 1000000;
  c->sim = mr_sim_from_scene(sc, NULL, &e);
  c->m = sc->model;
  if (!c->sim || c->m->nv > NMAX) return -1;
  for (int k = 0; k < 100; ++k)
    mr_sim_step(c->sim, NULL);
  memcpy(c->q, mr_sim_q(c->sim), (size_t)c->m->nq * sizeof(double));
  memcpy(c->v, mr_sim_v(c->sim), (size_t)c->m->nv * sizeof(double));
  c->t = mr_sim_time(c->sim);
  c->nact = 0;
  for (int k = 0; k < c->m->nv; ++k)
    if (mr_sim_set_joint_torque(c->sim, k, 0.0, NULL) == MR_OK) c->act[c->nact++] = k;
  return 0;
}

static void bench_scene(const char *name, const char *path, const char *extra, int accuracy) {
  static double D[NMAX * 3 * NMAX], A[NMAX * 3 * NMAX], R1[NMAX * 3 * NMAX], R2[NMAX * 3 * NMAX];
  static double t[3][NROUNDS];
  mr_scene sc;
  bench_case c;
  if (setup(&c, path, extra, &sc, 0)) return;
  mr_error e;
  mr_sim_derivatives *x = mr_sim_derivatives_create(c.sim, &e);
  if (!x) {
    printf("\n%s: %s\n", name, e.msg);
    mr_sim_free(c.sim);
    mr_scene_free(&sc);
    return;
  }
  const int nv = c.m->nv, ni = 2 * nv + c.nact;
  for (int round = 0; round < NROUNDS; ++round) {
    double t0 = bench_now_us();
    mr_sim_set_time(c.sim, c.t);
    mr_sim_set_state(c.sim, c.q, c.v, NULL);
    mr_sim_step(c.sim, NULL);
    double t1 = bench_now_us();
    analytical(&c, x, A);
    double t2 = bench_now_us();
    fd_jacobian(&c, 1e-6, D);
    double t3 = bench_now_us();
    t[0][round] = t1 - t0, t[1][round] = t2 - t1, t[2][round] = t3 - t2;
  }
  printf("\n%s (nv %d, %d contacts and constraints at t = %.2f s, %d torque inputs)\n", name, nv,
         mr_sim_last(c.sim)->ncontacts + mr_sim_last(c.sim)->nconstraints, c.t, c.nact);
  const char *names[3] = {"step", "step derivs", "FD step (central)"};
  double ref = 0.0, med[3];
  for (int f = 0; f < 3; ++f) {
    qsort(t[f], NROUNDS, sizeof t[f][0], cmp);
    med[f] = t[f][NROUNDS / 2];
    if (f == 0) ref = med[f];
    printf("  %-18s %10.1f %10.1f %9.1f\n", names[f], med[f], t[f][NROUNDS / 10], med[f] / ref);
  }
  printf("  FD / analytical: %.1f; against 2 (2 nv + n_act) warm steps (%.0f µs): %.1f\n",
         med[2] / med[1], 2.0 * ni * med[0], 2.0 * ni * med[0] / med[1]);
  mr_sim_derivatives_free(x);
  mr_sim_free(c.sim);
  mr_scene_free(&sc);
  /* accuracy, the solver converged (cold ncp-pgs to 1e-12 on TALOS's ten blocks takes minutes
   * per Jacobian: not run there) */
  if (!accuracy || setup(&c, path, extra, &sc, 1)) return;
  x = mr_sim_derivatives_create(c.sim, &e);
  if (!x) {
    printf("  %s\n", e.msg);
    mr_sim_free(c.sim);
    mr_scene_free(&sc);
    return;
  }
  analytical(&c, x, A);
  fd_jacobian(&c, 2e-6, R2);
  fd_jacobian(&c, 1e-6, R1);
  for (int i = 0; i < nv * ni; ++i)
    R1[i] = (4 * R1[i] - R2[i]) / 3;
  printf("  analytical vs Richardson (h = 1e-6): %.1e\n", max_rel(A, R1, nv * ni));
  printf("  %8s %14s %14s\n", "h", "FD vs analyt.", "FD vs Richards.");
  for (double h = 1e-2; h > 5e-10; h /= 10) {
    fd_jacobian(&c, h, D);
    printf("  %8.0e %14.1e %14.1e\n", h, max_rel(D, A, nv * ni), max_rel(D, R1, nv * ni));
  }
  mr_sim_derivatives_free(x);
  mr_sim_free(c.sim);
  mr_scene_free(&sc);
}

/* argv[1], when given, selects the scenes whose name contains it */
int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *only = argc > 1 ? argv[1] : "";
  printf("Jacobians of a step with contacts: µs per call (median, 10th percentile of %d rounds, "
         "ratio to one step)\n",
         NROUNDS);
  /* TALOS's URDF gives its joints friction, whose derivatives are not implemented
   * (docs/derivatives.md): its scene is run with joint_friction_scale 0 */
  static const struct {
    const char *name, *path, *extra;
    int accuracy;
  } scenes[] = {
      {"Solo-12 standing", "scenes/solo_stand.yaml", NULL, 1},
      {"TALOS standing, no joint friction", "scenes/talos_stand.yaml",
       "    joint_friction_scale: 0\n", 0},
      {"Allegro holding a ball", "scenes/b8_allegro_hold.yaml", NULL, 0}};
  for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; ++k)
    if (strstr(scenes[k].name, only))
      bench_scene(scenes[k].name, scenes[k].path, scenes[k].extra, scenes[k].accuracy);
  return 0;
}
