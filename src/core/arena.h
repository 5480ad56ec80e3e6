/* A mark/free stack of scratch memory, allocated once and reused by every step: no malloc in
 * the step. mr_arena_alloc returns 32-byte aligned blocks, or NULL when the arena is exhausted
 * (the caller reports MR_ERR_NOMEM); mr_arena_mark/mr_arena_reset release everything allocated
 * since the mark. */
#ifndef MOREAU_CORE_ARENA_H
#define MOREAU_CORE_ARENA_H

#include <stddef.h>

typedef struct mr_arena_s {
  unsigned char *base; /* the block (size bytes) */
  size_t size;         /* capacity in bytes */
  size_t top;          /* bytes in use */
  size_t peak;         /* largest top seen, to size arenas from measurements */
} mr_arena;

/* Allocate the arena's block; returns 0 on success, -1 when malloc fails. */
int mr_arena_init(mr_arena *a, size_t size);
void mr_arena_destroy(mr_arena *a);

static inline size_t mr_arena_mark(const mr_arena *a) { return a->top; }
static inline void mr_arena_reset(mr_arena *a, size_t mark) { a->top = mark; }

/* bytes from the arena, 32-byte aligned; NULL when it does not fit */
void *mr_arena_alloc(mr_arena *a, size_t bytes);

/* n doubles, zero-initialised; NULL when they do not fit */
double *mr_arena_doubles(mr_arena *a, size_t n);

#endif
