/* For the channel tests: a dirty callback that logs "name=value " of each
 * channel it is called for, in call order, into log_buf. */
#ifndef OVNI_TEST_TCHANLOG_H
#define OVNI_TEST_TCHANLOG_H

#include <string.h>

#include "chan/chan.h"

static char log_buf[4096];

static inline int log_emit(struct chan *c, void *arg)
{
	char b[24];
	(void)arg;
	strcat(log_buf, c->name);
	strcat(log_buf, "=");
	strcat(log_buf, value_str(chan_read(c), b));
	strcat(log_buf, " ");
	return 0;
}

#endif
