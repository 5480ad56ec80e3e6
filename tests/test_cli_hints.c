/* The command line names what was meant: the version, a mistyped command, solver or setting key
 * refused before anything runs with the closest name and the known ones (sweep --grid
 * included: no run, no output), and run --html taking --fps as view does. */
#include "test_util.h"

#include "cli_util.h"

#include <string.h>
#include <sys/stat.h>

#include "moreau/version.h"

static char out[1 << 16];

/* "moreau ARGS" exits with code and its output (stdout and stderr) holds every needle */
static void expect(const char *args, int code, const char *n1, const char *n2) {
  int rc = cli_run(args, 1, out, sizeof out);
  if (rc != code || !strstr(out, n1) || (n2 && !strstr(out, n2)))
    fail_msg("moreau %s: exit %d (expected %d), output:\n%s", args, rc, code, out);
}

/* --version, -V and version print the version of the headers the library was built with */
static void test_version(void **state) {
  char want[64];
  snprintf(want, sizeof want, "moreau %s\n", MR_VERSION_STRING);
  const char *forms[] = {"--version", "-V", "version"};
  for (int k = 0; k < 3; ++k) {
    assert_int_equal(cli_run(forms[k], 0, out, sizeof out), 0);
    assert_string_equal(out, want);
  }
  expect("rnu scenes/minimal.yaml", 2, "unknown command 'rnu': did you mean 'run'?", NULL);
}

/* an unknown solver, wherever a solver is named: the closest and the list, exit 2 */
static void test_unknown_solver(void **state) {
  const char *cases[] = {
      "run scenes/minimal.yaml --solver ncp-pg",
      "view scenes/minimal.yaml --solver ncp-pg -o /dev/null",
      "compare scenes/minimal.yaml --solvers ccp-admm,ncp-pg",
      "sweep scenes/minimal.yaml --grid contact.margin=0.001 --solvers ncp-pg --out /nonexistent",
      "derivatives scenes/minimal.yaml --time 0.01 --solver ncp-pg",
      "solve tests/fixtures/contactbench/sliding_cube.json --solver ncp-pg",
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    expect(cases[k], 2, "unknown solver 'ncp-pg': did you mean 'ncp-pgs'?",
           "(known: lcp-pgs, ccp-pgs,");
  expect("run scenes/minimal.yaml --solver zzzzzzzz", 2, "unknown solver 'zzzzzzzz' (known:", NULL);
}

/* --set and --grid keys: the closest key, and the list of keys */
static void test_unknown_key(void **state) {
  expect("run scenes/minimal.yaml --set solver.maxiter=10", 2,
         "--set: unknown key 'solver.maxiter': did you mean 'solver.max_iter'?",
         "(keys: solver.{max_iter, eps_abs,");
  expect("compare scenes/minimal.yaml --set contact.margn=0.01", 2,
         "did you mean 'contact.margin'?", "contact.restitution_threshold");
  expect("run scenes/minimal.yaml --set gravity=1", 2, "--set: unknown key 'gravity' (keys:", NULL);
  /* sweep: refused up front, before any scene is loaded or run: no directory is made */
  char dir[128], args[512];
  cli_tmp(dir, "sweep_typo");
  snprintf(args, sizeof args, "sweep scenes/minimal.yaml --grid solver.max_itr=10,20 --out %s",
           dir);
  expect(args, 2, "--grid: unknown key 'solver.max_itr': did you mean 'solver.max_iter'?",
         "timestep, duration");
  struct stat st;
  assert_int_equal(stat(dir, &st), -1);
  snprintf(args, sizeof args, "sweep scenes/minimal.yaml --grid timestpe=0.001 --out %s", dir);
  expect(args, 2, "did you mean 'timestep'?", NULL);
}

/* the "nframes" of the first run of a replay page */
static long page_frames(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("no page %s", path);
  static char page[1 << 22];
  size_t n = fread(page, 1, sizeof page - 1, f);
  page[n] = '\0';
  fclose(f);
  const char *at = strstr(page, "\"nframes\":");
  if (!at) fail_msg("%s has no nframes", path);
  return strtol(at + 10, NULL, 10);
}

/* run --html --fps N records what view --fps N does: 0.5 s at 10 frames per second is the
 * initial frame and 5 more; the default is 60 (31 frames) */
static void test_run_html_fps(void **state) {
  char a[128], b[128], c[128], args[512];
  cli_tmp(a, "fps_run.html"), cli_tmp(b, "fps_view.html"), cli_tmp(c, "fps_default.html");
  snprintf(args, sizeof args, "run scenes/minimal.yaml --quiet --html %s --fps 10", a);
  expect(args, 0, "replay written", NULL);
  snprintf(args, sizeof args, "view scenes/minimal.yaml --fps 10 -o %s", b);
  expect(args, 0, "replay written", NULL);
  snprintf(args, sizeof args, "run scenes/minimal.yaml --quiet --html %s", c);
  expect(args, 0, "replay written", NULL);
  assert_int_equal(page_frames(a), 6);
  assert_int_equal(page_frames(b), 6);
  assert_int_equal(page_frames(c), 31);
  remove(a), remove(b), remove(c);
  expect("run scenes/minimal.yaml --fps 10", 2, "--fps goes with --html", NULL);
  expect("run scenes/minimal.yaml --html /dev/null --fps -1", 2, "--fps needs a non-negative",
         NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_unknown_solver),
      cmocka_unit_test(test_unknown_key),
      cmocka_unit_test(test_run_html_fps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
