/* The contact assembly of the step by islands against the whole-model dense assembly, on the
 * robot scenes of bench/step.c: two simulators of the same scene and solver (ncp-pgs), one
 * solving by islands (the default; TALOS and Solo-12 are one tree-sparse island each) and one
 * with mr_sim_set_islands(s, 0), stepped alternately; after WARMUP unmeasured steps, the median
 * and 10th percentile of each one's assembly stage (mr_step_timing.assembly: contact gathering,
 * for islands the grouping, and J, G and g) and of its consistency stage (the consistent law,
 * mr_step_timing.consistency), and the median step over the next n steps. Output: a Markdown
 * table. A second argument keeps the scenes whose path contains it
 * (a run of one scene to profile, e.g. under valgrind --tool=callgrind).
 * Run: make bench (or build/bench/bench/islands [steps [scene]]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define WARMUP 100
#define MAX_STEPS 5000

static const char *const scenes[] = {"scenes/b8_solo_push.yaml", "scenes/b8_talos_push.yaml",
                                     "scenes/b8_allegro_hold.yaml"};

static double quantile(double *x, int n, double q) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  return x[(int)(q * (n - 1))];
}

static double asm_us[2][MAX_STEPS], cons_us[2][MAX_STEPS], step_us[2][MAX_STEPS];

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 400;
  if (n < 1 || n > MAX_STEPS) n = 400;
  printf("Assembly by islands against the whole-model dense assembly (ncp-pgs, warm), %d steps "
         "after %d, µs\n\n",
         n, WARMUP);
  printf("| scene | path | assembly median | assembly p10 | consistency median | consistency p10 "
         "| step median | contacts |\n");
  printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; ++k) {
    if (argc > 2 && !strstr(scenes[k], argv[2])) continue;
    mr_scene sc;
    mr_error err = {0};
    if (mr_scene_load(scenes[k], &sc, &err)) {
      fprintf(stderr, "%s: %s\n", scenes[k], err.msg);
      return 1;
    }
    mr_sim *s[2];
    int nc[2] = {0, 0};
    for (int p = 0; p < 2; ++p) {
      s[p] = mr_sim_from_scene(&sc, "ncp-pgs", &err);
      if (!s[p] || (p == 1 && mr_sim_set_islands(s[p], 0, &err))) {
        fprintf(stderr, "%s: %s\n", scenes[k], err.msg);
        return 1;
      }
      mr_sim_time_stages(s[p], 1);
    }
    for (int i = 0; i < WARMUP + n; ++i)
      for (int p = 0; p < 2; ++p) {
        if (mr_sim_step(s[p], &err)) {
          fprintf(stderr, "%s: %s\n", scenes[k], err.msg);
          return 1;
        }
        if (i < WARMUP) continue;
        const mr_step_timing *t = &mr_sim_last(s[p])->timing;
        asm_us[p][i - WARMUP] = t->assembly;
        cons_us[p][i - WARMUP] = t->consistency;
        step_us[p][i - WARMUP] = t->total;
        nc[p] += mr_sim_last(s[p])->ncontacts + mr_sim_last(s[p])->nconstraints;
      }
    for (int p = 0; p < 2; ++p) {
      double p10 = quantile(asm_us[p], n, 0.1), med = quantile(asm_us[p], n, 0.5);
      double c10 = quantile(cons_us[p], n, 0.1), cmed = quantile(cons_us[p], n, 0.5);
      printf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", scenes[k],
             p ? "whole problem" : "islands", med, p10, cmed, c10, quantile(step_us[p], n, 0.5),
             (double)nc[p] / n);
      mr_sim_free(s[p]);
    }
    mr_scene_free(&sc);
  }
  return 0;
}
