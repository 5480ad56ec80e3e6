/* moreau list: the names the command line and scenes accept. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "moreau/contact.h"
#include "moreau/model.h"

int mr_cmd_list(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--help") == 0) {
    puts("usage: moreau list\nName the contact solvers, geometry types and joint types.");
    return 0;
  }
  if (argc > 1) return fprintf(stderr, "moreau list: unexpected argument '%s'\n", argv[1]), 2;
  puts("solvers (scene key solver.name, --solver):");
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *s = mr_solver_at(i);
    printf("  %-13s %-7s %s\n", s->name, s->model, s->description);
  }
  puts("geometry types (scene key geoms[].type):");
  for (int t = 0; t < MR_GEOM_TYPE_COUNT; ++t)
    printf("  %s\n", mr_geom_type_name(t));
  puts("joint types (URDF joint type; floating = free):");
  for (int t = 1; t < MR_JOINT_TYPE_COUNT; ++t)
    printf("  %-11s nq %d, nv %d\n", mr_joint_type_name(t), mr_joint_nq(t), mr_joint_nv(t));
  return 0;
}
