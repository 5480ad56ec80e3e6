/* Projected Gauss-Seidel on the CCP and on the NCP ("Contact Models in Robotics", §III-B
 * Algorithm 2 and §III-D Algorithm 6; called Algorithm 3 in DESIGN.md's solver table).
 *
 * ccp-pgs solves the cone complementarity problem K_μ ∋ λ ⟂ c ∈ K_μ* (the KKT conditions of
 * min ½ λᵀ(G + R)λ + gᵀλ over K_μ) by a projected gradient step per contact:
 *   λ⁽ⁱ⁾ ← proj_K(λ⁽ⁱ⁾ − ω h_i c⁽ⁱ⁾),  h_i = 3 / tr B_i,  B_i = (G + R)⁽ⁱⁱ⁾,
 * the step of the paper, shortened to 1.9 / ‖B_i‖ (Gershgorin bound of the largest eigenvalue)
 * when 3 / tr B_i would exceed the 2 / λ_max(B_i) stability limit of a gradient step. Its fixed
 * points are the CCP's solutions; it stops on the CCP criterion (no de Saxcé term).
 * Known failure modes: sliding contacts push at a distance (c_N = μ‖c_T‖ > 0, the CCP model);
 * first-order convergence, slow on ill-conditioned G (large mass ratios).
 *
 * ncp-pgs solves the NCP directly: per contact a normal step, then a tangential step projected
 * on the disk of radius μ λ_N (the "horizontal" projection of the cone):
 *   λ_N ← max(0, λ_N − ω c_N / B_NN);   λ_T ← proj_{‖·‖≤μλ_N}(λ_T − ω c_T / λ_max(B_TT)).
 * The paper divides by min(B_TxTx, B_TyTy); λ_max of the 2x2 block is used instead so that the
 * step stays stable when B_TT is anisotropic. Fixed points satisfy Signorini, Coulomb and
 * maximum dissipation (λ_T on the circle is antiparallel to c_T). It stops on the NCP criterion.
 * Known failure modes: no convergence guarantee (the NCP is not a convex problem), slow or
 * stalled on ill-conditioned G, internal forces in hyperstatic contact sets. */
#include <math.h>

#include "contact/solvers.h"
#include "core/arena.h"

/* largest eigenvalue of the symmetric 2x2 block [[a, b], [b, d]] */
static double lambda_max_2x2(double a, double b, double d) {
  return 0.5 * (a + d) + sqrt(0.25 * (a - d) * (a - d) + b * b);
}

/* the ccp-pgs step 3 / tr B, capped at 1.9 / (Gershgorin bound of λ_max(B)) */
static double ccp_step(const double *B) {
  double tr = B[0] + B[4] + B[8], gersh = 0.0;
  for (int a = 0; a < 3; ++a)
    gersh = fmax(gersh, fabs(B[3 * a]) + fabs(B[3 * a + 1]) + fabs(B[3 * a + 2]));
  if (!(tr > 0.0)) return 0.0;
  return fmin(3.0 / tr, 1.9 / gersh);
}

/* one ccp-pgs sweep */
static void ccp_sweep(const mr_contact_problem *p, const mr_solver_settings *s, void *ctx,
                      double *lambda, double *c) {
  for (int i = 0; i < p->nc; ++i) {
    double B[9], x[3], delta[3];
    double *l = lambda + 3 * i, *ci = c + 3 * i;
    if (mr_gs_other_kind(p, i, s->omega, lambda, c)) continue;
    mr_gs_block(p, i, B);
    double h = s->omega * ccp_step(B);
    /* gradient step, then the orthogonal projection on K_μ */
    for (int a = 0; a < 3; ++a)
      x[a] = l[a] - h * ci[a];
    mr_cone_project(p->mu[i], x, x);
    for (int a = 0; a < 3; ++a)
      delta[a] = x[a] - l[a];
    mr_gs_apply(p, i, delta, lambda, c);
  }
}

/* ncp-pgs: the normal update of contact i (B_NN = bnn), returning δ_N */
static double ncp_normal(double bnn, const double *l, const double *ci, double omega) {
  if (!(bnn > 0.0)) return 0.0;
  double ln = fmax(0.0, l[2] - omega * ci[2] / bnn);
  return ln - l[2];
}

/* ncp-pgs: the tangential update (L = λ_max(B_TT)), with c_T already corrected for the normal
 * change */
static void ncp_tangent(double mu, double L, const double *l, const double *cT, double ln,
                        double omega, double *dT) {
  double h = L > 0.0 ? omega / L : 0.0;
  double t0 = l[0] - h * cT[0], t1 = l[1] - h * cT[1], rmax = mu * ln;
  /* inside the disk by a bound, else by the norm itself */
  if (!mr_disk_surely_holds(t0, t1, rmax)) {
    double r = mr_norm2d(t0, t1);
    if (r > rmax) t0 *= rmax / r, t1 *= rmax / r;
  }
  dT[0] = t0 - l[0], dT[1] = t1 - l[1];
}

/* what an ncp-pgs sweep reads of contact i's diagonal block B = (G + R)_ii: B_NN, the coupling
 * B_TN and λ_max(B_TT), taken once per solve (a block-sparse G's diagonal block is a search of
 * its row) */
typedef struct {
  double nn, tn0, tn1, tt;
} ncp_block;

static ncp_block ncp_block_of(const mr_contact_problem *p, int i) {
  double B[9];
  mr_gs_block(p, i, B);
  return (ncp_block){B[8], B[2], B[5], lambda_max_2x2(B[0], B[1], B[4])};
}

/* one ncp-pgs sweep; ctx: every contact's ncp_block, or NULL (each taken here) */
static void ncp_sweep(const mr_contact_problem *p, const mr_solver_settings *s, void *ctx,
                      double *lambda, double *c) {
  const ncp_block *blocks = ctx;
  for (int i = 0; i < p->nc; ++i) {
    double delta[3], cT[2];
    double *l = lambda + 3 * i, *ci = c + 3 * i;
    if (mr_gs_other_kind(p, i, s->omega, lambda, c)) continue;
    ncp_block b = blocks ? blocks[i] : ncp_block_of(p, i);
    delta[2] = ncp_normal(b.nn, l, ci, s->omega);
    /* the tangential velocity after the normal change: c_T + B_TN δ_N */
    cT[0] = ci[0] + b.tn0 * delta[2], cT[1] = ci[1] + b.tn1 * delta[2];
    ncp_tangent(p->mu[i], b.tt, l, cT, l[2] + delta[2], s->omega, delta);
    mr_gs_apply(p, i, delta, lambda, c);
  }
}

mr_status mr_solver_ccp_pgs(MR_SOLVER_ARGS) {
  return mr_gs_run(p, s, work, ccp_sweep, NULL, mr_gs_criterion_ccp, lambda, c, stats, err);
}

mr_status mr_solver_ncp_pgs(MR_SOLVER_ARGS) {
  return mr_ncp_pgs_with(p, s, work, 0, lambda, c, stats, err);
}

mr_status mr_ncp_pgs_with(const mr_contact_problem *p, const mr_solver_settings *s,
                          struct mr_arena_s *work, int options, double *lambda, double *c,
                          mr_solver_stats *stats, mr_error *err) {
  mr_status rc = mr_gs_check(p, s, err);
  if (rc) return rc;
  /* the contacts' blocks from the arena when it also leaves the loop its two n-vectors (each
   * allocation aligned to 32 bytes) */
  size_t nc = (size_t)p->nc;
  size_t need = nc * sizeof(ncp_block) + 32 + 2 * (3 * nc * sizeof(double) + 32);
  size_t mark = work ? mr_arena_mark(work) : 0;
  ncp_block *blocks = NULL;
  if (nc > 0 && work && work->size - work->top >= need + 32 &&
      (blocks = mr_arena_alloc(work, nc * sizeof(ncp_block))))
    for (int i = 0; i < p->nc; ++i)
      if (!mr_problem_box(p, i) && !mr_problem_bilateral(p, i)) blocks[i] = ncp_block_of(p, i);
  rc = mr_gs_run_with(p, s, work, ncp_sweep, blocks, mr_gs_criterion_ncp, options, lambda, c, stats,
                      err);
  if (work) mr_arena_reset(work, mark);
  return rc;
}
