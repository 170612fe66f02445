# Two state files whose numbers exist nowhere else are kept for recovery,
# never removed unwritten:
#  - exec with a log that cannot be written: python3 moves 1,234 bytes
#    through a socketpair, its log's directory missing, then execs true.
#    The exec record fails like the rest; the file stays (before: marked
#    final and removed, numbers gone), and once the directory exists,
#    sockmeter recover writes them;
#  - a process that logged to stderr, killed: the ticker of the next
#    metered process (automatic recovery) has no stderr of the dead one to
#    print on and parks the file for a recover run by hand (before:
#    removed, nothing written);
#    sockmeter recover, run by hand, prints the records on its own stderr.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
RECOVER=$SM_BUILD/sockmeter-recover
[ -n "${SM_TEST_LIB:-}" ] && [ -x "$(dirname "$SM_TEST_LIB")/sockmeter-recover" ] &&
	RECOVER=$(dirname "$SM_TEST_LIB")/sockmeter-recover

# --- exec, the log unwritable ---------------------------------------------
SOCKMETER_LOG=$T/nodir/%n.%p.log sm "$PY" -c '
import os, socket
a, b = socket.socketpair()
a.sendall(b"x" * 1234)
n = 0
while n < 1234:
    n += len(b.recv(4096))
a.close(); b.close()
print("pid=%d" % os.getpid(), flush=True)
os.execv("/bin/true", ["true"])' >"$T/exec.out" 2>"$T/exec.err" || fail "python3 failed: $(cat "$T/exec.err")"
grep -q "cannot" "$T/exec.err" || fail "no word about the log: $(cat "$T/exec.err")"
pid=$(field pid "$T/exec.out")
ls "$T/state" | grep -q "^$pid-" || fail "the state file of pid $pid is gone: $(ls "$T/state")"
mkdir "$T/nodir"
"$RECOVER" "$T/state" >"$T/rec1.out" 2>&1 || fail "recover: $(cat "$T/rec1.out")"
log=$(one_log "$T/nodir/python3.$pid.log")
expect_eq "exec, unwritten: recovered totals [out, in, closed]" \
	"$(q "$log" "[T['bytes_out'], T['bytes_in'], T['fds_closed']]")" "[1234, 1234, 2]"

# --- killed, its log stderr ------------------------------------------------
SOCKMETER_LOG=stderr bg_start env LD_PRELOAD="$LIB" "$PY" -c '
import os, socket, time
a, b = socket.socketpair()
a.sendall(b"y" * 4321)
n = 0
while n < 4321:
    n += len(b.recv(8192))
print("pid=%d" % os.getpid(), flush=True)
time.sleep(60)' >"$T/dead.out" 2>"$T/dead.err"
wait_for 20 grep -q '^pid=' "$T/dead.out" || fail "the victim did not start"
vpid=$(field pid "$T/dead.out")
kill -KILL "$vpid"
while kill -0 "$vpid" 2>/dev/null; do sleep 0.02; done
ls "$T/state" | grep -q "^$vpid-" || fail "no state file of the killed process"
# A directory is scanned at most once in 10 s, whoever scans it: the
# victim, if it lived a second before its kill (a loaded machine),
# scanned it already, and the next process's scan would be skipped.
rm -f "$T/state/.recover.lock"
# A metered process that lives until its ticker's recovery scan is over
# (it writes its own exit record after): 3 s.
SOCKMETER_LOG=$T/next.%p.log sm "$PY" -c '
import socket, time
a, b = socket.socketpair()
a.sendall(b"z" * 5)
time.sleep(3)' >"$T/next.out" 2>&1 || fail "next: $(cat "$T/next.out")"
# Parked where the automatic scans pass over it (left in place, such
# files filled a scan's quota and hid the ones it could recover).
ls "$T/state" | grep -q "^$vpid-.*\.unwritten$" ||
	fail "the automatic recovery did not park the stderr-logging process's state file: $(ls "$T/state")"
"$RECOVER" "$T/state" >"$T/rec2.out" 2>"$T/rec2.err" || fail "recover: $(cat "$T/rec2.err")"
expect_eq "killed, stderr: recovered on recover's stderr [out, in, end]" \
	"$("$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        if r["type"] == "exit" and r["pid"] == int(sys.argv[2]):
            print([r["totals"]["bytes_out"], r["totals"]["bytes_in"], r["end"]])' \
		"$T/rec2.err" "$vpid")" "[4321, 4321, 'killed']"
