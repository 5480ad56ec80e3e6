/* The test runner of make test (tools/run_tests.sh) on programs written here: two at a time, one
 * line per program, the whole output of the failing ones and none of the passing ones', the
 * closing line "programs: N passed, M failed" that CI reads, and the exit status; a program that
 * cannot start counts as failed. The mutation run's list check (tools/mutants.py --check): rows
 * whose text is absent, doubled, or in a missing file stop it, each named. */
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

/* a list of one applying row and four that do not: exit status 2, each bad row named with its
 * count, the applying one not */
static void test_mutants_check(void **state) {
  char path[64], cmd[256];
  static char out[1 << 14];
  cli_write_temp("# id\tfile\told\tnew\twhat\n"
                 "good\tsrc/integrate/step.c\ts->t += s->ctx.dt;\ts->t -= s->ctx.dt;\tok\n"
                 "gone\tsrc/integrate/step.c\tno such line at all;\tx\tstale\n"
                 "twice\tsrc/dynamics/ldlt.c\tif (!(Dk > 0.0))\tif (1)\tdoubled\n"
                 "nofile\tsrc/no_such_file.c\tx\ty\tmissing\n"
                 "good\tsrc/integrate/step.c\ts->t += s->ctx.dt;\ts->t -= s->ctx.dt;\tagain\n",
                 ".tsv", path);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 tools/mutants.py --check --list %s 2>&1", path);
  assert_int_equal(cli_shell(cmd, out, sizeof out), 2);
  const char *want[] = {"row gone: its text occurs 0 times in src/integrate/step.c",
                        "row twice: its text occurs 2 times in src/dynamics/ldlt.c",
                        "row nofile: src/no_such_file.c does not exist",
                        "row good: the id is used twice", "4 row(s) do not apply"};
  for (int k = 0; k < 5; ++k)
    if (!strstr(out, want[k])) fail_msg("no \"%s\" in:\n%s", want[k], out);
  remove(path);
  /* the list of the repository applies */
  assert_int_equal(cli_shell("/usr/bin/python3 tools/mutants.py --check 2>&1", out, sizeof out), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_runner),
                                     cmocka_unit_test(test_mutants_check)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
