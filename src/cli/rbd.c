/* moreau rbd: load a URDF and print its rigid-body dynamics at one state: the joint table, the
 * mass matrix M(q) (CRBA), the nonlinear effects b(q, v) and gravity g(q) (RNEA), the forward
 * dynamics ddq = M⁻¹ (τ − b) (ABA), the inverse dynamics M a + b (RNEA), energies, mass and
 * centre of mass. With --derivatives, also the analytical derivatives of the inverse dynamics
 * (∂τ/∂q, ∂τ/∂v at a) and of the forward dynamics (∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ at τ), q in the tangent
 * space (moreau/dynamics.h). With --frame NAME (a body or an operational frame), the frame's
 * world placement and its 6 × nv Jacobians in the world, local and local-world-aligned
 * references (moreau/dynamics.h). Human-readable, or one JSON object with --json. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/json.h"
#include "moreau/dynamics.h"
#include "moreau/dynamics.h"
#include "moreau/mjcf.h"
#include "moreau/scene.h"
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
    "  --collision          also read the collision geometry, mesh files included (the\n"
    "                       dynamics needs none of it: without this option no mesh file\n"
    "                       is opened and package:// paths need not resolve)\n"
    "  --package-root DIR   with --collision: search DIR for package://NAME/... mesh paths\n"
    "                       (repeatable; then the model's ancestor directories, then\n"
    "                       MOREAU_PACKAGE_PATH, colon-separated)\n"
    "  --q LIST             configuration, nq comma-separated numbers (default: neutral,\n"
    "                       an MJCF model's qpos0;\n"
    "                       free-flyer: x,y,z,qx,qy,qz,qw, quaternions are normalised)\n"
    "  --v LIST             velocity, nv numbers (default: zero)\n"
    "  --tau LIST           joint torques for the forward dynamics, nv numbers (default: zero)\n"
    "  --a LIST             acceleration for the inverse dynamics, nv numbers (default: zero)\n"
    "  --derivatives        add the derivatives of tau_id (dtau_dq, dtau_dv, at --a) and of\n"
    "                       ddq (dddq_dq, dddq_dv, dddq_dtau, at --tau), nv x nv matrices;\n"
    "                       derivatives in q are along the tangent space (q + dq = q (+) dq)\n"
    "  --frame NAME         also print the world placement of a body or operational frame\n"
    "                       (a link merged by a fixed joint: a foot, a sensor) and its\n"
    "                       6 x nv Jacobians (rows linear then angular) at the world origin,\n"
    "                       in the frame (local) and at the frame with world axes (repeatable)\n"
    "  --no-mass-matrix     leave M out: it is not computed (a chain of n links has an\n"
    "                       n x n M, O(n^2) to compute and print; every other result\n"
    "                       costs O(n))\n"
    "  --json               print one JSON object instead of text\n"
    "  -h, --help           print this help\n"
    "\n"
    "exit status: 0 success, 1 a non-finite result, 2 bad usage or a model that does not load\n";

typedef struct {
  const char *model;
  int floating, json, inertia_fix, lock_massless, derivatives, no_mass_matrix, collision;
  const char *roots[RBD_MAX_ROOTS];
  int nroots;
  const char *locks[RBD_MAX_ROOTS];
  int nlocks;
  const char *frames[RBD_MAX_ROOTS]; /* --frame names */
  int nframes;
  const char *q, *v, *tau, *a; /* raw lists, NULL for the defaults */
} rbd_args;

/* the state and every result, owned here */
typedef struct {
  double *q, *v, *tau, *a;
  double *M, *nle, *grav, *ddq, *tau_id;
  mr_derivatives *dd; /* --derivatives: all five matrices, NULL without the option */
  int *frame;         /* --frame: the frames' indices (nframes) */
  double *frame_X;    /* their world placements, R row-major then p (12 per frame) */
  double *frame_J;    /* their Jacobians: world, local, local-world-aligned (3 × 6 × nv each) */
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
  } else if (strcmp(opt, "--frame") == 0) {
    if (a->nframes == RBD_MAX_ROOTS) return usage_error("more than %s --frame options", "32");
    return take_value(argc, argv, i, &a->frames[a->nframes++]);
  } else if (strcmp(opt, "--json") == 0)
    a->json = 1;
  else if (strcmp(opt, "--collision") == 0)
    a->collision = 1;
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
  free(s->frame), free(s->frame_X), free(s->frame_J);
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

/* --frame: each name's frame index and the buffers of its placement and Jacobians; 2 with a
 * message for a name that is not a frame of the model (bodies are frames too) */
static int find_frames(const mr_model *m, const rbd_args *a, rbd_state *s) {
  int n = a->nframes, nv = m->nv;
  if (!n) return 0;
  s->frame = calloc((size_t)n, sizeof *s->frame);
  s->frame_X = calloc((size_t)n * 12, sizeof(double));
  s->frame_J = calloc((size_t)n * 18 * (size_t)(nv + 1), sizeof(double));
  if (!s->frame || !s->frame_X || !s->frame_J) {
    fprintf(stderr, "moreau rbd: out of memory\n");
    return 1;
  }
  for (int k = 0; k < n; ++k) {
    s->frame[k] = mr_model_frame_index(m, a->frames[k]);
    if (s->frame[k] >= 0) continue;
    /* the closest name, for the message */
    int best = -1, dist = 1 << 30;
    for (int f = 0; f < m->nframes; ++f) {
      int e = mr_edit_distance(a->frames[k], m->frames[f].name);
      if (e < dist) dist = e, best = f;
    }
    fprintf(stderr, "moreau rbd: --frame: no body or frame '%s' in the model%s%s%s\n", a->frames[k],
            best >= 0 ? " (closest: '" : "", best >= 0 ? m->frames[best].name : "",
            best >= 0 ? "')" : "");
    return 2;
  }
  return 0;
}

/* the placements and Jacobians of the --frame frames at q */
static void compute_frames(const mr_model *m, mr_data *d, const rbd_args *a, rbd_state *s) {
  static const mr_reference refs[3] = {MR_WORLD, MR_LOCAL, MR_LOCAL_WORLD_ALIGNED};
  if (!a->nframes) return;
  mr_forward_kinematics(m, d, s->q, NULL, NULL);
  mr_update_frames(m, d);
  for (int k = 0; k < a->nframes; ++k) {
    const mr_se3 *X = &d->oMf[s->frame[k]];
    double *x = s->frame_X + 12 * k;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        x[3 * r + c] = X->R.m[r][c];
    memcpy(x + 9, X->p.v, 3 * sizeof(double));
    for (int r = 0; r < 3; ++r)
      mr_frame_jacobian(m, d, s->frame[k], refs[r], s->frame_J + (size_t)(3 * k + r) * 6 * m->nv);
  }
}

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
  const double *mats[NDERIV] = {dd->dtau_dq, dd->dtau_dv, dd->dddq_dq, dd->dddq_dv, dd->dddq_dtau};
  return mats[k];
}

/* 1 when every result is finite */
static int all_finite(const mr_model *m, const rbd_args *a, const rbd_state *s) {
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
  for (int i = 0; i < a->nframes * 12; ++i)
    ok = ok && isfinite(s->frame_X[i]);
  for (int i = 0; i < a->nframes * 18 * nv; ++i)
    ok = ok && isfinite(s->frame_J[i]);
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

/* the unit quaternion (x, y, z, w), w >= 0, of frame k's rotation */
static mr_quat frame_quat(const rbd_state *s, int k) {
  mr_mat3 R;
  memcpy(R.m, s->frame_X + 12 * k, 9 * sizeof(double));
  mr_quat q = mr_m3_to_quat(&R);
  if (q.w < 0) q = (mr_quat){-q.x, -q.y, -q.z, -q.w};
  return q;
}

static const char *const jac_names[3] = {"jacobian_world", "jacobian_local",
                                         "jacobian_local_world_aligned"};

static void json_frames(FILE *f, const mr_model *m, const rbd_args *a, const rbd_state *s) {
  fputc('[', f);
  for (int k = 0; k < a->nframes; ++k) {
    const mr_frame *fr = &m->frames[s->frame[k]];
    const double *x = s->frame_X + 12 * k;
    mr_quat q = frame_quat(s, k);
    double quat[4] = {q.x, q.y, q.z, q.w};
    fputs(k ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    mr_json_write_string(f, fr->name);
    fputs(", \"body\": ", f);
    mr_json_write_string(f, m->bodies[fr->body].name);
    fputs(", \"position\": ", f), mr_json_write_vector(f, x + 9, 3);
    fputs(", \"quaternion\": ", f), mr_json_write_vector(f, quat, 4);
    fputs(", \"rotation\": ", f), mr_json_write_matrix(f, x, 3, 3);
    for (int r = 0; r < 3; ++r) {
      fprintf(f, ",\n     \"%s\": ", jac_names[r]);
      mr_json_write_matrix(f, s->frame_J + (size_t)(3 * k + r) * 6 * m->nv, 6, m->nv);
    }
    fputc('}', f);
  }
  fputs(a->nframes ? "\n  ]" : "]", f);
}

static void print_json(FILE *f, const mr_model *m, const rbd_args *a, const rbd_state *s) {
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
  if (a->nframes) json_key(f, "frames"), json_frames(f, m, a, s);
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

static void print_rows(FILE *f, const double *A, int rows, int cols) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j)
      fprintf(f, " %11.4e", A[i * cols + j]);
    fputc('\n', f);
  }
}

static void print_frames(FILE *f, const mr_model *m, const rbd_args *a, const rbd_state *s) {
  for (int k = 0; k < a->nframes; ++k) {
    const mr_frame *fr = &m->frames[s->frame[k]];
    const double *x = s->frame_X + 12 * k;
    mr_quat q = frame_quat(s, k);
    fprintf(f, "\nframe %s (body %s):\n  position   = %.9g %.9g %.9g m\n", fr->name,
            m->bodies[fr->body].name, x[9], x[10], x[11]);
    fprintf(f, "  quaternion = %.9g %.9g %.9g %.9g (x y z w)\n", q.x, q.y, q.z, q.w);
    for (int r = 0; r < 3; ++r) {
      fprintf(f, "%s (6 x %d):\n", jac_names[r], m->nv);
      print_rows(f, s->frame_J + (size_t)(3 * k + r) * 6 * m->nv, 6, m->nv);
    }
  }
}

static void print_text(FILE *f, const mr_model *m, const rbd_args *a, const rbd_state *s) {
  int collision = a->collision;
  int nv = m->nv;
  fprintf(f, "model %s: nq = %d, nv = %d, bodies = %d (with the world), frames = %d, ", m->name,
          m->nq, nv, m->nbodies, m->nframes);
  if (collision)
    fprintf(f, "geometries = %d\n", m->ngeoms);
  else
    fprintf(f, "geometries not read (--collision)\n");
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
  print_frames(f, m, a, s);
}

/* ---- the command ---- */

static void print_warning(void *user, const char *msg) {
  fprintf(stderr, "moreau rbd: warning: %s\n", msg);
}

/* an MJCF model's kinematic tree (mjcf.h, tree_only) and its qpos0 */
static int load_mjcf(const rbd_args *a, mr_model **m, double **q0) {
  if (a->floating || a->inertia_fix || a->lock_massless || a->nlocks || a->nroots) {
    fprintf(stderr,
            "moreau rbd: --floating, --inertia-fix, --lock, --lock-massless and "
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

/* the package roots of --collision: the given ones, then every ancestor directory of the model
 * (as scenes search them), into roots (cap entries of MR_PATH_MAX bytes); their number */
static int package_roots(const rbd_args *a, char (*roots)[MR_PATH_MAX], int cap) {
  int k = 0;
  for (; k < a->nroots && k < cap; ++k)
    snprintf(roots[k], MR_PATH_MAX, "%s", a->roots[k]);
  char dir[MR_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", a->model);
  for (char *slash; k < cap && (slash = strrchr(dir, '/')) && slash != dir;) {
    *slash = '\0';
    snprintf(roots[k++], MR_PATH_MAX, "%s", dir);
  }
  return k;
}

/* a mesh that no root holds: say which option gives the root, and which package it must hold */
static void package_hint(const char *msg) {
  const char *p = strstr(msg, "package://");
  if (!p || !strstr(msg, "not found")) return;
  p += strlen("package://");
  fprintf(stderr,
          "moreau rbd: give --package-root DIR with DIR holding the package directory '%.*s' "
          "(or leave out --collision: the dynamics reads no mesh)\n",
          (int)strcspn(p, "/\""), p);
}

static int load(const rbd_args *a, mr_model **m) {
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = a->floating;
  o.inertia_fix = a->inertia_fix;
  o.lock_massless = a->lock_massless;
  o.lock_joints = a->locks;
  o.nlock_joints = a->nlocks;
  o.warn = print_warning;
  o.collision = a->collision;
  char(*roots)[MR_PATH_MAX] = malloc(2 * RBD_MAX_ROOTS * sizeof *roots);
  const char *rp[2 * RBD_MAX_ROOTS];
  int nr = roots && a->collision ? package_roots(a, roots, 2 * RBD_MAX_ROOTS) : 0;
  for (int i = 0; i < nr; ++i)
    rp[i] = roots[i];
  o.package_roots = rp;
  o.npackage_roots = nr;
  mr_error e = {MR_OK, ""};
  mr_status st =
      roots ? mr_urdf_load(a->model, &o, m, &e) : mr_error_set(&e, MR_ERR_NOMEM, "out of memory");
  free(roots);
  if (st == MR_OK) return 0;
  fprintf(stderr, "moreau rbd: %s\n", e.msg);
  if (st == MR_ERR_IO) package_hint(e.msg);
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
  if (!rc) rc = find_frames(m, a, &s);
  if (!rc && s.dd) rc = compute_derivatives(m, d, &s);
  if (!rc) {
    compute(m, d, &s);
    compute_frames(m, d, a, &s);
    if (a->json)
      print_json(stdout, m, a, &s);
    else
      print_text(stdout, m, a, &s);
    if (!all_finite(m, a, &s)) {
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
  int mjcf = mr_mjcf_is_mjcf(a.model);
  rc = mjcf ? load_mjcf(&a, &m, &q0) : load(&a, &m);
  if (rc) return rc;
  if (mjcf) a.collision = 1; /* an MJCF model's geometries are always read (no mesh files) */
  rc = run(m, q0, &a);
  mr_model_free(m);
  free(q0);
  return rc;
}
