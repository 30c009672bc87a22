/* The mpi model 'M' (spec emu.md 4.5): the MPI function each thread is
 * in. A stack without duplicates: a function cannot nest in itself. */
#include "model/substack.h"

/* Values in the reference's order (its .pcf lists them 1..49). */
static const struct substack_ev evs[] = {
	{ "MUi", 1 }, { "MUt", 2 }, { "MUf", 3 },
	{ "MW[", 4 }, { "MWa", 5 }, { "MWy", 6 }, { "MWs", 7 },
	{ "MT[", 8 }, { "MTa", 9 }, { "MTy", 10 }, { "MTs", 11 },
	{ "MR[", 12 }, { "MS[", 13 }, { "MSb", 14 }, { "MSr", 15 }, { "MSs", 16 },
	{ "MRs", 17 }, { "MRo", 18 },
	{ "Mr[", 19 }, { "Ms[", 20 }, { "Msb", 21 }, { "Msr", 22 }, { "Mss", 23 },
	{ "Mrs", 24 }, { "Mro", 25 },
	{ "MAg", 26 }, { "MAr", 27 }, { "MAa", 28 }, { "MCb", 29 }, { "MDb", 30 },
	{ "MDg", 31 }, { "ME[", 32 }, { "MEs", 33 }, { "MEb", 34 }, { "MDs", 35 },
	{ "MCs", 36 }, { "MCe", 37 },
	{ "Mag", 38 }, { "Mar", 39 }, { "Maa", 40 }, { "Mcb", 41 }, { "Mdb", 42 },
	{ "Mdg", 43 }, { "Me[", 44 }, { "Mes", 45 }, { "Meb", 46 }, { "Mds", 47 },
	{ "Mcs", 48 }, { "Mce", 49 },
};

static const struct mchan_label labels[] = {
	{ 1, "MPI_Init" }, { 2, "MPI_Init_thread" }, { 3, "MPI_Finalize" },
	{ 4, "MPI_Wait" }, { 5, "MPI_Waitall" }, { 6, "MPI_Waitany" }, { 7, "MPI_Waitsome" },
	{ 8, "MPI_Test" }, { 9, "MPI_Testall" }, { 10, "MPI_Testany" }, { 11, "MPI_Testsome" },
	{ 12, "MPI_Recv" }, { 13, "MPI_Send" }, { 14, "MPI_Bsend" }, { 15, "MPI_Rsend" },
	{ 16, "MPI_Ssend" }, { 17, "MPI_Sendrecv" }, { 18, "MPI_Sendrecv_replace" },
	{ 19, "MPI_Irecv" }, { 20, "MPI_Isend" }, { 21, "MPI_Ibsend" }, { 22, "MPI_Irsend" },
	{ 23, "MPI_Issend" }, { 24, "MPI_Isendrecv" }, { 25, "MPI_Isendrecv_replace" },
	{ 26, "MPI_Allgather" }, { 27, "MPI_Allreduce" }, { 28, "MPI_Alltoall" },
	{ 29, "MPI_Barrier" }, { 30, "MPI_Bcast" }, { 31, "MPI_Gather" }, { 32, "MPI_Reduce" },
	{ 33, "MPI_Reduce_scatter" }, { 34, "MPI_Reduce_scatter_block" }, { 35, "MPI_Scatter" },
	{ 36, "MPI_Scan" }, { 37, "MPI_Exscan" },
	{ 38, "MPI_Iallgather" }, { 39, "MPI_Iallreduce" }, { 40, "MPI_Ialltoall" },
	{ 41, "MPI_Ibarrier" }, { 42, "MPI_Ibcast" }, { 43, "MPI_Igather" }, { 44, "MPI_Ireduce" },
	{ 45, "MPI_Ireduce_scatter" }, { 46, "MPI_Ireduce_scatter_block" }, { 47, "MPI_Iscatter" },
	{ 48, "MPI_Iscan" }, { 49, "MPI_Iexscan" },
	{ 0, NULL },
};

static const struct substack_spec spec = {
	.info = &model_mpi, .evs = evs, .nevs = sizeof(evs) / sizeof(evs[0]), .labels = labels,
	.chan = "function", .type = 25, .th_track = TRACK_RUN,
	.title = "MPI function", .what = "mpi function",
};

SUBSTACK_MODEL(emu_model_mpi, model_mpi, spec);
