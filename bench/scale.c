/* moreau against MuJoCo (Debian libmujoco-dev 2.2.2) on the same generated scenes in one
 * process (bench/scale_scenes.h): how the step's cost grows with the number of bodies (spheres,
 * stacks, bin at N = 10 ... 1000), and the scenes users build (mixed: 200 spheres, capsules and
 * cylinders dropped into a bin; tower: 10 cubes; pyramid: 55 cubes; chain: 50 links; robots: 10
 * Solo-12).
 *
 * Both sides: Δt = 1 ms, no margin, elliptic friction cones (condim 3). MuJoCo runs its Newton
 * and its CG solver (tolerance 1e-8, at most 100 iterations) on the same model; the faster of
 * the two in mean step (minimum over repeats, below) is the reference of the row, and the row
 * names it (NOTES.md: CG beats Newton on large piles). moreau's solver comes from the command
 * line (default ncp-hybrid, the default solver of a scene; warm started).
 *
 * Protocol. Each size is run REPEATS times from the same start (every simulator is
 * deterministic, so step k is the same step in every repeat). Resting scenes (spheres, stacks,
 * tower, pyramid, robots): WARMUP unmeasured steps of each simulator, then BATCHES batches of
 * BATCH steps alternating between moreau, MuJoCo Newton and MuJoCo CG, every step timed.
 * Dynamic scenes (bin: 400 steps, the second half timed; mixed: 1000 steps, all timed, the fall
 * and the impacts included; chain: 1000 steps, all timed): each simulator runs through in turn. Per
 * simulator and row:
 *   - median, mean, 99th percentile and max of the step time over every timed step of every
 *     repeat (what a user's run sees, preemption by other programs included);
 *   - the minimum over repeats per step, then its mean (preemption removed: a step that was
 *     preempted in one repeat is not in all of them), the figure the ratios below use first;
 *   - the collision stage per step (moreau: mr_step_timing.collision; MuJoCo: its
 *     mjTIMER_POS_COLLISION timer, read through mjcb_time), mean of the minimum over repeats,
 *     and its median, 99th percentile and max over every timed step of every repeat;
 *   - contacts and iterations per step (moreau's: the largest island's and the sum over its
 *     islands), steps where moreau's solver stopped before its tolerance.
 * Every ratio is moreau / MuJoCo in the same run. A size whose moreau step is projected (from
 * the previous size at the exponent measured so far, 1.5 when only one size was measured before)
 * above BUDGET_US is not run, and says so; a size MuJoCo cannot allocate (its njmax² constraint
 * arrays) is run by moreau alone. Exponents: least squares on log-log over the sizes, on the
 * minimum-over-repeats means.
 *
 * Run: make bench-peers (or build/bench/scale [solver [max_n [scenes [repeats]]]], scenes a
 * comma-separated list of spheres, stacks, bin, mixed, tower, pyramid, chain, robots; default
 * every scene, 3 repeats). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "mj_util.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "scale_scenes.h"

#define WARMUP 50
#define BATCH 10
#define BATCHES 6
#define BUDGET_US 2e5
#define MAX_SIZES 8
#define MAX_REPEATS 15
#define SOLO_XML "bench/mjcf/solo_push.xml"

enum { MOREAU, NEWTON, CG, NSIMS };

/* the steps of a scene: total, the first timed one */
static void scene_steps(scale_kind kind, int *total, int *from) {
  switch (kind) {
  case SCALE_BIN:
    *total = 400, *from = 200;
    return;
  case SCALE_MIXED:
    *total = 1000, *from = 0;
    return;
  case SCALE_CHAIN:
    *total = 1000, *from = 0;
    return;
  default:
    *total = WARMUP + BATCH * BATCHES, *from = WARMUP;
  }
}

static int dynamic(scale_kind kind) {
  return kind == SCALE_BIN || kind == SCALE_MIXED || kind == SCALE_CHAIN;
}

/* one simulator's figures over the repeats of a size */
typedef struct {
  double *t, *tc;                    /* [repeats][timed steps]: step and collision time (µs) */
  int n;                             /* timed steps per repeat */
  double contacts, iters, iters_sum; /* sums over every timed step of every repeat */
  long not_converged;
  int ran;
} series;

/* the live simulators of one repeat */
typedef struct {
  mr_sim *s;
  mjModel *mm;
  mjData *md[2]; /* Newton, CG */
  const mr_scene *sc;
} live;

static int step_moreau(live *L, series *S, int rep, int k) {
  mr_error err = {0};
  double t0 = bench_now_us();
  if (mr_sim_step(L->s, &err)) {
    fprintf(stderr, "moreau: %s\n", err.msg);
    return -1;
  }
  double t1 = bench_now_us();
  if (k < 0) return 0;
  const mr_step_stats *st = mr_sim_last(L->s);
  S->t[rep * S->n + k] = t1 - t0;
  S->tc[rep * S->n + k] = st->timing.collision;
  S->contacts += st->ncontacts, S->iters += st->iterations, S->iters_sum += st->iterations_sum;
  S->not_converged += !st->converged;
  return 0;
}

/* MuJoCo's two solvers read the model's option: each step sets its own */
static void mj_step_with(mjModel *m, mjData *d, int cg) {
  m->opt.solver = cg ? mjSOL_CG : mjSOL_NEWTON;
  mj_step(m, d);
}

static void step_mujoco(live *L, int which, series *S, int rep, int k) {
  mjData *d = L->md[which];
  if (!d) return;
  double c0 = d->timer[mjTIMER_POS_COLLISION].duration, t0 = bench_now_us();
  mj_step_with(L->mm, d, which);
  double t1 = bench_now_us();
  if (k < 0) return;
  S->t[rep * S->n + k] = t1 - t0;
  S->tc[rep * S->n + k] = d->timer[mjTIMER_POS_COLLISION].duration - c0;
  S->contacts += d->ncon, S->iters += d->solver_iter;
}

/* one simulator's steps [a, b) of a repeat, timed from `from` on */
static int run_steps(live *L, int sim, series *S, int rep, int a, int b, int from) {
  for (int k = a; k < b; ++k) {
    int slot = k >= from ? k - from : -1;
    if (sim == MOREAU) {
      if (L->s && step_moreau(L, S, rep, slot)) return -1;
    } else {
      step_mujoco(L, sim - 1, S, rep, slot);
    }
  }
  return 0;
}

/* a repeat: dynamic scenes run each simulator through, resting ones alternate batches */
static int run_repeat(scale_kind kind, live *L, series *S, int rep) {
  int total, from;
  scene_steps(kind, &total, &from);
  if (dynamic(kind)) {
    for (int sim = 0; sim < NSIMS; ++sim)
      if (run_steps(L, sim, &S[sim], rep, 0, total, from)) return -1;
    return 0;
  }
  for (int sim = 0; sim < NSIMS; ++sim)
    if (run_steps(L, sim, &S[sim], rep, 0, from, from)) return -1;
  for (int b = from; b < total; b += BATCH)
    for (int sim = 0; sim < NSIMS; ++sim)
      if (run_steps(L, sim, &S[sim], rep, b, b + BATCH, from)) return -1;
  return 0;
}

/* the MuJoCo model of the scene, written to a temporary file and loaded; NULL on failure */
static mjModel *mujoco_model(scale_kind kind, int n, const char *solo_xml) {
  char *xml = scale_mujoco_scene(kind, n, solo_xml);
  if (!xml) return NULL;
  char path[] = "/tmp/moreau-scale-XXXXXX";
  int fd = mkstemp(path);
  size_t len = strlen(xml);
  if (fd < 0 || write(fd, xml, len) != (ssize_t)len) abort();
  close(fd);
  free(xml);
  char msg[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, msg, sizeof msg);
  unlink(path);
  if (!m) fprintf(stderr, "mujoco: %s\n", msg);
  return m;
}

/* a fresh repeat's simulators; MuJoCo's data NULL when it cannot allocate them */
static int open_live(const mr_scene *sc, mjModel *mm, const char *solver, int with_moreau,
                     live *L) {
  mr_error err = {0};
  memset(L, 0, sizeof *L);
  L->sc = sc, L->mm = mm;
  if (with_moreau && !(L->s = mr_sim_from_scene(sc, solver, &err))) {
    fprintf(stderr, "moreau: %s\n", err.msg);
    return -1;
  }
  /* the collision stage timed on both sides (MuJoCo's through mjcb_time) */
  if (L->s) mr_sim_time_stages(L->s, 1);
  for (int k = 0; mm && k < 2; ++k) {
    if (!(L->md[k] = mj_makeData(mm))) continue;
    mm->opt.solver = k ? mjSOL_CG : mjSOL_NEWTON;
    if (sc->nrobots && mj_util_setup(sc, mm, L->md[k])) return -1;
  }
  return 0;
}

static void close_live(live *L) {
  for (int k = 0; k < 2; ++k)
    if (L->md[k]) mj_deleteData(L->md[k]);
  mr_sim_free(L->s);
}

/* ---- statistics ---- */

static double quantile(const double *x, int n, double q) {
  double *y = malloc((size_t)(n > 0 ? n : 1) * sizeof *y);
  memcpy(y, x, (size_t)n * sizeof *y);
  qsort(y, (size_t)n, sizeof *y, bench_cmp_double);
  double v = n ? y[(int)(q * (n - 1) + 0.5)] : NAN;
  free(y);
  return v;
}

static double mean_of(const double *x, int n) {
  double s = 0.0;
  for (int k = 0; k < n; ++k)
    s += x[k];
  return n ? s / n : NAN;
}

/* the mean over steps of the minimum over repeats of x[rep][k] */
static double min_mean(const double *x, int n, int reps) {
  double s = 0.0;
  for (int k = 0; k < n; ++k) {
    double m = INFINITY;
    for (int r = 0; r < reps; ++r)
      m = fmin(m, x[r * n + k]);
    s += m;
  }
  return n ? s / n : NAN;
}

typedef struct {
  double median, mean, p99, max, min_mean, coll_min_mean, coll_mean;
  double coll_median, coll_p99, coll_max;
  double contacts, iters, iters_sum;
  long not_converged;
} figures;

static figures summarise(const series *S, int reps) {
  figures f = {0};
  int all = S->n * reps;
  f.median = quantile(S->t, all, 0.5), f.mean = mean_of(S->t, all);
  f.p99 = quantile(S->t, all, 0.99), f.max = quantile(S->t, all, 1.0);
  f.min_mean = min_mean(S->t, S->n, reps);
  f.coll_min_mean = min_mean(S->tc, S->n, reps), f.coll_mean = mean_of(S->tc, all);
  f.coll_median = quantile(S->tc, all, 0.5), f.coll_p99 = quantile(S->tc, all, 0.99);
  f.coll_max = quantile(S->tc, all, 1.0);
  f.contacts = S->contacts / all, f.iters = S->iters / all, f.iters_sum = S->iters_sum / all;
  f.not_converged = S->not_converged;
  return f;
}

/* ---- one size ---- */

typedef struct {
  figures f[NSIMS];
  int ran[NSIMS], steps; /* steps: timed moreau steps over the repeats */
  int ref;               /* NEWTON or CG: the faster MuJoCo */
} row;

static int measure(scale_kind kind, int n, const char *solver, int with_moreau, int reps,
                   const char *solo_xml, row *out) {
  int total, from, status = -1;
  scene_steps(kind, &total, &from);
  series S[NSIMS] = {{0}};
  for (int k = 0; k < NSIMS; ++k) {
    S[k].n = total - from;
    S[k].t = calloc((size_t)reps * S[k].n, sizeof(double));
    S[k].tc = calloc((size_t)reps * S[k].n, sizeof(double));
  }
  char urdf[] = "/tmp/moreau-chain-XXXXXX";
  int fd = mkstemp(urdf);
  if (fd >= 0) close(fd);
  char *yaml = scale_moreau_scene(kind, n, urdf);
  mr_scene sc;
  mr_error err = {0};
  if (!yaml || mr_scene_parse(yaml, "scale.yaml", ".", &sc, &err)) {
    fprintf(stderr, "scene %s: %s\n", scale_kind_name[kind], yaml ? err.msg : "not written");
    goto done;
  }
  mjModel *mm = mujoco_model(kind, n, solo_xml);
  mjcb_time = mj_util_clock_us;
  for (int r = 0; r < reps; ++r) {
    live L;
    if (open_live(&sc, mm, solver, with_moreau, &L) || run_repeat(kind, &L, S, r)) {
      close_live(&L);
      goto model;
    }
    S[MOREAU].ran = with_moreau, S[NEWTON].ran = L.md[0] != NULL, S[CG].ran = L.md[1] != NULL;
    close_live(&L);
  }
  for (int k = 0; k < NSIMS; ++k)
    out->ran[k] = S[k].ran, out->f[k] = summarise(&S[k], reps);
  out->steps = reps * S[MOREAU].n;
  out->ref = out->f[CG].min_mean < out->f[NEWTON].min_mean ? CG : NEWTON;
  status = 0;
model:
  if (mm) mj_deleteModel(mm);
  mr_scene_free(&sc);
done:
  unlink(urdf);
  free(yaml);
  for (int k = 0; k < NSIMS; ++k)
    free(S[k].t), free(S[k].tc);
  return status;
}

/* least-squares slope of log y against log x over the finite entries */
static double fit_exponent(const int *n, const double *y, int k) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (int i = 0; i < k; ++i) {
    if (!(y[i] > 0) || !isfinite(y[i])) continue;
    double lx = log((double)n[i]), ly = log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, ++m;
  }
  if (m < 2) return NAN;
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)len + 1);
  if (s && fread(s, 1, (size_t)len, f) != (size_t)len) free(s), s = NULL;
  if (s) s[len] = 0;
  fclose(f);
  return s;
}

static void print_header(void) {
  printf(
      "| scene | N | MuJoCo ref | step µs moreau / MuJoCo: median | mean | p99 | max | min "
      "over repeats, mean | ratio median / mean / p99 / max / min-mean | collision µs "
      "moreau / MuJoCo (min-mean) | collision ratio | collision µs moreau / MuJoCo: median | p99 | "
      "max | contacts moreau / MuJoCo | iterations largest island / summed / MuJoCo | not "
      "converged |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static void print_row(scale_kind kind, int n, const row *r) {
  const figures *m = &r->f[MOREAU], *j = &r->f[r->ref];
  printf("| %s | %d | %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f "
         "| %.2f / %.2f / %.2f / %.2f / **%.2f** | %.1f / %.1f | **%.2f** | %.1f / %.1f | %.1f / "
         "%.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f / %.1f | %ld/%d |\n",
         scale_kind_name[kind], n, r->ref == CG ? "CG" : "Newton", m->median, j->median, m->mean,
         j->mean, m->p99, j->p99, m->max, j->max, m->min_mean, j->min_mean, m->median / j->median,
         m->mean / j->mean, m->p99 / j->p99, m->max / j->max, m->min_mean / j->min_mean,
         m->coll_min_mean, j->coll_min_mean, m->coll_min_mean / j->coll_min_mean, m->coll_median,
         j->coll_median, m->coll_p99, j->coll_p99, m->coll_max, j->coll_max, m->contacts,
         j->contacts, m->iters, m->iters_sum, j->iters, m->not_converged, r->steps);
  fflush(stdout);
}

static void print_moreau_only(scale_kind kind, int n, const row *r) {
  const figures *m = &r->f[MOREAU];
  printf("| %s | %d | MuJoCo could not allocate its data | %.1f / – | %.1f / – | %.1f / – | "
         "%.1f / – | %.1f / – | | %.1f / – | | %.1f / – | %.1f / – | %.1f / – | %.1f / – | %.1f / "
         "%.1f / – | %ld |\n",
         scale_kind_name[kind], n, m->median, m->mean, m->p99, m->max, m->min_mean,
         m->coll_min_mean, m->coll_median, m->coll_p99, m->coll_max, m->contacts, m->iters,
         m->iters_sum, m->not_converged);
  fflush(stdout);
}

/* the sizes of a scene: the scaling sizes up to max_n, or the scene's own */
static int scene_sizes(scale_kind kind, int max_n, int *sizes) {
  static const int scaling[] = {10, 30, 100, 300, 1000};
  if (scale_fixed_size(kind)) return sizes[0] = scale_fixed_size(kind), 1;
  int k = 0;
  for (size_t i = 0; i < sizeof scaling / sizeof *scaling && scaling[i] <= max_n; ++i)
    sizes[k++] = scaling[i];
  return k;
}

static int run_scene(scale_kind kind, const char *solver, int max_n, int reps,
                     const char *solo_xml) {
  int sizes[MAX_SIZES], nsizes = scene_sizes(kind, max_n, sizes), ns[MAX_SIZES], k = 0;
  double ym[MAX_SIZES], yj[MAX_SIZES], last = 0.0; /* last: moreau's measured or projected */
  for (int i = 0; i < nsizes; ++i) {
    int n = sizes[i];
    /* project moreau's step from the sizes measured so far */
    double p = k >= 2 && isfinite(fit_exponent(ns, ym, k)) ? fit_exponent(ns, ym, k) : 1.5;
    double projected = k >= 1 ? last * pow((double)n / ns[k - 1], fmax(p, 1.0)) : 0.0;
    int with_moreau = projected <= BUDGET_US;
    row r = {0};
    if (measure(kind, n, solver, with_moreau, reps, solo_xml, &r)) return -1;
    int no_mujoco = !r.ran[NEWTON] && !r.ran[CG];
    if (no_mujoco && !with_moreau) {
      printf("| %s | %d | not run (projected %.2g s a step); MuJoCo could not allocate its data "
             "||||||||||||||||\n",
             scale_kind_name[kind], n, projected * 1e-6);
      break;
    }
    ns[k] = n, ym[k] = r.f[MOREAU].min_mean, yj[k] = r.f[r.ref].min_mean, ++k;
    last = with_moreau ? r.f[MOREAU].min_mean : projected;
    if (with_moreau && no_mujoco)
      print_moreau_only(kind, n, &r);
    else if (with_moreau)
      print_row(kind, n, &r);
    else
      printf("| %s | %d | %s | not run (projected %.2g s a step) ||||||||||||||\n",
             scale_kind_name[kind], n, r.ref == CG ? "CG" : "Newton", projected * 1e-6);
  }
  if (k > 1)
    printf("| %s | exponent p (min-mean) | | %.2f / %.2f ||||||||||||||\n", scale_kind_name[kind],
           fit_exponent(ns, ym, k), fit_exponent(ns, yj, k));
  return 0;
}

/* the scenes named in a comma-separated list (NULL: all); -1 on an unknown name */
static int parse_scenes(const char *list, int *on) {
  for (int k = 0; k < SCALE_KINDS; ++k)
    on[k] = list == NULL;
  for (const char *p = list; p && *p;) {
    size_t len = strcspn(p, ",");
    int found = 0;
    for (int k = 0; k < SCALE_KINDS; ++k)
      if (strlen(scale_kind_name[k]) == len && !strncmp(p, scale_kind_name[k], len))
        on[k] = found = 1;
    if (!found) {
      fprintf(stderr,
              "scale: unknown scene '%.*s' (spheres, stacks, bin, mixed, tower, pyramid, "
              "chain, robots)\n",
              (int)len, p);
      return -1;
    }
    p += len + (p[len] == ',');
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *solver = argc > 1 ? argv[1] : "ncp-hybrid";
  int max_n = argc > 2 ? atoi(argv[2]) : 1000, on[SCALE_KINDS];
  int reps = argc > 4 ? atoi(argv[4]) : 3;
  if (parse_scenes(argc > 3 ? argv[3] : NULL, on)) return 2;
  if (reps < 1 || reps > MAX_REPEATS) {
    fprintf(stderr, "scale: repeats %d, expected 1 to %d\n", reps, MAX_REPEATS);
    return 2;
  }
  char *solo_xml = read_file(SOLO_XML);
  double load[3] = {0};
  getloadavg(load, 3);
  printf("moreau (%s, warm start) against MuJoCo %s (Newton and CG, elliptic cones; the faster "
         "in min-mean is the row's reference), Δt = 1 ms, %d repeats, load average %.1f\n\n",
         solver, mj_versionString(), reps, load[0]);
  print_header();
  for (int kind = 0; kind < SCALE_KINDS; ++kind) {
    if (!on[kind]) continue;
    if (kind == SCALE_ROBOTS && !solo_xml) {
      fprintf(stderr, "scale: cannot read %s (run from the repository root)\n", SOLO_XML);
      return 1;
    }
    if (run_scene((scale_kind)kind, solver, max_n, reps, solo_xml)) return 1;
  }
  getloadavg(load, 3);
  printf("\nload average after: %.1f\n", load[0]);
  free(solo_xml);
  return 0;
}
