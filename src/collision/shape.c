/* Shapes: local bounding boxes and support functions (argmax of ⟨x, d⟩ over the shape) of every
 * bounded geometry type, the contact frame (Frisvad's orthonormal basis) and the material
 * combination rule. */
#include <math.h>
#include <stddef.h>

#include "collision/narrow.h"

/* a unit vector along d, or +z when d is zero */
static mr_vec3 unit_or_z(mr_vec3 d) {
  double n = mr_v3_norm(d);
  return n > 0.0 ? mr_v3_scale(d, 1.0 / n) : mr_v3(0, 0, 1);
}

static mr_vec3 support_box(const double *h, mr_vec3 d) {
  return mr_v3(d.v[0] >= 0 ? h[0] : -h[0], d.v[1] >= 0 ? h[1] : -h[1], d.v[2] >= 0 ? h[2] : -h[2]);
}

/* capsule: the segment end along d plus the radius along d */
static mr_vec3 support_capsule(const double *s, mr_vec3 d) {
  mr_vec3 u = unit_or_z(d);
  return mr_v3(s[0] * u.v[0], s[0] * u.v[1], (d.v[2] >= 0 ? s[1] : -s[1]) + s[0] * u.v[2]);
}

/* cylinder: the rim point along the radial part of d, on the cap along d */
static mr_vec3 support_cylinder(const double *s, mr_vec3 d) {
  double r = sqrt(d.v[0] * d.v[0] + d.v[1] * d.v[1]);
  double z = d.v[2] >= 0 ? s[1] : -s[1];
  if (r <= 0.0) return mr_v3(0, 0, z);
  return mr_v3(s[0] * d.v[0] / r, s[0] * d.v[1] / r, z);
}

/* ellipsoid x = D u, |u| = 1: argmax ⟨D u, d⟩ gives x = D² d / |D d| */
static mr_vec3 support_ellipsoid(const double *s, mr_vec3 d) {
  mr_vec3 Dd = mr_v3(s[0] * d.v[0], s[1] * d.v[1], s[2] * d.v[2]);
  double n = mr_v3_norm(Dd);
  if (n <= 0.0) return mr_v3(0, 0, s[2]);
  return mr_v3(s[0] * Dd.v[0] / n, s[1] * Dd.v[1] / n, s[2] * Dd.v[2] / n);
}

/* mesh: the hull vertex (or any vertex before the hull is computed) furthest along d */
static mr_vec3 support_mesh(const mr_mesh *m, mr_vec3 d) {
  const double *v = m && m->nhull > 0 ? m->hull : m ? m->vert : NULL;
  int n = m ? (m->nhull > 0 ? m->nhull : m->nvert) : 0;
  if (n == 0) return mr_v3_zero();
  int best = 0;
  double bd = -INFINITY;
  for (int i = 0; i < n; ++i) {
    double t = v[3 * i] * d.v[0] + v[3 * i + 1] * d.v[1] + v[3 * i + 2] * d.v[2];
    if (t > bd) bd = t, best = i;
  }
  return mr_v3(v[3 * best], v[3 * best + 1], v[3 * best + 2]);
}

mr_vec3 mr_geom_support(const mr_geom *g, mr_vec3 d) {
  switch (g->type) {
  case MR_GEOM_SPHERE:
    return mr_v3_scale(unit_or_z(d), g->size[0]);
  case MR_GEOM_BOX:
    return support_box(g->size, d);
  case MR_GEOM_CAPSULE:
    return support_capsule(g->size, d);
  case MR_GEOM_CYLINDER:
    return support_cylinder(g->size, d);
  case MR_GEOM_ELLIPSOID:
    return support_ellipsoid(g->size, d);
  case MR_GEOM_MESH:
    return support_mesh(g->mesh, d);
  default:
    return mr_v3_zero();
  }
}

mr_vec3 shape_support(const shape *s, mr_vec3 d) {
  mr_vec3 dl = mr_m3_tmulv(&s->X.R, d);
  return mr_se3_act_point(&s->X, mr_geom_support(s->g, dl));
}

/* heightfield bounds in its own frame */
static int hfield_aabb(const mr_hfield *h, mr_vec3 *lo, mr_vec3 *hi) {
  if (!h) return 0;
  *lo = mr_v3(h->x0, h->y0, h->hmin - h->base);
  *hi = mr_v3(h->x0 + (h->nx - 1) * h->dx, h->y0 + (h->ny - 1) * h->dy, h->hmax);
  return 1;
}

int mr_geom_local_aabb(const mr_geom *g, mr_vec3 *lo, mr_vec3 *hi) {
  const double *s = g->size;
  switch (g->type) {
  case MR_GEOM_HALFSPACE:
    return 0;
  case MR_GEOM_HEIGHTFIELD:
    return hfield_aabb(g->hfield, lo, hi);
  case MR_GEOM_SPHERE:
    *hi = mr_v3(s[0], s[0], s[0]);
    break;
  case MR_GEOM_CAPSULE:
    *hi = mr_v3(s[0], s[0], s[0] + s[1]);
    break;
  case MR_GEOM_CYLINDER:
    *hi = mr_v3(s[0], s[0], s[1]);
    break;
  case MR_GEOM_MESH: {
    /* the extreme hull vertices along ±x, ±y, ±z */
    for (int k = 0; k < 3; ++k) {
      mr_vec3 e = mr_v3_zero();
      e.v[k] = 1.0;
      hi->v[k] = mr_geom_support(g, e).v[k];
      lo->v[k] = mr_geom_support(g, mr_v3_neg(e)).v[k];
    }
    return 1;
  }
  default:
    *hi = mr_v3(s[0], s[1], s[2]);
    break;
  }
  *lo = mr_v3_neg(*hi);
  return 1;
}

double geom_skin(const mr_geom *g) {
  mr_vec3 lo, hi;
  if (g->type == MR_GEOM_HEIGHTFIELD || !mr_geom_local_aabb(g, &lo, &hi)) return 0.0;
  return 1e-6 * 0.5 * mr_v3_norm(mr_v3_sub(hi, lo));
}

mr_mat3 mr_contact_frame(mr_vec3 n) {
  mr_vec3 t1, t2;
  /* Frisvad's basis, whose 1/(1 + n_z) loses accuracy near the pole n_z = -1; there (below
   * -0.9999999) the same construction about -z (Duff et al. 2017), c = 1/(1 - n_z), its tangents
   * ordered so that they are (0, -1, 0) and (-1, 0, 0) at the pole itself */
  if (n.v[2] < -0.9999999) {
    double c = 1.0 / (1.0 - n.v[2]), b = n.v[0] * n.v[1] * c;
    t1 = mr_v3(b, -1.0 + n.v[1] * n.v[1] * c, -n.v[1]);
    t2 = mr_v3(-1.0 + n.v[0] * n.v[0] * c, b, -n.v[0]);
  } else {
    double a = 1.0 / (1.0 + n.v[2]), b = -n.v[0] * n.v[1] * a;
    t1 = mr_v3(1.0 - n.v[0] * n.v[0] * a, b, -n.v[0]);
    t2 = mr_v3(b, 1.0 - n.v[1] * n.v[1] * a, -n.v[1]);
  }
  mr_mat3 F;
  for (int i = 0; i < 3; ++i)
    F.m[i][0] = t1.v[i], F.m[i][1] = t2.v[i], F.m[i][2] = n.v[i];
  return F;
}

void mr_material_combine(const mr_geom *a, const mr_geom *b, double *mu, double *e, double *R) {
  *mu = sqrt(a->friction * b->friction);
  *e = a->restitution > b->restitution ? a->restitution : b->restitution;
  *R = a->compliance + b->compliance;
}

double mr_material_combine_tangential(const mr_geom *a, const mr_geom *b) {
  return a->tangential_compliance + b->tangential_compliance;
}
