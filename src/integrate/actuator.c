/* Driving a simulator by its world's actuators (actuator.h): the controls become commanded
 * torques, PD targets and gains through the control API (control.h), and a keyframe resets its
 * robot's state, the time and the controls (the other robots' actuators get zero controls).
 * Nothing here runs inside a step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moreau/actuator.h"
#include "moreau/control.h"

mr_status mr_sim_set_ctrl(mr_sim *s, const double *ctrl, mr_error *err) {
  const mr_world *w = mr_sim_world(s);
  for (int i = 0; ctrl && i < w->nactuators; ++i)
    if (!isfinite(ctrl[i]))
      return mr_error_set(err, MR_ERR_INVALID, "control %d of actuator '%s' is %g, not finite", i,
                          w->actuators[i].name, ctrl[i]);
  mr_world_actuation(w, ctrl, mr_sim_ctrl_torque(s), mr_sim_ctrl_target(s), mr_sim_ctrl_kp(s),
                     mr_sim_ctrl_kd(s));
  return MR_OK;
}

mr_status mr_sim_reset_keyframe(mr_sim *s, const char *name, mr_error *err) {
  const mr_world *w = mr_sim_world(s);
  int k = mr_world_keyframe_index(w, name);
  if (k < 0) {
    char list[400] = "";
    for (int i = 0; i < w->nkeyframes; ++i)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               w->keyframes[i].name);
    return mr_error_set(err, MR_ERR_INVALID, "no keyframe '%s' (available: %s)",
                        name ? name : "(null)", list[0] ? list : "none");
  }
  const mr_world_keyframe *key = &w->keyframes[k];
  const mr_world_robot *r = &w->robots[key->robot];
  double *ctrl = calloc((size_t)w->nactuators + 1, sizeof *ctrl);
  if (!ctrl) return mr_error_set(err, MR_ERR_NOMEM, "keyframe '%s': out of memory", name);
  for (int i = 0; i < key->nctrl; ++i)
    ctrl[key->first_actuator + i] = key->ctrl[i];
  mr_sim_reset(s);
  memcpy(mr_sim_qpos(s) + r->idx_q, key->q, (size_t)r->nq * sizeof *key->q);
  memcpy(mr_sim_qvel(s) + r->idx_v, key->v, (size_t)r->nv * sizeof *key->v);
  mr_sim_set_time(s, key->time);
  mr_status st = mr_sim_set_ctrl(s, ctrl, err);
  free(ctrl);
  return st;
}
