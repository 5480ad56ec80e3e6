/* The free-motion stage (free_motion.h). */
#include "integrate/free_motion.h"

#include "integrate/free_flyer.h"

static double at(const double *x, int k) {
  return x ? x[k] : 0.0;
}

mr_status mr_free_motion_factor(const mr_model *m, mr_data *d, const mr_free_motion *f,
                                const double *q, mr_error *err) {
  double dt = f->dt;
  mr_crba(m, d, q);
  for (int k = 0; k < m->nv; ++k)
    d->M[d->row_at[k]] += dt * (at(f->kd, k) + m->damping[k]) + dt * dt * at(f->kp, k);
  return mr_ldlt_factor(m, d, err);
}

void mr_free_motion_velocity(const mr_model *m, mr_data *d, const mr_free_motion *f,
                             const double *q, const double *v, double *a, double *vf) {
  double dt = f->dt;
  mr_free_flyer_bias(m, d, v, a);
  const double *b = mr_rnea(m, d, q, v, a); /* b(q, v) − Σ Jᵀ f_ext + M a */
  /* M̃ v_f = M v + Δt (τ + k_p e − b), M = M̃ − Δt (k_d + damping + Δt k_p) */
  for (int k = 0; k < m->nv; ++k) {
    double kp = at(f->kp, k), e = kp != 0.0 ? f->q_err[k] : 0.0;
    vf[k] = f->tau[k] + kp * e - b[k] - (at(f->kd, k) + m->damping[k] + dt * kp) * v[k];
  }
  mr_ldlt_solve(m, d, vf);
  for (int k = 0; k < m->nv; ++k)
    vf[k] = v[k] + dt * vf[k];
}
