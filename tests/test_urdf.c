/* URDF loader: small files written here (tree, placements, inertias, limits, fixed-joint
 * merging, document order, every error), then the reference robots of example-robot-data. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "dynamics/model_inertia.h"
#include "moreau/urdf.h"

/* parse xml as "t.urdf" with the given floating option; fails the test on error */
static mr_model *parse_ok(const char *xml, int floating) {
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = floating;
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  if (mr_urdf_parse(xml, "t.urdf", &o, &m, &e)) fail_msg("unexpected error: %s", e.msg);
  assert_non_null(m);
  return m;
}

/* rotation entries and translations from a few floating-point operations on values of at
 * most 3 (cos(π/2) itself rounds to 6.1e-17, not 0): each operation rounds to half an ulp,
 * sums and products of up to 3 terms, so 8 ulp of 3 */
#define TOL (8 * DBL_EPSILON * 3.0)

static const char pendulum[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"pendulum\">\n"
    "  <link name=\"base\">\n"
    "    <inertial><mass value=\"5\"/>\n"
    "      <inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>\n"
    "  </link>\n"
    "  <joint name=\"hinge\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"arm\"/>\n"
    "    <origin xyz=\"0 0 1\" rpy=\"0 0 1.5707963267948966\"/>\n"
    "    <axis xyz=\"0 0 2\"/>\n"
    "    <limit lower=\"-1\" upper=\"2\" velocity=\"3\" effort=\"4\"/>\n"
    "    <dynamics damping=\"0.5\" friction=\"0.1\"/>\n"
    "  </joint>\n"
    "  <link name=\"arm\">\n"
    "    <inertial>\n"
    "      <origin xyz=\"0.1 0.2 0.3\" rpy=\"0 0 1.5707963267948966\"/>\n"
    "      <mass value=\"2\"/>\n"
    "      <inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"2\" iyz=\"0\" izz=\"3\"/>\n"
    "    </inertial>\n"
    "    <visual><geometry><box size=\"9 9 9\"/></geometry></visual>\n"
    "    <collision><geometry><sphere radius=\"0.25\"/></geometry></collision>\n"
    "  </link>\n"
    "</robot>\n";

/* two links, one revolute joint: tree, placement, axis, limits, damping, rotated inertia */
static void test_pendulum(void **state) {
  mr_model *m = parse_ok(pendulum, 0);
  assert_string_equal(m->name, "pendulum");
  assert_int_equal(m->nq, 1);
  assert_int_equal(m->nv, 1);
  assert_int_equal(m->nbodies, 2);
  const mr_body *b = &m->bodies[1];
  assert_string_equal(b->name, "arm");
  assert_string_equal(b->joint.name, "hinge");
  assert_int_equal(b->joint.type, MR_JOINT_REVOLUTE);
  assert_int_equal(b->parent, 0);
  /* the base is fixed to the world: its mass goes to body 0 */
  assert_near(m->bodies[0].inertia.m, 5.0, TOL);
  /* origin: p = (0, 0, 1), R = Rz(π/2) maps x to y */
  assert_near(b->placement.p.v[2], 1.0, TOL);
  assert_near(b->placement.R.m[1][0], 1.0, TOL);
  assert_near(b->placement.R.m[0][1], -1.0, TOL);
  assert_near(b->placement.R.m[2][2], 1.0, TOL);
  /* the axis (0 0 2) is normalised */
  assert_near(b->joint.axis.v[2], 1.0, TOL);
  assert_near(mr_v3_norm(b->joint.axis), 1.0, TOL);
  assert_near(m->lower[0], -1.0, 0.0);
  assert_near(m->upper[0], 2.0, 0.0);
  assert_near(m->velocity_limit[0], 3.0, 0.0);
  assert_near(m->effort_limit[0], 4.0, 0.0);
  assert_near(m->damping[0], 0.5, 0.0);
  /* inertia diag(1, 2, 3) in a frame turned by yaw π/2: its x axis is the link's y axis, so
   * Iyy = 1, Ixx = 2, Izz = 3 in the link frame, no product of inertia */
  assert_near(b->inertia.m, 2.0, 0.0);
  assert_near(b->inertia.c.v[0], 0.1, 0.0);
  assert_near(b->inertia.c.v[1], 0.2, 0.0);
  assert_near(b->inertia.c.v[2], 0.3, 0.0);
  assert_near(b->inertia.I.m[0][0], 2.0, TOL);
  assert_near(b->inertia.I.m[1][1], 1.0, TOL);
  assert_near(b->inertia.I.m[2][2], 3.0, TOL);
  assert_near(b->inertia.I.m[0][1], 0.0, TOL);
  /* one collision sphere (the visual box is skipped), named after the link */
  assert_int_equal(m->ngeoms, 1);
  assert_int_equal(m->geoms[0].type, MR_GEOM_SPHERE);
  assert_int_equal(m->geoms[0].body, 1);
  assert_string_equal(m->geoms[0].name, "arm/0");
  assert_near(m->geoms[0].size[0], 0.25, 0.0);
  /* frames: the base on the world, the arm on its body */
  int fb = mr_model_frame_index(m, "base"), fa = mr_model_frame_index(m, "arm");
  assert_true(fb >= 0 && fa >= 0);
  assert_int_equal(m->frames[fb].body, 0);
  assert_int_equal(m->frames[fa].body, 1);
  mr_model_free(m);
}

/* the floating option adds a free-flyer "root_joint" carrying the root link */
static void test_floating(void **state) {
  mr_model *m = parse_ok(pendulum, 1);
  assert_int_equal(m->nq, 8);
  assert_int_equal(m->nv, 7);
  assert_int_equal(m->nbodies, 3);
  assert_string_equal(m->bodies[1].joint.name, "root_joint");
  assert_int_equal(m->bodies[1].joint.type, MR_JOINT_FREE);
  assert_string_equal(m->bodies[1].name, "base");
  assert_near(m->bodies[1].inertia.m, 5.0, 0.0);
  assert_int_equal(m->bodies[2].parent, 1);
  assert_int_equal(m->bodies[2].joint.idx_q, 7);
  assert_int_equal(m->bodies[2].joint.idx_v, 6);
  assert_near(mr_model_total_mass(m), 7.0, TOL);
  mr_model_free(m);
}

static const char merged[] =
    "<robot name=\"merge\">\n"
    "  <link name=\"base\"/>\n"
    "  <joint name=\"j1\" type=\"continuous\">\n"
    "    <parent link=\"base\"/><child link=\"link1\"/><axis xyz=\"0 1 0\"/>\n"
    "  </joint>\n"
    "  <link name=\"link1\"><inertial><mass value=\"1\"/>\n"
    "    <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial></link>\n"
    "  <joint name=\"weld\" type=\"fixed\">\n"
    "    <parent link=\"link1\"/><child link=\"link2\"/>\n"
    "    <origin xyz=\"0 0 0.5\" rpy=\"0 0 1.5707963267948966\"/>\n"
    "  </joint>\n"
    "  <link name=\"link2\">\n"
    "    <inertial><origin xyz=\"0.1 0 0\"/><mass value=\"2\"/>\n"
    "      <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial>\n"
    "    <collision><origin xyz=\"0 0 0.1\"/><geometry><box size=\"0.2 0.4 0.6\"/></geometry>\n"
    "    </collision>\n"
    "    <collision name=\"tip\"><geometry><capsule radius=\"0.1\" length=\"0.3\"/></geometry>\n"
    "    </collision>\n"
    "  </link>\n"
    "</robot>\n";

/* a fixed joint merges link2 into link1's body: mass, COM and inertia by hand */
static void test_fixed_merge(void **state) {
  mr_model *m = parse_ok(merged, 0);
  assert_int_equal(m->nbodies, 2);
  assert_int_equal(m->nq, 1);
  const mr_body *b = &m->bodies[1];
  assert_string_equal(b->name, "link1");
  assert_int_equal(b->joint.type, MR_JOINT_CONTINUOUS);
  /* continuous: no position limits */
  assert_true(isinf(m->lower[0]) && isinf(m->upper[0]));
  /* link2's COM (0.1, 0, 0) turned by yaw π/2 and lifted by 0.5: (0, 0.1, 0.5) in link1;
   * merged with 1 kg at the origin: m = 3, c = (0, 0.2/3, 1/3) */
  assert_near(b->inertia.m, 3.0, TOL);
  assert_near(b->inertia.c.v[0], 0.0, TOL);
  assert_near(b->inertia.c.v[1], 0.2 / 3.0, TOL);
  assert_near(b->inertia.c.v[2], 1.0 / 3.0, TOL);
  /* two point masses: I = Σ mᵢ (|rᵢ|² 1 − rᵢ rᵢᵀ), rᵢ from the merged COM */
  double r[2][3] = {{0, -0.2 / 3.0, -1.0 / 3.0}, {0, 0.1 - 0.2 / 3.0, 0.5 - 1.0 / 3.0}};
  double mass[2] = {1, 2};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double I = 0.0;
      for (int k = 0; k < 2; ++k) {
        double rr = r[k][0] * r[k][0] + r[k][1] * r[k][1] + r[k][2] * r[k][2];
        I += mass[k] * ((i == j) * rr - r[k][i] * r[k][j]);
      }
      assert_near(b->inertia.I.m[i][j], I, TOL);
    }
  /* link2 is a frame of body 1 at the fixed joint's origin */
  int f = mr_model_frame_index(m, "link2");
  assert_true(f >= 0);
  assert_int_equal(m->frames[f].body, 1);
  assert_near(m->frames[f].placement.p.v[2], 0.5, TOL);
  assert_near(m->frames[f].placement.R.m[1][0], 1.0, TOL);
  /* its geometry moved onto body 1 with the composed placement; full sizes halved */
  assert_int_equal(m->ngeoms, 2);
  const mr_geom *g = &m->geoms[0];
  assert_string_equal(g->name, "link2/0");
  assert_int_equal(g->body, 1);
  assert_int_equal(g->type, MR_GEOM_BOX);
  assert_near(g->placement.p.v[2], 0.6, TOL);
  assert_near(g->placement.R.m[1][0], 1.0, TOL);
  assert_near(g->size[0], 0.1, TOL);
  assert_near(g->size[1], 0.2, TOL);
  assert_near(g->size[2], 0.3, TOL);
  assert_string_equal(m->geoms[1].name, "tip");
  assert_int_equal(m->geoms[1].type, MR_GEOM_CAPSULE);
  assert_near(m->geoms[1].size[0], 0.1, TOL);
  assert_near(m->geoms[1].size[1], 0.15, TOL);
  mr_model_free(m);
}

/* children are visited in the document order of their joints, depth first, whatever the
 * order of the links and the alphabetical order of the names */
/* a unit mass with a unit inertia: every moving joint must carry inertia */
#define UNIT_INERTIAL                                                                              \
  "<inertial><mass value=\"1\"/>"                                                                   \
  "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>"

static void test_document_order(void **state) {
  static const char xml[] =
      "<robot name=\"order\">\n"
      "  <link name=\"c2\">" UNIT_INERTIAL "</link><link name=\"c1\">" UNIT_INERTIAL "</link>\n"
      "  <link name=\"c3\">" UNIT_INERTIAL "</link><link name=\"base\"/>\n"
      "  <joint name=\"zeta\" type=\"prismatic\"><parent link=\"base\"/><child link=\"c1\"/>\n"
      "  </joint>\n"
      "  <joint name=\"alpha\" type=\"revolute\"><parent link=\"base\"/><child link=\"c2\"/>\n"
      "  </joint>\n"
      "  <joint name=\"mid\" type=\"revolute\"><parent link=\"c1\"/><child link=\"c3\"/>\n"
      "  </joint>\n"
      "</robot>\n";
  mr_model *m = parse_ok(xml, 0);
  static const char *const names[] = {"zeta", "mid", "alpha"};
  static const int parents[] = {0, 1, 0};
  assert_int_equal(m->nbodies, 4);
  for (int i = 0; i < 3; ++i) {
    assert_string_equal(m->bodies[i + 1].joint.name, names[i]);
    assert_int_equal(m->bodies[i + 1].parent, parents[i]);
    assert_int_equal(m->bodies[i + 1].joint.idx_q, i);
  }
  /* no <limit> on a revolute or prismatic joint: unlimited, default axis x */
  assert_true(isinf(m->lower[2]) && isinf(m->upper[2]) && isinf(m->effort_limit[2]));
  assert_near(m->bodies[1].joint.axis.v[0], 1.0, 0.0);
  mr_model_free(m);
}

/* a root link called world is the world: its fixed child is fixed to it */
static void test_world_root(void **state) {
  static const char xml[] =
      "<robot name=\"w\">\n"
      "  <link name=\"world\"/>\n"
      "  <joint name=\"anchor\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/>\n"
      "    <origin xyz=\"1 2 3\"/></joint>\n"
      "  <link name=\"base\"/>\n"
      "  <joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/>\n"
      "  </joint>\n"
      "  <link name=\"arm\"><inertial><mass value=\"1\"/>\n"
      "    <inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>\n"
      "  </link>\n"
      "</robot>\n";
  mr_model *m = parse_ok(xml, 0);
  assert_int_equal(m->nbodies, 2);
  assert_int_equal(m->bodies[1].parent, 0);
  assert_near(m->bodies[1].placement.p.v[0], 1.0, 0.0);
  assert_near(m->bodies[1].placement.p.v[2], 3.0, 0.0);
  assert_true(mr_model_frame_index(m, "world") >= 0);
  assert_int_equal(m->frames[mr_model_frame_index(m, "base")].body, 0);
  mr_model_free(m);
}

/* ---- errors ---- */

typedef struct {
  const char *what;
  const char *xml;
  mr_status status;
  const char *line;  /* "t.urdf:N:" */
  const char *value; /* the offending value, quoted in the message */
} error_case;

#define HEAD "<robot name=\"r\">\n"
#define ROOT "<link name=\"a\"/>\n"
#define INERTIA "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/>"
#define JOINT(name, type, parent, child)                                                           \
  "<joint name=\"" name "\" type=\"" type "\"><parent link=\"" parent "\"/><child link=\"" child   \
  "\"/></joint>\n"

static const error_case error_cases[] = {
    {"malformed XML", HEAD ROOT "<link name=\"b\">\n</robot>\n", MR_ERR_PARSE,
     "t.urdf:4:", "malformed XML"},
    {"missing mass", HEAD "<link name=\"a\">\n<inertial>" INERTIA "</inertial></link></robot>",
     MR_ERR_PARSE, "t.urdf:3:", "<mass>"},
    {"missing inertia",
     HEAD "<link name=\"a\">\n<inertial><mass value=\"1\"/></inertial></link>"
          "</robot>",
     MR_ERR_PARSE, "t.urdf:3:", "<inertia>"},
    {"non-numeric mass",
     HEAD "<link name=\"a\"><inertial>\n<mass value=\"heavy\"/>" INERTIA "</inertial></link>"
          "</robot>",
     MR_ERR_PARSE, "t.urdf:3:", "heavy"},
    {"non-finite inertia",
     HEAD "<link name=\"a\"><inertial><mass value=\"1\"/>\n"
          "<inertia ixx=\"nan\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/>"
          "</inertial></link></robot>",
     MR_ERR_PARSE, "t.urdf:3:", "nan"},
    {"non-finite origin",
     HEAD ROOT "<link name=\"b\"/>\n<joint name=\"j\" type=\"fixed\">\n"
               "<parent link=\"a\"/><child link=\"b\"/>\n"
               "<origin xyz=\"0 inf 0\"/></joint></robot>",
     MR_ERR_PARSE, "t.urdf:6:", "0 inf 0"},
    {"two components for xyz",
     HEAD ROOT "<link name=\"b\"/>\n<joint name=\"j\" type=\"fixed\">\n"
               "<parent link=\"a\"/><child link=\"b\"/>\n"
               "<origin xyz=\"1 2\"/></joint></robot>",
     MR_ERR_PARSE, "t.urdf:6:", "\"1 2\": expected 3 numbers, got 2"},
    {"negative mass",
     HEAD "<link name=\"a\"><inertial>\n\n<mass value=\"-1.5\"/>" INERTIA "</inertial></link>"
          "</robot>",
     MR_ERR_INVALID, "t.urdf:4:", "-1.5"},
    {"unknown joint type",
     HEAD ROOT "<link name=\"b\"/>\n" JOINT("j", "hinge", "a", "b") "</robot>", MR_ERR_INVALID,
     "t.urdf:4:", "hinge"},
    {"planar joint", HEAD ROOT "<link name=\"b\"/>\n" JOINT("j", "planar", "a", "b") "</robot>",
     MR_ERR_UNSUPPORTED, "t.urdf:4:", "planar"},
    {"missing parent link",
     HEAD ROOT "<link name=\"b\"/>\n" JOINT("j", "fixed", "nope", "b") "</robot>", MR_ERR_INVALID,
     "t.urdf:4:", "nope"},
    {"missing child link", HEAD ROOT "\n" JOINT("j", "fixed", "a", "ghost") "</robot>",
     MR_ERR_INVALID, "t.urdf:4:", "ghost"},
    {"child of two joints",
     HEAD ROOT "<link name=\"b\"/><link name=\"c\"/>\n" JOINT("j1", "fixed", "a", "b")
         JOINT("j2", "fixed", "c", "b") "</robot>",
     MR_ERR_INVALID, "t.urdf:5:", "\"b\""},
    {"loop",
     HEAD ROOT "<link name=\"b\"/><link name=\"c\"/>\n" JOINT("j1", "revolute", "b", "c")
         JOINT("j2", "revolute", "c", "b") "</robot>",
     MR_ERR_INVALID, "t.urdf:5:", "loop"},
    {"loop without a root",
     HEAD "<link name=\"a\"/><link name=\"b\"/>\n" JOINT("j1", "revolute", "a", "b")
         JOINT("j2", "revolute", "b", "a") "</robot>",
     MR_ERR_INVALID, "t.urdf:3:", "loop"},
    {"two roots", HEAD ROOT "\n<link name=\"b\"/></robot>", MR_ERR_INVALID, "t.urdf:4:", "\"b\""},
    {"duplicate link", HEAD ROOT "\n\n<link name=\"a\"/></robot>", MR_ERR_INVALID,
     "t.urdf:5:", "\"a\""},
    {"duplicate joint",
     HEAD ROOT "<link name=\"b\"/><link name=\"c\"/>\n" JOINT("j", "fixed", "a", "b")
         JOINT("j", "fixed", "a", "c") "</robot>",
     MR_ERR_INVALID, "t.urdf:5:", "\"j\""},
    /* a repeated joint and a repeated link: the repetition that comes first in the file */
    {"duplicate joint, then link",
     HEAD ROOT "<link name=\"b\"/><link name=\"c\"/>\n" JOINT("j", "fixed", "a", "b")
         JOINT("j", "fixed", "a", "c") "<link name=\"b\"/></robot>",
     MR_ERR_INVALID, "t.urdf:5:", "\"j\""},
    {"duplicate link, then joint",
     HEAD ROOT "<link name=\"b\"/>\n<link name=\"b\"/>\n" JOINT("j", "fixed", "a", "b")
         JOINT("j", "fixed", "a", "b") "</robot>",
     MR_ERR_INVALID, "t.urdf:4:", "\"b\""},
    {"no robot element", "<?xml version=\"1.0\"?>\n<robt name=\"r\"/>\n", MR_ERR_PARSE,
     "t.urdf:2:", "robt"},
    {"bad limit",
     HEAD ROOT "<link name=\"b\"/>\n<joint name=\"j\" type=\"revolute\">"
               "<parent link=\"a\"/><child link=\"b\"/>\n<limit lower=\"-1x\" upper=\"1\"/>"
               "</joint></robot>",
     MR_ERR_PARSE, "t.urdf:5:", "-1x"},
    {"zero axis",
     HEAD ROOT "<link name=\"b\"/>\n<joint name=\"j\" type=\"revolute\">"
               "<parent link=\"a\"/><child link=\"b\"/>\n<axis xyz=\"0 0 0\"/></joint></robot>",
     MR_ERR_INVALID, "t.urdf:5:", "0 0 0"},
    {"missing mesh",
     HEAD "<link name=\"a\"><collision><geometry>\n"
          "<mesh filename=\"package://nopkg/meshes/x.stl\"/></geometry></collision></link>"
          "</robot>",
     MR_ERR_IO, "t.urdf:3:", "package://nopkg/meshes/x.stl"},
    {"negative sphere radius",
     HEAD "<link name=\"a\"><collision><geometry>\n"
          "<sphere radius=\"-2\"/></geometry></collision></link></robot>",
     MR_ERR_INVALID, "t.urdf:3:", "-2"},
    {"empty text", "", MR_ERR_PARSE, "t.urdf:", "malformed XML"},
    {"indefinite inertia",
     HEAD "<link name=\"a\"><inertial><mass value=\"1\"/>\n"
          "<inertia ixx=\"-1\" ixy=\"0\" ixz=\"0\" iyy=\"2\" iyz=\"0\" izz=\"3\"/>"
          "</inertial></link></robot>",
     MR_ERR_INVALID, "t.urdf:3:", "link \"a\": inertia is not positive semi-definite"},
    {"triangle inequality",
     HEAD "<link name=\"a\"><inertial><mass value=\"1\"/>\n"
          "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"3\"/>"
          "</inertial></link></robot>",
     MR_ERR_INVALID, "t.urdf:3:", "short of C by 1, 33.3 % of C); to use the nearest"},
    {"joint without inertia",
     HEAD ROOT "<link name=\"b\"/>\n" JOINT("j", "revolute", "a", "b") "</robot>",
     MR_ERR_INVALID, "t.urdf:4:", "joint \"j\" (link \"b\"): the links it moves carry no mass"},
    {"mimic of a missing joint",
     HEAD "<link name=\"a\">" UNIT_INERTIAL "</link><link name=\"b\">" UNIT_INERTIAL "</link>\n"
          "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
          "<mimic joint=\"ghost\" multiplier=\"2\"/></joint></robot>",
     MR_ERR_INVALID, "t.urdf:4:", "joint \"j\": <mimic> joint=\"ghost\" does not exist"},
    {"mimic of itself",
     HEAD "<link name=\"a\">" UNIT_INERTIAL "</link><link name=\"b\">" UNIT_INERTIAL "</link>\n"
          "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
          "<mimic joint=\"j\"/></joint></robot>",
     MR_ERR_INVALID, "t.urdf:4:", "not two distinct 1-dof joints"},
    {"massless free-flyer", HEAD ROOT "<link name=\"b\"/>\n" JOINT("j", "floating", "a", "b")
     "</robot>", MR_ERR_INVALID, "t.urdf:4:", "'lock_joints: [j]'"},
};

/* every malformed or invalid file is refused with its status, line and offending value */
static void test_errors(void **state) {
  for (size_t i = 0; i < sizeof error_cases / sizeof error_cases[0]; ++i) {
    const error_case *c = &error_cases[i];
    mr_urdf_options o = mr_urdf_options_default();
    mr_model *m = (mr_model *)&o; /* must be reset to NULL */
    mr_error e = {MR_OK, ""};
    mr_status st = mr_urdf_parse(c->xml, "t.urdf", &o, &m, &e);
    if (st != c->status || m != NULL || !strstr(e.msg, c->line) || !strstr(e.msg, c->value))
      fail_msg("%s: status %s (expected %s), message \"%s\" (expected %s ... %s)", c->what,
               mr_status_name(st), mr_status_name(c->status), e.msg, c->line, c->value);
  }
}

/* collects the loader's warnings */
typedef struct {
  int n;
  char last[2 * MR_ERROR_MSG_MAX];
} warnings;

static void on_warning(void *user, const char *msg) {
  warnings *w = user;
  w->n++;
  snprintf(w->last, sizeof w->last, "%s", msg);
}

/* the link "b" of a two-link file with the given <inertia> attributes, parsed with o */
static mr_status parse_inertia(const char *attrs, mr_urdf_options *o, warnings *w, mr_model **m,
                               mr_error *e) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<robot name=\"r\"><link name=\"a\"/>\n"
           "<joint name=\"j\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
           "<axis xyz=\"0 0 1\"/></joint>\n"
           "<link name=\"b\"><inertial><mass value=\"2\"/>\n<inertia %s/></inertial></link>"
           "</robot>",
           attrs);
  memset(w, 0, sizeof *w);
  o->warn = on_warning, o->warn_user = w;
  return mr_urdf_parse(xml, "t.urdf", o, m, e);
}

/* the principal moments of body 1 */
static void moments(const mr_model *m, double lam[3]) {
  mr_mat3 R;
  mr_inertia_principal(&m->bodies[1].inertia.I, lam, &R);
}

/* round-off clamped with a warning; a tensor that is not physical repaired with inertia_fix to
 * the Frobenius-nearest one, by hand: the projection of the principal moments onto the cone
 * A + B >= C keeps the axes, (1, 1, 3) -> (4/3, 4/3, 8/3) (one face: x - (n·x/3) n with
 * n = (1, 1, -1)), (-1, 2, 3) -> (0, 5/2, 5/2) (two faces, multipliers 3/4 and 1/4 >= 0); Jacobi
 * on a diagonal tensor is exact, so only the projection's few roundings remain (1e-15) */
static void test_inertia_policy(void **state) {
  mr_urdf_options o = mr_urdf_options_default();
  warnings w;
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  double lam[3];
  assert_int_equal(parse_inertia("ixx=\"-5.4e-20\" ixy=\"1e-13\" ixz=\"0\" iyy=\"1\" iyz=\"0\" "
                                 "izz=\"1\"",
                                 &o, &w, &m, &e),
                   MR_OK);
  assert_int_equal(w.n, 1);
  assert_non_null(strstr(w.last, "t.urdf:4: link \"b\": inertia entries ixx=-5.4e-20, ixy=1e-13"));
  assert_true(m->bodies[1].inertia.I.m[0][0] == 0.0 && m->bodies[1].inertia.I.m[0][1] == 0.0);
  mr_model_free(m);
  o.inertia_fix = 1;
  assert_int_equal(parse_inertia("ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"3\"", &o,
                                 &w, &m, &e),
                   MR_OK);
  assert_int_equal(w.n, 1);
  assert_non_null(strstr(w.last, "t.urdf:4: link \"b\": inertia breaks the triangle inequality"));
  assert_non_null(strstr(w.last, "principal moments 1.33333, 1.33333, 2.66667"));
  moments(m, lam);
  assert_near(lam[0], 4.0 / 3, 1e-15);
  assert_near(lam[1], 4.0 / 3, 1e-15);
  assert_near(lam[2], 8.0 / 3, 1e-15);
  assert_near(m->bodies[1].inertia.I.m[2][2], 8.0 / 3, 1e-15); /* the same axes */
  mr_model_free(m);
  assert_int_equal(parse_inertia("ixx=\"3\" ixy=\"0\" ixz=\"0\" iyy=\"-1\" iyz=\"0\" izz=\"2\"", &o,
                                 &w, &m, &e),
                   MR_OK);
  assert_non_null(strstr(w.last, "is not positive semi-definite"));
  moments(m, lam);
  assert_near(lam[0], 0.0, 1e-15);
  assert_near(lam[1], 2.5, 1e-15);
  assert_near(lam[2], 2.5, 1e-15);
  assert_near(m->bodies[1].inertia.I.m[1][1], 0.0, 1e-15);
  mr_model_free(m);
  /* a physical tensor is left as it is, without a warning (a thin rod: A + B = C exactly) */
  assert_int_equal(parse_inertia("ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"", &o,
                                 &w, &m, &e),
                   MR_OK);
  assert_int_equal(w.n, 0);
  mr_model_free(m);
}

/* joints without inertia: locked by name or by lock_massless (with a warning), an unknown name
 * refused; the floating option on a file rooted at world is ignored with a warning */
static void test_locks(void **state) {
  static const char xml[] =
      "<robot name=\"r\"><link name=\"world\"/>\n"
      "<link name=\"base\">" UNIT_INERTIAL "</link>\n"
      "<link name=\"finger\"/>\n" JOINT("mount", "revolute", "world", "base")
          JOINT("grip", "prismatic", "base", "finger") "</robot>";
  mr_urdf_options o = mr_urdf_options_default();
  warnings w = {0, ""};
  o.warn = on_warning, o.warn_user = &w;
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  assert_int_equal(mr_urdf_parse(xml, "t.urdf", &o, &m, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "t.urdf:5: joint \"grip\" (link \"finger\"): the links it moves "
                                "carry no mass or no inertia about its axis (1 joint of"));
  o.lock_massless = 1, o.floating = 1;
  assert_int_equal(mr_urdf_parse(xml, "t.urdf", &o, &m, &e), MR_OK);
  assert_int_equal(m->nv, 1);
  assert_int_equal(w.n, 2);
  assert_non_null(strstr(w.last, "t.urdf:5: joint \"grip\" (link \"finger\")"));
  mr_model_free(m);
  w.n = 0;
  const char *locks[] = {"grip", "nope"};
  o.lock_massless = 0, o.floating = 0, o.lock_joints = locks, o.nlock_joints = 1;
  assert_int_equal(mr_urdf_parse(xml, "t.urdf", &o, &m, &e), MR_OK);
  assert_int_equal(m->nv, 1);
  assert_int_equal(w.n, 0);
  assert_true(mr_model_frame_index(m, "finger") >= 0);
  mr_model_free(m);
  o.nlock_joints = 2;
  assert_int_equal(mr_urdf_parse(xml, "t.urdf", &o, &m, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "lock_joints: the robot has no joint \"nope\""));
}

/* random byte edits of valid files never crash nor leak (under make check); every refusal comes
 * with a message and no model */
static void test_mutations(void **state) {
  static const char *const sources[] = {pendulum, merged};
  static const char alphabet[] = "<>/=\" \n-0123456789.eE+xnaif,;&";
  uint64_t seed = 7;
  char buf[4096];
  for (int k = 0; k < 3000; ++k) {
    const char *src = sources[k % 2];
    size_t n = strlen(src);
    memcpy(buf, src, n + 1);
    int edits = 1 + (int)(test_rand_u64(&seed) % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = (size_t)(test_rand_u64(&seed) % n);
      buf[at] = alphabet[test_rand_u64(&seed) % (sizeof alphabet - 1)];
    }
    mr_model *m = NULL;
    mr_error err = {MR_OK, ""};
    mr_status st = mr_urdf_parse(buf, "t.urdf", NULL, &m, &err);
    if (st) {
      assert_null(m);
      assert_true(strncmp(err.msg, "t.urdf:", 7) == 0);
    } else {
      assert_non_null(m);
      /* a tree: every body's parent comes before it */
      for (int i = 1; i < m->nbodies; ++i)
        assert_true(m->bodies[i].parent >= 0 && m->bodies[i].parent < i);
      mr_model_free(m);
    }
  }
}

/* without collision geometry, meshes are not looked for */
static void test_no_collision(void **state) {
  static const char xml[] = "<robot name=\"r\"><link name=\"a\"><collision><geometry>\n"
                            "<mesh filename=\"package://nopkg/x.stl\"/></geometry></collision>"
                            "</link></robot>";
  mr_urdf_options o = mr_urdf_options_default();
  o.collision = 0;
  mr_model *m = NULL;
  assert_int_equal(mr_urdf_parse(xml, "t.urdf", &o, &m, NULL), MR_OK);
  assert_int_equal(m->ngeoms, 0);
  mr_model_free(m);
  /* and a NULL error is allowed on failure too */
  assert_int_equal(mr_urdf_parse(xml, "t.urdf", NULL, &m, NULL), MR_ERR_IO);
  assert_null(m);
}

/* a file that does not exist is an I/O error naming it */
static void test_missing_file(void **state) {
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  assert_int_equal(mr_urdf_load("/nonexistent/robot.urdf", NULL, &m, &e), MR_ERR_IO);
  assert_null(m);
  assert_non_null(strstr(e.msg, "/nonexistent/robot.urdf"));
}

/* relative and file:// mesh paths resolve against the URDF's directory */
static void test_mesh_paths(void **state) {
  char dir[] = "/tmp/moreau_urdf_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char urdf[256], mesh[256];
  snprintf(urdf, sizeof urdf, "%s/r.urdf", dir);
  snprintf(mesh, sizeof mesh, "%s/part.stl", dir);
  /* a tetrahedron: vertices (0 0 0), (1 0 0), (0 1 0), (0 0 1), outward normals */
  FILE *f = fopen(mesh, "w");
  assert_non_null(f);
  static const int tri[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  fprintf(f, "solid t\n");
  for (int t = 0; t < 4; ++t) {
    fprintf(f, "facet normal 0 0 0\nouter loop\n");
    for (int k = 0; k < 3; ++k)
      fprintf(f, "vertex %d %d %d\n", tri[t][k] == 1, tri[t][k] == 2, tri[t][k] == 3);
    fprintf(f, "endloop\nendfacet\n");
  }
  fprintf(f, "endsolid t\n");
  fclose(f);
  f = fopen(urdf, "w");
  assert_non_null(f);
  fprintf(f,
          "<robot name=\"r\"><link name=\"a\">\n"
          "<collision><geometry><mesh filename=\"part.stl\" scale=\"2 -3 4\"/></geometry>"
          "</collision>\n"
          "<collision><geometry><mesh filename=\"file://%s\"/></geometry></collision>\n"
          "</link></robot>\n",
          mesh);
  fclose(f);
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  mr_status st = mr_urdf_load(urdf, NULL, &m, &e);
  if (st) fail_msg("%s", e.msg);
  assert_int_equal(m->ngeoms, 2);
  assert_string_equal(m->geoms[0].mesh_file, mesh);
  assert_string_equal(m->geoms[1].mesh_file, mesh);
  assert_near(m->geoms[0].mesh_scale.v[2], 4.0, 0.0);
  /* the meshes are read: the mirrored one spans y in [-3, 0] with outward normals (its signed
     volume 2 · 3 · 4 / 6 = 4, exact integers) */
  const mr_mesh *me = m->geoms[0].mesh;
  assert_non_null(me);
  double vol = 0, ymin = 0;
  for (int t = 0; t < me->nface; ++t) {
    const double *a = &me->vert[3 * me->face[3 * t]], *b = &me->vert[3 * me->face[3 * t + 1]],
                 *c = &me->vert[3 * me->face[3 * t + 2]];
    vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
            a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
  }
  for (int i = 0; i < me->nvert; ++i)
    ymin = fmin(ymin, me->vert[3 * i + 1]);
  /* each face's triple product of small-integer coordinates is exact; its quotient by 6 and
   * the running sum round to half an ulp of at most 4 each */
  assert_near(vol, 4.0, me->nface * DBL_EPSILON * 4.0);
  assert_near(ymin, -3.0, 0);
  mr_model_free(m);
  /* a mesh that does not read: the URDF file and line, the filename, then the mesh's own error */
  f = fopen(mesh, "w");
  fprintf(f, "solid t\nfacet normal 0 0 0\nouter loop\nvertex 0 0 nan\n");
  fclose(f);
  assert_int_equal(mr_urdf_load(urdf, NULL, &m, &e), MR_ERR_PARSE);
  char expect[1024];
  snprintf(expect, sizeof expect, "%s:2: <mesh> filename=\"part.stl\": %s:4: bad number 'nan'",
           urdf, mesh);
  if (!strstr(e.msg, expect)) fail_msg("%s", e.msg);
  remove(mesh), remove(urdf), remove(dir);
}

/* ---- reference robots ---- */

/* the sum of every <mass value="..."> of a file, read by a plain text scan */
static double file_mass(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  double sum = 0.0;
  for (const char *s = text; (s = strstr(s, "<mass value=\"")); ++s)
    sum += strtod(s + strlen("<mass value=\""), NULL);
  return sum;
}

typedef struct {
  const char *file; /* under example-robot-data/robots */
  int floating, nq, nv, nbodies;
  const char *const *joints; /* the moving joints in order, NULL-terminated */
  int inertia_fix;           /* the file breaks A + B >= C on some links (docs/robots.md) */
} robot_case;

static const char *const solo_joints[] = {"root_joint", "FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA",
                                          "FR_HFE",     "FR_KFE", "HL_HAA", "HL_HFE", "HL_KFE",
                                          "HR_HAA",     "HR_HFE", "HR_KFE", NULL};
/* depth first: each gripper follows its own arm, although the file lists both arms first */
static const char *const talos_joints[] = {"root_joint",          "torso_1_joint",
                                           "torso_2_joint",       "head_1_joint",
                                           "head_2_joint",        "arm_left_1_joint",
                                           "arm_left_2_joint",    "arm_left_3_joint",
                                           "arm_left_4_joint",    "arm_left_5_joint",
                                           "arm_left_6_joint",    "arm_left_7_joint",
                                           "gripper_left_joint",  "arm_right_1_joint",
                                           "arm_right_2_joint",   "arm_right_3_joint",
                                           "arm_right_4_joint",   "arm_right_5_joint",
                                           "arm_right_6_joint",   "arm_right_7_joint",
                                           "gripper_right_joint", "leg_left_1_joint",
                                           "leg_left_2_joint",    "leg_left_3_joint",
                                           "leg_left_4_joint",    "leg_left_5_joint",
                                           "leg_left_6_joint",    "leg_right_1_joint",
                                           "leg_right_2_joint",   "leg_right_3_joint",
                                           "leg_right_4_joint",   "leg_right_5_joint",
                                           "leg_right_6_joint",   NULL};
static const char *const allegro_joints[] = {
    "joint_0.0",  "joint_1.0",  "joint_2.0",  "joint_3.0",  "joint_4.0",  "joint_5.0",
    "joint_6.0",  "joint_7.0",  "joint_8.0",  "joint_9.0",  "joint_10.0", "joint_11.0",
    "joint_12.0", "joint_13.0", "joint_14.0", "joint_15.0", NULL};

static const robot_case robots[] = {
    {"solo_description/robots/solo12.urdf", 1, 19, 18, 14, solo_joints, 0},
    {"talos_data/robots/talos_reduced.urdf", 1, 39, 38, 34, talos_joints, 1},
    {"allegro_hand_description/urdf/allegro_right_hand.urdf", 0, 16, 16, 17, allegro_joints, 1},
};

static mr_model *load_robot(const char *ref, const robot_case *r, char *path, size_t size) {
  /* the package example-robot-data lives in the reference folder */
  char pkg[4096];
  snprintf(pkg, sizeof pkg, "%s", ref);
  char *slash = strrchr(pkg, '/');
  assert_non_null(slash);
  *slash = '\0';
  const char *roots[] = {pkg};
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = r->floating;
  o.inertia_fix = r->inertia_fix;
  o.package_roots = roots;
  o.npackage_roots = 1;
  snprintf(path, size, "%s/robots/%s", ref, r->file);
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  if (mr_urdf_load(path, &o, &m, &e)) fail_msg("%s", e.msg);
  return m;
}

/* sizes, joint order, mass and meshes of the reference robots */
static void test_reference_robots(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  for (size_t k = 0; k < sizeof robots / sizeof robots[0]; ++k) {
    const robot_case *r = &robots[k];
    char path[4096];
    mr_model *m = load_robot(ref, r, path, sizeof path);
    assert_int_equal(m->nq, r->nq);
    assert_int_equal(m->nv, r->nv);
    assert_int_equal(m->nbodies, r->nbodies);
    for (int i = 1; i < m->nbodies; ++i) {
      assert_non_null(r->joints[i - 1]);
      assert_string_equal(m->bodies[i].joint.name, r->joints[i - 1]);
    }
    assert_null(r->joints[m->nbodies - 1]);
    /* the masses of the file add up, wherever fixed joints put them (a fixed base's mass sits
     * on the world body); both sides add at most 100 links' masses in different orders, each
     * addition rounding to half an ulp of the total: 100 ulp */
    double total = mr_model_total_mass(m) + m->bodies[0].inertia.m;
    assert_near(total, file_mass(path), 100 * DBL_EPSILON * file_mass(path));
    /* every mesh resolved to a file that opens */
    for (int g = 0; g < m->ngeoms; ++g) {
      if (m->geoms[g].type != MR_GEOM_MESH) continue;
      FILE *f = fopen(m->geoms[g].mesh_file, "rb");
      if (!f) fail_msg("%s: mesh %s does not open", r->file, m->geoms[g].mesh_file);
      fclose(f);
    }
    mr_model_free(m);
  }
}

/* Solo-12's feet are frames on the lower legs, and its collision meshes are found */
static void test_solo_feet(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char path[4096];
  mr_model *m = load_robot(ref, &robots[0], path, sizeof path);
  static const char *const feet[] = {"FR_FOOT", "FL_FOOT", "HR_FOOT", "HL_FOOT"};
  for (int i = 0; i < 4; ++i) {
    int f = mr_model_frame_index(m, feet[i]);
    if (f < 0) fail_msg("no frame %s", feet[i]);
    char leg[16];
    snprintf(leg, sizeof leg, "%.2s_LOWER_LEG", feet[i]);
    assert_string_equal(m->bodies[m->frames[f].body].name, leg);
  }
  /* every one of the file's 17 <collision> elements is a <mesh> */
  int meshes = 0;
  for (int g = 0; g < m->ngeoms; ++g)
    meshes += m->geoms[g].type == MR_GEOM_MESH;
  assert_int_equal(meshes, 17);
  mr_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pendulum),         cmocka_unit_test(test_floating),
      cmocka_unit_test(test_fixed_merge),      cmocka_unit_test(test_document_order),
      cmocka_unit_test(test_world_root),       cmocka_unit_test(test_errors),
      cmocka_unit_test(test_mutations),        cmocka_unit_test(test_no_collision),
      cmocka_unit_test(test_missing_file),     cmocka_unit_test(test_mesh_paths),
      cmocka_unit_test(test_reference_robots), cmocka_unit_test(test_solo_feet),
      cmocka_unit_test(test_inertia_policy),   cmocka_unit_test(test_locks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
