/* Work for the emulator's bench on a real recorded program: argv[1]
 * rounds of a dynamic loop and a tree of tasks (fib) in a parallel region
 * of 4 threads, about 4700 events a round under `ovni record`. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
	if (n < 2)
		return n;
	long a, b;
#pragma omp task shared(a)
	a = fib(n - 1);
#pragma omp task shared(b)
	b = fib(n - 2);
#pragma omp taskwait
	return a + b;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100, sum = 0, f = 0;
#pragma omp parallel num_threads(4)
	for (long r = 0; r < rounds; r++) {
#pragma omp for schedule(dynamic, 4) reduction(+ : sum)
		for (int i = 0; i < 256; i++)
			sum += i;
#pragma omp single
		f += fib(12);
	}
	printf("ompwork: %ld rounds, %ld %ld\n", rounds, sum, f);
	return 0;
}
