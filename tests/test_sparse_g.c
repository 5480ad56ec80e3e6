/* The block-sparse Delassus matrix (mr_contact_problem.Gb): its products against the dense
 * matrix, every solver on the same problem given dense and block-sparse, the pattern the island
 * assembly produces against the whole model's dense G, the dump of a block-sparse problem, and
 * the refusal of a problem with no G at all. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "contact/problem_io.h"
#include "contact/sparse_chol.h"
#include "contact_problems.h"
#include "cube_columns.h"
#include "core/linalg.h"
#include "core/arena.h"
#include "integrate/islands.h"
#include "integrate/sim_internal.h"
#include "sim_util.h"

/* a block-sparse copy of a dense problem: the diagonal blocks and every off-diagonal block with
 * a nonzero entry */
typedef struct {
  int *row, *col;
  double *val;
  mr_contact_problem p;
} sparse_copy;

static void to_sparse(const mr_contact_problem *d, sparse_copy *s) {
  int nc = d->nc, n = 3 * nc, nnzb = 0;
  s->row = malloc((size_t)(nc + 1) * sizeof(int));
  s->col = malloc((size_t)(nc * nc + 1) * sizeof(int));
  s->val = malloc((size_t)(9 * nc * nc + 1) * sizeof(double));
  assert_true(s->row && s->col && s->val);
  s->row[0] = 0;
  for (int i = 0; i < nc; ++i) {
    for (int j = 0; j < nc; ++j) {
      int nz = i == j;
      for (int k = 0; k < 9; ++k)
        nz |= d->G[(size_t)(3 * i + k / 3) * n + 3 * j + k % 3] != 0.0;
      if (!nz) continue;
      for (int k = 0; k < 9; ++k)
        s->val[9 * nnzb + k] = d->G[(size_t)(3 * i + k / 3) * n + 3 * j + k % 3];
      s->col[nnzb++] = j;
    }
    s->row[i + 1] = nnzb;
  }
  s->p = *d;
  s->p.G = NULL;
  s->p.nnzb = nnzb, s->p.Gb_row = s->row, s->p.Gb_col = s->col, s->p.Gb = s->val;
}

static void free_sparse(sparse_copy *s) {
  free(s->row), free(s->col), free(s->val);
}

/* the test problems: stacks of 1 to 4 boxes (contact_problems.h; a stack couples only the
 * contacts of neighbouring interfaces) and the dumped robot problems */
#define NFIXTURES 6
static const char *const fixtures[NFIXTURES] = {
    "tests/fixtures/talos_stand_step7.json", "tests/fixtures/talos_stand_step9.json",
    "tests/fixtures/solo_stand_step100.json", "tests/fixtures/solo_trot_step261.json",
    "tests/fixtures/allegro_hold_step100.json", "tests/fixtures/talos_stand_step30.json"};

typedef void (*problem_fn)(const mr_contact_problem *p, const char *name);

static void each_problem(problem_fn fn) {
  static cp_problem cp;
  const double masses[4] = {1.0, 2.0, 0.5, 3.0};
  for (int k = 1; k <= 4; ++k) {
    char name[32];
    snprintf(name, sizeof name, "stack of %d", k);
    cp_stack(&cp, k, masses, 0.6);
    fn(&cp.p, name);
  }
  for (int k = 0; k < NFIXTURES; ++k) {
    mr_problem_file f;
    mr_error err = {0};
    if (mr_problem_file_load(fixtures[k], &f, &err)) fail_msg("%s", err.msg);
    fn(&f.problem, fixtures[k]);
    mr_problem_file_free(&f);
  }
}

/* G x, G's blocks and the densified G against the dense matrix: the block products add the same
 * nonzero terms in the same order as a row of the dense product (a block outside the pattern
 * is exactly zero), so they agree bit for bit */
static void check_products(const mr_contact_problem *d, const char *name) {
  sparse_copy s;
  to_sparse(d, &s);
  int nc = d->nc, n = 3 * nc;
  double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
  double *yd = malloc((size_t)n * sizeof(double)), *G = malloc((size_t)n * n * sizeof(double));
  assert_true(x && y && yd && G);
  for (int k = 0; k < n; ++k)
    x[k] = sin(1.0 + 3.7 * k);
  mr_problem_G_mul(&s.p, x, y);
  for (int r = 0; r < n; ++r) {
    double acc = 0.0;
    for (int k = 0; k < n; ++k)
      acc += d->G[(size_t)r * n + k] * x[k];
    yd[r] = acc;
    if (y[r] != yd[r]) fail_msg("%s: (G x)[%d] = %.17g, dense %.17g", name, r, y[r], yd[r]);
  }
  /* the compensated c = (G + R) λ + g: the same terms in the same order, the same bits */
  mr_problem_velocity_dot2(&s.p, x, y);
  mr_problem_velocity_dot2(d, x, yd);
  assert_memory_equal(y, yd, (size_t)n * sizeof(double));
  mr_problem_G_dense(&s.p, G);
  assert_memory_equal(G, d->G, (size_t)n * n * sizeof(double));
  for (int i = 0; i < nc; ++i)
    for (int j = 0; j < nc; ++j) {
      double B[9], Bd[9];
      mr_problem_G_block(&s.p, i, j, B);
      mr_problem_G_block(d, i, j, Bd);
      assert_memory_equal(B, Bd, sizeof B);
    }
  printf("%s: %d contacts, %d of %d blocks stored\n", name, nc, s.p.nnzb, nc * nc);
  free(x), free(y), free(yd), free(G);
  free_sparse(&s);
}

static void test_products(void **state) {
  each_problem(check_products);
}

/* every solver, cold, on problems a and b (the same matrix in two forms): λ and c within tol of
 * the larger of ‖λ‖∞ and ‖c‖∞, the same iterations */
static void solvers_agree(const mr_contact_problem *a, const mr_contact_problem *b, int max_iter,
                          double tol, const char *name) {
  int n = 3 * a->nc;
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(a->nc, 0)), 0);
  double *la = calloc((size_t)n, sizeof(double)), *ca = calloc((size_t)n, sizeof(double));
  double *lb = calloc((size_t)n, sizeof(double)), *cb = calloc((size_t)n, sizeof(double));
  assert_true(la && ca && lb && cb);
  mr_solver_settings set = mr_solver_settings_default();
  set.warm_start = 0;
  set.max_iter = max_iter;
  for (int k = 0; k < mr_solver_count(); ++k) {
    const mr_solver_info *info = mr_solver_at(k);
    mr_solver_stats sa, sb;
    mr_error ea = {0}, eb = {0};
    mr_status sta = mr_solve(info->name, a, &set, NULL, &work, la, ca, &sa, &ea);
    mr_arena_reset(&work, 0);
    mr_status stb = mr_solve(info->name, b, &set, NULL, &work, lb, cb, &sb, &eb);
    mr_arena_reset(&work, 0);
    if (sta != stb) fail_msg("%s, %s: %s against %s", name, info->name, ea.msg, eb.msg);
    if (sta) continue;
    double lmax = mr_norm_inf(la, n), dl = 0.0, dc = 0.0, cmax = mr_norm_inf(ca, n);
    for (int r = 0; r < n; ++r)
      dl = fmax(dl, fabs(la[r] - lb[r])), dc = fmax(dc, fabs(ca[r] - cb[r]));
    if (!(dl <= tol * lmax) || !(dc <= tol * fmax(cmax, lmax)))
      fail_msg("%s, %s: lambda differs by %g (max %g), c by %g", name, info->name, dl, lmax, dc);
    assert_int_equal(sa.iterations, sb.iterations);
  }
  mr_arena_destroy(&work);
  free(la), free(ca), free(lb), free(cb);
}

/* every solver of the registry on the problem given dense and given block-sparse, from the same
 * cold start: the per-contact solvers run on the stored blocks (the same terms in the same
 * order as the dense rows), ncp-stagproj fills its subproblem matrices from the blocks (the same
 * entries) and multiplies by blocks, the others (and ADMM, ccp-newton below the sparse factor's
 * threshold) on the densified copy (the same matrix), so λ agrees to round-off; 1e-12 ‖λ‖∞ leaves
 * room for a compiler contracting a block product into fused multiply-adds differently from the
 * dense row */
static void check_solvers(const mr_contact_problem *d, const char *name) {
  sparse_copy s;
  to_sparse(d, &s);
  solvers_agree(d, &s.p, 2000, 1e-12, name);
  free_sparse(&s);
}

static void test_solvers(void **state) {
  each_problem(check_solvers);
}

/* Gb's last block ending where a page the process cannot read begins: every solver and the
 * criteria read a block-sparse G within its nnzb blocks (the Gauss-Seidel update reads a coupled
 * block's rows four entries at a time, the fourth the next entry; a read past the end stops the
 * program), with the same λ and c as from Gb anywhere else */
static void check_blocks_at_page_end(const mr_contact_problem *d, const char *name) {
  sparse_copy s;
  to_sparse(d, &s);
  size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = 9 * (size_t)s.p.nnzb * sizeof(double);
  size_t room = (bytes + page - 1) / page * page;
  char *map = mmap(NULL, room + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(map != MAP_FAILED);
  assert_int_equal(mprotect(map + room, page, PROT_NONE), 0);
  double *gb = (double *)(map + room - bytes);
  memcpy(gb, s.val, bytes);
  mr_contact_problem q = s.p;
  q.Gb = gb;
  solvers_agree(&s.p, &q, 300, 0.0, name);
  munmap(map, room + page);
  free_sparse(&s);
}

static void test_blocks_at_page_end(void **state) {
  each_problem(check_blocks_at_page_end);
}

/* a problem with neither G nor Gb is refused, naming what is missing; so is a malformed Gb */
static void test_no_G(void **state) {
  double g[3] = {0, 0, -1}, mu[1] = {0.5}, lambda[3], c[3];
  mr_contact_problem p = {.nc = 1, .g = g, .mu = mu};
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(1, 0)), 0);
  mr_solver_settings set = mr_solver_settings_default();
  mr_solver_stats st;
  for (int k = 0; k < mr_solver_count(); ++k) {
    mr_error err = {0};
    assert_int_equal(mr_solve(mr_solver_at(k)->name, &p, &set, NULL, &work, lambda, c, &st, &err),
                     MR_ERR_INVALID);
    assert_non_null(strstr(err.msg, "neither a dense G nor a block-sparse Gb"));
  }
  /* two contacts: a column out of range, columns not ascending, a missing diagonal block */
  double Gb[27] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  double g2[6] = {0, 0, -1, 0, 0, -1}, mu2[2] = {0.5, 0.5}, l2[6], c2[6];
  const int rows[3][3] = {{0, 2, 3}, {0, 2, 3}, {0, 1, 3}};
  const int cols[3][3] = {{0, 2, 1}, {1, 0, 1}, {1, 0, 1}};
  const char *what[3] = {"out of [0, 2) or not ascending", "out of [0, 2) or not ascending",
                         "row 0 has no diagonal block"};
  for (int t = 0; t < 3; ++t) {
    mr_contact_problem q = {.nc = 2, .g = g2, .mu = mu2, .nnzb = 3, .Gb_row = rows[t],
                            .Gb_col = cols[t], .Gb = Gb};
    mr_error err = {0};
    assert_int_equal(mr_solve("ncp-pgs", &q, &set, NULL, &work, l2, c2, &st, &err), MR_ERR_INVALID);
    if (!strstr(err.msg, what[t])) fail_msg("case %d: %s", t, err.msg);
  }
  mr_arena_destroy(&work);
}

/* a block-sparse problem saved and loaded back is the dense problem */
static void test_dump(void **state) {
  static cp_problem cp;
  const double masses[4] = {1.0, 2.0, 0.5, 3.0};
  cp_stack(&cp, 4, masses, 0.6);
  sparse_copy s;
  to_sparse(&cp.p, &s);
  char path[] = "/tmp/moreau_sparse_g_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  mr_error err = {0};
  if (mr_problem_file_save(path, &s.p, NULL, &err)) fail_msg("%s", err.msg);
  mr_problem_file f;
  if (mr_problem_file_load(path, &f, &err)) fail_msg("%s", err.msg);
  remove(path);
  int n = 3 * cp.p.nc;
  assert_int_equal(f.nc, cp.p.nc);
  assert_memory_equal(f.G, cp.G, (size_t)n * n * sizeof(double));
  mr_problem_file_free(&f);
  free_sparse(&s);
}

/* A column of seven cubes (28 contacts), one of three (12) and a pile of three cubes touching
 * each other: each is one island of more than 12 dofs, assembled tree-sparse, storing G
 * block-sparse from MR_SPARSE_G_MIN_NC contacts on, dense on the same pattern below. Against the
 * whole model's dense G (islands off, the same first step): a block outside the pattern is
 * exactly zero there (no coupling lost) and here, and the pattern is the pairs of contacts
 * sharing a moving body (for free bodies, the kinematic paths share a dof iff the contacts
 * share a body), counted by brute force over the contacts' bodies. A coupled block equals the
 * dense one to round-off: the tree-sparse sums run in another order, 4 nv ε max|G|
 * (tests/test_islands.c). */
static void test_island_pattern(void **state) {
  char text[4096];
  int at = cube_scene_start(text, sizeof text);
  /* the columns' cubes 0.1 mm into the one below, so that every interface is in contact */
  at = cube_column(text, sizeof text, at, "a", 7, 0.0, 1.0, 1e-4);
  at = cube_column(text, sizeof text, at, "b", 3, 1.0, 1.0, 1e-4);
  snprintf(text + at, sizeof text - (size_t)at, "%s",
           "  - {name: c0, mass: 1, position: [2, 0, 0.05], geoms: [{type: box, size: [0.1, 0.1, 0.1]}]}\n"
           "  - {name: c1, mass: 1, position: [2.1, 0, 0.05], geoms: [{type: box, size: [0.1, 0.1, 0.1]}]}\n"
           "  - {name: c2, mass: 1, position: [2.05, 0, 0.15], geoms: [{type: box, size: [0.1, 0.1, 0.1]}]}\n");
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *a = tsim_create(&sc, NULL), *b = tsim_create(&sc, NULL);
  mr_error err = {0};
  if (mr_sim_set_islands(b, 0, &err)) fail_msg("%s", err.msg);
  tsim_steps(a, 1);
  tsim_steps(b, 1);
  const mr_contact_problem *whole = mr_sim_problem(b);
  const mr_contact *con;
  int ncon = mr_sim_contacts(a, &con, NULL), nv = mr_sim_model(a)->nv, n = 3 * whole->nc;
  assert_int_equal(ncon, whole->nc);
  assert_int_equal(mr_contact_stage_islands(a->contacts), 3);
  double gmax = 0.0;
  for (int k = 0; k < n * n; ++k)
    gmax = fmax(gmax, fabs(whole->G[k]));
  int stored_sparse = 0;
  for (int k = 0; k < mr_contact_stage_islands(a->contacts); ++k) {
    const int *blocks;
    const mr_contact_problem *p = mr_contact_stage_island(a->contacts, k, &blocks);
    stored_sparse += p->G == NULL;
    int coupled = 0;
    for (int i = 0; i < p->nc; ++i)
      for (int j = 0; j < p->nc; ++j) {
        const mr_contact *ci = &con[blocks[i]], *cj = &con[blocks[j]];
        int share = 0;
        for (int u = 0; u < 2; ++u)
          for (int w = 0; w < 2; ++w)
            share |= ci->body[u] > 0 && ci->body[u] == cj->body[w];
        coupled += share;
        double B[9], T[9];
        int stored = mr_problem_G_block(p, i, j, B);
        if (!p->G) assert_int_equal(stored, share);
        /* G exactly symmetric, as the dense assembly's mirror leaves it */
        mr_problem_G_block(p, j, i, T);
        for (int q = 0; q < 9; ++q)
          if (B[q] != T[3 * (q % 3) + q / 3]) fail_msg("G not symmetric at block (%d, %d)", i, j);
        for (int q = 0; q < 9; ++q) {
          double gd = whole->G[(size_t)(3 * blocks[i] + q / 3) * n + 3 * blocks[j] + q % 3];
          if (!share && (gd != 0.0 || B[q] != 0.0))
            fail_msg("block (%d, %d) uncoupled but G = %g here, %g whole", i, j, B[q], gd);
          if (!(fabs(B[q] - gd) <= 4.0 * nv * DBL_EPSILON * gmax))
            fail_msg("block (%d, %d)[%d] = %.17g, dense %.17g", i, j, q, B[q], gd);
        }
      }
    assert_int_equal(p->G == NULL, p->nc >= MR_SPARSE_G_MIN_NC);
    if (p->G) continue;
    assert_int_equal(p->nnzb, coupled);
    /* the column of seven: sparse enough for ADMM's sparse factor */
    if (p->nc == 28) assert_true(mr_sparse_chol_pays(p->nc, p->nnzb));
  }
  assert_true(stored_sparse >= 1 && stored_sparse < 3); /* the column of three is dense */
  mr_sim_free(a);
  mr_sim_free(b);
  mr_scene_free(&sc);
}

/* rest costs nothing: a tower of ten cubes at rest (one island of 40 contacts, its G stored
 * block-sparse) solved warm by the default solver (ncp-hybrid) at most two iterations a step
 * after its first steps, every step meeting eps_abs, and the top cube held to 1e-10 m of its
 * height (the round-off of the consistent law's push-out: about 1e-12 m a step) */
static void test_resting_tower(void **state) {
  char text[4096];
  int at = cube_scene_start(text, sizeof text);
  cube_column(text, sizeof text, at, "t", 10, 0.0, 0.0, 0.0);
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  const mr_model *m = mr_sim_model(s);
  int top = m->nbodies - 1, iz = m->bodies[top].joint.idx_q + 2, worst = 0, worst_late = 0;
  double z0 = mr_sim_q(s)[iz], drift = 0.0, eps_late = 0.0;
  for (int k = 0; k < 300; ++k) {
    tsim_steps(s, 1);
    const mr_step_stats *st = mr_sim_last(s);
    assert_int_equal(st->ncontacts, 40);
    assert_true(st->converged);
    if (k >= 5 && st->iterations > worst) worst = st->iterations;
    if (k >= 20) worst_late = st->iterations > worst_late ? st->iterations : worst_late;
    if (k >= 20) eps_late = fmax(eps_late, st->eps_abs);
    drift = fmax(drift, fabs(mr_sim_q(s)[iz] - z0));
  }
  printf("resting tower: at most %d iterations a step after step 5 (%d after step 20, eps_abs "
         "at most %.2g), top drift %.2g m\n",
         worst, worst_late, eps_late, drift);
  assert_true(worst <= 2);
  assert_true(drift <= 1e-10);
  /* at rest each step is one chord step on the kept factor and leaves the NCP at the floor set
   * by the positions' round-off: an ulp of a height below 1 m (2.2e-16 m) in a gap is
   * 2.2e-10 m/s² of g at Δt = 1 ms, times the bottom corners' 24.5 N, and a few of them: 1e-8;
   * a solve that stops at its tolerance instead leaves ~1e-6 every third step (the residual
   * velocity it leaves comes back as the next steps' work, docs/solvers.md) */
  assert_true(worst_late <= 1);
  assert_true(eps_late <= 1e-8);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a stair wall of 6 rows of bricks (0.2 x 0.1 x 0.1 m, 1 mm apart in a row, each resting on the
 * halves of two below; 21 bricks, μ 0.6) from rest: one island of 144 contacts, block-sparse,
 * above the dense Newton stages' bound, whose Gauss-Seidel rate is poor (the bricks' half
 * overlaps: without stage 4 on the sparse factor ncp-hybrid's first five steps stop at the step's
 * work budget, ~1,400 iterations each). With it every step converges and the wall stands (its top
 * brick moves less than 1e-5 m in 0.1 s) */
static void test_stair_wall(void **state) {
  char text[8192];
  int at = snprintf(text, sizeof text,
                    "timestep: 0.001\ncontact: {margin: 0.0}\nbodies:\n"
                    "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.6}]}\n");
  for (int r = 0, k = 0; r < 6; ++r)
    for (int c = 0; c < 6 - r; ++c, ++k)
      at += snprintf(text + at, sizeof text - (size_t)at,
                     "  - {name: w%d, mass: 0.5, position: [%.4f, 0, %.2f], geoms: [{type: box, "
                     "size: [0.2, 0.1, 0.1], friction: 0.6}]}\n",
                     k, 0.201 * c + 0.1005 * r, 0.05 + 0.1 * r);
  assert_true((size_t)at < sizeof text);
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  const mr_model *m = mr_sim_model(s);
  int iz = m->bodies[m->nbodies - 1].joint.idx_q + 2, unconverged = 0;
  double z0 = mr_sim_q(s)[iz];
  for (int k = 0; k < 100; ++k) {
    tsim_steps(s, 1);
    const mr_step_stats *st = mr_sim_last(s);
    assert_int_equal(st->ncontacts, 144);
    unconverged += !st->converged;
  }
  assert_int_equal(mr_contact_stage_islands(s->contacts), 1);
  double drift = fabs(mr_sim_q(s)[iz] - z0);
  printf("stair wall: %d of 100 steps unconverged, top brick drift %.2g m\n", unconverged, drift);
  assert_int_equal(unconverged, 0);
  assert_true(drift <= 1e-5);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a column of k cubes resting on the ground, each 0.1 mm into the one below (so that every
 * interface is in contact from the first step): one island of 4k contacts, each interface's four
 * coupled to the interfaces above and below (a block-tridiagonal G) */
/* without the push-out of the 1e-4 m sinks (band 0): the interfaces only stop approaching, the
 * problem ncp-pgs's unconverged first step would otherwise be retried on within its budget */
static mr_scene column_scene(int k) {
  static char text[4096];
  int at = cube_scene_start(text, sizeof text);
  char *c = strstr(text, "contact: {margin: 0.0}");
  assert_non_null(c);
  const char *tail = strchr(c, '\n');
  char rest[1024];
  snprintf(rest, sizeof rest, "%s", tail);
  at = (int)(c - text) + snprintf(c, sizeof text - (size_t)(c - text),
                                  "contact: {margin: 0.0, band: 0.0, rest_depth: 0.0}%s", rest);
  cube_column(text, sizeof text, at, "b", k, 0.0, 0.5, 1e-4);
  return tsim_parse(text, ".");
}

/* the island problem of a k-cube column (4k contacts; k = 7: 28 contacts, 304 of 784 blocks
 * coupled: stored block-sparse, factored sparse by ADMM: mr_sparse_chol_pays) */
static const mr_contact_problem *column_problem_k(mr_sim **s, mr_scene *sc, int k) {
  *sc = column_scene(k);
  *s = tsim_create(sc, "ncp-pgs");
  tsim_steps(*s, 1);
  assert_int_equal(mr_contact_stage_islands((*s)->contacts), 1);
  const int *blocks;
  const mr_contact_problem *p = mr_contact_stage_island((*s)->contacts, 0, &blocks);
  assert_null(p->G);
  assert_int_equal(p->nc, 4 * k);
  return p;
}

static const mr_contact_problem *column_problem(mr_sim **s, mr_scene *sc) {
  return column_problem_k(s, sc, 7);
}

/* the column's problem with its G copied densely and two vectors of its rows (x, b), for the
 * sparse factor's tests */
typedef struct {
  mr_sim *s;
  mr_scene sc;
  const mr_contact_problem *p;
  int n;
  double *G, *x, *b;
} dense_column;

static void dense_column_open(dense_column *t) {
  t->p = column_problem(&t->s, &t->sc);
  int n = t->n = 3 * t->p->nc;
  t->G = malloc((size_t)n * n * sizeof(double));
  t->x = malloc((size_t)n * sizeof(double)), t->b = malloc((size_t)n * sizeof(double));
  assert_true(t->G && t->x && t->b);
  mr_problem_G_dense(t->p, t->G);
}

static void dense_column_close(dense_column *t) {
  free(t->G), free(t->x), free(t->b);
  mr_sim_free(t->s);
  mr_scene_free(&t->sc);
}

/* b = x = a fixed right-hand side over the first m rows */
static void fill_rhs(dense_column *t, int m) {
  for (int r = 0; r < m; ++r)
    t->b[r] = t->x[r] = cos(0.3 + 1.7 * r);
}

/* the sparse LDLᵀ solves (G + R + ρI) x = b: its residual, computed with the dense matrix, is
 * within the backward error of a Cholesky factorisation, 3 n ε ‖A‖∞ ‖x‖∞ (Higham, Thm 10.4:
 * |ΔA| ≤ γ_{3n+1} |L||Lᵀ|, and |L||Lᵀ| ≈ |A| for a positive definite matrix this well scaled) */
static void test_sparse_cholesky(void **state) {
  dense_column t;
  dense_column_open(&t);
  const mr_contact_problem *p = t.p;
  int n = t.n;
  double *G = t.G, *x = t.x, *b = t.b;
  mr_sparse_chol *f = mr_chol_create();
  assert_non_null(f);
  assert_int_equal(mr_chol_analyze(f, p), 1);
  assert_int_equal(mr_chol_analyze(f, p), 0); /* the same pattern: no new analysis */
  mr_chol_values(f, p, p->R);
  double gmax = 0.0;
  for (int r = 0; r < n; ++r)
    gmax = fmax(gmax, G[(size_t)r * n + r]);
  const double rhos[] = {1e-6 * gmax, 1e-2 * gmax, gmax};
  for (int k = 0; k < 3; ++k) {
    double rho = rhos[k];
    assert_int_equal(mr_chol_factor(f, rho), 0);
    fill_rhs(&t, n);
    mr_chol_solve(f, x);
    double anorm = 0.0, res = 0.0;
    for (int r = 0; r < n; ++r) {
      double acc = 0.0, row = 0.0;
      for (int k = 0; k < n; ++k) {
        double a = G[(size_t)r * n + k] + (k == r ? p->R[r] + rho : 0.0);
        acc += a * x[k], row += fabs(a);
      }
      anorm = fmax(anorm, row), res = fmax(res, fabs(acc - b[r]));
    }
    if (!(res <= 3.0 * n * DBL_EPSILON * anorm * mr_norm_inf(x, n)))
      fail_msg("rho %g: residual %g, |A| %g, |x| %g", rho, res, anorm, mr_norm_inf(x, n));
  }
  /* a negative shift past the smallest eigenvalue: not positive definite, refused */
  mr_chol_values(f, p, NULL);
  assert_int_equal(mr_chol_factor(f, -2.0 * gmax), -1);
  mr_chol_free(f);
  dense_column_close(&t);
}

/* the principal part on some rows (ncp-hybrid's sparse stage 4: mr_chol_values_active): the
 * solve's residual over the active rows, computed with the dense G's rows and columns they
 * select, within the Cholesky backward-error bound 3 n ε ‖A‖∞ ‖x‖∞; the other rows, decoupled
 * with a unit diagonal, return b / (1 + ρ) */
static void test_sparse_cholesky_active(void **state) {
  dense_column t;
  dense_column_open(&t);
  const mr_contact_problem *p = t.p;
  int n = t.n;
  double *G = t.G, *x = t.x, *b = t.b;
  unsigned char *act = malloc((size_t)n);
  assert_non_null(act);
  /* contacts in turn: all three rows, the normal row alone, none */
  for (int r = 0; r < n; ++r)
    act[r] = (r / 3) % 3 == 0 || ((r / 3) % 3 == 1 && r % 3 == 2);
  mr_sparse_chol *f = mr_chol_create();
  assert_non_null(f);
  assert_true(mr_chol_analyze(f, p) >= 0);
  mr_chol_values_active(f, p, act, p->R);
  double gmax = 0.0, rho = 0.0;
  for (int r = 0; r < n; ++r)
    gmax = fmax(gmax, G[(size_t)r * n + r]);
  rho = 1e-10 * gmax;
  assert_int_equal(mr_chol_factor(f, rho), 0);
  fill_rhs(&t, n);
  mr_chol_solve(f, x);
  double anorm = 0.0, res = 0.0;
  for (int r = 0; r < n; ++r) {
    if (!act[r]) {
      assert_true(fabs(x[r] - b[r] / (1.0 + rho)) <= 4.0 * DBL_EPSILON * fabs(b[r]));
      continue;
    }
    double acc = 0.0, row = 0.0;
    for (int k = 0; k < n; ++k) {
      if (!act[k]) continue;
      double a = G[(size_t)r * n + k] + (k == r ? p->R[r] + rho : 0.0);
      acc += a * x[k], row += fabs(a);
    }
    anorm = fmax(anorm, row), res = fmax(res, fabs(acc - b[r]));
  }
  if (!(res <= 3.0 * n * DBL_EPSILON * anorm * mr_norm_inf(x, n)))
    fail_msg("residual %g, |A| %g, |x| %g", res, anorm, mr_norm_inf(x, n));
  assert_true(mr_chol_flops(f) > 0.0);
  mr_chol_free(f);
  free(act);
  dense_column_close(&t);
}

/* the normal and tangential parts (ncp-stagproj's A_NN + ρI, A_TT + ρI): the solve's residual,
 * computed with the rows and columns of the dense G that the part selects, within the same
 * Cholesky backward-error bound 3 m ε ‖A‖∞ ‖x‖∞ as the whole matrix's; switching back to a part
 * already analysed is a lookup (0), and its values and factor are kept */
static void test_sparse_cholesky_parts(void **state) {
  dense_column col;
  dense_column_open(&col);
  const mr_contact_problem *p = col.p;
  int nc = p->nc, n = col.n;
  double *G = col.G, *x = col.x, *b = col.b, *d = malloc((size_t)n * sizeof(double));
  assert_non_null(d);
  mr_sparse_chol *f = mr_chol_create();
  assert_non_null(f);
  const mr_chol_part parts[2] = {MR_CHOL_NORMAL, MR_CHOL_TANGENT};
  const int width[2] = {1, 2}, first[2] = {2, 0};
  double rho = 1e-3 * G[2 * n + 2];
  for (int t = 0; t < 2; ++t) {
    int w = width[t], m = w * nc;
    assert_int_equal(mr_chol_analyze_part(f, p, parts[t]), 1);
    for (int r = 0; r < m; ++r)
      d[r] = p->R[3 * (r / w) + first[t] + r % w];
    mr_chol_values(f, p, d);
    assert_int_equal(mr_chol_factor(f, rho), 0);
  }
  for (int t = 0; t < 2; ++t) {
    int w = width[t], m = w * nc;
    assert_int_equal(mr_chol_analyze_part(f, p, parts[t]), 0);
    fill_rhs(&col, m);
    mr_chol_solve(f, x);
    double anorm = 0.0, res = 0.0;
    for (int r = 0; r < m; ++r) {
      int gr = 3 * (r / w) + first[t] + r % w;
      double acc = 0.0, row = 0.0;
      for (int k = 0; k < m; ++k) {
        int gc = 3 * (k / w) + first[t] + k % w;
        double a = G[(size_t)gr * n + gc] + (k == r ? p->R[gr] + rho : 0.0);
        acc += a * x[k], row += fabs(a);
      }
      anorm = fmax(anorm, row), res = fmax(res, fabs(acc - b[r]));
    }
    if (!(res <= 3.0 * m * DBL_EPSILON * anorm * mr_norm_inf(x, m)))
      fail_msg("part %d: residual %g, |A| %g, |x| %g", t, res, anorm, mr_norm_inf(x, m));
  }
  mr_chol_free(f);
  free(d);
  dense_column_close(&col);
}

/* the column's problem given block-sparse (p) and dense (d, over a dense copy of its G), room
 * for a solution of each (ld, cd dense; ls, cs sparse), a state's y and a work arena */
typedef struct {
  mr_sim *s;
  mr_scene sc;
  const mr_contact_problem *p;
  mr_contact_problem d;
  int n;
  double *G, *ld, *cd, *ls, *cs, *y;
  mr_arena work;
} column_pair;

/* the pair of an island problem p of simulator c->s */
static void pair_init(column_pair *c, const mr_contact_problem *p) {
  c->p = p;
  int n = c->n = 3 * c->p->nc;
  c->G = malloc((size_t)n * n * sizeof(double));
  c->ld = calloc((size_t)n, sizeof(double)), c->cd = calloc((size_t)n, sizeof(double));
  c->ls = calloc((size_t)n, sizeof(double)), c->cs = calloc((size_t)n, sizeof(double));
  c->y = calloc((size_t)n, sizeof(double));
  assert_true(c->G && c->ld && c->cd && c->ls && c->cs && c->y);
  mr_problem_G_dense(c->p, c->G);
  c->d = *c->p;
  c->d.G = c->G;
  assert_int_equal(mr_arena_init(&c->work, mr_solver_work_size(c->p->nc, 0)), 0);
}

static void column_pair_open_k(column_pair *c, int k) {
  pair_init(c, column_problem_k(&c->s, &c->sc, k));
}

static void column_pair_open(column_pair *c) {
  column_pair_open_k(c, 7);
}

static void column_pair_close(column_pair *c) {
  mr_arena_destroy(&c->work);
  free(c->G), free(c->ld), free(c->cd), free(c->ls), free(c->cs), free(c->y);
  mr_sim_free(c->s);
  mr_scene_free(&c->sc);
}

/* max |ld − ls| */
static double lambda_gap(const column_pair *c) {
  double dl = 0.0;
  for (int r = 0; r < c->n; ++r)
    dl = fmax(dl, fabs(c->ld[r] - c->ls[r]));
  return dl;
}

/* ccp-admm and ncp-admm on the column's problem given block-sparse (the sparse factor) and
 * dense (the dense Cholesky): the same iteration with factors that differ by round-off, so the
 * same number of iterations and λ to 1e-9 ‖λ‖∞ (the round-off of the solves, ~1e-15, is
 * amplified by the iteration; both are converged to 1e-10 on the NCP criteria, which pins λ on
 * this problem to well within this margin, the stack's contact forces being unique up to the
 * tangential ones the criteria leave free) */
static void test_admm_sparse(void **state) {
  column_pair c;
  column_pair_open(&c);
  int n = c.n;
  mr_solver_settings set = mr_solver_settings_default();
  set.warm_start = 0;
  set.eps_abs = 1e-10;
  const char *names[] = {"ccp-admm", "ncp-admm"};
  for (int k = 0; k < 2; ++k) {
    mr_solver_state st = {.cap = n, .y = c.y};
    mr_solver_stats sd, ss;
    mr_error err = {0};
    if (mr_solve(names[k], &c.d, &set, NULL, &c.work, c.ld, c.cd, &sd, &err))
      fail_msg("%s", err.msg);
    if (mr_solve(names[k], c.p, &set, &st, &c.work, c.ls, c.cs, &ss, &err)) fail_msg("%s", err.msg);
    assert_non_null(st.chol); /* the sparse path was taken, its factor kept */
    assert_true(sd.converged && ss.converged);
    double lmax = mr_norm_inf(c.ld, n), dl = lambda_gap(&c);
    if (!(dl <= 1e-9 * lmax)) fail_msg("%s: lambda differs by %g (max %g)", names[k], dl, lmax);
    printf("%s: %d iterations dense, %d sparse, lambda differs by %.2g of %.3g\n", names[k],
           sd.iterations, ss.iterations, dl, lmax);
    mr_solver_state_release(&st);
    assert_null(st.chol);
  }
  column_pair_close(&c);
}

/* ccp-newton on the column's problem given block-sparse (the Newton systems I + Sᵀ G S on the
 * stored blocks, factored by the sparse Cholesky, in the coordinates y of u = Jᵀy) and dense (the
 * pivoted Cholesky G = J Jᵀ and the dense Hessian I + JᵀWJ): in exact arithmetic the same
 * iterates u. The two differ by the factorisations' round-off (backward error ~n ε ‖A‖, relative
 * 1e-14 here), which λ(u) = −R⁻¹ c(u) amplifies by ‖G‖/R = 1/compliance_eps = 1e6 (the
 * sensitivity the solver's header describes): λ agrees to 1e-7 ‖λ‖∞, with 10× margin over
 * 1e-14 · 1e6. Both converge, but not always on the same iteration: near the solution each
 * path's criterion sits at that amplified round-off floor (1e-7 to 1e-5, the order of eps_abs =
 * 1e-6), so one may meet eps_abs up to two iterations before the other stops on its fixed-point
 * test (two corrections in a row below round-off); 2 is the length of that test. */
static void test_newton_sparse(void **state) {
  column_pair c;
  column_pair_open(&c);
  int n = c.n;
  assert_true(mr_sparse_chol_pays(c.p->nc, c.p->nnzb));
  mr_solver_settings set = mr_solver_settings_default();
  set.warm_start = 0;
  mr_solver_state st = {.cap = n, .y = c.y};
  mr_solver_stats sd, ss;
  mr_error err = {0};
  if (mr_solve("ccp-newton", &c.d, &set, NULL, &c.work, c.ld, c.cd, &sd, &err))
    fail_msg("%s", err.msg);
  if (mr_solve("ccp-newton", c.p, &set, &st, &c.work, c.ls, c.cs, &ss, &err))
    fail_msg("%s", err.msg);
  assert_non_null(st.chol); /* the sparse path was taken, its factor kept */
  assert_int_equal(st.nu, -n);
  double lmax = mr_norm_inf(c.ld, n), dl = lambda_gap(&c);
  printf("ccp-newton: %d iterations dense, %d sparse (converged %d, %d), lambda differs by %.2g "
         "of %.3g\n",
         sd.iterations, ss.iterations, sd.converged, ss.converged, dl, lmax);
  assert_true(sd.converged && ss.converged);
  assert_true(abs(sd.iterations - ss.iterations) <= 2);
  if (!(dl <= 1e-7 * lmax)) fail_msg("ccp-newton: lambda differs by %g (max %g)", dl, lmax);
  /* warm started from the state's y: already at the fixed point */
  mr_solver_settings warm = mr_solver_settings_default();
  if (mr_solve("ccp-newton", c.p, &warm, &st, &c.work, c.ls, c.cs, &ss, &err))
    fail_msg("%s", err.msg);
  assert_true(ss.converged);
  assert_true(ss.iterations <= 2);
  mr_solver_state_release(&st);
  column_pair_close(&c);
}

/* one NCP solver on a column's problem given dense (d) and block-sparse (p, with a state whose
 * sparse factor the solver keeps), both to set->eps_abs, the sparse result's NCP criterion
 * recomputed on the dense G; returns max |λ_dense − λ_sparse| / ‖λ‖∞ and, in *dc, max
 * |c_dense − c_sparse| */
static double dense_sparse_gap(column_pair *c, const char *name, const mr_solver_settings *set,
                               double *dc) {
  int n = c->n;
  mr_solver_state st = {.cap = n, .y = c->y};
  mr_solver_stats sd, ss;
  mr_error err = {0};
  if (mr_solve(name, &c->d, set, NULL, &c->work, c->ld, c->cd, &sd, &err)) fail_msg("%s", err.msg);
  if (mr_solve(name, c->p, set, &st, &c->work, c->ls, c->cs, &ss, &err)) fail_msg("%s", err.msg);
  /* ncp-stagproj's sparse factor kept (ncp-hybrid's only when its stages 2–3 ran) */
  if (strcmp(name, "ncp-stagproj") == 0) assert_non_null(st.chol);
  mr_problem_velocity(&c->d, c->ls, c->cs);
  double e = mr_problem_criteria(&c->d, c->ls, c->cs, 1, NULL, NULL, NULL);
  double lmax = mr_norm_inf(c->ld, n), dl = lambda_gap(c);
  *dc = 0.0;
  for (int r = 0; r < n; ++r)
    *dc = fmax(*dc, fabs(c->cd[r] - c->cs[r]));
  printf("%s, %d contacts: %d iterations dense, %d sparse, eps_abs %.2g and %.2g, lambda "
         "differs by %.2g of %.3g, c by %.2g\n",
         name, c->p->nc, sd.iterations, ss.iterations, sd.eps_abs, e, dl, lmax, *dc);
  if (!sd.converged || !ss.converged || !(e <= set->eps_abs))
    fail_msg("%s: converged %d dense, %d sparse (eps_abs %g)", name, sd.converged, ss.converged, e);
  mr_solver_state_release(&st);
  return dl / lmax;
}

/* ncp-stagproj and ncp-hybrid on columns of 7 and 20 cubes (28 and 80 contacts), block-sparse
 * against dense, both converged to eps_abs = 1e-10 on the NCP criteria (recomputed on the dense
 * G for the sparse result). Each runs the same iteration on both forms, with factors that
 * differ by round-off (sparse LDLᵀ of the subproblems, of G + R + ρI, against the dense
 * Cholesky): λ agrees to 1e-9 ‖λ‖∞, as ADMM's does above (round-off ~1e-15 amplified by the
 * iteration). For ncp-hybrid that holds where both take the same stages: at 28 contacts its
 * Newton stages run on a dense copy of the blocks; at 80 both converge in stage 2, before the
 * Newton stages the blocks path leaves out above 32 contacts. Where they would differ the
 * column's λ is not unique (its four corners per interface are hyperstatic: the criteria leave
 * the split of the forces among them free), but the contact velocities c = (G + R)λ + g are the
 * same at every solution (every contact sticks, c → 0): both criteria ≤ 1e-10 bound each c's
 * distance from 0 on the active rows by ~1e-10 m/s, so |c_dense − c_sparse| ≤ 1e-8 m/s is
 * checked as well */
static void test_stagproj_hybrid_sparse(void **state) {
  mr_solver_settings set = mr_solver_settings_default();
  set.warm_start = 0;
  set.eps_abs = 1e-10;
  set.max_iter = 20000;
  const int cubes[2] = {7, 20};
  for (int k = 0; k < 2; ++k) {
    column_pair c;
    column_pair_open_k(&c, cubes[k]);
    assert_true(mr_sparse_chol_pays(c.p->nc, c.p->nnzb));
    const char *names[2] = {"ncp-stagproj", "ncp-hybrid"};
    for (int q = 0; q < 2; ++q) {
      double dc, gap = dense_sparse_gap(&c, names[q], &set, &dc);
      if (!(gap <= 1e-9) || !(dc <= 1e-8))
        fail_msg("%s, %d cubes: lambda differs by %g relative, c by %g", names[q], cubes[k], gap,
                 dc);
    }
    column_pair_close(&c);
  }
}

/* under a simulator's work budget (work_iter) the solvers on the sparse factor count their work
 * in sweeps: ncp-admm with a fixed ρ (given, never adapted) charges its one factorisation f and
 * each iteration t (a solve and a product, mr_chol_factor_sweeps and mr_chol_solve_sweeps), so a
 * budget B makes exactly ⌊(B − f)/t⌋ iterations: the same bits as the uncharged run of that many
 * (one iteration more or less would move λ); ncp-stagproj stays within its budget; a budget that
 * does not afford the first factorisation leaves the start as it is, with none made */
static void test_work_charged(void **state) {
  column_pair c;
  column_pair_open_k(&c, 20);
  int n = c.n, nnzb = c.p->Gb_row[c.p->nc];
  mr_sparse_chol *f = mr_chol_create();
  assert_non_null(f);
  assert_true(mr_chol_analyze(f, c.p) >= 0);
  double f_cost = mr_chol_factor_sweeps(f, nnzb), t_cost = 1.0 + mr_chol_solve_sweeps(f, nnzb);
  mr_chol_free(f);
  mr_solver_settings set = mr_solver_settings_default();
  set.warm_start = 0;
  set.eps_abs = 1e-12;
  mr_solver_stats ss;
  mr_error err = {0};
  /* ρ: the spectral default's, then fixed */
  if (mr_solve("ncp-admm", c.p, &set, NULL, &c.work, c.ls, c.cs, &ss, &err))
    fail_msg("%s", err.msg);
  set.rho = ss.rho, set.rho_update_every = 1000000;
  /* a budget of the factorisation and 3.5 iterations: 3 iterations */
  int budget = (int)ceil(f_cost + 3.5 * t_cost), iters = (int)floor((budget - f_cost) / t_cost);
  set.max_iter = set.work_iter = budget;
  if (mr_solve("ncp-admm", c.p, &set, NULL, &c.work, c.ls, c.cs, &ss, &err))
    fail_msg("%s", err.msg);
  printf("ncp-admm, 20 cubes: a factorisation %.2f sweeps, an iteration %.2f; a budget of %d: %d "
         "reported, %d factorisation(s)\n",
         f_cost, t_cost, budget, ss.iterations, ss.factorizations);
  assert_int_equal(ss.factorizations, 1);
  assert_true(ss.iterations <= budget && ss.iterations >= f_cost + iters * t_cost);
  assert_true(!ss.converged && ss.budget);
  set.work_iter = 0, set.max_iter = iters;
  if (mr_solve("ncp-admm", c.p, &set, NULL, &c.work, c.ld, c.cd, &ss, &err))
    fail_msg("%s", err.msg);
  assert_int_equal(ss.iterations, iters);
  assert_memory_equal(c.ls, c.ld, (size_t)n * sizeof(double));
  /* the staggered projections, whose start (two factors, two spectra) takes ~100 sweeps */
  set = mr_solver_settings_default();
  set.warm_start = 0;
  set.eps_abs = 1e-12;
  set.max_iter = set.work_iter = 200;
  mr_solver_state st = {.cap = n, .y = c.y};
  if (mr_solve("ncp-stagproj", c.p, &set, &st, &c.work, c.ls, c.cs, &ss, &err))
    fail_msg("%s", err.msg);
  printf("ncp-stagproj charged: %d of %d, %d factorisations\n", ss.iterations, set.max_iter,
         ss.factorizations);
  assert_true(ss.iterations <= set.max_iter && ss.factorizations >= 2);
  assert_true(ss.converged || ss.budget);
  mr_solver_state_release(&st);
  /* a budget below the first factorisation: no factorisation, λ = 0 (the cold start) */
  set.max_iter = set.work_iter = (int)f_cost - 1;
  if (mr_solve("ncp-admm", c.p, &set, NULL, &c.work, c.ls, c.cs, &ss, &err))
    fail_msg("%s", err.msg);
  assert_int_equal(ss.factorizations, 0);
  assert_true(ss.iterations <= set.max_iter && !ss.converged && ss.budget);
  assert_true(mr_norm_inf(c.ls, n) == 0.0);
  column_pair_close(&c);
}

/* a 2 x 2 x 2 block of 10 cm cubes on the ground, each 0.1 mm into its neighbours below and
 * beside, so that every face is in contact from the first step: one island whose contacts
 * have normals along all three axes, as a pile's, without the minutes of a bin settling (128
 * contacts, 41 % of the blocks stored); its first step's problem, block-sparse */
static void block_pair_open(column_pair *c) {
  static char text[8192];
  int at = snprintf(text, sizeof text,
                    "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0, max_contacts: 256}\n"
                    "bodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: "
                    "0.5}]}\n");
  const double e = 0.1 - 1e-4;
  for (int k = 0; k < 8; ++k)
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "  - {name: b%d, mass: %g, position: [%g, %g, %g], geoms: [{type: box, size: "
                   "[0.1, 0.1, 0.1]}]}\n",
                   k, 1.0 + 0.5 * (k % 3), e * (k % 2), e * (k / 2 % 2), 0.05 - 1e-4 + e * (k / 4));
  assert_true((size_t)at < sizeof text);
  c->sc = tsim_parse(text, ".");
  c->s = tsim_create(&c->sc, "ncp-pgs");
  tsim_steps(c->s, 1);
  assert_int_equal(mr_contact_stage_islands(c->s->contacts), 1);
  const int *blocks;
  pair_init(c, mr_contact_stage_island(c->s->contacts, 0, &blocks));
}

/* ncp-stagproj and ncp-hybrid on the block's problem, block-sparse against dense: the same
 * iteration on both forms (λ to 1e-9 ‖λ‖∞ and c to 1e-8 m/s, as on the columns) for 200
 * iterations at most, and the sparse result meets the criterion whenever the dense one does */
static void test_block_sparse(void **state) {
  column_pair c;
  block_pair_open(&c);
  printf("block of 8 cubes: %d contacts, %d of %d blocks\n", c.p->nc, c.p->nnzb,
         c.p->nc * c.p->nc);
  assert_null(c.p->G);
  assert_true(mr_sparse_chol_pays(c.p->nc, c.p->nnzb));
  int n = c.n;
  const char *names[2] = {"ncp-stagproj", "ncp-hybrid"};
  for (int q = 0; q < 2; ++q) {
    mr_solver_settings set = mr_solver_settings_default();
    set.warm_start = 0;
    set.max_iter = 200;
    mr_solver_state st = {.cap = n, .y = c.y};
    mr_solver_stats sd, ss;
    mr_error err = {0};
    if (mr_solve(names[q], &c.d, &set, NULL, &c.work, c.ld, c.cd, &sd, &err))
      fail_msg("%s", err.msg);
    if (mr_solve(names[q], c.p, &set, &st, &c.work, c.ls, c.cs, &ss, &err))
      fail_msg("%s", err.msg);
    mr_problem_velocity(&c.d, c.ls, c.cs);
    double e = mr_problem_criteria(&c.d, c.ls, c.cs, 1, NULL, NULL, NULL);
    double lmax = mr_norm_inf(c.ld, n), dl = lambda_gap(&c), dc = 0.0;
    for (int r = 0; r < n; ++r)
      dc = fmax(dc, fabs(c.cd[r] - c.cs[r]));
    printf("%s, block: %d iterations dense, %d sparse, eps_abs %.2g and %.2g, lambda differs "
           "by %.2g of %.3g, c by %.2g\n",
           names[q], sd.iterations, ss.iterations, sd.eps_abs, e, dl, lmax, dc);
    if (!(dl <= 1e-9 * lmax) || !(dc <= 1e-8))
      fail_msg("%s, block: lambda differs by %g, c by %g", names[q], dl, dc);
    if (sd.converged && !(e <= set.eps_abs)) fail_msg("%s, block: sparse eps_abs %g", names[q], e);
    mr_solver_state_release(&st);
  }
  column_pair_close(&c);
}

/* the scratch each solver is given for a problem's form is enough: every solver, on the column's
 * block-sparse problem (28 contacts: the sparse factor pays) and on its dense copy, solves from a
 * warm start that does not converge (max_iter 3, so that mr_solve's cold re-solve also takes its
 * share) in an arena of exactly mr_solver_work_size_for bytes, without MR_ERR_NOMEM; on the
 * block-sparse form the bound of the solvers that read the blocks is below one dense G */
static void test_work_sizes(void **state) {
  column_pair c;
  column_pair_open(&c);
  int nc = c.p->nc;
  size_t dense_G = (size_t)c.n * (size_t)c.n * sizeof(double);
  mr_solver_settings set = mr_solver_settings_default();
  set.max_iter = 3;
  for (int k = 0; k < mr_solver_count(); ++k) {
    const mr_solver_info *info = mr_solver_at(k);
    for (int form = 0; form < 2; ++form) {
      const mr_contact_problem *p = form ? c.p : &c.d;
      size_t bytes = mr_solver_work_size_for(info, nc, 0, form, (size_t)c.p->nnzb);
      if (form && info->block_sparse && strcmp(info->name, "ncp-hybrid") != 0 &&
          strcmp(info->name, "ncp-stagproj") != 0 && !(bytes < dense_G))
        fail_msg("%s: %zu bytes of scratch on a block-sparse G, a dense G is %zu", info->name,
                 bytes, dense_G);
      mr_arena work;
      assert_int_equal(mr_arena_init(&work, bytes), 0);
      mr_solver_state st = {.cap = c.n, .y = c.y};
      mr_solver_stats stats;
      mr_error err = {0};
      for (int q = 0; q < c.n; ++q)
        c.ls[q] = q % 3 == 2 ? 1.0 : 0.0;
      mr_status rc = mr_solve(info->name, p, &set, &st, &work, c.ls, c.cs, &stats, &err);
      if (rc == MR_ERR_NOMEM)
        fail_msg("%s (%s G): %s", info->name, form ? "sparse" : "dense", err.msg);
      mr_solver_state_release(&st);
      mr_arena_destroy(&work);
    }
  }
  column_pair_close(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_products),
                                     cmocka_unit_test(test_solvers),
                                     cmocka_unit_test(test_no_G),
                                     cmocka_unit_test(test_dump),
                                     cmocka_unit_test(test_island_pattern),
                                     cmocka_unit_test(test_sparse_cholesky),
                                     cmocka_unit_test(test_sparse_cholesky_parts),
                                     cmocka_unit_test(test_sparse_cholesky_active),
                                     cmocka_unit_test(test_admm_sparse),
                                     cmocka_unit_test(test_newton_sparse),
                                     cmocka_unit_test(test_stagproj_hybrid_sparse),
                                     cmocka_unit_test(test_work_charged),
                                     cmocka_unit_test(test_block_sparse),
                                     cmocka_unit_test(test_work_sizes),
                                     cmocka_unit_test(test_resting_tower),
                                     cmocka_unit_test(test_stair_wall),
                                     cmocka_unit_test(test_blocks_at_page_end)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
