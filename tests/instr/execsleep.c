/* Sleeps, execs itself (the thread's stream goes on in the new image),
 * and the new image sleeps twice: three waits of one thread, the first
 * declared by the image before the exec. */
#include <unistd.h>
int main(int argc, char **argv)
{
	usleep(1000);
	if (argc < 2)
		execl("/proc/self/exe", argv[0], "again", (char *)0);
	usleep(1000);
	return 0;
}
