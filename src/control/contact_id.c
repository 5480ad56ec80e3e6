/* Contact inverse dynamics (inverse.h): the cone-constrained least squares of the floating
 * base's balance, solved by the MPC's cone QP (mpc_qp.h). */
#include "moreau/inverse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/contact_rows.h"
#include "control/mpc_qp.h"
#include "core/linalg.h"
#include "moreau/assembly.h"

struct mr_contact_id {
  const mr_model *m;
  int max_contacts, nu; /* capacity; unactuated dofs */
  int *U;               /* [nu] their velocity indices */
  double *J;            /* 3 max_contacts x nv */
  double *A;            /* nu x 3 max_contacts: (Jᵀ)_U */
  double *H, *g, *u, *mu, *work, *scratch;
};

mr_contact_id_settings mr_contact_id_settings_default(void) {
  return (mr_contact_id_settings){.proximal = 1e-8, .max_iter = 50, .eps = 1e-9};
}

/* the velocity indices of the free joints' dofs into U (NULL: count only) */
static int unactuated(const mr_model *m, int *U) {
  int n = 0;
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    if (j->type != MR_JOINT_FREE) continue;
    for (int k = 0; k < j->nv; ++k, ++n)
      if (U) U[n] = j->idx_v + k;
  }
  return n;
}

void mr_contact_id_free(mr_contact_id *w) {
  if (!w) return;
  free(w->U), free(w->J), free(w->A), free(w->H), free(w->g), free(w->u), free(w->mu);
  free(w->work), free(w->scratch);
  free(w);
}

mr_contact_id *mr_contact_id_create(const mr_model *m, int max_contacts, mr_error *err) {
  if (!m || max_contacts < 0)
    return mr_error_set(err, MR_ERR_INVALID, "contact inverse dynamics: %s",
                        m ? "max_contacts must be >= 0" : "no model"),
           NULL;
  mr_contact_id *w = calloc(1, sizeof *w);
  if (!w) return mr_error_set(err, MR_ERR_NOMEM, "contact inverse dynamics: out of memory"), NULL;
  size_t n = 3 * (size_t)(max_contacts > 0 ? max_contacts : 1), nv = (size_t)m->nv;
  w->m = m, w->max_contacts = max_contacts, w->nu = unactuated(m, NULL);
  w->U = calloc((size_t)w->nu + 1, sizeof *w->U);
  w->J = calloc(n * nv + 1, sizeof *w->J);
  w->A = calloc(n * (size_t)w->nu + 1, sizeof *w->A);
  w->H = calloc(n * n, sizeof *w->H);
  w->g = calloc(n, sizeof *w->g);
  w->u = calloc(n, sizeof *w->u);
  w->mu = calloc(n / 3, sizeof *w->mu);
  w->work = calloc((size_t)mr_cone_qp_work_size((int)(n / 3)), sizeof *w->work);
  w->scratch = calloc(3 * nv + 1, sizeof *w->scratch);
  if (!w->U || !w->J || !w->A || !w->H || !w->g || !w->u || !w->mu || !w->work || !w->scratch) {
    mr_contact_id_free(w);
    return mr_error_set(err, MR_ERR_NOMEM,
                        "contact inverse dynamics: out of memory for %d contacts", max_contacts),
           NULL;
  }
  unactuated(m, w->U);
  return w;
}

/* the first non-finite entry of x (n) named in err */
static mr_status check_finite(const double *x, int n, const char *what, mr_error *err) {
  long k = x ? mr_first_nonfinite(x, n) : -1;
  if (k < 0) return MR_OK;
  return mr_error_set(err, MR_ERR_INVALID, "contact inverse dynamics: %s[%ld] = %g is not finite",
                      what, k, x[k]);
}

static mr_status check_input(const mr_contact_id *w, const double *q, const double *v,
                             const double *a, const mr_contact *contacts, int nc,
                             const double *f_ref, mr_error *err) {
  const mr_model *m = w->m;
  if (nc < 0 || nc > w->max_contacts)
    return mr_error_set(err, MR_ERR_INVALID,
                        "contact inverse dynamics: %d contacts, the workspace holds %d", nc,
                        w->max_contacts);
  if (!q || !v || !a || (nc > 0 && !contacts))
    return mr_error_set(err, MR_ERR_INVALID,
                        "contact inverse dynamics: q, v, a (and contacts) "
                        "must not be NULL");
  if (check_finite(q, m->nq, "q", err) || check_finite(v, m->nv, "v", err) ||
      check_finite(a, m->nv, "a", err) || check_finite(f_ref, 3 * nc, "f_ref", err))
    return MR_ERR_INVALID;
  for (int i = 0; i < nc; ++i)
    if (!(contacts[i].mu >= 0.0) || !isfinite(contacts[i].mu))
      return mr_error_set(err, MR_ERR_INVALID,
                          "contact inverse dynamics: contact %d has friction coefficient %g", i,
                          contacts[i].mu);
  return MR_OK;
}

/* J (3 nc x nv) of the contacts in their frames, after the kinematics at q */
static void jacobians(mr_contact_id *w, mr_data *d, const mr_contact *contacts, int nc) {
  int nv = w->m->nv;
  for (int i = 0; i < nc; ++i) {
    const mr_contact *c = &contacts[i];
    mr_detected_contact_jacobian(w->m, d, c, w->J + (size_t)3 * i * nv, w->scratch);
  }
}

mr_status mr_contact_id_solve(mr_contact_id *w, mr_data *d, const double *q, const double *v,
                              const double *a, const mr_contact *contacts, int nc,
                              const double *f_ref, const mr_contact_id_settings *s, double *tau,
                              double *f, mr_contact_id_info *info, mr_error *err) {
  mr_contact_id_settings def = mr_contact_id_settings_default();
  if (!s) s = &def;
  mr_status st = check_input(w, q, v, a, contacts, nc, f_ref, err);
  if (st) return st;
  const mr_model *m = w->m;
  int nv = m->nv, n = 3 * nc, nu = w->nu;
  /* M a + h (d->tau_id), and the kinematics at q for the Jacobians */
  const double *Mah = mr_rnea(m, d, q, v, a);
  mr_copy(tau, Mah, nv);
  jacobians(w, d, contacts, nc);
  mr_contact_id_info out = {0.0, 0, 1};
  if (n > 0) {
    /* A = (Jᵀ)_U, b = (M a + h)_U; H = AᵀA + ε̃ I, g = −Aᵀ b − ε̃ f_ref */
    for (int r = 0; r < nu; ++r)
      for (int j = 0; j < n; ++j)
        w->A[(size_t)r * n + j] = w->J[(size_t)j * nv + w->U[r]];
    double trace = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double h = 0.0;
        for (int r = 0; r < nu; ++r)
          h += w->A[(size_t)r * n + i] * w->A[(size_t)r * n + j];
        w->H[(size_t)i * n + j] = h;
        if (i == j) trace += h;
      }
    double eps = s->proximal * (trace > 0.0 ? trace / n : 1.0);
    if (!(eps > 0.0)) eps = 1e-12;
    for (int i = 0; i < n; ++i) {
      double gi = 0.0;
      for (int r = 0; r < nu; ++r)
        gi -= w->A[(size_t)r * n + i] * Mah[w->U[r]];
      w->H[(size_t)i * n + i] += eps;
      w->g[i] = gi - eps * (f_ref ? f_ref[i] : 0.0);
      w->u[i] = f_ref ? f_ref[i] : 0.0;
    }
    for (int i = 0; i < nc; ++i)
      w->mu[i] = contacts[i].mu;
    mr_cone_qp p = {.nb = nc, .H = w->H, .g = w->g, .mu = w->mu};
    mr_cone_qp_settings qs = mr_cone_qp_settings_default();
    qs.max_iter = s->max_iter, qs.eps = s->eps;
    mr_cone_qp_info qi;
    if (mr_cone_qp_solve(&p, &qs, w->work, w->u, &qi))
      return mr_error_set(
          err, MR_ERR_NUMERIC,
          "contact inverse dynamics: the contact forces' problem cannot be factored");
    out.iterations = qi.iterations, out.converged = qi.converged;
    /* τ = M a + h − Jᵀ f */
    for (int j = 0; j < n; ++j)
      mr_axpy(tau, -w->u[j], w->J + (size_t)j * nv, nv);
    if (f) mr_copy(f, w->u, n);
  }
  for (int r = 0; r < nu; ++r)
    out.residual = fmax(out.residual, fabs(tau[w->U[r]]));
  if (info) *info = out;
  return MR_OK;
}
