/* moreau version */
#include <stdio.h>

#include "cli/commands.h"

#define MOREAU_VERSION "0.1.0"

int mr_cmd_version(int argc, char **argv) {
  printf("moreau %s\n", MOREAU_VERSION);
  return 0;
}
