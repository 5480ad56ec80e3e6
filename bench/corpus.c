/* Contact problem corpus benchmark: every solver of the registry (but the soft baseline) on a
 * corpus of contact problems, each solved cold (λ = 0) with the default settings (ε_abs = 1e-6,
 * 10⁴ iterations). Output: one Markdown table per family and one over the whole corpus: per
 * solver the share of problems whose NCP criterion ε_abs ≤ 1e-6 (the physics, whatever model the
 * solver solves) and the share whose scaled criterion ε̂ ≤ 1e-6 (mr_problem_criteria_scaled, the
 * default eps_scale: what ncp-hybrid stops on), the median and maximum iterations, the median and
 * maximum wall time; then the time of ncp-hybrid against ncp-pgs on the problems ncp-pgs solves.
 *
 * The corpus is generated here (nothing large is stored in the repository):
 * - scenes: every scene file of scenes/ stepped with its own solver for at most max_steps steps,
 *   PER_SCENE problems taken at evenly spaced steps among those with contacts;
 * - talos gains: scenes/talos_stand.yaml with PD gains kp = 500, 1000, 2000, 3000 (kd = kp/100);
 * - heavy on light: scenes/b5_heavy_on_light.yaml with the heavy box's mass 1, 10, 100, 1000 kg
 *   on the 1e-3 kg box (mass ratios 1e3 to 1e6), stepped with ncp-hybrid (with the scene's
 *   ncp-pgs the boxes interpenetrate within a few steps and the later problems are of a broken
 *   stack);
 * - random: G = J Jᵀ with J (3nc x nv) uniform in [−1, 1], nv < 3nc (rank-deficient),
 *   g = J v_f + (0, 0, gap ≥ 0) per contact (a physical free velocity, so that the problem has a
 *   solution), μ in [0.2, 1], for nc = 4, 10, 20 (nv = 8, 24, 40) and seeds 1–6;
 * - fixtures: the recorded problems (JSON) of tests/fixtures (TALOS steps under the former gap
 *   law, Solo-12, Allegro);
 * - robots: example-robot-data's double_pendulum_continuous ($MOREAU_SHARED/reference) in the
 *   scene of tests/test_robots_corpus.c, stepped with the default solver: a link resting on the
 *   ground with forces of about 1e-3 N and a rank-2 G.
 * - scaling: the scaling scenes of bench/scale.c (scale_scenes.h: spheres on a plane, columns of
 *   four cubes, cubes dropped into a bin) at N = 10, 30, 100 bodies, stepped as there (ncp-pgs,
 *   warm start, islands on) for at most max_steps steps; at PER_SIZE evenly spaced steps the
 *   step's largest island (one problem per step, not the whole step);
 * - contact-rich: bench/scale.c's tower of 10 cubes and its capsules, cylinders and spheres
 *   dropped into a bin (30 and 100 bodies), stepped with the default solver for at most max_steps
 *   steps; at PER_SIZE evenly spaced steps the step's largest island of at most RICH_MAX_NC
 *   contacts;
 * - contactbench: the two recorded problems of ContactBench (Simple-Robotics/ContactBench,
 *   BSD-2-Clause), converted to force units by tools/contactbench_to_json.py and stored in
 *   tests/fixtures/contactbench (a box sliding on the ground; a 1000 kg cube on a 1 g cube).
 * Run from the repository root: make bench, or build/bench/bench/corpus [max_steps [solver,...
 * [dir]]] (a comma-separated list restricts the solvers run, "" runs them all; dir receives the
 * problems ncp-hybrid leaves above 1e-6 as JSON files, for `moreau solve`). */
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem_io.h"
#include "control/qp.h"
#include "core/arena.h"
#include "core/file.h"
#include "bench_util.h"
#include "integrate/sim_internal.h"
#include "moreau/collision.h"
#include "moreau/contact.h"
#include "moreau/dynamics.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "scale_scenes.h"

#define MAX_PROBLEMS 1200
#define PER_SCENE 12
#define MAX_SOLVERS 32
#define N_FAMILIES 9
#define PER_SIZE 6         /* scaling: steps sampled per scene and size */
#define SCALING_MAX_NC 400 /* scaling: the largest island kept (dense G of 3nc x 3nc) */
/* contact-rich: the largest island kept (every solver runs 10⁴ iterations on a dense G) */
#define RICH_MAX_NC 120

static const char *family_names[N_FAMILIES] = {
    "scenes", "talos gains",  "heavy on light", "random rank-deficient", "fixtures",
    "robots", "contactbench", "scaling",        "contact-rich"};

/* one problem of the corpus, owning its arrays */
typedef struct {
  char name[96];
  int family, nc;
  double *G, *g, *mu, *R;
  unsigned char *kind;
  mr_contact_problem p;
} problem;

typedef struct {
  problem *v;
  int n;
} corpus;

/* a copy of p into the corpus; 0 on success */
static int corpus_add(corpus *cs, const mr_contact_problem *p, int family, const char *name) {
  if (cs->n >= MAX_PROBLEMS || p->nc <= 0) return -1;
  problem *q = &cs->v[cs->n];
  size_t n = 3 * (size_t)p->nc;
  memset(q, 0, sizeof *q);
  snprintf(q->name, sizeof q->name, "%s", name);
  q->family = family, q->nc = p->nc;
  q->G = malloc(n * n * sizeof(double)), q->g = malloc(n * sizeof(double));
  q->mu = malloc((size_t)p->nc * sizeof(double)), q->R = calloc(n, sizeof(double));
  q->kind = p->kind ? malloc((size_t)p->nc) : NULL;
  if (!q->G || !q->g || !q->mu || !q->R || (p->kind && !q->kind)) return -1;
  mr_problem_G_dense(p, q->G);
  memcpy(q->g, p->g, n * sizeof(double));
  memcpy(q->mu, p->mu, (size_t)p->nc * sizeof(double));
  if (p->R) memcpy(q->R, p->R, n * sizeof(double));
  if (p->kind) memcpy(q->kind, p->kind, (size_t)p->nc);
  q->p = (mr_contact_problem){
      .nc = p->nc, .G = q->G, .g = q->g, .mu = q->mu, .R = q->R, .kind = q->kind, .dt = p->dt};
  cs->n++;
  return 0;
}

static void corpus_free(corpus *cs) {
  for (int i = 0; i < cs->n; ++i) {
    free(cs->v[i].G), free(cs->v[i].g), free(cs->v[i].mu), free(cs->v[i].R);
    free(cs->v[i].kind);
  }
  free(cs->v);
}

/* step a parsed scene, keep PER_SCENE problems spread over the steps with contacts */
static void add_scene(corpus *cs, mr_scene *sc, int family, const char *label, long max_steps,
                      const char *solver) {
  mr_error err = {0};
  mr_sim *s = mr_sim_from_scene(sc, solver, &err);
  if (!s) {
    fprintf(stderr, "%s: %s\n", label, err.msg);
    return;
  }
  long steps = (long)(sc->duration / sc->timestep + 0.5);
  if (steps > max_steps) steps = max_steps;
  long every = steps / PER_SCENE > 0 ? steps / PER_SCENE : 1;
  int kept = 0;
  for (long k = 1; k <= steps && kept < PER_SCENE; ++k) {
    if (mr_sim_step(s, &err)) {
      fprintf(stderr, "%s: step %ld: %s\n", label, k, err.msg);
      break;
    }
    const mr_contact_problem *p = mr_sim_problem(s);
    if (!p || p->nc == 0 || k % every) continue;
    char name[96];
    snprintf(name, sizeof name, "%s step %ld", label, k);
    if (corpus_add(cs, p, family, name) == 0) ++kept;
  }
  mr_sim_free(s);
}

static void add_scene_file(corpus *cs, const char *path, long max_steps) {
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load(path, &sc, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    return;
  }
  add_scene(cs, &sc, 0, path, max_steps, NULL);
  mr_scene_free(&sc);
}

/* a scene file's text with one substring replaced, parsed in the file's directory */
static void add_scene_variant(corpus *cs, const char *path, const char *from, const char *to,
                              int family, const char *label, long max_steps, const char *solver) {
  char *text = NULL, out[8192];
  size_t len = 0;
  mr_error err = {0};
  if (mr_read_file(path, &text, &len, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    return;
  }
  const char *at = strstr(text, from);
  if (!at || len + strlen(to) >= sizeof out) {
    fprintf(stderr, "%s: '%s' not found\n", path, from);
    free(text);
    return;
  }
  snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  free(text);
  mr_scene sc;
  if (mr_scene_parse(out, path, "scenes", &sc, &err)) {
    fprintf(stderr, "%s: %s\n", label, err.msg);
    return;
  }
  add_scene(cs, &sc, family, label, max_steps, solver);
  mr_scene_free(&sc);
}

/* the lowest and highest collision points of a scene's robot at q0 (support points along ∓z) */
static void robot_extent(const mr_scene *sc, double *zmin, double *zmax) {
  const mr_model *m = sc->model;
  mr_data *d = mr_data_create(m);
  mr_forward_kinematics(m, d, sc->q0, NULL, NULL);
  *zmin = INFINITY, *zmax = -INFINITY;
  for (int k = 0; k < m->ngeoms; ++k) {
    const mr_geom *G = &m->geoms[k];
    if (G->body == 0 || G->type == MR_GEOM_HALFSPACE || G->type == MR_GEOM_HEIGHTFIELD) continue;
    mr_se3 X = mr_se3_mul(&d->oMi[G->body], &G->placement);
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double z = mr_se3_act_point(&X, mr_geom_support(G, mr_m3_tmulv(&X.R, mr_v3(0, 0, sgn)))).v[2];
      *zmin = sgn < 0 ? fmin(*zmin, z) : *zmin, *zmax = sgn > 0 ? fmax(*zmax, z) : *zmax;
    }
  }
  mr_data_free(d);
}

/* a fixed-root robot of example-robot-data ($MOREAU_SHARED/reference, default ../shared) in the
 * scene tests/test_robots_corpus.c writes for it: on a ground of friction 0.9, its lowest
 * collision point at z = 0, PD gains kp = 3 m g h (h its height), kd = kp/100 */
static void add_robot(corpus *cs, const char *file, long max_steps) {
  const char *shared = getenv("MOREAU_SHARED");
  char ref[512], text[2048];
  snprintf(ref, sizeof ref, "%s/reference/example-robot-data", shared ? shared : "../shared");
  mr_scene sc;
  mr_error err = {0};
  double z0 = 0.0, kp = -1.0;
  for (int pass = 0; pass < 2; ++pass) {
    int len =
        snprintf(text, sizeof text,
                 "timestep: 0.001\nduration: 2.0\nbodies:\n  - name: ground\n    fixed: true\n"
                 "    geoms:\n      - {type: halfspace, friction: 0.9}\nrobots:\n  - name: r\n"
                 "    urdf: %s/robots/%s\n    package_roots: [%s/..]\n    floating: false\n"
                 "    friction: 0.9\n    position: [0, 0, %.17g]\n",
                 ref, file, ref, z0);
    if (kp > 0.0)
      snprintf(text + len, sizeof text - len, "    pd: {kp: %.17g, kd: %.17g}\n", kp, kp / 100);
    if (mr_scene_parse(text, file, ".", &sc, &err)) {
      fprintf(stderr, "%s: %s\n", file, err.msg);
      return;
    }
    if (pass) break;
    double zmin, zmax;
    robot_extent(&sc, &zmin, &zmax);
    z0 = zmin <= zmax ? -zmin : 0.0;
    kp = 3.0 * mr_model_total_mass(sc.model) * 9.81 * fmax(zmax - zmin, 0.1);
    mr_scene_free(&sc);
  }
  add_scene(cs, &sc, 5, file, max_steps, NULL);
  mr_scene_free(&sc);
}

/* a scaling scene of bench/scale.c with n bodies, stepped with solver (warm start, each island
 * solved on its own) for at most max_steps steps; at PER_SIZE evenly spaced steps with
 * contacts, the step's largest island of at most max_nc contacts, into family */
static void add_scaling(corpus *cs, scale_kind kind, int n, long max_steps, const char *solver,
                        int max_nc, int family) {
  char *yaml = scale_moreau_scene(kind, n, NULL), label[32];
  mr_scene sc;
  mr_error err = {0};
  snprintf(label, sizeof label, "%s N %d", scale_kind_name[kind], n);
  if (!yaml || mr_scene_parse(yaml, label, ".", &sc, &err)) {
    fprintf(stderr, "%s: %s\n", label, yaml ? err.msg : "out of memory");
    free(yaml);
    return;
  }
  free(yaml);
  mr_sim *s = mr_sim_from_scene(&sc, solver, &err);
  if (!s) {
    fprintf(stderr, "%s: %s\n", label, err.msg);
    mr_scene_free(&sc);
    return;
  }
  long every = max_steps / PER_SIZE > 0 ? max_steps / PER_SIZE : 1;
  for (long k = 1; k <= max_steps; ++k) {
    if (mr_sim_step(s, &err)) {
      fprintf(stderr, "%s: step %ld: %s\n", label, k, err.msg);
      break;
    }
    if (k % every || !s->islands) continue;
    int best = -1, best_nc = 0, nisl = mr_sim_last(s)->islands;
    for (int i = 0; i < nisl; ++i) {
      const int *blocks;
      int nc = mr_contact_stage_island(s->contacts, i, &blocks)->nc;
      if (nc > best_nc && nc <= max_nc) best = i, best_nc = nc;
    }
    if (best < 0) continue;
    const int *blocks;
    char name[96];
    snprintf(name, sizeof name, "%s step %ld island %d of %d", label, k, best, nisl);
    mr_contact_problem p = *mr_contact_stage_island(s->contacts, best, &blocks);
    p.dt = sc.timestep;
    if (corpus_add(cs, &p, family, name) == 0) fprintf(stderr, "%s: nc %d\n", name, p.nc);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* G = J Jᵀ (rank nv < 3nc), g = J v_f + a gap on the normal rows, random μ */
static void add_random(corpus *cs, int nc, int nv, uint64_t seed) {
  int n = 3 * nc;
  double *J = malloc(sizeof(double) * (size_t)n * nv), *G = malloc(sizeof(double) * n * n);
  double *g = malloc(sizeof(double) * n), *mu = malloc(sizeof(double) * nc);
  double *vf = malloc(sizeof(double) * nv);
  for (int i = 0; i < n * nv; ++i)
    J[i] = rng_uniform(&seed, -1.0, 1.0);
  for (int v = 0; v < nv; ++v)
    vf[v] = rng_uniform(&seed, -1.0, 1.0);
  for (int i = 0; i < n; ++i) {
    double acc = 0.0;
    for (int j = 0; j < n; ++j) {
      double gij = 0.0;
      for (int v = 0; v < nv; ++v)
        gij += J[i * nv + v] * J[j * nv + v];
      G[i * n + j] = gij;
    }
    for (int v = 0; v < nv; ++v)
      acc += J[i * nv + v] * vf[v];
    g[i] = acc + (i % 3 == 2 ? rng_uniform(&seed, 0.0, 0.5) : 0.0);
  }
  for (int i = 0; i < nc; ++i)
    mu[i] = rng_uniform(&seed, 0.2, 1.0);
  mr_contact_problem p = {.nc = nc, .G = G, .g = g, .mu = mu, .dt = 1e-3};
  char name[96];
  snprintf(name, sizeof name, "random nc %d nv %d seed %llu", nc, nv, (unsigned long long)seed);
  corpus_add(cs, &p, 3, name);
  free(J), free(G), free(g), free(mu), free(vf);
}

static void add_fixture(corpus *cs, const char *path, int family) {
  mr_problem_file f;
  mr_error err = {0};
  if (mr_problem_file_load(path, &f, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    return;
  }
  corpus_add(cs, &f.problem, family, path);
  mr_problem_file_free(&f);
}

static void build_corpus(corpus *cs, long max_steps) {
  glob_t gl;
  if (glob("scenes/*.yaml", 0, NULL, &gl) == 0) {
    for (size_t i = 0; i < gl.gl_pathc; ++i)
      add_scene_file(cs, gl.gl_pathv[i], max_steps);
    globfree(&gl);
  }
  static const int kp[] = {500, 1000, 2000, 3000};
  for (int i = 0; i < 4; ++i) {
    char to[64], label[64];
    snprintf(to, sizeof to, "pd: {kp: %d.0, kd: %g}", kp[i], kp[i] / 100.0);
    snprintf(label, sizeof label, "talos kp %d", kp[i]);
    add_scene_variant(cs, "scenes/talos_stand.yaml", "pd: {kp: 3000.0, kd: 30.0}", to, 1, label,
                      max_steps, NULL);
  }
  static const char *heavy[] = {"1.0e+0", "1.0e+1", "1.0e+2", "1.0e+3"};
  for (int i = 0; i < 4; ++i) {
    char to[64], label[64];
    snprintf(to, sizeof to, "mass: %s\n    position: [0, 0, 0.3]", heavy[i]);
    snprintf(label, sizeof label, "heavy on light 1e%d", i + 3);
    add_scene_variant(cs, "scenes/b5_heavy_on_light.yaml",
                      "mass: 1.0e+3\n    position: [0, 0, 0.3]", to, 2, label, max_steps,
                      "ncp-hybrid");
  }
  static const int sizes[3][2] = {{4, 8}, {10, 24}, {20, 40}};
  for (int k = 0; k < 3; ++k)
    for (uint64_t seed = 1; seed <= 6; ++seed)
      add_random(cs, sizes[k][0], sizes[k][1], seed);
  static const int scaling_n[] = {10, 30, 100};
  for (int kind = SCALE_SPHERES; kind <= SCALE_BIN; ++kind)
    for (int i = 0; i < 3; ++i) {
      double t0 = bench_now_us();
      add_scaling(cs, (scale_kind)kind, scaling_n[i], max_steps, "ncp-pgs", SCALING_MAX_NC, 7);
      fprintf(stderr, "scaling %s N %d: stepped in %.1f s\n", scale_kind_name[kind], scaling_n[i],
              1e-6 * (bench_now_us() - t0));
    }
  /* contact-rich: bench/scale.c's tower of 10 cubes and its capsules, cylinders and spheres
   * dropped into a bin (30 and 100 bodies), stepped with the default solver */
  static const struct {
    scale_kind kind;
    int n;
  } rich[] = {{SCALE_TOWER, 10}, {SCALE_MIXED, 30}, {SCALE_MIXED, 100}};
  for (int k = 0; k < 3; ++k) {
    double t0 = bench_now_us();
    add_scaling(cs, rich[k].kind, rich[k].n, max_steps, NULL, RICH_MAX_NC, 8);
    fprintf(stderr, "contact-rich %s N %d: stepped in %.1f s\n", scale_kind_name[rich[k].kind],
            rich[k].n, 1e-6 * (bench_now_us() - t0));
  }
  add_robot(cs, "double_pendulum_description/urdf/double_pendulum_continuous.urdf", max_steps);
  static const char *recorded[2] = {"tests/fixtures/*.json", "tests/fixtures/contactbench/*.json"};
  for (int k = 0; k < 2; ++k)
    if (glob(recorded[k], 0, NULL, &gl) == 0) {
      for (size_t i = 0; i < gl.gl_pathc; ++i)
        add_fixture(cs, gl.gl_pathv[i], k ? 6 : 4);
      globfree(&gl);
    }
}

/* ---- solving and reporting ---- */

typedef struct {
  int ok;        /* NCP ε_abs ≤ 1e-6 */
  int ok_scaled; /* the scaled criterion ε̂ ≤ 1e-6 (default eps_scale) */
  int iterations;
  double time_us, eps_abs;
} outcome;

static outcome solve_one(const char *solver, const problem *q, mr_arena *work, double *lambda,
                         double *c) {
  mr_solver_settings s = mr_solver_settings_default();
  s.warm_start = 0;
  mr_solver_stats st;
  mr_error err = {0};
  outcome o = {0, 0, 0, 0.0, INFINITY};
  memset(lambda, 0, sizeof(double) * 3 * (size_t)q->nc);
  mr_arena_reset(work, 0);
  if (mr_solve(solver, &q->p, &s, NULL, work, lambda, c, &st, &err)) return o;
  o.iterations = st.iterations, o.time_us = st.time_us, o.eps_abs = st.eps_abs;
  o.ok = st.eps_abs <= 1e-6;
  o.ok_scaled = st.eps_scaled <= 1e-6;
  return o;
}

/* one table row: the outcomes of a solver over the problems selected by sel */
static void report_row(const char *solver, const outcome *o, const int *sel, int n, double *buf) {
  int m = 0, ok = 0, ok_scaled = 0, itmax = 0;
  double tmax = 0.0;
  for (int i = 0; i < n; ++i) {
    if (!sel[i]) continue;
    buf[m++] = o[i].iterations;
    ok += o[i].ok, ok_scaled += o[i].ok_scaled;
    itmax = o[i].iterations > itmax ? o[i].iterations : itmax;
    tmax = fmax(tmax, o[i].time_us);
  }
  double itmed = bench_median(buf, m);
  m = 0;
  for (int i = 0; i < n; ++i)
    if (sel[i]) buf[m++] = o[i].time_us;
  printf("| %s | %d/%d (%.1f %%) | %d/%d | %.0f | %d | %.1f | %.0f |\n", solver, ok, m,
         m ? 100.0 * ok / m : 0.0, ok_scaled, m, itmed, itmax, bench_median(buf, m), tmax);
}

static void report(const corpus *cs, const char **solvers, int ns, outcome **res, int family) {
  int *sel = malloc(sizeof(int) * (size_t)cs->n);
  double *buf = malloc(sizeof(double) * (size_t)cs->n);
  int m = 0;
  for (int i = 0; i < cs->n; ++i)
    m += sel[i] = family < 0 || cs->v[i].family == family;
  printf("\n### %s (%d problems)\n\n", family < 0 ? "whole corpus" : family_names[family], m);
  printf("| solver | NCP ε_abs ≤ 1e-6 | scaled ε̂ ≤ 1e-6 | median iterations | max iterations | "
         "median µs | max µs |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < ns; ++k)
    report_row(solvers[k], res[k], sel, cs->n, buf);
  free(sel), free(buf);
}

/* ‖g‖ and the norm of its component outside range(G) (eigenvalues above 1e-10 max|eig|) */
static double g_outside_range(const mr_contact_problem *p, double *gnorm) {
  int n = 3 * p->nc;
  double *A = malloc(sizeof(double) * (size_t)n * n), *V = malloc(sizeof(double) * (size_t)n * n);
  double *eig = malloc(sizeof(double) * (size_t)n);
  memcpy(A, p->G, sizeof(double) * (size_t)n * n);
  mr_sym_eigen(A, n, eig, V);
  double big = 0.0, out = 0.0, gg = 0.0;
  for (int i = 0; i < n; ++i)
    big = fmax(big, fabs(eig[i])), gg += p->g[i] * p->g[i];
  for (int i = 0; i < n; ++i) {
    if (fabs(eig[i]) > 1e-10 * big) continue;
    double pr = 0.0;
    for (int k = 0; k < n; ++k)
      pr += V[k * n + i] * p->g[k];
    out += pr * pr;
  }
  free(A), free(V), free(eig);
  *gnorm = sqrt(gg);
  return sqrt(out);
}

/* why ncp-hybrid leaves a problem above 1e-6, from its λ: the round-off of the criterion itself
 * (max over contacts of λ_N u Σ_j |G_ij λ_j|, u = 2⁻⁵³: the error of evaluating c_N in plain
 * double times the force it multiplies in ε_c) and the range of ε_abs over 200 perturbations of
 * λ by at most one unit in the last place per entry, with c evaluated in plain double and with
 * the compensated Dot2 the criteria use (when the range exceeds 1e-6, the target is below what
 * the evaluation resolves at these forces); otherwise the part of g outside range(G) (no
 * all-sticking solution: the exact one lifts or slides contacts) */
static void classify_failure(const problem *q, mr_arena *work, double *lambda, double *c) {
  int n = 3 * q->nc;
  outcome o = solve_one("ncp-hybrid", q, work, lambda, c);
  double floor = 0.0, emin[2] = {INFINITY, INFINITY}, emax[2] = {0.0, 0.0}, gnorm;
  for (int i = 2; i < n; i += 3) {
    double acc = 0.0;
    for (int j = 0; j < n; ++j)
      acc += fabs(q->G[(size_t)i * n + j] * lambda[j]);
    floor = fmax(floor, fabs(lambda[i]) * acc * 0x1p-53);
  }
  double *l2 = malloc(sizeof(double) * (size_t)n);
  uint64_t seed = 1;
  for (int trial = 0; trial < 200; ++trial) {
    for (int k = 0; k < n; ++k) {
      uint64_t r = rng_next(&seed) % 3;
      l2[k] = r == 0 ? lambda[k] : nextafter(lambda[k], r == 1 ? INFINITY : -INFINITY);
    }
    for (int a = 0; a < 2; ++a) {
      (a ? mr_problem_velocity_dot2 : mr_problem_velocity)(&q->p, l2, c);
      double e = mr_problem_criteria(&q->p, l2, c, 1, NULL, NULL, NULL);
      emin[a] = fmin(emin[a], e), emax[a] = fmax(emax[a], e);
    }
  }
  free(l2);
  double out = g_outside_range(&q->p, &gnorm), lmax = 0.0;
  for (int k = 0; k < n; ++k)
    lmax = fmax(lmax, fabs(lambda[k]));
  const char *why = emax[1] - emin[1] > 1e-6 ? "the criterion's round-off exceeds 1e-6"
                    : out > 1e-9 * gnorm     ? "g outside range(G): no all-sticking solution"
                                             : "not classified";
  printf("- %s (nc %d): ε_abs %.2e after %d iterations; max |λ| %.3g N, plain criterion "
         "round-off %.1e, ε_abs of 1-ulp perturbations of λ %.1e–%.1e (plain c), %.1e–%.1e "
         "(Dot2 c), |g outside range(G)| %.1e of %.1e: %s\n",
         q->name, q->nc, o.eps_abs, o.iterations, lmax, floor, emin[0], emax[0], emin[1], emax[1],
         out, gnorm, why);
}

/* ncp-hybrid's time against ncp-pgs's on the problems ncp-pgs solves; its failures listed */
static void report_targets(const corpus *cs, const char **solvers, int ns, outcome **res,
                           const char *dump, mr_arena *work, double *lambda, double *c) {
  int ip = -1, ih = -1;
  for (int k = 0; k < ns; ++k) {
    if (!strcmp(solvers[k], "ncp-pgs")) ip = k;
    if (!strcmp(solvers[k], "ncp-hybrid")) ih = k;
  }
  if (ip < 0 || ih < 0) return;
  double *th = malloc(sizeof(double) * (size_t)cs->n), *tp = malloc(sizeof(double) * cs->n);
  for (int f = -1; f < N_FAMILIES; ++f) {
    int m = 0;
    for (int i = 0; i < cs->n; ++i)
      if (res[ip][i].ok && (f < 0 || cs->v[i].family == f))
        th[m] = res[ih][i].time_us, tp[m] = res[ip][i].time_us, ++m;
    if (f >= 0 && m == 0) continue;
    double mh = bench_median(th, m), mp = bench_median(tp, m);
    printf("%sOn the %d problems%s%s ncp-pgs solves: median time ncp-hybrid %.1f µs, ncp-pgs "
           "%.1f µs (ratio %.2f).\n",
           f < 0 ? "\n" : "", m, f < 0 ? "" : " of ", f < 0 ? "" : family_names[f], mh, mp,
           mh / mp);
  }
  printf("\nProblems ncp-hybrid leaves above 1e-6 (solved again to classify them):\n\n");
  int bad = 0;
  for (int i = 0; i < cs->n; ++i)
    if (!res[ih][i].ok) {
      classify_failure(&cs->v[i], work, lambda, c);
      if (dump) {
        char path[512];
        mr_error err = {0};
        snprintf(path, sizeof path, "%s/fail%03d.json", dump, bad);
        if (mr_problem_file_save(path, &cs->v[i].p, NULL, &err)) fprintf(stderr, "%s\n", err.msg);
      }
      ++bad;
    }
  if (!bad) printf("- none\n");
  free(th), free(tp);
}

/* name is one of the comma-separated entries of list */
static int listed(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *at = list; (at = strstr(at, name)) != NULL; at += len)
    if ((at == list || at[-1] == ',') && (at[len] == ',' || at[len] == '\0')) return 1;
  return 0;
}

int main(int argc, char **argv) {
  long max_steps = argc > 1 ? atol(argv[1]) : 600;
  corpus cs = {calloc(MAX_PROBLEMS, sizeof(problem)), 0};
  build_corpus(&cs, max_steps);
  int maxnc = 1;
  for (int i = 0; i < cs.n; ++i)
    maxnc = cs.v[i].nc > maxnc ? cs.v[i].nc : maxnc;
  /* the largest scratch any solver needs (lcp-lemke's tableau exceeds mr_solver_work_size) */
  size_t wsz = mr_solver_work_size(maxnc, 0);
  for (int k = 0; k < mr_solver_count(); ++k) {
    size_t one = mr_solver_work_size_for(mr_solver_at(k), maxnc, 0, 0, 0);
    wsz = one > wsz ? one : wsz;
  }
  mr_arena work;
  if (mr_arena_init(&work, wsz)) return 1;
  double *lambda = malloc(sizeof(double) * 3 * (size_t)maxnc);
  double *c = malloc(sizeof(double) * 3 * (size_t)maxnc);
  const char *solvers[MAX_SOLVERS];
  outcome *res[MAX_SOLVERS];
  int ns = 0;
  const char *only = argc > 2 && argv[2][0] ? argv[2] : NULL; /* "": every solver */
  for (int k = 0; k < mr_solver_count() && ns < MAX_SOLVERS; ++k) {
    const char *name = mr_solver_at(k)->name;
    if (!strcmp(name, "soft") || (only && !listed(only, name))) continue;
    solvers[ns] = name;
    res[ns] = calloc((size_t)cs.n, sizeof(outcome));
    for (int i = 0; i < cs.n; ++i)
      res[ns][i] = solve_one(name, &cs.v[i], &work, lambda, c);
    ++ns;
  }
  printf("## Contact problem corpus: %d problems (at most %ld steps per scene), cold start, "
         "ε = 1e-6, 10⁴ iterations\n",
         cs.n, max_steps);
  report(&cs, solvers, ns, res, -1);
  for (int f = 0; f < N_FAMILIES; ++f)
    report(&cs, solvers, ns, res, f);
  report_targets(&cs, solvers, ns, res, argc > 3 ? argv[3] : NULL, &work, lambda, c);
  for (int k = 0; k < ns; ++k)
    free(res[k]);
  free(lambda), free(c);
  mr_arena_destroy(&work);
  corpus_free(&cs);
  return 0;
}
