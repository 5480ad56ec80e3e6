/* A program using an installed moreau (tests/consumer/CMakeLists.txt, tests/test_install.c):
 * it prints the version it was compiled against, loads the scene given (the A1 free fall,
 * scenes/a1_free_fall.yaml), takes N steps and prints the ball's height, which semi-implicit
 * Euler makes z0 - g dt² N (N + 1) / 2. Exit status 0, or 2 with the library's message. */
#include <stdio.h>
#include <stdlib.h>

#include <moreau/moreau.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: consumer SCENE.yaml STEPS\n");
    return 2;
  }
  mr_scene scene;
  mr_error err;
  if (mr_scene_load(argv[1], &scene, &err)) return fprintf(stderr, "%s\n", err.msg), 2;
  mr_sim *sim = mr_sim_from_scene(&scene, NULL, &err);
  mr_scene_free(&scene);
  if (!sim) return fprintf(stderr, "%s\n", err.msg), 2;
  long n = strtol(argv[2], NULL, 10);
  for (long k = 0; k < n; ++k)
    if (mr_sim_step(sim, &err)) return fprintf(stderr, "%s\n", err.msg), mr_sim_free(sim), 2;
  printf("moreau %s: z = %.17g after %ld steps\n", MR_VERSION_STRING, mr_sim_q(sim)[2], n);
  mr_sim_free(sim);
  return 0;
}
