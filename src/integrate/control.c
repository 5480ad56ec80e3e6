/* The control and read-out API of a simulator (control.h). Setters only write the simulator's
 * arrays that the next step reads (q, v, τ_cmd, q_t, k_p, k_d, wrenches); read-outs compute
 * from the current state or copy what the last step kept.
 *
 *   contact force in the world frame   f = C λ,  C = [t₁ t₂ n] the contact frame
 *   contact wrench on a body           (Σ f, Σ (p − o) × f) over its contacts, with −f for the
 *                                      second body of a contact; o the body origin
 *   centre of mass                     c = Σ mᵢ (pᵢ + Rᵢ cᵢ) / Σ mᵢ over the bodies */
#include "moreau/control.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/linalg.h"
#include "integrate/sim_internal.h"

/* ---- state ---- */

double *mr_sim_qpos(mr_sim *s) {
  return s->q;
}
double *mr_sim_qvel(mr_sim *s) {
  return s->v;
}

static int all_finite(const double *x, int n) {
  return mr_first_nonfinite(x, n) < 0;
}

/* 1 when every quaternion of q (free-flyer, spherical) has a nonzero norm */
static int quaternions_nonzero(const mr_model *m, const double *q) {
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    if (j->type != MR_JOINT_FREE && j->type != MR_JOINT_SPHERICAL) continue;
    const double *qq = q + j->idx_q + j->nq - 4;
    if (qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3] == 0.0) return 0;
  }
  return 1;
}

mr_status mr_sim_set_state(mr_sim *s, const double *q, const double *v, mr_error *err) {
  if (q && (!all_finite(q, s->m->nq) || !quaternions_nonzero(s->m, q)))
    return mr_error_set(err, MR_ERR_INVALID,
                        "set state: q has a non-finite entry or a zero quaternion");
  if (v && !all_finite(v, s->m->nv))
    return mr_error_set(err, MR_ERR_INVALID, "set state: v has a non-finite entry");
  if (q) mr_copy(s->q, q, s->m->nq), mr_normalize(s->m, s->q);
  if (v) mr_copy(s->v, v, s->m->nv);
  return MR_OK;
}

void mr_sim_set_time(mr_sim *s, double t) {
  s->t = t;
}

/* ---- actuation ---- */

double *mr_sim_ctrl_torque(mr_sim *s) {
  return s->tau_cmd;
}
double *mr_sim_ctrl_target(mr_sim *s) {
  return s->q_target;
}
double *mr_sim_ctrl_kp(mr_sim *s) {
  return s->kp;
}
double *mr_sim_ctrl_kd(mr_sim *s) {
  return s->kd;
}

static mr_status check_dof(const mr_sim *s, int dof, mr_error *err) {
  if (dof < 0 || dof >= s->m->nv)
    return mr_error_set(err, MR_ERR_INVALID, "dof %d out of range [0, %d)", dof, s->m->nv);
  return MR_OK;
}

/* the coordinate of a robot's 1-dof joint dof, or an error */
static mr_status joint_coordinate(const mr_sim *s, int dof, int *iq, mr_error *err) {
  if (check_dof(s, dof, err)) return MR_ERR_INVALID;
  *iq = mr_world_dof_coordinate(s->w, dof);
  if (*iq < 0)
    return mr_error_set(err, MR_ERR_INVALID,
                        "dof %d (joint '%s') is not a 1-dof joint: it takes torques only", dof,
                        s->m->bodies[s->m->dof_body[dof]].joint.name);
  return MR_OK;
}

static mr_status finite_value(const char *what, int dof, double x, mr_error *err) {
  if (isfinite(x)) return MR_OK;
  return mr_error_set(err, MR_ERR_INVALID, "%s of dof %d: %g is not finite", what, dof, x);
}

mr_status mr_sim_set_joint_torque(mr_sim *s, int dof, double tau, mr_error *err) {
  if (check_dof(s, dof, err) || finite_value("torque", dof, tau, err)) return MR_ERR_INVALID;
  s->tau_cmd[dof] = tau;
  return MR_OK;
}

mr_status mr_sim_set_joint_target(mr_sim *s, int dof, double q, mr_error *err) {
  int iq;
  if (joint_coordinate(s, dof, &iq, err) || finite_value("target", dof, q, err))
    return MR_ERR_INVALID;
  s->q_target[iq] = q;
  return MR_OK;
}

mr_status mr_sim_set_joint_gains(mr_sim *s, int dof, double kp, double kd, mr_error *err) {
  int iq;
  if (joint_coordinate(s, dof, &iq, err)) return MR_ERR_INVALID;
  if (!(kp >= 0.0 && kd >= 0.0 && isfinite(kp) && isfinite(kd)))
    return mr_error_set(err, MR_ERR_INVALID, "gains of dof %d: kp %g and kd %g must be finite >= 0",
                        dof, kp, kd);
  s->kp[dof] = kp;
  s->kd[dof] = kd;
  return MR_OK;
}

/* the dof of a named 1-dof joint, or an error */
static int named_dof(const mr_sim *s, const char *joint, mr_error *err) {
  int dof = mr_world_joint_dof(s->w, joint);
  if (dof < 0)
    mr_error_set(err, MR_ERR_INVALID,
                 "no 1-dof joint named '%s' in the world (robot joints are named ROBOT/JOINT)",
                 joint ? joint : "(null)");
  return dof;
}

mr_status mr_sim_set_joint_torque_named(mr_sim *s, const char *joint, double tau, mr_error *err) {
  int dof = named_dof(s, joint, err);
  return dof < 0 ? MR_ERR_INVALID : mr_sim_set_joint_torque(s, dof, tau, err);
}

mr_status mr_sim_set_joint_target_named(mr_sim *s, const char *joint, double q, mr_error *err) {
  int dof = named_dof(s, joint, err);
  return dof < 0 ? MR_ERR_INVALID : mr_sim_set_joint_target(s, dof, q, err);
}

mr_status mr_sim_set_joint_gains_named(mr_sim *s, const char *joint, double kp, double kd,
                                       mr_error *err) {
  int dof = named_dof(s, joint, err);
  return dof < 0 ? MR_ERR_INVALID : mr_sim_set_joint_gains(s, dof, kp, kd, err);
}

/* ---- wrenches ---- */

mr_status mr_sim_set_wrench(mr_sim *s, int body, mr_vec3 force, mr_vec3 torque, mr_error *err) {
  if (body <= 0 || body >= s->m->nbodies)
    return mr_error_set(err, MR_ERR_INVALID, "wrench: body %d out of range [1, %d)", body,
                        s->m->nbodies);
  double x[6] = {force.v[0], force.v[1], force.v[2], torque.v[0], torque.v[1], torque.v[2]};
  if (!all_finite(x, 6))
    return mr_error_set(err, MR_ERR_INVALID, "wrench on body '%s': not finite",
                        s->m->bodies[body].name);
  s->wrench[body] = (mr_force){force, torque};
  return MR_OK;
}

void mr_sim_clear_wrenches(mr_sim *s) {
  memset(s->wrench, 0, (size_t)s->m->nbodies * sizeof *s->wrench);
}

/* ---- resets ---- */

/* the names of robot r's postures, or of the robots (r < 0), comma-separated into buf */
static void name_list(const mr_world *w, int r, char *buf, size_t len) {
  buf[0] = '\0';
  int n = r < 0 ? w->nrobots : w->robots[r].npostures;
  for (int k = 0; k < n; ++k) {
    size_t used = strlen(buf);
    const char *name = r < 0 ? w->robots[k].name : w->robots[r].postures[k].name;
    if (used < len) snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
  }
  if (!buf[0]) snprintf(buf, len, "none");
}

mr_status mr_sim_reset_posture(mr_sim *s, const char *robot, const char *posture, mr_error *err) {
  char list[512];
  int r = mr_world_robot_index(s->w, robot);
  if (r < 0) {
    name_list(s->w, -1, list, sizeof list);
    return mr_error_set(err, MR_ERR_INVALID, "reset: no robot '%s' (robots: %s)",
                        robot ? robot : "(null)", list);
  }
  const mr_world_posture *p = mr_world_posture_find(s->w, r, posture);
  if (!p) {
    name_list(s->w, r, list, sizeof list);
    return mr_error_set(err, MR_ERR_INVALID, "reset: robot '%s' has no posture '%s' (postures: %s)",
                        robot, posture ? posture : "(null)", list);
  }
  const mr_world_robot *rb = &s->w->robots[r];
  mr_sim_reset(s);
  mr_copy(s->q + rb->idx_q, p->q, rb->nq);
  mr_copy(s->q_target + rb->idx_q, p->q, rb->nq);
  mr_zero(s->v + rb->idx_v, rb->nv);
  return MR_OK;
}

/* ---- read-outs ---- */

int mr_sim_contact_forces(const mr_sim *s, mr_contact_force *out, int cap) {
  const mr_contact *c;
  const double *lambda;
  int n = mr_sim_contacts(s, &c, &lambda);
  for (int i = 0; i < n && i < cap; ++i) {
    const double *l = lambda + 3 * i;
    mr_contact_force *o = &out[i];
    memcpy(o->geom, c[i].geom, sizeof o->geom);
    memcpy(o->body, c[i].body, sizeof o->body);
    o->point = c[i].point;
    o->normal = mr_v3(c[i].frame.m[0][2], c[i].frame.m[1][2], c[i].frame.m[2][2]);
    o->phi = c[i].phi;
    memcpy(o->lambda, l, sizeof o->lambda);
    o->force = mr_m3_mulv(&c[i].frame, mr_v3(l[0], l[1], l[2]));
  }
  return n;
}

const mr_force *mr_sim_contact_wrenches(const mr_sim *s) {
  return s->contact_wrench;
}

const mr_se3 *mr_sim_body_poses(mr_sim *s) {
  mr_forward_kinematics(s->m, s->d, s->q, NULL, NULL);
  return s->d->oMi;
}

mr_vec3 mr_sim_com(mr_sim *s, int r) {
  const mr_se3 *X = mr_sim_body_poses(s);
  int first = 1, end = s->m->nbodies;
  if (r >= 0 && r < s->w->nrobots)
    first = s->w->robots[r].first_body, end = first + s->w->robots[r].nbodies;
  mr_vec3 c = mr_v3_zero();
  double mass = 0.0;
  for (int b = first; b < end; ++b) {
    const mr_inertia *Y = &s->m->bodies[b].inertia;
    mr_vec3 cb = mr_v3_add(X[b].p, mr_m3_mulv(&X[b].R, Y->c));
    c = mr_v3_madd(c, Y->m, cb);
    mass += Y->m;
  }
  return mass > 0.0 ? mr_v3_scale(c, 1.0 / mass) : c;
}
