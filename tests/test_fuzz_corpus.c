/* The fuzzing seed corpora (fuzz/corpus/NAME) are valid inputs of their parsers, so that every
 * campaign starts from inputs that reach deep into the loaders; and mr_mesh_parse, the memory
 * entry point of the mesh harness, reads a seed exactly as mr_mesh_load reads the same bytes
 * from a file. */
#include "test_util.h"

#include <dirent.h>
#include <string.h>

#include "cli_util.h"
#include "contact/problem_io.h"
#include "core/file.h"
#include "moreau/collision.h"
#include "moreau/scene.h"
#include "moreau/urdf.h"

#define OUT 65536

/* the files of fuzz/corpus/name, sorted, into paths (at most cap); returns their number */
static int seeds(const char *name, char paths[][256], int cap) {
  char dir[128];
  snprintf(dir, sizeof dir, "fuzz/corpus/%s", name);
  struct dirent **list = NULL;
  int n = scandir(dir, &list, NULL, alphasort), k = 0;
  if (n < 0) fail_msg("cannot list %s", dir);
  for (int i = 0; i < n; ++i) {
    if (list[i]->d_name[0] != '.' && k < cap)
      snprintf(paths[k++], 256, "%.120s/%.120s", dir, list[i]->d_name);
    free(list[i]);
  }
  free(list);
  return k;
}

static void test_scene_seeds(void **state) {
  static char paths[64][256];
  int n = seeds("scene", paths, 64);
  assert_true(n >= 30);
  for (int i = 0; i < n; ++i) {
    char *text = NULL;
    size_t len = 0;
    mr_scene s;
    mr_error err = {0};
    assert_int_equal(mr_read_file(paths[i], &text, &len, &err), MR_OK);
    /* as the harness parses: relative paths against scenes/, where the seeds' targets live */
    if (mr_scene_parse(text, paths[i], "scenes", &s, &err)) fail_msg("%s", err.msg);
    mr_scene_free(&s);
    free(text);
  }
}

static void test_urdf_seeds(void **state) {
  static char paths[16][256];
  int n = seeds("urdf", paths, 16);
  assert_true(n >= 7);
  for (int i = 0; i < n; ++i) {
    char *text = NULL;
    size_t len = 0;
    mr_error err = {0};
    assert_int_equal(mr_read_file(paths[i], &text, &len, &err), MR_OK);
    /* what the harness does: parse from memory, here without collision geometry */
    mr_urdf_options opt = mr_urdf_options_default();
    opt.collision = 0;
    mr_model *m = NULL;
    if (mr_urdf_parse(text, paths[i], &opt, &m, &err)) fail_msg("%s", err.msg);
    assert_true(m->nbodies > 1);
    mr_model_free(m);
    free(text);
  }
}

/* each mesh seed: the format byte, then the file; parsed from memory and from a file with the
 * same bytes, the meshes agree exactly (same code path after the read) */
static void test_mesh_seeds(void **state) {
  static char paths[8][256];
  int n = seeds("mesh", paths, 8);
  assert_int_equal(n, 3);
  for (int i = 0; i < n; ++i) {
    char *data = NULL;
    size_t len = 0;
    mr_error err = {0};
    assert_int_equal(mr_read_file(paths[i], &data, &len, &err), MR_OK);
    const char *ext = data[0] & 1 ? ".obj" : ".stl";
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/moreau_seed_XXXXXX%s", ext);
    int fd = mkstemps(tmp, 4);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data + 1, len - 1), (ssize_t)(len - 1));
    close(fd);
    mr_mesh *a = mr_mesh_parse(data + 1, len - 1, ext, mr_v3(2, 2, 2), NULL, &err);
    if (!a) fail_msg("%s: %s", paths[i], err.msg);
    mr_mesh *b = mr_mesh_load(tmp, mr_v3(2, 2, 2), NULL, &err);
    if (!b) fail_msg("%s: %s", tmp, err.msg);
    assert_int_equal(a->nvert, b->nvert);
    assert_int_equal(a->nface, b->nface);
    assert_true(a->volume == b->volume && a->hull_volume == b->hull_volume);
    /* the unit cube scaled by 2 holds 8 m³, the unit tetrahedron 8/6: exact in binary up to
     * the hull's summation order, so 1e-12 */
    assert_near(a->hull_volume, strstr(paths[i], "tetra") ? 8.0 / 6.0 : 8.0, 1e-12);
    mr_mesh_free(a), mr_mesh_free(b);
    remove(tmp);
    free(data);
  }
}

static void test_problem_seeds(void **state) {
  static char paths[16][256];
  int n = seeds("problem", paths, 16);
  assert_true(n >= 9);
  for (int i = 0; i < n; ++i) {
    mr_problem_file f;
    mr_error err = {0};
    if (mr_problem_file_load(paths[i], &f, &err)) fail_msg("%s", err.msg);
    assert_true(f.problem.nc > 0);
    mr_problem_file_free(&f);
  }
}

/* the QPCC reader is the command's: each seed solves to its optimum (exit 0) */
static void test_qpcc_seeds(void **state) {
  static char paths[8][256];
  int n = seeds("qpcc", paths, 8);
  assert_true(n >= 2);
  for (int i = 0; i < n; ++i) {
    char args[300], out[OUT];
    snprintf(args, sizeof args, "qpcc %.256s", paths[i]);
    int code = cli_run(args, 1, out, sizeof out);
    if (code != 0) fail_msg("'moreau %s': exit %d: %s", args, code, out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scene_seeds), cmocka_unit_test(test_urdf_seeds),
      cmocka_unit_test(test_mesh_seeds),  cmocka_unit_test(test_problem_seeds),
      cmocka_unit_test(test_qpcc_seeds),
  };
  return cmocka_run_group_tests_name("fuzz_corpus", tests, NULL, NULL);
}
