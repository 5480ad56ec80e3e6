/* Recording runs for the HTML viewer and writing the page (docs/viewer.md has the format).
 *
 * Frames are taken at the display rate: with Δt_f = 1/fps, frame f is the first step whose time
 * t satisfies t + Δt/2 ≥ f Δt_f (frame 0 is the initial state). Each frame stores, per body
 * i ≥ 1 of the model, the world placement ᵒMᵢ from forward kinematics of q as position and unit
 * quaternion (x, y, z, w), and per contact of the last step the point p, the normal force
 * λ_n n and the friction force λ_t1 t₁ + λ_t2 t₂ (world frame, on the contact's first geometry,
 * N), from the contact frame (t₁, t₂, n) and λ of mr_sim_contacts. Arrays are written as
 * little-endian Float32 (Int32 for offsets) in base64 inside one JSON object. */
#include "cli/replay.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/output.h"

/* the page template and the bundled script, linked in from viewer/ (Makefile, CMake with
 * MOREAU_VIEWER on); a build without them (MOREAU_NO_VIEWER) writes no page */
#ifdef MOREAU_NO_VIEWER
static const char mr_viewer_page[1], *const mr_viewer_page_end = mr_viewer_page;
static const char mr_viewer_js[1], *const mr_viewer_js_end = mr_viewer_js;
#else
extern const char mr_viewer_page[], mr_viewer_page_end[];
extern const char mr_viewer_js[], mr_viewer_js_end[];
#endif

int mr_replay_available(mr_error *err) {
#ifdef MOREAU_NO_VIEWER
  mr_error_set(err, MR_ERR_UNSUPPORTED,
               "this moreau was built without the HTML viewer (CMake option MOREAU_VIEWER=OFF, the "
               "default when npm is missing): build it with npm installed, or with make");
  return 0;
#else
  (void)err;
  return 1;
#endif
}

/* a growable array of 4-byte values (float or int32) */
typedef struct {
  union {
    float *f;
    int32_t *i;
  } x;
  size_t n, cap;
} buf;

enum { STAT_ENERGY, STAT_PENETRATION, STAT_EPS, STAT_ITER, STAT_CONTACTS, NSTATS };
static const char *const stat_names[NSTATS] = {"energy", "penetration", "eps_abs", "iterations",
                                               "contacts"};

typedef struct {
  char name[64];
  char status[MR_ERROR_MSG_MAX];
  buf frame_t;       /* frame times (s) */
  buf poses;         /* frames x (nbodies - 1) x 7 */
  buf contact_off;   /* frames + 1 offsets into contacts (in contacts) */
  buf contacts;      /* 9 per contact: p, normal force, friction force */
  buf stat_t;        /* step times (s) */
  buf stats[NSTATS]; /* one value per step */
  long next_frame;
} replay_run;

struct mr_replay {
  const mr_scene *scene;
  mr_data *data;
  double frame_dt; /* 0: every step */
  mr_replay_visual *visuals;
  int nvisuals;
  replay_run *runs;
  int nruns;
  int nomem; /* an allocation failed while recording */
};

/* ---- buffers ---- */

static int buf_reserve(buf *b, size_t extra) {
  if (b->n + extra <= b->cap) return 0;
  size_t cap = b->cap ? 2 * b->cap : 1024;
  while (cap < b->n + extra)
    cap *= 2;
  void *p = realloc(b->x.f, cap * 4);
  if (!p) return -1;
  b->x.f = p;
  b->cap = cap;
  return 0;
}

static int push_f(buf *b, double x) {
  if (buf_reserve(b, 1)) return -1;
  b->x.f[b->n++] = (float)x;
  return 0;
}

static int push_i(buf *b, int32_t x) {
  if (buf_reserve(b, 1)) return -1;
  b->x.i[b->n++] = x;
  return 0;
}

static void run_free(replay_run *r) {
  free(r->frame_t.x.f);
  free(r->poses.x.f);
  free(r->contact_off.x.i);
  free(r->contacts.x.f);
  free(r->stat_t.x.f);
  for (int k = 0; k < NSTATS; ++k)
    free(r->stats[k].x.f);
}

/* ---- lifetime ---- */

mr_replay *mr_replay_create(const mr_scene *scene, double fps, int *nskipped, char *skipped_msg,
                            mr_error *err) {
  if (!mr_replay_available(err)) return NULL;
  mr_replay *r = calloc(1, sizeof *r);
  if (!r || !(r->data = mr_data_create(scene->model))) {
    free(r);
    mr_error_set(err, MR_ERR_NOMEM, "out of memory");
    return NULL;
  }
  r->scene = scene;
  r->frame_dt = fps > 0.0 ? 1.0 / fps : 0.0;
  if (mr_replay_visuals(scene, &r->visuals, &r->nvisuals, nskipped, skipped_msg, err)) {
    mr_replay_free(r);
    return NULL;
  }
  return r;
}

void mr_replay_free(mr_replay *r) {
  if (!r) return;
  for (int k = 0; k < r->nruns; ++k)
    run_free(&r->runs[k]);
  free(r->runs);
  mr_replay_visuals_free(r->visuals, r->nvisuals);
  mr_data_free(r->data);
  free(r);
}

mr_status mr_replay_begin_run(mr_replay *r, const char *name, mr_error *err) {
  replay_run *runs = realloc(r->runs, (size_t)(r->nruns + 1) * sizeof *runs);
  if (!runs) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  r->runs = runs;
  replay_run *run = &runs[r->nruns++];
  memset(run, 0, sizeof *run);
  snprintf(run->name, sizeof run->name, "%s", name);
  snprintf(run->status, sizeof run->status, "ok");
  if (push_i(&run->contact_off, 0)) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  return MR_OK;
}

void mr_replay_end_run(mr_replay *r, const char *status) {
  if (r->nruns) snprintf(r->runs[r->nruns - 1].status, MR_ERROR_MSG_MAX, "%s", status);
}

/* ---- recording ---- */

/* the placements of every body i >= 1 at q */
static int record_poses(mr_replay *r, replay_run *run, const double *q) {
  const mr_model *m = r->scene->model;
  mr_forward_kinematics(m, r->data, q, NULL, NULL);
  if (buf_reserve(&run->poses, 7 * (size_t)(m->nbodies - 1))) return -1;
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_se3 *X = &r->data->oMi[b];
    mr_quat qt = mr_m3_to_quat(&X->R);
    float *o = run->poses.x.f + run->poses.n;
    for (int k = 0; k < 3; ++k)
      o[k] = (float)X->p.v[k];
    o[3] = (float)qt.x, o[4] = (float)qt.y, o[5] = (float)qt.z, o[6] = (float)qt.w;
    run->poses.n += 7;
  }
  return 0;
}

/* the last step's contacts: point, normal force λ_n n, friction force λ_t1 t₁ + λ_t2 t₂ */
static int record_contacts(replay_run *run, const mr_sim *s) {
  const mr_contact *c;
  const double *lambda;
  int n = mr_sim_contacts(s, &c, &lambda);
  if (buf_reserve(&run->contacts, 9 * (size_t)n)) return -1;
  for (int i = 0; i < n; ++i) {
    const double *l = lambda + 3 * i;
    float *o = run->contacts.x.f + run->contacts.n;
    for (int k = 0; k < 3; ++k) {
      o[k] = (float)c[i].point.v[k];
      o[3 + k] = (float)(l[2] * c[i].frame.m[k][2]);
      o[6 + k] = (float)(l[0] * c[i].frame.m[k][0] + l[1] * c[i].frame.m[k][1]);
    }
    run->contacts.n += 9;
  }
  return push_i(&run->contact_off, (int32_t)(run->contacts.n / 9));
}

/* is the state at time t (steps of dt) the next frame? */
static int frame_due(const mr_replay *r, const replay_run *run, double t, double dt) {
  if (run->frame_t.n == 0 || r->frame_dt <= 0.0) return 1;
  return t + 0.5 * dt >= (double)run->next_frame * r->frame_dt;
}

/* record the frame at time t; the next one is the first f Δt_f beyond t + Δt/2 */
static int record_frame(mr_replay *r, replay_run *run, double t, const double *q) {
  if (push_f(&run->frame_t, t) || record_poses(r, run, q)) return -1;
  double dt = r->scene->timestep;
  run->next_frame = r->frame_dt > 0.0 ? (long)floor((t + 0.5 * dt) / r->frame_dt) + 1 : 0;
  return 0;
}

static int record_stats(replay_run *run, double t, const double *v) {
  int bad = push_f(&run->stat_t, t);
  for (int k = 0; k < NSTATS; ++k)
    bad |= push_f(&run->stats[k], v[k]);
  return bad;
}

void mr_replay_record(void *ctx, const mr_sim *s) {
  mr_replay *r = ctx;
  if (!r->nruns) return;
  replay_run *run = &r->runs[r->nruns - 1];
  double t = mr_sim_time(s);
  int bad = 0;
  if (mr_sim_steps(s) > 0) {
    const mr_step_stats *st = mr_sim_last(s);
    double v[NSTATS] = {st->kinetic + st->potential, st->penetration, st->eps_abs, st->iterations,
                        st->ncontacts};
    bad |= record_stats(run, t, v);
  }
  if (frame_due(r, run, t, r->scene->timestep))
    bad |= record_frame(r, run, t, mr_sim_q(s)) || record_contacts(run, s);
  if (bad) r->nomem = 1;
}

void mr_replay_record_q(mr_replay *r, double t, const double *q, const double *stats,
                        const double *contacts, int ncontacts) {
  if (!r->nruns) return;
  replay_run *run = &r->runs[r->nruns - 1];
  int bad = stats ? record_stats(run, t, stats) : 0;
  if (frame_due(r, run, t, r->scene->timestep)) {
    bad |= record_frame(r, run, t, q);
    for (int k = 0; k < 9 * ncontacts; ++k)
      bad |= push_f(&run->contacts, contacts[k]);
    bad |= push_i(&run->contact_off, (int32_t)(run->contacts.n / 9));
  }
  if (bad) r->nomem = 1;
}

/* ---- writing: JSON with base64 arrays ---- */

static void write_base64(FILE *f, const unsigned char *d, size_t n) {
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char out[4];
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)d[i] << 16;
    if (i + 1 < n) v |= (uint32_t)d[i + 1] << 8;
    if (i + 2 < n) v |= d[i + 2];
    out[0] = a[v >> 18 & 63], out[1] = a[v >> 12 & 63];
    out[2] = i + 1 < n ? a[v >> 6 & 63] : '=';
    out[3] = i + 2 < n ? a[v & 63] : '=';
    fwrite(out, 1, 4, f);
  }
}

/* n 4-byte values as a base64 string of their little-endian bytes */
static void write_array(FILE *f, const void *x, size_t n) {
  const uint32_t *u = x;
  unsigned char chunk[3 * 1024];
  fputc('"', f);
  /* 768 values (3072 bytes, a multiple of 3) at a time keep the encoding contiguous */
  for (size_t i = 0; i < n; i += 768) {
    size_t m = n - i < 768 ? n - i : 768;
    for (size_t k = 0; k < m; ++k)
      for (int b = 0; b < 4; ++b)
        chunk[4 * k + (size_t)b] = (unsigned char)(u[i + k] >> (8 * b));
    write_base64(f, chunk, 4 * m);
  }
  fputc('"', f);
}

/* a JSON string, with <, > and & escaped so that it cannot close the script element */
static void write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&')
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void write_numbers(FILE *f, const double *x, int n) {
  fputc('[', f);
  for (int k = 0; k < n; ++k)
    fprintf(f, k ? ",%.9g" : "%.9g", isfinite(x[k]) ? x[k] : 0.0);
  fputc(']', f);
}

/* placement as "pos":[x,y,z],"quat":[x,y,z,w] */
static void write_placement(FILE *f, const mr_se3 *X) {
  mr_quat q = mr_m3_to_quat(&X->R);
  double qv[4] = {q.x, q.y, q.z, q.w};
  fputs("\"pos\":", f);
  write_numbers(f, X->p.v, 3);
  fputs(",\"quat\":", f);
  write_numbers(f, qv, 4);
}

static void write_mesh(FILE *f, const mr_mesh *m) {
  float *v = malloc((size_t)m->nvert * 3 * sizeof *v + 1);
  for (int k = 0; v && k < 3 * m->nvert; ++k)
    v[k] = (float)m->vert[k];
  fputs("{\"vert\":", f);
  write_array(f, v ? (const void *)v : (const void *)"", v ? 3 * (size_t)m->nvert : 0);
  fputs(",\"face\":", f);
  write_array(f, m->face, 3 * (size_t)m->nface);
  fputc('}', f);
  free(v);
}

static void write_hfield(FILE *f, const mr_hfield *h) {
  size_t n = (size_t)h->nx * (size_t)h->ny;
  float *z = malloc(n * sizeof *z + 1);
  for (size_t k = 0; z && k < n; ++k)
    z[k] = (float)h->h[k];
  fprintf(f, "{\"nx\":%d,\"ny\":%d,\"x0\":%.9g,\"y0\":%.9g,\"dx\":%.9g,\"dy\":%.9g,\"h\":", h->nx,
          h->ny, h->x0, h->y0, h->dx, h->dy);
  write_array(f, z ? (const void *)z : (const void *)"", z ? n : 0);
  fputc('}', f);
  free(z);
}

/* one drawable: collision geometry (visual 0) or visual element (visual 1) */
static void write_shape(FILE *f, const char *name, mr_geom_type type, int body, const mr_se3 *X,
                        const double *size, int visual) {
  fputs("{\"name\":", f);
  write_string(f, name);
  fprintf(f, ",\"type\":\"%s\",\"body\":%d,\"visual\":%d,", mr_geom_type_name(type), body, visual);
  write_placement(f, X);
  fputs(",\"size\":", f);
  write_numbers(f, size, 3);
}

static void write_geoms(FILE *f, const mr_replay *r) {
  const mr_model *m = r->scene->model;
  fputs("\"geoms\":[", f);
  for (int g = 0; g < m->ngeoms; ++g) {
    const mr_geom *G = &m->geoms[g];
    if (g) fputc(',', f);
    write_shape(f, G->name, G->type, G->body, &G->placement, G->size, 0);
    if (G->type == MR_GEOM_MESH && G->mesh) fputs(",\"mesh\":", f), write_mesh(f, G->mesh);
    if (G->type == MR_GEOM_HEIGHTFIELD && G->hfield)
      fputs(",\"hfield\":", f), write_hfield(f, G->hfield);
    fputc('}', f);
  }
  for (int k = 0; k < r->nvisuals; ++k) {
    const mr_replay_visual *v = &r->visuals[k];
    char name[MR_NAME_MAX + 24];
    snprintf(name, sizeof name, "%.95s/visual%d", m->bodies[v->body].name, k);
    fputs(m->ngeoms || k ? "," : "", f);
    write_shape(f, name, v->type, v->body, &v->placement, v->size, 1);
    if (v->rgba[3] > 0.0f) {
      double c[4] = {v->rgba[0], v->rgba[1], v->rgba[2], v->rgba[3]};
      fputs(",\"rgba\":", f), write_numbers(f, c, 4);
    }
    if (v->type == MR_GEOM_MESH) fputs(",\"mesh\":", f), write_mesh(f, v->mesh);
    fputc('}', f);
  }
  fputs("]", f);
}

static void write_bodies(FILE *f, const mr_model *m) {
  fputs("\"bodies\":[", f);
  for (int b = 0; b < m->nbodies; ++b) {
    if (b) fputc(',', f);
    write_string(f, m->bodies[b].name);
  }
  fputs("]", f);
}

static void write_run(FILE *f, const replay_run *run) {
  fputs("{\"name\":", f);
  write_string(f, run->name);
  fputs(",\"status\":", f);
  write_string(f, run->status);
  fprintf(f, ",\"nframes\":%zu,\"frame_t\":", run->frame_t.n);
  write_array(f, run->frame_t.x.f, run->frame_t.n);
  fputs(",\"poses\":", f);
  write_array(f, run->poses.x.f, run->poses.n);
  fputs(",\"contact_off\":", f);
  write_array(f, run->contact_off.x.i, run->contact_off.n);
  fputs(",\"contacts\":", f);
  write_array(f, run->contacts.x.f, run->contacts.n);
  fputs(",\"stats\":{\"t\":", f);
  write_array(f, run->stat_t.x.f, run->stat_t.n);
  for (int k = 0; k < NSTATS; ++k) {
    fprintf(f, ",\"%s\":", stat_names[k]);
    write_array(f, run->stats[k].x.f, run->stats[k].n);
  }
  fputs("}}", f);
}

static void write_data(FILE *f, const mr_replay *r) {
  const mr_scene *sc = r->scene;
  fputs("{\"format\":\"moreau-replay 1\",\"scene\":", f);
  write_string(f, sc->path);
  fprintf(f, ",\"timestep\":%.9g,\"duration\":%.9g,\"gravity\":", sc->timestep, sc->duration);
  write_numbers(f, sc->model->gravity.v, 3);
  fputc(',', f);
  write_bodies(f, sc->model);
  fputc(',', f);
  write_geoms(f, r);
  fputs(",\"runs\":[", f);
  for (int k = 0; k < r->nruns; ++k) {
    if (k) fputc(',', f);
    write_run(f, &r->runs[k]);
  }
  fputs("]}", f);
}

/* the script, with "</script" written "<\/script" (the same text in a JS string or regex) */
static void write_script(FILE *f) {
  const char *p = mr_viewer_js, *end = mr_viewer_js_end;
  while (p < end) {
    const char *hit = NULL;
    for (const char *s = p; s + 8 <= end && !hit; ++s)
      if (s[0] == '<' && s[1] == '/' && !strncmp(s + 2, "script", 6)) hit = s;
    size_t n = (size_t)((hit ? hit : end) - p);
    fwrite(p, 1, n, f);
    if (!hit) break;
    fputs("<\\/", f);
    p = hit + 2;
  }
}

/* the template with @DATA@ and @SCRIPT@ replaced */
static void write_page(FILE *f, const mr_replay *r) {
  const char *p = mr_viewer_page, *end = mr_viewer_page_end;
  while (p < end) {
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (!at) at = end;
    fwrite(p, 1, (size_t)(at - p), f);
    if (at == end) break;
    if ((size_t)(end - at) >= 6 && !strncmp(at, "@DATA@", 6)) {
      write_data(f, r);
      p = at + 6;
    } else if ((size_t)(end - at) >= 8 && !strncmp(at, "@SCRIPT@", 8)) {
      write_script(f);
      p = at + 8;
    } else {
      fputc('@', f);
      p = at + 1;
    }
  }
}

mr_status mr_replay_write(const mr_replay *r, const char *path, mr_error *err) {
  if (r->nomem) return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory while recording", path);
  mr_output out;
  mr_status st = mr_output_open(&out, path, err);
  if (st) return st;
  write_page(out.f, r);
  return mr_output_commit(&out, err);
}
