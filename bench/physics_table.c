/* The physics table of docs/physics.md: every analytical case A1–A11 (tests/physics_cases.h)
 * with every registered solver; per cell the verdict (pass, the model's known artifact, a known
 * bug, or FAIL) and the measured error against the closed form, then the artifacts measured.
 * Output: Markdown. Run from the repository root: make bench, or build/bench/bench/physics_table
 * (the pendulum cases read scenes/models). */
#include "../tests/physics_cases.h"

int main(void) {
  int ns = mr_solver_count();
  static pc_outcome out[PC_NCASES][32];
  printf("| case |");
  for (int j = 0; j < ns; ++j)
    printf(" %s |", mr_solver_at(j)->name);
  printf("\n|---|");
  for (int j = 0; j < ns; ++j)
    printf("---|");
  printf("\n");
  for (int i = 0; i < PC_NCASES; ++i) {
    printf("| %s |", pc_case_names[i]);
    for (int j = 0; j < ns && j < 32; ++j) {
      out[i][j] = pc_check(i, mr_solver_at(j)->name);
      printf(" %s %.1e |", pc_verdict_name(out[i][j].v), out[i][j].err);
    }
    printf("\n");
    fflush(stdout);
  }
  printf("\nMeasured figures (case, solver: verdict, error / tolerance, what):\n\n");
  for (int i = 0; i < PC_NCASES; ++i)
    for (int j = 0; j < ns && j < 32; ++j)
      if (out[i][j].v != PC_PASS || out[i][j].what[0])
        printf("- %s, %s: %s, %.2e / %.2e; %s\n", pc_case_names[i], mr_solver_at(j)->name,
               pc_verdict_name(out[i][j].v), out[i][j].err, out[i][j].tol, out[i][j].what);
  return 0;
}
