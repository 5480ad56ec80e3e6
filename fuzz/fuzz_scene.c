/* libFuzzer harness: the YAML scene loader (libyaml, the typed access layer, every section's
 * range checks, heightfield functions, the robots a scene names). Relative paths resolve against
 * scenes/ (the seeds' own directory), then the current directory, so seeds that name the
 * project's models and robots load them when run from the repository root. Any input must give
 * MR_OK or an error: never a crash, a leak or UB. */
#include <stdint.h>

#include "fuzz_util.h"
#include "moreau/scene.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  mr_scene s;
  mr_error err;
  if (mr_scene_parse(text, "fuzz.yaml", "scenes", &s, &err) == MR_OK) mr_scene_free(&s);
  free(text);
  return 0;
}
