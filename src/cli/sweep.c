/* moreau sweep: run a scene over a grid of settings × solvers × seeds on MPI processes and
 * pools of threads and write one table, DIR/summary.csv, with a row per run in a fixed order.
 *
 * Runs are numbered in the order of the product: the first --grid varies slowest, then the
 * next ones, then the solver, then the seed. With K processes (mpirun -np K; K = 1 without an
 * MPI launcher) run r belongs to rank r mod K. Each rank loads and sets up its runs' scenes in
 * its main thread (the loaders are not shared across threads) and steps them on T threads: its
 * j-th run (r = rank + j K) goes to thread j mod T (mr_run_scene on its own simulator). Each
 * rank writes its runs' JSON summaries and formats their table rows; rank 0 gathers the rows
 * and writes the table in run order. So the table does not depend on K or T apart from the
 * wall-time column. A run that fails — a value its key refuses, a divergence — is a row with
 * its error; the others go on.
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
#include "cli/hints.h"
#include "cli/mpi.h"
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
    "  --threads T        runs stepped in parallel by each process (default: the processors\n"
    "                     online, divided among the MPI processes on this machine)\n"
    "Under mpirun -np K the runs are spread over the K processes (run r on rank r mod K) and\n"
    "rank 0 writes the table; DIR must be visible to every process.\n"
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
  int rank, nranks; /* this process's runs: rank, rank + nranks, ... */
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
  /* a mistyped key is refused before any run, not found in every row */
  mr_error err;
  if (mr_cli_check_key(g->key, 1, &err)) return usage_error("--grid: %s", err.msg);
  snprintf(g->text, sizeof g->text, "%s", eq + 1);
  g->nvalues = 0;
  for (char *save = NULL, *tok = strtok_r(g->text, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (g->nvalues == MAX_VALUES) return usage_error("--grid '%s': too many values", spec);
    if (strpbrk(tok, "\"\n\r")) return usage_error("--grid '%s': a quote or line break", spec);
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
    if (mr_cli_check_solver("sweep", tok)) return 2;
    a->solver[a->nsolvers++] = tok;
  }
  return a->nsolvers ? 0 : usage_error("%s", "--solvers: no solver");
}

static int parse_args(int argc, char **argv, sweep_args *a) {
  memset(a, 0, sizeof *a);
  a->nseeds = 1; /* a->threads = 0: chosen once the MPI processes are known */
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
  long step = (long)sh->nthreads * sh->nranks;
  for (long r = sh->rank + (long)sh->t * sh->nranks; r < sh->nruns; r += step) {
    sweep_run *run = &sh->runs[r];
    if (run->status) continue;
    mr_run_options opt = {.solver = sh->a->nsolvers ? sh->a->solver[run->solver] : NULL,
                          .every = 1};
    run->status = mr_run_scene(&run->scene, &opt, &run->summary, &run->err);
  }
  return NULL;
}

/* the number of runs of rank `rank` among `nranks` */
static int runs_of_rank(int nruns, int rank, int nranks) {
  return nruns > rank ? (nruns - rank + nranks - 1) / nranks : 0;
}

/* this rank's runs on min(T, its runs) threads, the caller's included */
static void run_all(const sweep_args *a, const mr_cli_mpi *m, sweep_run *runs, int nruns) {
  int mine = runs_of_rank(nruns, m->rank, m->size);
  int T = a->threads < mine ? a->threads : mine;
  if (T < 1) return; /* more ranks than runs */
  sweep_share sh[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  int started[MAX_THREADS] = {0};
  for (int t = 0; t < T; ++t)
    sh[t] = (sweep_share){runs, nruns, t, T, m->rank, m->size, a};
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

/* this rank's runs' JSON summaries, DIR/run_NNNN.json; 0 or 2 */
static int write_json(const sweep_args *a, const mr_cli_mpi *m, const sweep_run *runs, int nruns) {
  char path[4096];
  for (int r = m->rank; r < nruns; r += m->size) {
    if (runs[r].status) continue;
    snprintf(path, sizeof path, "%s/run_%04d.json", a->out, r);
    FILE *f = fopen(path, "w");
    if (!f)
      return fprintf(stderr, "moreau sweep: cannot write '%s': %s\n", path, strerror(errno)), 2;
    mr_run_summary_json(f, a->scene, run_solver(a, &runs[r]), &runs[r].summary);
    fclose(f);
  }
  return 0;
}

/* this rank's table rows, one line each, in its run order (malloc'd; NULL out of memory) */
static char *format_rows(const sweep_args *a, const mr_cli_mpi *m, const sweep_run *runs, int nruns,
                         size_t *len) {
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  if (!f) return NULL;
  for (int r = m->rank; r < nruns; r += m->size)
    summary_row(f, a, r, &runs[r]);
  if (fclose(f)) return free(text), NULL;
  return text;
}

/* the gathered lines indexed by their leading run number: every run exactly once, or 0 */
static int index_rows(char *all, char **row, int nruns) {
  int found = 0;
  for (char *save = NULL, *line = strtok_r(all, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *end = NULL;
    long r = strtol(line, &end, 10);
    if (end == line || *end != ',' || r < 0 || r >= nruns || row[r]) return 0;
    row[r] = line, ++found;
  }
  return found == nruns;
}

/* rank 0: DIR/summary.csv from every rank's rows; 0 or 2 */
static int write_table(const sweep_args *a, char *all, int nruns) {
  char **row = calloc((size_t)nruns, sizeof *row);
  if (!row) return fprintf(stderr, "moreau sweep: out of memory for the table\n"), 2;
  if (!index_rows(all, row, nruns)) {
    free(row);
    return fprintf(stderr, "moreau sweep: the processes' rows do not cover every run once\n"), 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/summary.csv", a->out);
  FILE *f = fopen(path, "w");
  if (!f) {
    free(row);
    return fprintf(stderr, "moreau sweep: cannot write '%s': %s\n", path, strerror(errno)), 2;
  }
  summary_header(f, a);
  for (int r = 0; r < nruns; ++r)
    fprintf(f, "%s\n", row[r]);
  int bad = fclose(f) != 0;
  free(row);
  if (bad) return fprintf(stderr, "moreau sweep: error writing '%s'\n", path), 2;
  return 0;
}

/* every rank's rows gathered on rank 0, which writes the table; the outcome (0 or 2) on
 * every rank */
static int write_outputs(const sweep_args *a, const mr_cli_mpi *m, const sweep_run *runs,
                         int nruns) {
  int code = write_json(a, m, runs, nruns);
  size_t len = 0, total = 0;
  char *mine = format_rows(a, m, runs, nruns, &len);
  if (!mine) code = 2, fprintf(stderr, "moreau sweep: out of memory for the table rows\n");
  char *all = mr_cli_mpi_gather(m, mine ? mine : "", mine ? len : 0, &total);
  free(mine);
  if (m->rank == 0 && !all) code = 2, fprintf(stderr, "moreau sweep: out of memory for the rows\n");
  if (m->rank == 0 && all && !code) code = write_table(a, all, nruns);
  free(all);
  int worst = (int)mr_cli_mpi_sum(m, code);
  return worst ? 2 : 0;
}

static long count_runs(const sweep_args *a, int nsolvers) {
  long n = (long)a->nseeds * nsolvers;
  for (int g = 0; g < a->ngrids && n <= 100000; ++g)
    n *= a->grids[g].nvalues;
  return n;
}

/* threads per process: --threads, or the processors online shared among the local ranks */
static int default_threads(const mr_cli_mpi *m) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN) / (m->local_size > 0 ? m->local_size : 1);
  return cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
}

/* whether seeds change anything: some robot has a 1-dof joint (apply_seed) */
static int seeds_apply(const mr_scene *sc) {
  for (int r = 0; r < sc->nrobots; ++r)
    for (int b = sc->robots[r].first_body; b < sc->robots[r].first_body + sc->robots[r].nbodies;
         ++b)
      if (mr_joint_nq(sc->model->bodies[b].joint.type) == 1) return 1;
  return 0;
}

/* the scene loads, and --seeds K > 1 has joints to perturb; 0 or 2 */
static int probe_scene(const sweep_args *a) {
  mr_scene probe;
  mr_error err = {0};
  if (mr_scene_load(a->scene, &probe, &err))
    return fprintf(stderr, "moreau sweep: %s\n", err.msg), 2;
  mr_cli_scene_note("sweep", &probe);
  int ok = a->nseeds == 1 || seeds_apply(&probe);
  mr_scene_free(&probe);
  if (!ok)
    return usage_error("--seeds: '%s' has no robot joint with one coordinate for a seed to "
                       "perturb",
                       a->scene);
  return 0;
}

/* this rank's share of the sweep, the table on rank 0; the exit status, the same on every
 * rank */
static int sweep(sweep_args *a, const mr_cli_mpi *m, int nsolvers, long nruns) {
  if (!a->threads) a->threads = default_threads(m);
  int made = !mkdir(a->out, 0777) || errno == EEXIST;
  if (!made) fprintf(stderr, "moreau sweep: cannot create '%s': %s\n", a->out, strerror(errno));
  sweep_run *runs = made ? calloc((size_t)nruns, sizeof *runs) : NULL;
  if (made && !runs) fprintf(stderr, "moreau sweep: out of memory for %ld runs\n", nruns);
  if (mr_cli_mpi_sum(m, !runs)) return free(runs), 2;
  enumerate(a, runs, (int)nruns, nsolvers);
  for (long r = m->rank; r < nruns; r += m->size)
    prepare_run(a, &runs[r]);
  run_all(a, m, runs, (int)nruns);
  int code = write_outputs(a, m, runs, (int)nruns);
  long failed = 0;
  for (long r = m->rank; r < nruns; r += m->size) {
    failed += runs[r].status != MR_OK;
    if (runs[r].loaded) mr_scene_free(&runs[r].scene);
  }
  free(runs);
  failed = mr_cli_mpi_sum(m, failed);
  if (m->rank == 0)
    printf("%ld runs, %ld failed: %s/summary.csv (%d process%s × %d thread%s)\n", nruns, failed,
           a->out, m->size, m->size > 1 ? "es" : "", a->threads, a->threads > 1 ? "s" : "");
  return code ? code : failed ? 1 : 0;
}

int mr_cmd_sweep(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return fputs(sweep_usage, stdout), 0;
  sweep_args a;
  if (parse_args(argc, argv, &a) || probe_scene(&a)) return 2;
  int nsolvers = a.nsolvers ? a.nsolvers : 1;
  long nruns = count_runs(&a, nsolvers);
  if (nruns > 100000) return usage_error("%s", "more than 100000 runs");
  mr_cli_mpi m;
  if (mr_cli_mpi_start(&m)) return 2;
  int code = sweep(&a, &m, nsolvers, nruns);
  mr_cli_mpi_stop(&m);
  return code;
}
