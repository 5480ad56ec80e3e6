/* Error values: status code plus a formatted message. */
#include "moreau/error.h"

#include <stdarg.h>
#include <stdio.h>

mr_status mr_error_set(mr_error *err, mr_status status, const char *fmt, ...) {
  if (!err) return status;
  err->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return status;
}

void mr_error_clear(mr_error *err) {
  if (!err) return;
  err->status = MR_OK;
  err->msg[0] = '\0';
}

const char *mr_status_name(mr_status status) {
  static const char *const names[] = {"ok",          "io",    "parse",   "invalid",
                                      "unsupported", "nomem", "numeric", "limit"};
  if ((unsigned)status < sizeof names / sizeof names[0]) return names[status];
  return "unknown";
}
