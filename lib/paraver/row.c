#include "paraver/row.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/msg.h"
#include "base/out.h"

int row_write(const char *path, const char *const *labels, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!labels[i]) {
			msg_err("%s: row %zu has no label", path, i + 1);
			return -1;
		}
	}
	struct out o;
	if (out_create(&o, path, 0) != 0)
		return -1;
	out_str(&o, "LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE ");
	out_u64(&o, n);
	out_char(&o, '\n');
	for (size_t i = 0; i < n; i++) {
		out_str(&o, labels[i]);
		out_char(&o, '\n');
	}
	return out_close(&o);
}
