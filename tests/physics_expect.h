/* The expected verdict of every analytical case with every solver (tests/physics_cases.h), by
 * the solver's contact model: the cases a model cannot pass by design expect its artifact,
 * which the case's check measures and bounds (CCP: contact at a distance Δt μ‖c_T‖; the LCP
 * pyramid: per-axis deceleration; raisim: under-dissipation and unconverged stiction; soft:
 * penetration m g/(n k), creep, spring-damper restitution). */
#ifndef MOREAU_TESTS_PHYSICS_EXPECT_H
#define MOREAU_TESTS_PHYSICS_EXPECT_H

#include "physics_cases.h"

static inline pc_verdict pc_expected(int id, const char *solver) {
  int soft = pc_is(solver, "soft"), ccp = pc_is(solver, "CCP"), lcp = pc_is(solver, "LCP");
  int raisim = !strcmp(solver, "raisim");
  switch (id) {
  case PC_A3:
  case PC_A5S:
  case PC_A6:
    return soft || ccp || raisim ? PC_ARTIFACT : PC_PASS;
  case PC_A4:
    return soft || ccp || raisim || lcp ? PC_ARTIFACT : PC_PASS;
  case PC_A5K:
  case PC_A7:
  case PC_A8:
  case PC_A11:
    return soft ? PC_ARTIFACT : PC_PASS;
  default:
    return PC_PASS;
  }
}

/* run a case with every solver and compare each verdict with the expected one */
static inline void pc_check_case(int id) {
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    pc_outcome o = pc_check(id, name);
    pc_verdict want = pc_expected(id, name);
    if (o.v != want)
      fail_msg("%s with %s: %s, expected %s; error %.3g (tolerance %.3g); %s", pc_case_names[id],
               name, pc_verdict_name(o.v), pc_verdict_name(want), o.err, o.tol, o.what);
  }
}

#endif
