/* Placeholder for the URDF loader until it lands on this branch: every call reports that URDF
 * loading is unavailable. */
#include "moreau/urdf.h"

#include <stddef.h>

mr_urdf_options mr_urdf_options_default(void) {
  mr_urdf_options o = {0, NULL, 0, 1};
  return o;
}

mr_status mr_urdf_load(const char *path, const mr_urdf_options *opt, mr_model **out,
                       mr_error *err) {
  (void)opt;
  *out = NULL;
  return mr_error_set(err, MR_ERR_UNSUPPORTED, "%s: the URDF loader is not built in", path);
}

mr_status mr_urdf_parse(const char *xml, const char *name, const mr_urdf_options *opt,
                        mr_model **out, mr_error *err) {
  (void)xml, (void)opt;
  *out = NULL;
  return mr_error_set(err, MR_ERR_UNSUPPORTED, "%s: the URDF loader is not built in", name);
}
