/* MPI in record mode: the shim defines the MPI C functions of the mpi model
 * (spec emu.md 4.5), emits the function's enter event, calls the library's
 * PMPI_ entry point and emits the exit event. No MPI header is needed: a
 * handle is an int in MPICH and a pointer in Open MPI, and both travel in
 * one register or one 8-byte stack slot, so mpi_h (pointer-sized) carries
 * either through unchanged. After MPI_Init the rank and size come from
 * MPI_COMM_WORLD when the launcher's environment did not give them. */
#include "rt/instr.h"
#include "trace/versions.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

typedef void *mpi_h; /* MPI_Comm, MPI_Datatype, MPI_Op or MPI_Request */
typedef void *mpi_ptr; /* MPI_Status *, MPI_Request * (arrays too) */

#define MPICH_COMM_WORLD 0x44000000 /* MPI_COMM_WORLD in MPICH's ABI */

static void declare(struct rt_thread *t)
{
	rt_instr_meta_set(t, "ovni.require.mpi", MODEL_MPI_VERSION);
	rt_meta_changed(t);
}

static struct rt_thread *mpi_enter(const char mcv[3])
{
	if (rt_filter['M'] & RT_FILTER_DROP)
		return NULL; /* --events without mpi */
	struct rt_thread *t = rt_instr_thread(RT_INSTR_MPI, declare);
	if (t)
		rt_instr_emit(t, mcv, NULL, 0);
	return t;
}

static void mpi_leave(struct rt_thread *t, const char mcv[3])
{
	if (t && t->ready)
		rt_instr_emit(t, mcv, NULL, 0);
}

struct lookup {
	const char *name;
	void *fn;
};

static int find_in_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lookup *l = arg;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	l->fn = dlsym(h, l->name);
	dlclose(h);
	return l->fn != NULL;
}

/* name as dlsym(first, name) finds it, else in any loaded object: an MPI
 * library loaded RTLD_LOCAL (as Python loads mpi4py's) still calls these
 * wrappers but is neither "next" nor global. NULL if none. */
static void *find_symbol(void *first, const char *name)
{
	struct lookup l = { name, dlsym(first, name) };
	if (!l.fn)
		dl_iterate_phdr(find_in_object, &l);
	return l.fn;
}

static void *mpi_next(const char *name)
{
	void *fn = find_symbol(RTLD_NEXT, name);
	if (!fn)
		rt_die("ovni record", "cannot find %s in the MPI library", name);
	return fn;
}

/* MPI_COMM_WORLD of the loaded library: Open MPI's is a global object. */
static mpi_h comm_world(void)
{
	/* The program's copy (a copy relocation) when it names MPI_COMM_WORLD. */
	void *ompi = find_symbol(RTLD_DEFAULT, "ompi_mpi_comm_world");
	return ompi ? ompi : (mpi_h)(intptr_t)MPICH_COMM_WORLD;
}

static void learn_rank(void)
{
	if (!rt_record_mode || rt_self.has_rank)
		return;
	int (*comm_rank)(mpi_h, int *) = (int (*)(mpi_h, int *))mpi_next("PMPI_Comm_rank");
	int (*comm_size)(mpi_h, int *) = (int (*)(mpi_h, int *))mpi_next("PMPI_Comm_size");
	int rank, size;
	mpi_h world = comm_world();
	if (comm_rank && comm_size && comm_rank(world, &rank) == 0 && comm_size(world, &size) == 0 && size > 0 &&
	    rank >= 0 && rank < size)
		rt_record_set_rank(rank, size);
}

/* MPI_<name>(params) around PMPI_<name>(args), between events in and out;
 * then runs after (the result in r). */
#define MPI_WRAP_AFTER(name, in, out, params, args, after)                  \
	RT_API int MPI_##name params                                         \
	{                                                                    \
		static int(*real) params;                                    \
		if (RT_UNLIKELY(!real))                                      \
			real = (__typeof__(real))mpi_next("PMPI_" #name);      \
		struct rt_thread *t = mpi_enter(in);                         \
		int r = real args;                                           \
		after;                                                       \
		mpi_leave(t, out);                                           \
		return r;                                                    \
	}
#define MPI_WRAP(name, in, out, params, args) MPI_WRAP_AFTER(name, in, out, params, args, (void)0)

/* Point-to-point and collective parameter lists that repeat. */
#define P_SEND (const void *buf, int count, mpi_h type, int dest, int tag, mpi_h comm)
#define A_SEND (buf, count, type, dest, tag, comm)
#define P_ISEND (const void *buf, int count, mpi_h type, int dest, int tag, mpi_h comm, mpi_ptr req)
#define A_ISEND (buf, count, type, dest, tag, comm, req)
#define P_GATHER (const void *sb, int sc, mpi_h st, void *rb, int rc, mpi_h rt, mpi_h comm)
#define A_GATHER (sb, sc, st, rb, rc, rt, comm)
#define P_IGATHER (const void *sb, int sc, mpi_h st, void *rb, int rc, mpi_h rt, mpi_h comm, mpi_ptr req)
#define A_IGATHER (sb, sc, st, rb, rc, rt, comm, req)
#define P_ROOTED (const void *sb, int sc, mpi_h st, void *rb, int rc, mpi_h rt, int root, mpi_h comm)
#define A_ROOTED (sb, sc, st, rb, rc, rt, root, comm)
#define P_IROOTED (const void *sb, int sc, mpi_h st, void *rb, int rc, mpi_h rt, int root, mpi_h comm, mpi_ptr req)
#define A_IROOTED (sb, sc, st, rb, rc, rt, root, comm, req)
#define P_SCAN (const void *sb, void *rb, int count, mpi_h type, mpi_h op, mpi_h comm)
#define A_SCAN (sb, rb, count, type, op, comm)
#define P_ISCAN (const void *sb, void *rb, int count, mpi_h type, mpi_h op, mpi_h comm, mpi_ptr req)
#define A_ISCAN (sb, rb, count, type, op, comm, req)

/* Initialization and end. */
MPI_WRAP_AFTER(Init, "MUi", "MUI", (int *argc, char ***argv), (argc, argv), if (r == 0) learn_rank())
MPI_WRAP_AFTER(Init_thread, "MUt", "MUT", (int *argc, char ***argv, int required, int *provided),
	       (argc, argv, required, provided), if (r == 0) learn_rank())
MPI_WRAP(Finalize, "MUf", "MUF", (void), ())

/* Completion. */
MPI_WRAP(Wait, "MW[", "MW]", (mpi_ptr req, mpi_ptr status), (req, status))
MPI_WRAP(Waitall, "MWa", "MWA", (int n, mpi_ptr reqs, mpi_ptr statuses), (n, reqs, statuses))
MPI_WRAP(Waitany, "MWy", "MWY", (int n, mpi_ptr reqs, int *index, mpi_ptr status), (n, reqs, index, status))
MPI_WRAP(Waitsome, "MWs", "MWS", (int n, mpi_ptr reqs, int *outn, int *indices, mpi_ptr statuses),
	 (n, reqs, outn, indices, statuses))
MPI_WRAP(Test, "MT[", "MT]", (mpi_ptr req, int *flag, mpi_ptr status), (req, flag, status))
MPI_WRAP(Testall, "MTa", "MTA", (int n, mpi_ptr reqs, int *flag, mpi_ptr statuses), (n, reqs, flag, statuses))
MPI_WRAP(Testany, "MTy", "MTY", (int n, mpi_ptr reqs, int *index, int *flag, mpi_ptr status),
	 (n, reqs, index, flag, status))
MPI_WRAP(Testsome, "MTs", "MTS", (int n, mpi_ptr reqs, int *outn, int *indices, mpi_ptr statuses),
	 (n, reqs, outn, indices, statuses))

/* Blocking point-to-point. */
MPI_WRAP(Recv, "MR[", "MR]", (void *buf, int count, mpi_h type, int src, int tag, mpi_h comm, mpi_ptr status),
	 (buf, count, type, src, tag, comm, status))
MPI_WRAP(Send, "MS[", "MS]", P_SEND, A_SEND)
MPI_WRAP(Bsend, "MSb", "MSB", P_SEND, A_SEND)
MPI_WRAP(Rsend, "MSr", "MSR", P_SEND, A_SEND)
MPI_WRAP(Ssend, "MSs", "MSS", P_SEND, A_SEND)
MPI_WRAP(Sendrecv, "MRs", "MRS",
	 (const void *sb, int sc, mpi_h st, int dest, int stag, void *rb, int rc, mpi_h rt, int src, int rtag,
	  mpi_h comm, mpi_ptr status),
	 (sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, status))
MPI_WRAP(Sendrecv_replace, "MRo", "MRO",
	 (void *buf, int count, mpi_h type, int dest, int stag, int src, int rtag, mpi_h comm, mpi_ptr status),
	 (buf, count, type, dest, stag, src, rtag, comm, status))

/* Non-blocking point-to-point. */
MPI_WRAP(Irecv, "Mr[", "Mr]", (void *buf, int count, mpi_h type, int src, int tag, mpi_h comm, mpi_ptr req),
	 (buf, count, type, src, tag, comm, req))
MPI_WRAP(Isend, "Ms[", "Ms]", P_ISEND, A_ISEND)
MPI_WRAP(Ibsend, "Msb", "MsB", P_ISEND, A_ISEND)
MPI_WRAP(Irsend, "Msr", "MsR", P_ISEND, A_ISEND)
MPI_WRAP(Issend, "Mss", "MsS", P_ISEND, A_ISEND)
MPI_WRAP(Isendrecv, "Mrs", "MrS",
	 (const void *sb, int sc, mpi_h st, int dest, int stag, void *rb, int rc, mpi_h rt, int src, int rtag,
	  mpi_h comm, mpi_ptr req),
	 (sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, req))
MPI_WRAP(Isendrecv_replace, "Mro", "MrO",
	 (void *buf, int count, mpi_h type, int dest, int stag, int src, int rtag, mpi_h comm, mpi_ptr req),
	 (buf, count, type, dest, stag, src, rtag, comm, req))

/* Blocking collectives. */
MPI_WRAP(Allgather, "MAg", "MAG", P_GATHER, A_GATHER)
MPI_WRAP(Allreduce, "MAr", "MAR", P_SCAN, A_SCAN)
MPI_WRAP(Alltoall, "MAa", "MAA", P_GATHER, A_GATHER)
MPI_WRAP(Barrier, "MCb", "MCB", (mpi_h comm), (comm))
MPI_WRAP(Bcast, "MDb", "MDB", (void *buf, int count, mpi_h type, int root, mpi_h comm), (buf, count, type, root, comm))
MPI_WRAP(Gather, "MDg", "MDG", P_ROOTED, A_ROOTED)
MPI_WRAP(Scatter, "MDs", "MDS", P_ROOTED, A_ROOTED)
MPI_WRAP(Reduce, "ME[", "ME]", (const void *sb, void *rb, int count, mpi_h type, mpi_h op, int root, mpi_h comm),
	 (sb, rb, count, type, op, root, comm))
MPI_WRAP(Reduce_scatter, "MEs", "MES", (const void *sb, void *rb, const int *counts, mpi_h type, mpi_h op, mpi_h comm),
	 (sb, rb, counts, type, op, comm))
MPI_WRAP(Reduce_scatter_block, "MEb", "MEB", P_SCAN, A_SCAN)
MPI_WRAP(Scan, "MCs", "MCS", P_SCAN, A_SCAN)
MPI_WRAP(Exscan, "MCe", "MCE", P_SCAN, A_SCAN)

/* Non-blocking collectives. */
MPI_WRAP(Iallgather, "Mag", "MaG", P_IGATHER, A_IGATHER)
MPI_WRAP(Iallreduce, "Mar", "MaR", P_ISCAN, A_ISCAN)
MPI_WRAP(Ialltoall, "Maa", "MaA", P_IGATHER, A_IGATHER)
MPI_WRAP(Ibarrier, "Mcb", "McB", (mpi_h comm, mpi_ptr req), (comm, req))
MPI_WRAP(Ibcast, "Mdb", "MdB", (void *buf, int count, mpi_h type, int root, mpi_h comm, mpi_ptr req),
	 (buf, count, type, root, comm, req))
MPI_WRAP(Igather, "Mdg", "MdG", P_IROOTED, A_IROOTED)
MPI_WRAP(Iscatter, "Mds", "MdS", P_IROOTED, A_IROOTED)
MPI_WRAP(Ireduce, "Me[", "Me]",
	 (const void *sb, void *rb, int count, mpi_h type, mpi_h op, int root, mpi_h comm, mpi_ptr req),
	 (sb, rb, count, type, op, root, comm, req))
MPI_WRAP(Ireduce_scatter, "Mes", "MeS",
	 (const void *sb, void *rb, const int *counts, mpi_h type, mpi_h op, mpi_h comm, mpi_ptr req),
	 (sb, rb, counts, type, op, comm, req))
MPI_WRAP(Ireduce_scatter_block, "Meb", "MeB", P_ISCAN, A_ISCAN)
MPI_WRAP(Iscan, "Mcs", "McS", P_ISCAN, A_ISCAN)
MPI_WRAP(Iexscan, "Mce", "McE", P_ISCAN, A_ISCAN)

/* MPI launchers and their per-node helpers are not traced (their children
 * are): a loom whose ranked processes sat beside unranked launcher
 * processes would not be accepted by ovni emu. */
static int is_launcher_name(const char *path)
{
	static const char *const names[] = { "mpirun", "mpiexec", "mpiexec.hydra", "hydra_pmi_proxy",
					     "mpirun.mpich", "mpiexec.mpich", "mpirun.openmpi", "mpiexec.openmpi",
					     "orterun", "orted", "prterun", "prted", "prte", "srun" };
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return 1;
	return 0;
}

int rt_instr_is_launcher(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (is_launcher_name(exe))
			return 1;
	}
	return is_launcher_name(program_invocation_name);
}
