/* Bounds on numeric inputs, checked where they are read: scene numbers (time step, step count,
 * contact bound, margin, solver iteration caps), YAML nesting depth, heightfield files (a last
 * line without a line end, over-long tokens), and the command line (--dt, --duration, --set,
 * solve --max-iter, compare --solvers, qpcc dimensions). Each error names file:line:column (or
 * the option) and the value. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "moreau/scene.h"

#define OUT 65536

static const char ball[] =
    "bodies:\n"
    "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
    "  - {name: ball, mass: 1.0, position: [0, 0, 0.1], geoms: [{type: sphere, radius: 0.1}]}\n";

/* the scene prefix + ball must fail to load with a message holding each of the parts */
static void expect_scene_error(const char *prefix, const char *where, const char *what) {
  static char text[1 << 20];
  snprintf(text, sizeof text, "%s%s", prefix, ball);
  mr_scene s;
  mr_error err = {0};
  if (mr_scene_parse(text, "s.yaml", NULL, &s, &err) == MR_OK) fail_msg("accepted: %.200s", prefix);
  if (!strstr(err.msg, where) || !strstr(err.msg, what))
    fail_msg("for %.80s: expected '%s' and '%s' in: %s", prefix, where, what, err.msg);
  mr_scene_free(&s);
}

/* scene numbers outside their documented ranges */
static void test_scene_ranges(void **state) {
  expect_scene_error("timestep: 1e-300\n", "s.yaml:1:11:", "'timestep': must be >= 1e-09 s");
  expect_scene_error("duration: 1e300\n", "s.yaml:1:11:", "1e+303 steps, more than 1e+09");
  expect_scene_error("timestep: 0.01\nduration: 0.004\n",
                     "s.yaml:2:11:", "shorter than half the time step");
  expect_scene_error("contact: {max_contacts: 2147483647}\n",
                     "s.yaml:1:25:", "'max_contacts': must be in [0, 10000], got 2147483647");
  expect_scene_error("contact: {margin: 1e15}\n",
                     "s.yaml:1:19:", "'margin': must be in [0, 1000] m, got 1e+15");
  expect_scene_error("solver: {name: ccp-admm, power_iter: 2147483647}\n",
                     "s.yaml:1:38:", "'power_iter': must be in [0, 1000]");
  expect_scene_error("solver: {name: ncp-pgs, max_iter: 0}\n",
                     "s.yaml:1:35:", "'max_iter': must be in [1, 10000000]");
  expect_scene_error("solver: {name: ncp-stagproj, inner_iter: 100001}\n",
                     "s.yaml:1:42:", "'inner_iter': must be in [0, 100000]");
  expect_scene_error("solver: {name: lcp-pgs, pyramid_facets: 7}\n",
                     "s.yaml:1:41:", "'pyramid_facets': must be even, got '7'");
  expect_scene_error("solver: {name: lcp-pgs, pyramid_facets: 66}\n",
                     "s.yaml:1:41:", "'pyramid_facets': must be in [4, 64], got '66'");
  /* the bounds themselves are accepted */
  static char text[4096];
  snprintf(text, sizeof text,
           "timestep: 1e-9\nduration: 1.0\ncontact: {max_contacts: 10000, margin: 1000}\n"
           "solver: {name: ccp-admm, power_iter: 1000}\n%s",
           ball);
  mr_scene s;
  mr_error err = {0};
  if (mr_scene_parse(text, "s.yaml", NULL, &s, &err)) fail_msg("%s", err.msg);
  assert_int_equal(s.contact.max_contacts, 10000);
  assert_int_equal(s.settings.power_iter, 1000);
  mr_scene_free(&s);
  /* the same rules for command-line settings */
  mr_solver_settings st = mr_solver_settings_default();
  assert_int_equal(mr_scene_settings_set(&st, "power_iter", "2147483647", &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "must be in [0, 1000]"));
}

/* the step count: round(duration / timestep), with its bounds */
static void test_step_count(void **state) {
  long n = -1;
  mr_error err = {0};
  assert_int_equal(mr_scene_step_count(0.001, 1.0, &n, &err), MR_OK);
  assert_int_equal(n, 1000);
  assert_int_equal(mr_scene_step_count(0.001, 0.0, &n, &err), MR_OK);
  assert_int_equal(n, 0);
  /* 1e9 steps is the bound, one more is refused */
  assert_int_equal(mr_scene_step_count(1e-9, 1.0, &n, &err), MR_OK);
  assert_int_equal(n, 1000000000L);
  assert_int_equal(mr_scene_step_count(1e-9, 1.000000002, &n, &err), MR_ERR_INVALID);
  assert_int_equal(mr_scene_step_count(0.001, 1e300, &n, &err), MR_ERR_INVALID);
  assert_int_equal(mr_scene_step_count(1e-300, 1.0, &n, &err), MR_ERR_INVALID);
  assert_int_equal(mr_scene_step_count(NAN, 1.0, &n, &err), MR_ERR_INVALID);
  assert_int_equal(mr_scene_step_count(0.001, INFINITY, &n, &err), MR_ERR_INVALID);
}

/* nesting 10⁵ deep (flow and block) is refused at the first level past 64 */
static void test_yaml_depth(void **state) {
  size_t n = 100000, k = 0;
  char *text = malloc(2 * n + 16);
  assert_non_null(text);
  k += (size_t)sprintf(text, "bodies: ");
  for (size_t i = 0; i < n; ++i)
    text[k++] = '[';
  for (size_t i = 0; i < n; ++i)
    text[k++] = ']';
  text[k++] = '\n', text[k] = '\0';
  mr_scene s;
  mr_error err = {0};
  assert_int_equal(mr_scene_parse(text, "deep.yaml", NULL, &s, &err), MR_ERR_PARSE);
  /* the mapping is level 1, "bodies: [" level 2: the 64th '[' (column 72) is level 65 */
  assert_non_null(strstr(err.msg, "deep.yaml:1:72: nesting deeper than 64 levels"));
  mr_scene_free(&s);
  /* 60 levels of block mappings load (the check counts levels, not characters) */
  k = (size_t)sprintf(text, "description:\n");
  for (int i = 1; i < 60; ++i)
    k += (size_t)sprintf(text + k, "%*sk%d:\n", i, "", i);
  sprintf(text + k, "%*sleaf: 1\n", 60, "");
  /* (description is free text: the loader ignores its content) */
  if (mr_scene_parse(text, "ok.yaml", NULL, &s, &err)) fail_msg("%s", err.msg);
  mr_scene_free(&s);
  free(text);
}

/* heightfield files: the last line needs no line end; a token over 63 characters is an error
 * naming file:line:column, never truncated */
static void test_hfield_file_tokens(void **state) {
  char dir[] = "/tmp/moreau_limits_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], yaml[512];
  snprintf(path, sizeof path, "%s/h.txt", dir);
  snprintf(yaml, sizeof yaml,
           "bodies:\n  - {name: g, fixed: true, geoms: [{type: heightfield, file: h.txt, "
           "extent: [0, 2, 0, 1]}]}\n");
  FILE *f = fopen(path, "w");
  fputs("0 1 2\n3 4 5", f); /* no final line end */
  fclose(f);
  mr_scene s;
  mr_error err = {0};
  if (mr_scene_parse(yaml, "s.yaml", dir, &s, &err)) fail_msg("%s", err.msg);
  const mr_hfield *h = s.model->geoms[0].hfield;
  assert_int_equal(h->nx, 3);
  assert_int_equal(h->ny, 2);
  assert_true(h->h[5] == 5.0); /* the last value, read exactly */
  mr_scene_free(&s);
  /* 0.000…01 with 64 characters: the truncated 63 would read 0 */
  f = fopen(path, "w");
  fprintf(f, "0 1 2\n3 0.%0*d1 5\n", 61, 0);
  fclose(f);
  assert_int_not_equal(mr_scene_parse(yaml, "s.yaml", dir, &s, &err), MR_OK);
  assert_non_null(strstr(err.msg, "h.txt:2:3: heightfield: a token longer than 63 characters"));
  mr_scene_free(&s);
  f = fopen(path, "w");
  fputs("0 1 2\n3 4\n", f);
  fclose(f);
  assert_int_not_equal(mr_scene_parse(yaml, "s.yaml", dir, &s, &err), MR_OK);
  assert_non_null(strstr(err.msg, "h.txt:2:1: heightfield: row of 2 values"));
  mr_scene_free(&s);
  remove(path), rmdir(dir);
}

/* the command line: each bad value exits 2 naming the option and the value */
static void test_cli_ranges(void **state) {
  char scene[64], args[2048], out[OUT];
  cli_write_temp(ball, ".yaml", scene);
  char many[600] = "";
  for (int i = 0; i < 33; ++i)
    strcat(many, i ? ",ncp-pgs" : "ncp-pgs");
  struct {
    const char *args, *expect;
  } cases[] = {
      {"run %s --duration 1e300", "--duration: duration 1e+300 s at time step 0.001 s"},
      {"run %s --dt 1e-300", "--dt: time step 1e-300 s is below 1e-09 s"},
      {"run %s --set contact.baumgarte=5", "'5' is not a number in [0, 1]"},
      {"run %s --set contact.margin=1e15", "'1e15' is not a number in [0, 1000]"},
      {"run %s --set solver.power_iter=2147483647", "must be in [0, 1000]"},
      {"compare %s --solvers ,,,", "--solvers ',,,': an empty solver name"},
      {"compare %s --solvers ncp-pgs,,ccp-pgs", "an empty solver name"},
      {"compare %s --solvers MANY", "more than 32 solvers"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    snprintf(args, sizeof args, cases[k].args, scene);
    char *m = strstr(args, "MANY");
    if (m) snprintf(m, sizeof args - (size_t)(m - args), "%s", many);
    int code = cli_run(args, 1, out, sizeof out);
    if (code != 2 || !strstr(out, cases[k].expect))
      fail_msg("'moreau %.100s': exit %d, output: %s", args, code, out);
  }
  remove(scene);
}

/* solve --max-iter 0 and a QPCC f of 46341 entries (46341² overflows int) */
static void test_cli_problem_ranges(void **state) {
  char prob[64], args[256], out[OUT];
  cli_write_temp("{\"nc\": 1, \"G\": [[1,0,0],[0,1,0],[0,0,1]], \"g\": [0,0,-1], \"mu\": [0.5]}",
                 ".json", prob);
  snprintf(args, sizeof args, "solve %s --solver ncp-pgs --max-iter 0", prob);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "bad value '0' for --max-iter"));
  remove(prob);
  size_t n = 46341;
  char *text = malloc(2 * n + 64);
  assert_non_null(text);
  size_t k = (size_t)sprintf(text, "{\"dt\": 0.01, \"f\": [");
  for (size_t i = 0; i < n; ++i)
    k += (size_t)sprintf(text + k, i ? ",0" : "0");
  sprintf(text + k, "], \"M\": [[1]]}");
  cli_write_temp(text, ".json", prob);
  free(text);
  snprintf(args, sizeof args, "qpcc %s", prob);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, ":1:19: 'f' gives 46341 entries, more than 2048"));
  remove(prob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scene_ranges), cmocka_unit_test(test_step_count),
      cmocka_unit_test(test_yaml_depth),   cmocka_unit_test(test_hfield_file_tokens),
      cmocka_unit_test(test_cli_ranges),   cmocka_unit_test(test_cli_problem_ranges),
  };
  return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
