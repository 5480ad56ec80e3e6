/* The solver registry (DESIGN.md §4, the solver table): one row per solver, chosen by name;
 * the default settings; mr_solve, which runs a solver, times it and fills the NCP criteria
 * whatever model the solver solves; and the size of the scratch memory solvers may take. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "contact/solvers.h"
#include "contact/sparse_chol.h"
#include "core/arena.h"
#include "core/linalg.h"

static const mr_solver_info registry[] = {
    {"lcp-pgs", "LCP", "projected Gauss-Seidel on the friction pyramid, 4 facets or k (Alg. 1)",
     mr_solver_lcp_pgs, 1, NULL},
    {"ccp-pgs", "CCP",
     "per-contact projected gradient step, orthogonal projection on K_mu (Alg. 2)",
     mr_solver_ccp_pgs, 1, NULL},
    {"raisim", "RaiSim", "per-contact take-off/stick/slide, bisection on the ellipse (Alg. 5)",
     mr_solver_raisim, 1, NULL},
    {"raisim-ds", "RaiSim", "raisim with the de Saxce term in the sliding branch (RaiSim note)",
     mr_solver_raisim_ds, 1, NULL},
    {"ncp-pgs", "NCP", "projected Gauss-Seidel with horizontal projection on the cone (Alg. 6)",
     mr_solver_ncp_pgs, 1, NULL},
    {"soft", "soft", "spring-damper normal force, regularised Coulomb friction (baseline)",
     mr_solver_soft, 1,
     "its spring-damper forces are explicit: there is no projection to bound a joint force"},
    /* ---- ADMM, Newton and staggered projections: ccp-admm, ccp-newton, ncp-stagproj,
     * ncp-admm (src/contact/admm.c, newton.c, stagproj.c) go here ---- */
    {"ccp-admm", "CCP",
     "ADMM on the dual CCP, Cholesky of G + R + rho I, spectral rho update (Alg. 3, III-E)",
     mr_solver_ccp_admm, 1, NULL},
    {"ccp-newton", "CCP",
     "primal Newton on velocities with compliance R > 0, Armijo backtracking (Alg. 4)",
     mr_solver_ccp_newton, 1,
     "its primal Newton method has a cone projection only (no box in its velocity cost)"},
    {"ncp-stagproj", "NCP",
     "staggered projections: normal and tangential convex QPs by inner ADMM (Alg. 7)",
     mr_solver_ncp_stagproj, 1, "its normal and tangential subproblems are built from cones only"},
    {"lcp-stagproj", "LCP",
     "staggered projections on the friction pyramid: ncp-stagproj's QPs (Table III)",
     mr_solver_lcp_stagproj, 1, "its normal and tangential subproblems are built from cones only"},
    {"ncp-admm", "NCP", "ADMM with the de Saxce shift updated from the current iterate",
     mr_solver_ncp_admm, 1, NULL},
    {"ncp-hybrid", "NCP",
     "ncp-pgs, ncp-admm, staggered projections, then active-set and natural-map Newton polishes",
     mr_solver_ncp_hybrid, 1, NULL},
    {"lcp-lemke", "LCP",
     "Lemke's pivoting on the Stewart-Trinkle LCP (4 directions, diamond), dense, <= 64 contacts",
     mr_solver_lcp_lemke, 0, NULL},
};

#define N_SOLVERS ((int)(sizeof registry / sizeof registry[0]))

mr_solver_settings mr_solver_settings_default(void) {
  mr_solver_settings s = {
      .max_iter = 10000,
      .eps_abs = 1e-6,
      .eps_rel = 1e-12,
      .omega = 1.0,
      .warm_start = 1,
      .rho = 0.0,
      .rho_ratio = 10.0,
      .rho_power = 0.05,
      .rho_update_every = 1,
      .power_iter = 20,
      .alpha0 = 1.0,
      .alpha_decay = 0.99,
      .alpha_min = 0.01,
      .bisection_iter = 50,
      .compliance_eps = 1e-6,
      .armijo_c = 1e-4,
      .backtrack = 0.5,
      .inner_iter = 100,
      .soft_k = 1e5,
      .soft_d = 1e2,
      .soft_vreg = 1e-3,
      .max_work = 200000,
      .max_time = 0.0,
      .deadline = 0.0,
      .criterion = MR_CRITERION_OWN,
      .pyramid_facets = 4,
      .eps_scale = 1e-15,
  };
  return s;
}

int mr_solver_count(void) {
  return N_SOLVERS;
}

const mr_solver_info *mr_solver_at(int i) {
  return i >= 0 && i < N_SOLVERS ? &registry[i] : NULL;
}

mr_status mr_solver_check_box(const mr_solver_info *info, const char *what, mr_error *err) {
  if (!info || !info->no_box) return MR_OK;
  char names[256] = "";
  size_t len = 0;
  for (int i = 0; i < N_SOLVERS && len < sizeof names; ++i)
    if (!registry[i].no_box)
      len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                              registry[i].name);
  return mr_error_set(err, MR_ERR_UNSUPPORTED,
                      "contact solver '%s' cannot solve joint friction (%s): %s; solvers that "
                      "can: %s (moreau solve --list), or set the robot's joint_friction_scale "
                      "to 0",
                      info->name, what, info->no_box, names);
}

const mr_solver_info *mr_solver_find(const char *name) {
  for (int i = 0; name && i < N_SOLVERS; ++i)
    if (strcmp(registry[i].name, name) == 0) return &registry[i];
  return NULL;
}

/* wall time in microseconds */
static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

double mr_solver_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mr_solver_late(const mr_solver_settings *s) {
  return s->deadline > 0.0 && mr_solver_clock() >= s->deadline;
}

/* 1 when the n entries are finite */
static int finite_vec(const double *x, int n) {
  for (int k = 0; k < n; ++k)
    if (!isfinite(x[k])) return 0;
  return 1;
}

/* the first non-finite entry of λ or c, named by its contact and component (t1, t2, n) */
static mr_status non_finite(const char *name, const double *lambda, const double *c, int n,
                            mr_error *err) {
  static const char *const comp[] = {"t1", "t2", "n"};
  for (int k = 0; k < n; ++k)
    if (!isfinite(lambda[k]) || !isfinite(c[k]))
      return mr_error_set(err, MR_ERR_NUMERIC,
                          "%s: non-finite contact force or velocity at contact %d: lambda_%s = %g, "
                          "c_%s = %g",
                          name, k / 3, comp[k % 3], lambda[k], comp[k % 3], c[k]);
  return mr_error_set(err, MR_ERR_NUMERIC, "%s: non-finite contact criterion (eps_abs)", name);
}

/* one run of a solver, timed, with the NCP criteria at the returned λ on an exact c */
static mr_status run_timed(const mr_solver_info *info, const mr_contact_problem *p,
                           const mr_solver_settings *s, mr_solver_state *state, mr_arena *work,
                           double *lambda, double *c, mr_solver_stats *stats, mr_error *err) {
  int n = 3 * p->nc;
  memset(stats, 0, sizeof *stats);
  double t0 = now_us();
  mr_status st = info->solve(p, s, state, work, lambda, c, stats, err);
  stats->time_us = now_us() - t0;
  if (st) return st;
  /* a solver may have stopped at a budget of its own (ncp-hybrid's share of a step's work) */
  stats->budget = !stats->converged &&
                  (stats->budget || stats->iterations >= s->max_iter || mr_solver_late(s));
  /* ncp-hybrid returns c as the compensated velocity at λ already */
  if (info->solve != mr_solver_ncp_hybrid) mr_problem_velocity_dot2(p, lambda, c);
  stats->eps_scaled = mr_problem_criteria_scaled(p, lambda, c, s->eps_abs, s->eps_scale,
                                                 &stats->eps_p, &stats->eps_d, &stats->eps_c);
  stats->eps_abs = fmax(stats->eps_p, fmax(stats->eps_d, stats->eps_c));
  if (!finite_vec(lambda, n) || !finite_vec(c, n) || !isfinite(stats->eps_abs))
    return non_finite(info->name, lambda, c, n, err);
  return MR_OK;
}

/* a block-sparse G's structure: offsets from 0, non-decreasing, nnzb in all; columns in range
 * and ascending in each row; the diagonal block present */
static mr_status check_blocks(const char *name, const mr_contact_problem *p, mr_error *err) {
  if (p->Gb_row[0] != 0 || p->Gb_row[p->nc] != p->nnzb)
    return mr_error_set(err, MR_ERR_INVALID,
                        "%s: block-sparse G: Gb_row[0] = %d and Gb_row[%d] = %d, expected 0 and "
                        "nnzb = %d",
                        name, p->Gb_row[0], p->nc, p->Gb_row[p->nc], p->nnzb);
  for (int i = 0; i < p->nc; ++i) {
    int diag = 0;
    if (p->Gb_row[i + 1] < p->Gb_row[i])
      return mr_error_set(err, MR_ERR_INVALID, "%s: block-sparse G: Gb_row[%d] = %d < Gb_row[%d] = %d",
                          name, i + 1, p->Gb_row[i + 1], i, p->Gb_row[i]);
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      int j = p->Gb_col[k];
      if (j < 0 || j >= p->nc || (k > p->Gb_row[i] && j <= p->Gb_col[k - 1]))
        return mr_error_set(err, MR_ERR_INVALID,
                            "%s: block-sparse G: row %d, Gb_col[%d] = %d is out of [0, %d) or not "
                            "ascending",
                            name, i, k, j, p->nc);
      diag |= j == i;
    }
    if (!diag)
      return mr_error_set(err, MR_ERR_INVALID, "%s: block-sparse G: row %d has no diagonal block",
                          name, i);
  }
  return MR_OK;
}

/* mr_solve on a problem the solver can read (dense G, or Gb for a block-sparse solver) */
static mr_status solve_problem(const mr_solver_info *info, const mr_contact_problem *p,
                               const mr_solver_settings *s, mr_solver_state *state,
                               mr_arena *work, double *lambda, double *c, mr_solver_stats *stats,
                               mr_error *err) {
  int n = 3 * p->nc;
  if (!s->warm_start) mr_zero(lambda, n);
  int warm = s->warm_start && n > 0 && !(mr_norm_inf(lambda, n) == 0.0);
  mr_status st = run_timed(info, p, s, state, work, lambda, c, stats, err);
  if (st || !warm || stats->converged || s->no_cold_retry) return st;
  /* the cold retry draws on what the warm run left of the budget */
  int left = s->max_iter - stats->iterations;
  if (left <= 0 || mr_solver_late(s)) return MR_OK;
  /* a warm start that did not converge: solved again from λ = 0 and the better result kept
   * (converged first, then the lower NCP ε_abs), so that a warm start never makes a step worse
   * than a cold one; the solver's state (ADMM's y and ρ) goes with the run that produced it */
  size_t mark = mr_arena_mark(work);
  double *lc = mr_arena_doubles(work, (size_t)n), *cc = mr_arena_doubles(work, (size_t)n);
  if (!lc || !cc) { /* an arena sized for the solver alone: the warm result stands */
    mr_arena_reset(work, mark);
    return MR_OK;
  }
  mr_solver_settings cold = *s;
  mr_solver_stats sc;
  cold.warm_start = 0;
  cold.max_iter = left;
  mr_zero(lc, n);
  if (state) state->valid = 0;
  /* a cold run that fails (a numerical error) leaves the warm result, which is valid */
  mr_error cold_err = {0};
  if (run_timed(info, p, &cold, state, work, lc, cc, &sc, &cold_err) != MR_OK) {
    if (state) state->valid = 0;
  } else {
    sc.iterations += stats->iterations, sc.time_us += stats->time_us;
    sc.budget = !sc.converged && (sc.budget || sc.iterations >= s->max_iter || mr_solver_late(s));
    if (sc.converged > stats->converged ||
        (sc.converged == stats->converged && sc.eps_abs < stats->eps_abs)) {
      mr_copy(lambda, lc, n), mr_copy(c, cc, n);
      *stats = sc;
    } else {
      stats->iterations = sc.iterations, stats->time_us = sc.time_us, stats->budget = sc.budget;
      if (state) state->valid = 0;
    }
  }
  mr_arena_reset(work, mark);
  return MR_OK;
}

mr_status mr_solve(const char *name, const mr_contact_problem *p, const mr_solver_settings *s,
                   mr_solver_state *state, struct mr_arena_s *work, double *lambda, double *c,
                   mr_solver_stats *stats, mr_error *err) {
  const mr_solver_info *info = mr_solver_find(name);
  if (!info)
    return mr_error_set(err, MR_ERR_INVALID, "unknown contact solver '%s'", name ? name : "(null)");
  if (!p || !s || !work || !stats || (p->nc > 0 && (!lambda || !c)))
    return mr_error_set(err, MR_ERR_INVALID, "%s: missing problem, settings, work or output", name);
  if (p->nc < 0) return mr_error_set(err, MR_ERR_INVALID, "%s: nc = %d < 0", name, p->nc);
  if (p->nc > 0 && !mr_problem_has_G(p))
    return mr_error_set(err, MR_ERR_INVALID,
                        "%s: problem with %d contacts has neither a dense G nor a block-sparse Gb",
                        name, p->nc);
  if (s->criterion != MR_CRITERION_OWN && s->criterion != MR_CRITERION_NCP)
    return mr_error_set(err, MR_ERR_INVALID,
                        "%s: criterion = %d is neither 0 (its own model's) nor 1 (the NCP's)", name,
                        s->criterion);
  mr_status st;
  if (!p->G && p->nc > 0 && (st = check_blocks(name, p, err))) return st;
  if (info->no_box && mr_problem_has_box(p))
    return mr_solver_check_box(info, "the problem has box constraints", err);
  if (info->block_sparse || p->G || p->nc == 0)
    return solve_problem(info, p, s, state, work, lambda, c, stats, err);
  /* a solver that reads G densely gets a dense copy of the block-sparse G */
  size_t n = 3 * (size_t)p->nc, mark = mr_arena_mark(work);
  double *G = mr_arena_doubles(work, n * n);
  if (!G)
    return mr_error_set(err, MR_ERR_NOMEM, "%s: work arena too small for a dense G of %zu rows",
                        name, n);
  mr_problem_G_dense(p, G);
  mr_contact_problem dense = *p;
  dense.G = G;
  st = solve_problem(info, &dense, s, state, work, lambda, c, stats, err);
  mr_arena_reset(work, mark);
  return st;
}

void mr_solver_state_release(mr_solver_state *state) {
  if (!state) return;
  mr_chol_free(state->chol);
  state->chol = NULL;
}

/* the scratch of the per-contact solvers and of mr_solve's cold re-solve: 26 n-vectors, and with
 * J, M two nv x nv and one 3nc x nv matrices and 16 nv-vectors */
static size_t vector_doubles(size_t n, size_t m) {
  return 26 * n + 2 * m * m + n * m + 16 * m;
}

size_t mr_solver_work_size_for(const mr_solver_info *info, int nc, int nv, int block_sparse,
                               size_t nnzb) {
  size_t all = mr_solver_work_size(nc, nv);
  if (!info) return all;
  size_t n = nc > 0 ? 3 * (size_t)nc : 0, m = nv > 0 ? (size_t)nv : 0;
  size_t slack = 64 * 32 + 256, vectors = vector_doubles(n, m) * sizeof(double) + slack;
  /* lcp-lemke: its LCP's matrix and tableau, and a dense copy of a block-sparse G */
  if (info->solve == mr_solver_lcp_lemke)
    return vectors + mr_lemke_work_size(nc) + (block_sparse ? n * n * sizeof(double) : 0);
  /* a solver given a dense copy of a block-sparse G */
  if (!info->block_sparse) return all;
  int pays = block_sparse && nc >= MR_SPARSE_CHOL_MIN_NC &&
             (double)nnzb <= MR_SPARSE_CHOL_MAX_FILL * (double)nc * (double)nc;
  /* ncp-hybrid: on a block-sparse G that pays, its vectors and the larger of ncp-stagproj's
   * sparse scratch and (small problems) the dense copy of its Newton stages; else its dense
   * matrices (a dense copy of G made by itself) */
  if (info->solve == mr_solver_ncp_hybrid) {
    size_t hy = vectors + mr_hybrid_sparse_work_size(nc);
    return pays && hy < all ? hy : all;
  }
  int admm = info->solve == mr_solver_ccp_admm || info->solve == mr_solver_ncp_admm;
  int newton = info->solve == mr_solver_ccp_newton;
  /* ncp-stagproj: its two subproblems' vectors and, below the crossover, their dense matrices */
  if (info->solve == mr_solver_ncp_stagproj || info->solve == mr_solver_lcp_stagproj) {
    size_t sp = vectors + mr_stagproj_work_size(nc, pays);
    return sp < all ? sp : all;
  }
  if (!admm && !newton) return vectors;
  /* ADMM and ccp-newton: a sparse factor outside the arena when it pays
   * (mr_sparse_chol_pays), else a dense factor, and a dense copy of a block-sparse G */
  if (pays) return vectors + (newton ? mr_newton_sparse_work_size(nc) : 0);
  if (newton) return all;
  size_t dense = mr_admm_work_size(nc) + (block_sparse ? n * n * sizeof(double) : 0);
  return vectors + dense < all ? vectors + dense : all;
}

size_t mr_solver_keep_size(const mr_solver_info *info, int nc) {
  return info && info->solve == mr_solver_ncp_hybrid ? mr_hybrid_keep_size(nc) : 0;
}

size_t mr_solver_work_size(int nc, int nv) {
  /* n = 3nc; room for four n x n matrices (a dense copy of a block-sparse G; ncp-hybrid: its
   * two active-set matrices and ADMM's factor), 26 n-vectors (2 of them mr_solve's, for a cold re-solve), and with J, M two nv
   * x nv and one 3nc x nv matrices and 16 nv-vectors; 64 blocks of alignment slack */
  size_t n = nc > 0 ? 3 * (size_t)nc : 0, m = nv > 0 ? (size_t)nv : 0;
  size_t doubles = 4 * n * n + 26 * n + 2 * m * m + n * m + 16 * m;
  /* ncp-hybrid's own two n x n matrices and vectors under ncp-stagproj's scratch */
  size_t hybrid = (3 * n * n + 26 * n) * sizeof(double) + mr_stagproj_work_size(nc, 0);
  size_t bytes = doubles * sizeof(double) > hybrid ? doubles * sizeof(double) : hybrid;
  return bytes + 64 * 32 + 256;
}
