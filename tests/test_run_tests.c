/* The test runner of make test (tools/run_tests.sh) on programs written here: two at a time, one
 * line per program, the whole output of the failing ones and none of the passing ones', the
 * closing line "programs: N passed, M failed" that CI reads, and the exit status; a program that
 * cannot start counts as failed. */
#include "test_util.h"

#include "cli_util.h"

#include <string.h>
#include <sys/wait.h>

static void test_runner(void **state) {
  char dir[] = "/tmp/moreau_runner_XXXXXX", cmd[1024];
  static char out[1 << 16];
  assert_non_null(mkdtemp(dir));
  snprintf(cmd, sizeof cmd,
           "printf 'ok_one\\techo quiet-pass\\nbad_one\\techo loud-failure; exit 3\\n"
           "ok_two\\ttrue\\nmissing\\t/nonexistent/program\\n' | tools/run_tests.sh 2 %s 2>&1",
           dir);
  int rc = cli_shell(cmd, out, sizeof out);
  assert_int_equal(rc, 1);
  const char *lines[] = {"ok_one", "ok_two", "bad_one", "missing"};
  for (int k = 0; k < 4; ++k) {
    const char *at = strstr(out, lines[k]);
    if (!at) fail_msg("no line for %s:\n%s", lines[k], out);
    assert_non_null(strstr(at, k < 2 ? "passed" : "FAILED"));
  }
  assert_non_null(strstr(out, "loud-failure"));     /* a failing program's output, in full */
  assert_null(strstr(out, "quiet-pass"));           /* a passing one's stays in its log */
  assert_non_null(strstr(out, "failed programs:")); /* then the names */
  const char *last = strstr(out, "programs: 2 passed, 2 failed\n");
  if (!last || last[strlen("programs: 2 passed, 2 failed\n")] != '\0')
    fail_msg("the output does not end with the totals:\n%s", out);
  /* every program passing: exit 0 and the same closing line */
  snprintf(cmd, sizeof cmd, "printf 'a\\ttrue\\nb\\ttrue\\n' | tools/run_tests.sh 2 %s 2>&1", dir);
  assert_int_equal(cli_shell(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "programs: 2 passed, 0 failed"));
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_runner)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
