/* Heightfields: construction (from a function's samples or a text grid file), the
 * piecewise-linear surface (two triangles per cell, diagonal from (i, j) to (i+1, j+1)), and
 * collision of convex shapes against it.
 *
 * A shape is probed by spheres: a sphere by itself, a capsule by spheres along its segment
 * (spacing at most half a cell), a box by its 8 vertices, a cylinder by 8 rim points per cap, a
 * mesh by its hull vertices, an ellipsoid by its support point along the field's -z. Each probe
 * is tested against every triangle of the cells its bounding square (radius + margin) covers:
 * above a triangle's plane, the distance to the closest point of the triangle (Ericson §5.1.5),
 * which makes Φ_N continuous across cell edges and vertices; below it, the depth under the
 * plane when the probe lies over the triangle. Per probe the deepest candidates with distinct
 * normals are kept (at most 4), then the pair is reduced to 4 contacts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/narrow.h"

/* bounds of the heights */
static void hfield_bounds(mr_hfield *h) {
  h->hmin = INFINITY, h->hmax = -INFINITY;
  for (int i = 0; i < h->nx * h->ny; ++i)
    h->hmin = fmin(h->hmin, h->h[i]), h->hmax = fmax(h->hmax, h->h[i]);
}

static mr_hfield *hfield_alloc(int nx, int ny, double x0, double y0, double dx, double dy,
                               double base, const char *what, mr_error *err) {
  if (nx < 2 || ny < 2 || !(dx > 0) || !(dy > 0) || !(base >= 0) || !isfinite(dx) ||
      !isfinite(dy) || !isfinite(x0) || !isfinite(y0) || !isfinite(base)) {
    mr_error_set(err, MR_ERR_INVALID,
                 "%s: heightfield needs nx, ny >= 2 (got %d, %d), dx, dy > 0 (got %g, %g), "
                 "base >= 0 (got %g)",
                 what, nx, ny, dx, dy, base);
    return NULL;
  }
  mr_hfield *h = calloc(1, sizeof *h);
  if (h) h->h = malloc((size_t)nx * (size_t)ny * sizeof(double));
  if (!h || !h->h) {
    free(h);
    mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory for a %d x %d heightfield", what, nx, ny);
    return NULL;
  }
  h->nx = nx, h->ny = ny, h->x0 = x0, h->y0 = y0, h->dx = dx, h->dy = dy, h->base = base;
  return h;
}

void mr_hfield_free(mr_hfield *h) {
  if (!h) return;
  free(h->h);
  free(h);
}

mr_hfield *mr_hfield_from_function(double (*f)(double x, double y, void *user), void *user, int nx,
                                   int ny, double x0, double y0, double dx, double dy, double base,
                                   mr_error *err) {
  mr_hfield *h = hfield_alloc(nx, ny, x0, y0, dx, dy, base, "function", err);
  if (!h) return NULL;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      double x = x0 + i * dx, y = y0 + j * dy, z = f(x, y, user);
      if (!isfinite(z)) {
        mr_error_set(err, MR_ERR_NUMERIC, "heightfield sample at (%g, %g) is %g", x, y, z);
        mr_hfield_free(h);
        return NULL;
      }
      h->h[j * nx + i] = z;
    }
  hfield_bounds(h);
  return h;
}

/* parse the numbers of one line into row (at most cap); returns the count or -1 with err */
static int parse_row(char *line, double *row, int cap, const char *path, int lineno,
                     mr_error *err) {
  int n = 0;
  char *s = line;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == ',' || *s == '\r' || *s == '\n')
      s++;
    if (!*s) return n;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || (*end && !strchr(" \t,\r\n", *end))) {
      char tok[32];
      snprintf(tok, sizeof tok, "%.*s", (int)strcspn(s, " \t,\r\n"), s);
      mr_error_set(err, MR_ERR_PARSE, "%s:%d: bad height '%s'", path, lineno, tok);
      return -1;
    }
    if (n == cap) {
      mr_error_set(err, MR_ERR_PARSE, "%s:%d: more than %d values", path, lineno, cap);
      return -1;
    }
    row[n++] = v;
    s = end;
  }
}

mr_hfield *mr_hfield_load(const char *path, double x0, double y0, double dx, double dy, double base,
                          mr_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    mr_error_set(err, MR_ERR_IO, "%s: cannot open heightfield file", path);
    return NULL;
  }
  /* read every row into a growing buffer; the first row fixes nx */
  char line[1 << 16];
  double *vals = NULL, row[4096];
  int nx = -1, ny = 0, lineno = 0, cap = 0;
  mr_status st = MR_OK;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (line[strspn(line, " \t\r\n")] == '#' || line[strspn(line, " \t\r\n")] == '\0') continue;
    int n = parse_row(line, row, 4096, path, lineno, err);
    if (n < 0) {
      st = MR_ERR_PARSE;
      break;
    }
    if (nx < 0) nx = n;
    if (n != nx) {
      st = mr_error_set(err, MR_ERR_PARSE, "%s:%d: %d values, expected %d", path, lineno, n, nx);
      break;
    }
    if ((ny + 1) * nx > cap) {
      cap = cap ? 2 * cap : 64 * nx;
      double *p = realloc(vals, (size_t)cap * sizeof(double));
      if (!p) {
        st = mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
        break;
      }
      vals = p;
    }
    memcpy(vals + (size_t)ny * nx, row, (size_t)nx * sizeof(double));
    ny++;
  }
  fclose(f);
  mr_hfield *h = NULL;
  if (st == MR_OK) h = hfield_alloc(nx, ny, x0, y0, dx, dy, base, path, err);
  if (h) {
    memcpy(h->h, vals, (size_t)nx * ny * sizeof(double));
    hfield_bounds(h);
  }
  free(vals);
  return h;
}

/* the two triangles of cell (i, j): t = 0 below the diagonal (u >= v), 1 above */
static void triangle(const mr_hfield *h, int i, int j, int t, mr_vec3 v[3]) {
  double x = h->x0 + i * h->dx, y = h->y0 + j * h->dy;
  const double *z = h->h + j * h->nx + i;
  v[0] = mr_v3(x, y, z[0]);
  v[1] = t ? mr_v3(x + h->dx, y + h->dy, z[h->nx + 1]) : mr_v3(x + h->dx, y, z[1]);
  v[2] = t ? mr_v3(x, y + h->dy, z[h->nx]) : mr_v3(x + h->dx, y + h->dy, z[h->nx + 1]);
}

double mr_hfield_height(const mr_hfield *h, double x, double y) {
  double fx = (x - h->x0) / h->dx, fy = (y - h->y0) / h->dy;
  int i = (int)fmin(fmax(floor(fx), 0), h->nx - 2), j = (int)fmin(fmax(floor(fy), 0), h->ny - 2);
  double u = fmin(fmax(fx - i, 0), 1), v = fmin(fmax(fy - j, 0), 1);
  const double *z = h->h + j * h->nx + i;
  if (u >= v) return z[0] + u * (z[1] - z[0]) + v * (z[h->nx + 1] - z[1]);
  return z[0] + v * (z[h->nx] - z[0]) + u * (z[h->nx + 1] - z[h->nx]);
}

/* closest point of triangle abc to p (Ericson, Real-Time Collision Detection §5.1.5) */
static mr_vec3 closest_on_triangle(mr_vec3 p, mr_vec3 a, mr_vec3 b, mr_vec3 c) {
  mr_vec3 ab = mr_v3_sub(b, a), ac = mr_v3_sub(c, a), ap = mr_v3_sub(p, a);
  double d1 = mr_v3_dot(ab, ap), d2 = mr_v3_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return a;
  mr_vec3 bp = mr_v3_sub(p, b);
  double d3 = mr_v3_dot(ab, bp), d4 = mr_v3_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return b;
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return mr_v3_madd(a, d1 / (d1 - d3), ab);
  mr_vec3 cp = mr_v3_sub(p, c);
  double d5 = mr_v3_dot(ab, cp), d6 = mr_v3_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return c;
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return mr_v3_madd(a, d2 / (d2 - d6), ac);
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
    return mr_v3_madd(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), mr_v3_sub(c, b));
  double den = 1.0 / (va + vb + vc);
  return mr_v3_add(a, mr_v3_add(mr_v3_scale(ab, vb * den), mr_v3_scale(ac, vc * den)));
}

/* is (x, y) over the triangle's projection (barycentric signs in the plane z = 0) */
static int over_triangle(mr_vec3 p, const mr_vec3 v[3]) {
  double s = 0;
  int sign = 0;
  for (int k = 0; k < 3; ++k) {
    const mr_vec3 *a = &v[k], *b = &v[(k + 1) % 3];
    s = (b->v[0] - a->v[0]) * (p.v[1] - a->v[1]) - (b->v[1] - a->v[1]) * (p.v[0] - a->v[0]);
    if (s < -1e-15) sign |= 1;
    if (s > 1e-15) sign |= 2;
  }
  return sign != 3;
}

/* is q strictly inside triangle v (not on an edge or vertex) */
static int interior(mr_vec3 q, const mr_vec3 v[3], mr_vec3 nt) {
  for (int k = 0; k < 3; ++k) {
    mr_vec3 e = mr_v3_sub(v[(k + 1) % 3], v[k]);
    double len = mr_v3_norm(e);
    if (mr_v3_dot(mr_v3_cross(e, mr_v3_sub(q, v[k])), nt) <= 1e-12 * len) return 0;
  }
  return 1;
}

/* one probe sphere (centre x, radius r, field frame) against triangle v: 1 with a candidate
 * whose closest point is inside the triangle, 2 on its boundary, 0 without one */
static int probe_triangle(mr_vec3 x, double r, const mr_vec3 v[3], double margin, raw_contact *c) {
  mr_vec3 nt = mr_v3_normalize(mr_v3_cross(mr_v3_sub(v[1], v[0]), mr_v3_sub(v[2], v[0])));
  double s = mr_v3_dot(mr_v3_sub(x, v[0]), nt);
  mr_vec3 q = closest_on_triangle(x, v[0], v[1], v[2]);
  if (s >= 0) {
    mr_vec3 d = mr_v3_sub(x, q);
    double dist = mr_v3_norm(d);
    c->n = dist > 1e-12 ? mr_v3_scale(d, 1.0 / dist) : nt;
    c->phi = dist - r;
  } else {
    if (!over_triangle(x, v)) return 0;
    c->n = nt;
    c->phi = s - r;
  }
  if (c->phi > margin) return 0;
  c->p = mr_v3_madd(x, -(r + 0.5 * c->phi), c->n);
  return s < 0 || interior(q, v, nt) ? 1 : 2;
}

/* keep cand among at most keep contacts with distinct normals, the deepest per normal */
static int keep_distinct(raw_contact *kept, int n, int keep, const raw_contact *cand) {
  for (int k = 0; k < n; ++k)
    if (mr_v3_dot(kept[k].n, cand->n) > 0.999) {
      if (cand->phi < kept[k].phi) kept[k] = *cand;
      return n;
    }
  if (n < keep) {
    kept[n] = *cand;
    return n + 1;
  }
  int worst = 0;
  for (int k = 1; k < n; ++k)
    if (kept[k].phi > kept[worst].phi) worst = k;
  if (cand->phi < kept[worst].phi) kept[worst] = *cand;
  return n;
}

/* one probe against the cells its square covers; appends at most keep contacts to out: the
 * deepest candidate, and other face candidates (closest point inside a triangle, e.g. the two
 * slopes of a valley) with distinct normals; edge and vertex candidates other than the deepest
 * are not local minima of the distance (a neighbouring face is closer) and are dropped */
static int probe_field(const mr_hfield *h, mr_vec3 x, double r, double margin, int keep,
                       int feature, raw_contact *out) {
  double ext = r + margin;
  int i0 = (int)floor((x.v[0] - ext - h->x0) / h->dx),
      i1 = (int)floor((x.v[0] + ext - h->x0) / h->dx);
  int j0 = (int)floor((x.v[1] - ext - h->y0) / h->dy),
      j1 = (int)floor((x.v[1] + ext - h->y0) / h->dy);
  i0 = i0 < 0 ? 0 : i0, j0 = j0 < 0 ? 0 : j0;
  i1 = i1 > h->nx - 2 ? h->nx - 2 : i1, j1 = j1 > h->ny - 2 ? h->ny - 2 : j1;
  if (x.v[2] - ext > h->hmax) return 0;
  int n = 0, found = 0;
  raw_contact deepest;
  for (int j = j0; j <= j1; ++j)
    for (int i = i0; i <= i1; ++i)
      for (int t = 0; t < 2; ++t) {
        mr_vec3 v[3];
        raw_contact cand;
        triangle(h, i, j, t, v);
        int kind = probe_triangle(x, r, v, margin, &cand);
        if (!kind) continue;
        if (!found || cand.phi < deepest.phi) deepest = cand, found = 1;
        if (kind == 1 && keep > 1) n = keep_distinct(out, n, keep, &cand);
      }
  if (found) n = keep_distinct(out, n, keep, &deepest);
  for (int k = 0; k < n; ++k)
    out[k].feature = feature * 4 + k;
  return n;
}

/* the number of probe spheres of geometry g (cell: the field's smaller spacing) */
static int probe_count(const mr_geom *g, double cell) {
  switch (g->type) {
  case MR_GEOM_CAPSULE: {
    double m = ceil(2 * g->size[1] / (0.5 * cell)) + 1;
    return m > 64 ? 64 : m < 2 ? 2 : (int)m;
  }
  case MR_GEOM_BOX:
    return 8;
  case MR_GEOM_CYLINDER:
    return 16;
  case MR_GEOM_MESH:
    return g->mesh ? g->mesh->nhull : 0;
  default:
    return 1;
  }
}

/* probe k of shape a (placement Xl in the field frame): centre and radius */
static mr_vec3 probe_at(const shape *a, const mr_se3 *Xl, int k, int count, double *r) {
  const mr_geom *g = a->g;
  const double *s = g->size;
  *r = 0;
  switch (g->type) {
  case MR_GEOM_SPHERE:
    *r = s[0];
    return Xl->p;
  case MR_GEOM_CAPSULE:
    *r = s[0];
    return mr_se3_act_point(Xl, mr_v3(0, 0, -s[1] + 2 * s[1] * k / (count - 1)));
  case MR_GEOM_BOX:
    return mr_se3_act_point(
        Xl, mr_v3(k & 1 ? s[0] : -s[0], k & 2 ? s[1] : -s[1], k & 4 ? s[2] : -s[2]));
  case MR_GEOM_CYLINDER: {
    double th = 2 * M_PI * (k % 8) / 8.0;
    return mr_se3_act_point(Xl, mr_v3(s[0] * cos(th), s[0] * sin(th), k < 8 ? -s[1] : s[1]));
  }
  case MR_GEOM_MESH: {
    const double *v = &g->mesh->hull[3 * k];
    return mr_se3_act_point(Xl, mr_v3(v[0], v[1], v[2]));
  }
  default: {
    shape sl = {g, *Xl};
    return shape_support(&sl, mr_v3(0, 0, -1));
  }
  }
}

/* grid vertices of the field that poke into box a (field frame Xl) deeper than thresh: the
 * terrain's peaks under a box face, which the box's vertices cannot see. Any number of grid
 * vertices may lie under the box: they stream through a buffer of MR_PAIR_MAX_CONTACTS that is
 * reduced to 4 whenever it fills, so at most MR_PAIR_MAX_CONTACTS come out. */
static int box_grid_points(const mr_hfield *h, const mr_geom *g, const mr_se3 *Xl, double thresh,
                           raw_contact *out) {
  enum { cap = MR_PAIR_MAX_CONTACTS };
  double ex = 0, ey = 0;
  for (int k = 0; k < 3; ++k)
    ex += fabs(Xl->R.m[0][k]) * g->size[k], ey += fabs(Xl->R.m[1][k]) * g->size[k];
  int i0 = (int)ceil((Xl->p.v[0] - ex - h->x0) / h->dx),
      i1 = (int)floor((Xl->p.v[0] + ex - h->x0) / h->dx);
  int j0 = (int)ceil((Xl->p.v[1] - ey - h->y0) / h->dy),
      j1 = (int)floor((Xl->p.v[1] + ey - h->y0) / h->dy);
  i0 = i0 < 0 ? 0 : i0, j0 = j0 < 0 ? 0 : j0;
  i1 = i1 > h->nx - 1 ? h->nx - 1 : i1, j1 = j1 > h->ny - 1 ? h->ny - 1 : j1;
  int n = 0;
  for (int j = j0; j <= j1; ++j)
    for (int i = i0; i <= i1; ++i) {
      mr_vec3 v = mr_v3(h->x0 + i * h->dx, h->y0 + j * h->dy, h->h[j * h->nx + i]), q, nl;
      double d = box_closest(g->size, mr_se3_inv_act_point(Xl, v), &q, &nl);
      if (!(d < thresh - 1e-9)) continue;
      raw_contact c;
      c.n = mr_v3_neg(mr_m3_mulv(&Xl->R, nl));
      c.phi = d;
      c.p = mr_v3_scale(mr_v3_add(v, mr_se3_act_point(Xl, q)), 0.5);
      c.feature = 1000 + j * h->nx + i;
      if (n == cap) n = reduce_contacts(out, n, 4);
      out[n++] = c;
    }
  return n;
}

int convex_hfield(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  const mr_hfield *h = b->g->hfield;
  if (!h) return 0;
  mr_se3 Xl = mr_se3_inv_mul(&b->X, &a->X);
  int np = probe_count(a->g, fmin(h->dx, h->dy));
  /* per probe up to 4 distinct normals for spheres, the deepest for points */
  raw_contact buf[MR_PAIR_MAX_CONTACTS + 4];
  int n = 0;
  for (int k = 0; k < np; ++k) {
    double r;
    mr_vec3 x = probe_at(a, &Xl, k, np, &r);
    n += probe_field(h, x, r, c->margin, r > 0 ? 4 : 1, k, buf + n);
    if (n > MR_PAIR_MAX_CONTACTS) n = reduce_contacts(buf, n, 4);
  }
  /* terrain peaks inside a box, deeper than its vertices' contacts (4 + at most 8 fit) */
  if (a->g->type == MR_GEOM_BOX) {
    double thresh = c->margin;
    for (int k = 0; k < n; ++k)
      thresh = fmin(thresh, buf[k].phi);
    n = reduce_contacts(buf, n, 4);
    n += box_grid_points(h, a->g, &Xl, thresh, buf + n);
  }
  n = reduce_contacts(buf, n, 4);
  /* back to the world frame */
  for (int k = 0; k < n; ++k) {
    out[k] = buf[k];
    out[k].p = mr_se3_act_point(&b->X, buf[k].p);
    out[k].n = mr_m3_mulv(&b->X.R, buf[k].n);
  }
  return n;
}
