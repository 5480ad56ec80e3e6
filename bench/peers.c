/* Time step against a peer: moreau and MuJoCo (the Debian libmujoco-dev 2.2.2) stepping the same
 * three scenes in one process: Solo-12 standing and pushed (scenes/b8_solo_push.yaml), TALOS
 * standing and pushed (scenes/b8_talos_push.yaml), the Allegro hand holding a ball
 * (scenes/b8_allegro_hold.yaml).
 *
 * The models match. The MuJoCo models (bench/mjcf) have the same bodies, inertias, joints and
 * primitive geometries, the scene's PD gains (position actuators with kp, the scene's kd added to
 * the URDF joint damping: implicit on both sides), the URDF joint limits (moreau's scenes enforce
 * them; TALOS's grippers rest on theirs in both) and effort limits, written by
 * tools/bench_mjcf.py; robots collide with the ground and the ball, not with themselves;
 * Δt = 1 ms, elliptic cones, condim 3 (no torsional or rolling friction), μ = 0.9; the contact
 * margin of the MuJoCo model (its geometries' largest, 0) replaces the scene's (1 mm), so that
 * both find contacts by the same rule (with the scenes' margin moreau also finds the Allegro
 * ball's third contact, 0.6 mm apart, that MuJoCo does not: 3 contacts against 2). The initial
 * state, the PD targets and the pushes are taken from the moreau scene (a push, a world force at
 * the body origin, is applied at the centre of mass with the moment of the offset).
 *
 * The benchmark checks that the models match before it reports: each scene without its push,
 * stepped STEPS steps (1 s) by both, with MuJoCo's contacts as near rigid as it allows (solref
 * time constant 2 Δt, and noslip iterations so that its regularised friction does not creep),
 * must end with every body's origin within 2 δ + 1 mm of MuJoCo's (δ MuJoCo's deepest
 * penetration then: a chain standing on contacts that sink by δ moves by about δ, twice that for
 * the tilt of contacts sinking unequally) and every 1-dof joint within 1 mrad. Matched, the
 * three robots measured within 0.08 / 0.8 / 0.03 mm and 0.002 / 0.5 / 0.3 mrad (TALOS sways in
 * its half-sitting posture); with a gain off by 2× to 6× (Solo-12 kp 5, TALOS 500, Allegro 5)
 * 10 / 454 / 0.25 mm and 79 / 201 / 2.8 mrad. A row whose models do not match is reported as
 * such, without timings. With MuJoCo's default contacts (the timed runs) the states part
 * further: its soft contacts sink by δ and its friction creeps at a speed proportional to the
 * tangential force (Solo-12 under a 10 N push about 3 cm/s), and TALOS's 80 N push tips it; the
 * row gives the pushed run's largest body distance too.
 *
 * Timing. Neither simulator times its stages (each one's default: moreau's mr_sim_time_stages
 * off, MuJoCo without mjcb_time). Per scene and moreau solver (warm started), REPEATS runs from
 * the initial state; each
 * runs STEPS steps of moreau, MuJoCo Newton and MuJoCo CG in alternating batches of BATCH steps,
 * every step from WARMUP on timed. Reported per simulator: median, mean, 99th percentile and max
 * over every timed step of every run, and the mean over steps of the minimum over the runs of
 * each step (preemption by other programs removed: a step preempted in one run is not in all);
 * the ratios moreau / MuJoCo, against the faster of Newton and CG in that last figure (the row
 * names it). Output: Markdown tables.
 * Run: make bench-peers (or build/bench/peers [repeats [solver...]], default 3 repeats, the
 * scene's solver and ncp-hybrid). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "mj_util.h"
#include "moreau/dynamics.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define WARMUP 100
#define BATCH 20
#define STEPS 1000
#define MAX_REPEATS 15

enum { MOREAU, NEWTON, CG, NSIMS };

typedef struct {
  const char *scene, *mjcf, *label;
} peer_case;

static const peer_case cases[] = {
    {"scenes/b8_solo_push.yaml", "bench/mjcf/solo_push.xml", "Solo-12 push"},
    {"scenes/b8_talos_push.yaml", "bench/mjcf/talos_push.xml", "TALOS push"},
    {"scenes/b8_allegro_hold.yaml", "bench/mjcf/allegro_hold.xml", "Allegro hold"},
};

static double quantile(const double *x, int n, double q) {
  double *y = malloc((size_t)n * sizeof *y);
  memcpy(y, x, (size_t)n * sizeof *y);
  qsort(y, (size_t)n, sizeof *y, bench_cmp_double);
  double v = y[(int)(q * (n - 1) + 0.5)];
  free(y);
  return v;
}

/* one simulator's step times over the runs: t[run * n + k], k the timed step */
typedef struct {
  double *t;
  int n;
  double contacts;
  long not_converged;
} series;

/* the state check of a run: the largest distance between a moreau body's origin and MuJoCo's
 * (and that body), the largest difference of a 1-dof joint's position, MuJoCo's deepest
 * penetration */
typedef struct {
  double dist, dq, depth;
  const char *body;
} match;

/* the model check: MuJoCo's contacts as stiff as it allows (solref time constant 2 Δt) and its
 * friction kept from creeping (noslip iterations); bodies within twice MuJoCo's penetration and
 * CHECK_DIST, 1-dof joints within CHECK_DQ */
#define CHECK_TIMECONST 0.002
#define CHECK_NOSLIP 10
#define CHECK_DIST 1e-3
#define CHECK_DQ 1e-3

static double tolerance(const match *m) {
  return 2 * m->depth + CHECK_DIST;
}

/* the live simulators of a run */
typedef struct {
  const mr_scene *sc;
  const mjModel *m;
  mr_sim *s;
  mjData *d[2]; /* Newton, CG */
  int force_body[16];
} live;

static int open_live(const mr_scene *sc, mjModel *m, const char *solver, live *L) {
  mr_error err = {0};
  memset(L, 0, sizeof *L);
  L->sc = sc, L->m = m;
  if (!(L->s = mr_sim_from_scene(sc, solver, &err))) {
    fprintf(stderr, "moreau: %s\n", err.msg);
    return -1;
  }
  if (sc->nforces > 16) return -1;
  for (int k = 0; k < sc->nforces; ++k)
    if ((L->force_body[k] = mj_util_id(m, mjOBJ_BODY, sc->model->bodies[sc->forces[k].body].name)) <
        0)
      return -1;
  for (int k = 0; k < 2; ++k) {
    m->opt.solver = k ? mjSOL_CG : mjSOL_NEWTON;
    if (!(L->d[k] = mj_makeData(m)) || mj_util_setup(sc, m, L->d[k])) return -1;
  }
  return 0;
}

static void close_live(live *L) {
  for (int k = 0; k < 2; ++k)
    if (L->d[k]) mj_deleteData(L->d[k]);
  mr_sim_free(L->s);
}

/* steps [a, b) of one simulator, timed from WARMUP on into S */
static int run_steps(live *L, int sim, series *S, int run, int a, int b) {
  mr_error err = {0};
  mjModel *m = (mjModel *)L->m;
  for (int k = a; k < b; ++k) {
    double t0, t1;
    if (sim == MOREAU) {
      t0 = bench_now_us();
      if (mr_sim_step(L->s, &err)) return fprintf(stderr, "moreau: %s\n", err.msg), -1;
      t1 = bench_now_us();
      if (k >= WARMUP)
        S->contacts += mr_sim_last(L->s)->ncontacts,
            S->not_converged += !mr_sim_last(L->s)->converged;
    } else {
      mjData *d = L->d[sim - 1];
      m->opt.solver = sim == CG ? mjSOL_CG : mjSOL_NEWTON;
      mj_util_push(L->sc, m, d, L->force_body);
      t0 = bench_now_us();
      mj_step(m, d);
      t1 = bench_now_us();
      if (k >= WARMUP) S->contacts += d->ncon;
    }
    if (k >= WARMUP) S->t[run * S->n + k - WARMUP] = t1 - t0;
  }
  return 0;
}

/* every moreau body's origin against MuJoCo's body of the same name after the run */
static match compare(const live *L, int k) {
  const mr_model *mm = L->sc->model;
  const mjData *d = L->d[k];
  mr_data *md = mr_data_create(mm);
  match r = {0.0, 0.0, 0.0, "-"};
  mr_forward_kinematics(mm, md, mr_sim_q(L->s), NULL, NULL);
  for (int b = 1; b < mm->nbodies; ++b) {
    int id = mj_util_id(L->m, mjOBJ_BODY, mm->bodies[b].name);
    if (id < 0) continue;
    double e = 0.0;
    for (int k = 0; k < 3; ++k)
      e += pow(md->oMi[b].p.v[k] - d->xpos[3 * id + k], 2);
    if (sqrt(e) > r.dist) r.dist = sqrt(e), r.body = mm->bodies[b].name;
  }
  for (int c = 0; c < d->ncon; ++c)
    r.depth = fmax(r.depth, -d->contact[c].dist);
  /* the 1-dof joints' angles */
  for (int b = 1; b < mm->nbodies; ++b) {
    const mr_joint *j = &mm->bodies[b].joint;
    int id = mj_util_id(L->m, mjOBJ_JOINT, j->name);
    if (j->nq != 1 || id < 0) continue;
    r.dq = fmax(r.dq, fabs(mr_sim_q(L->s)[j->idx_q] - d->qpos[L->m->jnt_qposadr[id]]));
  }
  mr_data_free(md);
  return r;
}

typedef struct {
  double median, mean, p99, max, min_mean, contacts;
  long not_converged;
} figures;

static figures summarise(const series *S, int runs) {
  figures f = {0};
  int all = S->n * runs;
  f.median = quantile(S->t, all, 0.5), f.p99 = quantile(S->t, all, 0.99);
  f.max = quantile(S->t, all, 1.0);
  for (int k = 0; k < all; ++k)
    f.mean += S->t[k] / all;
  for (int k = 0; k < S->n; ++k) {
    double m = INFINITY;
    for (int r = 0; r < runs; ++r)
      m = fmin(m, S->t[r * S->n + k]);
    f.min_mean += m / S->n;
  }
  f.contacts = S->contacts / all, f.not_converged = S->not_converged;
  return f;
}

/* the runs of one scene and solver; the state after the first run, against MuJoCo Newton and
 * CG, in mt */
static int run_case(const mr_scene *sc, mjModel *m, const char *solver, int runs, series *S,
                    match *mt) {
  for (int r = 0; r < runs; ++r) {
    live L;
    int status = open_live(sc, m, solver, &L);
    for (int b = 0; status == 0 && b < STEPS; b += BATCH)
      for (int sim = 0; sim < NSIMS && status == 0; ++sim)
        status = run_steps(&L, sim, &S[sim], r, b, b + BATCH);
    if (status == 0 && r == 0)
      for (int k = 0; k < 2; ++k)
        mt[k] = compare(&L, k);
    close_live(&L);
    if (status) return -1;
  }
  return 0;
}

/* the contact margin of a MuJoCo model: its geometries' largest */
static double mj_margin(const mjModel *m) {
  double r = 0.0;
  for (int g = 0; g < m->ngeom; ++g)
    r = fmax(r, m->geom_margin[g]);
  return r;
}

/* the model check: the scene without its pushes (standing), STEPS steps of each, the states
 * compared in mt (Newton, CG) */
static int check_models(const mr_scene *scene, mjModel *m, const char *solver, match *mt) {
  mr_scene sc = *scene;
  sc.nforces = 0;
  series S[NSIMS];
  for (int j = 0; j < NSIMS; ++j)
    S[j] = (series){calloc(STEPS - WARMUP, sizeof(double)), STEPS - WARMUP, 0, 0};
  double *keep = malloc(2 * (size_t)m->ngeom * sizeof(double));
  memcpy(keep, m->geom_solref, 2 * (size_t)m->ngeom * sizeof(double));
  for (int g = 0; g < m->ngeom; ++g)
    m->geom_solref[2 * g] = CHECK_TIMECONST;
  m->opt.noslip_iterations = CHECK_NOSLIP;
  int status = run_case(&sc, m, solver, 1, S, mt);
  m->opt.noslip_iterations = 0;
  memcpy(m->geom_solref, keep, 2 * (size_t)m->ngeom * sizeof(double));
  free(keep);
  for (int j = 0; j < NSIMS; ++j)
    free(S[j].t);
  return status;
}

static void print_row(const peer_case *pc, const char *solver, const figures *f, int ref,
                      const match *ck, const match *mt, int runs) {
  const figures *mr = &f[MOREAU], *mj = &f[ref];
  printf(
      "| %s | %s | %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f "
      "| %.1f / %.1f | %.2f / %.2f / %.2f / %.2f / **%.2f** | %ld/%d | %.2g m, %.2g rad | %.2g m "
      "|\n",
      pc->label, solver, ref == CG ? "CG" : "Newton", mr->contacts, mj->contacts, mr->median,
      mj->median, mr->mean, mj->mean, mr->p99, mj->p99, mr->max, mj->max, mr->min_mean,
      mj->min_mean, mr->median / mj->median, mr->mean / mj->mean, mr->p99 / mj->p99,
      mr->max / mj->max, mr->min_mean / mj->min_mean, mr->not_converged, runs * (STEPS - WARMUP),
      ck->dist, ck->dq, mt->dist);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  if (runs < 1 || runs > MAX_REPEATS) {
    fprintf(stderr, "usage: peers [repeats (1..%d, default 3)] [solver...]\n", MAX_REPEATS);
    return 2;
  }
  const char *defaults[] = {NULL, "ncp-hybrid"};
  const char **solvers = argc > 2 ? (const char **)argv + 2 : defaults;
  int nsolvers = argc > 2 ? argc - 2 : 2;
  double load[3] = {0};
  getloadavg(load, 3);
  printf("moreau and MuJoCo %s (Newton and CG), %d runs of %d steps (%d timed from step %d), "
         "batches of %d steps alternating; µs per step; moreau warm started; load average "
         "%.1f\n\n",
         mj_versionString(), runs, STEPS, STEPS - WARMUP, WARMUP, BATCH, load[0]);
  printf("| scene | moreau solver | MuJoCo ref | contacts moreau / MuJoCo | median | mean | p99 "
         "| max | min over runs, mean | ratio median / mean / p99 / max / min-mean | not "
         "converged | model check, standing 1 s: largest body distance, joint difference | pushed "
         "1 s: "
         "largest body distance |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    mr_scene sc;
    mr_error err;
    char msg[1000];
    mjModel *m = mj_loadXML(cases[i].mjcf, NULL, msg, sizeof msg);
    if (!m || mr_scene_load(cases[i].scene, &sc, &err)) {
      fprintf(stderr, "%s\n", m ? err.msg : msg);
      if (m) mr_scene_free(&sc);
      mj_deleteModel(m);
      return 1;
    }
    sc.settings.warm_start = 1;
    sc.contact.margin = mj_margin(m);
    for (int k = 0; k < nsolvers; ++k) {
      const char *solver = solvers[k] ? solvers[k] : sc.solver;
      series S[NSIMS];
      match mt[2] = {{0}}, ck[2] = {{0}};
      for (int j = 0; j < NSIMS; ++j)
        S[j] =
            (series){calloc((size_t)runs * (STEPS - WARMUP), sizeof(double)), STEPS - WARMUP, 0, 0};
      if (check_models(&sc, m, solver, ck) || run_case(&sc, m, solver, runs, S, mt)) {
        printf("| %s | %s | failed |||||||||\n", cases[i].label, solver);
        failures++;
      } else {
        figures f[NSIMS];
        for (int j = 0; j < NSIMS; ++j)
          f[j] = summarise(&S[j], runs);
        int ref = f[CG].min_mean < f[NEWTON].min_mean ? CG : NEWTON;
        const match *c = &ck[ref - 1];
        if (c->dist > tolerance(c) || c->dq > CHECK_DQ) {
          printf("| %s | %s | %s | models do not match: standing 1 s, body '%s' %.3g m from "
                 "MuJoCo's (tolerance %.3g m), joints %.3g rad apart (tolerance %g); not "
                 "reported |||||||||\n",
                 cases[i].label, solver, ref == CG ? "CG" : "Newton", c->body, c->dist,
                 tolerance(c), c->dq, CHECK_DQ);
          failures++;
        } else {
          print_row(&cases[i], solver, f, ref, c, &mt[ref - 1], runs);
        }
      }
      for (int j = 0; j < NSIMS; ++j)
        free(S[j].t);
      fflush(stdout);
    }
    mr_scene_free(&sc);
    mj_deleteModel(m);
  }
  getloadavg(load, 3);
  printf("\nload average after: %.1f\n", load[0]);
  return failures ? 1 : 0;
}
