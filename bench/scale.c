/* How the step's cost grows with the number of bodies, moreau against MuJoCo (Debian
 * libmujoco-dev 2.2.2) on the same generated scenes in one process:
 *   spheres  N spheres (r 5 cm, 1 kg) resting on a plane, one contact each, 0.15 m apart;
 *   stacks   N/4 columns of 4 cubes (10 cm, 1 kg) resting on a plane, 0.3 m apart;
 *   bin      N cubes (10 cm, 1 kg) dropped in layers into a bin (floor and four walls).
 * Both sides: Δt = 1 ms, μ = 0.5, no margin, elliptic friction cones (condim 3), MuJoCo's Newton
 * solver (tolerance 1e-8, at most 100 iterations), moreau's solver from the command line (default
 * ncp-hybrid, the default solver of a scene; warm started). Resting scenes start at touch; per size WARMUP steps of each simulator
 * are run unmeasured, then batches of BATCH steps alternate between the two, every step timed.
 * The bin is dynamic: each simulator runs the same DROP steps from the same start and the steps
 * of the second half are timed. Reported per size: median µs/step of each, their ratio, mean
 * contacts and iterations per step (moreau's: the largest island's); then the mean µs/step of
 * each (a dynamic scene's rare hard steps weigh in the mean, not in the median), moreau's islands, iterations summed over the islands (the step's work, iterations_sum) and
 * mean µs per summed iteration: with islands solved independently, a cost per island that grows
 * with N while the µs per summed iteration stays flat is the spread of the islands' iterations
 * (the median step of one island sits below its mean; the sum over many concentrates at N
 * times the mean), not structural; per scene the exponent p of cost ∝ N^p fitted by least
 * squares on log-log over the measured sizes. A size whose moreau step is projected (from the
 * previous size at the exponent measured so far, 1.5 when only one size was measured
 * before) above BUDGET_US is not run, and says so; a size MuJoCo cannot allocate (its njmax²
 * constraint arrays) is run by moreau alone.
 * Run: make bench-peers (or build/bench/scale [solver [max_n [scene]]], scene one of spheres,
 * stacks, bin: that scene alone). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "scale_scenes.h"

#define WARMUP 50
#define BATCH 10
#define BATCHES 6
#define DROP 400
#define BUDGET_US 2e5
#define MAX_SIZES 8

static double mean(const double *x, int n) {
  double s = 0.0;
  for (int k = 0; k < n; ++k)
    s += x[k];
  return n ? s / n : NAN;
}

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  return n ? x[n / 2] : NAN;
}

/* the MuJoCo model of the same scene, as MJCF written to a temporary file */
static mjModel *mujoco_model(scale_kind kind, int n) {
  scale_text t = {0};
  /* contact capacity: one per sphere, four per cube (its face on the floor or on a cube) with
   * room for the bin's walls; three constraint rows per elliptic contact */
  int ncon = kind == SCALE_SPHERES ? n + 10 : kind == SCALE_STACKS ? 4 * n + 20 : 6 * n + 50;
  scale_put(&t, "<mujoco><option timestep=\"0.001\" cone=\"elliptic\" solver=\"Newton\" "
          "jacobian=\"sparse\" iterations=\"100\" tolerance=\"1e-8\"/>\n"
          "<size nconmax=\"%d\" njmax=\"%d\"/>\n",
      ncon, 3 * ncon);
  scale_put(&t, "<default><geom friction=\"0.5 0 0\" condim=\"3\"/></default><worldbody>\n");
  scale_put(&t, "<geom type=\"plane\" size=\"0 0 1\"/>\n");
  if (kind == SCALE_BIN) {
    double h = scale_bin_half(n), w = h + 0.1;
    scale_put(&t, "<geom type=\"box\" size=\"0.05 %g 0.5\" pos=\"%g 0 0.5\"/>\n", w, h + 0.05);
    scale_put(&t, "<geom type=\"box\" size=\"0.05 %g 0.5\" pos=\"%g 0 0.5\"/>\n", w, -h - 0.05);
    scale_put(&t, "<geom type=\"box\" size=\"%g 0.05 0.5\" pos=\"0 %g 0.5\"/>\n", w, h + 0.05);
    scale_put(&t, "<geom type=\"box\" size=\"%g 0.05 0.5\" pos=\"0 %g 0.5\"/>\n", w, -h - 0.05);
  }
  for (int k = 0; k < n; ++k) {
    scale_pos p = scale_body_pos(kind, n, k);
    scale_put(&t, "<body pos=\"%.6f %.6f %.6f\"><freejoint/>", p.x, p.y, p.z);
    if (kind == SCALE_SPHERES)
      scale_put(&t, "<geom type=\"sphere\" size=\"0.05\" mass=\"1\"/></body>\n");
    else
      scale_put(&t, "<geom type=\"box\" size=\"0.05 0.05 0.05\" mass=\"1\"/></body>\n");
  }
  scale_put(&t, "</worldbody></mujoco>\n");
  char path[] = "/tmp/moreau-scale-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, t.s, t.n) != (ssize_t)t.n) abort();
  close(fd);
  free(t.s);
  char msg[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, msg, sizeof msg);
  unlink(path);
  if (!m) fprintf(stderr, "mujoco: %s\n", msg);
  return m;
}

typedef struct {
  double us_moreau, us_mujoco, contacts_moreau, contacts_mujoco, iter_moreau, iter_mujoco;
  double mean_us_moreau, mean_us_mujoco, islands_moreau, iter_sum_moreau; /* per step */
  int ran_moreau, no_mujoco;
} measure;

typedef struct {
  mr_sim *s;
  mjModel *mm;
  mjData *md;
  double *tm, *tj; /* per-step times */
  int nm, nj;
  double cm, cj, im, ij; /* sums of contacts and iterations */
  double isl, ims;       /* moreau: sums of islands and of iterations summed over them */
} run_state;

static int step_moreau(run_state *r, int timed) {
  mr_error err = {0};
  double t0 = bench_now_us();
  if (mr_sim_step(r->s, &err)) {
    fprintf(stderr, "moreau: %s\n", err.msg);
    return -1;
  }
  if (timed) {
    r->tm[r->nm++] = bench_now_us() - t0;
    r->cm += mr_sim_last(r->s)->ncontacts;
    r->im += mr_sim_last(r->s)->iterations;
    r->isl += mr_sim_last(r->s)->islands;
    r->ims += mr_sim_last(r->s)->iterations_sum;
  }
  return 0;
}

static void step_mujoco(run_state *r, int timed) {
  if (!r->md) return; /* a size MuJoCo could not allocate: moreau alone */
  double t0 = bench_now_us();
  mj_step(r->mm, r->md);
  if (timed) {
    r->tj[r->nj++] = bench_now_us() - t0;
    r->cj += r->md->ncon;
    r->ij += r->md->solver_iter;
  }
}

/* steps of both simulators; resting scenes alternate batches, the bin runs each through */
static int run_both(scale_kind kind, run_state *r, int with_moreau) {
  if (kind == SCALE_BIN) {
    for (int k = 0; k < DROP; ++k) {
      if (with_moreau && step_moreau(r, k >= DROP / 2)) return -1;
    }
    for (int k = 0; k < DROP; ++k)
      step_mujoco(r, k >= DROP / 2);
    return 0;
  }
  for (int k = 0; k < WARMUP; ++k) {
    if (with_moreau && step_moreau(r, 0)) return -1;
    step_mujoco(r, 0);
  }
  for (int b = 0; b < BATCHES; ++b) {
    for (int k = 0; k < BATCH; ++k)
      if (with_moreau && step_moreau(r, 1)) return -1;
    for (int k = 0; k < BATCH; ++k)
      step_mujoco(r, 1);
  }
  return 0;
}

static int measure_size(scale_kind kind, int n, const char *solver, int with_moreau,
                        measure *out) {
  int steps = DROP + WARMUP + BATCH * BATCHES;
  run_state r = {0};
  r.tm = calloc((size_t)steps, sizeof(double));
  r.tj = calloc((size_t)steps, sizeof(double));
  mr_scene sc;
  mr_error err = {0};
  int ok = -1;
  char *yaml = scale_moreau_scene(kind, n);
  if (mr_scene_parse(yaml, "scale.yaml", ".", &sc, &err)) {
    fprintf(stderr, "scene: %s\n", err.msg);
    goto done;
  }
  if (with_moreau && !(r.s = mr_sim_from_scene(&sc, solver, &err))) {
    fprintf(stderr, "moreau: %s\n", err.msg);
    goto scene;
  }
  /* MuJoCo 2.2.2 sizes its constraint arrays njmax × njmax: large stacks do not fit (its
   * compiler already fails to make a data object) */
  r.mm = mujoco_model(kind, n);
  if (!r.mm || !(r.md = mj_makeData(r.mm))) {
    if (r.mm) mj_deleteModel(r.mm);
    r.mm = NULL;
    out->no_mujoco = 1;
  }
  if (run_both(kind, &r, with_moreau) == 0) {
    out->ran_moreau = with_moreau;
    out->us_moreau = with_moreau ? median(r.tm, r.nm) : NAN;
    out->contacts_moreau = with_moreau ? r.cm / r.nm : NAN;
    out->iter_moreau = with_moreau ? r.im / r.nm : NAN;
    out->islands_moreau = with_moreau ? r.isl / r.nm : NAN;
    out->iter_sum_moreau = with_moreau ? r.ims / r.nm : NAN;
    out->mean_us_moreau = with_moreau ? mean(r.tm, r.nm) : NAN;
    out->us_mujoco = r.nj ? median(r.tj, r.nj) : NAN;
    out->mean_us_mujoco = r.nj ? mean(r.tj, r.nj) : NAN;
    out->contacts_mujoco = r.nj ? r.cj / r.nj : NAN;
    out->iter_mujoco = r.nj ? r.ij / r.nj : NAN;
    ok = 0;
  }
  if (r.md) mj_deleteData(r.md);
  if (r.mm) mj_deleteModel(r.mm);
  mr_sim_free(r.s);
scene:
  mr_scene_free(&sc);
done:
  free(yaml);
  free(r.tm);
  free(r.tj);
  return ok;
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

int main(int argc, char **argv) {
  const char *solver = argc > 1 ? argv[1] : "ncp-hybrid";
  int max_n = argc > 2 ? atoi(argv[2]) : 1000;
  const char *only = argc > 3 ? argv[3] : NULL;
  if (only && strcmp(only, "spheres") && strcmp(only, "stacks") && strcmp(only, "bin")) {
    fprintf(stderr, "scale: unknown scene '%s' (spheres, stacks or bin)\n", only);
    return 2;
  }
  const int sizes[] = {10, 30, 100, 300, 1000};
  printf("moreau (%s, warm start) against MuJoCo %s (Newton, elliptic cones), Δt = 1 ms\n\n",
         solver, mj_versionString());
  printf("| scene | N | moreau µs/step | MuJoCo µs/step | ratio | contacts moreau / MuJoCo | "
         "iterations moreau / MuJoCo | mean µs/step moreau / MuJoCo | islands | iterations summed "
         "over islands | µs per summed iteration |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int kind = SCALE_SPHERES; kind <= SCALE_BIN; ++kind) {
    if (only && strcmp(only, scale_kind_name[kind])) continue;
    int ns[MAX_SIZES], k = 0;
    double ym[MAX_SIZES], yj[MAX_SIZES], last = 0.0; /* last: moreau's measured or projected */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_n; ++i) {
      int n = sizes[i];
      /* project moreau's step from the sizes measured so far */
      double p = k >= 2 && isfinite(fit_exponent(ns, ym, k)) ? fit_exponent(ns, ym, k) : 1.5;
      double projected = k >= 1 ? last * pow((double)n / ns[k - 1], fmax(p, 1.0)) : 0.0;
      int with_moreau = projected <= BUDGET_US;
      measure m = {0};
      if (measure_size((scale_kind)kind, n, solver, with_moreau, &m)) return 1;
      if (m.no_mujoco && !with_moreau) {
        printf("| %s | %d | not run (projected %.2g s) | MuJoCo could not allocate its data | | | "
               "| | | | |\n",
               scale_kind_name[kind], n, projected * 1e-6);
        break;
      }
      ns[k] = n, ym[k] = m.us_moreau, yj[k] = m.us_mujoco, ++k;
      last = with_moreau ? m.us_moreau : projected;
      if (with_moreau && m.no_mujoco)
        printf("| %s | %d | %.1f | MuJoCo could not allocate its data | | %.1f / – | %.1f / – | "
               "%.1f / – | %.1f | %.1f | %.3f |\n",
               scale_kind_name[kind], n, m.us_moreau, m.contacts_moreau, m.iter_moreau,
               m.mean_us_moreau, m.islands_moreau, m.iter_sum_moreau,
               m.iter_sum_moreau > 0 ? m.mean_us_moreau / m.iter_sum_moreau : NAN);
      else if (with_moreau)
        printf("| %s | %d | %.1f | %.1f | %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f | "
               "%.1f | %.3f |\n",
               scale_kind_name[kind], n, m.us_moreau, m.us_mujoco, m.us_moreau / m.us_mujoco,
               m.contacts_moreau, m.contacts_mujoco, m.iter_moreau, m.iter_mujoco,
               m.mean_us_moreau, m.mean_us_mujoco, m.islands_moreau, m.iter_sum_moreau,
               m.iter_sum_moreau > 0 ? m.mean_us_moreau / m.iter_sum_moreau : NAN);
      else
        printf("| %s | %d | not run (projected %.2g s) | %.1f | | – / %.1f | – / %.1f | | | | |\n",
               scale_kind_name[kind], n, projected * 1e-6, m.us_mujoco, m.contacts_mujoco,
               m.iter_mujoco);
      fflush(stdout);
    }
    printf("| %s | exponent p | %.2f | %.2f | | | | | | | |\n", scale_kind_name[kind], fit_exponent(ns, ym, k),
           fit_exponent(ns, yj, k));
  }
  return 0;
}
