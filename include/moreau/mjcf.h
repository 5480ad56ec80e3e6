/* Loading MuJoCo's model format, MJCF (libxml2); docs/mjcf.md is the reference and
 * docs/from-mujoco.md the guide for MuJoCo users.
 *
 * The file is read with MuJoCo 2.2.2's semantics wherever moreau has the physics: <include>,
 * default classes (nested, class / childclass), <compiler> (angle, eulerseq, coordinate,
 * inertiafromgeom, settotalmass, boundmass, boundinertia, balanceinertia, ...), every frame form
 * (pos, quat, axisangle, euler, xyaxes, zaxis, fromto), bodies with hinge, slide, ball and free
 * joints (several joints in one body become a chain of massless bodies), geometries (plane,
 * sphere, capsule, cylinder, ellipsoid, box, heightfield) with their masses and inertias,
 * <inertial>, contype / conaffinity filtering, <contact> <exclude> and <pair>, friction with
 * MuJoCo's combination rule (maximum, or the geom of higher priority; condim 1 frictionless),
 * joint limits, damping, armature and springs (stiffness, springref), <option> timestep and
 * gravity, actuators (motor, position, velocity, and <general> of the same forms) on joints and
 * fixed tendons, <equality> joint and tendon couplings that are linear in two joints (as mimic
 * joints), keyframes and sites (as frames).
 *
 * What moreau does not model is refused with the file, line, element and attribute where
 * ignoring it would change the dynamics (spatial tendons, limited or elastic tendons, muscles
 * and actuator dynamics, fluid forces, joint dry friction, torsional and rolling friction,
 * contact margins that offset the surface, equality constraints that are not linear couplings
 * of two joints, composite bodies, ...), and ignored with one warning where it does not
 * (lights, cameras, materials, textures, visual options, sensors, soft-constraint parameters
 * solref / solimp: moreau's contacts and limits are hard).
 *
 * The model becomes one robot of a scene (scene.h): its joints, bodies, geometries and sites
 * (frames) are named "ROBOT/NAME" (unnamed ones "ROBOT/geom#ID" with MuJoCo's id), the world
 * body's geometries are fixed geometries of the scene, the robot collides with itself as MuJoCo's
 * filters allow. The state layout is MuJoCo's except for the free joint (linear velocity in the
 * body's frame, quaternions x y z w): docs/from-mujoco.md. */
#ifndef MOREAU_MJCF_H
#define MOREAU_MJCF_H

#include "moreau/scene.h"

typedef struct {
  const char *robot;    /* the robot's name (default NULL: the file's name without its directory
                           and extension) */
  const char *keyframe; /* start from this <key> (its qpos, qvel, ctrl, time); NULL (default):
                           MuJoCo's qpos0 with zero velocity and zero controls */
  int tree_only;        /* 1: read the bodies, joints, inertias and geometries only, for rigid-
                           body dynamics (moreau rbd): contact filters, friction, actuators,
                           tendons, equality constraints, keyframes, the joints' friction and
                           springs and the options are left out, with a warning, so that what
                           moreau cannot simulate does not stop the load (default 0) */
  /* called with each warning "FILE:LINE: message"; NULL drops them (the scene keeps a count
     and the last one) */
  void (*warn)(void *user, const char *msg);
  void *warn_user;
} mr_mjcf_options;

mr_mjcf_options mr_mjcf_options_default(void);

/* 1 when the text starts (after an optional XML declaration, comments and white space) with
 * the element <mujoco: an MJCF document */
int mr_mjcf_is_mjcf_text(const char *text);
/* the same for a file's first kilobytes; 0 when it cannot be read */
int mr_mjcf_is_mjcf(const char *path);

/* Load an MJCF file as a scene: one robot, the model's timestep and gravity, duration 1 s, the
 * default solver. On failure the scene is left empty (safe to mr_scene_free) and err names the
 * file, line, element and attribute: MR_ERR_IO (unreadable file or include), MR_ERR_PARSE
 * (malformed XML, an element or attribute MuJoCo 2.2.2 does not know, a bad number),
 * MR_ERR_INVALID (what MuJoCo's compiler refuses), MR_ERR_UNSUPPORTED (what moreau does not
 * model, see above). */
mr_status mr_mjcf_load(const char *path, const mr_mjcf_options *opt, mr_scene *scene,
                       mr_error *err);

#endif
