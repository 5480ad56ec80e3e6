/* Contact inverse dynamics (inverse.h): a resting and an accelerated box against Newton's law,
 * an acceleration friction cannot give, the sign conventions against the simulator's own
 * contact forces on a standing Solo-12, and its torques fed forward holding the robot still. */
#include <math.h>
#include <string.h>

#include "moreau/control.h"
#include "moreau/inverse.h"
#include "moreau/world.h"
#include "sim_util.h"

#define G 9.81

/* a 2 kg cube of 0.2 m on a μ 0.5 floor, settled */
static const char *const BOX = "timestep: 0.001\n"
                               "gravity: [0, 0, -9.81]\n"
                               "bodies:\n"
                               "  - name: floor\n"
                               "    fixed: true\n"
                               "    geoms: [{type: halfspace, friction: 0.5}]\n"
                               "  - name: box\n"
                               "    mass: 2.0\n"
                               "    position: [0, 0, 0.1]\n"
                               "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: 0.5}]\n";

typedef struct {
  mr_scene sc;
  mr_sim *s;
  mr_data *d;
  mr_contact_id *w;
  int nc, box;
  const mr_contact *contacts;
} fixture;

static fixture settle(const char *text, const char *path, long steps) {
  fixture x;
  x.sc = text ? tsim_parse(text, ".") : tsim_load(path);
  x.s = tsim_create(&x.sc, NULL);
  tsim_steps(x.s, steps);
  const double *lambda;
  x.nc = mr_sim_contacts(x.s, &x.contacts, &lambda);
  mr_error err = {0};
  const mr_model *m = mr_sim_model(x.s);
  x.d = mr_data_create(m);
  x.w = mr_contact_id_create(m, x.nc, &err);
  assert_non_null(x.w);
  x.box = mr_model_body_index(m, "box");
  return x;
}

static void release(fixture *x) {
  mr_contact_id_free(x->w);
  mr_data_free(x->d);
  mr_sim_free(x->s);
  mr_scene_free(&x->sc);
}

/* the world force the contacts apply to body b, and the largest cone violation ‖f_t‖ − μ f_n */
static mr_vec3 force_on(const fixture *x, const double *f, int b, double *cone) {
  mr_vec3 F = mr_v3(0, 0, 0);
  *cone = -INFINITY;
  for (int i = 0; i < x->nc; ++i) {
    const mr_contact *c = &x->contacts[i];
    const double *fi = f + 3 * i;
    double sign = c->body[0] == b ? 1.0 : c->body[1] == b ? -1.0 : 0.0;
    F = mr_v3_madd(F, sign, mr_m3_mulv(&c->frame, mr_v3(fi[0], fi[1], fi[2])));
    *cone = fmax(*cone, hypot(fi[0], fi[1]) - c->mu * fi[2]);
  }
  return F;
}

/* At rest (a = 0): the four corners carry m g together and, by symmetry, m g / 4 each (the
 * smallest forces that balance the box); nothing is left over. Tolerances: the QP's 1e-9
 * relative tolerance on forces of 20 N. */
static void test_box_at_rest(void **state) {
  (void)state;
  fixture x = settle(BOX, NULL, 200);
  assert_int_equal(x.nc, 4);
  double a[6] = {0}, tau[6], f[12], cone;
  mr_contact_id_info info;
  mr_error err = {0};
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), a, a, x.contacts, x.nc, NULL, NULL,
                                       tau, f, &info, &err),
                   MR_OK);
  assert_true(info.converged);
  mr_vec3 F = force_on(&x, f, x.box, &cone);
  assert_true(fabs(F.v[0]) < 1e-6 && fabs(F.v[1]) < 1e-6);
  assert_true(fabs(F.v[2] - 2.0 * G) < 1e-6);
  for (int i = 0; i < 4; ++i)
    assert_true(fabs(f[3 * i + 2] - 0.5 * G) < 1e-6);
  assert_true(cone < 1e-9);
  assert_true(info.residual < 1e-6);
  release(&x);
}

/* Pushed along x at 0.3 g (friction can give up to 0.5 g): the contacts give m a + m g
 * exactly, within their cones (the rear corners carry more, the moment of the friction about
 * the centre of mass); with 0.8 g they cannot: the friction stays in its cones, and the total
 * force misses m (0.8 g, 0, g) by at least its distance to the cone of total forces,
 * m (0.8 − 0.5) g / √(1 + μ²) (5 % more allowed: the least squares also weighs the moment),
 * which the remainder reports. */
static void test_box_accelerated(void **state) {
  (void)state;
  fixture x = settle(BOX, NULL, 200);
  double tau[6], f[12], cone;
  mr_contact_id_info info;
  mr_error err = {0};
  double v[6] = {0}, a[6] = {0.3 * G, 0, 0, 0, 0, 0};
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), v, a, x.contacts, x.nc, NULL, NULL,
                                       tau, f, &info, &err),
                   MR_OK);
  mr_vec3 F = force_on(&x, f, x.box, &cone);
  assert_true(fabs(F.v[0] - 2.0 * 0.3 * G) < 1e-6);
  assert_true(fabs(F.v[2] - 2.0 * G) < 1e-6);
  assert_true(cone < 1e-9 && info.residual < 1e-6);
  a[0] = 0.8 * G;
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), v, a, x.contacts, x.nc, NULL, NULL,
                                       tau, f, &info, &err),
                   MR_OK);
  F = force_on(&x, f, x.box, &cone);
  assert_true(cone < 1e-6);
  double miss = hypot(2.0 * 0.8 * G - F.v[0], 2.0 * G - F.v[2]);
  assert_true(miss > 2.0 * 0.3 * G / sqrt(1.25) - 1e-6);
  assert_true(miss < 2.0 * 0.3 * G / sqrt(1.25) * 1.05);
  assert_true(info.residual > 0.5 * miss);
  release(&x);
}

/* Solo-12 standing (scenes/solo_stand.yaml, settled 1 s): the inverse dynamics at a = 0 balances
 * the base; the simulator's own contact forces, given as f_ref with a proximal weight that makes
 * f = f_ref, balance it too through this module's Jacobians and RNEA (an independent path: the
 * simulator's assembly and solver) — which checks the sign conventions — to the motion left
 * after the settling; and the torques fed forward with the PD gains off hold the robot still
 * for 0.2 s (an unstable balance without feedback, so a few mm; 5 cm if τ were off by the
 * legs' weight). */
static void test_solo_standing(void **state) {
  (void)state;
  fixture x = settle(NULL, "scenes/solo_stand.yaml", 1000);
  const mr_model *m = mr_sim_model(x.s);
  int nv = m->nv;
  assert_true(x.nc >= 4);
  double tau[64], f[3 * 64], zero[64] = {0}, q0[64];
  assert_true(nv <= 64 && x.nc <= 64);
  mr_contact_id_info info;
  mr_error err = {0};
  const double *lambda;
  mr_sim_contacts(x.s, &x.contacts, &lambda);
  /* the simulator's forces */
  mr_contact_id_settings s = mr_contact_id_settings_default();
  s.proximal = 1e8;
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), mr_sim_v(x.s), zero, x.contacts,
                                       x.nc, lambda, &s, tau, f, &info, &err),
                   MR_OK);
  assert_true(info.residual < 1e-3);
  /* the inverse dynamics' own */
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), zero, zero, x.contacts, x.nc, NULL,
                                       NULL, tau, f, &info, &err),
                   MR_OK);
  assert_true(info.converged && info.residual < 1e-6);
  /* fed forward */
  for (int k = 6; k < nv; ++k) {
    assert_int_equal(mr_sim_set_joint_gains(x.s, k, 0.0, 0.0, &err), MR_OK);
    mr_sim_ctrl_torque(x.s)[k] = tau[k];
  }
  for (int k = 0; k < 3; ++k)
    q0[k] = mr_sim_q(x.s)[k];
  tsim_steps(x.s, 200);
  double moved = 0.0;
  for (int k = 0; k < 3; ++k)
    moved = fmax(moved, fabs(mr_sim_q(x.s)[k] - q0[k]));
  assert_true(moved < 5e-3);
  release(&x);
}

/* bad input: too many contacts for the workspace, a non-finite acceleration */
static void test_errors(void **state) {
  (void)state;
  fixture x = settle(BOX, NULL, 200);
  double tau[6], a[6] = {0}, v[6] = {0};
  mr_error err = {0};
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), v, a, x.contacts, x.nc + 1, NULL,
                                       NULL, tau, NULL, NULL, &err),
                   MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "workspace holds 4"));
  a[3] = NAN;
  assert_int_equal(mr_contact_id_solve(x.w, x.d, mr_sim_q(x.s), v, a, x.contacts, x.nc, NULL, NULL,
                                       tau, NULL, NULL, &err),
                   MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "a[3]"));
  release(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_at_rest), cmocka_unit_test(test_box_accelerated),
      cmocka_unit_test(test_solo_standing), cmocka_unit_test(test_errors)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
