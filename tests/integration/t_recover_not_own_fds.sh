# A killed process's recovered exit record never carries the kernel's view
# of a connection of the process that recovers it.  Recovery reads the dead
# process's slots, whose fd numbers mean nothing in the recovering process;
# the record used to read TCP_INFO on the recoverer's own fd of the same
# number: the dead connection got the live one's `tcp` block, and (once
# final records took one reading) its bytes as bytes_out_unseen.
#  - sockmeter recover run by a process whose fd 3 is a TCP connection that
#    sent 5,000,000 bytes, for a python3 killed with its connection on fd 3
#    (1,000 bytes out);
#  - automatic recovery by the ticker of the next metered python3, whose own
#    connection (5,000,000 bytes out) is on that number.
# Either way: bytes_out 1000, no tcp block, no unseen bytes.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
RECOVER=$SM_BUILD/sockmeter-recover
[ -n "${SM_TEST_LIB:-}" ] && [ -x "$(dirname "$SM_TEST_LIB")/sockmeter-recover" ] &&
	RECOVER=$(dirname "$SM_TEST_LIB")/sockmeter-recover
mkdir -p "$T/logs"

cat >"$T/sink.py" <<'PYEOF'
import socket, sys, threading
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(16)
open(sys.argv[1], "w").write("%d\n" % l.getsockname()[1])
def take(c):
    while c.recv(1 << 20):
        pass
while True:
    c, _ = l.accept()
    threading.Thread(target=take, args=(c,), daemon=True).start()
PYEOF
bg_start "$PY" "$T/sink.py" "$T/port"
wait_for 10 test -s "$T/port" || fail "the sink did not start"
port=$(cat "$T/port")

# The victim: its connection on fd 3 (the first fd python3 opens), 1,000
# bytes out, then it waits to be killed.
cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"v" * 1000)
print("fd=%d" % s.fileno(), flush=True)
print("pid=%d" % os.getpid(), flush=True)
time.sleep(60)
PYEOF

victim() { # NAME: started, then killed; sets VFD
	SOCKMETER_LOG=$T/logs/$1.%p.log bg_start env LD_PRELOAD="$LIB" \
		"$PY" "$T/victim.py" "$port" >"$T/$1.out"
	wait_for 20 grep -q '^pid=' "$T/$1.out" || fail "$1 did not start"
	VFD=$(field fd "$T/$1.out")
	local vpid
	vpid=$(field pid "$T/$1.out")
	kill -KILL "$vpid"
	while kill -0 "$vpid" 2>/dev/null; do sleep 0.02; done
}

# A process with its own connection on fd VFD (5,000,000 bytes out): runs
# the rest of its command line as a program (exec, fd kept), or with
# "wait LOGGLOB" stays until an exit record is in a log matching it.
cat >"$T/holder.py" <<'PYEOF'
import glob, os, socket, sys, time
port, fd = int(sys.argv[1]), int(sys.argv[2])
keep = [open("/dev/null") for _ in range(fd + 1)]
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"w" * 5000000)
if s.fileno() != fd:
    os.dup2(s.fileno(), fd)
if sys.argv[3] == "wait":
    end = time.time() + 20
    while time.time() < end and not any(
            '"type":"exit"' in open(f).read() for f in glob.glob(sys.argv[4])):
        time.sleep(0.1)
else:
    os.execv(sys.argv[3], sys.argv[3:])
PYEOF

check_recovered() { # NAME
	local log
	log=$(one_log "$T/logs/$1.*.log")
	expect_eq "$1: end" "$(q "$log" "E['end']")" killed
	expect_eq "$1: the dead connection, [bytes_out, tcp block, unseen]" \
		"$(q "$log" "[[f['bytes_out'], 'tcp' in f, f.get('bytes_out_unseen', 0)] for f in E['fds'] if f['kind'] == 'tcp']")" \
		"[[1000, false, 0]]"
	expect_eq "$1: totals' unseen" "$(q "$log" "T.get('bytes_out_unseen', 0)")" 0
}

# sockmeter recover, its fd VFD a live connection
victim tool
plain "$PY" "$T/holder.py" "$port" "$VFD" "$RECOVER" -q "$T/state" \
	>"$T/tool.rec" 2>&1 || fail "recover: $(cat "$T/tool.rec")"
check_recovered tool

# automatic recovery by a metered process with that connection of its own
victim auto
# A directory is scanned at most once in 10 s, whoever scans it: a victim
# that lived a second before its kill (a loaded machine) scanned it, and
# the next process's scan would be skipped for a minute (t_state_recover).
rm -f "$T/state/.recover.lock"
SOCKMETER_LOG=$T/logs/next.%p.log sm "$PY" "$T/holder.py" "$port" "$VFD" \
	wait "$T/logs/auto.*.log" >"$T/next.out" 2>&1 || fail "next: $(cat "$T/next.out")"
check_recovered auto
