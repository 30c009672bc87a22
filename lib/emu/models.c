/* The model table: one line per model. Order does not matter; hooks run in
 * the order of the model characters. */
#include <stddef.h>

#include "emu/model.h"

const struct emu_model *const emu_models[] = {
	&emu_model_kernel,
	&emu_model_nanos6,
	&emu_model_ovni,
	&emu_model_tampi,
	&emu_model_mpi,
	&emu_model_nodes,
	&emu_model_openmp,
	&emu_model_nosv,
	NULL,
};
