/* ovni lib: the libovni API files, to compile and link against. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/msg.h"
#include "cmd/blob.h"

static const char usage[] =
	"Usage: ovni lib DIR\n"
	"Writes what a program needs to use the libovni 1.x API with only this\n"
	"binary installed: DIR/ovni.h, DIR/libovni.so.1 (the ovni record shim),\n"
	"DIR/libovni.so (a symlink to it) and DIR/ovni.pc: compile and link\n"
	"with the flags pkg-config gives for ovni (PKG_CONFIG_PATH=DIR), see\n"
	"ovni-lib(1). Under ovni record the recorder's own copy is used.\n"
	"\n"
	"Options:\n"
	"  -h, --help  show this help\n";

static int run(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cmd_print_usage(&cmd_lib, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		msg_err("expected one directory; `ovni lib --help` explains");
		return 1;
	}
	struct shim_blob blob = shim_embedded();
	if (shim_write_lib(&blob, argv[1]) != 0)
		return 1;
	msg_info("wrote ovni.h, libovni.so.1, libovni.so and ovni.pc in %s", argv[1]);
	return 0;
}

const struct command cmd_lib = {
	.name = "lib",
	.summary = "write ovni.h and libovni.so to build programs against the libovni API",
	.usage = usage,
	.run = run,
};
