/* Actuators and joint springs of a world as per-dof controls (world.h, actuator.h): for the
 * controls u, each dof an actuator or a spring acts on gets its commanded torque, PD gains and
 * PD target, MuJoCo's actuator force F = gain u + bias[0] + bias[1] L + bias[2] L' split into
 * the constant part (a torque, or a target where F has a length term) and the implicit gains
 * −bias[1] arm², −bias[2] arm². Names of actuators and keyframes. */
#include <math.h>
#include <string.h>

#include "moreau/world.h"

int mr_world_actuator_count(const mr_world *w) {
  return w ? w->nactuators : 0;
}

const char *mr_world_actuator_name(const mr_world *w, int a) {
  return w && a >= 0 && a < w->nactuators ? w->actuators[a].name : NULL;
}

int mr_world_actuator_index(const mr_world *w, const char *name) {
  for (int a = 0; w && name && a < w->nactuators; ++a)
    if (!strcmp(w->actuators[a].name, name)) return a;
  return -1;
}

int mr_world_keyframe_index(const mr_world *w, const char *name) {
  for (int k = 0; w && name && k < w->nkeyframes; ++k)
    if (!strcmp(w->keyframes[k].name, name)) return k;
  return -1;
}

/* the control, clamped to its range when limited */
static double clamped(const mr_world_actuator *a, const double *ctrl, int i) {
  double u = ctrl ? ctrl[i] : 0.0;
  if (a->ctrllimited) u = fmin(fmax(u, a->ctrlrange[0]), a->ctrlrange[1]);
  return u;
}

/* clear the dofs an actuator or spring acts on; targets only where a length term acts */
static void clear(const mr_world *w, double *tau, double *qt, double *kp, double *kd) {
  for (int i = 0; i < w->nactuators; ++i) {
    const mr_world_actuator *a = &w->actuators[i];
    for (int k = 0; k < a->ndofs; ++k) {
      int d = a->dof[k], c = mr_world_dof_coordinate(w, d);
      tau[d] = kp[d] = kd[d] = 0.0;
      if (a->bias[1] != 0.0 && c >= 0) qt[c] = 0.0;
    }
  }
  for (int r = 0; r < w->nrobots; ++r)
    for (int k = 0; w->robots[r].spring_k && k < w->robots[r].nv; ++k) {
      int d = w->robots[r].idx_v + k, c = mr_world_dof_coordinate(w, d);
      if (w->robots[r].spring_k[k] == 0.0 || c < 0) continue;
      tau[d] = kp[d] = kd[d] = qt[c] = 0.0;
    }
}

/* the spring stiffness of dof d (0 without one) */
static double spring_of(const mr_world *w, int d, double *ref) {
  for (int r = 0; r < w->nrobots; ++r) {
    const mr_world_robot *rb = &w->robots[r];
    if (d < rb->idx_v || d >= rb->idx_v + rb->nv || !rb->spring_k) continue;
    *ref = rb->spring_ref[d - rb->idx_v];
    return rb->spring_k[d - rb->idx_v];
  }
  return 0.0;
}

void mr_world_actuation(const mr_world *w, const double *ctrl, double *tau, double *qt, double *kp,
                        double *kd) {
  clear(w, tau, qt, kp, kd);
  /* sums: torques, gains, and the targets' numerators in qt */
  for (int i = 0; i < w->nactuators; ++i) {
    const mr_world_actuator *a = &w->actuators[i];
    double f0 = a->gain * clamped(a, ctrl, i) + a->bias[0];
    for (int k = 0; k < a->ndofs; ++k) {
      int d = a->dof[k], c = mr_world_dof_coordinate(w, d);
      double arm = a->arm[k];
      kp[d] -= a->bias[1] * arm * arm;
      kd[d] -= a->bias[2] * arm * arm;
      if (a->bias[1] != 0.0 && c >= 0)
        qt[c] += arm * f0;
      else
        tau[d] += arm * f0;
    }
  }
  for (int r = 0; r < w->nrobots; ++r)
    for (int k = 0; w->robots[r].spring_k && k < w->robots[r].nv; ++k) {
      int d = w->robots[r].idx_v + k, c = mr_world_dof_coordinate(w, d);
      double sk = w->robots[r].spring_k[k];
      if (sk == 0.0 || c < 0) continue;
      kp[d] += sk;
      qt[c] += sk * w->robots[r].spring_ref[k];
    }
  /* targets: numerator / k_p where a length term or a spring acts */
  for (int d = 0; d < w->model->nv; ++d) {
    int c = mr_world_dof_coordinate(w, d);
    if (c >= 0 && kp[d] > 0.0) {
      double ref;
      int touched = spring_of(w, d, &ref) != 0.0;
      for (int i = 0; i < w->nactuators && !touched; ++i)
        for (int k = 0; k < w->actuators[i].ndofs; ++k)
          touched |= w->actuators[i].dof[k] == d && w->actuators[i].bias[1] != 0.0;
      if (touched) qt[c] /= kp[d];
    }
  }
}
