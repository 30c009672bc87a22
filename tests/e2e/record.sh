# ovni record end to end: small C programs compiled with $HOSTCC at test
# time run under the recorder; ovni emu must accept every trace and ovni dump
# must show each thread's expected events.
. "$(dirname "$0")/lib.sh"
SRC=$TESTDIR/record
CC=${HOSTCC:-gcc}
BUILD=${BUILD:?}
SO=$BUILD/rt/libovni.so
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "ok - # SKIP no host compiler $CC"
	done_testing
fi

# emu_ok WHAT TRACE: ovni emu accepts the trace.
emu_ok() {
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	check "$1" "$OVNI" emu -o "$TMP/emu" "$2"
}

# count TRACE MCV: events of that MCV in the whole trace.
count() {
	"$OVNI" dump "$2" 2>/dev/null | awk -v m="$1" '$2 == m' | wc -l | tr -d ' '
}

# bounds TRACE: "first-last" MCV of every thread's stream, one a line, sorted.
bounds() {
	"$OVNI" dump "$1" 2>/dev/null | awk '/^#/ { next } { if (!($3 in first)) first[$3] = $2; last[$3] = $2 }
		END { for (s in first) print first[s] "-" last[s] }' | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' '
}

# --- The shim itself. ---
if command -v objdump >/dev/null 2>&1; then
	max=$(objdump -T "$SO" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
	case $max in
	2.1[0-7] | 2.1[0-7].* | 2.[0-9] | 2.[0-9].*) ok "the shim needs glibc $max <= 2.17" ;;
	*) not_ok "the shim needs glibc $max, newer than 2.17" ;;
	esac
else
	echo "ok - # SKIP no objdump"
fi
needed=$(objdump -p "$SO" 2>/dev/null | awk '$1 == "NEEDED" {print $2}' | sort | tr '\n' ' ')
same "the shim needs only glibc's own libraries" "$needed" "ld-linux-x86-64.so.2 libc.so.6 libdl.so.2 libpthread.so.0 "
soname=$(objdump -p "$SO" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
same "the shim's soname is libovni.so.1" "$soname" libovni.so.1

# --- Threads. ---
$CC -O1 -pthread -o "$TMP/threads" "$SRC/threads.c" || not_ok "compile threads.c"
rm -rf "$TMP/t1"
"$OVNI" record -o "$TMP/t1" -- "$TMP/threads" 4 >"$TMP/out" 2>"$TMP/err"
rc=$?
same "threads: exit status" "$rc" 0
grep -q '^threads: 5$' "$TMP/out" && ok "threads: the program ran" || not_ok "threads: the program ran"
grep -Eq '^ovni record: 1 process, 6 threads, [0-9]+ events, .* trace in ' "$TMP/err" &&
	ok "threads: summary line" || { not_ok "threads: summary line"; sed 's/^/#   /' "$TMP/err"; }
emu_ok "threads: ovni emu accepts the trace" "$TMP/t1"
same "threads: one OHx per thread" "$(count OHx "$TMP/t1")" 6
same "threads: one OHe per thread (return, pthread_exit, cancel, main)" "$(count OHe "$TMP/t1")" 6
same "threads: one OHC per pthread_create" "$(count OHC "$TMP/t1")" 5
same "threads: every thread's stream starts with OHx and ends with OHe" "$(bounds "$TMP/t1")" "6xOHx-OHe "
n=$(find "$TMP/t1" -name stream.json | xargs grep -l '"finished": 1' | wc -l | tr -d ' ')
same "threads: every stream finished" "$n" 6
total=$("$OVNI" top "$TMP/t1" 2>/dev/null | awk 'NF == 2 && $2 ~ /^[0-9]+$/ {n += $2} END {print n + 0}')
grep -q " 6 threads, $total events" "$TMP/err" && ok "threads: the summary counts every event" ||
	{ not_ok "threads: the summary counts every event ($total)"; sed 's/^/#   /' "$TMP/err"; }
# A clean run is counted from what the shim says: the recorder itself (the
# first process strace sees) never opens a stream.
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true 2>/dev/null; then
	rm -rf "$TMP/t1s"
	strace -f -qq -e trace=open,openat -o "$TMP/strace" "$OVNI" record -o "$TMP/t1s" -- "$TMP/threads" 4 >/dev/null 2>"$TMP/err"
	rpid=$(head -n 1 "$TMP/strace" | cut -d' ' -f1)
	n=$(awk -v p="$rpid" '$1 == p' "$TMP/strace" | grep -c 'stream\.obs')
	grep -q ' 6 threads, ' "$TMP/err" && same "a clean run: the recorder never opens a stream" "$n" 0 ||
		{ not_ok "a clean run under strace"; sed 's/^/#   /' "$TMP/err"; }
else
	echo "ok - # SKIP no strace (or ptrace not allowed)"
fi

rm -rf "$TMP/t2"
"$OVNI" record -o "$TMP/t2" -- "$TMP/threads" 2 7 >/dev/null 2>&1
same "the recorder exits with the program's status" "$?" 7

ref_same "threads" "$TMP/t1"

# --- Program identity: executable and command line of each process, in
# its metadata, shown by ovni dump and ovni top --procs. ---
rm -rf "$TMP/id"
"$OVNI" record -o "$TMP/id" -- "$TMP/threads" 2 "a b" "it's" >/dev/null 2>&1
pid=$(ls -d "$TMP"/id/loom.*/proc.* | sed 's/.*proc\.//')
"$OVNI" dump "$TMP/id" 2>/dev/null >"$TMP/dump"
same "identity: ovni dump names the process's executable and command line" \
	"$(grep '^# ' "$TMP/dump")" "# $(cd "$TMP"/id && ls -d loom.*/proc.*/thread.$pid): process $pid runs $TMP/threads: $TMP/threads 2 'a b' 'it'\\''s'"
same "identity: ovni top --procs, one line for the process" \
	"$("$OVNI" top --procs "$TMP/id" 2>/dev/null | cut -d' ' -f2-)" "$pid - 4 $("$OVNI" top "$TMP/id" 2>/dev/null | awk '{n += $2} END {print n}') $TMP/threads $TMP/threads 2 'a b' 'it'\\''s'"
same "identity: only the first thread's metadata carries it" "$(grep -l '"argv"' "$TMP"/id/loom.*/proc.*/thread.*/stream.json | wc -l | tr -d ' ')" 1
ref_same "identity" "$TMP/id"
rm -rf "$TMP/idx"
"$OVNI" record -o "$TMP/idx" -- sh -c "exec '$TMP/threads' 0" >/dev/null 2>&1
same "identity after exec: the new image's" "$("$OVNI" top --procs "$TMP/idx" 2>/dev/null | awk '{print $6, $7, $8}')" "$TMP/threads $TMP/threads 0"
if command -v python3 >/dev/null 2>&1; then
	rm -rf "$TMP/idpy"
	"$OVNI" record -o "$TMP/idpy" -- python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()' >/dev/null 2>&1
	"$OVNI" top --procs "$TMP/idpy" 2>/dev/null | grep -q "python3[.0-9]* [^ ]*python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()'\$" &&
		ok "identity: a python3 program is named with its command line" ||
		{ not_ok "identity: a python3 program is named with its command line"; "$OVNI" top --procs "$TMP/idpy" 2>&1 | head -5 | sed 's/^/#   /'; }
	ref_same "python3" "$TMP/idpy"
fi
check_fails "top --procs on a missing trace: one line" "cannot open" "$OVNI" top --procs "$TMP/nosuch"

# --- Rank from the launcher's variables. ---
rm -rf "$TMP/rank"
SLURM_PROCID=1 SLURM_NTASKS=3 "$OVNI" record -o "$TMP/rank" --loom node7.job --app-id 4 -- "$TMP/threads" 1 >/dev/null 2>&1
emu_ok "rank: ovni emu accepts the trace" "$TMP/rank"
json=$(cat "$TMP"/rank/loom.node7.job/proc.*/thread.*/stream.json)
for key in '"rank": 1' '"nranks": 3' '"app_id": 4' '"loom": "node7.job"'; do
	n=$(printf '%s\n' "$json" | grep -c "$key")
	same "rank: every stream has $key" "$n" 3
done

# --- Processes: fork, exec, nested exec, exit paths. ---
$CC -O1 -pthread -o "$TMP/procs" "$SRC/procs.c" || not_ok "compile procs.c"
# rec NAME ARGS...: records procs ARGS into $TMP/NAME; status in $rc.
rec() {
	name=$1; shift
	rm -rf "$TMP/$name"
	case $1 in
	-*) opt1=$1 opt2=$2; shift 2 ;;
	*) opt1=--app-id opt2=1 ;;
	esac
	"$OVNI" record -o "$TMP/$name" "$opt1" "$opt2" -- "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}
rec fork "$TMP/procs" fork
same "fork: exit status" "$rc" 0
emu_ok "fork: ovni emu accepts the trace" "$TMP/fork"
same "fork: two processes" "$(ls -d "$TMP"/fork/loom.*/proc.* | wc -l | tr -d ' ')" 2
grep -q '2 processes, 2 threads' "$TMP/err" && ok "fork: summary counts both" || not_ok "fork: summary counts both"
rec exec "$TMP/procs" exec 3
same "exec: exit status" "$rc" 0
emu_ok "exec: ovni emu accepts the trace" "$TMP/exec"
same "exec: one stream for the thread across 3 execs" "$(find "$TMP/exec" -name stream.obs | wc -l | tr -d ' ')" 1
same "exec: the thread runs in each of the 4 images" "$(count OHx "$TMP/exec")" 4
same "exec: and stops before each exec and at the end" "$(count OHe "$TMP/exec")" 4
rec forkexec "$TMP/procs" forkexec
emu_ok "fork+exec: ovni emu accepts the trace" "$TMP/forkexec"
same "fork+exec: the child's stream goes on in the exec'd program" "$(count OHx "$TMP/forkexec")" 3
rec system "$TMP/procs" system
same "system(): exit status" "$rc" 0
emu_ok "system(): ovni emu accepts the trace" "$TMP/system"
n=$(ls -d "$TMP"/system/loom.*/proc.* | wc -l | tr -d ' ')
[ "$n" -ge 2 ] && ok "system(): the spawned shell is a process of the trace ($n)" || not_ok "system(): the spawned shell is a process of the trace ($n)"
rec popen "$TMP/procs" popen
same "popen(): exit status and what went through the pipe" "$rc $(tr '\n' ' ' <"$TMP/out")" "0 line 1 line 2 line 3 "
emu_ok "popen(): ovni emu accepts the trace" "$TMP/popen"
n=$(ls -d "$TMP"/popen/loom.*/proc.* | wc -l | tr -d ' ')
[ "$n" -ge 2 ] && ok "popen(): the shell and cat are processes of the trace ($n)" || not_ok "popen(): the shell and cat are processes of the trace ($n)"

# --- The environment: the program and every process it starts see the
# one they would see without the recorder (the user's own LD_PRELOAD,
# LD_LIBRARY_PATH and OVNI_TRACEDIR included), and are recorded still. ---
plain=$(env | grep -v '^_=' | sort)
same "environment: the program's is the one it has without the recorder" "$(rm -rf "$TMP/env1"; "$OVNI" record -o "$TMP/env1" -- env 2>/dev/null | grep -v '^_=' | sort)" "$plain"
same "environment: a shell's child (fork and exec) sees the same" \
	"$(rm -rf "$TMP/env2"; "$OVNI" record -o "$TMP/env2" -- sh -c 'env' 2>/dev/null | grep -v '^_=' | sort)" "$plain"
same "environment: and is recorded (2 processes)" "$(ls -d "$TMP"/env2/loom.*/proc.* 2>/dev/null | wc -l | tr -d ' ')" 2
$CC -shared -fPIC -o "$TMP/mine.so" -x c - <<'EOC' 2>/dev/null
#include <unistd.h>
__attribute__((constructor)) static void hello(void) { (void)!write(2, "mine.so\n", 8); }
EOC
rm -rf "$TMP/env3"
# (an ASan build of ovni is itself dynamic: its runtime must not mind mine.so)
LD_PRELOAD=$TMP/mine.so LD_LIBRARY_PATH=/nonexistent OVNI_TRACEDIR=/somewhere/else \
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "$OVNI" record -o "$TMP/env3" -- sh -c 'printenv LD_PRELOAD LD_LIBRARY_PATH OVNI_TRACEDIR; sh -c "printenv LD_PRELOAD"' \
	>"$TMP/out" 2>"$TMP/err"
same "environment: the user's LD_PRELOAD, LD_LIBRARY_PATH and OVNI_TRACEDIR, as the user set them" \
	"$(tr '\n' ' ' <"$TMP/out")" "$TMP/mine.so /nonexistent /somewhere/else $TMP/mine.so "
n=$(grep -c '^mine.so$' "$TMP/err") # 5 with an ASan build of ovni, which loads it too
[ "$n" -ge 4 ] && ok "environment: the user's preloaded library still loads in every process ($n)" ||
	not_ok "environment: the user's preloaded library still loads in every process ($n, want 4)"

same "environment: and each is recorded (4 processes)" "$(ls -d "$TMP"/env3/loom.*/proc.* 2>/dev/null | wc -l | tr -d ' ')" 4
# The kernel's copy too (/proc/self/environ, what `ps e` shows): byte for
# byte the one without the recorder, in the same order, for the program
# and for the child of its shell; with the user's own LD_LIBRARY_PATH, and
# with no variable at all.
for vars in "A=1 LD_LIBRARY_PATH=/opt/x:/opt/y B=2" ""; do
	env -i $vars cat /proc/self/environ >"$TMP/pe.plain"
	rm -rf "$TMP/pe1" && env -i $vars "$OVNI" record -o "$TMP/pe1" -- cat /proc/self/environ >"$TMP/pe.rec" 2>/dev/null
	check "/proc/self/environ (${vars:-empty}): the program's is the one it has without the recorder" cmp "$TMP/pe.plain" "$TMP/pe.rec"
	env -i $vars sh -c 'cat /proc/self/environ' >"$TMP/pe.plain"
	rm -rf "$TMP/pe2" && env -i $vars "$OVNI" record -o "$TMP/pe2" -- sh -c 'cat /proc/self/environ' >"$TMP/pe.rec" 2>/dev/null
	check "/proc/self/environ (${vars:-empty}): and that of a shell's child" cmp "$TMP/pe.plain" "$TMP/pe.rec"
	same "/proc/self/environ (${vars:-empty}): both are recorded (2 processes)" "$(ls -d "$TMP"/pe2/loom.*/proc.* 2>/dev/null | wc -l | tr -d ' ')" 2
done

rec texec "$TMP/procs" thread-exec
same "exec from a second thread: exit status" "$rc" 0
emu_ok "exec from a second thread: ovni emu accepts the trace" "$TMP/texec"
same "exec from a second thread: each stream runs from OHx to OHe" "$(bounds "$TMP/texec")" "2xOHx-OHe "
rec spawn "$TMP/procs" spawn-noenv
same "posix_spawn with an empty environment: exit status" "$rc" 0
emu_ok "posix_spawn with an empty environment: ovni emu accepts the trace" "$TMP/spawn"
same "posix_spawn with an empty environment: the child is recorded too" "$(ls -d "$TMP"/spawn/loom.*/proc.* | wc -l | tr -d ' ')" 2
rec uexit "$TMP/procs" _exit
same "_exit: status 5" "$rc" 5
emu_ok "_exit: ovni emu accepts the trace" "$TMP/uexit"
same "_exit: the thread ends" "$(count OHe "$TMP/uexit")" 1
rec texit "$TMP/procs" threads-exit
same "exit with a thread running: status" "$rc" 0
emu_ok "exit with a thread running: ovni emu accepts the trace" "$TMP/texit"
# A thread still running at exit ends with its process: at the exit's
# clock (or its last event, if later), and no warning, as a program built
# with GCC's libgomp exits with its workers parked.
grep -q 'did not finish\|some threads cut' "$TMP/err" &&
	not_ok "exit with a thread running: it ends with the process, without a warning" ||
	ok "exit with a thread running: it ends with the process, without a warning"
same "exit with a thread running: its stream runs from OHx to its OHe" "$(bounds "$TMP/texit")" "2xOHx-OHe "
# ends_with_exit TRACE: "yes" when the OHe of every other thread is at or
# after the OHe of the main thread (tid = pid), which exited.
ends_with_exit() {
	"$OVNI" dump "$1" 2>/dev/null | awk '$2 == "OHe" { split($3, p, "/"); pid = substr(p[2], 6); tid = substr(p[3], 8)
			if (pid == tid) main = $1; else other[++n] = $1 }
		END { bad = main == "" || n == 0; for (i = 1; i <= n; i++) if (other[i] < main) bad = 1; print bad ? "no" : "yes" }'
}
same "exit with a thread running: it ends at or after the exit" "$(ends_with_exit "$TMP/texit")" yes
ref_same "exit with a thread running" "$TMP/texit"
rec tuexit "$TMP/procs" threads-_exit
same "_exit with two threads running: status 4" "$rc" 4
same "_exit with two threads running: each stream runs from OHx to OHe" "$(bounds "$TMP/tuexit")" "3xOHx-OHe "
grep -q 'did not finish\|some threads cut' "$TMP/err" &&
	not_ok "_exit with two threads running: they end with the process, without a warning" ||
	ok "_exit with two threads running: they end with the process, without a warning"
same "_exit with two threads running: they end at or after the exit" "$(ends_with_exit "$TMP/tuexit")" yes
ref_same "_exit with two threads running" "$TMP/tuexit"
# An exec ends the other threads of the process as an exit does.
rec texecw "$TMP/procs" exec-with-thread
same "exec with a thread running: status 0" "$rc" 0
same "exec with a thread running: each stream runs from OHx to OHe" "$(bounds "$TMP/texecw")" "2xOHx-OHe "
grep -q 'did not finish\|some threads cut' "$TMP/err" &&
	not_ok "exec with a thread running: it ends with the exec, without a warning" ||
	ok "exec with a thread running: it ends with the exec, without a warning"
ref_same "exec with a thread running" "$TMP/texecw"
# The first thread leaves by pthread_exit, the others return later: glibc
# ends the process with the last of them, and the shim's own threads must
# not keep it alive (they did, for good, with SIGTERM blocked).
rm -rf "$TMP/mpe"
timeout -s KILL 60 "$OVNI" record -o "$TMP/mpe" -- "$TMP/procs" main-pthread-exit >/dev/null 2>"$TMP/err"
same "pthread_exit from the first thread: the process ends when the last thread does (status 0)" "$?" 0
same "pthread_exit from the first thread: every stream runs from OHx to OHe" "$(bounds "$TMP/mpe")" "3xOHx-OHe "
grep -q 'did not finish\|some threads cut' "$TMP/err" &&
	not_ok "pthread_exit from the first thread: no thread cut" || ok "pthread_exit from the first thread: no thread cut"
ref_same "pthread_exit from the first thread" "$TMP/mpe"
# The _exit of a vfork child ends nothing of its parent, which shares its
# memory: the parent's stream goes on, and its next thread is recorded.
rec vfork "$TMP/procs" vfork
same "vfork child's _exit: status 0" "$rc" 0
emu_ok "vfork child's _exit: ovni emu accepts the trace" "$TMP/vfork"
same "vfork child's _exit: the parent's stream goes on (OHC, a second thread, two OHe)" \
	"$(count OHC "$TMP/vfork") $(bounds "$TMP/vfork")" "1 2xOHx-OHe "
# A thread killed before its first event (exit right after pthread_create)
# has no stream, not one closed at clock 0 that trips the clock gate.
n=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	rec texit0 "$TMP/procs" exit-at-create
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	"$OVNI" emu -o "$TMP/emu" "$TMP/texit0" >/dev/null 2>&1 && n=$((n + 1))
done
same "exit right after pthread_create: ovni emu accepts all 10 traces" "$n" 10
# Deterministic: a stream with no event left unfinished, as such a kill leaves.
rm -rf "$TMP/empty" && cp -r "$TMP/texit" "$TMP/empty"
e=$(ls -d "$TMP"/empty/loom.*/proc.*/thread.* | head -n 1)
cp -r "$e" "${e%.*}.1"
printf 'ovni\001\000\000\000' >"${e%.*}.1/stream.obs"
sed -i -e 's/"finished": 1/"finished": 0/' -e 's/"tid": [0-9]*/"tid": 1/' "${e%.*}.1/stream.json"
rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
"$OVNI" emu --salvage -o "$TMP/emu" "$TMP/empty" >"$TMP/out" 2>"$TMP/err"
same "a stream without events: ovni emu --salvage accepts the trace" "$?" 0
grep -q 'thread.1/stream.obs: unfinished and without events' "$TMP/err" && ok "a stream without events: named and left out" ||
	{ not_ok "a stream without events: named and left out"; sed 's/^/#   /' "$TMP/err"; }
# Every thread counted and recorded, every time: a thread cancelled before
# it started (threads 0 cancels it at once) once left a stream uncounted.
for nt in 0 4; do
	n=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$OVNI" record --no-kernel -o "$TMP/t9" -- "$TMP/threads" $nt >/dev/null 2>"$TMP/err"
		grep -q " $((nt + 2)) threads, " "$TMP/err" && [ "$(count OHx "$TMP/t9")" = $((nt + 2)) ] && n=$((n + 1))
		rm -rf "$TMP/t9"
	done
	same "threads $nt: $((nt + 2)) threads counted and recorded in 10 of 10 runs" "$n" 10
done

# --- Crashes: same signal, same status, a trace ovni emu accepts. ---
$CC -O0 -pthread -o "$TMP/crash" "$SRC/crash.c" || not_ok "compile crash.c"
for k in segv:139 bus:135 fpe:136 ill:132 abort:134 term:143 int:130 hup:129 kill:137; do
	how=${k%%:*} want=${k#*:}
	rec "c-$how" "$TMP/crash" "$how"
	same "crash $how: the program dies as it would (status $want)" "$rc" "$want"
	emu_ok "crash $how: ovni emu accepts the trace" "$TMP/c-$how"
	same "crash $how: both threads executed and ended" "$(count OHx "$TMP/c-$how") $(count OHe "$TMP/c-$how")" "2 2"
	same "crash $how: each stream runs from OHx to OHe" "$(bounds "$TMP/c-$how")" "2xOHx-OHe "
	same "crash $how: the recorder ends both cut threads and names them" "$(grep -c 'did not finish' "$TMP/err")" 2
done
ref_same "crash segv" "$TMP/c-segv"
ref_same "crash kill" "$TMP/c-kill"

# --- Signals: the program sees exactly what it would see without the
# recorder (no handler of the shim), at start and after its own sigaction.
$CC -O0 -o "$TMP/sigs" "$SRC/sigs.c" || not_ok "compile sigs.c"
"$TMP/sigs" >"$TMP/sig-plain"
rec sig "$TMP/sigs"
same "signals: exit status" "$rc" 0
check_same "signals: dispositions, flags and mask as without the recorder" "$TMP/out" "$TMP/sig-plain"
sh -c "trap '' INT HUP QUIT; \"\$1\"" sh "$TMP/sigs" >"$TMP/sig-plain"
rm -rf "$TMP/sigi"
sh -c "trap '' INT HUP QUIT; \"\$1\" record -o \"\$2\" -- \"\$3\"" sh "$OVNI" "$TMP/sigi" "$TMP/sigs" >"$TMP/out" 2>/dev/null
check_same "signals ignored at start (nohup, trap '' INT) stay ignored" "$TMP/out" "$TMP/sig-plain"
grep -q '^2 IGN ' "$TMP/out" && ok "signals: SIGINT ignored, as the shell left it" || not_ok "signals: SIGINT ignored, as the shell left it"
(trap - INT; "$TMP/sigs" own) >"$TMP/sig-plain" 2>/dev/null
rec sigown "$TMP/sigs" own
same "signals: the program's own SIGSEGV handler runs (status 42)" "$rc" 42
check_same "signals: and it replaced the default action, as without the recorder" "$TMP/out" "$TMP/sig-plain"
emu_ok "signals: ovni emu accepts the trace" "$TMP/sigown"
if command -v python3 >/dev/null 2>&1; then
	rec py python3 -c 'import os, signal
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
try:
    os.kill(os.getpid(), signal.SIGINT)
    signal.pthread_sigmask(signal.SIG_BLOCK, [])
except KeyboardInterrupt:
    print("KeyboardInterrupt")'
	same "python3: its SIGINT handler is installed and Ctrl-C raises KeyboardInterrupt" "$(tr '\n' ' ' <"$TMP/out")" "True KeyboardInterrupt "
	emu_ok "python3: ovni emu accepts the trace" "$TMP/py"
	if command -v bash >/dev/null 2>&1; then
		rm -rf "$TMP/jc" "$TMP/jc.catch" "$TMP/jc.left"
		jc=$(timeout 90 python3 "$SRC/jobctl.py" "$OVNI" "$TMP/jc" 2>&1 | tr '\n' ' ')
		same "job control at a terminal: Ctrl-Z stops the recording, fg resumes it" "${jc%% status0 *} status0" "stopped resumed status0"
		same "job control at a terminal: Ctrl-Z on a program that catches SIGTSTP stops nothing" \
			"$(echo "$jc" | grep -o caught)" caught
		same "job control at a terminal: Ctrl-Z once the program ended stops the recording, fg ends it" \
			"$(echo "$jc" | grep -o left)" left
		emu_ok "job control at a terminal: ovni emu accepts the trace" "$TMP/jc"
	fi
else
	echo "ok - # SKIP no python3"
fi

# --- The recorder killed too: ovni emu --salvage. ---
rm -rf "$TMP/kk"
"$OVNI" record -o "$TMP/kk" -- sh -c 'kill -9 $PPID; exec "$1" kill' sh "$TMP/crash" >/dev/null 2>&1
sleep 1
check_fails "recorder killed: plain ovni emu refuses the unfinished trace" "finished" "$OVNI" emu -o "$TMP/emu" "$TMP/kk"
before=$(find "$TMP/kk" -type f -exec cksum {} + | sort)
rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
"$OVNI" emu --salvage -o "$TMP/emu" "$TMP/kk" >"$TMP/out" 2>"$TMP/err"
same "recorder killed: ovni emu --salvage plays the trace" "$?" 0
same "recorder killed: --salvage names both cut threads" "$(grep -c 'unfinished: the thread is ended' "$TMP/err")" 2
same "recorder killed: --salvage leaves the trace untouched" "$(find "$TMP/kk" -type f -exec cksum {} + | sort)" "$before"
[ -s "$TMP/emu/thread.prv" ] && ok "recorder killed: --salvage wrote the timelines" || not_ok "recorder killed: --salvage wrote the timelines"
check "recorder killed: --salvage's closing hint names no copy that is gone" \
	sh -c "grep -q 'open them in Paraver' '$TMP/err' && ! grep -q 'ovni-salvage' '$TMP/err'"
# The batch system kills the recorder and the program together (SIGKILL to
# both), once their threads have slept (which declares mark 99 in their
# metadata): the loom's CPUs are still listed, plain emu names
# --salvage, and --salvage plays the trace. With --tmpdir the streams are
# still in the tmpdir, which --salvage plays just as well.
for mode in plain tmpdir; do
	rm -rf "$TMP/batch" "$TMP/batch-tmp"
	topt=
	[ $mode = tmpdir ] && topt="--tmpdir $TMP/batch-tmp"
	# shellcheck disable=SC2086
	"$OVNI" record $topt -o "$TMP/batch" -- "$TMP/crash" none >/dev/null 2>&1 &
	rpid=$!
	src=$TMP/batch
	[ $mode = tmpdir ] && src=$TMP/batch-tmp
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ "$(find "$src" -name stream.json 2>/dev/null | xargs grep -l '"Blocked in"' 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	kill -KILL "$rpid" $(pgrep -P "$rpid")
	wait "$rpid" 2>/dev/null
	n=$(find "$src" -name stream.json | xargs grep -l '"loom_cpus"' | wc -l | tr -d ' ')
	same "batch kill ($mode): the main thread's stream still lists the loom's CPUs" "$n" 1
	check_fails "batch kill ($mode): plain ovni emu names --salvage" "ovni emu --salvage" "$OVNI" emu -o "$TMP/emu" "$src"
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	"$OVNI" emu --salvage -o "$TMP/emu" "$src" >"$TMP/out" 2>"$TMP/err"
	same "batch kill ($mode): ovni emu --salvage plays the trace" "$?" 0
	same "batch kill ($mode): --salvage names both cut threads" "$(grep -c 'unfinished: the thread is ended' "$TMP/err")" 2
done

# Staging (lib/trace/stage.h): a thread's last events wait in a ring in a
# memory file system until the mapper writes them. 3 threads x 400000 API
# events (several laps of the ring each), then SIGKILL: to the program
# alone, the recorder writes them all; to the whole session, ovni dump and
# ovni emu --salvage read them from the staging files, and the next
# recording writes them into the trace.
sd=$(for d in /dev/shm/ovni-stage.$(id -u) "${XDG_RUNTIME_DIR:-/nonexistent}/ovni-stage"; do [ -d "$d" ] && echo "$d" && break; done)
staged_for() { # the staging files that name trace $1
	[ -n "$sd" ] && grep -lF "$1/" "$sd"/* 2>/dev/null | wc -l | tr -d ' '
}
if [ -z "$sd" ]; then
	echo "ok - # SKIP staging: no memory file system for it here"
elif "$OVNI" lib "$TMP/flib" >/dev/null 2>&1 &&
	$CC -O2 -pthread -I"$TMP/flib" -o "$TMP/stagekill" "$SRC/stagekill.c" -L"$TMP/flib" -lovni; then
	rm -rf "$TMP/st1" "$TMP/st1.ready"
	"$OVNI" record -o "$TMP/st1" -- "$TMP/stagekill" 3 400000 kill "$TMP/st1.ready" >/dev/null 2>&1
	same "staged, program killed: it dies of SIGKILL" "$?" 137
	same "staged, program killed: every event emitted is in the trace" "$(count OB. "$TMP/st1")" 1200000
	emu_ok "staged, program killed: ovni emu accepts the trace" "$TMP/st1"
	same "staged, program killed: no staging file is left" "$(staged_for "$TMP/st1")" 0
	rm -rf "$TMP/st2" "$TMP/st2.ready" "$TMP/st3"
	setsid sh -c 'echo $$ >"$1"; exec "$2" record -o "$3" -- "$4" 3 400000 wait "$5" >/dev/null 2>&1' \
		_ "$TMP/st2.sid" "$OVNI" "$TMP/st2" "$TMP/stagekill" "$TMP/st2.ready" &
	for i in $(seq 100); do [ -e "$TMP/st2.ready" ] && break; sleep 0.1; done
	pkill -9 -s "$(cat "$TMP/st2.sid")"
	wait
	same "staged, session killed: the staging files stay" "$(staged_for "$TMP/st2")" 4
	same "staged, session killed: ovni dump reads every event" "$(count OB. "$TMP/st2")" 1200000
	check "staged, session killed: and names the staging files" \
		sh -c "'$OVNI' dump '$TMP/st2' 2>&1 >/dev/null | grep -q 'read from its staging file $sd/'"
	sum_before=$(find "$TMP/st2" -type f -exec cat {} + | cksum)
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	"$OVNI" emu --salvage -o "$TMP/emu" "$TMP/st2" >"$TMP/out" 2>&1
	same "staged, session killed: ovni emu --salvage plays the trace" "$?" 0
	played=$(grep -Eo 'played [0-9]+ events' "$TMP/out" | cut -d' ' -f2)
	check "staged, session killed: with every event (played ${played:-none}: 1200000 and those of the recorder)" \
		test "${played:-0}" -ge 1200000 -a "${played:-0}" -lt 1210000
	same "staged, session killed: the trace is left as it was" "$(find "$TMP/st2" -type f -exec cat {} + | cksum)" "$sum_before"
	rm -f "$TMP/st2.ovnipack"
	"$OVNI" pack -o "$TMP/st2.ovnipack" "$TMP/st2" >"$TMP/out" 2>&1
	same "staged, session killed: ovni pack archives the trace" "$?" 0
	same "staged, session killed: the archive holds every event" "$(count OB. "$TMP/st2.ovnipack")" 1200000
	same "staged, session killed: ovni pack names the staging files it read" \
		"$(grep -c "taken from its staging file $sd/" "$TMP/out")" 4
	same "staged, session killed: ovni pack leaves the trace as it was" \
		"$(find "$TMP/st2" -type f -exec cat {} + | cksum)" "$sum_before"
	if command -v zstd >/dev/null; then
		rm -rf "$TMP/st2.tar.zst" "$TMP/st2x" && mkdir "$TMP/st2x"
		"$OVNI" pack --tar -o "$TMP/st2.tar.zst" "$TMP/st2" >/dev/null 2>&1 &&
			zstd -dcq "$TMP/st2.tar.zst" | tar -C "$TMP/st2x" -xf -
		same "staged, session killed: the archive of ovni pack --tar holds every event" \
			"$(count OB. "$TMP/st2x")" 1200000
		rm -rf "$TMP/st2x" "$TMP/st2.tar.zst"
	else
		echo "ok - # SKIP staged, session killed: pack --tar: no zstd command to extract it"
	fi
	rm -f "$TMP/st2.ovnipack"
	"$OVNI" record -o "$TMP/st3" -- true >/dev/null 2>&1
	same "staged, session killed: the next recording writes the staging files into the trace" \
		"$(staged_for "$TMP/st2"):$(count OB. "$TMP/st2")" 0:1200000
	check "staged, session killed: then ovni dump reads them from the trace alone" \
		sh -c "! '$OVNI' dump '$TMP/st2' 2>&1 >/dev/null | grep -q 'staging file'"
	# A program in a mount namespace of its own with a /dev/shm of its own
	# (a container's), where the recorder cannot read: it does not stage
	# there, and loses nothing when killed.
	if [ "$(id -u)" = 0 ] && unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null; then
		rm -rf "$TMP/st4" "$TMP/st4.ready"
		"$OVNI" record -o "$TMP/st4" -- unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm &&
			mkdir -m 0700 /dev/shm/ovni-stage.0 && exec "$0" 3 400000 kill "$1"' \
			"$TMP/stagekill" "$TMP/st4.ready" >/dev/null 2>&1
		same "its own /dev/shm, program killed: every event emitted is in the trace" "$(count OB. "$TMP/st4")" 1200000
		rm -rf "$TMP/st4"
	else
		echo "ok - # SKIP its own /dev/shm: cannot mount a tmpfs in a mount namespace here"
	fi
	rm -rf "$TMP/st1" "$TMP/st2" "$TMP/st3"
else
	not_ok "compile stagekill.c"
fi

# --- A signal sent to the recorder reaches the program. ---
rm -rf "$TMP/fw"
"$OVNI" record -o "$TMP/fw" -- sleep 30 >/dev/null 2>"$TMP/err" &
rpid=$!
for i in 1 2 3 4 5 6 7 8 9 10; do
	[ -n "$(find "$TMP/fw" -name stream.obs 2>/dev/null)" ] && break
	sleep 0.2
done
kill -TERM "$rpid"
wait "$rpid"
same "SIGTERM to the recorder: the program dies of it (status 143)" "$?" 143
emu_ok "SIGTERM to the recorder: ovni emu accepts the trace" "$TMP/fw"
# A SIGTERM at any moment of the start (before the program runs, while it
# starts) stops the program too: never a recorder gone and a program left
# running untraced.
# The program's command line is unique to this run (its pid in the sleep
# time): other runs of this test on the machine are not counted or killed.
left=0
dur=1000.$$
for delay in 0 0.001 0.002 0.005 0.01 0.02 0.03 0.05 0.08 0.1; do
	rm -rf "$TMP/early"
	"$OVNI" record -o "$TMP/early" -- sleep $dur >/dev/null 2>&1 &
	rpid=$!
	sleep $delay
	kill -TERM "$rpid"
	wait "$rpid"
	sleep 0.05
	pgrep -xf "sleep $dur" >/dev/null && left=$((left + 1))
	pkill -xf "sleep $dur"
done
same "SIGTERM early in the start (10 delays): no program left running" "$left" 0

# --- The recorder passes on any signal sent to it, and ends as the program
# did: its parent sees the same death (a shell stops a script on SIGINT). ---
$CC -O1 -o "$TMP/runst" "$SRC/runst.c" || not_ok "compile runst.c"
for how in segv int kill; do
	rm -rf "$TMP/die"
	same "crash $how: the recorder's parent sees it end as the program would" \
		"$("$TMP/runst" "$OVNI" record -o "$TMP/die" -- "$TMP/crash" "$how" 2>/dev/null)" "$("$TMP/runst" "$TMP/crash" "$how" 2>/dev/null)"
done
rm -rf "$TMP/die"
same "a closed pipe on the recorder's stderr: the program's status, not SIGPIPE" \
	"$("$TMP/runst" -c "$OVNI" record -o "$TMP/die" -- sh -c 'exit 5')" "exit 5"
emu_ok "a closed pipe on the recorder's stderr: the trace is finished" "$TMP/die"
# recording DIR CMD...: runs ovni record -o DIR -- CMD in the background
# ($rpid) until its program is running (its pid in $app).
recording() {
	dir=$1; shift
	rm -rf "$dir"
	"$OVNI" record -o "$dir" -- "$@" >"$TMP/out" 2>"$TMP/err" &
	rpid=$!
	app=
	for i in $(seq 100); do
		app=$(cat /proc/$rpid/task/$rpid/children 2>/dev/null)
		app=${app% }
		[ -n "$app" ] && [ -n "$(find "$dir" -name stream.obs 2>/dev/null)" ] && break
		sleep 0.05
	done
}
# state PID: its state letter (T: stopped).
state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1; }
# stopped: waits until $app has stopped itself, then lets it 30 s before
# killing it ($watchdog): a program left stopped would hang the test.
stopped() {
	for i in $(seq 100); do
		[ "$(state "$app")" = T ] && break
		sleep 0.05
	done
	( sleep 30; kill -KILL "$app" ) >/dev/null 2>&1 &
	watchdog=$!
}
# recording_ready DIR SCRIPT: records sh -c SCRIPT, which makes the file
# $1 once ready, and waits for it.
recording_ready() {
	rm -f "$TMP/ready"
	recording "$1" sh -c "$2" sh "$TMP/ready"
	for i in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
}
# stopped_both: waits until the program, then the recorder, have stopped.
stopped_both() {
	stopped
	for i in $(seq 100); do [ "$(state "$rpid")" = T ] && break; sleep 0.05; done
}
for sig in ALRM:142 WINCH:9 40:168; do
	recording_ready "$TMP/fw2" 'trap "exit 9" WINCH; : >"$1"; sleep 2; exit 0'
	kill -s "${sig%%:*}" "$rpid"
	wait "$rpid"
	same "SIG${sig%%:*} to the recorder: the program gets it (status ${sig#*:})" "$?" "${sig#*:}"
	grep -q 'in [0-9.]* s.*; trace in' "$TMP/err" && ok "SIG${sig%%:*} to the recorder: it lives to finish the trace" ||
		not_ok "SIG${sig%%:*} to the recorder: it lives to finish the trace"
done
# A program that stops itself is woken by a SIGCONT to the recorder (it
# stayed stopped for ever); a SIGCONT that already woke it (a process
# group's) is not passed on a second time.
recording "$TMP/cont" sh -c 'n=0; trap "n=\$((n+1))" CONT; kill -STOP $$; sleep 0.5; echo "conts $n"'
stopped
kill -CONT "$app"
sleep 0.2
kill -CONT "$rpid"
wait "$rpid"
same "SIGCONT to the recorder and its stopped program: status" "$?" 0
same "SIGCONT to the recorder and its stopped program: woken once" "$(cat "$TMP/out")" "conts 1"
kill "$watchdog" 2>/dev/null
recording "$TMP/cont" sh -c 'kill -STOP $$; echo resumed'
stopped
kill -CONT "$rpid"
wait "$rpid"
same "SIGCONT to the recorder wakes its stopped program: status" "$?" 0
same "SIGCONT to the recorder wakes its stopped program" "$(cat "$TMP/out")" "resumed"
kill "$watchdog" 2>/dev/null
emu_ok "SIGCONT to the recorder: ovni emu accepts the trace" "$TMP/cont"
# A SIGTSTP another process sends to the recorder goes to the program (the
# recorder alone stopped, the program ran on): one that catches it goes
# on, and so does the recording; one that stops stops the recorder too, as
# its parent would see the program stop, and a SIGCONT wakes both.
recording_ready "$TMP/tstp" 'trap "echo caught" TSTP; : >"$1"; sleep 1; echo end'
kill -TSTP "$rpid"
wait "$rpid"
same "SIGTSTP to the recorder: a program that catches it gets it and goes on" "$?:$(tr '\n' ' ' <"$TMP/out")" "0:caught end "
recording_ready "$TMP/tstp" ': >"$1"; sleep 1; echo end'
kill -TSTP "$rpid"
stopped_both
same "SIGTSTP to the recorder: the program and the recorder stop" "$(state "$app")$(state "$rpid")" TT
kill -CONT "$rpid"
wait "$rpid"
same "SIGTSTP to the recorder: a SIGCONT to it wakes both" "$?:$(cat "$TMP/out")" "0:end"
kill "$watchdog" 2>/dev/null
# A program stopped and continued through its own pid: the recorder stops
# with it and runs again with it (it stayed stopped for ever, and the
# recording never ended).
recording_ready "$TMP/contapp" ': >"$1"; sleep 1; echo end; exit 5'
kill -STOP "$app"
stopped_both
same "SIGSTOP to the program: the program and the recorder stop" "$(state "$app")$(state "$rpid")" TT
kill -CONT "$app"
for i in $(seq 100); do [ "$(state "$rpid")" != T ] && break; sleep 0.05; done
same "SIGCONT to the program alone: the recorder runs again" "$([ "$(state "$rpid")" != T ] && echo running)" running
( sleep 30; kill -CONT "$rpid" ) >/dev/null 2>&1 &
waker=$!
wait "$rpid"
same "SIGCONT to the program alone: the recording ends with the program's status" "$?:$(cat "$TMP/out")" "5:end"
kill "$watchdog" "$waker" 2>/dev/null
# A signal the program sends to its own process group (which holds the
# recorder) or to its parent reaches it once, as without the recorder, not
# again through the recorder. setsid: the group is not this script's.
cat >"$TMP/selfsig.sh" <<'EOS'
n=0
trap 'n=$((n+1))' USR1
kill -USR1 0
sleep 0.2
kill -USR1 $PPID
sleep 0.2
echo "USR1 $n"
EOS
alone=$(setsid -w sh -c 'trap : USR1; sh "$1"' _ "$TMP/selfsig.sh" 2>&1)
rm -rf "$TMP/selfsig"
recorded=$(setsid -w sh -c 'trap : USR1; "$1" record -o "$2" -- sh "$3" 2>/dev/null' _ "$OVNI" "$TMP/selfsig" "$TMP/selfsig.sh" 2>&1)
same "a program's signal to its group and to its parent: it gets it once, as without the recorder" \
	"$alone/$recorded" "USR1 1/USR1 1"
# What the program leaves running when it ends: the recorder says it waits
# for it, and a SIGTERM sent to the recorder then goes to it.
dur=2000.$$
recording "$TMP/left" sh -c "sleep $dur & sh -c 'sleep $dur' & exit 3"
for i in $(seq 100); do grep -q 'left behind' "$TMP/err" && break; sleep 0.05; done
n=$(grep -c "^ovni record: sh exited with status 3; waiting for the 3 processes it left behind: [0-9]* (sleep), [0-9]* (sh), [0-9]* (sleep) " "$TMP/err")
same "leftovers: one line names the 3 processes the program left running" "$n" 1
( sleep 30; pkill -KILL -f "sleep $dur" ) >/dev/null 2>&1 &
watchdog=$!
kill -TERM "$rpid"
wait "$rpid"
same "leftovers: a SIGTERM to the recorder ends them; the program's status" "$?" 3
kill "$watchdog" 2>/dev/null
pgrep -f "sleep $dur" >/dev/null && not_ok "leftovers: none is left running" || ok "leftovers: none is left running"
pkill -f "sleep $dur"
same "leftovers: the recorder names their cut threads" "$(grep -c 'did not finish' "$TMP/err")" 3
emu_ok "leftovers: ovni emu accepts the trace" "$TMP/left"
# One that ignores SIGTERM: the first SIGTERM leaves it running, a second
# kills it.
recording "$TMP/left" sh -c "(trap '' TERM; exec sleep $dur) & exit 4"
for i in $(seq 100); do grep -q 'left behind' "$TMP/err" && break; sleep 0.05; done
( sleep 30; pkill -KILL -f "^sleep $dur" ) >/dev/null 2>&1 &
watchdog=$!
kill -TERM "$rpid"
sleep 0.5
same "leftover ignoring SIGTERM: the first SIGTERM leaves it and the recorder running" \
	"$(pgrep -f "^sleep $dur" >/dev/null && echo running):$(kill -0 "$rpid" 2>/dev/null && echo recording)" \
	running:recording
kill -TERM "$rpid"
for i in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.05; done
same "leftover ignoring SIGTERM: a second one ends the recording within 5 s" \
	"$(kill -0 "$rpid" 2>/dev/null && echo recording || echo ended)" ended
wait "$rpid"
same "leftover ignoring SIGTERM: a second one kills it; the program's status" "$?" 4
kill "$watchdog" 2>/dev/null
pgrep -f "^sleep $dur" >/dev/null && not_ok "leftover ignoring SIGTERM: it is not left running" ||
	ok "leftover ignoring SIGTERM: it is not left running"
pkill -KILL -f "^sleep $dur"
emu_ok "leftover ignoring SIGTERM: ovni emu accepts the trace" "$TMP/left"

# --- -o: checked before the program starts; --force; nothing left after a
# failed start; the last line says how the program ended. ---
# started DIR: 1 if the probe program ran (it makes DIR/../started).
: >"$TMP/file"
rm -f "$TMP/started"
check_fails "-o FILE: refused before the program starts" "-o .*file: exists and is not a trace directory" \
	"$OVNI" record -o "$TMP/file" -- sh -c "touch '$TMP/started'"
[ -e "$TMP/started" ] && not_ok "-o FILE: the program never started" || ok "-o FILE: the program never started"
same "-o FILE: one line of error" "$(wc -l <"$TMP/.err" | tr -d ' ')" 1
mkdir -p "$TMP/notrace" && : >"$TMP/notrace/keep"
check_fails "-o a directory holding something else: refused, even with --force" "not a trace directory" \
	"$OVNI" record --force -o "$TMP/notrace" -- sh -c "touch '$TMP/started'"
[ -e "$TMP/notrace/keep" ] && [ ! -e "$TMP/started" ] && ok "-o a directory holding something else: left alone, nothing started" ||
	not_ok "-o a directory holding something else: left alone, nothing started"
rec o1 "$TMP/threads" 1
old=$(ls -d "$TMP"/o1/loom.*)
check_fails "-o an existing trace: refused without --force" "holds a trace already; --force replaces it" \
	"$OVNI" record -o "$TMP/o1" -- sh -c "touch '$TMP/started'"
[ -e "$TMP/started" ] && not_ok "-o an existing trace: the program never started" || ok "-o an existing trace: the program never started"
same "-o an existing trace: left as it was" "$(ls -d "$TMP"/o1/loom.*)" "$old"
"$OVNI" record --force -o "$TMP/o1" -- "$TMP/threads" 2 >/dev/null 2>"$TMP/err"
same "--force: exit status" "$?" 0
same "--force: the old trace is replaced, not merged" "$(ls -d "$TMP"/o1/loom.* | wc -l | tr -d ' ') $(ls -d "$TMP"/o1/loom.* | grep -c "$old")" "1 0"
same "--force: nothing set aside is left" "$(ls -d "$TMP"/o1.* 2>/dev/null | wc -l | tr -d ' ')" 0
emu_ok "--force: ovni emu accepts the new trace" "$TMP/o1"
ref_same "--force" "$TMP/o1"
# The emulator's outputs beside the looms go with the trace; a file of any
# other kind makes --force refuse instead of removing it.
"$OVNI" emu "$TMP/o1" >/dev/null 2>&1
"$OVNI" record --force -o "$TMP/o1" -- "$TMP/threads" 1 >/dev/null 2>&1
same "--force over a trace and its timelines: replaced, timelines too" \
	"$? $(ls -d "$TMP"/o1/loom.* | wc -l | tr -d ' ') $(ls "$TMP"/o1/*.prv 2>/dev/null | wc -l | tr -d ' ')" "0 1 0"
old=$(ls -d "$TMP"/o1/loom.*)
echo mine >"$TMP/o1/notes.txt"
check_fails "--force over a trace with a file of the user's: refused, naming it" "files of another kind \(notes.txt\)" \
	"$OVNI" record --force -o "$TMP/o1" -- sh -c "touch '$TMP/started'"
same "--force over a trace with a file of the user's: all left as it was, nothing started" \
	"$(cat "$TMP/o1/notes.txt") $(ls -d "$TMP"/o1/loom.*) $([ -e "$TMP/started" ] && echo started)" "mine $old "
rm -f "$TMP/o1/notes.txt"
rm -rf "$TMP/empty-o" && mkdir -p "$TMP/empty-o"
"$OVNI" record -o "$TMP/empty-o" -- "$TMP/threads" 0 >/dev/null 2>&1
same "-o an empty directory: recorded" "$? $(ls -d "$TMP"/empty-o/loom.* | wc -l | tr -d ' ')" "0 1"
rm -rf "$TMP/gone"
check_fails "a missing program: refused" "nosuchprog: command not found" "$OVNI" record -o "$TMP/gone" -- nosuchprog
[ -e "$TMP/gone" ] && not_ok "a missing program: no trace directory left behind" || ok "a missing program: no trace directory left behind"
printf '#!%s/no/such/interpreter\n' "$TMP" >"$TMP/badinterp" && chmod +x "$TMP/badinterp"
check_fails "exec fails (no interpreter): one line naming the program" "cannot run .*badinterp" \
	"$OVNI" record -o "$TMP/gone" --tmpdir "$TMP/gone-tmp" -- "$TMP/badinterp"
[ -e "$TMP/gone" ] || [ -e "$TMP/gone-tmp" ] && not_ok "exec fails: nothing left behind" || ok "exec fails: nothing left behind"
check_fails "exec fails with --force: refused" "cannot run" "$OVNI" record --force -o "$TMP/o1" -- "$TMP/badinterp"
same "exec fails with --force: the old trace is put back" "$(ls -d "$TMP"/o1/loom.* | wc -l | tr -d ' ') $(ls -d "$TMP"/o1.* 2>/dev/null | wc -l | tr -d ' ')" "1 0"
# The recorder's last line says how the program ended (a shell may add its
# own after it, as it would for the program alone).
rec end0 "$TMP/threads" 2 7
same "exit status: the recorder exits with it" "$rc" 7
same "exit status: the last line says it" "$(tail -n 1 "$TMP/err" | grep -o '; threads exited with status 7$')" "; threads exited with status 7"
rec endsig "$TMP/crash" segv
same "killed by a signal: the last line names it" "$(grep "^ovni record:" "$TMP/err" | tail -n 1 | grep -Eo '; crash was killed by SIGSEGV \(Segmentation fault\)(, core dumped)?$' | cut -c1-35)" "; crash was killed by SIGSEGV (Segm"
rec endkill "$TMP/crash" kill
same "killed by SIGKILL: the last line names it" "$(grep "^ovni record:" "$TMP/err" | tail -n 1 | grep -o 'crash was killed by SIGKILL.*')" "crash was killed by SIGKILL (Killed)"

# --- Threads with small stacks (16 KiB is glibc's least): the shim's
# thread-local data and its work at a thread's start and end come out of
# them; none fails to start or overflows where it ran without the recorder. ---
$CC -O1 -pthread -o "$TMP/stack" "$SRC/stack.c" || not_ok "compile stack.c"
"$TMP/stack" 16 20 24 32 64 >"$TMP/stack.plain" 2>&1
for k in --no-kernel --kernel; do
	rm -rf "$TMP/stack-t"
	OVNI_TMPDIR= "$OVNI" record $k -o "$TMP/stack-t" -- "$TMP/stack" 16 20 24 32 64 >"$TMP/stack.out" 2>"$TMP/err"
	same "small stacks, $k: exit status" "$?" 0
	same "small stacks, $k: every thread ran as without the recorder" "$(cat "$TMP/stack.out")" "$(cat "$TMP/stack.plain")"
	emu_ok "small stacks, $k: ovni emu accepts the trace" "$TMP/stack-t"
	same "small stacks, $k: each thread's stream runs from OHx to OHe" "$(bounds "$TMP/stack-t")" "6xOHx-OHe "
done
# --tmpdir: each thread's files move at its end (copied where the tmpdir
# is another file system, /dev/shm here when there is one).
stmp=$TMP/stack-tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && stmp=$(mktemp -d /dev/shm/ovni-test-stack.XXXXXX)
rm -rf "$TMP/stack-t" && mkdir -p "$stmp"
"$OVNI" record --tmpdir "$stmp" -o "$TMP/stack-t" -- "$TMP/stack" 16 20 24 32 64 >"$TMP/stack.out" 2>"$TMP/err"
same "small stacks, --tmpdir: every thread ran as without the recorder" "$?:$(cat "$TMP/stack.out")" "0:$(cat "$TMP/stack.plain")"
same "small stacks, --tmpdir: each thread's stream runs from OHx to OHe" "$(bounds "$TMP/stack-t")" "6xOHx-OHe "
rm -rf "$stmp"

# --- The program's umask is not the recorder's: a program that masks its
# own write or search bits (umask 0277, 0777) still starts children whose
# streams the shim can write and the user can read. Root reads and writes
# anything, so this runs as nobody when the tests run as root. ---
as_user=
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" != 0 ] || [ -n "$as_user" ]; then
	U=$TMP/umask
	mkdir -p "$U" && chmod 711 "$TMP"
	[ -n "$as_user" ] && chown 65534:65534 "$U"
	for m in 0277 0777; do
		rm -rf "$U/t" "$U/e"
		$as_user env -u XDG_RUNTIME_DIR HOME="$U" TMPDIR="$U" "$OVNI" record -o "$U/t" -- \
			sh -c "umask $m; sh -c 'echo child'" >"$TMP/out" 2>"$TMP/err" </dev/null
		same "umask $m: the program and its child end as without the recorder" "$?:$(cat "$TMP/out")" "0:child"
		$as_user env HOME="$U" "$OVNI" emu -o "$U/e" "$U/t" >/dev/null 2>"$TMP/err"
		same "umask $m: the user's ovni emu reads every stream" "$?:$(find "$U/t" -name stream.obs | wc -l | tr -d ' ')" "0:2"
	done
	chmod 700 "$TMP"
else
	echo "ok - # SKIP umask: root without setpriv"
fi

# A program that drops its privileges as setpriv does (setresuid, then
# capset in its own thread, then setresgid): glibc makes every thread take
# each call and aborts when one cannot; the recorder's threads must not be
# the one. What it runs as nobody is not recorded (the trace is root's).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	for k in --no-kernel --kernel; do
		rm -rf "$TMP/drop"
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			sh -c 'echo dropped; env | grep -e OVNI -e LD_PRELOAD | sort; exit 5' >"$TMP/drop.plain" 2>&1 </dev/null
		"$OVNI" record $k -o "$TMP/drop" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
			sh -c 'echo dropped; env | grep -e OVNI -e LD_PRELOAD | sort; exit 5' >"$TMP/out" 2>"$TMP/err" </dev/null
		same "setpriv to nobody, $k: the program ends and sees its environment as without the recorder" \
			"$?:$(cat "$TMP/out")" "5:$(cat "$TMP/drop.plain")"
		same "setpriv to nobody, $k: one line says what runs as nobody is not traced, no loader error" \
			"$(grep -c 'runs as user 65534, who cannot use .*: it and what it starts are not traced' "$TMP/err"):$(grep -c 'cannot be preloaded' "$TMP/err")" "1:0"
		emu_ok "setpriv to nobody, $k: ovni emu accepts the trace" "$TMP/drop"
	done
	# Dropped by the program itself, which then forks: the child's stream
	# cannot be made (the trace is root's); the child runs, unrecorded. The
	# parent's next windows cannot be opened: it goes on, its stream ends.
	$CC -O1 -pthread -o "$TMP/dropfork" "$SRC/drop.c" || not_ok "compile drop.c"
	"$TMP/dropfork" >"$TMP/drop.plain" 2>&1
	rm -rf "$TMP/drop"
	"$OVNI" record -o "$TMP/drop" -- "$TMP/dropfork" >"$TMP/out" 2>"$TMP/err" </dev/null
	same "drop to nobody, then fork: the program ends as without the recorder" "$?:$(cat "$TMP/out")" "0:$(cat "$TMP/drop.plain")"
	grep -q 'the events of thread [0-9]* from now on are not recorded' "$TMP/err" &&
		ok "drop to nobody, then fork: one line says the child is not recorded" ||
		{ not_ok "drop to nobody, then fork: one line says the child is not recorded"; sed 's/^/#   /' "$TMP/err"; }
	emu_ok "drop to nobody, then fork: ovni emu accepts the trace" "$TMP/drop"
else
	echo "ok - # SKIP setpriv: not root or no setpriv"
fi

# --- Namespaces: a program alone in its process may enter a new user
# namespace (the kernel refuses it to a process of several threads); the
# recorder's own threads must not make it fail. Where the kernel refuses it
# to everyone, nothing to compare. ---
$CC -O1 -pthread -o "$TMP/ns" "$SRC/ns.c" || not_ok "compile ns.c"
if "$TMP/ns" alone 0 >"$TMP/ns.plain" 2>&1 && grep -q 'unshare: done' "$TMP/ns.plain"; then
	for how in alone threads; do
		"$TMP/ns" $how 0 >"$TMP/ns.plain" 2>&1
		for k in --no-kernel --kernel; do
			rm -rf "$TMP/ns-$how"
			"$OVNI" record $k -o "$TMP/ns-$how" -- "$TMP/ns" $how 10000 >"$TMP/ns.out" 2>"$TMP/err"
			same "unshare, $how, $k: exit status" "$?" 0
			same "unshare, $how, $k: the program's answer is the one without the recorder" \
				"$(cat "$TMP/ns.out")" "$(cat "$TMP/ns.plain")"
			emu_ok "unshare, $how, $k: ovni emu accepts the trace" "$TMP/ns-$how"
			same "unshare, $how, $k: every blocking call before and after it is in the trace" \
				"$("$OVNI" dump "$TMP/ns-$how" 2>/dev/null | grep -c ' OM\[ .* pushes 4 onto mark 99$')" 20000
			[ $how = alone ] && same "unshare, alone, $k: no blocking call of the shim's own in the trace" \
				"$("$OVNI" top "$TMP/ns-$how" 2>/dev/null | awk '$1 == "OM[" {print $2}')" 20000
		done
	done
	if command -v unshare >/dev/null 2>&1 && unshare -r true 2>/dev/null; then
		rm -rf "$TMP/ns-r"
		"$OVNI" record -o "$TMP/ns-r" -- unshare -r sh -c 'exit 3' >/dev/null 2>&1
		same "unshare -r sh -c 'exit 3': the shell's status" "$?" 3
		emu_ok "unshare -r: ovni emu accepts the trace" "$TMP/ns-r"
	fi
else
	echo "ok - # SKIP user namespaces refused here: $(head -n 1 "$TMP/ns.plain")"
fi
# pid namespaces (containers, unshare --pid): each has a pid 1 of its own.
# Two of them under one recorder are two processes in the trace, not one
# stream that an "exec" continued.
if command -v unshare >/dev/null 2>&1 && unshare -r --fork --pid true 2>/dev/null; then
	rm -rf "$TMP/pidns"
	"$OVNI" record -o "$TMP/pidns" -- sh -c 'unshare -r --fork --pid sh -c "sh -c true"; unshare -r --fork --pid sh -c "sh -c true"' \
		>/dev/null 2>"$TMP/err" </dev/null
	same "two pid namespaces: exit status" "$?" 0
	grep -q ' 7 processes, 7 threads, ' "$TMP/err" && ok "two pid namespaces: 7 processes recorded" ||
		{ not_ok "two pid namespaces: 7 processes recorded"; sed 's/^/#   /' "$TMP/err"; }
	# OHx per stream: once, twice in the two whose fork child (pid 1) execs sh
	same "two pid namespaces: each process its own stream" \
		"$("$OVNI" dump "$TMP/pidns" 2>/dev/null | awk '$2 == "OHx" {n[$3]++} END {for (s in n) print n[s]}' | sort | uniq -c | tr -s ' ' | tr '\n' ' ')" \
		" 5 1  2 2 "
	emu_ok "two pid namespaces: ovni emu accepts the trace" "$TMP/pidns"
	ref_same "two pid namespaces" "$TMP/pidns"
else
	echo "ok - # SKIP unshare -r --fork --pid refused here"
fi
# Joining a mount namespace needs an fs_struct of one user (no thread
# made with CLONE_FS): nsenter -m, where this machine allows it.
if command -v nsenter >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1; then
	unshare -m sleep 30 2>/dev/null &
	holder=$!
	sleep 0.3
	if nsenter -m -t "$holder" true 2>/dev/null; then
		rm -rf "$TMP/ns-m"
		"$OVNI" record -o "$TMP/ns-m" -- nsenter -m -t "$holder" sh -c 'exit 4' >/dev/null 2>"$TMP/err"
		same "nsenter -m: the shell's status" "$?" 4
		emu_ok "nsenter -m: ovni emu accepts the trace" "$TMP/ns-m"
	else
		echo "ok - # SKIP nsenter -m refused here"
	fi
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
fi

# A full disk: the stream stops growing, one line says so, the program
# goes on (a 1 MiB tmpfs, where this machine lets the tests mount one).
mkdir -p "$TMP/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m tmpfs "$TMP/full" 2>/dev/null; then
	"$TMP/ns" alone 0 >"$TMP/full.plain" 2>&1
	"$OVNI" record --no-kernel -o "$TMP/full/t" -- "$TMP/ns" alone 40000 >"$TMP/out" 2>"$TMP/err" </dev/null
	same "a full disk: the program ends as without the recorder" "$?:$(cat "$TMP/out")" "0:$(cat "$TMP/full.plain")"
	grep -q 'cannot extend .*stream.obs (No space left on device): the events of thread [0-9]* from now on are not recorded' "$TMP/err" &&
		ok "a full disk: one line says so" || { not_ok "a full disk: one line says so"; sed 's/^/#   /' "$TMP/err"; }
	emu_ok "a full disk: ovni emu accepts the trace" "$TMP/full/t"
	umount "$TMP/full"
else
	echo "ok - # SKIP a full disk: cannot mount a small tmpfs here"
fi

# --- CPU placement and affinity. ---
if [ "$(nproc)" -ge 2 ]; then
	$CC -O1 -pthread -o "$TMP/affinity" "$SRC/affinity.c" || not_ok "compile affinity.c"
	rec aff "$TMP/affinity"
	same "affinity: exit status" "$rc" 0
	emu_ok "affinity: ovni emu accepts the trace (never two threads on one CPU)" "$TMP/aff"
	"$OVNI" dump "$TMP/aff" >"$TMP/aff.txt" 2>/dev/null
	grep -q 'OAs .*moves itself to CPU 0$' "$TMP/aff.txt" && ok "affinity: main pins itself to CPU 0" || not_ok "affinity: main pins itself to CPU 0"
	same "affinity: threads created pinned to a taken CPU run on the virtual CPU" \
		"$(grep -c 'OHx .*begins running on CPU -1; creator thread [1-9]' "$TMP/aff.txt")" 2
	grep -q 'OAr .*to CPU 1$' "$TMP/aff.txt" && ok "affinity: moving another thread is OAr" || not_ok "affinity: moving another thread is OAr"
	grep -q 'OAs .*moves itself to CPU -1$' "$TMP/aff.txt" && ok "affinity: unpinned, main goes to the virtual CPU" ||
		not_ok "affinity: unpinned, main goes to the virtual CPU"
else
	echo "ok - # SKIP one CPU"
fi

# --- 64 threads x 1 million events through the API: none lost. ---
BIG=$TMP
[ -d /dev/shm ] && [ -w /dev/shm ] && BIG=$(mktemp -d /dev/shm/ovni-test-record.XXXXXX)
avail=$(df -Pk "$BIG" | awk 'NR == 2 {print $4}')
if [ "${avail:-0}" -gt 2000000 ] && "$OVNI" lib "$TMP/blib" 2>/dev/null &&
	$CC -O2 -pthread -I"$TMP/blib" -o "$TMP/burst" "$SRC/burst.c" -L"$TMP/blib" -lovni; then
	"$OVNI" record --no-kernel -o "$BIG/b" -- "$TMP/burst" 64 1000000 >/dev/null 2>"$TMP/err" # exact counts: no switches
	same "64 threads x 1M events: exit status" "$?" 0
	same "64 threads x 1M events: every event is in the trace" \
		"$("$OVNI" top "$BIG/b" 2>/dev/null | awk '$1 == "OB." {print $2}')" 64000000
	# Plus the marks of the blocking calls (joins, barriers) the shim records.
	marks=$("$OVNI" top "$BIG/b" 2>/dev/null | awk '$1 == "OM[" || $1 == "OM]" {n += $2} END {print n + 0}')
	grep -q " 65 threads, $((64000194 + marks)) events" "$TMP/err" && ok "64 threads x 1M events: summary counts them" ||
		{ not_ok "64 threads x 1M events: summary counts them"; cat "$TMP/err"; }
	# The stream pages are grown one way on tmpfs (zeros written) and
	# another on a disk file system (blocks reserved): both, when $TMP is
	# not /dev/shm.
	if [ "$BIG" != "$TMP" ]; then
		"$OVNI" record --no-kernel -o "$TMP/b8" -- "$TMP/burst" 8 500000 >/dev/null 2>&1
		same "8 threads x 500k events beside the other tests: every event is in the trace" \
			"$("$OVNI" top "$TMP/b8" 2>/dev/null | awk '$1 == "OB." {print $2}')" 4000000
		rm -rf "$TMP/b8"
	fi
else
	echo "ok - # SKIP 64 x 1M events: less than 2 GB free in $BIG"
fi
[ "$BIG" != "$TMP" ] && rm -rf "$BIG"

# --- A program that closes every descriptor it did not open, then opens
# its own file (the lowest number, once the shim's): the shim holds none
# between windows, so the trace is whole and the program's file untouched. ---
if $CC -O1 -pthread -o "$TMP/fds" "$SRC/fds.c"; then
	for how in loop range; do
		rm -rf "$TMP/fd-$how" "$TMP/own-$how"
		"$OVNI" record -o "$TMP/fd-$how" -- "$TMP/fds" $how "$TMP/own-$how" >"$TMP/out" 2>"$TMP/err"
		same "closes its descriptors ($how): exit status" "$?" 3
		same "closes its descriptors ($how): its file took number 3 and holds what it wrote" \
			"$(cat "$TMP/out") $(tr '\n' ' ' <"$TMP/own-$how")" "fds: fd 3 kept kept kept kept kept "
		same "closes its descriptors ($how): nothing on stderr but the summary" \
			"$(grep -vc '^ovni record: 1 process, 2501 threads, ' "$TMP/err")" 0
		emu_ok "closes its descriptors ($how): ovni emu accepts the trace" "$TMP/fd-$how"
		same "closes its descriptors ($how): every thread's stream starts with OHx and ends with OHe" \
			"$(bounds "$TMP/fd-$how")" "2501xOHx-OHe "
	done
	# Its own stream removed under it: the program goes on, told once.
	rm -rf "$TMP/fd-gone"
	"$OVNI" record -o "$TMP/fd-gone" -- "$TMP/fds" loop "$TMP/own-gone" "$TMP/fd-gone" >"$TMP/out" 2>"$TMP/err"
	same "its stream removed: the program ends as it would" "$?:$(cat "$TMP/out")" "3:fds: fd 3"
	same "its stream removed: one line says so" "$(grep -c 'stream.obs again (No such file or directory): the events of thread [0-9]* from now on are not recorded' "$TMP/err")" 1
	# The shim's threads open files by their own descriptor tables, so that
	# none takes for a moment the number the program's next open() is due:
	# every task of the program holds the program's descriptors, or none.
	recording "$TMP/fd-table" sleep 3
	tables=$(for t in /proc/$app/task/*; do ls "$t/fd" 2>/dev/null | sort -n | tr '\n' ' '; echo; done | sort | uniq -c |
		awk '{ $1 = ""; print ($0 == "" ? "none" : "program") }' | sort | tr '\n' ' ')
	same "the shim's threads: a descriptor table of their own, empty" "$tables" "none program "
	wait "$rpid"
	rm -rf "$TMP"/fd-* "$TMP"/own-*
else
	not_ok "compile fds.c"
fi
# At its descriptor limit, the program still runs to its end; its stream
# stops at the window it could not open (one line says so) and is ended
# there, a trace ovni emu accepts.
if "$OVNI" lib "$TMP/flib" >/dev/null 2>&1 &&
	$CC -O1 -pthread -I"$TMP/flib" -o "$TMP/fdlimit" "$SRC/fdlimit.c" -L"$TMP/flib" -lovni; then
	rm -rf "$TMP/fdl"
	"$OVNI" record -o "$TMP/fdl" -- "$TMP/fdlimit" 100000 >"$TMP/out" 2>"$TMP/err"
	same "at its descriptor limit: the program ends as it would" "$?:$(cat "$TMP/out")" "4:fdlimit: 100000 events"
	same "at its descriptor limit: one line says the rest is not recorded" \
		"$(grep -c 'stream.obs again (Too many open files): the events of thread [0-9]* from now on are not recorded' "$TMP/err")" 1
	emu_ok "at its descriptor limit: ovni emu accepts the trace" "$TMP/fdl"
	n=$(count OB. "$TMP/fdl")
	[ "$n" -gt 1000 ] && [ "$n" -lt 100000 ] && ok "at its descriptor limit: the events up to then are in the trace ($n)" ||
		not_ok "at its descriptor limit: the events up to then are in the trace ($n)"
	rm -rf "$TMP/fdl"
	"$OVNI" record -o "$TMP/fdl" -- "$TMP/fdlimit" 1000 threads >"$TMP/out" 2>"$TMP/err"
	same "at its descriptor limit, starting threads: the program ends as it would" "$?:$(cat "$TMP/out")" "4:fdlimit: 1000 events"
	same "at its descriptor limit, starting threads: one line for each, not recorded" \
		"$(grep -c 'stream.obs (Too many open files): the events of thread [0-9]* from now on are not recorded' "$TMP/err")" 3
	# stream.json cannot be written there either: the recorder writes it
	rm -rf "$TMP/fdl"
	"$OVNI" record -o "$TMP/fdl" -- "$TMP/fdlimit" 1000 mark >"$TMP/out" 2>"$TMP/err"
	same "at its descriptor limit, declaring a mark: the program ends as it would" \
		"$?:$(cat "$TMP/out")" "4:fdlimit: 1000 events, 10 marks"
	emu_ok "at its descriptor limit, declaring a mark: ovni emu accepts the trace" "$TMP/fdl"
	same "at its descriptor limit, declaring a mark: its events are in the trace" \
		"$(count 'OM[' "$TMP/fdl"):$(count 'OM]' "$TMP/fdl")" 10:10
	same "at its descriptor limit, declaring a mark: the mark is in the Paraver views" \
		"$(grep -c 'Phase' "$TMP/emu/thread.pcf")" 1
else
	not_ok "compile fdlimit.c"
fi
# Under a file size limit (ulimit -f: 512- or 1024-byte blocks, as the
# shell counts) streams stop growing, not the program (no SIGXFSZ); the
# recorder's own files over the limit are an error, not a signal.
if $CC -O2 -pthread -I"$TMP/flib" -o "$TMP/fburst" "$SRC/burst.c" -L"$TMP/flib" -lovni; then
	rm -rf "$TMP/fsz"
	(ulimit -f 16384 && exec "$OVNI" record -o "$TMP/fsz" -- "$TMP/fburst" 2 3000000) >"$TMP/out" 2>"$TMP/err"
	same "under a file size limit: the program ends as it would" "$?:$(grep -c '^burst: 2 threads x 3000000 events' "$TMP/out")" "0:1"
	same "under a file size limit: a line for each thread whose stream stopped" \
		"$(grep -c 'cannot extend .*stream.obs (File too large): the events of thread [0-9]* from now on are not recorded' "$TMP/err")" 2
	emu_ok "under a file size limit: ovni emu accepts the trace" "$TMP/fsz"
	rm -rf "$TMP/fsz"
	(ulimit -f 200 && exec "$OVNI" record -o "$TMP/fsz" -- true) >"$TMP/out" 2>"$TMP/err"
	same "a file size limit below the recorder's state: status 1, one error line" \
		"$?:$(grep -c '^ovni record: error: .*File too large$' "$TMP/err")" "1:1"
	state=$(sed -n 's/^ovni record: error: cannot create \(.*\): File too large$/\1/p' "$TMP/err")
	same "a file size limit below the recorder's state: the state file is not left behind" \
		"$([ -n "$state" ] && [ ! -e "$state" ] && echo gone)" gone
else
	not_ok "compile burst.c against ovni lib"
fi

# --- Private shim directory. ---
priv=$(TMPDIR=$TMP/priv sh -c 'mkdir -p "$TMPDIR"; "$1" record -o "$2" -- true 2>/dev/null; ls -d "$TMPDIR"/ovni-*' sh "$OVNI" "$TMP/t3")
mode=$(stat -c %a "$priv" 2>/dev/null)
same "the private directory is mode 711 (others load the shim, cannot list it)" "$mode" 711
same "the shim is installed once, by content hash" "$(ls "$priv" | grep -c '^shim-')" 1
# Concurrent first runs install the same shim without tripping on each other.
mkdir -p "$TMP/conc"
for i in 1 2 3 4; do
	TMPDIR=$TMP/conc XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/conc-t$i" -- "$TMP/threads" 1 >/dev/null 2>&1 &
done
wait
n=0
for i in 1 2 3 4; do
	[ -d "$TMP/conc-t$i" ] && [ "$(find "$TMP/conc-t$i" -name stream.obs | wc -l)" -eq 3 ] && n=$((n + 1))
done
same "4 concurrent first runs all record" "$n" 4
same "concurrent runs leave one shim file" "$(find "$TMP/conc" -name 'libovni.so.1' | wc -l | tr -d ' ')" 1
same "concurrent runs leave no temporary file" "$(find "$TMP/conc" -name '.tmp.*' | wc -l | tr -d ' ')" 0
# State files (run.PID) of recorders killed by SIGKILL are removed by the
# next recorder, once a minute old; a running recorder's never is.
sw=$TMP/sweep
pd=$sw/ovni-$(id -u)
mkdir -p "$sw"
# wait_file PATH: up to 10 s for PATH to exist
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
TMPDIR=$sw XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/sw1" -- sleep 30 >/dev/null 2>&1 &
dead=$!
wait_file "$pd/run.$dead"
kids=$(pgrep -P $dead)
kill -9 $dead
wait $dead 2>/dev/null
[ -n "$kids" ] && kill $kids 2>/dev/null
same "a recorder killed by SIGKILL leaves its state file" "$([ -e "$pd/run.$dead" ] && echo left)" left
TMPDIR=$sw XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/sw2" -- true >/dev/null 2>&1
same "a state file made in the last minute is kept" "$([ -e "$pd/run.$dead" ] && echo kept)" kept
TMPDIR=$sw XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/sw3" -- sleep 3 >/dev/null 2>&1 &
live=$!
wait_file "$pd/run.$live"
touch -d '2 minutes ago' "$pd/run.$dead" "$pd/run.$live"
TMPDIR=$sw XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/sw4" -- true >/dev/null 2>&1
same "the next recorder removes a killed recorder's old state file" "$([ -e "$pd/run.$dead" ] || echo gone)" gone
same "a running recorder's state file is kept, however old" "$([ -e "$pd/run.$live" ] && echo kept)" kept
wait $live
same "the running recorder ends well" "$?:$(find "$TMP/sw3" -name stream.obs | wc -l | tr -d ' ')" 0:1
rm -rf "$sw" "$TMP"/sw[1-4]

rm -rf "$TMP/evil" && mkdir -p "$TMP/evil" "$TMP/other"
ln -s "$TMP/other" "$TMP/evil/ovni-$(id -u)"
check_fails "a symlinked private directory is refused" "not a directory|symlink" \
	env TMPDIR="$TMP/evil" XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/t4" -- true

check_fails "a missing program is named" "nosuchprog: command not found" "$OVNI" record -o "$TMP/t6" -- nosuchprog
check_fails "no program at all" "no program to run" "$OVNI" record -o "$TMP/t6"
check_fails "--app-id 0 is refused" "app-id" "$OVNI" record --app-id 0 -o "$TMP/t6" -- true
if command -v musl-gcc >/dev/null 2>&1 && musl-gcc -o "$TMP/musl" "$SRC/procs.c" 2>/dev/null &&
	readelf -l "$TMP/musl" 2>/dev/null | grep -q 'interpreter'; then
	check_fails "a musl program is refused clearly" "linked against musl" "$OVNI" record -o "$TMP/t7" -- "$TMP/musl"
fi

# --- Static programs. ---
if $CC -static -o "$TMP/static" "$SRC/threads.c" -pthread 2>/dev/null; then
	check_fails "a static program is refused clearly" "statically linked" "$OVNI" record -o "$TMP/t5" -- "$TMP/static"
else
	echo "ok - # SKIP no static glibc"
fi

if $CC -static -o "$TMP/static" "$SRC/threads.c" -pthread 2>/dev/null; then
	printf '#!%s\n' "$TMP/static" >"$TMP/script" && chmod +x "$TMP/script"
	rm -rf "$TMP/t8"
	"$OVNI" record -o "$TMP/t8" -- "$TMP/script" >/dev/null 2>"$TMP/err"
	grep -q 'nothing was recorded' "$TMP/err" && ok "a script run by a static interpreter: nothing recorded, and said" ||
		not_ok "a script run by a static interpreter: nothing recorded, and said"
fi

# --- The libovni API, through ovni lib. ---
check "ovni lib writes the API files" "$OVNI" lib "$TMP/lib"
for f in ovni.h libovni.so libovni.so.1 ovni.pc; do
	[ -e "$TMP/lib/$f" ] && ok "ovni lib: $f" || not_ok "ovni lib: $f"
done
if command -v pkg-config >/dev/null 2>&1; then
	flags=$(PKG_CONFIG_PATH=$TMP/lib pkg-config --cflags --libs ovni)
	# shellcheck disable=SC2086
	$CC -pthread -o "$TMP/api-pc" "$SRC/api.c" $flags && (cd / && OVNI_TRACEDIR="$TMP/a0" "$TMP/api-pc" 2 >/dev/null) &&
		ok "ovni.pc: pkg-config flags build and run a program" || not_ok "ovni.pc: pkg-config flags build and run a program"
fi
if $CC -pthread -o "$TMP/api" "$SRC/api.c" -I"$TMP/lib" -L"$TMP/lib" -Wl,-rpath,"$TMP/lib" -lovni; then
	ok "a program builds against ovni lib output"
	rm -rf "$TMP/a1"
	(cd "$TMP" && OVNI_TRACEDIR="$TMP/a1" ./api 5 >/dev/null) && ok "api: runs alone" || not_ok "api: runs alone"
	emu_ok "api: ovni emu accepts its own trace" "$TMP/a1"
	same "api: marks pushed" "$(count OM[ "$TMP/a1")" 5
	same "api: jumbo event" "$(count OUj "$TMP/a1")" 1
	grep -q '"answer": 42' "$TMP"/a1/*/*/*/stream.json && ok "api: attributes in stream.json" || not_ok "api: attributes in stream.json"
	rm -rf "$TMP/a2"
	# Without the rpath copy: the recorder's libovni.so.1 must be found.
	mv "$TMP/lib" "$TMP/lib.away"
	"$OVNI" record -o "$TMP/a2" -- "$TMP/api" 5 >/dev/null 2>&1
	same "api: under ovni record, without the library installed" "$?" 0
	mv "$TMP/lib.away" "$TMP/lib"
	emu_ok "api: ovni emu accepts the recorded trace" "$TMP/a2"
	same "api: the program's own OHx is replaced by the recorder's" "$(count OHx "$TMP/a2")" 1
	same "api: marks recorded" "$(count OM] "$TMP/a2")" 5
	# The first thread leaves by pthread_exit while a second one emits:
	# the process ends when that one returns (the library's own threads
	# once kept it alive for good, with SIGTERM blocked).
	rm -rf "$TMP/a3"
	(cd "$TMP" && OVNI_TRACEDIR="$TMP/a3" timeout -s KILL 60 ./api 5 pthread-exit >/dev/null)
	same "api, pthread_exit from the first thread: the process ends (status 0)" "$?" 0
	same "api, pthread_exit from the first thread: both threads' events" \
		"$(count OHx "$TMP/a3") $(count OB. "$TMP/a3") $(count OHe "$TMP/a3")" "2 100005 2"
	emu_ok "api, pthread_exit from the first thread: ovni emu accepts the trace" "$TMP/a3"
	rm -rf "$TMP/a4"
	timeout -s KILL 60 "$OVNI" record -o "$TMP/a4" -- "$TMP/api" 5 pthread-exit >/dev/null 2>&1
	same "api under ovni record, pthread_exit from the first thread: the process ends (status 0)" "$?" 0
	emu_ok "api under ovni record, pthread_exit from the first thread: ovni emu accepts the trace" "$TMP/a4"
	# Killed after declaring a mark type and requiring a model: the marks
	# were written as declared, the model comes from the events (both were
	# in memory only, and the trace was refused).
	rm -rf "$TMP/a5"
	"$OVNI" record -o "$TMP/a5" -- "$TMP/api" 5 killed >/dev/null 2>&1
	same "api killed under ovni record: the recorder says so" "$?" 137
	grep -q '"Phase"' "$TMP"/a5/*/*/*/stream.json && ok "api killed: its mark type is in stream.json" ||
		not_ok "api killed: its mark type is in stream.json"
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	check "api killed: ovni emu -l accepts the trace" "$OVNI" emu -l -o "$TMP/emu" "$TMP/a5"
	ref_same "api killed" "$TMP/a5"
	# Ten forks amid window changes (the shim's mapper is often preparing
	# the parent's next window): every child's events and the parent's kept.
	rm -rf "$TMP/a6"
	timeout -s KILL 120 "$OVNI" record -o "$TMP/a6" -- "$TMP/api" 5 forks >/dev/null 2>"$TMP/err"
	same "api forks under ovni record: exit status" "$?" 0
	grep -q "waited" "$TMP/err" && not_ok "api forks: no wait for the mapper" || ok "api forks: no wait for the mapper"
	same "api forks: 11 processes, every event" "$(count OHx "$TMP/a6") $(count OB. "$TMP/a6")" "11 2100005"
	emu_ok "api forks: ovni emu accepts the trace" "$TMP/a6"
	# Clocks agree across threads: turns taken one after the other (about
	# 100 ns apart) are in clock order, with clock_gettime and with the
	# scaled TSC.
	$CC -O2 -pthread -o "$TMP/pingpong" "$SRC/pingpong.c" -I"$TMP/lib" -L"$TMP/lib" -lovni || not_ok "compile pingpong.c"
	# turns ENV: "N MAX": N of the 100000 turns are out of clock order, the
	# worst by MAX ns (turn k of main, OU[, comes before turn k of the other
	# thread, OB., which comes before turn k + 1 of main).
	turns() {
		rm -rf "$TMP/pp"
		env "$1" "$OVNI" record --no-kernel -o "$TMP/pp" -- "$TMP/pingpong" 50000 ${2:-} >/dev/null 2>&1 # its OU[ are the turns
		"$OVNI" dump "$TMP/pp" 2>/dev/null | awk '$2 == "OU[" { u[nu++] = $1 } $2 == "OB." { b[nb++] = $1 }
			END { for (k = 0; k < nu; k++) { d = u[k] - b[k]; if (d > 0) { n++; if (d > m) m = d }
				if (k + 1 < nu) { d = b[k] - u[k + 1]; if (d > 0) { n++; if (d > m) m = d } } }
				print (nu == 50000 && nb == 50000) ? n + 0 " " m + 0 : "missing " nu " " nb }'
	}
	same "clocks agree across threads (clock_gettime): 100000 turns in order" "$(turns OVNI_NO_TSC=1)" "0 0"
	# The scaled TSC agrees within tens of ns, but its read is not ordered:
	# it may be taken while the load that saw the other thread's turn waits
	# for the cache line, so a turn may come a cache miss (~100 ns) early,
	# more often on a loaded machine. A wrong rate or anchor would put most
	# turns out of order, by more.
	# across_turns WHAT [exec FILE]: the check of the scaled TSC.
	across_turns() {
		what=$1
		shift
		set -- $(turns OVNI_NO_TSC= "$*")
		if [ "$1" != missing ] && [ "$1" -le 10000 ] && [ "$2" -lt 500 ]; then
			ok "clocks agree across $what (scaled TSC): $1 of 100000 turns out of order, by $2 ns at most"
		else
			not_ok "clocks agree across $what (scaled TSC): $1 of 100000 turns out of order, by $2 ns at most"
		fi
	}
	across_turns threads
	# The exec'd side takes the TSC rate the first process measured (no
	# millisecond of its own): its clock must agree as closely.
	across_turns processes exec "$TMP/pp-turn"
	same "clocks agree across processes (clock_gettime): 100000 turns in order" "$(turns OVNI_NO_TSC=1 "exec $TMP/pp-turn")" "0 0"

	# --events: unselected models never reach the stream.
	$CC -o "$TMP/models" "$SRC/models.c" -I"$TMP/lib" -L"$TMP/lib" -lovni || not_ok "compile models.c"
	rec m-all "$TMP/models"
	same "--events default: every model recorded" "$(count VTx "$TMP/m-all") $(count OM= "$TMP/m-all")" "1 1"
	rec m-ovni --events ovni "$TMP/models"
	same "--events ovni: nosv events dropped, marks kept" "$(count VTx "$TMP/m-ovni") $(count OM= "$TMP/m-ovni")" "0 1"
	emu_ok "--events ovni: ovni emu accepts the trace" "$TMP/m-ovni"
	rm -rf "$TMP/m-env"
	OVNI_EVENTS=nosv "$OVNI" record -o "$TMP/m-env" -- "$TMP/models" >/dev/null 2>&1
	same "OVNI_EVENTS=nosv: nosv events recorded" "$(count VTx "$TMP/m-env")" 1
	rm -rf "$TMP/m-lib"
	(cd "$TMP" && OVNI_EVENTS=ovni OVNI_TRACEDIR="$TMP/m-lib" LD_LIBRARY_PATH="$TMP/lib" ./models)
	same "OVNI_EVENTS=ovni without the recorder: nosv events dropped" "$(count VTx "$TMP/m-lib") $(count OM= "$TMP/m-lib")" "0 1"
	check_fails "--events with an unknown model is refused" "no model 'bogus'" "$OVNI" record --events ovni,bogus -o "$TMP/m-bad" -- true
else
	not_ok "a program builds against ovni lib output"
fi

# --- --tmpdir: streams written there, moved at the end. ---
rec tmpd --tmpdir "$TMP/scratch" "$TMP/threads" 2
same "--tmpdir: exit status" "$rc" 0
emu_ok "--tmpdir: ovni emu accepts the final trace" "$TMP/tmpd"
same "--tmpdir: every stream moved to TRACEDIR" "$(find "$TMP/tmpd" -name stream.obs | wc -l | tr -d ' ')" 4
same "--tmpdir: nothing left in the tmpdir" "$(find "$TMP/scratch" -name 'stream.*' | wc -l | tr -d ' ')" 0
rec tmpx --tmpdir "$TMP/scratch3" "$TMP/procs" exec 2
emu_ok "--tmpdir with exec: ovni emu accepts the trace" "$TMP/tmpx"
same "--tmpdir with exec: the stream goes on across the images" "$(count OHx "$TMP/tmpx") $(count OHe "$TMP/tmpx")" "3 3"
rec tmpk --tmpdir "$TMP/scratch2" "$TMP/crash" kill
emu_ok "--tmpdir after SIGKILL: the streams are ended and moved" "$TMP/tmpk"

done_testing
