/* MuJoCo 2.2.2's compiler on the parsed bodies (its user_objects.cc and user_model.cc semantics,
 * written again here; docs/mjcf.md lists them):
 *
 * - frames: quat (w x y z, normalised), or one alternative: axisangle (angle in degrees with
 *   compiler angle="degree"), xyaxes (x normalised, y made orthogonal to it, z = x × y),
 *   zaxis (the shortest rotation taking (0 0 1) to it), euler (three rotations in eulerseq
 *   order: lower-case axes move with the frame, upper-case ones are fixed); fromto on capsule,
 *   cylinder, ellipsoid and box geoms (and sites): the centre is the midpoint, the z axis points
 *   from "to" to "from", the half length is half the distance (box and ellipsoid: size[2] =
 *   half length, size[1] = size[0]); coordinate="global" frames are made local to the parent.
 * - geom masses: mass = density × volume, or the given mass (density = mass / volume), with
 *   MuJoCo's volumes and principal inertias of sphere, capsule (cylinder plus two hemispheres
 *   displaced along the axis), cylinder, ellipsoid and box, evaluated in MuJoCo's order of
 *   operations so that masses agree to the last bit.
 * - body inertia: from <inertial> (diaginertia, or fullinertia diagonalised), or from the geoms
 *   (inertiafromgeom auto / true; the geoms whose group is in inertiagrouprange): one geom gives
 *   its own frame and inertia, several are summed about their centre of mass (parallel axes) and
 *   diagonalised; then boundmass / boundinertia, the A + B >= C check (balanceinertia).
 * - joints: limited="auto" means limited when a range is given (an error unless
 *   compiler autolimits="true", as in MuJoCo 2.2.2); hinge ranges, ref and springref in degrees
 *   with angle="degree"; free and ball axes are (0 0 1); free joints have no position.
 * - settotalmass > 0 scales every body's mass and inertia by newmass / total. */
#include <math.h>
#include <string.h>

#include "io/mjcf_internal.h"

/* ---- quaternion helpers (w x y z) ---- */

double mj_normvec(double *v, int n) {
  double nrm = 0;
  for (int i = 0; i < n; ++i)
    nrm += v[i] * v[i];
  if (nrm < MJ_EPS) return 0;
  nrm = sqrt(nrm);
  for (int i = 0; i < n; ++i)
    v[i] /= nrm;
  return nrm;
}

void mj_mulquat(double res[4], const double a[4], const double b[4]) {
  double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(res, r, sizeof r);
}

void mj_quat2mat(const double q[4], double R[9]) {
  double q00 = q[0] * q[0], q01 = q[0] * q[1], q02 = q[0] * q[2], q03 = q[0] * q[3];
  double q11 = q[1] * q[1], q12 = q[1] * q[2], q13 = q[1] * q[3];
  double q22 = q[2] * q[2], q23 = q[2] * q[3], q33 = q[3] * q[3];
  R[0] = q00 + q11 - q22 - q33, R[1] = 2 * (q12 - q03), R[2] = 2 * (q13 + q02);
  R[3] = 2 * (q12 + q03), R[4] = q00 - q11 + q22 - q33, R[5] = 2 * (q23 - q01);
  R[6] = 2 * (q13 - q02), R[7] = 2 * (q23 + q01), R[8] = q00 - q11 - q22 + q33;
}

void mj_rotvec(double res[3], const double q[4], const double v[3]) {
  double R[9];
  mj_quat2mat(q, R);
  double r[3] = {R[0] * v[0] + R[1] * v[1] + R[2] * v[2], R[3] * v[0] + R[4] * v[1] + R[5] * v[2],
                 R[6] * v[0] + R[7] * v[1] + R[8] * v[2]};
  memcpy(res, r, sizeof r);
}

/* the quaternion of the rotation whose columns are x, y, z */
static void frame2quat(double q[4], const double *x, const double *y, const double *z) {
  const double *m[3] = {x, y, z}; /* m[column][row] */
  if (m[0][0] + m[1][1] + m[2][2] > 0) {
    q[0] = 0.5 * sqrt(1 + m[0][0] + m[1][1] + m[2][2]);
    q[1] = 0.25 * (m[1][2] - m[2][1]) / q[0];
    q[2] = 0.25 * (m[2][0] - m[0][2]) / q[0];
    q[3] = 0.25 * (m[0][1] - m[1][0]) / q[0];
  } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
    q[1] = 0.5 * sqrt(1 + m[0][0] - m[1][1] - m[2][2]);
    q[0] = 0.25 * (m[1][2] - m[2][1]) / q[1];
    q[2] = 0.25 * (m[1][0] + m[0][1]) / q[1];
    q[3] = 0.25 * (m[2][0] + m[0][2]) / q[1];
  } else if (m[1][1] > m[2][2]) {
    q[2] = 0.5 * sqrt(1 - m[0][0] + m[1][1] - m[2][2]);
    q[0] = 0.25 * (m[2][0] - m[0][2]) / q[2];
    q[1] = 0.25 * (m[1][0] + m[0][1]) / q[2];
    q[3] = 0.25 * (m[2][1] + m[1][2]) / q[2];
  } else {
    q[3] = 0.5 * sqrt(1 - m[0][0] - m[1][1] + m[2][2]);
    q[0] = 0.25 * (m[0][1] - m[1][0]) / q[3];
    q[1] = 0.25 * (m[2][0] + m[0][2]) / q[3];
    q[2] = 0.25 * (m[2][1] + m[1][2]) / q[3];
  }
  mj_normvec(q, 4);
}

/* the shortest rotation taking (0 0 1) to the unit vector v */
static void z2quat(double q[4], const double v[3]) {
  double z[3] = {0, 0, 1};
  q[1] = z[1] * v[2] - z[2] * v[1];
  q[2] = z[2] * v[0] - z[0] * v[2];
  q[3] = z[0] * v[1] - z[1] * v[0];
  double s = mj_normvec(q + 1, 3);
  if (s < 1e-10) q[1] = 1, q[2] = q[3] = 0;
  double ang = atan2(s, v[2]);
  q[0] = cos(ang / 2);
  q[1] *= sin(ang / 2), q[2] *= sin(ang / 2), q[3] *= sin(ang / 2);
}

/* ---- symmetric 3x3 eigen decomposition (cyclic Jacobi) ---- */

/* A = V diag(w) Vᵀ with V a rotation (columns the eigenvectors), w descending */
static void eig3(const double A[9], double w[3], double V[9]) {
  double a[9];
  memcpy(a, A, sizeof a);
  for (int i = 0; i < 9; ++i)
    V[i] = i % 4 == 0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-32 * diag || off == 0) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        double apq = a[3 * p + q];
        if (apq == 0) continue;
        double theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
        double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
        double cs = 1 / sqrt(t * t + 1), sn = t * cs;
        for (int k = 0; k < 3; ++k) { /* a ← Jᵀ a J */
          double akp = a[3 * k + p], akq = a[3 * k + q];
          a[3 * k + p] = cs * akp - sn * akq, a[3 * k + q] = sn * akp + cs * akq;
        }
        for (int k = 0; k < 3; ++k) {
          double apk = a[3 * p + k], aqk = a[3 * q + k];
          a[3 * p + k] = cs * apk - sn * aqk, a[3 * q + k] = sn * apk + cs * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          double vkp = V[3 * k + p], vkq = V[3 * k + q];
          V[3 * k + p] = cs * vkp - sn * vkq, V[3 * k + q] = sn * vkp + cs * vkq;
        }
      }
  }
  int o[3] = {0, 1, 2};
  for (int i = 0; i < 3; ++i) /* descending */
    for (int j = i + 1; j < 3; ++j)
      if (a[4 * o[j]] > a[4 * o[i]]) {
        int t = o[i];
        o[i] = o[j], o[j] = t;
      }
  double W[9];
  for (int i = 0; i < 3; ++i) {
    w[i] = a[4 * o[i]];
    for (int k = 0; k < 3; ++k)
      W[3 * k + i] = V[3 * k + o[i]];
  }
  double det = W[0] * (W[4] * W[8] - W[5] * W[7]) - W[1] * (W[3] * W[8] - W[5] * W[6]) +
               W[2] * (W[3] * W[7] - W[4] * W[6]);
  if (det < 0)
    for (int k = 0; k < 3; ++k)
      W[3 * k + 2] = -W[3 * k + 2];
  memcpy(V, W, sizeof W);
}

/* principal inertias and the quaternion of their axes from the 6 entries xx yy zz xy xz yz */
static void principal(const double full[6], double quat[4], double inertia[3]) {
  double A[9] = {full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]};
  double V[9], x[3], y[3], z[3];
  eig3(A, inertia, V);
  for (int k = 0; k < 3; ++k)
    x[k] = V[3 * k], y[k] = V[3 * k + 1], z[k] = V[3 * k + 2];
  frame2quat(quat, x, y, z);
}

/* ---- orientation alternatives ---- */

/* apply an alternative (when given) to quat; NULL or an error text */
static const char *alt_apply(const mj_ctx *c, mj_alt *a, double quat[4], double inertia[3]) {
  if (!isnan(a->axisangle[0])) {
    if (c->degree) a->axisangle[3] = a->axisangle[3] / 180.0 * MJ_PI;
    if (mj_normvec(a->axisangle, 3) < MJ_EPS) return "axisangle too small";
    double h = a->axisangle[3] / 2;
    quat[0] = cos(h), quat[1] = sin(h) * a->axisangle[0];
    quat[2] = sin(h) * a->axisangle[1], quat[3] = sin(h) * a->axisangle[2];
  }
  if (!isnan(a->xyaxes[0])) {
    double *x = a->xyaxes, *y = a->xyaxes + 3, z[3];
    if (mj_normvec(x, 3) < MJ_EPS) return "xaxis too small";
    double d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    y[0] -= x[0] * d, y[1] -= x[1] * d, y[2] -= x[2] * d;
    if (mj_normvec(y, 3) < MJ_EPS) return "yaxis too small";
    z[0] = x[1] * y[2] - x[2] * y[1], z[1] = x[2] * y[0] - x[0] * y[2];
    z[2] = x[0] * y[1] - x[1] * y[0];
    if (mj_normvec(z, 3) < MJ_EPS) return "cross(xaxis, yaxis) too small";
    frame2quat(quat, x, y, z);
  }
  if (!isnan(a->zaxis[0])) {
    if (mj_normvec(a->zaxis, 3) < MJ_EPS) return "zaxis too small";
    z2quat(quat, a->zaxis);
  }
  if (!isnan(a->fullinertia[0])) {
    double in[3];
    principal(a->fullinertia, quat, in);
    if (inertia) memcpy(inertia, in, sizeof in);
    if (in[2] < MJ_EPS) return "inertia must have positive eigenvalues";
  }
  if (!isnan(a->euler[0])) {
    double e[3];
    for (int i = 0; i < 3; ++i)
      e[i] = c->degree ? a->euler[i] / 180.0 * MJ_PI : a->euler[i];
    quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
    for (int i = 0; i < 3; ++i) {
      double r[4] = {cos(e[i] / 2), 0, 0, 0}, sa = sin(e[i] / 2);
      char ax = c->eulerseq[i];
      if (ax == 'x' || ax == 'X')
        r[1] = sa;
      else if (ax == 'y' || ax == 'Y')
        r[2] = sa;
      else if (ax == 'z' || ax == 'Z')
        r[3] = sa;
      else
        return "euler sequence can only contain x, y, z, X, Y, Z";
      if (ax >= 'a')
        mj_mulquat(quat, quat, r); /* moving axes: post-multiply */
      else
        mj_mulquat(quat, r, quat); /* fixed axes: pre-multiply */
    }
    mj_normvec(quat, 4);
  }
  return NULL;
}

int mj_alt_set(mj_ctx *c, const xmlNode *n, mj_alt *alt, double quat[4], double inertia[3],
               mr_status *st) {
  const char *e = alt_apply(c, alt, quat, inertia);
  *st = e ? mj_fail(c, n, MR_ERR_INVALID, "orientation: %s", e) : MR_OK;
  return e == NULL;
}

/* ---- frames in global coordinates ---- */

/* pos, quat (given in the parent's global frame ppos, pquat) made local */
static void make_local(const mj_ctx *c, const double *ppos, const double *pquat, const double *pos,
                       const double *quat, double *lpos, double *lquat) {
  if (!c->global) {
    memcpy(lpos, pos, 3 * sizeof *pos);
    if (lquat) memcpy(lquat, quat, 4 * sizeof *quat);
    return;
  }
  double inv[4] = {pquat[0], -pquat[1], -pquat[2], -pquat[3]};
  double d[3] = {pos[0] - ppos[0], pos[1] - ppos[1], pos[2] - ppos[2]};
  mj_rotvec(lpos, inv, d);
  if (lquat) mj_mulquat(lquat, inv, quat);
}

/* ---- geoms ---- */

static double geom_volume(int type, const double *s) {
  double h;
  switch (type) {
  case MJ_SPHERE:
    return 4 * MJ_PI * s[0] * s[0] * s[0] / 3;
  case MJ_CAPSULE:
    h = 2 * s[1];
    return MJ_PI * (s[0] * s[0] * h + 4 * s[0] * s[0] * s[0] / 3);
  case MJ_CYLINDER:
    h = 2 * s[1];
    return MJ_PI * s[0] * s[0] * h;
  case MJ_ELLIPSOID:
    return 4 * MJ_PI * s[0] * s[1] * s[2] / 3;
  case MJ_BOX:
    return s[0] * s[1] * s[2] * 8;
  default:
    return 0;
  }
}

static void geom_inertia(int type, const double *s, double m, double *I) {
  double h = 2 * s[1], r = s[0];
  I[0] = I[1] = I[2] = 0;
  switch (type) {
  case MJ_SPHERE:
    I[0] = I[1] = I[2] = 2 * m * s[0] * s[0] / 5;
    return;
  case MJ_CAPSULE: {
    double ms = m * 4 * r / (4 * r + 3 * h), mc = m - ms, is = 2 * ms * r * r / 5;
    I[0] = I[1] = mc * (3 * r * r + h * h) / 12;
    I[2] = mc * r * r / 2;
    I[0] += is + ms * h * (3 * r + 2 * h) / 8;
    I[1] += is + ms * h * (3 * r + 2 * h) / 8;
    I[2] += is;
    return;
  }
  case MJ_CYLINDER:
    I[0] = I[1] = m * (3 * s[0] * s[0] + h * h) / 12;
    I[2] = m * s[0] * s[0] / 2;
    return;
  case MJ_ELLIPSOID:
    I[0] = m * (s[1] * s[1] + s[2] * s[2]) / 5;
    I[1] = m * (s[0] * s[0] + s[2] * s[2]) / 5;
    I[2] = m * (s[0] * s[0] + s[1] * s[1]) / 5;
    return;
  case MJ_BOX:
    I[0] = m * (s[1] * s[1] + s[2] * s[2]) / 3;
    I[1] = m * (s[0] * s[0] + s[2] * s[2]) / 3;
    I[2] = m * (s[0] * s[0] + s[1] * s[1]) / 3;
    return;
  default:
    return;
  }
}

/* fromto: the geom's (or site's) centre, z axis and half length */
static mr_status apply_fromto(mj_ctx *c, const xmlNode *n, int type, double *fromto, double *size,
                              double *pos, double *quat) {
  if (type != MJ_CAPSULE && type != MJ_CYLINDER && type != MJ_ELLIPSOID && type != MJ_BOX)
    return mj_fail(c, n, MR_ERR_INVALID, "fromto requires a capsule, cylinder, box or ellipsoid");
  if (pos[0] || pos[1] || pos[2])
    return mj_fail(c, n, MR_ERR_INVALID, "both pos and fromto are defined");
  double v[3] = {fromto[0] - fromto[3], fromto[1] - fromto[4], fromto[2] - fromto[5]};
  size[1] = mj_normvec(v, 3) / 2;
  if (size[1] < MJ_EPS) return mj_fail(c, n, MR_ERR_INVALID, "fromto points too close");
  if (type == MJ_ELLIPSOID || type == MJ_BOX) size[2] = size[1], size[1] = size[0];
  for (int k = 0; k < 3; ++k)
    pos[k] = (fromto[k] + fromto[k + 3]) / 2;
  z2quat(quat, v);
  return MR_OK;
}

/* sizes MuJoCo requires positive: plane size[2]; the others the shape's own entries */
static mr_status check_size(mj_ctx *c, const xmlNode *n, int type, const double *size) {
  static const int nsize[] = {0, 0, 1, 2, 3, 2, 3, 0};
  if (type == MJ_PLANE && !(size[2] > 0))
    return mj_fail(c, n, MR_ERR_INVALID, "plane size[2] must be positive (MuJoCo 2.2.2)");
  for (int i = 0; i < nsize[type]; ++i)
    if (!(size[i] > 0))
      return mj_fail(c, n, MR_ERR_INVALID, "size[%d] = %g must be positive", i, size[i]);
  return MR_OK;
}

static mr_status compile_geom(mj_ctx *c, mj_body *b, mj_geom_el *e, int infer) {
  mj_geom *g = &e->g;
  const xmlNode *n = e->node;
  mr_status st = MR_OK;
  if (g->condim != 1 && g->condim != 3 && g->condim != 4 && g->condim != 6)
    return mj_fail(c, n, MR_ERR_INVALID, "condim=\"%d\" must be 1, 3, 4 or 6", g->condim);
  if ((g->type == MJ_PLANE || g->type == MJ_HFIELD) && b->weld != 0)
    return mj_fail(c, n, MR_ERR_INVALID,
                   "plane and hfield geoms are only allowed in static "
                   "bodies (the world, or bodies welded to it)");
  if (g->type == MJ_MESH || g->mesh[0])
    return mj_fail(c, n, MR_ERR_UNSUPPORTED,
                   "mesh geoms are not read yet (MuJoCo recentres a mesh on its centre of mass "
                   "and principal axes and computes its inertia from an equivalent box)");
  if (g->type == MJ_HFIELD && !g->hfield[0])
    return mj_fail(c, n, MR_ERR_INVALID, "an hfield geom needs an hfield attribute");
  mj_normvec(g->quat, 4);
  if (!isnan(g->fromto[0])) {
    if (apply_fromto(c, n, g->type, g->fromto, g->size, g->pos, g->quat)) return mj_status(c);
  } else if (!mj_alt_set(c, n, &g->alt, g->quat, NULL, &st)) {
    return st;
  }
  if (check_size(c, n, g->type, g->size)) return mj_status(c);
  if (!infer) return MR_OK;
  double vol = geom_volume(g->type, g->size);
  if (!isnan(g->mass)) {
    if (g->mass == 0) {
      e->mass = 0, g->density = 0;
    } else if (vol > MJ_MINVAL) {
      e->mass = g->mass, g->density = g->mass / vol;
      geom_inertia(g->type, g->size, e->mass, e->inertia);
    }
  } else {
    e->mass = g->density * vol;
    geom_inertia(g->type, g->size, e->mass, e->inertia);
  }
  if (e->mass < 0 || e->inertia[0] < 0 || e->inertia[1] < 0 || e->inertia[2] < 0 || g->density < 0)
    return mj_fail(c, n, MR_ERR_INVALID, "mass, inertia or density are negative");
  return MR_OK;
}

/* ---- bodies ---- */

/* the inertia of the geoms (whose group is in inertiagrouprange) about their centre of mass */
static mr_status geom_frame(mj_ctx *c, mj_body *b) {
  int sel[4096], n = 0;
  for (int i = 0; i < b->ngeoms && n < 4096; ++i)
    if (b->geoms[i].g.group >= c->inertiagrouprange[0] &&
        b->geoms[i].g.group <= c->inertiagrouprange[1])
      sel[n++] = i;
  if (n == 1) {
    const mj_geom_el *g = &b->geoms[sel[0]];
    memcpy(b->ipos, g->g.pos, sizeof b->ipos);
    memcpy(b->iquat, g->g.quat, sizeof b->iquat);
    b->mass = g->mass;
    memcpy(b->inertia, g->inertia, sizeof b->inertia);
    return MR_OK;
  }
  if (n == 0) return MR_OK;
  double com[3] = {0, 0, 0}, tot[6] = {0, 0, 0, 0, 0, 0};
  b->mass = 0;
  for (int i = 0; i < n; ++i) {
    const mj_geom_el *g = &b->geoms[sel[i]];
    b->mass += g->mass;
    for (int k = 0; k < 3; ++k)
      com[k] += g->mass * g->g.pos[k];
  }
  if (b->mass < MJ_MINVAL)
    return mj_fail(c, b->node, MR_ERR_INVALID,
                   "body mass is too small, cannot compute the centre of mass");
  for (int k = 0; k < 3; ++k)
    b->ipos[k] = com[k] / b->mass;
  for (int i = 0; i < n; ++i) {
    const mj_geom_el *g = &b->geoms[sel[i]];
    double R[9], d[3], m = g->mass;
    const double *I = g->inertia;
    mj_quat2mat(g->g.quat, R);
    for (int k = 0; k < 3; ++k)
      d[k] = g->g.pos[k] - b->ipos[k];
    /* R diag(I) Rᵀ, then the parallel-axis term m (|d|² 1 − d dᵀ) */
    tot[0] += R[0] * R[0] * I[0] + R[1] * R[1] * I[1] + R[2] * R[2] * I[2];
    tot[1] += R[3] * R[3] * I[0] + R[4] * R[4] * I[1] + R[5] * R[5] * I[2];
    tot[2] += R[6] * R[6] * I[0] + R[7] * R[7] * I[1] + R[8] * R[8] * I[2];
    tot[3] += R[0] * R[3] * I[0] + R[1] * R[4] * I[1] + R[2] * R[5] * I[2];
    tot[4] += R[0] * R[6] * I[0] + R[1] * R[7] * I[1] + R[2] * R[8] * I[2];
    tot[5] += R[3] * R[6] * I[0] + R[4] * R[7] * I[1] + R[5] * R[8] * I[2];
    tot[0] += m * (d[1] * d[1] + d[2] * d[2]);
    tot[1] += m * (d[0] * d[0] + d[2] * d[2]);
    tot[2] += m * (d[0] * d[0] + d[1] * d[1]);
    tot[3] -= m * d[0] * d[1], tot[4] -= m * d[0] * d[2], tot[5] -= m * d[1] * d[2];
  }
  principal(tot, b->iquat, b->inertia);
  if (b->inertia[2] < MJ_EPS)
    return mj_fail(c, b->node, MR_ERR_INVALID, "the geoms' inertia must have positive eigenvalues");
  return MR_OK;
}

/* boundmass, boundinertia, sign and triangle checks */
static mr_status check_inertia(mj_ctx *c, mj_body *b) {
  double *I = b->inertia;
  b->mass = fmax(b->mass, c->boundmass);
  for (int k = 0; k < 3; ++k)
    I[k] = fmax(I[k], c->boundinertia);
  if (b->mass < 0 || I[0] < 0 || I[1] < 0 || I[2] < 0)
    return mj_fail(c, b->node, MR_ERR_INVALID, "mass and inertia cannot be negative");
  if (I[0] + I[1] < I[2] || I[0] + I[2] < I[1] || I[1] + I[2] < I[0]) {
    if (!c->balanceinertia)
      return mj_fail(c, b->node, MR_ERR_INVALID,
                     "inertia (%g %g %g) must satisfy A + B >= C; "
                     "use compiler balanceinertia=\"true\" to fix it",
                     I[0], I[1], I[2]);
    I[0] = I[1] = I[2] = (I[0] + I[1] + I[2]) / 3.0;
  }
  return MR_OK;
}

static mr_status compile_joint(mj_ctx *c, const mj_body *b, mj_joint_el *e) {
  mj_joint *j = &e->j;
  const xmlNode *n = e->node;
  if (j->springdamper[0] || j->springdamper[1])
    return mj_fail(c, n, MR_ERR_UNSUPPORTED,
                   "springdamper (stiffness and damping derived from the mass matrix at qpos0) "
                   "is not supported: give stiffness and damping");
  if (j->type == MJ_FREE) {
    j->limited = 0;
  } else if (j->limited == MJ_AUTO) {
    int has_range = !(j->range[0] == 0 && j->range[1] == 0);
    if (!c->autolimits && has_range)
      return mj_fail(c, n, MR_ERR_INVALID,
                     "joint has a range but not limited: set compiler autolimits=\"true\", give "
                     "limited=\"true\" or \"false\", or remove the range (MuJoCo 2.2.2)");
    j->limited = has_range;
  }
  if (j->limited) {
    if (j->range[0] >= j->range[1] && j->type != MJ_BALL)
      return mj_fail(c, n, MR_ERR_INVALID, "range[0] = %g must be smaller than range[1] = %g",
                     j->range[0], j->range[1]);
    if (j->range[0] && j->type == MJ_BALL)
      return mj_fail(c, n, MR_ERR_INVALID, "range[0] must be 0 in a ball joint");
    if (c->degree && (j->type == MJ_HINGE || j->type == MJ_BALL)) {
      if (j->range[0]) j->range[0] *= MJ_PI / 180.0;
      if (j->range[1]) j->range[1] *= MJ_PI / 180.0;
    }
  }
  if (j->type == MJ_FREE || j->type == MJ_BALL) j->axis[0] = j->axis[1] = 0, j->axis[2] = 1;
  if (j->type == MJ_FREE) j->pos[0] = j->pos[1] = j->pos[2] = 0;
  if (mj_normvec(j->axis, 3) < MJ_EPS) return mj_fail(c, n, MR_ERR_INVALID, "axis too small");
  if (j->type != MJ_FREE) {
    make_local(c, b->pos, b->quat, j->pos, NULL, e->locpos, NULL);
  } else {
    e->locpos[0] = e->locpos[1] = e->locpos[2] = 0;
  }
  if (c->global) {
    double inv[4] = {b->quat[0], -b->quat[1], -b->quat[2], -b->quat[3]};
    mj_rotvec(e->locaxis, inv, j->axis);
  } else {
    memcpy(e->locaxis, j->axis, sizeof e->locaxis);
  }
  if (j->type == MJ_HINGE && c->degree) j->ref *= MJ_PI / 180.0, j->springref *= MJ_PI / 180.0;
  return MR_OK;
}

static mr_status compile_site(mj_ctx *c, const mj_body *b, mj_site_el *e) {
  mj_site *s = &e->s;
  mr_status st = MR_OK;
  if (s->type == MJ_MESH || s->type == MJ_HFIELD || s->type == MJ_PLANE)
    return mj_fail(c, e->node, MR_ERR_INVALID,
                   "meshes, hfields and planes are not allowed in "
                   "sites");
  if (!isnan(s->fromto[0])) {
    if (apply_fromto(c, e->node, s->type, s->fromto, s->size, s->pos, s->quat)) return mj_status(c);
  } else if (!mj_alt_set(c, e->node, &s->alt, s->quat, NULL, &st)) {
    return st;
  }
  mj_normvec(s->quat, 4);
  if (check_size(c, e->node, s->type, s->size)) return mj_status(c);
  make_local(c, b->pos, b->quat, s->pos, s->quat, e->locpos, e->locquat);
  return MR_OK;
}

/* the joints: at most 6 dofs, no rotation after a ball joint, a free joint alone */
static mr_status check_joints(mj_ctx *c, const mj_body *b) {
  int dofs = 0, ball = 0, free = 0;
  for (int i = 0; i < b->njoints; ++i) {
    int t = b->joints[i].j.type;
    dofs += t == MJ_FREE ? 6 : t == MJ_BALL ? 3 : 1;
    if ((t == MJ_BALL || t == MJ_HINGE) && ball)
      return mj_fail(c, b->joints[i].node, MR_ERR_INVALID, "ball joint followed by a rotation");
    ball |= t == MJ_BALL;
    free += t == MJ_FREE;
  }
  if (dofs > 6) return mj_fail(c, b->node, MR_ERR_INVALID, "more than 6 dofs in one body");
  if (free && (b->njoints > 1 || free > 1))
    return mj_fail(c, b->node, MR_ERR_INVALID, "a free joint can only appear by itself");
  if (free && b->parent != 0)
    return mj_fail(c, b->node, MR_ERR_INVALID,
                   "a free joint can only be used on a top-level body (a child of worldbody)");
  return MR_OK;
}

static mr_status compile_body(mj_ctx *c, int id) {
  mj_body *b = &c->bodies[id];
  mr_status st = MR_OK;
  if (id > 0) b->weld = b->njoints ? id : c->bodies[b->parent].weld;
  mj_normvec(b->quat, 4);
  mj_normvec(b->iquat, 4);
  if (!mj_alt_set(c, b->node, &b->alt, b->quat, b->inertia, &st) ||
      !mj_alt_set(c, b->node, &b->ialt, b->iquat, b->inertia, &st))
    return st;
  int infer = id > 0 && (!b->explicit_inertial || c->inertiafromgeom == 1);
  for (int i = 0; i < b->ngeoms; ++i)
    if (compile_geom(c, b, &b->geoms[i], infer)) return mj_status(c);
  if (id > 0 &&
      (c->inertiafromgeom == 1 || (!b->explicit_inertial && c->inertiafromgeom == MJ_AUTO)))
    if (geom_frame(c, b)) return mj_status(c);
  /* the world body is at the origin in either coordinate mode */
  int has_ipos = !isnan(b->ipos[0]), has_pos = !c->global || b->has_pos || id == 0;
  if (!has_ipos && !has_pos)
    return mj_fail(c, b->node, MR_ERR_INVALID, "body pos and inertial pos are both undefined");
  if (!has_ipos)
    memcpy(b->ipos, b->pos, sizeof b->ipos), memcpy(b->iquat, b->quat, sizeof b->iquat);
  if (!has_pos) memcpy(b->pos, b->ipos, sizeof b->pos), memcpy(b->quat, b->iquat, sizeof b->quat);
  if (id > 0 && check_inertia(c, b)) return mj_status(c);
  if (id > 0) {
    const mj_body *p = &c->bodies[b->parent];
    make_local(c, p->pos, p->quat, b->pos, b->quat, b->locpos, b->locquat);
    make_local(c, b->pos, b->quat, b->ipos, b->iquat, b->locipos, b->lociquat);
  }
  for (int i = 0; i < b->ngeoms; ++i)
    make_local(c, b->pos, b->quat, b->geoms[i].g.pos, b->geoms[i].g.quat, b->geoms[i].locpos,
               b->geoms[i].locquat);
  for (int i = 0; i < b->njoints; ++i)
    if (compile_joint(c, b, &b->joints[i])) return mj_status(c);
  if (check_joints(c, b)) return mj_status(c);
  for (int i = 0; i < b->nsites; ++i)
    if (compile_site(c, b, &b->sites[i])) return mj_status(c);
  return MR_OK;
}

/* a moving body needs mass and inertia, its own or a static child's */
static mr_status check_moving_mass(mj_ctx *c) {
  for (int i = 1; i < c->nbodies; ++i) {
    const mj_body *b = &c->bodies[i];
    if (!b->njoints || (b->mass >= MJ_MINVAL && b->inertia[0] >= MJ_MINVAL &&
                        b->inertia[1] >= MJ_MINVAL && b->inertia[2] >= MJ_MINVAL))
      continue;
    int ok = 0;
    for (int k = i + 1; k < c->nbodies && !ok; ++k) {
      const mj_body *ch = &c->bodies[k];
      ok = ch->parent == i && !ch->njoints && ch->mass >= MJ_MINVAL &&
           ch->inertia[0] >= MJ_MINVAL && ch->inertia[1] >= MJ_MINVAL &&
           ch->inertia[2] >= MJ_MINVAL;
    }
    if (!ok)
      return mj_fail(c, b->node, MR_ERR_INVALID,
                     "mass and inertia of moving bodies must be larger than %g", MJ_MINVAL);
  }
  return MR_OK;
}

/* MuJoCo's ids: bodies in pre-order (their parse order), joints, geoms and sites body by body */
static void number_objects(mj_ctx *c) {
  c->njoints = c->ngeoms = c->nsites = 0;
  for (int i = 0; i < c->nbodies; ++i) {
    mj_body *b = &c->bodies[i];
    for (int k = 0; k < b->njoints; ++k)
      b->joints[k].id = c->njoints++;
    for (int k = 0; k < b->ngeoms; ++k)
      b->geoms[k].id = c->ngeoms++;
    for (int k = 0; k < b->nsites; ++k)
      b->sites[k].id = c->nsites++;
  }
}

mr_status mj_compile(mj_ctx *c) {
  number_objects(c);
  for (int i = 0; i < c->nbodies; ++i)
    if (compile_body(c, i)) return mj_status(c);
  if (check_moving_mass(c)) return mj_status(c);
  if (c->settotalmass > 0) {
    double total = 0;
    for (int i = 1; i < c->nbodies; ++i)
      total += c->bodies[i].mass;
    double scale = fmax(MJ_MINVAL, c->settotalmass / fmax(MJ_MINVAL, total));
    for (int i = 1; i < c->nbodies; ++i) {
      c->bodies[i].mass *= scale;
      for (int k = 0; k < 3; ++k)
        c->bodies[i].inertia[k] *= scale;
    }
  }
  return MR_OK;
}
