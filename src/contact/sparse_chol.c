/* The sparse LDLᵀ factor of sparse_chol.h over CHOLMOD. */
#include "contact/sparse_chol.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>

/* one analysed pattern */
typedef struct {
  int nc, nnzb;     /* the analysed pattern (0 contacts: none) */
  int part, w;      /* the components it factors (mr_chol_part) and their number per contact */
  int *row, *col;   /* its copy: nc + 1 and nnzb entries */
  int *perm;        /* permuted row k is the part's row perm[k] (w nc) */
  int *map;         /* entry q of the part of stored block k → its slot in A->x, or −1 (lower
                     * triangle); w² entries per block */
  int *diag;        /* the slot of A's diagonal entry in each permuted column (w nc) */
  double *tmp;      /* w nc scratch of the solves */
  cholmod_sparse *A; /* triu(P (G + diag d) Pᵀ), column-major */
  cholmod_factor *L; /* simplicial LDLᵀ of A + ρI in the natural order (A is permuted) */
  long used;         /* when last used (least recently used analysis replaced first) */
} analysis;

/* the analyses of the last CHOL_PATTERNS patterns met for each part, so that a contact set
 * alternating between a few configurations (a box resting on 4 or 3 corners) reuses them; the
 * parts have slots of their own (ncp-hybrid's ADMM and staggered projections share one factor,
 * and a solver using one part holds no more than before) */
#define CHOL_PATTERNS 4
#define CHOL_PARTS 3

/* the components of each part, and their number */
static const int part_comp[3][3] = {{0, 1, 2}, {2, 0, 0}, {0, 1, 0}};
static const int part_width[3] = {3, 1, 2};

struct mr_sparse_chol {
  cholmod_common cc;
  analysis slot[CHOL_PARTS * CHOL_PATTERNS]; /* part k's in [k·CHOL_PATTERNS, …) */
  analysis *f; /* the current one */
  long clock;
};

static void clear_pattern(cholmod_common *cc, analysis *f) {
  free(f->row), free(f->col), free(f->perm), free(f->map), free(f->diag), free(f->tmp);
  f->row = f->col = f->perm = f->map = f->diag = NULL;
  f->tmp = NULL;
  cholmod_free_sparse(&f->A, cc);
  cholmod_free_factor(&f->L, cc);
  f->nc = f->nnzb = f->w = 0;
}

int mr_chol_start(struct cholmod_common_struct *cc) {
  if (!cholmod_start(cc)) return -1;
  cc->print = 0;                       /* failures are reported by the caller */
  cc->supernodal = CHOLMOD_SIMPLICIAL; /* refactored in place, no workspace per call */
  cc->final_asis = 1;
  return 0;
}

mr_sparse_chol *mr_chol_create(void) {
  mr_sparse_chol *f = calloc(1, sizeof *f);
  if (f && mr_chol_start(&f->cc)) free(f), f = NULL;
  return f;
}

void mr_chol_free(mr_sparse_chol *f) {
  if (!f) return;
  for (int k = 0; k < CHOL_PARTS * CHOL_PATTERNS; ++k)
    clear_pattern(&f->cc, &f->slot[k]);
  cholmod_finish(&f->cc);
  free(f);
}

static int same_pattern(const analysis *f, const mr_contact_problem *p, int part) {
  return f->A && f->part == part && f->nc == p->nc && f->nnzb == p->Gb_row[p->nc] &&
         !memcmp(f->row, p->Gb_row, (size_t)(p->nc + 1) * sizeof(int)) &&
         !memcmp(f->col, p->Gb_col, (size_t)f->nnzb * sizeof(int));
}

int mr_amd_order(struct cholmod_common_struct *cc, int n, const int *colp, const int *rows,
                 int *perm) {
  cholmod_sparse *B =
      cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)colp[n], 1, 1, 1, CHOLMOD_PATTERN, cc);
  if (!B) return -1;
  memcpy(B->p, colp, ((size_t)n + 1) * sizeof(int));
  memcpy(B->i, rows, (size_t)colp[n] * sizeof(int));
  cc->nmethods = 1;
  cc->method[0].ordering = CHOLMOD_AMD;
  cc->postorder = 1;
  cholmod_factor *L = cholmod_analyze(B, cc);
  cholmod_free_sparse(&B, cc);
  if (!L) return -1;
  memcpy(perm, L->Perm, (size_t)n * sizeof(int));
  cholmod_free_factor(&L, cc);
  return 0;
}

/* the contacts' fill-reducing order: AMD on the block graph (upper triangle of the pattern) */
static int block_order(cholmod_common *cc, const mr_contact_problem *p, int *bperm) {
  int nc = p->nc;
  size_t upper = 0;
  for (int i = 0; i < nc; ++i)
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k)
      upper += p->Gb_col[k] <= i;
  int *Bp = malloc(((size_t)nc + 1) * sizeof(int)), *Bi = malloc((upper ? upper : 1) * sizeof(int));
  int nz = 0, st = -1;
  if (Bp && Bi) {
    /* column j of the upper triangle: the stored blocks (j, i ≤ j), G's pattern being symmetric */
    for (int j = 0; j < nc; ++j) {
      Bp[j] = nz;
      for (int k = p->Gb_row[j]; k < p->Gb_row[j + 1] && p->Gb_col[k] <= j; ++k)
        Bi[nz++] = p->Gb_col[k];
    }
    Bp[nc] = nz;
    st = mr_amd_order(cc, nc, Bp, Bi, bperm);
  }
  free(Bp), free(Bi);
  return st;
}

/* triu(P A Pᵀ)'s structure, and where each stored block's entry of the part goes. The entries
 * are bucketed by row first and then placed into their columns row by row, so that each
 * column's rows come out ascending in time linear in the entries (a column holds up to w times
 * the blocks of a contact's row: ~100 rows on a wall of bricks, where sorting each column took
 * a third of the analysis) */
static int permuted_structure(cholmod_common *cc, analysis *f, const mr_contact_problem *p,
                              const int *ipos) {
  int nc = p->nc, w = f->w, n = w * nc, nnzb = p->Gb_row[nc], ww = w * w;
  size_t nz = 0;
  int *count = calloc((size_t)n + 1, sizeof(int)), *rows = calloc((size_t)n + 1, sizeof(int));
  if (!count || !rows) return free(count), free(rows), -1;
  for (int i = 0; i < nc; ++i)
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k)
      for (int q = 0; q < ww; ++q) {
        int r = ipos[w * i + q / w], c = ipos[w * p->Gb_col[k] + q % w];
        if (r <= c) count[c + 1]++, rows[r + 1]++, nz++;
      }
  f->A = cholmod_allocate_sparse((size_t)n, (size_t)n, nz, 1, 1, 1, CHOLMOD_REAL, cc);
  int *src = malloc((nz ? nz : 1) * sizeof(int));
  int *by_row = malloc((nz ? nz : 1) * sizeof(int)); /* entry ww k + q, grouped by row */
  if (!f->A || !src || !by_row) return free(count), free(rows), free(src), free(by_row), -1;
  int *Ap = f->A->p, *Ai = f->A->i;
  for (int c = 0; c < n; ++c)
    count[c + 1] += count[c], rows[c + 1] += rows[c];
  memcpy(Ap, count, (size_t)(n + 1) * sizeof(int));
  for (int i = 0; i < nc; ++i)
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k)
      for (int q = 0; q < ww; ++q) {
        int r = ipos[w * i + q / w], c = ipos[w * p->Gb_col[k] + q % w];
        if (r <= c) by_row[rows[r]++] = ww * k + q;
      }
  /* rows[r] now ends row r's entries: place them, row by row, at their columns' ends */
  for (int r = 0, s = 0; r < n; ++r)
    for (; s < rows[r]; ++s) {
      int e = by_row[s], c = ipos[w * p->Gb_col[e / ww] + e % ww % w];
      Ai[count[c]] = r, src[count[c]++] = e;
    }
  for (int e = 0; e < ww * nnzb; ++e)
    f->map[e] = -1;
  for (int c = 0; c < n; ++c)
    for (int s = Ap[c]; s < Ap[c + 1]; ++s) {
      f->map[src[s]] = s;
      if (Ai[s] == c) f->diag[c] = s;
    }
  free(count), free(rows), free(src), free(by_row);
  return 0;
}

/* analyse p's pattern into f */
static int analyze(cholmod_common *cc, analysis *f, const mr_contact_problem *p, int part) {
  clear_pattern(cc, f);
  int w = part_width[part], nc = p->nc, n = w * nc, nnzb = p->Gb_row[nc];
  f->part = part, f->w = w;
  f->row = malloc((size_t)(nc + 1) * sizeof(int));
  f->col = malloc((size_t)(nnzb ? nnzb : 1) * sizeof(int));
  f->perm = malloc((size_t)n * sizeof(int));
  f->map = malloc((size_t)(w * w) * (nnzb ? nnzb : 1) * sizeof(int));
  f->diag = malloc((size_t)n * sizeof(int));
  f->tmp = malloc((size_t)n * sizeof(double));
  int *bperm = malloc((size_t)nc * sizeof(int)), *ipos = malloc((size_t)n * sizeof(int));
  int ok = f->row && f->col && f->perm && f->map && f->diag && f->tmp && bperm && ipos;
  ok = ok && block_order(cc, p, bperm) == 0;
  if (ok) {
    for (int k = 0; k < nc; ++k)
      for (int a = 0; a < w; ++a)
        f->perm[w * k + a] = w * bperm[k] + a;
    for (int k = 0; k < n; ++k)
      ipos[f->perm[k]] = k;
    ok = permuted_structure(cc, f, p, ipos) == 0;
  }
  free(bperm), free(ipos);
  if (ok) {
    /* the symbolic factor of the permuted matrix in its own order, not postordered: CHOLMOD
     * then factors A itself instead of a permuted copy made per call */
    cc->nmethods = 1;
    cc->method[0].ordering = CHOLMOD_NATURAL;
    cc->postorder = 0;
    f->L = cholmod_analyze(f->A, cc);
    ok = f->L && f->L->ordering == CHOLMOD_NATURAL && !f->L->is_super;
  }
  if (!ok) {
    clear_pattern(cc, f);
    return -1;
  }
  memcpy(f->row, p->Gb_row, (size_t)(nc + 1) * sizeof(int));
  memcpy(f->col, p->Gb_col, (size_t)nnzb * sizeof(int));
  f->nc = nc, f->nnzb = nnzb;
  return 1;
}

int mr_chol_analyze(mr_sparse_chol *c, const mr_contact_problem *p) {
  return mr_chol_analyze_part(c, p, MR_CHOL_ALL);
}

int mr_chol_analyze_part(mr_sparse_chol *c, const mr_contact_problem *p, mr_chol_part part) {
  analysis *slot = c->slot + (int)part * CHOL_PATTERNS, *oldest = slot;
  if (c->f && same_pattern(c->f, p, (int)part)) {
    c->f->used = ++c->clock;
    return 0;
  }
  for (int k = 0; k < CHOL_PATTERNS; ++k) {
    if (same_pattern(&slot[k], p, (int)part)) {
      c->f = &slot[k];
      c->f->used = ++c->clock;
      return 0;
    }
    if (slot[k].used < oldest->used) oldest = &slot[k];
  }
  c->f = oldest;
  oldest->used = ++c->clock;
  int st = analyze(&c->cc, oldest, p, (int)part);
  if (st < 0) c->f = NULL, oldest->used = 0;
  return st;
}

void mr_chol_values(mr_sparse_chol *c, const mr_contact_problem *p, const double *d) {
  analysis *f = c->f;
  double *x = f->A->x;
  int w = f->w, ww = w * w;
  const int *comp = part_comp[f->part];
  for (int k = 0; k < f->nnzb; ++k)
    for (int q = 0; q < ww; ++q) {
      int e = f->map[ww * k + q];
      if (e >= 0) x[e] = p->Gb[9 * (size_t)k + 3 * comp[q / w] + comp[q % w]];
    }
  if (d)
    for (int k = 0; k < w * f->nc; ++k)
      x[f->diag[k]] += d[f->perm[k]];
}

void mr_chol_values_congruent(mr_sparse_chol *c, const mr_contact_problem *p, const double *S) {
  analysis *f = c->f;
  double *x = f->A->x; /* a whole-matrix analysis (MR_CHOL_ALL) */
  for (int i = 0; i < f->nc; ++i)
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      const double *B = p->Gb + 9 * (size_t)k, *Si = S + 9 * (size_t)i;
      const double *Sj = S + 9 * (size_t)p->Gb_col[k];
      double BS[9];
      for (int r = 0; r < 3; ++r)
        for (int b = 0; b < 3; ++b)
          BS[3 * r + b] = B[3 * r] * Sj[b] + B[3 * r + 1] * Sj[3 + b] + B[3 * r + 2] * Sj[6 + b];
      for (int q = 0; q < 9; ++q) {
        int e = f->map[9 * k + q], a = q / 3, b = q % 3;
        if (e >= 0) x[e] = Si[a] * BS[b] + Si[3 + a] * BS[3 + b] + Si[6 + a] * BS[6 + b];
      }
    }
}

void mr_chol_values_active(mr_sparse_chol *c, const mr_contact_problem *p,
                           const unsigned char *active, const double *d) {
  analysis *f = c->f;
  double *x = f->A->x; /* a whole-matrix analysis (MR_CHOL_ALL) */
  for (int i = 0; i < f->nc; ++i)
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      int j = p->Gb_col[k];
      for (int q = 0; q < 9; ++q) {
        int e = f->map[9 * k + q], a = 3 * i + q / 3, b = 3 * j + q % 3;
        if (e >= 0) x[e] = active[a] && active[b] ? p->Gb[9 * (size_t)k + q] : a == b ? 1.0 : 0.0;
      }
    }
  if (d)
    for (int k = 0; k < 3 * f->nc; ++k)
      if (active[f->perm[k]]) x[f->diag[k]] += d[f->perm[k]];
}

/* Σ_j cⱼ² and Σ_j cⱼ over the column counts cⱼ of the analysed pattern's L (the symbolic
 * factor's, known before any numeric factorisation) */
static void column_sums(const mr_sparse_chol *c, double *squares, double *entries) {
  const analysis *f = c->f;
  const int *count = f->L->ColCount;
  *squares = *entries = 0.0;
  for (int j = 0; j < f->w * f->nc; ++j)
    *squares += (double)count[j] * count[j], *entries += count[j];
}

double mr_chol_flops(const mr_sparse_chol *c) {
  double squares, entries;
  column_sums(c, &squares, &entries);
  return squares;
}

/* a Gauss-Seidel sweep's flops per stored block (a 3 x 3 block times a 3-vector, 9 multiply-adds).
 * Work is charged by flops: CHOLMOD's simplicial LDLᵀ runs at about half a sweep's flop rate
 * (a wall of bricks, 412 contacts and 13,392 stored blocks: 8e6 flops in 3.3 ms, 2.4 GFlop/s,
 * against 46 µs a sweep, 5.2), so a factorisation takes up to twice the time of the sweeps it
 * is charged as; charged at that time instead, stage 4 of ncp-hybrid gets half the steps in
 * a step's budget and a stair wall of bricks went from 52 to 374 steps of 500 at the budget */
#define SWEEP_FLOPS 18.0

double mr_chol_factor_sweeps(const mr_sparse_chol *c, int nnzb) {
  double squares, entries;
  column_sums(c, &squares, &entries);
  return 1.0 + squares / (SWEEP_FLOPS * (nnzb > 0 ? nnzb : 1));
}

double mr_chol_solve_sweeps(const mr_sparse_chol *c, int nnzb) {
  double squares, entries;
  column_sums(c, &squares, &entries);
  /* the two triangular solves, a multiply-add per entry of L each */
  return 4.0 * entries / (SWEEP_FLOPS * (nnzb > 0 ? nnzb : 1));
}

int mr_chol_factor(mr_sparse_chol *c, double rho) {
  analysis *f = c->f;
  double beta[2] = {rho, 0.0};
  if (!cholmod_factorize_p(f->A, beta, NULL, 0, f->L, &c->cc) || c->cc.status != CHOLMOD_OK)
    return -1;
  /* LDLᵀ: D on the diagonal of each column, all positive for a positive definite matrix */
  const int *Lp = f->L->p;
  const double *Lx = f->L->x;
  for (int j = 0; j < f->w * f->nc; ++j)
    if (!(Lx[Lp[j]] > 0.0) || !isfinite(Lx[Lp[j]])) return -1;
  return 0;
}

void mr_ldl_solve(int n, const int *Lp, const int *Li, const int *Lnz, const double *Lx,
                  const int *perm, double *x, double *t) {
  for (int k = 0; k < n; ++k)
    t[k] = x[perm[k]];
  /* L t' = t (unit diagonal), then D, then Lᵀ */
  for (int j = 0; j < n; ++j) {
    double tj = t[j];
    for (int s = Lp[j] + 1; s < Lp[j] + Lnz[j]; ++s)
      t[Li[s]] -= Lx[s] * tj;
  }
  for (int j = 0; j < n; ++j)
    t[j] /= Lx[Lp[j]];
  for (int j = n - 1; j >= 0; --j) {
    double tj = t[j];
    for (int s = Lp[j] + 1; s < Lp[j] + Lnz[j]; ++s)
      tj -= Lx[s] * t[Li[s]];
    t[j] = tj;
  }
  for (int k = 0; k < n; ++k)
    x[perm[k]] = t[k];
}

void mr_chol_solve(mr_sparse_chol *c, double *x) {
  const analysis *f = c->f;
  mr_ldl_solve(f->w * f->nc, f->L->p, f->L->i, f->L->nz, f->L->x, f->perm, x, f->tmp);
}
