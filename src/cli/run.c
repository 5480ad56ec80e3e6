/* moreau run and moreau compare: step a scene with one solver, or with several side by side. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/runner.h"

static const char run_usage[] =
    "usage: moreau run SCENE.yaml [options]\n"
    "Step a scene from its initial state to its duration and print a summary.\n"
    "  --solver NAME       contact solver (default: the scene's; 'moreau solve --list')\n"
    "  --dt X              time step in s (default: the scene's)\n"
    "  --duration T        simulated time in s (default: the scene's)\n"
    "  --set KEY=VALUE     override a setting: solver.FIELD (any solver setting, e.g.\n"
    "                      solver.max_iter=100), contact.baumgarte, contact.margin,\n"
    "                      contact.restitution_threshold (repeatable)\n"
    "  --out FILE.csv      trajectory: t, q0..., v0..., energy, ncontacts, iterations,\n"
    "                      eps_abs, penetration, solve_us (every record.every steps)\n"
    "  --contacts FILE.csv per-contact rows: t, contact, geom1, geom2, point, normal, phi,\n"
    "                      force in the contact frame (t1, t2, n) and in the world frame\n"
    "  --summary FILE.json the run's summary as JSON\n"
    "  --dump-problems DIR save every step's contact problem (the 'moreau solve' format)\n"
    "  --quiet             no progress bar and no summary on stdout\n"
    "Exit status: 0 done, 1 the simulation diverged or failed, 2 bad usage or bad scene.\n";

static const char compare_usage[] =
    "usage: moreau compare SCENE.yaml [--solvers a,b,...] [--dt X] [--duration T]\n"
    "                      [--set KEY=VALUE]...\n"
    "Run the scene once per solver (default: every solver) and print the summaries side by\n"
    "side. Exit status: 0 every run finished, 1 some run diverged, 2 bad usage or bad scene.\n";

typedef struct {
  const char *scene, *solver, *solvers, *out, *contacts, *summary, *dump;
  const char *sets[64];
  int nsets, quiet;
  double dt, duration;
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
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i];
    const char **slot = !strcmp(o, "--solver")          ? &a->solver
                        : !strcmp(o, "--solvers")       ? &a->solvers
                        : !strcmp(o, "--out")           ? &a->out
                        : !strcmp(o, "--contacts")      ? &a->contacts
                        : !strcmp(o, "--summary")       ? &a->summary
                        : !strcmp(o, "--dump-problems") ? &a->dump
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
  return 0;
}

/* --set KEY=VALUE on a loaded scene (runner.h) */
mr_status mr_cli_apply_set(mr_scene *sc, const char *kv, mr_error *err) {
  const char *eq = strchr(kv, '=');
  if (!eq) return mr_error_set(err, MR_ERR_INVALID, "--set '%s': expected KEY=VALUE", kv);
  char key[128];
  snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
  const char *val = eq + 1;
  if (!strncmp(key, "solver.", 7)) return mr_scene_settings_set(&sc->settings, key + 7, val, err);
  double *target = !strcmp(key, "contact.baumgarte") ? &sc->contact.baumgarte
                   : !strcmp(key, "contact.margin")  ? &sc->contact.margin
                   : !strcmp(key, "contact.restitution_threshold")
                       ? &sc->contact.restitution_threshold
                       : NULL;
  if (!target)
    return mr_error_set(err, MR_ERR_INVALID,
                        "--set: unknown key '%s' (solver.FIELD, contact.baumgarte, "
                        "contact.margin, contact.restitution_threshold)",
                        key);
  char *end = NULL;
  double x = strtod(val, &end);
  if (end == val || *end || !isfinite(x) || x < 0.0)
    return mr_error_set(err, MR_ERR_INVALID, "--set %s: '%s' is not a number >= 0", key, val);
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
  if (sc->nwarnings)
    fprintf(stderr, "moreau %s: %d warning(s), the last: %s\n", cmd, sc->nwarnings, sc->warning);
  if (a->dt > 0.0) sc->timestep = a->dt;
  if (a->duration > 0.0) sc->duration = a->duration;
  for (int k = 0; k < a->nsets; ++k)
    if (mr_cli_apply_set(sc, a->sets[k], &err)) {
      fprintf(stderr, "moreau %s: %s\n", cmd, err.msg);
      mr_scene_free(sc);
      return 2;
    }
  return 0;
}

static FILE *open_output(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "moreau run: cannot write '%s': %s\n", path, strerror(errno));
  return f;
}

/* the output files of a run, from the options or the scene's record block */
typedef struct {
  char traj[MR_SCENE_PATH_MAX], contacts[MR_SCENE_PATH_MAX];
} run_outputs;

/* contacts CSV: --contacts, record.contacts, or with record.contact_forces the trajectory's
 * name with _contacts.csv */
static void output_paths(const run_args *a, const mr_scene *sc, run_outputs *o) {
  snprintf(o->traj, sizeof o->traj, "%s", a->out ? a->out : sc->record.trajectory);
  const char *c = a->contacts ? a->contacts : sc->record.contacts;
  if (c[0]) {
    snprintf(o->contacts, sizeof o->contacts, "%s", c);
  } else if (sc->record.contact_forces && o->traj[0]) {
    size_t n = strlen(o->traj);
    if (n > 4 && !strcmp(o->traj + n - 4, ".csv")) n -= 4;
    snprintf(o->contacts, sizeof o->contacts, "%.*s_contacts.csv", (int)n, o->traj);
  } else {
    o->contacts[0] = '\0';
  }
}

static int open_outputs(const run_outputs *o, mr_run_options *opt) {
  if (o->traj[0] && !(opt->csv = open_output(o->traj))) return 2;
  if (o->contacts[0] && !(opt->contacts_csv = open_output(o->contacts))) return 2;
  return 0;
}

/* close the outputs; a failed run's files are removed: it is reported, never written out */
static void close_outputs(const run_outputs *o, mr_run_options *opt, int failed) {
  if (opt->csv) fclose(opt->csv);
  if (opt->contacts_csv) fclose(opt->contacts_csv);
  if (failed && o->traj[0]) remove(o->traj);
  if (failed && o->contacts[0]) remove(o->contacts);
}

static int write_summary(const run_args *a, const mr_scene *sc, const char *solver,
                         const mr_run_summary *r) {
  const char *sum = a->summary ? a->summary : sc->record.summary;
  if (!sum[0]) return 0;
  FILE *f = open_output(sum);
  if (!f) return 2;
  mr_run_summary_json(f, a->scene, solver, r);
  fclose(f);
  return 0;
}

int mr_cmd_run(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return fputs(run_usage, stdout), 0;
  run_args a;
  if (parse_args("run", argc, argv, &a)) return 2;
  if (a.solvers) return usage_error("run", "%s", "--solvers belongs to 'moreau compare'");
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
  int code = open_outputs(&out, &opt);
  mr_run_summary r;
  mr_error err = {0};
  mr_status st = code ? MR_OK : mr_run_scene(&sc, &opt, &r, &err);
  close_outputs(&out, &opt, code || st);
  if (st) {
    fprintf(stderr, "moreau run: %s\n", err.msg);
    code = st == MR_ERR_INVALID || st == MR_ERR_UNSUPPORTED ? 2 : 1;
  } else if (!code) {
    if (!a.quiet) mr_run_summary_print(stdout, solver, &r);
    code = write_summary(&a, &sc, solver, &r);
  }
  mr_scene_free(&sc);
  return code;
}

/* the solvers to compare: the list given (split in buf), or every registered one */
static int solver_list(const char *spec, char *buf, size_t size, const char *names[], int cap) {
  int n = 0;
  if (!spec) {
    for (int i = 0; i < mr_solver_count() && n < cap; ++i)
      names[n++] = mr_solver_at(i)->name;
    return n;
  }
  snprintf(buf, size, "%s", spec);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < cap;
       tok = strtok_r(NULL, ",", &save))
    names[n++] = tok;
  return n;
}

int mr_cmd_compare(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) return fputs(compare_usage, stdout), 0;
  run_args a;
  if (parse_args("compare", argc, argv, &a)) return 2;
  if (a.solver || a.out || a.contacts || a.summary || a.dump)
    return usage_error("compare", "%s", "compare takes --solvers, --dt, --duration and --set");
  const char *names[32];
  char buf[1024];
  int n = solver_list(a.solvers, buf, sizeof buf, names, 32);
  for (int i = 0; i < n; ++i)
    if (!mr_solver_find(names[i])) return usage_error("compare", "unknown solver '%s'", names[i]);
  mr_scene sc;
  if (load_scene("compare", &a, &sc)) return 2;
  printf("%-13s %7s %9s %7s %9s %9s %10s %10s %11s %s\n", "solver", "steps", "solve_us", "mean_it",
         "max_it", "max_eps", "max_pen_m", "E_drift_J", "not_conv", "status");
  int code = 0;
  for (int i = 0; i < n; ++i) {
    mr_run_options opt = {.solver = names[i], .every = 1, .energy = 1, .solver_stats = 1};
    mr_run_summary r;
    mr_error err = {0};
    mr_status st = mr_run_scene(&sc, &opt, &r, &err);
    printf("%-13s %7ld %9.1f %7.1f %9d %9.2e %10.2e %10.3g %11ld %s\n", names[i], r.steps,
           r.mean_solve_us, r.mean_iterations, r.max_iterations, r.max_eps_abs, r.max_penetration,
           r.energy_end - r.energy_start, r.not_converged, st ? "diverged" : "ok");
    if (st) fprintf(stderr, "moreau compare: %s: %s\n", names[i], err.msg), code = 1;
  }
  mr_scene_free(&sc);
  return code;
}
