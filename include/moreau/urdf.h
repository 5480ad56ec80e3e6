/* Loading a robot from URDF (libxml2). Joints are numbered depth-first in document order; fixed
 * joints are merged into their parent body (their links become frames); collision geometry is
 * stored on the model (visual geometry is skipped). Mesh paths "package://NAME/REST" resolve to
 * ROOT/NAME/REST for the first search root that has the file: the roots in the options, then
 * those of the MOREAU_PACKAGE_PATH environment variable (colon-separated). */
#ifndef MOREAU_URDF_H
#define MOREAU_URDF_H

#include "moreau/model.h"

typedef struct {
  int floating;                     /* add a free-flyer joint at the root (default 0) */
  const char *const *package_roots; /* search roots for package:// paths */
  int npackage_roots;
  int collision;                    /* load collision geometry (default 1) */
} mr_urdf_options;

mr_urdf_options mr_urdf_options_default(void);

/* Load a URDF file. On failure *out is NULL and err names the file, line and element. */
mr_status mr_urdf_load(const char *path, const mr_urdf_options *opt, mr_model **out,
                       mr_error *err);
/* The same from a string; name is used in messages and relative mesh paths resolve against the
 * current directory. */
mr_status mr_urdf_parse(const char *xml, const char *name, const mr_urdf_options *opt,
                        mr_model **out, mr_error *err);

#endif
