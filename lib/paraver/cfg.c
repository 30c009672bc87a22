#include "paraver/cfg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/msg.h"
#include "base/out.h"

/* Colours that stay apart from each other on a white background. */
static const unsigned char distinct[][3] = {
	{ 31, 119, 180 }, { 255, 127, 14 }, { 44, 160, 44 }, { 214, 39, 40 },
	{ 148, 103, 189 }, { 140, 86, 75 }, { 227, 119, 194 }, { 127, 127, 127 },
	{ 188, 189, 34 }, { 23, 190, 207 }, { 174, 199, 232 }, { 255, 187, 120 },
	{ 152, 223, 138 }, { 255, 152, 150 }, { 197, 176, 213 }, { 196, 156, 148 },
	{ 247, 182, 210 }, { 199, 199, 199 }, { 219, 219, 141 }, { 158, 218, 229 },
};

void cfg_pick_color(size_t n, unsigned char rgb[3])
{
	size_t k = sizeof(distinct) / sizeof(distinct[0]);
	memcpy(rgb, distinct[n % k], 3);
}

void cfg_view_free(struct cfg_view *v)
{
	free(v->path);
	free(v->title);
	free(v->label);
	free(v->custom);
	memset(v, 0, sizeof(*v));
}

static void kv(struct out *o, const char *key, const char *val)
{
	out_str(o, key);
	out_char(o, ' ');
	out_str(o, val);
	out_char(o, '\n');
}

static void palette(struct out *o, const struct cfg_view *v)
{
	out_str(o, "window_custom_color_palette ");
	for (size_t i = 0; i < v->ncustom; i++) {
		const struct cfg_color *c = &v->custom[i];
		out_str(o, i ? ",{" : "{");
		out_i64(o, c->value);
		out_str(o, ".000000000000:");
		for (int k = 0; k < 3; k++) {
			if (k)
				out_char(o, ',');
			out_u64(o, c->rgb[k]);
		}
		out_char(o, '}');
	}
	out_char(o, '\n');
}

static const char hashes[] =
	"################################################################################\n";

int cfg_write(const char *dir, const struct cfg_view *v)
{
	char *path = file_join(dir, v->path);
	if (!path) {
		msg_err("out of memory");
		return -1;
	}
	if (file_mkdirs(path, 1) != 0) {
		msg_err("cannot create the directories of %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	struct out o;
	if (out_create(&o, path, 1 << 16) != 0) {
		free(path);
		return -1;
	}
	out_str(&o, "#ParaverCFG\nConfigFile.Version: 3.4\nConfigFile.NumWindows: 1\n\n\n");
	out_str(&o, hashes);
	out_str(&o, "< NEW DISPLAYING WINDOW ");
	out_str(&o, v->title);
	out_str(&o, " >\n");
	out_str(&o, hashes);
	kv(&o, "window_name", v->title);
	kv(&o, "window_type", "single");
	kv(&o, "window_id", "1");
	kv(&o, "window_position_x", "100");
	kv(&o, "window_position_y", "100");
	kv(&o, "window_width", "600");
	kv(&o, "window_height", "150");
	kv(&o, "window_comm_lines_enabled", "true");
	kv(&o, "window_flags_enabled", "false");
	kv(&o, "window_noncolor_mode", "true");
	if (v->colors == CFG_NULL_GRADIENT)
		kv(&o, "window_color_mode", "window_in_null_gradient_mode");
	if (v->colors == CFG_CUSTOM && v->ncustom) {
		kv(&o, "window_custom_color_enabled", "true");
		palette(&o, v);
	}
	kv(&o, "window_logical_filtered", "true");
	kv(&o, "window_physical_filtered", "false");
	kv(&o, "window_comm_fromto", "true");
	kv(&o, "window_comm_tagsize", "true");
	kv(&o, "window_comm_typeval", "true");
	kv(&o, "window_units", "Microseconds");
	kv(&o, "window_maximum_y", "1000.0");
	kv(&o, "window_minimum_y", "1.0");
	kv(&o, "window_compute_y_max", "true");
	kv(&o, "window_level", "thread");
	kv(&o, "window_scale_relative", "1.000000000000");
	kv(&o, "window_end_time_relative", "1.000000000000");
	kv(&o, "window_object", "appl { 1, { All } }");
	kv(&o, "window_begin_time_relative", "0.000000000000");
	kv(&o, "window_open", "true");
	kv(&o, "window_drawmode", "draw_randnotzero");
	kv(&o, "window_drawmode_rows", "draw_randnotzero");
	kv(&o, "window_pixel_size", "1");
	kv(&o, "window_labels_to_draw", "1");
	out_str(&o, "window_selected_functions { 14, { {cpu, Active Thd}, {appl, Adding}, "
		    "{task, Adding}, {thread, ");
	out_str(&o, v->next_value ? "Next Evt Val" : "Last Evt Val");
	out_str(&o, "}, {node, Adding}, {system, Adding}, {workload, Adding}, "
		    "{from_obj, All}, {to_obj, All}, {tag_msg, All}, {size_msg, All}, "
		    "{bw_msg, All}, {evt_type, =}, {evt_value, All} } }\n");
	kv(&o, "window_compose_functions", "{ 9, { {compose_cpu, As Is}, {compose_appl, As Is}, "
		    "{compose_task, As Is}, {compose_thread, As Is}, {compose_node, As Is}, "
		    "{compose_system, As Is}, {compose_workload, As Is}, {topcompose1, As Is}, "
		    "{topcompose2, As Is} } }");
	out_str(&o, "window_filter_module evt_type 1 ");
	out_i64(&o, v->type);
	out_str(&o, "\nwindow_filter_module evt_type_label 1 \"");
	out_str(&o, v->label);
	out_str(&o, "\"\n\n");
	int rc = out_close(&o);
	free(path);
	return rc;
}
