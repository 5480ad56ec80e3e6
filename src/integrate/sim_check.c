/* Checked steps (moreau/query.h): what a caller wrote in place through control.h's views (q, v,
 * torques, targets, gains) is checked before the step reads it, so that a NaN written into q
 * is reported as the entry it is instead of surfacing later as a pivot of the factorisation;
 * and the user wrench of a body, read back. */
#include <math.h>
#include <stdio.h>

#include "moreau/batch.h"
#include "moreau/control.h"

#include "integrate/sim_internal.h"

/* the body whose joint owns entry k of q (coordinates) or of v (dofs) */
static int owner(const mr_model *m, int k, int coordinates) {
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    int first = coordinates ? j->idx_q : j->idx_v, n = coordinates ? j->nq : j->nv;
    if (k >= first && k < first + n) return b;
  }
  return 0;
}

static mr_status bad_entry(const mr_model *m, const char *array, int k, int coordinates, double x,
                           const char *why, mr_error *err) {
  const mr_joint *j = &m->bodies[owner(m, k, coordinates)].joint;
  return mr_error_set(
      err, MR_ERR_INVALID, "%s[%d] = %g (joint '%s', %s %d of %d) %s; the step was not taken",
      array, k, x, j->name, coordinates ? "coordinate" : "dof",
      k - (coordinates ? j->idx_q : j->idx_v) + 1, coordinates ? j->nq : j->nv, why);
}

/* the first non-finite entry of x [n], -1 when none */
static int first_non_finite(const double *x, int n) {
  for (int k = 0; k < n; ++k)
    if (!isfinite(x[k])) return k;
  return -1;
}

/* a quaternion of q (free-flyer, spherical joints) whose norm is not above 1e-12 */
static mr_status check_quaternions(const mr_model *m, const double *q, mr_error *err) {
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    if (j->type != MR_JOINT_FREE && j->type != MR_JOINT_SPHERICAL) continue;
    int at = j->idx_q + (j->type == MR_JOINT_FREE ? 3 : 0);
    const double *x = q + at;
    if (!(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) > 1e-12))
      return bad_entry(m, "q", at, 1, x[0], "starts a quaternion of zero norm", err);
  }
  return MR_OK;
}

/* gains finite, non-negative, and zero off the 1-dof joints */
static mr_status check_gains(const mr_model *m, const char *name, const double *g, mr_error *err) {
  for (int k = 0; k < m->nv; ++k) {
    if (!isfinite(g[k])) return bad_entry(m, name, k, 0, g[k], "is not finite", err);
    if (g[k] < 0.0) return bad_entry(m, name, k, 0, g[k], "is negative", err);
    if (g[k] != 0.0 && m->bodies[m->dof_body[k]].joint.nv != 1)
      return bad_entry(m, name, k, 0, g[k], "is not 0 on a joint that is not 1-dof", err);
  }
  return MR_OK;
}

mr_status mr_sim_check_inputs(mr_sim *s, mr_error *err) {
  const mr_model *m = s->m;
  const struct {
    const char *name;
    const double *x;
    int n, coordinates;
  } arrays[] = {{"q", mr_sim_qpos(s), m->nq, 1},
                {"v", mr_sim_qvel(s), m->nv, 0},
                {"torque", mr_sim_ctrl_torque(s), m->nv, 0},
                {"target", mr_sim_ctrl_target(s), m->nq, 1}};
  /* the state and the actuation, entry by entry */
  for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; ++a) {
    int k = first_non_finite(arrays[a].x, arrays[a].n);
    if (k >= 0)
      return bad_entry(m, arrays[a].name, k, arrays[a].coordinates, arrays[a].x[k], "is not finite",
                       err);
  }
  mr_status st = check_quaternions(m, mr_sim_qpos(s), err);
  if (!st) st = check_gains(m, "kp", mr_sim_ctrl_kp(s), err);
  if (!st) st = check_gains(m, "kd", mr_sim_ctrl_kd(s), err);
  return st;
}

mr_status mr_sim_step_n(mr_sim *s, long n, mr_error *err) {
  if (n < 0) return mr_error_set(err, MR_ERR_INVALID, "steps: n = %ld is negative", n);
  mr_status st = mr_sim_check_inputs(s, err);
  for (long k = 0; k < n && st == MR_OK; ++k)
    st = mr_sim_step(s, err);
  return st;
}

mr_status mr_sim_get_wrench(mr_sim *s, int body, mr_vec3 *force, mr_vec3 *torque, mr_error *err) {
  if (body <= 0 || body >= s->m->nbodies)
    return mr_error_set(err, MR_ERR_INVALID, "wrench: body %d out of range [1, %d)", body,
                        s->m->nbodies);
  if (force) *force = s->wrench[body].f;
  if (torque) *torque = s->wrench[body].n;
  return MR_OK;
}

mr_status mr_batch_step_checked(mr_batch *b, int nsteps, mr_error *err) {
  if (nsteps < 0)
    return mr_error_set(err, MR_ERR_INVALID, "batch: nsteps = %d is negative", nsteps);
  /* every environment's inputs before any is stepped */
  for (int i = 0; i < mr_batch_size(b); ++i) {
    mr_error e = {MR_OK, ""};
    if (mr_sim_check_inputs(mr_batch_sim(b, i), &e))
      return mr_error_set(err, MR_ERR_INVALID, "environment %d: %s", i, e.msg);
  }
  /* nothing to step: the pool is not woken */
  return nsteps ? mr_batch_step(b, nsteps, err) : MR_OK;
}
