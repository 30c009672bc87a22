/* MPI patterns for the shim's MPI wrappers, chosen by argv[1]:
 *   ring       a token passed around the ranks (Send/Recv), then Barrier
 *   allreduce  Allreduce of the ranks, checked
 *   nonblock   Irecv/Isend with each neighbour, Waitall, then Ibarrier+Wait
 *   pingpong N ranks 0 and 1 exchange N one-int messages; prints ns per
 *              round trip (the bench)
 *   nulltest N N calls of MPI_Test on a null request, then of PMPI_Test;
 *              prints ns per call of each (the wrapper's own cost)
 * Prints "<rank>/<size> <pattern> ok" from every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int ring(void)
{
	int token = 0;
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	if (rank == 0) {
		token = 1;
		MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
		MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		token++;
		MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	return rank != 0 || token == size;
}

static int allreduce(void)
{
	int sum = 0;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	return sum == size * (size - 1) / 2;
}

static int nonblock(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int from_prev = -1, from_next = -1;
	MPI_Request req[4];
	MPI_Irecv(&from_prev, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &req[0]);
	MPI_Irecv(&from_next, 1, MPI_INT, next, 2, MPI_COMM_WORLD, &req[1]);
	MPI_Isend(&rank, 1, MPI_INT, next, 1, MPI_COMM_WORLD, &req[2]);
	MPI_Isend(&rank, 1, MPI_INT, prev, 2, MPI_COMM_WORLD, &req[3]);
	MPI_Status st[4];
	MPI_Waitall(4, req, st);
	MPI_Request b;
	MPI_Ibarrier(MPI_COMM_WORLD, &b);
	MPI_Wait(&b, MPI_STATUS_IGNORE);
	return from_prev == prev && from_next == next;
}

static int pingpong(long n)
{
	int x = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (long i = 0; i < n && rank < 2; i++) {
		if (rank == 0) {
			MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			x++;
			MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		}
	}
	double t1 = MPI_Wtime();
	if (rank == 0)
		printf("pingpong: %ld round trips, %.1f ns each\n", n, (t1 - t0) * 1e9 / (double)n);
	return rank != 0 || x == n;
}

static double per_call(int (*test)(MPI_Request *, int *, MPI_Status *), long n)
{
	MPI_Request req = MPI_REQUEST_NULL;
	int flag;
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++)
		test(&req, &flag, MPI_STATUS_IGNORE);
	return (MPI_Wtime() - t0) * 1e9 / (double)n;
}

static int nulltest(long n)
{
	double wrapped = per_call(MPI_Test, n), direct = per_call(PMPI_Test, n);
	if (rank == 0)
		printf("nulltest: %.1f ns MPI_Test, %.1f ns PMPI_Test\n", wrapped, direct);
	return 1;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "ring";
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int good;
	if (!strcmp(what, "ring"))
		good = ring();
	else if (!strcmp(what, "allreduce"))
		good = allreduce();
	else if (!strcmp(what, "nonblock"))
		good = nonblock();
	else if (!strcmp(what, "pingpong"))
		good = pingpong(argc > 2 ? atol(argv[2]) : 100000);
	else if (!strcmp(what, "nulltest"))
		good = nulltest(argc > 2 ? atol(argv[2]) : 1000000);
	else
		good = 0;
	printf("%d/%d %s %s\n", rank, size, what, good ? "ok" : "FAILED");
	MPI_Finalize();
	return !good;
}
