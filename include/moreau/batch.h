/* A batch of simulators: one compiled world (world.h), n simulators (sim.h) on it, stepped in
 * parallel on a fixed pool of threads, each with its own state and controls.
 *
 * Environment i is an ordinary mr_sim (mr_batch_sim): set its controls with control.h between
 * batch steps, or in bulk with mr_batch_set_controls. mr_batch_step(b, k) advances every
 * environment by k steps of the world's Δt. The environments share nothing but the read-only
 * world, and in each call every environment is stepped by exactly one thread, so the results are
 * bit for bit those of stepping each simulator alone with mr_sim_step, whatever the thread count
 * and whichever thread steps it. Thread t of T steps its share, environments
 * [t n / T, (t + 1) n / T), and then those of the others' shares that they have not begun (a
 * thread the machine does not schedule holds nobody up).
 *
 * The T − 1 worker threads are created by mr_batch_create and live until mr_batch_free; the
 * calling thread does the first share. A batch step allocates nothing: it wakes the workers,
 * steps its own share (and what the workers have not begun) and waits for those being stepped
 * (one synchronisation per call, not per step); waiting threads watch briefly before they sleep
 * only while that pays and the machine is not oversubscribed. A call of one step goes the faster
 * of two ways by their measured wall time per call: with the workers, or by the calling thread
 * alone while they sleep (a machine that gives the process about one core); either way the
 * results are the same (src/integrate/batch.c).
 *
 * Bulk arrays are row-major, one row per environment: q [n × nq], v [n × nv],
 * torque [n × nv], target [n × nq] (sizes in mr_world_get_info). A batch is driven from one
 * thread at a time. */
#ifndef MOREAU_BATCH_H
#define MOREAU_BATCH_H

#include "moreau/sim.h"

typedef struct mr_batch mr_batch;

/* n simulators on world w (borrowed, read only: it must outlive the batch), stepped by
 * `threads` threads (the caller's included; more threads than environments are not started).
 * solver may be NULL (the world's) or a registry name. NULL with err filled on n < 1,
 * threads < 1, an unknown solver, out of memory or a thread that could not be started. */
mr_batch *mr_batch_create(const mr_world *w, int n, int threads, const char *solver, mr_error *err);
/* stop the workers and free the simulators; NULL is a no-op */
void mr_batch_free(mr_batch *b);

/* the number of environments */
int mr_batch_size(const mr_batch *b);
/* the number of threads stepping them (the caller's included) */
int mr_batch_threads(const mr_batch *b);
/* Time each thread's share from now on (on ≠ 0) or not (0, the default: the thread CPU clock
 * is a system call, a few µs per batch step and thread on a virtual machine). */
void mr_batch_time_threads(mr_batch *b, int on);
/* the CPU seconds thread t (0: the caller) spent stepping environments in the last
 * mr_batch_step while timed (0 when not timed, before the first step, for a thread that stepped
 * none, or for t out of range): each thread's work, whatever else the machine runs, so the
 * largest bounds the wall time on idle cores */
double mr_batch_thread_cpu(const mr_batch *b, int t);
/* environment i's simulator (NULL out of range): read it and control it between batch steps */
mr_sim *mr_batch_sim(mr_batch *b, int i);

/* Advance every environment by nsteps steps (nsteps ≥ 0). An environment whose step fails
 * (mr_sim_step: MR_ERR_NUMERIC on divergence) stops there for the rest of the call, its state as
 * before the failed step; the others go on. Returns MR_OK when every environment did all its
 * steps; otherwise the status of the first failed environment (lowest index), with err naming
 * it and counting the failures. Per environment: mr_batch_status, mr_batch_error. */
mr_status mr_batch_step(mr_batch *b, int nsteps, mr_error *err);
/* the statuses of the last mr_batch_step [n] (MR_OK before the first) */
const mr_status *mr_batch_status(const mr_batch *b);
/* environment i's error message of the last mr_batch_step ("" when it succeeded; NULL out of
 * range) */
const char *mr_batch_error(const mr_batch *b, int i);

/* Copy every environment's q into q [n × nq] and v into v [n × nv] (either may be NULL). */
void mr_batch_get_state(const mr_batch *b, double *q, double *v);
/* Set every environment's q [n × nq] and/or v [n × nv] (either may be NULL: kept) as
 * mr_sim_set_state does (quaternions normalised). MR_ERR_INVALID naming the environment and the
 * entry on a non-finite value or a zero quaternion: the environments before it are set, it and
 * those after it are unchanged. */
mr_status mr_batch_set_state(mr_batch *b, const double *q, const double *v, mr_error *err);
/* Copy every environment's commanded torques [n × nv] and PD targets [n × nq] (either may be
 * NULL). */
void mr_batch_get_controls(const mr_batch *b, double *torque, double *target);
/* Set every environment's commanded torques τ_cmd [n × nv] and/or PD targets q_t [n × nq]
 * (either may be NULL: kept). MR_ERR_INVALID naming the environment and the entry on a
 * non-finite value: nothing is changed then. */
mr_status mr_batch_set_controls(mr_batch *b, const double *torque, const double *target,
                                mr_error *err);
/* Reset environment i (i = −1: every environment) to the world's initial state and controls
 * (mr_sim_reset). */
void mr_batch_reset(mr_batch *b, int i);

/* mr_sim_check_inputs on every environment, then mr_batch_step. When an environment's inputs
 * are invalid nothing is stepped: MR_ERR_INVALID names the first such environment. nsteps = 0
 * only checks (the statuses stay those of the last step). */
mr_status mr_batch_step_checked(mr_batch *b, int nsteps, mr_error *err);

#endif
