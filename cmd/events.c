/* ovni events: the catalogue of every event the models declare, in Markdown. */
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "trace/events.h"
#include "base/msg.h"
#include "base/out.h"

static const char usage[] =
	"Usage: ovni events [MODEL]\n"
	"Prints the catalogue of events in Markdown: for each model (or only\n"
	"MODEL, given by name or id character) its id and version, then every\n"
	"event's signature and what it means. Models: nanos6 (6), nodes (D),\n"
	"kernel (K), mpi (M), ovni (O), openmp (P), tampi (T), nosv (V).\n"
	"\n"
	"Options:\n"
	"  -h, --help  show this help\n";

static const struct model_info *find_model(const char *arg)
{
	if (strlen(arg) == 1)
		return model_info_by_id(arg[0]);
	return model_info_by_name(arg);
}

/* "nanos6 (6), nodes (D), ..." for the error message. */
static void list_models(char *dst, size_t cap)
{
	size_t len = 0;
	dst[0] = '\0';
	for (size_t i = 0; model_infos[i] && len < cap; i++)
		len += (size_t)snprintf(dst + len, cap - len, "%s%s (%c)", i ? ", " : "",
					model_infos[i]->name, model_infos[i]->id);
}

static int run(int argc, char **argv)
{
	int done = cmd_help_only(&cmd_events, argc, argv);
	if (done >= 0)
		return done;
	if (argc - optind > 1) {
		msg_err("expected at most one model; `ovni events --help` explains");
		return 1;
	}
	const struct model_info *m = NULL;
	if (optind < argc && !(m = find_model(argv[optind]))) {
		char names[256];
		list_models(names, sizeof(names));
		msg_err("unknown model '%s'; the models are %s", argv[optind], names);
		return 1;
	}
	if (events_init() < 0)
		return 1;
	struct out out;
	if (out_init(&out, 1, "standard output", 0) < 0)
		return 1;
	events_markdown(&out, m);
	return out_close(&out) < 0 ? 1 : 0;
}

const struct command cmd_events = {
	.name = "events",
	.summary = "print the catalogue of events of every model in Markdown",
	.usage = usage,
	.run = run,
};
