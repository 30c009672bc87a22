/* An MPI program as a library that a host loads with dlopen(RTLD_LOCAL), as
 * Python loads mpi4py: its MPI calls reach the shim's wrappers, whose
 * library is not the "next" one. Prints "<rank>/<size> dlopen ok". */
#include <mpi.h>
#include <stdio.h>
int ext_run(void)
{
	int rank, size, sum = 0;
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("%d/%d dlopen %s\n", rank, size, sum == size * (size - 1) / 2 ? "ok" : "FAILED");
	MPI_Finalize();
	return 0;
}
