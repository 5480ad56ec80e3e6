/* The CMake build (CMakeLists.txt) beside the Makefile's, as a CMake user runs it: configured
 * and built in BUILD/cmake (kept between runs: a second run rebuilds what changed), warnings as
 * errors; the library (static and shared), the command and three test programs, run by ctest;
 * installed with `cmake --install --prefix P`, it writes the files `make install PREFIX=P`
 * writes (the same list, and the same moreau.pc and package files byte for byte); the consumer
 * project tests/consumer builds against it (find_package(moreau)) and steps the A1 free fall to
 * its closed form (tests/test_install.c); a command built as MOREAU_VIEWER=OFF refuses `view`
 * and --html with its message. Left out of make check (a second, sanitized CMake build would
 * test nothing more). */
#include "test_util.h"

#include <float.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "moreau/version.h"

/* the test programs ctest runs from the CMake build */
#define CTEST_PROGRAMS "test_core test_scene_urdf test_cli_hints"

static char tmp[64], dir[512];

/* run a shell command with its output (stdout and stderr, at most len bytes) into out */
static int run(const char *cmd, char *out, size_t len) {
  char full[8300];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) fail_msg("cannot run: %s", cmd);
  size_t n = out ? fread(out, 1, len - 1, p) : 0;
  if (out) out[n] = '\0';
  char sink[4096];
  while (fread(sink, 1, sizeof sink, p) > 0) {
  }
  return pclose(p);
}

static void must(const char *cmd) {
  static char out[1 << 17];
  if (run(cmd, out, sizeof out)) {
    size_t n = strlen(out);
    fail_msg("%s failed:\n%s", cmd, n > 6000 ? out + n - 6000 : out);
  }
}

/* BUILD: the directory of the moreau binary the suite runs (MOREAU_BIN) */
static int setup(void **state) {
  const char *bin = getenv("MOREAU_BIN");
  if (!bin || !strrchr(bin, '/')) return -1;
  snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(bin, '/') - bin), bin);
  snprintf(tmp, sizeof tmp, "/tmp/moreau_cmake_XXXXXX");
  return mkdtemp(tmp) ? 0 : -1;
}

static int cleanup(void **state) {
  char cmd[128];
  if (tmp[0]) snprintf(cmd, sizeof cmd, "rm -rf %s", tmp), run(cmd, NULL, 0);
  return 0;
}

/* configure, build, ctest */
static void test_cmake_build(void **state) {
  char cmd[8192];
  const char *shared = getenv("MOREAU_SHARED");
  snprintf(cmd, sizeof cmd,
           "cmake -S . -B %s/cmake -DCMAKE_BUILD_TYPE=Release -DMOREAU_WERROR=ON "
           "-DMOREAU_SHARED=%s",
           dir, shared ? shared : "../shared");
  must(cmd);
  snprintf(cmd, sizeof cmd,
           "cmake --build %s/cmake -j2 --target moreau moreau_static moreau_cli "
           "moreau_cli_noviewer " CTEST_PROGRAMS,
           dir);
  must(cmd);
  snprintf(cmd, sizeof cmd, "ctest --test-dir %s/cmake --output-on-failure -R '^(%s)$' | tail -40",
           dir, "test_core|test_scene_urdf|test_cli_hints");
  static char out[1 << 16];
  if (run(cmd, out, sizeof out) || !strstr(out, "100% tests passed, 0 tests failed out of 3"))
    fail_msg("%s:\n%s", cmd, out);
}

/* the file list of a tree, sorted, into out */
static void tree(const char *root, char *out, size_t len) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && find . | sort", root);
  if (run(cmd, out, len)) fail_msg("%s: %s", cmd, out);
}

/* cmake --install writes what make install writes */
static void test_cmake_install(void **state) {
  char cmd[8192], a[128], b[256];
  static char la[1 << 14], lb[1 << 14];
  snprintf(a, sizeof a, "%s/cmake-prefix", tmp);
  snprintf(cmd, sizeof cmd, "cmake --install %s/cmake --prefix %s", dir, a);
  must(cmd);
  snprintf(cmd, sizeof cmd,
           "make -s --no-print-directory BUILD=%s PREFIX=%s DESTDIR=%s/make install", dir, a, tmp);
  must(cmd);
  snprintf(b, sizeof b, "%s/make%s", tmp, a);
  tree(a, la, sizeof la);
  tree(b, lb, sizeof lb);
  assert_string_equal(la, lb);
  const char *same[] = {"lib/pkgconfig/moreau.pc", "lib/cmake/moreau/moreauConfig.cmake",
                        "lib/cmake/moreau/moreauConfigVersion.cmake"};
  for (int k = 0; k < 3; ++k) {
    snprintf(cmd, sizeof cmd, "cmp %s/%s %s/%s", a, same[k], b, same[k]);
    must(cmd);
  }
  snprintf(cmd, sizeof cmd, "%s/lib/pkgconfig/moreau.pc", a);
  FILE *f = fopen(cmd, "r");
  assert_non_null(f);
  char line[256] = "";
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  snprintf(cmd, sizeof cmd, "prefix=%s\n", a);
  assert_string_equal(line, cmd);
}

/* the consumer project against the CMake-installed tree */
static void test_cmake_consumer(void **state) {
  char cmd[8192], out[4096], want[64];
  snprintf(cmd, sizeof cmd,
           "cmake -S tests/consumer -B %s/consumer -DCMAKE_PREFIX_PATH=%s/cmake-prefix && "
           "cmake --build %s/consumer",
           tmp, tmp, tmp);
  must(cmd);
  const char *programs[] = {"consumer", "consumer_static"};
  for (int k = 0; k < 2; ++k) {
    snprintf(cmd, sizeof cmd, "%s/consumer/%s scenes/a1_free_fall.yaml 100", tmp, programs[k]);
    if (run(cmd, out, sizeof out)) fail_msg("%s:\n%s", cmd, out);
    snprintf(want, sizeof want, "moreau %s: z = ", MR_VERSION_STRING);
    const char *at = strstr(out, want);
    if (!at) fail_msg("%s printed:\n%s", cmd, out);
    /* z = 10 - g dt² N (N + 1) / 2, one rounding of z per step (N ulp of 10) */
    assert_near(strtod(at + strlen(want), NULL), 10.0 - 9.81 * 1e-6 * 100 * 101 / 2.0,
                100 * 2 * DBL_EPSILON * 10.0);
  }
}

/* without the viewer: view, run --html and compare --html refuse, saying why */
static void test_without_viewer(void **state) {
  char cmd[8192], out[4096];
  const char *args[] = {"view scenes/minimal.yaml", "run scenes/minimal.yaml --html /dev/null",
                        "compare scenes/minimal.yaml --solvers ncp-pgs --html /dev/null"};
  for (int k = 0; k < 3; ++k) {
    snprintf(cmd, sizeof cmd, "%s/cmake/moreau_cli_noviewer %s", dir, args[k]);
    int rc = run(cmd, out, sizeof out);
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 2 ||
        !strstr(out, "this moreau was built without the HTML viewer (CMake option "
                     "MOREAU_VIEWER=OFF"))
      fail_msg("%s: status %d\n%s", cmd, rc, out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cmake_build),
      cmocka_unit_test(test_cmake_install),
      cmocka_unit_test(test_cmake_consumer),
      cmocka_unit_test(test_without_viewer),
  };
  return cmocka_run_group_tests(tests, setup, cleanup);
}
