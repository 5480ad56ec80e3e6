/* The step (sim.h): a fixed list of stages over the simulator and its context (sim_internal.h),
 * each a function of this file or of the module it names.
 *
 *   control      the attached controller writes the actuation               (sim.h)
 *   detect       kinematics at (q, v), collision, storage grown if needed   sim.c
 *   dynamics     external forces, actuation (effort limits), M̃ factored,   free_motion.c
 *                v_f, the free bodies' gyroscopic impulse                   free_flyer.c
 *   blocks       contacts, limits, constraints, warm starts                 blocks.c
 *   contacts     islands: assembly, consistent law, solve, Δt M̃⁻¹Jᵀλ       contact_stage.c
 *   integrate    the gyroscopic impulse of the contact impulses, the
 *                applied torque, q⁺ = q ⊕ Δt v⁺, the state check, the
 *                contact wrenches, the commit                               free_flyer.c
 *
 * No stage allocates: detect grows the storage (the only allocation after creation) before the
 * others run, when the contacts exceed any met before. */
#include "moreau/sim.h"

#include <math.h>
#include <string.h>

#include "core/linalg.h"
#include "integrate/free_flyer.h"
#include "integrate/free_motion.h"
#include "integrate/sim_internal.h"

/* a velocity above this (m/s or rad/s) is taken as divergence */
#define DIVERGENCE_VELOCITY 1e4

/* ---- dynamics ---- */

/* a world force and torque at body b's origin, added to d->f_ext in the body frame */
static void add_world_wrench(mr_data *d, int b, mr_vec3 f, mr_vec3 tq) {
  const mr_mat3 *R = &d->oMi[b].R;
  mr_force fb = {mr_m3_tmulv(R, f), mr_m3_tmulv(R, tq)};
  d->f_ext[b] = mr_force_add(d->f_ext[b], fb);
}

/* external forces at time t — the world's forces and the user's wrenches — as body-frame
 * spatial forces in d->f_ext */
static void apply_forces(mr_sim *s) {
  const mr_world *w = s->w;
  for (int i = 0; i < s->m->nbodies; ++i)
    s->d->f_ext[i] = mr_force_zero();
  for (int k = 0; k < w->nforces; ++k) {
    mr_vec3 f, tq;
    mr_world_force_at(&w->forces[k], s->t, &f, &tq);
    add_world_wrench(s->d, w->forces[k].body, f, tq);
  }
  for (int b = 1; b < s->m->nbodies; ++b)
    add_world_wrench(s->d, b, s->wrench[b].f, s->wrench[b].n);
}

/* q_t ⊖ q on the robots' 1-dof joints (the only ones with PD gains), q_t the simulator's
 * targets plus the world's sine offsets */
static void posture_error(mr_sim *s) {
  mr_zero(s->q_err, s->m->nv);
  for (int r = 0; r < s->w->nrobots; ++r) {
    const mr_world_robot *rb = &s->w->robots[r];
    for (int b = rb->first_body; b < rb->first_body + rb->nbodies; ++b) {
      const mr_joint *j = &s->m->bodies[b].joint;
      if (j->nq != 1) continue;
      s->q_err[j->idx_v] = s->q_target[j->idx_q] - s->q[j->idx_q];
    }
    /* time-varying targets, taken at the end of the step (the implicit PD acts on q⁺) */
    double t = s->t + s->ctx.dt;
    for (int k = 0; k < rb->nsines; ++k) {
      const mr_world_sine *sn = &rb->sines[k];
      s->q_err[rb->idx_v + sn->idx_v] +=
          sn->amplitude * sin(2.0 * M_PI * sn->frequency * t + sn->phase);
    }
  }
}

/* effort limits: the torque of dof k is τ_cmd + k_p (q_t − q⁺) − k_d v⁺ (PD implicit). Its
 * explicit estimate at the start of the step, τ_cmd + k_p e − k_d v, decides: within the limit
 * the dof keeps its implicit gains; beyond it the dof is saturated for this step — its torque is
 * the estimate clamped to ±effort, explicit, and its gains leave M̃ (k_p = k_d = 0 this step) */
static void actuation(mr_sim *s) {
  const mr_model *m = s->m;
  for (int k = 0; k < m->nv; ++k) {
    double est = s->tau_cmd[k] + s->kp[k] * s->q_err[k] - s->kd[k] * s->v[k];
    double e = m->effort_limit[k];
    int saturated = fabs(est) > e;
    s->tau[k] = saturated ? copysign(e, est) : s->tau_cmd[k];
    s->kp_step[k] = saturated ? 0.0 : s->kp[k];
    s->kd_step[k] = saturated ? 0.0 : s->kd[k];
  }
}

/* the free motion of this step: v_next = v_f with the free bodies' gyroscopic impulse (its
 * record in s->lag), M̃'s factor left in s->d */
static mr_status dynamics(mr_sim *s, mr_error *err) {
  apply_forces(s);
  posture_error(s);
  actuation(s);
  const mr_free_motion f = {s->ctx.dt, s->tau, s->kp_step, s->kd_step, s->q_err};
  mr_status st = mr_free_motion_factor(s->m, s->d, &f, s->q, err);
  if (st) return st;
  mr_free_motion_velocity(s->m, s->d, &f, s->q, s->v, s->accel, s->v_next);
  mr_free_flyer_gyroscopic(s->m, s->d, s->v, s->ctx.dt, s->v_next, s->dv, s->lag);
  return MR_OK;
}

/* ---- contacts ---- */

/* the contact stage's view of this step */
static mr_contact_input contact_input(const mr_sim *s) {
  return (mr_contact_input){.m = s->m,
                            .d = s->d,
                            .assembly = &s->ctx.assembly,
                            .solver = s->ctx.solver,
                            .settings = &s->ctx.settings,
                            .retry = s->ctx.retry,
                            .cg = s->cg,
                            .n = s->nc + s->nk,
                            .keys = s->keys,
                            .prev_keys = s->prev_keys,
                            .prev_index = s->prev_index,
                            .same = mr_sim_same_blocks(s),
                            .step = s->steps,
                            .v = s->v,
                            .vf = s->v_next,
                            .one = !s->islands,
                            .timed = s->time_stages,
                            .margin = s->ctx.speculative ? s->w->contact.margin : INFINITY};
}

/* the step's blocks solved; v_next += their velocity change, and the free bodies' gyroscopic
 * impulse recomputed with it; the solver's figures and warnings */
static mr_status contacts(mr_sim *s, mr_contact_output *out, mr_error *err) {
  s->last.iterations = s->last.iterations_sum = s->last.islands = 0;
  s->last.converged = 1;
  s->last.eps_abs = s->last.solve_us = 0.0;
  *out = (mr_contact_output){.converged = 1};
  if (s->nc + s->nk == 0) return MR_OK;
  mr_contact_input in = contact_input(s);
  mr_status st = mr_contact_stage_solve(s->contacts, &in, s->lambda, s->c, s->dv, out, err);
  if (st) return st;
  mr_contact_stage_rebounds(s->contacts, s->nc + s->nk, s->rebound);
  s->last.iterations = out->iterations;
  s->last.iterations_sum = out->iterations_sum;
  s->last.islands = s->islands ? out->islands : 0;
  s->last.converged = out->converged;
  s->last.eps_abs = out->eps_abs;
  s->last.solve_us = out->solve_us;
  if (!out->converged) s->warnings.not_converged++;
  if (out->budget) s->warnings.budget++;
  if (out->eps_abs > s->ctx.settings.eps_abs) s->warnings.ncp_not_converged++;
  mr_axpy(s->v_next, 1.0, s->dv, s->m->nv);
  mr_free_flyer_impulse_gyroscopic(s->m, s->d, s->ctx.dt, s->dv, s->v_next, s->accel, s->lag);
  return MR_OK;
}

/* ---- integration ---- */

/* the actuation torque the step applied: τ + k_p (e − Δt v⁺) − k_d v⁺ */
static void applied_torque(mr_sim *s) {
  double dt = s->ctx.dt;
  for (int k = 0; k < s->m->nv; ++k)
    s->tau_act[k] = s->tau[k] + s->kp_step[k] * (s->q_err[k] - dt * s->v_next[k]) -
                    s->kd_step[k] * s->v_next[k];
}

/* the first non-finite or runaway coordinate of the candidate state, as an error */
static mr_status check_state(const mr_sim *s, mr_error *err) {
  double t = s->t + s->ctx.dt;
  for (int k = 0; k < s->m->nv; ++k)
    if (!isfinite(s->v_next[k]) || fabs(s->v_next[k]) > DIVERGENCE_VELOCITY)
      return mr_error_set(err, MR_ERR_NUMERIC,
                          "diverged at step %ld (t = %.6g s): v[%d] = %g (dof of body '%s')",
                          s->steps + 1, t, k, s->v_next[k], s->m->bodies[s->m->dof_body[k]].name);
  for (int k = 0; k < s->m->nq; ++k)
    if (!isfinite(s->q_next[k]))
      return mr_error_set(err, MR_ERR_NUMERIC, "diverged at step %ld (t = %.6g s): q[%d] = %g",
                          s->steps + 1, t, k, s->q_next[k]);
  return MR_OK;
}

/* the contact wrench on each body: world-frame forces f = C λ of its contacts (−f on the second
 * body) and their moments about the body origin, at the step's start kinematics */
static void contact_wrenches(mr_sim *s) {
  const mr_contact *cs = mr_collision_contacts(s->col);
  memset(s->contact_wrench, 0, (size_t)s->m->nbodies * sizeof *s->contact_wrench);
  for (int i = 0; i < s->nc; ++i) {
    const double *l = s->lambda + 3 * i;
    mr_vec3 f = mr_m3_mulv(&cs[i].frame, mr_v3(l[0], l[1], l[2]));
    for (int k = 0; k < 2; ++k) {
      int b = cs[i].body[k];
      mr_vec3 fk = k ? mr_v3_scale(f, -1.0) : f;
      mr_vec3 r = mr_v3_sub(cs[i].point, s->d->oMi[b].p);
      mr_force *w = &s->contact_wrench[b];
      w->f = mr_v3_add(w->f, fk);
      w->n = mr_v3_add(w->n, mr_v3_cross(r, fk));
    }
  }
}

/* q⁺ from v⁺, checked, then committed with what the next step and the read-outs keep */
static mr_status integrate(mr_sim *s, mr_error *err) {
  applied_torque(s);
  mr_free_flyer_integrate(s->m, s->d, s->q, s->v_next, s->lag, s->ctx.dt, s->q_next);
  mr_status st = check_state(s, err);
  if (st) return st;
  contact_wrenches(s);
  mr_copy(s->q, s->q_next, s->m->nq);
  mr_copy(s->v, s->v_next, s->m->nv);
  mr_sim_remember_blocks(s);
  s->t += s->ctx.dt;
  s->steps++;
  /* the energies are computed when read (mr_sim_last) */
  mr_copy(s->q_done, s->q, s->m->nq);
  mr_copy(s->v_done, s->v, s->m->nv);
  s->energy_pending = 1;
  return MR_OK;
}

/* ---- the stage list ---- */

mr_status mr_sim_step(mr_sim *s, mr_error *err) {
  double t0 = mr_stage_clock(s->time_stages), t1 = 0.0, t2, t3, t4;
  mr_contact_output out;
  if (s->controller.control) s->warnings.falls += s->controller.control(s, s->controller.data);
  mr_status st = mr_sim_detect(s, s->time_stages ? &t1 : NULL, err);
  if (st) return st;
  t2 = mr_stage_clock(s->time_stages);
  if ((st = dynamics(s, err))) return st;
  t3 = mr_stage_clock(s->time_stages);
  mr_sim_gather_blocks(s);
  s->last.ncontacts = s->nc;
  s->last.nconstraints = s->nk;
  if ((st = mr_sim_reserve_islands(s, err)) || (st = contacts(s, &out, err))) return st;
  t4 = mr_stage_clock(s->time_stages);
  if ((st = integrate(s, err))) return st;
  /* stage times (mr_step_timing): the consistent laws, solves and velocity changes are disjoint
   * spans of [t3, t4], the assembly its rest; clock readings are multiples of their common ulp,
   * so these sums and differences are exact and the stages add up to total (all 0 untimed) */
  double t5 = mr_stage_clock(s->time_stages),
         inner = out.t_consistency + out.t_solver + out.t_impulse;
  s->last.timing = (mr_step_timing){.kinematics = t1 - t0,
                                    .collision = t2 - t1,
                                    .dynamics = t3 - t2,
                                    .assembly = t4 - t3 - inner,
                                    .consistency = out.t_consistency,
                                    .solver = out.t_solver,
                                    .integration = t5 - t4 + out.t_impulse,
                                    .total = t5 - t0};
  return MR_OK;
}
