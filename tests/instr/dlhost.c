/* Loads the library argv[1] with dlopen(RTLD_LOCAL) and runs its ext_run. */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	int (*run)(void) = (int (*)(void))dlsym(h, "ext_run");
	return run();
}
