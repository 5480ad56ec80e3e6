/* moreau sweep, run as a program: the table's rows in the product order, the same table for 1
 * and 3 threads (wall time aside), each row equal to `moreau run` with the same settings, seeds
 * that change the run, failed runs as rows, usage errors. */
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
  run_sweep(1, "/tmp/moreau_test_sweep1", &a);
  run_sweep(3, "/tmp/moreau_test_sweep3", &b);
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
  read_table("/tmp/moreau_test_sweep1/summary.csv", &a);
  if (a.n < 2) skip(); /* made by test_sweep_table */
  char out[OUT];
  const char *sum = "/tmp/moreau_test_sweep_run.json";
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
      cmocka_unit_test(test_sweep_usage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
