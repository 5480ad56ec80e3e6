/* The locomotion MPC (docs/mpc.md): Solo-12 walks from standing under its model-predictive
 * controller for DURATION seconds, the default solver, on flat ground (μ 0.9, the controller's
 * defaults, as scenes/b9_solo_trot.yaml) and on B10's sine ground (0.1 m from trough to crest,
 * slopes to 8.9°, μ 0.3, the controller's cones at μ 0.25, as scenes/b10_solo_trot_bumpy.yaml
 * but with the integral action on). Per command (forward, sideways m/s in the heading frame, yaw
 * rate rad/s): the mean velocity over t > 1 s, the tracking error (the largest component's
 * |mean − command| over the command's speed, a yaw rate's over itself), the falls (the trunk on
 * the ground, or tilted past 60°) with the first one's time, the largest tilt, and the QP solves:
 * how many stopped before their tolerance, the most interior-point iterations, the largest KKT
 * residual (mpc_qp.h's measure) and the thread CPU time of a solve (mean, p99, max). Output: a
 * Markdown table. Run: make bench, or build/bench/bench/mpc [flat|bumpy|both [vx vy wz]...]
 * (default: both grounds, the sweep); MPC_MU sets the cones' μ on the bumpy ground (0.25),
 * MPC_EXTRA appends controller keys (e.g. ", iterations: 100"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "moreau/mpc.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define DURATION 10.0
#define T_START 1.0
#define MAX_SOLVES 1000

static const char *const grounds[2] = {
    "{type: halfspace, friction: 0.9}",
    "{type: heightfield, function: sine, amplitude: 0.05, wavelength: 2.0, extent: [-12, 12, "
    "-12, 12], step: 0.02, friction: 0.3}"};
static const char *const ground_names[2] = {"flat", "bumpy"};

/* the default sweep: forward, sideways, diagonal, turning */
static const double sweep[][3] = {{0.1, 0, 0},     {0.2, 0, 0},      {0.4, 0, 0},   {0.5, 0, 0},
                                  {0.6, 0, 0},     {0.7, 0, 0},      {0.9, 0, 0},   {1.0, 0, 0},
                                  {0, 0.2, 0},     {0, -0.4, 0},     {0, 0.6, 0},   {0, -0.7, 0},
                                  {0, 0.9, 0},     {0, -1.0, 0},     {0.4, 0.4, 0}, {0.6, -0.3, 0},
                                  {0.5, 0.0, 0.5}, {0.3, 0.2, -0.4}, {0.7, 0, 0.3}, {0, 0, 0.8}};

typedef struct {
  double v[3], err, tilt_max, fall_time;
  long falls, solves, not_converged;
  int max_iter;
  double t_mean, t_p99, t_max, kkt_max;
} result;

static double yaw_of(const double *q) {
  return atan2(2.0 * (q[6] * q[5] + q[3] * q[4]), 1.0 - 2.0 * (q[4] * q[4] + q[5] * q[5]));
}

static mr_sim *make_sim(int ground, const double cmd[3], mr_scene *sc) {
  char text[2048], bumpy_mu[64];
  snprintf(bumpy_mu, sizeof bumpy_mu, ", mu: %s", getenv("MPC_MU") ? getenv("MPC_MU") : "0.25");
  snprintf(text, sizeof text,
           "timestep: 0.001\n"
           "contact: {margin: 0.001, baumgarte: 0.0}\n"
           "bodies:\n"
           "  - name: ground\n"
           "    fixed: true\n"
           "    geoms:\n"
           "      - %s\n"
           "robots:\n"
           "  - name: solo\n"
           "    urdf: robots/solo12/solo12.urdf\n"
           "    floating: true\n"
           "    posture: standing\n"
           "%s"
           "    friction: %s\n"
           "    controller: {type: mpc, velocity: [%g, %g, %g], gait: trot%s%s}\n",
           grounds[ground], ground ? "    position: [0, 0, 0.29]\n" : "", ground ? "0.3" : "0.9",
           cmd[0], cmd[1], cmd[2], ground ? bumpy_mu : "",
           getenv("MPC_EXTRA") ? getenv("MPC_EXTRA") : "");
  mr_error err = {0};
  if (mr_scene_parse(text, "bench.yaml", ".", sc, &err)) {
    fprintf(stderr, "scene: %s\n", err.msg);
    exit(1);
  }
  mr_sim *s = mr_sim_from_scene(sc, NULL, &err);
  if (!s) {
    fprintf(stderr, "simulator: %s\n", err.msg);
    exit(1);
  }
  return s;
}

static void walk(int ground, const double cmd[3], result *r) {
  mr_scene sc;
  mr_sim *s = make_sim(ground, cmd, &sc);
  mr_error err = {0};
  memset(r, 0, sizeof *r);
  r->fall_time = NAN;
  static double times[MAX_SOLVES];
  long n = lround(DURATION / 0.001), n0 = lround(T_START / 0.001), nt = 0, solves = 0;
  for (long k = 0; k < n; ++k) {
    if (mr_sim_step(s, &err)) {
      fprintf(stderr, "step %ld: %s\n", k, err.msg);
      break;
    }
    mr_mpc_status st;
    mr_sim_get_mpc_status(s, "solo", &st, &err);
    if (st.solves > solves && nt < MAX_SOLVES) times[nt++] = st.qp_time;
    if (st.solves > solves && st.kkt > r->kkt_max) r->kkt_max = st.kkt;
    solves = st.solves;
    r->tilt_max = fmax(r->tilt_max, st.tilt);
    if (st.fallen && isnan(r->fall_time)) r->fall_time = st.fall_time;
    if (k < n0) continue;
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    mr_mat3 R = mr_quat_to_m3((mr_quat){q[3], q[4], q[5], q[6]});
    mr_vec3 vw = mr_m3_mulv(&R, mr_v3(v[0], v[1], v[2]));
    mr_vec3 ww = mr_m3_mulv(&R, mr_v3(v[3], v[4], v[5]));
    double yaw = yaw_of(q);
    r->v[0] += (cos(yaw) * vw.v[0] + sin(yaw) * vw.v[1]) / (double)(n - n0);
    r->v[1] += (-sin(yaw) * vw.v[0] + cos(yaw) * vw.v[1]) / (double)(n - n0);
    r->v[2] += ww.v[2] / (double)(n - n0);
  }
  mr_mpc_status st;
  mr_sim_get_mpc_status(s, "solo", &st, &err);
  r->solves = st.solves, r->not_converged = st.not_converged, r->max_iter = st.max_iterations;
  r->falls = mr_sim_get_warnings(s)->falls;
  double speed = fmax(fabs(cmd[0]), fabs(cmd[1]));
  for (int k = 0; k < 3; ++k) {
    double scale = k < 2 ? speed : fabs(cmd[2]);
    if (scale > 0.0) r->err = fmax(r->err, fabs(r->v[k] - cmd[k]) / scale);
  }
  double sum = 0.0;
  for (long k = 0; k < nt; ++k)
    sum += times[k];
  r->t_mean = nt ? sum / (double)nt : NAN;
  qsort(times, (size_t)nt, sizeof *times, bench_cmp_double);
  r->t_p99 = nt ? times[(long)(0.99 * (double)(nt - 1) + 0.5)] : NAN;
  r->t_max = nt ? times[nt - 1] : NAN;
  mr_sim_free(s);
  mr_scene_free(&sc);
}

static void row(int ground, const double cmd[3]) {
  result r;
  walk(ground, cmd, &r);
  char fall[32] = "0";
  if (r.falls) snprintf(fall, sizeof fall, "%ld (%.2f s)", r.falls, r.fall_time);
  printf("| %s | (%.2f, %.2f, %.2f) | (%.4f, %.4f, %.4f) | %.1f %% | %s | %.0f° | %ld/%ld, %d | "
         "%.1e | "
         "%.0f, %.0f, %.0f |\n",
         ground_names[ground], cmd[0], cmd[1], cmd[2], r.v[0], r.v[1], r.v[2], 100.0 * r.err, fall,
         r.tilt_max * 180.0 / M_PI, r.not_converged, r.solves, r.max_iter, r.kkt_max,
         1e6 * r.t_mean, 1e6 * r.t_p99, 1e6 * r.t_max);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int g0 = 0, g1 = 1;
  if (argc > 1 && !strcmp(argv[1], "flat")) g1 = 0;
  if (argc > 1 && !strcmp(argv[1], "bumpy")) g0 = 1;
  printf("MPC walks, %.0f s from standing, means over t > %.0f s; QP: solves short of the "
         "tolerance / solves, most iterations; KKT: the largest KKT residual of a solve; CPU µs "
         "per solve: mean, p99, max\n\n",
         DURATION, T_START);
  printf("| ground | command | mean (vx, vy, wz) | error | falls | max tilt | QP | KKT | µs |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int g = g0; g <= g1; ++g) {
    if (argc > 4) {
      for (int a = 2; a + 2 < argc; a += 3) {
        double cmd[3] = {atof(argv[a]), atof(argv[a + 1]), atof(argv[a + 2])};
        row(g, cmd);
      }
      continue;
    }
    for (size_t c = 0; c < sizeof sweep / sizeof sweep[0]; ++c)
      row(g, sweep[c]);
  }
  return 0;
}
