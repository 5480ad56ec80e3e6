/* Reading a whole file into memory (loaders only, never in a step). */
#ifndef MOREAU_CORE_FILE_H
#define MOREAU_CORE_FILE_H

#include <stddef.h>

#include "moreau/error.h"

/* Read path into a malloc'ed, NUL-terminated *text of *len bytes (the file may itself contain
 * NUL bytes: callers that need text check strlen(*text) == *len). Errors name the file. */
mr_status mr_read_file(const char *path, char **text, size_t *len, mr_error *err);

#endif
