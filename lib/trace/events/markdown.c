/* The event catalogue as Markdown, for `ovni events`. */
#include <string.h>

#include "trace/events.h"
#include "base/out.h"

/* Plain text in a table cell: punctuation that Markdown or HTML would
 * interpret gets a backslash, and '|' would end the cell. */
static void put_text(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*_[]<>|&~", *s))
			out_char(o, '\\');
		out_char(o, *s);
	}
}

/* A code span that survives backticks and '|' inside the signature. */
static void put_code(struct out *o, const char *s)
{
	size_t run = 0, longest = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	int pad = longest > 0;
	for (size_t i = 0; i <= longest; i++)
		out_char(o, '`');
	if (pad)
		out_char(o, ' ');
	for (; *s; s++) {
		if (*s == '|')
			out_char(o, '\\');
		out_char(o, *s);
	}
	if (pad)
		out_char(o, ' ');
	for (size_t i = 0; i <= longest; i++)
		out_char(o, '`');
}

static void put_model(struct out *o, const struct model_info *m)
{
	out_printf(o, "\n## Model %s\n\n", m->name);
	out_printf(o, "Model id `%c`, version %s, %zu events.\n\n", m->id, m->version, m->nevents);
	out_str(o, "| Event | Description |\n|---|---|\n");
	for (size_t i = 0; i < m->nevents; i++) {
		out_str(o, "| ");
		put_code(o, m->events[i].sig);
		out_str(o, " | ");
		put_text(o, m->events[i].desc);
		out_str(o, " |\n");
	}
}

void events_markdown(struct out *o, const struct model_info *m)
{
	out_str(o, "# ovni event catalogue\n\n"
		   "Each event is declared by a signature `MCV[+][(type name, ...)]`: the\n"
		   "model, category and value characters, `+` for a jumbo event, then the\n"
		   "arguments stored in the payload (types u8, u16, u32, u64, i8, i16, i32,\n"
		   "i64 and str). In a description, `%{name}` stands for the value of an\n"
		   "argument and `%FMT{name}` prints it with a printf conversion.\n");
	if (m) {
		put_model(o, m);
		return;
	}
	for (size_t i = 0; model_infos[i]; i++)
		put_model(o, model_infos[i]);
}
