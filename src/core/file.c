/* Reading a whole file into memory (see file.h). */
#include "core/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mr_status mr_read_file(const char *path, char **text, size_t *len, mr_error *err) {
  *text = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return mr_error_set(err, MR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  /* read in doubling chunks, keeping one byte for the terminator */
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    if (cap > MR_FILE_MAX) {
      free(buf), fclose(f);
      return mr_error_set(err, MR_ERR_LIMIT, "%s: larger than %zu bytes", path, MR_FILE_MAX);
    }
    char *b = realloc(buf, cap * 2);
    if (!b) free(buf);
    buf = b, cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf) return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  if (bad) {
    free(buf);
    return mr_error_set(err, MR_ERR_IO, "%s: read error", path);
  }
  buf[n] = '\0';
  *text = buf, *len = n;
  return MR_OK;
}
