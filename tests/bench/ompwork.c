/* Work for the emulator's bench on a real recorded program: argv[1]
 * rounds of a dynamic loop and a tree of tasks (three children a node) in
 * a parallel region of 4 threads, about 4000 events a round under
 * `ovni record`. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* Nodes of a task tree of the given depth, each child a task. */
static long tree(int depth)
{
	if (depth == 0)
		return 1;
	long kids[3];
	for (int i = 0; i < 3; i++) {
#pragma omp task shared(kids)
		kids[i] = tree(depth - 1);
	}
#pragma omp taskwait
	return 1 + kids[0] + kids[1] + kids[2];
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100, sum = 0, nodes = 0;
#pragma omp parallel num_threads(4)
	for (long r = 0; r < rounds; r++) {
#pragma omp for schedule(dynamic, 4) reduction(+ : sum)
		for (int i = 0; i < 256; i++)
			sum += i;
#pragma omp single
		nodes += tree(5);
	}
	printf("ompwork: %ld rounds, %ld %ld\n", rounds, sum, nodes);
	return 0;
}
