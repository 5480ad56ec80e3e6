/* Energies and centre of mass:
 *   T = ½ Σ vᵢᵀ Iᵢ vᵢ + ½ Σ armature_k v_k²   (= ½ vᵀ M v, M including the armature)
 *   V = −Σ mᵢ gᵀ cᵢ                          (cᵢ the world centre of mass of body i)
 *   c = Σ mᵢ cᵢ / Σ mᵢ. */
#include "dynamics/internal.h"

double mr_kinetic_energy(const mr_model *m, mr_data *d, const double *q, const double *v) {
  mr_forward_kinematics(m, d, q, v, NULL);
  double T = 0.0;
  for (int i = 1; i < m->nbodies; ++i)
    T += mr_force_dot(mr_inertia_mul(&m->bodies[i].inertia, d->vb[i]), d->vb[i]);
  for (int k = 0; k < m->nv; ++k)
    T += m->armature[k] * v[k] * v[k];
  return 0.5 * T;
}

double mr_potential_energy(const mr_model *m, mr_data *d, const double *q) {
  mr_dyn_placements(m, d, q);
  double V = 0.0;
  for (int i = 1; i < m->nbodies; ++i) {
    mr_vec3 c = mr_se3_act_point(&d->oMi[i], m->bodies[i].inertia.c);
    V -= m->bodies[i].inertia.m * mr_v3_dot(m->gravity, c);
  }
  return V;
}

mr_vec3 mr_center_of_mass(const mr_model *m, mr_data *d, const double *q) {
  mr_dyn_placements(m, d, q);
  mr_vec3 s = mr_v3_zero();
  double mass = 0.0;
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_inertia *Y = &m->bodies[i].inertia;
    s = mr_v3_madd(s, Y->m, mr_se3_act_point(&d->oMi[i], Y->c));
    mass += Y->m;
  }
  return mass > 0.0 ? mr_v3_scale(s, 1.0 / mass) : s;
}
