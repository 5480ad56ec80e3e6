/* libFuzzer harness: the URDF loader (libxml2, links, joints, inertias, limits, geometry),
 * without collision meshes so that no file is opened. */
#include <stdint.h>

#include "fuzz_util.h"
#include "moreau/model.h"
#include "moreau/urdf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  mr_urdf_options opt = mr_urdf_options_default();
  opt.collision = (size & 1) != 0; /* both paths; mesh files are then looked up but rarely exist */
  mr_model *m = NULL;
  mr_error err;
  if (mr_urdf_parse(text, "fuzz.urdf", &opt, &m, &err) == MR_OK) mr_model_free(m);
  free(text);
  return 0;
}
