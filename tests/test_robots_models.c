/* The project's robot models under robots/: Solo-12, TALOS (reduced) and the Allegro right hand.
 *
 * On the project files alone: the URDF and SRDF are well-formed XML (libxml2), the URDF loads with
 * the expected nq, nv and number of revolute joints, every collision shape is a primitive, the
 * contact primitives the README promises are where it says (Solo's foot spheres, TALOS's foot
 * boxes, Allegro's fingertip spheres), every SRDF posture names existing joints with values
 * within their limits, Solo's "standing" sets its foot spheres on the ground and TALOS's
 * "half_sitting" its sole frames.
 *
 * Against the example-robot-data reference URDF each model was written from, loaded by the same
 * loader (skipped when the reference folder is absent): the same bodies, joints (names, order,
 * types, axes), limits and damping, the same body placements and inertias, the same total mass,
 * and at 20 random configurations the same world placement of every body and frame and the same
 * joint-space inertia matrix M(q). */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "moreau/dynamics.h"
#include "moreau/urdf.h"

enum { NQ_MAX = 64, POSTURE_MAX = 64 };

typedef struct {
  const char *urdf, *srdf; /* project files, relative to the repository root */
  const char *reference;   /* the URDF it was written from, under example-robot-data */
  const char *posture;     /* a posture its SRDF must define */
  int floating, nq, nv, nrevolute;
} robot_case;

static const robot_case solo = {"robots/solo12/solo12.urdf",
                                "robots/solo12/solo12.srdf",
                                "robots/solo_description/robots/solo12.urdf",
                                "standing",
                                1,
                                19,
                                18,
                                12};
static const robot_case talos = {"robots/talos/talos.urdf",
                                 "robots/talos/talos.srdf",
                                 "robots/talos_data/robots/talos_reduced.urdf",
                                 "half_sitting",
                                 1,
                                 39,
                                 38,
                                 32};
static const robot_case talos_box = {"robots/talos/talos.urdf",
                                     "robots/talos/talos.srdf",
                                     "robots/talos_data/robots/talos_reduced_box.urdf",
                                     "half_sitting",
                                     1,
                                     39,
                                     38,
                                     32};
static const robot_case allegro = {"robots/allegro/allegro_right_hand.urdf",
                                   "robots/allegro/allegro_right_hand.srdf",
                                   "robots/allegro_hand_description/urdf/allegro_right_hand.urdf",
                                   "open",
                                   0,
                                   16,
                                   16,
                                   16};

/* ---- loading ---- */

/* parse an XML file; fails the test when it is not well-formed or its root is not <robot> */
static xmlDoc *read_xml(const char *path) {
  xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) fail_msg("%s: not well-formed XML", path);
  xmlNode *root = xmlDocGetRootElement(doc);
  assert_non_null(root);
  assert_string_equal((const char *)root->name, "robot");
  return doc;
}

static mr_model *load_urdf(const char *path, int floating, int collision,
                           const char *package_root) {
  const char *roots[1] = {package_root};
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = floating;
  /* the reference files break A + B >= C on Allegro's finger links and TALOS's gripper motor
     links; the project files hold the nearest physical tensors (robots/README.md), which the
     loader's inertia_fix computes from the reference in the same way */
  o.inertia_fix = package_root != NULL;
  o.collision = collision;
  o.package_roots = package_root ? roots : NULL;
  o.npackage_roots = package_root ? 1 : 0;
  mr_model *m = NULL;
  mr_error e = {MR_OK, ""};
  if (mr_urdf_load(path, &o, &m, &e)) fail_msg("%s: %s", path, e.msg);
  return m;
}

/* the project model, with its collision geometry */
static mr_model *load_project(const robot_case *c) {
  mr_model *m = load_urdf(c->urdf, c->floating, 1, NULL);
  assert_int_equal(m->nq, c->nq);
  assert_int_equal(m->nv, c->nv);
  return m;
}

/* the reference model (no collision meshes needed); NULL when the reference is absent */
static mr_model *load_reference(const robot_case *c) {
  const char *root = test_reference_root();
  if (!root) skip(); /* reference robots absent: reported by cmocka, an error under CI */
  char path[4600], pkg[4200];
  snprintf(path, sizeof path, "%s/%s", root, c->reference);
  snprintf(pkg, sizeof pkg, "%s/..", root);
  return load_urdf(path, c->floating, 0, pkg);
}

/* ---- the project files alone ---- */

static int count_joints(const mr_model *m, mr_joint_type t) {
  int n = 0;
  for (int i = 1; i < m->nbodies; ++i)
    n += m->bodies[i].joint.type == t;
  return n;
}

/* well-formed files, joint counts, primitives only */
static void check_files(const robot_case *c, const mr_model *m) {
  xmlFreeDoc(read_xml(c->urdf));
  xmlFreeDoc(read_xml(c->srdf));
  assert_int_equal(count_joints(m, MR_JOINT_REVOLUTE), c->nrevolute);
  assert_int_equal(count_joints(m, MR_JOINT_FREE), c->floating);
  assert_true(m->ngeoms > 0);
  for (int g = 0; g < m->ngeoms; ++g)
    assert_true(m->geoms[g].type != MR_GEOM_MESH && m->geoms[g].type != MR_GEOM_HEIGHTFIELD);
}

/* a geometry of the given type on the frame's body, centred at the frame's origin */
static const mr_geom *geom_at_frame(const mr_model *m, const char *frame, mr_geom_type type) {
  int f = mr_model_frame_index(m, frame);
  if (f < 0) fail_msg("no frame %s", frame);
  const mr_frame *fr = &m->frames[f];
  for (int g = 0; g < m->ngeoms; ++g) {
    const mr_geom *G = &m->geoms[g];
    double d = 0.0;
    for (int k = 0; k < 3; ++k)
      d = fmax(d, fabs(G->placement.p.v[k] - fr->placement.p.v[k]));
    /* both placements come from the same parsed origins composed the same way: equal up to
     * the rounding of a composition (8 ulp of a 1 m offset) */
    if (G->type == type && G->body == fr->body && d <= 8 * DBL_EPSILON) return G;
  }
  fail_msg("no %s at frame %s", mr_geom_type_name(type), frame);
  return NULL;
}

/* ---- postures ---- */

typedef struct {
  char joint[POSTURE_MAX][MR_NAME_MAX];
  double value[POSTURE_MAX][7];
  int nvalue[POSTURE_MAX];
  int n;
} posture;

/* the numbers of a value="..." attribute; -1 on anything that is not a number */
static int parse_values(const char *s, double *x, int max) {
  int n = 0;
  char *end = NULL;
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == '\n')
      ++s;
    if (!*s) break;
    if (n == max) return -1;
    x[n] = strtod(s, &end);
    if (end == s || !isfinite(x[n])) return -1;
    ++n;
    s = end;
  }
  return n;
}

/* one <group_state> into p */
static void read_group_state(const char *file, xmlNode *gs, posture *p) {
  p->n = 0;
  for (xmlNode *j = gs->children; j; j = j->next) {
    if (j->type != XML_ELEMENT_NODE || strcmp((const char *)j->name, "joint") != 0) continue;
    assert_true(p->n < POSTURE_MAX);
    xmlChar *name = xmlGetProp(j, (const xmlChar *)"name");
    xmlChar *value = xmlGetProp(j, (const xmlChar *)"value");
    if (!name || !value) fail_msg("%s line %d: <joint> without name or value", file, j->line);
    snprintf(p->joint[p->n], MR_NAME_MAX, "%s", (const char *)name);
    p->nvalue[p->n] = parse_values((const char *)value, p->value[p->n], 7);
    if (p->nvalue[p->n] <= 0) fail_msg("%s line %d: bad value \"%s\"", file, j->line, value);
    xmlFree(name);
    xmlFree(value);
    p->n++;
  }
}

/* every joint exists, has as many values as coordinates, within the limits; q gets the posture */
static void check_posture(const mr_model *m, const char *file, const posture *p, double *q) {
  mr_neutral(m, q);
  for (int k = 0; k < p->n; ++k) {
    int b = mr_model_joint_index(m, p->joint[k]);
    if (b < 0) fail_msg("%s: posture names an unknown joint %s", file, p->joint[k]);
    const mr_joint *J = &m->bodies[b].joint;
    assert_int_equal(p->nvalue[k], J->nq);
    for (int i = 0; i < J->nq; ++i) {
      double x = p->value[k][i];
      if (!(x >= m->lower[J->idx_q + i] && x <= m->upper[J->idx_q + i]))
        fail_msg("%s: %s = %g outside [%g, %g]", file, p->joint[k], x, m->lower[J->idx_q + i],
                 m->upper[J->idx_q + i]);
      q[J->idx_q + i] = x;
    }
    /* a free-flyer's quaternion is written with at most 6 decimals, each within 5e-7 of a unit
     * quaternion's: |q|² within 2 Σ|qᵢ| 5e-7 ≤ 2e-6 of 1 (every posture here writes 0 0 0 1) */
    if (J->type == MR_JOINT_FREE) {
      const double *r = &p->value[k][3];
      assert_near(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3], 1.0, 2e-6);
    }
  }
}

/* check every <group_state> of the SRDF; the one named `want` goes into q. Returns the count. */
static int check_postures(const mr_model *m, const char *srdf, const char *want, double *q) {
  xmlDoc *doc = read_xml(srdf);
  static posture p;
  static double qk[NQ_MAX];
  int n = 0, found = 0;
  assert_true(m->nq <= NQ_MAX);
  for (xmlNode *g = xmlDocGetRootElement(doc)->children; g; g = g->next) {
    if (g->type != XML_ELEMENT_NODE || strcmp((const char *)g->name, "group_state") != 0) continue;
    xmlChar *name = xmlGetProp(g, (const xmlChar *)"name");
    assert_non_null(name);
    read_group_state(srdf, g, &p);
    assert_true(p.n > 0);
    check_posture(m, srdf, &p, qk);
    if (strcmp((const char *)name, want) == 0) {
      memcpy(q, qk, (size_t)m->nq * sizeof(double));
      found = 1;
    }
    xmlFree(name);
    ++n;
  }
  xmlFreeDoc(doc);
  if (!found) fail_msg("%s: no posture %s", srdf, want);
  return n;
}

/* ---- kinematics read from the URDF text, independently of the loader ---- */

typedef struct {
  double R[3][3], p[3];
} xform;

/* c = a b */
static xform xf_mul(const xform *a, const xform *b) {
  xform c;
  for (int i = 0; i < 3; ++i) {
    c.p[i] = a->p[i];
    for (int j = 0; j < 3; ++j) {
      c.R[i][j] = 0.0;
      for (int k = 0; k < 3; ++k)
        c.R[i][j] += a->R[i][k] * b->R[k][j];
      c.p[i] += a->R[i][j] * b->p[j];
    }
  }
  return c;
}

/* the rotation by th about the unit axis u (Rodrigues) */
static void axis_rotation(const double u[3], double th, double R[3][3]) {
  double c = cos(th), s = sin(th), t = 1 - c;
  double K[3][3] = {{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      R[i][j] = (i == j) * c + t * u[i] * u[j] + s * K[i][j];
}

/* the numbers of attribute `attr` of the first child element `tag` of n; `def` when absent */
static void child_vec(xmlNode *n, const char *tag, const char *attr, double *x, const double *def) {
  memcpy(x, def, 3 * sizeof(double));
  for (xmlNode *c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, tag) != 0) continue;
    xmlChar *v = xmlGetProp(c, (const xmlChar *)attr);
    if (v) assert_int_equal(parse_values((const char *)v, x, 3), 3);
    xmlFree(v);
    return;
  }
}

static const char *child_link(xmlNode *n, const char *tag, char *buf, size_t size) {
  for (xmlNode *c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, tag) != 0) continue;
    xmlChar *v = xmlGetProp(c, (const xmlChar *)"link");
    snprintf(buf, size, "%s", v ? (const char *)v : "");
    xmlFree(v);
    return buf;
  }
  return "";
}

/* the world placement of `link` at q, composed joint by joint from the URDF text: each joint's
 * <origin> (xyz, then rpy as R_z(y) R_y(p) R_x(r)) times the rotation about its <axis>, up to
 * the root, then the free-flyer's q[0..6] when floating. Only m's coordinate index of each joint
 * is used. *depth gets the number of joints composed. */
static xform urdf_link_placement(const robot_case *c, const mr_model *m, const double *q,
                                 const char *link, int *depth) {
  xmlDoc *doc = read_xml(c->urdf);
  xform T = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {0, 0, 0}};
  char cur[MR_NAME_MAX], buf[MR_NAME_MAX];
  snprintf(cur, sizeof cur, "%s", link);
  *depth = 0;
  for (int found = 1; found;) {
    found = 0;
    for (xmlNode *j = xmlDocGetRootElement(doc)->children; j && !found; j = j->next) {
      if (j->type != XML_ELEMENT_NODE || strcmp((const char *)j->name, "joint") != 0) continue;
      if (strcmp(child_link(j, "child", buf, sizeof buf), cur) != 0) continue;
      static const double zero[3] = {0, 0, 0}, ex[3] = {1, 0, 0};
      double xyz[3], rpy[3], u[3], Rx[3][3], Ry[3][3], Rz[3][3], Ra[3][3];
      child_vec(j, "origin", "xyz", xyz, zero);
      child_vec(j, "origin", "rpy", rpy, zero);
      child_vec(j, "axis", "xyz", u, ex);
      xmlChar *type = xmlGetProp(j, (const xmlChar *)"type");
      xmlChar *name = xmlGetProp(j, (const xmlChar *)"name");
      double th = 0.0;
      if (strcmp((const char *)type, "fixed") != 0) {
        if (strcmp((const char *)type, "revolute") && strcmp((const char *)type, "continuous"))
          fail_msg("%s: joint %s of type %s", c->urdf, name, type);
        int b = mr_model_joint_index(m, (const char *)name);
        assert_true(b > 0);
        th = q[m->bodies[b].joint.idx_q];
      }
      xmlFree(type), xmlFree(name);
      static const double axx[3] = {1, 0, 0}, axy[3] = {0, 1, 0}, axz[3] = {0, 0, 1};
      axis_rotation(axx, rpy[0], Rx), axis_rotation(axy, rpy[1], Ry);
      axis_rotation(axz, rpy[2], Rz), axis_rotation(u, th, Ra);
      xform O = {{{0}}, {xyz[0], xyz[1], xyz[2]}}, A = {{{0}}, {0, 0, 0}}, Y, X;
      memcpy(A.R, Ra, sizeof Ra);
      xform Tz = {{{0}}, {0, 0, 0}}, Ty = Tz, Tx = Tz;
      memcpy(Tz.R, Rz, sizeof Rz), memcpy(Ty.R, Ry, sizeof Ry), memcpy(Tx.R, Rx, sizeof Rx);
      Y = xf_mul(&Tz, &Ty), X = xf_mul(&Y, &Tx);
      memcpy(O.R, X.R, sizeof X.R);
      X = xf_mul(&O, &A);
      T = xf_mul(&X, &T);
      child_link(j, "parent", cur, sizeof cur);
      ++*depth, found = 1;
    }
  }
  xmlFreeDoc(doc);
  if (c->floating) {
    /* q = (x, y, z, qx, qy, qz, qw) */
    double w = q[6], x = q[3], y = q[4], z = q[5];
    xform B = {{{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}},
               {q[0], q[1], q[2]}};
    T = xf_mul(&B, &T), ++*depth;
  }
  return T;
}

/* the loader's frame placement against urdf_link_placement: both compose depth placements of
 * rotation entries ≤ 1 and translations summing to at most `reach` metres, each composition's
 * entries sums of 3 products (3 ulp each, on rounded inputs: 8 ulp): depth · 8 ulp of reach */
static void check_frame_against_urdf(const robot_case *c, const mr_model *m, mr_data *d,
                                     const double *q, const char *frame, double reach) {
  int depth = 0;
  xform T = urdf_link_placement(c, m, q, frame, &depth);
  const mr_se3 *X = &d->oMf[mr_model_frame_index(m, frame)];
  const double tol = depth * 8 * DBL_EPSILON * reach;
  for (int i = 0; i < 3; ++i) {
    assert_near(X->p.v[i], T.p[i], tol);
    for (int j = 0; j < 3; ++j)
      assert_near(X->R.m[i][j], T.R[i][j], depth * 8 * DBL_EPSILON);
  }
}

/* ---- against the reference ---- */

/* |a − b| <= tol (1 + |b|), also true when both are the same infinity */
static int same(double a, double b, double tol) {
  return a == b || fabs(a - b) <= tol * (1.0 + fabs(b));
}

static void assert_se3_near(mr_se3 a, mr_se3 b, double tol, const char *what) {
  for (int i = 0; i < 3; ++i) {
    if (!same(a.p.v[i], b.p.v[i], tol))
      fail_msg("%s: p[%d] %.17g vs %.17g", what, i, a.p.v[i], b.p.v[i]);
    for (int j = 0; j < 3; ++j)
      if (!same(a.R.m[i][j], b.R.m[i][j], tol))
        fail_msg("%s: R[%d][%d] %.17g vs %.17g", what, i, j, a.R.m[i][j], b.R.m[i][j]);
  }
}

/* the model parameters: tree, joint names in order, types, axes, placements, inertias, limits.
 * Every number was carried over as a decimal that reads back as the same double, and both files
 * go through the same loader, so the parameters agree up to the rounding of what the loader
 * computes from them in a different order (fixed-joint merges, rpy to R): 8 ulp relative to
 * 1 + |value| (measured 2.7e-20); a miscopied digit of a 4- to 12-significant-digit source value
 * is 1e-12 or more. */
static void compare_parameters(const mr_model *m, const mr_model *r) {
  const double tol = 8 * DBL_EPSILON;
  assert_int_equal(m->nq, r->nq);
  assert_int_equal(m->nv, r->nv);
  assert_int_equal(m->nbodies, r->nbodies);
  assert_int_equal(m->nframes, r->nframes);
  for (int i = 1; i < r->nbodies; ++i) {
    const mr_body *a = &m->bodies[i], *b = &r->bodies[i];
    assert_string_equal(a->joint.name, b->joint.name);
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->joint.type, b->joint.type);
    assert_int_equal(a->parent, b->parent);
    assert_se3_near(a->placement, b->placement, tol, a->joint.name);
    for (int k = 0; k < 3; ++k) {
      assert_true(same(a->joint.axis.v[k], b->joint.axis.v[k], tol));
      assert_true(same(a->inertia.c.v[k], b->inertia.c.v[k], tol));
      for (int l = 0; l < 3; ++l)
        assert_true(same(a->inertia.I.m[k][l], b->inertia.I.m[k][l], tol));
    }
    assert_true(same(a->inertia.m, b->inertia.m, tol));
  }
  for (int i = 0; i < r->nq; ++i)
    assert_true(same(m->lower[i], r->lower[i], tol) && same(m->upper[i], r->upper[i], tol));
  for (int i = 0; i < r->nv; ++i) {
    assert_true(same(m->velocity_limit[i], r->velocity_limit[i], tol));
    assert_true(same(m->effort_limit[i], r->effort_limit[i], tol));
    assert_true(same(m->damping[i], r->damping[i], tol));
  }
  /* the same masses (to 8 ulp, above) summed in the same order */
  assert_near(mr_model_total_mass(m), mr_model_total_mass(r),
              8 * DBL_EPSILON * mr_model_total_mass(r));
}

/* at 20 random configurations: world placements of every body and frame, and M(q).
 * Same parameters (to 8 ulp, above) and same algorithms: a placement composes at most
 * nbodies joint placements, each rounding to 8 ulp of (1 + |value|) (placements in metres, rotation
 * entries); M sums at most nbodies composite-inertia terms, each within 8 ulp of max |M|. */
static void compare_kinematics_and_mass(const mr_model *m, const mr_model *r, uint64_t seed) {
  mr_data *dm = mr_data_create(m), *dr = mr_data_create(r);
  assert_non_null(dm);
  assert_non_null(dr);
  static double q[NQ_MAX];
  int nv = r->nv;
  uint64_t s = seed;
  for (int k = 0; k < 20; ++k) {
    mr_random_configuration(r, &s, q);
    mr_forward_kinematics(m, dm, q, NULL, NULL);
    mr_forward_kinematics(r, dr, q, NULL, NULL);
    mr_update_frames(m, dm);
    mr_update_frames(r, dr);
    const double tol = r->nbodies * 8 * DBL_EPSILON;
    for (int i = 1; i < r->nbodies; ++i)
      assert_se3_near(dm->oMi[i], dr->oMi[i], tol, r->bodies[i].joint.name);
    for (int f = 0; f < r->nframes; ++f) {
      int g = mr_model_frame_index(m, r->frames[f].name);
      if (g < 0) fail_msg("frame %s missing", r->frames[f].name);
      assert_se3_near(dm->oMf[g], dr->oMf[f], tol, r->frames[f].name);
    }
    mr_crba(m, dm, q);
    mr_crba(r, dr, q);
    double scale = 0.0, err = 0.0;
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        double x = mr_mass_entry(dr, i, j);
        scale = fmax(scale, fabs(x));
        err = fmax(err, fabs(mr_mass_entry(dm, i, j) - x));
      }
    assert_true(scale > 0.0);
    if (!(err <= tol * scale)) fail_msg("max |dM| = %g, max |M| = %g", err, scale);
  }
  mr_data_free(dm);
  mr_data_free(dr);
}

static void compare_with_reference(const robot_case *c, const mr_model *m, uint64_t seed) {
  mr_model *r = load_reference(c);
  if (!r) return;
  assert_int_equal(r->nq, c->nq);
  compare_parameters(m, r);
  compare_kinematics_and_mass(m, r, seed);
  mr_model_free(r);
}

/* ---- per robot ---- */

static void test_solo12(void **state) {
  if (!test_reference_root()) skip(); /* before anything is allocated: a skip returns at once */
  mr_model *m = load_project(&solo);
  check_files(&solo, m);
  static double q[NQ_MAX];
  assert_int_equal(check_postures(m, solo.srdf, solo.posture, q), 2);
  /* the feet: spheres centred at the foot frames whose radius is half the diagonal of the lower
   * leg's 0.027 m square section (the URDF's comment), written with 4 decimals: ± 5e-5 m */
  static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
  const double r = 0.027 / sqrt(2.0);
  for (int k = 0; k < 4; ++k)
    assert_near(geom_at_frame(m, feet[k], MR_GEOM_SPHERE)->size[0], r, 5e-5);
  assert_int_equal(m->ngeoms, 1 + 4 * 3); /* body box, two capsules and a foot per leg */
  /* standing puts the foot frames one radius above the ground, so the spheres touch it: the
   * frames' placements equal the URDF's joints composed independently (the leg reaches 0.5 m),
   * and in closed form (offsets 0.014 + 0.03745 + 0.008 m across the leg, two 0.16 m links at
   * b = ±0.8 and b + c = ∓0.8 rad) z = 0.235 + 0.05945 sin a − 0.32 cos a cos b with a = 0.1
   * rad of abduction: 0.0191028 m, 2.8 µm above the radius as written (8 operations on values
   * ≤ 0.32 round to 2 ulp of 0.32) */
  mr_data *d = mr_data_create(m);
  assert_non_null(d);
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_update_frames(m, d);
  const double zf = 0.235 + 0.05945 * sin(0.1) - 0.32 * cos(0.1) * cos(0.8);
  for (int k = 0; k < 4; ++k) {
    check_frame_against_urdf(&solo, m, d, q, feet[k], 0.5);
    int f = mr_model_frame_index(m, feet[k]);
    assert_near(d->oMf[f].p.v[2], zf, 8 * DBL_EPSILON * 0.32 + 4 * 8 * DBL_EPSILON * 0.5);
    assert_near(d->oMf[f].p.v[2], geom_at_frame(m, feet[k], MR_GEOM_SPHERE)->size[0], 5e-5);
  }
  mr_data_free(d);
  compare_with_reference(&solo, m, 11);
  mr_model_free(m);
}

static void test_talos(void **state) {
  if (!test_reference_root()) skip(); /* before anything is allocated: a skip returns at once */
  mr_model *m = load_project(&talos);
  check_files(&talos, m);
  static double q[NQ_MAX];
  assert_int_equal(check_postures(m, talos.srdf, talos.posture, q), 1);
  /* half_sitting puts the sole frames on the ground: their placements equal the URDF's joints
   * composed independently (the leg reaches 1.1 m), and z = 0 to the precision of the posture as
   * written: the base height 1.01927 m to ± 5e-6 m, and each of the six leg angles to ± 5e-7
   * rad over a lever of at most 1.1 m, ± 3.3e-6 m in all */
  mr_data *d = mr_data_create(m);
  assert_non_null(d);
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_update_frames(m, d);
  static const char *const soles[2] = {"left_sole_link", "right_sole_link"};
  for (int k = 0; k < 2; ++k) {
    check_frame_against_urdf(&talos, m, d, q, soles[k], 1.1);
    assert_near(d->oMf[mr_model_frame_index(m, soles[k])].p.v[2], 0.0, 5e-6 + 6 * 5e-7 * 1.1);
  }
  mr_data_free(d);
  /* the feet: 0.21 x 0.13 x 0.02 m boxes on the ankle bodies, 0.1 m below the ankle */
  static const char *const ankles[2] = {"leg_left_6_link", "leg_right_6_link"};
  static const double half[3] = {0.105, 0.065, 0.01};
  for (int k = 0; k < 2; ++k) {
    int b = mr_model_body_index(m, ankles[k]), found = 0;
    assert_true(b > 0);
    for (int g = 0; g < m->ngeoms; ++g)
      if (m->geoms[g].body == b && m->geoms[g].type == MR_GEOM_BOX) {
        /* halves of the written sizes (exact) and a parsed offset composed with the identity */
        assert_vec_near(m->geoms[g].size, half, 3, DBL_EPSILON * 0.105);
        assert_near(m->geoms[g].placement.p.v[2], -0.1, 8 * DBL_EPSILON * 0.1);
        found++;
      }
    assert_int_equal(found, 1);
  }
  compare_with_reference(&talos, m, 22);
  compare_with_reference(&talos_box, m, 23);
  mr_model_free(m);
}

static void test_allegro(void **state) {
  if (!test_reference_root()) skip(); /* before anything is allocated: a skip returns at once */
  mr_model *m = load_project(&allegro);
  check_files(&allegro, m);
  static double q[NQ_MAX];
  assert_int_equal(check_postures(m, allegro.srdf, allegro.posture, q), 2);
  /* fingertip spheres of radius 0.012 m at the tip frames */
  static const char *const tips[4] = {"link_3.0_tip", "link_7.0_tip", "link_11.0_tip",
                                      "link_15.0_tip"};
  for (int k = 0; k < 4; ++k)
    assert_near(geom_at_frame(m, tips[k], MR_GEOM_SPHERE)->size[0], 0.012, 0); /* as written */
  compare_with_reference(&allegro, m, 33);
  mr_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_solo12),
      cmocka_unit_test(test_talos),
      cmocka_unit_test(test_allegro),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  xmlCleanupParser();
  return rc;
}
