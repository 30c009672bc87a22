/* ovni model 'O': thread life cycle, affinity, buffer flushes, marks. */
#include "trace/events/tables.h"

static const struct evdecl events[] = {
	{ "OAr(i32 cpu, i32 tid)", "moves thread %{tid} to CPU %{cpu}" },
	{ "OAs(i32 cpu)", "moves itself to CPU %{cpu}" },
	{ "OB.", "marks one event of a burst (for measuring the cost of an event)" },
	{ "OHC(i32 cpu, u64 tag)", "announces a new thread for CPU %{cpu}, tag %#llx{tag}" },
	{ "OHc", "cools down: still running, about to stop" },
	{ "OHe", "ends and gives up its CPU for good" },
	{ "OHp", "pauses, giving up its CPU" },
	{ "OHr", "runs again on its CPU" },
	{ "OHw", "warms up: paused, about to run again" },
	{ "OHx(i32 cpu, i32 tid, u64 tag)", "begins running on CPU %{cpu}; creator thread %{tid}, tag %#llx{tag}" },
	{ "OCn(i32 cpu)", "counts %{cpu} CPUs (old event, no longer used)" },
	REGION("OF[", "OF]", "a flush of its event buffer to disk"),
	REGION("OU[", "OU]", "a stretch of events that may be out of clock order"),
	{ "OM[(i64 value, i32 type)", "pushes %{value} onto mark %{type}" },
	{ "OM](i64 value, i32 type)", "pops %{value} from mark %{type}" },
	{ "OM=(i64 value, i32 type)", "sets mark %{type} to %{value}" },
};

const struct model_info model_ovni = { 'O', "ovni", MODEL_OVNI_VERSION, events, COUNT(events) };
