/* Islands: the step solved island by island against the same step solved as one problem over
 * every dof (mr_sim_set_islands off, the assembly of the whole model), on every shipped scene. */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrate/sim_internal.h"
#include "sim_util.h"

#define STEPS 100

/* largest |a − b| over n entries */
static double max_diff(const double *a, const double *b, int n) {
  double d = 0.0;
  for (int k = 0; k < n; ++k)
    d = fmax(d, fabs(a[k] - b[k]));
  return d;
}

/* from the same state, the islands' problems gathered are the whole problem: bit for bit where
 * an island is assembled densely (the same operations on the island's dofs, skipping exact
 * zeros), to round-off where tree-sparse (G = Yᵀ D⁻¹ Y summed in another order: each of the two
 * sums of at most nv terms errs by nv ε Σ|Y_rk D⁻¹_k Y_sk| ≤ nv ε max G_ii (Cauchy-Schwarz, D > 0),
 * and Y's own backward solve as much again: 4 nv ε max |G|) */
static void same_problem(const char *path, int nv, const mr_contact_problem *p,
                         const mr_contact_problem *q) {
  assert_non_null(p);
  assert_int_equal(p->nc, q->nc);
  int n = 3 * p->nc;
  double gmax = 0.0, dg = 0.0;
  for (int k = 0; k < n * n; ++k)
    gmax = fmax(gmax, fabs(q->G[k])), dg = fmax(dg, fabs(p->G[k] - q->G[k]));
  if (!(dg <= 4.0 * nv * DBL_EPSILON * gmax))
    fail_msg("%s: G differs by %g (max %g)", path, dg, gmax);
  /* g bit for bit unless the correction was projected (contact/consistency.h): then each side's
   * projector comes from its own G, equal to the round-off above, which the projection amplifies
   * by the condition of the kept pivots (up to 1e10 of the largest at the rank threshold;
   * measured on TALOS standing: 9e-12 of 5.3, 1.7e-12 relative): asserted 1e-9 of max |g| */
  double gm = 0.0;
  for (int k = 0; k < n; ++k)
    gm = fmax(gm, fabs(q->g[k]));
  for (int k = 0; k < n; ++k) {
    if (fabs(p->g[k] - q->g[k]) > 1e-9 * gm || p->R[k] != q->R[k] ||
        p->vel[k] != q->vel[k])
      fail_msg("%s: row %d of g (by %.3g of %.3g), R or vel differs", path, k,
               fabs(p->g[k] - q->g[k]), gm);
  }
  for (int k = 0; k < p->nc; ++k)
    if (p->mu[k] != q->mu[k] || p->phi[k] != q->phi[k]) fail_msg("%s: block %d differs", path, k);
}

/* the two simulators of a scene step by step: the largest state difference */
static double compare(const char *path, double eps, int steps, int *islands, int *nv) {
  const char *solver = NULL;
  mr_scene sc = tsim_load(path);
  if (eps > 0.0) sc.settings.eps_abs = eps, sc.settings.eps_rel = 0.0, sc.settings.max_iter = 100000;
  mr_sim *a = tsim_create(&sc, solver), *b = tsim_create(&sc, solver);
  mr_error err = {0};
  if (mr_sim_set_islands(b, 0, &err)) fail_msg("%s", err.msg);
  const mr_model *m = mr_sim_model(a);
  *nv = m->nv;
  double d = 0.0;
  *islands = 0;
  for (int k = 0; k < steps; ++k) {
    tsim_steps(a, 1);
    tsim_steps(b, 1);
    d = fmax(d, max_diff(mr_sim_q(a), mr_sim_q(b), m->nq));
    d = fmax(d, max_diff(mr_sim_v(a), mr_sim_v(b), m->nv));
    if (mr_sim_last(a)->islands > *islands) *islands = mr_sim_last(a)->islands;
    if (k == 0) same_problem(path, m->nv, mr_sim_problem(a), mr_sim_problem(b));
  }
  mr_sim_free(a);
  mr_sim_free(b);
  mr_scene_free(&sc);
  return d;
}

static void test_scenes(void **state) {
  DIR *dir = opendir("scenes");
  assert_non_null(dir);
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".yaml")) continue;
    char path[512];
    snprintf(path, sizeof path, "scenes/%s", e->d_name);
    int islands, nv;
    double d = compare(path, 0.0, STEPS, &islands, &nv);
    double dt = islands > 1 ? compare(path, 1e-13, STEPS, &islands, &nv) : 0.0;
    /* one island: the same operations in the same order, so the same bits (the assembly over
     * the island's dofs only skips terms that are exact zeros) */
    /* one island assembled densely (at most 12 dofs): the same operations in the same order,
     * so the same bits */
    if (islands <= 1 && nv <= 12 && d != 0.0) fail_msg("%s: one island, states differ by %g", path, d);
    /* one tree-sparse island (the robots): G to round-off (above), amplified over these steps
     * by the contact dynamics to 2.4e-12 at most (TALOS) while no correction is projected;
     * TALOS's correction is projected on every step (contact/consistency.h), and the
     * projector's conditioning takes g's difference to 1.7e-12 of |g| (above) and the states'
     * to 8.6e-10 over these steps: 5e-9, the scale of the solver-tolerance differences of the
     * next case */
    if (islands <= 1 && !(d <= 5e-9)) fail_msg("%s: one island, states differ by %g", path, d);
    /* several: each island stops when its own criterion is met while the whole problem sweeps
     * on until every block's is, a difference within the solver's tolerance (about 5e-9 over
     * these steps at the scenes' 1e-6); solved to 1e-13 with no relative stop, only round-off
     * amplified by the contact dynamics remains (7e-13 measured on 20 rad/s): 1e-11 separates
     * the two by a factor of 500 */
    if (islands > 1 && !(dt <= 1e-11)) fail_msg("%s: %d islands, states differ by %g", path, islands, dt);
  }
  closedir(dir);
}

/* spheres resting apart on a fixed ground are one island each; a sphere resting on another
 * joins it (the ground, fixed, joins nothing); a sphere in the air is in none */
static void test_grouping(void **state) {
  const char *text =
      "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0}\nbodies:\n"
      "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n"
      "  - {name: a, mass: 1, position: [0, 0, 0.05], geoms: [{type: sphere, radius: 0.05}]}\n"
      "  - {name: b, mass: 1, position: [1, 0, 0.05], geoms: [{type: sphere, radius: 0.05}]}\n"
      "  - {name: c, mass: 1, position: [2, 0, 0.05], geoms: [{type: sphere, radius: 0.05}]}\n"
      "  - {name: d, mass: 1, position: [2, 0, 0.15], geoms: [{type: sphere, radius: 0.05}]}\n"
      "  - {name: e, mass: 1, position: [3, 0, 1.0], geoms: [{type: sphere, radius: 0.05}]}\n";
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  tsim_steps(s, 1);
  assert_int_equal(mr_sim_last(s)->ncontacts, 4);
  assert_int_equal(mr_sim_last(s)->islands, 3);
  /* the gathered problem: the c-d contact couples to c's ground contact, not to a's or b's */
  const mr_contact_problem *p = mr_sim_problem(s);
  assert_int_equal(p->nc, 4);
  int coupled = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      coupled += i != j && p->G[(size_t)(3 * i + 2) * 12 + 3 * j + 2] != 0.0;
  assert_int_equal(coupled, 2);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* the index of the body named name */
static int body_named(const mr_model *m, const char *name) {
  for (int b = 0; b < m->nbodies; ++b)
    if (!strcmp(m->bodies[b].name, name)) return b;
  fail_msg("no body '%s'", name);
  return -1;
}

/* the island of the last step holding a contact of body b, −1 none */
static int island_of(const mr_sim *s, int b) {
  const mr_contact *cs;
  mr_sim_contacts(s, &cs, NULL);
  for (int k = 0; k < mr_contact_stage_islands(s->contacts); ++k) {
    const int *blocks;
    const mr_contact_problem *p = mr_contact_stage_island(s->contacts, k, &blocks);
    for (int i = 0; i < p->nc; ++i)
      if (cs[blocks[i]].body[0] == b || cs[blocks[i]].body[1] == b) return k;
  }
  return -1;
}

/* Per-island warm start: box b rests apart from the others while box d lands on the ground (a
 * new island, numbered before b's) and box e lands on box a (a's island changes its contacts).
 * b's island keeps its ADMM state (y, ρ) through both, so b moves as it does alone, bit for bit
 * (the same island problem, solved by the same operations from the same state); b's state
 * restarted when another island changed would give other bits (ADMM stops at another iterate,
 * within its tolerance). */
static void test_warm_start_per_island(void **state) {
  const char *head = "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0}\nbodies:\n"
                     "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n";
  const char *box = "mass: 1, geoms: [{type: box, size: [0.1, 0.1, 0.1], friction: 0.5}]}\n";
  char all[2048], alone[1024];
  snprintf(all, sizeof all,
           "%s  - {name: d, position: [0, 0, 0.15], %s  - {name: b, position: [1, 0, 0.05], %s"
           "  - {name: a, position: [2, 0, 0.05], %s  - {name: e, position: [2, 0, 0.3], %s",
           head, box, box, box, box);
  snprintf(alone, sizeof alone, "%s  - {name: b, position: [1, 0, 0.05], %s", head, box);
  mr_scene sa = tsim_parse(all, "."), sb = tsim_parse(alone, ".");
  mr_sim *s = tsim_create(&sa, "ncp-admm"), *t = tsim_create(&sb, "ncp-admm");
  const mr_model *m = mr_sim_model(s);
  int b = body_named(m, "b"), a = body_named(m, "a");
  int qb = m->bodies[b].joint.idx_q, vb = m->bodies[b].joint.idx_v;
  int first = -1, renumbered = 0, a_changed = 0, a_contacts = -1;
  for (int k = 0; k < 400; ++k) {
    tsim_steps(s, 1);
    tsim_steps(t, 1);
    if (memcmp(mr_sim_q(s) + qb, mr_sim_q(t), 7 * sizeof(double)) ||
        memcmp(mr_sim_v(s) + vb, mr_sim_v(t), 6 * sizeof(double)))
      fail_msg("step %d: box b differs from b alone by %g", k + 1,
               fmax(max_diff(mr_sim_q(s) + qb, mr_sim_q(t), 7),
                    max_diff(mr_sim_v(s) + vb, mr_sim_v(t), 6)));
    /* the scene does what it is for: b's island renumbered, a's contacts changed */
    int ib = island_of(s, b), ia = island_of(s, a);
    const int *blocks;
    int na = ia >= 0 ? mr_contact_stage_island(s->contacts, ia, &blocks)->nc : 0;
    if (first < 0) first = ib;
    renumbered |= ib != first;
    a_changed |= a_contacts >= 0 && na != a_contacts;
    a_contacts = na;
  }
  assert_true(renumbered);
  assert_true(a_changed);
  mr_sim_free(s);
  mr_sim_free(t);
  mr_scene_free(&sa);
  mr_scene_free(&sb);
}

/* Columns of 4 equal cubes resting at touch, 3 x 3 of them 0.3 m apart (bench/scale.c's stacks):
 * once settled, every step meets the same contacts under the same keys (the box-box manifold's
 * corners lie on the reference face's side planes, where round-off must not change a corner into
 * a crossing under another key), so every island keeps its ADMM state: measured 0–1 iteration
 * per island per step warm, 7 and more from a fresh state, asserted at most 2 per island. */
static void test_resting_columns_stay_warm(void **state) {
  char text[8192];
  int at = snprintf(text, sizeof text,
                    "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0}\nbodies:\n"
                    "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n");
  for (int k = 0; k < 36; ++k)
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "  - {name: b%d, mass: 1, position: [%g, %g, %g], geoms: [{type: box, size: "
                   "[0.1, 0.1, 0.1], friction: 0.5}]}\n",
                   k, 0.3 * (k / 4 % 3), 0.3 * (k / 12), 0.05 + 0.1 * (k % 4));
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, "ncp-admm");
  enum { NC = 36 * 4 }; /* four corners under each cube */
  uint64_t prev[NC];
  tsim_steps(s, 50);
  for (int k = 0; k < 150; ++k) {
    tsim_steps(s, 1);
    const mr_contact *cs;
    assert_int_equal(mr_sim_contacts(s, &cs, NULL), NC);
    for (int i = 0; k > 0 && i < NC; ++i)
      if (cs[i].key != prev[i]) fail_msg("step %d: contact %d changed its key", k + 51, i);
    for (int i = 0; i < NC; ++i)
      prev[i] = cs[i].key;
    const mr_step_stats *st = mr_sim_last(s);
    if (st->iterations_sum > 2 * st->islands)
      fail_msg("step %d: %d iterations over %d islands", k + 51, st->iterations_sum, st->islands);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* Each block's warm start is last step's block of the same key, the first of equal keys (an
 * independent linear search against the simulator's look-up), on a drop whose contact set
 * changes under the same count (two balls rolling from one box onto the next, 33 mm apart: a
 * ball touches the next box 33 steps before it leaves the first, so at step 85 the first ball
 * gains a contact as the second loses one), a tilted cube's corners landing one by one, a
 * capsule rolling. */
static void test_warm_start_by_key(void **state) {
  const char *text =
      "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0}\nbodies:\n"
      "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}, {type: box, "
      "size: [1, 0.8, 0.1], position: [-0.5, -0.5, 0.05], friction: 0.5}, {type: box, size: [1, "
      "0.8, 0.1], position: [0.5, -0.5, 0.05], friction: 0.5}]}\n"
      "  - {name: s, mass: 1, position: [-0.1, -0.7, 0.15], linear_velocity: [1, 0, 0], "
      "angular_velocity: [0, 20, 0], geoms: [{type: sphere, radius: 0.05, friction: 0.5}]}\n"
      "  - {name: t, mass: 1, position: [-0.067, -0.3, 0.15], linear_velocity: [1, 0, 0], "
      "angular_velocity: [0, 20, 0], geoms: [{type: sphere, radius: 0.05, friction: 0.5}]}\n"
      "  - {name: a, mass: 1, position: [0, 0, 0.2],\n"
      "     orientation: [0.2, 0.1, 0, 0.974679434],\n"
      "     geoms: [{type: box, size: [0.1, 0.1, 0.1], friction: 0.5}]}\n"
      "  - {name: b, mass: 1, position: [0.5, 0, 0.1], linear_velocity: [0, 0.5, 0],\n"
      "     orientation: [0.05, 0.3, 0, 0.952627944],\n"
      "     geoms: [{type: capsule, radius: 0.04, length: 0.12, friction: 0.5}]}\n"
      "  - {name: c, mass: 1, position: [1, 0, 0.15],\n"
      "     orientation: [0.3, 0, 0.1, 0.948683298],\n"
      "     geoms: [{type: cylinder, radius: 0.05, length: 0.1, friction: 0.5}]}\n";
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  enum { MAXB = 64 };
  uint64_t before[MAXB]; /* last step's keys as that step made them */
  int np = 0, same_count_new_keys = 0, matched = 0;
  for (int k = 0; k < 600; ++k) {
    tsim_steps(s, 1);
    int n = s->nc + s->nk;
    assert_true(n <= MAXB);
    for (int i = 0; i < n; ++i) {
      int want = -1;
      for (int j = 0; j < np && want < 0; ++j)
        if (before[j] == s->keys[i]) want = j;
      if (s->prev_index[i] != want)
        fail_msg("step %d: block %d warm started from %d, its key's block is %d", k + 1, i,
                 s->prev_index[i], want);
      matched += want >= 0;
    }
    same_count_new_keys |= n == np && n > 0 && memcmp(before, s->keys, (size_t)n * sizeof *before);
    memcpy(before, s->keys, (size_t)n * sizeof *before);
    np = n;
  }
  assert_true(same_count_new_keys);
  assert_true(matched > 0);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grouping), cmocka_unit_test(test_warm_start_per_island),
      cmocka_unit_test(test_resting_columns_stay_warm), cmocka_unit_test(test_warm_start_by_key),
      cmocka_unit_test(test_scenes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
