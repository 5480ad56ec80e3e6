/* Output files that appear whole or not at all (loaders and front ends only, never in a step).
 *
 * A regular file (existing or new) is written to a temporary file in the same directory and
 * renamed over the path only by mr_output_commit, after every write, the flush, fsync and the
 * close succeeded: a failed or abandoned write leaves whatever was at the path untouched. A path
 * that exists and is not a regular file (/dev/null, a FIFO, a terminal) is written directly and
 * never removed. A symbolic link is followed: its target is replaced, the link is kept. */
#ifndef MOREAU_CORE_OUTPUT_H
#define MOREAU_CORE_OUTPUT_H

#include <stdio.h>

#include "moreau/error.h"

#define MR_OUTPUT_PATH_MAX 4096

typedef struct {
  FILE *f;                         /* write here between open and commit/discard */
  const char *path;                /* the path as given (for messages) */
  char target[MR_OUTPUT_PATH_MAX]; /* the file replaced on commit (symbolic links resolved) */
  char tmp[MR_OUTPUT_PATH_MAX];    /* the temporary file, "" when written directly */
} mr_output;

/* Open path for writing (see above). Errors name the path and the system's reason. */
mr_status mr_output_open(mr_output *o, const char *path, mr_error *err);

/* Flush and close, checking every write; the temporary file stays until commit or discard. On
 * a write error the temporary file is removed and err names the path. */
mr_status mr_output_close(mr_output *o, mr_error *err);

/* Close (if still open), then rename the temporary file over the target. On any write error
 * the temporary file is removed, the target is untouched and err names the path. */
mr_status mr_output_commit(mr_output *o, mr_error *err);

/* Close and remove the temporary file; the target is untouched. Safe on a closed output. */
void mr_output_discard(mr_output *o);

/* 1 when a and b name the same file: the same inode when both exist, otherwise the same
 * canonical path (directory resolved). Character devices (/dev/null) are never "the same". */
int mr_output_same_file(const char *a, const char *b);

/* Write s as one CSV field per RFC 4180: quoted, with quotes doubled, when it holds a comma, a
 * double quote, a carriage return or a line feed; as is otherwise. */
void mr_csv_write_field(FILE *f, const char *s);

#endif
