/* Messages shared by the subcommands that name what was meant: an unknown solver or setting key
 * with the known ones and the closest, and what a bare URDF given as a scene was loaded as. */
#ifndef MOREAU_CLI_HINTS_H
#define MOREAU_CLI_HINTS_H

#include "moreau/scene.h"

/* The known name closest to s (Levenshtein, case-insensitive), or NULL when none is within
 * max(2, strlen(s) / 3) edits; names is NULL-terminated. The scene loader's rule. */
const char *mr_cli_nearest(const char *s, const char *const *names);

/* 0 when name is a registered solver; otherwise print "moreau CMD: unknown solver 'NAME': did
 * you mean 'CLOSEST'? (known: ...)" on stderr and return 2. */
int mr_cli_check_solver(const char *cmd, const char *name);

/* The keys of `run --set` (solver.FIELD for every solver setting, contact.baumgarte,
 * contact.margin, contact.restitution_threshold), and for `sweep --grid` (sweep != 0) also
 * timestep and duration: MR_OK when key is one, otherwise MR_ERR_INVALID with err saying
 * "unknown key 'KEY': did you mean 'CLOSEST'? (keys: ...)". */
mr_status mr_cli_check_key(const char *key, int sweep, mr_error *err);

/* For a bare URDF loaded as a scene (scene->default_scene set): print "moreau CMD: " and the
 * line saying what its default scene holds on stderr. Nothing for a scene file. */
void mr_cli_scene_note(const char *cmd, const mr_scene *scene);

#endif
