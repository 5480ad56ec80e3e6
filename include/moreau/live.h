/* Live viewing: a simulator watched, paused, stepped, reset and perturbed from a browser while
 * it runs (docs/viewer.md, "Live viewing").
 *
 * mr_live_create starts a small web server on a simulator: http://HOST:PORT/ serves the viewer
 * page (the same page as the offline replays, with the world's geometry) and ws://HOST:PORT/live
 * streams the simulation's state to every connected page over a WebSocket. The caller keeps
 * stepping the simulator in its own loop:
 *
 *   mr_live *live = mr_live_create(sim, NULL, &err);      // prints nothing; see mr_live_url
 *   while (mr_sim_time(sim) < T) {
 *     if (mr_live_poll(live, 0.1) != MR_LIVE_STEP) continue; // paused, waiting, pacing, reset
 *     if (mr_sim_step(sim, &err)) break;
 *     mr_live_publish(live);
 *   }
 *   mr_live_end(live, "done");
 *   mr_live_free(live);
 *
 * Threads: the server runs on its own thread (libwebsockets' event loop) and never touches the
 * simulator: mr_live_publish copies what the pages show (body placements from forward
 * kinematics on the server's own data, contacts, the step's figures) into the server's memory,
 * and mr_live_poll applies the pages' commands to the simulator; both are called by the thread
 * that steps it, between steps. A page that stops reading, or a closed socket, never blocks
 * that thread: a page gets the newest frame each time its socket can take one, so a slow page
 * gets fewer frames; the simulation only ever waits in mr_live_poll (real-time pacing, pause,
 * waiting for a first page when asked to).
 *
 * Security: the server binds to the loopback interface (127.0.0.1) unless told otherwise, and
 * refuses a connection whose Host header is not that address (or localhost) with the server's
 * port, or whose Origin is another site, so that other web pages cannot drive the simulation. */
#ifndef MOREAU_LIVE_H
#define MOREAU_LIVE_H

#include "moreau/sim.h"

typedef struct mr_live mr_live;

typedef struct {
  const char *host;         /* address to listen on (default NULL: "127.0.0.1", this machine
                               only; "0.0.0.0" listens on every interface) */
  int port;                 /* TCP port (default 0: a free port chosen by the system) */
  double fps;               /* most frames per second of wall time sent to a page (default 60) */
  int realtime;             /* 1 (default): mr_live_poll paces the steps to speed × real time;
                               0: as fast as possible. Pages switch it. */
  double speed;             /* the real-time factor when pacing (default 1) */
  int paused;               /* 1: start paused (default 0) */
  int wait_for_viewer;      /* 1: mr_live_poll holds the simulation until a first page has
                               drawn the initial state (default 0) */
  double perturb_frequency; /* Hz: natural frequency of the drag spring on the mass it moves
                               (default 2; see mr_live_poll) */
  double perturb_damping;   /* damping ratio of the drag spring (default 1: critical) */
  const char *title;        /* shown on the page (default NULL: "live") */
} mr_live_options;

/* the defaults above */
mr_live_options mr_live_options_default(void);

/* Start serving simulator s (borrowed: it must stay alive until mr_live_free, or until
 * mr_live_end when the caller stops calling mr_live_publish and mr_live_poll). opt may be NULL
 * (the defaults). The world's URDF robots are read again for their visual elements (missing
 * ones are listed on the page, whose links are then drawn with collision geometry). NULL with
 * err filled when the port cannot be opened (in use: the message names it), a URDF cannot be
 * read, or memory runs out. */
mr_live *mr_live_create(mr_sim *s, const mr_live_options *opt, mr_error *err);

/* The page's address, "http://HOST:PORT/" (valid until mr_live_free). */
const char *mr_live_url(const mr_live *l);
/* The TCP port listened on (the system's choice when opt->port was 0). */
int mr_live_port(const mr_live *l);

/* After a step (or after the caller changed the state): record the step's figures for the
 * plots and, when a frame is due (at most fps per second of wall time; always after a reset, a
 * single step or a pause), the body placements and contacts for the pages. Does not block
 * (one short mutex section when a frame is due); allocates only when the frame grows past
 * every earlier one (more contacts than before). */
void mr_live_publish(mr_live *l);

/* What the caller's loop does next (mr_live_poll). */
typedef enum {
  MR_LIVE_STEP = 0, /* step now, then call mr_live_publish */
  MR_LIVE_WAIT,     /* do not step: paused, pacing to real time, or waiting for a first page;
                       the call waited up to its timeout: call again */
  MR_LIVE_RESET     /* a page reset the simulator (mr_sim_reset): the state is the initial one,
                       already published; call again */
} mr_live_action;

/* Between steps: apply the pages' commands and say whether to step. Commands: pause, run, a
 * single step (while paused), reset (mr_sim_reset, then MR_LIVE_RESET), speed and real time,
 * and the perturbation. While a page drags a body b, every call that returns MR_LIVE_STEP sets
 * the wrench of b (mr_sim_set_wrench: it replaces any wrench set there) to the spring-damper
 * force at the grabbed point p (body frame point a, world velocity ṗ) towards the pointer's
 * world point x,
 *   f = m_b (ω² (x − p) − 2 ζ ω ṗ),   torque about b's origin o: (p − o) × f,
 * with ω = 2π perturb_frequency, ζ = perturb_damping and m_b the mass of b's subtree (the
 * bodies the drag moves), so that every body responds alike; the release sets b's wrench to
 * zero. Waits at most timeout seconds (≥ 0) for a reason to step; returns sooner when one
 * comes. */
mr_live_action mr_live_poll(mr_live *l, double timeout);

/* The simulation ended: the pages show status (e.g. "done" or an error) with the last frame.
 * After this call the simulator is no longer read and may be freed; the server keeps serving
 * the last frame and the plots until mr_live_free. */
void mr_live_end(mr_live *l, const char *status);

/* Counters of a live session, for scripts, tests and benchmarks. */
typedef struct {
  int viewers;              /* pages connected now */
  long connections;         /* pages connected since creation */
  long frames_published;    /* frames made by mr_live_publish */
  long frames_sent;         /* frame messages written to pages (all pages) */
  long commands;            /* commands received from pages (latency reports excepted) */
  int paused;               /* 1 while paused */
  int perturb_body;         /* the body a page drags, -1 when none */
  double perturb_anchor[3]; /* the grabbed point in that body's frame (m) */
  double perturb_target[3]; /* the pointer's world point (m) */
  long latency_count;       /* latency reports: publication of a frame to its drawing on a page */
  double latency_ms[4096];  /* the last min(latency_count, 4096) reports (ms), oldest first */
} mr_live_stats;

/* A snapshot of the counters. */
void mr_live_get_stats(mr_live *l, mr_live_stats *out);

/* Stop the server (pages see the connection close) and free it; NULL is a no-op. After
 * mr_live_end with pages connected, it first waits 0.3 s for them to get the last frame. */
void mr_live_free(mr_live *l);

#endif
