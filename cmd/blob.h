/* The shim and ovni.h that mk/blob.S embeds in the binary, for the
 * subcommands that install them (record, lib). */
#ifndef OVNI_CMD_BLOB_H
#define OVNI_CMD_BLOB_H

#include "record/shim.h"

extern const unsigned char shim_so_start[], shim_so_end[], shim_hdr_start[], shim_hdr_end[];

static inline struct shim_blob shim_embedded(void)
{
	return (struct shim_blob){
		.so = shim_so_start, .so_len = (size_t)(shim_so_end - shim_so_start),
		.hdr = shim_hdr_start, .hdr_len = (size_t)(shim_hdr_end - shim_hdr_start),
	};
}

#endif
