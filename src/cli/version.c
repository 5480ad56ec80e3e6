/* moreau version, moreau --version, moreau -V */
#include <stdio.h>

#include "cli/commands.h"
#include "moreau/version.h"

int mr_cmd_version(int argc, char **argv) {
  printf("moreau %s\n", MR_VERSION_STRING);
  return 0;
}
