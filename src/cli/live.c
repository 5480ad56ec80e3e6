/* Live viewing from the command line (live.h): before the first step the server starts on the
 * run's simulator and prints its address; by default the run then waits for a first page, so
 * that nothing is missed, and steps in real time; the pages pause, step, reset (the run's count
 * starts again), change the speed and drag bodies. The run ends at the scene's duration (or on
 * SIGINT) and the server with it, unless --keep-serving keeps the last state on the pages until
 * SIGINT. */
#include "cli/live.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/replay.h"

const char mr_cli_live_usage[] =
    "  --live              serve a live viewer on http://127.0.0.1:PORT/ while the run\n"
    "                      steps (docs/viewer.md): pause, step, reset, speed, drag bodies;\n"
    "                      the run waits for a first page, then steps in real time\n"
    "  --port N            the live viewer's port (default 7681; 0: a free port)\n"
    "  --host ADDR         listen on ADDR instead of 127.0.0.1 (0.0.0.0: every interface)\n"
    "  --no-wait           start stepping without waiting for a page\n"
    "  --fast              step as fast as possible instead of real time (a page control)\n"
    "  --keep-serving      after the run, serve its last state until Ctrl-C\n";

struct mr_cli_live {
  const char *cmd;
  mr_cli_live_args args;
  char title[256];
  mr_run_options *opt;
  void (*inner)(void *ctx, const mr_sim *s); /* the command's own on_step */
  void *inner_ctx;
  mr_live *live;
  int failed;
  char status[MR_ERROR_MSG_MAX];
};

static int bad_value(const char *cmd, const char *opt, const char *v) {
  fprintf(stderr, "moreau %s: %s: '%s' is not valid (see 'moreau %s --help')\n", cmd, opt, v, cmd);
  return -1;
}

int mr_cli_live_option(const char *cmd, int argc, char **argv, int *i, mr_cli_live_args *a) {
  const char *o = argv[*i];
  int *flag = !strcmp(o, "--live")           ? &a->live
              : !strcmp(o, "--keep-serving") ? &a->keep
              : !strcmp(o, "--no-wait")      ? &a->no_wait
              : !strcmp(o, "--fast")         ? &a->fast
                                             : NULL;
  if (flag) return *flag = 1, 1;
  if (strcmp(o, "--port") && strcmp(o, "--host")) return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "moreau %s: option %s needs a value (see 'moreau %s --help')\n", cmd, o, cmd);
    return -1;
  }
  const char *v = argv[++*i];
  if (!strcmp(o, "--host")) return a->host = v, 1;
  char *end = NULL;
  errno = 0;
  long p = strtol(v, &end, 10);
  if (end == v || *end || errno || p < 0 || p > 65535) return bad_value(cmd, o, v);
  a->port = (int)p;
  return 1;
}

/* ---- the hooks ---- */

static void on_step(void *ctx, const mr_sim *s) {
  mr_cli_live *c = ctx;
  if (c->live) mr_live_publish(c->live);
  if (c->inner) c->inner(c->inner_ctx, s);
}

static int start(mr_cli_live *c, mr_sim *s) {
  mr_live_options o = mr_live_options_default();
  o.host = c->args.host, o.port = c->args.port, o.realtime = !c->args.fast;
  o.wait_for_viewer = !c->args.no_wait, o.title = c->title;
  if (c->args.fps > 0.0) o.fps = c->args.fps;
  mr_error err = {0};
  c->live = mr_live_create(s, &o, &err);
  if (!c->live) {
    fprintf(stderr, "moreau %s: %s\n", c->cmd, err.msg);
    c->failed = 1;
    return -1;
  }
  printf("live viewer: %s%s\n", mr_live_url(c->live),
         o.wait_for_viewer ? " (the run starts when a page connects; Ctrl-C stops)"
                           : " (Ctrl-C stops)");
  fflush(stdout);
  return 0;
}

static int before_step(void *ctx, mr_sim *s) {
  mr_cli_live *c = ctx;
  if (!c->live && start(c, s)) return MR_RUN_STOP;
  const volatile sig_atomic_t *stop = c->opt->stop;
  for (;;) {
    mr_live_action a = mr_live_poll(c->live, 0.1);
    if (a == MR_LIVE_STEP) return MR_RUN_STEP;
    if (a == MR_LIVE_RESET) return MR_RUN_RESTART;
    if (stop && *stop) return MR_RUN_STOP;
  }
}

static void on_end(void *ctx, mr_sim *s, mr_status st, const mr_error *err) {
  mr_cli_live *c = ctx;
  snprintf(c->status, sizeof c->status, "%s", st ? (err ? err->msg : "failed") : "done");
  if (c->live) mr_live_end(c->live, c->status);
}

mr_cli_live *mr_cli_live_begin(const char *cmd, const mr_cli_live_args *a, const char *title,
                               mr_run_options *opt) {
  mr_error verr = {0};
  if (!mr_replay_available(&verr)) return fprintf(stderr, "moreau %s: %s\n", cmd, verr.msg), NULL;
  mr_cli_live *c = calloc(1, sizeof *c);
  if (!c) return fprintf(stderr, "moreau %s: out of memory\n", cmd), NULL;
  c->cmd = cmd, c->args = *a, c->opt = opt;
  snprintf(c->title, sizeof c->title, "%s", title);
  c->inner = opt->on_step, c->inner_ctx = opt->ctx;
  opt->on_step = on_step, opt->before_step = before_step, opt->on_end = on_end, opt->ctx = c;
  opt->progress = 0;
  return c;
}

/* ---- after the run ---- */

static volatile sig_atomic_t keep_stop;

static void on_sigint(int sig) {
  (void)sig;
  keep_stop = 1;
}

/* serve the last state until SIGINT */
static void keep_serving(mr_cli_live *c) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  keep_stop = 0;
  sigaction(SIGINT, &sa, &old);
  printf("live viewer: the run ended (%s); serving its last state at %s until Ctrl-C\n", c->status,
         mr_live_url(c->live));
  fflush(stdout);
  while (!keep_stop)
    usleep(100000);
  sigaction(SIGINT, &old, NULL);
}

int mr_cli_live_finish(mr_cli_live *c) {
  if (!c) return 0;
  int failed = c->failed;
  if (c->live && c->args.keep) keep_serving(c);
  mr_live_free(c->live);
  free(c);
  return failed ? 2 : 0;
}
