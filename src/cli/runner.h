/* Running a scene to its end and summarising it: shared by `moreau run` and `moreau compare`. */
#ifndef MOREAU_CLI_RUNNER_H
#define MOREAU_CLI_RUNNER_H

#include <signal.h>
#include <stdio.h>

#include "moreau/scene.h"
#include "cli/columns.h"
#include "moreau/sim.h"

/* Figures of a whole run. */
typedef struct {
  long steps;
  double sim_time, wall_time, realtime_factor;
  double mean_contacts;
  int max_contacts;
  double mean_iterations;
  int max_iterations;
  double max_eps_abs, max_penetration;
  double energy_start, energy_end;
  long not_converged, collision_failures;
  long falls;             /* robots under MPC control that fell (mpc.h) */
  long ncp_not_converged; /* steps above eps_abs on the NCP criterion (whatever the model) */
  long budget;            /* steps in which a solve stopped at its budget (mr_sim_warnings) */
  double max_step_us;     /* the longest step's wall time (µs) */
  double mean_solve_us;
  mr_step_timing mean_timing; /* mean stage times per step (µs): mr_step_stats' timing */
  int interrupted;            /* the run stopped early on a request (SIGINT), after a whole row */
} mr_run_summary;

typedef struct {
  const char *solver;   /* NULL: the scene's */
  FILE *csv;            /* trajectory rows, or NULL */
  FILE *contacts_csv;   /* per-contact rows (points, normals, forces), or NULL */
  int energy;           /* trajectory: the energy column */
  int solver_stats;     /* trajectory: the iterations, eps_abs and solve_us columns */
  int every;            /* record every N steps */
  const char *dump_dir; /* write each step's contact problem here, or NULL */
  int progress;         /* draw a progress bar on stderr */
  mr_columns columns;   /* trajectory: the optional state column groups */
  const char *csv_path, *contacts_path; /* the outputs' names, for write-error messages */
  const volatile sig_atomic_t *stop;    /* when set to non-zero, stop after the current step */
  /* called with the simulator once before the first step and after every step (a replay
   * recorder), or NULL */
  void (*on_step)(void *ctx, const mr_sim *s);
  void *ctx;
  /* called before every step (a live viewer), or NULL: returns MR_RUN_STEP, MR_RUN_STOP (end
   * the run as a stop request does) or MR_RUN_RESTART (it reset the simulator: the run's step
   * count starts again) */
  int (*before_step)(void *ctx, mr_sim *s);
  /* called with the simulator and the run's status before the simulator is freed, or NULL */
  void (*on_end)(void *ctx, mr_sim *s, mr_status st, const mr_error *err);
} mr_run_options;

enum { MR_RUN_STEP = 0, MR_RUN_STOP, MR_RUN_RESTART };

/* Run the scene from its initial state to its duration. On divergence or another failure,
 * returns the status with err naming the step; summary then covers the steps done. A write
 * error on an output stops the run with MR_ERR_IO naming the file. A stop request ends the run
 * with MR_OK after the current step's rows, and summary->interrupted set. */
mr_status mr_run_scene(const mr_scene *scene, const mr_run_options *opt, mr_run_summary *summary,
                       mr_error *err);

/* Apply "KEY=VALUE" as `run --set` does (solver.FIELD, contact.baumgarte, contact.margin,
 * contact.restitution_threshold) to a loaded scene; MR_ERR_INVALID naming the key or value. */
mr_status mr_cli_apply_set(mr_scene *sc, const char *kv, mr_error *err);

/* Print the summary as text, or as a JSON object. */
void mr_run_summary_print(FILE *f, const char *solver, const mr_run_summary *s);
void mr_run_summary_json(FILE *f, const char *scene, const char *solver, const mr_run_summary *s);

#endif
