/* moreau sweep, run as a program: the table's rows in the product order, the same table for 1
 * and 3 threads and for 1, 2 and 4 MPI processes (wall time aside), each row equal to
 * `moreau run` with the same settings, seeds that change the run, every kind of grid key,
 * failed runs as rows, usage errors. */
#include "test_util.h"

#include <string.h>

#include "cli_util.h"
#include "core/json.h"

#define OUT 65536
#define MAX_ROWS 32

/* Solo-12 standing (contacts, PD), 40 ms */
#define SWEEP_ARGS                                                                                 \
  "sweep scenes/solo_stand.yaml --grid duration=0.04 --grid timestep=0.001,0.002 "                 \
  "--grid contact.baumgarte=0.1,-1 --solvers ncp-pgs,lcp-pgs --seeds 2"

typedef struct {
  int n;
  char line[MAX_ROWS + 1][512]; /* header then rows */
} table;

static void read_table(const char *path, table *t) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot read %s", path);
  t->n = 0;
  while (t->n <= MAX_ROWS && fgets(t->line[t->n], sizeof t->line[0], f))
    ++t->n;
  fclose(f);
}

/* field k (0-based) of a CSV line without quoted commas before it */
static double field(const char *line, int k) {
  for (int c = 0; c < k; ++c)
    line = strchr(line, ',') + 1;
  return strtod(line, NULL);
}

/* the line without its wall_time_s column (field 8) */
static void drop_wall(const char *line, char *out, size_t size) {
  const char *p = line;
  for (int c = 0; c < 8; ++c)
    p = strchr(p, ',') + 1;
  snprintf(out, size, "%.*s%s", (int)(p - line), line, strchr(p, ',') + 1);
}

static void run_sweep(int threads, const char *dir, table *t) {
  char args[1024], out[OUT];
  snprintf(args, sizeof args, "%s --threads %d --out %s", SWEEP_ARGS, threads, dir);
  /* the baumgarte = -1 runs fail, so the exit status is 1 */
  assert_int_equal(cli_run(args, 1, out, sizeof out), 1);
  assert_non_null(strstr(out, "16 runs, 8 failed"));
  char path[256];
  snprintf(path, sizeof path, "%s/summary.csv", dir);
  read_table(path, t);
}

/* 1 × 2 × 2 values × 2 solvers × 2 seeds = 16 rows, seed fastest, first grid slowest; steps =
 * duration / timestep exactly; 1 and 3 threads give the same table apart from wall time */
static void test_sweep_table(void **state) {
  static table a, b;
  char d1[128], d3[128];
  run_sweep(1, cli_tmp(d1, "sweep1"), &a);
  run_sweep(3, cli_tmp(d3, "sweep3"), &b);
  assert_int_equal(a.n, 17);
  assert_non_null(strstr(a.line[0], "run,duration,timestep,contact.baumgarte,solver,seed,status"));
  const char *expect[4] = {"0.001,0.1,", "0.001,-1,", "0.002,0.1,", "0.002,-1,"};
  const char *solvers[2] = {"ncp-pgs", "lcp-pgs"};
  for (int r = 0; r < 16; ++r) {
    const char *row = a.line[r + 1];
    char head[128];
    snprintf(head, sizeof head, "%d,0.04,%s%s,%d,", r, expect[r / 4], solvers[(r / 2) % 2], r % 2);
    if (strncmp(row, head, strlen(head))) fail_msg("row %d: '%s', expected '%s...'", r, row, head);
    int ok = (r / 4) % 2 == 0;
    assert_non_null(strstr(row, ok ? ",ok," : ",invalid,"));
    if (!ok) assert_non_null(strstr(row, "'-1' is not a number in [0, 1]"));
    if (ok) assert_int_equal((int)field(row, 7), r < 8 ? 40 : 20);
    char x[512], y[512];
    drop_wall(row, x, sizeof x), drop_wall(b.line[r + 1], y, sizeof y);
    assert_string_equal(x, y);
  }
  /* seed 1 starts from other joint angles: another energy drift than seed 0 */
  assert_true(field(a.line[1], 11) != field(a.line[2], 11));
}

/* row 0 (ncp-pgs, Δt = 1 ms, baumgarte 0.1, seed 0) equals `moreau run` with those settings:
 * the table prints 9 significant digits, so the relative difference is at most 5e-9 */
static void test_sweep_row_equals_run(void **state) {
  static table a;
  char ab[128], sumb[128];
  read_table(cli_tmp(ab, "sweep1/summary.csv"), &a);
  if (a.n < 2) skip(); /* made by test_sweep_table */
  char out[OUT];
  const char *sum = cli_tmp(sumb, "sweep_run.json");
  char args[512];
  snprintf(args, sizeof args,
           "run scenes/solo_stand.yaml --duration 0.04 --dt 0.001 --set contact.baumgarte=0.1 "
           "--solver ncp-pgs --summary %s --quiet",
           sum);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  mr_json *js = NULL;
  mr_error err;
  assert_int_equal(mr_json_load(sum, &js, &err), MR_OK);
  double eps = mr_json_get(js, "max_eps_abs")->number;
  double pen = mr_json_get(js, "max_penetration")->number;
  double drift = mr_json_get(js, "energy_end")->number - mr_json_get(js, "energy_start")->number;
  assert_near(field(a.line[1], 9), eps, 5e-9 * fabs(eps));
  assert_near(field(a.line[1], 10), pen, 5e-9 * fabs(pen));
  assert_near(field(a.line[1], 11), drift, 5e-9 * fabs(drift));
  mr_json_free(js);
  remove(sum);
}

/* "mpirun -np K moreau ARGS" (as root too, more processes than cores allowed); the output of
 * mpirun and every process in out; returns mpirun's exit code. Under the sanitizers (make
 * check) leak detection is off in these processes: Open MPI keeps allocations until exit in
 * components it unloads at MPI_Finalize, which LeakSanitizer reports without a module to
 * suppress them by. AddressSanitizer and UBSan still check them, and the same sweep code runs
 * leak-checked without MPI in test_sweep_table. */
static int mpi_run(int k, const char *args, char *out, size_t size) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root --oversubscribe -np %d '%s' "
           "%s 2>&1",
           k, cli_bin(), args);
  return cli_shell(cmd, out, size);
}

/* the sweep of test_sweep_table on 1, 2 and 4 MPI processes (run r on rank r mod K, one
 * thread each with 2 cores): the same table as on threads alone, wall time aside, and every
 * finished run's JSON summary written by the process that ran it */
static void test_sweep_mpi(void **state) {
  static table ref, t;
  char rb[128];
  read_table(cli_tmp(rb, "sweep1/summary.csv"), &ref);
  if (ref.n < 2) skip(); /* made by test_sweep_table */
  for (int k = 1; k <= 4; k *= 2) {
    char dir[128], name[32], args[1024], out[OUT], expect[200];
    snprintf(name, sizeof name, "sweep_mpi%d", k);
    cli_tmp(dir, name);
    snprintf(args, sizeof args, "%s --out %s", SWEEP_ARGS, dir);
    int code = mpi_run(k, args, out, sizeof out);
    snprintf(expect, sizeof expect, "16 runs, 8 failed: %s/summary.csv (%d process", dir, k);
    if (code != 1 || !strstr(out, expect) || strstr(out, "Sanitizer") ||
        strstr(out, "runtime error"))
      fail_msg("mpirun -np %d: exit %d, expected 1 and '%s'; output:\n%s", k, code, expect, out);
    char path[160];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    read_table(path, &t);
    assert_int_equal(t.n, ref.n);
    assert_string_equal(t.line[0], ref.line[0]);
    for (int r = 1; r < ref.n; ++r) {
      char x[512], y[512];
      drop_wall(ref.line[r], x, sizeof x), drop_wall(t.line[r], y, sizeof y);
      assert_string_equal(x, y);
      snprintf(path, sizeof path, "%s/run_%04d.json", dir, r - 1);
      FILE *f = fopen(path, "r");
      if (strstr(x, ",ok,") ? !f : f != NULL) fail_msg("%s: present %d", path, f != NULL);
      if (f) fclose(f), remove(path);
    }
  }
}

/* every kind of grid key is accepted: a solver setting, each 'run --set' contact key, timestep
 * and duration (the grid passes them to the code of 'run --set', --dt and --duration); the steps
 * follow duration / timestep and solver.max_iter shows in the convergence count; an unknown key
 * is refused before any run, with the list of keys */
static void test_sweep_keys(void **state) {
  static table t;
  char out[OUT];
  char dirb[128];
  const char *dir = cli_tmp(dirb, "sweep_keys");
  char args[1024];
  snprintf(args, sizeof args,
           "sweep scenes/solo_stand.yaml --grid duration=0.02,0.01 --grid timestep=0.001 "
           "--grid solver.max_iter=1,10000 --grid contact.margin=0.001 "
           "--grid contact.restitution_threshold=0.05 --grid contact.baumgarte=0.2 "
           "--solvers ncp-pgs --threads 2 --out %s",
           dir);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  char path[160];
  snprintf(path, sizeof path, "%s/summary.csv", dir);
  read_table(path, &t);
  assert_int_equal(t.n, 5);
  assert_non_null(strstr(t.line[0], "run,duration,timestep,solver.max_iter,contact.margin,"
                                    "contact.restitution_threshold,contact.baumgarte,solver,"));
  /* columns after the 6 grids: solver 7, seed 8, status 9, steps 10, ..., not_converged 15 */
  for (int r = 0; r < 4; ++r) {
    assert_int_equal((int)field(t.line[r + 1], 10), r < 2 ? 20 : 10); /* duration / timestep */
    /* one iteration of PGS cannot meet ε = 1e-6 on a standing robot's 4 contacts; 10⁴ do */
    if (r % 2 == 0) assert_true(field(t.line[r + 1], 15) > 0);
    if (r % 2 == 1) assert_int_equal((int)field(t.line[r + 1], 15), 0);
  }
  /* a key that is none of these is refused before any run: the table is the previous sweep's */
  snprintf(args, sizeof args, "sweep scenes/solo_stand.yaml --grid contact.nope=1,2 --out %s", dir);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "--grid: unknown key 'contact.nope' (keys: solver.{max_iter"));
  read_table(path, &t);
  assert_int_equal(t.n, 5);
}

/* seeds: a scene without a robot joint to perturb refuses --seeds K > 1 */
static void test_sweep_seeds_need_joints(void **state) {
  char out[OUT];
  assert_int_equal(cli_run("sweep scenes/a1_free_fall.yaml --grid duration=0.01 --seeds 3 --out "
                           "/tmp/moreau_test_sweep_x",
                           1, out, sizeof out),
                   2);
  assert_non_null(strstr(out, "no robot joint with one coordinate"));
}

static void test_sweep_usage(void **state) {
  char out[OUT];
  assert_int_equal(
      cli_run("sweep scenes/solo_stand.yaml --grid timestep=0.001", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "missing --out"));
  assert_int_equal(cli_run("sweep scenes/solo_stand.yaml --grid timestep=0.001 --solvers nope "
                           "--out /tmp/moreau_test_sweep_x",
                           1, out, sizeof out),
                   2);
  assert_non_null(strstr(out, "unknown solver 'nope'"));
  assert_int_equal(
      cli_run("sweep scenes/solo_stand.yaml --grid timestep --out /tmp/x", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "expected KEY=V1,V2"));
  assert_int_equal(
      cli_run("sweep scenes/no_such.yaml --grid timestep=0.001 --out /tmp/x", 1, out, sizeof out),
      2);
  assert_non_null(strstr(out, "no_such.yaml"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sweep_table),
      cmocka_unit_test(test_sweep_row_equals_run),
      cmocka_unit_test(test_sweep_mpi),
      cmocka_unit_test(test_sweep_keys),
      cmocka_unit_test(test_sweep_seeds_need_joints),
      cmocka_unit_test(test_sweep_usage),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  /* the sweeps' output folders are this process's own (cli_tmp) */
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf /tmp/moreau_%ld_sweep*", (long)getpid());
  if (system(cmd) != 0) fprintf(stderr, "could not remove the sweep folders: %s\n", cmd);
  return failed;
}
