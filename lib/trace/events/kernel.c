/* kernel model 'K': context switches seen by the operating system. */
#include "trace/events/tables.h"

static const struct evdecl events[] = {
	{ "KCO", "is switched out of its CPU by the kernel" },
	{ "KCI", "is switched back into its CPU by the kernel" },
};

const struct model_info model_kernel = { 'K', "kernel", MODEL_KERNEL_VERSION, events, COUNT(events) };
