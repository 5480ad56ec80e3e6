/* Scenes and simulators in tests: each helper fails the test with the library's message. */
#ifndef MOREAU_TEST_SIM_UTIL_H
#define MOREAU_TEST_SIM_UTIL_H

#include "moreau/scene.h"
#include "moreau/sim.h"

#include "test_util.h"

/* a scene from text; relative paths resolve against dir (from the repository root) */
static inline mr_scene tsim_parse(const char *text, const char *dir) {
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_parse(text, "test.yaml", dir, &sc, &err)) fail_msg("scene: %s", err.msg);
  return sc;
}

/* a scene file */
static inline mr_scene tsim_load(const char *path) {
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load(path, &sc, &err)) fail_msg("%s: %s", path, err.msg);
  return sc;
}

/* a simulator of the scene with the solver (NULL: the scene's) */
static inline mr_sim *tsim_create(const mr_scene *sc, const char *solver) {
  mr_error err = {0};
  mr_sim *s = mr_sim_from_scene(sc, solver, &err);
  if (!s) fail_msg("simulator (%s): %s", solver ? solver : sc->solver, err.msg);
  return s;
}

/* n steps */
static inline void tsim_steps(mr_sim *s, long n) {
  mr_error err = {0};
  for (long k = 0; k < n; ++k)
    if (mr_sim_step(s, &err)) fail_msg("step %ld: %s", mr_sim_steps(s) + 1, err.msg);
}

#endif
