/* The version of each model's events, written here once: the catalogue
 * (model_info), the emulator, `ovni version`, the shim's ovni.require and
 * salvage take them from here. A header of macros only, so that the shim
 * can use it without linking the catalogue. */
#ifndef OVNI_TRACE_VERSIONS_H
#define OVNI_TRACE_VERSIONS_H

#define MODEL_NANOS6_VERSION "1.1.0"
#define MODEL_NODES_VERSION "1.0.0"
#define MODEL_KERNEL_VERSION "1.0.0"
#define MODEL_MPI_VERSION "1.0.0"
#define MODEL_OVNI_VERSION "1.1.0"
#define MODEL_OPENMP_VERSION "1.2.1"
#define MODEL_TAMPI_VERSION "1.0.0"
#define MODEL_NOSV_VERSION "2.7.0"

#endif
