/* The Jacobians of one mr_sim_step (moreau/sim_derivatives.h): the simulator's step is taken, and
 * the step map of mr_step_contact_derivatives is evaluated at the state it started from with
 * the step's own data — its explicit torques and implicit gains after the effort limits, its
 * PD targets, external forces, contact blocks, contact Jacobian, problem and solution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "integrate/free_motion.h"
#include "integrate/sim_internal.h"
#include "moreau/assembly.h"
#include "moreau/sim_derivatives.h"

struct mr_sim_derivatives {
  mr_step_derivatives *sd;
  mr_data *d;
  mr_contact_assembly as; /* the step's whole problem and Jacobian, assembled again at q */
  double *q0, *v0, *q_target, *v_next;
  mr_contact_side *sides; /* 2 per block */
  void *work;
  int max_rows;
};

/* the per-block buffers for the simulator's storage, when it grew past them (between steps,
 * with the simulator's) */
static mr_status fit(mr_sim_derivatives *x, const mr_sim *s, mr_error *err) {
  if (s->max_rows <= x->max_rows) return MR_OK;
  free(x->sides), free(x->work);
  mr_contact_assembly_free(&x->as);
  x->sides = malloc((size_t)(2 * s->max_rows + 1) * sizeof(mr_contact_side));
  x->work = malloc(mr_step_contact_work_size(s->m, s->max_rows));
  if (!x->sides || !x->work)
    return mr_error_set(err, MR_ERR_NOMEM, "step derivatives: out of memory");
  mr_status st = mr_contact_assembly_init(&x->as, s->max_rows, s->m->nv, err);
  if (!st) x->max_rows = s->max_rows;
  return st;
}

mr_sim_derivatives *mr_sim_derivatives_create(const mr_sim *s, mr_error *err) {
  const mr_model *m = s->m;
  mr_sim_derivatives *x = calloc(1, sizeof *x);
  if (!x) goto nomem;
  x->sd = mr_step_derivatives_create(m);
  x->d = mr_data_create(m);
  x->q0 = malloc((size_t)(m->nq + 3 * m->nv + 1) * sizeof(double));
  if (!x->sd || !x->d || !x->q0) goto nomem;
  if (fit(x, s, err) != MR_OK) {
    mr_sim_derivatives_free(x);
    return NULL;
  }
  x->v0 = x->q0 + m->nq;
  x->q_target = x->v0 + m->nv;
  x->v_next = x->q_target + m->nv;
  return x;
nomem:
  mr_sim_derivatives_free(x);
  mr_error_set(err, MR_ERR_NOMEM, "step derivatives: out of memory");
  return NULL;
}

void mr_sim_derivatives_free(mr_sim_derivatives *x) {
  if (!x) return;
  mr_step_derivatives_free(x->sd);
  mr_data_free(x->d);
  mr_contact_assembly_free(&x->as);
  free(x->q0);
  free(x->sides);
  free(x->work);
  free(x);
}

const mr_step_derivatives *mr_sim_derivatives_get(const mr_sim_derivatives *x) {
  return x->sd;
}

/* the tolerance that decides the contacts' modes: ten times the solver's own (force units,
 * as c), so that a contact the solver left sticking to its accuracy is not called sliding */
static double mode_tolerance(const mr_sim *s) {
  return fmax(1e-9, 10.0 * s->ctx.settings.eps_abs);
}

mr_status mr_sim_step_derivatives(mr_sim *s, mr_sim_derivatives *x, mr_error *err) {
  const mr_model *m = s->m;
  const int nv = m->nv;
  memcpy(x->q0, s->q, (size_t)m->nq * sizeof(double));
  memcpy(x->v0, s->v, (size_t)nv * sizeof(double));
  mr_status st = mr_sim_step(s, err);
  if (st == MR_OK) st = fit(x, s, err);
  if (st != MR_OK) return st;
  /* the targets as mr_step_params reads them: q_t = q + e on the dofs with gains */
  for (int k = 0; k < nv; ++k)
    x->q_target[k] = x->q0[m->bodies[m->dof_body[k]].joint.idx_q] + s->q_err[k];
  /* the step's external forces, as it applied them at q (body frames) */
  memcpy(x->d->f_ext, s->d->f_ext, (size_t)m->nbodies * sizeof(mr_force));
  const mr_step_params p = {s->ctx.dt, s->kp_step, s->kd_step, x->q_target};
  /* the step's blocks assembled as one problem at q with the step's M̃ (the simulator may have
   * solved them island by island): J, G, R, μ and kinds; g is not used (c is the step's) */
  const int nblocks = s->nc + s->nk;
  if (nblocks > 0) {
    const mr_free_motion f = {s->ctx.dt, s->tau, s->kp_step, s->kd_step, s->q_err};
    mr_forward_kinematics(m, x->d, x->q0, NULL, NULL);
    if ((st = mr_free_motion_factor(m, x->d, &f, x->q0, err)) != MR_OK) return st;
    /* each contact's sides (the simulator's blocks are its contacts, then its other rows) */
    const mr_contact *ct;
    const double *lam;
    const int nc = mr_sim_contacts(s, &ct, &lam);
    for (int i = 0; i < nc; ++i)
      if ((st = mr_contact_curvature(m, x->d, &ct[i], x->sides + 2 * i, err)) != MR_OK) return st;
    for (int i = 2 * nc; i < 2 * nblocks; ++i)
      x->sides[i] = (mr_contact_side){0.0, mr_v3_zero()};
    if ((st = mr_contact_assemble(m, x->d, s->cg, nblocks, x->v0, x->v0, &s->ctx.assembly, &x->as,
                                  err)) != MR_OK)
      return st;
  }
  mr_contact_problem none = {0};
  const mr_contact_step cs = {nblocks > 0 ? &x->as.problem : &none,
                              s->cg,
                              NULL,
                              x->as.J,
                              s->lambda,
                              s->c,
                              &s->ctx.assembly,
                              mode_tolerance(s),
                              x->sides,
                              NULL};
  return mr_step_contact_derivatives(m, x->d, x->sd, &p, x->q0, x->v0, s->tau, &cs, NULL,
                                     x->v_next, x->work, err);
}
