/* moreau view: a self-contained HTML replay of a run (docs/viewer.md).
 *
 * Input is either a scene (run from its initial state with its solver, recorded at the display
 * rate) or a recorded run: the trajectory CSV of `moreau run --out` (columns t, the scene's
 * configuration columns named as columns.h names them, and the optional energy, ncontacts,
 * iterations, eps_abs, penetration) with the scene it came from
 * (--scene) and optionally the contacts CSV of `moreau run --contacts`, whose world force f and
 * normal n split into the normal force (n·f) n and the friction force f − (n·f) n. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/columns.h"
#include "cli/commands.h"
#include "cli/hints.h"
#include "cli/replay.h"
#include "cli/runner.h"

static const char view_usage[] =
    "usage: moreau view SCENE.yaml [options]   (or ROBOT.urdf: its default scene)\n"
    "       moreau view TRAJECTORY.csv --scene SCENE.yaml [--contacts CONTACTS.csv] [options]\n"
    "Write a self-contained HTML replay of a run: the scene is run (as 'moreau run' does), or a\n"
    "run recorded by 'moreau run --out [--contacts]' is replayed without simulating.\n"
    "  -o, --output FILE   the page (default: the input's file name with .html)\n"
    "  --fps N             frames per simulated second (default 60; 0: every step)\n"
    "  --solver NAME       contact solver (scene input; default: the scene's)\n"
    "  --dt X              time step in s (scene input)\n"
    "  --duration T        simulated time in s (scene input)\n"
    "Exit status: 0 written, 1 the run diverged (the page is written up to there), 2 bad usage\n"
    "or bad input.\n";

typedef struct {
  const char *input, *scene, *contacts, *output, *solver;
  double fps, dt, duration;
} view_args;

static int usage_error(const char *fmt, const char *what) {
  fprintf(stderr, "moreau view: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see 'moreau view --help')\n");
  return 2;
}

static int parse_number(const char *opt, const char *text, double lo, double *out) {
  char *end = NULL;
  errno = 0;
  double x = strtod(text, &end);
  if (end == text || *end || errno || !isfinite(x) || x < lo || (lo > 0.0 && x <= 0.0)) {
    fprintf(stderr, "moreau view: %s needs a %s number, got '%s'\n", opt,
            lo > 0.0 ? "positive" : "non-negative", text);
    return 2;
  }
  *out = x;
  return 0;
}

static int parse_option(view_args *a, const char *o, const char *v) {
  if (!strcmp(o, "--fps")) return parse_number(o, v, 0.0, &a->fps);
  if (!strcmp(o, "--dt")) return parse_number(o, v, 1e-300, &a->dt);
  if (!strcmp(o, "--duration")) return parse_number(o, v, 1e-300, &a->duration);
  const char **slot = !strcmp(o, "-o") || !strcmp(o, "--output") ? &a->output
                      : !strcmp(o, "--scene")                    ? &a->scene
                      : !strcmp(o, "--contacts")                 ? &a->contacts
                      : !strcmp(o, "--solver")                   ? &a->solver
                                                                 : NULL;
  if (!slot) return usage_error("unknown option '%s'", o);
  *slot = v;
  return 0;
}

static int parse_args(int argc, char **argv, view_args *a) {
  memset(a, 0, sizeof *a);
  a->fps = 60.0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      if (i + 1 >= argc) return usage_error("option %s needs a value", argv[i]);
      if (parse_option(a, argv[i], argv[i + 1])) return 2;
      ++i;
    } else if (!a->input) {
      a->input = argv[i];
    } else {
      return usage_error("unexpected argument '%s'", argv[i]);
    }
  }
  if (!a->input) return usage_error("%s", "missing SCENE.yaml or TRAJECTORY.csv");
  return 0;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

/* ---- CSV input ---- */

typedef struct {
  FILE *f;
  const char *path;
  char *line;
  size_t cap;
  long lineno;
  char *cols[4096];
  int ncols;
} csv_reader;

/* the next line split at commas; 0 at end of file */
static int csv_next(csv_reader *c) {
  ssize_t n = getline(&c->line, &c->cap, c->f);
  if (n < 0) return 0;
  ++c->lineno;
  while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
    c->line[--n] = '\0';
  c->ncols = 0;
  for (char *p = c->line; p && c->ncols < 4096;) {
    c->cols[c->ncols++] = p;
    if ((p = strchr(p, ','))) *p++ = '\0';
  }
  return 1;
}

static int csv_column(const csv_reader *c, const char *name) {
  for (int k = 0; k < c->ncols; ++k)
    if (!strcmp(c->cols[k], name)) return k;
  return -1;
}

static int csv_number(const csv_reader *c, int col, double *x) {
  char *end = NULL;
  if (col >= c->ncols) {
    fprintf(stderr, "moreau view: %s:%ld: %d columns, the header has more\n", c->path, c->lineno,
            c->ncols);
    return 2;
  }
  *x = strtod(c->cols[col], &end);
  if (end == c->cols[col] || *end || !isfinite(*x)) {
    fprintf(stderr, "moreau view: %s:%ld: column %d: '%s' is not a finite number\n", c->path,
            c->lineno, col + 1, c->cols[col]);
    return 2;
  }
  return 0;
}

static int csv_open(csv_reader *c, const char *path) {
  memset(c, 0, sizeof *c);
  c->path = path;
  if (!(c->f = fopen(path, "r"))) {
    fprintf(stderr, "moreau view: cannot read '%s': %s\n", path, strerror(errno));
    return 2;
  }
  if (!csv_next(c) || csv_column(c, "t") != 0) {
    fprintf(stderr, "moreau view: %s:1: expected a header starting with 't'\n", path);
    return 2;
  }
  return 0;
}

static void csv_close(csv_reader *c) {
  if (c->f) fclose(c->f);
  free(c->line);
}

/* contacts of a contacts CSV: per row t and 9 values (point, normal force, friction force) */
typedef struct {
  double *t, *x;
  int n;
} contact_rows;

static int contact_row(const csv_reader *c, const int *col, contact_rows *out) {
  double v[10], *x = out->x + 9 * out->n;
  for (int k = 0; k < 10; ++k)
    if (csv_number(c, col[k], &v[k])) return 2;
  double fn = v[4] * v[7] + v[5] * v[8] + v[6] * v[9]; /* n · f */
  for (int k = 0; k < 3; ++k) {
    x[k] = v[1 + k];
    x[3 + k] = fn * v[4 + k];
    x[6 + k] = v[7 + k] - fn * v[4 + k];
  }
  out->t[out->n++] = v[0];
  return 0;
}

static int grow_contacts(contact_rows *out, int *cap) {
  int n = *cap ? 2 * *cap : 1024;
  double *t = realloc(out->t, (size_t)n * sizeof *t);
  if (t) out->t = t;
  double *x = t ? realloc(out->x, (size_t)n * 9 * sizeof *x) : NULL;
  if (!x) return fprintf(stderr, "moreau view: out of memory\n"), 2;
  out->x = x;
  *cap = n;
  return 0;
}

static int read_contacts(const char *path, contact_rows *out) {
  static const char *const names[10] = {"t", "px", "py", "pz", "nx", "ny", "nz", "fx", "fy", "fz"};
  csv_reader c;
  int col[10], code = csv_open(&c, path), cap = 0;
  for (int k = 0; !code && k < 10; ++k)
    if ((col[k] = csv_column(&c, names[k])) < 0)
      fprintf(stderr, "moreau view: %s:1: no column '%s'\n", path, names[k]), code = 2;
  while (!code && csv_next(&c)) {
    if (out->n == cap && grow_contacts(out, &cap)) code = 2;
    if (!code) code = contact_row(&c, col, out);
  }
  csv_close(&c);
  return code;
}

/* the stat columns of a trajectory, in replay order (energy, penetration, eps_abs, iterations,
 * contacts); -1 where absent */
static void stat_columns(const csv_reader *c, int col[5]) {
  static const char *const names[5] = {"energy", "penetration", "eps_abs", "iterations",
                                       "ncontacts"};
  for (int k = 0; k < 5; ++k)
    col[k] = csv_column(c, names[k]);
}

/* one trajectory row: t, q and the stats; the contacts rows at the same t */
static int trajectory_row(const csv_reader *c, const int *scol, int nq, double *q, mr_replay *r,
                          const contact_rows *ct, int *next) {
  double t, st[5];
  if (csv_number(c, 0, &t)) return 2;
  for (int k = 0; k < nq; ++k)
    if (csv_number(c, 1 + k, &q[k])) return 2;
  for (int k = 0; k < 5; ++k)
    if (scol[k] < 0)
      st[k] = NAN;
    else if (csv_number(c, scol[k], &st[k]))
      return 2;
  int first = *next;
  while (first < ct->n && ct->t[first] < t)
    ++first;
  int last = first;
  while (last < ct->n && ct->t[last] == t)
    ++last;
  *next = last;
  mr_replay_record_q(r, t, q, st, ct->x ? ct->x + 9 * first : NULL, last - first);
  return 0;
}

/* the scene's configuration columns, as `moreau run --out` names them (columns.h), must follow
 * t */
static int check_q_columns(const csv_reader *c, const mr_scene *sc, const char *path) {
  mr_error err = {0};
  mr_world *w = mr_scene_compile(sc, &err);
  if (!w) return fprintf(stderr, "moreau view: %s\n", err.msg), 2;
  char *names = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&names, &size);
  mr_columns none = {0};
  if (f) mr_columns_header(f, w, &none), fclose(f);
  mr_world_free(w);
  int code = names ? 0 : 2;
  const char *p = names ? names + 1 : "";
  for (int k = 1; !code && k <= sc->model->nq; ++k) {
    size_t len = strcspn(p, ",");
    if (k >= c->ncols || strlen(c->cols[k]) != len || strncmp(c->cols[k], p, len)) {
      fprintf(stderr,
              "moreau view: %s:1: column %d is '%s', expected '%.*s' (the scene's %d "
              "configuration columns follow t)\n",
              path, k + 1, k < c->ncols ? c->cols[k] : "", (int)len, p, sc->model->nq);
      code = 2;
    }
    p += len + (p[len] == ',');
  }
  free(names);
  return code;
}

static int replay_trajectory(const view_args *a, const mr_scene *sc, mr_replay *r) {
  contact_rows ct = {0};
  csv_reader c = {0};
  int code = a->contacts ? read_contacts(a->contacts, &ct) : 0, scol[5], next = 0;
  if (!code) code = csv_open(&c, a->input);
  int nq = sc->model->nq;
  if (!code) code = check_q_columns(&c, sc, a->input);
  double *q = malloc((size_t)nq * sizeof *q);
  mr_error err = {0};
  if (!code && !q) code = 2, fprintf(stderr, "moreau view: out of memory\n");
  if (!code) stat_columns(&c, scol), code = mr_replay_begin_run(r, "trajectory", &err) ? 2 : 0;
  while (!code && csv_next(&c))
    code = trajectory_row(&c, scol, nq, q, r, &ct, &next);
  if (!code && c.lineno < 2) fprintf(stderr, "moreau view: %s: no rows\n", a->input), code = 2;
  free(q);
  free(ct.t), free(ct.x);
  csv_close(&c);
  return code;
}

/* ---- scene input ---- */

static int run_scene(const view_args *a, mr_scene *sc, mr_replay *r) {
  mr_error err = {0};
  const char *solver = a->solver ? a->solver : sc->solver;
  if (mr_replay_begin_run(r, solver, &err)) return fprintf(stderr, "moreau view: %s\n", err.msg), 2;
  mr_run_options opt = {.solver = a->solver, .every = 1, .on_step = mr_replay_record, .ctx = r};
  mr_run_summary sum;
  mr_status st = mr_run_scene(sc, &opt, &sum, &err);
  if (!st) return 0;
  fprintf(stderr, "moreau view: %s\n", err.msg);
  mr_replay_end_run(r, err.msg);
  return st == MR_ERR_INVALID || st == MR_ERR_UNSUPPORTED ? 2 : 1;
}

/* the default page name: the input's base name with .html */
static void default_output(const char *input, char *out, size_t size) {
  const char *base = strrchr(input, '/');
  base = base ? base + 1 : input;
  const char *dot = strrchr(base, '.');
  int n = dot ? (int)(dot - base) : (int)strlen(base);
  snprintf(out, size, "%.*s.html", n, base);
}

/* the replay of a scene; visual elements that cannot be drawn are reported */
static mr_replay *open_replay(const char *cmd, const mr_scene *sc, double fps) {
  int nskipped = 0;
  char skipped[MR_ERROR_MSG_MAX] = "";
  mr_error err = {0};
  mr_replay *r = mr_replay_create(sc, fps, &nskipped, skipped, &err);
  if (!r) fprintf(stderr, "moreau %s: %s\n", cmd, err.msg);
  if (r && nskipped)
    fprintf(stderr, "moreau %s: %d visual element(s) not drawn, the last: %s\n", cmd, nskipped,
            skipped);
  return r;
}

static int write_page(const char *cmd, const mr_replay *r, const char *path) {
  mr_error err = {0};
  if (mr_replay_write(r, path, &err)) return fprintf(stderr, "moreau %s: %s\n", cmd, err.msg), 2;
  printf("replay written to %s\n", path);
  return 0;
}

mr_replay *mr_view_replay(const char *cmd, const mr_scene *scene, const char *run_name,
                          double fps) {
  mr_replay *r = open_replay(cmd, scene, fps);
  mr_error err = {0};
  if (r && run_name && mr_replay_begin_run(r, run_name, &err)) {
    fprintf(stderr, "moreau %s: %s\n", cmd, err.msg);
    mr_replay_free(r);
    r = NULL;
  }
  return r;
}

int mr_view_write(const char *cmd, mr_replay *r, const char *status, const char *path) {
  if (status) mr_replay_end_run(r, status);
  int code = write_page(cmd, r, path);
  mr_replay_free(r);
  return code;
}

int mr_cmd_view(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return fputs(view_usage, stdout), 0;
  view_args a;
  mr_error verr;
  if (!mr_replay_available(&verr)) return fprintf(stderr, "moreau view: %s\n", verr.msg), 2;
  if (parse_args(argc, argv, &a)) return 2;
  int csv = has_suffix(a.input, ".csv");
  if (csv && !a.scene) return usage_error("%s", "a trajectory needs --scene SCENE.yaml");
  if (!csv && (a.scene || a.contacts))
    return usage_error("%s", "--scene and --contacts go with a TRAJECTORY.csv input");
  if (a.solver && mr_cli_check_solver("view", a.solver)) return 2;
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load(csv ? a.scene : a.input, &sc, &err))
    return fprintf(stderr, "moreau view: %s\n", err.msg), 2;
  mr_cli_scene_note("view", &sc);
  if (a.dt > 0.0) sc.timestep = a.dt;
  if (a.duration > 0.0) sc.duration = a.duration;
  mr_replay *r = open_replay("view", &sc, a.fps);
  int code = !r ? 2 : csv ? replay_trajectory(&a, &sc, r) : run_scene(&a, &sc, r);
  char out[MR_SCENE_PATH_MAX];
  default_output(a.input, out, sizeof out);
  if (r && code != 2) code = write_page("view", r, a.output ? a.output : out) ? 2 : code;
  mr_replay_free(r);
  mr_scene_free(&sc);
  return code;
}
