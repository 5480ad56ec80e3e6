/* libFuzzer harness: the MJCF loader (libxml2, the schema, default classes, the compiler's
 * frames, masses and inertias, chains, contact filters and friction, actuators, tendons,
 * equality couplings, keyframes) and the scene it fills. The loader reads files (its
 * <include> elements resolve against the main file's directory), so each input is written to
 * a private temporary directory first; an input that includes a file other than itself meets a
 * missing file. Both the full load and the tree-only load (moreau rbd) are driven (the input's
 * size picks). Any input must give MR_OK or an error: never a crash, a leak or UB. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "moreau/mjcf.h"

static char path[256];

static void remove_dir(void) {
  unlink(path);
  char *slash = strrchr(path, '/');
  if (slash) *slash = '\0', rmdir(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    char dir[] = "/tmp/moreau-fuzz-mjcf-XXXXXX";
    if (!mkdtemp(dir)) return 0;
    snprintf(path, sizeof path, "%s/model.xml", dir);
    atexit(remove_dir);
  }
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t written = fwrite(data, 1, size, f);
  if (fclose(f) || written != size) return 0;
  mr_mjcf_options opt = mr_mjcf_options_default();
  opt.tree_only = (size & 1) != 0;
  mr_scene s;
  mr_error err;
  if (mr_mjcf_load(path, &opt, &s, &err) == MR_OK) mr_scene_free(&s);
  return 0;
}
