/* No allocation inside the step: this program is linked with --wrap=malloc, calloc and realloc
 * (Makefile), so every allocation made by moreau's own code goes through the counters below.
 * Scenes and simulators are created first (allocation allowed), then the counters must stay at
 * zero while stepping, with every solver, on scenes that exercise every stage: boxes and spheres
 * on a plane, a robot on its feet, a heightfield, constraints and joint limits, a hand holding a
 * ball, 300 spheres and 25 stacks of 4 cubes (from their first step); and the derivatives
 * (moreau/sim_derivatives.h). libccd's own allocations during EPA (a documented exception) happen
 * inside the shared library and are not counted here. CHOLMOD's (the sparse Cholesky of the
 * ADMM solvers, ccp-newton, ncp-stagproj and ncp-hybrid) are counted through SuiteSparse's
 * allocator hooks: a column of cubes, one island above the sparse threshold, steps with a
 * repeated pattern. */
#include <stddef.h>
#include <malloc.h>
#include <string.h>
#include <suitesparse/SuiteSparse_config.h>

#include "moreau/control.h"
#include "moreau/sim_derivatives.h"
#include "cube_columns.h"
#include "sim_util.h"

static long allocations; /* calls to malloc, calloc and realloc from moreau's code */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n) {
  ++allocations;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size) {
  ++allocations;
  return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
  ++allocations;
  return __real_realloc(p, n);
}

static void steps_allocate_nothing_but(const char *path, long warmup, long n, const char *skip) {
  mr_scene sc = tsim_load(path);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    if (skip && strcmp(name, skip) == 0) continue;
    long created = allocations;
    mr_sim *s = tsim_create(&sc, name);
    /* the library's own allocations are counted: creating a simulator makes some */
    assert_true(allocations > created);
    tsim_steps(s, warmup);
    long before = allocations;
    tsim_steps(s, n);
    if (allocations != before)
      fail_msg("%s with %s: %ld allocations in %ld steps", path, name, allocations - before, n);
    mr_sim_free(s);
  }
  mr_scene_free(&sc);
}

static void steps_allocate_nothing(const char *path, long warmup, long n) {
  steps_allocate_nothing_but(path, warmup, n, NULL);
}

/* SuiteSparse's allocations, through its hooks */
static void *count_malloc(size_t n) {
  ++allocations;
  return __real_malloc(n);
}
static void *count_calloc(size_t n, size_t size) {
  ++allocations;
  return __real_calloc(n, size);
}
static void *count_realloc(void *p, size_t n) {
  ++allocations;
  return __real_realloc(p, n);
}

/* a column of 8 cubes resting at touch (24 to 32 contacts, 48 dofs: tree-sparse, block-sparse
 * G, factored sparse by the ADMM solvers, ccp-newton, ncp-stagproj's two subproblems and
 * ncp-hybrid's ADMM and staggered-projection stages, when they run); its first steps meet the
 * few contact sets it alternates between (analysed then, allocating), the later ones reuse
 * them. 150 steps, then none from there to step 250 for any of the five. The same for the
 * consistent law's factor of a large island (below). */
static void test_sparse_cholesky(void **state) {
  SuiteSparse_config.malloc_func = count_malloc;
  SuiteSparse_config.calloc_func = count_calloc;
  SuiteSparse_config.realloc_func = count_realloc;
  char text[8192];
  cube_column(text, sizeof text, cube_scene_start(text, sizeof text), "b", 8, 0.0, 0.0, 0.0);
  mr_scene sc = tsim_parse(text, ".");
  const char *solvers[] = {"ccp-admm", "ncp-admm", "ccp-newton", "ncp-stagproj", "ncp-hybrid"};
  for (int k = 0; k < 5; ++k) {
    mr_sim *s = tsim_create(&sc, solvers[k]);
    long before = allocations;
    tsim_steps(s, 150);
    /* the analyses of the patterns are counted (ncp-hybrid ends these steps in its ncp-pgs and
     * Newton stages, on a dense copy of G up to 32 contacts: no factor to analyse) */
    if (strcmp(solvers[k], "ncp-hybrid")) assert_true(allocations > before);
    before = allocations;
    tsim_steps(s, 100);
    assert_true(mr_sim_last(s)->ncontacts >= MR_SPARSE_CHOL_MIN_NC);
    assert_int_equal(mr_sim_last(s)->islands, 1);
    if (allocations != before)
      fail_msg("%s: %ld allocations in 100 steps", solvers[k], allocations - before);
    mr_sim_free(s);
  }
  mr_scene_free(&sc);
  /* the consistent law's sparse factor (an island beyond its dense bound): a layer of 5 x 5
   * touching cubes dropped 1 cm (one island of 25 free bodies, about 260 contacts), ncp-pgs (no
   * factor of its own): the landing grows the storage and analyses its patterns, then the
   * resting layer allocates nothing from step 150 to 250 */
  int at = snprintf(text, sizeof text,
                    "timestep: 0.001\nbodies:\n"
                    "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n");
  for (int k = 0; k < 25; ++k)
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "  - {name: p%d, mass: 1, position: [%g, %g, 0.06], geoms: [{type: box, "
                   "size: [0.1, 0.1, 0.1]}]}\n",
                   k, 0.1 * (k / 5), 0.1 * (k % 5));
  sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, "ncp-pgs");
  long before = allocations;
  tsim_steps(s, 150);
  assert_true(allocations > before);
  assert_int_equal(mr_sim_last(s)->islands, 1);
  before = allocations;
  tsim_steps(s, 100);
  if (allocations != before)
    fail_msg("layer of cubes: %ld allocations in 100 steps", allocations - before);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* the heap in use (glibc's accounting: chunks in the arenas and mmapped ones), bytes */
static size_t heap_in_use(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

/* memory follows the contacts present, not the bound on contacts: a column of 24 cubes resting
 * at touch (up to 96 contacts, 144 dofs, one island with a block-sparse G) is stepped 20 times
 * with each solver that works on the stored blocks. Its contact bound is 8 per geometry, 200
 * blocks, for which one dense G takes 600² doubles (2.9 MB); sized for that bound, the pools held
 * J and M⁻¹Jᵀ, that G and a workspace of four such matrices (17 MB). The heap the simulator holds
 * after the steps (everything: model data, collision, pools for the contacts present, workspace,
 * CHOLMOD's factor) must stay below that one dense G; for the present contacts J and M⁻¹Jᵀ take
 * 2 · 288 · 144 doubles (0.66 MB), G's stored blocks at most 9 · 96 · 16 doubles. */
static void test_memory_follows_contacts(void **state) {
  char text[8192];
  cube_column(text, sizeof text, cube_scene_start(text, sizeof text), "b", 24, 0.0, 0.0, 0.0);
  mr_scene sc = tsim_parse(text, ".");
  const size_t dense_G = 600 * 600 * sizeof(double);
  const char *solvers[] = {"ncp-pgs",    "ccp-admm",     "ncp-admm",
                           "ccp-newton", "ncp-stagproj", "ncp-hybrid"};
  for (int i = 0; i < 6; ++i) {
    size_t before = heap_in_use();
    mr_sim *s = tsim_create(&sc, solvers[i]);
    tsim_steps(s, 20);
    assert_true(mr_sim_last(s)->ncontacts >= MR_SPARSE_CHOL_MIN_NC);
    size_t held = heap_in_use() - before;
    print_message("%s: %zu bytes held for %d contacts\n", solvers[i], held,
                  mr_sim_last(s)->ncontacts);
    if (held >= dense_G)
      fail_msg("%s: %zu bytes held, a dense G for the bound takes %zu", solvers[i], held, dense_G);
    mr_sim_free(s);
  }
  mr_scene_free(&sc);
}

/* the counters work: an allocation made here is seen */
static void test_counter_sees_allocations(void **state) {
  long before = allocations;
  void *p = malloc(16);
  assert_non_null(p);
  free(p);
  assert_int_equal(allocations - before, 1);
}

static void test_demo(void **state) {
  steps_allocate_nothing("scenes/demo.yaml", 5, 50);
}
/* every solver but soft: without the MPC's integral action the trot on soft contacts diverges
 * at step 279 (a shoulder's velocity −2.4e4 rad/s), before the counted steps */
static void test_bumpy_trot(void **state) {
  steps_allocate_nothing_but("scenes/b10_solo_trot_bumpy.yaml", 300, 20, "soft");
}
static void test_constraints(void **state) {
  steps_allocate_nothing("scenes/four_bar.yaml", 5, 50);
  steps_allocate_nothing("scenes/joint_limits.yaml", 5, 200);
}
static void test_hand(void **state) {
  steps_allocate_nothing("scenes/b8_allegro_hold.yaml", 5, 20);
}

/* n spheres resting on a plane, or n cubes stacked by 4 (columns 0.3 m apart) */
static char *many_bodies(int n, int boxes) {
  size_t cap = 256 + 160 * (size_t)n, at = 0;
  char *t = malloc(cap);
  assert_non_null(t);
  at += (size_t)snprintf(t + at, cap - at,
                         "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0}\nbodies:\n"
                         "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n");
  for (int k = 0; k < n; ++k) {
    int col = boxes ? k / 4 : k, side = 20;
    double x = (boxes ? 0.3 : 0.15) * (col % side), y = (boxes ? 0.3 : 0.15) * (col / side);
    double z = boxes ? 0.05 + 0.1 * (k % 4) : 0.05;
    at += (size_t)snprintf(t + at, cap - at,
                           "  - {name: b%d, mass: 1, position: [%g, %g, %g], "
                           "geoms: [{type: %s}]}\n",
                           k, x, y, z,
                           boxes ? "box, size: [0.1, 0.1, 0.1]" : "sphere, radius: 0.05");
  }
  return t;
}

/* many bodies (pools too large for the bound on contacts, sized at creation for the contacts
 * present): no step allocates, from the first */
static void test_many_bodies(void **state) {
  for (int boxes = 0; boxes <= 1; ++boxes) {
    char *text = many_bodies(boxes ? 100 : 300, boxes);
    mr_scene sc = tsim_parse(text, ".");
    free(text);
    for (int i = 0; i < mr_solver_count(); ++i) {
      const char *name = mr_solver_at(i)->name;
      mr_sim *s = tsim_create(&sc, name);
      long before = allocations;
      tsim_steps(s, boxes ? 5 : 20);
      if (allocations != before)
        fail_msg("%s with %s: %ld allocations", boxes ? "stacks" : "spheres", name,
                 allocations - before);
      mr_sim_free(s);
    }
    mr_scene_free(&sc);
  }
}

/* Scenes whose contacts grow: 10 cubes dropped one above another onto the ground land into ever
 * larger islands (more than 8 trees: no worst case is reserved at creation), and a layer of 5 x 5
 * touching cubes dropped 1 cm lands with 4 + 4 x 4 / 2 = 12 contacts per cube (260 with its side
 * contacts), past the initial room of 8 per geometry (208); a column of standing cylinders and
 * one of crossed lying capsules, dropped, go through the cylinder and capsule routines as they
 * land and topple. Storage grows only at the start of
 * a step, before its stages, when the contacts exceed any met before, by half again each time:
 * every step that allocates is one whose warnings.storage_grown went up, and it goes up at most
 * log₁.₅(final / initial room) + 2 times per kind of storage (contacts; the islands' pools).
 * ncp-pgs: the solvers that factor a block-sparse G analyse each new sparsity pattern when they
 * meet it (test_sparse_cholesky), the one allocation left inside a solve. */
static void grows_between_steps(const char *what, const char *text, long steps) {
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, "ncp-pgs");
  long grown = 0, growths = 0;
  for (long k = 0; k < steps; ++k) {
    long before = allocations;
    tsim_steps(s, 1);
    long g = mr_sim_get_warnings(s)->storage_grown;
    if (allocations != before && g == grown)
      fail_msg("%s, step %ld: %ld allocations without a growth of the storage", what, k + 1,
               allocations - before);
    growths += g > grown, grown = g;
  }
  print_message("%s: storage grew at %ld steps of %ld (%d contacts at the end)\n", what, growths,
                steps, mr_sim_last(s)->ncontacts);
  assert_true(growths > 0); /* the scene exercises the growth */
  /* the islands' pools start at the initial state's need and the contacts at 8 per geometry:
   * 1.5^k covers the growth from one contact to the last count in k ≤ 14 growths of each */
  assert_true(growths <= 2 * 14);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

static void test_storage_grows_between_steps(void **state) {
  char text[16384];
  const char *head = "timestep: 0.001\nbodies:\n"
                     "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n";
  int at = snprintf(text, sizeof text, "%s", head);
  for (int k = 0; k < 10; ++k) /* a column, dropped: each lands on the one below */
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "  - {name: c%d, mass: 1, position: [0, 0, %g], geoms: [{type: box, size: [0.1, "
                   "0.1, 0.1]}]}\n",
                   k, 0.06 + 0.15 * k);
  grows_between_steps("dropped column", text, 600);
  at = snprintf(text, sizeof text, "%s", head);
  for (int i = 0, k = 0; i < 5; ++i) /* a layer of touching cubes, 1 cm up */
    for (int j = 0; j < 5; ++j, ++k)
      at += snprintf(text + at, sizeof text - (size_t)at,
                     "  - {name: p%d, mass: 1, position: [%g, %g, 0.06], geoms: [{type: box, "
                     "size: [0.1, 0.1, 0.1]}]}\n",
                     k, 0.1 * i, 0.1 * j);
  grows_between_steps("layer of 25 cubes", text, 100);
  at = snprintf(text, sizeof text, "%s", head);
  for (int k = 0; k < 10; ++k) /* a column of standing cylinders, one of crossed capsules */
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "  - {name: y%d, mass: 1, position: [0, 0, %g], geoms: [{type: cylinder, "
                   "radius: 0.05, length: 0.1}]}\n"
                   "  - {name: c%d, mass: 1, position: [0.5, 0, %g], orientation: [%s], geoms: "
                   "[{type: capsule, radius: 0.04, length: 0.2}]}\n",
                   k, 0.06 + 0.15 * k, k, 0.05 + 0.12 * k,
                   k % 2 ? "0.70710678118654752, 0, 0, 0.70710678118654752"
                         : "0, 0.70710678118654752, 0, 0.70710678118654752");
  grows_between_steps("columns of cylinders and capsules", text, 600);
}

/* the derivatives of the dynamics, of the free step and of the sphere's contact step of the
 * Allegro scene (created first, then evaluated with the counters watching) */
static void test_derivatives(void **state) {
  mr_scene sc = tsim_load("scenes/b8_allegro_hold.yaml");
  const mr_model *m = sc.model;
  mr_data *d = mr_data_create(m);
  mr_derivatives *dd = mr_derivatives_create(m);
  mr_step_derivatives *sd = mr_step_derivatives_create(m);
  static double tau[64], J[3 * 64];
  /* one sliding contact: c = G λ + g = (0.1, 0, 0), λ_T = −μ λ_N ĉ_T */
  static const double G[9] = {2, 0, 0, 0, 2, 0, 0, 0, 1}, g[3] = {1.1, 0, -1}, mu[1] = {0.5};
  static const double lambda[3] = {-0.5, 0, 1}, c[3] = {0.1, 0, 0};
  static double work[64 * 64 * 8];
  assert_true(m->nv <= 64 && mr_step_contact_work_size(m, 1) <= sizeof work);
  J[2 * m->nv] = 1.0; /* a joint limit whose normal row is the first dof */
  const mr_step_params p = {sc.timestep, NULL, NULL, NULL};
  const mr_contact_problem prob = {.nc = 1, .G = G, .g = g, .mu = mu};
  const mr_contact_geometry row = {.type = MR_ROWS_LIMIT, .dof = 0, .sign = 1.0};
  mr_assembly_settings as = mr_assembly_settings_default();
  as.dt = sc.timestep;
  const mr_contact_step cs = {&prob, &row, NULL, J, lambda, c, &as, 1e-9, NULL, NULL};
  long before = allocations;
  mr_rnea_derivatives(m, d, dd, sc.q0, sc.v0, tau);
  assert_int_equal(mr_aba_derivatives(m, d, dd, sc.q0, sc.v0, tau, NULL), MR_OK);
  assert_int_equal(mr_step_free_derivatives(m, d, sd, &p, sc.q0, sc.v0, tau, NULL, NULL, NULL),
                   MR_OK);
  assert_int_equal(
      mr_step_contact_derivatives(m, d, sd, &p, sc.q0, sc.v0, tau, &cs, NULL, NULL, work, NULL),
      MR_OK);
  assert_int_equal(allocations, before);
  mr_step_derivatives_free(sd);
  mr_derivatives_free(dd);
  mr_data_free(d);
  mr_scene_free(&sc);
}

/* the Jacobians of the simulator's steps (mr_sim_step_derivatives) on Solo-12 trotting, feet
 * landing and lifting: all the memory comes from mr_sim_derivatives_create */
static void test_sim_derivatives(void **state) {
  mr_scene sc = tsim_load("scenes/b9_solo_trot.yaml");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_error err = {0};
  mr_sim_derivatives *x = mr_sim_derivatives_create(s, &err);
  assert_non_null(x);
  tsim_steps(s, 5);
  long before = allocations;
  for (int k = 0; k < 30; ++k)
    assert_int_equal(mr_sim_step_derivatives(s, x, &err), MR_OK);
  assert_int_equal(allocations, before);
  mr_sim_derivatives_free(x);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a control loop: controls set by name and index, a wrench, and every read-out between steps
 * allocate nothing either (a real-time controller calls them every step) */
static void test_control_loop(void **state) {
  mr_scene sc = tsim_load("scenes/b9_solo_trot.yaml");
  mr_sim *s = tsim_create(&sc, NULL);
  const mr_world *w = mr_sim_world(s);
  int base = mr_world_body_index(w, "solo/base_link"), knee = mr_world_joint_dof(w, "solo/FL_KFE");
  mr_error err = {0};
  mr_contact_force c[16];
  tsim_steps(s, 5);
  long before = allocations;
  for (int k = 0; k < 50; ++k) {
    assert_int_equal(mr_sim_set_joint_target_named(s, "solo/HR_KFE", 1.5, &err), MR_OK);
    assert_int_equal(mr_sim_set_joint_gains(s, knee, 20.0, 0.5, &err), MR_OK);
    assert_int_equal(mr_sim_set_joint_torque(s, knee, 0.1, &err), MR_OK);
    assert_int_equal(mr_sim_set_wrench(s, base, mr_v3(1, 0, 0), mr_v3_zero(), &err), MR_OK);
    tsim_steps(s, 1);
    mr_sim_contact_forces(s, c, 16);
    (void)mr_sim_contact_wrenches(s);
    (void)mr_sim_body_poses(s);
    (void)mr_sim_com(s, 0);
  }
  if (allocations != before) fail_msg("%ld allocations in the control loop", allocations - before);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counter_sees_allocations),
      cmocka_unit_test(test_demo),
      cmocka_unit_test(test_bumpy_trot),
      cmocka_unit_test(test_constraints),
      cmocka_unit_test(test_hand),
      cmocka_unit_test(test_many_bodies),
      cmocka_unit_test(test_storage_grows_between_steps),
      cmocka_unit_test(test_derivatives),
      cmocka_unit_test(test_control_loop),
      cmocka_unit_test(test_sim_derivatives),
      cmocka_unit_test(test_sparse_cholesky),
      cmocka_unit_test(test_memory_follows_contacts),
  };
  return cmocka_run_group_tests_name("no_alloc", tests, NULL, NULL);
}
