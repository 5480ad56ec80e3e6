/* moreau qpcc PROBLEM.json [--json] [--max-qp N]: solve a QPCC control problem (Tan, Turk & Liu,
 * supplementary document, eq. 1-3) by the best-first mode search of src/control/qpcc.c. The
 * JSON format is documented in docs/qpcc.md. moreau qpcc --scene S.yaml [...] builds the problem
 * from a scene's initial state (mr_qpcc_from_sim, src/control/qpcc_scene.c). Exit codes: 0 optimum
 * found, 1 infeasible, budget exhausted, non-convex or unbounded objective (or a QP failure), 2 bad
 * usage or input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/json.h"
#include "moreau/qpcc.h"
#include "moreau/scene.h"

/* the problem and the arrays it borrows (owned here) */
typedef struct {
  mr_qpcc_problem p;
  double *M, *f, *A, *ulb, *uub, *N, *D, *mu, *H, *c, *C, *d;
  int *nd;
  int max_qp;
} problem_file;

static void problem_free(problem_file *pf) {
  free(pf->M), free(pf->f), free(pf->A), free(pf->ulb), free(pf->uub), free(pf->N), free(pf->D);
  free(pf->mu), free(pf->H), free(pf->c), free(pf->C), free(pf->d), free(pf->nd);
}

/* the largest dimension (nv, nu, contacts, tangents, task rows) a problem file may give: the
 * search solves dense QPs of that order, and products such as nv·nv then stay far from
 * overflowing int (docs/qpcc.md) */
#define QPCC_DIM_MAX 2048

/* a zeroed rows x cols array of doubles, NULL when the size overflows or memory runs out */
static double *doubles2(int rows, int cols) {
  size_t r = rows > 0 ? (size_t)rows : 1, c = cols > 0 ? (size_t)cols : 1;
  if (c > SIZE_MAX / sizeof(double) / r) return NULL;
  return calloc(r * c, sizeof(double));
}

static double *doubles(int n) {
  return doubles2(n, 1);
}

static mr_status where(mr_error *err, const char *name, const mr_json *v, const char *msg,
                       const char *key) {
  return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: %s '%s'", name, v->line, v->col, msg, key);
}

/* a dimension read from the file, at most QPCC_DIM_MAX */
static mr_status dimension(mr_error *err, const char *name, const mr_json *v, const char *key,
                           long n) {
  if (n <= QPCC_DIM_MAX) return MR_OK;
  return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s' gives %ld entries, more than %d", name,
                      v->line, v->col, key, n, QPCC_DIM_MAX);
}

/* every array allocated, or an out-of-memory error */
static mr_status allocated(mr_error *err, const char *name, const void *a, const void *b,
                           const void *c) {
  if (a && b && c) return MR_OK;
  return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
}

/* a required member */
static mr_status member(const mr_json *obj, const char *key, const char *name, const mr_json **out,
                        mr_error *err) {
  *out = mr_json_get(obj, key);
  return *out ? MR_OK : where(err, name, obj, "missing key", key);
}

static mr_status number(const mr_json *v, const char *name, const char *key, double *out,
                        mr_error *err) {
  if (v->type != MR_JSON_NUMBER) return where(err, name, v, "expected a number for", key);
  *out = v->number;
  return MR_OK;
}

/* reject members other than the allowed ones (typos should not pass silently) */
static mr_status known_keys(const mr_json *obj, const char *const *keys, const char *name,
                            mr_error *err) {
  for (const mr_json *c = obj->child; c; c = c->next) {
    int ok = 0;
    for (int i = 0; keys[i]; ++i)
      ok |= strcmp(c->key, keys[i]) == 0;
    if (!ok) return where(err, name, c, "unknown key", c->key);
  }
  return MR_OK;
}

/* dynamics: dt, M, f, and the optional controls A, u_lower, u_upper */
static mr_status parse_dynamics(const mr_json *root, const char *name, problem_file *pf,
                                mr_error *err) {
  const mr_json *v;
  mr_status st = member(root, "dt", name, &v, err);
  if (!st) st = number(v, name, "dt", &pf->p.dt, err);
  if (!st && !(pf->p.dt > 0)) return where(err, name, v, "expected a positive number for", "dt");
  if (!st) st = member(root, "f", name, &v, err);
  if (st) return st;
  if (v->type != MR_JSON_ARRAY || v->count < 1)
    return where(err, name, v, "expected a non-empty array for", "f");
  if ((st = dimension(err, name, v, "f", v->count))) return st;
  int nv = pf->p.nv = v->count;
  pf->f = doubles(nv), pf->M = doubles2(nv, nv);
  if ((st = allocated(err, name, pf->f, pf->M, pf->M))) return st;
  st = mr_json_read_vector(v, name, "f", pf->f, nv, err);
  if (!st) st = member(root, "M", name, &v, err);
  if (!st) st = mr_json_read_matrix(v, name, "M", pf->M, nv, nv, err);
  const mr_json *a = mr_json_get(root, "A");
  if (st || !a) return st;
  if (a->type != MR_JSON_ARRAY || a->count != nv || a->child->type != MR_JSON_ARRAY)
    return where(err, name, a, "expected nv rows for", "A");
  if ((st = dimension(err, name, a->child, "A", a->child->count))) return st;
  int nu = pf->p.nu = a->child->count;
  pf->A = doubles2(nv, nu), pf->ulb = doubles(nu), pf->uub = doubles(nu);
  if ((st = allocated(err, name, pf->A, pf->ulb, pf->uub))) return st;
  st = mr_json_read_matrix(a, name, "A", pf->A, nv, nu, err);
  for (int j = 0; j < nu; ++j)
    pf->ulb[j] = -HUGE_VAL, pf->uub[j] = HUGE_VAL;
  if (!st && (v = mr_json_get(root, "u_lower")))
    st = mr_json_read_vector(v, name, "u_lower", pf->ulb, nu, err);
  if (!st && (v = mr_json_get(root, "u_upper")))
    st = mr_json_read_vector(v, name, "u_upper", pf->uub, nu, err);
  for (int j = 0; !st && j < nu; ++j)
    if (pf->ulb[j] > pf->uub[j])
      st = mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: control %d has u_lower %g > u_upper %g",
                        name, a->line, a->col, j, pf->ulb[j], pf->uub[j]);
  return st;
}

/* one contact: normal (nv), tangents (rows of nv), mu */
static mr_status parse_contact(const mr_json *c, const char *name, problem_file *pf, int i, int *t,
                               mr_error *err) {
  static const char *const keys[] = {"normal", "tangents", "mu", NULL};
  const mr_json *v;
  int nv = pf->p.nv;
  if (c->type != MR_JSON_OBJECT) return where(err, name, c, "expected an object for", "contacts");
  mr_status st = known_keys(c, keys, name, err);
  if (!st) st = member(c, "normal", name, &v, err);
  if (!st) st = mr_json_read_vector(v, name, "normal", pf->N + (size_t)i * nv, nv, err);
  if (!st) st = member(c, "mu", name, &v, err);
  if (!st) st = number(v, name, "mu", &pf->mu[i], err);
  if (!st && !(pf->mu[i] >= 0)) return where(err, name, v, "expected a number >= 0 for", "mu");
  if (!st) st = member(c, "tangents", name, &v, err);
  if (st) return st;
  if (v->type != MR_JSON_ARRAY || v->count < 1)
    return where(err, name, v, "expected a non-empty array of directions for", "tangents");
  pf->nd[i] = v->count;
  st = mr_json_read_matrix(v, name, "tangents", pf->D + (size_t)*t * nv, v->count, nv, err);
  *t += v->count;
  return st;
}

static mr_status parse_contacts(const mr_json *root, const char *name, problem_file *pf,
                                mr_error *err) {
  const mr_json *cs = mr_json_get(root, "contacts");
  if (!cs) return MR_OK;
  if (cs->type != MR_JSON_ARRAY) return where(err, name, cs, "expected an array for", "contacts");
  mr_status st = dimension(err, name, cs, "contacts", cs->count);
  long total = 0;
  for (const mr_json *c = cs->child; c && !st; c = c->next) {
    const mr_json *tg = c->type == MR_JSON_OBJECT ? mr_json_get(c, "tangents") : NULL;
    total += tg && tg->type == MR_JSON_ARRAY ? tg->count : 0;
    st = dimension(err, name, c, "tangents (all contacts)", total);
  }
  if (st) return st;
  int nc = pf->p.nc = cs->count, t = 0;
  pf->N = doubles2(nc, pf->p.nv), pf->D = doubles2((int)total, pf->p.nv), pf->mu = doubles(nc);
  pf->nd = calloc((size_t)nc + 1, sizeof(int));
  if ((st = allocated(err, name, pf->N, pf->D, pf->mu)) ||
      (st = allocated(err, name, pf->nd, pf->nd, pf->nd)))
    return st;
  int i = 0;
  for (const mr_json *c = cs->child; c && !st; c = c->next, ++i)
    st = parse_contact(c, name, pf, i, &t, err);
  return st;
}

/* objective {H, c, constant} and task rows [{row, lower}] */
static mr_status parse_objective(const mr_json *root, const char *name, problem_file *pf,
                                 mr_error *err) {
  static const char *const okeys[] = {"H", "c", "constant", NULL};
  static const char *const rkeys[] = {"row", "lower", NULL};
  int ny = pf->p.nv + pf->p.nu;
  const mr_json *o = mr_json_get(root, "objective"), *v;
  mr_status st = MR_OK;
  if (o && o->type != MR_JSON_OBJECT)
    return where(err, name, o, "expected an object for", "objective");
  if (o) st = known_keys(o, okeys, name, err);
  if (!st && o && (v = mr_json_get(o, "H")))
    pf->H = doubles2(ny, ny), st = allocated(err, name, pf->H, pf->H, pf->H),
    st = st ? st : mr_json_read_matrix(v, name, "H", pf->H, ny, ny, err);
  if (!st && o && (v = mr_json_get(o, "c")))
    pf->c = doubles(ny), st = allocated(err, name, pf->c, pf->c, pf->c),
    st = st ? st : mr_json_read_vector(v, name, "c", pf->c, ny, err);
  if (!st && o && (v = mr_json_get(o, "constant")))
    st = number(v, name, "constant", &pf->p.c0, err);
  const mr_json *cs = mr_json_get(root, "constraints");
  if (st || !cs) return st;
  if (cs->type != MR_JSON_ARRAY)
    return where(err, name, cs, "expected an array for", "constraints");
  if ((st = dimension(err, name, cs, "constraints", cs->count))) return st;
  int m = pf->p.m_task = cs->count, i = 0;
  pf->C = doubles2(m, ny), pf->d = doubles(m);
  if ((st = allocated(err, name, pf->C, pf->d, pf->d))) return st;
  for (const mr_json *r = cs->child; r && !st; r = r->next, ++i) {
    if (r->type != MR_JSON_OBJECT)
      return where(err, name, r, "expected an object for", "constraints");
    st = known_keys(r, rkeys, name, err);
    if (!st) st = member(r, "row", name, &v, err);
    if (!st) st = mr_json_read_vector(v, name, "row", pf->C + (size_t)i * ny, ny, err);
    if (!st) st = member(r, "lower", name, &v, err);
    if (!st) st = number(v, name, "lower", &pf->d[i], err);
  }
  return st;
}

static mr_status parse_problem(const mr_json *root, const char *name, problem_file *pf,
                               mr_error *err) {
  static const char *const keys[] = {"dt",          "M",       "f",        "A",
                                     "u_lower",     "u_upper", "contacts", "objective",
                                     "constraints", "max_qp",  NULL};
  if (root->type != MR_JSON_OBJECT)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: the problem must be a JSON object", name,
                        root->line, root->col);
  const mr_json *v;
  mr_status st = known_keys(root, keys, name, err);
  if (!st) st = parse_dynamics(root, name, pf, err);
  if (!st) st = parse_contacts(root, name, pf, err);
  if (!st) st = parse_objective(root, name, pf, err);
  if (!st && (v = mr_json_get(root, "max_qp"))) {
    double q = 0;
    st = number(v, name, "max_qp", &q, err);
    if (!st && !(q >= 1 && q <= 1e7)) return where(err, name, v, "expected 1..1e7 for", "max_qp");
    pf->max_qp = (int)q;
  }
  mr_qpcc_problem *p = &pf->p;
  p->M = pf->M, p->f = pf->f, p->A = pf->A, p->u_lb = pf->ulb, p->u_ub = pf->uub, p->N = pf->N;
  p->nd = pf->nd, p->D = pf->D, p->mu = pf->mu, p->H = pf->H, p->c = pf->c, p->C = pf->C;
  p->d = pf->d;
  if (!st) st = mr_qpcc_validate(p, err);
  if (st) {
    char msg[MR_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    if (strncmp(msg, name, strlen(name)) != 0) mr_error_set(err, st, "%s: %s", name, msg);
  }
  return st;
}

/* ---------------------------------------------------------------- output */

static void print_text(const mr_qpcc_problem *p, const mr_qpcc_result *r, const double *x,
                       const mr_qpcc_contact_mode *mode, const int *dir) {
  printf("status: %s\n%s\n", mr_qpcc_outcome_name(r->outcome), r->message);
  printf("QPs solved: %d (%d infeasible), pivots: %d, modes visited: %d\n", r->qp_solved,
         r->qp_infeasible, r->pivots, r->modes_visited);
  if (r->best_qp < 0 || r->outcome == MR_QPCC_NONCONVEX) return;
  printf("objective: %.17g (QP %d)\n", r->fval, r->best_qp);
  for (int i = 0; i < p->nc; ++i)
    printf(dir[i] >= 0 ? "contact %d: %s, friction along tangent %d\n" : "contact %d: %s\n", i,
           mr_qpcc_mode_name(mode[i]), dir[i]);
  const char *names[] = {"pdot", "u", "f_normal", "f_tangent", "lambda"};
  int sizes[] = {p->nv, p->nu, p->nc, mr_qpcc_size(p) - p->nv - p->nu - 2 * p->nc, p->nc};
  for (int b = 0, o = 0; b < 5; o += sizes[b++]) {
    printf("%s:", names[b]);
    for (int j = 0; j < sizes[b]; ++j)
      printf(" %.17g", x[o + j]);
    printf("\n");
  }
}

static void print_json(const mr_qpcc_problem *p, const mr_qpcc_result *r, const double *x,
                       const mr_qpcc_contact_mode *mode, const int *dir,
                       const char *const *joints) {
  printf("{\n");
  for (int j = 0; joints && j < p->nu; ++j) {
    printf(j ? ", " : "  \"joints\": [");
    mr_json_write_string(stdout, joints[j]);
  }
  printf("%s  \"status\": ", joints && p->nu ? "],\n" : "");
  mr_json_write_string(stdout, mr_qpcc_outcome_name(r->outcome));
  printf(",\n  \"message\": ");
  mr_json_write_string(stdout, r->message);
  printf(",\n  \"qp_solved\": %d,\n  \"qp_infeasible\": %d,\n  \"pivots\": %d,\n", r->qp_solved,
         r->qp_infeasible, r->pivots);
  printf("  \"modes_visited\": %d,\n  \"best_qp\": %d,\n  \"mlcp_start\": %s,\n", r->modes_visited,
         r->best_qp, r->mlcp_start ? "true" : "false");
  printf("  \"min_eigenvalue\": ");
  mr_json_write_number(stdout, r->min_eig);
  int has_x = r->best_qp >= 0 && r->outcome != MR_QPCC_NONCONVEX;
  printf(",\n  \"objective\": ");
  mr_json_write_number(stdout, has_x ? r->fval : NAN);
  if (has_x) {
    printf(",\n  \"contacts\": [");
    for (int i = 0; i < p->nc; ++i)
      printf("%s{\"mode\": \"%s\", \"friction_tangent\": %d}", i ? ", " : "",
             mr_qpcc_mode_name(mode[i]), dir[i]);
    const char *names[] = {"pdot", "u", "f_normal", "f_tangent", "lambda"};
    int sizes[] = {p->nv, p->nu, p->nc, mr_qpcc_size(p) - p->nv - p->nu - 2 * p->nc, p->nc};
    printf("]");
    for (int b = 0, o = 0; b < 5; o += sizes[b++]) {
      printf(",\n  \"%s\": ", names[b]);
      mr_json_write_vector(stdout, x + o, sizes[b]);
    }
  }
}

/* ---------------------------------------------------------------- command */

static int usage(FILE *f, int code) {
  fprintf(f,
          "usage: moreau qpcc PROBLEM.json [--json] [--max-qp N] [--enumerate]\n"
          "       moreau qpcc --scene S.yaml [--joints J1,J2,...] [--target J=V]...\n"
          "                   [--weight J=W]... [--torque-weight R] [--json] [--max-qp N]\n"
          "                   [--enumerate]\n"
          "Solve a QPCC control-through-contact problem (docs/qpcc.md): from a JSON file, or\n"
          "built from a scene's initial state (its contacts, mass matrix and bias; the controls\n"
          "are the torques of the joints listed, by default the joints with an effort limit > 0;\n"
          "the objective 1/2 sum w (v+ - v*)^2 + 1/2 R sum u^2, v* the current velocity unless\n"
          "--target sets it, w 1 unless --weight sets it, R 1e-4 unless --torque-weight sets it).\n"
          "--enumerate also solves every contact mode's QP on its own (at most 16 pairs) and\n"
          "prints the best objective, to check the search's answer.\n"
          "exit codes: 0 optimum, 1 infeasible / budget / non-convex / unbounded, 2 bad input\n");
  return code;
}

/* the most complementarity pairs --enumerate accepts (2^16 QPs) */
#define QPCC_ENUM_MAX_PAIRS 16

/* the best objective over every mode, each mode's QP solved on its own (mr_qpcc_solve_mode);
 * *feasible counts the feasible modes; NAN when none */
static mr_status enumerate(const mr_qpcc_problem *p, mr_qpcc_workspace *ws, double *x,
                           long *feasible, double *best, mr_error *err) {
  int npairs = mr_qpcc_size(p) - p->nv - p->nu;
  unsigned char mode[QPCC_ENUM_MAX_PAIRS];
  *feasible = 0, *best = NAN;
  if (npairs > QPCC_ENUM_MAX_PAIRS)
    return mr_error_set(err, MR_ERR_INVALID,
                        "--enumerate: %d complementarity pairs, more than %d (2^%d QPs)", npairs,
                        QPCC_ENUM_MAX_PAIRS, QPCC_ENUM_MAX_PAIRS);
  for (long code = 0; code < (1L << npairs); ++code) {
    double fval;
    int outcome;
    for (int k = 0; k < npairs; ++k)
      mode[k] = (code >> k) & 1;
    mr_status st = mr_qpcc_solve_mode(p, ws, mode, x, &fval, &outcome, err);
    if (st) return st;
    if (outcome != 0) continue;
    ++*feasible;
    if (!(fval >= *best)) *best = fval;
  }
  return MR_OK;
}

static void print_enumeration(const mr_qpcc_problem *p, long feasible, double best, int json) {
  long modes = 1L << (mr_qpcc_size(p) - p->nv - p->nu);
  if (!json) {
    printf("enumeration: %ld modes, %ld feasible, best objective %.17g\n", modes, feasible, best);
    return;
  }
  printf(",\n  \"enumeration\": {\"modes\": %ld, \"feasible\": %ld, \"objective\": ", modes,
         feasible);
  mr_json_write_number(stdout, best);
  printf("}");
}

/* solve and print; returns the exit code */
static int solve_and_print(problem_file *pf, int max_qp, int json, const char *const *joints,
                           int enumerate_modes) {
  mr_error err;
  mr_qpcc_workspace *ws = NULL;
  int n = mr_qpcc_size(&pf->p), code = 1;
  double *x = doubles(n);
  mr_qpcc_contact_mode *mode = calloc((size_t)pf->p.nc + 1, sizeof *mode);
  int *dir = calloc((size_t)pf->p.nc + 1, sizeof *dir);
  mr_qpcc_settings s = mr_qpcc_settings_default();
  s.max_qp = max_qp;
  mr_qpcc_result r = {.x = x, .mode = mode, .slide_dir = dir};
  mr_status st = (x && mode && dir) ? mr_qpcc_workspace_create(&pf->p, max_qp, &ws, &err)
                                    : mr_error_set(&err, MR_ERR_NOMEM, "out of memory");
  if (!st) st = mr_qpcc_solve(&pf->p, &s, ws, &r, &err);
  if (st)
    json = 0, fprintf(stderr, "moreau qpcc: %s\n", err.msg);
  else if (json)
    print_json(&pf->p, &r, x, mode, dir, joints);
  else {
    for (int j = 0; joints && j < pf->p.nu; ++j)
      printf(j ? " %s" : "joints:  %s", joints[j]);
    if (joints && pf->p.nu) printf("\n");
    print_text(&pf->p, &r, x, mode, dir);
  }
  long feasible = 0;
  double best = NAN;
  if (!st && enumerate_modes) {
    st = enumerate(&pf->p, ws, x, &feasible, &best, &err);
    if (st) fprintf(stderr, "moreau qpcc: %s\n", err.msg);
    if (!st) print_enumeration(&pf->p, feasible, best, json);
  }
  if (json) printf("\n}\n");
  if (!st && r.outcome == MR_QPCC_OPTIMUM) code = 0;
  if (st == MR_ERR_INVALID) code = 2;
  mr_qpcc_workspace_destroy(ws);
  free(x), free(mode), free(dir);
  return code;
}

/* ---------------------------------------------------------------- from a scene */

/* the most --target / --weight options */
#define QPCC_OPT_MAX 64

typedef struct {
  const char *scene, *joints;
  const char *target[QPCC_OPT_MAX], *weight[QPCC_OPT_MAX];
  int ntarget, nweight;
  double torque_weight;
} scene_args;

/* the velocity coordinate of the 1-dof joint named name[0..len) (the model's name, or the part
 * after a robot's "ROBOT/" prefix when one joint has it), −1 if none */
static int joint_dof(const mr_model *m, const char *name, size_t len) {
  int found = -1, count = 0;
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    if (j->nv != 1) continue;
    const char *n = j->name, *slash = strrchr(n, '/');
    if (strlen(n) == len && !strncmp(n, name, len)) return j->idx_v;
    if (slash && strlen(slash + 1) == len && !strncmp(slash + 1, name, len))
      found = j->idx_v, ++count;
  }
  return count == 1 ? found : -1;
}

/* an unknown joint: name it, the scene and the joints there are */
static int no_joint(const mr_model *m, const char *opt, const char *name, size_t len,
                    const char *scene) {
  fprintf(stderr, "moreau qpcc: %s: no 1-dof joint '%.*s' in %s (its 1-dof joints:", opt, (int)len,
          name, scene);
  for (int b = 1; b < m->nbodies; ++b)
    if (m->bodies[b].joint.nv == 1) fprintf(stderr, " %s", m->bodies[b].joint.name);
  fprintf(stderr, ")\n");
  return 2;
}

/* the controlled dofs from --joints J1,J2,... (*n = −1 when the option is absent) */
static int parse_joints(const mr_model *m, const scene_args *a, int *dofs, int *n) {
  *n = -1;
  if (!a->joints) return 0;
  *n = 0;
  for (const char *p = a->joints; *p;) {
    size_t len = strcspn(p, ",");
    int k = len ? joint_dof(m, p, len) : -1;
    if (k < 0) return no_joint(m, "--joints", p, len, a->scene);
    if (*n >= m->nv) return fprintf(stderr, "moreau qpcc: --joints lists too many joints\n"), 2;
    dofs[(*n)++] = k;
    p += len + (p[len] == ',');
  }
  return 0;
}

/* J=V options (--target, --weight) into x[dof] */
static int parse_values(const mr_model *m, const scene_args *a, const char *opt,
                        const char *const *items, int count, double *x) {
  for (int i = 0; i < count; ++i) {
    const char *eq = strchr(items[i], '=');
    if (!eq) {
      fprintf(stderr, "moreau qpcc: %s '%s' must be JOINT=VALUE\n", opt, items[i]);
      return 2;
    }
    int k = joint_dof(m, items[i], (size_t)(eq - items[i]));
    if (k < 0) return no_joint(m, opt, items[i], (size_t)(eq - items[i]), a->scene);
    char *end;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !isfinite(v) || (!strcmp(opt, "--weight") && v < 0)) {
      fprintf(stderr, "moreau qpcc: %s '%s': the value '%s' must be a finite number%s\n", opt,
              items[i], eq + 1, strcmp(opt, "--weight") ? "" : " >= 0");
      return 2;
    }
    x[k] = v;
  }
  return 0;
}

/* the problem of the scene's initial state, solved and printed */
static int run_scene(const scene_args *a, int json, int max_qp, int enumerate_modes) {
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load(a->scene, &sc, &err)) return fprintf(stderr, "moreau qpcc: %s\n", err.msg), 2;
  mr_sim *s = mr_sim_from_scene(&sc, NULL, &err);
  if (!s) {
    fprintf(stderr, "moreau qpcc: %s\n", err.msg);
    mr_scene_free(&sc);
    return 2;
  }
  const mr_model *m = mr_sim_model(s);
  size_t nv = (size_t)m->nv;
  int *dofs = calloc(nv + 1, sizeof *dofs), n = -1, code = 2;
  double *target = calloc(nv + 1, sizeof *target), *weight = calloc(nv + 1, sizeof *weight);
  const char **names = calloc(nv + 1, sizeof *names);
  mr_qpcc_scene q = {0};
  if (!dofs || !target || !weight || !names) {
    fprintf(stderr, "moreau qpcc: out of memory\n");
    goto done;
  }
  memcpy(target, mr_sim_v(s), sizeof *target * nv);
  for (size_t k = 0; k < nv; ++k)
    weight[k] = 1;
  if (parse_joints(m, a, dofs, &n) ||
      parse_values(m, a, "--target", a->target, a->ntarget, target) ||
      parse_values(m, a, "--weight", a->weight, a->nweight, weight))
    goto done;
  mr_qpcc_scene_options o = {n >= 0 ? dofs : NULL, n, target, weight, a->torque_weight};
  if (mr_qpcc_from_sim(s, &o, &q, &err)) {
    fprintf(stderr, "moreau qpcc: %s: %s\n", a->scene, err.msg);
    goto done;
  }
  for (int j = 0; j < q.nu; ++j)
    names[j] = m->bodies[m->dof_body[q.dofs[j]]].joint.name;
  problem_file pf = {.p = q.problem};
  code = solve_and_print(&pf, max_qp ? max_qp : 1000, json, names, enumerate_modes);
done:
  mr_qpcc_scene_free(&q);
  free(dofs), free(target), free(weight), free(names);
  mr_sim_free(s);
  mr_scene_free(&sc);
  return code;
}

/* one scene option (and its value) at argv[*i]; 0 when not one, −1 on a bad value */
static int scene_option(int argc, char **argv, int *i, scene_args *a) {
  const char *o = argv[*i];
  int has = *i + 1 < argc;
  if (!strcmp(o, "--scene") && has) return a->scene = argv[++*i], 1;
  if (!strcmp(o, "--joints") && has) return a->joints = argv[++*i], 1;
  if ((!strcmp(o, "--target") || !strcmp(o, "--weight")) && has) {
    int *cnt = o[2] == 't' ? &a->ntarget : &a->nweight;
    const char **arr = o[2] == 't' ? a->target : a->weight;
    if (*cnt >= QPCC_OPT_MAX)
      return fprintf(stderr, "moreau qpcc: more than %d %s options\n", QPCC_OPT_MAX, o), -1;
    arr[(*cnt)++] = argv[++*i];
    return 1;
  }
  if (!strcmp(o, "--torque-weight") && has) {
    char *end;
    const char *v = argv[++*i];
    a->torque_weight = strtod(v, &end);
    if (end == v || *end || !isfinite(a->torque_weight) || a->torque_weight < 0)
      return fprintf(stderr, "moreau qpcc: --torque-weight '%s' must be a finite number >= 0\n", v),
             -1;
    return 1;
  }
  return 0;
}

int mr_cmd_qpcc(int argc, char **argv) {
  const char *path = NULL;
  int json = 0, max_qp = 0, so, enumerate_modes = 0;
  scene_args sa = {.torque_weight = mr_qpcc_scene_options_default().torque_weight};
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout, 0);
    if ((so = scene_option(argc, argv, &i, &sa)) < 0) return 2;
    if (so) continue;
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strcmp(argv[i], "--enumerate"))
      enumerate_modes = 1;
    else if (!strcmp(argv[i], "--max-qp") && i + 1 < argc) {
      char *end;
      long q = strtol(argv[++i], &end, 10);
      if (*end || q < 1 || q > 10000000) {
        fprintf(stderr, "moreau qpcc: --max-qp '%s' must be an integer in 1..1e7\n", argv[i]);
        return 2;
      }
      max_qp = (int)q;
    } else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else
      return fprintf(stderr, "moreau qpcc: bad argument '%s'\n", argv[i]), usage(stderr, 2);
  }
  if (sa.scene && path)
    return fprintf(stderr, "moreau qpcc: give a PROBLEM.json or --scene, not both\n"), 2;
  if (!sa.scene && (sa.joints || sa.ntarget || sa.nweight))
    return fprintf(stderr, "moreau qpcc: --joints, --target and --weight need --scene\n"), 2;
  if (sa.scene) return run_scene(&sa, json, max_qp, enumerate_modes);
  if (!path) return usage(stderr, 2);
  mr_json *root = NULL;
  mr_error err;
  problem_file pf;
  memset(&pf, 0, sizeof pf);
  pf.max_qp = 1000;
  mr_status st = mr_json_load(path, &root, &err);
  if (!st) st = parse_problem(root, path, &pf, &err);
  mr_json_free(root);
  int code = 2;
  if (st)
    fprintf(stderr, "moreau qpcc: %s\n", err.msg);
  else
    code = solve_and_print(&pf, max_qp ? max_qp : pf.max_qp, json, NULL, enumerate_modes);
  problem_free(&pf);
  return code;
}
