/* Live viewing from the command line (`moreau run SCENE --live`, `moreau view --live SCENE`):
 * the run loop's hooks (runner.h) around a live server (include/moreau/live.h). */
#ifndef MOREAU_CLI_LIVE_H
#define MOREAU_CLI_LIVE_H

#include "cli/runner.h"
#include "moreau/live.h"

/* the live options of a command line */
typedef struct {
  int live;         /* --live */
  const char *host; /* --host ADDR (default 127.0.0.1) */
  int port;         /* --port N (default MR_CLI_LIVE_PORT; 0: a free port) */
  int keep;         /* --keep-serving: serve the last state after the run until Ctrl-C */
  int no_wait;      /* --no-wait: start stepping without waiting for a page */
  int fast;         /* --fast: as fast as possible instead of real time */
  double fps;       /* frames per second sent to the pages (view --fps; default 60) */
} mr_cli_live_args;

#define MR_CLI_LIVE_PORT 7681

/* the options' help lines */
extern const char mr_cli_live_usage[];

/* argv[*i] when it is a live option (its value consumed): 1; not one: 0; a bad value: -1 after
 * a message naming cmd and the option */
int mr_cli_live_option(const char *cmd, int argc, char **argv, int *i, mr_cli_live_args *a);

typedef struct mr_cli_live mr_cli_live;

/* Hooks on opt (before_step, on_step, on_end, ctx) for a live run; opt's own on_step and ctx,
 * if any, are still called. NULL (after a message) when out of memory or in a command built
 * without the viewer. */
mr_cli_live *mr_cli_live_begin(const char *cmd, const mr_cli_live_args *a, const char *title,
                               mr_run_options *opt);
/* After the run: with --keep-serving, serve the last state until SIGINT; then stop the server.
 * Returns 2 when the server could not start (the message printed), 0 otherwise. */
int mr_cli_live_finish(mr_cli_live *c);

#endif
