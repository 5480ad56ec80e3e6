/* moreau rbd: load a URDF and print its rigid-body dynamics at one state: the joint table, the
 * mass matrix M(q) (CRBA), the nonlinear effects b(q, v) and gravity g(q) (RNEA), the forward
 * dynamics ddq = M⁻¹ (τ − b) (ABA), the inverse dynamics M a + b (RNEA), energies, mass and
 * centre of mass. With --derivatives, also the analytical derivatives of the inverse dynamics
 * (∂τ/∂q, ∂τ/∂v at a) and of the forward dynamics (∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ at τ), q in the tangent
 * space (moreau/derivatives.h). Human-readable, or one JSON object with --json. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/json.h"
#include "moreau/derivatives.h"
#include "moreau/dynamics.h"
#include "moreau/mjcf.h"
#include "moreau/urdf.h"

#define RBD_MAX_ROOTS 32

static const char usage_text[] =
    "usage: moreau rbd MODEL.urdf|MODEL.xml [options]\n"
    "\n"
    "Load a URDF or MJCF model (an MJCF file's kinematic tree: docs/mjcf.md) and print\n"
    "its rigid-body dynamics at one state (q, v):\n"
    "sizes, joints, the mass matrix M(q), the nonlinear effects b(q, v), the gravity\n"
    "torques g(q), the forward dynamics ddq = M^-1 (tau - b) (ABA), the inverse dynamics\n"
    "tau_id = M a + b (RNEA), kinetic and potential energy, total mass and centre of mass.\n"
    "\n"
    "options:\n"
    "  --floating           add a free-flyer joint (root_joint) at the root link\n"
    "  --inertia-fix        replace an inertia that is not physical (indefinite, or\n"
    "                       breaking A + B >= C) by the nearest physical one, with a warning\n"
    "  --lock JOINT         treat a moving joint as fixed at q = 0 (repeatable)\n"
    "  --lock-massless      treat as fixed every moving joint that carries no inertia\n"
    "  --package-root DIR   search DIR for package://NAME/... mesh paths (repeatable;\n"
    "                       then MOREAU_PACKAGE_PATH, colon-separated)\n"
    "  --q LIST             configuration, nq comma-separated numbers (default: neutral,\n"
    "                       an MJCF model's qpos0;\n"
    "                       free-flyer: x,y,z,qx,qy,qz,qw, quaternions are normalised)\n"
    "  --v LIST             velocity, nv numbers (default: zero)\n"
    "  --tau LIST           joint torques for the forward dynamics, nv numbers (default: zero)\n"
    "  --a LIST             acceleration for the inverse dynamics, nv numbers (default: zero)\n"
    "  --derivatives        add the derivatives of tau_id (dtau_dq, dtau_dv, at --a) and of\n"
    "                       ddq (dddq_dq, dddq_dv, dddq_dtau, at --tau), nv x nv matrices;\n"
    "                       derivatives in q are along the tangent space (q + dq = q (+) dq)\n"
    "  --no-mass-matrix     leave M out: it is not computed (a chain of n links has an\n"
    "                       n x n M, O(n^2) to compute and print; every other result\n"
    "                       costs O(n))\n"
    "  --json               print one JSON object instead of text\n"
    "  -h, --help           print this help\n"
    "\n"
    "exit status: 0 success, 1 a non-finite result, 2 bad usage or a model that does not load\n";

typedef struct {
  const char *model;
  int floating, json, inertia_fix, lock_massless, derivatives, no_mass_matrix;
  const char *roots[RBD_MAX_ROOTS];
  int nroots;
  const char *locks[RBD_MAX_ROOTS];
  int nlocks;
  const char *q, *v, *tau, *a; /* raw lists, NULL for the defaults */
} rbd_args;

/* the state and every result, owned here */
typedef struct {
  double *q, *v, *tau, *a;
  double *M, *nle, *grav, *ddq, *tau_id;
  mr_derivatives *dd; /* --derivatives: all five matrices, NULL without the option */
  double ke, pe, mass;
  mr_vec3 com;
} rbd_state;

static int usage_error(const char *fmt, const char *what) {
  fprintf(stderr, "moreau rbd: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, "\n(see 'moreau rbd --help')\n");
  return 2;
}

/* the value after option argv[*i] into *out */
static int take_value(int argc, char **argv, int *i, const char **out) {
  if (*i + 1 >= argc) return usage_error("option %s needs a value", argv[*i]);
  *out = argv[++*i];
  return 0;
}

/* one option at argv[*i] (advancing *i past its value); 2 on bad usage */
static int parse_option(int argc, char **argv, int *i, rbd_args *a) {
  const char *opt = argv[*i];
  static const char *const lists[] = {"--q", "--v", "--tau", "--a"};
  const char **dst[] = {&a->q, &a->v, &a->tau, &a->a};
  for (int k = 0; k < 4; ++k)
    if (strcmp(opt, lists[k]) == 0) return take_value(argc, argv, i, dst[k]);
  if (strcmp(opt, "--floating") == 0)
    a->floating = 1;
  else if (strcmp(opt, "--inertia-fix") == 0)
    a->inertia_fix = 1;
  else if (strcmp(opt, "--lock-massless") == 0)
    a->lock_massless = 1;
  else if (strcmp(opt, "--lock") == 0) {
    if (a->nlocks == RBD_MAX_ROOTS) return usage_error("more than %s --lock options", "32");
    return take_value(argc, argv, i, &a->locks[a->nlocks++]);
  }
  else if (strcmp(opt, "--json") == 0)
    a->json = 1;
  else if (strcmp(opt, "--derivatives") == 0)
    a->derivatives = 1;
  else if (strcmp(opt, "--no-mass-matrix") == 0)
    a->no_mass_matrix = 1;
  else if (strcmp(opt, "--package-root") == 0) {
    if (a->nroots == RBD_MAX_ROOTS) return usage_error("more than %s package roots", "32");
    return take_value(argc, argv, i, &a->roots[a->nroots++]);
  } else
    return usage_error("unknown option '%s'", opt);
  return 0;
}

/* the command line; 2 on bad usage, -1 for --help */
static int parse_args(int argc, char **argv, rbd_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; ++i) {
    const char *s = argv[i];
    if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) return -1;
    if (s[0] == '-' && s[1]) {
      if (parse_option(argc, argv, &i, a)) return 2;
    } else if (a->model)
      return usage_error("more than one model given ('%s')", s);
    else
      a->model = s;
  }
  if (!a->model) return usage_error("%s", "no MODEL.urdf given");
  return 0;
}

/* n comma-separated finite numbers from text into out; 2 with a message otherwise */
static int parse_list(const char *opt, const char *text, double *out, int n, const char *size) {
  int k = 0;
  const char *s = text;
  for (;;) {
    size_t len = strcspn(s, ",");
    char item[128];
    snprintf(item, sizeof item, "%.*s", (int)(len < 127 ? len : 127), s);
    char *end;
    errno = 0;
    double x = strtod(item, &end);
    while (*end == ' ')
      ++end;
    if (end == item || *end || !isfinite(x)) {
      fprintf(stderr, "moreau rbd: %s: entry %d '%s' is not a finite number\n", opt, k + 1, item);
      return 2;
    }
    if (k < n) out[k] = x;
    ++k;
    if (!s[len]) break;
    s += len + 1;
  }
  if (k != n) {
    fprintf(stderr, "moreau rbd: %s: expected %d values (%s), got %d\n", opt, n, size, k);
    return 2;
  }
  return 0;
}

/* normalise the quaternions of q (free-flyer and spherical joints); 2 for a zero one */
static int normalize_quaternions(const mr_model *m, double *q) {
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    if (j->type != MR_JOINT_FREE && j->type != MR_JOINT_SPHERICAL) continue;
    double *x = q + j->idx_q + (j->type == MR_JOINT_FREE ? 3 : 0);
    double n = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]);
    if (!(n > 1e-12)) {
      fprintf(stderr, "moreau rbd: --q: the quaternion of joint '%s' is zero\n", j->name);
      return 2;
    }
    for (int k = 0; k < 4; ++k)
      x[k] /= n;
  }
  return 0;
}

static void state_free(rbd_state *s) {
  double *arrays[] = {s->q, s->v, s->tau, s->a, s->M, s->nle, s->grav, s->ddq, s->tau_id};
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k)
    free(arrays[k]);
  mr_derivatives_free(s->dd);
}

static int state_alloc(rbd_state *s, int nq, int nv, int with_M) {
  memset(s, 0, sizeof *s);
  size_t q = (size_t)nq + 1, v = (size_t)nv + 1;
  s->q = calloc(q, sizeof(double));
  double **vecs[] = {&s->v, &s->tau, &s->a, &s->nle, &s->grav, &s->ddq, &s->tau_id};
  for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k)
    *vecs[k] = calloc(v, sizeof(double));
  s->M = with_M ? calloc(v * v, sizeof(double)) : NULL;
  int ok = s->q && (s->M || !with_M);
  for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k)
    ok = ok && *vecs[k];
  return ok ? 0 : -1;
}

static void copy(double *dst, const double *src, int n);

/* q, v, tau, a from the options (defaults: q0 when given, else neutral; zeros) */
static int read_state(const mr_model *m, const rbd_args *a, const double *q0, rbd_state *s) {
  mr_neutral(m, s->q);
  if (q0) copy(s->q, q0, m->nq);
  if (a->q && parse_list("--q", a->q, s->q, m->nq, "nq")) return 2;
  if (a->v && parse_list("--v", a->v, s->v, m->nv, "nv")) return 2;
  if (a->tau && parse_list("--tau", a->tau, s->tau, m->nv, "nv")) return 2;
  if (a->a && parse_list("--a", a->a, s->a, m->nv, "nv")) return 2;
  return normalize_quaternions(m, s->q);
}

static void copy(double *dst, const double *src, int n) {
  memcpy(dst, src, (size_t)n * sizeof *dst);
}

/* the derivatives: of the forward dynamics at τ first (it leaves ∂τ at a = q̈), then of the
 * inverse dynamics at a; 1 with a message when M(q) is not positive definite */
static int compute_derivatives(const mr_model *m, mr_data *d, rbd_state *s) {
  mr_error e = {MR_OK, ""};
  if (mr_aba_derivatives(m, d, s->dd, s->q, s->v, s->tau, &e) != MR_OK) {
    fprintf(stderr, "moreau rbd: --derivatives: %s\n", e.msg);
    return 1;
  }
  mr_rnea_derivatives(m, d, s->dd, s->q, s->v, s->a);
  return 0;
}

/* every result at (q, v) */
static void compute(const mr_model *m, mr_data *d, rbd_state *s) {
  int nv = m->nv;
  if (s->M) {
    mr_crba(m, d, s->q);
    mr_mass_dense(d, s->M);
  }
  copy(s->nle, mr_nonlinear_effects(m, d, s->q, s->v), nv);
  copy(s->grav, mr_generalized_gravity(m, d, s->q), nv);
  copy(s->ddq, mr_aba(m, d, s->q, s->v, s->tau), nv);
  copy(s->tau_id, mr_rnea(m, d, s->q, s->v, s->a), nv);
  s->ke = mr_kinetic_energy(m, d, s->q, s->v);
  s->pe = mr_potential_energy(m, d, s->q);
  s->mass = mr_model_total_mass(m);
  s->com = mr_center_of_mass(m, d, s->q);
}

/* the derivative matrices in output order, with their names */
enum { NDERIV = 5 };
static const char *const deriv_names[NDERIV] = {"dtau_dq", "dtau_dv", "dddq_dq", "dddq_dv",
                                                "dddq_dtau"};
static const double *deriv_matrix(const mr_derivatives *dd, int k) {
  const double *mats[NDERIV] = {dd->dtau_dq, dd->dtau_dv, dd->dddq_dq, dd->dddq_dv,
                                dd->dddq_dtau};
  return mats[k];
}

/* 1 when every result is finite */
static int all_finite(const mr_model *m, const rbd_state *s) {
  int nv = m->nv, ok = isfinite(s->ke) && isfinite(s->pe);
  for (int i = 0; i < 3; ++i)
    ok = ok && isfinite(s->com.v[i]);
  for (int i = 0; s->M && i < nv * nv; ++i)
    ok = ok && isfinite(s->M[i]);
  for (int i = 0; i < nv; ++i)
    ok = ok && isfinite(s->nle[i]) && isfinite(s->grav[i]) && isfinite(s->ddq[i]) &&
         isfinite(s->tau_id[i]);
  for (int k = 0; s->dd && k < NDERIV; ++k)
    for (int i = 0; i < nv * nv; ++i)
      ok = ok && isfinite(deriv_matrix(s->dd, k)[i]);
  return ok;
}

/* ---- output ---- */

static void json_key(FILE *f, const char *key) {
  fputs(",\n  ", f);
  mr_json_write_string(f, key);
  fputs(": ", f);
}

static void json_joints(FILE *f, const mr_model *m) {
  fputc('[', f);
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    fputs(i > 1 ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    mr_json_write_string(f, j->name);
    fputs(", \"type\": ", f);
    mr_json_write_string(f, mr_joint_type_name(j->type));
    fprintf(f, ", \"idx_q\": %d, \"idx_v\": %d, \"nq\": %d, \"nv\": %d}", j->idx_q, j->idx_v, j->nq,
            j->nv);
  }
  fputs(m->nbodies > 1 ? "\n  ]" : "]", f);
}

static void print_json(FILE *f, const mr_model *m, const rbd_state *s) {
  int nq = m->nq, nv = m->nv;
  fputs("{\n  \"name\": ", f);
  mr_json_write_string(f, m->name);
  fprintf(f, ",\n  \"nq\": %d,\n  \"nv\": %d", nq, nv);
  json_key(f, "joints"), json_joints(f, m);
  const struct {
    const char *key;
    const double *x;
    int n;
  } vecs[] = {{"q", s->q, nq},     {"v", s->v, nv},          {"tau", s->tau, nv},
              {"a", s->a, nv},     {"nle", s->nle, nv},      {"gravity", s->grav, nv},
              {"ddq", s->ddq, nv}, {"tau_id", s->tau_id, nv}};
  for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k) {
    json_key(f, vecs[k].key);
    mr_json_write_vector(f, vecs[k].x, vecs[k].n);
    if (k == 3 && s->M) json_key(f, "M"), mr_json_write_matrix(f, s->M, nv, nv);
  }
  json_key(f, "kinetic_energy"), mr_json_write_number(f, s->ke);
  json_key(f, "potential_energy"), mr_json_write_number(f, s->pe);
  json_key(f, "mass"), mr_json_write_number(f, s->mass);
  json_key(f, "com"), mr_json_write_vector(f, s->com.v, 3);
  for (int k = 0; s->dd && k < NDERIV; ++k)
    json_key(f, deriv_names[k]), mr_json_write_matrix(f, deriv_matrix(s->dd, k), nv, nv);
  fputs("\n}\n", f);
}

static void print_vector(FILE *f, const char *name, const double *x, int n) {
  fprintf(f, "%-8s =", name);
  for (int i = 0; i < n; ++i)
    fprintf(f, " %.6g", x[i]);
  fputc('\n', f);
}

static void print_matrix(FILE *f, const char *name, const double *A, int nv) {
  fprintf(f, "\n%s (%d x %d):\n", name, nv, nv);
  for (int i = 0; i < nv; ++i) {
    for (int j = 0; j < nv; ++j)
      fprintf(f, " %11.4e", A[i * nv + j]);
    fputc('\n', f);
  }
}

static void print_text(FILE *f, const mr_model *m, const rbd_state *s) {
  int nv = m->nv;
  fprintf(f,
          "model %s: nq = %d, nv = %d, bodies = %d (with the world), frames = %d, "
          "geometries = %d\n",
          m->name, m->nq, nv, m->nbodies, m->nframes, m->ngeoms);
  fprintf(f, "\n%-4s %-32s %-10s %5s %5s %3s %3s\n", "body", "joint", "type", "idx_q", "idx_v",
          "nq", "nv");
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    fprintf(f, "%-4d %-32s %-10s %5d %5d %3d %3d\n", i, j->name, mr_joint_type_name(j->type),
            j->idx_q, j->idx_v, j->nq, j->nv);
  }
  fputc('\n', f);
  print_vector(f, "q", s->q, m->nq);
  print_vector(f, "v", s->v, nv);
  print_vector(f, "tau", s->tau, nv);
  print_vector(f, "a", s->a, nv);
  if (s->M) print_matrix(f, "M", s->M, nv);
  fputc('\n', f);
  print_vector(f, "nle", s->nle, nv);
  print_vector(f, "gravity", s->grav, nv);
  print_vector(f, "ddq", s->ddq, nv);
  print_vector(f, "tau_id", s->tau_id, nv);
  fprintf(f, "\nkinetic energy   = %.9g J\npotential energy = %.9g J\n", s->ke, s->pe);
  fprintf(f, "mass             = %.9g kg\ncom              = %.9g %.9g %.9g m\n", s->mass,
          s->com.v[0], s->com.v[1], s->com.v[2]);
  for (int k = 0; s->dd && k < NDERIV; ++k)
    print_matrix(f, deriv_names[k], deriv_matrix(s->dd, k), nv);
}

/* ---- the command ---- */

static void print_warning(void *user, const char *msg) {
  fprintf(stderr, "moreau rbd: warning: %s\n", msg);
}

/* an MJCF model's kinematic tree (mjcf.h, tree_only) and its qpos0 */
static int load_mjcf(const rbd_args *a, mr_model **m, double **q0) {
  if (a->floating || a->inertia_fix || a->lock_massless || a->nlocks || a->nroots) {
    fprintf(stderr, "moreau rbd: --floating, --inertia-fix, --lock, --lock-massless and "
                    "--package-root apply to URDF models, not to the MJCF file '%s'\n",
            a->model);
    return 2;
  }
  mr_mjcf_options o = mr_mjcf_options_default();
  o.tree_only = 1;
  o.warn = print_warning;
  mr_scene sc;
  mr_error e = {MR_OK, ""};
  if (mr_mjcf_load(a->model, &o, &sc, &e)) {
    fprintf(stderr, "moreau rbd: %s\n", e.msg);
    return 2;
  }
  *m = sc.model, *q0 = sc.q0;
  sc.model = NULL, sc.q0 = NULL;
  mr_scene_free(&sc);
  return 0;
}

static int load(const rbd_args *a, mr_model **m) {
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = a->floating;
  o.inertia_fix = a->inertia_fix;
  o.lock_massless = a->lock_massless;
  o.lock_joints = a->locks;
  o.nlock_joints = a->nlocks;
  o.warn = print_warning;
  o.package_roots = a->roots;
  o.npackage_roots = a->nroots;
  mr_error e = {MR_OK, ""};
  if (mr_urdf_load(a->model, &o, m, &e) == MR_OK) return 0;
  fprintf(stderr, "moreau rbd: %s\n", e.msg);
  return 2;
}

/* the state, the results and their output, for a loaded model */
static int run(const mr_model *m, const double *q0, const rbd_args *a) {
  rbd_state s;
  mr_data *d = NULL;
  int rc = 0;
  if (state_alloc(&s, m->nq, m->nv, !a->no_mass_matrix) || !(d = mr_data_create(m))) {
    fprintf(stderr, "moreau rbd: out of memory\n");
    rc = 1;
  }
  if (!rc && a->derivatives && !(s.dd = mr_derivatives_create(m))) {
    fprintf(stderr, "moreau rbd: out of memory\n");
    rc = 1;
  }
  if (!rc) rc = read_state(m, a, q0, &s);
  if (!rc && s.dd) rc = compute_derivatives(m, d, &s);
  if (!rc) {
    compute(m, d, &s);
    if (a->json)
      print_json(stdout, m, &s);
    else
      print_text(stdout, m, &s);
    if (!all_finite(m, &s)) {
      fprintf(stderr, "moreau rbd: a result is not finite (NaN or infinity)\n");
      rc = 1;
    }
  }
  mr_data_free(d);
  state_free(&s);
  return rc;
}

int mr_cmd_rbd(int argc, char **argv) {
  rbd_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc < 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (rc) return rc;
  mr_model *m = NULL;
  double *q0 = NULL;
  rc = mr_mjcf_is_mjcf(a.model) ? load_mjcf(&a, &m, &q0) : load(&a, &m);
  if (rc) return rc;
  rc = run(m, q0, &a);
  mr_model_free(m);
  free(q0);
  return rc;
}
