/* libFuzzer harness: the mesh reader (binary and ASCII STL, Wavefront OBJ: the checks of their
 * bytes, then assimp) and the convex hull (qhull). The first byte picks the format the name
 * announces (even: .stl, odd: .obj). */
#include <stdint.h>

#include "moreau/collision.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *name = data[0] & 1 ? "fuzz.obj" : "fuzz.stl";
  mr_error err;
  int nonconvex = 0;
  mr_mesh *m =
      mr_mesh_parse((const char *)data + 1, size - 1, name, mr_v3(1, 1, 1), &nonconvex, &err);
  mr_mesh_free(m);
  return 0;
}
