/* A world with the record options of its scene (moreau/scene.h): what `moreau run --out` would
 * write for it, for bindings that record a run themselves. */
#include "moreau/scene.h"

mr_world *mr_world_load_recorded(const char *path, mr_record_options *rec, mr_error *err) {
  mr_scene sc;
  if (mr_scene_load(path, &sc, err)) return NULL;
  mr_world *w = mr_scene_compile(&sc, err);
  if (w && rec)
    *rec = (mr_record_options){.every = sc.record.every,
                               .energy = sc.record.energy,
                               .solver_stats = sc.record.solver_stats,
                               .contact_forces = sc.record.contact_forces,
                               .world_velocity = sc.record.world_velocity,
                               .poses = sc.record.poses,
                               .com = sc.record.com};
  mr_scene_free(&sc);
  return w;
}
