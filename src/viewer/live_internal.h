/* The live server's state shared by its two halves: live.c (the API, called by the thread that
 * steps the simulator: frames, commands, pacing, the perturbation) and live_server.c (the
 * server thread: libwebsockets' event loop, the page over HTTP, frames over WebSocket).
 *
 * Fields marked "mu" are read and written under the mutex by both threads; "sim" fields
 * belong to the stepping thread, "server" fields to the server thread.
 *
 * A frame message (little-endian, docs/viewer.md "Live viewing"): 16 Float64 header values,
 * then Float32 arrays: body placements (7 per body 1..n-1: position, quaternion x y z w),
 * contacts (9 each: point, normal force, friction force), the perturbation (anchor and target
 * world points, 6, when a body is dragged), step rows (6 each: t, energy, penetration, eps_abs,
 * iterations, contacts). Header: kind (1 frame, 2 step rows only), frame sequence number, steps,
 * simulated time (s), wall clock at publication (ms since the epoch), flags (1 paused, 2 real
 * time, 4 ended, 8 waiting for a first page), speed, reset generation, bodies posed,
 * contacts, step rows, index of the first row, pages connected, dragged body (-1: none),
 * measured real-time factor, 0. */
#ifndef MOREAU_VIEWER_LIVE_INTERNAL_H
#define MOREAU_VIEWER_LIVE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "moreau/dynamics.h"
#include "moreau/live.h"

#define LIVE_HEADER 16      /* Float64 values */
#define LIVE_ROW 6          /* floats per step row */
#define LIVE_RING (1 << 15) /* step rows kept for the plots of pages that connect later */
#define LIVE_STAGE 1024     /* step rows staged by the stepping thread between frames */
#define LIVE_MSG_ROWS 8192  /* most step rows in one message */
#define LIVE_CMDS 64        /* commands queued between two polls */
#define LIVE_CMD_LEN 256    /* longest command (bytes) */
#define LIVE_MAX_VIEWERS 32 /* pages connected at once */
#define LIVE_LATENCY 4096   /* latency reports kept */

enum { LIVE_FRAME = 1, LIVE_ROWS = 2 };
enum { LIVE_PAUSED = 1, LIVE_REALTIME = 2, LIVE_ENDED = 4, LIVE_WAITING = 8 };
/* header slots */
enum {
  H_KIND,
  H_SEQ,
  H_STEPS,
  H_T,
  H_WALL,
  H_FLAGS,
  H_SPEED,
  H_GEN,
  H_NPOSES,
  H_NCONTACTS,
  H_NROWS,
  H_FIRST_ROW,
  H_VIEWERS,
  H_PERTURB,
  H_RTF
};

struct lws_context;

struct mr_live {
  mr_sim *sim; /* NULL after mr_live_end */
  const mr_world *world;
  const mr_model *m;
  mr_data *fk; /* forward kinematics for frames and the perturbation */
  mr_live_options opt;
  char host[64], url[128], title[256];
  int port;
  int loopback; /* listening on 127.0.0.1: Host headers are checked */
  char *page;   /* the HTML page */
  size_t page_len;
  double *subtree_mass; /* [nbodies] */

  /* ---- server ---- */
  struct lws_context *ctx;
  pthread_t thread;
  int thread_started;
  atomic_int stop;

  /* ---- shared (mu) ---- */
  pthread_mutex_t mu;
  pthread_cond_t cv;    /* commands arrived, a page connected */
  unsigned char *frame; /* the newest frame: header and its Float32 arrays */
  size_t frame_len, frame_cap;
  uint64_t seq;       /* frames published */
  float *ring;        /* LIVE_RING step rows */
  uint64_t rows;      /* step rows published in all */
  uint64_t reset_row; /* rows before this one precede the last reset */
  char cmds[LIVE_CMDS][LIVE_CMD_LEN];
  int ncmds;
  atomic_int pending; /* ncmds, readable without the mutex */
  int viewers;

  long connections, frames_sent, commands, dropped_commands;
  double latency[LIVE_LATENCY];
  long nlatency;
  char status[MR_ERROR_MSG_MAX]; /* set by mr_live_end */
  int ended;

  /* ---- stepping thread (sim) ---- */
  unsigned char *scratch; /* the next frame, built before it is copied under mu */
  size_t scratch_cap;
  float stage[LIVE_STAGE * LIVE_ROW];
  int nstage;
  long staged_steps; /* mr_sim_steps at the last staged row */
  double last_frame; /* monotonic time of the last frame (s) */
  int force_frame;
  int paused, step_budget, realtime;
  int ready; /* a page has drawn its first frame ("ready") */
  double speed;
  int pace_valid, bursting; /* bursting: stepping ahead of real time (live.c, paced) */
  double pace_wall, pace_t; /* pacing anchor: wall time and simulated time */
  double rtf, rtf_wall, rtf_t;
  int perturb_body; /* -1: none */
  mr_vec3 perturb_anchor, perturb_target;
  int generation;
  long published;
};

/* monotonic seconds */
double mr_live_now(void);

/* a page's command (docs/viewer.md, "Protocol and guarantees") */
typedef enum {
  MR_LIVE_CMD_NONE = 0, /* malformed: ignored */
  MR_LIVE_CMD_PAUSE,
  MR_LIVE_CMD_RUN,
  MR_LIVE_CMD_STEP,
  MR_LIVE_CMD_RESET,
  MR_LIVE_CMD_SPEED,   /* x[0]: the speed, 0 as fast as possible */
  MR_LIVE_CMD_PERTURB, /* x[0] body, x[1..3] anchor (body frame), x[4..6] target (world) */
  MR_LIVE_CMD_RELEASE,
  MR_LIVE_CMD_READY
} mr_live_cmd;

/* Parse one command (a NUL-terminated text): its kind, and its numbers into x (each finite and
 * within ±1e6; the body of a perturbation is checked against the model by its user). */
mr_live_cmd mr_live_parse_command(const char *text, double x[7]);

/* ---- live_server.c ---- */

/* Start the server thread on l->host:l->opt.port (l->port and l->url set); MR_ERR_IO naming
 * the address when it cannot listen. */
mr_status mr_live_server_start(mr_live *l, mr_error *err);
/* wake the server thread: a new frame */
void mr_live_server_wake(mr_live *l);
/* stop the server thread and free its context (every page's connection closes) */
void mr_live_server_stop(mr_live *l);

#endif
