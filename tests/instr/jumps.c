/* Leaves a function by longjmp argv[1] times (no signal): an error path as
 * interpreters use them (perl's die, Lua's error). Prints "jumps N". */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf back;

static __attribute__((noinline)) void fail(volatile long *n)
{
	++*n;
	longjmp(back, 1);
}

int main(int argc, char **argv)
{
	long want = argc > 1 ? atol(argv[1]) : 1000;
	volatile long n = 0;
	setjmp(back);
	if (n < want)
		fail(&n);
	printf("jumps %ld\n", (long)n);
	return 0;
}
