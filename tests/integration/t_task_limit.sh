# A process with no task to spare (RLIMIT_NPROC: a user's processes and
# threads) cannot have the ticker: the library says so once on stderr,
# the program sees exactly what it sees without the preload (its own
# thread and fork fail as they would), and the exit record, written by
# the exiting thread, has every byte.  A user of its own (uid 54321, no
# other task) makes the count exact: a limit of 1 leaves room for the
# process alone.  README, Limits: "The ticker is a task".
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root, to run as a user of its own"
need setpriv
need prlimit
# The system's python3: the user of its own may not read a private one.
SYSPY=/usr/bin/python3
[ -x "$SYSPY" ] || skip "no /usr/bin/python3"
cat >"$T/probe.py" <<'PYEOF'
import os, socket, threading
a, b = socket.socketpair()
a.sendall(b"x" * 60000)
got = 0
while got < 60000:
    got += len(b.recv(65536))
b.sendall(b"y" * 4321)
back = 0
while back < 4321:
    back += len(a.recv(65536))
try:
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    print("thread ok")
except RuntimeError as e:
    print("thread failed:", e)
try:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    print("fork ok")
except OSError as e:
    print("fork failed:", e.errno)
a.close()
b.close()
print("done", got, back)
PYEOF
# Nothing else may run as that user (a leftover of a killed earlier run).
pkill -KILL -u 54321 2>/dev/null || true
chmod 755 "$T"
chmod 644 "$T/probe.py"
mkdir -m 1777 "$T/logs"
# run OUT ENV... : the probe as uid 54321 with room for one task.
run() {
	local out=$1
	shift
	(cd "$T" && timeout 30 setpriv --reuid 54321 --regid 54321 --clear-groups \
		env "$@" prlimit --nproc=1 "$SYSPY" "$T/probe.py" >"$T/$out" 2>"$T/$out.err")
}
run plain.out A=1 || fail "the probe failed without the preload: $(cat "$T/plain.out.err")"
grep -q "^done 60000 4321$" "$T/plain.out" || fail "probe: $(cat "$T/plain.out")"
grep -qx "fork failed: 11" "$T/plain.out" ||
	skip "RLIMIT_NPROC does not bind uid 54321 here: $(cat "$T/plain.out")"
run pre.out LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/logs/%n.%p.log" SOCKMETER_FORMAT=json ||
	fail "the probe failed under the preload: $(cat "$T/pre.out.err")"
cmp -s "$T/plain.out" "$T/pre.out" ||
	fail "the program saw another outcome: $(diff "$T/plain.out" "$T/pre.out")"
expect_eq "warnings" "$(grep -c '^sockmeter' "$T/pre.out.err")" 1
grep -q "cannot start the ticker thread" "$T/pre.out.err" ||
	fail "no word of the ticker: $(cat "$T/pre.out.err")"
log=$(one_log "$T/logs/python3.*.log")
expect_eq "bytes in" "$(q "$log" "tot('bytes_in')")" $((60000 + 4321))
expect_eq "bytes out" "$(q "$log" "tot('bytes_out')")" $((60000 + 4321))
expect_eq "close records" "$(q "$log" "len(CL)")" 2
exit 0
