/* Live viewing (include/moreau/live.h): the stepping thread's half. mr_live_publish makes
 * frames (forward kinematics of q on the server's own mr_data, the last step's contacts with
 * their forces, the step's figures), mr_live_poll applies the pages' commands, paces the steps
 * to real time and applies the drag spring. The server thread is in live_server.c; what both
 * share, and the frame message's layout, in live_internal.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "moreau/control.h"
#include "viewer/live_internal.h"
#include "viewer/viewer.h"

double mr_live_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double epoch_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

mr_live_options mr_live_options_default(void) {
  mr_live_options o = {.host = NULL,
                       .port = 0,
                       .fps = 60.0,
                       .realtime = 1,
                       .speed = 1.0,
                       .paused = 0,
                       .wait_for_viewer = 0,
                       .perturb_frequency = 2.0,
                       .perturb_damping = 1.0,
                       .title = NULL};
  return o;
}

/* ---- creation ---- */

static mr_status check_options(const mr_live_options *o, mr_error *err) {
  if (!(o->fps > 0.0 && o->fps <= 1000.0))
    return mr_error_set(err, MR_ERR_INVALID, "live viewer: fps = %g, expected (0, 1000]", o->fps);
  if (!(o->speed > 0.0 && o->speed <= 1000.0))
    return mr_error_set(err, MR_ERR_INVALID, "live viewer: speed = %g, expected (0, 1000]",
                        o->speed);
  if (o->port < 0 || o->port > 65535)
    return mr_error_set(err, MR_ERR_INVALID, "live viewer: port %d, expected 0-65535", o->port);
  if (!(o->perturb_frequency > 0.0 && isfinite(o->perturb_frequency)) ||
      !(o->perturb_damping >= 0.0 && isfinite(o->perturb_damping)))
    return mr_error_set(err, MR_ERR_INVALID,
                        "live viewer: perturb_frequency %g (> 0 Hz) or perturb_damping %g (>= 0)",
                        o->perturb_frequency, o->perturb_damping);
  if (o->host && strlen(o->host) >= 64)
    return mr_error_set(err, MR_ERR_INVALID, "live viewer: host '%.64s...' is too long", o->host);
  return MR_OK;
}

/* the mass each body's drag moves: its own and its descendants' (bodies follow their parents) */
static double *subtree_masses(const mr_model *m) {
  double *s = calloc((size_t)m->nbodies, sizeof *s);
  if (!s) return NULL;
  for (int b = m->nbodies - 1; b > 0; --b) {
    s[b] += m->bodies[b].inertia.m;
    if (m->bodies[b].parent > 0) s[m->bodies[b].parent] += s[b];
  }
  return s;
}

typedef struct {
  mr_live *l;
  const mr_viewer_visuals *vis;
} page_ctx;

static int write_live_data(FILE *f, void *ctx) {
  const mr_live *l = ((page_ctx *)ctx)->l;
  const mr_viewer_visuals *vis = ((page_ctx *)ctx)->vis;
  fputs("{\"format\":\"moreau-replay 2\",\"scene\":", f);
  mr_json_string(f, l->title);
  fprintf(f, ",\"timestep\":%.9g,\"duration\":%.9g,\"live\":{\"socket\":\"/live\",\"fps\":%g},",
          l->world->timestep, l->world->duration, l->opt.fps);
  int bad = mr_viewer_describe(f, l->world, vis);
  fputs("\"runs\":[]}", f);
  return bad;
}

/* the page with the world's geometry and its robots' visual elements */
static mr_status build_page(mr_live *l, mr_error *err) {
  mr_viewer_visuals vis;
  mr_status st = mr_viewer_visuals_load(l->world, &vis, err);
  if (st) return st;
  FILE *f = open_memstream(&l->page, &l->page_len);
  page_ctx ctx = {l, &vis};
  int bad = !f || mr_viewer_page_write(f, write_live_data, &ctx);
  if (f) bad |= fclose(f) != 0;
  mr_viewer_visuals_free(&vis);
  if (bad) {
    free(l->page);
    l->page = NULL;
    return mr_error_set(err, MR_ERR_NOMEM, "live viewer: out of memory writing the page");
  }
  return MR_OK;
}

static mr_status init_sync(mr_live *l, mr_error *err) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  int bad = pthread_mutex_init(&l->mu, NULL) || pthread_cond_init(&l->cv, &a);
  pthread_condattr_destroy(&a);
  return bad ? mr_error_set(err, MR_ERR_NOMEM, "live viewer: cannot create a mutex") : MR_OK;
}

mr_live *mr_live_create(mr_sim *s, const mr_live_options *opt, mr_error *err) {
  mr_live_options o = opt ? *opt : mr_live_options_default();
  if (check_options(&o, err)) return NULL;
  mr_live *l = calloc(1, sizeof *l);
  if (!l) return mr_error_set(err, MR_ERR_NOMEM, "out of memory"), NULL;
  if (init_sync(l, err)) return free(l), NULL;
  l->sim = s, l->world = mr_sim_world(s), l->m = mr_sim_model(s), l->opt = o;
  snprintf(l->host, sizeof l->host, "%s", o.host ? o.host : "127.0.0.1");
  snprintf(l->title, sizeof l->title, "%s", o.title ? o.title : "live");
  l->loopback = !strcmp(l->host, "127.0.0.1");
  l->paused = o.paused, l->realtime = o.realtime, l->speed = o.speed;
  l->perturb_body = -1, l->last_frame = -INFINITY, l->force_frame = 1;
  l->fk = mr_data_create(l->m);
  l->subtree_mass = subtree_masses(l->m);
  l->ring = malloc(sizeof(float) * LIVE_ROW * LIVE_RING);
  if (!l->fk || !l->subtree_mass || !l->ring) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory");
    mr_live_free(l);
    return NULL;
  }
  if (build_page(l, err) || mr_live_server_start(l, err)) {
    mr_live_free(l);
    return NULL;
  }
  mr_live_publish(l);
  return l;
}

const char *mr_live_url(const mr_live *l) {
  return l->url;
}
int mr_live_port(const mr_live *l) {
  return l->port;
}

/* ---- frames ---- */

static int grow(unsigned char **b, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  size_t c = *cap ? *cap : 4096;
  while (c < n)
    c *= 2;
  unsigned char *p = realloc(*b, c);
  if (!p) return -1;
  *b = p, *cap = c;
  return 0;
}

/* the world point of the dragged body's anchor */
static mr_vec3 anchor_world(const mr_live *l) {
  const mr_se3 *X = &l->fk->oMi[l->perturb_body];
  return mr_v3_add(mr_m3_mulv(&X->R, l->perturb_anchor), X->p);
}

static void write_poses(const mr_live *l, float *o) {
  for (int b = 1; b < l->m->nbodies; ++b, o += 7) {
    const mr_se3 *X = &l->fk->oMi[b];
    mr_quat q = mr_m3_to_quat(&X->R);
    for (int k = 0; k < 3; ++k)
      o[k] = (float)X->p.v[k];
    o[3] = (float)q.x, o[4] = (float)q.y, o[5] = (float)q.z, o[6] = (float)q.w;
  }
}

/* point, normal force λ_n n, friction force λ_t1 t₁ + λ_t2 t₂ (as the replays record them) */
static void write_contacts(const mr_contact *c, const double *lambda, int n, float *o) {
  for (int i = 0; i < n; ++i, o += 9) {
    const double *f = lambda + 3 * i;
    for (int k = 0; k < 3; ++k) {
      o[k] = (float)c[i].point.v[k];
      o[3 + k] = (float)(f[2] * c[i].frame.m[k][2]);
      o[6 + k] = (float)(f[0] * c[i].frame.m[k][0] + f[1] * c[i].frame.m[k][1]);
    }
  }
}

static double flags(const mr_live *l) {
  int f = (l->paused ? LIVE_PAUSED : 0) | (l->realtime ? LIVE_REALTIME : 0);
  if (l->opt.wait_for_viewer && !l->ready) f |= LIVE_WAITING;
  return f;
}

/* the frame of the simulator's state into l->scratch; its length, 0 when out of memory */
static size_t make_frame(mr_live *l) {
  mr_sim *s = l->sim;
  const mr_contact *c;
  const double *lambda;
  int nc = mr_sim_steps(s) > 0 ? mr_sim_contacts(s, &c, &lambda) : 0;
  int nb = l->m->nbodies, pert = l->perturb_body > 0;
  size_t nf = 7 * (size_t)(nb - 1) + 9 * (size_t)nc + (pert ? 6 : 0);
  size_t len = LIVE_HEADER * 8 + 4 * nf;
  if (grow(&l->scratch, &l->scratch_cap, len)) return 0;
  mr_forward_kinematics(l->m, l->fk, mr_sim_q(s), NULL, NULL);
  double *h = (double *)l->scratch;
  memset(h, 0, LIVE_HEADER * 8);
  h[H_KIND] = LIVE_FRAME, h[H_STEPS] = (double)mr_sim_steps(s), h[H_T] = mr_sim_time(s);
  h[H_WALL] = epoch_ms(), h[H_FLAGS] = flags(l), h[H_SPEED] = l->speed;
  h[H_GEN] = l->generation, h[H_NPOSES] = nb - 1, h[H_NCONTACTS] = nc;
  h[H_PERTURB] = pert ? l->perturb_body : -1, h[H_RTF] = l->rtf;
  float *o = (float *)(l->scratch + LIVE_HEADER * 8);
  write_poses(l, o);
  if (nc) write_contacts(c, lambda, nc, o + 7 * (nb - 1));
  if (pert) {
    mr_vec3 p = anchor_world(l);
    float *q = o + 7 * (nb - 1) + 9 * nc;
    for (int k = 0; k < 3; ++k)
      q[k] = (float)p.v[k], q[3 + k] = (float)l->perturb_target.v[k];
  }
  return len;
}

/* the staged rows into the ring (under mu) */
static void flush_rows(mr_live *l) {
  for (int r = 0; r < l->nstage; ++r)
    memcpy(l->ring + LIVE_ROW * (l->rows++ % LIVE_RING), l->stage + LIVE_ROW * r, 4 * LIVE_ROW);
  l->nstage = 0;
}

static void stage_row(mr_live *l) {
  const mr_step_stats *st = mr_sim_last(l->sim);
  float *r = l->stage + LIVE_ROW * l->nstage++;
  r[0] = (float)mr_sim_time(l->sim), r[1] = (float)(st->kinetic + st->potential);
  r[2] = (float)st->penetration, r[3] = (float)st->eps_abs, r[4] = (float)st->iterations;
  r[5] = (float)st->ncontacts;
}

/* the real-time factor over the last second or so */
static void measure_rtf(mr_live *l, double now) {
  double t = mr_sim_time(l->sim);
  if (!(now - l->rtf_wall < 2.0) || t < l->rtf_t) {
    l->rtf_wall = now, l->rtf_t = t;
  } else if (now - l->rtf_wall >= 1.0) {
    l->rtf = (t - l->rtf_t) / (now - l->rtf_wall);
    l->rtf_wall = now, l->rtf_t = t;
  }
}

void mr_live_publish(mr_live *l) {
  if (!l->sim) return;
  long steps = mr_sim_steps(l->sim);
  if (steps > 0 && steps != l->staged_steps) stage_row(l);
  l->staged_steps = steps;
  double now = mr_live_now();
  int due = l->force_frame || now - l->last_frame >= 1.0 / l->opt.fps;
  if (!due && l->nstage < LIVE_STAGE) return;
  size_t len = 0;
  if (due) measure_rtf(l, now), len = make_frame(l);
  pthread_mutex_lock(&l->mu);
  flush_rows(l);
  if (len && !grow(&l->frame, &l->frame_cap, len)) {
    memcpy(l->frame, l->scratch, len);
    l->frame_len = len;
    ((double *)l->frame)[H_SEQ] = (double)++l->seq;
    l->published++;
  }
  pthread_mutex_unlock(&l->mu);
  if (due) l->last_frame = now, l->force_frame = 0;
  mr_live_server_wake(l);
}

/* ---- commands ---- */

/* n numbers after the command's name, all finite and within ±1e6, and nothing else */
static int numbers(const char *s, double *x, int n) {
  for (int k = 0; k < n; ++k) {
    char *end;
    x[k] = strtod(s, &end);
    if (end == s || !isfinite(x[k]) || fabs(x[k]) > 1e6) return -1;
    s = end;
  }
  while (*s == ' ')
    ++s;
  return *s ? -1 : 0;
}

mr_live_cmd mr_live_parse_command(const char *c, double x[7]) {
  static const struct {
    const char *name;
    mr_live_cmd cmd;
    int n; /* numbers after the name */
  } table[] = {{"pause", MR_LIVE_CMD_PAUSE, 0},     {"run", MR_LIVE_CMD_RUN, 0},
               {"step", MR_LIVE_CMD_STEP, 0},       {"reset", MR_LIVE_CMD_RESET, 0},
               {"release", MR_LIVE_CMD_RELEASE, 0}, {"ready", MR_LIVE_CMD_READY, 0},
               {"speed", MR_LIVE_CMD_SPEED, 1},     {"perturb", MR_LIVE_CMD_PERTURB, 7}};
  for (size_t k = 0; k < sizeof table / sizeof table[0]; ++k) {
    size_t len = strlen(table[k].name);
    if (strncmp(c, table[k].name, len)) continue;
    if (!table[k].n) return c[len] ? MR_LIVE_CMD_NONE : table[k].cmd;
    if (c[len] == ' ' && !numbers(c + len + 1, x, table[k].n)) return table[k].cmd;
    return MR_LIVE_CMD_NONE;
  }
  return MR_LIVE_CMD_NONE;
}

static void release(mr_live *l) {
  if (l->perturb_body > 0)
    mr_sim_set_wrench(l->sim, l->perturb_body, mr_v3(0, 0, 0), mr_v3(0, 0, 0), NULL);
  l->perturb_body = -1;
}

static void set_speed(mr_live *l, double x) {
  if (x == 0.0)
    l->realtime = 0;
  else if (x > 0.0 && x <= 1000.0)
    l->realtime = 1, l->speed = x;
  l->pace_valid = 0, l->force_frame = 1;
}

/* "perturb B ax ay az tx ty tz": body, anchor (body frame), target (world) */
static void set_perturb(mr_live *l, const double *x) {
  int b = (int)x[0];
  if (x[0] != b || b <= 0 || b >= l->m->nbodies) return;
  if (l->perturb_body > 0 && l->perturb_body != b) release(l);
  l->perturb_body = b;
  l->perturb_anchor = mr_v3(x[1], x[2], x[3]);
  l->perturb_target = mr_v3(x[4], x[5], x[6]);
}

/* apply one command; 1 when it was a reset */
static int apply(mr_live *l, const char *c) {
  double x[7];
  switch (mr_live_parse_command(c, x)) {
  case MR_LIVE_CMD_PAUSE:
    l->paused = 1, l->step_budget = 0, l->force_frame = 1;
    break;
  case MR_LIVE_CMD_RUN:
    l->paused = 0, l->pace_valid = 0, l->force_frame = 1;
    break;
  case MR_LIVE_CMD_STEP:
    if (l->paused && l->step_budget < 1000) l->step_budget++;
    break;
  case MR_LIVE_CMD_RESET:
    return 1;
  case MR_LIVE_CMD_SPEED:
    set_speed(l, x[0]);
    break;
  case MR_LIVE_CMD_PERTURB:
    set_perturb(l, x);
    break;
  case MR_LIVE_CMD_RELEASE:
    release(l);
    break;
  case MR_LIVE_CMD_READY:
    l->ready = 1, l->force_frame = 1;
    break;
  case MR_LIVE_CMD_NONE:
    break;
  }
  return 0;
}

static void reset(mr_live *l) {
  mr_sim_reset(l->sim); /* also clears the drag's wrench */
  l->perturb_body = -1;
  l->generation++;
  l->pace_valid = 0, l->force_frame = 1, l->staged_steps = 0, l->nstage = 0;
  pthread_mutex_lock(&l->mu);
  l->reset_row = l->rows;
  pthread_mutex_unlock(&l->mu);
  mr_live_publish(l);
}

/* take the queued commands and apply them; 1 when one was a reset */
static int take_commands(mr_live *l) {
  if (!atomic_load(&l->pending)) return 0;
  char cmds[LIVE_CMDS][LIVE_CMD_LEN];
  pthread_mutex_lock(&l->mu);
  int n = l->ncmds;
  memcpy(cmds, l->cmds, (size_t)n * LIVE_CMD_LEN);
  l->ncmds = 0;
  atomic_store(&l->pending, 0);
  pthread_mutex_unlock(&l->mu);
  int was_reset = 0, was_paused = l->paused, was_ready = l->ready;
  for (int k = 0; k < n; ++k)
    if (apply(l, cmds[k])) reset(l), was_reset = 1;
  if (was_paused != l->paused || was_ready != l->ready) mr_live_publish(l);
  return was_reset;
}

/* ---- the drag spring ---- */

static void apply_perturb(mr_live *l) {
  int b = l->perturb_body;
  if (b <= 0) return;
  mr_forward_kinematics(l->m, l->fk, mr_sim_q(l->sim), mr_sim_v(l->sim), NULL);
  const mr_se3 *X = &l->fk->oMi[b];
  const mr_motion *vb = &l->fk->vb[b];
  mr_vec3 p = anchor_world(l);
  /* the anchor's world velocity: R (v + ω × a), body-frame v and ω at the body's origin */
  mr_vec3 pd = mr_m3_mulv(&X->R, mr_v3_add(vb->v, mr_v3_cross(vb->w, l->perturb_anchor)));
  double w = 2.0 * M_PI * l->opt.perturb_frequency, zeta = l->opt.perturb_damping;
  double mass = l->subtree_mass[b];
  mr_vec3 f = mr_v3_scale(mr_v3_sub(mr_v3_scale(mr_v3_sub(l->perturb_target, p), w * w),
                                    mr_v3_scale(pd, 2.0 * zeta * w)),
                          mass);
  mr_vec3 torque = mr_v3_cross(mr_v3_sub(p, X->p), f);
  mr_sim_set_wrench(l->sim, b, f, torque, NULL);
}

/* ---- pacing ---- */

/* the wall time at which the current simulated time is due; re-anchored when behind by more
 * than 0.2 s (the simulation is slower than real time: no burst to catch up) */
static double pace_due(mr_live *l, double now) {
  double t = mr_sim_time(l->sim);
  if (!l->pace_valid || t < l->pace_t) l->pace_valid = 1, l->pace_wall = now, l->pace_t = t;
  double due = l->pace_wall + (t - l->pace_t) / l->speed;
  if (now - due > 0.2) l->pace_wall = now, l->pace_t = t, due = now;
  return due;
}

/* Real time in bursts: once the simulation is due it steps until it leads the wall clock by one
 * frame period (1 / fps), then sleeps until it is due again: the thread wakes fps times a second
 * instead of once per step (a thousand times at 1 kHz), most steps run with warm caches, and the
 * pages, which get at most one frame per period, see the same motion. */
static int paced(mr_live *l, double now, double *until) {
  double due = pace_due(l, now);
  if (now >= due) l->bursting = 1;
  if (l->bursting && due - now <= 1.0 / l->opt.fps) return 1;
  l->bursting = 0;
  *until = due;
  return 0;
}

static mr_live_action grant_step(mr_live *l) {
  if (l->paused) l->step_budget--, l->force_frame = 1;
  apply_perturb(l);
  return MR_LIVE_STEP;
}

/* wait on the condition variable until the monotonic time until (or a command / a page) */
static void wait_until(mr_live *l, double until) {
  struct timespec ts;
  double whole = floor(until);
  ts.tv_sec = (time_t)whole;
  ts.tv_nsec = (long)((until - whole) * 1e9);
  pthread_mutex_lock(&l->mu);
  if (!l->ncmds) pthread_cond_timedwait(&l->cv, &l->mu, &ts);
  pthread_mutex_unlock(&l->mu);
}

mr_live_action mr_live_poll(mr_live *l, double timeout) {
  if (!l->sim) return MR_LIVE_WAIT;
  double deadline = mr_live_now() + (timeout > 0.0 ? timeout : 0.0);
  for (;;) {
    if (take_commands(l)) return MR_LIVE_RESET;
    int waiting = l->opt.wait_for_viewer && !l->ready;
    double now = mr_live_now(), until = deadline;
    if (waiting) l->pace_valid = 0;
    if (!waiting && !(l->paused && l->step_budget <= 0)) {
      double due = until;
      if (!l->realtime || l->paused || paced(l, now, &due)) return grant_step(l);
      if (due < until) until = due;
    }
    if (now >= deadline) return MR_LIVE_WAIT;
    wait_until(l, until);
  }
}

/* ---- end, counters, free ---- */
/* (mr_live_get_stats reads the stepping thread's fields: call it from that thread) */

void mr_live_end(mr_live *l, const char *status) {
  if (!l->sim) return;
  l->force_frame = 1;
  mr_live_publish(l);
  pthread_mutex_lock(&l->mu);
  snprintf(l->status, sizeof l->status, "%s", status ? status : "ended");
  l->ended = 1;
  if (l->frame_len) {
    double *h = (double *)l->frame;
    h[H_FLAGS] += LIVE_ENDED, h[H_SEQ] = (double)++l->seq;
  }
  pthread_mutex_unlock(&l->mu);
  l->sim = NULL;
  mr_live_server_wake(l);
}

void mr_live_get_stats(mr_live *l, mr_live_stats *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&l->mu);
  out->viewers = l->viewers, out->connections = l->connections;
  out->frames_published = l->published, out->frames_sent = l->frames_sent;
  out->commands = l->commands;
  out->latency_count = l->nlatency;
  long n = l->nlatency < LIVE_LATENCY ? l->nlatency : LIVE_LATENCY;
  for (long k = 0; k < n; ++k)
    out->latency_ms[k] = l->latency[(l->nlatency - n + k) % LIVE_LATENCY];
  pthread_mutex_unlock(&l->mu);
  out->paused = l->paused;
  out->perturb_body = l->perturb_body;
  for (int k = 0; k < 3; ++k)
    out->perturb_anchor[k] = l->perturb_anchor.v[k],
    out->perturb_target[k] = l->perturb_target.v[k];
}

void mr_live_free(mr_live *l) {
  if (!l) return;
  /* pages connected when the run ended get its last frame and status before the server stops */
  pthread_mutex_lock(&l->mu);
  int linger = l->ended && l->viewers > 0;
  pthread_mutex_unlock(&l->mu);
  if (linger) nanosleep(&(struct timespec){0, 300000000}, NULL);
  mr_live_server_stop(l);
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  mr_data_free(l->fk);
  free(l->subtree_mass), free(l->ring), free(l->page), free(l->frame), free(l->scratch);
  free(l);
}
