/* moreau derivatives: step a scene to a time T, then take one more step and print its
 * Jacobians (mr_sim_step_derivatives, moreau/sim_derivatives.h): ∂v⁺ and ∂q⁺ with respect to q
 * (tangent space), v and τ, nv x nv each, at the state of time T. Human-readable, or one JSON
 * object with --json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hints.h"
#include "core/json.h"
#include "moreau/sim_derivatives.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

static const char usage_text[] =
    "usage: moreau derivatives SCENE.yaml [options]\n"
    "\n"
    "Simulate the scene up to time T, then take one more step and print its Jacobians:\n"
    "dvn_dq, dvn_dv, dvn_dtau (of the velocity after the step) and dqn_dq, dqn_dv,\n"
    "dqn_dtau (of the configuration after the step, in the tangent space at it), nv x nv\n"
    "each, entry [i][k] = d(output i)/d(input k); q along the tangent space (q (+) dq).\n"
    "Contacts are differentiated through their active set (sticking, sliding, separated),\n"
    "their Jacobian and gaps (docs/derivatives.md).\n"
    "\n"
    "options:\n"
    "  --time T          time to simulate first (s, >= 0, default 0: the initial state)\n"
    "  --solver NAME     contact solver (default: the scene's)\n"
    "  --json            print one JSON object instead of text\n"
    "  -h, --help        print this help\n"
    "\n"
    "exit status: 0 success, 1 the simulation failed before or at the step, 2 bad usage, a\n"
    "scene that does not load, or a step whose contacts are not differentiated\n";

typedef struct {
  const char *scene, *solver;
  double time;
  int json;
} deriv_args;

static int usage_error(const char *fmt, const char *what) {
  fprintf(stderr, "moreau derivatives: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, "\n(see 'moreau derivatives --help')\n");
  return 2;
}

/* the command line; 2 on bad usage, -1 for --help */
static int parse_args(int argc, char **argv, deriv_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; ++i) {
    const char *s = argv[i];
    if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) return -1;
    if (strcmp(s, "--json") == 0) {
      a->json = 1;
    } else if (strcmp(s, "--time") == 0 || strcmp(s, "--solver") == 0) {
      if (i + 1 >= argc) return usage_error("option %s needs a value", s);
      const char *val = argv[++i];
      if (s[2] == 's') {
        a->solver = val;
        continue;
      }
      char *end;
      a->time = strtod(val, &end);
      if (end == val || *end || !isfinite(a->time) || a->time < 0.0)
        return usage_error("--time: '%s' is not a finite time >= 0", val);
    } else if (s[0] == '-' && s[1]) {
      return usage_error("unknown option '%s'", s);
    } else if (a->scene) {
      return usage_error("more than one scene given ('%s')", s);
    } else {
      a->scene = s;
    }
  }
  if (!a->scene) return usage_error("%s", "no SCENE.yaml given");
  return 0;
}

static const char *const names[6] = {"dvn_dq", "dvn_dv", "dvn_dtau",
                                     "dqn_dq", "dqn_dv", "dqn_dtau"};

static const double *matrix(const mr_step_derivatives *sd, int k) {
  const double *mats[6] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau,
                           sd->dqn_dq, sd->dqn_dv, sd->dqn_dtau};
  return mats[k];
}

static void print_json(FILE *f, const mr_sim *s, const mr_step_derivatives *sd, double t,
                       const double *q, const double *v) {
  const mr_model *m = mr_sim_model(s);
  fprintf(f, "{\"time\": ");
  mr_json_write_number(f, t);
  fprintf(f, ", \"nq\": %d, \"nv\": %d, \"ncontacts\": %d, \"nconstraints\": %d", m->nq, m->nv,
          mr_sim_last(s)->ncontacts, mr_sim_last(s)->nconstraints);
  const char *keys[4] = {"q", "v", "q_next", "v_next"};
  const double *vecs[4] = {q, v, mr_sim_q(s), mr_sim_v(s)};
  for (int k = 0; k < 4; ++k) {
    fprintf(f, ", ");
    mr_json_write_string(f, keys[k]);
    fprintf(f, ": ");
    mr_json_write_vector(f, vecs[k], k % 2 ? m->nv : m->nq);
  }
  for (int k = 0; k < 6; ++k) {
    fprintf(f, ", ");
    mr_json_write_string(f, names[k]);
    fprintf(f, ": ");
    mr_json_write_matrix(f, matrix(sd, k), m->nv, m->nv);
  }
  fprintf(f, "}\n");
}

static void print_text(FILE *f, const mr_sim *s, const mr_step_derivatives *sd, double t) {
  const mr_model *m = mr_sim_model(s);
  const int nv = m->nv;
  fprintf(f, "step from t = %.6g s: nq %d, nv %d, %d contacts, %d constraints\n", t, m->nq, nv,
          mr_sim_last(s)->ncontacts, mr_sim_last(s)->nconstraints);
  for (int k = 0; k < 6; ++k) {
    const double *A = matrix(sd, k);
    fprintf(f, "\n%s (%d x %d):\n", names[k], nv, nv);
    for (int r = 0; r < nv; ++r) {
      for (int c = 0; c < nv; ++c)
        fprintf(f, " %12.5g", A[r * nv + c]);
      fprintf(f, "\n");
    }
  }
}

int mr_cmd_derivatives(int argc, char **argv) {
  deriv_args a;
  int code = parse_args(argc, argv, &a);
  if (code == -1) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (code) return code;
  if (a.solver && mr_cli_check_solver("derivatives", a.solver)) return 2;
  mr_scene sc;
  mr_error e;
  if (mr_scene_load(a.scene, &sc, &e) != MR_OK) {
    fprintf(stderr, "moreau derivatives: %s\n", e.msg);
    return 2;
  }
  mr_cli_scene_note("derivatives", &sc);
  mr_sim *s = mr_sim_from_scene(&sc, a.solver, &e);
  if (!s) {
    fprintf(stderr, "moreau derivatives: %s\n", e.msg);
    mr_scene_free(&sc);
    return 2;
  }
  mr_sim_derivatives *x = mr_sim_derivatives_create(s, &e);
  const mr_model *m = mr_sim_model(s);
  double *q0 = malloc((size_t)(m->nq + m->nv) * sizeof(double));
  if (!x || !q0) {
    fprintf(stderr, "moreau derivatives: out of memory\n");
    code = 2;
    goto done;
  }
  const long steps = lround(a.time / sc.timestep);
  for (long k = 0; k < steps; ++k)
    if (mr_sim_step(s, &e) != MR_OK) {
      fprintf(stderr, "moreau derivatives: %s\n", e.msg);
      code = 1;
      goto done;
    }
  const double t = mr_sim_time(s);
  memcpy(q0, mr_sim_q(s), (size_t)m->nq * sizeof(double));
  memcpy(q0 + m->nq, mr_sim_v(s), (size_t)m->nv * sizeof(double));
  mr_status st = mr_sim_step_derivatives(s, x, &e);
  if (st != MR_OK) {
    fprintf(stderr, "moreau derivatives: step at t = %g s: %s\n", t, e.msg);
    code = st == MR_ERR_INVALID ? 2 : 1;
    goto done;
  }
  if (a.json)
    print_json(stdout, s, mr_sim_derivatives_get(x), t, q0, q0 + m->nq);
  else
    print_text(stdout, s, mr_sim_derivatives_get(x), t);
done:
  free(q0);
  mr_sim_derivatives_free(x);
  mr_sim_free(s);
  mr_scene_free(&sc);
  return code;
}
