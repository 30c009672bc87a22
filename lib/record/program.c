#include "record/program.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int elf_find_program(const char *name, char *path, size_t n)
{
	if (strchr(name, '/')) {
		if ((size_t)snprintf(path, n, "%s", name) >= n)
			return -1;
		return access(path, X_OK) == 0 ? 0 : -1;
	}
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/local/bin:/bin:/usr/bin";
	while (*p) {
		size_t len = strcspn(p, ":");
		if ((size_t)snprintf(path, n, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < n &&
		    access(path, X_OK) == 0)
			return 0;
		p += len;
		if (*p == ':')
			p++;
	}
	return -1;
}

int elf_is_static(const char *path, char *interp, size_t n)
{
	if (n)
		interp[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf64_Ehdr eh;
	int r = 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return 0; /* not a 64-bit ELF: a script, its interpreter gets the shim */
	}
	r = 1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != (ssize_t)sizeof(ph)) {
			r = -1;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			r = 0;
			if (ph.p_filesz > 0 && ph.p_filesz < n &&
			    pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
				interp[ph.p_filesz - 1] = '\0';
			else if (n)
				interp[0] = '\0';
			break;
		}
	}
	close(fd);
	return r;
}
