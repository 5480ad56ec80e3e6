/* Status codes and error messages. Functions that can fail return an mr_status and, when given
 * an mr_error, fill it with a message naming the file, line and offending value. */
#ifndef MOREAU_ERROR_H
#define MOREAU_ERROR_H

typedef enum {
  MR_OK = 0,
  MR_ERR_IO,          /* a file could not be opened or read */
  MR_ERR_PARSE,       /* malformed input text (JSON, YAML, XML, STL, OBJ) */
  MR_ERR_INVALID,     /* well-formed input with an invalid value (negative mass, wrong size...) */
  MR_ERR_UNSUPPORTED, /* valid input that moreau does not handle (unknown joint type...) */
  MR_ERR_NOMEM,       /* allocation failed, or a preallocated bound was exceeded */
  MR_ERR_NUMERIC,     /* a numerical failure: NaN, a matrix that is not positive definite... */
  MR_ERR_LIMIT        /* an iteration or search budget was exhausted */
} mr_status;

#define MR_ERROR_MSG_MAX 512

typedef struct {
  mr_status status;
  char msg[MR_ERROR_MSG_MAX];
} mr_error;

/* Fill err (which may be NULL) with a printf-style message; returns status. */
mr_status mr_error_set(mr_error *err, mr_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Reset err to MR_OK with an empty message. */
void mr_error_clear(mr_error *err);

/* A short lower-case name of a status ("ok", "io", "parse", ...). */
const char *mr_status_name(mr_status status);

#endif
