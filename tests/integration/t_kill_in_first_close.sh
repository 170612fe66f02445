# A process killed during its first close: its connection is in its
# recovered records.  A ring's chunk is backed by the file at its first
# use (system calls: MADV_POPULATE_WRITE, a move, MADV_DOFORK); that used
# to happen between the retire of the closing fd's slot and the push of
# its record, so a fatal signal there (SIGKILL, or one held back during
# the backing and delivered at its end, as ssh's SIGHUP to its
# ProxyCommand `nc` was, one session in ten) left the connection in
# neither place: "it had no connection", 3 MB gone without a word.
#
# python3 sends 100,000 bytes over TCP and closes; strace kills it at its
# Nth madvise, for every N up to the run that ends by itself.  Each run
# whose receiver got every byte (the kill landed after the sends, so in
# the close or after it) must have bytes_out = 100000 in its records,
# recovered by `sockmeter-recover`; and at least one run must have been
# killed there, so that the window was tried (before the fix, 2 of them
# lost the connection).
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || skip "strace is not installed (scripts/install-deps)"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json

cat >"$T/recv.py" <<'PYEOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
print("port", s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    n = 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        n += len(b)
    c.close()
    with open(sys.argv[1], "a") as f:
        f.write("%d\n" % n)
PYEOF
bg_start "$PY" "$T/recv.py" "$T/got" >"$T/recv.out"
wait_for 10 grep -q '^port' "$T/recv.out" || fail "the receiver did not start"
port=$(awk '/^port/ { print $2 }' "$T/recv.out")

in_close=0 n=0 rc=137
while [ "$rc" = 137 ]; do
	n=$((n + 1))
	[ "$n" -le 200 ] || fail "still killed at madvise 200"
	rm -rf "$T/state" "$T/logs"
	mkdir -m 700 "$T/state"
	mkdir "$T/logs"
	: >"$T/got"
	rc=0
	SOCKMETER_LOG=$T/logs/%p.log strace -f -qq -o "$T/trace" -e trace=madvise,connect \
		-e inject=madvise:signal=SIGKILL:when=$n \
		env LD_PRELOAD="$LIB" "$PY" -c "
import socket
s = socket.create_connection(('127.0.0.1', $port))
s.sendall(b'x' * 100000)
s.close()" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 137 ] || fail "run $n ended with $rc: $(cat "$T/err")"
	# Killed before it connected: nothing to count.
	grep -q "connect(.*htons($port)" "$T/trace" || continue
	wait_for 10 test -s "$T/got" || fail "run $n: the receiver saw no connection end"
	got=$(cat "$T/got")
	[ "$rc" = 137 ] && [ "$got" = 100000 ] || continue
	in_close=$((in_close + 1))
	"$SM_TOP/build/sockmeter-recover" "$T/state" >/dev/null 2>"$T/rec" ||
		fail "run $n: recover: $(cat "$T/rec")"
	ls "$T/logs"/*.log >/dev/null 2>&1 ||
		fail "run $n (killed in or after its close): no record at all ($(cat "$T/rec"))"
	# The exit record's totals hold every connection, its close record
	# written or not (one the ticker had taken and not yet written when
	# the kill landed is counted in close_records_dropped); a close
	# record, when there is one, holds the same bytes.
	expect_eq "run $n (killed at madvise $n, after its sends): the totals' bytes_out" \
		"$(q "$T/logs/*.log" "tot('bytes_out')")" 100000
	expect_eq "run $n: the connection's records" \
		"$(q "$T/logs/*.log" "[f['bytes_out'] for f in conns(kind='tcp')] in ([], [100000])")" true
done
[ "$in_close" -ge 1 ] || fail "no run was killed after its sends: the close was not tried"
echo "ok: $in_close runs killed after the sends, every one's 100000 bytes recovered ($n runs)"
