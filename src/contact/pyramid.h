/* The LCP's friction pyramid with k facets (mr_solver_settings.pyramid_facets): the regular
 * k-gon circumscribed about the disc of radius r = μ λ_N,
 *   P_k(r) = {x ∈ R² : x·d_j ≤ r, j < k},  d_j = (cos 2πj/k, sin 2πj/k),
 * with vertices r·w_j, w_j = (cos (2j+1)π/k, sin (2j+1)π/k) / cos(π/k). k = 4 is the box
 * |x₁|, |x₂| ≤ r. Used by lcp-pgs (lcp.c) and lcp-stagproj (lcp_stagproj.c). Internal to
 * src/contact. */
#ifndef MOREAU_CONTACT_PYRAMID_H
#define MOREAU_CONTACT_PYRAMID_H

#include "moreau/contact.h"

/* a pyramid's facet normals d_j and unit vertices w_j (P_k(1)'s vertices) */
typedef struct {
  int k;
  double dx[MR_PYRAMID_MAX_FACETS], dy[MR_PYRAMID_MAX_FACETS];
  double wx[MR_PYRAMID_MAX_FACETS], wy[MR_PYRAMID_MAX_FACETS];
} mr_pyramid;

/* the facet count of settings s (0 reads as 4); MR_ERR_INVALID naming the value unless it is
 * even and in [4, MR_PYRAMID_MAX_FACETS] */
mr_status mr_pyramid_facets(const mr_solver_settings *s, const char *solver, int *k, mr_error *err);
/* fill py's normals and vertices for k facets */
void mr_pyramid_init(mr_pyramid *py, int k);
/* the minimiser of ½ xᵀ B x + bᵀ x over P_k(r), B the 2x2 symmetric positive semi-definite
 * block (row-major), r ≥ 0, into x (exact: the unconstrained minimiser when it is inside,
 * else the best point of the k edges) */
void mr_pyramid_qp(const mr_pyramid *py, double r, const double *B, const double *b, double *x);
/* the Euclidean projection of y onto P_k(r), into x (may alias y) */
void mr_pyramid_project(const mr_pyramid *py, double r, const double *y, double *x);
/* the LCP criterion of one contact (t₁, t₂, n) on the k-facet pyramid: max of feasibility
 * (max(−λ_N, max_j λ_T·d_j − μ λ_N, 0)), Signorini (max(−c_N, 0), |λ_N c_N|) and maximum
 * dissipation |λ_T·c_T + μ λ_N max_j w_j·(−c_T)| (λ_T minimises λ_T·c_T over the polygon) */
double mr_pyramid_contact_criterion(const mr_pyramid *py, double mu, const double *l,
                                    const double *c);

#endif
