/* MPI for commands that spread independent work over processes (moreau sweep).
 *
 * The moreau program links the system's MPI library but initialises it only when an MPI
 * launcher started the process (mpirun, mpiexec, srun: their environment variables say so);
 * otherwise it is one process of rank 0 among 1 and no MPI function is called. Only the calling
 * thread uses MPI (MPI_THREAD_FUNNELED). */
#ifndef MOREAU_CLI_MPI_H
#define MOREAU_CLI_MPI_H

#include <stddef.h>

typedef struct {
  int rank, size; /* this process's rank among size (0 of 1 without a launcher) */
  int local_size; /* processes on this machine (1 without a launcher) */
  int active;     /* MPI initialised: mr_cli_mpi_stop must finalise it */
} mr_cli_mpi;

/* initialise MPI when a launcher started the process, fill m; nonzero (with a message on
 * stderr) when MPI fails to start */
int mr_cli_mpi_start(mr_cli_mpi *m);
/* finalise MPI if it was started */
void mr_cli_mpi_stop(mr_cli_mpi *m);
/* every rank's text, concatenated in rank order, on rank 0 (malloc'd, NUL-terminated, its
 * length in *len); NULL on the other ranks, and on rank 0 when out of memory or MPI fails */
char *mr_cli_mpi_gather(const mr_cli_mpi *m, const char *text, size_t len, size_t *total);
/* the sum of x over the ranks, on every rank */
long mr_cli_mpi_sum(const mr_cli_mpi *m, long x);
/* rank 0's x, on every rank */
int mr_cli_mpi_bcast(const mr_cli_mpi *m, int x);

#endif
