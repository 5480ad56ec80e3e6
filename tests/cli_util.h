/* Running the moreau command from a test: its path comes from MOREAU_BIN (set by make test). */
#ifndef MOREAU_TEST_CLI_UTIL_H
#define MOREAU_TEST_CLI_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* the moreau binary; fails the test when MOREAU_BIN is not set */
static inline const char *cli_bin(void) {
  const char *b = getenv("MOREAU_BIN");
  if (!b) fail_msg("MOREAU_BIN is not set (run the tests with make test)");
  return b;
}

/* run "moreau ARGS" through the shell; out (size bytes) gets stdout, and stderr too when
 * with_stderr; returns the exit code (-1 when the process did not exit normally) */
/* run a shell command line; out (size bytes) gets its stdout; returns the exit code (-1 when the
 * process did not exit normally) */
static inline int cli_shell(const char *cmd, char *out, size_t size) {
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int cli_run(const char *args, int with_stderr, char *out, size_t size) {
  char cmd[9500];
  snprintf(cmd, sizeof cmd, "'%s' %s %s", cli_bin(), args, with_stderr ? "2>&1" : "2>/dev/null");
  return cli_shell(cmd, out, size);
}

/* write text to a new temporary file whose name ends with suffix (e.g. ".yaml"); its path goes
 * to path (64 bytes) */
static inline void cli_write_temp(const char *text, const char *suffix, char path[64]) {
  snprintf(path, 64, "/tmp/moreau_test_XXXXXX%s", suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* the path /tmp/moreau_PID_name into buf (128 bytes): private to this process, so that two runs
 * of the suite at once (a mutation run beside make test) never share an output file */
static inline const char *cli_tmp(char buf[128], const char *name) {
  snprintf(buf, 128, "/tmp/moreau_%ld_%s", (long)getpid(), name);
  return buf;
}

#endif
