/* moreau sweep: run a scene over a grid of settings × solvers × seeds on a pool of threads and
 * write one table, DIR/summary.csv, with a row per run in a fixed order.
 *
 * Runs are numbered in the order of the product: the first --grid varies slowest, then the
 * next ones, then the solver, then the seed. Every run's scene is loaded and set up in the main
 * thread (the loaders are not shared across threads); run r is then stepped by thread
 * r mod T (mr_run_scene on its own simulator), so the table does not depend on T apart from
 * the wall-time column. A run that fails — a value its key refuses, a divergence — is a row
 * with its error; the others go on.
 *
 * Seeds: seed 0 is the scene as written; seed s ≥ 1 offsets the initial coordinate of every
 * robot's 1-dof joint by a uniform draw in [−0.01, 0.01] rad (or m) from the splitmix64
 * sequence started at s, the PD targets unchanged: the same disturbance for every setting and
 * solver. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/runner.h"

#define MAX_GRIDS 8
#define MAX_VALUES 64
#define MAX_SOLVERS 32
#define MAX_THREADS 64
#define SEED_AMPLITUDE 0.01 /* rad or m */

static const char sweep_usage[] =
    "usage: moreau sweep SCENE.yaml --grid KEY=V1,V2,... [--grid ...] [--solvers A,B,...]\n"
    "                    [--seeds K] [--threads T] --out DIR\n"
    "Run every combination of the grid values, solvers and seeds and write DIR/summary.csv\n"
    "(one row per run, in a fixed order) and DIR/run_NNNN.json (each run's summary).\n"
    "  --grid KEY=V1,...  a 'run --set' key (solver.FIELD, contact.baumgarte, contact.margin,\n"
    "                     contact.restitution_threshold), timestep or duration, and its values\n"
    "  --solvers A,B      contact solvers (default: the scene's)\n"
    "  --seeds K          seeds 0..K-1 (default 1); seed s >= 1 offsets the robots' initial\n"
    "                     joint coordinates by uniform draws in [-0.01, 0.01]\n"
    "  --threads T        runs stepped in parallel (default: the processors online)\n"
    "Exit status: 0 every run finished, 1 some run failed (its row says why), 2 bad usage.\n";

typedef struct {
  char key[128];
  int nvalues;
  char *values[MAX_VALUES]; /* into text */
  char text[2048];
} grid;

typedef struct {
  const char *scene, *solvers, *out;
  int ngrids, nseeds, threads;
  grid grids[MAX_GRIDS];
  const char *solver[MAX_SOLVERS];
  int nsolvers;
  char solver_text[1024];
} sweep_args;

/* one run: its settings, its scene once set up, its outcome */
typedef struct {
  int value[MAX_GRIDS]; /* index of each grid's value */
  int solver, seed;
  int loaded; /* scene holds a loaded scene */
  mr_scene scene;
  mr_status status;
  mr_error err;
  mr_run_summary summary;
} sweep_run;

typedef struct {
  sweep_run *runs;
  int nruns, t, nthreads;
  const sweep_args *a;
} sweep_share;

static int usage_error(const char *fmt, const char *what) {
  fprintf(stderr, "moreau sweep: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see 'moreau sweep --help')\n");
  return 2;
}

/* ---- arguments ---- */

static int parse_grid(const char *spec, grid *g) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || !eq[1]) return usage_error("--grid '%s': expected KEY=V1,V2,...", spec);
  snprintf(g->key, sizeof g->key, "%.*s", (int)(eq - spec), spec);
  snprintf(g->text, sizeof g->text, "%s", eq + 1);
  g->nvalues = 0;
  for (char *save = NULL, *tok = strtok_r(g->text, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (g->nvalues == MAX_VALUES) return usage_error("--grid '%s': too many values", spec);
    g->values[g->nvalues++] = tok;
  }
  return g->nvalues ? 0 : usage_error("--grid '%s': no value", spec);
}

static int parse_count(const char *opt, const char *text, int max, int *out) {
  char *end = NULL;
  long x = strtol(text, &end, 10);
  if (end == text || *end || x < 1 || x > max) {
    fprintf(stderr, "moreau sweep: %s needs an integer in [1, %d], got '%s'\n", opt, max, text);
    return 2;
  }
  *out = (int)x;
  return 0;
}

static int parse_option(sweep_args *a, const char *o, const char *v) {
  if (!strcmp(o, "--grid")) {
    if (a->ngrids == MAX_GRIDS) return usage_error("%s", "too many --grid options");
    return parse_grid(v, &a->grids[a->ngrids++]);
  }
  if (!strcmp(o, "--solvers")) return a->solvers = v, 0;
  if (!strcmp(o, "--out")) return a->out = v, 0;
  if (!strcmp(o, "--seeds")) return parse_count(o, v, 1000000, &a->nseeds);
  if (!strcmp(o, "--threads")) return parse_count(o, v, MAX_THREADS, &a->threads);
  return usage_error("unknown option '%s'", o);
}

static int split_solvers(sweep_args *a) {
  if (!a->solvers) return 0;
  snprintf(a->solver_text, sizeof a->solver_text, "%s", a->solvers);
  for (char *save = NULL, *tok = strtok_r(a->solver_text, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (a->nsolvers == MAX_SOLVERS) return usage_error("%s", "too many solvers");
    if (!mr_solver_find(tok)) return usage_error("unknown solver '%s'", tok);
    a->solver[a->nsolvers++] = tok;
  }
  return a->nsolvers ? 0 : usage_error("%s", "--solvers: no solver");
}

static int parse_args(int argc, char **argv, sweep_args *a) {
  memset(a, 0, sizeof *a);
  a->nseeds = 1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  a->threads = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i];
    if (o[0] != '-') {
      if (a->scene) return usage_error("unexpected argument '%s'", o);
      a->scene = o;
      continue;
    }
    if (i + 1 >= argc) return usage_error("option %s needs a value", o);
    if (parse_option(a, o, argv[++i])) return 2;
  }
  if (!a->scene) return usage_error("%s", "missing SCENE.yaml");
  if (!a->out) return usage_error("%s", "missing --out DIR");
  if (!a->ngrids) return usage_error("%s", "no --grid");
  return split_solvers(a);
}

/* ---- setting up each run's scene ---- */

/* KEY=VALUE of a grid on a loaded scene: timestep, duration or a 'run --set' key */
static mr_status apply_value(mr_scene *sc, const char *key, const char *val, mr_error *err) {
  if (strcmp(key, "timestep") && strcmp(key, "duration")) {
    char kv[512];
    snprintf(kv, sizeof kv, "%s=%s", key, val);
    return mr_cli_apply_set(sc, kv, err);
  }
  char *end = NULL;
  double x = strtod(val, &end);
  if (end == val || *end || !isfinite(x) || !(x > 0.0))
    return mr_error_set(err, MR_ERR_INVALID, "%s: '%s' is not a positive number", key, val);
  *(strcmp(key, "timestep") ? &sc->duration : &sc->timestep) = x;
  return MR_OK;
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* seed ≥ 1: offset every robot 1-dof joint's initial coordinate by U[−a, a] */
static void apply_seed(mr_scene *sc, int seed) {
  if (seed == 0) return;
  uint64_t s = (uint64_t)seed;
  for (int r = 0; r < sc->nrobots; ++r) {
    const mr_scene_robot *rb = &sc->robots[r];
    for (int b = rb->first_body; b < rb->first_body + rb->nbodies; ++b) {
      const mr_joint *j = &sc->model->bodies[b].joint;
      if (mr_joint_nq(j->type) != 1) continue;
      double u = (double)(splitmix64(&s) >> 11) * 0x1.0p-53;
      sc->q0[j->idx_q] += SEED_AMPLITUDE * (2.0 * u - 1.0);
    }
  }
}

/* load run r's scene and apply its grid values and seed; a failure is kept in the run */
static void prepare_run(const sweep_args *a, sweep_run *run) {
  run->status = mr_scene_load(a->scene, &run->scene, &run->err);
  run->loaded = 1;
  for (int g = 0; g < a->ngrids && !run->status; ++g)
    run->status =
        apply_value(&run->scene, a->grids[g].key, a->grids[g].values[run->value[g]], &run->err);
  if (!run->status) apply_seed(&run->scene, run->seed);
}

/* the runs in the product order: grids (first slowest), solvers, seeds (fastest) */
static void enumerate(const sweep_args *a, sweep_run *runs, int nruns, int nsolvers) {
  for (int r = 0; r < nruns; ++r) {
    int k = r;
    runs[r].seed = k % a->nseeds, k /= a->nseeds;
    runs[r].solver = k % nsolvers, k /= nsolvers;
    for (int g = a->ngrids - 1; g >= 0; --g)
      runs[r].value[g] = k % a->grids[g].nvalues, k /= a->grids[g].nvalues;
  }
}

/* ---- running ---- */

static const char *run_solver(const sweep_args *a, const sweep_run *run) {
  return a->nsolvers ? a->solver[run->solver] : run->scene.solver;
}

static void *run_share(void *p) {
  sweep_share *sh = p;
  for (int r = sh->t; r < sh->nruns; r += sh->nthreads) {
    sweep_run *run = &sh->runs[r];
    if (run->status) continue;
    mr_run_options opt = {.solver = sh->a->nsolvers ? sh->a->solver[run->solver] : NULL,
                          .every = 1};
    run->status = mr_run_scene(&run->scene, &opt, &run->summary, &run->err);
  }
  return NULL;
}

/* every run on min(T, nruns) threads, the caller's included */
static void run_all(const sweep_args *a, sweep_run *runs, int nruns) {
  int T = a->threads < nruns ? a->threads : nruns;
  sweep_share sh[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  int started[MAX_THREADS] = {0};
  for (int t = 0; t < T; ++t)
    sh[t] = (sweep_share){runs, nruns, t, T, a};
  for (int t = 1; t < T; ++t)
    started[t] = pthread_create(&th[t], NULL, run_share, &sh[t]) == 0;
  run_share(&sh[0]);
  for (int t = 1; t < T; ++t)
    if (started[t])
      pthread_join(th[t], NULL);
    else
      run_share(&sh[t]); /* no thread: its share runs here */
}

/* ---- output ---- */

/* a CSV field in double quotes, inner quotes doubled, line breaks as spaces */
static void csv_text(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s)
    if (*s == '"')
      fputs("\"\"", f);
    else
      fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  fputc('"', f);
}

static void summary_header(FILE *f, const sweep_args *a) {
  fputs("run", f);
  for (int g = 0; g < a->ngrids; ++g)
    fprintf(f, ",%s", a->grids[g].key);
  fputs(",solver,seed,status,steps,wall_time_s,max_eps_abs,max_penetration_m,energy_drift_J,"
        "not_converged,collision_failures,error\n",
        f);
}

static void summary_row(FILE *f, const sweep_args *a, int r, const sweep_run *run) {
  const mr_run_summary *s = &run->summary;
  fprintf(f, "%d", r);
  for (int g = 0; g < a->ngrids; ++g)
    fprintf(f, ",%s", a->grids[g].values[run->value[g]]);
  fprintf(f, ",%s,%d,%s,%ld,%.6f,%.9g,%.9g,%.9g,%ld,%ld,", run_solver(a, run), run->seed,
          mr_status_name(run->status), s->steps, s->wall_time, s->max_eps_abs, s->max_penetration,
          s->steps ? s->energy_end - s->energy_start : 0.0, s->not_converged,
          s->collision_failures);
  csv_text(f, run->status ? run->err.msg : "");
  fputc('\n', f);
}

/* DIR/summary.csv and DIR/run_NNNN.json */
static int write_outputs(const sweep_args *a, const sweep_run *runs, int nruns) {
  char path[4096];
  snprintf(path, sizeof path, "%s/summary.csv", a->out);
  FILE *f = fopen(path, "w");
  if (!f) return fprintf(stderr, "moreau sweep: cannot write '%s': %s\n", path, strerror(errno)), 2;
  summary_header(f, a);
  for (int r = 0; r < nruns; ++r)
    summary_row(f, a, r, &runs[r]);
  fclose(f);
  for (int r = 0; r < nruns; ++r) {
    if (runs[r].status) continue;
    snprintf(path, sizeof path, "%s/run_%04d.json", a->out, r);
    if (!(f = fopen(path, "w")))
      return fprintf(stderr, "moreau sweep: cannot write '%s': %s\n", path, strerror(errno)), 2;
    mr_run_summary_json(f, a->scene, run_solver(a, &runs[r]), &runs[r].summary);
    fclose(f);
  }
  return 0;
}

static long count_runs(const sweep_args *a, int nsolvers) {
  long n = (long)a->nseeds * nsolvers;
  for (int g = 0; g < a->ngrids && n <= 100000; ++g)
    n *= a->grids[g].nvalues;
  return n;
}

int mr_cmd_sweep(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return fputs(sweep_usage, stdout), 0;
  sweep_args a;
  if (parse_args(argc, argv, &a)) return 2;
  mr_scene probe;
  mr_error err = {0};
  if (mr_scene_load(a.scene, &probe, &err))
    return fprintf(stderr, "moreau sweep: %s\n", err.msg), 2;
  mr_scene_free(&probe);
  int nsolvers = a.nsolvers ? a.nsolvers : 1;
  long nruns = count_runs(&a, nsolvers);
  if (nruns > 100000) return usage_error("%s", "more than 100000 runs");
  if (mkdir(a.out, 0777) && errno != EEXIST)
    return fprintf(stderr, "moreau sweep: cannot create '%s': %s\n", a.out, strerror(errno)), 2;
  sweep_run *runs = calloc((size_t)nruns, sizeof *runs);
  if (!runs) return fprintf(stderr, "moreau sweep: out of memory for %ld runs\n", nruns), 2;
  enumerate(&a, runs, (int)nruns, nsolvers);
  for (int r = 0; r < nruns; ++r)
    prepare_run(&a, &runs[r]);
  run_all(&a, runs, (int)nruns);
  int code = write_outputs(&a, runs, (int)nruns), failed = 0;
  for (int r = 0; r < nruns; ++r) {
    failed += runs[r].status != MR_OK;
    if (runs[r].loaded) mr_scene_free(&runs[r].scene);
  }
  free(runs);
  printf("%ld runs, %d failed: %s/summary.csv\n", nruns, failed, a.out);
  return code ? code : failed ? 1 : 0;
}
