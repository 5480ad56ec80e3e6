/* The simulator's locomotion controllers (mpc.h): one per robot that has one, created with the
 * simulator (or by mr_sim_set_mpc), run at the start of every step. */
#include <math.h>
#include <stdlib.h>

#include "integrate/mpc_internal.h"
#include "integrate/sim_internal.h"

mr_status mr_sim_create_controllers(mr_sim *s, mr_error *err) {
  s->mpc = calloc((size_t)(s->w->nrobots ? s->w->nrobots : 1), sizeof *s->mpc);
  if (!s->mpc) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  for (int r = 0; r < s->w->nrobots; ++r)
    if (s->w->robots[r].mpc && !(s->mpc[r] = mr_mpc_create(s->w, r, s->w->robots[r].mpc, err)))
      return err ? err->status : MR_ERR_INVALID;
  return MR_OK;
}

void mr_sim_free_controllers(mr_sim *s) {
  for (int r = 0; s->mpc && r < s->w->nrobots; ++r)
    mr_mpc_free(s->mpc[r]);
  free(s->mpc);
  s->mpc = NULL;
}

void mr_sim_reset_controllers(mr_sim *s) {
  for (int r = 0; s->mpc && r < s->w->nrobots; ++r)
    if (s->mpc[r]) mr_mpc_reset(s->mpc[r], s->q, s->t);
}

void mr_sim_run_controllers(mr_sim *s) {
  for (int r = 0; s->mpc && r < s->w->nrobots; ++r)
    if (s->mpc[r] && mr_mpc_control(s->mpc[r], s->t, s->q, s->v, s->contact_wrench, s->tau_cmd,
                                    s->q_target, s->kp, s->kd))
      s->warnings.falls++;
}

/* the robot named robot, or -1 with err */
static int robot_index(const mr_sim *s, const char *robot, mr_error *err) {
  int r = mr_world_robot_index(s->w, robot);
  if (r < 0) mr_error_set(err, MR_ERR_INVALID, "mpc: no robot '%s'", robot ? robot : "(null)");
  return r;
}

mr_status mr_sim_set_mpc(mr_sim *s, const char *robot, const mr_mpc_settings *c, mr_error *err) {
  int r = robot_index(s, robot, err);
  if (r < 0) return MR_ERR_INVALID;
  mr_mpc *m = mr_mpc_create(s->w, r, c, err);
  if (!m) return err ? err->status : MR_ERR_INVALID;
  mr_mpc_free(s->mpc[r]);
  s->mpc[r] = m;
  mr_mpc_reset(m, s->q, s->t);
  return MR_OK;
}

/* robot's controller, or NULL with err */
static mr_mpc *controller(const mr_sim *s, const char *robot, mr_error *err) {
  int r = robot_index(s, robot, err);
  if (r < 0) return NULL;
  if (!s->mpc[r]) mr_error_set(err, MR_ERR_INVALID, "mpc: robot '%s' has no controller", robot);
  return s->mpc[r];
}

mr_status mr_sim_set_mpc_velocity(mr_sim *s, const char *robot, const double velocity[3],
                                  mr_error *err) {
  mr_mpc *m = controller(s, robot, err);
  if (!m) return MR_ERR_INVALID;
  for (int k = 0; k < 3; ++k)
    if (!isfinite(velocity[k]))
      return mr_error_set(err, MR_ERR_INVALID, "mpc: velocity[%d] is not finite", k);
  mr_mpc_set_velocity(m, velocity);
  return MR_OK;
}

mr_status mr_sim_get_mpc_status(const mr_sim *s, const char *robot, mr_mpc_status *out,
                                mr_error *err) {
  const mr_mpc *m = controller(s, robot, err);
  if (!m) return MR_ERR_INVALID;
  *out = *mr_mpc_get_status(m);
  return MR_OK;
}
