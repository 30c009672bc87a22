/* tampi model 'T': the Task-Aware MPI library. */
#include "trace/events/tables.h"

static const struct evdecl events[] = {
	REGION("TCi", "TCI", "issuing a non-blocking MPI operation"),
	REGION("TGc", "TGC", "checking the pending requests of the global array"),
	REGION("TLi", "TLI", "a TAMPI interface function"),
	REGION("TLp", "TLP", "the TAMPI polling function"),
	REGION("TQa", "TQA", "adding requests to a queue"),
	REGION("TQt", "TQT", "moving queued requests to the global array"),
	REGION("TRc", "TRC", "processing a completed request"),
	REGION("TRt", "TRT", "testing one request"),
	REGION("TRa", "TRA", "testing all requests"),
	REGION("TRs", "TRS", "testing some requests"),
	REGION("TTc", "TTC", "creating a ticket"),
	REGION("TTw", "TTW", "waiting on a ticket"),
};

const struct model_info model_tampi = { 'T', "tampi", MODEL_TAMPI_VERSION, events, COUNT(events) };
