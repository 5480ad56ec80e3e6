/* moreau qpcc PROBLEM.json [--json] [--max-qp N]: solve a QPCC control problem (Tan, Turk & Liu,
 * supplementary document, eq. 1-3) by the best-first mode search of src/contact/qpcc.c. The
 * JSON format is documented in docs/qpcc.md. Exit codes: 0 optimum found, 1 infeasible, budget
 * exhausted, non-convex or unbounded objective (or a QP failure), 2 bad usage or input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/json.h"
#include "moreau/qpcc.h"

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
                       const mr_qpcc_contact_mode *mode, const int *dir) {
  printf("{\n  \"status\": ");
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
  printf("\n}\n");
}

/* ---------------------------------------------------------------- command */

static int usage(FILE *f, int code) {
  fprintf(f,
          "usage: moreau qpcc PROBLEM.json [--json] [--max-qp N]\n"
          "Solve a QPCC control-through-contact problem (docs/qpcc.md).\n"
          "exit codes: 0 optimum, 1 infeasible / budget / non-convex / unbounded, 2 bad input\n");
  return code;
}

/* solve and print; returns the exit code */
static int solve_and_print(problem_file *pf, int max_qp, int json) {
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
    fprintf(stderr, "moreau qpcc: %s\n", err.msg);
  else if (json)
    print_json(&pf->p, &r, x, mode, dir);
  else
    print_text(&pf->p, &r, x, mode, dir);
  if (!st && r.outcome == MR_QPCC_OPTIMUM) code = 0;
  if (st == MR_ERR_INVALID) code = 2;
  mr_qpcc_workspace_destroy(ws);
  free(x), free(mode), free(dir);
  return code;
}

int mr_cmd_qpcc(int argc, char **argv) {
  const char *path = NULL;
  int json = 0, max_qp = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout, 0);
    if (!strcmp(argv[i], "--json"))
      json = 1;
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
    code = solve_and_print(&pf, max_qp ? max_qp : pf.max_qp, json);
  problem_free(&pf);
  return code;
}
