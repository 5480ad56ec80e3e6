/* Standalone contact problems as JSON files (DESIGN.md §5):
 *   {"nc": n, "G": [[...], ...] (3n rows of 3n), "g": [3n], "mu": [n],
 *    "R": [3n] (optional), "lambda0": [3n] (optional warm start),
 *    "phi": [n] (optional gaps, for soft), "dt": Δt (optional, s),
 *    "kind": [n] (optional: 0 contact, 1 bilateral; absent = all contacts)}
 * Loading allocates (never inside a step); the result owns its arrays and offers an
 * mr_contact_problem view of them. */
#ifndef MOREAU_CONTACT_PROBLEM_IO_H
#define MOREAU_CONTACT_PROBLEM_IO_H

#include "moreau/contact.h"

/* largest nc accepted from a file (G then holds 36·10⁶ doubles, 288 MB) */
#define MR_PROBLEM_MAX_NC 2000

typedef struct {
  int nc;
  double *G;                  /* 3nc x 3nc, row-major */
  double *g;                  /* 3nc */
  double *mu;                 /* nc */
  double *R;                  /* 3nc, or NULL when absent */
  double *lambda0;            /* 3nc warm start, or NULL when absent */
  double *phi;                /* nc gaps, or NULL when absent */
  unsigned char *kind;        /* nc MR_KIND_* entries, or NULL when absent */
  mr_contact_problem problem; /* a view of the arrays above */
} mr_problem_file;

/* Parse text (name is used in messages: "name:line:col: ..."). On failure *out is left empty. */
mr_status mr_problem_file_parse(const char *text, const char *name, mr_problem_file *out,
                                mr_error *err);
/* Read and parse a file. */
mr_status mr_problem_file_load(const char *path, mr_problem_file *out, mr_error *err);
void mr_problem_file_free(mr_problem_file *f);
/* Write p (and lambda0 when not NULL) in the format above, numbers round-trip exact. */
mr_status mr_problem_file_save(const char *path, const mr_contact_problem *p, const double *lambda0,
                               mr_error *err);

#endif
