/* The block-sparse G against the dense one on the island problems of columns of k cubes resting
 * on a plane (k = 3 … 16: 4k contacts, each interface coupled to its neighbours, a
 * block-tridiagonal G, about 3/k of its blocks stored; k = 2 is a dense island, 12 dofs):
 *   pgs     one ncp-pgs sweep (200 sweeps per solve, no stopping), dense G against Gb;
 *   factor  ADMM's work per value of ρ, one factorisation of G + R + ρI and 20 iterations'
 *           solves and products with G: the dense Cholesky (src/core/linalg.c) against the
 *           sparse LDLᵀ (CHOLMOD, src/contact/sparse_chol.c), and the sparse one on the same
 *           matrix with every block stored (a fully coupled island, as a robot's);
 *   admm    ccp-admm solves to 1e-8 from cold, dense G against Gb (factored sparse when
 *           mr_sparse_chol_pays, densely below);
 *   newton  ccp-newton solves (default settings) from cold, dense G (pivoted Cholesky of G,
 *           dense Hessians) against Gb (the Newton systems I + SᵀGS factored sparse when
 *           mr_sparse_chol_pays, a dense copy below);
 *   parts   ncp-stagproj's work per value of ρ: its normal and tangential subproblem matrices
 *           A_NN + ρI, A_TT + ρI (nc and 2nc rows) filled and factored, and ADMM_ITERS solves
 *           with each, densely (filled from the dense G, src/core/linalg.c's Cholesky) against
 *           the sparse LDLᵀ of the two parts of G (its pattern analysed beforehand);
 *   stagproj, hybrid  ncp-stagproj and ncp-hybrid solves to 1e-8 from cold, at most
 *           NCP_ITERS iterations (the columns' staggered projections converge slowly: the time
 *           per iteration is what is compared), dense G against Gb (from the crossover on:
 *           ncp-stagproj's subproblems factored sparse; ncp-hybrid's stages 1–3 on the blocks,
 *           its Newton stages on a dense copy up to 32 contacts and left out above).
 * Medians over REPS runs, µs; ratios dense / sparse (> 1: sparse faster). The threshold
 * MR_SPARSE_G_MIN_NC (contact.h) comes from the pgs rows, MR_SPARSE_CHOL_MIN_NC and
 * MR_SPARSE_CHOL_MAX_FILL from the factor rows (and the parts rows for ncp-stagproj). Columns of
 * BIG_K cubes and more are timed over BIG_REPS runs (a dense ncp-hybrid solve of 256 contacts
 * takes seconds).
 * Run: make bench (or build/bench/bench/sparse_g [k], k: one column size only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/cube_columns.h"
#include "bench_util.h"
#include "contact/sparse_chol.h"
#include "core/arena.h"
#include "core/linalg.h"
#include "integrate/islands.h"
#include "integrate/sim_internal.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define REPS 11
#define BIG_K 32
#define BIG_REPS 3
#define ADMM_ITERS 20
#define NCP_ITERS 300

static mr_sim *column(int k, mr_scene *sc) {
  static char text[65536];
  /* from BIG_K cubes on, each 0.1 mm into the one below: a tall column resting at touch never
   * has every interface in contact at once */
  cube_column(text, sizeof text, cube_scene_start(text, sizeof text), "b", k, 0.0, 0.0,
              k >= BIG_K ? 1e-4 : 0.0);
  mr_error err = {0};
  if (mr_scene_parse(text, "column.yaml", ".", sc, &err)) return fprintf(stderr, "%s\n", err.msg), NULL;
  mr_sim *s = mr_sim_from_scene(sc, "ncp-pgs", &err);
  if (!s) return fprintf(stderr, "%s\n", err.msg), NULL;
  /* to the first step with every interface in contact (one island of 4k contacts) */
  for (int t = 0; t < 400; ++t) {
    if (mr_sim_step(s, &err)) return fprintf(stderr, "%s\n", err.msg), NULL;
    if (mr_sim_last(s)->ncontacts == 4 * k && mr_contact_stage_islands(s->contacts) == 1) return s;
  }
  fprintf(stderr, "column of %d: no step with all %d contacts\n", k, 4 * k);
  return NULL;
}

/* the problem with G block-sparse: the coupled blocks (nonzero; the island's assembly leaves
 * the others exact zeros) and the diagonal, or every block (all) */
typedef struct {
  int *row, *col;
  double *val;
  mr_contact_problem p;
} block_copy;

static int make_blocks(const mr_contact_problem *p, const double *G, int all, block_copy *f) {
  int nc = p->nc, n = 3 * nc, nnzb = 0;
  f->row = malloc((size_t)(nc + 1) * sizeof(int));
  f->col = malloc((size_t)nc * nc * sizeof(int));
  f->val = malloc((size_t)9 * nc * nc * sizeof(double));
  if (!f->row || !f->col || !f->val) return -1;
  for (int i = 0; i < nc; ++i) {
    f->row[i] = nnzb;
    for (int j = 0; j < nc; ++j) {
      int nz = all || i == j;
      for (int q = 0; q < 9; ++q)
        nz |= G[(size_t)(3 * i + q / 3) * n + 3 * j + q % 3] != 0.0;
      if (!nz) continue;
      f->col[nnzb] = j;
      for (int q = 0; q < 9; ++q)
        f->val[9 * nnzb + q] = G[(size_t)(3 * i + q / 3) * n + 3 * j + q % 3];
      ++nnzb;
    }
  }
  f->row[nc] = nnzb;
  f->p = *p;
  f->p.G = NULL;
  f->p.nnzb = nnzb, f->p.Gb_row = f->row, f->p.Gb_col = f->col, f->p.Gb = f->val;
  return 0;
}

static void free_blocks(block_copy *f) {
  free(f->row), free(f->col), free(f->val);
}

/* ADMM's work per ρ, dense: factor, then ADMM_ITERS solves and products */
static double dense_factor_us(const mr_contact_problem *p, const double *G, double rho,
                              double *L, double *x, double *y) {
  int n = 3 * p->nc;
  double t0 = bench_now_us();
  memcpy(L, G, (size_t)n * n * sizeof(double));
  for (int r = 0; r < n; ++r)
    L[(size_t)r * n + r] += p->R[r] + rho;
  if (mr_cholesky(L, n)) return NAN;
  for (int it = 0; it < ADMM_ITERS; ++it) {
    mr_cholesky_solve(L, n, x);
    mr_matvec(y, G, x, n, n);
    mr_scale(x, 1.0 / (1.0 + mr_norm_inf(y, n)), n);
  }
  return bench_now_us() - t0;
}

static double sparse_factor_us(const mr_contact_problem *p, mr_sparse_chol *f, double rho,
                               double *x, double *y) {
  int n = 3 * p->nc;
  double t0 = bench_now_us();
  mr_chol_values(f, p, p->R);
  if (mr_chol_factor(f, rho)) return NAN;
  for (int it = 0; it < ADMM_ITERS; ++it) {
    mr_chol_solve(f, x);
    mr_problem_G_mul(p, x, y);
    mr_scale(x, 1.0 / (1.0 + mr_norm_inf(y, n)), n);
  }
  return bench_now_us() - t0;
}

/* ncp-stagproj's work per ρ on its two parts of G: dense (f NULL; L room for 4nc²) or sparse */
static double parts_factor_us(const mr_contact_problem *p, const double *G, mr_sparse_chol *f,
                              double rho, double *L, double *x, double *d) {
  static const mr_chol_part part[2] = {MR_CHOL_NORMAL, MR_CHOL_TANGENT};
  int nc = p->nc, n = 3 * nc;
  double t0 = bench_now_us();
  for (int t = 0; t < 2; ++t) {
    int w = t == 0 ? 1 : 2, c0 = t == 0 ? 2 : 0, m = w * nc;
    for (int r = 0; r < m; ++r)
      d[r] = p->R[3 * (r / w) + c0 + r % w];
    if (f) {
      if (mr_chol_analyze_part(f, p, part[t]) < 0) return NAN;
      mr_chol_values(f, p, d);
      if (mr_chol_factor(f, rho)) return NAN;
    } else {
      for (int r = 0; r < m; ++r)
        for (int q = 0; q < m; ++q)
          L[(size_t)r * m + q] = G[(size_t)(3 * (r / w) + c0 + r % w) * n + 3 * (q / w) + c0 + q % w];
      for (int r = 0; r < m; ++r)
        L[(size_t)r * m + r] += d[r] + rho;
      if (mr_cholesky(L, m)) return NAN;
    }
    for (int q = 0; q < m; ++q)
      x[q] = 1.0;
    for (int it = 0; it < ADMM_ITERS; ++it) {
      if (f)
        mr_chol_solve(f, x);
      else
        mr_cholesky_solve(L, m, x);
      mr_scale(x, 1.0 / (1.0 + mr_norm_inf(x, m)), m);
    }
  }
  return bench_now_us() - t0;
}

static double solve_us(const char *name, const mr_contact_problem *p, mr_solver_settings *set,
                       mr_solver_state *st, mr_arena *work, double *l, double *c, int *iters) {
  mr_solver_stats stats;
  mr_error err = {0};
  mr_zero(l, 3 * p->nc);
  double t0 = bench_now_us();
  if (mr_solve(name, p, set, st, work, l, c, &stats, &err)) {
    fprintf(stderr, "%s: %s\n", name, err.msg);
    return NAN;
  }
  *iters = stats.iterations;
  return bench_now_us() - t0;
}

int main(int argc, char **argv) {
  const int all_ks[] = {3, 4, 5, 6, 8, 12, 16, 64};
  int one_k = argc > 1 ? atoi(argv[1]) : 0; /* one column size only */
  const int *ks = one_k > 0 ? &one_k : all_ks;
  size_t nks = one_k > 0 ? 1 : sizeof all_ks / sizeof *all_ks;
  printf("block-sparse G against dense, columns of k cubes (one island of 4k contacts); medians "
         "of %d runs, µs\n\n",
         REPS);
  printf("| k | contacts | blocks stored | pgs sweep dense / sparse | ratio | factor + %d solves "
         "dense / sparse / sparse all blocks | ratio | ccp-admm dense / Gb (iterations) | "
         "ratio | ccp-newton dense / Gb (iterations) | ratio | parts factor + %d solves dense / "
         "sparse | ratio | ncp-stagproj dense / Gb (iterations) | ratio | ncp-hybrid dense / Gb "
         "(iterations) | ratio |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
         ADMM_ITERS, ADMM_ITERS);
  for (size_t ki = 0; ki < nks; ++ki) {
    int k = ks[ki];
    mr_scene sc;
    mr_sim *s = column(k, &sc);
    if (!s) return 1;
    const int *blocks;
    const mr_contact_problem *island = mr_contact_stage_island(s->contacts, 0, &blocks);
    int nc = island->nc, n = 3 * nc;
    double *G = malloc((size_t)n * n * sizeof(double)), *L = malloc((size_t)n * n * sizeof(double));
    double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
    double *l = malloc((size_t)n * sizeof(double)), *c = malloc((size_t)n * sizeof(double));
    double *sy = calloc((size_t)n, sizeof(double)), *d = malloc((size_t)n * sizeof(double));
    block_copy sparse, full;
    mr_arena work;
    if (!G || !L || !x || !y || !l || !c || !sy || !d || mr_arena_init(&work, mr_solver_work_size(nc, 0)))
      return 1;
    mr_problem_G_dense(island, G);
    if (make_blocks(island, G, 0, &sparse) || make_blocks(island, G, 1, &full)) return 1;
    const mr_contact_problem *p = &sparse.p;
    mr_contact_problem d_G = *p;
    d_G.G = G;
    double gmax = 0.0;
    for (int r = 0; r < n; ++r)
      gmax = fmax(gmax, G[(size_t)r * n + r]);
    double rho = 1e-3 * gmax;
    mr_sparse_chol *f = mr_chol_create(), *ff = mr_chol_create();
    if (!f || !ff || mr_chol_analyze(f, p) < 0 || mr_chol_analyze(ff, &full.p) < 0) return 1;
    /* PGS: 200 sweeps, no stopping */
    mr_solver_settings pgs = mr_solver_settings_default();
    pgs.max_iter = 200, pgs.eps_abs = 0.0, pgs.eps_rel = 0.0, pgs.warm_start = 0;
    mr_solver_settings admm = mr_solver_settings_default();
    admm.eps_abs = 1e-8, admm.warm_start = 0;
    mr_solver_settings newton = mr_solver_settings_default();
    newton.warm_start = 0;
    mr_solver_settings ncp = admm;
    ncp.max_iter = NCP_ITERS;
    double tp[2][REPS], tf[3][REPS], ta[2][REPS], tn[2][REPS], tq[2][REPS], ts[2][REPS];
    double th[2][REPS];
    int it_d = 0, it_s = 0, itp, in_d = 0, in_s = 0, is_d = 0, is_s = 0, ih_d = 0, ih_s = 0;
    int reps = k >= BIG_K ? BIG_REPS : REPS;
    /* the state keeps the sparse factor's analysis from solve to solve, as a step's does */
    mr_solver_state st = {.cap = n, .y = sy};
    for (int r = 0; r < reps; ++r) {
      tp[0][r] = solve_us("ncp-pgs", &d_G, &pgs, NULL, &work, l, c, &itp) / 200;
      tp[1][r] = solve_us("ncp-pgs", p, &pgs, NULL, &work, l, c, &itp) / 200;
      for (int q = 0; q < n; ++q)
        x[q] = 1.0;
      tf[0][r] = dense_factor_us(p, G, rho, L, x, y);
      for (int q = 0; q < n; ++q)
        x[q] = 1.0;
      tf[1][r] = sparse_factor_us(p, f, rho, x, y);
      for (int q = 0; q < n; ++q)
        x[q] = 1.0;
      tf[2][r] = sparse_factor_us(&full.p, ff, rho, x, y);
      ta[0][r] = solve_us("ccp-admm", &d_G, &admm, NULL, &work, l, c, &it_d);
      st.valid = 0, st.rho = 0.0, st.eig_max = st.eig_min = 0.0; /* a cold solve */
      ta[1][r] = solve_us("ccp-admm", p, &admm, &st, &work, l, c, &it_s);
      tn[0][r] = solve_us("ccp-newton", &d_G, &newton, NULL, &work, l, c, &in_d);
      st.valid = 0;
      tn[1][r] = solve_us("ccp-newton", p, &newton, &st, &work, l, c, &in_s);
      tq[0][r] = parts_factor_us(p, G, NULL, rho, L, x, d);
      tq[1][r] = parts_factor_us(p, G, st.chol ? st.chol : f, rho, L, x, d);
      ts[0][r] = solve_us("ncp-stagproj", &d_G, &ncp, NULL, &work, l, c, &is_d);
      ts[1][r] = solve_us("ncp-stagproj", p, &ncp, &st, &work, l, c, &is_s);
      th[0][r] = solve_us("ncp-hybrid", &d_G, &ncp, NULL, &work, l, c, &ih_d);
      st.valid = 0, st.rho = 0.0, st.eig_max = st.eig_min = 0.0;
      th[1][r] = solve_us("ncp-hybrid", p, &ncp, &st, &work, l, c, &ih_s);
    }
    mr_solver_state_release(&st);
    double mp[2], mf[3], ma[2], mn[2], mq[2], ms[2], mh[2];
    for (int v = 0; v < 2; ++v)
      mp[v] = bench_median(tp[v], reps), ma[v] = bench_median(ta[v], reps),
      mn[v] = bench_median(tn[v], reps), mq[v] = bench_median(tq[v], reps),
      ms[v] = bench_median(ts[v], reps), mh[v] = bench_median(th[v], reps);
    for (int v = 0; v < 3; ++v)
      mf[v] = bench_median(tf[v], reps);
    printf("| %d | %d | %d of %d | %.2f / %.2f | %.2f | %.1f / %.1f / %.1f | %.2f | %.0f / %.0f "
           "(%d / %d) | %.2f | %.0f / %.0f (%d / %d) | %.2f | %.1f / %.1f | %.2f | %.0f / %.0f "
           "(%d / %d) | %.2f | %.0f / %.0f (%d / %d) | %.2f |\n",
           k, nc, p->nnzb, nc * nc, mp[0], mp[1], mp[0] / mp[1], mf[0], mf[1], mf[2], mf[0] / mf[1],
           ma[0], ma[1], it_d, it_s, ma[0] / ma[1], mn[0], mn[1], in_d, in_s, mn[0] / mn[1],
           mq[0], mq[1], mq[0] / mq[1], ms[0], ms[1], is_d, is_s, ms[0] / ms[1], mh[0], mh[1],
           ih_d, ih_s, mh[0] / mh[1]);
    fflush(stdout);
    mr_chol_free(f), mr_chol_free(ff);
    mr_arena_destroy(&work);
    free(G), free(L), free(x), free(y), free(l), free(c), free(sy), free(d);
    free_blocks(&sparse), free_blocks(&full);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
  return 0;
}
