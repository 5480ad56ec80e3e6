/* The dynamics cross-checks of test_dynamics.c on the reference robots of example-robot-data
 * (Solo-12 and Talos with a free-flyer root, the Allegro right hand fixed), loaded from URDF at
 * random states. Skipped when the reference folder is absent. */
#include "dyn_checks.h"

#include <float.h>

#include "moreau/urdf.h"

typedef struct {
  const char *path; /* under example-robot-data */
  int floating, nq, nv;
  int inertia_fix; /* the file breaks A + B >= C on some links (docs/robots.md) */
} robot;

static const robot robots[] = {
    {"robots/solo_description/robots/solo12.urdf", 1, 19, 18, 0},
    {"robots/talos_data/robots/talos_reduced.urdf", 1, 39, 38, 1},
    {"robots/allegro_hand_description/urdf/allegro_right_hand.urdf", 0, 16, 16, 1},
};

/* load a reference robot; NULL (test skipped) when the reference folder is absent */
static mr_model *load(const robot *r) {
  const char *root = test_reference_root();
  if (!root) return NULL;
  char path[4600], pkg[4200];
  snprintf(path, sizeof path, "%s/%s", root, r->path);
  snprintf(pkg, sizeof pkg, "%s/..", root); /* package://example-robot-data/... */
  const char *roots[1] = {pkg};
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = r->floating;
  o.inertia_fix = r->inertia_fix;
  o.package_roots = roots;
  o.npackage_roots = 1;
  o.collision = 0;
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  if (mr_urdf_load(path, &o, &m, &e)) fail_msg("%s: %s", path, e.msg);
  assert_int_equal(m->nq, r->nq);
  assert_int_equal(m->nv, r->nv);
  return m;
}

/* every cross-check at random states; Jacobians on every body and a few frames */
static void check_robot(const robot *r, uint64_t seed) {
  mr_model *m = load(r);
  if (!m) skip(); /* reference robots absent: reported by cmocka, an error under CI */
  mr_data *d = mr_data_create(m);
  assert_non_null(d);
  static rstate x;
  uint64_t s = seed;
  for (int k = 0; k < 5; ++k) {
    random_state(m, &s, &x);
    check_algorithms(m, d, &x, &s);
    check_power(m, d, &x);
    check_fk_acceleration(m, d, &x);
    for (int b = 1; b < m->nbodies; b += 2)
      check_jacobians(m, d, &x, b, -1);
    for (int f = 0; f < m->nframes; f += 7)
      check_jacobians(m, d, &x, 0, f);
    /* q ⊕ (q₁ ⊖ q) = q₁, compared through the difference (quaternion sign) */
    double q1[NMAX], q2[NMAX], dv[NMAX];
    mr_random_configuration(m, &s, q1);
    mr_difference(m, x.q, q1, dv);
    double scale = M_PI;
    for (int i = 0; i < m->nv; ++i)
      scale = fmax(scale, fabs(dv[i]));
    mr_integrate(m, x.q, dv, 1.0, q2);
    mr_difference(m, q1, q2, dv);
    /* exp∘log round trip: angles up to π and translations, each map a few dozen operations
     * (atan2, a norm, θ/2 cot(θ/2) terms bounded for θ ≤ π) on values up to the difference's
     * largest entry: 64 ulp of it */
    for (int i = 0; i < m->nv; ++i)
      assert_near(dv[i], 0.0, 64 * DBL_EPSILON * scale);
    for (int i = 0; i < m->nq; ++i)
      assert_true(q1[i] >= m->lower[i] && q1[i] <= m->upper[i]);
  }
  mr_data_free(d);
  mr_model_free(m);
}

static void test_solo(void **state) {
  check_robot(&robots[0], 101);
}
static void test_talos(void **state) {
  check_robot(&robots[1], 202);
}
static void test_allegro(void **state) {
  check_robot(&robots[2], 303);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_solo),
      cmocka_unit_test(test_talos),
      cmocka_unit_test(test_allegro),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
