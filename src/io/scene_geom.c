/* Scene geometries: parsing of every geometry type, conversion from the file's conventions to
 * mr_geom's (full box lengths → half extents, full cylinder length → half length, a halfspace
 * {n·x ≤ d} → the frame whose +z is n with origin d n), closed-form volumes and inertias at unit
 * density, heightfields sampled from a function or read from a file, and named materials.
 *
 * Unit-density inertias about the geometry's centre, along its axes (V volume, m = V):
 *   sphere r:          V = 4/3 π r³,       I = 2/5 m r²
 *   box a×b×c (full):  V = a b c,          Ixx = m (b² + c²)/12 (and cyclic)
 *   cylinder r, L:     V = π r² L,         Izz = m r²/2, Ixx = m (3 r² + L²)/12
 *   ellipsoid a, b, c: V = 4/3 π a b c,    Ixx = m (b² + c²)/5
 *   capsule r, L:      cylinder m_c = π r² L plus two hemispheres m_s = 4/3 π r³:
 *                      Izz = m_c r²/2 + 2/5 m_s r²,
 *                      Ixx = m_c (L²/12 + r²/4) + m_s (2/5 r² + L²/4 + 3/8 L r). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scene_internal.h"

static const char *const geom_types[] = {
    "halfspace", "sphere", "box", "capsule", "cylinder", "ellipsoid", "mesh", "heightfield", NULL};

#define COMMON_KEYS                                                                                \
  "type", "name", "position", "orientation", "friction", "restitution", "compliance",              \
      "tangential_compliance", "material", "group", "mask", "stiffness", "dissipation"

static const char *const keys_halfspace[] = {COMMON_KEYS, "normal", "offset", NULL};
static const char *const keys_sphere[] = {COMMON_KEYS, "radius", NULL};
static const char *const keys_box[] = {COMMON_KEYS, "size", NULL};
static const char *const keys_capsule[] = {COMMON_KEYS, "radius", "length", NULL};
static const char *const keys_ellipsoid[] = {COMMON_KEYS, "radii", NULL};
static const char *const keys_mesh[] = {COMMON_KEYS, "file", "scale", NULL};
static const char *const keys_hfield[] = {COMMON_KEYS, "function",  "file",       "extent", "step",
                                          "base",      "amplitude", "wavelength", NULL};
static const char *const *const type_keys[] = {keys_halfspace, keys_sphere,  keys_box,
                                               keys_capsule,   keys_capsule, keys_ellipsoid,
                                               keys_mesh,      keys_hfield};

/* ---- closed forms ---- */

int scene_geom_unit_inertia(const mr_geom *g, mr_inertia *Y) {
  const double *s = g->size;
  double V = 0, ix = 0, iy = 0, iz = 0;
  switch (g->type) {
  case MR_GEOM_SPHERE:
    V = 4.0 / 3.0 * M_PI * s[0] * s[0] * s[0];
    ix = iy = iz = 0.4 * V * s[0] * s[0];
    break;
  case MR_GEOM_BOX: /* half extents h: full lengths 2h, (2b)² + (2c)² over 12 = (b² + c²)/3 */
    V = 8.0 * s[0] * s[1] * s[2];
    ix = V * (s[1] * s[1] + s[2] * s[2]) / 3.0;
    iy = V * (s[0] * s[0] + s[2] * s[2]) / 3.0;
    iz = V * (s[0] * s[0] + s[1] * s[1]) / 3.0;
    break;
  case MR_GEOM_CYLINDER: {
    double r = s[0], L = 2.0 * s[1];
    V = M_PI * r * r * L;
    ix = iy = V * (3.0 * r * r + L * L) / 12.0;
    iz = 0.5 * V * r * r;
  } break;
  case MR_GEOM_ELLIPSOID:
    V = 4.0 / 3.0 * M_PI * s[0] * s[1] * s[2];
    ix = V * (s[1] * s[1] + s[2] * s[2]) / 5.0;
    iy = V * (s[0] * s[0] + s[2] * s[2]) / 5.0;
    iz = V * (s[0] * s[0] + s[1] * s[1]) / 5.0;
    break;
  case MR_GEOM_CAPSULE: {
    double r = s[0], L = 2.0 * s[1];
    double mc = M_PI * r * r * L, ms = 4.0 / 3.0 * M_PI * r * r * r;
    V = mc + ms;
    iz = 0.5 * mc * r * r + 0.4 * ms * r * r;
    ix = iy = mc * (L * L / 12.0 + r * r / 4.0) + ms * (0.4 * r * r + L * L / 4.0 + 0.375 * L * r);
  } break;
  default:
    return 0;
  }
  Y->m = V;
  Y->c = mr_v3_zero();
  Y->I = mr_m3_diag(ix, iy, iz);
  return 1;
}

/* ---- materials ---- */

const mr_scene_material *scene_material(const mr_scene *s, const char *name) {
  for (int i = 0; i < s->nmaterials; ++i)
    if (strcmp(s->materials[i].name, name) == 0) return &s->materials[i];
  return NULL;
}

static mr_status unit_range(mr_scene_ctx *c, const mr_ynode *map, const char *key, double *x,
                            double hi) {
  mr_ynode *n = mr_yaml_get(&c->y, map, key);
  if (!n) return MR_OK;
  if (mr_yaml_double(&c->y, n, key, x)) return scene_status(c);
  if (*x < 0 || *x > hi)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'%s': must be in [0, %g], got %g", key, hi, *x);
  return MR_OK;
}

/* friction / restitution / compliance / tangential_compliance keys of a mapping */
static mr_status contact_params(mr_scene_ctx *c, const mr_ynode *n, double *mu, double *e,
                                double *R, double *RT) {
  if (unit_range(c, n, "friction", mu, INFINITY) || unit_range(c, n, "restitution", e, 1.0) ||
      unit_range(c, n, "compliance", R, INFINITY) ||
      unit_range(c, n, "tangential_compliance", RT, INFINITY))
    return scene_status(c);
  return MR_OK;
}

/* the stiffness (> 0, N/m) and dissipation (≥ 0, s) keys of a geometry or material into k,
 * tau; stiffness excludes compliance (then R = 0), dissipation needs stiffness */
static mr_status stiffness_params(mr_scene_ctx *c, const mr_ynode *n, double *k, double *tau,
                                  double *R) {
  mr_ynode *kn = mr_yaml_get(&c->y, n, "stiffness"), *dn = mr_yaml_get(&c->y, n, "dissipation");
  mr_ynode *rn = mr_yaml_get(&c->y, n, "compliance");
  if (kn && rn)
    return mr_yaml_error(&c->y, kn, MR_ERR_INVALID,
                         "'stiffness': excludes 'compliance' (given %s), got '%s'",
                         mr_yaml_text(rn), mr_yaml_text(kn));
  if (dn && !kn)
    return mr_yaml_error(&c->y, dn, MR_ERR_INVALID, "'dissipation': needs 'stiffness', got '%s'",
                         mr_yaml_text(dn));
  if (!kn) return MR_OK;
  if (mr_yaml_double(&c->y, kn, "stiffness", k)) return scene_status(c);
  if (!(*k > 0.0) || !isfinite(*k))
    return mr_yaml_error(&c->y, kn, MR_ERR_INVALID,
                         "'stiffness': must be a finite number > 0 (N/m), got '%s'",
                         mr_yaml_text(kn));
  if (unit_range(c, n, "dissipation", tau, INFINITY)) return scene_status(c);
  *R = 0.0;
  return MR_OK;
}

mr_status scene_materials(mr_scene_ctx *c, const mr_ynode *map) {
  static const char *const keys[] = {
      "friction",  "restitution", "compliance", "tangential_compliance",
      "stiffness", "dissipation", NULL};
  mr_scene *s = c->s;
  if (mr_yaml_need_map(&c->y, map, "materials")) return scene_status(c);
  int n = mr_yaml_map_size(map);
  s->materials = calloc((size_t)(n ? n : 1), sizeof *s->materials);
  if (!s->materials) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; ++i) {
    mr_scene_material *m = &s->materials[i];
    mr_ynode *v = mr_yaml_map_value(&c->y, map, i);
    snprintf(m->name, sizeof m->name, "%s", mr_yaml_text(mr_yaml_map_key(&c->y, map, i)));
    char what[MR_NAME_MAX + 16];
    snprintf(what, sizeof what, "material '%s'", m->name);
    m->friction = 1.0;
    if (mr_yaml_check_map(&c->y, v, keys, what) ||
        contact_params(c, v, &m->friction, &m->restitution, &m->compliance,
                       &m->tangential_compliance) ||
        stiffness_params(c, v, &m->stiffness, &m->dissipation, &m->compliance))
      return scene_status(c);
    s->nmaterials = i + 1;
  }
  return MR_OK;
}

/* ---- heightfields ---- */

static double h_bumpy(double x, double y, double a, double w) {
  (void)a, (void)w;
  return sin(30 * x) / 5 + cos(30 * y * y) / 20 + sin(50 * x * y) / 10;
}
static double h_flat(double x, double y, double a, double w) {
  return 0 * x * y * a * w;
}
static double h_sine(double x, double y, double a, double w) {
  return a * sin(2 * M_PI * x / w) * sin(2 * M_PI * y / w);
}

static const struct {
  const char *name;
  double (*h)(double x, double y, double amplitude, double wavelength);
} hfuncs[] = {{"bumpy", h_bumpy}, {"flat", h_flat}, {"sine", h_sine}};
static const char *const hfunc_names[] = {"bumpy", "flat", "sine", NULL};

static mr_hfield *hfield_new(int nx, int ny) {
  mr_hfield *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->nx = nx, h->ny = ny;
  h->h = malloc((size_t)nx * (size_t)ny * sizeof *h->h);
  if (!h->h) return free(h), NULL;
  return h;
}

static void hfield_range(mr_hfield *h) {
  h->hmin = INFINITY, h->hmax = -INFINITY;
  for (int i = 0; i < h->nx * h->ny; ++i) {
    if (h->h[i] < h->hmin) h->hmin = h->h[i];
    if (h->h[i] > h->hmax) h->hmax = h->h[i];
  }
}

static mr_status hfield_function(mr_scene_ctx *c, const mr_ynode *n, const double ext[4],
                                 mr_hfield **out) {
  const mr_ynode *fn = mr_yaml_get(&c->y, n, "function");
  const mr_ynode *sn = mr_yaml_get(&c->y, n, "step");
  double step = 0, amp = 0.1, wl = 1.0;
  int f = -1;
  for (int i = 0; i < 3; ++i)
    if (strcmp(mr_yaml_text(fn), hfuncs[i].name) == 0) f = i;
  if (f < 0) {
    const char *near = mr_yaml_nearest(mr_yaml_text(fn), hfunc_names);
    return mr_yaml_error(&c->y, fn, MR_ERR_INVALID,
                         "'function': unknown height function '%s'%s%s%s (known: bumpy, flat, "
                         "sine)",
                         mr_yaml_text(fn), near ? ": did you mean '" : "", near ? near : "",
                         near ? "'?" : "");
  }
  if (!sn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "heightfield: missing 'step'");
  if (mr_yaml_double(&c->y, sn, "step", &step) || mr_yaml_opt_double(&c->y, n, "amplitude", &amp) ||
      mr_yaml_opt_double(&c->y, n, "wavelength", &wl))
    return scene_status(c);
  double nxd = floor((ext[1] - ext[0]) / step + 1e-9) + 1,
         nyd = floor((ext[3] - ext[2]) / step + 1e-9) + 1;
  if (!(step > 0) || nxd < 2 || nyd < 2 || nxd * nyd > 5e7)
    return mr_yaml_error(&c->y, sn, MR_ERR_INVALID,
                         "'step': %g gives a %gx%g grid over the extent; need at least 2x2 and at "
                         "most 5e7 samples",
                         step, nxd, nyd);
  if (!(wl > 0))
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'wavelength': must be > 0, got %g", wl);
  mr_hfield *h = hfield_new((int)nxd, (int)nyd);
  if (!h) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory for a heightfield");
  h->x0 = ext[0], h->y0 = ext[2], h->dx = h->dy = step;
  for (int iy = 0; iy < h->ny; ++iy)
    for (int ix = 0; ix < h->nx; ++ix)
      h->h[iy * h->nx + ix] = hfuncs[f].h(h->x0 + ix * step, h->y0 + iy * step, amp, wl);
  *out = h;
  return MR_OK;
}

/* the longest number token of a heightfield file (longer ones are errors, never truncated) */
#define HFIELD_TOKEN_MAX 63

/* a grid of numbers being read: values in row order, the row length, where the reader is */
typedef struct {
  double *vals;
  int count, cap, nx, ny, row;
  int line, col;
} hfield_grid;

static mr_status grid_error(mr_scene_ctx *c, const char *path, const hfield_grid *g, int col,
                            const char *fmt, const char *what) {
  char msg[200];
  snprintf(msg, sizeof msg, fmt, what);
  return mr_error_set(c->err, MR_ERR_PARSE, "%s:%d:%d: heightfield: %s", path, g->line, col, msg);
}

/* one token: a finite number appended to the grid */
static mr_status grid_value(mr_scene_ctx *c, const char *path, hfield_grid *g, const char *tok,
                            int col) {
  char *end;
  double x = strtod(tok, &end);
  if (*end || !isfinite(x)) return grid_error(c, path, g, col, "'%s' is not a finite number", tok);
  if (g->count == g->cap) {
    if (g->cap > 25000000) return grid_error(c, path, g, col, "%s", "more than 5e7 values");
    double *nv = realloc(g->vals, (size_t)(g->cap = 2 * g->cap + 1024) * sizeof *nv);
    if (!nv) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", path);
    g->vals = nv;
  }
  g->vals[g->count++] = x, g->row++;
  return MR_OK;
}

/* the end of a line (or of the file): rows must have equal lengths */
static mr_status grid_row_end(mr_scene_ctx *c, const char *path, hfield_grid *g) {
  if (!g->row) return MR_OK;
  if (!g->nx) g->nx = g->row;
  if (g->row != g->nx) {
    char what[64];
    snprintf(what, sizeof what, "%d values where the first row has %d", g->row, g->nx);
    return grid_error(c, path, g, 1, "row of %s", what);
  }
  g->ny++, g->row = 0;
  return MR_OK;
}

/* tokenise by hand so that line ends count rows; the last line needs no line end */
static mr_status grid_read(mr_scene_ctx *c, FILE *f, const char *path, hfield_grid *g) {
  char tok[HFIELD_TOKEN_MAX + 1];
  int tl = 0, tcol = 0, ch;
  mr_status st = MR_OK;
  g->line = 1;
  do {
    ch = fgetc(f);
    ++g->col;
    int sep = ch == EOF || ch == ' ' || ch == '\t' || ch == ',' || ch == '\n' || ch == '\r';
    if (!sep && tl == HFIELD_TOKEN_MAX)
      return tok[tl] = '\0',
             grid_error(c, path, g, tcol, "a token longer than 63 characters ('%s...')", tok);
    if (!sep && !tl) tcol = g->col;
    if (!sep) tok[tl++] = (char)ch;
    if (sep && tl) tok[tl] = '\0', tl = 0, st = grid_value(c, path, g, tok, tcol);
    if (!st && (ch == '\n' || ch == EOF)) st = grid_row_end(c, path, g);
    if (ch == '\n') g->line++, g->col = 0;
  } while (!st && ch != EOF);
  if (!st && ferror(f)) st = mr_error_set(c->err, MR_ERR_IO, "%s: read error", path);
  return st;
}

/* a text file of ny rows of nx heights (row iy is y = y0 + iy dy); the extent spans the grid */
static mr_status hfield_file(mr_scene_ctx *c, const mr_ynode *fnode, const double ext[4],
                             mr_hfield **out) {
  char path[MR_SCENE_PATH_MAX];
  const char *rel = mr_yaml_text(fnode);
  if (scene_resolve(c, rel, path, sizeof path))
    return mr_yaml_error(&c->y, fnode, MR_ERR_IO, "'file': heightfield file '%s' not found", rel);
  FILE *f = fopen(path, "r");
  if (!f) return mr_yaml_error(&c->y, fnode, MR_ERR_IO, "'file': cannot open '%s'", path);
  hfield_grid g = {0};
  mr_status st = grid_read(c, f, path, &g);
  fclose(f);
  if (!st && (g.nx < 2 || g.ny < 2))
    st = mr_yaml_error(&c->y, fnode, MR_ERR_PARSE,
                       "'file': '%s' is not a grid of numbers (rows of equal length, at least "
                       "2x2): %d x %d",
                       path, g.nx, g.ny);
  if (st) return free(g.vals), st;
  mr_hfield *h = hfield_new(g.nx, g.ny);
  if (!h) return free(g.vals), mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  memcpy(h->h, g.vals, (size_t)g.nx * g.ny * sizeof *g.vals);
  free(g.vals);
  h->x0 = ext[0], h->y0 = ext[2];
  h->dx = (ext[1] - ext[0]) / (g.nx - 1), h->dy = (ext[3] - ext[2]) / (g.ny - 1);
  *out = h;
  return MR_OK;
}

static mr_status parse_hfield(mr_scene_ctx *c, const mr_ynode *n, mr_geom *g) {
  double ext[4] = {0}, base = 1.0;
  mr_ynode *fn = mr_yaml_get(&c->y, n, "function"), *file = mr_yaml_get(&c->y, n, "file");
  mr_ynode *en = mr_yaml_get(&c->y, n, "extent");
  if (!fn == !file)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                         "heightfield: give exactly one of 'function' and 'file'");
  if (!en) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "heightfield: missing 'extent'");
  if (mr_yaml_vec(&c->y, en, "extent", ext, 4) || mr_yaml_opt_double(&c->y, n, "base", &base))
    return scene_status(c);
  if (!(ext[1] > ext[0]) || !(ext[3] > ext[2]))
    return mr_yaml_error(&c->y, en, MR_ERR_INVALID,
                         "'extent': [xmin, xmax, ymin, ymax] must have xmin < xmax, ymin < ymax");
  if (!(base > 0))
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'base': must be > 0, got %g", base);
  mr_hfield *h = NULL;
  if (fn ? hfield_function(c, n, ext, &h) : hfield_file(c, file, ext, &h)) return scene_status(c);
  h->base = base;
  hfield_range(h);
  g->hfield = h;
  return MR_OK;
}

/* ---- sizes per type ---- */

static mr_status positive(mr_scene_ctx *c, const mr_ynode *n, const char *key, double *x, int len,
                          const char *type) {
  mr_ynode *v = mr_yaml_get(&c->y, n, key);
  if (!v) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "%s: missing '%s'", type, key);
  if (mr_yaml_vec(&c->y, v, key, x, len)) return scene_status(c);
  for (int k = 0; k < len; ++k)
    if (!(x[k] > 0))
      return mr_yaml_error(&c->y, v, MR_ERR_INVALID, "'%s' of the %s: must be > 0, got %g", key,
                           type, x[k]);
  return MR_OK;
}

/* one number written as a scalar */
static mr_status positive1(mr_scene_ctx *c, const mr_ynode *n, const char *key, double *x,
                           const char *type) {
  mr_ynode *v = mr_yaml_get(&c->y, n, key);
  if (!v) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "%s: missing '%s'", type, key);
  if (mr_yaml_double(&c->y, v, key, x)) return scene_status(c);
  if (!(*x > 0))
    return mr_yaml_error(&c->y, v, MR_ERR_INVALID, "'%s' of the %s: must be > 0, got %g", key, type,
                         *x);
  return MR_OK;
}

/* the frame whose +z is the unit normal n and whose origin is d n */
static mr_se3 halfspace_frame(mr_vec3 n, double d) {
  mr_vec3 z = mr_v3(0, 0, 1), axis = mr_v3_cross(z, n);
  double s = mr_v3_norm(axis), cth = mr_v3_dot(z, n);
  mr_mat3 R = mr_m3_identity();
  if (s > 1e-12)
    R = mr_m3_axis_angle(mr_v3_scale(axis, 1.0 / s), atan2(s, cth));
  else if (cth < 0)
    R = mr_m3_diag(1, -1, -1);
  return mr_se3_make(R, mr_v3_scale(n, d));
}

static mr_status parse_halfspace(mr_scene_ctx *c, const mr_ynode *n, mr_geom *g) {
  double nv[3] = {0, 0, 1}, d = 0;
  if (mr_yaml_opt_vec(&c->y, n, "normal", nv, 3) || mr_yaml_opt_double(&c->y, n, "offset", &d))
    return scene_status(c);
  mr_vec3 nn = mr_v3(nv[0], nv[1], nv[2]);
  double len = mr_v3_norm(nn);
  if (!(len > 1e-12))
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "normal"), MR_ERR_INVALID,
                         "'normal': the zero vector has no direction");
  mr_se3 H = halfspace_frame(mr_v3_scale(nn, 1.0 / len), d);
  g->placement = mr_se3_mul(&g->placement, &H);
  return MR_OK;
}

static mr_status parse_mesh(mr_scene_ctx *c, const mr_ynode *n, mr_geom *g, char *path) {
  mr_ynode *f = mr_yaml_get(&c->y, n, "file");
  double sc[3] = {1, 1, 1};
  if (!f) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "mesh: missing 'file'");
  mr_ynode *sn = mr_yaml_get(&c->y, n, "scale");
  if (mr_yaml_is_scalar(sn)) {
    if (mr_yaml_double(&c->y, sn, "scale", &sc[0])) return scene_status(c);
    sc[1] = sc[2] = sc[0];
  } else if (sn && mr_yaml_vec(&c->y, sn, "scale", sc, 3)) {
    return scene_status(c);
  }
  if (!(sc[0] > 0 && sc[1] > 0 && sc[2] > 0))
    return mr_yaml_error(&c->y, sn, MR_ERR_INVALID, "'scale': must be > 0");
  if (scene_resolve(c, mr_yaml_text(f), path, MR_SCENE_PATH_MAX))
    return mr_yaml_error(&c->y, f, MR_ERR_IO, "'file': mesh file '%s' not found (looked in %s)",
                         mr_yaml_text(f), c->dir[0] ? "the scene's directory and ." : ".");
  g->mesh_scale = mr_v3(sc[0], sc[1], sc[2]);
  g->mesh_file = path;
  return MR_OK;
}

static mr_status parse_size(mr_scene_ctx *c, const mr_ynode *n, mr_geom *g, char *path) {
  double v[3];
  const char *tn = mr_geom_type_name(g->type);
  switch (g->type) {
  case MR_GEOM_HALFSPACE:
    return parse_halfspace(c, n, g);
  case MR_GEOM_SPHERE:
    return positive1(c, n, "radius", &g->size[0], tn);
  case MR_GEOM_BOX:
    if (positive(c, n, "size", v, 3, tn)) return scene_status(c);
    for (int k = 0; k < 3; ++k)
      g->size[k] = 0.5 * v[k];
    return MR_OK;
  case MR_GEOM_CAPSULE:
  case MR_GEOM_CYLINDER:
    if (positive1(c, n, "radius", &g->size[0], tn) || positive1(c, n, "length", &v[0], tn))
      return scene_status(c);
    g->size[1] = 0.5 * v[0];
    return MR_OK;
  case MR_GEOM_ELLIPSOID:
    return positive(c, n, "radii", g->size, 3, tn);
  case MR_GEOM_MESH:
    return parse_mesh(c, n, g, path);
  case MR_GEOM_HEIGHTFIELD:
    return parse_hfield(c, n, g);
  default:
    return MR_OK;
  }
}

/* type, name, material and contact parameters, collision filter */
static mr_status parse_common(mr_scene_ctx *c, const mr_ynode *n, mr_geom *g) {
  const char *mat = NULL;
  int group = 1, mask = -1;
  mr_ynode *mn = mr_yaml_get(&c->y, n, "material");
  if (mn && mr_yaml_string(&c->y, mn, "material", &mat)) return scene_status(c);
  if (mat) {
    const mr_scene_material *m = scene_material(c->s, mat);
    if (!m)
      return mr_yaml_error(&c->y, mn, MR_ERR_INVALID, "'material': no material named '%s'", mat);
    g->friction = m->friction, g->restitution = m->restitution, g->compliance = m->compliance;
    g->tangential_compliance = m->tangential_compliance;
    g->stiffness = m->stiffness, g->dissipation = m->dissipation;
  }
  if (contact_params(c, n, &g->friction, &g->restitution, &g->compliance,
                     &g->tangential_compliance) ||
      stiffness_params(c, n, &g->stiffness, &g->dissipation, &g->compliance) ||
      mr_yaml_opt_int(&c->y, n, "group", &group) || mr_yaml_opt_int(&c->y, n, "mask", &mask))
    return scene_status(c);
  g->group = (uint32_t)group;
  g->mask = (uint32_t)mask;
  return MR_OK;
}

static mr_status geom_type(mr_scene_ctx *c, const mr_ynode *n, mr_geom_type *t) {
  mr_ynode *tn = mr_yaml_get(&c->y, n, "type");
  if (!tn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "geometry: missing 'type'");
  for (int i = 0; geom_types[i]; ++i)
    if (strcmp(mr_yaml_text(tn), geom_types[i]) == 0) return *t = (mr_geom_type)i, MR_OK;
  const char *near = mr_yaml_nearest(mr_yaml_text(tn), geom_types);
  return mr_yaml_error(&c->y, tn, MR_ERR_INVALID,
                       "'type': unknown geometry type '%s'%s%s%s (known: halfspace, sphere, box, "
                       "capsule, cylinder, ellipsoid, mesh, heightfield)",
                       mr_yaml_text(tn), near ? ": did you mean '" : "", near ? near : "",
                       near ? "'?" : "");
}

static int geom_name_taken(const mr_model *m, const char *name) {
  for (int i = 0; i < m->ngeoms; ++i)
    if (strcmp(m->geoms[i].name, name) == 0) return 1;
  return 0;
}

static mr_status parse_geom(mr_scene_ctx *c, const mr_ynode *n, const char *body_name, int body,
                            int index, mr_se3 X_body, mr_geom *g, char *path) {
  mr_geom_type t = MR_GEOM_SPHERE;
  const char *name = NULL;
  if (mr_yaml_need_map(&c->y, n, "geoms[]") || geom_type(c, n, &t)) return scene_status(c);
  char what[MR_NAME_MAX + 32];
  snprintf(what, sizeof what, "a %s geometry of body '%s'", geom_types[t], body_name);
  *g = mr_geom_default(t, body);
  if (mr_yaml_check_map(&c->y, n, type_keys[t], what) ||
      mr_yaml_opt_string(&c->y, n, "name", &name) || scene_pose(c, n, &g->placement, NULL) ||
      parse_common(c, n, g))
    return scene_status(c);
  if (name)
    snprintf(g->name, sizeof g->name, "%s", name);
  else
    snprintf(g->name, sizeof g->name, "%.60s/%d", body_name, index);
  if (geom_name_taken(c->s->model, g->name))
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "duplicate geometry name '%s'", g->name);
  if (parse_size(c, n, g, path)) return scene_status(c);
  g->placement = mr_se3_mul(&X_body, &g->placement);
  return MR_OK;
}

mr_status scene_geoms(mr_scene_ctx *c, const mr_ynode *seq, const char *body_name, int body,
                      mr_se3 X_body, int need_inertia, mr_inertia *unit) {
  for (int i = 0; i < mr_yaml_seq_size(seq); ++i) {
    mr_ynode *n = mr_yaml_seq_at(&c->y, seq, i);
    mr_geom g;
    char path[MR_SCENE_PATH_MAX];
    memset(&g, 0, sizeof g);
    mr_status st = parse_geom(c, n, body_name, body, i, X_body, &g, path);
    if (!st && need_inertia && (g.type == MR_GEOM_HALFSPACE || g.type == MR_GEOM_HEIGHTFIELD))
      st = mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                         "body '%s': a %s is unbounded and needs 'fixed: true'", body_name,
                         mr_geom_type_name(g.type));
    if (!st && mr_model_add_geom(c->s->model, &g, c->err) < 0)
      st = mr_yaml_error(&c->y, n, scene_status(c), "%s", c->err ? c->err->msg : "");
    if (st) {
      if (g.hfield) free(g.hfield->h), free(g.hfield);
      return st;
    }
    mr_inertia Yg;
    if (need_inertia && scene_geom_unit_inertia(&g, &Yg)) {
      mr_inertia Yb = mr_se3_act_inertia(&g.placement, &Yg);
      *unit = mr_inertia_add(unit, &Yb);
    }
  }
  return MR_OK;
}
