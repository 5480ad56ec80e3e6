/* Shared state of the scene loader's files (scene.c, scene_geom.c, scene_robot.c,
 * scene_force.c). */
#ifndef MOREAU_IO_SCENE_INTERNAL_H
#define MOREAU_IO_SCENE_INTERNAL_H

#include "io/yaml_util.h"
#include "moreau/scene.h"

typedef struct {
  mr_ydoc y;
  mr_scene *s;
  mr_error *err;
  char dir[MR_SCENE_PATH_MAX]; /* directory of the scene file, "" for the current directory */
  /* per-body scratch while building: q0 / v0 grow as bodies and robots are added */
  int cap_q, cap_v;
} mr_scene_ctx;

/* a scene with the defaults of docs/scene-format.md, for the file path (no model yet) */
void scene_init(mr_scene *s, const char *path);

/* the error status currently in ctx->err (MR_ERR_INVALID when no error struct was given) */
mr_status scene_status(const mr_scene_ctx *c);

/* resolve a path: absolute as is; relative against the scene directory, then the current
 * directory. Returns 0 and fills out when the file exists, -1 otherwise (out holds the
 * first candidate). */
int scene_resolve(const mr_scene_ctx *c, const char *rel, char *out, size_t len);

/* out = dir/rel, or rel when dir is empty (truncated to len) */
void scene_join(char *out, size_t len, const char *dir, const char *rel);

/* grow q0 / v0 to hold nq / nv entries */
mr_status scene_grow_state(mr_scene_ctx *c, int nq, int nv);

/* a pose from optional position / orientation keys of map (orientation: quaternion x y z w,
 * normalised when |‖q‖ − 1| < 1e-6, an error otherwise) */
mr_status scene_pose(mr_scene_ctx *c, const mr_ynode *map, mr_se3 *X, mr_quat *q);

/* geometries of a scene body: add them to the model on model body `body`, placed at X_body
 * (identity for free bodies, the body's pose for fixed ones); when inertia is wanted, the
 * uniform-density inertia of the geometries (unit density) is accumulated into *unit */
mr_status scene_geoms(mr_scene_ctx *c, const mr_ynode *seq, const char *body_name, int body,
                      mr_se3 X_body, int need_inertia, mr_inertia *unit);

/* closed-form unit-density volume and inertia of one geometry about its own frame */
int scene_geom_unit_inertia(const mr_geom *g, mr_inertia *Y);

mr_status scene_robots(mr_scene_ctx *c, const mr_ynode *seq);
/* robot `index` from an MJCF file (its map has an mjcf key) */
mr_status scene_mjcf_robot(mr_scene_ctx *c, const mr_ynode *n, int index);
mr_status scene_forces(mr_scene_ctx *c, const mr_ynode *seq);
mr_status scene_pairs(mr_scene_ctx *c, const mr_ynode *seq);
mr_status scene_constraints(mr_scene_ctx *c, const mr_ynode *seq);
mr_status scene_materials(mr_scene_ctx *c, const mr_ynode *map);

/* the material of that name, or NULL */
const mr_scene_material *scene_material(const mr_scene *s, const char *name);

/* the SRDF of a URDF file when the scene names none: X.srdf beside X.urdf, else NAME/srdf/X.srdf
 * beside NAME/urdf/X.urdf (the layout of robot description packages). 0 with the path in out
 * when one exists; -1 otherwise, out then naming the candidates for a message. */
int scene_default_srdf(const char *urdf, char *out, size_t len);

/* the default scene of the URDF file at path (dir: its directory), scene_default.c */
mr_status scene_default_for_urdf(const char *path, const char *dir, mr_scene *s, mr_error *err);

/* the file at path (its text, its directory) loaded as a scene by its format: YAML, or a bare
 * URDF in the default scene (scene_file.c) */
mr_status scene_load_file(const char *path, const char *text, const char *dir, mr_scene *s,
                          mr_error *err);

#endif
