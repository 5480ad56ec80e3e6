/* moreau collide: the contacts of a scene's initial state. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hints.h"
#include "core/json.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

static const char usage[] =
    "usage: moreau collide SCENE.yaml [--json]\n"
    "Print the contacts of the scene's initial state (every pair within the contact margin):\n"
    "the two geometries, the world contact point, the normal (from the second geometry towards\n"
    "the first), the signed distance (negative in penetration) and the pair's friction.\n"
    "With --json: {\"contacts\": [{\"geom1\", \"geom2\", \"point\", \"normal\", \"distance\",\n"
    "\"friction\"}, ...]}. Exit status 0, or 2 for bad usage or a bad scene.\n";

static void print_json(const mr_model *m, const mr_contact *c, int n) {
  fputs("{\"contacts\": [", stdout);
  for (int i = 0; i < n; ++i) {
    double p[3], nrm[3];
    for (int k = 0; k < 3; ++k)
      p[k] = c[i].point.v[k], nrm[k] = c[i].frame.m[k][2];
    fputs(i ? ",\n  {\"geom1\": " : "\n  {\"geom1\": ", stdout);
    mr_json_write_string(stdout, m->geoms[c[i].geom[0]].name);
    fputs(", \"geom2\": ", stdout);
    mr_json_write_string(stdout, m->geoms[c[i].geom[1]].name);
    fputs(", \"point\": ", stdout);
    mr_json_write_vector(stdout, p, 3);
    fputs(", \"normal\": ", stdout);
    mr_json_write_vector(stdout, nrm, 3);
    fputs(", \"distance\": ", stdout);
    mr_json_write_number(stdout, c[i].phi);
    fputs(", \"friction\": ", stdout);
    mr_json_write_number(stdout, c[i].mu);
    fputc('}', stdout);
  }
  fputs(n ? "\n]}\n" : "]}\n", stdout);
}

static void print_text(const mr_model *m, const mr_contact *c, int n) {
  printf("%d contact%s\n", n, n == 1 ? "" : "s");
  if (n)
    printf("%-24s %-24s %-30s %-24s %11s\n", "geom1", "geom2", "point (m)", "normal",
           "distance (m)");
  for (int i = 0; i < n; ++i)
    printf("%-24s %-24s (%8.4f %8.4f %8.4f) (%6.3f %6.3f %6.3f) %+11.3e\n",
           m->geoms[c[i].geom[0]].name, m->geoms[c[i].geom[1]].name, c[i].point.v[0],
           c[i].point.v[1], c[i].point.v[2], c[i].frame.m[0][2], c[i].frame.m[1][2],
           c[i].frame.m[2][2], c[i].phi);
}

int mr_cmd_collide(int argc, char **argv) {
  const char *path = NULL;
  int json = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help")) return fputs(usage, stdout), 0;
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else
      return fprintf(stderr, "moreau collide: unexpected argument '%s'\n%s", argv[i], usage), 2;
  }
  if (!path) return fprintf(stderr, "moreau collide: missing SCENE.yaml\n%s", usage), 2;
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load(path, &sc, &err)) return fprintf(stderr, "moreau collide: %s\n", err.msg), 2;
  mr_cli_scene_note("collide", &sc);
  mr_sim *s = mr_sim_from_scene(&sc, NULL, &err);
  const mr_contact *c = NULL;
  int n = 0, code = 0;
  if (!s || mr_sim_collide(s, &c, &n, &err)) {
    fprintf(stderr, "moreau collide: %s\n", err.msg);
    code = 2;
  } else if (json) {
    print_json(sc.model, c, n);
  } else {
    print_text(sc.model, c, n);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
  return code;
}
