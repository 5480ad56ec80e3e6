/* The moreau command: a table of subcommands. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hints.h"

static const mr_command commands[] = {
    {"version", "print the version", mr_cmd_version},
    {"run", "step a scene and summarise the run", mr_cmd_run},
    {"compare", "run a scene once per solver, side by side", mr_cmd_compare},
    {"view", "write a self-contained HTML replay of a run", mr_cmd_view},
    {"sweep", "run a scene over a grid of settings, solvers and seeds", mr_cmd_sweep},
    {"check", "load and validate a scene file", mr_cmd_check},
    {"collide", "the contacts of a scene's initial state", mr_cmd_collide},
    {"list", "name the solvers, geometry types and joint types", mr_cmd_list},
    {"rbd", "rigid-body dynamics of a URDF model at one state", mr_cmd_rbd},
    {"derivatives", "the Jacobians of one step of a scene at a time T", mr_cmd_derivatives},
    {"qpcc", "solve a QPCC control-through-contact problem (JSON)", mr_cmd_qpcc},
    {"solve", "solve a contact problem (JSON) with a chosen solver", mr_cmd_solve},
};

static void usage(FILE *f) {
  fprintf(f, "usage: moreau COMMAND [ARGS...]\n       moreau --version\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'moreau COMMAND --help' documents each command.\n");
}

/* standard output may be a full disk or a closed pipe: a lost write fails the command */
static int check_stdout(int code) {
  errno = 0;
  if (fflush(stdout) == 0 && !ferror(stdout)) return code;
  fprintf(stderr, "moreau: cannot write standard output: %s\n",
          errno ? strerror(errno) : "I/O error");
  return code ? code : 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return check_stdout(argc < 2 ? 2 : 0);
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
    return check_stdout(mr_cmd_version(argc - 1, argv + 1));
  const char *names[sizeof commands / sizeof commands[0] + 1];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i) {
    if (strcmp(argv[1], commands[i].name) == 0)
      return check_stdout(commands[i].run(argc - 1, argv + 1));
    names[i] = commands[i].name;
  }
  names[sizeof commands / sizeof commands[0]] = NULL;
  const char *near = mr_cli_nearest(argv[1], names);
  fprintf(stderr, "moreau: unknown command '%s'%s%s%s\n", argv[1], near ? ": did you mean '" : "",
          near ? near : "", near ? "'?" : "");
  usage(stderr);
  return 2;
}
