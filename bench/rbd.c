/* Rigid-body dynamics timings on the reference robots (Solo-12, Talos reduced, Allegro hand):
 * forward kinematics, RNEA, CRBA, ABA, the tree-sparse LDLᵀ factorisation of M and one M⁻¹
 * solve, in µs per call, against Pinocchio's figures on the same machine. For each function,
 * 100 random states × 5 rounds give 500 samples, each the mean of a batch of 20 calls
 * (clock_gettime MONOTONIC); the table shows their median and 10th percentile. The calls of a
 * batch that take q each take the next state's: a call at the q of the last placements reuses
 * them (moreau/dynamics.h), which a batch at one state would time instead of the algorithm. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "moreau/dynamics.h"
#include "moreau/urdf.h"

enum { NSTATES = 100, NROUNDS = 5, BATCH = 20, NSAMPLES = NSTATES * NROUNDS, NMAX = 64 };
enum { FK, FKVA, RNEA, CRBA, ABA, CHOL, SOLVE, NFUNCS };

static const char *const func_names[NFUNCS] = {"FK (q)", "FK (q,v,a)", "RNEA",      "CRBA",
                                               "ABA",    "LDLT of M",  "one M^-1 x"};

typedef struct {
  const char *name, *path;
  int floating;
  double pinocchio[NFUNCS]; /* µs per call; 0 where no figure */
  int inertia_fix;          /* the file breaks A + B >= C on some links (docs/robots.md): the
                               repaired tensors change values, not the cost of any algorithm */
} robot;

static const robot robots[] = {
    {"Solo-12",
     "robots/solo_description/robots/solo12.urdf",
     1,
     {0.50, 0, 2.0, 1.0, 4.6, 0.42, 0.23},
     0},
    {"Talos",
     "robots/talos_data/robots/talos_reduced.urdf",
     1,
     {1.30, 0, 4.9, 2.75, 11.3, 1.55, 0.63},
     1},
    {"Allegro",
     "robots/allegro_hand_description/urdf/allegro_right_hand.urdf",
     0,
     {0.58, 0, 2.3, 1.06, 4.8, 0.14, 0.13},
     1},
};

typedef struct {
  double q[NSTATES][NMAX], v[NSTATES][NMAX], a[NSTATES][NMAX], tau[NSTATES][NMAX];
} states;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) {
  return (double)(splitmix(s) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

/* one batch of BATCH calls of function f at state k; returns µs per call */
static double batch(int f, const mr_model *m, mr_data *d, const states *S, int k) {
  double x[NMAX];
  if (f == CHOL || f == SOLVE) mr_crba(m, d, S->q[k]);
  if (f == SOLVE) mr_ldlt_factor(m, d, NULL);
  memcpy(x, S->tau[k], sizeof x);
  double t0 = bench_now_us();
  for (int r = 0, j = k; r < BATCH; ++r, j = (j + 1) % NSTATES) {
    switch (f) {
    case FK:
      mr_forward_kinematics(m, d, S->q[j], NULL, NULL);
      break;
    case FKVA:
      mr_forward_kinematics(m, d, S->q[j], S->v[j], S->a[j]);
      break;
    case RNEA:
      mr_rnea(m, d, S->q[j], S->v[j], S->a[j]);
      break;
    case CRBA:
      mr_crba(m, d, S->q[j]);
      break;
    case ABA:
      mr_aba(m, d, S->q[j], S->v[j], S->tau[j]);
      break;
    case CHOL:
      mr_ldlt_factor(m, d, NULL);
      break;
    default:
      mr_ldlt_solve(m, d, x);
      break;
    }
  }
  return (bench_now_us() - t0) / BATCH;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void bench_robot(const robot *r, const char *root) {
  char path[4600], pkg[4200];
  snprintf(path, sizeof path, "%s/%s", root, r->path);
  snprintf(pkg, sizeof pkg, "%s/..", root);
  const char *roots[1] = {pkg};
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = r->floating, o.package_roots = roots, o.npackage_roots = 1, o.collision = 0;
  o.inertia_fix = r->inertia_fix;
  mr_model *m = NULL;
  mr_error e;
  if (mr_urdf_load(path, &o, &m, &e) || m->nv > NMAX) {
    printf("%s: cannot load (%s)\n", r->name, m ? "too many dofs" : e.msg);
    mr_model_free(m);
    return;
  }
  mr_data *d = mr_data_create(m);
  static states S;
  uint64_t seed = 12345;
  for (int k = 0; k < NSTATES; ++k) {
    mr_random_configuration(m, &seed, S.q[k]);
    for (int i = 0; i < m->nv; ++i)
      S.v[k][i] = uniform(&seed), S.a[k][i] = uniform(&seed), S.tau[k][i] = uniform(&seed);
  }
  printf("\n%s (nq %d, nv %d, bodies %d)\n", r->name, m->nq, m->nv, m->nbodies - 1);
  printf("  %-12s %9s %9s %10s %7s\n", "function", "median", "p10", "Pinocchio", "ratio");
  static double t[NSAMPLES];
  for (int f = 0; f < NFUNCS; ++f) {
    for (int k = 0; k < NSTATES; ++k)
      batch(f, m, d, &S, k); /* warm-up */
    for (int round = 0; round < NROUNDS; ++round)
      for (int k = 0; k < NSTATES; ++k)
        t[round * NSTATES + k] = batch(f, m, d, &S, k);
    qsort(t, NSAMPLES, sizeof t[0], cmp);
    double med = t[NSAMPLES / 2], p10 = t[NSAMPLES / 10], pin = r->pinocchio[f];
    if (pin > 0)
      printf("  %-12s %9.3f %9.3f %10.2f %7.2f\n", func_names[f], med, p10, pin, med / pin);
    else
      printf("  %-12s %9.3f %9.3f %10s %7s\n", func_names[f], med, p10, "-", "-");
  }
  mr_data_free(d);
  mr_model_free(m);
}

int main(void) {
  const char *shared = getenv("MOREAU_SHARED");
  static char root[4096], probe[4200];
  snprintf(root, sizeof root, "%s/reference/example-robot-data", shared ? shared : "../shared");
  snprintf(probe, sizeof probe, "%s/LICENSE", root);
  FILE *f = fopen(probe, "r");
  if (!f) {
    printf("rbd: reference robots absent (%s): nothing to time\n", root);
    return 0;
  }
  fclose(f);
  printf("rigid-body dynamics, µs per call (median and 10th percentile of %d samples, each the "
         "mean of %d calls)\n",
         NSAMPLES, BATCH);
  for (size_t k = 0; k < sizeof robots / sizeof robots[0]; ++k)
    bench_robot(&robots[k], root);
  return 0;
}
