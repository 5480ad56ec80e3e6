/* URDF loader (see urdf.h and docs/urdf.md), on libxml2's DOM.
 *
 * The file's <link> and <joint> elements are collected in document order and checked (unique
 * names, existing parent and child links, one parent joint per link, exactly one root, no loop).
 * The tree is then walked depth-first from the root, visiting the child joints of a link in the
 * order they appear in the file; each moving joint adds a body (mr_model_add_body) and each fixed
 * joint merges its child link into the body of its parent (mr_model_add_fixed), so that the
 * placement of every link in its body frame is the product of the fixed-joint origins above it.
 *
 * Conventions of the URDF specification (wiki.ros.org/urdf/XML):
 *   origin:   X = (R, p) with R = Rz(yaw) Ry(pitch) Rx(roll), p = xyz; the child frame in the
 *             parent frame.
 *   inertial: mass m, COM c = origin.xyz, inertia I_in about the COM in the frame rotated by
 *             origin.rpy; in the link frame I = R I_in Rᵀ.
 *   joints:   the joint frame is the child link's frame; the axis is given in it. */
#include "core/file.h"
#include "dynamics/model_inertia.h"
#include "moreau/collision.h"
#include "io/xml_util.h"
#include "moreau/urdf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

/* a <link> of the file */
typedef struct {
  char *name;
  xmlNode *node;
  int parent_joint; /* the joint whose child it is, -1 for the root */
  int first_child;  /* first joint whose parent it is, in document order, -1 if none */
  int body;         /* the body it belongs to, once visited; -1 before */
  mr_se3 X;         /* its frame in that body's frame */
  mr_inertia Y;     /* its inertia in its own frame (the inertia policy applied) */
} urdf_link;

/* a <joint> of the file */
typedef struct {
  char *name;
  xmlNode *node;
  int fixed;          /* type "fixed", or locked: merged into the parent body */
  int locked;         /* a moving joint treated as fixed (lock_joints, lock_massless) */
  mr_joint_type type; /* the moving joint type otherwise */
  int parent, child;  /* link indices */
  int next_sibling;   /* next joint with the same parent link, in document order */
} urdf_joint;

typedef struct {
  const char *file; /* name used in messages */
  const char *dir;  /* directory of relative mesh paths */
  const mr_urdf_options *opt;
  mr_error *err;
  mr_model *m;
  char robot[MR_NAME_MAX]; /* the robot's name */
  double imax;             /* the largest principal moment of inertia of any link */
  int nlinks, njoints;
  urdf_link *links;
  urdf_joint *joints;
  /* the links' and joints' names sorted (ties by index), for look-ups in O(log n) */
  struct urdf_name *link_names, *joint_names;
} urdf_ctx;

/* ---- messages ---- */

/* fail with "file:line: message" for the element n (line 0 when n is NULL) */
static mr_status fail(urdf_ctx *c, const xmlNode *n, mr_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static mr_status fail(urdf_ctx *c, const xmlNode *n, mr_status st, const char *fmt, ...) {
  char msg[MR_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  long line = n ? xmlGetLineNo(n) : 0;
  return mr_error_set(c->err, st, "%s:%ld: %s", c->file, line, msg);
}

/* prefix an error filled by the model builder with the file and line of element n */
static mr_status fail_builder(urdf_ctx *c, const xmlNode *n) {
  mr_error tmp = {MR_ERR_INVALID, ""};
  mr_error *e = c->err ? c->err : &tmp;
  char msg[MR_ERROR_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", e->msg);
  return fail(c, n, e->status, "%s", msg);
}

/* report "file:line: message" for the element n to the warning callback, if any */
static void warn(urdf_ctx *c, const xmlNode *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void warn(urdf_ctx *c, const xmlNode *n, const char *fmt, ...) {
  if (!c->opt->warn) return;
  char msg[MR_ERROR_MSG_MAX], full[2 * MR_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(full, sizeof full, "%s:%ld: %s", c->file, n ? xmlGetLineNo(n) : 0L, msg);
  c->opt->warn(c->opt->warn_user, full);
}

/* ---- DOM helpers ---- */

static int is_element(const xmlNode *n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* the first child element called name, or NULL */
static xmlNode *child(const xmlNode *n, const char *name) {
  for (xmlNode *k = n->children; k; k = k->next)
    if (is_element(k, name)) return k;
  return NULL;
}

/* the value of an attribute (xmlFree it), or NULL when absent */
static char *attr(const xmlNode *n, const char *name) {
  return (char *)xmlGetProp(n, (const xmlChar *)name);
}

/* a required non-empty string attribute, malloc'ed (free it) */
static mr_status attr_string(urdf_ctx *c, const xmlNode *n, const char *name, char **out) {
  char *s = attr(n, name);
  *out = NULL;
  if (!s || !*s) {
    xmlFree(s);
    return fail(c, n, MR_ERR_PARSE, "<%s> has no %s attribute", (const char *)n->name, name);
  }
  *out = strdup(s);
  xmlFree(s);
  if (!*out) return fail(c, n, MR_ERR_NOMEM, "out of memory");
  return MR_OK;
}

/* ---- numbers ---- */

/* parse exactly n finite numbers separated by white space from text */
static mr_status parse_numbers(urdf_ctx *c, const xmlNode *nd, const char *name, const char *text,
                               double *out, int n) {
  const char *s = text;
  int k = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
      ++s;
    if (!*s) break;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    int bad = end == s || (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r');
    if (bad || !isfinite(x))
      return fail(c, nd, MR_ERR_PARSE, "<%s> attribute %s=\"%s\": '%.*s' is not a finite number",
                  (const char *)nd->name, name, text, (int)strcspn(s, " \t\r\n"), s);
    if (k < n) out[k] = x;
    ++k;
    s = end;
  }
  if (k != n)
    return fail(c, nd, MR_ERR_PARSE, "<%s> attribute %s=\"%s\": expected %d number%s, got %d",
                (const char *)nd->name, name, text, n, n == 1 ? "" : "s", k);
  return MR_OK;
}

/* n numbers from an attribute; when absent, def (if non-NULL) is copied, else it is an error */
static mr_status attr_numbers(urdf_ctx *c, const xmlNode *nd, const char *name, double *out, int n,
                              const double *def) {
  char *s = attr(nd, name);
  if (!s) {
    if (def) {
      memcpy(out, def, (size_t)n * sizeof *out);
      return MR_OK;
    }
    return fail(c, nd, MR_ERR_PARSE, "<%s> has no %s attribute", (const char *)nd->name, name);
  }
  mr_status st = parse_numbers(c, nd, name, s, out, n);
  xmlFree(s);
  return st;
}

/* one number, with a default when the attribute is absent */
static mr_status attr_number(urdf_ctx *c, const xmlNode *nd, const char *name, double *out,
                             double def) {
  return attr_numbers(c, nd, name, out, 1, &def);
}

/* one required number */
static mr_status attr_number_req(urdf_ctx *c, const xmlNode *nd, const char *name, double *out) {
  return attr_numbers(c, nd, name, out, 1, NULL);
}

/* the <origin> child of n as a placement (identity when absent) */
static mr_status read_origin(urdf_ctx *c, const xmlNode *n, mr_se3 *X) {
  static const double zero[3] = {0, 0, 0};
  double xyz[3], rpy[3];
  *X = mr_se3_identity();
  xmlNode *o = child(n, "origin");
  if (!o) return MR_OK;
  mr_status st = attr_numbers(c, o, "xyz", xyz, 3, zero);
  if (!st) st = attr_numbers(c, o, "rpy", rpy, 3, zero);
  if (st) return st;
  *X = mr_se3_make(mr_m3_rpy(rpy[0], rpy[1], rpy[2]), mr_v3(xyz[0], xyz[1], xyz[2]));
  return MR_OK;
}

/* ---- links: inertia ---- */

/* an <inertial> as written: mass, frame, tensor about the COM in that frame */
typedef struct {
  double m;
  mr_se3 X;
  mr_mat3 I;
  const xmlNode *node; /* the <inertia> element, NULL for a link without <inertial> */
} raw_inertial;

/* the <inertial> of a link as written (zero when absent) */
static mr_status read_raw_inertia(urdf_ctx *c, const xmlNode *link, raw_inertial *r) {
  static const char *const keys[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
  r->m = 0.0, r->X = mr_se3_identity(), r->I = mr_m3_zero(), r->node = NULL;
  xmlNode *in = child(link, "inertial");
  if (!in) return MR_OK;
  mr_status st = read_origin(c, in, &r->X);
  if (st) return st;
  xmlNode *mass = child(in, "mass"), *inertia = child(in, "inertia");
  if (!mass) return fail(c, in, MR_ERR_PARSE, "<inertial> has no <mass> element");
  double k[6];
  if ((st = attr_number_req(c, mass, "value", &r->m))) return st;
  if (r->m < 0.0) return fail(c, mass, MR_ERR_INVALID, "<mass> value=\"%g\" is negative", r->m);
  if (!inertia) return fail(c, in, MR_ERR_PARSE, "<inertial> has no <inertia> element");
  for (int i = 0; i < 6; ++i)
    if ((st = attr_number_req(c, inertia, keys[i], &k[i]))) return st;
  mr_mat3 I = {{{k[0], k[1], k[2]}, {k[1], k[3], k[4]}, {k[2], k[4], k[5]}}};
  r->I = I;
  r->node = inertia;
  return MR_OK;
}

/* entries of magnitude below 1e-12 of the robot's largest principal moment are round-off: set
 * to 0, with a warning naming them */
static void clamp_roundoff(urdf_ctx *c, const urdf_link *l, raw_inertial *r) {
  static const char *const keys[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
  static const int at[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
  double tol = 1e-12 * c->imax;
  char list[200] = "";
  int n = 0;
  for (int k = 0; k < 6; ++k) {
    double *x = &r->I.m[at[k][0]][at[k][1]];
    if (*x == 0.0 || !(fabs(*x) < tol)) continue;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s=%g", n ? ", " : "", keys[k], *x);
    *x = 0.0, r->I.m[at[k][1]][at[k][0]] = 0.0;
    ++n;
  }
  if (n)
    warn(c, r->node,
         "link \"%s\": inertia entr%s %s below 1e-12 of the robot's largest principal moment "
         "(%g kg m^2), set to 0 (round-off)",
         l->name, n == 1 ? "y" : "ies", list, c->imax);
}

/* refuse (or, with inertia_fix, repair) a tensor that is not positive semi-definite or whose
 * principal moments A <= B <= C break A + B >= C by more than 1e-12 of the robot's largest
 * principal moment plus 1e-6 C (seven significant digits, what files print) */
static mr_status check_physical(urdf_ctx *c, const urdf_link *l, raw_inertial *r) {
  double fixed[3];
  char what[240];
  if (mr_inertia_physical(&r->I, c->imax, what, sizeof what)) return MR_OK;
  if (!c->opt->inertia_fix)
    return fail(c, r->node, MR_ERR_INVALID,
                "link \"%s\": inertia %s; to use the nearest physical tensor instead, set "
                "'inertia_fix: true' on the scene's robot (moreau rbd: --inertia-fix)",
                l->name, what);
  r->I = mr_inertia_nearest_physical(&r->I, fixed);
  warn(c, r->node,
       "link \"%s\": inertia %s; inertia_fix: replaced by the nearest physical tensor, same "
       "principal axes, principal moments %g, %g, %g kg m^2",
       l->name, what, fixed[0], fixed[1], fixed[2]);
  return MR_OK;
}

/* the largest principal moment of a tensor */
static double largest_moment(const mr_mat3 *I) {
  double lam[3];
  mr_mat3 R;
  mr_inertia_principal(I, lam, &R);
  return lam[2];
}

/* every link's inertia, in its own frame: read, round-off clamped, checked (docs/urdf.md,
 * "Inertia policy"); c = xyz of the inertial origin, I = R I_urdf Rᵀ */
static mr_status read_inertias(urdf_ctx *c) {
  raw_inertial *r = malloc(((size_t)c->nlinks + 1) * sizeof *r);
  if (!r) return fail(c, NULL, MR_ERR_NOMEM, "out of memory");
  mr_status st = MR_OK;
  c->imax = 0.0;
  for (int i = 0; i < c->nlinks && !st; ++i)
    if (!(st = read_raw_inertia(c, c->links[i].node, &r[i])))
      c->imax = fmax(c->imax, largest_moment(&r[i].I));
  for (int i = 0; i < c->nlinks && !st; ++i) {
    urdf_link *l = &c->links[i];
    if (r[i].node) clamp_roundoff(c, l, &r[i]);
    if (r[i].node) st = check_physical(c, l, &r[i]);
    l->Y.m = r[i].m, l->Y.c = r[i].X.p, l->Y.I = mr_m3_rotate(&r[i].X.R, &r[i].I);
  }
  free(r);
  return st;
}

/* ---- collection and checks ---- */

/* a name and the index of its element */
struct urdf_name {
  const char *name;
  int index;
};

static int name_cmp(const void *a, const void *b) {
  const struct urdf_name *x = a, *y = b;
  int r = strcmp(x->name, y->name);
  return r ? r : (x->index > y->index) - (x->index < y->index);
}

/* the first (lowest) index named name in the n sorted entries, or -1 */
static int find_name(const struct urdf_name *sorted, int n, const char *name) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (strcmp(sorted[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && strcmp(sorted[lo].name, name) == 0 ? sorted[lo].index : -1;
}

static int find_link(const urdf_ctx *c, const char *name) {
  return find_name(c->link_names, c->nlinks, name);
}

static int find_joint(const urdf_ctx *c, const char *name) {
  return find_name(c->joint_names, c->njoints, name);
}

/* sort the n names of a list; the element that repeats an earlier name and comes first in the
 * list (*dup, −1 if none) and that earlier element (*first) */
static void sort_names(struct urdf_name *sorted, int n, int *dup, int *first) {
  qsort(sorted, (size_t)n, sizeof *sorted, name_cmp);
  *dup = *first = -1;
  for (int i = 1, k = 0; i < n; ++i) {
    if (strcmp(sorted[i].name, sorted[k].name) != 0) {
      k = i;
      continue;
    }
    if (*dup < 0 || sorted[i].index < *dup) *dup = sorted[i].index, *first = sorted[k].index;
  }
}

/* the link and joint elements directly under <robot>, with unique names */
static mr_status collect(urdf_ctx *c, const xmlNode *robot) {
  int nl = 0, nj = 0;
  for (xmlNode *k = robot->children; k; k = k->next)
    nl += is_element(k, "link"), nj += is_element(k, "joint");
  c->links = calloc((size_t)nl + 1, sizeof *c->links);
  c->joints = calloc((size_t)nj + 1, sizeof *c->joints);
  c->link_names = calloc((size_t)nl + 1, sizeof *c->link_names);
  c->joint_names = calloc((size_t)nj + 1, sizeof *c->joint_names);
  if (!c->links || !c->joints || !c->link_names || !c->joint_names)
    return fail(c, robot, MR_ERR_NOMEM, "out of memory");
  for (xmlNode *k = robot->children; k; k = k->next) {
    char *name = NULL;
    int link = is_element(k, "link");
    if (!link && !is_element(k, "joint")) continue;
    mr_status st = attr_string(c, k, "name", &name);
    if (st) return st;
    if (link) {
      c->link_names[c->nlinks] = (struct urdf_name){name, c->nlinks};
      c->links[c->nlinks++] =
          (urdf_link){name, k, -1, -1, -1, mr_se3_identity(), mr_inertia_zero()};
    } else {
      c->joint_names[c->njoints] = (struct urdf_name){name, c->njoints};
      c->joints[c->njoints++] = (urdf_joint){name, k, 0, 0, MR_JOINT_NONE, -1, -1, -1};
    }
  }
  /* a repeated name: the repetition that comes first in the file */
  int dl, fl, dj, fj;
  sort_names(c->link_names, c->nlinks, &dl, &fl);
  sort_names(c->joint_names, c->njoints, &dj, &fj);
  if (dl >= 0 && dj >= 0) {
    if (xmlGetLineNo(c->joints[dj].node) < xmlGetLineNo(c->links[dl].node))
      dl = -1;
    else
      dj = -1;
  }
  if (dl >= 0)
    return fail(c, c->links[dl].node, MR_ERR_INVALID,
                "duplicate link name \"%s\" (first at line %ld)", c->links[dl].name,
                xmlGetLineNo(c->links[fl].node));
  if (dj >= 0)
    return fail(c, c->joints[dj].node, MR_ERR_INVALID,
                "duplicate joint name \"%s\" (first at line %ld)", c->joints[dj].name,
                xmlGetLineNo(c->joints[fj].node));
  if (nl == 0) return fail(c, robot, MR_ERR_INVALID, "<robot> has no <link>");
  return MR_OK;
}

static const struct {
  const char *name;
  mr_joint_type type;
  int fixed;
} joint_types[] = {
    {"revolute", MR_JOINT_REVOLUTE, 0},   {"continuous", MR_JOINT_CONTINUOUS, 0},
    {"prismatic", MR_JOINT_PRISMATIC, 0}, {"floating", MR_JOINT_FREE, 0},
    {"fixed", MR_JOINT_NONE, 1},
};

/* the joint's type */
static mr_status read_joint_type(urdf_ctx *c, urdf_joint *j) {
  char *type = attr(j->node, "type");
  mr_status st = MR_OK;
  size_t k = 0, n = sizeof joint_types / sizeof joint_types[0];
  while (type && k < n && strcmp(type, joint_types[k].name) != 0)
    ++k;
  if (!type)
    st = fail(c, j->node, MR_ERR_PARSE, "joint \"%s\" has no type attribute", j->name);
  else if (strcmp(type, "planar") == 0)
    st = fail(c, j->node, MR_ERR_UNSUPPORTED,
              "joint \"%s\": type=\"planar\" is not supported (use two prismatic joints and a "
              "revolute one)",
              j->name);
  else if (k == n)
    st = fail(c, j->node, MR_ERR_INVALID, "joint \"%s\": unknown type=\"%s\"", j->name, type);
  else
    j->type = joint_types[k].type, j->fixed = joint_types[k].fixed;
  xmlFree(type);
  return st;
}

/* the link named by <parent link=...> or <child link=...> of a joint */
static mr_status joint_link(urdf_ctx *c, const urdf_joint *j, const char *which, int *out) {
  xmlNode *e = child(j->node, which);
  if (!e) return fail(c, j->node, MR_ERR_PARSE, "joint \"%s\" has no <%s>", j->name, which);
  char *name = NULL;
  mr_status st = attr_string(c, e, "link", &name);
  if (st) return st;
  *out = find_link(c, name);
  if (*out < 0)
    st = fail(c, e, MR_ERR_INVALID, "joint \"%s\": %s link=\"%s\" does not exist", j->name, which,
              name);
  free(name);
  return st;
}

/* is name one of the n names of list */
static int name_listed(const char *const *list, int n, const char *name) {
  for (int i = 0; list && i < n; ++i)
    if (list[i] && strcmp(list[i], name) == 0) return 1;
  return 0;
}

/* every name of the lock_joints option is a joint of the file */
static mr_status check_lock_names(urdf_ctx *c, const xmlNode *robot) {
  for (int i = 0; c->opt->lock_joints && i < c->opt->nlock_joints; ++i)
    if (c->opt->lock_joints[i] && find_joint(c, c->opt->lock_joints[i]) < 0)
      return fail(c, robot, MR_ERR_INVALID, "lock_joints: the robot has no joint \"%s\"",
                  c->opt->lock_joints[i]);
  return MR_OK;
}

/* types, parent and child links of every joint; a link is the child of one joint at most */
static mr_status connect(urdf_ctx *c) {
  int *last = calloc((size_t)c->nlinks, sizeof *last); /* last child joint of each link */
  if (!last) return fail(c, NULL, MR_ERR_NOMEM, "out of memory");
  mr_status st = MR_OK;
  for (int i = 0; i < c->njoints && !st; ++i) {
    urdf_joint *j = &c->joints[i];
    if ((st = read_joint_type(c, j)) || (st = joint_link(c, j, "parent", &j->parent)) ||
        (st = joint_link(c, j, "child", &j->child)))
      break;
    if (!j->fixed && name_listed(c->opt->lock_joints, c->opt->nlock_joints, j->name))
      j->fixed = j->locked = 1;
    urdf_link *ch = &c->links[j->child], *pa = &c->links[j->parent];
    if (ch->parent_joint >= 0) {
      st = fail(c, j->node, MR_ERR_INVALID,
                "joint \"%s\": link \"%s\" is already the child of joint \"%s\" (line %ld)",
                j->name, ch->name, c->joints[ch->parent_joint].name,
                xmlGetLineNo(c->joints[ch->parent_joint].node));
      break;
    }
    ch->parent_joint = i;
    if (pa->first_child < 0)
      pa->first_child = i;
    else
      c->joints[last[j->parent]].next_sibling = i;
    last[j->parent] = i;
  }
  free(last);
  return st;
}

/* the one link that is no joint's child */
static mr_status find_root(urdf_ctx *c, int *root) {
  *root = -1;
  for (int i = 0; i < c->nlinks; ++i) {
    if (c->links[i].parent_joint >= 0) continue;
    if (*root >= 0)
      return fail(c, c->links[i].node, MR_ERR_INVALID,
                  "two root links (links that are no joint's child): \"%s\" (line %ld) and "
                  "\"%s\"",
                  c->links[*root].name, xmlGetLineNo(c->links[*root].node), c->links[i].name);
    *root = i;
  }
  if (*root < 0)
    return fail(c, c->joints[0].node, MR_ERR_INVALID,
                "no root link: every link is the child of a joint, the joints form a loop");
  return MR_OK;
}

/* ---- collision geometry ---- */

static int file_exists(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

/* a + b + c, malloc'ed */
static char *concat3(const char *a, const char *b, const char *c) {
  size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s%s%s", a, b, c);
  return s;
}

/* ROOT/REST for the first root (of n, or of the colon-separated list when n < 0) holding it */
static char *search_roots(const char *const *roots, int n, const char *list, const char *rest) {
  for (int i = 0; roots && i < n; ++i) {
    char *p = concat3(roots[i], "/", rest);
    if (!p || file_exists(p)) return p;
    free(p);
  }
  while (list && *list) {
    size_t len = strcspn(list, ":");
    char root[4096];
    snprintf(root, sizeof root, "%.*s", (int)len, list);
    char *p = len ? concat3(root, "/", rest) : NULL;
    if (p && file_exists(p)) return p;
    free(p);
    list += len + (list[len] == ':');
  }
  return NULL;
}

/* the file a mesh filename refers to, malloc'ed, or NULL when not found */
static char *resolve_mesh(const urdf_ctx *c, const char *filename) {
  static const char package[] = "package://", file[] = "file://";
  if (strncmp(filename, package, sizeof package - 1) == 0) {
    const char *rest = filename + sizeof package - 1;
    char *p = search_roots(c->opt->package_roots, c->opt->npackage_roots, NULL, rest);
    if (!p) p = search_roots(NULL, -1, getenv("MOREAU_PACKAGE_PATH"), rest);
    return p;
  }
  if (strncmp(filename, file, sizeof file - 1) == 0) filename += sizeof file - 1;
  char *p = filename[0] == '/' ? strdup(filename) : concat3(c->dir, "/", filename);
  if (p && !file_exists(p)) {
    free(p);
    p = NULL;
  }
  return p;
}

static mr_status geom_box(urdf_ctx *c, const xmlNode *s, mr_geom *g) {
  double size[3];
  mr_status st = attr_numbers(c, s, "size", size, 3, NULL);
  for (int k = 0; k < 3; ++k)
    g->size[k] = 0.5 * size[k];
  return st;
}

static mr_status geom_sphere(urdf_ctx *c, const xmlNode *s, mr_geom *g) {
  return attr_number_req(c, s, "radius", &g->size[0]);
}

/* cylinder and capsule: radius, full length along z */
static mr_status geom_round(urdf_ctx *c, const xmlNode *s, mr_geom *g) {
  double len = 0.0;
  mr_status st = attr_number_req(c, s, "radius", &g->size[0]);
  if (!st) st = attr_number_req(c, s, "length", &len);
  g->size[1] = 0.5 * len;
  return st;
}

/* the mesh file's vertices (scaled, mirrored by a negative scale) and hull; errors and the
 * non-convexity warning name the <mesh> element */
static mr_status load_mesh(urdf_ctx *c, const xmlNode *s, const char *filename, mr_geom *g) {
  mr_error merr = {MR_OK, ""};
  int nonconvex = 0;
  g->mesh = mr_mesh_load(g->mesh_file, g->mesh_scale, &nonconvex, &merr);
  if (!g->mesh) return fail(c, s, merr.status, "<mesh> filename=\"%s\": %s", filename, merr.msg);
  if (nonconvex)
    warn(c, s,
         "<mesh> filename=\"%s\" of geometry '%s' is far from convex (volume %g, hull volume %g "
         "m^3): it collides as its convex hull",
         filename, g->name, g->mesh->volume, g->mesh->hull_volume);
  return MR_OK;
}

static mr_status geom_mesh(urdf_ctx *c, const xmlNode *s, mr_geom *g) {
  static const double one[3] = {1, 1, 1};
  double scale[3];
  mr_status st = attr_numbers(c, s, "scale", scale, 3, one);
  if (st) return st;
  g->mesh_scale = mr_v3(scale[0], scale[1], scale[2]);
  char *filename = NULL;
  if ((st = attr_string(c, s, "filename", &filename))) return st;
  g->mesh_file = resolve_mesh(c, filename);
  if (!g->mesh_file)
    st = fail(c, s, MR_ERR_IO, "<mesh> filename=\"%s\": file not found%s", filename,
              strncmp(filename, "package://", 10) == 0
                  ? " under any package root (options, MOREAU_PACKAGE_PATH)"
                  : "");
  if (!st) st = load_mesh(c, s, filename, g);
  free(filename);
  return st;
}

static const struct {
  const char *name;
  mr_geom_type type;
  mr_status (*read)(urdf_ctx *c, const xmlNode *shape, mr_geom *g);
} geom_types[] = {
    {"box", MR_GEOM_BOX, geom_box},
    {"sphere", MR_GEOM_SPHERE, geom_sphere},
    {"cylinder", MR_GEOM_CYLINDER, geom_round},
    {"capsule", MR_GEOM_CAPSULE, geom_round},
    {"mesh", MR_GEOM_MESH, geom_mesh},
};

/* the shape element inside <geometry> */
static mr_status read_shape(urdf_ctx *c, const xmlNode *geometry, mr_geom *g,
                            const xmlNode **shape) {
  for (xmlNode *s = geometry->children; s; s = s->next) {
    if (s->type != XML_ELEMENT_NODE) continue;
    for (size_t k = 0; k < sizeof geom_types / sizeof geom_types[0]; ++k)
      if (is_element(s, geom_types[k].name)) {
        g->type = geom_types[k].type;
        *shape = s;
        return geom_types[k].read(c, s, g);
      }
    return fail(c, s, MR_ERR_UNSUPPORTED, "unknown collision shape <%s>", (const char *)s->name);
  }
  return fail(c, geometry, MR_ERR_PARSE, "<geometry> has no shape element");
}

/* one <collision> of link l, the index-th */
static mr_status add_collision(urdf_ctx *c, const urdf_link *l, const xmlNode *col, int index) {
  mr_geom g = mr_geom_default(MR_GEOM_SPHERE, l->body);
  char *name = attr(col, "name");
  if (name && *name)
    snprintf(g.name, sizeof g.name, "%s", name);
  else
    snprintf(g.name, sizeof g.name, "%s/%d", l->name, index);
  xmlFree(name);
  mr_se3 X;
  mr_status st = read_origin(c, col, &X);
  if (st) return st;
  g.placement = mr_se3_mul(&l->X, &X);
  xmlNode *geometry = child(col, "geometry");
  if (!geometry) return fail(c, col, MR_ERR_PARSE, "<collision> has no <geometry>");
  const xmlNode *shape = geometry;
  st = read_shape(c, geometry, &g, &shape);
  if (!st && mr_model_add_geom(c->m, &g, c->err) < 0) st = fail_builder(c, shape);
  if (st) mr_mesh_free(g.mesh); /* otherwise owned by the model */
  free(g.mesh_file);
  return st;
}

/* every <collision> of a link, on its body */
static mr_status add_collisions(urdf_ctx *c, const urdf_link *l) {
  if (!c->opt->collision) return MR_OK;
  int index = 0;
  for (xmlNode *k = l->node->children; k; k = k->next) {
    if (!is_element(k, "collision")) continue;
    mr_status st = add_collision(c, l, k, index++);
    if (st) return st;
  }
  return MR_OK;
}

/* ---- joints ---- */

/* the unit axis of a 1-dof joint (default x) */
static mr_status read_axis(urdf_ctx *c, const urdf_joint *j, mr_vec3 *axis) {
  static const double ex[3] = {1, 0, 0};
  double a[3] = {1, 0, 0};
  xmlNode *e = child(j->node, "axis");
  mr_status st = e ? attr_numbers(c, e, "xyz", a, 3, ex) : MR_OK;
  if (st) return st;
  *axis = mr_v3(a[0], a[1], a[2]);
  if (!(mr_v3_norm(*axis) > 1e-12))
    return fail(c, e, MR_ERR_INVALID, "joint \"%s\": <axis> xyz=\"%g %g %g\" has zero length",
                j->name, a[0], a[1], a[2]);
  return MR_OK;
}

/* <limit> and <dynamics damping friction> of the 1-dof joint on body b */
static mr_status read_limits(urdf_ctx *c, const urdf_joint *j, int b) {
  double lo = -INFINITY, hi = INFINITY, vel = INFINITY, eff = INFINITY, damping = 0.0;
  double friction = 0.0;
  xmlNode *lim = child(j->node, "limit"), *dyn = child(j->node, "dynamics");
  mr_status st = MR_OK;
  if (lim && j->type != MR_JOINT_CONTINUOUS && !st) st = attr_number(c, lim, "lower", &lo, lo);
  if (lim && j->type != MR_JOINT_CONTINUOUS && !st) st = attr_number(c, lim, "upper", &hi, hi);
  if (lim && !st) st = attr_number(c, lim, "velocity", &vel, vel);
  if (lim && !st) st = attr_number(c, lim, "effort", &eff, eff);
  if (dyn && !st) st = attr_number(c, dyn, "damping", &damping, 0.0);
  if (dyn && !st) st = attr_number(c, dyn, "friction", &friction, 0.0);
  if (st) return st;
  if (mr_model_set_limits(c->m, b, lo, hi, vel, eff, c->err))
    return fail_builder(c, lim ? lim : j->node);
  if (damping < 0.0)
    return fail(c, dyn, MR_ERR_INVALID, "joint \"%s\": <dynamics> damping=\"%g\" is negative",
                j->name, damping);
  if (!(friction >= 0.0) || !isfinite(friction))
    return fail(c, dyn, MR_ERR_INVALID,
                "joint \"%s\": <dynamics> friction=\"%g\" must be a finite number >= 0", j->name,
                friction);
  c->m->damping[c->m->bodies[b].joint.idx_v] = damping;
  c->m->joint_friction[c->m->bodies[b].joint.idx_v] = friction;
  return MR_OK;
}

/* the body of a moving joint from the body of its parent link */
static mr_status add_moving(urdf_ctx *c, const urdf_joint *j, mr_se3 X, mr_inertia Y) {
  urdf_link *l = &c->links[j->child];
  mr_vec3 axis = mr_v3(1, 0, 0);
  mr_status st = j->type == MR_JOINT_FREE ? MR_OK : read_axis(c, j, &axis);
  if (st) return st;
  int parent = c->links[j->parent].body;
  int b = mr_model_add_body(c->m, parent, j->name, j->type, X, axis, l->name, Y, c->err);
  if (b < 0) return fail_builder(c, l->node);
  l->body = b;
  l->X = mr_se3_identity();
  return j->type == MR_JOINT_FREE ? MR_OK : read_limits(c, j, b);
}

/* a link below its parent joint: a new body, or merged into the parent's body */
static mr_status add_link(urdf_ctx *c, urdf_link *l) {
  const urdf_joint *j = &c->joints[l->parent_joint];
  const urdf_link *p = &c->links[j->parent];
  mr_se3 origin;
  mr_inertia Y = l->Y;
  mr_status st = read_origin(c, j->node, &origin);
  if (st) return st;
  mr_se3 X = mr_se3_mul(&p->X, &origin);
  if (!j->fixed) return add_moving(c, j, X, Y);
  if (mr_model_add_fixed(c->m, p->body, X, l->name, Y, c->err) < 0) return fail_builder(c, l->node);
  l->body = p->body;
  l->X = X;
  return MR_OK;
}

/* the root link: the world itself, a free-flying body, or a link fixed to the world */
static mr_status add_root(urdf_ctx *c, urdf_link *l) {
  mr_inertia Y = l->Y;
  l->body = 0;
  l->X = mr_se3_identity();
  if (strcmp(l->name, "world") == 0) {
    if (mr_model_add_frame(c->m, 0, l->X, l->name, c->err) < 0) return fail_builder(c, l->node);
    return MR_OK;
  }
  if (!c->opt->floating) {
    if (mr_model_add_fixed(c->m, 0, l->X, l->name, Y, c->err) < 0) return fail_builder(c, l->node);
    return MR_OK;
  }
  int j = find_joint(c, "root_joint");
  if (j >= 0)
    return fail(c, c->joints[j].node, MR_ERR_INVALID,
                "joint name \"root_joint\" is reserved for the free-flyer of the floating option");
  l->body = mr_model_add_body(c->m, 0, "root_joint", MR_JOINT_FREE, l->X, mr_v3(1, 0, 0), l->name,
                              Y, c->err);
  return l->body < 0 ? fail_builder(c, l->node) : MR_OK;
}

/* depth-first from the root, children in document order; every link must be reached */
static mr_status walk(urdf_ctx *c, int root) {
  int *stack = malloc(((size_t)c->nlinks + 1) * sizeof *stack);
  int *order = malloc(((size_t)c->njoints + 1) * sizeof *order);
  if (!stack || !order) {
    free(stack), free(order);
    return fail(c, NULL, MR_ERR_NOMEM, "out of memory");
  }
  int top = 0, reached = 0;
  mr_status st = MR_OK;
  stack[top++] = root;
  while (top > 0 && !st) {
    urdf_link *l = &c->links[stack[--top]];
    st = l->parent_joint < 0 ? add_root(c, l) : add_link(c, l);
    if (!st) st = add_collisions(c, l);
    ++reached;
    /* push the children in reverse document order so that the first is visited first */
    int n = 0;
    for (int k = l->first_child; k >= 0; k = c->joints[k].next_sibling)
      order[n++] = k;
    while (n > 0)
      stack[top++] = c->joints[order[--n]].child;
  }
  free(stack), free(order);
  for (int i = 0; i < c->nlinks && !st && reached < c->nlinks; ++i)
    if (c->links[i].body < 0) {
      const urdf_joint *j = &c->joints[c->links[i].parent_joint];
      st = fail(c, j->node, MR_ERR_INVALID,
                "joint \"%s\" closes a loop: link \"%s\" is not reachable from the root link "
                "\"%s\"",
                j->name, c->links[i].name, c->links[root].name);
    }
  return st;
}

/* ---- driver ---- */

/* ---- moving joints without inertia ---- */

/* a dof without inertia: refused, or its joint locked (*relock set) with lock_massless */
static mr_status massless_dof(urdf_ctx *c, int dof, int count, int *relock) {
  const mr_body *b = &c->m->bodies[c->m->dof_body[dof]];
  int j = find_joint(c, b->joint.name);
  const xmlNode *n = j >= 0 ? c->joints[j].node : c->links[0].node;
  if (j < 0)
    return fail(c, n, MR_ERR_INVALID,
                "the free-flyer \"%s\" has no inertia along one of its directions: the root link "
                "\"%s\" (with the links fixed to it) carries no mass or no inertia, and the joints "
                "below it move freely in that direction; give the root link an inertia or lock the "
                "joints below it (robot key 'lock_joints', moreau rbd: --lock)",
                b->joint.name, b->name);
  if (c->opt->lock_massless) {
    c->joints[j].fixed = c->joints[j].locked = 1;
    *relock = 1;
    warn(c, n,
         "joint \"%s\" (link \"%s\"): the links it moves carry no mass or no inertia about its "
         "axis; locked at q = 0 (lock_massless)",
         b->joint.name, b->name);
    return MR_OK;
  }
  return fail(
      c, n, MR_ERR_INVALID,
      "joint \"%s\" (link \"%s\"): the links it moves carry no mass or no inertia about "
      "its axis (%d joint%s of the robot in this case), so its motion is undetermined; lock "
      "it with the robot key 'lock_joints: [%s]' or 'lock_massless: true' in a scene "
      "(moreau rbd: --lock %s or --lock-massless)",
      b->joint.name, b->name, count, count > 1 ? "s" : "", b->joint.name, b->joint.name);
}

/* the model's dofs whose pivot of M at the neutral configuration is below 1e-12 of M's largest
 * diagonal entry (round-off level): none, or locked (*relock), or an error */
static mr_status check_dofs(urdf_ctx *c, int *relock) {
  int bad[64];
  int n = mr_model_dofs_without_inertia(c->m, 1e-12, bad, 64);
  if (n < 0) return fail(c, NULL, MR_ERR_NOMEM, "out of memory");
  for (int k = 0; k < n && k < 64; ++k) {
    mr_status st = massless_dof(c, bad[k], n, relock);
    if (st) return st;
  }
  return MR_OK;
}

/* ---- mimic joints ---- */

/* the <mimic joint multiplier offset> of moving joint j (index i): a coupling of the model; when
 * the leader is fixed or locked, j is locked too (*relock) */
static mr_status add_mimic(urdf_ctx *c, int i, const xmlNode *mim, int *relock) {
  urdf_joint *j = &c->joints[i];
  char *leader = NULL;
  double mult = 1.0, off = 0.0;
  mr_status st = attr_string(c, mim, "joint", &leader);
  if (!st) st = attr_number(c, mim, "multiplier", &mult, 1.0);
  if (!st) st = attr_number(c, mim, "offset", &off, 0.0);
  int l = st ? -1 : find_joint(c, leader);
  if (!st && l < 0)
    st = fail(c, mim, MR_ERR_INVALID, "joint \"%s\": <mimic> joint=\"%s\" does not exist", j->name,
              leader);
  if (!st && c->joints[l].fixed) {
    j->fixed = j->locked = 1;
    *relock = 1;
    warn(c, mim, "joint \"%s\" mimics \"%s\", which is fixed or locked: locked too, at q = 0",
         j->name, leader);
  } else if (!st) {
    int fb = mr_model_joint_index(c->m, j->name), lb = mr_model_joint_index(c->m, leader);
    if (mr_model_add_mimic(c->m, fb, lb, mult, off, c->err) < 0) st = fail_builder(c, mim);
  }
  free(leader);
  return st;
}

/* every moving joint's <mimic>; a fixed joint's is meaningless and skipped */
static mr_status add_mimics(urdf_ctx *c, int *relock) {
  for (int i = 0; i < c->njoints; ++i) {
    xmlNode *mim = child(c->joints[i].node, "mimic");
    if (!mim || c->joints[i].fixed) continue;
    mr_status st = add_mimic(c, i, mim, relock);
    if (st) return st;
  }
  return MR_OK;
}

/* the model from the tree, again after locking joints that carry no inertia */
static mr_status build_model(urdf_ctx *c, int root) {
  for (;;) {
    if (!(c->m = mr_model_create(c->robot))) return fail(c, NULL, MR_ERR_NOMEM, "out of memory");
    int relock = 0;
    mr_status st = walk(c, root);
    if (!st) st = add_mimics(c, &relock);
    if (!st && !relock) st = check_dofs(c, &relock);
    if (st || !relock) return st;
    mr_model_free(c->m);
    c->m = NULL;
    for (int i = 0; i < c->nlinks; ++i)
      c->links[i].body = -1, c->links[i].X = mr_se3_identity();
  }
}

static mr_status build(urdf_ctx *c, const xmlNode *robot) {
  if (!is_element(robot, "robot"))
    return fail(c, robot, MR_ERR_PARSE, "the root element is <%s>, not <robot>",
                robot ? (const char *)robot->name : "");
  char *name = attr(robot, "name");
  snprintf(c->robot, sizeof c->robot, "%s", name ? name : "");
  xmlFree(name);
  int root = -1;
  mr_status st = collect(c, robot);
  if (!st) st = check_lock_names(c, robot);
  if (!st) st = connect(c);
  if (!st) st = find_root(c, &root);
  if (!st && c->opt->floating && strcmp(c->links[root].name, "world") == 0)
    warn(c, c->links[root].node,
         "the root link is \"world\": the floating option is ignored (the joints from \"world\" "
         "say how the robot is attached)");
  if (!st) st = read_inertias(c);
  if (!st) st = build_model(c, root);
  return st;
}

static mr_status parse_buffer(const char *xml, size_t len, const char *file, const char *dir,
                              const mr_urdf_options *opt, mr_model **out, mr_error *err) {
  mr_urdf_options def = mr_urdf_options_default();
  urdf_ctx c = {file, dir, opt ? opt : &def, err, NULL, "", 0.0, 0, 0, NULL, NULL, NULL, NULL};
  if (len > INT_MAX) return fail(&c, NULL, MR_ERR_IO, "file too large (%zu bytes)", len);
  xmlDoc *doc;
  int line;
  char msg[MR_ERROR_MSG_MAX];
  mr_status st = mr_xml_read(xml, len, &doc, &line, msg, sizeof msg);
  if (st == MR_ERR_NOMEM) return fail(&c, NULL, MR_ERR_NOMEM, "out of memory");
  st = st ? mr_error_set(c.err, MR_ERR_PARSE, "%s:%d: malformed XML: %s", c.file, line, msg)
          : build(&c, xmlDocGetRootElement(doc));
  for (int i = 0; i < c.nlinks; ++i)
    free(c.links[i].name);
  for (int i = 0; i < c.njoints; ++i)
    free(c.joints[i].name);
  free(c.links), free(c.joints), free(c.link_names), free(c.joint_names);
  xmlFreeDoc(doc);
  if (st)
    mr_model_free(c.m);
  else
    *out = c.m;
  return st;
}

mr_urdf_options mr_urdf_options_default(void) {
  mr_urdf_options o = {0, NULL, 0, 1, 0, NULL, 0, 0, NULL, NULL};
  return o;
}

mr_status mr_urdf_parse(const char *xml, const char *name, const mr_urdf_options *opt,
                        mr_model **out, mr_error *err) {
  *out = NULL;
  if (!name) name = "<string>";
  if (!xml) return mr_error_set(err, MR_ERR_INVALID, "%s: no URDF text", name);
  return parse_buffer(xml, strlen(xml), name, ".", opt, out, err);
}

/* the whole file, NUL-terminated, malloc'ed */
mr_status mr_urdf_load(const char *path, const mr_urdf_options *opt, mr_model **out,
                       mr_error *err) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  mr_status st = mr_read_file(path, &text, &len, err);
  if (st) return st;
  /* the directory of the file, for relative mesh paths */
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
  if (dir && !*dir) {
    free(dir);
    dir = strdup("/");
  }
  if (!dir)
    st = mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  else
    st = parse_buffer(text, len, path, dir, opt, out, err);
  free(dir);
  free(text);
  return st;
}
