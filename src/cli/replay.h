/* Replays: a run recorded for the offline HTML viewer (docs/viewer.md).
 *
 * A replay holds the scene's drawable geometry (collision geometries and, for URDF robots, their
 * visual elements) and one or more runs of the scene. A run records, at the display rate,
 * frames (every body's world placement, after forward kinematics of q, and the contacts of the
 * last step with their normal and friction forces in the world frame), and, at every step, the
 * step figures (energy, penetration, ε_abs, iterations, contact count). mr_replay_write puts all
 * of it, base64-encoded Float32/Int32 arrays in one JSON object, into a self-contained HTML page
 * with the bundled viewer script (viewer/). */
#ifndef MOREAU_CLI_REPLAY_H
#define MOREAU_CLI_REPLAY_H

#include "moreau/scene.h"
#include "moreau/sim.h"

typedef struct mr_replay mr_replay;

/* 1 when this build has the viewer page; 0 with err saying so otherwise (a CMake build with
 * MOREAU_VIEWER off): `moreau view` and --html refuse to run. */
int mr_replay_available(mr_error *err);

/* A replay of scene (borrowed: it must outlive the replay) recording fps frames per simulated
 * second (0: every step). The URDF robots' visual elements are read here; files that cannot be
 * drawn (a missing or unreadable mesh file) are counted in *nskipped with the
 * last reason in skipped_msg (MR_ERROR_MSG_MAX bytes), not an error. NULL with err filled on
 * failure (unreadable URDF, out of memory). */
mr_replay *mr_replay_create(const mr_scene *scene, double fps, int *nskipped, char *skipped_msg,
                            mr_error *err);
void mr_replay_free(mr_replay *r);

/* Start a new run named name (a solver): the following records go to it. */
mr_status mr_replay_begin_run(mr_replay *r, const char *name, mr_error *err);
/* Record the simulator's current state into the current run; the signature of
 * mr_run_options.on_step (ctx is the replay). Frames are taken at the display rate, step figures
 * at every step. An allocation failure is remembered and reported by mr_replay_write. */
void mr_replay_record(void *ctx, const mr_sim *s);
/* Record the state at time t from a configuration q (a replay of a trajectory file): a frame
 * when one is due, with ncontacts contacts of 9 values each (point, normal force, friction
 * force, world frame), and, when stats is non-NULL, one row of step figures {energy,
 * penetration, eps_abs, iterations, ncontacts} (NAN where not recorded). */
void mr_replay_record_q(mr_replay *r, double t, const double *q, const double *stats,
                        const double *contacts, int ncontacts);
/* The current run's outcome shown in the page ("ok", or the error of a diverged run). */
void mr_replay_end_run(mr_replay *r, const char *status);

/* Write the HTML page. */
mr_status mr_replay_write(const mr_replay *r, const char *path, mr_error *err);

/* For the --html option of `moreau run` and `moreau compare` (view.c): a replay of the scene
 * at fps frames per second (0: every step) with a first run named run_name (none when NULL), or
 * NULL with the message printed on stderr after "moreau CMD: ". */
mr_replay *mr_view_replay(const char *cmd, const mr_scene *scene, const char *run_name, double fps);
/* End the current run with status (unless NULL), write the page to path, say where on stdout,
 * and free the replay. 0, or 2 with the message printed. */
int mr_view_write(const char *cmd, mr_replay *r, const char *status, const char *path);

/* Visual elements of the scene's URDF robots, for the replay (replay_visual.c). */
typedef struct {
  mr_geom_type type; /* MR_GEOM_MESH, BOX, SPHERE or CYLINDER */
  int body;          /* model body */
  mr_se3 placement;  /* in the body frame */
  double size[3];    /* as mr_geom.size */
  mr_mesh *mesh;     /* MESH: the file's triangles (scaled), owned by the element */
  float rgba[4];     /* the URDF material colour, alpha 0 when none */
} mr_replay_visual;

/* Read the visual elements of every robot of the scene into a malloc'ed array (*out, *n). */
mr_status mr_replay_visuals(const mr_scene *scene, mr_replay_visual **out, int *n, int *nskipped,
                            char *skipped_msg, mr_error *err);
void mr_replay_visuals_free(mr_replay_visual *v, int n);

#endif
