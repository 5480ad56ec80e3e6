/* lcp-lemke: the step's contact problem as the standard linear complementarity problem of
 * Stewart & Trinkle (1996), solved by Lemke's pivoting method (lemke.c).
 *
 * Per contact i the friction force is β ≥ 0 along the four directions +t₁, −t₁, +t₂, −t₂, so
 * λ_T = (β₁ − β₂, β₃ − β₄), with a slack γᵢ (the sliding speed) for maximum dissipation. With
 * W = G + R and c = W λ + g, the unknowns z = (λ_N, β, γ) and their complements:
 *
 *   λ_N ≥ 0  ⟂  c_N ≥ 0                      (Signorini)
 *   β_k ≥ 0  ⟂  d_kᵀ c_T + γ ≥ 0              (friction only against the sliding direction)
 *   γ   ≥ 0  ⟂  μ λ_N − Σ_k β_k ≥ 0           (on the friction polygon when sliding)
 *
 * The friction set is the diamond |λ_t1| + |λ_t2| ≤ μ λ_N (the convex hull of the four
 * directions), not the box max(|λ_t1|, |λ_t2|) ≤ μ λ_N of lcp-pgs: a sliding contact's force is
 * μ λ_N along the direction d_k most opposed to c_T, a vertex of the diamond. A contact with
 * μ = 0 (a joint limit) has λ_N only; a bilateral constraint λ = λ⁺ − λ⁻ on each row, both ≥ 0
 * with complements ±c (so c = 0); a box constraint (joint friction, |λ_N| ≤ f) the two
 * directions ±n and its slack with complement f − β₊ − β₋.
 *
 * Dense: the LCP has m = 6 nc unknowns (fewer with frictionless or box rows), its matrix and
 * the tableau take 3 m² doubles, each pivot O(m²) and a solve O(m³); contacts beyond
 * MR_LEMKE_MAX_CONTACTS are refused with an error. Iterations are pivots. It stops when z₀
 * leaves the basis (an exact solution up to round-off), and after max_iter pivots or a ray with
 * converged = 0 and the last basis's point (the solution of the LCP shifted by z₀). */
#include <math.h>
#include <string.h>

#include "contact/lemke.h"
#include "contact/solvers.h"
#include "core/arena.h"

/* one unknown of the LCP: its force row (3i + a) with a sign, or (row −1) a slack of block i */
typedef struct {
  int row;   /* λ row it adds to, or −1 for a slack γ */
  double s;  /* ±1 */
  int block; /* contact index */
  int slack; /* for β: the index of its block's slack γ (−1: none) */
} lemke_var;

/* the unknowns of block i appended at vars + *m */
static void block_vars(const mr_contact_problem *p, int i, lemke_var *v, int *m) {
  if (mr_problem_bilateral(p, i)) {
    for (int a = 0; a < 6; ++a)
      v[(*m)++] = (lemke_var){3 * i + a / 2, a % 2 ? -1.0 : 1.0, i, -1};
    return;
  }
  int box = mr_problem_box(p, i), first = *m;
  if (!box) v[(*m)++] = (lemke_var){3 * i + 2, 1.0, i, -1};
  if (!box && !(p->mu[i] > 0)) return;
  int nd = box ? 2 : 4, slack = *m + nd;
  for (int k = 0; k < nd; ++k)
    v[(*m)++] = (lemke_var){box ? 3 * i + 2 : 3 * i + k / 2, k % 2 ? -1.0 : 1.0, i, slack};
  v[(*m)++] = (lemke_var){-1, 1.0, i, first};
}

/* W = G + R entry (r, c) */
static double wentry(const mr_contact_problem *p, int r, int c) {
  return p->G[(size_t)r * 3 * p->nc + c] + (r == c && p->R ? p->R[r] : 0.0);
}

/* Q and q of the LCP over the unknowns v (m) */
static void build(const mr_contact_problem *p, const lemke_var *v, int m, double *Q, double *q) {
  for (int a = 0; a < m; ++a) {
    double *row = Q + (size_t)a * m;
    memset(row, 0, sizeof(double) * (size_t)m);
    if (v[a].row >= 0) {
      for (int b = 0; b < m; ++b)
        if (v[b].row >= 0) row[b] = v[a].s * v[b].s * wentry(p, v[a].row, v[b].row);
      if (v[a].slack >= 0) row[v[a].slack] = 1.0;
      q[a] = v[a].s * p->g[v[a].row];
      continue;
    }
    // slack of block i: μ λ_N − Σ β (contact), f − Σ β (box)
    int i = v[a].block, box = mr_problem_box(p, i);
    for (int b = 0; b < m; ++b)
      if (v[b].slack == a) row[b] = -1.0;
    if (!box) row[v[a].slack] = p->mu[i];
    q[a] = box ? p->mu[i] : 0.0;
  }
}

/* λ = Σ s z over the force unknowns */
static void forces(const mr_contact_problem *p, const lemke_var *v, int m, const double *z,
                   double *lambda) {
  memset(lambda, 0, sizeof(double) * 3 * (size_t)p->nc);
  for (int a = 0; a < m; ++a)
    if (v[a].row >= 0) lambda[v[a].row] += v[a].s * z[a];
}

/* per contact: diamond feasibility, Signorini, and maximum dissipation on the diamond
 * (−λ_T·c_T = μ λ_N max(|c_t1|, |c_t2|), its support function) */
static double diamond_contact(double mu, const double *l, const double *c) {
  double ep = fmax(fmax(-l[2], 0.0), fabs(l[0]) + fabs(l[1]) - mu * l[2]);
  double ed = fmax(-c[2], 0.0);
  double ec = fabs(l[2] * c[2]);
  double diss = mu * fmax(l[2], 0.0) * fmax(fabs(c[0]), fabs(c[1])) + l[0] * c[0] + l[1] * c[1];
  return fmax(fmax(ep, ed), fmax(ec, fabs(diss)));
}

double mr_lemke_criterion(const mr_contact_problem *p, const double *lambda, const double *c) {
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i) {
    const double *l = lambda + 3 * i, *ci = c + 3 * i;
    if (mr_problem_bilateral(p, i))
      e = fmax(e, sqrt(ci[0] * ci[0] + ci[1] * ci[1] + ci[2] * ci[2]));
    else if (mr_problem_box(p, i)) {
      double ep, ed;
      mr_box_criteria(p->mu[i], l, ci, &ep, &ed);
      e = fmax(e, fmax(ep, ed));
    } else
      e = fmax(e, diamond_contact(p->mu[i], l, ci));
  }
  return e;
}

size_t mr_lemke_work_size(int nc) {
  size_t m = 6 * (size_t)(nc > 0 ? nc : 0);
  return (m * m + 4 * m) * sizeof(double) + m * sizeof(lemke_var) + mr_lemke_bytes((int)m) + 256;
}

static mr_status check(const mr_contact_problem *p, const mr_solver_settings *s, mr_error *err) {
  if (p->nc > MR_LEMKE_MAX_CONTACTS)
    return mr_error_set(err, MR_ERR_UNSUPPORTED,
                        "lcp-lemke: %d contacts, more than the %d it accepts (a dense LCP of "
                        "6 nc unknowns: O(nc²) memory, O(nc³) time per solve); use lcp-pgs or an "
                        "NCP solver",
                        p->nc, MR_LEMKE_MAX_CONTACTS);
  return mr_gs_check(p, s, err);
}

mr_status mr_solver_lcp_lemke(MR_SOLVER_ARGS) {
  mr_status st = check(p, s, err);
  if (st) return st;
  int n = 3 * p->nc, m = 0;
  stats->converged = 1, stats->iterations = 0;
  if (p->nc == 0) return MR_OK;
  size_t mark = mr_arena_mark(work), cap = 6 * (size_t)p->nc;
  lemke_var *v = mr_arena_alloc(work, sizeof *v * cap);
  double *Q = mr_arena_doubles(work, cap * cap), *q = mr_arena_doubles(work, cap);
  double *z = mr_arena_doubles(work, cap), *w = mr_arena_doubles(work, cap);
  if (!v || !Q || !q || !z || !w) {
    mr_arena_reset(work, mark);
    return mr_error_set(err, MR_ERR_NOMEM, "lcp-lemke: work arena too small for %d contacts",
                        p->nc);
  }
  for (int i = 0; i < p->nc; ++i)
    block_vars(p, i, v, &m);
  build(p, v, m, Q, q);
  mr_error lerr = {0};
  int pivots = 0;
  double z0 = 0;
  st = mr_lemke_solve(Q, q, m, s->max_iter, work, z, w, &pivots, &z0, &lerr);
  if (st == MR_ERR_NOMEM) {
    mr_arena_reset(work, mark);
    return mr_error_set(err, st, "lcp-lemke: %s", lerr.msg);
  }
  forces(p, v, m, z, lambda);
  mr_problem_velocity(p, lambda, c);
  stats->iterations = pivots;
  stats->eps_model = mr_lemke_criterion(p, lambda, c);
  stats->converged = st == MR_OK;
  mr_arena_reset(work, mark);
  (void)n;
  return MR_OK;
}
