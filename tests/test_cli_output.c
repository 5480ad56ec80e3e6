/* moreau run's outputs as files: written whole or not at all, every write checked, SIGINT ends
 * with whole rows and a summary marked interrupted, identical paths refused, CSV fields quoted
 * per RFC 4180. Also the atomic output module (core/output.h) on its own. */
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "core/json.h"
#include "core/output.h"

#define OUT 65536

static const char falling_cube[] = "timestep: 0.001\n"
                                   "duration: 0.05\n"
                                   "bodies:\n"
                                   "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
                                   "  - name: cube\n"
                                   "    mass: 1.0\n"
                                   "    position: [0, 0, 0.1]\n"
                                   "    geoms: [{type: box, size: [0.2, 0.2, 0.2]}]\n";

/* a ball pushed by 1e9 N diverges at step 1 */
static const char diverging[] =
    "timestep: 0.001\nduration: 1.0\nbodies:\n"
    "  - {name: ball, mass: 1.0, geoms: [{type: sphere, radius: 0.1}]}\n"
    "forces:\n  - {body: ball, type: constant, force: [1.0e9, 0, 0]}\n";

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* the whole file in buf; returns its length */
static size_t read_file(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
  return n;
}

/* no temporary file of path is left in /tmp */
static void assert_no_temp(const char *path) {
  const char *name = strrchr(path, '/') + 1;
  char cmd[256], out[256];
  snprintf(cmd, sizeof cmd, "ls -a /tmp | grep -c '^\\.%s\\.' ", name);
  cli_shell(cmd, out, sizeof out);
  if (atoi(out) != 0) fail_msg("temporary files of %s left in /tmp", name);
}

/* a failed run leaves a pre-existing trajectory, contacts CSV and summary byte for byte */
static void test_failed_run_keeps_files(void **state) {
  char scene[64], args[512], out[OUT], buf[256];
  cli_write_temp(diverging, ".yaml", scene);
  char csvb[128], conb[128], sumb[128];
  const char *csv = cli_tmp(csvb, "keep.csv"), *con = cli_tmp(conb, "keep_c.csv");
  const char *sum = cli_tmp(sumb, "keep.json");
  write_file(csv, "precious trajectory\n");
  write_file(con, "precious contacts\n");
  write_file(sum, "precious summary\n");
  snprintf(args, sizeof args, "run %s --out %s --contacts %s --summary %s --quiet", scene, csv, con,
           sum);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 1);
  assert_non_null(strstr(out, "diverged"));
  read_file(csv, buf, sizeof buf);
  assert_string_equal(buf, "precious trajectory\n");
  read_file(con, buf, sizeof buf);
  assert_string_equal(buf, "precious contacts\n");
  read_file(sum, buf, sizeof buf);
  assert_string_equal(buf, "precious summary\n");
  assert_no_temp(csv);
  assert_no_temp(con);
  remove(csv), remove(con), remove(sum), remove(scene);
}

/* an output that is not a regular file (a FIFO here, /dev/null alike) is written in place and
 * never removed, even by a failed run */
static void test_fifo_output_kept(void **state) {
  char scene[64], args[700], out[OUT];
  cli_write_temp(diverging, ".yaml", scene);
  char fifob[128];
  const char *fifo = cli_tmp(fifob, "fifo");
  remove(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  /* a reader drains the FIFO so that the writer's open does not block */
  snprintf(args, sizeof args, "run %s --out %s --quiet 2>/dev/null & cat %s > /dev/null; wait $!",
           scene, fifo, fifo);
  int code = cli_run(args, 1, out, sizeof out);
  assert_int_equal(code, 1);
  struct stat st;
  assert_int_equal(lstat(fifo, &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  remove(fifo), remove(scene);
}

/* /dev/full as an output: exit 1 and a message naming it, for the trajectory, the contacts CSV,
 * the summary, and standard output */
static void test_write_errors(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp(falling_cube, ".yaml", scene);
  const char *opts[] = {"--out", "--contacts", "--summary"};
  for (int k = 0; k < 3; ++k) {
    snprintf(args, sizeof args, "run %s %s /dev/full --quiet", scene, opts[k]);
    int code = cli_run(args, 1, out, sizeof out);
    if (code != 1 || !strstr(out, "/dev/full: cannot write: No space left on device"))
      fail_msg("'moreau %s': exit %d, output: %s", args, code, out);
  }
  /* the trajectory is not put in place when the summary fails */
  char csvb[128], errb[128];
  const char *csv = cli_tmp(csvb, "wr.csv");
  remove(csv);
  snprintf(args, sizeof args, "run %s --out %s --summary /dev/full --quiet", scene, csv);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 1);
  assert_int_equal(access(csv, F_OK), -1);
  assert_no_temp(csv);
  /* standard output on /dev/full, standard error into a file */
  const char *cmds[] = {"run %s", "list", "collide %s"};
  const char *err = cli_tmp(errb, "wr.err");
  for (int k = 0; k < 3; ++k) {
    char cmd[700];
    snprintf(args, sizeof args, cmds[k], scene);
    snprintf(cmd, sizeof cmd, "'%s' %s > /dev/full 2> %s", cli_bin(), args, err);
    int status = system(cmd);
    read_file(err, out, sizeof out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
        !strstr(out, "cannot write standard output: No space left on device"))
      fail_msg("'moreau %s > /dev/full': status %d, stderr: %s", args, status, out);
  }
  remove(err);
  remove(scene);
}

/* the same file twice among the scene and the outputs: refused before running, nothing written */
static void test_identical_paths(void **state) {
  char scene[64], args[512], out[OUT], before[OUT], after[OUT];
  cli_write_temp(falling_cube, ".yaml", scene);
  read_file(scene, before, sizeof before);
  char xb[128];
  const char *x = cli_tmp(xb, "same.csv");
  remove(x);
  const char *cases[][2] = {
      {"--out %s --contacts /tmp/..%s", "are the same file"}, /* /tmp/../tmp/moreau_... */
      {"--out %s --summary %s", "are the same file"},
      {"--contacts %s --summary %s", "are the same file"},
  };
  for (int k = 0; k < 3; ++k) {
    char opts[256];
    snprintf(opts, sizeof opts, cases[k][0], x, x);
    snprintf(args, sizeof args, "run %s %s --quiet", scene, opts);
    int code = cli_run(args, 1, out, sizeof out);
    if (code != 2 || !strstr(out, cases[k][1]))
      fail_msg("'moreau %s': exit %d, output: %s", args, code, out);
    assert_int_equal(access(x, F_OK), -1);
  }
  /* the scene itself as an output */
  snprintf(args, sizeof args, "run %s --out %s --quiet", scene, scene);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "the scene and the trajectory (--out) are the same file"));
  read_file(scene, after, sizeof after);
  assert_string_equal(before, after);
  /* /dev/null twice is fine: nothing is kept */
  snprintf(args, sizeof args, "run %s --out /dev/null --contacts /dev/null --quiet", scene);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  remove(scene);
}

/* split one CSV record per RFC 4180 into fields (quoted fields may hold commas, doubled quotes
 * and line breaks); returns the number of fields and advances *p past the record */
static int csv_record(const char **p, char fields[][128], int max) {
  int n = 0;
  const char *s = *p;
  for (;;) {
    char *f = fields[n];
    size_t k = 0;
    if (*s == '"') {
      for (++s; *s && !(*s == '"' && s[1] != '"'); ++s) {
        if (*s == '"') ++s;
        if (k < 127) f[k++] = *s;
      }
      if (*s == '"') ++s;
    } else {
      for (; *s && *s != ',' && *s != '\n'; ++s)
        if (k < 127) f[k++] = *s;
    }
    f[k] = '\0';
    if (++n == max || *s != ',') break;
    ++s;
  }
  if (*s == '\n') ++s;
  *p = s;
  return n;
}

/* geometry names with a comma, a quote and a line break come back whole from the contacts CSV,
 * and a body name with a comma and quotes from the trajectory's header */
static void test_csv_quoting(void **state) {
  char scene[64], args[512], out[OUT];
  static char text[1 << 20];
  cli_write_temp("timestep: 0.001\nduration: 0.003\nbodies:\n"
                 "  - {name: ground, fixed: true, geoms: [{type: halfspace, "
                 "name: \"floor, \\\"main\\\"\\nlevel\"}]}\n"
                 "  - name: \"cube, \\\"one\\\"\"\n    mass: 1.0\n    position: [0, 0, 0.1]\n"
                 "    geoms: [{type: box, size: [0.2, 0.2, 0.2], name: \"plain\"}]\n",
                 ".yaml", scene);
  char csvb[128], trajb[128];
  const char *csv = cli_tmp(csvb, "quote.csv"), *traj = cli_tmp(trajb, "quote_t.csv");
  snprintf(args, sizeof args, "run %s --contacts %s --out %s --quiet", scene, csv, traj);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  read_file(csv, text, sizeof text);
  const char *p = text;
  char fields[32][128];
  assert_int_equal(csv_record(&p, fields, 32), 17);
  int rows = 0;
  while (*p) {
    assert_int_equal(csv_record(&p, fields, 32), 17);
    assert_string_equal(fields[2], "plain");
    assert_string_equal(fields[3], "floor, \"main\"\nlevel");
    ++rows;
  }
  /* one row per contact: the trajectory's ncontacts column summed over the steps */
  read_file(traj, text, sizeof text);
  p = text;
  int n = csv_record(&p, fields, 32), col = -1, total = 0;
  for (int k = 0; k < n; ++k)
    if (!strcmp(fields[k], "ncontacts")) col = k;
  assert_true(col >= 0);
  /* the header names the body's free joint whole: t, then its 7 q and 6 v columns */
  assert_string_equal(fields[1], "cube, \"one\"/root_joint_x");
  assert_string_equal(fields[13], "cube, \"one\"/root_joint_wz");
  while (*p) {
    assert_int_equal(csv_record(&p, fields, 32), n);
    total += atoi(fields[col]);
  }
  assert_true(total > 0);
  assert_int_equal(rows, total);
  remove(csv), remove(traj), remove(scene);
}

/* count the lines of a file and check that each has the header's number of fields */
static int whole_rows(const char *path) {
  static char line[1 << 16];
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int rows = -1, cols = -1;
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    if (!n || line[n - 1] != '\n') fail_msg("%s: row %d is cut: %s", path, rows + 1, line);
    int c = 1;
    for (const char *s = line; *s; ++s)
      c += *s == ',';
    if (cols < 0) cols = c;
    if (c != cols) fail_msg("%s: row %d has %d fields, the header %d", path, rows + 1, c, cols);
    ++rows;
  }
  fclose(f);
  return rows;
}

/* SIGINT during a long run: exit 130, the trajectory holds whole rows, one per step done, and
 * the summary says interrupted with that step count */
static void test_sigint(void **state) {
  char scene[64];
  cli_write_temp("timestep: 0.001\nduration: 1000.0\nbodies:\n"
                 "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
                 "  - {name: ball, mass: 1.0, position: [0, 0, 0.1],"
                 " geoms: [{type: sphere, radius: 0.1}]}\n",
                 ".yaml", scene);
  char csvb[128], sumb[128];
  const char *csv = cli_tmp(csvb, "int.csv"), *sum = cli_tmp(sumb, "int.json");
  remove(csv), remove(sum);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    execl(cli_bin(), "moreau", "run", scene, "--out", csv, "--summary", sum, "--quiet",
          (char *)NULL);
    _exit(127);
  }
  /* wait until the run has written rows into its temporary trajectory */
  char tmp[160];
  snprintf(tmp, sizeof tmp, "/tmp/.%s.%ld-0.tmp", strrchr(csv, '/') + 1, (long)pid);
  struct stat st;
  for (int k = 0; k < 2000 && !(stat(tmp, &st) == 0 && st.st_size > 0); ++k)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  assert_int_equal(kill(pid, SIGINT), 0);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status)) fail_msg("moreau run did not exit (status %d)", status);
  assert_int_equal(WEXITSTATUS(status), 130);
  int rows = whole_rows(csv);
  assert_true(rows > 0);
  mr_json *js = NULL;
  mr_error err;
  assert_int_equal(mr_json_load(sum, &js, &err), MR_OK);
  const mr_json *intr = mr_json_get(js, "interrupted");
  assert_non_null(intr);
  assert_int_equal(intr->type, MR_JSON_BOOL);
  assert_true(intr->number == 1.0);
  assert_int_equal((int)mr_json_get(js, "steps")->number, rows);
  mr_json_free(js);
  assert_no_temp(csv);
  remove(csv), remove(sum), remove(scene);
}

/* the module itself: commit replaces, discard keeps, a symbolic link is kept and its target
 * replaced, and the CSV quoting of each special character */
static void test_output_module(void **state) {
  char buf[256];
  char pathb[128], linkb[128];
  const char *path = cli_tmp(pathb, "mod.txt"), *link = cli_tmp(linkb, "mod_link");
  write_file(path, "old\n");
  mr_output o;
  mr_error err = {0};
  assert_int_equal(mr_output_open(&o, path, &err), MR_OK);
  fputs("new\n", o.f);
  read_file(path, buf, sizeof buf);
  assert_string_equal(buf, "old\n");
  mr_output_discard(&o);
  read_file(path, buf, sizeof buf);
  assert_string_equal(buf, "old\n");
  remove(link);
  assert_int_equal(symlink(path, link), 0);
  assert_int_equal(mr_output_open(&o, link, &err), MR_OK);
  fputs("new\n", o.f);
  assert_int_equal(mr_output_commit(&o, &err), MR_OK);
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  read_file(path, buf, sizeof buf);
  assert_string_equal(buf, "new\n");
  assert_int_equal(mr_output_open(&o, "/tmp", &err), MR_ERR_IO);
  assert_non_null(strstr(err.msg, "/tmp: is a directory"));
  assert_int_equal(mr_output_open(&o, "/nonexistent/dir/x.csv", &err), MR_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/dir/x.csv: cannot write"));
  assert_true(mr_output_same_file(path, link));
  assert_false(mr_output_same_file("/dev/null", "/dev/null"));
  assert_true(mr_output_same_file("/tmp/no_such_a", "/tmp/../tmp/no_such_a"));
  FILE *f = fopen(path, "w");
  const char *in[] = {"plain", "a,b", "say \"hi\"", "two\nlines", "cr\r"};
  for (int k = 0; k < 5; ++k)
    mr_csv_write_field(f, in[k]), fputc('|', f);
  fclose(f);
  read_file(path, buf, sizeof buf);
  assert_string_equal(buf, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"|\"cr\r\"|");
  remove(link), remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_failed_run_keeps_files),
      cmocka_unit_test(test_fifo_output_kept),
      cmocka_unit_test(test_write_errors),
      cmocka_unit_test(test_identical_paths),
      cmocka_unit_test(test_csv_quoting),
      cmocka_unit_test(test_sigint),
      cmocka_unit_test(test_output_module),
  };
  return cmocka_run_group_tests_name("cli_output", tests, NULL, NULL);
}
