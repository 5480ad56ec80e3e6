/* Loading a robot from URDF (libxml2); docs/urdf.md is the reference.
 *
 * Joints are numbered depth-first in document order (the child joints of a link in the order
 * their <joint> elements appear); fixed joints are merged into their parent body (their links
 * become frames, their inertias and collision geometries move to that body). The root link is
 * fixed to the world, or carried by a free-flyer joint "root_joint" with the floating option; a
 * root link named "world" is the world itself. Collision geometry (box, sphere, cylinder,
 * capsule, mesh) is stored on the model; visual geometry is skipped. Mesh paths
 * "package://NAME/REST" resolve to ROOT/NAME/REST for the first search root that has the file:
 * the roots in the options, then those of the MOREAU_PACKAGE_PATH environment variable
 * (colon-separated); other relative paths resolve against the URDF file's directory. Meshes are
 * read here (mr_geom.mesh, with its hull), so that a mesh error names the URDF line; a negative
 * scale mirrors the mesh. */
#ifndef MOREAU_URDF_H
#define MOREAU_URDF_H

#include "moreau/model.h"

typedef struct {
  int floating;                     /* add a free-flyer joint "root_joint" carrying the root link
                                       (default 0: the root link is fixed to the world; ignored
                                       when the root link is named "world") */
  const char *const *package_roots; /* search roots for package:// paths (default NULL) */
  int npackage_roots;               /* their number (default 0) */
  int collision;                    /* load collision geometry (default 1); with 0, <collision>
                                       elements are skipped and mesh files need not exist */
  int inertia_fix;                  /* replace an inertia that is not physical (indefinite, or
                                       breaking A + B >= C) by the nearest physical tensor, with a
                                       warning (default 0: such a file is refused) */
  const char *const *lock_joints;   /* joints to treat as fixed, at q = 0 (default NULL) */
  int nlock_joints;                 /* their number (default 0) */
  int lock_massless;                /* treat as fixed every moving joint that carries no mass or
                                       no inertia about its axis, with a warning (default 0: such
                                       a file is refused) */
  /* called with each warning "FILE:LINE: message" (round-off inertia entries set to 0, repaired
     inertias, locked joints, an ignored floating option); NULL drops them */
  void (*warn)(void *user, const char *msg);
  void *warn_user;
} mr_urdf_options;

mr_urdf_options mr_urdf_options_default(void);

/* Load a URDF file. On failure *out is NULL and err names the file, line, element and offending
 * value: MR_ERR_IO (unreadable file, mesh not found), MR_ERR_PARSE (malformed XML, missing
 * element or attribute, a number that is not finite, a wrong number of components),
 * MR_ERR_INVALID (negative mass, unknown joint type, unknown or doubly used link, loop, several
 * roots, duplicate names, an inertia that is not physical without inertia_fix, a moving joint
 * without inertia without lock_massless), MR_ERR_UNSUPPORTED (planar joints, unknown shapes). */
mr_status mr_urdf_load(const char *path, const mr_urdf_options *opt, mr_model **out, mr_error *err);
/* The same from a string; name is used in messages and relative mesh paths resolve against the
 * current directory. */
mr_status mr_urdf_parse(const char *xml, const char *name, const mr_urdf_options *opt,
                        mr_model **out, mr_error *err);

#endif
