/* OpenMP constructs for the shim's OMPT tool: a parallel region with a
 * static and a dynamic loop, a single, a critical section, an explicit
 * barrier, tasks with a taskwait, a taskgroup and an undeferred (if(0))
 * task. Prints "omp: ok N". */
#include <omp.h>
#include <stdio.h>

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

int main(void)
{
	long sum = 0, crit = 0, f = 0;
#pragma omp parallel num_threads(4)
	{
#pragma omp for reduction(+ : sum)
		for (int i = 0; i < 1000; i++)
			sum += i;
#pragma omp for schedule(dynamic, 10)
		for (int i = 0; i < 100; i++) {
#pragma omp critical
			crit++;
		}
#pragma omp barrier
#pragma omp single
		f = fib(10);
#pragma omp taskgroup
		{
#pragma omp task
			{
#pragma omp atomic
				crit++;
			}
#pragma omp task if (0)
			{
#pragma omp atomic
				crit++;
			}
		}
	}
	int good = sum == 499500 && crit == 108 && f == 55;
	printf("omp: %s %ld\n", good ? "ok" : "FAILED", sum);
	return !good;
}
