/* Internal to the dynamics module: joint kinds and their dispatch table, the workspace that
 * mr_data_create allocates behind d->work, and inertias in "origin form".
 *
 * Origin form of a spatial inertia (used where inertias are summed in one frame, CRBA and ABA):
 * mass m, first moment h = m c and rotational inertia I about the frame origin, i.e. the 6x6
 * matrix [[m 1, -[h]x], [[h]x, I]] in (linear, angular) ordering. Sums are plain sums. */
#ifndef MOREAU_DYNAMICS_INTERNAL_H
#define MOREAU_DYNAMICS_INTERNAL_H

#include <stddef.h>

#include "moreau/dynamics.h"

/* joint kinds: the model's joint types, with revolute joints about x, y or z split out */
enum {
  JK_NONE = 0,
  JK_REV_X,
  JK_REV_Y,
  JK_REV_Z,
  JK_REV,
  JK_PRISMATIC,
  JK_SPHERICAL,
  JK_FREE,
  JK_COUNT
};

/* liMi = body placement ∘ joint motion(q), q pointing at the joint's coordinates */
typedef void (*mr_joint_place_fn)(const mr_body *b, const double *restrict q, mr_se3 *liMi);
extern const mr_joint_place_fn mr_joint_place[JK_COUNT];

/* the kind of a joint, and its motion subspace columns S (nv of them, constant in the child
 * frame for every joint type of the model) */
int mr_joint_kind(const mr_joint *j);
void mr_joint_subspace(const mr_joint *j, mr_motion *S);

typedef struct {
  double m;
  mr_vec3 h;
  mr_mat3 I;
} mr_oinertia;

/* workspace behind d->work */
typedef struct {
  void *block;         /* the allocation holding every array of mr_data but M and U */
  void *tri;           /* the allocation holding M and U */
  unsigned char *kind; /* joint kind per body (nb) */
  int *dof_body;       /* body of each dof (nv) */
  mr_motion *S;        /* motion subspace columns in the body frame, per dof (nv) */
  mr_motion *oS;       /* the same in the world frame, at the world origin (nv) */
  mr_force *F;         /* CRBA: composite inertia times oS, per dof (nv); ABA: Ia oS */
  mr_oinertia *oY;     /* inertias (composite in CRBA) in the world frame, origin form (nb) */
  mr_motion *ov, *oa;  /* ABA: world spatial velocity and acceleration (nb) */
  mr_motion *oc;       /* ABA: velocity-product acceleration (nb) */
  mr_force *opA;       /* ABA: bias forces (nb) */
  double *Ia;          /* ABA: articulated inertias, 6x6 row-major each (nb x 36) */
  double *Dab;         /* ABA: inverse of Sᵀ Ia S + armature, nv_i x nv_i per body (nb x 36) */
  double *u;           /* ABA: Dinv (τ − Sᵀ pA), per dof (nv) */
  double *tmp;         /* LDLᵀ: scratch (nv + 4) */
  double *q_placed;    /* the q of liMi and oMi, valid when placed (nq) */
  int placed;          /* liMi and oMi are those of q_placed */
  int contiguous;      /* every dof's subtree is the range k .. k + nvSubtree[k] − 1 */
} mr_dyn_work;

static inline mr_dyn_work *mr_work(const mr_data *d) {
  return (mr_dyn_work *)d->work;
}

/* placements liMi and oMi of every body from q (d->q is updated); nothing to compute when they
 * are already those of q, bit for bit (a step's collision detection, CRBA and RNEA all place the
 * bodies at the same q) */
void mr_dyn_placements(const mr_model *m, mr_data *d, const double *q);
/* world subspace columns w->oS and world inertias w->oY (origin form), after the placements */
void mr_dyn_world_terms(const mr_model *m, mr_data *d);

/* a body inertia (mass, com, inertia about com, in frame B) in origin form in frame A, given the
 * placement of B in A */
static inline mr_oinertia mr_oinertia_from(const mr_se3 *a, const mr_inertia *Y) {
  mr_oinertia r;
  mr_vec3 c = mr_se3_act_point(a, Y->c);
  r.m = Y->m;
  r.h = mr_v3_scale(c, Y->m);
  r.I = mr_m3_rotate(&a->R, &Y->I);
  /* parallel axis: + m (|c|² 1 − c cᵀ) */
  double cc = mr_v3_dot(c, c);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j)
      r.I.m[i][j] -= r.h.v[i] * c.v[j];
    r.I.m[i][i] += Y->m * cc;
  }
  return r;
}

static inline void mr_oinertia_add(mr_oinertia *a, const mr_oinertia *b) {
  a->m += b->m;
  a->h = mr_v3_add(a->h, b->h);
  a->I = mr_m3_add(&a->I, &b->I);
}

/* momentum (m v − h × w, I w + h × v) */
static inline mr_force mr_oinertia_mul(const mr_oinertia *Y, mr_motion x) {
  mr_force f;
  f.f = mr_v3_sub(mr_v3_scale(x.v, Y->m), mr_v3_cross(Y->h, x.w));
  f.n = mr_v3_add(mr_m3_mulv(&Y->I, x.w), mr_v3_cross(Y->h, x.v));
  return f;
}

/* the 6x6 matrix of an origin-form inertia, row-major, (linear, angular) ordering */
static inline void mr_oinertia_matrix(const mr_oinertia *Y, double *restrict A) {
  const double hx = Y->h.v[0], hy = Y->h.v[1], hz = Y->h.v[2];
  const double H[3][3] = {{0, -hz, hy}, {hz, 0, -hx}, {-hy, hx, 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      A[i * 6 + j] = i == j ? Y->m : 0.0;
      A[i * 6 + j + 3] = -H[i][j];
      A[(i + 3) * 6 + j] = H[i][j];
      A[(i + 3) * 6 + j + 3] = Y->I.m[i][j];
    }
}

/* Σ S_k x_k over a joint's nv columns (nv >= 1) */
static inline mr_motion mr_joint_motion(const mr_motion *S, const double *x, int nv) {
  mr_motion r = mr_motion_scale(S[0], x[0]);
  for (int k = 1; k < nv; ++k)
    r = mr_motion_add(r, mr_motion_scale(S[k], x[k]));
  return r;
}

#endif
