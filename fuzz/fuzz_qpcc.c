/* libFuzzer harness: the QPCC problem reader of `moreau qpcc` (src/cli/qpcc.c: dimensions,
 * overflow-safe sizes, keys, bounds) and mr_qpcc_validate. The reader is file-local to the
 * command, so its source is compiled into the harness. */
#include <stdint.h>

#include "cli/qpcc.c"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  mr_json *root = NULL;
  mr_error err;
  problem_file pf;
  memset(&pf, 0, sizeof pf);
  if (mr_json_parse(text, "fuzz.json", &root, &err) == MR_OK)
    parse_problem(root, "fuzz.json", &pf, &err);
  mr_json_free(root);
  problem_free(&pf);
  free(text);
  return 0;
}
