/* make install into a temporary DESTDIR, then the C example (examples/solo_stand_up.c) built
 * against the installed shared library with pkg-config, as a user outside the tree would, and
 * run: the soname is versioned, the program needs libmoreau.so.MAJOR, and it stands Solo-12 up. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#ifndef MR_TEST_LINK_FLAGS
#define MR_TEST_LINK_FLAGS ""
#endif

static char tmp[64];

/* run a shell command; its standard output (at most len bytes) into out when out is given */
static int run(const char *cmd, char *out, size_t len) {
  FILE *p = popen(cmd, "r");
  if (!p) fail_msg("cannot run: %s", cmd);
  size_t n = 0;
  char buf[4096];
  while (fgets(buf, sizeof buf, p))
    if (out && n + strlen(buf) < len) memcpy(out + n, buf, strlen(buf) + 1), n += strlen(buf);
  return pclose(p);
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

static void test_install_and_build_example(void **state) {
  char dir[512], cmd[4096], out[8192] = "";
  build_dir(dir, sizeof dir);
  snprintf(tmp, sizeof tmp, "/tmp/moreau_install_XXXXXX");
  if (!mkdtemp(tmp)) fail_msg("mkdtemp failed");
  snprintf(cmd, sizeof cmd,
           "make -s --no-print-directory BUILD=%s DESTDIR=%s PREFIX=/usr/local install 2>&1", dir,
           tmp);
  if (run(cmd, out, sizeof out)) fail_msg("%s failed:\n%s", cmd, out);
  /* the versioned soname, and the development and runtime links */
  snprintf(cmd, sizeof cmd, "readelf -d %s/usr/local/lib/libmoreau.so.0.1.0", tmp);
  run(cmd, out, sizeof out);
  assert_non_null(strstr(out, "Library soname: [libmoreau.so.0]"));
  snprintf(cmd, sizeof cmd, "%s/usr/local/lib/libmoreau.so.0", tmp);
  assert_int_equal(access(cmd, R_OK), 0);
  snprintf(cmd, sizeof cmd, "%s/usr/local/include/moreau/control.h", tmp);
  assert_int_equal(access(cmd, R_OK), 0);
  /* the pkg-config version is the installed command's */
  char version[256] = "", modversion[256] = "";
  snprintf(cmd, sizeof cmd, "%s/usr/local/bin/moreau version", tmp);
  run(cmd, version, sizeof version);
  snprintf(cmd, sizeof cmd,
           "PKG_CONFIG_PATH=%s/usr/local/lib/pkgconfig pkg-config --modversion moreau", tmp);
  run(cmd, modversion, sizeof modversion);
  modversion[strcspn(modversion, "\n")] = '\0';
  if (!modversion[0] || !strstr(version, modversion))
    fail_msg("moreau.pc version '%s', command: %s", modversion, version);
  /* compile and link the example with the installed pkg-config file (sysroot = DESTDIR) */
  snprintf(cmd, sizeof cmd,
           "cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 examples/solo_stand_up.c "
           "$(PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_PATH=%s/usr/local/lib/pkgconfig "
           "pkg-config --cflags --libs moreau) %s -lm -o %s/solo_stand_up 2>&1",
           tmp, tmp, MR_TEST_LINK_FLAGS, tmp);
  if (run(cmd, out, sizeof out)) fail_msg("%s failed:\n%s", cmd, out);
  snprintf(cmd, sizeof cmd, "readelf -d %s/solo_stand_up", tmp);
  run(cmd, out, sizeof out);
  assert_non_null(strstr(out, "Shared library: [libmoreau.so.0]"));
  /* run it against the installed library: it must stand the robot back up */
  snprintf(cmd, sizeof cmd,
           "LD_LIBRARY_PATH=%s/usr/local/lib %s/solo_stand_up scenes/solo_stand.yaml 2.5 2>&1", tmp,
           tmp);
  int rc = run(cmd, out, sizeof out);
  if (rc || !strstr(out, "stood")) fail_msg("%s: status %d\n%s", cmd, rc, out);
}

static int cleanup(void **state) {
  char cmd[128];
  if (tmp[0]) snprintf(cmd, sizeof cmd, "rm -rf %s", tmp), run(cmd, NULL, 0);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_install_and_build_example, cleanup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
