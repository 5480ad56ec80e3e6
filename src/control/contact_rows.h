/* The Jacobian of a detected contact (moreau/collision.h) for the control layer's problems built
 * from a simulator's contacts (contact inverse dynamics, the QPCC from a scene). Internal to
 * src/control. */
#ifndef MOREAU_CONTROL_CONTACT_ROWS_H
#define MOREAU_CONTROL_CONTACT_ROWS_H

#include "moreau/assembly.h"
#include "moreau/collision.h"

/* J (3 x nv, rows t₁, t₂, n) of contact c's relative velocity in its frame, after the
 * kinematics at q; scratch holds 3 nv doubles (mr_contact_jacobian) */
static inline void mr_detected_contact_jacobian(const mr_model *m, mr_data *d, const mr_contact *c,
                                                double *J, double *scratch) {
  mr_contact_geometry g = {.body1 = c->body[0],
                           .body2 = c->body[1],
                           .point = c->point,
                           .frame = c->frame,
                           .phi = c->phi,
                           .mu = c->mu,
                           .type = MR_ROWS_CONTACT};
  mr_contact_jacobian(m, d, &g, J, scratch);
}

#endif
