/* A scene robot read from an MJCF file: robots: [{name, mjcf, position, orientation, keyframe}]
 * (docs/scene-format.md). The file's whole model becomes the robot (mjcf.h): its world-body
 * geometries become fixed geometries of the scene, placed with the rest by position /
 * orientation; its actuators, joint springs, keyframes and contact filters come along; the
 * scene's own timestep, gravity and solver apply. */
#include <stdio.h>
#include <string.h>

#include "io/mjcf_internal.h"
#include "io/scene_internal.h"

static const char *const mjcf_robot_keys[] = {"name",        "mjcf",     "position",
                                              "orientation", "keyframe", NULL};

mr_status scene_mjcf_robot(mr_scene_ctx *c, const mr_ynode *n, int index) {
  mr_ynode *fn = mr_yaml_get(&c->y, n, "mjcf"), *nn = mr_yaml_get(&c->y, n, "name");
  mr_ynode *kn = mr_yaml_get(&c->y, n, "keyframe");
  const char *rel = NULL, *name = NULL, *key = NULL;
  mr_se3 X;
  if (mr_yaml_check_map(&c->y, n, mjcf_robot_keys, "a robot from an MJCF file (mjcf)") ||
      mr_yaml_string(&c->y, fn, "mjcf", &rel) || scene_pose(c, n, &X, NULL) ||
      (kn && mr_yaml_string(&c->y, kn, "keyframe", &key)))
    return scene_status(c);
  if (!nn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "robot %d: missing 'name'", index);
  if (mr_yaml_string(&c->y, nn, "name", &name)) return scene_status(c);
  char path[MR_SCENE_PATH_MAX];
  if (scene_resolve(c, rel, path, sizeof path))
    return mr_yaml_error(&c->y, fn, MR_ERR_IO,
                         "'mjcf': file '%s' not found (looked relative to the scene file, then to "
                         "the current directory)",
                         rel);
  mr_mjcf_options opt = mr_mjcf_options_default();
  opt.robot = name;
  opt.keyframe = key;
  mr_error e = {MR_OK, ""};
  if (mj_scene_add_robot(c->s, path, &opt, X, &c->cap_q, &c->cap_v, NULL, &e))
    return mr_yaml_error(&c->y, fn, e.status, "'mjcf': %s", e.msg);
  return MR_OK;
}
