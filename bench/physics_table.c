/* The physics table of docs/physics.md: every analytical case A1–A11 (tests/physics_cases.h)
 * with every registered solver; per cell the verdict (pass, the model's known artifact, a known
 * bug, or FAIL) and the measured error against the closed form, then per case the figures
 * measured, solvers with the same verdict and figures grouped (with the largest error). Output:
 * Markdown. Run from the repository root (the pendulum cases read scenes/models): make bench, or
 * build/bench/bench/physics_table. */
#include "../tests/physics_cases.h"

#define MAX_SOLVERS 32

int main(void) {
  int ns = mr_solver_count() < MAX_SOLVERS ? mr_solver_count() : MAX_SOLVERS;
  static pc_outcome out[PC_NCASES][MAX_SOLVERS];
  printf("| case | error |");
  for (int j = 0; j < ns; ++j)
    printf(" %s |", mr_solver_at(j)->name);
  printf("\n|---|---|");
  for (int j = 0; j < ns; ++j)
    printf("---|");
  printf("\n");
  for (int i = 0; i < PC_NCASES; ++i) {
    printf("| %s | %s |", pc_case_names[i], pc_case_units[i]);
    for (int j = 0; j < ns; ++j) {
      out[i][j] = pc_check(i, mr_solver_at(j)->name);
      printf(" %s %.1e |", pc_verdict_name(out[i][j].v), out[i][j].err);
    }
    printf("\n");
    fflush(stdout);
  }
  /* the figures, solvers with the same verdict and figures on one line */
  printf("\nMeasured (case — solvers: verdict, error / tolerance of a pass; figures):\n\n");
  for (int i = 0; i < PC_NCASES; ++i) {
    int done[MAX_SOLVERS] = {0};
    for (int j = 0; j < ns; ++j) {
      if (done[j]) continue;
      double err = out[i][j].err;
      printf("- %s — %s", pc_case_names[i], mr_solver_at(j)->name);
      for (int k = j + 1; k < ns; ++k)
        if (!done[k] && out[i][k].v == out[i][j].v && !strcmp(out[i][k].what, out[i][j].what)) {
          printf(", %s", mr_solver_at(k)->name), done[k] = 1;
          err = pc_max(err, out[i][k].err);
        }
      printf(": %s, %.2e / %.2e", pc_verdict_name(out[i][j].v), err, out[i][j].tol);
      printf(out[i][j].what[0] ? "; %s\n" : "\n", out[i][j].what);
    }
  }
  return 0;
}
