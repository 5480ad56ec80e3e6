/* The lattice polish: an NCP iterate λ that has converged as far as double precision lets it
 * (docs/solvers.md, "Accuracy criteria") moved by integer numbers of ulps per entry so that the
 * exact (Dot2) criterion falls below eps_abs.
 *
 * Why a lattice. At a heavy load (λ_N ~ 2.5e3 N on the heavy-on-light stack, ~1e5 N in
 * scenes/b5_heavy_on_light.yaml) one unit in the last place u_j of one entry λ_j moves the
 * exact c = (G + R) λ + g by (G + R)_{:j} u_j and ε_c = |⟨λ, c + Γ(c)⟩| by λ_N times that:
 * more than eps_abs, so no single-entry move certifies 1e-6. The moves of all k entries
 * together, c + (G + R) diag(u) z for z ∈ Z^k, form a Z-module of rank k in the range of
 * G + R (at most the number of dofs: 12 for two boxes on 8 contacts, k = 24), which is dense
 * wherever the columns are not commensurate. Finding a z that zeroes the criterion is a
 * closest-vector problem, solved approximately in rounds:
 *   1. the equations: per contact f = ⟨λ, c + Γ(c)⟩ = 0 (its ε_c; ε_p and ε_d are of the size
 *      of c itself, 1e-9 here), linearised in c; per bilateral row c_r = 0;
 *   2. the embedding of Kannan ("Minkowski's convex body theorem and integer programming",
 *      Math. Oper. Res. 12, 1987): the k vectors b_q = σ (M_{:q}, κ A_{:q}, ρ e_q), M = F (G +
 *      R) diag(u) the change of the equations per ulp, A = W (G + R) diag(u) the change of c
 *      weighted by w = max(‖λ⁽ⁱ⁾‖, 1) per contact (a small change of c keeps the linearisation
 *      valid), ρ = eps_abs 2^-PL_PRICE the price of one ulp, σ a power of two that scales the
 *      largest entry to 2^PL_BITS, rounded to integers: a full-rank integer lattice (the
 *      identity part makes the b_q independent whatever the rank of G); the target is
 *      (−σ f, 0, 0);
 *   3. LLL reduction (Lenstra, Lenstra and Lovász, "Factoring polynomials with rational
 *      coefficients", Math. Ann. 261, 1982; δ = 0.99) in the floating-point form of Schnorr
 *      and Euchner ("Lattice basis reduction", Math. Programming 66, 1994): the basis is kept
 *      exactly in 64-bit integers, its inner products are exact (128-bit), and only the
 *      Gram–Schmidt coefficients are long double (64-bit significand), recomputed from the
 *      exact inner products after every size-reduction pass. Nguyen and Stehlé's analysis of
 *      floating-point LLL (SIAM J. Comput. 39, 2009) asks about 1.6 d + o(d) bits for dimension
 *      d, i.e. the 64 bits up to d ≈ 35; larger lattices (up to MR_POLISH_MAX_MOVES) are not
 *      proven, but a rounding in the coefficients can only make the reduction poorer or stop
 *      it (the iteration cap), never the result wrong: z is an integer vector by construction;
 *   4. Babai's nearest plane ("On Lovász' lattice reduction and the nearest lattice point
 *      problem", Combinatorica 6, 1986) for the target;
 *   5. λ + diag(u) z evaluated with the exact criterion (Dot2 c, mr_problem_criteria) and
 *      kept only when its ε_abs is lower: the polish never returns a worse λ.
 *
 * When the rounds from λ miss eps_abs, a continuous stage runs before them. The equations
 * ask, at a sticking contact, for c_N + μ ‖c_T‖ + ⟨λ_T, c_T⟩ / λ_N = 0: c = 0 would do, but
 * on the 1e6 stack c keeps 0.8e-9–1.4e-9 m/s outside the range of G's dominant part (the two
 * boxes' 12 motions; least squares in binary128, of the size that G's rounding to doubles
 * times λ ~ 2.5e3 N makes: a twist of the four corners' c_N that no rigid motion makes), so c
 * cannot vanish and the solution of the equations near λ has every contact approaching along its
 * normal by μ ‖c_T‖ while c_T slips: a velocity of ~1e-8 m/s, against which one ulp of λ
 * (c moves by ~1e-9) is fine enough for the rounds. Linearised at λ (c_T ~ 1e-10, random
 * directions, near the kink of ‖c_T‖) the rounds do not find it. So:
 *   6. from a start where every contact of the equations approaches at a few times the
 *      velocity eps_abs / λ_N (the least-norm change of λ that makes it), Levenberg–Marquardt
 *      (Moré, "The Levenberg–Marquardt algorithm: implementation and theory", 1978) on the
 *      equations in long double over the same moves as real numbers, with the same trust term
 *      ‖W (G + R) s‖² and the kink smoothed in the gradient only, solved by QR with Givens
 *      rotations (the heavy body's directions are 1e-10 of the light one's: squared, in
 *      normal equations, they would drop below long double's precision);
 *   7. its λ rounded to doubles, and the rounds 2.–5. from there.
 * The result is kept only when its exact ε_abs is lower.
 *
 * When it runs: ε_abs > eps_abs, and every contact whose own ε exceeds eps_abs is within
 * MR_POLISH_TRIGGER of its one-ulp resolution δ_i = w_i max_{r of i, j} |(G + R)_rj| u_j: below
 * that, single-entry moves are too coarse and the solver's iterate is as good as their grid
 * allows; above it, the error is the solver's, not the representation's, and the polish does
 * not run (O(nc n) to decide). Moved: the λ of the offending contacts and of the non-separated
 * contacts coupled to them (a nonzero block of G), all three components, or λ_N alone where λ
 * is on the cone's boundary (sliding); rows of A and equations: every non-separated contact
 * coupled to a moved one.
 *
 * Cost: one LLL reduction per round, at most PL_ROUNDS rounds and PL_LLL_ITER k² LLL
 * iterations of O(k D) each (D = equations + 3 rows per contact + k); the continuous stage at
 * most PL_LM_TOTAL iterations of O(ne k²) (the rows of J rotated into the trust term's
 * triangle); memory from the work arena, at most
 * mr_polish_work_size(nc) bytes; a stage that does not fit is not done. */
#include "contact/polish.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "contact/active_set.h"
#include "core/arena.h"
#include "core/linalg.h"

__extension__ typedef __int128 i128;

#define PL_BITS 40          /* the largest generator entry is scaled to [2^39, 2^40) */
#define PL_ENTRY_MAX 0x1p56 /* larger basis or target entries: stop (exact i128 dots) */
#define PL_DELTA 0.99L      /* Lovász's condition */
#define PL_LLL_ITER 16      /* LLL iterations at most PL_LLL_ITER k² */
#define PL_SIZE_PASSES 16   /* size-reduction passes at most per vector */
#define PL_PRICE 24         /* ρ = eps_abs 2^-PL_PRICE: the price of one ulp of z */
#define PL_KAPPA0 0.25      /* first weight of the change of c against the equations */
#define PL_STALL 4          /* consecutive rounds without progress that end the polish */
#define PL_ROUNDS 16        /* rounds at most */
#define PL_LM_ITER 100      /* Levenberg–Marquardt iterations per smoothing level */
#define PL_LM_TOTAL 1500    /* Levenberg–Marquardt iterations at most per polish */
#define PL_LM_STOP 0.25     /* the continuous stage stops at max |f| ≤ PL_LM_STOP eps_abs */
#define PL_ETA0 100.0       /* smoothing of ‖c_T‖: from PL_ETA0 eps_abs / λ_N (m/s) ... */
#define PL_ETA1 1e-3        /* ... down by thirds to PL_ETA1 eps_abs / λ_N */
/* Tikhonov block of the continuous stage, relative to the largest squared column: below the
 * weakest physical direction (a 1e6 mass ratio: the heavy body's (Δt/M) against the light
 * one's G, 2.5e-10, squared 6e-20) and above the directions that only the rounding of G to
 * doubles creates (relative 1e-16, squared 1e-32), which would move λ by thousands of newtons;
 * measured on the four stack problems of tests/test_polish.c: 1e-22 left one at 1.3e-6, 1e-28
 * one at 3.2e-6 (a λ the lattice could not round), 1e-26 solves all four */
#define PL_TIKH 1e-26
#define PL_SINK 64.0 /* approach speeds of the starts: PL_SINK, PL_SINK / 4 eps_abs/w */

typedef struct {
  int n, k, m, D;       /* rows of the problem, moves, rows of A, D = ne + m + k */
  unsigned char *cls;   /* mode per contact (mr_contact_mode_of_force) */
  unsigned char *moved; /* per contact: its λ is moved */
  int *col, *row;       /* λ index of move q (k), c index of row r of A (m) */
  double *u, *w;        /* ulp unit of move q (k), weight of row r of A (m) */
  int64_t *b;           /* the basis: k vectors of D entries, vector q at b + q D */
  int64_t *t, *z;       /* target (D), integer move (k) */
  long double *mu;      /* Gram–Schmidt coefficients μ_ij, j < i, packed by rows */
  long double *B, *a;   /* squared Gram–Schmidt norms (k), a Gram–Schmidt row (k) */
  double *lt, *ct;      /* trial λ and its c (n) */
  int ne, s;            /* equations of the target, the scale exponent of the basis (σ = 2^s) */
  int *eq_row, *eq_nr;  /* first c row of equation a and its number of rows (3, or 1) */
  double *eq_g, *eq_f;  /* gradient of equation a in c on its rows (3 per equation), value */
  int kink;             /* the equations drop the ‖c_T‖ term where c_N ≥ 0 */
  double kappa;         /* weight of the change of c against the equations */
  int zoff;             /* first entry of the identity part in a basis vector (ne + m) */
} lattice;

/* the continuous stage's work: unknowns d (the moves' real changes of λ, k), equations f (ne) */
typedef struct {
  double *R;            /* the trust term's triangle: R of [W A; Tikhonov], k x k */
  long double *T, *tb;  /* a triangle being built by rotations (k x k) and its right-hand side */
  long double *row;     /* one row of a least-squares system (k) */
  long double *d, *dt;  /* d and a trial d (k) */
  long double *f, *ft;  /* f at d and at the trial (ne) */
  long double *F;       /* ∂f/∂c on the equation's rows (3 ne) */
  long double *ce, *ct; /* c on the equations' rows at d and at the trial (3 ne) */
  int *qof;             /* move of λ index j, or -1 (n) */
} lm_ws;

#define MU(L, i, j) ((L)->mu[(size_t)(i) * ((i)-1) / 2 + (j)])

/* one unit in the last place of x (0 at x = 0) */
static double ulp_of(double x) {
  x = fabs(x);
  return x > 0.0 ? fmax(ldexp(1.0, ilogb(x) - 52), 0x1p-1074) : 0.0;
}

/* (G + R)_ij */
static double gr(const mr_contact_problem *p, int i, int j) {
  return p->G[(size_t)i * 3 * p->nc + j] + (p->R && i == j ? p->R[i] : 0.0);
}

/* ε_abs at λ with the exact criterion; c ← (G + R) λ + g by Dot2 */
static double exact_eps(const mr_contact_problem *p, const double *lambda, double *c) {
  mr_problem_velocity_dot2(p, lambda, c);
  return mr_problem_criteria(p, lambda, c, 1, NULL, NULL, NULL);
}

/* ε of contact i alone */
static double contact_eps(const mr_contact_problem *p, const double *l, const double *c, int i) {
  const double *ci = c + 3 * i;
  if (mr_problem_bilateral(p, i)) return sqrt(ci[0] * ci[0] + ci[1] * ci[1] + ci[2] * ci[2]);
  double ep, ed, ec;
  mr_contact_criteria(p->mu[i], l + 3 * i, ci, 1, &ep, &ed, &ec);
  return fmax(ep, fmax(ed, ec));
}

/* weight of contact i's residual rows */
static double weight(const mr_contact_problem *p, const double *l, int i) {
  const double *li = l + 3 * i;
  if (mr_problem_bilateral(p, i)) return 1.0;
  return fmax(sqrt(li[0] * li[0] + li[1] * li[1] + li[2] * li[2]), 1.0);
}

/* one-ulp resolution of contact i's criterion: w_i max_{r of i, j} |(G + R)_rj| ulp(λ_j) */
static double resolution(const mr_contact_problem *p, const double *l, int i) {
  int n = 3 * p->nc;
  double d = 0.0;
  for (int r = 3 * i; r < 3 * i + 3; ++r)
    for (int j = 0; j < n; ++j)
      d = fmax(d, fabs(gr(p, r, j)) * ulp_of(l[j]));
  return weight(p, l, i) * d;
}

/* contacts i and j share a nonzero block of G */
static int coupled(const mr_contact_problem *p, int i, int j) {
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      if (p->G[(size_t)(3 * i + a) * 3 * p->nc + 3 * j + b] != 0.0) return 1;
  return 0;
}

/* the trigger: every contact above eps_abs is within MR_POLISH_TRIGGER of its resolution;
 * marks the moved contacts (the offending ones and the non-separated ones coupled to them);
 * returns the number of offending contacts, or -1 when the polish does not apply */
static int select_moves(const mr_contact_problem *p, const double *l, const double *c,
                        double eps_abs, lattice *L) {
  int nc = p->nc, bad = 0;
  for (int i = 0; i < nc; ++i) {
    L->cls[i] = (unsigned char)mr_contact_mode_of_force(p, i, l);
    L->moved[i] = 0;
  }
  for (int i = 0; i < nc; ++i) {
    double ei = contact_eps(p, l, c, i);
    if (!(ei > eps_abs)) continue;
    if (L->cls[i] == MR_CONTACT_SEPARATED || !(ei <= MR_POLISH_TRIGGER * resolution(p, l, i)))
      return -1;
    L->moved[i] = 2, ++bad;
  }
  for (int j = 0; j < nc; ++j)
    for (int i = 0; i < nc && !L->moved[j]; ++i)
      if (L->moved[i] == 2 && L->cls[j] != MR_CONTACT_SEPARATED && coupled(p, i, j))
        L->moved[j] = 1;
  return bad;
}

/* the components of contact i that are moved or measured: all three, or the normal one */
static int components(const lattice *L, int i, int *first) {
  *first = L->cls[i] == MR_CONTACT_SLIDING ? 2 : 0;
  return L->cls[i] == MR_CONTACT_SEPARATED ? 0 : 3 - *first;
}

/* count (fill when fill != 0) moves and residual rows */
static void index_moves(const mr_contact_problem *p, const double *l, lattice *L, int fill) {
  int nc = p->nc, f;
  L->k = L->m = L->ne = 0;
  for (int i = 0; i < nc; ++i) {
    if (!L->moved[i]) continue;
    int nq = components(L, i, &f);
    double lmax = fmax(fabs(l[3 * i]), fmax(fabs(l[3 * i + 1]), fabs(l[3 * i + 2])));
    for (int a = f; a < f + nq; ++a, ++L->k)
      if (fill) {
        L->col[L->k] = 3 * i + a;
        L->u[L->k] = l[3 * i + a] != 0.0 ? ulp_of(l[3 * i + a]) : ulp_of(lmax);
      }
  }
  for (int i = 0; i < nc; ++i) {
    if (L->cls[i] == MR_CONTACT_SEPARATED) continue;
    int near = 0;
    for (int j = 0; j < nc && !near; ++j)
      near = L->moved[j] && coupled(p, i, j);
    if (!near) continue;
    int bil = mr_problem_bilateral(p, i);
    for (int a = 0; a < 3; ++a, ++L->m)
      if (fill) L->row[L->m] = 3 * i + a, L->w[L->m] = weight(p, l, i);
    for (int a = 0; a < (bil ? 3 : 1); ++a, ++L->ne)
      if (fill) L->eq_row[L->ne] = 3 * i + (bil ? a : 0), L->eq_nr[L->ne] = bil ? 1 : 3;
  }
  L->zoff = L->ne + L->m, L->D = L->zoff + L->k;
}

/* the index arrays of the moves, rows and equations from the arena; -1 when they do not fit */
static int index_alloc(lattice *L, mr_arena *a) {
  int k = L->k, m = L->m, ne = L->ne;
  L->col = mr_arena_alloc(a, sizeof(int) * (size_t)(k + 1));
  L->row = mr_arena_alloc(a, sizeof(int) * (size_t)(m + 1));
  L->u = mr_arena_alloc(a, sizeof(double) * (size_t)(k + 1));
  L->w = mr_arena_alloc(a, sizeof(double) * (size_t)(m + 1));
  L->eq_row = mr_arena_alloc(a, sizeof(int) * (size_t)(ne + 1));
  L->eq_nr = mr_arena_alloc(a, sizeof(int) * (size_t)(ne + 1));
  L->eq_g = mr_arena_alloc(a, sizeof(double) * 3 * (size_t)(ne + 1));
  L->eq_f = mr_arena_alloc(a, sizeof(double) * (size_t)(ne + 1));
  return L->col && L->row && L->u && L->w && L->eq_row && L->eq_nr && L->eq_g && L->eq_f ? 0 : -1;
}

/* the basis and the reduction's arrays from the arena; -1 when they do not fit */
static int basis_alloc(lattice *L, mr_arena *a) {
  int k = L->k, D = L->D, n = L->n;
  size_t tri = (size_t)k * (k - 1) / 2 + 1;
  L->b = mr_arena_alloc(a, sizeof(int64_t) * (size_t)k * D);
  L->t = mr_arena_alloc(a, sizeof(int64_t) * (size_t)D);
  L->z = mr_arena_alloc(a, sizeof(int64_t) * (size_t)k);
  L->mu = mr_arena_alloc(a, sizeof(long double) * tri);
  L->B = mr_arena_alloc(a, sizeof(long double) * (size_t)k);
  L->a = mr_arena_alloc(a, sizeof(long double) * (size_t)k);
  L->lt = mr_arena_alloc(a, sizeof(double) * (size_t)n);
  L->ct = mr_arena_alloc(a, sizeof(double) * (size_t)n);
  return L->b && L->t && L->z && L->mu && L->B && L->a && L->lt && L->ct ? 0 : -1;
}

size_t mr_polish_work_size(int nc) {
  /* k ≤ n moves, m ≤ n rows, ne ≤ n equations, D ≤ 3n. The lattice stage: the basis 8 k D,
   * the packed μ 16 k²/2, its vectors (t 8 D, z 8, B, a 16, lt, ct 8 per entry): 32 n² + 80 n;
   * the continuous stage in its place: R 8 k², T 16 k², its vectors (tb, row, d, dt, f, ft 16,
   * F, ce, ct 48, qof 4 per entry): 24 n² + 244 n. Both above the index arrays (col, row,
   * eq_row, eq_nr 4, u, w, eq_f 8, eq_g 24 per entry and one more), the candidate λ and c (16
   * per row) and 2 bytes per contact; 32 blocks of 32-byte alignment */
  size_t n = nc > 0 ? 3 * (size_t)nc : 0;
  return 32 * n * n + 400 * (n + 1) + 2 * (size_t)nc + 32 * 32;
}

/* exact ⟨x, y⟩ of two integer vectors */
static i128 idot(const int64_t *x, const int64_t *y, int D) {
  i128 s = 0;
  for (int i = 0; i < D; ++i)
    s += (i128)x[i] * y[i];
  return s;
}

/* Gram–Schmidt row i from the exact inner products: r_ij = ⟨b_i, b_j⟩ − Σ_{l<j} μ_jl r_il,
 * μ_ij = r_ij / B_j, B_i = ⟨b_i, b_i⟩ − Σ_j μ_ij r_ij */
static void gs_row(lattice *L, int i) {
  const int64_t *bi = L->b + (size_t)i * L->D;
  long double bb = (long double)idot(bi, bi, L->D);
  for (int j = 0; j < i; ++j) {
    long double r = (long double)idot(bi, L->b + (size_t)j * L->D, L->D);
    for (int l = 0; l < j; ++l)
      r -= MU(L, j, l) * L->a[l];
    L->a[j] = r;
    MU(L, i, j) = r / L->B[j];
    bb -= MU(L, i, j) * r;
  }
  L->B[i] = bb;
}

/* b_i ← b_i − q b_j, exact; -1 when an entry would leave ±PL_ENTRY_MAX */
static int sub_vector(lattice *L, int i, int j, long double q) {
  int64_t *bi = L->b + (size_t)i * L->D;
  const int64_t *bj = L->b + (size_t)j * L->D;
  for (int d = 0; d < L->D; ++d) {
    long double v = (long double)bi[d] - q * (long double)bj[d];
    if (!(fabsl(v) < PL_ENTRY_MAX)) return -1;
  }
  int64_t qi = (int64_t)q;
  for (int d = 0; d < L->D; ++d)
    bi[d] -= qi * bj[d];
  return 0;
}

/* size reduction of b_i (|μ_ij| ≤ 1/2 up to rounding), the row recomputed exactly after each
 * pass that changed b_i; -1 on overflow or when it does not settle */
static int size_reduce(lattice *L, int i) {
  for (int pass = 0; pass < PL_SIZE_PASSES; ++pass) {
    gs_row(L, i);
    int changed = 0;
    for (int j = i - 1; j >= 0; --j) {
      long double q = roundl(MU(L, i, j));
      if (fabsl(MU(L, i, j)) <= 0.51L || q == 0.0L) continue;
      if (sub_vector(L, i, j, q)) return -1;
      for (int l = 0; l < j; ++l)
        MU(L, i, l) -= q * MU(L, j, l);
      MU(L, i, j) -= q;
      changed = 1;
    }
    if (!changed) return L->B[i] > 0.0L ? 0 : -1;
  }
  return -1;
}

/* swap b_i and b_{i−1} */
static void swap_vectors(lattice *L, int i) {
  int64_t *x = L->b + (size_t)i * L->D, *y = x - L->D;
  for (int d = 0; d < L->D; ++d) {
    int64_t s = x[d];
    x[d] = y[d], y[d] = s;
  }
}

/* LLL reduction with δ = PL_DELTA; -1 on overflow or when the iteration cap is reached */
static int lll(lattice *L) {
  int k = L->k, i = 1;
  long cap = (long)PL_LLL_ITER * k * k + 64;
  gs_row(L, 0);
  if (!(L->B[0] > 0.0L)) return -1;
  for (long it = 0; i < k; ++it) {
    if (it > cap) return -2;
    if (size_reduce(L, i)) return -1;
    long double m = MU(L, i, i - 1);
    if (L->B[i] < (PL_DELTA - m * m) * L->B[i - 1]) {
      swap_vectors(L, i);
      if (i == 1) gs_row(L, 0);
      i = i > 1 ? i - 1 : 1;
    } else {
      ++i;
    }
  }
  return 0;
}

/* Babai's nearest plane: z with Σ_q z_q b_q the lattice point near the target t; -1 when a
 * coefficient is out of range */
static int babai(lattice *L, int64_t lam) {
  int k = L->k, D = L->D;
  /* a_j = ⟨t, b*_j⟩ = ⟨t, b_j⟩ − Σ_{l<j} μ_jl a_l */
  for (int j = 0; j < k; ++j) {
    long double r = (long double)idot(L->t, L->b + (size_t)j * D, D);
    for (int l = 0; l < j; ++l)
      r -= MU(L, j, l) * L->a[l];
    L->a[j] = r;
  }
  memset(L->z, 0, sizeof(int64_t) * (size_t)k);
  /* from the last plane down: c_i = round(a_i / B_i); ⟨b_i, b*_j⟩ = μ_ij B_j for j < i */
  for (int i = k - 1; i >= 0; --i) {
    long double ci = roundl(L->a[i] / L->B[i]);
    if (!(fabsl(ci) < 0x1p40L)) return -1;
    if (ci == 0.0L) continue;
    for (int j = 0; j < i; ++j)
      L->a[j] -= ci * MU(L, i, j) * L->B[j];
    /* z gathers the identity part of c_i b_i, Λ z_q; a z beyond 2^53 ulps is no move of a
     * double (and would overflow) */
    const int64_t *bi = L->b + (size_t)i * D + L->zoff;
    for (int q = 0; q < k; ++q) {
      long double zq = (long double)L->z[q] + ci * (long double)(bi[q] / lam);
      if (!(fabsl(zq) < 0x1p53L)) return -1;
      L->z[q] = (int64_t)zq;
    }
  }
  return 0;
}

/* the equations at (λ, c): per contact f = ⟨λ, c + Γ(c)⟩ = 0 (its ε_c, linearised in c:
 * ∂f/∂c_T = λ_T + μ λ_N c_T/‖c_T‖, ∂f/∂c_N = λ_N), per bilateral row c_r = 0 */
static void equations(const mr_contact_problem *p, const double *l, const double *c, lattice *L) {
  for (int a = 0; a < L->ne; ++a) {
    int r0 = L->eq_row[a], i = r0 / 3;
    double *g = L->eq_g + 3 * a;
    if (L->eq_nr[a] == 1) {
      g[0] = 1.0, g[1] = g[2] = 0.0, L->eq_f[a] = c[r0];
      continue;
    }
    const double *li = l + r0, *ci = c + r0;
    double mu = p->mu[i], ct = hypot(ci[0], ci[1]);
    double k = ct > 0.0 && (!L->kink || ci[2] < 0.0) ? mu * li[2] / ct : 0.0;
    g[0] = li[0] + k * ci[0], g[1] = li[1] + k * ci[1], g[2] = li[2];
    L->eq_f[a] = li[0] * ci[0] + li[1] * ci[1] + li[2] * (ci[2] + mu * ct);
  }
}

/* A_rq = w_r (G + R)_{row r, col q} u_q: the weighted change of c on row r per ulp of move q */
static double gen(const mr_contact_problem *p, const lattice *L, int r, int q) {
  return L->w[r] * gr(p, L->row[r], L->col[q]) * L->u[q];
}

/* M_aq = F_a (G + R)_{:, col q} u_q: the change of equation a per ulp of move q */
static double eq_gen(const mr_contact_problem *p, const lattice *L, int a, int q) {
  double s = 0.0;
  for (int t = 0; t < L->eq_nr[a]; ++t)
    s += L->eq_g[3 * a + t] * gr(p, L->eq_row[a] + t, L->col[q]);
  return s * L->u[q];
}

/* real entry d of basis vector q before scaling (d < zoff) */
static double entry(const mr_contact_problem *p, const lattice *L, int d, int q) {
  return d < L->ne ? eq_gen(p, L, d, q) : L->kappa * gen(p, L, d - L->ne, q);
}

/* the basis (σ M, σ κ A, Λ I), σ = 2^s, Λ = σ ρ, and the target (−σ f, 0, 0); returns Λ, or 0
 * when it does not fit */
static int64_t build(const mr_contact_problem *p, double rho, lattice *L) {
  int k = L->k, D = L->D, zo = L->zoff;
  double amax = 0.0;
  for (int q = 0; q < k; ++q)
    for (int d = 0; d < zo; ++d)
      amax = fmax(amax, fabs(entry(p, L, d, q)));
  if (!(amax > 0.0)) return 0;
  L->s = PL_BITS - 1 - ilogb(amax);
  double lam = fmax(rint(ldexp(rho, L->s)), 1.0);
  if (!(lam < PL_ENTRY_MAX)) return 0;
  memset(L->b, 0, sizeof(int64_t) * (size_t)k * D);
  for (int q = 0; q < k; ++q) {
    int64_t *bq = L->b + (size_t)q * D;
    for (int d = 0; d < zo; ++d)
      bq[d] = (int64_t)rint(ldexp(entry(p, L, d, q), L->s));
    bq[zo + q] = (int64_t)lam;
  }
  memset(L->t, 0, sizeof(int64_t) * (size_t)D);
  for (int a = 0; a < L->ne; ++a) {
    double y = ldexp(L->eq_f[a], L->s);
    if (!(fabs(y) < PL_ENTRY_MAX)) return 0;
    L->t[a] = -(int64_t)rint(y);
  }
  return (int64_t)lam;
}

/* λ + diag(u) z into lt */
static void apply_move(const double *lambda, lattice *L) {
  memcpy(L->lt, lambda, sizeof(double) * (size_t)L->n);
  for (int q = 0; q < L->k; ++q)
    L->lt[L->col[q]] += (double)L->z[q] * L->u[q];
}

/* Levenberg–Marquardt-like rounds from (λ, c, e): the equations linearised at the current λ
 * (every other round without the ‖c_T‖ term where c_N ≥ 0, whose kink at c_T = 0 the
 * linearisation does not see), the lattice reduced and the nearest plane taken; κ, the weight
 * of the change of c (the trust in the linearisation), is halved after a round that lowers
 * ε_abs and quadrupled after one that does not; PL_STALL rounds in a row without progress end
 * the polish; returns ε_abs */
static double rounds(const mr_contact_problem *p, double eps_abs, lattice *L, double *lambda,
                     double *c, double e) {
  L->kappa = PL_KAPPA0;
  for (int round = 0, stall = 0; round < PL_ROUNDS && e > eps_abs && stall < PL_STALL; ++round) {
    L->kink = round & 1;
    equations(p, lambda, c, L);
    int64_t lam = build(p, ldexp(eps_abs, -PL_PRICE), L);
    if (!lam || lll(L) || babai(L, lam)) break;
    apply_move(lambda, L);
    double et = exact_eps(p, L->lt, L->ct);
    if (!(et < e)) {
      L->kappa *= 4.0, ++stall;
      continue;
    }
    L->kappa *= 0.5, stall = 0;
    memcpy(lambda, L->lt, sizeof(double) * (size_t)L->n);
    memcpy(c, L->ct, sizeof(double) * (size_t)L->n);
    e = et;
  }
  return e;
}

/* the continuous stage's arrays from the arena; -1 when they do not fit */
static int lm_alloc(const lattice *L, lm_ws *w, mr_arena *a) {
  size_t k = (size_t)L->k, ne = (size_t)L->ne, ld = sizeof(long double);
  w->R = mr_arena_alloc(a, sizeof(double) * k * k);
  w->T = mr_arena_alloc(a, ld * k * k);
  w->tb = mr_arena_alloc(a, ld * k);
  w->row = mr_arena_alloc(a, ld * k);
  w->d = mr_arena_alloc(a, ld * k);
  w->dt = mr_arena_alloc(a, ld * k);
  w->f = mr_arena_alloc(a, ld * ne);
  w->ft = mr_arena_alloc(a, ld * ne);
  w->F = mr_arena_alloc(a, ld * 3 * ne);
  w->ce = mr_arena_alloc(a, ld * 3 * ne);
  w->ct = mr_arena_alloc(a, ld * 3 * ne);
  w->qof = mr_arena_alloc(a, sizeof(int) * (size_t)L->n);
  return w->R && w->T && w->tb && w->row && w->d && w->dt && w->f && w->ft && w->F && w->ce &&
                 w->ct && w->qof
             ? 0
             : -1;
}

/* Least squares by QR built one row at a time with Givens rotations (Golub and Van Loan,
 * "Matrix Computations", 5.2.5): the row (w->row, right-hand side rb) is rotated into the upper
 * triangle T (w->T, right-hand side w->tb). No normal equations, whose squared condition (1e20
 * for a 1e6 mass ratio) long double could not hold; k² long doubles whatever the rows. */
static void givens_row(lm_ws *w, int k, long double rb) {
  long double *T = w->T, *x = w->row;
  for (int j = 0; j < k; ++j) {
    if (x[j] == 0.0L) continue;
    long double a = T[(size_t)j * k + j], r = hypotl(a, x[j]), c = a / r, s = x[j] / r;
    for (int q = j; q < k; ++q) {
      long double t1 = T[(size_t)j * k + q], t2 = x[q];
      T[(size_t)j * k + q] = c * t1 + s * t2, x[q] = c * t2 - s * t1;
    }
    long double t1 = w->tb[j];
    w->tb[j] = c * t1 + s * rb, rb = c * rb - s * t1;
  }
}

/* T and its right-hand side cleared */
static void givens_clear(lm_ws *w, int k) {
  memset(w->T, 0, sizeof(long double) * (size_t)k * k);
  memset(w->tb, 0, sizeof(long double) * (size_t)k);
}

/* the Tikhonov rows √(PL_TIKH) cmax e_q (right-hand side 0) rotated in, cmax the largest
 * squared column norm of the rows so far, then T x = tb solved; -1 on a zero pivot */
static int givens_solve(lm_ws *w, int k, long double cmax, long double *x) {
  long double t = sqrtl(PL_TIKH * cmax);
  for (int q = 0; q < k; ++q) {
    memset(w->row, 0, sizeof(long double) * (size_t)k);
    w->row[q] = t;
    givens_row(w, k, 0.0L);
  }
  for (int j = k - 1; j >= 0; --j) {
    long double s = w->tb[j], piv = w->T[(size_t)j * k + j];
    if (!(fabsl(piv) > 0.0L)) return -1;
    for (int q = j + 1; q < k; ++q)
      s -= w->T[(size_t)j * k + q] * x[q];
    x[j] = s / piv;
  }
  return 0;
}

/* c on the equations' rows at λ + d: c0 + (G + R)_{rows, moves} d, c0 the exact (Dot2) c at λ */
static void lm_velocity(const mr_contact_problem *p, const lattice *L, const double *c0,
                        const long double *d, long double *ce) {
  for (int a = 0; a < L->ne; ++a)
    for (int t = 0; t < L->eq_nr[a]; ++t) {
      int row = L->eq_row[a] + t;
      long double s = c0[row];
      for (int q = 0; q < L->k; ++q)
        s += (long double)gr(p, row, L->col[q]) * d[q];
      ce[3 * a + t] = s;
    }
}

/* the equations at λ + d (f, and with F != NULL their gradients in c, the ‖c_T‖ term's
 * smoothed by η / λ_N); returns max |f| */
static long double lm_equations(const mr_contact_problem *p, const lattice *L, const lm_ws *w,
                                const double *lambda, const long double *d, const long double *ce,
                                long double *f, long double *F, double eta) {
  long double m = 0.0L;
  for (int a = 0; a < L->ne; ++a) {
    int r0 = L->eq_row[a];
    const long double *ci = ce + 3 * a;
    if (L->eq_nr[a] == 1) {
      f[a] = ci[0];
      if (F) F[3 * a] = 1.0L, F[3 * a + 1] = F[3 * a + 2] = 0.0L;
    } else {
      long double li[3], mu = p->mu[r0 / 3], ct = sqrtl(ci[0] * ci[0] + ci[1] * ci[1]);
      for (int t = 0; t < 3; ++t)
        li[t] = lambda[r0 + t] + (w->qof[r0 + t] >= 0 ? d[w->qof[r0 + t]] : 0.0L);
      f[a] = li[0] * ci[0] + li[1] * ci[1] + li[2] * (ci[2] + mu * ct);
      if (F) {
        long double h = li[2] > 0.0L ? eta / li[2] : eta;
        long double kk = mu * li[2] / sqrtl(ct * ct + h * h);
        F[3 * a] = li[0] + kk * ci[0], F[3 * a + 1] = li[1] + kk * ci[1], F[3 * a + 2] = li[2];
      }
    }
    m = fmaxl(m, fabsl(f[a]));
  }
  return m;
}

/* row a of J = ∂f/∂d into w->row: through c (F (G + R)) and, on the contact's own moved
 * components, through λ */
static void lm_jacobian_row(const mr_contact_problem *p, const lattice *L, lm_ws *w, int a) {
  int r0 = L->eq_row[a], nr = L->eq_nr[a];
  const long double *ci = w->ce + 3 * a;
  for (int q = 0; q < L->k; ++q) {
    long double s = 0.0L;
    for (int t = 0; t < nr; ++t)
      s += w->F[3 * a + t] * gr(p, r0 + t, L->col[q]);
    int own = L->col[q] - r0;
    if (nr == 3 && own >= 0 && own < 3)
      s += own < 2 ? ci[own] : ci[2] + p->mu[r0 / 3] * sqrtl(ci[0] * ci[0] + ci[1] * ci[1]);
    w->row[q] = s;
  }
}

/* the start: the least-norm change d of λ that makes every contact of the equations approach
 * at speed v along its normal and leaves the bilateral rows (S d = −v, S the normal rows of
 * (G + R) on the moves, with the Tikhonov rows); zero when it fails */
static void lm_start(const mr_contact_problem *p, const lattice *L, lm_ws *w, double v) {
  int k = L->k;
  long double cmax = 0.0L;
  givens_clear(w, k);
  for (int q = 0; q < k; ++q) {
    long double s = 0.0L;
    for (int a = 0; a < L->ne; ++a) {
      long double x = gr(p, L->eq_row[a] + (L->eq_nr[a] == 3 ? 2 : 0), L->col[q]);
      s += x * x;
    }
    cmax = fmaxl(cmax, s);
  }
  for (int a = 0; a < L->ne; ++a) {
    int ra = L->eq_row[a] + (L->eq_nr[a] == 3 ? 2 : 0);
    for (int q = 0; q < k; ++q)
      w->row[q] = gr(p, ra, L->col[q]);
    givens_row(w, k, L->eq_nr[a] == 3 ? -v : 0.0L);
  }
  if (givens_solve(w, k, cmax, w->d))
    for (int q = 0; q < k; ++q)
      w->d[q] = 0.0L;
}

/* Levenberg–Marquardt on the equations f(λ + d) = 0 from w->d: the step minimises
 * ‖J s + f‖² + ν ‖W (G + R) s‖² (the change of c weighted as in A: the trust region) with a
 * Tikhonov term (PL_TIKH of the largest squared column), by Givens QR; ν is divided by 3 after a
 * step that lowers ‖f‖ and multiplied by 4 after one that does not. The kink of ‖c_T‖ at c_T = 0 is
 * smoothed in the gradient by η / λ_N (m/s), η from PL_ETA0 eps_abs down by thirds to PL_ETA1
 * eps_abs; the equations themselves are never smoothed. Returns 1 when max |f| ≤ PL_LM_STOP
 * eps_abs; *its counts the iterations against PL_LM_TOTAL */
static int lm_solve(const mr_contact_problem *p, double eps_abs, const lattice *L, lm_ws *w,
                    const double *lambda, const double *c0, int *its) {
  int k = L->k, ne = L->ne;
  /* the trust term's triangle: R of [W A; Tikhonov] (per unit of λ) */
  long double cmax = 0.0L;
  for (int q = 0; q < k; ++q) {
    long double s = 0.0L;
    for (int r = 0; r < L->m; ++r) {
      long double x = L->w[r] * gr(p, L->row[r], L->col[q]);
      s += x * x;
    }
    cmax = fmaxl(cmax, s);
  }
  givens_clear(w, k);
  for (int r = 0; r < L->m; ++r) {
    for (int q = 0; q < k; ++q)
      w->row[q] = L->w[r] * gr(p, L->row[r], L->col[q]);
    givens_row(w, k, 0.0L);
  }
  if (givens_solve(w, k, cmax, w->dt)) return 0;
  for (int q = 0; q < k * k; ++q)
    w->R[q] = (double)w->T[q];
  lm_velocity(p, L, c0, w->d, w->ce);
  long double m = lm_equations(p, L, w, lambda, w->d, w->ce, w->f, NULL, 0.0);
  for (double eta = PL_ETA0 * eps_abs; eta >= PL_ETA1 * eps_abs; eta /= 3.0) {
    long double nu = 1.0L;
    for (int it = 0; it < PL_LM_ITER; ++it, ++*its) {
      if (m <= PL_LM_STOP * eps_abs) return 1;
      if (*its >= PL_LM_TOTAL || !(nu < 1e30L)) break;
      lm_equations(p, L, w, lambda, w->d, w->ce, w->f, w->F, eta);
      /* [√ν R; J] s ≈ [0; −f]: √ν R as the triangle, the rows of J rotated in */
      long double sn = sqrtl(nu), ss = 0.0L;
      for (int q = 0; q < k * k; ++q)
        w->T[q] = sn * w->R[q];
      memset(w->tb, 0, sizeof(long double) * (size_t)k);
      for (int a = 0; a < ne; ++a) {
        lm_jacobian_row(p, L, w, a);
        givens_row(w, k, -w->f[a]);
      }
      if (givens_solve(w, k, 0.0L, w->dt)) break;
      for (int q = 0; q < k; ++q)
        w->dt[q] += w->d[q];
      lm_velocity(p, L, c0, w->dt, w->ct);
      long double mt = lm_equations(p, L, w, lambda, w->dt, w->ct, w->ft, NULL, 0.0);
      for (int a = 0; a < ne; ++a)
        ss += w->ft[a] * w->ft[a] - w->f[a] * w->f[a];
      if (ss < 0.0L) {
        memcpy(w->d, w->dt, sizeof(long double) * (size_t)k);
        memcpy(w->ce, w->ct, sizeof(long double) * 3 * (size_t)ne);
        memcpy(w->f, w->ft, sizeof(long double) * (size_t)ne);
        m = mt, nu /= 3.0L;
      } else {
        nu *= 4.0L;
      }
    }
    if (m <= PL_LM_STOP * eps_abs) return 1;
    if (*its >= PL_LM_TOTAL) break;
  }
  return 0;
}

/* the continuous stage, when the lattice rounds from λ miss eps_abs: from each start (every
 * contact of the equations approaching at PL_SINK, then PL_SINK / 4, times eps_abs / max w, the
 * speed at which its ε_c moves by eps_abs), Levenberg–Marquardt to max |f| ≤ PL_LM_STOP eps_abs,
 * λ + d rounded to doubles (lc), then the lattice rounds from there; λ and c take the result
 * when its exact ε_abs is below e. The arena above mark holds one stage at a time. Returns
 * ε_abs at λ */
static double continuous(const mr_contact_problem *p, double eps_abs, lattice *L, mr_arena *work,
                         size_t mark, double *lambda, double *c, double *lc, double *cc, double e) {
  int its = 0;
  for (int start = 0; start < 2 && e > eps_abs && its < PL_LM_TOTAL; ++start) {
    mr_arena_reset(work, mark);
    lm_ws w;
    if (lm_alloc(L, &w, work)) break;
    index_moves(p, lambda, L, 1);
    double wmax = 1.0;
    for (int r = 0; r < L->m; ++r)
      wmax = fmax(wmax, L->w[r]);
    for (int j = 0; j < L->n; ++j)
      w.qof[j] = -1;
    for (int q = 0; q < L->k; ++q)
      w.qof[L->col[q]] = q;
    lm_start(p, L, &w, ldexp(PL_SINK, -2 * start) * eps_abs / wmax);
    if (!lm_solve(p, eps_abs, L, &w, lambda, c, &its)) continue;
    memcpy(lc, lambda, sizeof(double) * (size_t)L->n);
    for (int q = 0; q < L->k; ++q)
      lc[L->col[q]] = (double)((long double)lambda[L->col[q]] + w.d[q]);
    /* the lattice rounds from the rounded continuous solution, their ulps and weights its own */
    mr_arena_reset(work, mark);
    if (basis_alloc(L, work)) break;
    index_moves(p, lc, L, 1);
    double ec = rounds(p, eps_abs, L, lc, cc, exact_eps(p, lc, cc));
    if (ec < e) {
      memcpy(lambda, lc, sizeof(double) * (size_t)L->n);
      memcpy(c, cc, sizeof(double) * (size_t)L->n);
      e = ec;
    }
  }
  return e;
}

double mr_polish_lattice(const mr_contact_problem *p, double eps_abs, mr_arena *work,
                         double *lambda, double *c, double e) {
  lattice L = {0};
  L.n = 3 * p->nc;
  if (!(e > eps_abs) || !p->G || p->nc <= 0) return e;
  size_t mark = mr_arena_mark(work);
  L.cls = mr_arena_alloc(work, (size_t)p->nc);
  L.moved = mr_arena_alloc(work, (size_t)p->nc);
  double *lc = mr_arena_doubles(work, (size_t)L.n), *cc = mr_arena_doubles(work, (size_t)L.n);
  if (L.cls && L.moved && lc && cc) {
    mr_problem_velocity_dot2(p, lambda, c);
    /* the trigger, then the moves, the rows and the equations counted, allocated and filled */
    if (select_moves(p, lambda, c, eps_abs, &L) > 0) {
      index_moves(p, lambda, &L, 0);
      if (L.k > 0 && L.k <= MR_POLISH_MAX_MOVES && !index_alloc(&L, work)) {
        size_t inner = mr_arena_mark(work);
        index_moves(p, lambda, &L, 1);
        if (!basis_alloc(&L, work)) e = rounds(p, eps_abs, &L, lambda, c, e);
        if (e > eps_abs) e = continuous(p, eps_abs, &L, work, inner, lambda, c, lc, cc, e);
      }
    }
  }
  mr_problem_velocity_dot2(p, lambda, c);
  mr_arena_reset(work, mark);
  return e;
}
