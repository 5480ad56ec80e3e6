/* Loading and saving standalone contact problems as JSON (format in problem_io.h).
 * Validation: nc an integer in [0, MR_PROBLEM_MAX_NC]; G square 3nc x 3nc and symmetric to a
 * relative tolerance of 1e-9 (|G_ab − G_ba| ≤ 1e-9 max(|G_ab|, |G_ba|, max|G|·1e-3)); all
 * numbers finite; μ ≥ 0; R ≥ 0; every message names the file, line, column and the value. */
#include "contact/problem_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/output.h"

#define SYM_TOL 1e-9

/* a required or optional member; NULL with an error when a required one is missing */
static const mr_json *member(const mr_json *root, const char *name, const char *key, int required,
                             mr_status *st, mr_error *err) {
  const mr_json *v = mr_json_get(root, key);
  if (!v && required)
    *st = mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: missing key '%s'", name, root->line,
                       root->col, key);
  return v;
}

/* nc: an integer in [0, MR_PROBLEM_MAX_NC] */
static mr_status read_nc(const mr_json *v, const char *name, int *nc, mr_error *err) {
  if (v->type != MR_JSON_NUMBER)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: 'nc' is a %s, expected an integer", name,
                        v->line, v->col, mr_json_type_name(v->type));
  double x = v->number;
  if (!(x >= 0.0 && x <= MR_PROBLEM_MAX_NC) || x != floor(x))
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: 'nc' = %g must be an integer in [0, %d]",
                        name, v->line, v->col, x, MR_PROBLEM_MAX_NC);
  *nc = (int)x;
  return MR_OK;
}

/* the entry of a matrix value at (row, col), for messages */
static const mr_json *matrix_entry(const mr_json *v, int row, int col) {
  return mr_json_at(mr_json_at(v, row), col);
}

/* every entry finite */
static mr_status check_finite(const mr_json *v, const char *name, const char *what, const double *x,
                              int n, mr_error *err) {
  for (int k = 0; k < n; ++k)
    if (!isfinite(x[k])) {
      const mr_json *e = mr_json_at(v, k);
      return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s'[%d] = %g is not finite", name,
                          e ? e->line : v->line, e ? e->col : v->col, what, k, x[k]);
    }
  return MR_OK;
}

/* G finite and symmetric */
static mr_status check_G(const mr_json *v, const char *name, const double *G, int n,
                         mr_error *err) {
  double gmax = 0.0;
  for (int k = 0; k < n * n; ++k) {
    if (!isfinite(G[k])) {
      const mr_json *e = matrix_entry(v, k / n, k % n);
      return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: 'G'[%d][%d] = %g is not finite", name,
                          e->line, e->col, k / n, k % n, G[k]);
    }
    gmax = fmax(gmax, fabs(G[k]));
  }
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      double x = G[a * n + b], y = G[b * n + a];
      double scale = fmax(fmax(fabs(x), fabs(y)), 1e-3 * gmax);
      if (fabs(x - y) <= SYM_TOL * scale) continue;
      const mr_json *e = matrix_entry(v, b, a);
      return mr_error_set(err, MR_ERR_INVALID,
                          "%s:%d:%d: 'G' is not symmetric: G[%d][%d] = %.17g but G[%d][%d] = "
                          "%.17g (relative tolerance %g)",
                          name, e->line, e->col, b, a, y, a, b, x, SYM_TOL);
    }
  return MR_OK;
}

/* entries ≥ 0 (μ, R) */
static mr_status check_nonneg(const mr_json *v, const char *name, const char *what, const double *x,
                              int n, mr_error *err) {
  mr_status st = check_finite(v, name, what, x, n, err);
  if (st) return st;
  for (int k = 0; k < n; ++k)
    if (x[k] < 0.0) {
      const mr_json *e = mr_json_at(v, k);
      return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s'[%d] = %g is negative", name, e->line,
                          e->col, what, k, x[k]);
    }
  return MR_OK;
}

/* allocate the arrays of nc contacts (optional ones only when present) */
static mr_status allocate(mr_problem_file *f, int nc, int has_R, int has_l0, int has_phi,
                          mr_error *err) {
  size_t n = 3 * (size_t)nc, m = n > 0 ? n : 1;
  f->nc = nc;
  f->G = calloc(m * m, sizeof(double));
  f->g = calloc(m, sizeof(double));
  f->mu = calloc(nc > 0 ? nc : 1, sizeof(double));
  f->R = has_R ? calloc(m, sizeof(double)) : NULL;
  f->lambda0 = has_l0 ? calloc(m, sizeof(double)) : NULL;
  f->phi = has_phi ? calloc(nc > 0 ? nc : 1, sizeof(double)) : NULL;
  if (!f->G || !f->g || !f->mu || (has_R && !f->R) || (has_l0 && !f->lambda0) ||
      (has_phi && !f->phi))
    return mr_error_set(err, MR_ERR_NOMEM, "contact problem: out of memory for nc = %d", nc);
  return MR_OK;
}

/* the optional kinds: nc entries, each 0 (contact), 1 (bilateral) or 2 (box: joint friction,
 * |λ_N| ≤ mu) */
static mr_status read_kind(const mr_json *v, const char *name, mr_problem_file *f, mr_error *err) {
  double *x = calloc(f->nc > 0 ? (size_t)f->nc : 1, sizeof *x);
  f->kind = calloc(f->nc > 0 ? (size_t)f->nc : 1, 1);
  if (!x || !f->kind) {
    free(x);
    return mr_error_set(err, MR_ERR_NOMEM, "contact problem: out of memory");
  }
  mr_status st = mr_json_read_vector(v, name, "kind", x, f->nc, err);
  for (int i = 0; !st && i < f->nc; ++i) {
    if (x[i] != MR_KIND_CONTACT && x[i] != MR_KIND_BILATERAL && x[i] != MR_KIND_BOX) {
      const mr_json *e = mr_json_at(v, i);
      st = mr_error_set(err, MR_ERR_INVALID,
                        "%s:%d:%d: 'kind'[%d] = %g must be 0 (contact), 1 (bilateral) or 2 "
                        "(box)",
                        name, e->line, e->col, i, x[i]);
    }
    f->kind[i] = (unsigned char)x[i];
  }
  free(x);
  return st;
}

/* read the optional vectors R, lambda0, phi, kind */
static mr_status read_optional(const mr_json *root, const char *name, mr_problem_file *f,
                               mr_error *err) {
  int n = 3 * f->nc;
  const mr_json *v;
  mr_status st = MR_OK;
  if ((v = mr_json_get(root, "R")) && ((st = mr_json_read_vector(v, name, "R", f->R, n, err)) ||
                                       (st = check_nonneg(v, name, "R", f->R, n, err))))
    return st;
  if ((v = mr_json_get(root, "lambda0")) &&
      ((st = mr_json_read_vector(v, name, "lambda0", f->lambda0, n, err)) ||
       (st = check_finite(v, name, "lambda0", f->lambda0, n, err))))
    return st;
  if ((v = mr_json_get(root, "phi")) &&
      ((st = mr_json_read_vector(v, name, "phi", f->phi, f->nc, err)) ||
       (st = check_finite(v, name, "phi", f->phi, f->nc, err))))
    return st;
  return (v = mr_json_get(root, "kind")) ? read_kind(v, name, f, err) : MR_OK;
}

/* the optional time step: a positive finite number */
static mr_status read_dt(const mr_json *root, const char *name, double *dt, mr_error *err) {
  const mr_json *v = mr_json_get(root, "dt");
  *dt = 0.0;
  if (!v) return MR_OK;
  if (v->type != MR_JSON_NUMBER || !(v->number > 0.0) || !isfinite(v->number))
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: 'dt' must be a positive number", name,
                        v->line, v->col);
  *dt = v->number;
  return MR_OK;
}

/* the required members and the checks on them */
static mr_status read_required(const mr_json *root, const char *name, mr_problem_file *f,
                               mr_error *err) {
  int n = 3 * f->nc;
  mr_status st = MR_OK;
  const mr_json *G = member(root, name, "G", 1, &st, err);
  const mr_json *g = st ? NULL : member(root, name, "g", 1, &st, err);
  const mr_json *mu = st ? NULL : member(root, name, "mu", 1, &st, err);
  if (st) return st;
  if ((st = mr_json_read_matrix(G, name, "G", f->G, n, n, err))) return st;
  if ((st = check_G(G, name, f->G, n, err))) return st;
  if ((st = mr_json_read_vector(g, name, "g", f->g, n, err))) return st;
  if ((st = check_finite(g, name, "g", f->g, n, err))) return st;
  if ((st = mr_json_read_vector(mu, name, "mu", f->mu, f->nc, err))) return st;
  return check_nonneg(mu, name, "mu", f->mu, f->nc, err);
}

/* fill f from a parsed document */
static mr_status from_json(const mr_json *root, const char *name, mr_problem_file *f,
                           mr_error *err) {
  if (root->type != MR_JSON_OBJECT)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: a contact problem must be an object", name,
                        root->line, root->col);
  mr_status st = MR_OK;
  const mr_json *ncv = member(root, name, "nc", 1, &st, err);
  int nc = 0;
  double dt = 0.0;
  if (st || (st = read_nc(ncv, name, &nc, err))) return st;
  if ((st = allocate(f, nc, mr_json_get(root, "R") != NULL, mr_json_get(root, "lambda0") != NULL,
                     mr_json_get(root, "phi") != NULL, err)))
    return st;
  if ((st = read_required(root, name, f, err)) || (st = read_optional(root, name, f, err)) ||
      (st = read_dt(root, name, &dt, err)))
    return st;
  f->problem = (mr_contact_problem){.nc = nc,
                                    .G = f->G,
                                    .g = f->g,
                                    .mu = f->mu,
                                    .R = f->R,
                                    .phi = f->phi,
                                    .dt = dt,
                                    .kind = f->kind};
  return MR_OK;
}

mr_status mr_problem_file_parse(const char *text, const char *name, mr_problem_file *out,
                                mr_error *err) {
  memset(out, 0, sizeof *out);
  mr_json *root = NULL;
  mr_status st = mr_json_parse(text, name, &root, err);
  if (!st) st = from_json(root, name, out, err);
  mr_json_free(root);
  if (st) mr_problem_file_free(out);
  return st;
}

mr_status mr_problem_file_load(const char *path, mr_problem_file *out, mr_error *err) {
  memset(out, 0, sizeof *out);
  mr_json *root = NULL;
  mr_status st = mr_json_load(path, &root, err);
  if (!st) st = from_json(root, path, out, err);
  mr_json_free(root);
  if (st) mr_problem_file_free(out);
  return st;
}

void mr_problem_file_free(mr_problem_file *f) {
  if (!f) return;
  free(f->G), free(f->g), free(f->mu), free(f->R), free(f->lambda0), free(f->phi);
  free(f->kind);
  memset(f, 0, sizeof *f);
}

/* G's rows, dense; a block-sparse G row by row through a buffer of one row of blocks */
static int write_G(FILE *out, const mr_contact_problem *p) {
  int n = 3 * p->nc;
  if (p->G || n == 0) {
    mr_json_write_matrix(out, p->G, n, n);
    return 0;
  }
  double *rows = malloc(3 * (size_t)n * sizeof(double));
  if (!rows) return -1;
  fputc('[', out);
  for (int i = 0; i < p->nc; ++i) {
    memset(rows, 0, 3 * (size_t)n * sizeof(double));
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          rows[(size_t)a * n + 3 * p->Gb_col[k] + b] = p->Gb[9 * (size_t)k + 3 * a + b];
    for (int a = 0; a < 3; ++a) {
      if (i || a) fputs(", ", out);
      mr_json_write_vector(out, rows + (size_t)a * n, n);
    }
  }
  fputc(']', out);
  free(rows);
  return 0;
}

/* the members after nc; −1 when out of memory */
static int write_body(FILE *out, const mr_contact_problem *p, const double *lambda0) {
  int n = 3 * p->nc;
  fputs(",\n \"G\": ", out);
  if (write_G(out, p)) return -1;
  fputs(",\n \"g\": ", out);
  mr_json_write_vector(out, p->g, n);
  fputs(",\n \"mu\": ", out);
  mr_json_write_vector(out, p->mu, p->nc);
  if (p->R) fputs(",\n \"R\": ", out), mr_json_write_vector(out, p->R, n);
  if (lambda0) fputs(",\n \"lambda0\": ", out), mr_json_write_vector(out, lambda0, n);
  if (p->phi) fputs(",\n \"phi\": ", out), mr_json_write_vector(out, p->phi, p->nc);
  if (p->dt > 0.0) fputs(",\n \"dt\": ", out), mr_json_write_number(out, p->dt);
  if (p->kind) {
    fputs(",\n \"kind\": [", out);
    for (int i = 0; i < p->nc; ++i)
      fprintf(out, "%s%d", i ? ", " : "", (int)p->kind[i]);
    fputc(']', out);
  }
  return 0;
}

mr_status mr_problem_file_save(const char *path, const mr_contact_problem *p, const double *lambda0,
                               mr_error *err) {
  mr_output out;
  if (mr_output_open(&out, path, err)) return MR_ERR_IO;
  fprintf(out.f, "{\"nc\": %d", p->nc);
  if (write_body(out.f, p, lambda0)) {
    mr_output_discard(&out);
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory writing G of %d contacts", path,
                        p->nc);
  }
  fputs("}\n", out.f);
  return mr_output_commit(&out, err);
}
