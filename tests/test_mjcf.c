/* The MJCF loader's semantics against hand-derived values (docs/mjcf.md): default classes and
 * childclass, every frame form, fromto, geom masses and inertias, inertiafromgeom,
 * settotalmass, joint ref and chains of joints, includes with their own file names in messages,
 * contype / conaffinity and exclusions, MuJoCo's friction rule, keyframes, the refusals (file,
 * line, element, attribute), and the actuators driving joints to closed-form results. Each file
 * is written to a temporary directory and loaded as `moreau check` loads it. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "moreau/actuator.h"
#include "moreau/collision.h"
#include "moreau/control.h"
#include "moreau/dynamics.h"
#include "moreau/mjcf.h"

static char dir[64];

static const char *write_file(const char *name, const char *text) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("cannot write %s", path);
  fputs(text, f);
  fclose(f);
  return path;
}

/* load text as NAME.xml; fails the test on an error */
static void load(const char *name, const char *text, mr_scene *s) {
  char file[80];
  snprintf(file, sizeof file, "%s.xml", name);
  mr_error e = {MR_OK, ""};
  if (mr_scene_load(write_file(file, text), s, &e)) fail_msg("%s: %s", name, e.msg);
}

/* load text expecting an error whose message contains every string of want (NULL-ended) */
static void refused(const char *name, const char *text, const char *const *want) {
  char file[80];
  snprintf(file, sizeof file, "%s.xml", name);
  mr_scene s;
  mr_error e = {MR_OK, ""};
  if (!mr_scene_load(write_file(file, text), &s, &e)) {
    mr_scene_free(&s);
    fail_msg("%s: loaded, expected a refusal", name);
  }
  for (int k = 0; want[k]; ++k)
    if (!strstr(e.msg, want[k])) fail_msg("%s: '%s' not in: %s", name, want[k], e.msg);
}

static int geom(const mr_scene *s, const char *name) {
  for (int g = 0; g < s->model->ngeoms; ++g)
    if (!strcmp(s->model->geoms[g].name, name)) return g;
  fail_msg("no geometry '%s'", name);
  return -1;
}

static const mr_body *body(const mr_scene *s, const char *name) {
  int b = mr_model_body_index(s->model, name);
  if (b < 0) fail_msg("no body '%s'", name);
  return &s->model->bodies[b];
}

static const mr_joint *joint(const mr_scene *s, const char *name) {
  int b = mr_model_joint_index(s->model, name);
  if (b < 0) fail_msg("no joint '%s'", name);
  return &s->model->bodies[b].joint;
}

static void assert_mat_near(const mr_mat3 *A, const double B[9], double tol) {
  for (int i = 0; i < 9; ++i)
    assert_near(A->m[i / 3][i % 3], B[i], tol);
}

/* ---- default classes ---- */

/* a nested class inherits its parent's values and overrides some; childclass applies below a
 * body; an element's class beats the childclass; unnamed objects are named KIND#ID */
static void test_defaults(void **state) {
  mr_scene s;
  load("defaults",
       "<mujoco>\n"
       "  <default>\n"
       "    <joint damping='1' armature='0.5'/>\n"
       "    <geom size='0.1' density='100'/>\n"
       "    <default class='a'>\n"
       "      <joint damping='2'/>\n"
       "      <default class='b'><joint armature='3'/><geom type='box' size='0.1 0.2 0.3'/>"
       "</default>\n"
       "    </default>\n"
       "  </default>\n"
       "  <worldbody>\n"
       "    <body name='p' childclass='b'>\n"
       "      <joint name='j1' axis='1 0 0'/><geom name='g1'/>\n"
       "      <body name='c' pos='0 0 -1'>\n"
       "        <joint name='j2' class='a'/><geom class='main'/>\n"
       "      </body>\n"
       "    </body>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  const mr_model *m = s.model;
  /* j1: class b = main + a + b: damping 2 (from a), armature 3 (from b) */
  assert_near(m->damping[joint(&s, "defaults/j1")->idx_v], 2.0, 0);
  assert_near(m->armature[joint(&s, "defaults/j1")->idx_v], 3.0, 0);
  /* j2: class a beats the inherited childclass b: armature 0.5 from main */
  assert_near(m->damping[joint(&s, "defaults/j2")->idx_v], 2.0, 0);
  assert_near(m->armature[joint(&s, "defaults/j2")->idx_v], 0.5, 0);
  /* g1 is b's box; the unnamed geom of class main is a sphere, named geom#1 */
  const mr_geom *g1 = &m->geoms[geom(&s, "defaults/g1")];
  assert_int_equal(g1->type, MR_GEOM_BOX);
  assert_near(g1->size[2], 0.3, 0);
  const mr_geom *g2 = &m->geoms[geom(&s, "defaults/geom#1")];
  assert_int_equal(g2->type, MR_GEOM_SPHERE);
  /* masses: box 8 abc ρ, sphere 4/3 π r³ ρ (ρ = 100) */
  assert_near(body(&s, "defaults/p")->inertia.m, 100 * 8 * 0.1 * 0.2 * 0.3, 1e-15);
  assert_near(body(&s, "defaults/c")->inertia.m, 100 * 4.0 / 3.0 * M_PI * 1e-3, 1e-15);
  mr_scene_free(&s);
}

/* ---- frames ---- */

/* quat, axisangle (degrees), euler (xyz moving axes; eulerseq ZYX fixed axes), xyaxes, zaxis */
static void test_frames(void **state) {
  mr_scene s;
  load("frames",
       "<mujoco>\n"
       "  <worldbody>\n"
       "    <geom name='q' size='.1' quat='0 0 0 2'/>\n"
       "    <geom name='aa' size='.1' axisangle='0 0 1 90'/>\n"
       "    <geom name='eu' size='.1' euler='90 0 90'/>\n"
       "    <geom name='xy' size='.1' xyaxes='0 1 0 -1 0 0'/>\n"
       "    <geom name='z' size='.1' zaxis='1 0 0'/>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  double Rz180[9] = {-1, 0, 0, 0, -1, 0, 0, 0, 1}, Rz90[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  /* euler xyz moving: R = Rx(90) Rz(90): columns x → (0 1 0)... */
  double Reu[9] = {0, -1, 0, 0, 0, -1, 1, 0, 0};
  /* zaxis (1 0 0): the shortest rotation of z onto x, about y by +90 */
  double Rzx[9] = {0, 0, 1, 0, 1, 0, -1, 0, 0};
  assert_mat_near(&s.model->geoms[geom(&s, "frames/q")].placement.R, Rz180, 1e-15);
  assert_mat_near(&s.model->geoms[geom(&s, "frames/aa")].placement.R, Rz90, 1e-15);
  assert_mat_near(&s.model->geoms[geom(&s, "frames/eu")].placement.R, Reu, 1e-15);
  assert_mat_near(&s.model->geoms[geom(&s, "frames/xy")].placement.R, Rz90, 1e-15);
  assert_mat_near(&s.model->geoms[geom(&s, "frames/z")].placement.R, Rzx, 1e-15);
  mr_scene_free(&s);
  /* radians; a fixed-axes sequence: ZYX applies z first, each about the world axes */
  load("radians",
       "<mujoco>\n"
       "  <compiler angle='radian' eulerseq='ZYX'/>\n"
       "  <worldbody>\n"
       "    <geom name='eu' size='.1' euler='1.5707963267948966 0 1.5707963267948966'/>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  /* fixed axes Z then Y then X: R = Rx(90) Ry(0) Rz(90), the same matrix as above */
  assert_mat_near(&s.model->geoms[geom(&s, "radians/eu")].placement.R, Reu, 1e-15);
  mr_scene_free(
      &s); /* coordinate="global" (MuJoCo 2.2.2): every frame in world coordinates, made local to
            * the parent; the world body (here with a floor) stays at the origin */
  load("global",
       "<mujoco>\n"
       "  <compiler coordinate='global'/>\n"
       "  <worldbody>\n"
       "    <geom name='floor' type='plane' size='1 1 .1'/>\n"
       "    <body name='a' pos='0 0 1'>\n"
       "      <joint name='ja' axis='0 1 0' pos='0 0 1'/>\n"
       "      <geom type='sphere' size='.1' pos='0 0 1'/>\n"
       "      <body name='b' pos='0.5 0 1'>\n"
       "        <joint name='jb' axis='0 1 0' pos='0.5 0 1'/>\n"
       "        <geom name='c' type='capsule' size='.05' fromto='0.5 0 1 0.9 0 1'/>\n"
       "      </body>\n"
       "    </body>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  assert_near(body(&s, "global/b")->placement.p.v[0], 0.5, 1e-15);
  assert_near(body(&s, "global/b")->placement.p.v[2], 0.0, 1e-15);
  assert_near(body(&s, "global/a")->placement.p.v[2], 1.0, 1e-15);
  assert_near(s.model->geoms[geom(&s, "global/c")].placement.p.v[0], 0.2, 1e-15);
  mr_scene_free(&s);
}

/* fromto: the midpoint, z from "to" towards "from", half length; a box gets size[2] */
static void test_fromto(void **state) {
  mr_scene s;
  load("fromto",
       "<mujoco>\n"
       "  <worldbody>\n"
       "    <body name='b'>\n"
       "      <freejoint/>\n"
       "      <geom name='c' type='capsule' size='0.05' fromto='0 0 0 0.4 0 0'/>\n"
       "      <geom name='x' type='box' size='0.1 0 0' fromto='0 0 1 0 0 1.6'/>\n"
       "    </body>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  const mr_geom *c = &s.model->geoms[geom(&s, "fromto/c")];
  assert_near(c->size[0], 0.05, 0);
  assert_near(c->size[1], 0.2, 1e-15);
  assert_near(c->placement.p.v[0], 0.2, 1e-15);
  /* z axis along from − to = (−1 0 0) */
  assert_near(c->placement.R.m[0][2], -1.0, 1e-15);
  const mr_geom *x = &s.model->geoms[geom(&s, "fromto/x")];
  assert_near(x->size[0], 0.1, 0);
  assert_near(x->size[1], 0.1, 0);
  assert_near(x->size[2], 0.3, 1e-15);
  assert_near(x->placement.p.v[2], 1.3, 1e-15);
  mr_scene_free(&s);
}

/* ---- masses ---- */

/* capsule: cylinder plus two hemispheres at the ends (MuJoCo's formula, derived here from the
 * parallel-axis theorem); two geoms combined about their centre of mass; inertiafromgeom and
 * settotalmass */
static void test_masses(void **state) {
  mr_scene s;
  load("masses",
       "<mujoco>\n"
       "  <compiler settotalmass='3'/>\n"
       "  <worldbody>\n"
       "    <body name='cap'><joint/><geom type='capsule' size='0.1 0.3' density='1000'/></body>\n"
       "    <body name='two'><joint/>\n"
       "      <geom type='sphere' size='0.1' pos='0 0 1' mass='2'/>\n"
       "      <geom type='sphere' size='0.1' pos='0 0 -1' mass='1'/>\n"
       "    </body>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  double r = 0.1, h = 0.6, vc = M_PI * r * r * h, vs = 4.0 / 3.0 * M_PI * r * r * r;
  double mc = 1000 * vc, ms = 1000 * vs, m = mc + ms;
  /* about the capsule's centre: Ixx = mc (3r² + h²)/12 + ms (2r²/5 + h²/4 + 3 h r / 8) */
  double Ixx = mc * (3 * r * r + h * h) / 12 + ms * (2 * r * r / 5 + h * h / 4 + 3 * h * r / 8);
  double Izz = mc * r * r / 2 + ms * 2 * r * r / 5;
  /* settotalmass scales everything by 3 / (m + 3) */
  double k = 3.0 / (m + 3.0);
  const mr_body *cap = body(&s, "masses/cap"), *two = body(&s, "masses/two");
  assert_near(cap->inertia.m, k * m, 1e-12);
  assert_near(cap->inertia.I.m[0][0], k * Ixx, 1e-14);
  assert_near(cap->inertia.I.m[2][2], k * Izz, 1e-14);
  /* two spheres: centre at z = (2 − 1)/3, Ixx = Σ 2/5 m r² + m d² */
  double zc = 1.0 / 3.0, Ix2 = 0.4 * 3 * 0.01 + 2 * pow(1 - zc, 2) + 1 * pow(1 + zc, 2);
  assert_near(two->inertia.m, 3 * k, 1e-14);
  assert_near(two->inertia.c.v[2], zc, 1e-14);
  assert_near(two->inertia.I.m[0][0], k * Ix2, 1e-13);
  assert_near(two->inertia.I.m[2][2], k * 0.4 * 3 * 0.01, 1e-14);
  assert_near(mr_model_total_mass(s.model), 3.0, 1e-14);
  mr_scene_free(&s);
  /* inertiafromgeom="true" replaces an <inertial>; "false" keeps it and ignores the geoms */
  load("geomtrue",
       "<mujoco>\n"
       "  <compiler inertiafromgeom='true'/>\n"
       "  <worldbody><body name='b'><joint/>\n"
       "    <inertial pos='0 0 0' mass='7' diaginertia='1 1 1'/>\n"
       "    <geom type='box' size='0.1 0.1 0.1' mass='2'/>\n"
       "  </body></worldbody>\n"
       "</mujoco>\n",
       &s);
  assert_near(body(&s, "geomtrue/b")->inertia.m, 2.0, 0);
  assert_near(body(&s, "geomtrue/b")->inertia.I.m[0][0], 2.0 * 0.02 / 3.0, 1e-16);
  mr_scene_free(&s);
}

/* ---- joints ---- */

/* ref: q0 = ref and the body sits at its XML pose there; several joints in one body make a
 * chain, each joint's anchor and axis in the frame the previous ones moved */
static void test_joints(void **state) {
  mr_scene s;
  load("joints",
       "<mujoco>\n"
       "  <worldbody>\n"
       "    <body name='b' pos='1 0 0'>\n"
       "      <joint name='h' type='hinge' axis='0 0 1' pos='-1 0 0' ref='90' range='0 180' "
       "limited='true'/>\n"
       "      <joint name='s' type='slide' axis='1 0 0' ref='0.5'/>\n"
       "      <geom name='g' size='0.1' pos='0.5 0 0'/>\n"
       "    </body>\n"
       "  </worldbody>\n"
       "</mujoco>\n",
       &s);
  const mr_joint *h = joint(&s, "joints/h"), *sl = joint(&s, "joints/s");
  assert_near(s.q0[h->idx_q], M_PI / 2, 1e-15);
  assert_near(s.q0[sl->idx_q], 0.5, 0);
  assert_near(s.model->lower[h->idx_q], 0, 0);
  assert_near(s.model->upper[h->idx_q], M_PI, 1e-15);
  mr_data *d = mr_data_create(s.model);
  double q[2];
  /* at q0 the geom is at its XML place: body (1 0 0) + (0.5 0 0) */
  mr_forward_kinematics(s.model, d, s.q0, NULL, NULL);
  int g = geom(&s, "joints/g");
  mr_se3 X = mr_se3_mul(&d->oMi[s.model->geoms[g].body], &s.model->geoms[g].placement);
  assert_near(X.p.v[0], 1.5, 1e-15);
  assert_near(X.p.v[1], 0, 1e-15);
  /* hinge to 180 degrees: a quarter turn more about (0 0 1) through the anchor (0 0 0):
   * (1.5 0 0) → (0 1.5 0); slide 1 m more along the turned x axis (now −y... of the body) */
  q[h->idx_q] = M_PI, q[sl->idx_q] = 1.5;
  mr_forward_kinematics(s.model, d, q, NULL, NULL);
  X = mr_se3_mul(&d->oMi[s.model->geoms[g].body], &s.model->geoms[g].placement);
  assert_near(X.p.v[0], 0.0, 1e-15);
  assert_near(X.p.v[1], 2.5, 1e-15);
  mr_data_free(d);
  mr_scene_free(&s);
}

/* frictionloss is the joint's dry friction (docs/physics.md, "Joint friction"): a horizontal
 * pendulum (1 kg at l = 0.5 m, I = 0.25 + 1e-3 kg m² about the hinge) under the gravity torque
 * m g l = 4.905 N m is held by frictionloss 6 (q stays to round-off) and released by frictionloss
 * 4, its first step's velocity Δt (m g l − f)/I (the friction force saturated at f; 1e-12 rad/s,
 * as tests/test_joint_friction.c); <flag frictionloss='disable'/> removes it */
static void test_frictionloss(void **state) {
  const char *fmt = "<mujoco>\n<option timestep='0.002'><flag frictionloss='%s'/></option>\n"
                    "<worldbody>\n<body>\n"
                    "<joint name='h' type='hinge' axis='0 1 0' frictionloss='%g'/>\n"
                    "<inertial pos='0.5 0 0' mass='1' diaginertia='1e-3 1e-3 1e-3'/>\n"
                    "</body></worldbody></mujoco>\n";
  const double fs[] = {6.0, 4.0, 4.0}, tau = 0.5 * 9.81, inertia = 0.25 + 1e-3, dt = 0.002;
  for (int k = 0; k < 3; ++k) {
    char text[512];
    snprintf(text, sizeof text, fmt, k == 2 ? "disable" : "enable", fs[k]);
    mr_scene s;
    load("frictionloss", text, &s);
    const mr_joint *h = joint(&s, "frictionloss/h");
    assert_near(s.model->joint_friction[h->idx_v], k == 2 ? 0.0 : fs[k], 0);
    mr_error e = {MR_OK, ""};
    mr_sim *sim = mr_sim_from_scene(&s, NULL, &e);
    assert_non_null(sim);
    assert_int_equal(mr_sim_step(sim, &e), MR_OK);
    double v = fabs(mr_sim_v(sim)[h->idx_v]);
    double want = k == 0 ? 0.0 : dt * (tau - (k == 1 ? fs[k] : 0.0)) / inertia;
    assert_near(v, want, 1e-12);
    mr_sim_free(sim);
    mr_scene_free(&s);
  }
}

/* ---- includes and messages ---- */

static void test_include(void **state) {
  write_file("part.xml", "<mujoco>\n  <worldbody>\n    <geom name='floor' type='plane' "
                         "size='1 1 .1'/>\n  </worldbody>\n</mujoco>\n");
  write_file("bad_part.xml", "<mujoco>\n  <default>\n\n    <geom frobnicate='1'/>\n  "
                             "</default>\n</mujoco>\n");
  mr_scene s;
  load("includer", "<mujoco>\n  <include file='part.xml'/>\n</mujoco>\n", &s);
  assert_int_equal(s.model->geoms[geom(&s, "includer/floor")].type, MR_GEOM_HALFSPACE);
  mr_scene_free(&s);
  /* an error inside an included file names that file and its line */
  refused("bad_includer", "<mujoco>\n  <include file='bad_part.xml'/>\n</mujoco>\n",
          (const char *const[]){"bad_part.xml:4:", "<geom>", "frobnicate", NULL});
  refused("twice", "<mujoco>\n<include file='part.xml'/>\n<include file='part.xml'/>\n</mujoco>\n",
          (const char *const[]){"twice.xml:3:", "already included", NULL});
}

/* what moreau does not model is refused by element, attribute, file and line */
static void test_refusals(void **state) {
  refused("friction",
          "<mujoco>\n<worldbody>\n<body>\n<joint name='j' frictionloss='-0.1'/>\n"
          "<geom size='.1'/></body></worldbody></mujoco>\n",
          (const char *const[]){"friction.xml:4:", "<joint name=\"j\">", "frictionloss", NULL});
  refused("fluid", "<mujoco>\n<option density='1.2'/>\n</mujoco>\n",
          (const char *const[]){"fluid.xml:2:", "<option>", "density", "fluid", NULL});
  refused("muscle",
          "<mujoco><worldbody><body><joint name='j'/><geom size='.1'/></body>"
          "</worldbody>\n<actuator>\n<muscle name='m' joint='j'/></actuator></mujoco>\n",
          (const char *const[]){"muscle.xml:3:", "<muscle name=\"m\">", "muscle", NULL});
  refused("spatial",
          "<mujoco><worldbody><site name='a'/><body><joint/><geom size='.1'/>"
          "<site name='b'/></body></worldbody>\n<tendon>\n<spatial name='t' "
          "limited='true' range='0 1'><site site='a'/><site site='b'/></spatial>"
          "</tendon></mujoco>\n",
          (const char *const[]){"spatial.xml:3:", "<spatial name=\"t\">", "limited: a length limit",
                                NULL});
  refused("condim",
          "<mujoco><worldbody>\n<geom name='f' type='plane' size='1 1 .1'/>\n<body>"
          "<freejoint/>\n<geom name='b' size='.1' condim='6'/></body></worldbody>"
          "</mujoco>\n",
          (const char *const[]){"condim.xml:4:", "<geom name=\"b\">", "condim 6", NULL});
  refused("later", "<mujoco>\n<worldbody>\n<body gravcomp='1'/></worldbody></mujoco>\n",
          (const char *const[]){"later.xml:3:", "gravcomp", "2.2.2", NULL});
  refused("weld",
          "<mujoco><worldbody><body name='a'><freejoint/><geom size='.1'/></body>"
          "</worldbody>\n<equality>\n<weld body1='a'/></equality></mujoco>\n",
          (const char *const[]){"weld.xml:3:", "<weld>", "weld", NULL});
  refused("limits",
          "<mujoco><worldbody><body><joint range='0 1'/><geom size='.1'/></body>"
          "</worldbody></mujoco>\n",
          (const char *const[]){"limits.xml:1:", "autolimits", NULL});
}

/* lights, cameras, materials and soft-constraint parameters are ignored with warnings */
static void collect(void *user, const char *msg) {
  char *all = user;
  snprintf(all + strlen(all), 2048 - strlen(all), "%s\n", msg);
}

static void test_ignored(void **state) {
  mr_scene s;
  char all[2048] = "";
  mr_mjcf_options o = mr_mjcf_options_default();
  o.warn = collect, o.warn_user = all;
  const char *path = write_file("ignored.xml", "<mujoco>\n<asset><material name='m'/></asset>\n"
                                               "<worldbody>\n<light/>\n<camera/>\n<geom "
                                               "size='.1' solref='.02 1'/>\n</worldbody>\n"
                                               "</mujoco>\n");
  assert_int_equal(mr_mjcf_load(path, &o, &s, NULL), MR_OK);
  assert_int_equal(s.nwarnings, 2);
  assert_non_null(strstr(all, "ignored.xml:2: ignored, without effect on the dynamics"));
  assert_non_null(strstr(all, "<camera>, <light> (rendering) x2 (line 4)"));
  assert_non_null(strstr(all, "ignored.xml:6: solref"));
  assert_non_null(strstr(s.warning, "solref"));
  mr_scene_free(&s);
}

/* ---- contacts ---- */

/* contacts of three overlapping spheres on three free bodies: (contype, conaffinity) (1, 0),
 * (0, 1) and (2, 2): MuJoCo's rule (ct1 & ca2) || (ct2 & ca1) pairs a with b only; an <exclude>
 * removes a body pair; a <pair> adds one */
static void contacts_of(const char *name, const char *extra, int *ab, int *ac, int *bc) {
  char text[2048];
  snprintf(
      text, sizeof text,
      "<mujoco><option gravity='0 0 0'/><worldbody>\n"
      "<body name='A'><freejoint/><geom name='a' size='.1' contype='1' conaffinity='0'/></body>\n"
      "<body name='B'><freejoint/><geom name='b' size='.1' contype='0' conaffinity='1'/></body>\n"
      "<body name='C'><freejoint/><geom name='c' size='.1' contype='2' conaffinity='2'/></body>\n"
      "</worldbody>%s</mujoco>\n",
      extra);
  mr_scene s;
  load(name, text, &s);
  mr_error e = {MR_OK, ""};
  mr_sim *sim = mr_sim_from_scene(&s, NULL, &e);
  assert_non_null(sim);
  const mr_contact *cs;
  int n;
  assert_int_equal(mr_sim_collide(sim, &cs, &n, &e), MR_OK);
  *ab = *ac = *bc = 0;
  for (int i = 0; i < n; ++i) {
    int g0 = cs[i].geom[0] < cs[i].geom[1] ? cs[i].geom[0] : cs[i].geom[1];
    int g1 = cs[i].geom[0] + cs[i].geom[1] - g0;
    *ab += g0 == 0 && g1 == 1, *ac += g0 == 0 && g1 == 2, *bc += g0 == 1 && g1 == 2;
  }
  mr_sim_free(sim);
  mr_scene_free(&s);
}

static void test_contact_filters(void **state) {
  int ab, ac, bc;
  contacts_of("filters", "", &ab, &ac, &bc);
  assert_true(ab > 0);
  assert_int_equal(ac, 0);
  assert_int_equal(bc, 0);
  contacts_of("exclude", "<contact><exclude body1='B' body2='A'/></contact>", &ab, &ac, &bc);
  assert_int_equal(ab, 0);
  assert_int_equal(ac, 0);
  assert_int_equal(bc, 0);
  contacts_of("pair", "<contact><pair geom1='b' geom2='c'/></contact>", &ab, &ac, &bc);
  assert_true(ab > 0);
  assert_int_equal(ac, 0);
  assert_true(bc > 0);
}

/* friction: the larger of the two; a higher priority's own; condim 1 frictionless */
static void test_friction(void **state) {
  mr_scene s;
  load("friction_rule",
       "<mujoco><worldbody>\n"
       "<geom name='f' type='plane' size='1 1 .1' friction='0.4'/>\n"
       "<body name='A'><freejoint/><geom name='a' size='.1' friction='0.9'/></body>\n"
       "<body name='B'><freejoint/><geom name='b' size='.1' friction='0.6' priority='1'/></body>\n"
       "<body name='C'><freejoint/><geom name='c' size='.1' condim='1'/></body>\n"
       "<body name='D'><freejoint/><geom name='d' size='.1' condim='1'/></body>\n"
       "</worldbody></mujoco>\n",
       &s);
  mr_world *w = mr_scene_compile(&s, NULL);
  double mu, e, R;
  int f = geom(&s, "friction_rule/f"), a = geom(&s, "friction_rule/a");
  int b = geom(&s, "friction_rule/b"), c = geom(&s, "friction_rule/c");
  int d = geom(&s, "friction_rule/d");
  mr_world_pair_params(w, f, a, &mu, &e, &R);
  assert_near(mu, 0.9, 0);
  mr_world_pair_params(w, a, b, &mu, &e, &R);
  assert_near(mu, 0.6, 0);
  mr_world_pair_params(w, c, f, &mu, &e, &R);
  assert_near(mu, 1.0, 0); /* max(1, 3) = 3 */
  mr_world_pair_params(w, c, d, &mu, &e, &R);
  assert_near(mu, 0.0, 0);
  mr_world_free(w);
  mr_scene_free(&s);
}

/* ---- keyframes ---- */

/* a key's free joint: quaternion w x y z → x y z w, linear velocity world → body frame */
static void test_keyframe(void **state) {
  mr_scene s;
  load("keys",
       "<mujoco><worldbody>\n"
       "<body name='b'><freejoint name='root'/><geom size='.1'/></body>\n"
       "</worldbody>\n"
       "<keyframe><key name='turned' qpos='1 2 3 0.7071067811865476 0 0 0.7071067811865476' "
       "qvel='1 0 0 0 0 0.5'/></keyframe></mujoco>\n",
       &s);
  assert_int_equal(mr_scene_set_keyframe(&s, "turned", NULL), MR_OK);
  const double *q = s.q0, *v = s.v0;
  assert_near(q[0], 1, 0);
  assert_near(q[2], 3, 0);
  assert_near(q[5], sqrt(0.5), 1e-15);
  assert_near(q[6], sqrt(0.5), 1e-15);
  /* a quarter turn about z: world x is the body's −y */
  assert_near(v[0], 0, 1e-15);
  assert_near(v[1], -1, 1e-15);
  assert_near(v[5], 0.5, 0);
  mr_error e;
  assert_int_equal(mr_scene_set_keyframe(&s, "nope", &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "keys/turned"));
  mr_scene_free(&s);
}

/* ---- actuators ---- */

/* a hinge carrying a point mass m at distance l, no gravity: a motor of gear g makes τ = g u;
 * semi-implicit Euler integrates q̈ = g u / (m l²) exactly as v_n = n h a, q_n = h² a n(n+1)/2 */
static void test_motor(void **state) {
  mr_scene s;
  load("motor",
       "<mujoco><option gravity='0 0 0' timestep='0.01'/><worldbody>\n"
       "<body><joint name='h' axis='0 0 1'/><geom size='.01' pos='2 0 0' mass='3'/></body>\n"
       "</worldbody><actuator><motor name='m' joint='h' gear='4' ctrllimited='true' "
       "ctrlrange='-1 0.5'/></actuator></mujoco>\n",
       &s);
  mr_sim *sim = mr_sim_from_scene(&s, NULL, NULL);
  const mr_world *w = mr_sim_world(sim);
  assert_int_equal(mr_world_actuator_count(w), 1);
  assert_string_equal(mr_world_actuator_name(w, 0), "motor/m");
  double u = 2.0; /* clamped to 0.5 */
  assert_int_equal(mr_sim_set_ctrl(sim, &u, NULL), MR_OK);
  double I = 3 * 4 + 3 * 0.4 * 1e-4, a = 4 * 0.5 / I, h = 0.01;
  for (int n = 1; n <= 50; ++n)
    mr_sim_step(sim, NULL);
  /* the sphere's own inertia 2/5 m r² is part of I; round-off of 50 steps */
  assert_near(mr_sim_q(sim)[0], h * h * a * 50 * 51 / 2, 1e-12);
  u = NAN;
  mr_error e;
  assert_int_equal(mr_sim_set_ctrl(sim, &u, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "motor/m"));
  mr_sim_free(sim);
  mr_scene_free(&s);
}

/* a vertical slide of mass m with damping under gravity: a position servo (kp, gear g) holds it
 * where kp g² (u/g − q) = m g0, a velocity servo (kv) drives it to v = kv g u / (kv g² + d)
 * (both integrated implicitly: the fixed points are exact) */
static void test_servos(void **state) {
  mr_scene s;
  load("servo",
       "<mujoco><option timestep='0.001'/><worldbody>\n"
       "<body><joint name='z' type='slide' axis='0 0 1' damping='5'/><geom size='.1' mass='2'/>"
       "</body>\n"
       "<body pos='1 0 0'><joint name='x' type='slide' axis='1 0 0' damping='3'/>"
       "<geom size='.1' mass='1'/></body>\n"
       "</worldbody><actuator>\n"
       "<position name='p' joint='z' kp='400' gear='2'/>\n"
       "<velocity name='v' joint='x' kv='10' gear='0.5'/>\n"
       "</actuator></mujoco>\n",
       &s);
  mr_sim *sim = mr_sim_from_scene(&s, NULL, NULL);
  double u[2] = {0.3, 2.0};
  assert_int_equal(mr_sim_set_ctrl(sim, u, NULL), MR_OK);
  for (int n = 0; n < 20000; ++n)
    mr_sim_step(sim, NULL);
  double qz = 0.3 / 2 - 2 * 9.81 / (400 * 4), vx = 10 * 0.5 * 2 / (10 * 0.25 + 3);
  /* 20 s of steps: the transients decay as e^{−t d/m} and faster, below 1e-12 */
  assert_near(mr_sim_q(sim)[0], qz, 1e-10);
  assert_near(mr_sim_v(sim)[1], vx, 1e-10);
  mr_sim_free(sim);
  mr_scene_free(&s);
}

/* a motor on a fixed tendon drives each joint with gear × coefficient */
static void test_tendon_motor(void **state) {
  mr_scene s;
  load("tendon",
       "<mujoco><option gravity='0 0 0'/><worldbody><body>\n"
       "<joint name='a' type='slide' axis='1 0 0'/><joint name='b' type='slide' axis='0 1 0'/>\n"
       "<geom size='.1' mass='1'/></body></worldbody>\n"
       "<tendon><fixed name='t'><joint joint='a' coef='2'/><joint joint='b' coef='-1'/></fixed>"
       "</tendon>\n<actuator><motor joint='a' gear='1'/><motor tendon='t' gear='3'/></actuator>"
       "</mujoco>\n",
       &s);
  mr_sim *sim = mr_sim_from_scene(&s, NULL, NULL);
  double u[2] = {0.5, 1.0};
  assert_int_equal(mr_sim_set_ctrl(sim, u, NULL), MR_OK);
  assert_near(mr_sim_ctrl_torque(sim)[0], 0.5 + 6.0, 0);
  assert_near(mr_sim_ctrl_torque(sim)[1], -3.0, 0);
  mr_sim_free(sim);
  mr_scene_free(&s);
}

/* a limited tendon of two joints holds q_a − q_b >= lower under torques pushing past it */
static void test_tendon_limit(void **state) {
  mr_scene s;
  load("tlimit",
       "<mujoco><option gravity='0 0 0'/><worldbody>\n"
       "<body><joint name='a' type='slide' axis='1 0 0'/><geom size='.1' mass='1'/></body>\n"
       "<body pos='0 1 0'><joint name='b' type='slide' axis='1 0 0'/><geom size='.1' mass='1'/>"
       "</body></worldbody>\n"
       "<tendon><fixed limited='true' range='-0.2 5'><joint joint='a' coef='0.5'/>"
       "<joint joint='b' coef='-0.5'/></fixed></tendon>\n"
       "<actuator><motor joint='a'/><motor joint='b'/></actuator></mujoco>\n",
       &s);
  mr_sim *sim = mr_sim_from_scene(&s, NULL, NULL);
  double u[2] = {-1.0, 1.0};
  assert_int_equal(mr_sim_set_ctrl(sim, u, NULL), MR_OK);
  for (int n = 0; n < 2000; ++n)
    assert_int_equal(mr_sim_step(sim, NULL), MR_OK);
  /* L = (q_a − q_b)/2 >= −0.2: q_a − q_b ends at −0.4 (within the solver's tolerance, the
   * velocities then zero) */
  assert_near(mr_sim_q(sim)[0] - mr_sim_q(sim)[1], -0.4, 1e-6);
  mr_sim_free(sim);
  mr_scene_free(&s);
}

/* a keyframe reset: state, time and the position servo's target */
static void test_reset_keyframe(void **state) {
  mr_scene s;
  load("reset",
       "<mujoco><worldbody><body><joint name='h'/><geom size='.1'/></body></worldbody>\n"
       "<actuator><position joint='h' kp='10'/></actuator>\n"
       "<keyframe><key name='k' time='2' qpos='0.3' qvel='-1' ctrl='0.7'/></keyframe>"
       "</mujoco>\n",
       &s);
  mr_sim *sim = mr_sim_from_scene(&s, NULL, NULL);
  assert_int_equal(mr_sim_reset_keyframe(sim, "reset/k", NULL), MR_OK);
  assert_near(mr_sim_q(sim)[0], 0.3, 0);
  assert_near(mr_sim_v(sim)[0], -1, 0);
  assert_near(mr_sim_time(sim), 2, 0);
  assert_near(mr_sim_ctrl_target(sim)[0], 0.7, 1e-15);
  assert_near(mr_sim_ctrl_kp(sim)[0], 10, 0);
  mr_sim_free(sim);
  mr_scene_free(&s);
}

/* ---- setup ---- */

static int make_dir(void **state) {
  snprintf(dir, sizeof dir, "/tmp/moreau_mjcf_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),       cmocka_unit_test(test_frames),
      cmocka_unit_test(test_fromto),         cmocka_unit_test(test_masses),
      cmocka_unit_test(test_joints),         cmocka_unit_test(test_frictionloss),
      cmocka_unit_test(test_include),        cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_ignored),        cmocka_unit_test(test_contact_filters),
      cmocka_unit_test(test_friction),       cmocka_unit_test(test_keyframe),
      cmocka_unit_test(test_motor),          cmocka_unit_test(test_servos),
      cmocka_unit_test(test_tendon_motor),   cmocka_unit_test(test_tendon_limit),
      cmocka_unit_test(test_reset_keyframe),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
