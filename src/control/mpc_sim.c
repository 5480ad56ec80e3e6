/* The locomotion MPC on a simulator (mpc.h): one controller per robot that has one, gathered in
 * the simulator's controller (sim.h's hook) and run through the public control API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/mpc_internal.h"
#include "moreau/control.h"

/* the simulator's controller: the robots' MPCs */
typedef struct {
  int nrobots;
  mr_mpc **mpc; /* [nrobots], NULL where none */
} mpc_group;

static int group_control(mr_sim *s, void *data) {
  mpc_group *g = data;
  int falls = 0;
  for (int r = 0; r < g->nrobots; ++r)
    if (g->mpc[r])
      falls += mr_mpc_control(g->mpc[r], mr_sim_time(s), mr_sim_q(s), mr_sim_v(s),
                              mr_sim_contact_wrenches(s), mr_sim_ctrl_torque(s),
                              mr_sim_ctrl_target(s), mr_sim_ctrl_kp(s), mr_sim_ctrl_kd(s));
  return falls;
}

static void group_reset(mr_sim *s, void *data) {
  mpc_group *g = data;
  for (int r = 0; r < g->nrobots; ++r)
    if (g->mpc[r]) mr_mpc_reset(g->mpc[r], mr_sim_q(s), mr_sim_time(s));
}

static void group_free(void *data) {
  mpc_group *g = data;
  for (int r = 0; g && r < g->nrobots; ++r)
    mr_mpc_free(g->mpc[r]);
  if (g) free(g->mpc);
  free(g);
}

/* the simulator's MPC group, attached when it has none (replacing another controller) */
static mpc_group *group(mr_sim *s, mr_error *err) {
  const mr_controller *c = mr_sim_get_controller(s);
  if (c->control == group_control) return c->data;
  mpc_group *g = calloc(1, sizeof *g);
  int n = mr_sim_world(s)->nrobots;
  if (g) g->mpc = calloc((size_t)(n ? n : 1), sizeof *g->mpc);
  if (!g || !g->mpc) {
    free(g);
    mr_error_set(err, MR_ERR_NOMEM, "mpc: out of memory");
    return NULL;
  }
  g->nrobots = n;
  mr_sim_set_controller(s, &(mr_controller){group_control, group_reset, group_free, g});
  return g;
}

/* the robot named robot, or -1 with err */
static int robot_index(const mr_sim *s, const char *robot, mr_error *err) {
  int r = mr_world_robot_index(mr_sim_world(s), robot);
  if (r < 0) mr_error_set(err, MR_ERR_INVALID, "mpc: no robot '%s'", robot ? robot : "(null)");
  return r;
}

mr_status mr_sim_set_mpc(mr_sim *s, const char *robot, const mr_mpc_settings *c, mr_error *err) {
  int r = robot_index(s, robot, err);
  if (r < 0) return MR_ERR_INVALID;
  mr_mpc *m = mr_mpc_create(mr_sim_world(s), r, c, err);
  if (!m) return err ? err->status : MR_ERR_INVALID;
  mpc_group *g = group(s, err);
  if (!g) return mr_mpc_free(m), MR_ERR_NOMEM;
  mr_mpc_free(g->mpc[r]);
  g->mpc[r] = m;
  mr_mpc_reset(m, mr_sim_q(s), mr_sim_time(s));
  return MR_OK;
}

mr_status mr_mpc_attach_declared(mr_sim *s, int robot, mr_error *err) {
  const mr_world_robot *rb = &mr_sim_world(s)->robots[robot];
  return mr_sim_set_mpc(s, rb->name, rb->controller_settings, err);
}

/* robot's controller, or NULL with err */
static mr_mpc *controller(const mr_sim *s, const char *robot, mr_error *err) {
  int r = robot_index(s, robot, err);
  if (r < 0) return NULL;
  const mr_controller *c = mr_sim_get_controller(s);
  mr_mpc *m = c->control == group_control ? ((mpc_group *)c->data)->mpc[r] : NULL;
  if (!m) mr_error_set(err, MR_ERR_INVALID, "mpc: robot '%s' has no controller", robot);
  return m;
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
