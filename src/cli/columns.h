/* The state columns of a trajectory CSV, named after the world's joints, bodies and robots
 * (docs/cli.md, "Trajectory columns"). */
#ifndef MOREAU_CLI_COLUMNS_H
#define MOREAU_CLI_COLUMNS_H

#include <stdio.h>

#include "moreau/control.h"

/* the optional column groups */
typedef struct {
  int world_velocity; /* free-flyers' velocities also in the world frame */
  int poses;          /* every body's world pose (position, quaternion) */
  int com;            /* every robot's centre of mass, world frame */
} mr_columns;

/* ",NAME..." for q, v and the optional groups (without t and the step figures) */
void mr_columns_header(FILE *f, const mr_world *w, const mr_columns *o);
/* the values of those columns at the simulator's current state, each preceded by a comma */
void mr_columns_row(FILE *f, mr_sim *s, const mr_columns *o);

#endif
