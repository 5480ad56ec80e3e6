/* ccp-newton: the primal formulation of the compliant CCP ("Contact Models in Robotics", §III-B,
 * eq. 21-22, Alg. 4; the approach of MuJoCo and Drake), Newton steps with Armijo backtracking.
 *
 * With u = v − v_f (so that v_f is never needed) and the contact velocity c(u) = J u + g, the
 * dual CCP  min_{λ ∈ K_μ} ½ λᵀ(G + R)λ + gᵀλ,  G = J M⁻¹ Jᵀ, R > 0 diagonal, is the dual of
 *   min_u ℓ(u) = ½ uᵀ M u + Σᵢ ½ ‖pᵢ‖²,   pᵢ = Π_{K_μ̃ᵢ}(−Rᵢ^{-1/2} cᵢ(u)),  μ̃ᵢ = μᵢ √(R_T/R_N),
 * where λᵢ(u) = Rᵢ^{-1/2} pᵢ = argmin_{λ ∈ K_μ} ½ λᵀRᵢλ + cᵢᵀλ (the projection P^R of eq. 22,
 * written in the coordinates R^{1/2}λ where it is the Euclidean projection on the cone K_μ̃).
 * ℓ is convex and C¹ with ∇ℓ = M u − Jᵀλ(u) and generalised Hessian
 *   H = M + Σᵢ Jᵢᵀ Rᵢ^{-1/2} DΠ(xᵢ) Rᵢ^{-1/2} Jᵢ  ⪰ M ≻ 0  (DΠ: Jacobian of the cone projection),
 * so each Newton step Δ = −H⁻¹∇ℓ is a descent direction. Step length: the exact minimiser of
 * the convex φ(α) = ℓ(u + αΔ) (bracketing, then safeguarded Newton on φ', O(nc) per trial: the
 * exact line search of MuJoCo and Drake; the full step when |φ'(1)| ≤ 1e-3 |φ'(0)|), kept when
 * it meets Armijo's condition with constant armijo_c; otherwise, or with settings
 * newton_armijo_only (the paper's implementation), the first of 1, β, β², ... (β = backtrack)
 * meeting it.
 * At the minimum M u = Jᵀλ and λ solves the CCP with G + R; λ and c = (G + R)λ + g are returned.
 * Stopping (converged): the CCP criteria with G + R at λ(u) are ≤ eps_abs (under
 * settings.criterion = MR_CRITERION_NCP: the NCP criteria on the problem's own G + R, and a fixed
 * point below that misses them is a stall, not converged), or u is a fixed point
 * of Newton's map to the precision asked: a Newton correction with ‖Δ‖∞ ≤ max(eps_rel, 4 ε_mach)
 * ‖u‖∞ is taken whole, and the second such correction in a row ends the solve (the first may
 * still move a contact across a piece of ℓ; ℓ being piecewise quadratic, or smooth on the
 * sliding pieces, the one after it is at round-off). Why not the criterion alone: λ(u) is
 * R⁻¹-sensitive to u, δλ ≈ R⁻¹J δu ≈ (1/compliance_eps)(J δu)/G, so with the default R a
 * round-off δu in u moves λ by 1e6 times as much as it moves c(u); ε_c = |⟨λ, c⟩| then cannot go
 * below about ε_mach·1e6·|c(u)|·|λ|, 1e-6 to 1e-5 on Talos's feet (forces of 50-230 N): the
 * criterion in force and power units is unreachable in floating point at this scaling, and the
 * solver used to stop on its stall test, not converged, after 3-6 iterations on nearly every
 * step. The fixed-point test is relative, so it does not depend on units or on R. Not converged:
 * the line search fails (no step), two steps in a row shorter than eps_rel ‖u‖∞ whose
 * corrections were not, or max_iter.
 *
 * Compliance: the problem's R when given (R_T1 = R_T2 is required per contact, the cone being
 * isotropic); when R is NULL or all zero, R = compliance_eps · diag(G) with the two tangential
 * entries averaged and every entry floored at compliance_eps · 1e-9 · max diag(G). Refused with
 * MR_ERR_INVALID: compliance_eps ≤ 0 with no R (rigid contact is impossible in this
 * formulation), an R with some entries ≤ 0 or non-finite, anisotropic tangential entries,
 * G = 0 with no R. Without J and M (a standalone problem) the solver works on a pivoted
 * Cholesky factor G = P L Lᵀ Pᵀ truncated at rank r (pivots ≤ 1e-13 · max diag(G) dropped):
 * J = P L (3nc x r), M = I, so that semi-definite G (hyperstatic contacts) is handled exactly up to
 * that truncation. Warm start: u from the state (state->y, state->nu = nv) when it holds a
 * previous ccp-newton velocity of the same size, else u = M⁻¹Jᵀλ from the given λ (λ → u → λ(u)
 * amplifies round-off by R⁻¹G, so this alone does not reproduce a converged λ to 1e-8).
 * Bilateral constraints (mr_contact_problem.kind): their set is R³, so pᵢ = −Rᵢ^{-1/2} cᵢ (the
 * identity projection, DΠ = I): a compliant bilateral constraint, λᵢ = −Rᵢ⁻¹ cᵢ.
 * Frictionless contacts (μ = 0): K_0 is the normal ray, projected on as (0, 0, max(n, 0)) here
 * (mr_cone_project's test t ≤ μn accepts t = 0 with n < 0 when μ = 0).
 * Failure modes: the solution is the compliant one, so the rigid NCP criteria
 * are off by about R λ (1e-6 relative with the default); contact at a distance when sliding
 * (the CCP relaxation); the default R makes ℓ very stiff (R⁻¹ ≈ 1e6/G), so from u = 0 on a
 * problem with many sliding contacts Newton may need tens of iterations to find the active
 * set (28 on a trot step with two feet sliding), and when it converges by the fixed-point test
 * its own criterion is at the round-off level above, which can exceed eps_abs (measured 2e-7 to
 * 1.1e-5 on Talos standing, ≤ 5.5e-6 on the trot). */
#include <float.h>
#include <math.h>

#include "contact/solvers.h"
#include "contact/sparse_chol.h"
#include "core/arena.h"
#include "core/linalg.h"

/* pivots of the standalone factor below this fraction of max diag(G) are dropped */
#define NEWTON_RANK_TOL 1e-13
/* floor of the default compliance, relative to compliance_eps · max diag(G) */
#define NEWTON_R_FLOOR 1e-9
/* Armijo's test tolerates this relative round-off in ℓ: near the minimum the decrease of ℓ
 * (quadratic in the step) falls below the rounding of ℓ itself while λ still improves */
#define NEWTON_ROUNDOFF 1e-14
/* the full step is taken when |φ'(1)| is below this fraction of |φ'(0)|: exact to round-off
 * where ℓ is quadratic along Δ, and the step that gives Newton its quadratic convergence */
#define NEWTON_FULL_STEP_TOL 1e-3
/* the exact line search stops when |φ'(α)| falls below this fraction of |φ'(0)| */
#define NEWTON_LS_TOL 1e-10
/* backtracking steps before the line search gives up (β^40 ≈ 1e-12 with β = 0.5) */
#define NEWTON_MAX_BACKTRACK 40
/* the relative size of a Newton correction taken as converged is at least this many units of
 * round-off of ‖u‖∞, whatever eps_rel */
#define NEWTON_FIXED_POINT_ULPS 4.0

/* the Jacobian: dense (3nc x nv), the pivoted factor L (rows permuted by pinv, rank r), or the
 * block-sparse G itself (the coordinates y of u = Jᵀy, where J = M = G: see newton_direction) */
typedef struct {
  int n, nv;
  const double *J;                  /* dense rows, or NULL */
  const double *L;                  /* n x n lower factor of the pivoted Cholesky */
  const int *pinv;                  /* original row q is row pinv[q] of L */
  const double *M;                  /* nv x nv, or NULL for the identity */
  const mr_contact_problem *blocks; /* a block-sparse G standing for J and M, or NULL */
} jac_view;

/* row q of J into out (nv) */
static void jac_row(const jac_view *jv, int q, double *out) {
  if (jv->J) {
    mr_copy(out, jv->J + (size_t)q * jv->nv, jv->nv);
    return;
  }
  int i = jv->pinv[q];
  for (int k = 0; k < jv->nv; ++k)
    out[k] = k <= i ? jv->L[i * jv->n + k] : 0.0;
}

/* y = M x */
static void mass_mul(const jac_view *jv, const double *x, double *y) {
  if (jv->blocks)
    mr_problem_G_mul(jv->blocks, x, y);
  else if (jv->M)
    mr_matvec(y, jv->M, x, jv->nv, jv->nv);
  else
    mr_copy(y, x, jv->nv);
}

/* Jacobian of the projection on K_μ at x (3x3, row-major); μ < 0 stands for R³ (bilateral);
 * K_0 is the normal ray, whose projection (0, 0, max(n, 0)) has no tangential part */
static void cone_projection_jacobian(double mu, const double *x, double *D) {
  double t = hypot(x[0], x[1]), n = x[2];
  for (int k = 0; k < 9; ++k)
    D[k] = 0.0;
  if (mu == 0.0) {
    D[8] = n > 0.0 ? 1.0 : 0.0;
  } else if (mu < 0.0 || t <= mu * n) {
    D[0] = D[4] = D[8] = 1.0;
  } else if (mu * t > -n) {
    double h[2] = {x[0] / t, x[1] / t}, q = 1.0 / (1.0 + mu * mu);
    double a = (mu * t + n) * q, s = mu * a / t;
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 2; ++c)
        D[3 * r + c] = (mu * mu * q - s) * h[r] * h[c] + (r == c ? s : 0);
      D[3 * r + 2] = D[6 + r] = mu * q * h[r];
    }
    D[8] = q;
  }
}

/* the scaled friction coefficient μ̃ = μ √(R_T/R_N) of constraint i, or −1 when bilateral */
static double scaled_mu(const mr_contact_problem *p, int i, const double *R) {
  return mr_problem_bilateral(p, i) ? -1.0 : p->mu[i] * sqrt(R[0] / R[2]);
}

/* projection on K_μ̃, or the identity when μ̃ < 0 (bilateral); on the ray K_0 directly (the
 * test t ≤ μn of mr_cone_project holds for t = 0, μ = 0 and any n, a negative n included) */
static void project(double mut, const double *x, double *out) {
  if (mut < 0.0)
    out[0] = x[0], out[1] = x[1], out[2] = x[2];
  else if (mut == 0.0)
    out[0] = out[1] = 0.0, out[2] = fmax(x[2], 0.0);
  else
    mr_cone_project(mut, x, out);
}

/* per-solve data */
typedef struct {
  const mr_contact_problem *p;
  jac_view jv;
  const double *R;             /* compliance used, 3nc */
  double *u, *grad, *dir, *ut; /* nv */
  double *c, *lambda, *row;    /* 3nc, 3nc, 3 nv */
  double *c0, *d;              /* line search: c(u) and J Δ, 3nc each */
  double *H;                   /* nv x nv (dense) */
  double *S, *tmp;             /* block-sparse: the scaling S (9nc) and a 3nc scratch */
  mr_sparse_chol *chol;        /* block-sparse: the factor of I + Sᵀ G S */
  int factorizations;
} newton_ctx;

/* out = J v (3nc) */
static void jac_mul(const newton_ctx *x, const double *v, double *out) {
  if (x->jv.blocks) {
    mr_problem_G_mul(x->jv.blocks, v, out);
    return;
  }
  for (int q = 0; q < 3 * x->p->nc; ++q) {
    jac_row(&x->jv, q, x->row);
    out[q] = mr_dot(x->row, v, x->jv.nv);
  }
}

/* the size of a velocity (or a step) in the relative tests: ‖v‖∞, or on a block-sparse G, where
 * v holds y with u = Jᵀy, ‖u‖₂ = √(yᵀGy) */
static double velocity_norm(const newton_ctx *x, const double *v) {
  if (!x->jv.blocks) return mr_norm_inf(v, x->jv.nv);
  mr_problem_G_mul(x->jv.blocks, v, x->tmp);
  return sqrt(fmax(mr_dot(v, x->tmp, x->jv.nv), 0.0));
}

/* λ(u) into lambda, and ℓ(u); uses ctx->c */
static double evaluate(newton_ctx *x, const double *u) {
  const mr_contact_problem *p = x->p;
  int n = 3 * p->nc, nv = x->jv.nv;
  double cost = 0.0;
  if (x->jv.blocks) {
    /* c = G y + g, where the terms cancel down to c ≈ −Rλ: in compensated arithmetic (Dot2),
     * since λ(u) amplifies the error of c by R⁻¹ (the dense path's J u has the rank-r factor's
     * shorter sums) */
    mr_contact_problem q = *p;
    q.R = NULL;
    mr_problem_velocity_dot2(&q, u, x->c);
  } else {
    jac_mul(x, u, x->c);
    for (int q = 0; q < n; ++q)
      x->c[q] += p->g[q];
  }
  for (int i = 0; i < p->nc; ++i) {
    const double *R = x->R + 3 * i, *ci = x->c + 3 * i;
    double mut = scaled_mu(p, i, R), z[3];
    for (int k = 0; k < 3; ++k)
      z[k] = -ci[k] / sqrt(R[k]);
    project(mut, z, z);
    for (int k = 0; k < 3; ++k)
      x->lambda[3 * i + k] = z[k] / sqrt(R[k]);
    cost += 0.5 * (z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
  }
  mass_mul(&x->jv, u, x->ut);
  return cost + 0.5 * mr_dot(u, x->ut, nv);
}

/* ∇ℓ = M u − Jᵀλ at the u last evaluated (ctx->ut holds M u); on a block-sparse G, G (y − λ) */
static void gradient(newton_ctx *x) {
  int n = 3 * x->p->nc, nv = x->jv.nv;
  if (x->jv.blocks) {
    for (int a = 0; a < nv; ++a)
      x->tmp[a] = x->u[a] - x->lambda[a];
    mr_problem_G_mul(x->jv.blocks, x->tmp, x->grad);
    return;
  }
  mr_copy(x->grad, x->ut, nv);
  for (int q = 0; q < n; ++q) {
    jac_row(&x->jv, q, x->row);
    mr_axpy(x->grad, -x->lambda[q], x->row, nv);
  }
}

/* H = M + Σᵢ Jᵢᵀ Wᵢ Jᵢ, Wᵢ = R^{-1/2} DΠ R^{-1/2}, at the c last evaluated */
static void hessian(newton_ctx *x) {
  const mr_contact_problem *p = x->p;
  int nv = x->jv.nv;
  if (x->jv.M)
    mr_copy(x->H, x->jv.M, nv * nv);
  else
    for (int a = 0; a < nv * nv; ++a)
      x->H[a] = a % (nv + 1) == 0 ? 1.0 : 0.0;
  for (int i = 0; i < p->nc; ++i) {
    const double *R = x->R + 3 * i, *ci = x->c + 3 * i;
    double z[3], D[9];
    for (int k = 0; k < 3; ++k)
      z[k] = -ci[k] / sqrt(R[k]);
    cone_projection_jacobian(scaled_mu(p, i, R), z, D);
    if (D[0] == 0.0 && D[4] == 0.0 && D[8] == 0.0) continue; /* separating contact */
    for (int k = 0; k < 3; ++k)
      jac_row(&x->jv, 3 * i + k, x->row + k * nv);
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 3; ++l) {
        double w = D[3 * k + l] / sqrt(R[k] * R[l]);
        if (w == 0.0) continue;
        const double *rk = x->row + k * nv, *rl = x->row + l * nv;
        for (int a = 0; a < nv; ++a)
          if (rk[a] != 0.0) mr_axpy(x->H + a * nv, w * rk[a], rl, nv);
      }
  }
}

/* a symmetric square root of the cone projection's Jacobian (cone_projection_jacobian): on the
 * sliding piece DΠ = v vᵀ + s ŵŵᵀ with v = (μh, 1)/√(1 + μ²) and ŵ = (h⊥, 0) orthonormal, so
 * DΠ^{1/2} = v vᵀ + √s ŵŵᵀ; the identity, e₃e₃ᵀ and 0 elsewhere are their own roots */
static void cone_projection_jacobian_sqrt(double mu, const double *x, double *D) {
  double t = hypot(x[0], x[1]), n = x[2];
  if (!(mu > 0.0) || t <= mu * n || !(mu * t > -n)) {
    cone_projection_jacobian(mu, x, D);
    return;
  }
  double h[2] = {x[0] / t, x[1] / t}, q = 1.0 / (1.0 + mu * mu);
  double s = mu * (mu * t + n) * q / t, rs = sqrt(s);
  double v[3] = {mu * h[0] * sqrt(q), mu * h[1] * sqrt(q), sqrt(q)}, w[3] = {-h[1], h[0], 0.0};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      D[3 * r + c] = v[r] * v[c] + rs * w[r] * w[c];
}

/* the Newton direction into dir; 0, or −1 when the system is not positive definite.
 * Dense: H Δ = −∇ℓ by Cholesky of H. On a block-sparse G (J = M = G in the coordinates y of
 * u = Jᵀy, J the factor of G = J Jᵀ of the dense path): H Jᵀδ = −Jᵀ(y − λ) holds when
 * (I + W G) δ = λ − y, W = diag(Wᵢ) = S Sᵀ with Sᵢ = Rᵢ^{-1/2} DΠᵢ^{1/2}; by Woodbury
 * δ = r − S (I + Sᵀ G S)⁻¹ Sᵀ G r, r = λ − y, where I + Sᵀ G S ⪰ I has G's block pattern and is
 * factored by the sparse Cholesky (its pattern analysed once per solve, numeric refactor per
 * iteration); the iterates are the dense path's u = Jᵀy */
/* out = Sᵀ v (transpose 1) or S v (transpose 0), S block-diagonal */
static void scaling_apply(const newton_ctx *x, int transpose, const double *v, double *out) {
  for (int i = 0; i < x->p->nc; ++i)
    for (int a = 0; a < 3; ++a) {
      const double *Si = x->S + 9 * i, *vi = v + 3 * i;
      out[3 * i + a] = transpose
                           ? Si[a] * vi[0] + Si[3 + a] * vi[1] + Si[6 + a] * vi[2]
                           : Si[3 * a] * vi[0] + Si[3 * a + 1] * vi[1] + Si[3 * a + 2] * vi[2];
    }
}

/* out = (I + W G)⁻¹ r = r − S (I + SᵀGS)⁻¹ Sᵀ G r by the factor (d and c0 are scratch) */
static void woodbury_solve(newton_ctx *x, const double *r, double *out) {
  mr_problem_G_mul(x->p, r, x->d);
  scaling_apply(x, 1, x->d, x->c0);
  mr_chol_solve(x->chol, x->c0);
  scaling_apply(x, 0, x->c0, x->d);
  for (int a = 0; a < x->jv.nv; ++a)
    out[a] = r[a] - x->d[a];
}

static int newton_direction(newton_ctx *x) {
  int nv = x->jv.nv;
  x->factorizations++;
  if (!x->jv.blocks) {
    hessian(x);
    if (mr_cholesky(x->H, nv) != 0) return -1;
    for (int a = 0; a < nv; ++a)
      x->dir[a] = -x->grad[a];
    mr_cholesky_solve(x->H, nv, x->dir);
    return 0;
  }
  const mr_contact_problem *p = x->p;
  for (int i = 0; i < p->nc; ++i) {
    const double *R = x->R + 3 * i, *ci = x->c + 3 * i;
    double z[3], D[9], *Si = x->S + 9 * i;
    for (int k = 0; k < 3; ++k)
      z[k] = -ci[k] / sqrt(R[k]);
    cone_projection_jacobian_sqrt(scaled_mu(p, i, R), z, D);
    for (int k = 0; k < 9; ++k)
      Si[k] = D[k] / sqrt(R[k / 3]);
  }
  mr_chol_values_congruent(x->chol, p, x->S);
  if (mr_chol_factor(x->chol, 1.0) != 0) return -1;
  for (int a = 0; a < nv; ++a)
    x->tmp[a] = x->lambda[a] - x->u[a];
  woodbury_solve(x, x->tmp, x->dir);
  return 0;
}

/* the compliance: the problem's, or the documented default; MR_ERR_INVALID when refused */
static mr_status compliance(const mr_contact_problem *p, const mr_solver_settings *s, double *R,
                            mr_error *err) {
  int n = 3 * p->nc, given = 0;
  for (int k = 0; p->R && k < n; ++k)
    given |= p->R[k] != 0.0;
  if (given) {
    for (int k = 0; k < n; ++k)
      if (!(p->R[k] > 0.0) || !isfinite(p->R[k]))
        return mr_error_set(err, MR_ERR_INVALID,
                            "ccp-newton: compliance R[%d] = %g, needs R > 0 (rigid contact has "
                            "no primal formulation)",
                            k, p->R[k]);
    for (int i = 0; i < p->nc; ++i)
      if (fabs(p->R[3 * i] - p->R[3 * i + 1]) > 1e-12 * fmax(p->R[3 * i], p->R[3 * i + 1]))
        return mr_error_set(err, MR_ERR_INVALID,
                            "ccp-newton: contact %d has tangential compliances %g != %g", i,
                            p->R[3 * i], p->R[3 * i + 1]);
    mr_copy(R, p->R, n);
    return MR_OK;
  }
  if (!(s->compliance_eps > 0.0) || !isfinite(s->compliance_eps))
    return mr_error_set(err, MR_ERR_INVALID,
                        "ccp-newton: compliance_eps = %g with no R in the problem: the primal "
                        "formulation needs R > 0",
                        s->compliance_eps);
  double dmax = 0.0, B[9];
  for (int i = 0; i < p->nc; ++i) {
    mr_problem_G_block(p, i, i, B);
    dmax = fmax(dmax, fmax(B[0], fmax(B[4], B[8])));
  }
  if (!(dmax > 0.0) || !isfinite(dmax))
    return mr_error_set(err, MR_ERR_INVALID, "ccp-newton: G has max diagonal %g and no R is given",
                        dmax);
  double e = s->compliance_eps, floor = e * NEWTON_R_FLOOR * dmax;
  for (int i = 0; i < p->nc; ++i) {
    mr_problem_G_block(p, i, i, B);
    double rt = e * 0.5 * (B[0] + B[4]), rn = e * B[8];
    R[3 * i] = R[3 * i + 1] = fmax(rt, floor);
    R[3 * i + 2] = fmax(rn, floor);
  }
  return MR_OK;
}

/* pivoted Cholesky of G into L (n x n) and pinv; returns the rank */
static int pivoted_cholesky(const double *G, int n, double *L, int *perm, int *pinv) {
  double dmax = 0.0;
  mr_copy(L, G, n * n);
  for (int i = 0; i < n; ++i)
    perm[i] = i, dmax = fmax(dmax, G[i * n + i]);
  double tol = NEWTON_RANK_TOL * dmax;
  int r = 0;
  for (; r < n; ++r) {
    /* the largest remaining diagonal entry of the Schur complement */
    int j = r;
    for (int i = r + 1; i < n; ++i)
      if (L[i * n + i] > L[j * n + j]) j = i;
    if (!(L[j * n + j] > tol)) break;
    /* symmetric swap of rows and columns r and j (the full matrix is kept) */
    for (int k = 0; k < n; ++k) {
      double t = L[r * n + k];
      L[r * n + k] = L[j * n + k], L[j * n + k] = t;
    }
    for (int k = 0; k < n; ++k) {
      double t = L[k * n + r];
      L[k * n + r] = L[k * n + j], L[k * n + j] = t;
    }
    int t = perm[r];
    perm[r] = perm[j], perm[j] = t;
    /* column r of L and the rank-one update of the trailing block */
    double d = sqrt(L[r * n + r]);
    L[r * n + r] = d;
    for (int i = r + 1; i < n; ++i)
      L[i * n + r] /= d;
    for (int i = r + 1; i < n; ++i)
      for (int k = r + 1; k < n; ++k)
        L[i * n + k] -= L[i * n + r] * L[k * n + r];
  }
  /* clear the truncated columns and the upper triangle */
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (k > i || k >= r) L[i * n + k] = 0.0;
  for (int i = 0; i < n; ++i)
    pinv[perm[i]] = i;
  return r;
}

/* u from the warm start: u = M⁻¹ Jᵀ λ₀ (H is scratch here) */
static int warm_velocity(newton_ctx *x, const double *lambda0) {
  int n = 3 * x->p->nc, nv = x->jv.nv;
  mr_zero(x->u, nv);
  if (x->jv.blocks) { /* u = Jᵀλ₀ is y = λ₀ */
    for (int q = 0; q < n; ++q)
      x->u[q] = isfinite(lambda0[q]) ? lambda0[q] : 0.0;
    return 0;
  }
  for (int q = 0; q < n; ++q) {
    if (lambda0[q] == 0.0 || !isfinite(lambda0[q])) continue;
    jac_row(&x->jv, q, x->row);
    mr_axpy(x->u, lambda0[q], x->row, nv);
  }
  if (!x->jv.M || nv == 0) return 0;
  mr_copy(x->H, x->jv.M, nv * nv);
  if (mr_cholesky(x->H, nv) != 0) return -1;
  mr_cholesky_solve(x->H, nv, x->u);
  return 0;
}

/* the CCP criterion with G + R at the current λ; fills ctx->c with (G + R)λ + g */
static double ccp_criterion(newton_ctx *x) {
  const mr_contact_problem *p = x->p;
  int n = 3 * p->nc;
  mr_problem_G_mul(p, x->lambda, x->c);
  for (int q = 0; q < n; ++q)
    x->c[q] += x->R[q] * x->lambda[q] + p->g[q];
  return mr_problem_criteria(p, x->lambda, x->c, 0, NULL, NULL, NULL);
}

/* the criterion in use at the current λ (ctx->c filled as by ccp_criterion): the CCP one, or
 * under MR_CRITERION_NCP the NCP criterion on the problem's own c = (G + R_problem)λ + g
 * (computed in c0, scratch between line searches), as mr_solve measures it */
static double stop_criterion(newton_ctx *x, const mr_solver_settings *s) {
  double e = ccp_criterion(x);
  if (!mr_stop_on_ncp(s)) return e;
  mr_problem_velocity(x->p, x->lambda, x->c0);
  return mr_problem_criteria(x->p, x->lambda, x->c0, 1, NULL, NULL, NULL);
}

/* φ(α) = ℓ(u + αΔ): φ'(α) = a0 + α a1 − dᵀλ(c0 + α d) and φ''(α) = a1 + Σᵢ dᵢᵀ Wᵢ dᵢ, with
 * a0 = ΔᵀM u, a1 = ΔᵀMΔ, c0 = c(u), d = JΔ: O(nc) per evaluation */
static void phi_derivatives(const newton_ctx *x, double a0, double a1, double alpha, double *d1,
                            double *d2) {
  const mr_contact_problem *p = x->p;
  *d1 = a0 + alpha * a1, *d2 = a1;
  for (int i = 0; i < p->nc; ++i) {
    const double *R = x->R + 3 * i, *di = x->d + 3 * i;
    double mut = scaled_mu(p, i, R), z[3], pz[3], D[9];
    for (int k = 0; k < 3; ++k)
      z[k] = -(x->c0[3 * i + k] + alpha * di[k]) / sqrt(R[k]);
    project(mut, z, pz);
    cone_projection_jacobian(mut, z, D);
    for (int k = 0; k < 3; ++k) {
      *d1 -= di[k] * pz[k] / sqrt(R[k]);
      for (int l = 0; l < 3; ++l)
        *d2 += di[k] * D[3 * k + l] * di[l] / sqrt(R[k] * R[l]);
    }
  }
}

/* the minimiser of φ along Δ (φ convex, φ'(0) = slope < 0): bracket, then safeguarded Newton on
 * φ'; returns 0 when no bracket is found */
static double exact_step(newton_ctx *x, double slope) {
  const mr_contact_problem *p = x->p;
  int n = 3 * p->nc, nv = x->jv.nv;
  double *Md = x->dir + nv, a0 = mr_dot(x->dir, x->ut, nv), a1, d1, d2;
  mass_mul(&x->jv, x->dir, Md);
  a1 = mr_dot(x->dir, Md, nv);
  mr_copy(x->c0, x->c, n);
  if (x->jv.blocks)
    mr_copy(x->d, Md, n); /* J = M = G */
  else
    jac_mul(x, x->dir, x->d);
  double lo = 0.0, hi = 0.0, alpha = 1.0;
  /* the full Newton step when it is already nearly exact (the quadratic phase) */
  phi_derivatives(x, a0, a1, 1.0, &d1, &d2);
  if (fabs(d1) <= NEWTON_FULL_STEP_TOL * fabs(slope)) return 1.0;
  for (int k = 0; k < NEWTON_MAX_BACKTRACK && hi == 0.0; ++k) {
    phi_derivatives(x, a0, a1, alpha, &d1, &d2);
    if (d1 >= 0.0)
      hi = alpha;
    else
      lo = alpha, alpha *= 2.0;
  }
  if (hi == 0.0) return 0.0;
  for (int k = 0; k < NEWTON_MAX_BACKTRACK; ++k) {
    phi_derivatives(x, a0, a1, alpha, &d1, &d2);
    if (fabs(d1) <= NEWTON_LS_TOL * fabs(slope)) break;
    if (d1 > 0.0)
      hi = alpha;
    else
      lo = alpha;
    double next = d2 > 0.0 ? alpha - d1 / d2 : 0.5 * (lo + hi);
    alpha = next > lo && next < hi ? next : 0.5 * (lo + hi);
    if (hi - lo <= 1e-15 * hi) break;
  }
  return alpha;
}

/* is u + α Δ accepted by Armijo's test (ut is scratch)? then u ← u + αΔ */
static int armijo_accept(newton_ctx *x, const mr_solver_settings *s, double f0, double slope,
                         double alpha) {
  int nv = x->jv.nv;
  double *ut = x->dir + nv; /* scratch after dir */
  for (int a = 0; a < nv; ++a)
    ut[a] = x->u[a] + alpha * x->dir[a];
  if (!(evaluate(x, ut) <= f0 + s->armijo_c * alpha * slope + NEWTON_ROUNDOFF * fabs(f0))) return 0;
  mr_copy(x->u, ut, nv);
  return 1;
}

/* the step along dir from u (cost f0): the exact minimiser along Δ when it passes Armijo's test,
 * else Armijo backtracking from the full step; returns the accepted step or 0 */
static double line_search(newton_ctx *x, const mr_solver_settings *s, double f0) {
  int nv = x->jv.nv;
  double slope = mr_dot(x->grad, x->dir, nv), alpha = 1.0;
  double beta = s->backtrack > 0.0 && s->backtrack < 1.0 ? s->backtrack : 0.5;
  if (!(slope < 0.0)) return 0.0;
  if (!s->newton_armijo_only) {
    double a = exact_step(x, slope);
    if (a > 0.0 && armijo_accept(x, s, f0, slope, a)) return a;
  }
  for (int k = 0; k < NEWTON_MAX_BACKTRACK; ++k, alpha *= beta)
    if (armijo_accept(x, s, f0, slope, alpha)) return alpha;
  return 0.0;
}

/* the Newton iterations */
static mr_status newton_loop(newton_ctx *x, const mr_solver_settings *s, mr_solver_stats *st,
                             mr_error *err) {
  int nv = x->jv.nv, small = 0, fixed = 0;
  double f = evaluate(x, x->u);
  st->eps_model = stop_criterion(x, s);
  st->converged = st->eps_model <= s->eps_abs;
  for (int k = 1; k <= s->max_iter && !st->converged; ++k) {
    /* Newton direction */
    f = evaluate(x, x->u);
    gradient(x);
    if (newton_direction(x) != 0)
      return mr_error_set(err, MR_ERR_NUMERIC,
                          "ccp-newton: Hessian not positive definite "
                          "(is M positive definite?)");
    st->iterations = k;
    /* a Newton correction below the relative tolerance is taken whole; the second in a row
     * (the first may still change the active set) makes u a fixed point: converged on the
     * model's criterion; on the NCP criterion a fixed point that misses it is a stall */
    double unorm = velocity_norm(x, x->u), dnorm = velocity_norm(x, x->dir);
    double tiny = fmax(s->eps_rel, NEWTON_FIXED_POINT_ULPS * DBL_EPSILON) * unorm;
    if (dnorm <= tiny) {
      mr_axpy(x->u, 1.0, x->dir, nv);
      evaluate(x, x->u);
      st->eps_model = stop_criterion(x, s);
      st->converged = (fixed && !mr_stop_on_ncp(s)) || st->eps_model <= s->eps_abs;
      if (fixed && !st->converged) break;
      fixed = 1, small = 0;
      continue;
    }
    fixed = 0;
    /* step, then the criterion at the new λ */
    double alpha = line_search(x, s, f);
    evaluate(x, x->u);
    st->eps_model = stop_criterion(x, s);
    st->converged = st->eps_model <= s->eps_abs;
    /* stall: no step, or two steps in a row below eps_rel (one may be the last real step) */
    small = alpha * dnorm <= s->eps_rel * velocity_norm(x, x->u) ? small + 1 : 0;
    if (alpha == 0.0 || small >= 2) break;
  }
  /* eps_model is the model's own criterion whatever the solve stopped on */
  if (mr_stop_on_ncp(s)) st->eps_model = ccp_criterion(x);
  return MR_OK;
}

/* carve the per-solve arrays; 0 on success */
static int newton_alloc(newton_ctx *x, mr_arena *a, int n, int nv) {
  double **vec[] = {&x->u, &x->grad, &x->ut};
  for (size_t i = 0; i < sizeof vec / sizeof vec[0]; ++i)
    if (!(*vec[i] = mr_arena_doubles(a, (size_t)nv + 1))) return -1;
  x->dir = mr_arena_doubles(a, 2 * (size_t)nv + 1);
  x->row = mr_arena_doubles(a, 3 * (size_t)nv + 1);
  x->c = mr_arena_doubles(a, (size_t)n);
  x->lambda = mr_arena_doubles(a, (size_t)n);
  x->c0 = mr_arena_doubles(a, (size_t)n);
  x->d = mr_arena_doubles(a, (size_t)n);
  if (x->jv.blocks) { /* no H: the sparse factor instead, S and a scratch */
    x->S = mr_arena_doubles(a, 3 * (size_t)n);
    x->tmp = mr_arena_doubles(a, (size_t)n);
    return x->dir && x->row && x->c && x->lambda && x->c0 && x->d && x->S && x->tmp ? 0 : -1;
  }
  x->H = mr_arena_doubles(a, (size_t)nv * (size_t)nv + 1);
  return x->dir && x->row && x->c && x->lambda && x->c0 && x->d && x->H ? 0 : -1;
}

/* the Jacobian view: the problem's J and M, the block-sparse G (when its sparse factor pays),
 * or the pivoted factor of a dense G */
static int newton_jacobian(newton_ctx *x, mr_arena *a, int n) {
  const mr_contact_problem *p = x->p;
  x->jv.n = n;
  if (p->J && p->M && p->nv > 0) {
    x->jv.J = p->J, x->jv.M = p->M, x->jv.nv = p->nv;
    return 0;
  }
  if (!p->G) {
    x->jv.blocks = p, x->jv.nv = n;
    return 0;
  }
  double *L = mr_arena_doubles(a, (size_t)n * (size_t)n);
  int *perm = mr_arena_alloc(a, 2 * (size_t)n * sizeof(int));
  if (!L || !perm) return -1;
  x->jv.J = NULL, x->jv.M = NULL;
  x->jv.L = L, x->jv.pinv = perm + n;
  x->jv.nv = pivoted_cholesky(p->G, n, L, perm, perm + n);
  return 0;
}

/* the state's tag of a velocity of nv entries: nv for u, −nv for the coordinates y of the
 * block-sparse path */
static int velocity_tag(const newton_ctx *x) {
  return x->jv.blocks ? -x->jv.nv : x->jv.nv;
}

/* does the state hold a velocity of this kind and size (a previous ccp-newton solve)? */
static int state_velocity(const mr_solver_state *st, int tag, int nv) {
  if (!st || !st->valid || !st->y || st->nu != tag || st->cap < nv || nv == 0) return 0;
  for (int a = 0; a < nv; ++a)
    if (!isfinite(st->y[a])) return 0;
  return 1;
}

/* keep u (or y) in the state for the next warm start (when it fits) */
static void save_velocity(mr_solver_state *st, const double *u, int tag, int nv) {
  if (!st) return;
  st->valid = st->y && st->cap >= nv && nv > 0;
  st->nu = st->valid ? tag : 0;
  st->rho = 0.0; /* not an ADMM state */
  if (st->valid) mr_copy(st->y, u, nv);
}

static mr_status newton_check(const mr_contact_problem *p, mr_error *err) {
  if (!p || p->nc < 0) return mr_error_set(err, MR_ERR_INVALID, "ccp-newton: no problem");
  if (p->nc > 0 && (!mr_problem_has_G(p) || !p->g || !p->mu))
    return mr_error_set(err, MR_ERR_INVALID, "ccp-newton: problem lacks G, g or mu");
  for (int i = 0; i < p->nc; ++i)
    if (!(p->mu[i] >= 0.0) || !isfinite(p->mu[i]))
      return mr_error_set(err, MR_ERR_INVALID, "ccp-newton: contact %d has mu = %g", i, p->mu[i]);
  return MR_OK;
}

/* the solve on a problem the solver reads as it is (dense G, J and M, or a block-sparse G whose
 * sparse factor pays, the factor's slot given) */
static mr_status newton_solve(const mr_contact_problem *p, const mr_solver_settings *s,
                              mr_solver_state *state, mr_sparse_chol **chol, mr_arena *work,
                              double *lambda, double *c, mr_solver_stats *stats, mr_error *err) {
  int n = 3 * p->nc;
  size_t mark = mr_arena_mark(work);
  newton_ctx x = {.p = p};
  double *R = mr_arena_doubles(work, (size_t)n);
  if (!R || newton_jacobian(&x, work, n) != 0 || newton_alloc(&x, work, n, x.jv.nv) != 0) {
    mr_arena_reset(work, mark);
    return mr_error_set(err, MR_ERR_NOMEM, "ccp-newton: scratch arena too small for nc = %d",
                        p->nc);
  }
  if (x.jv.blocks) {
    if (!*chol) *chol = mr_chol_create();
    if (!*chol || mr_chol_analyze(*chol, p) < 0) {
      mr_arena_reset(work, mark);
      return mr_error_set(err, MR_ERR_NOMEM,
                          "ccp-newton: sparse Cholesky analysis failed for nc = %d", p->nc);
    }
    x.chol = *chol;
  }
  x.R = R;
  mr_status status = compliance(p, s, R, err);
  if (status == MR_OK && s->warm_start && state_velocity(state, velocity_tag(&x), x.jv.nv)) {
    mr_copy(x.u, state->y, x.jv.nv);
  } else if (status == MR_OK) {
    if (!s->warm_start) mr_zero(x.c, n); /* a cold start is from λ = 0 */
    if (warm_velocity(&x, s->warm_start ? lambda : x.c) != 0)
      status = mr_error_set(err, MR_ERR_NUMERIC, "ccp-newton: M is not positive definite");
  }
  if (status == MR_OK) status = newton_loop(&x, s, stats, err);
  if (status == MR_OK) {
    mr_copy(lambda, x.lambda, n);
    mr_copy(c, x.c, n);
    stats->eps_abs =
        mr_problem_criteria(p, lambda, c, 1, &stats->eps_p, &stats->eps_d, &stats->eps_c);
  }
  stats->factorizations = x.factorizations;
  if (status == MR_OK) save_velocity(state, x.u, velocity_tag(&x), x.jv.nv);
  mr_arena_reset(work, mark);
  return status;
}

mr_status mr_solver_ccp_newton(const mr_contact_problem *p, const mr_solver_settings *s,
                               mr_solver_state *state, mr_arena *work, double *lambda, double *c,
                               mr_solver_stats *stats, mr_error *err) {
  mr_status status = newton_check(p, err);
  if (status != MR_OK) return status;
  int n = 3 * p->nc;
  stats->iterations = stats->factorizations = 0;
  stats->converged = n == 0;
  if (n == 0) return MR_OK;
  int primal = p->J && p->M && p->nv > 0;
  if (p->G || primal || mr_sparse_chol_pays(p->nc, p->Gb_row[p->nc])) {
    mr_sparse_chol *own = NULL, **slot = state ? &state->chol : &own;
    status = newton_solve(p, s, state, slot, work, lambda, c, stats, err);
    mr_chol_free(own);
    return status;
  }
  /* a block-sparse G too small or too full for the sparse factor to pay: a dense copy */
  size_t mark = mr_arena_mark(work);
  double *G = mr_arena_doubles(work, (size_t)n * (size_t)n);
  if (!G)
    return mr_error_set(err, MR_ERR_NOMEM, "ccp-newton: scratch arena too small for nc = %d",
                        p->nc);
  mr_problem_G_dense(p, G);
  mr_contact_problem dense = *p;
  dense.G = G;
  status = newton_solve(&dense, s, state, NULL, work, lambda, c, stats, err);
  mr_arena_reset(work, mark);
  return status;
}

size_t mr_newton_work_size(int nc, int nv) {
  size_t n = 3 * (size_t)(nc > 0 ? nc : 0), m = nv > 0 ? (size_t)nv : n;
  size_t doubles = m * m + 10 * m + 5 * n + 16 * 4 + (nv > 0 ? 0 : n * n + n);
  return doubles * sizeof(double) + 16 * 32;
}

size_t mr_newton_sparse_work_size(int nc) {
  size_t n = 3 * (size_t)(nc > 0 ? nc : 0);
  return (18 * n + 16 * 4) * sizeof(double) + 16 * 32;
}
