/* The preload shim (lib/rt, libovni.so) and ovni.h embedded in the binary:
 * installed once per user and content for `ovni record`, or written out by
 * `ovni lib`. */
#ifndef OVNI_SHIM_H
#define OVNI_SHIM_H

#include <stddef.h>

/* The shim and its header as the binary carries them (cmd/blob.h, from
 * mk/blob.S): lib/ takes them as data, so libovnitools.a links alone. */
struct shim_blob {
	const unsigned char *so, *hdr;
	size_t so_len, hdr_len;
};

/* The user's private directory (mode 0700, owned by the user, not a
 * symlink): $XDG_RUNTIME_DIR/ovni, else ${TMPDIR:-/tmp}/ovni-<uid>, else
 * ~/.cache/ovni, the first on a file system that allows executing code.
 * Returns an open directory fd and its path in path, or -1 after a
 * message. */
int shim_private_dir(char *path, size_t n);

/* Makes sure DIR/libovni.so.1 holds the shim b->so, DIR being a
 * subdirectory of the private one named by the content hash; safe against
 * concurrent runs (written beside, renamed over) and symlinks. Fills dir.
 * 0, or -1 after a message. */
int shim_install(const struct shim_blob *b, char *dir, size_t n);

/* `ovni lib`: DIR/ovni.h, libovni.so.1, libovni.so -> libovni.so.1 and
 * ovni.pc (prefix DIR). 0, or -1 after a message. */
int shim_write_lib(const struct shim_blob *b, const char *dir);

#endif
