# ovni sync across network namespaces joined by veth pairs, as if each rank
# ran on its own node: rank 0 in one namespace, rank 1 on a direct link,
# rank 2 one link away through rank 0's namespace, and (when time
# namespaces work) rank 2 with a CLOCK_MONOTONIC really shifted by 3 s.
# Needs root and ip(8); skipped with a message otherwise.
. "$(dirname "$0")/lib.sh"
TCP_SEND=$BUILD/tools/tcp_send

skip() {
	echo "# skip: $*"
	exit 0
}

[ "$(id -u)" = 0 ] || skip "not root: cannot create network namespaces"
command -v ip >/dev/null 2>&1 || skip "no ip command"
P=ovs$$
NS0=${P}a NS1=${P}b NS2=${P}c
cleanup() {
	for n in $NS0 $NS1 $NS2; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
ip netns add $NS0 2>/dev/null && ip netns add $NS1 && ip netns add $NS2 ||
	skip "cannot create network namespaces"
ip link add ${P}x0 netns $NS0 type veth peer name ${P}x1 netns $NS1 2>/dev/null &&
	ip link add ${P}y0 netns $NS0 type veth peer name ${P}y2 netns $NS2 2>/dev/null ||
	skip "cannot create veth pairs"
setup() {
	ip -n $NS0 addr add 10.211.1.1/24 dev ${P}x0 &&
		ip -n $NS0 addr add 10.211.2.1/24 dev ${P}y0 &&
		ip -n $NS1 addr add 10.211.1.2/24 dev ${P}x1 &&
		ip -n $NS2 addr add 10.211.2.2/24 dev ${P}y2 &&
		for n in $NS0 $NS1 $NS2; do ip -n $n link set lo up || return 1; done &&
		ip -n $NS0 link set ${P}x0 up && ip -n $NS0 link set ${P}y0 up &&
		ip -n $NS1 link set ${P}x1 up && ip -n $NS2 link set ${P}y2 up &&
		ip -n $NS2 route add 10.211.1.0/24 via 10.211.2.1
}
setup || skip "cannot configure the veth links"

# Real clock skew when time namespaces work, else only the test knob.
TIMENS=
if unshare --time --fork --monotonic 3 true 2>/dev/null; then
	TIMENS="unshare --time --fork --monotonic 3"
else
	echo "# no time namespaces here: rank 2 gets only the test-only skew"
fi

# N NAME NS SKEW CMD...: CMD in namespace NS with a clock skew of SKEW ns,
# in the background; stdout, stderr and exit status in $TMP/NAME.*.
N() {
	n=$1 ns=$2 skew=$3
	shift 3
	(ip netns exec "$ns" env OVNI_SYNC_TEST_SKEW_NS="$skew" timeout 120 "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
		echo $? >"$TMP/$n.rc") &
}

check_offset() {
	row=$(awk -v r="$2" 'NR > 1 && $1 == r' "$1")
	if [ -z "$row" ]; then not_ok "rank $2 has a row"; return; fi
	set -- $row "$3"
	err=$(($3 - $6))
	echo "# rank $1 ($2): offset $3, expected $6, error $err ns, std $5 ns"
	if [ "$err" -le 5000 ] && [ "$err" -ge -5000 ]; then ok "rank $1 across the veth link: offset within 5 us"
	else not_ok "rank $1 across the veth link: offset within 5 us (error $err ns)"; fi
}

wait_file() {
	i=0
	while [ ! -f "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -f "$1" ]
}

# Three "nodes"; a stranger on rank 1's link sends garbage first.
D=$TMP/trace
N r0 $NS0 0 "$OVNI" sync --bind 10.211.1.1 --rank 0 --size 3 --hostname nodea --timeout 20 "$D"
wait_file "$D/.ovni-sync" || not_ok "rank 0 publishes the rendezvous file"
port=$(sed -n 's/^port //p' "$D/.ovni-sync")
check "the rendezvous file names the --bind address" grep -qx "host 10.211.1.1" "$D/.ovni-sync"
echo "hello there, what is this port" | ip netns exec $NS1 "$TCP_SEND" 10.211.1.1 "$port" >/dev/null
N r1 $NS1 2000000000 "$OVNI" sync --rank 1 --size 3 --hostname nodeb --timeout 20 "$D"
if [ -n "$TIMENS" ]; then
	N r2 $NS2 -1000000 $TIMENS "$OVNI" sync --rank 2 --size 3 --hostname nodec --timeout 20 "$D"
	want2=-2999000000
else
	N r2 $NS2 -1000000 "$OVNI" sync --rank 2 --size 3 --hostname nodec --timeout 20 "$D"
	want2=1000000
fi
wait
for r in 0 1 2; do check_rc "rank $r in its own network namespace succeeds" r$r 0; done
check_err "garbage from another namespace is dropped naming its address" r0 \
	'^ovni sync: error: connection from 10\.211\.1\.2:[0-9]+: not an ovni sync hello'
F=$D/clock-offsets.txt
check_offset "$F" 1 -2000000000
check_offset "$F" 2 $want2
check "rendezvous file removed" test ! -e "$D/.ovni-sync"
sed -n 's/^ovni sync: \([0-9]* ranks.*\); wrote.*/# \1/p' "$TMP/r0.err"

# Rank 0 publishes an address the other namespace cannot reach: both give
# up within the timeout, each saying why.
D=$TMP/unreachable
start=$(date +%s)
N u0 $NS0 0 "$OVNI" sync --rank 0 --size 2 --hostname nodea --timeout 1 "$D"
N u1 $NS1 0 "$OVNI" sync --rank 1 --size 2 --hostname nodeb --timeout 1 "$D"
wait
check_rc "unreachable rank 0: rank 1 fails" u1 1
check_err "saying it had no contact with rank 0" u1 '^ovni sync: error: rank 1: no contact with rank 0 within 1 s: '
check_rc "and rank 0 fails" u0 1
check_err "naming rank 1 as missing" u0 '^ovni sync: error: rank 1 of 2 never arrived within 1 s'
check "in bounded time" test $(($(date +%s) - start)) -le 6

# A rendezvous file pointing at a host that does not answer at all: the
# connect attempt is bounded too.
D=$TMP/blackhole
mkdir -p "$D"
printf 'ovni-sync 1\nhost 10.211.1.99\nport 5000\nsize 2\ntoken %064d\n' 0 >"$D/.ovni-sync"
start=$(date +%s)
N b1 $NS1 0 "$OVNI" sync --rank 1 --size 2 --hostname nodeb --timeout 1 "$D"
wait
check_rc "silent host: rank 1 fails" b1 1
check_err "saying it could not connect" b1 'no contact with rank 0 within 1 s: cannot connect to 10\.211\.1\.99 port 5000'
check "in bounded time" test $(($(date +%s) - start)) -le 6
done_testing
