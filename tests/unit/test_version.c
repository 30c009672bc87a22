/* Version strings as the reference reads them in ovni.require and
 * ovni_version_check: X.Y.Z, anything after the patch number ignored. */
#include <string.h>

#include "emu/model.h"
#include "rt/ovni.h"
#include "t.h"
#include "trace/events.h"
#include "trace/version.h"

static void ok_version(const char *s, int a, int b, int c)
{
	int v[3] = { -1, -1, -1 };
	CHECK(version_parse(s, v) == 0 && v[0] == a && v[1] == b && v[2] == c,
		"'%s' is %d.%d.%d", s, a, b, c);
}

static void bad_version(const char *s)
{
	int v[3];
	CHECK(version_parse(s, v) == -1, "'%s' is refused", s);
}

int main(void)
{
	ok_version("1.1.0", 1, 1, 0);
	ok_version("2.7.0", 2, 7, 0);
	ok_version("666.66.6", 666, 66, 6);
	ok_version("1.2.3-rc", 1, 2, 3);
	ok_version("1.2.3.4", 1, 2, 3);
	bad_version("");
	bad_version("1");
	bad_version("1.2");
	bad_version("1.2.");
	bad_version("a.b.c");
	bad_version("1..3");
	bad_version("-1.2.3");
	bad_version("1.2.3x");
	bad_version(" 1.2.3");
	bad_version("1.2.3-0123456789012345678901234567890123456789012345678901234567890");
	bad_version(NULL);

	/* one registry: the emulator's models are the catalogue's, and the
	 * public header's model version is the registry's */
	size_t n = 0, same = 0;
	for (size_t i = 0; emu_models[i]; i++, n++)
		same += model_info_by_id(emu_models[i]->info->id) == emu_models[i]->info;
	CHECK(n == 8 && same == n, "every emulator model is a catalogue entry (%zu of %zu)", same, n);
	for (n = 0; model_infos[n]; n++)
		;
	CHECK_INT((long)n, 8, "8 models in the catalogue");
	CHECK_STR(OVNI_MODEL_VERSION, model_info_by_name("ovni")->version,
		  "ovni.h's OVNI_MODEL_VERSION is the ovni model's");
	return t_done();
}
