/* From a loaded scene to the compiled world (world.h): the scene's parts are world parts, so
 * compiling is a deep copy of them (mr_world_copy) without what only a run needs (record paths,
 * materials already resolved into the geometries, load warnings). */
#include "moreau/scene.h"

#include <string.h>

#include "moreau/mpc.h"
#include "moreau/sim.h"

#include "integrate/sim_internal.h"

/* the scene's parts, shallow */
static mr_world parts(const mr_scene *sc) {
  mr_world w = {.model = sc->model,
                .q0 = sc->q0,
                .v0 = sc->v0,
                .timestep = sc->timestep,
                .duration = sc->duration,
                .settings = sc->settings,
                .contact = sc->contact,
                .nbodies = sc->nbodies,
                .bodies = sc->bodies,
                .nrobots = sc->nrobots,
                .robots = sc->robots,
                .npairs = sc->npairs,
                .pairs = sc->pairs,
                .nforces = sc->nforces,
                .forces = sc->forces,
                .nconstraints = sc->nconstraints,
                .constraints = sc->constraints,
                .nactuators = sc->nactuators,
                .actuators = sc->actuators,
                .nkeyframes = sc->nkeyframes,
                .keyframes = sc->keyframes,
                .ncoupled_limits = sc->ncoupled_limits,
                .coupled_limits = sc->coupled_limits};
  memcpy(w.solver, sc->solver, sizeof w.solver);
  return w;
}

mr_world *mr_scene_compile(const mr_scene *scene, mr_error *err) {
  mr_world w = parts(scene);
  return mr_world_copy(&w, err);
}

mr_world *mr_world_load(const char *path, mr_error *err) {
  mr_scene sc;
  if (mr_scene_load(path, &sc, err)) return NULL;
  mr_world *w = mr_scene_compile(&sc, err);
  mr_scene_free(&sc);
  return w;
}

mr_sim *mr_sim_from_scene(const mr_scene *scene, const char *solver, mr_error *err) {
  mr_world *w = mr_scene_compile(scene, err);
  mr_sim *s = w ? mr_sim_create(w, solver, err) : NULL;
  if (!s) return mr_world_free(w), NULL;
  mr_sim_adopt_world(s, w);
  return s;
}
