/* MPI for the moreau command (mpi.h): start only under a launcher, gather text to rank 0. */
#include "cli/mpi.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a variable that MPI launchers set in the processes they start: Open MPI's mpirun, MPICH's
 * Hydra and Slurm (PMI), PMIx-based launchers */
static int launched(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
  for (size_t k = 0; k < sizeof vars / sizeof *vars; ++k)
    if (getenv(vars[k])) return 1;
  return 0;
}

/* the processes of this job on this machine */
static int local_size(void) {
  MPI_Comm node;
  int n = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) return 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

int mr_cli_mpi_start(mr_cli_mpi *m) {
  *m = (mr_cli_mpi){0, 1, 1, 0};
  if (!launched()) return 0;
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "moreau: MPI_Init_thread failed under an MPI launcher\n");
    return 1;
  }
  m->active = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m->size);
  m->local_size = local_size();
  return 0;
}

void mr_cli_mpi_stop(mr_cli_mpi *m) {
  if (m->active) MPI_Finalize();
  m->active = 0;
}

/* a copy of text as the whole result (one process) */
static char *copy_text(const char *text, size_t len, size_t *total) {
  char *s = malloc(len + 1);
  if (!s) return NULL;
  memcpy(s, text, len);
  s[len] = '\0';
  *total = len;
  return s;
}

/* rank 0's verdict, on every rank: whether the collective that follows goes ahead */
static int root_ok(int ok) {
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok;
}

/* lengths to rank 0, then the texts at their offsets (MPI counts are ints); when rank 0 cannot
 * allocate, every rank stops before the next collective */
static char *gather_texts(const mr_cli_mpi *m, const char *text, int n, size_t *total) {
  int *counts = m->rank ? NULL : calloc((size_t)m->size, 2 * sizeof *counts);
  if (!root_ok(m->rank || counts)) return NULL;
  MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char *all = NULL;
  long sum = 0;
  for (int r = 0; counts && r < m->size; ++r)
    counts[m->size + r] = (int)sum, sum += counts[r];
  if (counts && sum < INT_MAX) all = malloc((size_t)sum + 1);
  if (!root_ok(m->rank || all)) return free(counts), NULL;
  MPI_Gatherv(text, n, MPI_CHAR, all, counts, counts ? counts + m->size : NULL, MPI_CHAR, 0,
              MPI_COMM_WORLD);
  free(counts);
  if (all) all[sum] = '\0', *total = (size_t)sum;
  return all;
}

char *mr_cli_mpi_gather(const mr_cli_mpi *m, const char *text, size_t len, size_t *total) {
  *total = 0;
  if (!m->active) return copy_text(text, len, total);
  /* a text of INT_MAX bytes or more is not sent: rank 0 then misses its lines */
  int n = len < INT_MAX ? (int)len : 0;
  return gather_texts(m, text, n, total);
}

long mr_cli_mpi_sum(const mr_cli_mpi *m, long x) {
  long sum = x;
  if (m->active) MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

int mr_cli_mpi_bcast(const mr_cli_mpi *m, int x) {
  if (m->active) MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return x;
}
