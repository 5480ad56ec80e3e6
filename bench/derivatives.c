/* Cost of the analytical derivatives of the dynamics against one ABA call and against finite
 * differences through the same code, on the project's robots (Solo-12 and TALOS with a
 * free-flyer, the Allegro hand):
 *
 *   ABA                one mr_aba (the unit of the ratios)
 *   RNEA derivs        mr_rnea_derivatives: ∂τ/∂q, ∂τ/∂v (and M, τ)
 *   ABA derivs         mr_aba_derivatives: ∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ, with ∂τ/∂q, ∂τ/∂v at a = q̈:
 *                      the five matrices
 *   FD RNEA (central)  ∂τ/∂q, ∂τ/∂v by central differences: 4 nv calls of mr_rnea
 *   FD ABA (forward)   ∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ by forward differences: 3 nv + 1 calls of mr_aba
 *   FD ABA (central)   the same by central differences: 6 nv calls of mr_aba
 *   step               one mr_step_free (Δt = 1 ms, PD gains k_p = 10, k_d = 0.3 on the 1-dof
 *                      joints)
 *   step derivs        mr_step_free_derivatives: the step and its six Jacobians
 *   FD step (central)  the six Jacobians by central differences of mr_step_free (6 nv steps,
 *                      ∂q⁺ through mr_difference)
 *
 * Timings are interleaved: each round visits every state and, at each state, times a batch of
 * calls of every function in turn, so a change of load on the shared machine falls on all of them
 * alike. 50 states × 5 rounds give 250 samples per function, each the mean of a batch; the table
 * shows the median and the 10th percentile in µs per call, and the ratio of the medians to ABA's
 * (to one step for the step rows). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "moreau/sim_derivatives.h"
#include "moreau/urdf.h"

enum { NSTATES = 50, NROUNDS = 5, NSAMPLES = NSTATES * NROUNDS, NMAX = 64 };
enum { ABA, RNEA_D, ABA_D, FD_RNEA, FD_ABA_FWD, FD_ABA, STEP, STEP_D, FD_STEP, NFUNCS };

static const char *const func_names[NFUNCS] = {
    "ABA",  "RNEA derivs", "ABA derivs",       "FD RNEA (central)", "FD ABA (forward)",
    "FD ABA (central)", "step", "step derivs", "FD step (central)"};
/* calls per batch: many for the cheap functions, one for the finite differences (a batch of a
 * millisecond or more is often cut by the scheduler on a loaded machine) */
static const int batch_calls[NFUNCS] = {20, 10, 10, 1, 1, 1, 10, 5, 1};

typedef struct {
  const char *name, *path;
  int floating;
} robot;

static const robot robots[] = {
    {"Solo-12", "robots/solo12/solo12.urdf", 1},
    {"TALOS", "robots/talos/talos.urdf", 1},
    {"Allegro", "robots/allegro/allegro_right_hand.urdf", 0},
};

typedef struct {
  double q[NSTATES][NMAX], v[NSTATES][NMAX], a[NSTATES][NMAX], tau[NSTATES][NMAX];
} states;

/* the finite-difference Jacobians' storage */
static double J[3][NMAX * NMAX];

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) {
  return (double)(splitmix(s) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

/* column k of J from f(x + h e_k) and f(x − h e_k) (central) or f(x) (forward, fm = f0) */
static void fd_column(double *Jm, int nv, int k, const double *fp, const double *fm, double den) {
  for (int i = 0; i < nv; ++i)
    Jm[i * nv + k] = (fp[i] - fm[i]) / den;
}

/* ∂τ/∂q and ∂τ/∂v of RNEA by central differences with step h */
static void fd_rnea(const mr_model *m, mr_data *d, const double *q, const double *v,
                    const double *a, double h) {
  const int nv = m->nv;
  double qp[NMAX], vp[NMAX], e[NMAX] = {0}, fp[NMAX], fm[NMAX];
  for (int k = 0; k < nv; ++k) {
    e[k] = 1.0;
    mr_integrate(m, q, e, h, qp);
    memcpy(fp, mr_rnea(m, d, qp, v, a), (size_t)nv * sizeof(double));
    mr_integrate(m, q, e, -h, qp);
    memcpy(fm, mr_rnea(m, d, qp, v, a), (size_t)nv * sizeof(double));
    fd_column(J[0], nv, k, fp, fm, 2 * h);
    e[k] = 0.0;
    memcpy(vp, v, (size_t)nv * sizeof(double));
    vp[k] = v[k] + h;
    memcpy(fp, mr_rnea(m, d, q, vp, a), (size_t)nv * sizeof(double));
    vp[k] = v[k] - h;
    memcpy(fm, mr_rnea(m, d, q, vp, a), (size_t)nv * sizeof(double));
    fd_column(J[1], nv, k, fp, fm, 2 * h);
  }
}

/* ABA at x moved by t along input k of q (w = 0), v (1) or τ (2) */
static void aba_moved(const mr_model *m, mr_data *d, const double *q, const double *v,
                      const double *tau, int w, int k, double t, double *out) {
  double qp[NMAX], vp[NMAX], up[NMAX], e[NMAX] = {0};
  const int nv = m->nv;
  memcpy(vp, v, (size_t)nv * sizeof(double));
  memcpy(up, tau, (size_t)nv * sizeof(double));
  e[k] = 1.0;
  if (w == 0) mr_integrate(m, q, e, t, qp);
  if (w == 1) vp[k] += t;
  if (w == 2) up[k] += t;
  memcpy(out, mr_aba(m, d, w == 0 ? qp : q, vp, up), (size_t)nv * sizeof(double));
}

/* the three ABA Jacobians by central (central = 1) or forward differences with step h */
static void fd_aba(const mr_model *m, mr_data *d, const double *q, const double *v,
                   const double *tau, double h, int central) {
  const int nv = m->nv;
  double f0[NMAX], fp[NMAX], fm[NMAX];
  if (!central) memcpy(f0, mr_aba(m, d, q, v, tau), (size_t)nv * sizeof(double));
  for (int w = 0; w < 3; ++w)
    for (int k = 0; k < nv; ++k) {
      aba_moved(m, d, q, v, tau, w, k, h, fp);
      if (central) aba_moved(m, d, q, v, tau, w, k, -h, fm);
      fd_column(J[w], nv, k, fp, central ? fm : f0, central ? 2 * h : h);
    }
}

/* the step's parameters (set per robot) and derivatives */
static mr_step_params step_params;
static mr_step_derivatives *step_d;

/* the six step Jacobians by central differences with step h */
static void fd_step(const mr_model *m, mr_data *d, const double *q, const double *v,
                    const double *tau, double h) {
  const int nv = m->nv;
  double q0n[NMAX], v0n[NMAX], qp[NMAX], vp[NMAX], up[NMAX], e[NMAX] = {0};
  double qn[2][NMAX], vn[2][NMAX], dq[2][NMAX];
  mr_step_free(m, d, &step_params, q, v, tau, q0n, v0n, NULL);
  for (int w = 0; w < 3; ++w)
    for (int k = 0; k < nv; ++k)
      for (int s = 0; s < 2; ++s) {
        const double t = s ? -h : h;
        memcpy(vp, v, (size_t)nv * sizeof(double));
        memcpy(up, tau, (size_t)nv * sizeof(double));
        e[k] = 1.0;
        if (w == 0) mr_integrate(m, q, e, t, qp);
        e[k] = 0.0;
        if (w == 1) vp[k] += t;
        if (w == 2) up[k] += t;
        mr_step_free(m, d, &step_params, w == 0 ? qp : q, vp, up, qn[s], vn[s], NULL);
        mr_difference(m, q0n, qn[s], dq[s]);
        if (s) {
          fd_column(J[w], nv, k, dq[0], dq[1], 2 * h);
          fd_column(J[w], nv, k, vn[0], vn[1], 2 * h);
        }
      }
}

/* one batch of function f at state k; µs per call */
static double batch(int f, const mr_model *m, mr_data *d, mr_derivatives *dd, const states *S,
                    int k) {
  double qn[NMAX], vn[NMAX];
  const int n = batch_calls[f];
  double t0 = bench_now_us();
  for (int r = 0; r < n; ++r) {
    switch (f) {
    case ABA:
      mr_aba(m, d, S->q[k], S->v[k], S->tau[k]);
      break;
    case RNEA_D:
      mr_rnea_derivatives(m, d, dd, S->q[k], S->v[k], S->a[k]);
      break;
    case ABA_D:
      mr_aba_derivatives(m, d, dd, S->q[k], S->v[k], S->tau[k], NULL);
      break;
    case FD_RNEA:
      fd_rnea(m, d, S->q[k], S->v[k], S->a[k], 1e-6);
      break;
    case STEP:
      mr_step_free(m, d, &step_params, S->q[k], S->v[k], S->tau[k], qn, vn, NULL);
      break;
    case STEP_D:
      mr_step_free_derivatives(m, d, step_d, &step_params, S->q[k], S->v[k], S->tau[k], qn, vn,
                               NULL);
      break;
    case FD_STEP:
      fd_step(m, d, S->q[k], S->v[k], S->tau[k], 1e-6);
      break;
    default:
      fd_aba(m, d, S->q[k], S->v[k], S->tau[k], 1e-6, f == FD_ABA);
      break;
    }
  }
  return (bench_now_us() - t0) / n;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void random_states(const mr_model *m, states *S) {
  uint64_t seed = 12345;
  for (int k = 0; k < NSTATES; ++k) {
    mr_random_configuration(m, &seed, S->q[k]);
    for (int i = 0; i < m->nv; ++i)
      S->v[k][i] = uniform(&seed), S->a[k][i] = uniform(&seed), S->tau[k][i] = uniform(&seed);
  }
}

static void bench_robot(const robot *r) {
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = r->floating, o.collision = 0;
  mr_model *m = NULL;
  mr_error e;
  if (mr_urdf_load(r->path, &o, &m, &e) || m->nv > NMAX) {
    printf("%s: cannot load (%s)\n", r->name, m ? "too many dofs" : e.msg);
    mr_model_free(m);
    return;
  }
  mr_data *d = mr_data_create(m);
  mr_derivatives *dd = mr_derivatives_create(m);
  static double kp[NMAX], kd[NMAX], target[NMAX];
  for (int i = 0; i < m->nv; ++i) {
    const int one = m->bodies[m->dof_body[i]].joint.nv == 1;
    kp[i] = one ? 10.0 : 0.0, kd[i] = one ? 0.3 : 0.0, target[i] = 0.0;
  }
  step_params = (mr_step_params){1e-3, kp, kd, target};
  step_d = mr_step_derivatives_create(m);
  static states S;
  static double t[NFUNCS][NSAMPLES];
  random_states(m, &S);
  for (int f = 0; f < NFUNCS; ++f)
    batch(f, m, d, dd, &S, 0); /* warm-up */
  for (int round = 0; round < NROUNDS; ++round)
    for (int k = 0; k < NSTATES; ++k)
      for (int f = 0; f < NFUNCS; ++f)
        t[f][round * NSTATES + k] = batch(f, m, d, dd, &S, k);
  printf("\n%s (nq %d, nv %d, bodies %d)\n", r->name, m->nq, m->nv, m->nbodies - 1);
  printf("  %-18s %9s %9s %9s\n", "function", "median", "p10", "/ ref");
  double aba = 0.0;
  for (int f = 0; f < NFUNCS; ++f) {
    qsort(t[f], NSAMPLES, sizeof t[f][0], cmp);
    double med = t[f][NSAMPLES / 2], p10 = t[f][NSAMPLES / 10];
    if (f == ABA || f == STEP) aba = med; /* the reference: ABA, then one step */
    printf("  %-18s %9.3f %9.3f %9.2f\n", func_names[f], med, p10, med / aba);
  }
  mr_derivatives_free(dd);
  mr_step_derivatives_free(step_d);
  mr_data_free(d);
  mr_model_free(m);
}

int main(void) {
  printf("derivatives of the dynamics, µs per call (median and 10th percentile of %d samples, "
         "interleaved)\n",
         NSAMPLES);
  for (size_t k = 0; k < sizeof robots / sizeof robots[0]; ++k)
    bench_robot(&robots[k]);
  return 0;
}
