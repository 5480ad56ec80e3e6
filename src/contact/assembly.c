/* Contact problem assembly (see assembly.h): J from the point Jacobians of the two bodies
 * rotated into each contact frame, G = J M⁻¹ Jᵀ with one tree-sparse solve per row of J, and g
 * with the gap, Baumgarte and restitution corrections of DESIGN.md §4 (the consistent gap law of
 * docs/solvers.md: cor_N = Φ/Δt for Φ ≥ −δ, −δ/Δt + k_B (Φ + δ)/Δt below), in force units. Joint limits
 * enter as frictionless contacts whose only nonzero row selects the joint's velocity; point
 * constraints as bilateral blocks (problem.kind) corrected by their position error. */
#include "moreau/assembly.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"

mr_assembly_settings mr_assembly_settings_default(void) {
  mr_assembly_settings s = {1e-3, 0.0, 0.01, 1e-4, 1e-12};
  return s;
}

mr_status mr_contact_assembly_init(mr_contact_assembly *a, int max_contacts, int nv,
                                   mr_error *err) {
  memset(a, 0, sizeof *a);
  if (max_contacts < 0 || nv < 0)
    return mr_error_set(err, MR_ERR_INVALID, "assembly: bad sizes (%d contacts, nv %d)",
                        max_contacts, nv);
  size_t n = 3 * (size_t)max_contacts, cap = n ? n : 1, nvc = nv ? (size_t)nv : 1;
  a->max_contacts = max_contacts;
  a->nv = nv;
  a->J = calloc(cap * nvc, sizeof(double));
  a->MiJt = calloc(cap * nvc, sizeof(double));
  a->G = calloc(cap * cap, sizeof(double));
  a->g = calloc(cap, sizeof(double));
  a->mu = calloc(cap, sizeof(double));
  a->R = calloc(cap, sizeof(double));
  a->phi = calloc(cap, sizeof(double));
  a->vel = calloc(cap, sizeof(double));
  a->kind = calloc(cap, 1);
  if (!a->J || !a->MiJt || !a->G || !a->g || !a->mu || !a->R || !a->phi || !a->vel || !a->kind) {
    mr_contact_assembly_free(a);
    return mr_error_set(err, MR_ERR_NOMEM, "assembly: out of memory for %d contacts", max_contacts);
  }
  return MR_OK;
}

void mr_contact_assembly_free(mr_contact_assembly *a) {
  free(a->J);
  free(a->MiJt);
  free(a->G);
  free(a->g);
  free(a->mu);
  free(a->R);
  free(a->phi);
  free(a->vel);
  free(a->kind);
  memset(a, 0, sizeof *a);
}

void mr_contact_jacobian(const mr_model *m, mr_data *d, const mr_contact_geometry *c, double *J,
                         double *scratch) {
  int nv = m->nv;
  mr_zero(J, 3 * nv);
  /* a joint limit: the normal row selects the dof */
  if (c->type == MR_ROWS_LIMIT) {
    J[2 * nv + c->dof] = c->sign;
    return;
  }
  /* a joint coupling: v_dof − ratio v_dof2 */
  if (c->type == MR_ROWS_MIMIC) {
    J[2 * nv + c->dof] = 1.0;
    J[2 * nv + c->dof2] -= c->ratio;
    return;
  }
  /* world-frame relative point velocity Jacobian: J₁ − J₂ (a point constraint: at its two
   * anchors, left in the world frame) */
  if (c->body1 > 0) mr_point_jacobian(m, d, c->body1, c->point, J);
  if (c->body2 > 0) {
    mr_point_jacobian(m, d, c->body2, c->type == MR_ROWS_POINT ? c->point2 : c->point, scratch);
    mr_axpy(J, -1.0, scratch, 3 * nv);
  }
  if (c->type == MR_ROWS_POINT) return;
  /* rotate into the contact frame: row k of the result is frame column kᵀ J_world */
  for (int j = 0; j < nv; ++j) {
    mr_vec3 col = mr_v3(J[j], J[nv + j], J[2 * nv + j]);
    mr_vec3 r = mr_m3_tmulv(&c->frame, col);
    J[j] = r.v[0], J[nv + j] = r.v[1], J[2 * nv + j] = r.v[2];
  }
}

/* the gap correction of one contact (velocity units), docs/solvers.md "The gap correction":
 * (Φ + d)/Δt on the band Φ ≥ −δ (every contact aims at Φ = −d, d the rest depth, at the end of
 * the step: the same law above and below zero, so it is affine over a resting patch), continued
 * below −δ with slope k_B: cor = (−δ + k_B (Φ + δ)) / Δt (the push-out speed is capped at δ/Δt
 * plus Baumgarte) */
static double gap_correction(double phi, const mr_assembly_settings *s) {
  if (phi >= -s->band) return (phi + s->rest_depth) / s->dt;
  return (-s->band + s->baumgarte * (phi + s->band)) / s->dt;
}

/* the normal velocity correction of one contact (velocity units): the gap correction, except
 * for an open contact (no normal force last step) approaching faster than the restitution
 * threshold (an impact). While its approach does not close the gap within the step, the gap
 * correction alone applies (the contact stays open, so the next step is still an impact, and an
 * impact slower than margin/Δt still rebounds with e); when it does, the target is e J_N v alone
 * (adding Φ/Δt would cut the rebound by up to margin/Δt, docs/physics.md, A7); an impact that
 * starts in penetration takes e J_N v + k_B Φ/Δt (a push-out Φ/Δt would add up to δ/Δt to the
 * rebound) */
static double normal_correction(const mr_contact_geometry *c, double vn,
                                const mr_assembly_settings *s) {
  if (!(c->is_new && c->restitution > 0.0 && vn < -s->restitution_threshold))
    return gap_correction(c->phi, s);
  /* an open gap that this step's approach does not close: no impact yet */
  if (c->phi > -vn * s->dt) return gap_correction(c->phi, s);
  /* an impact within this step: the rebound target replaces the gap term */
  if (c->phi >= 0.0) return c->restitution * vn;
  /* an impact that starts in penetration: the rebound plus the Baumgarte term */
  return s->baumgarte * c->phi / s->dt + c->restitution * vn;
}

mr_status mr_contact_assemble(const mr_model *m, mr_data *d, const mr_contact_geometry *contacts,
                              int nc, const double *v, const double *vf,
                              const mr_assembly_settings *s, mr_contact_assembly *a,
                              mr_error *err) {
  int nv = m->nv, n = 3 * nc;
  if (nc > a->max_contacts || nv != a->nv)
    return mr_error_set(err, MR_ERR_NOMEM, "assembly: %d contacts exceed the bound of %d", nc,
                        a->max_contacts);
  if (!(s->dt > 0.0))
    return mr_error_set(err, MR_ERR_INVALID, "assembly: time step %g must be > 0", s->dt);
  if (!(s->band >= 0.0) || !isfinite(s->band))
    return mr_error_set(err, MR_ERR_INVALID, "assembly: gap band %g must be finite and >= 0",
                        s->band);
  if (!(s->rest_depth >= 0.0 && s->rest_depth <= s->band))
    return mr_error_set(err, MR_ERR_INVALID, "assembly: rest depth %g must be in [0, band %g]",
                        s->rest_depth, s->band);
  /* J, one 3-row block per contact; MiJt doubles as scratch for the second body's Jacobian */
  for (int i = 0; i < nc; ++i)
    mr_contact_jacobian(m, d, &contacts[i], a->J + (size_t)3 * i * nv, a->MiJt);
  /* rows of M⁻¹ Jᵀ by tree-sparse solves */
  for (int r = 0; r < n; ++r) {
    double *x = a->MiJt + (size_t)r * nv;
    mr_copy(x, a->J + (size_t)r * nv, nv);
    mr_ldlt_solve(m, d, x);
  }
  /* G = J (M⁻¹ Jᵀ), symmetric: compute the upper triangle and mirror it */
  for (int r = 0; r < n; ++r)
    for (int k = r; k < n; ++k) {
      double gij = mr_dot(a->J + (size_t)r * nv, a->MiJt + (size_t)k * nv, nv);
      a->G[(size_t)r * n + k] = a->G[(size_t)k * n + r] = gij;
    }
  /* g = (J v_f + cor) / Δt, per contact; a point constraint's correction is its error */
  int bilateral = 0;
  for (int i = 0; i < nc; ++i) {
    const mr_contact_geometry *c = &contacts[i];
    const double *Ji = a->J + (size_t)3 * i * nv;
    for (int k = 0; k < 3; ++k) {
      a->vel[3 * i + k] = mr_dot(Ji + (size_t)k * nv, v, nv);
      a->g[3 * i + k] = mr_dot(Ji + (size_t)k * nv, vf, nv) / s->dt;
    }
    int bil = c->type == MR_ROWS_POINT || c->type == MR_ROWS_MIMIC;
    a->kind[i] = bil ? MR_KIND_BILATERAL : MR_KIND_CONTACT;
    bilateral |= a->kind[i] == MR_KIND_BILATERAL;
    if (c->type == MR_ROWS_POINT) {
      mr_vec3 e = mr_v3_sub(c->point, c->point2);
      for (int k = 0; k < 3; ++k)
        a->g[3 * i + k] += c->baumgarte * e.v[k] / (s->dt * s->dt);
    } else if (c->type == MR_ROWS_MIMIC) {
      a->g[3 * i + 2] += c->baumgarte * c->phi / (s->dt * s->dt);
    } else {
      a->g[3 * i + 2] += normal_correction(c, a->vel[3 * i + 2], s) / s->dt;
    }
    a->mu[i] = c->mu;
    a->phi[i] = c->phi;
    a->R[3 * i] = a->R[3 * i + 1] = c->tangential_compliance;
    a->R[3 * i + 2] = c->compliance;
  }
  mr_contact_problem *p = &a->problem;
  memset(p, 0, sizeof *p);
  p->nc = nc;
  p->G = a->G;
  p->g = a->g;
  p->mu = a->mu;
  p->R = a->R;
  p->phi = a->phi;
  p->vel = a->vel;
  p->dt = s->dt;
  p->kind = bilateral ? a->kind : NULL;
  return MR_OK;
}

void mr_contact_impulse_velocity(const mr_contact_assembly *a, const double *lambda, double dt,
                                 double *dv) {
  int n = 3 * a->problem.nc;
  mr_zero(dv, a->nv);
  for (int r = 0; r < n; ++r)
    mr_axpy(dv, dt * lambda[r], a->MiJt + (size_t)r * a->nv, a->nv);
}
