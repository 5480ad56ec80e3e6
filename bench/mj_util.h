/* MuJoCo helpers shared by bench/peers.c and bench/scale.c: a moreau scene's initial state, PD
 * targets and pushes carried over to a MuJoCo model of the same bodies, and MuJoCo's stage
 * timers read in µs. */
#ifndef MOREAU_BENCH_MJ_UTIL_H
#define MOREAU_BENCH_MJ_UTIL_H

#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "moreau/scene.h"

/* MuJoCo's timer clock, in µs (mjcb_time): its stage timers, d->timer[...].duration, then
 * accumulate µs */
static inline mjtNum mj_util_clock_us(void) {
  return bench_now_us();
}

/* the MuJoCo object named as moreau names it ("ROBOT/NAME" or "BODY/NAME"): the full name, else
 * the part after the first '/' */
static inline int mj_util_id(const mjModel *m, int type, const char *name) {
  int id = mj_name2id(m, type, name);
  const char *slash = strchr(name, '/');
  return id >= 0 || !slash ? id : mj_name2id(m, type, slash + 1);
}

/* q of moreau's joint j (nq 1 or free) into MuJoCo's qpos; 0, or -1 when MuJoCo lacks it */
static inline int mj_util_copy_joint(const mjModel *m, mjData *d, const mr_joint *j,
                                     const double *q) {
  if (j->nq == 0) return 0;
  int id = mj_util_id(m, mjOBJ_JOINT, j->name);
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

/* the scene's initial state and PD targets in MuJoCo (every robot joint carries a position
 * actuator); 0, or -1 naming on stderr what does not map */
static inline int mj_util_setup(const mr_scene *sc, const mjModel *m, mjData *d) {
  const mr_model *mm = sc->model;
  mj_resetData(m, d);
  for (int b = 1; b < mm->nbodies; ++b)
    if (mj_util_copy_joint(m, d, &mm->bodies[b].joint, sc->q0)) {
      fprintf(stderr, "MuJoCo model lacks joint '%s'\n", mm->bodies[b].joint.name);
      return -1;
    }
  for (int r = 0; r < sc->nrobots; ++r) {
    const mr_scene_robot *rb = &sc->robots[r];
    if (!rb->pd) continue;
    for (int b = rb->first_body; b < rb->first_body + rb->nbodies; ++b) {
      const mr_joint *j = &mm->bodies[b].joint;
      if (j->nq != 1) continue;
      int jid = mj_util_id(m, mjOBJ_JOINT, j->name), a = 0;
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

/* the scene's forces at MuJoCo's time, as xfrc_applied (force and torque at the centre of
 * mass); force_body[k] is MuJoCo's body of force k */
static inline void mj_util_push(const mr_scene *sc, const mjModel *m, mjData *d,
                                const int *force_body) {
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

#endif
