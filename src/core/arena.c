/* Scratch memory stack (see arena.h). */
#include "core/arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 32


int mr_arena_init(mr_arena *a, size_t size) {
  a->top = a->peak = 0;
  a->size = size;
  size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  a->size = size;
  a->base = size ? aligned_alloc(ARENA_ALIGN, size) : NULL;
  return (size && !a->base) ? -1 : 0;
}

void mr_arena_destroy(mr_arena *a) {
  free(a->base);
  a->base = NULL;
  a->size = a->top = 0;
}

void *mr_arena_alloc(mr_arena *a, size_t bytes) {
  size_t start = (a->top + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (start > a->size || bytes > a->size - start) return NULL;
  a->top = start + bytes;
  if (a->top > a->peak) a->peak = a->top;
  return a->base + start;
}

double *mr_arena_doubles(mr_arena *a, size_t n) {
  double *p = mr_arena_alloc(a, n * sizeof(double));
  if (p) memset(p, 0, n * sizeof(double));
  return p;
}
