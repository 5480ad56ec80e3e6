/* moreau solve: solve one standalone contact problem (a JSON file, format in
 * src/contact/problem_io.h) with a solver of the registry, and print λ, c and the NCP criteria.
 * Exit codes: 0 solved (converged or not: the output says which), 1 the solver failed
 * (numerical failure), 2 bad usage or bad input. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hints.h"
#include "contact/problem_io.h"
#include "core/arena.h"
#include "core/json.h"

typedef struct {
  const char *path, *solver;
  int json, list;
  mr_solver_settings s;
} solve_args;

static void solve_usage(FILE *f) {
  fprintf(f, "usage: moreau solve PROBLEM.json --solver NAME [--max-iter N] [--eps-abs X]\n"
             "                    [--criterion own|ncp] [--eps-scale X] [--pyramid-facets K]\n"
             "                    [--json]\n"
             "       moreau solve --list\n\n"
             "Solve a standalone contact problem c = (G + R) lambda + g (JSON: nc, G, g, mu, and\n"
             "optionally R, lambda0 as a warm start, phi, dt) and print lambda, c and the NCP\n"
             "criteria eps_abs, eps_p, eps_d, eps_c.\n\n"
             "  --solver NAME   the solver (see --list)\n"
             "  --max-iter N    iteration limit, 1 to 1e7 (default 10000)\n"
             "  --eps-abs X     target on the criterion in use (default 1e-6)\n"
             "  --criterion C   what the solver stops on: own (its own model's criterion, the\n"
             "                  default) or ncp (the NCP criterion eps_abs, for every solver)\n"
             "  --eps-scale X   relative tolerance of the scaled NCP criterion, >= 0 (default\n"
             "                  1e-15; ncp-hybrid stops on it; docs/solvers.md)\n"
             "  --pyramid-facets K  facets of the LCP solvers' friction pyramid, even, 4 to 64\n"
             "                  (default 4: the box |lambda_t1|, |lambda_t2| <= mu lambda_N)\n"
             "  --json          print one JSON object instead of text\n"
             "  --list          list the solvers with their model and description\n");
}

static void list_solvers(void) {
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = mr_solver_at(i);
    printf("%-14s %-7s %s\n", info->name, info->model, info->description);
  }
}

/* a whole-string integer in [lo, hi] */
static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < lo || x > hi) return 0;
  *out = (int)x;
  return 1;
}

/* a whole-string finite number ≥ 0 */
static int parse_nonnegative(const char *s, double *out) {
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(x) || !(x >= 0.0)) return 0;
  *out = x;
  return 1;
}

/* a whole-string positive finite number */
static int parse_positive(const char *s, double *out) {
  double x;
  if (!parse_nonnegative(s, &x) || !(x > 0.0)) return 0;
  *out = x;
  return 1;
}

/* one option with a value at argv[*i + 1]; returns 0 on a bad value */
static int parse_valued(solve_args *a, int argc, char **argv, int *i) {
  const char *opt = argv[*i];
  if (*i + 1 >= argc) {
    fprintf(stderr, "moreau solve: %s needs a value\n", opt);
    return 0;
  }
  const char *val = argv[++*i];
  int ok = 1;
  if (strcmp(opt, "--solver") == 0)
    a->solver = val;
  else if (strcmp(opt, "--max-iter") == 0)
    ok = parse_int(val, 1, 10000000, &a->s.max_iter); /* the scene's range of max_iter */
  else if (strcmp(opt, "--criterion") == 0)
    ok = (!strcmp(val, "own") || !strcmp(val, "ncp")) &&
         (a->s.criterion = val[0] == 'n' ? MR_CRITERION_NCP : MR_CRITERION_OWN, 1);
  else if (strcmp(opt, "--pyramid-facets") == 0)
    ok = parse_int(val, 4, MR_PYRAMID_MAX_FACETS, &a->s.pyramid_facets) &&
         a->s.pyramid_facets % 2 == 0;
  else if (strcmp(opt, "--eps-scale") == 0)
    ok = parse_nonnegative(val, &a->s.eps_scale);
  else
    ok = parse_positive(val, &a->s.eps_abs);
  if (!ok) fprintf(stderr, "moreau solve: bad value '%s' for %s\n", val, opt);
  return ok;
}

/* parse the command line; returns -1 to go on, else an exit code */
static int parse_args(int argc, char **argv, solve_args *a) {
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) return solve_usage(stdout), 0;
    if (strcmp(o, "--list") == 0) {
      a->list = 1;
    } else if (strcmp(o, "--json") == 0) {
      a->json = 1;
    } else if (!strcmp(o, "--solver") || !strcmp(o, "--max-iter") || !strcmp(o, "--eps-abs") ||
               !strcmp(o, "--criterion") || !strcmp(o, "--pyramid-facets") ||
               !strcmp(o, "--eps-scale")) {
      if (!parse_valued(a, argc, argv, &i)) return 2;
    } else if (o[0] == '-' || a->path) {
      fprintf(stderr, "moreau solve: unexpected argument '%s'\n", o);
      return solve_usage(stderr), 2;
    } else {
      a->path = o;
    }
  }
  return -1;
}

/* the usage checks once the arguments are parsed; returns -1 to go on */
static int check_args(const solve_args *a) {
  if (a->list) return list_solvers(), 0;
  if (!a->path || !a->solver) {
    fprintf(stderr, "moreau solve: need PROBLEM.json and --solver NAME\n");
    return solve_usage(stderr), 2;
  }
  if (mr_cli_check_solver("solve", a->solver)) return 2;
  return -1;
}

/* "converged" is on the criterion in use ("criterion": the solver's own model's, eps_model ≤
 * eps, by default); whether the NCP (the physics) is solved to eps is reported apart: a LCP or
 * CCP solver can meet its own model while its NCP ε_abs stays at the model's error (the
 * pyramid, contact at a distance) */
static void print_json(const char *solver, const mr_problem_file *f, const double *lambda,
                       const double *c, const mr_solver_stats *st, double eps, int crit) {
  int n = 3 * f->nc;
  printf("{\"solver\": ");
  mr_json_write_string(stdout, solver);
  printf(", \"model\": ");
  mr_json_write_string(stdout, mr_solver_find(solver)->model);
  printf(", \"criterion\": \"%s\", \"converged\": %s, \"eps_model\": ",
         crit == MR_CRITERION_NCP ? "ncp" : "own", st->converged ? "true" : "false");
  mr_json_write_number(stdout, st->eps_model);
  printf(", \"ncp_converged\": %s, \"iterations\": %d,\n \"lambda\": ",
         st->eps_abs <= eps ? "true" : "false", st->iterations);
  mr_json_write_vector(stdout, lambda, n);
  printf(",\n \"c\": ");
  mr_json_write_vector(stdout, c, n);
  printf(",\n \"eps_abs\": ");
  mr_json_write_number(stdout, st->eps_abs);
  printf(", \"eps_p\": ");
  mr_json_write_number(stdout, st->eps_p);
  printf(", \"eps_d\": ");
  mr_json_write_number(stdout, st->eps_d);
  printf(", \"eps_c\": ");
  mr_json_write_number(stdout, st->eps_c);
  printf(", \"eps_scaled\": ");
  mr_json_write_number(stdout, st->eps_scaled);
  printf(", \"time_us\": ");
  mr_json_write_number(stdout, st->time_us);
  printf("}\n");
}

static void print_text(const char *solver, const mr_problem_file *f, const double *lambda,
                       const double *c, const mr_solver_stats *st, double eps, int crit) {
  const char *model = mr_solver_find(solver)->model;
  if (crit == MR_CRITERION_NCP)
    printf("solver %s: %s on the NCP criterion (%.3e) after %d iterations, %.1f us; its own %s "
           "criterion %.3e\n",
           solver, st->converged ? "converged" : "NOT converged", st->eps_abs, st->iterations,
           st->time_us, model, st->eps_model);
  else
    printf("solver %s: %s on its own %s criterion (%.3e) after %d iterations, %.1f us\n", solver,
           st->converged ? "converged" : "NOT converged", model, st->eps_model, st->iterations,
           st->time_us);
  printf("NCP criteria: eps_abs %.3e  eps_p %.3e  eps_d %.3e  eps_c %.3e  (NCP %s to %.0e)\n",
         st->eps_abs, st->eps_p, st->eps_d, st->eps_c, st->eps_abs <= eps ? "solved" : "NOT solved",
         eps);
  printf("scaled NCP criterion: %.3e (%s)\n", st->eps_scaled,
         st->eps_scaled <= eps ? "met" : "NOT met");
  printf("%-8s %14s %14s %14s   %14s %14s %14s\n", "contact", "lambda_t1", "lambda_t2", "lambda_n",
         "c_t1", "c_t2", "c_n");
  for (int i = 0; i < f->nc; ++i) {
    const double *l = lambda + 3 * i, *ci = c + 3 * i;
    printf("%-8d %14.6e %14.6e %14.6e   %14.6e %14.6e %14.6e\n", i, l[0], l[1], l[2], ci[0], ci[1],
           ci[2]);
  }
}

/* load, solve, print; returns the exit code */
static int run(const solve_args *a) {
  mr_problem_file f;
  mr_error err;
  if (mr_problem_file_load(a->path, &f, &err)) {
    fprintf(stderr, "moreau solve: %s\n", err.msg);
    return 2;
  }
  int n = 3 * f.nc, code = 0;
  mr_arena work;
  double *lambda = calloc(n > 0 ? n : 1, sizeof(double)),
         *c = calloc(n > 0 ? n : 1, sizeof(double));
  /* the larger of every solver's scratch and this one's (lcp-lemke's dense tableau) */
  size_t wsz = mr_solver_work_size(f.nc, 0);
  size_t wone = mr_solver_work_size_for(mr_solver_find(a->solver), f.nc, 0, f.problem.G == NULL,
                                        (size_t)f.problem.nnzb);
  if (mr_arena_init(&work, wone > wsz ? wone : wsz) || !lambda || !c) {
    fprintf(stderr, "moreau solve: out of memory for nc = %d\n", f.nc);
    free(lambda), free(c), mr_problem_file_free(&f);
    return 1;
  }
  if (f.lambda0) memcpy(lambda, f.lambda0, (size_t)n * sizeof(double));
  mr_solver_stats st;
  if (mr_solve(a->solver, &f.problem, &a->s, NULL, &work, lambda, c, &st, &err)) {
    fprintf(stderr, "moreau solve: %s\n", err.msg);
    code = err.status == MR_ERR_INVALID ? 2 : 1;
  } else if (a->json) {
    print_json(a->solver, &f, lambda, c, &st, a->s.eps_abs, a->s.criterion);
  } else {
    print_text(a->solver, &f, lambda, c, &st, a->s.eps_abs, a->s.criterion);
  }
  mr_arena_destroy(&work);
  free(lambda), free(c), mr_problem_file_free(&f);
  return code;
}

int mr_cmd_solve(int argc, char **argv) {
  solve_args a = {.s = mr_solver_settings_default()};
  int code = parse_args(argc, argv, &a);
  if (code < 0) code = check_args(&a);
  return code < 0 ? run(&a) : code;
}
