/* ncp-hybrid: the NCP (DESIGN.md §4) by a cascade of the solvers that each handle one class of
 * problems well, every stage started from the best iterate so far, the result being the iterate
 * of smallest NCP criterion ε_abs (docs/solvers.md, "ncp-hybrid").
 *
 *   0. start: the warm start λ₀ (projected on the cones), or λ = 0 without one; from a warm start
 *      at which every contact sticks, when the state keeps the factor of G + R + εI (stage 4's
 *      matrix when every contact sticks, kept by the last solve that factored it), first one
 *      chord step on it, λ ← P(λ − (G + R + εI)⁻¹ c), taken when it lowers ε_abs, whether or not
 *      λ₀ met eps_abs (0a: at rest the step ends the solve at the round-off of the positions;
 *      a start accepted at its tolerance instead leaves a residual velocity that comes back as
 *      the next steps' work, docs/solvers.md "Rest costs nothing"); returns at once
 *      when it then meets eps_abs (ε_abs at the start is not a good judge of a start: at
 *      λ = 0 it is |g|, while a nearly right warm start of a heavy load has ε_c = |⟨λ, c⟩|
 *      large through its large λ); from a warm start, first ncp-admm's few iterations when the
 *      state carries last step's dual (0b), then stage 4 alone up to HYB_REST_MAX_NC contacts
 *      (0c: a resting patch's warm start has the solution's active set);
 *   1. ncp-pgs (the fast path: well-conditioned problems, hyperstatic patches with a consistent
 *      g), in chunks of HYB_PGS_CHUNK sweeps (the first two HYB_PGS_FIRST up to
 *      HYB_DENSE_MAX_NC contacts), continued while the rate of the last chunk would reach
 *      eps_abs within half of the remaining budget; when that rate needs more sweeps than
 *      stages 4 and 5 cost, it hands over to them (stacks and piles: a slow rate, a right
 *      active set) and resumes if they do not converge;
 *   1b. stages 4 and 5 from ncp-pgs's best iterate whatever stopped it, repeated while a round
 *      lowers ε_abs tenfold (sliding feet on rough ground: ncp-pgs stalls, Newton ends it);
 *   2. ncp-admm on 1/HYB_ADMM_SHARE of the remaining budget (ill-conditioned G: mass ratios,
 *      stacks; where it converges it does so within a few hundred iterations);
 *   2a. up to HYB_REST_MAX_NC contacts, when ε_abs is still above HYB_CCP_TRIGGER times both
 *      eps_abs and the round-off of the forces: stage 5, then stages 4 and 5, from the solution
 *      of the CCP (ccp-pgs from λ = 0, at most HYB_CCP_SWEEPS sweeps), a convex problem whose
 *      iterations cannot stall on a wrong active set as the NCP's can, and whose active set is
 *      the NCP's wherever the slip is small (a body against the bin, tests/fixtures/hybrid);
 *   2b. above HYB_DENSE_MAX_NC contacts, ncp-pgs again from the best iterate while each chunk
 *      lowers ε_abs (a large pile: cheaper per unit of progress than stage 3);
 *   3. ncp-stagproj on the rest (g outside range(G): the exact solution lifts or slides
 *      contacts, which its convex normal and tangential subproblems set exactly), first a probe
 *      of HYB_SP_PROBE outer iterations with stages 4 and 5 tried from its iterate (it often
 *      finds the active set long before its linear rate reaches eps_abs), then, when they do
 *      not end it, the run on the rest from the probe's start;
 *   4. an active-set Newton polish of the NCP: with the contacts classified by the natural map
 *      λ − h (c + Γ(c)) as separated (λ = 0), sticking (c = 0, 3 equations in λ⁽ⁱ⁾) or
 *      sliding (λ_T = μ λ_N d with d = (cos φ, sin φ); c_N = 0 and d⊥ᵀ c_T = 0, the slip along
 *      the friction force: 2 equations in λ_N and φ), Newton's method on the active equations:
 *      linearised at the base λ' (sliding contacts put on their direction d), M x = r with
 *      M = E (G + R) B (E the equation rows, B = ∂λ/∂x) plus −dᵀ c_T on each angle's own
 *      equation (the turn of d⊥); M may be singular (hyperstatic contact sets), so it is solved
 *      by iterated Tikhonov, x_{k+1} = x_k + (M + εI)⁻¹ (r − M x_k) (LU with partial pivoting),
 *      which converges to a solution close to the smallest change of λ (its rounds stop at the
 *      round-off of r). The step is taken, projected on the cones, and the classification
 *      renewed, at most HYB_POLISH times or until two steps in a row do not halve ε_abs (a
 *      classification cycling between two active sets); the best iterate is kept (the steps
 *      need not lower ε_abs one by one);
 *   5. semismooth Newton on the natural map of the NCP (natmap.c), at most HYB_NEWTON steps:
 *      it changes the active set by itself where stage 4's frozen classification cannot;
 *   6. on the absolute criterion alone (eps_scale 0), the lattice polish (polish.c): when what
 *      is left is within a few units in the last place of λ, integer moves of the forces' last
 *      bits that lower the exact criterion.
 * A warm start that does not converge is solved again from λ = 0 by mr_solve (registry.c), as
 * for every solver, on what it left of max_iter. Every stage stops at the budget
 * (docs/solvers.md, "The budget": max_iter, the deadline of max_time, and under a simulator's
 * max_work the work in sweeps: on the sparse factor every factorisation, solve and product of
 * ncp-admm, the staggered projections and stage 4 charged at its cost, on a dense G the
 * staggered projections' outer iterations weighed by their inner ones); the result is then the
 * best iterate, converged = 0.
 * A problem with box constraints (joint friction, MR_KIND_BOX) runs stage 1 (without the
 * handover to the Newton stages) and then ncp-admm on the whole remaining budget: both project
 * on the box, while stages 3–6 are written for cones only.
 *
 * A block-sparse G (mr_contact_problem.Gb): below the sparse factor's crossover
 * (mr_sparse_chol_pays) a dense copy of G is made in the work arena and every stage runs on it
 * as on a dense problem (identical results); from it on, stages 1–3 read the stored blocks
 * (ncp-admm and ncp-stagproj factoring through the sparse LDLᵀ kept in the state, memory
 * O(nc + nnzb)), and the stages that need G densely (4, 5, 6: the n x n active-set matrices and
 * their LU, the natural map's Jacobian, the lattice of polish.c) run on a dense copy of G made
 * in the arena only when they run and only up to HYB_DENSE_MAX_NC contacts (stage 0c up to
 * HYB_REST_MAX_NC); above that the dense copy is left out (its three n x n matrices would be the
 * largest memory of the step: at 64 contacts 0.9 MB). Above HYB_DENSE_MAX_NC, with a state,
 * stage 4 runs on the state's sparse factor instead in stage 1b and after stage 3 (sparse_solve:
 * the sticking contacts' rows and the sliding ones' normal rows, the angles left), while at most
 * HYB_SPARSE_SLIDE of the contacts in contact slide; each of its steps is charged at the sweeps
 * its factorisation and refinement cost.
 * Iterations reported: sweeps + ADMM iterations + outer staggered-projection iterations +
 * Newton steps (under a simulator's work budget on the sparse factor, the work of the stages
 * on it in sweeps). Stops at eps_abs on the scaled NCP criterion ε̂ (mr_problem_criteria_scaled:
 * ε_abs where forces and velocities leave the absolute floor attainable in double precision, each
 * part within eps_scale of its round-off scale where they do not; "ε_abs" above means ε̂), max_iter
 * in total. ε̂ is judged on c = (G + R) λ + g by compensated dot products; after a chunk of ncp-pgs
 * (stages 1, 2b), and at the warm start of an island above HYB_REST_MAX_NC contacts, first on the
 * plain product, whose verdict stands where ε̂ exceeds eps_abs by more than that product's rounding
 * can move it (mr_problem_plain_slack: then the iterates and decisions are the same). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "contact/active_set.h"
#include "contact/admm.h"
#include "contact/modes.h"
#include "contact/natmap.h"
#include "contact/polish.h"
#include "contact/solvers.h"
#include "contact/sparse_chol.h"
#include "core/arena.h"
#include "core/linalg.h"

#define HYB_PGS_CHUNK 100
/* the first two chunks where the Newton stages can take over: their rates decide the handover */
#define HYB_PGS_FIRST 25
#define HYB_ADMM_SHARE 20
/* the iterations of ncp-admm tried first from a warm start that carries its dual and ρ */
#define HYB_ADMM_PROBE 10
#define HYB_POLISH 8
#define HYB_REFINE 12
#define HYB_NEWTON 20
/* the outer iterations of stage 3's probe, after which stages 4 and 5 start from its iterate */
#define HYB_SP_PROBE 250
/* the most ccp-pgs sweeps of stage 2a, whose iterate only has to show the active set */
#define HYB_CCP_SWEEPS 300
/* stage 2a runs when stages 1–2 left ε_abs above this many times both eps_abs and the round-off
 * of the problem's numbers (roundoff_floor): a wrong active set stalls far above both (the
 * drop's islands it ends: 100–6e4 eps_abs), a right one with a slow tail or the round-off of λ
 * close to one of them (the heavy-on-light stacks on the absolute criterion: 1–3 eps_abs at
 * forces of 2450 N, 3.7e-3 N against a round-off of 0.1 N at 9e4 N, where the stage would add
 * ~300 iterations a step and fail) */
#define HYB_CCP_TRIGGER 10.0
/* the most contacts of a block-sparse problem whose stages 4–6 get a dense copy of G (96 rows:
 * the copy and the two active-set matrices 0.22 MB); bench/sparse_g.c's column of 8 cubes (32
 * contacts) is solved 20× faster with them than by stages 1–3 alone */
#define HYB_DENSE_MAX_NC 32
/* the most contacts of an island whose warm start goes to the active-set polish first (stage 0c),
 * dense or on a dense copy of a block-sparse G: a resting tower of ten cubes (40 contacts, 120
 * unknowns) then ends in one polish step where stage 1 and ncp-admm take ~25 iterations */
#define HYB_REST_MAX_NC 48
/* the largest share of sliding contacts among those in contact at which stage 4 runs on the
 * sparse factor (above HYB_DENSE_MAX_NC contacts on a block-sparse G), whose step leaves their
 * friction angles: a wall of bricks settling has up to a quarter sliding in its first steps, a
 * pile of rolling capsules and cylinders more, where the step does not lower ε_abs and its
 * cost (a factorisation) is lost */
#define HYB_SPARSE_SLIDE 0.25

/* c ← (G + R) λ + g, compensated (mr_problem_velocity_dot2); over the stored blocks when p has
 * them (the dense copies made below keep them): the same terms without the exact zeros, which
 * add nothing, so the same c */
static mr_contact_problem stored_blocks(const mr_contact_problem *p) {
  mr_contact_problem b = *p;
  if (b.Gb) b.G = NULL;
  return b;
}

static void velocity(const mr_contact_problem *p, const double *lambda, double *c) {
  mr_contact_problem b = stored_blocks(p);
  mr_problem_velocity_dot2(&b, lambda, c);
}

/* c ← (G + R) λ + g, the plain product, over the stored blocks as velocity */
static void velocity_plain(const mr_contact_problem *p, const double *lambda, double *c) {
  mr_contact_problem b = stored_blocks(p);
  mr_problem_velocity(&b, lambda, c);
}

/* the scaled NCP criterion ε̂ (mr_problem_criteria_scaled) at λ, c = (G + R) λ + g given */
static double scaled_at(const mr_solver_settings *s, const mr_contact_problem *p,
                        const double *lambda, const double *c) {
  return mr_problem_criteria_scaled(p, lambda, c, s->eps_abs, s->eps_scale, NULL, NULL, NULL);
}

/* ε̂ at λ; c ← (G + R) λ + g */
static double ncp_eps(const mr_solver_settings *s, const mr_contact_problem *p,
                      const double *lambda, double *c) {
  velocity(p, lambda, c);
  return scaled_at(s, p, lambda, c);
}

/* ε̂ at λ from c = (G + R) λ + g by the plain product (given): kept with that c (*exact = 0)
 * when it exceeds eps_abs by more than mr_problem_plain_slack, so that it does on the compensated c
 * as well; else c evaluated again compensated and ε̂ on it (*exact = 1). An iterate far from eps_abs
 * then costs the plain product alone (2n flops a row against the compensated one's 11n) */
static double screened_eps(const mr_solver_settings *s, const mr_contact_problem *p,
                           const double *lambda, double *c, int *exact) {
  double e = scaled_at(s, p, lambda, c);
  *exact = !(e > s->eps_abs && e - s->eps_abs > mr_problem_plain_slack(p, lambda));
  return *exact ? ncp_eps(s, p, lambda, c) : e;
}

typedef struct {
  int n, m;          /* rows of the problem, unknowns of the active set */
  unsigned char *cl; /* mode per contact (mr_contact_mode, active_set.h) */
  double *dir;       /* sliding friction direction (2 per contact) */
  int *col;          /* first unknown of each contact (−1 when free) */
  double *M, *Mf;    /* active matrix and its regularised LU factor, m x m */
  double *r, *x, *t; /* right-hand side, solution, scratch (m) */
  double *l, *lt;    /* the Newton stage's iterate and trial */
  double *sp;        /* the start of stage 3's probe and of its run */
  int admm_ran;      /* stage 2 ran in this solve (the state's y and ρ are its) */
  int capped;        /* stage 3 stopped at its share of a simulator step's work (work_iter),
                      * a budget that max_iter does not show: reported as stats.budget */
  int warm;          /* the solve started from a warm start */
  int e_plain;       /* the best iterate's ε_abs is the plain product's (screened_eps), c that
                      * product at λ when a chunked run starts: ncp-pgs's chunks go on from
                      * both, the other stages first take the compensated one */
  int blocks;        /* G block-sparse and read as such: stages 4–6 on a dense copy made when
                      * they run (M, Mf carved with it) up to HYB_DENSE_MAX_NC contacts */
  int *piv;
  mr_solver_state *keep; /* the state whose keep holds the all-sticking factor, or NULL */
  mr_solver_state *state; /* above HYB_DENSE_MAX_NC contacts on a block-sparse G with a state:
                           * stage 4 on the sparse factor of its chol (sparse_solve), else NULL */
  unsigned char *act;     /* the rows of the sparse stage 4's factor (3nc flags) */
  double *xr;             /* its step by rows (3nc) */
} polish_ws;

/* *e (ε_abs at λ) on the compensated c when it is the plain product's (w->e_plain), c = c(λ)
 * then: the stages compare their iterates' ε_abs with it, and may return λ itself */
static void exact_eps(const mr_solver_settings *s, const mr_contact_problem *p, polish_ws *w,
                      const double *lambda, double *c, double *e, int *c_lambda) {
  if (!w->e_plain) return;
  *e = ncp_eps(s, p, lambda, c), *c_lambda = 1, w->e_plain = 0;
}

/* classify the contacts at (λ, c) by the natural map of the NCP (mr_contact_mode_natural, with
 * h = 1/(G + R)_NN of the contact) and number the unknowns */
static void classify(const mr_contact_problem *p, const double *l, const double *c, polish_ws *w) {
  int n = 3 * p->nc;
  w->m = 0;
  for (int i = 0; i < p->nc; ++i) {
    double B[9], dir[2];
    double bnn =
        p->G ? p->G[(size_t)(3 * i + 2) * n + 3 * i + 2] : (mr_problem_G_block(p, i, i, B), B[8]);
    if (p->R) bnn += p->R[3 * i + 2];
    mr_contact_mode mode = mr_contact_mode_natural(p, i, l, c, bnn > 0.0 ? 1.0 / bnn : 0.0, dir);
    w->cl[i] = (unsigned char)mode;
    w->col[i] = mode == MR_CONTACT_SEPARATED ? -1 : w->m;
    if (mode == MR_CONTACT_SLIDING) w->dir[2 * i] = dir[0], w->dir[2 * i + 1] = dir[1];
    w->m += mode == MR_CONTACT_SEPARATED  ? 0
            : mode == MR_CONTACT_STICKING ? 3
            : p->mu[i] > 0.0              ? 2
                                          : 1;
  }
}

/* unknowns of contact i in the active system: 3 (sticking, bilateral), 2 (sliding: λ_N and the
 * angle of the friction direction), 1 (frictionless sliding), 0 (separated) */
static int unknowns(const mr_contact_problem *p, const polish_ws *w, int i) {
  if (w->cl[i] == MR_CONTACT_SEPARATED) return 0;
  if (w->cl[i] == MR_CONTACT_SLIDING) return p->mu[i] > 0.0 ? 2 : 1;
  return 3;
}

/* the e-th equation of contact i as a combination q of its rows of c (c_N = 0 and, sliding,
 * d⊥ᵀ c_T = 0 with d⊥ = (−d₂, d₁): the slip parallel to the friction force) */
static void equation(const polish_ws *w, int i, int e, double *q) {
  q[0] = q[1] = q[2] = 0.0;
  if (w->cl[i] != MR_CONTACT_SLIDING) {
    q[e] = 1.0;
  } else if (e == 0) {
    q[2] = 1.0;
  } else {
    q[0] = -w->dir[2 * i + 1], q[1] = w->dir[2 * i];
  }
}

/* the λ-direction of the a-th unknown of contact j at the base λ' (sliding: ∂λ/∂λ_N = (μd, 1),
 * ∂λ/∂φ = μ λ'_N d⊥ for d = (cos φ, sin φ)) */
static void direction(const mr_contact_problem *p, const polish_ws *w, const double *lb, int j,
                      int a, double *v) {
  v[0] = v[1] = v[2] = 0.0;
  if (w->cl[j] != MR_CONTACT_SLIDING) {
    v[a] = 1.0;
    return;
  }
  double mu = p->mu[j], d0 = w->dir[2 * j], d1 = w->dir[2 * j + 1];
  if (a == 0)
    v[0] = mu * d0, v[1] = mu * d1, v[2] = 1.0;
  else
    v[0] = -mu * lb[3 * j + 2] * d1, v[1] = mu * lb[3 * j + 2] * d0;
}

/* qᵀ (G + R)_{ij} v for the 3 x 3 block of contacts i, j */
static double block_form(const mr_contact_problem *p, int i, int j, const double *q,
                         const double *v) {
  int n = 3 * p->nc;
  double sum = 0.0;
  for (int a = 0; a < 3; ++a) {
    if (q[a] == 0.0) continue;
    const double *row = p->G + (size_t)(3 * i + a) * n + 3 * j;
    double t = row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
    if (p->R && i == j) t += p->R[3 * i + a] * v[a];
    sum += q[a] * t;
  }
  return sum;
}

/* the base λ' (sliding contacts put on their friction direction, λ'_T = μ λ_N d) and
 * c' = (G + R) λ' + g (c holds c(λ) on entry): the point the active system is linearised at */
static void base_point(const mr_contact_problem *p, const polish_ws *w, const double *l, double *lb,
                       double *c) {
  int sliding = 0;
  mr_copy(lb, l, w->n);
  for (int i = 0; i < p->nc; ++i) {
    if (w->cl[i] != MR_CONTACT_SLIDING) continue;
    double *li = lb + 3 * i;
    li[0] = p->mu[i] * li[2] * w->dir[2 * i], li[1] = p->mu[i] * li[2] * w->dir[2 * i + 1];
    sliding = 1;
  }
  /* without a sliding contact λ' = λ, whose c the caller holds */
  if (sliding) velocity(p, lb, c);
}

/* assemble M and r = −(equations at c'); the angle unknown's own equation gains the derivative
 * of d⊥ along φ, −dᵀ c'_T. Between two contacts that do not slide q and v are unit vectors and
 * the entries are those of G + R themselves (what block_form computes, with no rounding) */
static void assemble(const mr_contact_problem *p, polish_ws *w, const double *lb, const double *c) {
  int m = w->m, n = w->n;
  double q[3], v[3];
  for (int i = 0; i < p->nc; ++i) {
    for (int e = 0; e < unknowns(p, w, i); ++e) {
      int row = w->col[i] + e, plain = w->cl[i] != MR_CONTACT_SLIDING;
      const double *grow = p->G + (size_t)(3 * i + e) * n;
      equation(w, i, e, q);
      w->r[row] = -(q[0] * c[3 * i] + q[1] * c[3 * i + 1] + q[2] * c[3 * i + 2]);
      for (int j = 0; j < p->nc; ++j) {
        if (w->cl[j] == MR_CONTACT_SEPARATED) continue;
        double *out = w->M + (size_t)row * m + w->col[j];
        if (plain && w->cl[j] == MR_CONTACT_STICKING) {
          out[0] = grow[3 * j], out[1] = grow[3 * j + 1], out[2] = grow[3 * j + 2];
          if (p->R && i == j) out[e] += p->R[3 * i + e];
          continue;
        }
        for (int a = 0; a < unknowns(p, w, j); ++a) {
          direction(p, w, lb, j, a, v);
          out[a] = block_form(p, i, j, q, v);
        }
      }
      if (w->cl[i] == MR_CONTACT_SLIDING && e == 1)
        w->M[row * m + row] -= w->dir[2 * i] * c[3 * i] + w->dir[2 * i + 1] * c[3 * i + 1];
    }
  }
}

/* x solving M x = r by iterated Tikhonov, linearised at forces of size lb_norm; -1 when the
 * factor fails. The rounds stop once the residual r − M x is at the round-off of r itself
 * (c' = (G + R) λ' + g carries u |G| |λ'| from G's own entries; M's null space, the internal
 * forces of a hyperstatic set, is not exactly that of G in doubles, so r has a component of
 * that size outside range(M)), or when a round no longer halves it: a further round would
 * amplify that component by up to 1/ε along the nearly singular directions and move x by
 * noise, which can make the polish's next classification flip */
static int solve_active(polish_ws *w, double lb_norm) {
  int m = w->m;
  double tr = 0.0, norm_M = 0.0;
  for (int k = 0; k < m; ++k) {
    double row = 0.0;
    for (int j = 0; j < m; ++j)
      row += fabs(w->M[(size_t)k * m + j]);
    tr = fmax(tr, fabs(w->M[k * m + k])), norm_M = fmax(norm_M, row);
  }
  double eps = 1e-10 * fmax(tr, 1e-300), floor = 4.0 * DBL_EPSILON * norm_M * lb_norm;
  memcpy(w->Mf, w->M, sizeof(double) * (size_t)m * m);
  for (int k = 0; k < m; ++k)
    w->Mf[k * m + k] += eps;
  if (mr_lu_factor(w->Mf, m, w->piv)) return -1;
  /* every contact sticking: M is G + R itself, whatever λ, and its factor is kept for stage 0a,
   * transposed (its solve by columns, mr_lu_solve_t) */
  if (m == w->n && w->keep) {
    mr_transpose(w->keep->keep, w->Mf, m, m);
    memcpy(w->keep->keep + (size_t)m * m, w->piv, (size_t)m * sizeof(int));
    w->keep->keep_n = m;
  }
  mr_zero(w->x, m);
  double prev = INFINITY;
  for (int it = 0; it < HYB_REFINE; ++it) {
    mr_matvec(w->t, w->M, w->x, m, m);
    for (int k = 0; k < m; ++k)
      w->t[k] = w->r[k] - w->t[k];
    double res = mr_norm_inf(w->t, m);
    if (it > 0 && (res <= floor || res > 0.5 * prev)) break;
    prev = res;
    mr_lu_solve(w->Mf, m, w->piv, w->t);
    mr_axpy(w->x, 1.0, w->t, m);
  }
  return 0;
}

/* stage 4's step on a block-sparse G (w->state), linearised at the base λ' = lb with c = c': the
 * sticking contacts' three equations and the sliding contacts' normal one, c_A = 0 over those
 * rows A, in the forces of the same rows (a sliding contact's friction direction and size
 * follow its normal force when the step is applied, its angle is left: without those couplings
 * the system is the principal part (G + R)_AA, symmetric), solved as solve_active solves
 * stage 4's (iterated Tikhonov from the same ε, to the same floor) on the sparse LDLᵀ of
 * (G + R)_AA + εI, the other rows decoupled (mr_chol_values_active; a larger ε when the factor
 * without pivoting fails). The step into w->x by unknowns; *cost what it cost in sweeps (each
 * factorisation tried, and a refinement round's product and solve, at mr_chol_factor_sweeps and
 * mr_chol_solve_sweeps); -1 when the factor fails */
static int sparse_solve(const mr_contact_problem *p, polish_ws *w, const double *lb,
                        const double *c, int *cost) {
  int n = w->n, nnzb = p->Gb_row[p->nc];
  mr_sparse_chol *f = w->state->chol;
  double tr = 0.0, norm_M = 0.0;
  unsigned char *act = w->act;
  for (int i = 0; i < p->nc; ++i)
    for (int a = 0; a < 3; ++a)
      act[3 * i + a] =
          w->cl[i] == MR_CONTACT_STICKING || (w->cl[i] == MR_CONTACT_SLIDING && a == 2);
  for (int i = 0; i < p->nc; ++i) {
    double row[3] = {0.0, 0.0, 0.0};
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      const double *B = p->Gb + 9 * (size_t)k;
      const unsigned char *aj = act + 3 * p->Gb_col[k];
      for (int a = 0; a < 3; ++a) {
        row[a] += (aj[0] ? fabs(B[3 * a]) : 0.0) + (aj[1] ? fabs(B[3 * a + 1]) : 0.0) +
                  (aj[2] ? fabs(B[3 * a + 2]) : 0.0);
        if (p->Gb_col[k] == i && act[3 * i + a])
          tr = fmax(tr, fabs(B[4 * a] + (p->R ? p->R[3 * i + a] : 0.0)));
      }
    }
    for (int a = 0; a < 3; ++a)
      if (act[3 * i + a]) norm_M = fmax(norm_M, row[a] + (p->R ? fabs(p->R[3 * i + a]) : 0.0));
  }
  double eps = 1e-10 * fmax(tr, 1e-300), floor = 4.0 * DBL_EPSILON * norm_M * mr_norm_inf(lb, n);
  mr_chol_values_active(f, p, act, p->R);
  /* LDLᵀ without pivoting: where ε leaves a pivot of a hyperstatic set at its round-off, a
   * larger ε (the rounds then remove more of it), at most 1e-6 of the diagonal; each attempt in
   * the cost (a step whose factor fails is not charged: the polish stops there) */
  int failed;
  double f_cost = mr_chol_factor_sweeps(f, nnzb), solve = mr_chol_solve_sweeps(f, nnzb);
  double spent = f_cost;
  while ((failed = mr_chol_factor(f, eps)) && eps < 1e-6 * tr)
    eps *= 100.0, spent += f_cost;
  if (failed) return -1;
  double *xr = w->xr;
  for (int k = 0; k < n; ++k)
    w->r[k] = act[k] ? -c[k] : 0.0;
  mr_zero(xr, n);
  double prev = INFINITY;
  for (int it = 0; it < HYB_REFINE; ++it) {
    mr_problem_G_mul(p, xr, w->t);
    for (int k = 0; k < n; ++k)
      w->t[k] = act[k] ? w->r[k] - (w->t[k] + (p->R ? p->R[k] * xr[k] : 0.0)) : 0.0;
    double res = mr_norm_inf(w->t, n);
    spent += 1.0; /* the product, a sweep */
    if (it > 0 && (res <= floor || res > 0.5 * prev)) break;
    prev = res;
    spent += solve;
    mr_chol_solve(f, w->t);
    for (int k = 0; k < n; ++k)
      if (act[k]) xr[k] += w->t[k];
  }
  *cost = (int)fmin(ceil(spent), 1e9);
  /* by unknowns: a sliding contact's λ_N, its angle left */
  for (int i = 0; i < p->nc; ++i) {
    if (w->cl[i] == MR_CONTACT_SEPARATED) continue;
    double *x = w->x + w->col[i];
    if (w->cl[i] == MR_CONTACT_STICKING) {
      x[0] = xr[3 * i], x[1] = xr[3 * i + 1], x[2] = xr[3 * i + 2];
    } else {
      x[0] = xr[3 * i + 2];
      if (unknowns(p, w, i) == 2) x[1] = 0.0;
    }
  }
  return 0;
}

/* the share of the sliding contacts among those in contact in w's classification */
static double slide_share(const mr_contact_problem *p, const polish_ws *w) {
  int on = 0, sliding = 0;
  for (int i = 0; i < p->nc; ++i)
    on += w->cl[i] != MR_CONTACT_SEPARATED, sliding += w->cl[i] == MR_CONTACT_SLIDING;
  return on > 0 ? (double)sliding / on : 0.0;
}

/* λ_new = the base λ' + the step x (a sliding contact's direction turned by its angle step),
 * projected on each contact's set */
static void apply_step(const mr_contact_problem *p, const polish_ws *w, const double *lb,
                       double *out) {
  for (int i = 0; i < p->nc; ++i) {
    double *o = out + 3 * i;
    const double *x = w->x + (w->col[i] < 0 ? 0 : w->col[i]);
    o[0] = lb[3 * i], o[1] = lb[3 * i + 1], o[2] = lb[3 * i + 2];
    if (w->cl[i] == MR_CONTACT_SEPARATED) {
      o[0] = o[1] = o[2] = 0.0;
    } else if (w->cl[i] == MR_CONTACT_SLIDING) {
      double ln = fmax(o[2] + x[0], 0.0), d0 = w->dir[2 * i], d1 = w->dir[2 * i + 1];
      double cs = 1.0, sn = 0.0;
      if (p->mu[i] > 0.0) cs = cos(x[1]), sn = sin(x[1]);
      o[0] = p->mu[i] * ln * (cs * d0 - sn * d1), o[1] = p->mu[i] * ln * (sn * d0 + cs * d1);
      o[2] = ln;
    } else {
      o[0] += x[0], o[1] += x[1], o[2] += x[2];
    }
    if (!mr_problem_bilateral(p, i)) mr_cone_project(p->mu[i], o, o);
  }
}

/* the polish from best (ε_abs e; c_best: c holds c(best) already): returns the new ε_abs, best
 * updated, c = c(best); steps counted. The
 * Newton iterate (w->lt) goes on whether or not a step lowers ε_abs: the first step from a
 * first-order iterate may move the internal forces of a patch by far more than the residual
 * it removes (a sliding corner's friction direction is set by the slip, whose size is
 * microns per second against forces of hundreds of newtons), and only the next one lands */
static double polish(const mr_contact_problem *p, const mr_solver_settings *s, polish_ws *w,
                     double *best, double *c, double e, int *steps, int c_best) {
  int n = w->n, stalled = 0;
  double *cur = w->lt, lowest = INFINITY;
  /* block-sparse and not a dense copy (stages 0c and 2a up to HYB_REST_MAX_NC make one): the
   * state's sparse factor, analysed for this pattern (kept with ncp-admm's) */
  int sparse = w->state && !p->G;
  if (sparse) {
    if (!w->state->chol) w->state->chol = mr_chol_create();
    if (!w->state->chol || mr_chol_analyze(w->state->chol, p) < 0) {
      if (!c_best) velocity(p, best, c);
      return e;
    }
  }
  mr_copy(cur, best, n);
  /* c = c(cur) on every pass: here, then from the criterion of the step taken */
  if (!c_best) velocity(p, cur, c);
  c_best = 1;
  for (int k = 0; k < HYB_POLISH && e > s->eps_abs && *steps < s->max_iter && !mr_solver_late(s);
       ++k) {
    classify(p, cur, c, w);
    if (w->m == 0) break;
    base_point(p, w, cur, w->l, c);
    c_best = 0; /* c may now be c(λ') */
    int cost = 1;
    if (sparse) {
      /* block-sparse, on the sparse factor (the sliding contacts' normal rows alone) */
      if (slide_share(p, w) > HYB_SPARSE_SLIDE || sparse_solve(p, w, w->l, c, &cost)) break;
    } else {
      assemble(p, w, w->l, c);
      if (solve_active(w, mr_norm_inf(w->l, n))) break;
    }
    /* a step larger than the forces themselves left the local model (an inconsistent r, e.g. a
     * wrong active set, amplified by the regularised solve): stop */
    if (!(mr_norm_inf(w->x, w->m) <= 10.0 * mr_norm_inf(cur, n))) break;
    apply_step(p, w, w->l, cur);
    double et = ncp_eps(s, p, cur, c);
    *steps += cost;
    c_best = et < e;
    if (!isfinite(et)) break;
    if (c_best) mr_copy(best, cur, n), e = et;
    /* two steps in a row that do not halve the lowest ε_abs of the iterates: the
     * classification cycles between neighbouring active sets (a corner flipping between
     * sticking and sliding), which stage 5 resolves by itself */
    stalled = et > 0.5 * lowest ? stalled + 1 : 0;
    lowest = fmin(lowest, et);
    if (stalled == 2) break;
  }
  if (!c_best) velocity(p, best, c);
  return e;
}

/* stage 0a: whether λ is a start for the chord step: the state keeps the factor of this
 * problem's size and every contact sticks at λ (λ_N > 0 and λ_T strictly inside the cone, or
 * bilateral) */
static int chord_start(const mr_contact_problem *p, const mr_solver_settings *s, const polish_ws *w,
                       const double *lambda) {
  if (!w->keep || w->keep->keep_n != w->n || w->n == 0 || s->max_iter < 1) return 0;
  for (int i = 0; i < p->nc; ++i) {
    const double *l = lambda + 3 * i;
    double lt2 = l[0] * l[0] + l[1] * l[1], cone = p->mu[i] * l[2];
    if (!mr_problem_bilateral(p, i) && !(l[2] > 0.0 && lt2 < cone * cone)) return 0;
  }
  return 1;
}

/* stage 0a from a chord start λ: one chord step on the kept factor of G + R,
 * λ' = P(λ − (G + R + εI)⁻¹ c(λ)), taken when it lowers ε_abs; 1 when the step was made, *e
 * then ε_abs and c = c(λ) (compensated) for the λ kept; 0 when c(λ) is exactly 0 (a sphere at
 * rest: nothing to remove). c(λ) for the step is the plain product: the kept factor is that of
 * an earlier step's G, so the step itself is good to the change of G since, far above the plain
 * product's rounding; only the iterate kept is judged on the compensated c */
static int chord(const mr_contact_problem *p, const mr_solver_settings *s, polish_ws *w,
                 double *lambda, double *c, double *e) {
  int n = w->n;
  velocity_plain(p, lambda, c);
  if (mr_norm_inf(c, n) == 0.0) return 0;
  double e0 = scaled_at(s, p, lambda, c);
  const double *lut = w->keep->keep;
  for (int k = 0; k < n; ++k)
    w->x[k] = -c[k];
  mr_lu_solve_t(lut, n, (const int *)(lut + (size_t)n * n), w->x);
  for (int k = 0; k < n; ++k)
    w->lt[k] = lambda[k] + w->x[k];
  for (int i = 0; i < p->nc; ++i)
    mr_constraint_project(p, i, w->lt + 3 * i, w->lt + 3 * i);
  double et = ncp_eps(s, p, w->lt, w->t);
  if (et < e0) {
    mr_copy(lambda, w->lt, n), mr_copy(c, w->t, n);
    *e = et;
  } else {
    *e = ncp_eps(s, p, lambda, c);
  }
  return 1;
}

/* at most HYB_NEWTON semismooth Newton steps on the natural map from best (ε_abs e) */
static double newton(const mr_contact_problem *p, const mr_solver_settings *s, polish_ws *w,
                     double *best, double *c, double e, int *iters) {
  if (!(e > s->eps_abs) || *iters >= s->max_iter || mr_solver_late(s)) return e;
  natmap_ws nw = {w->M, w->Mf, w->r, w->x, w->t, w->l, w->lt, w->piv};
  int left = s->max_iter - *iters;
  return mr_natmap_newton(p, s->eps_abs, s->eps_scale, left < HYB_NEWTON ? left : HYB_NEWTON, &nw,
                          best, c, e, iters);
}

/* d: p with its block-sparse G copied densely into G (3nc x 3nc, every entry written) */
static void dense_view(const mr_contact_problem *p, double *G, mr_contact_problem *d) {
  mr_problem_G_dense(p, G);
  *d = *p;
  d->G = G;
}

/* a dense copy of the block-sparse G of p into d, from the arena; -1 when it does not fit */
static int dense_copy(const mr_contact_problem *p, mr_arena *work, mr_contact_problem *d) {
  size_t n = 3 * (size_t)p->nc;
  double *G = mr_arena_alloc(work, (n * n + 1) * sizeof *G); /* every entry written below */
  if (!G) return -1;
  dense_view(p, G, d);
  return 0;
}

/* a dense copy d of a block-sparse p with the active-set matrices w->M, w->Mf, all from the arena
 * (the caller resets it and clears w->M, w->Mf); -1 when they do not fit */
static int dense_stage(const mr_contact_problem *p, mr_arena *work, polish_ws *w,
                       mr_contact_problem *d) {
  size_t nn = 9 * (size_t)p->nc * (size_t)p->nc + 1;
  /* M and Mf need no zeroing: assemble writes all of M, solve_active copies it to Mf */
  w->M = mr_arena_alloc(work, nn * sizeof(double));
  w->Mf = mr_arena_alloc(work, nn * sizeof(double));
  return w->M && w->Mf && dense_copy(p, work, d) == 0 ? 0 : -1;
}

/* stages 4 (unless no_polish) and 5 from best (ε_abs e): on p itself when its G is dense, else
 * on a dense copy with its active-set matrices made here (up to max_nc contacts, at most
 * HYB_REST_MAX_NC, whose copies the work arena holds; left out above) */
static double newton_stages_upto(const mr_contact_problem *p, const mr_solver_settings *s,
                                 polish_ws *w, mr_arena *work, int max_nc, int no_polish,
                                 double *best, double *c, double e, int *iters) {
  if (mr_solver_late(s)) return e;
  if (!w->blocks) {
    if (!no_polish) e = polish(p, s, w, best, c, e, iters, 0);
    return newton(p, s, w, best, c, e, iters);
  }
  if (!(e > s->eps_abs)) return e;
  /* above max_nc: stage 4 on the sparse factor where the island has it (w->state) */
  if (p->nc > max_nc) return w->state && !no_polish ? polish(p, s, w, best, c, e, iters, 0) : e;
  size_t mark = mr_arena_mark(work);
  mr_contact_problem d;
  if (dense_stage(p, work, w, &d) == 0) {
    if (!no_polish) e = polish(&d, s, w, best, c, e, iters, 0);
    e = newton(&d, s, w, best, c, e, iters);
  }
  w->M = w->Mf = NULL;
  mr_arena_reset(work, mark);
  return e;
}

/* stages 4 and 5, on a dense copy of a block-sparse G up to HYB_DENSE_MAX_NC contacts */
static double newton_stages(const mr_contact_problem *p, const mr_solver_settings *s, polish_ws *w,
                            mr_arena *work, double *best, double *c, double e, int *iters) {
  return newton_stages_upto(p, s, w, work, HYB_DENSE_MAX_NC, 0, best, c, e, iters);
}

/* the polish (stage 4 alone) from best, on p itself when its G is dense, else on a dense copy
 * with its active-set matrices made here (stage 0c: up to HYB_REST_MAX_NC contacts) */
static double polish_any(const mr_contact_problem *p, const mr_solver_settings *s, polish_ws *w,
                         mr_arena *work, double *best, double *c, double e, int *iters,
                         int c_best) {
  if (!w->blocks) return polish(p, s, w, best, c, e, iters, c_best);
  size_t mark = mr_arena_mark(work);
  mr_contact_problem d;
  if (dense_stage(p, work, w, &d) == 0)
    e = polish(&d, s, w, best, c, e, iters, c_best);
  else if (!c_best)
    velocity(p, best, c);
  w->M = w->Mf = NULL;
  mr_arena_reset(work, mark);
  return e;
}

/* ncp-pgs run warm from the best iterate λ in chunks of `chunk` iterations (the first two of
 * `first`), continued while the last chunk's rate of decrease of ε_abs would reach eps_abs
 * within `share` of the chunks left (reserve iterations kept for the Newton stages), *slow set
 * when that rate needs more than `handover` iterations; λ, e = its ε_abs and *moved updated,
 * *c_lambda set when c = c(λ) on return (kept when no chunk ran). A chunk starts from the
 * plain c at its iterate when it has one (w->e_plain on entry: the warm start's screen; after a
 * chunk judged on the plain c), and one that meets the criterion on the c its sweeps kept is
 * judged on the compensated c directly (mr_gs_run_with's options): the plain products a chunk
 * would have made there are the ones the screen made, or ones the compensated c replaces */
static mr_status chunked(const mr_contact_problem *p, const mr_solver_settings *s, mr_arena *work,
                         polish_ws *w, int first, int chunk, double share, int reserve,
                         double handover, double *lambda, double *c, double *trial, double *e,
                         int *iters, int *moved, int *slow, int *c_lambda, mr_error *err) {
  int n = 3 * p->nc;
  mr_solver_settings sub = *s;
  mr_solver_stats st;
  sub.warm_start = 1;
  mr_copy(trial, lambda, n);
  double eprev = *e;
  int len = first, k = 0, given = w->e_plain;
  /* the first chunk runs even past the deadline: ncp-pgs makes its first LATE_EVERY sweeps
   * whatever the clock (an island solved after a slow one still gets them) */
  while (*iters < s->max_iter - reserve) {
    int left = s->max_iter - reserve - *iters;
    sub.max_iter = left < len ? left : len;
    memset(&st, 0, sizeof st);
    int options = MR_GS_C_LAZY | (given ? MR_GS_C_GIVEN : 0);
    mr_status rc = mr_ncp_pgs_with(p, &sub, work, options, trial, c, &st, err);
    if (rc) return rc;
    *iters += st.iterations;
    /* c: the sweeps' (converged) or the plain product (mr_gs_run_with) */
    int exact = st.converged;
    double et = exact ? ncp_eps(s, p, trial, c) : screened_eps(s, p, trial, c, &exact);
    given = !exact;
    *c_lambda = et < *e && exact;
    if (et < *e) mr_copy(lambda, trial, n), *e = et, *moved = 1, w->e_plain = !exact;
    if (*e <= s->eps_abs || st.iterations < sub.max_iter) break; /* converged, stalled, late */
    /* chunks still needed at the last chunk's rate, against the chunks left */
    double rate = et / eprev, need = rate < 1.0 ? log(s->eps_abs / et) / log(rate) : INFINITY;
    eprev = et;
    if (!(need <= share * (s->max_iter - reserve - *iters) / len)) break;
    /* converging, but slower than the Newton stages would likely finish: hand over to them */
    if (need * len > handover) {
      *slow = 1;
      break;
    }
    /* the first chunk's rate includes the drop from a poor warm start: a second short chunk
     * measures the rate ncp-pgs goes on with */
    if (++k >= 2) len = chunk;
  }
  exact_eps(s, p, w, lambda, c, e, c_lambda);
  return MR_OK;
}

/* stages 4 and 5 from the best iterate λ (ε_abs e), again while a round lowers ε_abs tenfold:
 * each round restarts the polish from the best iterate, whose active set is then nearer the
 * solution's; on a dense copy of a block-sparse G up to max_nc contacts; returns ε_abs */
static double newton_rounds(const mr_contact_problem *p, const mr_solver_settings *s, polish_ws *w,
                            mr_arena *work, int reserve, int max_nc, double *lambda, double *c,
                            double e, int *iters) {
  double before;
  do {
    before = e;
    e = newton_stages_upto(p, s, w, work, max_nc, 0, lambda, c, e, iters);
  } while (e > s->eps_abs && e < 0.1 * before && *iters < s->max_iter - reserve &&
           !mr_solver_late(s));
  return e;
}

/* 3. staggered projections (ncp-stagproj) from the best iterate on the rest of the budget: a
 * g outside range(G) (no all-sticking solution: a landing patch, a recorded problem of an
 * inconsistent gap law) needs corners to lift or slide, a change of the active set that ADMM
 * and the Newton steps make slowly or not at all from a poor iterate, while each convex
 * subproblem of ncp-stagproj sets it exactly (it converges linearly there, in up to ~9500 outer
 * iterations on the TALOS problems of tests/fixtures). First a probe of HYB_SP_PROBE outer
 * iterations, then stages 4 and 5 (reserve ≥ 0) from its iterate: on the rough-ground trot the
 * staggered projections reach the solution's active set within it, while their ε_abs is still
 * ~10–10⁴, and would then shrink ε_abs by about 0.7 per 250 iterations for thousands more;
 * Newton's method from that active set ends in a few steps. When they do not end it, the run
 * on the rest of the budget starts again from the probe's start, not from its iterate: a
 * restarted run loses its subproblems' warm duals and stalls on the TALOS fixtures (ε_abs
 * 1.9e-6 and 2.4e-6 at 10⁴ iterations) which one uninterrupted run solves. λ, e = its ε_abs
 * updated */
static mr_status stagproj_stage(const mr_contact_problem *p, const mr_solver_settings *s,
                                mr_solver_state *state, mr_arena *work, polish_ws *w, int reserve,
                                double *lambda, double *c, double *trial, double *e, int *iters,
                                mr_error *err) {
  int n = w->n, keep = reserve < 0 ? 0 : reserve;
  mr_solver_settings sub = *s;
  mr_solver_stats st;
  sub.warm_start = 1;
  mr_copy(w->sp, lambda, n);
  /* a share of a step's work (mr_solver_settings.work_iter): on the sparse factors the work
   * left in sweeps, which ncp-stagproj charges at its factorisations' and solves' cost; on a
   * dense G the outer iterations the sweeps left allow, each costing two inner runs of up to
   * inner_iter iterations */
  mr_solver_settings capped;
  int is_capped = s->work_iter > 0, charged = is_capped && w->blocks;
  if (is_capped && !charged) {
    int cost = 2 * (s->inner_iter > 0 ? s->inner_iter : 1);
    int outer = (s->max_iter - *iters - keep) / cost;
    if (outer <= 0) return w->capped = 1, MR_OK;
    capped = *s;
    capped.max_iter = *iters + keep + outer;
    s = &capped;
  }
  /* the probe: HYB_SP_PROBE outer iterations, then stages 4 and 5 from its iterate */
  if (reserve >= 0 && s->max_iter - *iters - keep > 2 * HYB_SP_PROBE) {
    mr_copy(trial, lambda, n);
    sub.max_iter = HYB_SP_PROBE;
    memset(&st, 0, sizeof st);
    mr_status rc = mr_solver_ncp_stagproj(p, &sub, state, work, trial, c, &st, err);
    if (rc) return rc;
    *iters += st.iterations;
    double et = ncp_eps(s, p, trial, c);
    /* stopped by its own rules: the full run from the same start would stop there too */
    int done = st.iterations < sub.max_iter;
    if (!done && et > s->eps_abs) et = newton_stages(p, s, w, work, trial, c, et, iters);
    if (et < *e) mr_copy(lambda, trial, n), *e = et;
    if (done || *e <= s->eps_abs) return MR_OK;
  }
  /* the run on the rest of the budget from the same start as the probe */
  sub.max_iter = s->max_iter - *iters - keep;
  if (sub.max_iter <= 0 || mr_solver_late(s)) return w->capped |= is_capped, MR_OK;
  mr_copy(trial, w->sp, n);
  memset(&st, 0, sizeof st);
  /* the state goes with it only for its sparse factor (ncp-stagproj keeps no y or ρ) */
  mr_status rc = mr_solver_ncp_stagproj(p, &sub, state, work, trial, c, &st, err);
  if (rc) return rc;
  *iters += st.iterations;
  w->capped |= charged ? st.budget : is_capped && st.iterations >= sub.max_iter;
  double et = ncp_eps(s, p, trial, c);
  if (et < *e) mr_copy(lambda, trial, n), *e = et;
  return MR_OK;
}

/* stages 1 and 1b from λ (in place, ε_abs e on entry); *moved set when λ changed */
static mr_status first_stages(const mr_contact_problem *p, const mr_solver_settings *s,
                              mr_arena *work, polish_ws *w, int early, int reserve, double *lambda,
                              double *c, double *trial, double *e, int *iters, int *moved,
                              int *c_lambda, mr_error *err) {
  int slow = 0;
  /* 1. ncp-pgs, in chunks, while its observed rate reaches eps_abs within half the budget; when
   * that rate still needs more sweeps than the Newton stages cost (a sweep costs about 2n²
   * flops, a Newton step's LU about 2n³/3, so the reserve of HYB_POLISH + HYB_NEWTON steps
   * costs at most as much as reserve·n/3 sweeps), it hands over to them (1b) — the hyperstatic
   * stacks and piles, where Gauss-Seidel's rate is poor but its active set is right after a few
   * sweeps. The first two chunks are then HYB_PGS_FIRST sweeps: the rate of 25 already tells a
   * pile of cubes (ε_abs 26 → 10, the Newton stages then end in 3–5 steps) from a problem
   * ncp-pgs finishes, and a second chunk measures the rate without the drop from a poor warm
   * start (the bin's islands whose contacts changed: ε_abs 3.5e5 → ~1e3 in 25 sweeps, then
   * slow) */
  double handover = early ? reserve * w->n / 3.0 : INFINITY;
  int first = early ? HYB_PGS_FIRST : HYB_PGS_CHUNK;
  mr_status rc = chunked(p, s, work, w, first, HYB_PGS_CHUNK, 0.5, reserve, handover, lambda, c,
                         trial, e, iters, moved, &slow, c_lambda, err);
  if (rc || *e <= s->eps_abs || mr_solver_late(s)) return rc;
  *c_lambda = 0; /* the later stages leave c as they like */
  /* 1b. stages 4 and 5 from ncp-pgs's iterate, whatever ended stage 1 (slow, stalled, or a
   * rate that misses eps_abs within the budget): a few steps, each about n/3 sweeps, where
   * stages 2 and 3 may run thousands of iterations (the rough-ground trot's sliding feet leave
   * ncp-pgs, ADMM and staggered projections at ε_abs ~ 10² for 10⁴ iterations, while Newton's
   * method from ncp-pgs's iterate ends in a few steps); ncp-pgs resumes after a slow chunk */
  if (early || w->state) {
    double e1 = *e;
    *e = newton_rounds(p, s, w, work, reserve, HYB_DENSE_MAX_NC, lambda, c, *e, iters);
    if (*e <= s->eps_abs) return MR_OK;
    if (*e < e1) *moved = 1;
  }
  if (slow)
    rc = chunked(p, s, work, w, HYB_PGS_CHUNK, HYB_PGS_CHUNK, 0.5, reserve, INFINITY, lambda, c,
                 trial, e, iters, moved, &slow, c_lambda, err);
  return rc;
}

/* about the round-off of c's parts at λ over the whole problem: 2u F V
 * (mr_problem_roundoff_scales), the global form of the scaled criterion's per-contact scales */
static double roundoff_floor(const mr_contact_problem *p, const double *lambda) {
  double f, v;
  mr_problem_roundoff_scales(p, lambda, &f, &v);
  return DBL_EPSILON * f * v;
}

/* 2a. The Newton stages started from the solution of the CCP, found by ccp-pgs from λ = 0 in at
 * most HYB_CCP_SWEEPS sweeps. The CCP is the NCP with the de Saxcé term Γ = μ‖c_T‖ left out of
 * c: a convex problem, whose iterations cannot stall on a wrong active set, and whose active set
 * is the NCP's wherever the slip, and with it Γ, is small. The NCP's own iterations can stall:
 * on one body of the 50-body drop of bench/scale.c against the bin (6 contacts, G of rank 6;
 * tests/fixtures/hybrid) ncp-pgs, ncp-admm and the staggered projections all stop at ε_abs
 * 1e-4–7e-4 carrying 1.6–1.7 N on contact 1, where the solution leaves contact 1 open and carries
 * 4–6 N on contact 3, and Newton's method from their iterates stays there. Stage 5 runs first
 * (the natural map's Newton steps change the active set by themselves, while stage 4's
 * classification of the CCP's iterate, Γ missing from its c, can take a wrong one: a 35-contact
 * island of the same drop ends at ε_abs 1.4 with stage 4 first, at 7e-7 with stage 5 first);
 * when that does not end it, stages 4 and 5 once from the CCP's iterate again (a
 * 45-contact island: 1.2e-3 from stage 5 alone, 3e-9 from them). The better iterate goes
 * on when it lowers ε_abs (*moved then set). Up to HYB_REST_MAX_NC contacts, on a dense copy of a
 * block-sparse G */
static mr_status ccp_start(const mr_contact_problem *p, const mr_solver_settings *s, mr_arena *work,
                           polish_ws *w, int reserve, double *lambda, double *c, double *trial,
                           double *e, int *iters, int *moved, mr_error *err) {
  mr_solver_settings cs = *s;
  mr_solver_stats st;
  int left = s->max_iter - *iters - reserve;
  cs.warm_start = 0, cs.criterion = MR_CRITERION_OWN;
  cs.max_iter = left < HYB_CCP_SWEEPS ? left : HYB_CCP_SWEEPS;
  if (cs.max_iter <= 0) return MR_OK;
  memset(&st, 0, sizeof st);
  mr_status rc = mr_solver_ccp_pgs(p, &cs, NULL, work, trial, c, &st, err);
  if (rc) return rc;
  *iters += st.iterations;
  int n = w->n;
  double e0 = ncp_eps(s, p, trial, c);
  mr_copy(w->sp, trial, n); /* the CCP's iterate (stage 3 sets w->sp anew) */
  double et = newton_stages_upto(p, s, w, work, HYB_REST_MAX_NC, 1, trial, c, e0, iters);
  if (et < *e) mr_copy(lambda, trial, n), *e = et, *moved = 1;
  if (*e <= s->eps_abs || *iters >= s->max_iter - reserve || mr_solver_late(s)) return MR_OK;
  et = newton_stages_upto(p, s, w, work, HYB_REST_MAX_NC, 0, w->sp, c, e0, iters);
  if (et < *e) mr_copy(lambda, w->sp, n), *e = et, *moved = 1;
  return MR_OK;
}

/* max_iter for k iterations of ncp-admm, at most s->max_iter: k, or under a simulator's work
 * budget on the sparse factor (ncp-admm then counts its work in sweeps) k iterations and the
 * factorisation at their cost */
static int admm_iterations(const mr_contact_problem *p, const mr_solver_settings *s,
                           const polish_ws *w, const mr_solver_state *state, int k) {
  double it = k;
  admm_qp q = {.blocks = p, .chol = w->blocks && state ? state->chol : NULL};
  if (q.chol && s->work_iter > 0 && mr_chol_analyze(q.chol, p) >= 0)
    it = admm_factor_sweeps(&q) + k * admm_iteration_sweeps(&q);
  return it < s->max_iter ? (int)ceil(it) : s->max_iter;
}

/* stages 1–5 from λ (in place, ε_abs e on entry, c = c(λ), compensated when *c_now is set);
 * budget in iterations; *c_now set when c is c(λ), compensated, on return (the paths that end a
 * resting island), else cleared */
static mr_status cascade(const mr_contact_problem *p, const mr_solver_settings *s,
                         mr_solver_state *state, mr_arena *work, polish_ws *w, double *lambda,
                         double *c, double *trial, double *e, int *iters, int *c_now,
                         mr_error *err) {
  int n = w->n, c_lambda = *c_now;
  *c_now = 0;
  mr_solver_settings sub = *s;
  mr_solver_stats st;
  sub.warm_start = 1;
  /* the Newton stages before and between the long stages (1b, 1c, 3's probe) up to
   * HYB_DENSE_MAX_NC contacts, where a dense and a block-sparse G both run them (the two take
   * the same path, and above it a Newton step costs hundreds of sweeps); after stage 3 on any
   * dense G */
  /* box constraints (joint friction): stages 1 and 2 only, the Newton stages and ncp-stagproj
   * know cones alone */
  int box = mr_problem_has_box(p);
  int early = p->nc <= HYB_DENSE_MAX_NC && !box;
  int reserve = !box && (!w->blocks || early) ? HYB_POLISH + HYB_NEWTON : 0, moved = 0;
  /* 0b. a warm start that carries the dual y and ρ of last step's ncp-admm (the state is valid
   * only when last step's result came from it): ncp-admm first, at most HYB_ADMM_PROBE
   * iterations (charged on the sparse factor: their cost and the factorisation's). A resting stack
   * or tower then ends in one iteration, where ncp-pgs from the same warm start takes its whole
   * first chunk of 100 sweeps and hands over to ncp-admm anyway */
  if (w->warm && state && state->valid && !box && s->max_iter > 0) {
    exact_eps(s, p, w, lambda, c, e, &c_lambda);
    sub.max_iter = admm_iterations(p, s, w, state, HYB_ADMM_PROBE);
    mr_copy(trial, lambda, n);
    memset(&st, 0, sizeof st);
    w->admm_ran = 1;
    mr_status rp = mr_solver_ncp_admm(p, &sub, state, work, trial, c, &st, err);
    if (rp) return rp;
    *iters += st.iterations;
    double et = ncp_eps(s, p, trial, c);
    c_lambda = et < *e;
    if (c_lambda) mr_copy(lambda, trial, n), *e = et;
    if (*e <= s->eps_abs || mr_solver_late(s)) return *c_now = c_lambda, MR_OK;
  }
  /* 0c. a warm start on an island of up to HYB_REST_MAX_NC contacts: the active-set polish first
   * (stage 4 alone; on a dense copy of a block-sparse G), whose classification at a resting
   * patch's warm start is the solution's: a column of cubes then ends in one or two steps where
   * stage 1 takes its chunks first */
  if (w->warm && !box && p->nc <= HYB_REST_MAX_NC) {
    *e = polish_any(p, s, w, work, lambda, c, *e, iters, c_lambda);
    c_lambda = 1;
    if (*e <= s->eps_abs) return *c_now = 1, MR_OK;
  }
  mr_status rc = first_stages(p, s, work, w, early, reserve, lambda, c, trial, e, iters, &moved,
                              &c_lambda, err);
  if (rc || *e <= s->eps_abs || mr_solver_late(s)) return *c_now = c_lambda, rc;
  c_lambda = 0;
  /* 1c. from a warm start, stages 1 and 1b again from λ = 0 before the long stages: a warm
   * start from a step whose contacts slid or changed can lead ncp-pgs and the Newton stages
   * astray where the cold start does not (the rough-ground trot: ncp-pgs stalls at the warm
   * start's ε_abs ~ 10³ and stages 2–3 take 10⁴ iterations, while from λ = 0 stages 1 and 1b
   * end in ~100); the better of the two goes on. Only when they left ε_abs above its value at
   * λ = 0: a warm start they brought below it (the heavy-on-light stack, whose stages 2–3 then
   * converge in ~500) is kept without the extra cost */
  if (w->warm && early) {
    double e_warm = *e;
    mr_copy(w->sp, lambda, n);
    mr_zero(lambda, n);
    *e = ncp_eps(s, p, lambda, c);
    c_lambda = 1;
    if (*e < e_warm)
      rc = first_stages(p, s, work, w, early, reserve, lambda, c, trial, e, iters, &moved,
                        &c_lambda, err);
    if (rc || *e <= s->eps_abs) return *c_now = c_lambda, rc;
    if (mr_solver_late(s)) {
      if (e_warm <= *e) mr_copy(lambda, w->sp, n), *e = e_warm;
      return MR_OK;
    }
    if (e_warm <= *e)
      mr_copy(lambda, w->sp, n), *e = e_warm;
    else
      moved = 1;
  }
  /* 2. ncp-admm (ill-conditioned G: mass ratios, stacks) on a twentieth of what remains: where it
   * converges it does within a few hundred iterations (the heavy-on-light stacks of the corpus);
   * the state's dual y and ρ (the previous step's ADMM solve) go with the warm start, so they are
   * dropped when stage 1 moved the best iterate away from it */
  sub.max_iter = (s->max_iter - *iters - reserve) / (box ? 1 : HYB_ADMM_SHARE);
  /* and the same share of the time left */
  if (s->deadline > 0.0 && !box) {
    double now = mr_solver_clock();
    sub.deadline = now + (s->deadline - now) / HYB_ADMM_SHARE;
  }
  if (sub.max_iter > 0) {
    mr_copy(trial, lambda, n);
    memset(&st, 0, sizeof st);
    if (state && moved) state->valid = 0;
    w->admm_ran = 1;
    rc = mr_solver_ncp_admm(p, &sub, state, work, trial, c, &st, err);
    if (rc) return rc;
    *iters += st.iterations;
    double et = ncp_eps(s, p, trial, c);
    if (et < *e) mr_copy(lambda, trial, n), *e = et;
    if (*e <= s->eps_abs) return MR_OK;
  }
  if (box || mr_solver_late(s)) return MR_OK;
  /* 2a. up to HYB_REST_MAX_NC contacts, far above eps_abs: the Newton stages from the solution
   * of the CCP */
  if (p->nc <= HYB_REST_MAX_NC &&
      *e > HYB_CCP_TRIGGER * fmax(s->eps_abs, roundoff_floor(p, lambda))) {
    rc = ccp_start(p, s, work, w, reserve, lambda, c, trial, e, iters, &moved, err);
    if (rc || *e <= s->eps_abs || mr_solver_late(s)) return rc;
  }
  /* 2b. above HYB_DENSE_MAX_NC contacts (no Newton stages): ncp-pgs again from the best
   * iterate while each chunk lowers ε_abs, before stage 3, whose outer iterations (two inner
   * ADMM runs each) cost tens of sweeps: on the 200-body drop of bench/scale.c, in a budget
   * of 20 ms a step, going to stage 3 leaves ε_abs above 1e3 N on 45 steps of 800, ncp-pgs
   * on none */
  if (!early) {
    int slow = 0;
    rc = chunked(p, s, work, w, HYB_PGS_CHUNK, HYB_PGS_CHUNK, 1e300, 0, INFINITY, lambda, c, trial,
                 e, iters, &moved, &slow, &c_lambda, err);
    if (rc || *e <= s->eps_abs || mr_solver_late(s) || *iters >= s->max_iter) return rc;
  }
  /* 3. staggered projections, stages 4 and 5 after its probe */
  rc = stagproj_stage(p, s, state, work, w, early ? reserve : -1, lambda, c, trial, e, iters, err);
  if (rc || *e <= s->eps_abs || mr_solver_late(s)) return rc;
  /* 4. the active-set Newton polish, 5. semismooth Newton on the natural map (finds the active
   * set by itself) */
  *e = newton_stages(p, s, w, work, lambda, c, *e, iters);
  /* 5b. when 4 and 5 stall far from eps_abs: the stick/separate mode search (modes.c), 4, 5 */
  if (*e > MR_MODES_TRIGGER * s->eps_abs && !mr_solver_late(s) &&
      mr_contact_modes(p, s->eps_abs, s->eps_scale, w->M, w->Mf, work, lambda, c, e))
    *e = newton_stages(p, s, w, work, lambda, c, *e, iters);
  return MR_OK;
}

static int polish_alloc(polish_ws *w, int nc, int blocks, mr_arena *a) {
  int n = 3 * nc;
  size_t nn = (size_t)n * (size_t)n + 1;
  w->n = n;
  w->blocks = blocks;
  w->cl = (unsigned char *)mr_arena_doubles(a, (size_t)nc / 8 + 1);
  w->dir = mr_arena_doubles(a, 2 * (size_t)nc + 1);
  w->col = (int *)mr_arena_doubles(a, (size_t)nc / 2 + 1);
  w->piv = (int *)mr_arena_doubles(a, (size_t)n / 2 + 1);
  /* M and Mf need no zeroing: assemble writes all of M, solve_active copies it to Mf */
  w->M = blocks ? NULL : mr_arena_alloc(a, nn * sizeof(double));
  w->Mf = blocks ? NULL : mr_arena_alloc(a, nn * sizeof(double));
  w->r = mr_arena_doubles(a, (size_t)n + 1);
  w->x = mr_arena_doubles(a, (size_t)n + 1);
  w->t = mr_arena_doubles(a, (size_t)n + 1);
  w->l = mr_arena_doubles(a, (size_t)n + 1);
  w->lt = mr_arena_doubles(a, (size_t)n + 1);
  w->sp = mr_arena_doubles(a, (size_t)n + 1);
  w->xr = mr_arena_doubles(a, (size_t)n + 1);
  w->act = (unsigned char *)mr_arena_doubles(a, (size_t)n / 8 + 1);
  return w->cl && w->dir && w->col && w->piv && (blocks || (w->M && w->Mf)) && w->r && w->x &&
                 w->t && w->l && w->lt && w->sp && w->xr && w->act
             ? 0
             : -1;
}

mr_status mr_solver_ncp_hybrid(MR_SOLVER_ARGS) {
  mr_status rc = mr_gs_check(p, s, err);
  if (rc) return rc;
  int n = 3 * p->nc, iters = 0;
  size_t mark = mr_arena_mark(work);
  polish_ws w;
  /* a block-sparse G: read as it is where the sparse factor pays, else a dense copy made below
   * when the stages after 0a run (0 and 0a read G through c = (G + R) λ + g alone, which
   * sums the stored blocks either way) */
  int blocks = !p->G && p->nc > 0 && mr_sparse_chol_pays(p->nc, p->Gb_row[p->nc]);
  mr_contact_problem dense;
  double *G_dense = NULL;
  if (!p->G && p->nc > 0 && !blocks) {
    G_dense = mr_arena_alloc(work, ((size_t)n * n + 1) * sizeof *G_dense);
    if (!G_dense) {
      mr_arena_reset(work, mark);
      return mr_error_set(err, MR_ERR_NOMEM,
                          "ncp-hybrid: work arena too small for a dense G of %d rows", n);
    }
  }
  size_t mark_stages = mr_arena_mark(work);
  double *trial = mr_arena_doubles(work, (size_t)n + 1);
  w.admm_ran = 0, w.capped = 0;
  w.state = blocks && p->nc > HYB_DENSE_MAX_NC && !mr_problem_has_box(p) ? state : NULL;
  w.keep = state && state->keep && state->keep_cap >= mr_hybrid_keep_size(p->nc) &&
                   mr_hybrid_keep_size(p->nc) > 0
               ? state
               : NULL;
  if (!trial || polish_alloc(&w, p->nc, blocks, work)) {
    mr_arena_reset(work, mark);
    return mr_error_set(err, MR_ERR_NOMEM, "ncp-hybrid: work arena too small");
  }
  /* 0. the warm start, projected on the cones (λ = 0 without one) */
  int warm = s->warm_start;
  w.warm = warm;
  for (int k = 0; k < n; ++k)
    if (!warm || !isfinite(lambda[k])) lambda[k] = 0.0;
  for (int i = 0; i < p->nc; ++i)
    mr_constraint_project(p, i, lambda + 3 * i, lambda + 3 * i);
  /* 0a. the chord step on the kept factor, whether or not the warm start meets eps_abs */
  double e = 0.0;
  int chorded = warm && !mr_problem_has_box(p) && chord_start(p, s, &w, lambda) &&
                chord(p, s, &w, lambda, c, &e);
  int c_now = 1; /* c = c(λ), compensated */
  w.e_plain = 0;
  if (!chorded && p->nc > HYB_REST_MAX_NC) {
    /* an island without stage 0c, whose warm start ncp-pgs takes on unless it passes: screened
     * (below, a resting island's warm start passes or goes to stage 0c, which needs c) */
    velocity_plain(p, lambda, c);
    e = screened_eps(s, p, lambda, c, &c_now);
    w.e_plain = !c_now;
  } else if (!chorded) {
    e = ncp_eps(s, p, lambda, c);
  }
  iters += chorded;
  if (e > s->eps_abs && G_dense) dense_view(p, G_dense, &dense), p = &dense;
  if (e > s->eps_abs)
    rc = cascade(p, s, state, work, &w, lambda, c, trial, &e, &iters, &c_now, err);
  /* a state left from an older step does not go with this step's λ */
  if (state && !w.admm_ran) state->valid = 0;
  mr_arena_reset(work, mark_stages);
  if (rc) {
    mr_arena_reset(work, mark);
    return rc;
  }
  /* stage 6 reads G densely: a copy of a block-sparse one when it runs, up to HYB_DENSE_MAX_NC */
  if (blocks && s->eps_scale == 0.0 && e > s->eps_abs && p->nc <= HYB_DENSE_MAX_NC &&
      dense_copy(p, work, &dense) == 0)
    p = &dense;
  /* 6. the lattice polish, when only the representation of λ in doubles misses eps_abs: on the
   * absolute criterion alone (eps_scale 0), its own (it ends with c = c(λ)). The scaled
   * criterion accepts what it would remove: its trigger held on no solve of the corpus or of
   * the shipped scenes under the default */
  if (s->eps_scale == 0.0 && !mr_problem_has_box(p) && !mr_solver_late(s) && e > s->eps_abs) {
    if (!c_now) velocity(p, lambda, c);
    double e_abs = mr_problem_criteria(p, lambda, c, 1, NULL, NULL, NULL);
    mr_polish_lattice(p, s->eps_abs, work, lambda, c, e_abs);
    e = scaled_at(s, p, lambda, c);
    c_now = 1;
  }
  /* c = c(λ), compensated, on return: mr_solve takes it as the exact velocity (registry.c) */
  if (!c_now) velocity(p, lambda, c);
  mr_arena_reset(work, mark);
  stats->iterations = iters;
  stats->eps_model = e;
  stats->converged = e <= s->eps_abs;
  stats->budget = !stats->converged && w.capped;
  return MR_OK;
}

size_t mr_hybrid_keep_size(int nc) {
  if (nc <= 0 || nc > HYB_REST_MAX_NC) return 0;
  size_t n = 3 * (size_t)nc;
  return n * n + n / 2 + 1;
}

size_t mr_hybrid_sparse_work_size(int nc) {
  size_t m = nc > 0 ? (size_t)nc : 0, n = 3 * m;
  /* trial, the polish vectors (dir, cl, col, piv, r, x, t, l, lt, sp, xr, act), alignment */
  size_t own = (10 * n + 5 * m + 64) * sizeof(double) + 18 * 32;
  /* then stage 3, or the dense copy with the two active-set matrices, or the copy under the
   * lattice polish */
  size_t stage = mr_stagproj_work_size(nc, 1);
  if (nc <= HYB_REST_MAX_NC) {
    size_t newton = 3 * (n * n + 1) * sizeof(double) + 3 * 32;
    stage = stage > newton ? stage : newton;
  }
  if (nc <= HYB_DENSE_MAX_NC) {
    size_t lattice = (n * n + 1) * sizeof(double) + 32 + mr_polish_work_size(nc);
    stage = stage > lattice ? stage : lattice;
  }
  return own + stage;
}
