/* moreau run and moreau compare: step a scene with one solver, or with several side by side. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/hints.h"
#include "cli/live.h"
#include "cli/replay.h"
#include "cli/runner.h"
#include "core/output.h"

static const char run_usage[] =
    "usage: moreau run SCENE.yaml|MODEL.xml [options]\n"
    "Step a scene (or an MJCF model, docs/mjcf.md) from its initial state to its duration and\n"
    "print a summary. A URDF file runs in its default scene (docs/scene-format.md, \"A URDF\n"
    "as a scene\").\n"
    "  --keyframe NAME     start an MJCF robot from its keyframe NAME (q, v, controls)\n"
    "  --solver NAME       contact solver (default: the scene's; 'moreau solve --list')\n"
    "  --dt X              time step in s (default: the scene's)\n"
    "  --duration T        simulated time in s (default: the scene's)\n"
    "  --set KEY=VALUE     override a setting: solver.FIELD (any solver setting, e.g.\n"
    "                      solver.max_iter=100), solver.retry (true|false),\n"
    "                      contact.baumgarte, contact.margin,\n"
    "                      contact.restitution_threshold (repeatable)\n"
    "  --out FILE.csv      trajectory: t, q0..., v0..., energy, ncontacts, iterations,\n"
    "                      eps_abs, penetration, solve_us, iterations_sum (every\n"
    "                      record.every steps)\n"
    "  --contacts FILE.csv per-contact rows: t, contact, geom1, geom2, point, normal, phi,\n"
    "                      force in the contact frame (t1, t2, n) and in the world frame\n"
    "  --summary FILE.json the run's summary as JSON\n"
    "  --dump-problems DIR save every step's contact problem (the 'moreau solve' format)\n"
    "  --html FILE.html    a self-contained replay page (docs/viewer.md), written even when\n"
    "                      the run diverges\n"
    "  --fps N             the page's frames per simulated second (default 60; 0: every step)\n"
    "  --quiet             no progress bar and no summary on stdout\n"
    "%s"
    "Outputs appear only when the run succeeds: each is written to a temporary file and\n"
    "renamed into place; a failed run leaves every path as it was. SIGINT (Ctrl-C) stops\n"
    "after the current step, keeps the rows written, marks the summary interrupted.\n"
    "Exit status: 0 done, 1 the simulation diverged or failed or an output could not be\n"
    "written, 2 bad usage or bad scene, 130 interrupted by SIGINT.\n";

static const char compare_usage[] =
    "usage: moreau compare SCENE.yaml|MODEL.xml [--solvers a,b,...] [--dt X] [--duration T]\n"
    "                      [--set KEY=VALUE]... [--keyframe NAME] [--html FILE.html [--fps N]]\n"
    "Run the scene once per solver (default: every solver) and print the summaries side by\n"
    "side; --html writes one replay page with every run overlaid (docs/viewer.md).\n"
    "Exit status: 0 every run finished, 1 some run diverged, 2 bad usage or bad scene.\n";

typedef struct {
  const char *scene, *solver, *solvers, *out, *contacts, *summary, *dump, *html, *keyframe;
  const char *sets[64];
  int nsets, quiet;
  double dt, duration, fps; /* fps < 0: not given (60) */
  mr_cli_live_args live;
} run_args;

static int usage_error(const char *cmd, const char *fmt, const char *what) {
  fprintf(stderr, "moreau %s: ", cmd);
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see 'moreau %s --help')\n", cmd);
  return 2;
}

static int parse_positive(const char *cmd, const char *opt, const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double x = strtod(text, &end);
  if (end == text || *end || errno || !(x > 0.0) || !isfinite(x)) {
    fprintf(stderr, "moreau %s: %s needs a positive number, got '%s'\n", cmd, opt, text);
    return 2;
  }
  *out = x;
  return 0;
}

/* the value of an option that takes one */
static const char *option_value(const char *cmd, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    usage_error(cmd, "option %s needs a value", argv[*i]);
    return NULL;
  }
  return argv[++*i];
}

static int parse_args(const char *cmd, int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->fps = -1.0;
  a->live.port = MR_CLI_LIVE_PORT;
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i];
    int live = strcmp(cmd, "run") ? 0 : mr_cli_live_option(cmd, argc, argv, &i, &a->live);
    if (live < 0) return 2;
    if (live) continue;
    const char **slot = !strcmp(o, "--solver")          ? &a->solver
                        : !strcmp(o, "--solvers")       ? &a->solvers
                        : !strcmp(o, "--out")           ? &a->out
                        : !strcmp(o, "--contacts")      ? &a->contacts
                        : !strcmp(o, "--summary")       ? &a->summary
                        : !strcmp(o, "--dump-problems") ? &a->dump
                        : !strcmp(o, "--html")          ? &a->html
                        : !strcmp(o, "--keyframe")      ? &a->keyframe
                                                        : NULL;
    if (slot) {
      if (!(*slot = option_value(cmd, argc, argv, &i))) return 2;
    } else if (!strcmp(o, "--dt") || !strcmp(o, "--duration")) {
      const char *v = option_value(cmd, argc, argv, &i);
      if (!v || parse_positive(cmd, o, v, o[2] == 'd' && o[3] == 't' ? &a->dt : &a->duration))
        return 2;
    } else if (!strcmp(o, "--set")) {
      const char *v = option_value(cmd, argc, argv, &i);
      if (!v) return 2;
      if (a->nsets == 64) return usage_error(cmd, "%s", "too many --set options");
      a->sets[a->nsets++] = v;
    } else if (!strcmp(o, "--fps")) {
      const char *v = option_value(cmd, argc, argv, &i);
      char *end = NULL;
      if (!v ||
          (a->fps = strtod(v, &end), end == v || *end || !(a->fps >= 0.0) || !isfinite(a->fps)))
        return v ? usage_error(cmd, "--fps needs a non-negative number, got '%s'", v) : 2;
    } else if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
    } else if (o[0] == '-') {
      return usage_error(cmd, "unknown option '%s'", o);
    } else if (!a->scene) {
      a->scene = o;
    } else {
      return usage_error(cmd, "unexpected argument '%s'", o);
    }
  }
  if (!a->scene) return usage_error(cmd, "%s", "missing SCENE.yaml");
  if (a->fps >= 0.0 && !a->html) return usage_error(cmd, "%s", "--fps goes with --html");
  return 0;
}

/* --set solver.retry=true|false (or 1|0): the solver's retries on or off (world.h, no_retry) */
static mr_status set_retry(mr_scene *sc, const char *val, mr_error *err) {
  int on = !strcmp(val, "true") || !strcmp(val, "1"),
      off = !strcmp(val, "false") || !strcmp(val, "0");
  if (!on && !off)
    return mr_error_set(err, MR_ERR_INVALID, "--set solver.retry: '%s' is not true, false, 1 or 0",
                        val);
  sc->contact.no_retry = off;
  return MR_OK;
}

/* --set KEY=VALUE on a loaded scene (runner.h) */
mr_status mr_cli_apply_set(mr_scene *sc, const char *kv, mr_error *err) {
  const char *eq = strchr(kv, '=');
  if (!eq) return mr_error_set(err, MR_ERR_INVALID, "--set '%s': expected KEY=VALUE", kv);
  char key[128];
  snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
  const char *val = eq + 1;
  mr_error kerr;
  if (mr_cli_check_key(key, 0, &kerr)) return mr_error_set(err, kerr.status, "--set: %s", kerr.msg);
  if (!strcmp(key, "solver.retry")) return set_retry(sc, val, err);
  if (!strncmp(key, "solver.", 7)) return mr_scene_settings_set(&sc->settings, key + 7, val, err);
  double *target = !strcmp(key, "contact.baumgarte") ? &sc->contact.baumgarte
                   : !strcmp(key, "contact.margin")  ? &sc->contact.margin
                   : !strcmp(key, "contact.restitution_threshold")
                       ? &sc->contact.restitution_threshold
                       : NULL;
  if (!target)
    return mr_error_set(err, MR_ERR_INVALID,
                        "--set: unknown key '%s' (solver.FIELD, solver.retry, contact.baumgarte, "
                        "contact.margin, contact.restitution_threshold)",
                        key);
  /* the ranges of the scene's contact block (docs/scene-format.md) */
  double hi = target == &sc->contact.baumgarte ? 1.0
              : target == &sc->contact.margin  ? MR_SCENE_MARGIN_MAX
                                               : INFINITY;
  char *end = NULL;
  errno = 0;
  double x = strtod(val, &end);
  if (end == val || *end || errno || !isfinite(x) || x < 0.0 || x > hi)
    return mr_error_set(err, MR_ERR_INVALID, "--set %s: '%s' is not a number in [0, %g]", key, val,
                        hi);
  *target = x;
  return MR_OK;
}

/* load the scene and apply --dt, --duration and --set */
static int load_scene(const char *cmd, const run_args *a, mr_scene *sc) {
  mr_error err = {0};
  if (mr_scene_load(a->scene, sc, &err)) {
    fprintf(stderr, "moreau %s: %s\n", cmd, err.msg);
    return 2;
  }
  mr_cli_scene_note(cmd, sc);
  if (sc->nwarnings)
    fprintf(stderr, "moreau %s: %d warning(s), the last: %s\n", cmd, sc->nwarnings, sc->warning);
  if (a->keyframe && mr_scene_set_keyframe(sc, a->keyframe, &err)) {
    fprintf(stderr, "moreau %s: --keyframe: %s\n", cmd, err.msg);
    mr_scene_free(sc);
    return 2;
  }
  if (a->dt > 0.0) sc->timestep = a->dt;
  if (a->duration > 0.0) sc->duration = a->duration;
  long steps;
  if (mr_scene_step_count(sc->timestep, sc->duration, &steps, &err)) {
    fprintf(stderr, "moreau %s: %s%s%s\n", cmd, a->dt > 0.0 ? "--dt: " : "",
            a->duration > 0.0 ? "--duration: " : "", err.msg);
    mr_scene_free(sc);
    return 2;
  }
  for (int k = 0; k < a->nsets; ++k)
    if (mr_cli_apply_set(sc, a->sets[k], &err)) {
      fprintf(stderr, "moreau %s: %s\n", cmd, err.msg);
      mr_scene_free(sc);
      return 2;
    }
  return 0;
}

/* the output files of a run, from the options or the scene's record block; each is written
 * to a temporary file and renamed into place only when the run and every write succeeded */
typedef struct {
  char traj[MR_SCENE_PATH_MAX], contacts[MR_SCENE_PATH_MAX];
  const char *summary;
  mr_output otraj, ocontacts, osummary;
} run_outputs;

/* contacts CSV: --contacts, record.contacts, or with record.contact_forces the trajectory's
 * name with _contacts.csv */
static void output_paths(const run_args *a, const mr_scene *sc, run_outputs *o) {
  memset(o, 0, sizeof *o);
  snprintf(o->traj, sizeof o->traj, "%s", a->out ? a->out : sc->record.trajectory);
  const char *c = a->contacts ? a->contacts : sc->record.contacts;
  if (c[0]) {
    snprintf(o->contacts, sizeof o->contacts, "%s", c);
  } else if (sc->record.contact_forces && o->traj[0]) {
    size_t n = strlen(o->traj);
    if (n > 4 && !strcmp(o->traj + n - 4, ".csv")) n -= 4;
    snprintf(o->contacts, sizeof o->contacts, "%.*s_contacts.csv", (int)n, o->traj);
  }
  o->summary = a->summary ? a->summary : sc->record.summary;
}

/* no two of the scene and the outputs may be one file: the run would overwrite its input or
 * interleave two outputs */
static int check_distinct(const char *scene, const run_outputs *o) {
  const char *path[] = {scene, o->traj, o->contacts, o->summary};
  const char *what[] = {"the scene", "the trajectory (--out)", "the contacts CSV (--contacts)",
                        "the summary (--summary)"};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (path[i][0] && path[j][0] && mr_output_same_file(path[i], path[j])) {
        fprintf(stderr, "moreau run: %s and %s are the same file '%s'\n", what[i], what[j],
                path[j]);
        return 2;
      }
  return 0;
}

static int open_output(mr_output *o, const char *path) {
  mr_error err = {0};
  if (!path[0] || !mr_output_open(o, path, &err)) return 0;
  fprintf(stderr, "moreau run: %s\n", err.msg);
  return 2;
}

static void discard_outputs(run_outputs *o) {
  mr_output_discard(&o->otraj);
  mr_output_discard(&o->ocontacts);
  mr_output_discard(&o->osummary);
}

static int open_outputs(run_outputs *o, mr_run_options *opt) {
  int code = open_output(&o->otraj, o->traj) || open_output(&o->ocontacts, o->contacts);
  if (code) return discard_outputs(o), 2;
  opt->csv = o->otraj.f, opt->csv_path = o->traj;
  opt->contacts_csv = o->ocontacts.f, opt->contacts_path = o->contacts;
  return 0;
}

/* write the summary, then put every output in place; a write error fails the run and leaves
 * every path as it was (only a failing rename after a successful one, which needs the directory
 * to change under the run, could leave some outputs in place) */
static int commit_outputs(const run_args *a, const char *solver, const mr_run_summary *r,
                          run_outputs *o) {
  if (open_output(&o->osummary, o->summary)) return discard_outputs(o), 1;
  if (o->osummary.f) mr_run_summary_json(o->osummary.f, a->scene, solver, r);
  mr_output *all[] = {&o->otraj, &o->ocontacts, &o->osummary};
  mr_error err = {0};
  /* every write is checked before the first rename */
  for (int k = 0; k < 3; ++k)
    if (mr_output_close(all[k], &err)) {
      fprintf(stderr, "moreau run: %s\n", err.msg);
      return discard_outputs(o), 1;
    }
  for (int k = 0; k < 3; ++k)
    if (mr_output_commit(all[k], &err)) {
      fprintf(stderr, "moreau run: %s\n", err.msg);
      return discard_outputs(o), 1;
    }
  return 0;
}

/* SIGINT asks the run to stop after the current step; a second one kills as usual */
static volatile sig_atomic_t stop_requested;

static void on_sigint(int sig) {
  (void)sig;
  stop_requested = 1;
}

static mr_status run_interruptible(const mr_scene *sc, mr_run_options *opt, mr_run_summary *r,
                                   mr_error *err) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  stop_requested = 0;
  opt->stop = &stop_requested;
  sigaction(SIGINT, &sa, &old);
  mr_status st = mr_run_scene(sc, opt, r, err);
  sigaction(SIGINT, &old, NULL);
  return st;
}

int mr_cmd_run(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return printf(run_usage, mr_cli_live_usage), 0;
  run_args a;
  if (parse_args("run", argc, argv, &a)) return 2;
  if (a.solvers) return usage_error("run", "%s", "--solvers belongs to 'moreau compare'");
  if (a.solver && mr_cli_check_solver("run", a.solver)) return 2;
  mr_scene sc;
  if (load_scene("run", &a, &sc)) return 2;
  const char *solver = a.solver ? a.solver : sc.solver;
  mr_run_options opt = {.solver = a.solver,
                        .every = sc.record.every,
                        .energy = sc.record.energy,
                        .solver_stats = sc.record.solver_stats,
                        .dump_dir = a.dump,
                        .progress = !a.quiet && isatty(2),
                        .columns = {.world_velocity = sc.record.world_velocity,
                                    .poses = sc.record.poses,
                                    .com = sc.record.com}};
  run_outputs out;
  output_paths(&a, &sc, &out);
  int code = check_distinct(a.scene, &out);
  if (!code) code = open_outputs(&out, &opt);
  mr_replay *html =
      !code && a.html ? mr_view_replay("run", &sc, solver, a.fps < 0.0 ? 60.0 : a.fps) : NULL;
  if (a.html && !code && !html) code = 2;
  opt.on_step = html ? mr_replay_record : NULL, opt.ctx = html;
  mr_cli_live *live =
      !code && a.live.live ? mr_cli_live_begin("run", &a.live, a.scene, &opt) : NULL;
  if (a.live.live && !live) code = 2;
  mr_run_summary r;
  mr_error err = {0};
  mr_status st = code ? MR_OK : run_interruptible(&sc, &opt, &r, &err);
  if (mr_cli_live_finish(live)) code = 2, discard_outputs(&out);
  if (html && code)
    mr_replay_free(html);
  else if (html && mr_view_write("run", html, st ? err.msg : "ok", a.html))
    code = 2;
  if (st) {
    discard_outputs(&out);
    fprintf(stderr, "moreau run: %s\n", err.msg);
    code = st == MR_ERR_INVALID || st == MR_ERR_UNSUPPORTED ? 2 : 1;
  } else if (!code && !(code = commit_outputs(&a, solver, &r, &out))) {
    if (!a.quiet) mr_run_summary_print(stdout, solver, &r);
    if (r.interrupted) code = 130;
  }
  mr_scene_free(&sc);
  return code;
}

/* the most solvers one comparison runs */
#define COMPARE_MAX 32

/* the solvers to compare: the list given (split in buf), or every registered one; returns the
 * count, or -1 after a message for an empty name, an over-long list or more than cap names */
static int solver_list(const char *spec, char *buf, size_t size, const char *names[], int cap) {
  int n = 0;
  if (!spec) {
    for (int i = 0; i < mr_solver_count() && n < cap; ++i)
      names[n++] = mr_solver_at(i)->name;
    return n;
  }
  if (strlen(spec) >= size)
    return usage_error("compare", "--solvers: the list is longer than %s characters", "1023"), -1;
  snprintf(buf, size, "%s", spec);
  for (char *s = buf, *comma = s;; s = comma + 1) {
    comma = strchr(s, ',');
    if (comma) *comma = '\0';
    if (!*s) return usage_error("compare", "--solvers '%s': an empty solver name", spec), -1;
    if (n == cap) return usage_error("compare", "--solvers: more than %s solvers", "32"), -1;
    names[n++] = s;
    if (!comma) return n;
  }
}

int mr_cmd_compare(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return fputs(compare_usage, stdout), 0;
  run_args a;
  if (parse_args("compare", argc, argv, &a)) return 2;
  if (a.solver || a.out || a.contacts || a.summary || a.dump)
    return usage_error("compare", "%s",
                       "compare takes --solvers, --dt, --duration, --set and --html");
  const char *names[COMPARE_MAX];
  char buf[1024];
  int n = solver_list(a.solvers, buf, sizeof buf, names, COMPARE_MAX);
  if (n < 0) return 2;
  for (int i = 0; i < n; ++i)
    if (mr_cli_check_solver("compare", names[i])) return 2;
  mr_scene sc;
  if (load_scene("compare", &a, &sc)) return 2;
  printf("%-13s %7s %9s %7s %9s %9s %10s %10s %11s %s\n", "solver", "steps", "solve_us", "mean_it",
         "max_it", "max_eps", "max_pen_m", "E_drift_J", "not_conv", "status");
  mr_replay *html =
      a.html ? mr_view_replay("compare", &sc, NULL, a.fps < 0.0 ? 60.0 : a.fps) : NULL;
  int code = a.html && !html ? 2 : 0;
  for (int i = 0; i < n && code != 2; ++i) {
    mr_run_options opt = {.solver = names[i], .every = 1, .energy = 1, .solver_stats = 1};
    mr_run_summary r;
    mr_error err = {0};
    if (html && mr_replay_begin_run(html, names[i], &err)) {
      fprintf(stderr, "moreau compare: %s\n", err.msg), code = 2;
      break;
    }
    opt.on_step = html ? mr_replay_record : NULL, opt.ctx = html;
    mr_status st = mr_run_scene(&sc, &opt, &r, &err);
    if (html && st) mr_replay_end_run(html, err.msg);
    printf("%-13s %7ld %9.1f %7.1f %9d %9.2e %10.2e %10.3g %11ld %s\n", names[i], r.steps,
           r.mean_solve_us, r.mean_iterations, r.max_iterations, r.max_eps_abs, r.max_penetration,
           r.energy_end - r.energy_start, r.not_converged, st ? "diverged" : "ok");
    if (st) fprintf(stderr, "moreau compare: %s: %s\n", names[i], err.msg), code = 1;
  }
  if (html && code == 2)
    mr_replay_free(html);
  else if (html && mr_view_write("compare", html, NULL, a.html))
    code = 2;
  mr_scene_free(&sc);
  return code;
}
