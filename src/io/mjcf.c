/* The MJCF loader's front (see moreau/mjcf.h, docs/mjcf.md): reading the documents, <include>,
 * messages naming file and line, attribute readers with MuJoCo's rules, and the file's sections
 * in the order MuJoCo 2.2.2 reads them (compiler, option, size, default, asset, worldbody,
 * contact, equality, tendon, actuator, sensor, keyframe).
 *
 * <include file="F"/> is replaced by the children of F's root element, F relative to the main
 * file's directory (as MuJoCo does, whatever the including file); a file included twice is an
 * error. Included elements keep their own file name and line in messages (the name rides on the
 * node's _private pointer). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "core/file.h"
#include "io/mjcf_internal.h"
#include "io/xml_util.h"

/* ---- messages ---- */

const char *mj_file_of(const mj_ctx *c, const xmlNode *n) {
  return n && n->_private ? (const char *)n->_private : c->file;
}

long mj_line_of(const xmlNode *n) {
  return n ? xmlGetLineNo(n) : 0;
}

const char *mj_name(const xmlNode *n) {
  return n ? (const char *)n->name : "";
}

mr_status mj_status(const mj_ctx *c) {
  return c->err ? c->err->status : MR_ERR_INVALID;
}

/* "<geom name="x">" or "<geom>" for the element n */
static void element_label(const xmlNode *n, char *out, size_t len) {
  if (!n) {
    snprintf(out, len, "model");
    return;
  }
  xmlChar *name = xmlGetProp(n, (const xmlChar *)"name");
  if (name)
    snprintf(out, len, "<%s name=\"%.60s\">", mj_name(n), (const char *)name);
  else
    snprintf(out, len, "<%s>", mj_name(n));
  xmlFree(name);
}

mr_status mj_fail(mj_ctx *c, const xmlNode *n, mr_status st, const char *fmt, ...) {
  char msg[MR_ERROR_MSG_MAX], label[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  element_label(n, label, sizeof label);
  return mr_error_set(c->err, st, "%s:%ld: %s: %s", mj_file_of(c, n), mj_line_of(n), label, msg);
}

void mj_ignore(mj_ctx *c, const xmlNode *n, const char *what) {
  for (int i = 0; i < c->nignored; ++i)
    if (!strcmp(c->ignored[i].what, what)) {
      c->ignored[i].count++;
      return;
    }
  if (c->nignored == MJ_MAX_IGNORED) return;
  c->ignored[c->nignored++] = (mj_ignored){what, 1, n};
}

/* ---- DOM ---- */

int mj_is(const xmlNode *n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static const xmlNode *element_from(const xmlNode *n) {
  while (n && n->type != XML_ELEMENT_NODE)
    n = n->next;
  return n;
}

const xmlNode *mj_first(const xmlNode *n) {
  return n ? element_from(n->children) : NULL;
}
const xmlNode *mj_next(const xmlNode *n) {
  return n ? element_from(n->next) : NULL;
}

int mj_has(const xmlNode *n, const char *attr) {
  return xmlHasProp(n, (const xmlChar *)attr) != NULL;
}

/* ---- attributes ---- */

static int is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

mr_status mj_read(mj_ctx *c, const xmlNode *n, const char *attr, double *out, int len, int exact,
                  int *count) {
  xmlChar *x = xmlGetProp(n, (const xmlChar *)attr);
  if (count) *count = 0;
  if (!x) return MR_OK;
  const char *s = (const char *)x;
  int k = 0;
  mr_status st = MR_OK;
  for (;;) {
    while (is_space(*s))
      ++s;
    if (!*s) break;
    char *end;
    double v = strtod(s, &end);
    if (end == s || (*end && !is_space(*end)) || isnan(v)) {
      st = mj_fail(c, n, MR_ERR_PARSE, "attribute %s=\"%s\": '%.*s' is not a number", attr,
                   (const char *)x, (int)strcspn(s, " \t\r\n"), s);
      break;
    }
    if (k == len) {
      st = mj_fail(c, n, MR_ERR_PARSE, "attribute %s=\"%s\" has too much data (at most %d)", attr,
                   (const char *)x, len);
      break;
    }
    out[k++] = v;
    s = end;
  }
  if (!st && exact && k < len)
    st = mj_fail(c, n, MR_ERR_PARSE, "attribute %s=\"%s\" does not have enough data (%d needed)",
                 attr, (const char *)x, len);
  if (!st && count) *count = k;
  xmlFree(x);
  return st;
}

mr_status mj_read_int(mj_ctx *c, const xmlNode *n, const char *attr, int *out) {
  xmlChar *x = xmlGetProp(n, (const xmlChar *)attr);
  if (!x) return MR_OK;
  const char *s = (const char *)x;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  while (is_space(*end))
    ++end;
  mr_status st = MR_OK;
  if (end == s || *end || errno || v < INT_MIN || v > INT_MAX)
    st = mj_fail(c, n, MR_ERR_PARSE, "attribute %s=\"%s\" is not an integer", attr, s);
  else
    *out = (int)v;
  xmlFree(x);
  return st;
}

mr_status mj_read_text(mj_ctx *c, const xmlNode *n, const char *attr, char *out, size_t len,
                       int *found) {
  xmlChar *x = xmlGetProp(n, (const xmlChar *)attr);
  if (found) *found = x != NULL;
  if (!x) return MR_OK;
  mr_status st = MR_OK;
  if (strlen((const char *)x) >= len)
    st = mj_fail(c, n, MR_ERR_INVALID, "attribute %s=\"%.40s...\" is longer than %zu characters",
                 attr, (const char *)x, len - 1);
  else
    snprintf(out, len, "%s", (const char *)x);
  xmlFree(x);
  return st;
}

mr_status mj_read_keyword(mj_ctx *c, const xmlNode *n, const char *attr, const char *const *names,
                          const int *vals, int *out) {
  xmlChar *x = xmlGetProp(n, (const xmlChar *)attr);
  if (!x) return MR_OK;
  for (int k = 0; names[k]; ++k)
    if (!strcmp((const char *)x, names[k])) {
      *out = vals ? vals[k] : k;
      xmlFree(x);
      return MR_OK;
    }
  char list[256] = "";
  for (int k = 0; names[k]; ++k)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", names[k]);
  mr_status st = mj_fail(c, n, MR_ERR_PARSE, "attribute %s=\"%s\": expected one of %s", attr,
                         (const char *)x, list);
  xmlFree(x);
  return st;
}

mr_status mj_read_bool(mj_ctx *c, const xmlNode *n, const char *attr, int *out) {
  static const char *const names[] = {"false", "true", NULL};
  return mj_read_keyword(c, n, attr, names, NULL, out);
}

mr_status mj_read_tfauto(mj_ctx *c, const xmlNode *n, const char *attr, int *out) {
  static const char *const names[] = {"false", "true", "auto", NULL};
  return mj_read_keyword(c, n, attr, names, NULL, out);
}

mr_status mj_read_alt(mj_ctx *c, const xmlNode *n, mj_alt *alt, int with_fullinertia) {
  int k[5] = {0, 0, 0, 0, 0};
  if (mj_read(c, n, "axisangle", alt->axisangle, 4, 1, &k[0]) ||
      mj_read(c, n, "xyaxes", alt->xyaxes, 6, 1, &k[1]) ||
      mj_read(c, n, "zaxis", alt->zaxis, 3, 1, &k[2]) ||
      mj_read(c, n, "euler", alt->euler, 3, 1, &k[3]) ||
      (with_fullinertia && mj_read(c, n, "fullinertia", alt->fullinertia, 6, 1, &k[4])))
    return mj_status(c);
  int given = mj_has(n, "quat") + (k[0] > 0) + (k[1] > 0) + (k[2] > 0) + (k[3] > 0) + (k[4] > 0);
  if (given > 1)
    return mj_fail(c, n, MR_ERR_PARSE,
                   "multiple orientation specifiers (quat, axisangle, xyaxes, zaxis, euler%s) "
                   "for the same frame are not allowed",
                   with_fullinertia ? ", fullinertia" : "");
  return MR_OK;
}

/* ---- growing arrays ---- */

static int grow(void **p, int *cap, int n, size_t elem) {
  if (n < *cap) return 0;
  int c = *cap ? 2 * *cap : 8;
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return -1;
  memset((char *)q + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
  *p = q, *cap = c;
  return 0;
}
#define GROW(c, arr, n, cap)                                                                       \
  (grow((void **)&(c)->arr, &(c)->cap, (c)->n, sizeof *(c)->arr)                                   \
       ? mr_error_set((c)->err, MR_ERR_NOMEM, "%s: out of memory", (c)->file)                      \
       : MR_OK)

/* ---- documents and includes ---- */

/* parse a file; NULL with err naming the file (and the line of an XML error) */
static xmlDoc *read_doc(mj_ctx *c, const char *path, const xmlNode *from) {
  char *text = NULL;
  size_t len = 0;
  mr_error e = {MR_OK, ""};
  if (mr_read_file(path, &text, &len, &e)) {
    if (from)
      mj_fail(c, from, e.status, "cannot read the included file: %s", e.msg);
    else
      mr_error_set(c->err, e.status, "%s", e.msg);
    return NULL;
  }
  xmlDoc *doc;
  int line;
  char msg[MR_ERROR_MSG_MAX];
  mr_status st = mr_xml_read(text, len, &doc, &line, msg, sizeof msg);
  if (st) mr_error_set(c->err, st, "%s:%d: malformed XML: %s", path, line, msg);
  free(text);
  return doc;
}

/* n and every element below it remember file */
static void mark_file(xmlNode *n, char *file) {
  if (n->type != XML_ELEMENT_NODE) return;
  n->_private = file;
  for (xmlNode *k = n->children; k; k = k->next)
    mark_file(k, file);
}

static mr_status expand_includes(mj_ctx *c, xmlNode *n);

/* replace <include file="F"/> by the children of F's root; *next is the first spliced node
 * (or the node after the include when F's root is empty) */
static mr_status splice_include(mj_ctx *c, xmlNode *inc, xmlNode **next) {
  char rel[MR_PATH_MAX], path[2 * MR_PATH_MAX];
  int found = 0;
  if (mj_first(inc))
    return mj_fail(c, inc, MR_ERR_PARSE, "an include element cannot have children");
  if (mj_read_text(c, inc, "file", rel, sizeof rel, &found)) return mj_status(c);
  if (!found) return mj_fail(c, inc, MR_ERR_PARSE, "required attribute missing: 'file'");
  snprintf(path, sizeof path, "%s%s", rel[0] == '/' ? "" : c->dir, rel);
  if (!strcmp(path, c->file))
    return mj_fail(c, inc, MR_ERR_INVALID, "file '%s' includes itself", rel);
  for (int i = 0; i < c->ndocs; ++i)
    if (!strcmp(c->included[i], path))
      return mj_fail(c, inc, MR_ERR_INVALID, "file '%s' already included", rel);
  xmlDoc **docs = realloc(c->docs, (size_t)(c->ndocs + 1) * sizeof *docs);
  if (docs) c->docs = docs;
  char **names = realloc(c->included, (size_t)(c->ndocs + 1) * sizeof *names);
  if (names) c->included = names;
  if (!docs || !names) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  xmlDoc *doc = read_doc(c, path, inc);
  if (!doc) return mj_status(c);
  if (!(c->included[c->ndocs] = strdup(path))) {
    xmlFreeDoc(doc);
    return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  }
  c->docs[c->ndocs++] = doc;
  xmlNode *root = xmlDocGetRootElement(doc);
  if (!root) return mj_fail(c, inc, MR_ERR_PARSE, "root element missing in file '%s'", rel);
  *next = NULL;
  for (xmlNode *k = root->children; k; k = k->next) {
    if (k->type != XML_ELEMENT_NODE) continue;
    xmlNode *copy = xmlDocCopyNode(k, c->doc, 1); /* keeps the line numbers */
    if (!copy) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
    copy->next = NULL;
    mark_file(copy, c->included[c->ndocs - 1]);
    xmlAddPrevSibling(inc, copy);
    if (!*next) *next = copy;
  }
  if (!*next) return mj_fail(c, inc, MR_ERR_PARSE, "empty include file '%s'", rel);
  xmlUnlinkNode(inc);
  xmlFreeNode(inc);
  return MR_OK;
}

static mr_status expand_includes(mj_ctx *c, xmlNode *n) {
  for (xmlNode *k = n->children, *after; k; k = after) {
    after = k->next;
    if (k->type != XML_ELEMENT_NODE) continue;
    if (!strcmp((const char *)k->name, "include")) {
      xmlNode *first = NULL;
      if (splice_include(c, k, &first)) return mj_status(c);
      after = first; /* the spliced elements are scanned next (nested includes) */
      continue;
    }
    if (expand_includes(c, k)) return mj_status(c);
  }
  return MR_OK;
}

/* ---- sections ---- */

static mr_status parse_compiler(mj_ctx *c, const xmlNode *n) {
  static const char *const coord[] = {"local", "global", NULL};
  static const char *const angle[] = {"radian", "degree", NULL};
  char seq[16] = "";
  int found = 0;
  if (mj_read_bool(c, n, "autolimits", &c->autolimits) ||
      mj_read(c, n, "boundmass", &c->boundmass, 1, 1, NULL) ||
      mj_read(c, n, "boundinertia", &c->boundinertia, 1, 1, NULL) ||
      mj_read(c, n, "settotalmass", &c->settotalmass, 1, 1, NULL) ||
      mj_read_bool(c, n, "balanceinertia", &c->balanceinertia) ||
      mj_read_bool(c, n, "strippath", &c->strippath) ||
      mj_read_keyword(c, n, "coordinate", coord, NULL, &c->global) ||
      mj_read_keyword(c, n, "angle", angle, NULL, &c->degree) ||
      mj_read_text(c, n, "eulerseq", seq, sizeof seq, &found) ||
      mj_read_text(c, n, "meshdir", c->meshdir, sizeof c->meshdir, NULL) ||
      mj_read_bool(c, n, "discardvisual", &c->discardvisual) ||
      mj_read_tfauto(c, n, "inertiafromgeom", &c->inertiafromgeom))
    return mj_status(c);
  double gr[2] = {c->inertiagrouprange[0], c->inertiagrouprange[1]};
  int k = 0;
  if (mj_read(c, n, "inertiagrouprange", gr, 2, 1, &k)) return mj_status(c);
  if (k) c->inertiagrouprange[0] = (int)gr[0], c->inertiagrouprange[1] = (int)gr[1];
  if (found && strlen(seq) != 3)
    return mj_fail(c, n, MR_ERR_PARSE,
                   "attribute eulerseq=\"%s\": the euler format must have "
                   "length 3",
                   seq);
  if (found) memcpy(c->eulerseq, seq, 4);
  for (const xmlNode *k2 = mj_first(n); k2; k2 = mj_next(k2))
    mj_ignore(c, k2, "<compiler><lengthrange> (muscle length ranges)");
  return MR_OK;
}

/* <option><flag .../>: enable / disable bits */
static mr_status parse_flags(mj_ctx *c, const xmlNode *n) {
  static const char *const names[] = {
      "constraint", "equality",  "frictionloss", "limit",     "contact", "passive", "gravity",
      "clampctrl",  "warmstart", "filterparent", "actuation", "refsafe", "sensor",  NULL};
  static const char *const on_off[] = {"disable", "enable", NULL};
  for (int k = 0; names[k]; ++k) {
    int v = -1;
    if (mj_read_keyword(c, n, names[k], on_off, NULL, &v)) return mj_status(c);
    if (v == 0) c->disable |= 1 << k;
    if (v == 1) c->disable &= ~(1 << k);
  }
  int v = -1;
  if (mj_read_keyword(c, n, "override", on_off, NULL, &v)) return mj_status(c);
  if (v >= 0) c->enable = v ? c->enable | MJ_ENBL_OVERRIDE : c->enable & ~MJ_ENBL_OVERRIDE;
  return MR_OK;
}

static mr_status parse_option(mj_ctx *c, const xmlNode *n) {
  static const char *const integ[] = {"Euler", "RK4", "implicit", NULL};
  static const char *const coll[] = {"all", "predefined", "dynamic", NULL};
  static const char *const cone[] = {"pyramidal", "elliptic", NULL};
  static const char *const jac[] = {"dense", "sparse", "auto", NULL};
  static const char *const solver[] = {"PGS", "CG", "Newton", NULL};
  int dummy = 0;
  double o[3];
  c->option_node = n;
  if (mj_read(c, n, "timestep", &c->timestep, 1, 1, NULL) ||
      mj_read(c, n, "gravity", c->gravity, 3, 1, NULL) ||
      mj_read(c, n, "wind", c->wind, 3, 1, NULL) ||
      mj_read(c, n, "density", &c->density, 1, 1, NULL) ||
      mj_read(c, n, "viscosity", &c->viscosity, 1, 1, NULL) ||
      mj_read(c, n, "o_margin", &c->o_margin, 1, 1, NULL) ||
      mj_read(c, n, "magnetic", o, 3, 1, NULL) ||
      mj_read_keyword(c, n, "integrator", integ, NULL, &c->integrator) ||
      mj_read_keyword(c, n, "collision", coll, NULL, &c->collision) ||
      mj_read_keyword(c, n, "cone", cone, NULL, &c->cone) ||
      mj_read_keyword(c, n, "jacobian", jac, NULL, &dummy) ||
      mj_read_keyword(c, n, "solver", solver, NULL, &dummy))
    return mj_status(c);
  static const char *const solver_attrs[] = {"apirate",
                                             "impratio",
                                             "tolerance",
                                             "noslip_tolerance",
                                             "mpr_tolerance",
                                             "iterations",
                                             "noslip_iterations",
                                             "mpr_iterations",
                                             "o_solref",
                                             "o_solimp",
                                             "jacobian",
                                             "solver",
                                             NULL};
  for (int k = 0; solver_attrs[k]; ++k)
    if (mj_has(n, solver_attrs[k]))
      mj_ignore(c, n,
                "<option> solver settings (apirate, impratio, tolerance, iterations, "
                "solver, jacobian, noslip, mpr)");
  for (const xmlNode *k = mj_first(n); k; k = mj_next(k))
    if (parse_flags(c, k)) return mj_status(c);
  if (mj_has(n, "integrator") && c->integrator)
    mj_ignore(c, n, "<option integrator> (moreau steps with its own semi-implicit Euler scheme)");
  if (mj_has(n, "cone"))
    mj_ignore(c, n, "<option cone> (moreau's friction cones are exact circular cones)");
  if (mj_has(n, "wind") || mj_has(n, "magnetic"))
    mj_ignore(c, n, "<option wind, magnetic> (act only through fluid forces and sensors)");
  if (!(c->timestep > 0))
    return mj_fail(c, n, MR_ERR_INVALID, "timestep %g must be positive", c->timestep);
  return MR_OK;
}

/* <asset>: meshes and heightfields are read; textures, materials and skins only look */
static mr_status parse_asset(mj_ctx *c, const xmlNode *sec) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    if (mj_is(n, "mesh")) {
      if (GROW(c, meshes, nmeshes, cap_meshes)) return mj_status(c);
      mj_mesh_el *m = &c->meshes[c->nmeshes++];
      m->node = n;
      if (mj_read_text(c, n, "name", m->name, sizeof m->name, NULL)) return mj_status(c);
    } else if (mj_is(n, "hfield")) {
      if (GROW(c, hfields, nhfields, cap_hfields)) return mj_status(c);
      mj_hfield_el *h = &c->hfields[c->nhfields++];
      h->node = n;
      if (mj_read_text(c, n, "name", h->name, sizeof h->name, NULL) ||
          mj_read_text(c, n, "file", h->file, sizeof h->file, NULL) ||
          mj_read_int(c, n, "nrow", &h->nrow) || mj_read_int(c, n, "ncol", &h->ncol) ||
          mj_read(c, n, "size", h->size, 4, 1, NULL))
        return mj_status(c);
    } else {
      mj_ignore(c, n, "<texture>, <material>, <skin> (rendering)");
    }
  }
  return MR_OK;
}

/* ---- bodies ---- */

static mr_status new_body(mj_ctx *c, const xmlNode *n, int parent, int cls, int *id) {
  if (GROW(c, bodies, nbodies, cap_bodies)) return mj_status(c);
  mj_body *b = &c->bodies[c->nbodies];
  memset(b, 0, sizeof *b);
  b->node = n;
  b->parent = parent;
  b->cls = cls;
  b->quat[0] = b->iquat[0] = 1.0;
  b->ipos[0] = NAN;
  b->alt.axisangle[0] = b->alt.xyaxes[0] = b->alt.zaxis[0] = b->alt.euler[0] = NAN;
  b->alt.fullinertia[0] = NAN;
  b->ialt = b->alt;
  *id = c->nbodies++;
  return MR_OK;
}

#define BODY_GROW(c, b, arr, n, cap)                                                               \
  (grow((void **)&(b)->arr, &(b)->cap, (b)->n, sizeof *(b)->arr)                                   \
       ? mr_error_set((c)->err, MR_ERR_NOMEM, "%s: out of memory", (c)->file)                      \
       : MR_OK)

static mr_status body_inertial(mj_ctx *c, const xmlNode *n, mj_body *b) {
  int k = 0;
  if (b->explicit_inertial) return mj_fail(c, n, MR_ERR_PARSE, "a body has at most one <inertial>");
  b->explicit_inertial = 1;
  if (!mj_has(n, "pos") || !mj_has(n, "mass"))
    return mj_fail(c, n, MR_ERR_PARSE, "required attribute missing: '%s'",
                   mj_has(n, "pos") ? "mass" : "pos");
  if (mj_read(c, n, "pos", b->ipos, 3, 1, NULL) || mj_read(c, n, "quat", b->iquat, 4, 1, NULL) ||
      mj_read(c, n, "mass", &b->mass, 1, 1, NULL) ||
      mj_read(c, n, "diaginertia", b->inertia, 3, 1, &k) || mj_read_alt(c, n, &b->ialt, 1))
    return mj_status(c);
  return MR_OK;
}

static mr_status body_joint(mj_ctx *c, const xmlNode *n, int bid, int cls, int free_joint) {
  mj_body *b = &c->bodies[bid];
  if (bid == 0) return mj_fail(c, n, MR_ERR_INVALID, "the world body cannot have joints");
  if (BODY_GROW(c, b, joints, njoints, cap_j)) return mj_status(c);
  mj_joint_el *j = &b->joints[b->njoints++];
  memset(j, 0, sizeof *j);
  j->node = n;
  j->body = bid;
  if (free_joint) {
    mj_class base;
    mj_class_init(&base);
    j->j = base.joint; /* a freejoint takes no defaults */
    j->j.type = MJ_FREE;
    return mj_read_text(c, n, "name", j->name, sizeof j->name, NULL) ||
                   mj_read_int(c, n, "group", &j->j.group)
               ? mj_status(c)
               : MR_OK;
  }
  j->j = c->classes[cls].joint;
  if (mj_read_text(c, n, "name", j->name, sizeof j->name, NULL)) return mj_status(c);
  return mj_joint_attrs(c, n, &j->j);
}

static mr_status body_geom(mj_ctx *c, const xmlNode *n, int bid, int cls) {
  mj_body *b = &c->bodies[bid];
  if (BODY_GROW(c, b, geoms, ngeoms, cap_g)) return mj_status(c);
  mj_geom_el *g = &b->geoms[b->ngeoms];
  memset(g, 0, sizeof *g);
  g->node = n;
  g->body = bid;
  g->g = c->classes[cls].geom;
  if (mj_read_text(c, n, "name", g->name, sizeof g->name, NULL) || mj_geom_attrs(c, n, &g->g))
    return mj_status(c);
  /* discardvisual drops geoms that collide with nothing (and their mass) */
  if (c->discardvisual && !g->g.contype && !g->g.conaffinity) return MR_OK;
  b->ngeoms++;
  return MR_OK;
}

static mr_status body_site(mj_ctx *c, const xmlNode *n, int bid, int cls) {
  mj_body *b = &c->bodies[bid];
  if (BODY_GROW(c, b, sites, nsites, cap_s)) return mj_status(c);
  mj_site_el *s = &b->sites[b->nsites++];
  memset(s, 0, sizeof *s);
  s->node = n;
  s->body = bid;
  s->s = c->classes[cls].site;
  if (mj_read_text(c, n, "name", s->name, sizeof s->name, NULL)) return mj_status(c);
  return mj_site_attrs(c, n, &s->s);
}

static mr_status parse_body_children(mj_ctx *c, const xmlNode *sec, int bid);

/* a child <body>: its frame attributes, then its children with its class */
static mr_status child_body(mj_ctx *c, const xmlNode *n, int parent) {
  int cls = c->bodies[parent].cls, id, found = 0;
  char cc[MJ_NAME];
  if (mj_read_text(c, n, "childclass", cc, sizeof cc, &found)) return mj_status(c);
  if (found && (cls = mj_class_find(c, cc)) < 0)
    return mj_fail(c, n, MR_ERR_INVALID, "unknown default childclass '%s'", cc);
  if (new_body(c, n, parent, cls, &id)) return mj_status(c);
  mj_body *b = &c->bodies[id];
  b->has_pos = mj_has(n, "pos");
  if (mj_read_text(c, n, "name", b->name, sizeof b->name, NULL) ||
      mj_read(c, n, "pos", b->pos, 3, 1, NULL) || mj_read(c, n, "quat", b->quat, 4, 1, NULL) ||
      mj_read_bool(c, n, "mocap", &b->mocap) || mj_read_alt(c, n, &b->alt, 0))
    return mj_status(c);
  return parse_body_children(c, n, id);
}

static mr_status parse_body_children(mj_ctx *c, const xmlNode *sec, int bid) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    int cls;
    if (mj_class_of(c, n, c->bodies[bid].cls, &cls)) return mj_status(c);
    mr_status st = MR_OK;
    if (mj_is(n, "inertial")) {
      if (bid == 0) return mj_fail(c, n, MR_ERR_INVALID, "the world body cannot have inertia");
      st = body_inertial(c, n, &c->bodies[bid]);
    } else if (mj_is(n, "joint") || mj_is(n, "freejoint")) {
      st = body_joint(c, n, bid, cls, mj_is(n, "freejoint"));
    } else if (mj_is(n, "geom")) {
      st = body_geom(c, n, bid, cls);
    } else if (mj_is(n, "site")) {
      st = body_site(c, n, bid, cls);
    } else if (mj_is(n, "body")) {
      st = child_body(c, n, bid);
    } else if (mj_is(n, "camera") || mj_is(n, "light")) {
      mj_ignore(c, n, "<camera>, <light> (rendering)");
    } else if (mj_is(n, "composite")) {
      st = mj_fail(c, n, MR_ERR_UNSUPPORTED,
                   "composite objects (particles, ropes, cloth, soft bodies held by soft "
                   "equality constraints) are not modelled");
    }
    if (st) return st;
  }
  return MR_OK;
}

/* ---- contact, equality, tendon, actuator, keyframe ---- */

static mr_status parse_contact(mj_ctx *c, const xmlNode *sec) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    int cls = 0, found1 = 0, found2 = 0;
    if (mj_class_of(c, n, 0, &cls)) return mj_status(c);
    if (mj_is(n, "pair")) {
      if (GROW(c, pairs, npairs, cap_pairs)) return mj_status(c);
      mj_pair_el *p = &c->pairs[c->npairs++];
      memset(p, 0, sizeof *p);
      p->node = n;
      p->p = c->classes[cls].pair;
      if (mj_read_text(c, n, "name", p->name, sizeof p->name, NULL) ||
          mj_read_text(c, n, "geom1", p->geom1, sizeof p->geom1, &found1) ||
          mj_read_text(c, n, "geom2", p->geom2, sizeof p->geom2, &found2) ||
          mj_pair_attrs(c, n, &p->p))
        return mj_status(c);
    } else {
      if (GROW(c, excludes, nexcludes, cap_excludes)) return mj_status(c);
      mj_exclude_el *x = &c->excludes[c->nexcludes++];
      x->node = n;
      if (mj_read_text(c, n, "body1", x->body1, sizeof x->body1, &found1) ||
          mj_read_text(c, n, "body2", x->body2, sizeof x->body2, &found2))
        return mj_status(c);
    }
    if (!found1 || !found2)
      return mj_fail(c, n, MR_ERR_PARSE, "required attribute missing: '%s'",
                     mj_is(n, "pair") ? (found1 ? "geom2" : "geom1")
                                      : (found1 ? "body2" : "body1"));
  }
  return MR_OK;
}

static mr_status parse_equality(mj_ctx *c, const xmlNode *sec) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    int cls = 0, found = 0;
    if (mj_class_of(c, n, 0, &cls) || GROW(c, equalities, nequalities, cap_equalities))
      return mj_status(c);
    mj_equality_el *e = &c->equalities[c->nequalities++];
    memset(e, 0, sizeof *e);
    e->node = n;
    e->active = c->classes[cls].eq_active;
    e->polycoef[1] = 1.0;
    snprintf(e->type, sizeof e->type, "%s", mj_name(n));
    const char *k1 = mj_is(n, "joint") ? "joint1" : mj_is(n, "tendon") ? "tendon1" : "body1";
    const char *k2 = mj_is(n, "joint") ? "joint2" : mj_is(n, "tendon") ? "tendon2" : "body2";
    if (mj_is(n, "distance"))
      return mj_fail(c, n, MR_ERR_INVALID,
                     "distance equality constraints were removed in MuJoCo 2.2.2");
    if (mj_read_text(c, n, "name", e->name, sizeof e->name, NULL) ||
        mj_read_text(c, n, k1, e->obj1, sizeof e->obj1, &found) ||
        mj_read_text(c, n, k2, e->obj2, sizeof e->obj2, NULL) ||
        mj_read_bool(c, n, "active", &e->active) ||
        mj_read(c, n, "polycoef", e->polycoef, 5, 1, NULL))
      return mj_status(c);
    mj_note_soft(c, n);
    if (!found) return mj_fail(c, n, MR_ERR_PARSE, "required attribute missing: '%s'", k1);
  }
  return MR_OK;
}

static mr_status fixed_tendon_joint(mj_ctx *c, const xmlNode *w, mj_tendon_el *t) {
  int found = 0;
  double coef = 0;
  if (t->njoints == MJ_MAX_TENDON_JOINTS)
    return mj_fail(c, w, MR_ERR_UNSUPPORTED, "a fixed tendon of more than %d joints",
                   MJ_MAX_TENDON_JOINTS);
  if (mj_read_text(c, w, "joint", t->joint[t->njoints], MJ_NAME, &found) ||
      mj_read(c, w, "coef", &coef, 1, 1, NULL))
    return mj_status(c);
  if (!found || !mj_has(w, "coef"))
    return mj_fail(c, w, MR_ERR_PARSE, "required attribute missing: '%s'",
                   found ? "coef" : "joint");
  t->coef[t->njoints++] = coef;
  return MR_OK;
}

static mr_status parse_tendon(mj_ctx *c, const xmlNode *sec) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    int cls = 0;
    if (mj_class_of(c, n, 0, &cls) || GROW(c, tendons, ntendons, cap_tendons)) return mj_status(c);
    mj_tendon_el *t = &c->tendons[c->ntendons++];
    memset(t, 0, sizeof *t);
    t->node = n;
    t->kind = mj_is(n, "spatial");
    t->t = c->classes[cls].tendon;
    if (mj_read_text(c, n, "name", t->name, sizeof t->name, NULL) || mj_tendon_attrs(c, n, &t->t))
      return mj_status(c);
    for (const xmlNode *w = mj_first(n); w && !t->kind; w = mj_next(w))
      if (fixed_tendon_joint(c, w, t)) return mj_status(c);
  }
  return MR_OK;
}

static mr_status parse_actuators(mj_ctx *c, const xmlNode *sec) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    int cls = 0;
    if (mj_class_of(c, n, 0, &cls) || GROW(c, actuators, nactuators, cap_actuators))
      return mj_status(c);
    mj_actuator_el *a = &c->actuators[c->nactuators++];
    memset(a, 0, sizeof *a);
    a->node = n;
    a->a = c->classes[cls].actuator;
    snprintf(a->type, sizeof a->type, "%s", mj_name(n));
    if (mj_read_text(c, n, "name", a->name, sizeof a->name, NULL) || mj_actuator_attrs(c, n, a))
      return mj_status(c);
  }
  return MR_OK;
}

/* key attributes of at most len numbers into a malloc'ed array */
static mr_status key_vector(mj_ctx *c, const xmlNode *n, const char *attr, double **out, int *cnt) {
  *cnt = 0;
  if (!mj_has(n, attr)) return MR_OK;
  xmlChar *x = xmlGetProp(n, (const xmlChar *)attr);
  size_t len = strlen((const char *)x) / 2 + 2;
  xmlFree(x);
  *out = malloc(len * sizeof **out);
  if (!*out) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  return mj_read(c, n, attr, *out, (int)len, 0, cnt);
}

static mr_status parse_keyframes(mj_ctx *c, const xmlNode *sec) {
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n)) {
    if (GROW(c, keys, nkeys, cap_keys)) return mj_status(c);
    mj_key_el *k = &c->keys[c->nkeys++];
    memset(k, 0, sizeof *k);
    k->node = n;
    double *act = NULL, *mpos = NULL, *mquat = NULL;
    int nmquat = 0;
    mr_status st = mj_read_text(c, n, "name", k->name, sizeof k->name, NULL);
    if (!st) st = mj_read(c, n, "time", &k->time, 1, 1, NULL);
    if (!st) st = key_vector(c, n, "qpos", &k->qpos, &k->nqpos);
    if (!st) st = key_vector(c, n, "qvel", &k->qvel, &k->nqvel);
    if (!st) st = key_vector(c, n, "ctrl", &k->ctrl, &k->nctrl);
    if (!st) st = key_vector(c, n, "act", &act, &k->nact);
    if (!st) st = key_vector(c, n, "mpos", &mpos, &k->nmpos);
    if (!st) st = key_vector(c, n, "mquat", &mquat, &nmquat);
    free(act), free(mpos), free(mquat);
    if (st) return st;
    if (k->nact || k->nmpos || nmquat)
      return mj_fail(c, n, MR_ERR_INVALID, "attribute %s: the model has no %s",
                     k->nact ? "act" : "mpos / mquat",
                     k->nact ? "actuator with activation state" : "mocap body");
  }
  return MR_OK;
}

/* ---- the whole document ---- */

/* every section of the given name, in document order */
#define EACH_SECTION(root, name, n)                                                                \
  for (const xmlNode *n = mj_first(root); n; n = mj_next(n))                                       \
    if (mj_is(n, name))

static mr_status parse_sections(mj_ctx *c, const xmlNode *root) {
  EACH_SECTION(root, "compiler", n) if (parse_compiler(c, n)) return mj_status(c);
  EACH_SECTION(root, "option", n) if (parse_option(c, n)) return mj_status(c);
  EACH_SECTION(root, "size", n) mj_ignore(c, n, "<size> (memory sizes)");
  EACH_SECTION(root, "visual", n) mj_ignore(c, n, "<visual> (rendering)");
  EACH_SECTION(root, "statistic", n) mj_ignore(c, n, "<statistic> (rendering)");
  EACH_SECTION(root, "default", n) if (mj_parse_defaults(c, n, -1)) return mj_status(c);
  EACH_SECTION(root, "custom", n) mj_ignore(c, n, "<custom> (user data)");
  EACH_SECTION(root, "asset", n) if (parse_asset(c, n)) return mj_status(c);
  int world;
  if (new_body(c, NULL, -1, 0, &world)) return mj_status(c);
  snprintf(c->bodies[world].name, MJ_NAME, "world");
  EACH_SECTION(root, "worldbody", n) {
    if (n->properties) return mj_fail(c, n, MR_ERR_PARSE, "the world body cannot have attributes");
    if (parse_body_children(c, n, world)) return mj_status(c);
  }
  EACH_SECTION(root, "contact", n) if (parse_contact(c, n)) return mj_status(c);
  EACH_SECTION(root, "equality", n) if (parse_equality(c, n)) return mj_status(c);
  EACH_SECTION(root, "tendon", n) if (parse_tendon(c, n)) return mj_status(c);
  EACH_SECTION(root, "actuator", n) if (parse_actuators(c, n)) return mj_status(c);
  EACH_SECTION(root, "sensor", n)
  mj_ignore(c, n,
            "<sensor> (measurements, computed by moreau's "
            "own read-outs instead)");
  EACH_SECTION(root, "keyframe", n) if (parse_keyframes(c, n)) return mj_status(c);
  return MR_OK;
}

/* MuJoCo's defaults for what the file may change */
static void ctx_defaults(mj_ctx *c) {
  c->degree = 1;
  c->inertiafromgeom = MJ_AUTO;
  c->inertiagrouprange[0] = 0, c->inertiagrouprange[1] = 5;
  c->settotalmass = -1;
  snprintf(c->eulerseq, sizeof c->eulerseq, "xyz");
  c->timestep = 0.002;
  c->gravity[2] = -9.81;
}

static void ctx_free(mj_ctx *c) {
  for (int b = 0; b < c->nbodies; ++b)
    free(c->bodies[b].joints), free(c->bodies[b].geoms), free(c->bodies[b].sites);
  for (int k = 0; k < c->nkeys; ++k)
    free(c->keys[k].qpos), free(c->keys[k].qvel), free(c->keys[k].ctrl);
  free(c->bodies), free(c->classes), free(c->tendons), free(c->actuators), free(c->equalities);
  free(c->pairs), free(c->excludes), free(c->keys), free(c->hfields), free(c->meshes);
  xmlFreeDoc(c->doc);
  for (int i = 0; i < c->ndocs; ++i)
    xmlFreeDoc(c->docs[i]), free(c->included[i]);
  free(c->docs), free(c->included);
}

/* the directory of path with a trailing '/', "" for a bare name */
static void dir_of(const char *path, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    out[0] = '\0';
    return;
  }
  snprintf(out, len, "%.*s/", (int)(slash - path), path);
}

static mr_status parse_file(mj_ctx *c) {
  if (!(c->doc = read_doc(c, c->file, NULL))) return mj_status(c);
  xmlNode *root = xmlDocGetRootElement(c->doc);
  if (!root || strcmp((const char *)root->name, "mujoco"))
    return mj_fail(c, root, MR_ERR_PARSE, "the root element must be <mujoco>");
  if (expand_includes(c, root) || mj_schema_check(c, root)) return mj_status(c);
  if (mj_read_text(c, root, "model", c->model_name, sizeof c->model_name, NULL))
    return mj_status(c);
  mj_class base;
  mj_class_init(&base);
  if (GROW(c, classes, nclasses, cap_classes)) return mj_status(c);
  c->classes[c->nclasses++] = base;
  return parse_sections(c, root);
}

mr_status mj_load_result(const char *path, const mr_mjcf_options *opt, mj_result *r, mj_ctx *c,
                         mr_error *err) {
  memset(c, 0, sizeof *c);
  memset(r, 0, sizeof *r);
  c->file = path;
  c->opt = opt;
  c->err = err;
  ctx_defaults(c);
  dir_of(path, c->dir, sizeof c->dir);
  mr_status st = parse_file(c);
  if (!st) st = mj_compile(c);
  if (!st) st = mj_build_model(c, r);
  if (opt && opt->tree_only) {
    if (c->ntendons + c->nactuators + c->nequalities + c->npairs + c->nexcludes + c->nkeys)
      mj_ignore(c, NULL,
                "tendons, actuators, equalities, contact pairs and exclusions, keyframes "
                "(tree only)");
    return st;
  }
  if (!st) st = mj_build_contacts(c, r);
  if (!st) st = mj_build_actuation(c, r);
  if (!st) st = mj_build_keys(c, r);
  if (st) mj_result_free(r);
  return st;
}

void mj_ctx_free(mj_ctx *c) {
  ctx_free(c);
}

/* ---- format detection ---- */

int mr_mjcf_is_mjcf_text(const char *s) {
  if (!strncmp(s, "\xEF\xBB\xBF", 3)) s += 3; /* UTF-8 byte order mark */
  for (;;) {
    while (*s && isspace((unsigned char)*s))
      ++s;
    /* the XML declaration, comments, a document type: skipped */
    const char *close = !strncmp(s, "<?", 2)          ? "?>"
                        : !strncmp(s, "<!--", 4)      ? "-->"
                        : !strncmp(s, "<!DOCTYPE", 9) ? ">"
                                                      : NULL;
    if (!close) break;
    const char *end = strstr(s + 2, close);
    if (!end) return 0;
    s = end + strlen(close);
  }
  return !strncmp(s, "<mujoco", 7) && (s[7] == '>' || s[7] == '/' || isspace((unsigned char)s[7]));
}

int mr_mjcf_is_mjcf(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  static const size_t cap = 1 << 16; /* long licence comments come first */
  char *buf = malloc(cap + 1);
  if (!buf) return fclose(f), 0;
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  buf[n] = '\0';
  int yes = mr_mjcf_is_mjcf_text(buf);
  free(buf);
  return yes;
}
