/* nodes model 'D': the NODES runtime's own work. */
#include "trace/events/tables.h"

static const struct evdecl events[] = {
	REGION("DR[", "DR]", "registering the accesses of a task"),
	REGION("DU[", "DU]", "unregistering the accesses of a task"),
	REGION("DW[", "DW]", "waiting for an if(0) task"),
	REGION("DI[", "DI]", "running an if(0) task inline"),
	REGION("DT[", "DT]", "a taskwait"),
	REGION("DC[", "DC]", "creating a task"),
	REGION("DS[", "DS]", "submitting a task"),
	REGION("DP[", "DP]", "spawning a function as a task"),
};

const struct model_info model_nodes = { 'D', "nodes", MODEL_NODES_VERSION, events, COUNT(events) };
