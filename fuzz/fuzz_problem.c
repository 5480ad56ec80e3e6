/* libFuzzer harness: the contact-problem JSON reader (src/core/json.c and
 * src/contact/problem_io.c: sizes, symmetry and finiteness checks) and one solve of each valid
 * problem with a bounded iteration count. */
#include <stdint.h>

#include "contact/problem_io.h"
#include "core/arena.h"
#include "fuzz_util.h"
#include "moreau/contact.h"

/* solve a valid problem once with projected Gauss-Seidel, 50 iterations at most */
static void solve_once(const mr_problem_file *f) {
  int n = 3 * f->problem.nc;
  mr_arena work;
  if (mr_arena_init(&work, mr_solver_work_size(f->problem.nc, 0))) return;
  double *lambda = calloc((size_t)n + 1, sizeof(double)),
         *c = calloc((size_t)n + 1, sizeof(double));
  mr_solver_settings s = mr_solver_settings_default();
  s.max_iter = 50;
  mr_solver_stats stats;
  mr_error err;
  if (lambda && c) mr_solve("ncp-pgs", &f->problem, &s, NULL, &work, lambda, c, &stats, &err);
  free(lambda), free(c);
  mr_arena_destroy(&work);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  mr_problem_file f;
  mr_error err;
  if (mr_problem_file_parse(text, "fuzz.json", &f, &err) == MR_OK) {
    solve_once(&f);
    mr_problem_file_free(&f);
  }
  free(text);
  return 0;
}
