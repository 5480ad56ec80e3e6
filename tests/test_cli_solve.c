/* The 'moreau solve' command, run as a process (the binary from MOREAU_BIN, default
 * build/moreau) on problems written to temporary files: JSON output, --list, --help and the
 * exit codes of bad input (2). */
#include "test_util.h"

#include "cli_util.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "moreau/contact.h"

/* sliding on G = I, μ = 0.5, g = (1, 0, −1): the NCP solution is λ = (−0.5, 0, 1), c = (0.5, 0, 0)
 */
static const char *problem_text =
    "{\"nc\": 1, \"G\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"g\": [1, 0, -1], \"mu\": [0.5]}\n";

static char problem_path[64], bad_path[64];

/* write text to a fresh temporary file named into path */
static void write_temp(char *path, size_t size, const char *text) {
  snprintf(path, size, "/tmp/moreau_cli_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

static int setup(void **state) {
  write_temp(problem_path, sizeof problem_path, problem_text);
  write_temp(bad_path, sizeof bad_path,
             "{\"nc\": 1,\n \"G\": [[1, 0, 0],\n [0, 1, 0],\n [0.5, 0, 1]],\n \"g\": [1, 0, -1], "
             "\"mu\": [0.5]}\n");
  return 0;
}

static int teardown(void **state) {
  remove(problem_path);
  remove(bad_path);
  return 0;
}

static int run(const char *args, int with_stderr, char *out, size_t size) {
  return cli_run(args, with_stderr, out, size);
}

/* --json prints one object with the documented keys; λ and c are the known solution */
static void test_json_output(void **state) {
  char args[256], out[8192];
  snprintf(args, sizeof args, "solve %s --solver ncp-pgs --json", problem_path);
  assert_int_equal(run(args, 0, out, sizeof out), 0);
  mr_json *root = NULL;
  mr_error err;
  assert_int_equal(mr_json_parse(out, "stdout", &root, &err), MR_OK);
  const char *keys[] = {"solver",  "converged", "iterations", "lambda", "c",
                        "eps_abs", "eps_p",     "eps_d",      "eps_c",  "time_us"};
  for (int k = 0; k < 10; ++k)
    if (!mr_json_get(root, keys[k])) fail_msg("missing key %s in %s", keys[k], out);
  assert_string_equal(mr_json_get(root, "solver")->string, "ncp-pgs");
  assert_int_equal(mr_json_get(root, "converged")->type, MR_JSON_BOOL);
  assert_true(mr_json_get(root, "converged")->number == 1.0);
  double lambda[3], c[3], lref[3] = {-0.5, 0, 1}, cref[3] = {0.5, 0, 0};
  assert_int_equal(mr_json_read_vector(mr_json_get(root, "lambda"), "o", "lambda", lambda, 3, &err),
                   MR_OK);
  assert_int_equal(mr_json_read_vector(mr_json_get(root, "c"), "o", "c", c, 3, &err), MR_OK);
  /* ncp-pgs solves this decoupled contact in one sweep on halves and units, all exact in binary
   * (the tangential projection scales −1 by μ / |−1| = 0.5): λ, c and the criteria come out
   * exact, printed with 17 digits */
  assert_vec_near(lambda, lref, 3, 0);
  assert_vec_near(c, cref, 3, 0);
  assert_near(mr_json_get(root, "eps_abs")->number, 0.0, 0);
  mr_json_free(root);
}

/* the text output, and --max-iter / --eps-abs accepted */
static void test_text_output(void **state) {
  char args[256], out[8192];
  snprintf(args, sizeof args, "solve %s --solver raisim --max-iter 50 --eps-abs 1e-8",
           problem_path);
  assert_int_equal(run(args, 0, out, sizeof out), 0);
  assert_non_null(strstr(out, "solver raisim: converged"));
  assert_non_null(strstr(out, "eps_abs"));
}

/* --criterion: ccp-pgs meets its own CCP criterion at λ = Π_K(−1, 0, 1) = (−0.6, 0, 1.2), where
 * c = (0.4, 0, 0.2) and the NCP ε_c = ⟨λ, c + Γ(c)⟩ = −0.24 + 0.48 = 0.24 (contact at a distance);
 * under --criterion ncp the same solver is not converged, and says so */
static void test_criterion(void **state) {
  char args[256], out[8192];
  snprintf(args, sizeof args, "solve %s --solver ccp-pgs --criterion own", problem_path);
  assert_int_equal(run(args, 0, out, sizeof out), 0);
  assert_non_null(strstr(out, "solver ccp-pgs: converged on its own CCP criterion"));
  snprintf(args, sizeof args, "solve %s --solver ccp-pgs --criterion ncp --max-iter 20 --json",
           problem_path);
  assert_int_equal(run(args, 0, out, sizeof out), 0);
  mr_json *root = NULL;
  mr_error err;
  assert_int_equal(mr_json_parse(out, "stdout", &root, &err), MR_OK);
  assert_string_equal(mr_json_get(root, "criterion")->string, "ncp");
  assert_true(mr_json_get(root, "converged")->number == 0.0);
  /* one exact projection on halves and fifths: 1e-12 covers the decimal printing */
  assert_near(mr_json_get(root, "eps_abs")->number, 0.24, 1e-12);
  mr_json_free(root);
  snprintf(args, sizeof args, "solve %s --solver ccp-pgs --criterion ncp", problem_path);
  assert_int_equal(run(args, 0, out, sizeof out), 0);
  assert_non_null(strstr(out, "solver ccp-pgs: NOT converged on the NCP criterion"));
}

/* --list names every registered solver; --help exits 0 */
static void test_list_help(void **state) {
  char out[8192];
  assert_int_equal(run("solve --list", 0, out, sizeof out), 0);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = mr_solver_at(i);
    if (!strstr(out, info->name) || !strstr(out, info->description))
      fail_msg("--list misses %s:\n%s", info->name, out);
  }
  assert_int_equal(run("solve --help", 0, out, sizeof out), 0);
  assert_non_null(strstr(out, "--solver"));
}

/* bad input: exit 2 with a message on stderr */
static void expect_exit2(const char *args_fmt, const char *path, const char *needle) {
  char args[512], out[8192];
  snprintf(args, sizeof args, args_fmt, path);
  int code = run(args, 1, out, sizeof out);
  if (code != 2 || !strstr(out, needle))
    fail_msg("'moreau %s' exited %d with '%s' (wanted 2 and '%s')", args, code, out, needle);
}

static void test_errors(void **state) {
  expect_exit2("solve %s --solver ncp-pg", problem_path, "did you mean 'ncp-pgs'");
  expect_exit2("solve %s --solver rasim-ds", problem_path, "did you mean 'raisim-ds'");
  expect_exit2("solve %s --solver ncp-pgs", bad_path, "G[2][0] = 0.5");
  expect_exit2("solve %s --solver ncp-pgs", bad_path, ":4:3:"); /* line 4, column of 0.5 */
  expect_exit2("solve %s --solver ncp-pgs", "/nonexistent/problem.json", "/nonexistent");
  expect_exit2("solve %s --solver ncp-pgs --max-iter ten", problem_path, "bad value 'ten'");
  expect_exit2("solve %s --solver ncp-pgs --eps-abs -1", problem_path, "bad value '-1'");
  expect_exit2("solve %s --solver ncp-pgs --eps-abs nan", problem_path, "bad value 'nan'");
  expect_exit2("solve %s --solver ncp-pgs --criterion nc", problem_path,
               "bad value 'nc' for --criterion");
  expect_exit2("solve %s", problem_path, "need PROBLEM.json and --solver");
  expect_exit2("solve %s --solver", problem_path, "--solver needs a value");
  expect_exit2("solve %s --bogus", problem_path, "unexpected argument '--bogus'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_output), cmocka_unit_test(test_text_output),
      cmocka_unit_test(test_criterion),   cmocka_unit_test(test_list_help),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
