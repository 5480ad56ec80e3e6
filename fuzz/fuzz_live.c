/* libFuzzer harness: the live viewer's command parser (src/viewer/live.c), which reads the text
 * messages pages send over the network. A parsed command's numbers must all be finite and
 * within ±1e6 (the bounds mr_live_poll relies on), and a malformed command must parse as none. */
#include <math.h>
#include <stdint.h>

#include "fuzz_util.h"
#include "viewer/live_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  double x[7];
  for (int k = 0; k < 7; ++k)
    x[k] = NAN;
  mr_live_cmd c = mr_live_parse_command(text, x);
  int n = c == MR_LIVE_CMD_SPEED ? 1 : c == MR_LIVE_CMD_PERTURB ? 7 : 0;
  for (int k = 0; k < n; ++k)
    if (!isfinite(x[k]) || fabs(x[k]) > 1e6) abort();
  free(text);
  return 0;
}
