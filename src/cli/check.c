/* moreau check SCENE.yaml: load and validate a scene, print a short summary or the error. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hints.h"
#include "moreau/scene.h"

static void summary(const mr_scene *s) {
  int nfree = 0, nfixed = 0;
  for (int i = 0; i < s->nbodies; ++i)
    s->bodies[i].fixed ? ++nfixed : ++nfree;
  printf("%s: ok\n", s->path);
  printf("  bodies    %d (%d free, %d fixed)\n", s->nbodies, nfree, nfixed);
  printf("  robots    %d", s->nrobots);
  for (int i = 0; i < s->nrobots; ++i)
    printf("%s%s (nq %d, nv %d%s)", i ? ", " : ": ", s->robots[i].name, s->robots[i].nq,
           s->robots[i].nv, s->robots[i].floating ? ", floating" : "");
  printf("\n  model     %d bodies, nq %d, nv %d, %d geometries, mass %.6g kg\n", s->model->nbodies,
         s->model->nq, s->model->nv, s->model->ngeoms, mr_model_total_mass(s->model));
  printf("  solver    %s (max_iter %d, eps_abs %g)\n", s->solver, s->settings.max_iter,
         s->settings.eps_abs);
  printf("  time      dt %g s, duration %g s (%.0f steps)\n", s->timestep, s->duration,
         s->duration / s->timestep);
  printf("  forces    %d, materials %d, pairs %d\n", s->nforces, s->nmaterials, s->npairs);
}

int mr_cmd_check(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fprintf(argc == 2 ? stdout : stderr,
            "usage: moreau check SCENE.yaml\n\nLoad and validate a scene (docs/scene-format.md) "
            "and print a summary.\nExit code 0 when valid, 2 with the error otherwise.\n");
    return argc == 2 ? 0 : 2;
  }
  mr_scene s;
  mr_error err;
  if (mr_scene_load(argv[1], &s, &err)) {
    fprintf(stderr, "moreau check: %s\n", err.msg);
    return 2;
  }
  mr_cli_scene_note("check", &s);
  summary(&s);
  if (s.nwarnings)
    fprintf(stderr, "moreau check: %d warning(s), the last: %s\n", s.nwarnings, s.warning);
  mr_scene_free(&s);
  return 0;
}
