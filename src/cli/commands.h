/* Subcommands of the moreau command. Each takes (argc, argv) with argv[0] the command name and
 * returns the process exit code: 0 success, 1 a failed run (divergence, no convergence where
 * required), 2 bad usage or bad input. */
#ifndef MOREAU_CLI_COMMANDS_H
#define MOREAU_CLI_COMMANDS_H

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} mr_command;

int mr_cmd_version(int argc, char **argv);
int mr_cmd_run(int argc, char **argv);
int mr_cmd_compare(int argc, char **argv);
int mr_cmd_sweep(int argc, char **argv);
int mr_cmd_collide(int argc, char **argv);
int mr_cmd_list(int argc, char **argv);
int mr_cmd_check(int argc, char **argv);
int mr_cmd_rbd(int argc, char **argv);
int mr_cmd_derivatives(int argc, char **argv);
int mr_cmd_qpcc(int argc, char **argv);
int mr_cmd_solve(int argc, char **argv);
int mr_cmd_view(int argc, char **argv);

#endif
