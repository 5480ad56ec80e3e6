/* The run loop of `moreau run` and `moreau compare`: step, record, accumulate the summary. */
#include "cli/runner.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/problem_io.h"
#include "core/json.h"
#include "core/output.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CSV header: t, the named state columns (columns.c), [energy], ncontacts, [iterations,
 * eps_abs], penetration, [solve_us, iterations_sum] */
static void csv_header(FILE *f, const mr_world *w, const mr_run_options *o) {
  fputs("t", f);
  mr_columns_header(f, w, &o->columns);
  fputs(o->energy ? ",energy,ncontacts" : ",ncontacts", f);
  fputs(o->solver_stats ? ",iterations,eps_abs,penetration,solve_us,iterations_sum\n"
                        : ",penetration\n",
        f);
}

static void csv_row(FILE *f, mr_sim *s, const mr_run_options *o) {
  const mr_step_stats *st = mr_sim_last(s);
  fprintf(f, "%.9g", mr_sim_time(s));
  mr_columns_row(f, s, &o->columns);
  if (o->energy) fprintf(f, ",%.17g", st->kinetic + st->potential);
  fprintf(f, ",%d", st->ncontacts);
  if (o->solver_stats)
    fprintf(f, ",%d,%.6g,%.6g,%.3f,%d\n", st->iterations, st->eps_abs, st->penetration,
            st->solve_us, st->iterations_sum);
  else
    fprintf(f, ",%.6g\n", st->penetration);
}

/* one row per contact: where, which geometries, Φ_N, the force in the contact frame
 * (t₁, t₂, n) and in the world frame (on the first geometry, N) */
static void contacts_header(FILE *f) {
  fputs("t,contact,geom1,geom2,px,py,pz,nx,ny,nz,phi,lambda_t1,lambda_t2,lambda_n,fx,fy,fz\n", f);
}

static void contacts_rows(FILE *f, const mr_sim *s) {
  const mr_contact *c;
  const double *lambda;
  const mr_model *m = mr_sim_model(s);
  int n = mr_sim_contacts(s, &c, &lambda);
  for (int i = 0; i < n; ++i) {
    const double *l = lambda + 3 * i;
    mr_vec3 fw = mr_m3_mulv(&c[i].frame, mr_v3(l[0], l[1], l[2]));
    fprintf(f, "%.9g,%d,", mr_sim_time(s), i);
    mr_csv_write_field(f, m->geoms[c[i].geom[0]].name);
    fputc(',', f);
    mr_csv_write_field(f, m->geoms[c[i].geom[1]].name);
    fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
            c[i].point.v[0], c[i].point.v[1], c[i].point.v[2], c[i].frame.m[0][2],
            c[i].frame.m[1][2], c[i].frame.m[2][2], c[i].phi, l[0], l[1], l[2], fw.v[0], fw.v[1],
            fw.v[2]);
  }
}

static void progress(long k, long n) {
  if (n <= 0 || (k % 50 && k != n)) return;
  int w = 40, done = (int)(w * k / n);
  fprintf(stderr, "\r[%.*s%*s] %3d%%", done, "########################################", w - done,
          "", (int)(100 * k / n));
  if (k == n) fputc('\n', stderr);
}

static mr_status dump_problem(mr_sim *s, const char *dir, mr_error *err) {
  const mr_step_stats *st = mr_sim_last(s);
  if (st->ncontacts + st->nconstraints == 0) return MR_OK;
  char path[2048];
  snprintf(path, sizeof path, "%s/step_%06ld.json", dir, mr_sim_steps(s));
  return mr_problem_file_save(path, mr_sim_problem(s), NULL, err);
}

/* the contact of a solver failure ("... at contact K: ..."), named by its geometries and
 * bodies: the failed step's contacts are the state's (the state is left as it was), detected
 * again; rows past the contacts are joint limits and point constraints */
static void name_contact(mr_sim *s, const char *msg, char *out, size_t size) {
  const char *at = strstr(msg, " at contact ");
  out[0] = '\0';
  if (!at) return;
  int k = atoi(at + 12), n = 0;
  const mr_contact *c;
  if (mr_sim_collide(s, &c, &n, NULL)) return;
  const mr_model *m = mr_sim_model(s);
  if (k >= n) {
    snprintf(out, size, " [row %d is constraint %d: a joint limit or point constraint]", k, k - n);
    return;
  }
  const mr_geom *g1 = &m->geoms[c[k].geom[0]], *g2 = &m->geoms[c[k].geom[1]];
  snprintf(out, size, " [contact %d: geometry '%s' of body '%s' against '%s' of body '%s']", k,
           g1->name, m->bodies[g1->body].name, g2->name, m->bodies[g2->body].name);
}

/* a failed step's message with the step and the time in front, when the step did not say them */
static void locate_failure(mr_sim *s, double dt, mr_error *err) {
  if (!err || strstr(err->msg, "at step ")) return;
  char where[640], msg[MR_ERROR_MSG_MAX];
  name_contact(s, err->msg, where, sizeof where);
  snprintf(msg, sizeof msg, "%s", err->msg);
  mr_error_set(err, err->status, "step %ld (t = %.6g s): %s%s", mr_sim_steps(s) + 1,
               mr_sim_time(s) + dt, msg, where);
}

/* a write error on an output (a full disk, /dev/full) stops the run */
static mr_status check_outputs(const mr_run_options *o, mr_error *err) {
  if (o->csv && ferror(o->csv))
    return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s",
                        o->csv_path ? o->csv_path : "trajectory", strerror(errno));
  if (o->contacts_csv && ferror(o->contacts_csv))
    return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s",
                        o->contacts_path ? o->contacts_path : "contacts", strerror(errno));
  return MR_OK;
}

/* fold one step's figures into the running summary */
static void accumulate(mr_run_summary *r, const mr_step_stats *st) {
  r->mean_contacts += st->ncontacts;
  r->mean_iterations += st->iterations;
  r->mean_solve_us += st->solve_us;
  if (st->ncontacts > r->max_contacts) r->max_contacts = st->ncontacts;
  if (st->iterations > r->max_iterations) r->max_iterations = st->iterations;
  r->max_eps_abs = fmax(r->max_eps_abs, st->eps_abs);
  r->max_penetration = fmax(r->max_penetration, st->penetration);
  r->max_step_us = fmax(r->max_step_us, st->timing.total);
  /* the stage times, summed */
  mr_step_timing *t = &r->mean_timing;
  const mr_step_timing *u = &st->timing;
  t->kinematics += u->kinematics, t->collision += u->collision, t->dynamics += u->dynamics;
  t->assembly += u->assembly, t->consistency += u->consistency, t->solver += u->solver;
  t->integration += u->integration, t->total += u->total;
}

/* the stage times' means over n steps */
static void timing_mean(mr_step_timing *t, double n) {
  t->kinematics /= n, t->collision /= n, t->dynamics /= n, t->assembly /= n;
  t->consistency /= n, t->solver /= n, t->integration /= n, t->total /= n;
}

/* a stage's share of the step (%) */
static double share(double stage, const mr_step_timing *t) {
  return t->total > 0 ? 100.0 * stage / t->total : 0.0;
}

static void finish(mr_run_summary *r, mr_sim *s, double wall) {
  double n = r->steps > 0 ? (double)r->steps : 1.0;
  r->mean_contacts /= n;
  r->mean_iterations /= n;
  r->mean_solve_us /= n;
  timing_mean(&r->mean_timing, n);
  r->sim_time = mr_sim_time(s);
  r->wall_time = wall;
  r->realtime_factor = wall > 0.0 ? r->sim_time / wall : INFINITY;
  r->energy_end = mr_sim_energy(s);
  r->not_converged = mr_sim_get_warnings(s)->not_converged;
  r->collision_failures = mr_sim_get_warnings(s)->collision_failures;
  r->falls = mr_sim_get_warnings(s)->falls;
  r->ncp_not_converged = mr_sim_get_warnings(s)->ncp_not_converged;
  r->budget = mr_sim_get_warnings(s)->budget;
}

mr_status mr_run_scene(const mr_scene *scene, const mr_run_options *opt, mr_run_summary *summary,
                       mr_error *err) {
  memset(summary, 0, sizeof *summary);
  long nsteps;
  if (mr_scene_step_count(scene->timestep, scene->duration, &nsteps, err)) return MR_ERR_INVALID;
  mr_sim *s = mr_sim_from_scene(scene, opt->solver, err);
  if (!s) return err ? err->status : MR_ERR_NOMEM;
  mr_sim_time_stages(s, 1); /* the summary's stage shares */
  int every = opt->every > 0 ? opt->every : 1;
  summary->energy_start = mr_sim_energy(s);
  if (opt->csv) csv_header(opt->csv, mr_sim_world(s), opt);
  if (opt->contacts_csv) contacts_header(opt->contacts_csv);
  mr_status st = MR_OK;
  if (opt->on_step) opt->on_step(opt->ctx, s);
  double t0 = now_s();
  for (long k = 0; k < nsteps && st == MR_OK; ++k) {
    /* a live viewer may hold, stop or restart the run */
    int hook = opt->before_step ? opt->before_step(opt->ctx, s) : MR_RUN_STEP;
    if (hook == MR_RUN_STOP) {
      summary->interrupted = 1;
      break;
    }
    if (hook == MR_RUN_RESTART) {
      k = -1;
      continue;
    }
    if ((st = mr_sim_step(s, err))) {
      locate_failure(s, scene->timestep, err);
      break;
    }
    summary->steps++;
    accumulate(summary, mr_sim_last(s));
    if (opt->csv && (k + 1) % every == 0) csv_row(opt->csv, s, opt);
    if (opt->contacts_csv && (k + 1) % every == 0) contacts_rows(opt->contacts_csv, s);
    if (opt->dump_dir) st = dump_problem(s, opt->dump_dir, err);
    if (!st) st = check_outputs(opt, err);
    if (opt->on_step) opt->on_step(opt->ctx, s);
    if (opt->progress) progress(k + 1, nsteps);
    if (!st && opt->stop && *opt->stop) {
      summary->interrupted = 1;
      break;
    }
  }
  finish(summary, s, now_s() - t0);
  if (opt->on_end) opt->on_end(opt->ctx, s, st, err);
  if (opt->progress && (st || summary->interrupted)) fputc('\n', stderr);
  mr_sim_free(s);
  return st;
}

void mr_run_summary_print(FILE *f, const char *solver, const mr_run_summary *s) {
  fprintf(f, "solver          %s\n", solver);
  fprintf(f, "steps           %ld (%.6g s simulated, %.3g s wall, real-time factor %.3g)\n",
          s->steps, s->sim_time, s->wall_time, s->realtime_factor);
  fprintf(f, "contacts        mean %.2f, max %d\n", s->mean_contacts, s->max_contacts);
  fprintf(f, "iterations      mean %.1f, max %d (solve %.1f us per step)\n", s->mean_iterations,
          s->max_iterations, s->mean_solve_us);
  const mr_step_timing *t = &s->mean_timing;
  fprintf(f,
          "step            %.1f us: collision %.0f %%, assembly %.0f %%, consistency %.0f %%, "
          "solver %.0f %% (dynamics %.0f %%, kinematics %.0f %%, integration %.0f %%)\n",
          t->total, share(t->collision, t), share(t->assembly, t), share(t->consistency, t),
          share(t->solver, t), share(t->dynamics, t), share(t->kinematics, t),
          share(t->integration, t));
  fprintf(f, "max eps_abs     %.3g\n", s->max_eps_abs);
  fprintf(f, "max penetration %.3g m\n", s->max_penetration);
  fprintf(f, "energy          %.6g J -> %.6g J (drift %+.3g J)\n", s->energy_start, s->energy_end,
          s->energy_end - s->energy_start);
  fprintf(f, "warnings        %ld not converged, %ld collision failures\n", s->not_converged,
          s->collision_failures);
  fprintf(f, "NCP criterion   %ld steps above eps_abs\n", s->ncp_not_converged);
  fprintf(f, "budget          %ld steps stopped at the solver's budget; longest step %.3g ms\n",
          s->budget, 1e-3 * s->max_step_us);
  if (s->falls)
    fprintf(f,
            "falls           %ld: a robot under MPC control fell (base below half its standing "
            "height, or tilted beyond 60 degrees)\n",
            s->falls);
  if (s->interrupted) fputs("interrupted     yes: the run stopped early on SIGINT\n", f);
}

static void json_field(FILE *f, const char *key, double x, int last) {
  fprintf(f, "  \"%s\": ", key);
  mr_json_write_number(f, x);
  fputs(last ? "\n" : ",\n", f);
}

void mr_run_summary_json(FILE *f, const char *scene, const char *solver, const mr_run_summary *s) {
  fputs("{\n  \"scene\": ", f);
  mr_json_write_string(f, scene);
  fputs(",\n  \"solver\": ", f);
  mr_json_write_string(f, solver);
  fprintf(f, ",\n  \"interrupted\": %s,\n", s->interrupted ? "true" : "false");
  json_field(f, "steps", (double)s->steps, 0);
  json_field(f, "sim_time", s->sim_time, 0);
  json_field(f, "wall_time", s->wall_time, 0);
  json_field(f, "realtime_factor", s->realtime_factor, 0);
  json_field(f, "mean_contacts", s->mean_contacts, 0);
  json_field(f, "max_contacts", s->max_contacts, 0);
  json_field(f, "max_eps_abs", s->max_eps_abs, 0);
  json_field(f, "max_penetration", s->max_penetration, 0);
  json_field(f, "mean_iterations", s->mean_iterations, 0);
  json_field(f, "max_iterations", s->max_iterations, 0);
  json_field(f, "mean_solve_us", s->mean_solve_us, 0);
  const mr_step_timing *t = &s->mean_timing;
  json_field(f, "mean_step_us", t->total, 0);
  json_field(f, "max_step_us", s->max_step_us, 0);
  json_field(f, "collision_share", share(t->collision, t) / 100, 0);
  json_field(f, "assembly_share", share(t->assembly, t) / 100, 0);
  json_field(f, "consistency_share", share(t->consistency, t) / 100, 0);
  json_field(f, "solver_share", share(t->solver, t) / 100, 0);
  json_field(f, "dynamics_share", share(t->dynamics, t) / 100, 0);
  json_field(f, "kinematics_share", share(t->kinematics, t) / 100, 0);
  json_field(f, "integration_share", share(t->integration, t) / 100, 0);
  json_field(f, "energy_start", s->energy_start, 0);
  json_field(f, "energy_end", s->energy_end, 0);
  json_field(f, "warnings", (double)(s->not_converged + s->collision_failures + s->falls), 0);
  json_field(f, "not_converged", (double)s->not_converged, 0);
  json_field(f, "ncp_not_converged", (double)s->ncp_not_converged, 0);
  json_field(f, "budget", (double)s->budget, 0);
  json_field(f, "collision_failures", (double)s->collision_failures, 0);
  json_field(f, "falls", (double)s->falls, 1);
  fputs("}\n", f);
}
