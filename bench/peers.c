/* Time step against a peer: moreau and MuJoCo (the Debian libmujoco-dev 2.2.2) stepping the same
 * three scenes in one process: Solo-12 standing and pushed (scenes/b8_solo_push.yaml), TALOS
 * standing and pushed (scenes/b8_talos_push.yaml), the Allegro hand holding a ball
 * (scenes/b8_allegro_hold.yaml). The MuJoCo models (the XML files of bench/mjcf) have the same
 * bodies, inertias, joints and primitive geometries; robots collide with the ground and the ball,
 * not with themselves (as moreau's self_collision false); Δt = 1 ms, Newton solver, elliptic cones,
 * condim 3 (no torsional or rolling friction), μ = 0.9; the posture is held by position actuators
 * with the scene's kp, the scene's kd being added to the joint damping (implicit in MuJoCo's Euler
 * integrator, as moreau integrates k_d and damping implicitly). The initial state, the PD targets
 * and the pushes are taken from the moreau scene: a push, a world force at the body origin, is
 * applied at the centre of mass with the moment of the offset. Per scene and moreau solver (warm
 * started), WARMUP steps of each simulator are run unmeasured, then batches of BATCH steps
 * alternate between moreau and MuJoCo, every step timed: median and 10th percentile per step of
 * each, the ratio of the medians, the mean number of contacts and a sanity figure at the end
 * (base height, or the ball's height). Output: Markdown table.
 * Run: make bench-peers (or build/bench/peers [batches [solver...]]). */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define WARMUP 100
#define BATCH 20
#define MAX_BATCHES 100

typedef struct {
  const char *scene, *mjcf, *label, *probe; /* probe: the body whose height is reported */
} peer_case;

static const peer_case cases[] = {
    {"scenes/b8_solo_push.yaml", "bench/mjcf/solo_push.xml", "Solo-12 push", "base_link"},
    {"scenes/b8_talos_push.yaml", "bench/mjcf/talos_push.xml", "TALOS push", "base_link"},
    {"scenes/b8_allegro_hold.yaml", "bench/mjcf/allegro_hold.xml", "Allegro hold", "ball"},
};

static double quantile(double *x, int n, double q) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  return x[(int)(q * (n - 1) + 0.5)];
}

/* the MuJoCo object named as moreau names it ("ROBOT/NAME" or "BODY/NAME"): the full name, else
 * the part after the first '/' */
static int mj_id(const mjModel *m, int type, const char *name) {
  int id = mj_name2id(m, type, name);
  const char *slash = strchr(name, '/');
  return id >= 0 || !slash ? id : mj_name2id(m, type, slash + 1);
}

/* q of moreau's joint j (nq 1 or free) into MuJoCo's qpos; 0, or -1 when MuJoCo lacks it */
static int copy_joint(const mjModel *m, mjData *d, const mr_joint *j, const double *q) {
  if (j->nq == 0) return 0;
  int id = mj_id(m, mjOBJ_JOINT, j->name);
  if (id < 0) return -1;
  double *qp = d->qpos + m->jnt_qposadr[id];
  const double *qm = q + j->idx_q;
  if (j->nq == 1) {
    qp[0] = qm[0];
    return 0;
  }
  /* free-flyer: moreau (x y z qx qy qz qw), MuJoCo (x y z qw qx qy qz) */
  double v[7] = {qm[0], qm[1], qm[2], qm[6], qm[3], qm[4], qm[5]};
  memcpy(qp, v, sizeof v);
  return 0;
}

/* the scene's initial state and PD targets in MuJoCo; 0, or -1 naming what does not map */
static int mj_setup(const mr_scene *sc, const mjModel *m, mjData *d) {
  const mr_model *mm = sc->model;
  mj_resetData(m, d);
  for (int b = 1; b < mm->nbodies; ++b)
    if (copy_joint(m, d, &mm->bodies[b].joint, sc->q0)) {
      fprintf(stderr, "MuJoCo model lacks joint '%s'\n", mm->bodies[b].joint.name);
      return -1;
    }
  for (int r = 0; r < sc->nrobots; ++r) {
    const mr_scene_robot *rb = &sc->robots[r];
    for (int b = rb->first_body; b < rb->first_body + rb->nbodies; ++b) {
      const mr_joint *j = &mm->bodies[b].joint;
      if (j->nq != 1) continue;
      int jid = mj_id(m, mjOBJ_JOINT, j->name), a = 0;
      while (a < m->nu && m->actuator_trnid[2 * a] != jid)
        ++a;
      if (a == m->nu) {
        fprintf(stderr, "MuJoCo model has no actuator on '%s'\n", j->name);
        return -1;
      }
      d->ctrl[a] = rb->q_target[j->idx_q - rb->idx_q];
    }
  }
  mj_forward(m, d);
  return 0;
}

/* the scene's forces at MuJoCo's time, as xfrc_applied (force and torque at the centre of mass) */
static void mj_push(const mr_scene *sc, const mjModel *m, mjData *d, const int *force_body) {
  mju_zero(d->xfrc_applied, 6 * m->nbody);
  for (int k = 0; k < sc->nforces; ++k) {
    int b = force_body[k];
    mr_vec3 f, tq;
    mr_scene_force_at(sc, k, d->time, &f, &tq);
    double *x = d->xfrc_applied + 6 * b, r[3], rxf[3];
    for (int i = 0; i < 3; ++i)
      r[i] = d->xpos[3 * b + i] - d->xipos[3 * b + i];
    mju_cross(rxf, r, f.v);
    for (int i = 0; i < 3; ++i) {
      x[i] += f.v[i];
      x[3 + i] += tq.v[i] + rxf[i];
    }
  }
}

typedef struct {
  double *t_mr, *t_mj; /* per step times */
  int n;
  double nc_mr, nc_mj; /* mean contacts */
  double z_mr, z_mj;   /* probe height at the end */
  long not_converged;
} peer_result;

/* warm-up, then batches alternating between the two simulators; 0 or -1 */
static int run_case(const peer_case *pc, const mr_scene *sc, const mjModel *m, const char *solver,
                    int batches, peer_result *r) {
  mr_error err;
  mr_sim *s = mr_sim_from_scene(sc, solver, &err);
  mjData *d = mj_makeData(m);
  int force_body[16], probe = mj_id(m, mjOBJ_BODY, pc->probe), status = -1;
  int mr_probe = -1;
  for (int b = 0; b < sc->model->nbodies; ++b)
    if (mj_id(m, mjOBJ_BODY, sc->model->bodies[b].name) == probe) mr_probe = b;
  for (int k = 0; k < sc->nforces && k < 16; ++k)
    force_body[k] = mj_id(m, mjOBJ_BODY, sc->model->bodies[sc->forces[k].body].name);
  if (!s || !d || sc->nforces > 16 || probe < 0 || mr_probe < 0 || mj_setup(sc, m, d)) goto done;
  for (int k = 0; k < sc->nforces; ++k)
    if (force_body[k] < 0) goto done;
  memset(r, 0, sizeof *r);
  r->t_mr = malloc((size_t)batches * BATCH * sizeof(double));
  r->t_mj = malloc((size_t)batches * BATCH * sizeof(double));
  if (!r->t_mr || !r->t_mj) goto done;
  for (int k = 0; k < WARMUP; ++k) {
    if (mr_sim_step(s, &err)) goto diverged;
    mj_push(sc, m, d, force_body);
    mj_step(m, d);
  }
  for (int b = 0; b < batches; ++b) {
    for (int k = 0; k < BATCH; ++k) {
      double t0 = bench_now_us();
      if (mr_sim_step(s, &err)) goto diverged;
      r->t_mr[b * BATCH + k] = bench_now_us() - t0;
      r->nc_mr += mr_sim_last(s)->ncontacts;
      r->not_converged += !mr_sim_last(s)->converged;
    }
    for (int k = 0; k < BATCH; ++k) {
      mj_push(sc, m, d, force_body);
      double t0 = bench_now_us();
      mj_step(m, d);
      r->t_mj[b * BATCH + k] = bench_now_us() - t0;
      r->nc_mj += d->ncon;
    }
  }
  r->n = batches * BATCH;
  r->nc_mr /= r->n;
  r->nc_mj /= r->n;
  status = 0;
  goto done;
diverged:
  fprintf(stderr, "%s, %s: %s\n", pc->label, solver, err.msg);
done:
  if (status == 0) {
    const double *q = mr_sim_q(s);
    const mr_joint *j = &sc->model->bodies[mr_probe].joint;
    r->z_mr = q[j->idx_q + 2];
    r->z_mj = d->xpos[3 * probe + 2];
  }
  mj_deleteData(d);
  mr_sim_free(s);
  return status;
}

int main(int argc, char **argv) {
  int batches = argc > 1 ? atoi(argv[1]) : 20;
  if (batches < 1 || batches > MAX_BATCHES) {
    fprintf(stderr, "usage: peers [batches (1..%d, default 20)] [solver...]\n", MAX_BATCHES);
    return 2;
  }
  const char *defaults[] = {"ncp-pgs", "ccp-newton"};
  const char **solvers = argc > 2 ? (const char **)argv + 2 : defaults;
  int nsolvers = argc > 2 ? argc - 2 : 2;
  printf("moreau and MuJoCo %s, %d warm-up steps, then %d batches of %d steps alternating; "
         "median (10th percentile) wall time per step in µs; moreau warm started\n\n",
         mj_versionString(), WARMUP, batches, BATCH);
  printf("| scene | moreau solver | contacts moreau | contacts MuJoCo | moreau µs | MuJoCo µs | "
         "moreau / MuJoCo | not converged | height moreau | height MuJoCo |\n");
  printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
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
    for (int k = 0; k < nsolvers; ++k) {
      peer_result r = {0};
      if (run_case(&cases[i], &sc, m, solvers[k], batches, &r)) {
        printf("| %s | %s | failed |||||||||\n", cases[i].label, solvers[k]);
        failures++;
      } else {
        double mr_med = quantile(r.t_mr, r.n, 0.5), mr_p10 = quantile(r.t_mr, r.n, 0.1);
        double mj_med = quantile(r.t_mj, r.n, 0.5), mj_p10 = quantile(r.t_mj, r.n, 0.1);
        printf("| %s | %s | %.1f | %.1f | %.1f (%.1f) | %.1f (%.1f) | %.2f | %ld/%d | %.4f | %.4f "
               "|\n",
               cases[i].label, solvers[k], r.nc_mr, r.nc_mj, mr_med, mr_p10, mj_med, mj_p10,
               mr_med / mj_med, r.not_converged, r.n, r.z_mr, r.z_mj);
      }
      free(r.t_mr);
      free(r.t_mj);
      fflush(stdout);
    }
    mr_scene_free(&sc);
    mj_deleteModel(m);
  }
  return failures ? 1 : 0;
}
