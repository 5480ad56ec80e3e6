/* Installing moreau and building programs against it, as a user outside the tree would.
 *
 * - `make install PREFIX=P` (a private prefix, as `$HOME/.local`): moreau.pc names P; the
 *   consumer (tests/consumer/consumer.c) compiles and links with nothing but
 *   `pkg-config --cflags --libs moreau`, and against the archive with the flags of
 *   `pkg-config --static --libs moreau` (Requires.private: assimp, jansson, ...); the CMake
 *   project tests/consumer finds the package (find_package(moreau): moreau::moreau and
 *   moreau::moreau_static); examples/solo_stand_up.c stands Solo-12 up against the installed
 *   shared library, whose soname is versioned.
 * - `make install DESTDIR=D PREFIX=/opt/moreau` (staging, as packagers do): the files land under
 *   D/opt/moreau and moreau.pc names /opt/moreau, not the previous install's prefix; pkg-config
 *   with PKG_CONFIG_SYSROOT_DIR=D and CMake with CMAKE_PREFIX_PATH=D/opt/moreau (the package
 *   files find their prefix from where they are) build the consumer against the staged tree.
 *
 * Every consumer steps the A1 free fall (scenes/a1_free_fall.yaml) 100 steps of 1 ms: semi-implicit
 * Euler gives z = 10 - g dt² N (N + 1) / 2 = 9.9504595 m, each step rounding z once (N ulp of 10).
 */
#include "test_util.h"

#include <float.h>
#include <string.h>
#include <unistd.h>

#include "moreau/version.h"

#ifndef MR_TEST_LINK_FLAGS
#define MR_TEST_LINK_FLAGS ""
#endif

#define STEPS 100

static char tmp[64];

/* run a shell command; its standard output and error (at most len bytes) into out */
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

/* run, failing the test with the output when the command fails */
static void must(const char *cmd) {
  static char out[1 << 16];
  if (run(cmd, out, sizeof out)) fail_msg("%s failed:\n%s", cmd, out);
}

/* the build directory: that of the moreau binary the suite runs (MOREAU_BIN) */
static void build_dir(char *dir, size_t len) {
  const char *bin = getenv("MOREAU_BIN");
  if (!bin) fail_msg("MOREAU_BIN is not set (make test sets it)");
  snprintf(dir, len, "%s", bin);
  char *slash = strrchr(dir, '/');
  if (!slash) fail_msg("MOREAU_BIN '%s' has no directory", bin);
  *slash = '\0';
}

/* the consumer program at path (with env before it) prints the version and the free fall */
static void check_consumer(const char *env, const char *path) {
  char cmd[4200], out[4096];
  snprintf(cmd, sizeof cmd, "%s %s scenes/a1_free_fall.yaml %d", env, path, STEPS);
  if (run(cmd, out, sizeof out)) fail_msg("%s:\n%s", cmd, out);
  char want[64];
  snprintf(want, sizeof want, "moreau %s: z = ", MR_VERSION_STRING);
  const char *at = strstr(out, want);
  if (!at) fail_msg("%s printed:\n%s", cmd, out);
  double z = strtod(at + strlen(want), NULL);
  assert_near(z, 10.0 - 9.81 * 1e-6 * STEPS * (STEPS + 1) / 2.0, STEPS * 2 * DBL_EPSILON * 10.0);
}

/* the first line of a file into out */
static void first_line(const char *path, char *out, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f || !fgets(out, (int)len, f)) fail_msg("cannot read %s", path);
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
}

/* the CMake project tests/consumer configured against root (CMAKE_PREFIX_PATH) into dir */
static void cmake_consumer(const char *root, const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd,
           "cmake -S tests/consumer -B %s -DCMAKE_PREFIX_PATH=%s "
           "-DCMAKE_EXE_LINKER_FLAGS='%s' && cmake --build %s",
           dir, root, MR_TEST_LINK_FLAGS, dir);
  must(cmd);
  snprintf(cmd, sizeof cmd, "%s/consumer", dir);
  check_consumer("", cmd);
  snprintf(cmd, sizeof cmd, "%s/consumer_static", dir);
  assert_int_equal(access(cmd, X_OK), 0); /* the archive's target exists (pkg-config found) */
  check_consumer("", cmd);
}

/* a private prefix: moreau.pc, pkg-config (shared and static), find_package, the example */
static void test_prefix_install(void **state) {
  char dir[512], cmd[8192], out[8192], prefix[128], line[512];
  build_dir(dir, sizeof dir);
  snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
  snprintf(cmd, sizeof cmd, "make -s --no-print-directory BUILD=%s PREFIX=%s install", dir, prefix);
  must(cmd);
  snprintf(cmd, sizeof cmd, "%s/lib/pkgconfig/moreau.pc", prefix);
  first_line(cmd, line, sizeof line);
  snprintf(out, sizeof out, "prefix=%s", prefix);
  assert_string_equal(line, out);
  /* the versioned soname, and the development and runtime links */
  snprintf(cmd, sizeof cmd, "readelf -d %s/lib/libmoreau.so.%s", prefix, MR_VERSION_STRING);
  run(cmd, out, sizeof out);
  snprintf(line, sizeof line, "Library soname: [libmoreau.so.%d]", MR_VERSION_MAJOR);
  assert_non_null(strstr(out, line));
  /* the command's version is the package's */
  snprintf(cmd, sizeof cmd, "%s/bin/moreau --version", prefix);
  run(cmd, out, sizeof out);
  snprintf(line, sizeof line, "moreau %s\n", MR_VERSION_STRING);
  assert_string_equal(out, line);
  /* pkg-config alone: the shared library (found at run time through the prefix) */
  const char *pc = "PKG_CONFIG_PATH=";
  snprintf(cmd, sizeof cmd,
           "cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 tests/consumer/consumer.c "
           "$(%s%s/lib/pkgconfig pkg-config --cflags --libs moreau) %s -o %s/consumer",
           pc, prefix, MR_TEST_LINK_FLAGS, tmp);
  must(cmd);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s/lib", prefix);
  snprintf(out, sizeof out, "%s/consumer", tmp);
  check_consumer(cmd, out);
  /* against the archive: its dependencies come from Requires.private and Libs.private */
  snprintf(cmd, sizeof cmd, "%s%s/lib/pkgconfig pkg-config --static --libs moreau", pc, prefix);
  run(cmd, out, sizeof out);
  assert_non_null(strstr(out, "-lassimp"));
  assert_non_null(strstr(out, "-ljansson"));
  assert_non_null(strstr(out, "-lcholmod"));
  snprintf(cmd, sizeof cmd,
           "cc -std=c11 -O2 tests/consumer/consumer.c $(%s%s/lib/pkgconfig pkg-config --cflags "
           "moreau) %s/lib/libmoreau.a $(%s%s/lib/pkgconfig pkg-config --static --libs moreau | "
           "sed 's/-lmoreau //') %s -o %s/consumer_static",
           pc, prefix, prefix, pc, prefix, MR_TEST_LINK_FLAGS, tmp);
  must(cmd);
  snprintf(cmd, sizeof cmd, "readelf -d %s/consumer_static", tmp);
  run(cmd, out, sizeof out);
  assert_null(strstr(out, "libmoreau.so"));
  snprintf(out, sizeof out, "%s/consumer_static", tmp);
  check_consumer("", out);
  /* find_package(moreau) */
  snprintf(cmd, sizeof cmd, "%s/cmake-consumer", tmp);
  cmake_consumer(prefix, cmd);
  /* the example of docs/tutorial.md stands the robot back up */
  snprintf(cmd, sizeof cmd,
           "cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 examples/solo_stand_up.c "
           "$(%s%s/lib/pkgconfig pkg-config --cflags --libs moreau) %s -o %s/solo_stand_up",
           pc, prefix, MR_TEST_LINK_FLAGS, tmp);
  must(cmd);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s/lib %s/solo_stand_up scenes/solo_stand.yaml 2.5",
           prefix, tmp);
  int rc = run(cmd, out, sizeof out);
  if (rc || !strstr(out, "stood")) fail_msg("%s: status %d\n%s", cmd, rc, out);
}

/* staging: DESTDIR=D PREFIX=/opt/moreau, built against with a sysroot and with CMake */
static void test_destdir_staging(void **state) {
  char dir[512], cmd[8192], out[8192], stage[128], line[512];
  build_dir(dir, sizeof dir);
  snprintf(stage, sizeof stage, "%s/stage", tmp);
  snprintf(cmd, sizeof cmd,
           "make -s --no-print-directory BUILD=%s DESTDIR=%s PREFIX=/opt/moreau install", dir,
           stage);
  must(cmd);
  snprintf(cmd, sizeof cmd, "%s/opt/moreau/lib/pkgconfig/moreau.pc", stage);
  first_line(cmd, line, sizeof line);
  assert_string_equal(line, "prefix=/opt/moreau");
  const char *files[] = {"include/moreau/moreau.h",
                         "include/moreau/version.h",
                         "lib/libmoreau.a",
                         "lib/libmoreau.so",
                         "bin/moreau",
                         "lib/cmake/moreau/moreauConfig.cmake",
                         "lib/cmake/moreau/moreauConfigVersion.cmake"};
  for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
    snprintf(cmd, sizeof cmd, "%s/opt/moreau/%s", stage, files[k]);
    if (access(cmd, R_OK)) fail_msg("%s is missing", cmd);
  }
  /* pkg-config sees the staged tree through the sysroot */
  snprintf(cmd, sizeof cmd,
           "cc -std=c11 -O2 tests/consumer/consumer.c $(PKG_CONFIG_SYSROOT_DIR=%s "
           "PKG_CONFIG_PATH=%s/opt/moreau/lib/pkgconfig pkg-config --cflags --libs moreau) %s "
           "-o %s/consumer_staged",
           stage, stage, MR_TEST_LINK_FLAGS, tmp);
  must(cmd);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s/opt/moreau/lib", stage);
  snprintf(out, sizeof out, "%s/consumer_staged", tmp);
  check_consumer(cmd, out);
  /* find_package on the staged tree: the package's paths are relative to its files */
  snprintf(cmd, sizeof cmd, "%s/opt/moreau", stage);
  snprintf(out, sizeof out, "%s/cmake-consumer-staged", tmp);
  cmake_consumer(cmd, out);
}

static int setup(void **state) {
  snprintf(tmp, sizeof tmp, "/tmp/moreau_install_XXXXXX");
  return mkdtemp(tmp) ? 0 : -1;
}

static int cleanup(void **state) {
  char cmd[128];
  if (tmp[0]) snprintf(cmd, sizeof cmd, "rm -rf %s", tmp), run(cmd, NULL, 0);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prefix_install),
      cmocka_unit_test(test_destdir_staging),
  };
  return cmocka_run_group_tests(tests, setup, cleanup);
}
