/* Solo-12 crouching and standing back up under a closed-loop controller, through the C API.
 *
 * The world (a YAML scene with Solo-12 on flat ground and PD gains, scenes/solo_stand.yaml) is
 * loaded once; the controller runs between steps: it reads the base height h from the state,
 * compares it with a reference height h_ref(t) (down by 8 cm over the first second, back up over
 * the next one, then held), and bends the legs by
 *   δ = δ_ff(t) + k_h (h − h_ref)
 * (feed-forward of the crouch plus height feedback), written as the PD targets of the hip
 * (HFE, ∓δ/2) and knee (KFE, ±δ) joints; the simulator's implicit PD tracks them. Every half
 * second it prints the time, h, h_ref, the number of contacts and the total normal force.
 *
 * Build against an installed moreau:
 *   cc solo_stand_up.c $(pkg-config --cflags --libs moreau) -lm -o solo_stand_up
 * Run: ./solo_stand_up [SCENE.yaml] [DURATION_S]. Exit status 0 when the robot stands at the
 * end (|h − h_ref| < 1 cm), 1 otherwise, 2 on an error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <moreau/moreau.h>

#define STAND_HEIGHT 0.235 /* m, the SRDF "standing" posture's base height */
#define CROUCH_DEPTH 0.08  /* m */
#define CROUCH_BEND 0.6    /* rad of knee bend per CROUCH_DEPTH, feed-forward */
#define HEIGHT_GAIN 4.0    /* rad/m, height feedback */
#define PI 3.14159265358979323846

/* the crouch profile: 0 → 1 over [0, 1] s, 1 → 0 over [1, 2] s, then 0 */
static double crouch(double t) {
  double x = t < 1.0 ? t : t < 2.0 ? 2.0 - t : 0.0;
  return 0.5 - 0.5 * cos(PI * x);
}

/* the leg joints' dofs: hips (HFE) and knees (KFE) of FL, FR, HL, HR */
static int leg_dofs(const mr_world *w, int hfe[4], int kfe[4]) {
  const char *legs[4] = {"FL", "FR", "HL", "HR"};
  char name[64];
  for (int l = 0; l < 4; ++l) {
    snprintf(name, sizeof name, "solo/%s_HFE", legs[l]);
    hfe[l] = mr_world_joint_dof(w, name);
    snprintf(name, sizeof name, "solo/%s_KFE", legs[l]);
    kfe[l] = mr_world_joint_dof(w, name);
    if (hfe[l] < 0 || kfe[l] < 0) return fprintf(stderr, "no joint %s\n", name), -1;
  }
  return 0;
}

/* the controller: targets from the crouch profile and the measured base height */
static double control(mr_sim *s, const mr_world *w, const int hfe[4], const int kfe[4]) {
  double t = mr_sim_time(s), c = crouch(t);
  double h = mr_sim_qpos(s)[w->robots[0].idx_q + 2], h_ref = STAND_HEIGHT - CROUCH_DEPTH * c;
  double delta = CROUCH_BEND * c + HEIGHT_GAIN * (h - h_ref);
  double *target = mr_sim_ctrl_target(s);
  for (int l = 0; l < 4; ++l) {
    double front = l < 2 ? 1.0 : -1.0; /* hind legs bend the other way */
    target[mr_world_dof_coordinate(w, hfe[l])] = front * (0.8 + 0.5 * delta);
    target[mr_world_dof_coordinate(w, kfe[l])] = front * (-1.6 - delta);
  }
  return h_ref;
}

/* the number of contacts and the sum of their normal forces (N) */
static int contact_load(const mr_sim *s, double *fn) {
  mr_contact_force c[64];
  int n = mr_sim_contact_forces(s, c, 64);
  *fn = 0.0;
  for (int i = 0; i < n && i < 64; ++i)
    *fn += c[i].lambda[2];
  return n;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "scenes/solo_stand.yaml";
  double duration = argc > 2 ? atof(argv[2]) : 3.0;
  mr_error err = {0};
  mr_world *w = mr_world_load(path, &err);
  mr_sim *s = w ? mr_sim_create(w, NULL, &err) : NULL;
  int hfe[4], kfe[4];
  if (!s || leg_dofs(w, hfe, kfe)) {
    fprintf(stderr, "solo_stand_up: %s\n", err.msg);
    return 2;
  }
  double h_ref = STAND_HEIGHT;
  long steps = lround(duration / w->timestep);
  for (long k = 0; k < steps; ++k) {
    h_ref = control(s, w, hfe, kfe);
    if (mr_sim_step(s, &err)) {
      fprintf(stderr, "solo_stand_up: %s\n", err.msg);
      return 2;
    }
    if ((k + 1) % 500 == 0) {
      double fn;
      int n = contact_load(s, &fn);
      printf("t %.2f s  base height %.4f m  reference %.4f m  contacts %d  normal force %.2f N\n",
             mr_sim_time(s), mr_sim_q(s)[w->robots[0].idx_q + 2], h_ref, n, fn);
    }
  }
  double h = mr_sim_q(s)[w->robots[0].idx_q + 2];
  int stood = fabs(h - h_ref) < 0.01;
  printf("%s: base height %.4f m, reference %.4f m\n", stood ? "stood" : "fell", h, h_ref);
  mr_sim_free(s);
  mr_world_free(w);
  return stood ? 0 : 1;
}
