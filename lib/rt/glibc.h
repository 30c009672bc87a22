/* Included first in every shim file: binds the glibc symbols whose default
 * version is newer than 2.17 to their old versions, so the shim loads on
 * any glibc >= 2.17 (tests/e2e/record.sh checks with objdump -T). */
#if defined(__x86_64__)
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
__asm__(".symver dlvsym,dlvsym@GLIBC_2.2.5");
__asm__(".symver pthread_key_create,pthread_key_create@GLIBC_2.2.5");
__asm__(".symver pthread_setspecific,pthread_setspecific@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_sigmask,pthread_sigmask@GLIBC_2.2.5");
#endif
/* glibc 2.33 made fstat and stat real symbols; older ones only have
 * __fxstat and __xstat. */
#define fstat(fd, st) rt_fstat(fd, st)
#define stat(path, st) rt_stat(path, st)
