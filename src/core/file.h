/* Reading a whole file into memory (loaders only, never in a step). */
#ifndef MOREAU_CORE_FILE_H
#define MOREAU_CORE_FILE_H

#include <stddef.h>

#include "moreau/error.h"

/* the largest file a loader reads (1 GiB): an endless source such as /dev/zero is an error, not
 * an exhausted memory */
#define MR_FILE_MAX ((size_t)1 << 30)

/* Read path into a malloc'ed, NUL-terminated *text of *len bytes (the file may itself contain
 * NUL bytes: callers that need text check strlen(*text) == *len). Errors name the file; a file
 * over MR_FILE_MAX bytes is MR_ERR_LIMIT. */
mr_status mr_read_file(const char *path, char **text, size_t *len, mr_error *err);

#endif
