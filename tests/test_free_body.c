/* Free bodies against their closed forms (docs/physics.md "Free bodies"): torque-free motion
 * of symmetric, asymmetric and off-centre bodies (the centre of mass on its straight line, the
 * energy and |L| constant, the intermediate-axis flip against an independent RK4 integration of
 * Euler's equations), rolling without slipping of spheres, capsules and cylinders on a plane
 * with every rigid NCP solver (height and speed kept), a box dropped corner first (the
 * energy in flight follows semi-implicit Euler's closed form, and never grows after), torques on
 * spinning bodies (the world angular momentum follows Euler's law L_n = L₀ + Δt Σ τ(t_k) to
 * round-off), and the heavy top in steady precession on a frictionless floor and on a pivot (the
 * conserved vertical angular momentum, and the tilt). */
#include <float.h>
#include <string.h>

#include "moreau/assembly.h"
#include "sim_util.h"

/* ---- measurements of body 1, a free body ---- */

typedef struct {
  mr_vec3 com, vcom; /* centre of mass and its velocity, world frame */
  mr_vec3 L, w;      /* angular momentum about the COM and angular velocity, world frame */
  double E;          /* kinetic + potential energy */
} fb_state;

static fb_state fb_measure(mr_sim *s) {
  const double *q = mr_sim_q(s), *v = mr_sim_v(s);
  const mr_inertia *Y = &mr_sim_model(s)->bodies[1].inertia;
  mr_quat o = {q[3], q[4], q[5], q[6]};
  mr_mat3 R = mr_quat_to_m3(o);
  mr_vec3 w = mr_v3(v[3], v[4], v[5]), vo = mr_v3(v[0], v[1], v[2]);
  fb_state x;
  x.com = mr_v3_add(mr_v3(q[0], q[1], q[2]), mr_m3_mulv(&R, Y->c));
  x.vcom = mr_m3_mulv(&R, mr_v3_add(vo, mr_v3_cross(w, Y->c)));
  x.L = mr_m3_mulv(&R, mr_m3_mulv(&Y->I, w));
  x.w = mr_m3_mulv(&R, w);
  x.E = mr_sim_energy(s);
  return x;
}

static double dist(mr_vec3 a, mr_vec3 b) {
  return mr_v3_norm(mr_v3_sub(a, b));
}

static int verbose(void) {
  return getenv("MOREAU_TEST_VERBOSE") != NULL;
}

/* ---- torque-free motion ---- */

/* a tilted orientation [x, y, z, w] (axis (1, 2, 0)/√5, 2 asin(√(1/6)) ≈ 48°) */
#define FB_TILT "[0.1825741858350554, 0.3651483716701107, 0, 0.9128709291752769]"

/* a free body in zero gravity: its geometries (YAML flow list), orientation, world velocities v
 * and ω */
static mr_scene fb_free_scene(const char *geoms, const char *orientation, mr_vec3 v, mr_vec3 w,
                              double dt) {
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: %.17g\ngravity: [0, 0, 0]\n"
           "bodies:\n"
           "  - name: body\n    mass: 1.0\n    position: [0.1, -0.2, 0.3]\n"
           "    orientation: %s\n"
           "    linear_velocity: [%.17g, %.17g, %.17g]\n"
           "    angular_velocity: [%.17g, %.17g, %.17g]\n"
           "    geoms: %s\n",
           dt, orientation, v.v[0], v.v[1], v.v[2], w.v[0], w.v[1], w.v[2], geoms);
  return tsim_parse(text, ".");
}

/* what a torque-free run measured, each the maximum over the steps */
typedef struct {
  double com;   /* |c_k − (c₀ + v₀ t_k)| (m) */
  double dE;    /* |E_k − E₀| / E₀ */
  double dLn;   /* ||L_k| − |L₀|| / |L₀| */
  double dL;    /* |L_k − L₀| / |L₀|, the world vector */
  double scale; /* max_k (|c_k| + t_k |v₀|): the size of the positions added (m) */
} fb_free;

static fb_free fb_run_free(mr_scene *sc, long n, double *wy_out) {
  mr_sim *s = tsim_create(sc, "ncp-pgs");
  fb_state x0 = fb_measure(s);
  fb_free r = {0};
  double dt = sc->timestep;
  for (long k = 1; k <= n; ++k) {
    tsim_steps(s, 1);
    fb_state x = fb_measure(s);
    double t = (double)k * dt;
    r.com = fmax(r.com, dist(x.com, mr_v3_madd(x0.com, t, x0.vcom)));
    r.dE = fmax(r.dE, fabs(x.E - x0.E) / x0.E);
    r.dLn = fmax(r.dLn, fabs(mr_v3_norm(x.L) - mr_v3_norm(x0.L)) / mr_v3_norm(x0.L));
    r.dL = fmax(r.dL, dist(x.L, x0.L) / mr_v3_norm(x0.L));
    r.scale = fmax(r.scale, mr_v3_norm(x.com) + t * mr_v3_norm(x0.vcom));
    if (wy_out) wy_out[k] = mr_sim_v(s)[4];
  }
  mr_sim_free(s);
  return r;
}

static void fb_print(const char *what, const fb_free *r) {
  if (verbose())
    printf("%s: com %.2e m (scale %.2f), dE %.2e, d|L| %.2e, dL %.2e\n", what, r->com, r->scale,
           r->dE, r->dLn, r->dL);
}

/* round-off over n steps: a few roundings of each quantity per step, 10 n ε relative */
static double fb_roundoff(long n) {
  return 10.0 * (double)n * DBL_EPSILON;
}

/* torque-free motion is exact: the centre of mass on its line, E, |L| and the world L constant,
 * up to round-off (relative to the positions' size for the line) */
static void fb_assert_exact(const char *what, const fb_free *r, long n) {
  double eps = fb_roundoff(n);
  fb_print(what, r);
  if (!(r->com <= eps * r->scale && r->dE <= eps && r->dLn <= eps && r->dL <= eps))
    fail_msg("%s: COM off its line by %.2e m (round-off %.2e), ΔE/E %.2e, Δ|L|/|L| %.2e, "
             "|ΔL|/|L| %.2e (round-off %.2e)",
             what, r->com, eps * r->scale, r->dE, r->dLn, r->dL, eps);
}

/* a spinning sphere, 1 kg, v = (2, 0, 0) m/s, ω = (0, 100, 0) rad/s, 1 s: ωΔt = 0.1 per step,
 * where an explicit ω × v term would multiply |v| by √(1 + (ωΔt)²) each step */
static void test_spinning_sphere(void **state) {
  mr_scene sc =
      fb_free_scene("[{type: sphere, radius: 0.1}]", FB_TILT, mr_v3(2, 0, 0), mr_v3(0, 100, 0), 1e-3);
  fb_free r = fb_run_free(&sc, 1000, NULL);
  fb_assert_exact("sphere", &r, 1000);
  mr_scene_free(&sc);
}

/* two geometries: the centre of mass is off the body origin, the inertia has products */
static void test_offset_body(void **state) {
  mr_scene sc = fb_free_scene("[{type: sphere, radius: 0.1}, {type: box, size: [0.2, 0.1, 0.05], "
                              "position: [0.3, 0.1, 0]}]",
                              FB_TILT, mr_v3(1, 0, 0.5), mr_v3(3, 20, -5), 1e-3);
  fb_free r = fb_run_free(&sc, 2000, NULL);
  fb_assert_exact("off-centre body", &r, 2000);
  mr_scene_free(&sc);
}

/* Euler's equations I ω̇ = −ω × I ω in the body frame, one RK4 step of h */
static mr_vec3 fb_euler_rhs(const mr_mat3 *I, mr_vec3 w) {
  mr_vec3 t = mr_v3_neg(mr_v3_cross(w, mr_m3_mulv(I, w)));
  return mr_v3(t.v[0] / I->m[0][0], t.v[1] / I->m[1][1], t.v[2] / I->m[2][2]);
}

static mr_vec3 fb_rk4(const mr_mat3 *I, mr_vec3 w, double h) {
  mr_vec3 k1 = fb_euler_rhs(I, w), k2 = fb_euler_rhs(I, mr_v3_madd(w, h / 2, k1));
  mr_vec3 k3 = fb_euler_rhs(I, mr_v3_madd(w, h / 2, k2)), k4 = fb_euler_rhs(I, mr_v3_madd(w, h, k3));
  mr_vec3 s = mr_v3_add(mr_v3_add(k1, k4), mr_v3_scale(mr_v3_add(k2, k3), 2.0));
  return mr_v3_madd(w, h / 6, s);
}

/* the first time ω_y turns negative, linearly interpolated in a series of step h */
static double fb_crossing(const double *wy, long n, double h) {
  for (long k = 1; k <= n; ++k)
    if (wy[k - 1] > 0.0 && wy[k] <= 0.0) return h * ((double)k - wy[k] / (wy[k] - wy[k - 1]));
  return INFINITY;
}

/* the same crossing by RK4 at step h/100 (error O(h⁴/10⁸), far below the step's) */
static double fb_crossing_rk4(const mr_mat3 *I, mr_vec3 w, double h, long n) {
  double prev = w.v[1], hs = h / 100.0;
  for (long k = 1; k <= 100 * n; ++k) {
    w = fb_rk4(I, w, hs);
    if (prev > 0.0 && w.v[1] <= 0.0) return hs * ((double)k - w.v[1] / (w.v[1] - prev));
    prev = w.v[1];
  }
  return INFINITY;
}

/* the brick about its intermediate axis y (I_x < I_y < I_z), ω₀ = (0.01, 1, 0) W: the axis flips
 * (ω_y changes sign) after about ln(200)/λ, λ = W √((I_y − I_x)(I_z − I_y)/(I_x I_z)) */
static double fb_flip(double W, double dt, long n, int check) {
  mr_vec3 w0 = mr_v3(0.01 * W, W, 0);
  mr_scene sc =
      fb_free_scene("[{type: box, size: [0.3, 0.2, 0.1]}]", "[0, 0, 0, 1]", mr_v3(1, 0.5, 0), w0, dt);
  double *wy = calloc((size_t)n + 1, sizeof *wy);
  assert_non_null(wy);
  wy[0] = W;
  fb_free r = fb_run_free(&sc, n, wy);
  char what[64];
  snprintf(what, sizeof what, "brick, W = %g rad/s, dt = %g s", W, dt);
  if (check) fb_assert_exact(what, &r, n);
  mr_mat3 I = sc.model->bodies[1].inertia.I;
  double t = fb_crossing(wy, n, dt), tref = fb_crossing_rk4(&I, w0, dt, n);
  free(wy);
  mr_scene_free(&sc);
  if (!isfinite(t) || !isfinite(tref)) fail_msg("%s: no flip (%g s, RK4 %g s)", what, t, tref);
  if (verbose()) printf("%s: flip at %.6f s, RK4 %.6f s\n", what, t, tref);
  return fabs(t - tref);
}

/* the intermediate-axis flip happens, at the time RK4 finds, with the error of a second-order
 * method: halving Δt divides it by 4 (3.5–4.5: the next term is O(Δt⁴)); exact E, |L| and L
 * meanwhile, slow (W = 10 rad/s, 4 s) and fast (W = 100 rad/s, WΔt = 0.1, 1 s) */
static void test_intermediate_axis(void **state) {
  for (int i = 0; i < 2; ++i) {
    double W = i ? 100.0 : 10.0;
    long n = i ? 1000 : 4000;
    double e1 = fb_flip(W, 1e-3, n, 1), e2 = fb_flip(W, 5e-4, 2 * n, 0);
    if (!(e1 / e2 >= 3.5 && e1 / e2 <= 4.5))
      fail_msg("W = %g: flip time error %.3g s at 1 ms, %.3g s at 0.5 ms: ratio %.2f, not 4", W, e1,
               e2, e1 / e2);
  }
}

/* ---- rolling without slipping on a plane ---- */

typedef struct {
  double sink;  /* max_k (z₀ − z_k) of the centre of mass (m) */
  double rise;  /* max_k (z_k − z₀) (m) */
  double speed; /* max_k ||v_k| − |v₀|| / |v₀| of the centre of mass */
  double side;  /* max_k |y_k| (m): off the rolling line */
  int nc;       /* most contacts in a step */
} fb_roll;

/* a sphere, capsule or cylinder (axis along y) of radius rad on the plane z = 0, rolling along
 * x at speed V (ω = V/rad about y), 1 kg, μ = 1, margin 1 mm, Baumgarte 0, for T */
static fb_roll fb_run_roll(const char *shape, double rad, double V, const char *solver, double T) {
  char text[1024], geom[128];
  if (!strcmp(shape, "sphere"))
    snprintf(geom, sizeof geom, "{type: sphere, radius: %.17g}", rad);
  else
    snprintf(geom, sizeof geom, "{type: %s, radius: %.17g, length: %.17g}", shape, rad, 2.0 * rad);
  snprintf(text, sizeof text,
           "timestep: 0.001\ncontact: {margin: 0.001, baumgarte: 0.0}\n"
           "bodies:\n"
           "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: 1.0}]}\n"
           "  - name: body\n    mass: 1.0\n    position: [0, 0, %.17g]\n"
           "    orientation: [-0.70710678118654752, 0, 0, 0.70710678118654752]\n"
           "    linear_velocity: [%.17g, 0, 0]\n    angular_velocity: [0, %.17g, 0]\n"
           "    geoms: [%s]\n",
           rad, V, V / rad, geom);
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, solver);
  fb_state x0 = fb_measure(s);
  fb_roll r = {0};
  long n = lround(T / sc.timestep);
  for (long k = 1; k <= n; ++k) {
    tsim_steps(s, 1);
    fb_state x = fb_measure(s);
    r.sink = fmax(r.sink, x0.com.v[2] - x.com.v[2]);
    r.rise = fmax(r.rise, x.com.v[2] - x0.com.v[2]);
    r.speed = fmax(r.speed, fabs(mr_v3_norm(x.vcom) - V) / V);
    r.side = fmax(r.side, fabs(x.com.v[1]));
    r.nc = mr_sim_last(s)->ncontacts > r.nc ? mr_sim_last(s)->ncontacts : r.nc;
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
  if (verbose())
    printf("%-8s r %.2f V %.1f %-12s: sink %.2e rise %.2e speed %.2e side %.2e\n", shape, rad, V,
           solver, r.sink, r.rise, r.speed, r.side);
  return r;
}

/* Rolling on a plane is exact for the step: the contact point's velocity is u + ω × (−r e_z),
 * zero tangentially and u_z normally, and the centre of mass moves by Δt u, so it stays at
 * height r and keeps its speed (no torque: gravity and the normal force pass through the centre).
 * What remains is the solver's tolerance: a force error ε_abs = 1e-6 N per contact on n_c
 * contacts changes the velocity by at most n_c ε Δt/m per step; the normal one is re-imposed each
 * step, so the height drifts by at most T n_c ε Δt/m (4e-9 m over 2 s on two contacts); the
 * tangential one accumulates, N n_c ε Δt/m in speed and n_c ε T²/(2m) sideways. Every radius
 * (0.02–0.2 m: a 2 cm ball at 2 m/s turns 0.1 rad per step) and speed (0.5, 2 m/s), with every
 * rigid NCP solver. */
static void fb_roll_all(const char *shape) {
  static const char *solvers[] = {"ncp-pgs", "ncp-admm", "ncp-stagproj"};
  static const double radii[] = {0.02, 0.05, 0.2}, speeds[] = {0.5, 2.0};
  double T = 2.0, dt = 1e-3, eps = 1e-6, m = 1.0, N = T / dt;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) {
        double V = speeds[k];
        fb_roll r = fb_run_roll(shape, radii[j], V, solvers[i], T);
        double h = T * r.nc * eps * dt / m, sp = N * r.nc * eps * dt / (m * V);
        double side = r.nc * eps * T * T / (2.0 * m);
        if (!(r.nc >= 1 && r.sink <= h && r.rise <= h && r.speed <= sp && r.side <= side))
          fail_msg("%s r = %g m, %g m/s, %s (%d contacts): sinks %.2e m, rises %.2e m (bound "
                   "%.1e), speed change %.2e (bound %.1e), sideways %.2e m (bound %.1e)",
                   shape, radii[j], V, solvers[i], r.nc, r.sink, r.rise, h, r.speed, sp, r.side,
                   side);
      }
}

static void test_rolling_sphere(void **state) {
  fb_roll_all("sphere");
}
static void test_rolling_capsule(void **state) {
  fb_roll_all("capsule");
}
static void test_rolling_cylinder(void **state) {
  fb_roll_all("cylinder");
}

/* ---- a brick dropped corner first ---- */

typedef struct {
  double flight;  /* max over the flight |E_k − (E₀ − k m g² Δt²/2)| / E₀ */
  long landing;   /* the first step with a contact */
  double gain;    /* max_k (E_k − E₀) after the landing (J) */
  double stepgain; /* max_k (E_k − E_{k−1}) after the landing (J) */
  double end;     /* E at the end − E₀ (J) */
} fb_drop;

static fb_drop fb_run_drop(const char *solver) {
  static const char text[] =
      "timestep: 0.001\ncontact: {margin: 0.001, baumgarte: 0.0}\n"
      "bodies:\n"
      "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: 0.8}]}\n"
      "  - name: brick\n    mass: 1.0\n    position: [0, 0, 0.8]\n"
      "    orientation: " FB_TILT "\n"
      "    linear_velocity: [0.5, 0, 0]\n    angular_velocity: [2, -3, 5]\n"
      "    geoms: [{type: box, size: [0.3, 0.2, 0.1], friction: 0.8}]\n";
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, solver);
  double E0 = mr_sim_energy(s), prev = E0, g = 9.81, dt = sc.timestep;
  fb_drop r = {0, 0, -INFINITY, -INFINITY, 0};
  for (long k = 1; k <= 1500; ++k) {
    tsim_steps(s, 1);
    double E = mr_sim_energy(s);
    if (!r.landing && mr_sim_last(s)->ncontacts > 0) r.landing = k;
    if (!r.landing)
      r.flight = fmax(r.flight, fabs(E - (E0 - (double)k * g * g * dt * dt / 2.0)) / E0);
    else {
      r.gain = fmax(r.gain, E - E0);
      r.stepgain = fmax(r.stepgain, E - prev);
    }
    prev = E;
  }
  r.end = prev - E0;
  mr_sim_free(s);
  mr_scene_free(&sc);
  if (verbose())
    printf("drop %-12s: flight %.2e, landing at step %ld, gain %.3e J, step gain %.3e J, end %.3f "
           "J\n",
           solver, r.flight, r.landing, r.gain, r.stepgain, r.end);
  return r;
}

/* In flight the brick (asymmetric, tumbling at 6 rad/s) keeps its rotational energy exactly and
 * semi-implicit Euler loses m g² Δt²/2 per step on the fall (ΔE = ½ m ((u − gΔt)² − u²) +
 * m g Δt (u − gΔt)): the energy follows E₀ − k m g² Δt²/2 to round-off. After the landing the
 * energy never exceeds E₀, and a step gains at most what the gap correction may inject: a
 * push-out of at most δ/Δt at a corner (docs/solvers.md, δ the assembly's band), at most
 * ½ m (δ/Δt)² (the effective mass of a corner is at most m), plus the work of the solver's force
 * error, n_c ε Δt v_max (n_c ≤ 4 corners, ε = 1e-6 N, v_max ≤ √(v₀² + 2 g z₀) + |ω| ℓ < 5 m/s,
 * ℓ the half diagonal, 0.19 m). */
static void test_corner_drop(void **state) {
  static const char *solvers[] = {"ncp-pgs", "ncp-admm", "ncp-stagproj"};
  double push = mr_assembly_settings_default().band / 1e-3;
  double step_tol = 0.5 * 1.0 * push * push + 4.0 * 1e-6 * 1e-3 * 5.0;
  for (int i = 0; i < 3; ++i) {
    fb_drop r = fb_run_drop(solvers[i]);
    if (!(r.landing > 0 && r.flight <= fb_roundoff(r.landing) && r.stepgain <= step_tol &&
          r.gain <= 0.0))
      fail_msg("%s: flight energy off its closed form by %.2e (round-off %.2e), landing at step "
               "%ld, largest step gain %.2e J (bound %.1e), max E − E₀ = %.2e J",
               solvers[i], r.flight, fb_roundoff(r.landing), r.landing, r.stepgain, step_tol,
               r.gain);
  }
}

/* ---- the split: free bodies on the chord, floating bases on Pinocchio's screw ---- */

/* max over n steps of |q_{k+1} − q_k ⊕ Δt v_{k+1}| (mr_integrate, Pinocchio's map) */
static double fb_screw_residual(mr_sim *s, long n) {
  const mr_model *m = mr_sim_model(s);
  double *q0 = calloc((size_t)m->nq, sizeof *q0), *qs = calloc((size_t)m->nq, sizeof *qs), r = 0.0;
  assert_true(q0 && qs);
  for (long k = 0; k < n; ++k) {
    memcpy(q0, mr_sim_q(s), (size_t)m->nq * sizeof *q0);
    tsim_steps(s, 1);
    mr_integrate(m, q0, mr_sim_v(s), 1e-3, qs);
    for (int i = 0; i < m->nq; ++i)
      r = fmax(r, fabs(qs[i] - mr_sim_q(s)[i]));
  }
  free(q0);
  free(qs);
  return r;
}

/* Solo-12 thrown spinning in zero gravity (its legs swing under the PD): a floating base keeps
 * q⁺ = q ⊕ Δt v⁺, bit for bit (the step calls the same map; docs/physics.md: the chord would lift feet pinned below a turning
 * base); the spinning sphere does not (its centre moves on the chord, off the screw by about
 * ½ Δt² |ω| |v| = 1e-4 m per step) */
static void test_floating_base_keeps_pinocchio(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\ngravity: [0, 0, 0]\n"
                           "robots:\n"
                           "  - {name: solo, urdf: ../robots/solo12/solo12.urdf, floating: true,\n"
                           "     position: [0, 0, 1], posture: standing, pd: {kp: 20.0, kd: 0.5},\n"
                           "     joints: {FL_KFE: -1.0},\n"
                           "     linear_velocity: [1, 0, 0.5], angular_velocity: [2, 5, -1]}\n",
                           "scenes");
  mr_sim *s = tsim_create(&sc, "ncp-pgs");
  double r = fb_screw_residual(s, 200);
  mr_sim_free(s);
  mr_scene_free(&sc);
  if (r != 0.0) fail_msg("Solo's base off q ⊕ Δt v⁺ by %.2e", r);
  sc = fb_free_scene("[{type: sphere, radius: 0.1}]", FB_TILT, mr_v3(2, 0, 0), mr_v3(0, 100, 0), 1e-3);
  s = tsim_create(&sc, "ncp-pgs");
  r = fb_screw_residual(s, 10);
  mr_sim_free(s);
  mr_scene_free(&sc);
  if (verbose()) printf("sphere off the screw by %.2e m per step\n", r);
  if (!(r >= 0.5 * 0.5e-6 * 100.0 * 2.0)) fail_msg("the sphere follows the screw (%.2e)", r);
}

/* ---- applied and contact impulses on spinning bodies ---- */

/* One body (mass 0.5 kg, inertia diag(I), no geometry) in zero gravity, spinning at w (world),
 * under a world torque τ(t) = τ₀ + τ₁ sin(2π ν t). Euler's law makes the world angular momentum
 * L(t) = L₀ + ∫τ exactly, for any body; the step applies the torque of its start time, so after
 * n steps L_n = L₀ + Δt Σ_{k<n} τ(k Δt), the sum written here. Returns the largest error over
 * its round-off: each step rounds L (the momentum and its rotation, a few operations on values
 * of at most |L₀| + Σ Δt |τ|), 10 n ε of that size. */
static double fb_torque_run(mr_vec3 I, mr_vec3 w, mr_vec3 tau0, mr_vec3 tau1, double nu,
                            double dt, long n) {
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: %.17g\ngravity: [0, 0, 0]\n"
           "bodies:\n  - {name: b, mass: 0.5, inertia: [%.17g, %.17g, %.17g], orientation: %s,\n"
           "     angular_velocity: [%.17g, %.17g, %.17g]}\n"
           "forces:\n  - {body: b, type: sine, torque_offset: [%.17g, %.17g, %.17g],\n"
           "     torque_amplitude: [%.17g, %.17g, %.17g], frequency: %.17g}\n",
           dt, I.v[0], I.v[1], I.v[2], FB_TILT, w.v[0], w.v[1], w.v[2], tau0.v[0], tau0.v[1],
           tau0.v[2], tau1.v[0], tau1.v[1], tau1.v[2], nu);
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_vec3 L = fb_measure(s).L;
  double size = mr_v3_norm(L), worst = 0.0;
  for (long k = 0; k < n; ++k) {
    mr_vec3 tau = mr_v3_madd(tau0, sin(2.0 * M_PI * nu * (double)k * dt), tau1);
    L = mr_v3_madd(L, dt, tau);
    size += dt * mr_v3_norm(tau);
    tsim_steps(s, 1);
    worst = fmax(worst, dist(fb_measure(s).L, L) / (fb_roundoff(k + 1) * size));
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
  return worst;
}

/* spins of 50–500 rad/s about tilted axes, symmetric, oblate, prolate, asymmetric and isotropic
 * bodies, constant and sine torques, Δt = 1 and 10 ms. A torque impulse added in the body frame
 * of the step's start and then turned with the body by ω Δt leaves L off by about
 * Δt |τ| |ω| Δt / 2 per step (4.6 % of |L| after 1 s at 150 rad/s and 1 ms). */
static void test_torque_on_spinning_body(void **state) {
  const mr_vec3 inertia[] = {{{3e-4, 3e-4, 5e-4}}, {{5e-4, 3e-4, 3e-4}}, {{1e-4, 2e-4, 3e-4}},
                             {{2e-4, 2e-4, 2e-4}}};
  const mr_vec3 spin[] = {{{0, 0, 150}}, {{30, -20, 500}}, {{50, 0, 0}}};
  const double steps[] = {1e-3, 1e-2};
  double worst = 0.0;
  for (size_t i = 0; i < sizeof inertia / sizeof inertia[0]; ++i)
    for (size_t w = 0; w < sizeof spin / sizeof spin[0]; ++w)
      for (size_t h = 0; h < 2; ++h) {
        long n = lround(1.0 / steps[h]);
        double e = fb_torque_run(inertia[i], spin[w], mr_v3(0.03, 0, 0), mr_v3_zero(), 0.0,
                                 steps[h], n);
        double e2 = fb_torque_run(inertia[i], spin[w], mr_v3(0.01, -0.02, 0.005),
                                  mr_v3(0, 0.02, 0.01), 3.0, steps[h], n);
        worst = fmax(worst, fmax(e, e2));
        if (!(e <= 1.0 && e2 <= 1.0))
          fail_msg("inertia %zu, spin %zu, dt %g: L off Euler's law by %.2f / %.2f times its "
                   "round-off",
                   i, w, steps[h], e, e2);
      }
  if (verbose()) printf("torques on spinning bodies: L within %.3f of its round-off\n", worst);
}

/* What a heavy-top run measured over 1 s. */
typedef struct {
  double tilt;  /* max |θ − 20°| (deg) */
  double dLz;   /* max |L_z − L_z0| (kg m²/s), the vertical angular momentum about the moment
                   point: the tip (pivot) or the centre of mass (floor) */
  double Lz;    /* |L_z0| */
  double drift; /* max horizontal distance of the centre of mass from its start (m) */
  double size;  /* max |centre of mass| (m) */
} fb_top;

/* The heavy symmetric top (m = 0.5 kg, I_c = diag(3, 3, 5)·1e-4 kg m², centre of mass l = 5 cm
 * from its tip, ω₃ = 150 rad/s) started in steady precession at θ = 20°: its tip pinned to the
 * world by a point constraint, or a 1 mm sphere on a frictionless floor. Steady precession at
 * rate φ̇ holds when m g l = φ̇ I₃ ω₃ − φ̇² I₁' cos θ, I₁' = I₁ + m l² about the pivot (the centre
 * of mass then moves on a circle) and I₁ on the frictionless floor (the centre of mass stays on
 * its vertical: no horizontal force acts); the slow root is taken. */
static fb_top fb_run_top(int floor, double dt) {
  const double m = 0.5, I1 = 3e-4, I3 = 5e-4, l = 0.05, w3 = 150.0, g = 9.81, rtip = 1e-3;
  const double th = 20.0 * M_PI / 180.0, c = cos(th), I1p = floor ? I1 : I1 + m * l * l;
  const double a = I1p * c, b = I3 * w3, phid = (b - sqrt(b * b - 4.0 * a * m * g * l)) / (2 * a);
  const mr_vec3 e3 = mr_v3(0, -sin(th), c); /* the symmetry axis, Rx(θ) z */
  const mr_vec3 w = mr_v3_madd(mr_v3(0, 0, phid), w3 - phid * c, e3);
  const mr_vec3 com = mr_v3(0, 0, floor ? l * c + rtip : 0.3), tip = mr_v3_madd(com, -l, e3);
  const mr_vec3 v = floor ? mr_v3_zero() : mr_v3_cross(w, mr_v3_sub(com, tip));
  char text[1536];
  int k = snprintf(text, sizeof text,
                   "timestep: %.17g\n"
                   "bodies:\n  - {name: top, mass: %g, inertia: [%g, %g, %g], "
                   "position: [%.17g, %.17g, %.17g], orientation: [%.17g, 0, 0, %.17g],\n"
                   "     linear_velocity: [%.17g, %.17g, %.17g], "
                   "angular_velocity: [%.17g, %.17g, %.17g]",
                   dt, m, I1, I1, I3, com.v[0], com.v[1], com.v[2], sin(th / 2), cos(th / 2),
                   v.v[0], v.v[1], v.v[2], w.v[0], w.v[1], w.v[2]);
  if (floor)
    snprintf(text + k, sizeof text - (size_t)k,
             ",\n     geoms: [{type: sphere, radius: %g, position: [0, 0, %g], friction: 0}]}\n"
             "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: 0}]}\n",
             rtip, -l);
  else
    snprintf(text + k, sizeof text - (size_t)k,
             "}\nconstraints:\n  - {type: point, body1: top, point: [%.17g, %.17g, %.17g]}\n",
             tip.v[0], tip.v[1], tip.v[2]);
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  fb_top r = {0};
  double Lz0 = 0.0;
  for (long i = 0, n = lround(1.0 / dt); i <= n; ++i) {
    if (i) tsim_steps(s, 1);
    fb_state x = fb_measure(s);
    const double *q = mr_sim_q(s);
    mr_mat3 R = mr_quat_to_m3((mr_quat){q[3], q[4], q[5], q[6]});
    mr_vec3 arm = floor ? mr_v3_zero() : mr_v3_sub(x.com, tip);
    double Lz = x.L.v[2] + m * mr_v3_cross(arm, x.vcom).v[2];
    if (i == 0) Lz0 = Lz;
    r.tilt = fmax(r.tilt, fabs(acos(R.m[2][2]) * 180.0 / M_PI - 20.0));
    r.dLz = fmax(r.dLz, fabs(Lz - Lz0));
    r.drift = fmax(r.drift, hypot(x.com.v[0] - com.v[0], x.com.v[1] - com.v[1]));
    r.size = fmax(r.size, mr_v3_norm(x.com));
  }
  r.Lz = fabs(Lz0);
  mr_sim_free(s);
  mr_scene_free(&sc);
  return r;
}

/* On the frictionless floor every force is vertical: the horizontal position of the centre of
 * mass and the vertical angular momentum about it are conserved, exactly up to round-off
 * (10 n ε of |L_z0| and of the positions). The tilt stays at 20° up to the step's first-order
 * error: 0.1° at 1 ms (a contact impulse turned with the body makes it 7.7°), and halving Δt
 * halves it (a first-order method converging to the steady precession: the ratio 2 ± 20 %). */
static void test_heavy_top_floor(void **state) {
  fb_top r = fb_run_top(1, 1e-3), h = fb_run_top(1, 5e-4);
  if (verbose())
    printf("top on a frictionless floor: tilt %.4f° (%.4f° at Δt/2), |ΔL_z| %.2e of %.2e, "
           "drift %.2e m\n",
           r.tilt, h.tilt, r.dLz, r.Lz, r.drift);
  if (!(r.dLz <= fb_roundoff(1000) * r.Lz && r.drift <= fb_roundoff(1000) * r.size))
    fail_msg("the frictionless floor changed L_z by %.2e (round-off %.2e) or moved the centre of "
             "mass by %.2e m",
             r.dLz, fb_roundoff(1000) * r.Lz, r.drift);
  if (!(r.tilt < 0.1 && fabs(r.tilt / h.tilt - 2.0) < 0.4))
    fail_msg("tilt off 20° by %.4f° (%.4f° at Δt/2)", r.tilt, h.tilt);
}

/* On a pivot: gravity's moment about the tip is horizontal and the pivot's force acts at the
 * tip, so L_z about the tip is conserved up to the point constraint's drift (the anchors apart
 * by at most ½ Δt² |a| between corrections, about 1e-5 of the 5 cm arm: L_z within 1e-5 |L_z|);
 * the tilt as on the floor (a constraint impulse turned with the body makes it 9.4°). */
static void test_heavy_top_pivot(void **state) {
  fb_top r = fb_run_top(0, 1e-3), h = fb_run_top(0, 5e-4);
  if (verbose())
    printf("top on a pivot: tilt %.4f° (%.4f° at Δt/2), |ΔL_z| %.2e of %.2e\n", r.tilt, h.tilt,
           r.dLz, r.Lz);
  if (!(r.dLz <= 1e-5 * r.Lz)) fail_msg("L_z about the pivot changed by %.2e", r.dLz);
  if (!(r.tilt < 0.1 && fabs(r.tilt / h.tilt - 2.0) < 0.4))
    fail_msg("tilt off 20° by %.4f° (%.4f° at Δt/2)", r.tilt, h.tilt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spinning_sphere),
      cmocka_unit_test(test_offset_body),
      cmocka_unit_test(test_intermediate_axis),
      cmocka_unit_test(test_rolling_sphere),
      cmocka_unit_test(test_rolling_capsule),
      cmocka_unit_test(test_rolling_cylinder),
      cmocka_unit_test(test_corner_drop),
      cmocka_unit_test(test_floating_base_keeps_pinocchio),
      cmocka_unit_test(test_torque_on_spinning_body),
      cmocka_unit_test(test_heavy_top_floor),
      cmocka_unit_test(test_heavy_top_pivot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
