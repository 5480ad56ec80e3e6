/* Contact problem assembly (see assembly.h): J from the point Jacobians of the two bodies
 * rotated into each contact frame, G = J M⁻¹ Jᵀ with one tree-sparse solve per row of J, and g
 * with the gap, Baumgarte and restitution corrections of DESIGN.md §4 (the consistent gap law of
 * docs/solvers.md: cor_N = Φ/Δt for Φ ≥ −δ, −δ/Δt + k_B (Φ + δ)/Δt below), in force units. Joint
 * limits enter as frictionless contacts whose only nonzero row selects the joint's velocity; point
 * constraints as bilateral blocks (problem.kind) corrected by their position error; joint
 * friction as box blocks (MR_KIND_BOX) on one joint velocity, uncorrected. */
#include "moreau/assembly.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/lanes.h"
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
  a->rest = calloc(cap, sizeof(double));
  a->rebound = calloc(cap, sizeof(double));
  a->kind = calloc(cap, 1);
  if (!a->J || !a->MiJt || !a->G || !a->g || !a->mu || !a->R || !a->phi || !a->vel || !a->rest ||
      !a->rebound || !a->kind) {
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
  free(a->rest);
  free(a->rebound);
  free(a->kind);
  memset(a, 0, sizeof *a);
}

/* the second dof of a joint coupling or of a limit on two joints, −1 otherwise */
static int second_dof(const mr_contact_geometry *c) {
  int two = c->type == MR_ROWS_MIMIC || (c->type == MR_ROWS_LIMIT && c->ratio != 0.0);
  return two ? c->dof2 : -1;
}

/* column j of a 3-row J (row stride ncols) into the contact frame: row k of the result is frame
 * column kᵀ J_world (a column off every path, all zero, left as it is) */
static void frame_column(const mr_contact_geometry *c, int ncols, int j, double *J) {
  if (J[j] == 0.0 && J[ncols + j] == 0.0 && J[2 * ncols + j] == 0.0) return;
  mr_vec3 cj = mr_v3(J[j], J[ncols + j], J[2 * ncols + j]);
  mr_vec3 r = mr_m3_tmulv(&c->frame, cj);
  J[j] = r.v[0], J[ncols + j] = r.v[1], J[2 * ncols + j] = r.v[2];
}

/* 1 when dof is on the path from body to the root */
static int on_path(const mr_model *m, const mr_data *d, int body, int dof) {
  for (int k = mr_body_last_dof(m, body); k >= 0; k = d->parent_dof[k])
    if (k == dof) return 1;
  return 0;
}

/* the world motion columns of the last two bodies' paths met (a body's contacts come one after
 * another): mr_path_world_columns's, formed once for all of them */
#define PATH_MEMO_DOFS 16
typedef struct {
  int body[2], n[2], next;
  int dofs[2][PATH_MEMO_DOFS];
  double cols[2][6 * PATH_MEMO_DOFS];
} path_memo;

/* the point's columns on the body's path added into J (sign > 0) or subtracted (sign < 0):
 * mr_point_jacobian_add's entries, v + ω × x per column, from the memo's columns */
static void path_point_add(const mr_model *m, mr_data *d, path_memo *pm, int body, mr_vec3 point,
                           const int *col, int ncols, int sign, double *J) {
  int s = pm->body[0] == body ? 0 : pm->body[1] == body ? 1 : -1;
  if (s < 0) {
    int last = mr_body_last_dof(m, body), n = 0;
    for (int k = last; k >= 0 && n <= PATH_MEMO_DOFS; k = d->parent_dof[k])
      ++n;
    if (n > PATH_MEMO_DOFS) { /* a path longer than the memo holds */
      mr_point_jacobian_add(m, d, body, point, col, ncols, sign, J);
      return;
    }
    s = pm->next, pm->next ^= 1;
    pm->body[s] = body;
    pm->n[s] = mr_path_world_columns(m, d, last, pm->cols[s], pm->dofs[s]);
  }
  for (int t = 0; t < pm->n[s]; ++t) {
    const double *c = pm->cols[s] + 6 * t;
    mr_vec3 vp = mr_v3_add(mr_v3(c[0], c[1], c[2]), mr_v3_cross(mr_v3(c[3], c[4], c[5]), point));
    int k = pm->dofs[s][t], j = col ? col[k] : k;
    for (int r = 0; r < 3; ++r) {
      double *x = &J[r * ncols + j];
      *x = sign > 0 ? *x + vp.v[r] : *x - vp.v[r];
    }
  }
}

/* the world-frame relative point Jacobian J₁ − J₂ of a two-body contact added into J, whose rows
 * are zero on entry, and rotated into the contact frame: work on the two paths alone (an
 * island's J is as wide as its dofs), the same entries as contact_jacobian's */
static void path_jacobian(const mr_model *m, mr_data *d, path_memo *pm,
                          const mr_contact_geometry *c, const int *col, int ncols, double *J) {
  mr_vec3 p2 = c->type == MR_ROWS_POINT ? c->point2 : c->point;
  path_point_add(m, d, pm, c->body1, c->point, col, ncols, 1, J);
  path_point_add(m, d, pm, c->body2, p2, col, ncols, -1, J);
  if (c->type == MR_ROWS_POINT) return;
  int root1 = -1, root2 = -1;
  for (int k = mr_body_last_dof(m, c->body1); k >= 0; k = d->parent_dof[k])
    frame_column(c, ncols, col ? col[k] : k, J), root1 = k;
  for (int k = mr_body_last_dof(m, c->body2); k >= 0; k = d->parent_dof[k])
    root2 = k;
  /* body 2's path up to the first dof on body 1's (the rest of it is on body 1's path too); the
   * paths of two trees share none */
  for (int k = mr_body_last_dof(m, c->body2); k >= 0; k = d->parent_dof[k]) {
    if (root1 == root2 && on_path(m, d, c->body1, k)) break;
    frame_column(c, ncols, col ? col[k] : k, J);
  }
}

/* the contact Jacobian with dof k in column col[k] of ncols (col NULL: k of nv) */
static void contact_jacobian(const mr_model *m, mr_data *d, const mr_contact_geometry *c,
                             const int *col, int ncols, double *J, double *scratch) {
  mr_zero(J, 3 * ncols);
#define COL(k) (col ? col[k] : (k))
  /* a joint limit (on one dof, or on two coupled by a tendon) or a joint's friction: the normal
   * row selects the dof */
  if (c->type == MR_ROWS_LIMIT || c->type == MR_ROWS_FRICTION) {
    J[2 * ncols + COL(c->dof)] = c->type == MR_ROWS_LIMIT ? c->sign : 1.0;
    if (second_dof(c) >= 0) J[2 * ncols + COL(c->dof2)] -= c->sign * c->ratio;
    return;
  }
  /* a joint coupling: v_dof − ratio v_dof2 */
  if (c->type == MR_ROWS_MIMIC) {
    J[2 * ncols + COL(c->dof)] = 1.0;
    J[2 * ncols + COL(c->dof2)] -= c->ratio;
    return;
  }
#undef COL
  /* world-frame relative point velocity Jacobian: J₁ − J₂ (a point constraint: at its two
   * anchors, left in the world frame) */
  if (c->body1 > 0) mr_point_jacobian_cols(m, d, c->body1, c->point, col, ncols, J);
  if (c->body2 > 0) {
    mr_point_jacobian_cols(m, d, c->body2, c->type == MR_ROWS_POINT ? c->point2 : c->point, col,
                           ncols, scratch);
    mr_axpy(J, -1.0, scratch, 3 * ncols);
  }
  if (c->type == MR_ROWS_POINT) return;
  /* rotate into the contact frame */
  for (int j = 0; j < ncols; ++j)
    frame_column(c, ncols, j, J);
}

void mr_contact_jacobian(const mr_model *m, mr_data *d, const mr_contact_geometry *c, double *J,
                         double *scratch) {
  contact_jacobian(m, d, c, NULL, m->nv, J, scratch);
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

/* the gaps of one face's corners that a step's travel closes together differ by round-off (a
 * cube meeting a wall flat: 7e-14 m of 1 mm): within this fraction of the travel they close
 * together, so a flat impact rebounds from every corner and does not turn the body */
#define IMPACT_TOL 1e-6

/* An impact: an open contact (no normal force last step) approaching faster than the
 * restitution threshold whose gap its free motion closes within the step (Φ ≤ −Δt J_N v_f,
 * vnf = J_N v_f). While its approach does not close the gap the gap correction alone applies
 * (the contact stays open, so the next step is still an impact, and an impact slower than
 * margin/Δt still rebounds with e; the test on v_f rather than v sees an impact that the step's
 * own acceleration completes, which would otherwise be caught plastically by the gap law). */
static int closing_impact(const mr_contact_geometry *c, double vn, double vnf,
                          const mr_assembly_settings *s) {
  double travel = -vnf * s->dt;
  return c->is_new && c->restitution > 0.0 && vn < -s->restitution_threshold &&
         c->phi <= travel + IMPACT_TOL * fabs(travel);
}

/* a rebound deferred to this step by the contact's impact at Φ > 0 last step, where it landed:
 * it carried force, or its gap is closed (another contact of a landing face took the force; to
 * 1e-6 of the rebound's travel in a step, the round-off of a face's corners). A contact that
 * another one stopped short of the surface keeps no rebound. */
static int pending(const mr_contact_geometry *c, const mr_assembly_settings *s) {
  return c->rebound > 0.0 && (!c->is_new || c->phi <= IMPACT_TOL * c->rebound * s->dt);
}

/* The rebound target applies now to an impact decided in penetration and to a rebound deferred
 * from the step before. At an impact the target e J_N v replaces the gap term (adding Φ/Δt
 * would cut the rebound by up to margin/Δt, docs/physics.md, A7); one that starts in
 * penetration adds k_B Φ/Δt, no push-out (a push-out Φ/Δt would add up to δ/Δt to the
 * rebound). */
int mr_contact_impact(const mr_contact_geometry *c, double vn, double vnf,
                      const mr_assembly_settings *s) {
  if (pending(c, s)) return 1;
  return c->phi <= 0.0 && closing_impact(c, vn, vnf, s);
}

/* An impact decided at Φ > 0 lands with the gap law in this step and rebounds in the next:
 * the free motion's normal gap Φ + vc t + a t²/2 (vc = (vn + vnf)/2 the normal velocity at the
 * step's start, a = (vnf − vn)/Δt) reaches 0 at the speed u, u² = vc² − 2 a Φ; leaving the
 * surface at e u at the start of the next step takes w = e u + a Δt/2 as that step's velocity
 * (semi-implicit Euler's velocity is the mid-step one), docs/physics.md "Deferred rebound" */
double mr_contact_deferred_rebound(const mr_contact_geometry *c, double vn, double vnf,
                                   const mr_assembly_settings *s) {
  if (!(c->phi > 0.0) || !closing_impact(c, vn, vnf, s)) return 0.0;
  double a = (vnf - vn) / s->dt, vc = 0.5 * (vn + vnf);
  double u = sqrt(fmax(vc * vc - 2.0 * a * c->phi, 0.0));
  return fmax(c->restitution * u + 0.5 * a * s->dt, 0.0);
}

mr_normal_correction mr_contact_normal_correction(const mr_contact_geometry *c, double vn,
                                                  int impact, const mr_assembly_settings *s) {
  if (!impact) {
    double slope = c->phi >= -s->band ? 1.0 / s->dt : s->baumgarte / s->dt;
    return (mr_normal_correction){gap_correction(c->phi, s), 0.0, slope};
  }
  double rest = pending(c, s) ? -c->rebound : c->restitution * vn;
  if (c->phi >= 0.0) return (mr_normal_correction){0.0, rest, 0.0};
  return (mr_normal_correction){s->baumgarte * c->phi / s->dt, rest, s->baumgarte / s->dt};
}

/* Σ a_t b[dofs[t]] (dofs NULL: a · b) */
static double dot_dofs(const double *a, const double *b, const int *dofs, int n) {
  if (!dofs) return mr_dot(a, b, n);
  double s = 0.0;
  for (int t = 0; t < n; ++t)
    s += a[t] * b[dofs[t]];
  return s;
}

/* J v and J v_f (vel, g) of block i's three rows of J over its tree-sparse support, in
 * ascending dof order (the other terms of the dense dots are exact zeros, so the same bits): the
 * six sums side by side, each in its own order */
static void row_dots(const double *J, const double *v, const double *vf,
                     const mr_assembly_subset *sub, int i, int nv, double *vel, double *g) {
  const int *S = sub->support + (size_t)i * nv;
  const double *J1 = J + nv, *J2 = J1 + nv;
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, f0 = 0.0, f1 = 0.0, f2 = 0.0;
  for (int t = sub->nsupport[i] - 1; t >= 0; --t) {
    const int k = S[t], c = sub->col[k];
    const double vk = v[k], fk = vf[k];
    s0 += J[c] * vk, s1 += J1[c] * vk, s2 += J2[c] * vk;
    f0 += J[c] * fk, f1 += J1[c] * fk, f2 += J2[c] * fk;
  }
  vel[0] = s0, vel[1] = s1, vel[2] = s2;
  g[0] = f0, g[1] = f1, g[2] = f2;
}

static mr_status check_settings(const mr_assembly_settings *s, mr_error *err) {
  if (!(s->dt > 0.0))
    return mr_error_set(err, MR_ERR_INVALID, "assembly: time step %g must be > 0", s->dt);
  if (!(s->band >= 0.0) || !isfinite(s->band))
    return mr_error_set(err, MR_ERR_INVALID, "assembly: gap band %g must be finite and >= 0",
                        s->band);
  if (!(s->rest_depth >= 0.0 && s->rest_depth <= s->band))
    return mr_error_set(err, MR_ERR_INVALID, "assembly: rest depth %g must be in [0, band %g]",
                        s->rest_depth, s->band);
  return MR_OK;
}

/* rows of M⁻¹ Jᵀ: in place over every dof, or through the subset's zeroed scratch (left zero),
 * four rows at a time when it has one for four */
static void solve_rows(const mr_model *m, const mr_data *d, const mr_assembly_subset *sub,
                       mr_contact_assembly *a, int n) {
  int nv = a->nv;
  for (int r = 0; r < n; ++r) {
    double *x = a->MiJt + (size_t)r * nv;
    const double *Jr = a->J + (size_t)r * nv;
    if (!sub) {
      mr_copy(x, Jr, nv);
      mr_ldlt_solve(m, d, x);
      continue;
    }
    if (sub->x4) { /* rows r … r + 3 side by side */
      int nr = n - r < 4 ? n - r : 4;
      for (int t = 0; t < nv; ++t)
        for (int l = 0; l < nr; ++l)
          sub->x4[4 * (size_t)sub->dofs[t] + l] = Jr[(size_t)l * nv + t];
      mr_ldlt_solve_dofs4(m, d, sub->dofs, nv, sub->x4);
      for (int t = 0; t < nv; ++t) {
        double *x4 = sub->x4 + 4 * (size_t)sub->dofs[t];
        for (int l = 0; l < nr; ++l)
          x[(size_t)l * nv + t] = x4[l];
        x4[0] = x4[1] = x4[2] = x4[3] = 0.0;
      }
      r += nr - 1;
      continue;
    }
    for (int t = 0; t < nv; ++t)
      sub->x[sub->dofs[t]] = Jr[t];
    mr_ldlt_solve_dofs(m, d, sub->dofs, nv, sub->x);
    for (int t = 0; t < nv; ++t) {
      x[t] = sub->x[sub->dofs[t]];
      sub->x[sub->dofs[t]] = 0.0;
    }
  }
}

/* the last support formed: the last dofs of its two paths, and its dofs */
typedef struct {
  int a, b, n;
  const int *S;
} support_memo;

/* the dofs of a block's kinematic paths, descending: the two chains of parents merged (copied
 * from the last block's when it ends at the same dofs, as a foot's contacts do) */
static int block_support(const mr_model *m, const mr_data *d, const mr_contact_geometry *c,
                         support_memo *memo, int *out) {
  const int *par = d->parent_dof;
  int a, b, n = 0;
  if (c->type == MR_ROWS_LIMIT || c->type == MR_ROWS_MIMIC || c->type == MR_ROWS_FRICTION) {
    a = c->dof, b = second_dof(c);
  } else {
    a = mr_body_last_dof(m, c->body1), b = mr_body_last_dof(m, c->body2);
  }
  if (memo->S && memo->a == a && memo->b == b) {
    memcpy(out, memo->S, (size_t)memo->n * sizeof *out);
    return memo->n;
  }
  *memo = (support_memo){a, b, 0, out};
  while (a >= 0 || b >= 0) {
    int k = a > b ? a : b;
    out[n++] = k;
    if (a == k) a = par[a];
    if (b == k) b = par[b];
  }
  return memo->n = n;
}

/* x ← U⁻¹ x on a support S (descending): x_k −= U_kj x_j over the support's j in k's row
 * (descending j, as the chain form spreads them), a suffix of the dofs before k */
static void solve_support(const mr_data *d, const int *S, int ns, double *x) {
  const double *U = d->U;
  for (int t = 0, t0 = 0; t < ns; ++t) {
    const int k = S[t], last = k + d->row_len[k] - 4;
    const double *Uk = U + d->row_at[k] - k;
    while (t0 < t && S[t0] > last)
      ++t0;
    double xk = x[k];
    for (int j = t0; j < t; ++j)
      xk -= Uk[S[j]] * x[S[j]];
    x[k] = xk;
  }
}

/* the same solve on a path's six rows at once, stored by column (dof S[t]'s six at Y6[6t]): rows
 * 0..3 as one lanes4, 4 and 5 as scalars, each the scalar operations in their order */
static void solve_columns(const mr_data *d, const int *S, int ns, double *Y6) {
  for (int t = 0, t0 = 0; t < ns; ++t) {
    const int k = S[t], last = k + d->row_len[k] - 4;
    const double *Uk = d->U + d->row_at[k] - k;
    while (t0 < t && S[t0] > last)
      ++t0;
    double *yk = Y6 + 6 * (size_t)t, y4 = yk[4], y5 = yk[5];
    lanes4 y, b;
    memcpy(&y, yk, sizeof y);
    for (int j = t0; j < t; ++j) {
      const double u = Uk[S[j]], *yj = Y6 + 6 * (size_t)j;
      memcpy(&b, yj, sizeof b);
      y -= LANES(u) * b;
      y4 -= u * yj[4], y5 -= u * yj[5];
    }
    memcpy(yk, &y, sizeof y);
    yk[4] = y4, yk[5] = y5;
  }
}

/* a contact's rows (a point constraint's world rows) at the columns (v, ω) of a path through its
 * side's body: the velocity v + ω × p of its point, rotated into the contact frame, negated for
 * the second body (the frame negated: the same bits as negating the product) */
typedef struct {
  mr_vec3 p;
  mr_mat3 R;
} point_map;

static point_map point_map_of(const mr_contact_geometry *c, int side) {
  point_map pm = {side && c->type == MR_ROWS_POINT ? c->point2 : c->point,
                  c->type == MR_ROWS_POINT ? mr_m3_identity() : c->frame};
  for (int r = 0; side && r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      pm.R.m[r][k] = -pm.R.m[r][k];
  return pm;
}

/* the operations of contact_jacobian on one column, so the same bits */
static inline mr_vec3 point_rows(const point_map *pm, const double *col6) {
  mr_vec3 w = mr_v3(col6[3], col6[4], col6[5]);
  return mr_m3_tmulv(&pm->R, mr_v3_add(mr_v3(col6[0], col6[1], col6[2]), mr_v3_cross(w, pm->p)));
}

/* the point maps of up to four blocks alone on one body's path, a lane each (unused lanes zero),
 * and the list entries 2i + side they come from */
typedef struct {
  lanes4 p[3], R[3][3];
  int e[4], n;
} point_lanes;

/* point_rows in each lane: the same operations, so the same bits */
static inline void lane_rows(const point_lanes *pl, const double *col6, lanes4 r[3]) {
  const lanes4 v0 = LANES(col6[0]), v1 = LANES(col6[1]), v2 = LANES(col6[2]);
  const lanes4 w0 = LANES(col6[3]), w1 = LANES(col6[4]), w2 = LANES(col6[5]);
  const lanes4 *p = pl->p;
  const lanes4 c0 = v0 + (w1 * p[2] - w2 * p[1]), c1 = v1 + (w2 * p[0] - w0 * p[2]),
               c2 = v2 + (w0 * p[1] - w1 * p[0]);
  for (int k = 0; k < 3; ++k)
    r[k] = pl->R[0][k] * c0 + pl->R[1][k] * c1 + pl->R[2][k] * c2;
}

/* a joint limit's or coupling's block: only the normal row, a combination of one or two dofs'
 * velocities, solved on the block's support (Y by dof, as block_Y lays it out); v and v_f rows
 * into vel and g */
static void dof_row_block(const mr_data *d, const mr_contact_geometry *c, const int *S, int ns,
                          const int *col, double *x, double *J, double *Y, int nv, const double *v,
                          const double *vf, double *vel, double *g) {
  double w1 = c->type == MR_ROWS_LIMIT ? c->sign : 1.0;
  x[c->dof] = w1;
  J[2 * (size_t)nv + col[c->dof]] = w1;
  vel[2] = w1 * v[c->dof], g[2] = w1 * vf[c->dof];
  if (second_dof(c) >= 0) {
    double w2 = w1 * c->ratio;
    x[c->dof2] -= w2;
    J[2 * (size_t)nv + col[c->dof2]] -= w2;
    vel[2] -= w2 * v[c->dof2], g[2] -= w2 * vf[c->dof2];
  }
  solve_support(d, S, ns, x);
  for (int t = 0; t < ns; ++t) {
    double *y = Y + 3 * (size_t)t;
    y[0] = y[1] = 0.0, y[2] = x[S[t]];
    x[S[t]] = 0.0;
  }
}

/* a block's support is one path to a root: each dof's parent follows it */
static int is_chain(const mr_data *d, const int *S, int ns) {
  for (int t = 0; t + 1 < ns; ++t)
    if (d->parent_dof[S[t]] != S[t + 1]) return 0;
  return 1;
}

/* the tree-sparse products' scratch in Gb_work, after block_pattern's nv + 4 nc ints. A unit is
 * the path ending at a dof: every body whose path ends there (a foot and its sole alike). */
typedef struct {
  int *head;  /* per column of a path's last dof: its list of block sides 2i + s, −1 none */
  int *next;  /* per block side: the next on its unit's list */
  int *Su;    /* the dofs of the unit being solved */
  int *units; /* the units' last dofs, in order of first appearance */
  int *chain; /* per block: 1 when its support is one path to a root */
  int *alone; /* per block: 1 when on one body's path only (the other side static) */
  int nu;
} sparse_work;

static sparse_work sparse_work_at(mr_contact_assembly *a, int nc) {
  int *w = a->Gb_work + a->nv + 4 * nc;
  sparse_work s = {.head = w, .Su = w + a->nv, .next = w + 2 * a->nv};
  s.units = s.next + 2 * nc, s.chain = s.units + 2 * nc, s.alone = s.chain + nc;
  return s;
}

/* the next up to four blocks alone on a unit's list from entry *e on, as lanes (*e left at the
 * entry after them); their number */
static int alone_batch(const sparse_work *w, const mr_contact_geometry *contacts,
                       const mr_assembly_subset *sub, int *e, point_lanes *pl) {
  *pl = (point_lanes){.n = 0};
  for (; *e >= 0 && pl->n < 4; *e = w->next[*e]) {
    int i = *e / 2, l = pl->n;
    if (!w->alone[i]) continue;
    point_map pm = point_map_of(&contacts[sub->blocks ? sub->blocks[i] : i], *e % 2);
    for (int k = 0; k < 3; ++k)
      pl->p[k][l] = pm.p.v[k];
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k)
        pl->R[r][k][l] = pm.R.m[r][k];
    pl->e[pl->n++] = *e;
  }
  return pl->n;
}

/* a tree-sparse block's rows of Y = U⁻¹ Jᵀ, by dof: entry (k, t) (row k at its support's t-th
 * dof) at 3 t + k */
static inline double *block_Y(const mr_contact_assembly *a, int ys, int i) {
  return a->MiJt + 3 * (size_t)i * ys;
}

/* the room of a block's rows of Y, in dofs: a support is at most two paths to a root, so twice
 * the longest path among the subset's dofs (the blocks' rows then lie together, 3 ys doubles
 * apart, where nv apart they spread over a page each on a pile of free bodies) */
static int y_stride(const mr_data *d, const mr_assembly_subset *sub, int nv) {
  int longest = 0;
  for (int t = 0; t < nv; ++t) {
    int len = 0;
    for (int k = sub->dofs[t]; k >= 0; k = d->parent_dof[k])
      ++len;
    longest = len > longest ? len : longest;
  }
  return 2 * longest < nv ? 2 * longest : nv;
}

/* the common tail of two paths to a root (descending lists): its length, found by bisection
 * (the lists agree on a suffix and nowhere before it) */
static int common_tail(const int *Si, int ni, const int *Sj, int nj) {
  int lo = 0, hi = ni < nj ? ni : nj; /* agree on lo from the end, not known beyond */
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (Si[ni - mid] == Sj[nj - mid])
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* the common tail of the last two paths compared: a path to a root is its last dof's, so the
 * blocks of one body (a foot's contacts) share it and the bisection runs once per pair of bodies
 * instead of once per pair of blocks */
typedef struct {
  int last_i, last_j, L;
} tail_memo;

static inline int chain_tail(const int *Si, int ni, const int *Sj, int nj, tail_memo *memo) {
  if (Si[0] == Sj[0]) return ni; /* the same path */
  if (memo->last_i != Si[0] || memo->last_j != Sj[0])
    *memo = (tail_memo){Si[0], Sj[0], common_tail(Si, ni, Sj, nj)};
  return memo->L;
}

/* block i's rows of D⁻¹ Y (by dof, as block_Y), formed once for all its blocks of G */
static void scaled_rows(const mr_data *d, const mr_assembly_subset *sub,
                        const mr_contact_assembly *a, int ys, int i, double *Z) {
  const int *S = sub->support + (size_t)i * a->nv;
  const double *Y = block_Y(a, ys, i);
  for (int t = 0; t < sub->nsupport[i]; ++t)
    for (int r = 0; r < 3; ++r)
      Z[3 * t + r] = Y[3 * t + r] * d->Dinv[S[t]];
}

/* acc (rows 0..2 of the block in lanes 0..2, lane 3 unused) += z_i y_jᵀ at one dof k, z_i block
 * i's rows of D⁻¹ Y there and y_j block j's of Y: each entry the same product added in the same
 * order as entry by entry, so the same bits */
static inline void add_term(lanes4 acc[3], const double *zi, const double *yj) {
  const lanes4 b = {yj[0], yj[1], yj[2], 0.0};
  for (int r = 0; r < 3; ++r)
    acc[r] += LANES(zi[r]) * b;
}

/* the 3x3 block Y_iᵀ D⁻¹ Y_j over the intersection of the supports of blocks i and j, in
 * descending dof order: for two paths to a root the common tail of both lists, else their
 * merge. A joint limit's rows 0 and 1 are +0, so their products add +0 to +0 sums: the entries
 * are those of the normal row alone. */
static inline void support_block(const mr_assembly_subset *sub, const mr_contact_assembly *a,
                                 int ys, int i, int j, const double *Zi, const int *chain,
                                 tail_memo *memo, double *acc) {
  int nv = a->nv;
  const int *Si = sub->support + (size_t)i * nv, *Sj = sub->support + (size_t)j * nv;
  int ni = sub->nsupport[i], nj = sub->nsupport[j];
  const double *Yj = block_Y(a, ys, j);
  lanes4 s[3] = {{0.0}, {0.0}, {0.0}};
  if (chain[i] && chain[j]) {
    int L = chain_tail(Si, ni, Sj, nj, memo);
    Zi += 3 * (size_t)(ni - L), Yj += 3 * (size_t)(nj - L);
    for (int t = 0; t < L; ++t)
      add_term(s, Zi + 3 * (size_t)t, Yj + 3 * (size_t)t);
  } else {
    for (int ti = 0, tj = 0; ti < ni && tj < nj;) {
      if (Si[ti] != Sj[tj]) {
        Si[ti] > Sj[tj] ? ++ti : ++tj;
        continue;
      }
      add_term(s, Zi + 3 * (size_t)ti, Yj + 3 * (size_t)tj);
      ++ti, ++tj;
    }
  }
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q)
      acc[3 * r + q] = s[r][q];
}

/* the block-CSR pattern of G: blocks i and j are coupled iff their supports share a dof, that
 * is (the supports being closed under ancestors) a root dof of the kinematic trees. Each block
 * is put on the lists of its (at most two) roots, in descending block order so that every list
 * ascends; a row is the merge of its roots' lists. */
static mr_status block_pattern(const mr_data *d, const mr_assembly_subset *sub,
                               mr_contact_assembly *a, int nc, mr_error *err) {
  int nv = a->nv, *head = a->Gb_work, *next = head + nv, *root = next + 2 * nc;
  const int *par = d->parent_dof;
  for (int t = 0; t < nv; ++t)
    head[t] = -1;
  for (int i = nc - 1; i >= 0; --i) {
    const int *S = sub->support + (size_t)i * nv;
    root[2 * i] = root[2 * i + 1] = -1;
    for (int t = 0, s = 0; t < sub->nsupport[i]; ++t) {
      if (par[S[t]] >= 0) continue;
      int e = 2 * i + s++, c = sub->col[S[t]];
      root[e] = c, next[e] = head[c], head[c] = e;
    }
  }
  size_t nnz = 0;
  a->Gb_row[0] = 0;
  for (int i = 0; i < nc; ++i) {
    /* the list heads, as list entries e (block e / 2) */
    int e0 = root[2 * i] >= 0 ? head[root[2 * i]] : -1;
    int e1 = root[2 * i + 1] >= 0 ? head[root[2 * i + 1]] : -1;
    if (e0 < 0 && e1 < 0 && nnz < a->Gb_cap) a->Gb_col[nnz++] = i; /* no dof: a zero diagonal */
    while ((e0 >= 0 || e1 >= 0) && nnz < a->Gb_cap) {
      int j0 = e0 >= 0 ? e0 / 2 : nc, j1 = e1 >= 0 ? e1 / 2 : nc, j = j0 < j1 ? j0 : j1;
      a->Gb_col[nnz++] = j;
      if (j0 == j) e0 = next[e0];
      if (j1 == j) e1 = next[e1];
    }
    if (e0 >= 0 || e1 >= 0 || nnz == (size_t)a->Gb_row[i])
      return mr_error_set(err, MR_ERR_NOMEM,
                          "assembly: the block-sparse G of %d contacts exceeds its %zu blocks", nc,
                          a->Gb_cap);
    a->Gb_row[i + 1] = (int)nnz;
  }
  return MR_OK;
}

/* Gb on its pattern: the upper blocks computed, each mirrored into the next lower slot of its
 * column's row (rows are visited in ascending order, so a row's lower blocks come in order) */
static void sparse_G_blocks(const mr_data *d, const mr_assembly_subset *sub, mr_contact_assembly *a,
                            int ys, int nc, const int *chain, double *Z) {
  int *cursor = a->Gb_work;
  tail_memo memo = {-1, -1, 0};
  for (int i = 0; i < nc; ++i)
    cursor[i] = a->Gb_row[i];
  for (int i = 0; i < nc; ++i) {
    scaled_rows(d, sub, a, ys, i, Z);
    for (int k = a->Gb_row[i]; k < a->Gb_row[i + 1]; ++k) {
      int j = a->Gb_col[k];
      if (j < i) continue;
      double *B = a->Gb + 9 * (size_t)k, *T;
      support_block(sub, a, ys, i, j, Z, chain, &memo, B);
      if (j == i) {
        /* exactly symmetric, with the lower entries as the dense mirror leaves them */
        B[1] = B[3], B[2] = B[6], B[5] = B[7];
        cursor[i] = k + 1;
        continue;
      }
      T = a->Gb + 9 * (size_t)cursor[j]++;
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q)
          T[3 * q + r] = B[3 * r + q];
    }
  }
}

/* the dense G: every pair's block (zero for an uncoupled pair) computed above the diagonal and
 * mirrored */
static void dense_G_blocks(const mr_data *d, const mr_assembly_subset *sub, mr_contact_assembly *a,
                           int ys, int nc, const int *chain, double *Z) {
  size_t n = 3 * (size_t)nc;
  tail_memo memo = {-1, -1, 0};
  for (int i = 0; i < nc; ++i) {
    scaled_rows(d, sub, a, ys, i, Z);
    for (int j = i; j < nc; ++j) {
      double acc[9];
      support_block(sub, a, ys, i, j, Z, chain, &memo, acc);
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q)
          a->G[(3 * (size_t)i + r) * n + 3 * (size_t)j + q] =
              a->G[(3 * (size_t)j + q) * n + 3 * (size_t)i + r] = acc[3 * r + q];
    }
  }
}

/* J and Y = U⁻¹ Jᵀ on each block's support through the bodies: a contact's rows at a dof are
 * those of its point's velocity for that dof's world motion (point_rows), linear in it, so the
 * world motion columns of a body's path (in the scratch after J) give the rows of J of the
 * blocks on it and, solved once (solve_columns), their rows of Y (a unit: the path ending at a
 * dof, a foot and its sole alike); the blocks alone on the path are formed four at a time, one
 * per lane (lane_rows). J's entries and J v, J v_f are those of contact_jacobian and of the
 * dense dot, the same bits. Then G = Yᵀ D⁻¹ Y over the supports' intersections: with Gb
 * buffers and from MR_SPARSE_G_MIN_NC contacts on, the coupling pattern first and G
 * block-sparse into Gb (*stored = 1), else dense over every pair. */
static mr_status sparse_products(const mr_model *m, mr_data *d, const mr_contact_geometry *contacts,
                                 const mr_assembly_subset *sub, mr_contact_assembly *a, int nc,
                                 const double *v, const double *vf, int *stored, mr_error *err) {
  int nv = a->nv, ys = y_stride(d, sub, nv);
  sparse_work w = sparse_work_at(a, nc);
  w.nu = 0;
  const int *col = sub->col;
  double *x = sub->x, *scratch = a->J + (size_t)3 * nc * nv;
  if (!sub->rows_on_supports) mr_zero(a->J, 3 * nc * nv);
  for (int t = 0; t < nv; ++t)
    w.head[t] = -1;
  support_memo memo = {0};
  path_memo pm = {.body = {-1, -1}};
  for (int i = 0; i < nc; ++i) {
    const mr_contact_geometry *c = &contacts[sub->blocks ? sub->blocks[i] : i];
    int *S = sub->support + (size_t)i * nv;
    int ns = sub->nsupport[i] = block_support(m, d, c, &memo, S);
    double *Y = block_Y(a, ys, i);
    for (int k = 0; sub->rows_on_supports && k < 3; ++k) /* the row's entries written below */
      for (int t = 0; t < ns; ++t)
        a->J[(3 * (size_t)i + k) * nv + col[S[t]]] = 0.0;
    for (int k = 0; k < 3; ++k)
      a->vel[3 * i + k] = a->g[3 * i + k] = 0.0;
    w.chain[i] = c->type == MR_ROWS_LIMIT || c->type == MR_ROWS_FRICTION; /* a dof's path */
    w.alone[i] = 0;
    if (c->type == MR_ROWS_LIMIT || c->type == MR_ROWS_MIMIC || c->type == MR_ROWS_FRICTION) {
      if (second_dof(c) >= 0) w.chain[i] = is_chain(d, S, ns);
      dof_row_block(d, c, S, ns, col, x, a->J + (size_t)3 * i * nv, Y, nv, v, vf, a->vel + 3 * i,
                    a->g + 3 * i);
      continue;
    }
    int sides = 0;
    for (int side = 0; side < 2; ++side) {
      int body = side ? c->body2 : c->body1, k = body > 0 ? mr_body_last_dof(m, body) : -1;
      if (k < 0) continue;
      int e = 2 * i + side, u = col[k];
      if (w.head[u] < 0) w.units[w.nu++] = k;
      w.next[e] = w.head[u], w.head[u] = e, ++sides;
    }
    /* on two bodies' paths: the block's rows of J, and J v and J v_f from them */
    w.alone[i] = sides == 1;
    w.chain[i] = w.alone[i] || is_chain(d, S, ns);
    if (sides != 1) mr_zero(Y, 3 * ns);
    if (sides == 2) {
      double *Ji = a->J + (size_t)3 * i * nv; /* zeroed above */
      path_jacobian(m, d, &pm, c, col, nv, Ji);
      row_dots(Ji, v, vf, sub, i, nv, a->vel + 3 * i, a->g + 3 * i);
    }
  }
  /* each unit's six columns, then its solved rows, after J (room for 6 nv) */
  double *Yu = scratch;
  for (int q = 0; q < w.nu; ++q) {
    int ns = mr_path_world_columns(m, d, w.units[q], Yu, w.Su), first = w.head[col[w.units[q]]];
    point_lanes pl;
    /* the rows of J of the blocks on this body alone, four at a time, and J v, J v_f over
     * ascending dofs (as row_dots) */
    for (int e = first; alone_batch(&w, contacts, sub, &e, &pl) > 0;) {
      lanes4 sv[3] = {{0.0}, {0.0}, {0.0}}, sf[3] = {{0.0}, {0.0}, {0.0}}, r[3];
      for (int t = ns - 1; t >= 0; --t) {
        lane_rows(&pl, Yu + 6 * t, r);
        const double vt = v[w.Su[t]], ft = vf[w.Su[t]];
        for (int k = 0; k < 3; ++k)
          sv[k] += r[k] * LANES(vt), sf[k] += r[k] * LANES(ft);
        for (int l = 0; l < pl.n; ++l)
          for (int k = 0; k < 3; ++k)
            a->J[(3 * (size_t)(pl.e[l] / 2) + k) * nv + col[w.Su[t]]] = r[k][l];
      }
      for (int l = 0; l < pl.n; ++l)
        for (int k = 0; k < 3; ++k)
          a->vel[3 * (pl.e[l] / 2) + k] = sv[k][l], a->g[3 * (pl.e[l] / 2) + k] = sf[k][l];
    }
    solve_columns(d, w.Su, ns, Yu);
    /* the blocks alone on the body: their rows of the solved columns (their support is the
     * unit's path), four at a time */
    for (int e = first; alone_batch(&w, contacts, sub, &e, &pl) > 0;)
      for (int t = 0; t < ns; ++t) {
        lanes4 r[3];
        lane_rows(&pl, Yu + 6 * t, r);
        for (int l = 0; l < pl.n; ++l)
          for (int k = 0; k < 3; ++k)
            block_Y(a, ys, pl.e[l] / 2)[3 * (size_t)t + k] = r[k][l];
      }
    /* the blocks on two bodies' paths: this side's part of their rows over their support (the
     * unit's path is a part of it) */
    for (int e = first; e >= 0; e = w.next[e]) {
      int i = e / 2, nsi = sub->nsupport[i];
      if (w.alone[i]) continue;
      const int *S = sub->support + (size_t)i * nv;
      point_map pm = point_map_of(&contacts[sub->blocks ? sub->blocks[i] : i], e % 2);
      double *Y = block_Y(a, ys, i);
      for (int t = 0, p = 0; t < nsi && p < ns; ++t) {
        if (S[t] != w.Su[p]) continue;
        mr_vec3 r = point_rows(&pm, Yu + 6 * p++);
        for (int k = 0; k < 3; ++k)
          Y[3 * (size_t)t + k] += r.v[k];
      }
    }
  }
  /* below MR_SPARSE_G_MIN_NC contacts G is dense, and an uncoupled pair's block comes out zero
   * without the pattern */
  *stored = a->Gb && nc >= MR_SPARSE_G_MIN_NC;
  if (!*stored) {
    dense_G_blocks(d, sub, a, ys, nc, w.chain, scratch);
    return MR_OK;
  }
  mr_status st = block_pattern(d, sub, a, nc, err);
  if (st) return st;
  sparse_G_blocks(d, sub, a, ys, nc, w.chain, scratch);
  return MR_OK;
}

/* the problem of the blocks contacts[blocks[i]] (blocks NULL: contacts[i]) over the dofs of sub
 * (NULL: all) in a's buffers, whose nv is the number of those dofs */
static mr_status assemble(const mr_model *m, mr_data *d, const mr_contact_geometry *contacts,
                          const mr_assembly_subset *sub, int nc, const double *v, const double *vf,
                          const mr_assembly_settings *s, mr_contact_assembly *a, mr_error *err) {
  int nv = a->nv, n = 3 * nc;
  const int *col = sub ? sub->col : NULL;
  mr_status st = check_settings(s, err);
  if (st) return st;
#define BLOCK(i) (&contacts[sub && sub->blocks ? sub->blocks[i] : (i)])
  int block_sparse = 0, tree_sparse = sub && sub->sparse;
  if (tree_sparse) {
    if ((st = sparse_products(m, d, contacts, sub, a, nc, v, vf, &block_sparse, err))) return st;
  } else {
    /* J, one 3-row block per contact; MiJt doubles as scratch for the second body's Jacobian */
    for (int i = 0; i < nc; ++i)
      contact_jacobian(m, d, BLOCK(i), col, nv, a->J + (size_t)3 * i * nv, a->MiJt);
    solve_rows(m, d, sub, a, n);
    /* G = J (M⁻¹ Jᵀ), symmetric: compute the upper triangle and mirror it */
    for (int r = 0; r < n; ++r)
      for (int k = r; k < n; ++k) {
        double gij = mr_dot(a->J + (size_t)r * nv, a->MiJt + (size_t)k * nv, nv);
        a->G[(size_t)r * n + k] = a->G[(size_t)k * n + r] = gij;
      }
  }
  /* g = (J v_f + cor) / Δt, per contact; a point constraint's correction is its error */
  int bilateral = 0;
  for (int i = 0; i < nc; ++i) {
    const mr_contact_geometry *c = BLOCK(i);
    const double *Ji = a->J + (size_t)3 * i * nv;
    for (int k = 0; k < 3; ++k) {
      if (tree_sparse) { /* J v and J v_f formed with Y */
        a->g[3 * i + k] /= s->dt;
        continue;
      }
      a->vel[3 * i + k] = dot_dofs(Ji + (size_t)k * nv, v, sub ? sub->dofs : NULL, nv);
      a->g[3 * i + k] = dot_dofs(Ji + (size_t)k * nv, vf, sub ? sub->dofs : NULL, nv) / s->dt;
    }
#undef BLOCK
    int bil = c->type == MR_ROWS_POINT || c->type == MR_ROWS_MIMIC;
    a->kind[i] = bil                           ? MR_KIND_BILATERAL
                 : c->type == MR_ROWS_FRICTION ? MR_KIND_BOX
                                               : MR_KIND_CONTACT;
    bilateral |= a->kind[i] != MR_KIND_CONTACT;
    a->rest[i] = a->rebound[i] = 0.0;
    if (c->type == MR_ROWS_FRICTION) {
      /* no correction: friction acts on the velocity alone */
    } else if (c->type == MR_ROWS_POINT) {
      mr_vec3 e = mr_v3_sub(c->point, c->point2);
      for (int k = 0; k < 3; ++k)
        a->g[3 * i + k] += c->baumgarte * e.v[k] / (s->dt * s->dt);
    } else if (c->type == MR_ROWS_MIMIC) {
      a->g[3 * i + 2] += c->baumgarte * c->phi / (s->dt * s->dt);
    } else if (c->stiffness > 0.0) {
      /* a stiffness contact: λ_N = k (−Φ_N − (Δt + τ_d) v_N⁺), i.e. in force units
       * R_N λ_N + v_N⁺/Δt + Φ_N/(Δt (Δt + τ_d)) = 0 (docs/physics.md, "Stiffness and
       * dissipation") */
      a->g[3 * i + 2] += c->phi / (s->dt * (s->dt + c->dissipation));
    } else {
      double vn = a->vel[3 * i + 2], vnf = a->g[3 * i + 2] * s->dt; /* g: J_N v_f/Δt so far */
      int impact = mr_contact_impact(c, vn, vnf, s);
      mr_normal_correction nc_i = mr_contact_normal_correction(c, vn, impact, s);
      a->g[3 * i + 2] += (nc_i.gap + nc_i.rest) / s->dt;
      a->rest[i] = nc_i.rest / s->dt;
      a->rebound[i] = mr_contact_deferred_rebound(c, vn, vnf, s);
    }
    a->mu[i] = c->mu;
    a->phi[i] = c->phi;
    a->R[3 * i] = a->R[3 * i + 1] = c->tangential_compliance;
    a->R[3 * i + 2] = c->stiffness > 0.0 ? 1.0 / (c->stiffness * s->dt * (s->dt + c->dissipation))
                                         : c->compliance;
  }
  mr_contact_problem *p = &a->problem;
  memset(p, 0, sizeof *p);
  p->nc = nc;
  p->G = block_sparse ? NULL : a->G;
  if (block_sparse) {
    p->nnzb = a->Gb_row[nc];
    p->Gb_row = a->Gb_row, p->Gb_col = a->Gb_col, p->Gb = a->Gb;
  }
  p->g = a->g;
  p->mu = a->mu;
  p->R = a->R;
  p->phi = a->phi;
  p->vel = a->vel;
  p->dt = s->dt;
  p->kind = bilateral ? a->kind : NULL;
  return MR_OK;
}

mr_status mr_contact_assemble(const mr_model *m, mr_data *d, const mr_contact_geometry *contacts,
                              int nc, const double *v, const double *vf,
                              const mr_assembly_settings *s, mr_contact_assembly *a,
                              mr_error *err) {
  if (nc > a->max_contacts || m->nv != a->nv)
    return mr_error_set(err, MR_ERR_NOMEM, "assembly: %d contacts exceed the bound of %d", nc,
                        a->max_contacts);
  return assemble(m, d, contacts, NULL, nc, v, vf, s, a, err);
}

mr_status mr_contact_assemble_subset(const mr_model *m, mr_data *d,
                                     const mr_contact_geometry *contacts,
                                     const mr_assembly_subset *sub, int nc, const double *v,
                                     const double *vf, const mr_assembly_settings *s,
                                     mr_contact_assembly *a, mr_error *err) {
  if (nc > a->max_contacts || sub->ndofs != a->nv)
    return mr_error_set(err, MR_ERR_NOMEM, "assembly: %d contacts exceed the bound of %d", nc,
                        a->max_contacts);
  return assemble(m, d, contacts, sub, nc, v, vf, s, a, err);
}

void mr_contact_impulse_velocity(const mr_contact_assembly *a, const double *lambda, double dt,
                                 double *dv) {
  int n = 3 * a->problem.nc;
  mr_zero(dv, a->nv);
  for (int r = 0; r < n; ++r)
    mr_axpy(dv, dt * lambda[r], a->MiJt + (size_t)r * a->nv, a->nv);
}

void mr_contact_impulse_velocity_subset(const mr_model *m, const mr_data *d,
                                        const mr_contact_assembly *a, const mr_assembly_subset *sub,
                                        const double *lambda, double dt, double *dv) {
  int n = 3 * a->problem.nc, nv = a->nv, ys = sub->sparse ? y_stride(d, sub, nv) : nv;
  double *x = sub->x;
  for (int r = 0; r < n; ++r) {
    const double *row = a->MiJt + (size_t)r * nv;
    if (sub->sparse) { /* Y λ on the supports, a block's three rows at once, then U⁻ᵀ D⁻¹ once */
      const int *S = sub->support + (size_t)(r / 3) * nv;
      const double l0 = dt * lambda[r], l1 = dt * lambda[r + 1], l2 = dt * lambda[r + 2];
      const double *y = block_Y(a, ys, r / 3);
      for (int t = 0; t < sub->nsupport[r / 3]; ++t)
        x[S[t]] += l0 * y[3 * t] + l1 * y[3 * t + 1] + l2 * y[3 * t + 2];
      r += 2;
      continue;
    }
    for (int t = 0; t < nv; ++t)
      x[sub->dofs[t]] += dt * lambda[r] * row[t];
  }
  if (sub->sparse) mr_ldlt_solve_dofs_dut(m, d, sub->dofs, nv, x);
  for (int t = 0; t < nv; ++t) {
    dv[sub->dofs[t]] = x[sub->dofs[t]];
    x[sub->dofs[t]] = 0.0;
  }
}
