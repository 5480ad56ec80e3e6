/* Recording runs for the HTML viewer and writing the page (docs/viewer.md has the format).
 *
 * Frames are taken at the display rate: with Δt_f = 1/fps, frame f is the first step whose time
 * t satisfies t + Δt/2 ≥ f Δt_f (frame 0 is the initial state). Each frame stores, per body
 * i ≥ 1 of the model, the world placement ᵒMᵢ from forward kinematics of q as position and unit
 * quaternion (x, y, z, w), and per contact of the last step the point p, the normal force
 * λ_n n and the friction force λ_t1 t₁ + λ_t2 t₂ (world frame, on the contact's first geometry,
 * N), from the contact frame (t₁, t₂, n) and λ of mr_sim_contacts. Arrays are written as
 * packed arrays (src/viewer/viewer.h: Float32, Int32 offsets, deflate-compressed, floats
 * byte-shuffled) inside one JSON object, after the scene description of src/viewer/describe.c. */
#include "cli/replay.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/output.h"
#include "viewer/viewer.h"

/* the viewer layer's page is in the library (src/viewer/page.c); a command built without the
 * viewer (MOREAU_NO_VIEWER) writes no page */
int mr_replay_available(mr_error *err) {
#ifdef MOREAU_NO_VIEWER
  mr_error_set(err, MR_ERR_UNSUPPORTED, "%s", MR_VIEWER_ABSENT_MSG);
  return 0;
#else
  return mr_viewer_available(err);
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
  mr_world world; /* a view of the scene's parts (not a copy: never freed) */
  mr_data *data;
  double frame_dt; /* 0: every step */
  mr_viewer_visuals visuals;
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

/* the scene's parts seen as a world (the viewer layer reads worlds): shared, not copied */
static void world_view(const mr_scene *sc, mr_world *w) {
  memset(w, 0, sizeof *w);
  w->model = sc->model;
  w->q0 = sc->q0, w->v0 = sc->v0;
  w->timestep = sc->timestep, w->duration = sc->duration;
  w->nbodies = sc->nbodies, w->bodies = sc->bodies;
  w->nrobots = sc->nrobots, w->robots = sc->robots;
}

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
  world_view(scene, &r->world);
  r->frame_dt = fps > 0.0 ? 1.0 / fps : 0.0;
  if (mr_viewer_visuals_load(&r->world, &r->visuals, err)) {
    mr_replay_free(r);
    return NULL;
  }
  *nskipped = r->visuals.nmissing;
  mr_viewer_visuals_message(&r->visuals, skipped_msg, MR_ERROR_MSG_MAX);
  return r;
}

void mr_replay_free(mr_replay *r) {
  if (!r) return;
  for (int k = 0; k < r->nruns; ++k)
    run_free(&r->runs[k]);
  free(r->runs);
  mr_viewer_visuals_free(&r->visuals);
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

/* ---- writing: the scene description, then the runs as packed arrays ---- */

static int write_array(FILE *f, const buf *b, mr_pack_type t) {
  return mr_pack_write(f, b->x.f, b->n, t, t == MR_PACK_F32);
}

static int write_run(FILE *f, const replay_run *run) {
  fputs("{\"name\":", f);
  mr_json_string(f, run->name);
  fputs(",\"status\":", f);
  mr_json_string(f, run->status);
  fprintf(f, ",\"nframes\":%zu,\"frame_t\":", run->frame_t.n);
  int bad = write_array(f, &run->frame_t, MR_PACK_F32);
  fputs(",\"poses\":", f);
  bad |= write_array(f, &run->poses, MR_PACK_F32);
  fputs(",\"contact_off\":", f);
  bad |= write_array(f, &run->contact_off, MR_PACK_I32);
  fputs(",\"contacts\":", f);
  bad |= write_array(f, &run->contacts, MR_PACK_F32);
  fputs(",\"stats\":{\"t\":", f);
  bad |= write_array(f, &run->stat_t, MR_PACK_F32);
  for (int k = 0; k < NSTATS; ++k) {
    fprintf(f, ",\"%s\":", stat_names[k]);
    bad |= write_array(f, &run->stats[k], MR_PACK_F32);
  }
  fputs("}}", f);
  return bad;
}

static int write_data(FILE *f, void *ctx) {
  const mr_replay *r = ctx;
  const mr_scene *sc = r->scene;
  fputs("{\"format\":\"moreau-replay 2\",\"scene\":", f);
  mr_json_string(f, sc->path);
  fprintf(f, ",\"timestep\":%.9g,\"duration\":%.9g,", sc->timestep, sc->duration);
  int bad = mr_viewer_describe(f, &r->world, &r->visuals);
  fputs("\"runs\":[", f);
  for (int k = 0; k < r->nruns && !bad; ++k) {
    if (k) fputc(',', f);
    bad = write_run(f, &r->runs[k]);
  }
  fputs("]}", f);
  return bad;
}

mr_status mr_replay_write(const mr_replay *r, const char *path, mr_error *err) {
  if (r->nomem) return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory while recording", path);
  mr_output out;
  mr_status st = mr_output_open(&out, path, err);
  if (st) return st;
  if (mr_viewer_page_write(out.f, write_data, (void *)r)) {
    mr_output_discard(&out);
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory while writing the page", path);
  }
  return mr_output_commit(&out, err);
}
