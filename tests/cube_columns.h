/* Scene text of columns of 10 cm cubes on a plane (μ = 0.5, no contact margin), shared by
 * tests/test_sparse_g.c, tests/test_no_alloc.c and bench/sparse_g.c: a column of k cubes is one
 * island of up to 4k contacts whose G is block-tridiagonal by interface. */
#ifndef MOREAU_TESTS_CUBE_COLUMNS_H
#define MOREAU_TESTS_CUBE_COLUMNS_H

#include <stddef.h>
#include <stdio.h>

/* the scene's start (Δt = 1 ms, the ground) into t; returns the characters written */
static inline int cube_scene_start(char *t, size_t cap) {
  return snprintf(t, cap,
                  "timestep: 0.001\nduration: 1\ncontact: {margin: 0.0}\nbodies:\n"
                  "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n");
}

/* k cubes named <prefix>0 … at (x, 0), masses 1 + mass_step (i mod 3) kg, each sink m into the
 * one below (0: resting at touch; 1e-4 puts every interface in contact from the first step),
 * appended at t + at; returns the new length */
static inline int cube_column(char *t, size_t cap, int at, const char *prefix, int k, double x,
                              double mass_step, double sink) {
  for (int i = 0; i < k && (size_t)at < cap; ++i)
    at += snprintf(t + at, cap - (size_t)at,
                   "  - {name: %s%d, mass: %g, position: [%g, 0, %g], geoms: [{type: box, size: "
                   "[0.1, 0.1, 0.1]}]}\n",
                   prefix, i, 1.0 + mass_step * (i % 3), x, (0.05 - sink) + (0.1 - sink) * i);
  return at;
}

#endif
