/* Shared by the libFuzzer harnesses: the input as a NUL-terminated string. */
#ifndef MOREAU_FUZZ_UTIL_H
#define MOREAU_FUZZ_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a malloc'ed copy of data with a terminating NUL (NULL when out of memory) */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return NULL;
  memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

#endif
