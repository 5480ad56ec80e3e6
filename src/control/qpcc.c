/* QPCC solver for control through contact: Tan, Turk & Liu, "Soft Body Locomotion",
 * supplementary document, eq. 1-3 (the problem, see include/moreau/qpcc.h), Algorithm 1 (best-
 * first search over contact modes) and Algorithm 2 (pivoting children of a solved mode).
 *
 * A mode fixes one side of every complementarity pair 0 ≤ a ⟂ b ≥ 0: spec 1 means a = 0, b ≥ 0,
 * spec 0 means a ≥ 0, b = 0 (the paper's CCSpec True / False). Pairs are numbered
 *   [0, nc)                 normal    a = f⊥ᵢ,   b = Nᵢᵀ ṗ
 *   [nc, nc + Σnd)          tangent   a = f∥ᵢₖ,  b = Dᵢₖᵀ ṗ + λᵢ
 *   [nc + Σnd, 2nc + Σnd)   cone      a = λᵢ,    b = μᵢ f⊥ᵢ − Σₖ f∥ᵢₖ
 * and each mode is a convex QP in x = (ṗ, u, f⊥, f∥, λ) solved by src/contact/qp.c.
 *
 * Search (Algorithm 1): solve the static mode (normal 0, tangents 0, cone 1); if it is infeasible
 * solve the mixed LCP of eq. 2-3 with u fixed near 0 (Lemke, src/contact/lemke.c) and start from
 * its mode, as the paper does; last, every contact separating (normal 1, tangents 1, cone 0).
 * Then repeatedly dequeue the QP with the lowest objective (ties: earliest solved),
 * keep the best, and solve its children (Algorithm 2, per contact, pivots accumulated within a
 * contact as in the pseudo-code):
 *   separating with Nᵀṗ = 0        → normal pair to 0 (contact re-established)
 *   normal 0 with f⊥ = 0            → normal pair to 1 (contact breaks)
 *   static with μ f⊥ − Σ f∥ = 0 and f⊥ > 0 → cone pair to 0, tangents to 1 except the one most
 *                                       aligned with the static friction force D f∥ (sliding)
 *   sliding with λ = 0             → cone pair to 1, tangents to 0 (sliding stops)
 * The static→sliding test requires f⊥ > 0: at the cone's apex (f⊥ = 0) the friction force is
 * zero and has no direction to slide along; without this guard a breaking contact would also
 * spawn a meaningless "sliding" child. Every solved mode enters a hash set (the paper keeps only
 * dequeued ones), so no QP is solved twice. The search ends when the queue is empty (a local
 * optimum over modes reachable by pivots, not a certificate of global optimality) or when the QP
 * budget is spent. Non-convex objectives are refused up front (eigenvalues of H). */
#include "moreau/qpcc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lemke.h"
#include "control/qp.h"
#include "core/linalg.h"

struct mr_qpcc_workspace {
  int nv, nu, nc, ntd, ny, n, npairs, m_task, max_qp, m_eq, m_in;
  int *toff;                 /* first tangent of each contact (nc + 1) */
  mr_qp_workspace qp;        /* the per-mode QP solver */
  double *H, *c;             /* QP objective (n x n, n) */
  double *Ae, *be, *Ai, *bi; /* QP constraints of the current mode */
  double *row1, *row2;       /* pair forms (n each) */
  double *eigA, *eig;        /* convexity test (ny x ny, ny) */
  double *xs, *fv;           /* minimiser and objective of every solved QP (max_qp x n, max_qp) */
  unsigned char *modes;      /* mode of every solved QP (max_qp x npairs) */
  unsigned char *child;      /* scratch mode (npairs) */
  int *heap, heap_n;         /* priority queue of solved QP indices */
  int *table, table_cap;     /* open-addressing hash set of solved modes (indices, −1 empty) */
  mr_arena mlcp;             /* scratch of the mixed-LCP initial guess */
};

mr_qpcc_settings mr_qpcc_settings_default(void) {
  mr_qpcc_settings s = {1000, 1e-9, 1e-12, NULL, NULL};
  return s;
}

const char *mr_qpcc_outcome_name(mr_qpcc_outcome o) {
  static const char *names[] = {"optimum", "infeasible", "budget", "non-convex", "unbounded"};
  return (o >= MR_QPCC_OPTIMUM && o <= MR_QPCC_UNBOUNDED) ? names[o] : "?";
}

const char *mr_qpcc_mode_name(mr_qpcc_contact_mode m) {
  static const char *names[] = {"static", "separating", "sliding"};
  return (m >= MR_QPCC_STATIC && m <= MR_QPCC_SLIDING) ? names[m] : "?";
}

static int total_tangents(const mr_qpcc_problem *p) {
  int t = 0;
  for (int i = 0; i < p->nc; ++i)
    t += p->nd[i];
  return t;
}

int mr_qpcc_size(const mr_qpcc_problem *p) {
  return p->nv + p->nu + 2 * p->nc + total_tangents(p);
}

/* ---------------------------------------------------------------- validation */

static int all_finite(const double *a, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(a[i])) return 0;
  return 1;
}

static mr_status validate_arrays(const mr_qpcc_problem *p, int ny, mr_error *err) {
  if (!p->M || !p->f || !all_finite(p->M, p->nv * p->nv) || !all_finite(p->f, p->nv))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: M and f must be given and finite");
  if (p->nu > 0 && (!p->A || !p->u_lb || !p->u_ub || !all_finite(p->A, p->nv * p->nu)))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: A, u_lb, u_ub must be given (A finite)");
  for (int j = 0; j < p->nu; ++j)
    if (isnan(p->u_lb[j]) || isnan(p->u_ub[j]) || p->u_lb[j] > p->u_ub[j])
      return mr_error_set(err, MR_ERR_INVALID, "qpcc: control %d has bounds [%g, %g]", j,
                          p->u_lb[j], p->u_ub[j]);
  if (p->H && !all_finite(p->H, ny * ny))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: the objective Hessian H is not finite");
  if (p->c && !all_finite(p->c, ny))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: the objective vector c is not finite");
  if (p->m_task > 0 &&
      (!p->C || !p->d || !all_finite(p->C, p->m_task * ny) || !all_finite(p->d, p->m_task)))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: task rows C, d must be given and finite");
  return MR_OK;
}

static mr_status validate_contacts(const mr_qpcc_problem *p, mr_error *err) {
  if (p->nc > 0 && (!p->N || !p->nd || !p->D || !p->mu))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: N, nd, D and mu must be given");
  for (int i = 0; i < p->nc; ++i) {
    if (p->nd[i] < 1)
      return mr_error_set(err, MR_ERR_INVALID, "qpcc: contact %d has %d tangent directions", i,
                          p->nd[i]);
    if (!(p->mu[i] >= 0) || !isfinite(p->mu[i]))
      return mr_error_set(err, MR_ERR_INVALID, "qpcc: contact %d has mu = %g", i, p->mu[i]);
  }
  if (p->nc > 0 &&
      (!all_finite(p->N, p->nc * p->nv) || !all_finite(p->D, total_tangents(p) * p->nv)))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: contact directions N, D must be finite");
  return MR_OK;
}

mr_status mr_qpcc_validate(const mr_qpcc_problem *p, mr_error *err) {
  if (p->nv < 1 || p->nu < 0 || p->nc < 0 || p->m_task < 0)
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: bad sizes nv=%d nu=%d nc=%d m_task=%d", p->nv,
                        p->nu, p->nc, p->m_task);
  if (!(p->dt > 0) || !isfinite(p->dt))
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: dt = %g must be positive", p->dt);
  int ny = p->nv + p->nu;
  mr_status st = validate_arrays(p, ny, err);
  if (st == MR_OK) st = validate_contacts(p, err);
  if (st == MR_OK && p->H) {
    double hmax = 0;
    for (int i = 0; i < ny * ny; ++i)
      hmax = fmax(hmax, fabs(p->H[i]));
    double asym = mr_asymmetry(p->H, ny);
    if (asym > 1e-12 * (1 + hmax))
      return mr_error_set(err, MR_ERR_INVALID, "qpcc: H is not symmetric (max |H - Hᵀ| = %g)",
                          asym);
  }
  return st;
}

/* ---------------------------------------------------------------- workspace */

static size_t pow2_at_least(size_t n) {
  size_t c = 16;
  while (c < n)
    c *= 2;
  return c;
}

/* bytes of the mixed-LCP scratch: Cholesky of M, M⁻¹ times the contact rows, the LCP */
static size_t mlcp_bytes(const mr_qpcc_workspace *w) {
  size_t nv = (size_t)w->nv, k = (size_t)(w->nc + w->ntd), m = (size_t)w->npairs;
  size_t doubles = nv * nv + k * nv + 3 * nv + m * m + 3 * m;
  return doubles * sizeof(double) + 32 * 16 + mr_lemke_bytes(w->npairs);
}

mr_status mr_qpcc_workspace_create(const mr_qpcc_problem *p, int max_qp, mr_qpcc_workspace **out,
                                   mr_error *err) {
  mr_status st = mr_qpcc_validate(p, err);
  if (st != MR_OK) return st;
  if (max_qp < 1) return mr_error_set(err, MR_ERR_INVALID, "qpcc: max_qp = %d < 1", max_qp);
  mr_qpcc_workspace *w = calloc(1, sizeof *w);
  if (!w) return mr_error_set(err, MR_ERR_NOMEM, "qpcc: out of memory");
  w->nv = p->nv, w->nu = p->nu, w->nc = p->nc, w->ntd = total_tangents(p), w->m_task = p->m_task;
  w->ny = p->nv + p->nu, w->n = mr_qpcc_size(p), w->npairs = 2 * p->nc + w->ntd;
  w->max_qp = max_qp;
  w->m_eq = p->nv + w->npairs, w->m_in = w->npairs + 2 * p->nu + p->m_task;
  w->table_cap = (int)pow2_at_least(2 * (size_t)max_qp + 2);
  size_t n = (size_t)w->n, ny = (size_t)w->ny;
  w->toff = calloc((size_t)p->nc + 1, sizeof(int));
  w->H = calloc(n * n + n, sizeof(double));
  w->Ae = calloc((size_t)w->m_eq * (n + 1) + (size_t)w->m_in * (n + 1) + 2 * n, sizeof(double));
  w->eigA = calloc(ny * ny + ny, sizeof(double));
  w->xs = calloc((size_t)max_qp * (n + 1), sizeof(double));
  w->modes = calloc((size_t)(max_qp + 1) * (size_t)(w->npairs + 1), 1);
  w->heap = calloc((size_t)max_qp + (size_t)w->table_cap, sizeof(int));
  if (!w->toff || !w->H || !w->Ae || !w->eigA || !w->xs || !w->modes || !w->heap) {
    mr_qpcc_workspace_destroy(w);
    return mr_error_set(err, MR_ERR_NOMEM, "qpcc: out of memory (budget %d QPs)", max_qp);
  }
  // carve the blocks
  w->c = w->H + n * n;
  w->be = w->Ae + (size_t)w->m_eq * n, w->Ai = w->be + w->m_eq;
  w->bi = w->Ai + (size_t)w->m_in * n, w->row1 = w->bi + w->m_in, w->row2 = w->row1 + n;
  w->eig = w->eigA + ny * ny;
  w->fv = w->xs + (size_t)max_qp * n;
  w->child = w->modes + (size_t)max_qp * w->npairs;
  w->table = w->heap + max_qp;
  for (int i = 0; i < p->nc; ++i)
    w->toff[i + 1] = w->toff[i] + p->nd[i];
  st = mr_qp_workspace_init(&w->qp, w->n, w->m_eq, w->m_in, err);
  if (st == MR_OK && mr_arena_init(&w->mlcp, mlcp_bytes(w)))
    st = mr_error_set(err, MR_ERR_NOMEM, "qpcc: out of memory (mixed-LCP scratch)");
  if (st != MR_OK) {
    mr_qpcc_workspace_destroy(w);
    return st;
  }
  *out = w;
  return MR_OK;
}

void mr_qpcc_workspace_destroy(mr_qpcc_workspace *w) {
  if (!w) return;
  mr_qp_workspace_destroy(&w->qp);
  mr_arena_destroy(&w->mlcp);
  free(w->toff), free(w->H), free(w->Ae), free(w->eigA), free(w->xs), free(w->modes);
  free(w->heap), free(w);
}

/* ---------------------------------------------------------------- hash set and queue */

static unsigned long mode_hash(const unsigned char *m, int npairs) {
  unsigned long h = 1469598103934665603ul;
  for (int i = 0; i < npairs; ++i)
    h = (h ^ m[i]) * 1099511628211ul;
  return h;
}

/* the slot holding mode m, or the empty slot where it would go */
static int table_slot(const mr_qpcc_workspace *w, const unsigned char *m) {
  int mask = w->table_cap - 1, s = (int)(mode_hash(m, w->npairs) & (unsigned long)mask);
  while (w->table[s] >= 0 &&
         memcmp(w->modes + (size_t)w->table[s] * w->npairs, m, (size_t)w->npairs) != 0)
    s = (s + 1) & mask;
  return s;
}

/* heap order: lower objective first, then the earlier solve */
static int heap_less(const mr_qpcc_workspace *w, int a, int b) {
  return w->fv[a] < w->fv[b] || (w->fv[a] == w->fv[b] && a < b);
}

static void heap_push(mr_qpcc_workspace *w, int idx) {
  int i = w->heap_n++;
  w->heap[i] = idx;
  while (i > 0 && heap_less(w, w->heap[i], w->heap[(i - 1) / 2])) {
    int par = (i - 1) / 2, t = w->heap[par];
    w->heap[par] = w->heap[i], w->heap[i] = t, i = par;
  }
}

static int heap_pop(mr_qpcc_workspace *w) {
  int top = w->heap[0], i = 0;
  w->heap[0] = w->heap[--w->heap_n];
  // sift down
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < w->heap_n && heap_less(w, w->heap[l], w->heap[m])) m = l;
    if (r < w->heap_n && heap_less(w, w->heap[r], w->heap[m])) m = r;
    if (m == i) break;
    int t = w->heap[m];
    w->heap[m] = w->heap[i], w->heap[i] = t, i = m;
  }
  return top;
}

/* ---------------------------------------------------------------- the QP of a mode */

/* offsets of the blocks of x */
static int off_u(const mr_qpcc_workspace *w) {
  return w->nv;
}
static int off_fn(const mr_qpcc_workspace *w) {
  return w->nv + w->nu;
}
static int off_ft(const mr_qpcc_workspace *w) {
  return w->nv + w->nu + w->nc;
}
static int off_l(const mr_qpcc_workspace *w) {
  return w->nv + w->nu + w->nc + w->ntd;
}

static int contact_of_tangent(const mr_qpcc_workspace *w, int t) {
  int i = 0;
  while (w->toff[i + 1] <= t)
    ++i;
  return i;
}

/* the linear forms a (row1) and b (row2) of complementarity pair k */
static void pair_forms(const mr_qpcc_problem *p, mr_qpcc_workspace *w, int k) {
  mr_zero(w->row1, w->n), mr_zero(w->row2, w->n);
  if (k < w->nc) {
    w->row1[off_fn(w) + k] = 1;
    mr_copy(w->row2, p->N + (size_t)k * w->nv, w->nv);
  } else if (k < w->nc + w->ntd) {
    int t = k - w->nc;
    w->row1[off_ft(w) + t] = 1;
    mr_copy(w->row2, p->D + (size_t)t * w->nv, w->nv);
    w->row2[off_l(w) + contact_of_tangent(w, t)] = 1;
  } else {
    int i = k - w->nc - w->ntd;
    w->row1[off_l(w) + i] = 1;
    w->row2[off_fn(w) + i] = p->mu[i];
    for (int t = w->toff[i]; t < w->toff[i + 1]; ++t)
      w->row2[off_ft(w) + t] = -1;
  }
}

/* dynamics rows: M ṗ − Δt (A u + N f⊥ + D f∥) = f̃ */
static int dynamics_rows(const mr_qpcc_problem *p, mr_qpcc_workspace *w) {
  for (int r = 0; r < w->nv; ++r) {
    double *row = w->Ae + (size_t)r * w->n;
    mr_zero(row, w->n);
    mr_copy(row, p->M + (size_t)r * w->nv, w->nv);
    for (int j = 0; j < w->nu; ++j)
      row[off_u(w) + j] = -p->dt * p->A[r * w->nu + j];
    for (int i = 0; i < w->nc; ++i)
      row[off_fn(w) + i] = -p->dt * p->N[i * w->nv + r];
    for (int t = 0; t < w->ntd; ++t)
      row[off_ft(w) + t] = -p->dt * p->D[t * w->nv + r];
    w->be[r] = p->f[r];
  }
  return w->nv;
}

static void push_row(double *A, double *b, int *m, const double *row, double rhs, int n) {
  mr_copy(A + (size_t)*m * n, row, n);
  b[(*m)++] = rhs;
}

/* control bounds (finite ones) and task rows C y ≥ d */
static int fixed_inequalities(const mr_qpcc_problem *p, mr_qpcc_workspace *w, int mi) {
  for (int j = 0; j < w->nu; ++j) {
    mr_zero(w->row1, w->n);
    w->row1[off_u(w) + j] = 1;
    if (isfinite(p->u_lb[j])) push_row(w->Ai, w->bi, &mi, w->row1, p->u_lb[j], w->n);
    w->row1[off_u(w) + j] = -1;
    if (isfinite(p->u_ub[j])) push_row(w->Ai, w->bi, &mi, w->row1, -p->u_ub[j], w->n);
  }
  for (int r = 0; r < p->m_task; ++r) {
    mr_zero(w->row1, w->n);
    mr_copy(w->row1, p->C + (size_t)r * w->ny, w->ny);
    push_row(w->Ai, w->bi, &mi, w->row1, p->d[r], w->n);
  }
  return mi;
}

/* build the QP of a mode into w and return it */
static mr_qp_problem mode_qp(const mr_qpcc_problem *p, mr_qpcc_workspace *w,
                             const unsigned char *mode) {
  int me = dynamics_rows(p, w), mi = 0;
  for (int k = 0; k < w->npairs; ++k) {
    pair_forms(p, w, k);
    push_row(w->Ae, w->be, &me, mode[k] ? w->row1 : w->row2, 0.0, w->n);
    push_row(w->Ai, w->bi, &mi, mode[k] ? w->row2 : w->row1, 0.0, w->n);
  }
  mi = fixed_inequalities(p, w, mi);
  mr_qp_problem qp = {w->n, me, mi, w->H, w->c, w->Ae, w->be, w->Ai, w->bi};
  return qp;
}

/* objective blocks: H and c on y = (ṗ, u), zero on the contact variables */
static void objective_blocks(const mr_qpcc_problem *p, mr_qpcc_workspace *w) {
  mr_zero(w->H, w->n * w->n), mr_zero(w->c, w->n);
  for (int i = 0; i < w->ny; ++i)
    for (int j = 0; p->H && j < w->ny; ++j)
      w->H[i * w->n + j] = p->H[i * w->ny + j];
  if (p->c) mr_copy(w->c, p->c, w->ny);
}

/* smallest eigenvalue of H and whether it passes the convexity test */
static int convex(const mr_qpcc_problem *p, mr_qpcc_workspace *w, double tol, double *min_eig) {
  *min_eig = 0;
  if (!p->H) return 1;
  double hmax = 0;
  mr_copy(w->eigA, p->H, w->ny * w->ny);
  for (int i = 0; i < w->ny * w->ny; ++i)
    hmax = fmax(hmax, fabs(p->H[i]));
  mr_sym_eigen(w->eigA, w->ny, w->eig, NULL);
  *min_eig = w->eig[0];
  for (int i = 1; i < w->ny; ++i)
    *min_eig = fmin(*min_eig, w->eig[i]);
  return *min_eig >= -tol * fmax(1.0, hmax);
}

/* ---------------------------------------------------------------- search */

typedef struct {
  const mr_qpcc_problem *p;
  const mr_qpcc_settings *s;
  mr_qpcc_workspace *w;
  mr_qpcc_result *res;
  int budget_hit, unbounded;
} search;

/* solve the QP of mode m as solve number res->qp_solved; enqueue it when feasible */
static mr_status solve_mode(search *S, const unsigned char *m, mr_error *err) {
  mr_qpcc_workspace *w = S->w;
  int idx = S->res->qp_solved++, slot = table_slot(w, m);
  double *x = w->xs + (size_t)idx * w->n;
  memcpy(w->modes + (size_t)idx * w->npairs, m, (size_t)w->npairs);
  w->table[slot] = idx;
  mr_qp_problem qp = mode_qp(S->p, w, m);
  mr_qp_info info;
  mr_status st = mr_qp_solve(&qp, NULL, &w->qp, x, NULL, NULL, &info, err);
  if (st != MR_OK) return st;
  int feasible = info.outcome == MR_QP_OPTIMAL;
  w->fv[idx] = feasible ? info.fval + S->p->c0 : INFINITY;
  S->res->qp_infeasible += info.outcome == MR_QP_INFEASIBLE;
  S->unbounded |= info.outcome == MR_QP_UNBOUNDED;
  if (S->s->on_qp) S->s->on_qp(S->s->user, idx, m, w->npairs, feasible, w->fv[idx], x, w->n);
  if (feasible) heap_push(w, idx);
  return MR_OK;
}

/* a child mode from Algorithm 2: solve it unless already solved or over budget */
static mr_status child(search *S, const unsigned char *m, mr_error *err) {
  S->res->pivots++;
  if (S->w->table[table_slot(S->w, m)] >= 0) return MR_OK;
  if (S->res->qp_solved >= S->s->max_qp) {
    S->budget_hit = 1;
    return MR_OK;
  }
  return solve_mode(S, m, err);
}

/* the tangent of contact i best aligned with the friction force f = Σₖ D_k f∥_k */
static int friction_direction(const search *S, int i, const double *x) {
  const mr_qpcc_workspace *w = S->w;
  int best = w->toff[i];
  double best_dot = -INFINITY;
  for (int k = w->toff[i]; k < w->toff[i + 1]; ++k) {
    double dot = 0;
    for (int l = w->toff[i]; l < w->toff[i + 1]; ++l)
      dot += x[off_ft(w) + l] *
             mr_dot(S->p->D + (size_t)l * w->nv, S->p->D + (size_t)k * w->nv, w->nv);
    if (dot > best_dot) best_dot = dot, best = k;
  }
  return best;
}

/* normal pair of contact i (Algorithm 2, lines 6-14) */
static mr_status pivot_normal(search *S, int i, const unsigned char *m, const double *x, double tol,
                              mr_error *err) {
  mr_qpcc_workspace *w = S->w;
  double vn = mr_dot(S->p->N + (size_t)i * w->nv, x, w->nv), fn = x[off_fn(w) + i];
  if ((m[i] && fabs(vn) <= tol) || (!m[i] && fabs(fn) <= tol)) {
    w->child[i] = !m[i];
    return child(S, w->child, err);
  }
  return MR_OK;
}

/* cone and tangent pairs of contact i (Algorithm 2, lines 15-31) */
static mr_status pivot_friction(search *S, int i, const unsigned char *m, const double *x,
                                double tol, mr_error *err) {
  mr_qpcc_workspace *w = S->w;
  int kc = w->nc + w->ntd + i, t0 = w->toff[i], t1 = w->toff[i + 1];
  double fn = x[off_fn(w) + i], slack = S->p->mu[i] * fn, lambda = x[off_l(w) + i];
  for (int t = t0; t < t1; ++t)
    slack -= x[off_ft(w) + t];
  if (m[kc] && fabs(slack) <= tol && fn > tol) {
    int j = friction_direction(S, i, x);
    w->child[kc] = 0;
    for (int t = t0; t < t1; ++t)
      w->child[w->nc + t] = t != j;
    return child(S, w->child, err);
  }
  if (!m[kc] && fabs(lambda) <= tol) {
    w->child[kc] = 1;
    for (int t = t0; t < t1; ++t)
      w->child[w->nc + t] = 0;
    return child(S, w->child, err);
  }
  return MR_OK;
}

/* Algorithm 2: children of a solved mode, contact by contact */
static mr_status expand(search *S, int idx, mr_error *err) {
  mr_qpcc_workspace *w = S->w;
  const unsigned char *m = w->modes + (size_t)idx * w->npairs;
  const double *x = w->xs + (size_t)idx * w->n;
  double tol = S->s->pivot_tol * (1 + mr_norm_inf(x, w->n));
  mr_status st = MR_OK;
  for (int i = 0; i < w->nc && st == MR_OK && !S->unbounded; ++i) {
    memcpy(w->child, m, (size_t)w->npairs);
    st = pivot_normal(S, i, m, x, tol, err);
    if (st == MR_OK && !S->unbounded) st = pivot_friction(S, i, m, x, tol, err);
  }
  return st;
}

/* the contact rows: normal rows then tangent rows (nc + Σnd rows of nv) */
static const double *contact_row(const mr_qpcc_problem *p, const mr_qpcc_workspace *w, int a) {
  return a < w->nc ? p->N + (size_t)a * w->nv : p->D + (size_t)(a - w->nc) * w->nv;
}

/* the LCP of eq. 2-3 with u fixed at the control closest to 0 and ṗ eliminated:
 * w = Q z + q, z = (f⊥, f∥, λ), Q = [Δt R M⁻¹ Rᵀ + [0 0 0; 0 0 E]; μ −Eᵀ 0], R = [N; D] */
static int mlcp_build(const mr_qpcc_problem *p, mr_qpcc_workspace *w, double *Q, double *q) {
  int nv = w->nv, k = w->nc + w->ntd, m = w->npairs;
  double *L = mr_arena_doubles(&w->mlcp, (size_t)nv * nv);
  double *G = mr_arena_doubles(&w->mlcp, (size_t)k * nv), *f0 = mr_arena_doubles(&w->mlcp, nv);
  mr_copy(L, p->M, nv * nv);
  if (mr_cholesky(L, nv) != 0) return 0;
  // f0 = f̃ + Δt A u₀, then M⁻¹ f0 and M⁻¹ Rᵀ
  mr_copy(f0, p->f, nv);
  for (int j = 0; j < w->nu; ++j) {
    double u0 = fmin(fmax(0.0, p->u_lb[j]), p->u_ub[j]);
    for (int r = 0; r < nv; ++r)
      f0[r] += p->dt * p->A[r * w->nu + j] * u0;
  }
  mr_cholesky_solve(L, nv, f0);
  for (int a = 0; a < k; ++a) {
    mr_copy(G + (size_t)a * nv, contact_row(p, w, a), nv);
    mr_cholesky_solve(L, nv, G + (size_t)a * nv);
  }
  mr_zero(Q, m * m), mr_zero(q, m);
  for (int a = 0; a < k; ++a) {
    q[a] = mr_dot(contact_row(p, w, a), f0, nv);
    for (int b = 0; b < k; ++b)
      Q[a * m + b] = p->dt * mr_dot(contact_row(p, w, a), G + (size_t)b * nv, nv);
  }
  // E λ in the tangent rows, μ f⊥ − Eᵀ f∥ in the cone rows
  for (int t = 0; t < w->ntd; ++t)
    Q[(w->nc + t) * m + k + contact_of_tangent(w, t)] = 1;
  for (int i = 0; i < w->nc; ++i) {
    Q[(k + i) * m + i] = p->mu[i];
    for (int t = w->toff[i]; t < w->toff[i + 1]; ++t)
      Q[(k + i) * m + w->nc + t] = -1;
  }
  return 1;
}

/* the paper's fallback start: solve the mixed LCP with u ≈ 0 (Lemke) and read the mode off its
 * solution (pair at 1 where z < w, at 0 where z > w, as in static contact where both are 0);
 * 0 when M is not positive definite or Lemke fails */
static int mlcp_mode(const mr_qpcc_problem *p, mr_qpcc_workspace *w, unsigned char *mode) {
  int m = w->npairs, ok = 0;
  size_t mark = mr_arena_mark(&w->mlcp);
  double *Q = mr_arena_doubles(&w->mlcp, (size_t)m * m), *q = mr_arena_doubles(&w->mlcp, m);
  double *z = mr_arena_doubles(&w->mlcp, m), *wv = mr_arena_doubles(&w->mlcp, m);
  mr_error err;
  if (mlcp_build(p, w, Q, q) &&
      mr_lemke_solve(Q, q, m, 0, &w->mlcp, z, wv, NULL, NULL, &err) == MR_OK) {
    // both sides zero (degenerate pair): the static choice, so that a resting contact maps to
    // the static mode
    double tiny = 1e-12 * (1 + mr_norm_inf(q, m));
    for (int k = 0; k < m; ++k)
      mode[k] = (z[k] <= tiny && wv[k] <= tiny) ? k >= w->nc + w->ntd : z[k] <= wv[k];
    ok = 1;
  }
  mr_arena_reset(&w->mlcp, mark);
  return ok;
}

/* solve mode m as a starting QP unless already solved or over budget */
static mr_status try_start(search *S, const unsigned char *m, mr_error *err) {
  if (S->w->table[table_slot(S->w, m)] >= 0) return MR_OK;
  if (S->res->qp_solved >= S->s->max_qp) return S->budget_hit = 1, MR_OK;
  return solve_mode(S, m, err);
}

/* initial modes (GenerateInitialGuess): static contact; if infeasible, the mode of the mixed
 * LCP's solution; if that fails too, every contact separating */
static mr_status start(search *S, mr_error *err) {
  mr_qpcc_workspace *w = S->w;
  for (int k = 0; k < w->npairs; ++k)
    w->child[k] = k >= w->nc + w->ntd;
  mr_status st = solve_mode(S, w->child, err);
  if (st != MR_OK || w->heap_n > 0 || S->unbounded || w->nc == 0) return st;
  if (mlcp_mode(S->p, w, w->child)) {
    S->res->mlcp_start = 1;
    st = try_start(S, w->child, err);
    if (st != MR_OK || w->heap_n > 0 || S->unbounded) return st;
  }
  for (int k = 0; k < w->npairs; ++k)
    w->child[k] = k < w->nc + w->ntd;
  return try_start(S, w->child, err);
}

/* per-contact modes of the best QP */
static void contact_modes(const search *S, const unsigned char *m) {
  const mr_qpcc_workspace *w = S->w;
  for (int i = 0; i < w->nc; ++i) {
    mr_qpcc_contact_mode cm = MR_QPCC_STATIC;
    int dir = -1;
    if (m[i])
      cm = MR_QPCC_SEPARATING;
    else if (!m[w->nc + w->ntd + i]) {
      cm = MR_QPCC_SLIDING;
      for (int t = w->toff[i + 1] - 1; t >= w->toff[i]; --t)
        if (!m[w->nc + t]) dir = t - w->toff[i];
    }
    if (S->res->mode) S->res->mode[i] = cm;
    if (S->res->slide_dir) S->res->slide_dir[i] = dir;
  }
}

static void finish(search *S, int best) {
  mr_qpcc_result *r = S->res;
  mr_qpcc_workspace *w = S->w;
  r->best_qp = best;
  if (S->unbounded) {
    r->outcome = MR_QPCC_UNBOUNDED;
    snprintf(r->message, sizeof r->message,
             "a contact mode's QP is unbounded below after %d QPs: the objective has no minimum",
             r->qp_solved);
    return;
  }
  if (best < 0) {
    r->outcome = S->budget_hit ? MR_QPCC_BUDGET : MR_QPCC_INFEASIBLE;
    snprintf(r->message, sizeof r->message,
             S->budget_hit ? "QP budget spent before a feasible starting mode was found"
                           : "no feasible starting mode: the static, mixed-LCP and separating "
                             "modes are infeasible");
    return;
  }
  r->fval = w->fv[best];
  mr_copy(r->x, w->xs + (size_t)best * w->n, w->n);
  contact_modes(S, w->modes + (size_t)best * w->npairs);
  r->outcome = S->budget_hit ? MR_QPCC_BUDGET : MR_QPCC_OPTIMUM;
  snprintf(r->message, sizeof r->message,
           S->budget_hit ? "QP budget of %d spent with modes left unexplored; best found %.17g"
                         : "search complete after %d QPs: no pivot improves on %.17g",
           S->budget_hit ? S->s->max_qp : r->qp_solved, r->fval);
}

static void result_reset(mr_qpcc_result *r) {
  r->fval = INFINITY, r->qp_solved = r->qp_infeasible = r->pivots = r->modes_visited = 0;
  r->best_qp = -1, r->min_eig = 0, r->message[0] = 0, r->mlcp_start = 0;
}

mr_status mr_qpcc_solve(const mr_qpcc_problem *p, const mr_qpcc_settings *settings,
                        mr_qpcc_workspace *w, mr_qpcc_result *res, mr_error *err) {
  mr_qpcc_settings s = settings ? *settings : mr_qpcc_settings_default();
  mr_status st = mr_qpcc_validate(p, err);
  if (st != MR_OK) return st;
  if (p->nv != w->nv || p->nu != w->nu || p->nc != w->nc || total_tangents(p) != w->ntd ||
      p->m_task != w->m_task || s.max_qp < 1 || s.max_qp > w->max_qp)
    return mr_error_set(err, MR_ERR_INVALID,
                        "qpcc: problem sizes or budget (%d) do not match the workspace (%d)",
                        s.max_qp, w->max_qp);
  result_reset(res);
  // convexity of the objective, once
  if (!convex(p, w, s.convex_tol, &res->min_eig)) {
    res->outcome = MR_QPCC_NONCONVEX;
    snprintf(res->message, sizeof res->message,
             "the objective Hessian H has eigenvalue %.6g < 0: not convex, no QP solved",
             res->min_eig);
    return MR_OK;
  }
  objective_blocks(p, w);
  w->heap_n = 0;
  for (int i = 0; i < w->table_cap; ++i)
    w->table[i] = -1;
  search S = {p, &s, w, res, 0, 0};
  st = start(&S, err);
  // Algorithm 1: best-first over modes
  int best = -1;
  while (st == MR_OK && w->heap_n > 0 && !S.unbounded) {
    int idx = heap_pop(w);
    res->modes_visited++;
    if (best < 0 || w->fv[idx] < w->fv[best]) best = idx;
    st = expand(&S, idx, err);
  }
  if (st != MR_OK) return st;
  finish(&S, best);
  return MR_OK;
}

mr_status mr_qpcc_solve_mode(const mr_qpcc_problem *p, mr_qpcc_workspace *w,
                             const unsigned char *mode, double *x, double *fval, int *outcome,
                             mr_error *err) {
  mr_status st = mr_qpcc_validate(p, err);
  if (st != MR_OK) return st;
  if (p->nv != w->nv || p->nu != w->nu || p->nc != w->nc || total_tangents(p) != w->ntd ||
      p->m_task != w->m_task)
    return mr_error_set(err, MR_ERR_INVALID, "qpcc: problem sizes do not match the workspace");
  objective_blocks(p, w);
  mr_qp_problem qp = mode_qp(p, w, mode);
  mr_qp_info info;
  st = mr_qp_solve(&qp, NULL, &w->qp, x, NULL, NULL, &info, err);
  if (st != MR_OK) return st;
  *outcome = (int)info.outcome;
  *fval = info.outcome == MR_QP_OPTIMAL ? info.fval + p->c0 : INFINITY;
  return MR_OK;
}
