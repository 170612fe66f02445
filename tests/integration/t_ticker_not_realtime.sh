# The ticker leaves a real-time policy it inherited: a program run under
# `chrt -f` (or `chrt -r`) keeps its real-time class, the preload's thread
# (named sockmeter) runs in the ordinary one, so that a batch of records
# never preempts the program's ordinary threads (preload.c:
# ticker_not_realtime).  Read from /proc: field 41 of a thread's stat is
# its policy (0 other, 1 fifo, 2 rr), field 40 its real-time priority.
. "$(dirname "$0")/lib.sh"
need chrt
chrt -f 10 true 2>/dev/null || skip "SCHED_FIFO not allowed here"
cat >"$T/probe.py" <<'PYEOF'
import os, socket, sys, time
a, b = socket.socketpair()
a.send(b"x" * 100)
b.recv(100)
deadline = time.time() + 10
ticker = None
while ticker is None and time.time() < deadline:
    for tid in os.listdir("/proc/self/task"):
        with open("/proc/self/task/%s/comm" % tid) as f:
            if f.read().strip() == "sockmeter":
                ticker = tid
    time.sleep(0.05)


def sched(tid):
    with open("/proc/self/task/%s/stat" % tid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): field N is fields[N - 3]
    return int(fields[41 - 3]), int(fields[40 - 3])


print("main", *sched(os.getpid()))
print("ticker", *(sched(ticker) if ticker else ("none", "none")))
PYEOF
for pol in -f -r; do
	SOCKMETER_LOG=$T/rt.%p.log sm chrt "$pol" 10 "$PY" "$T/probe.py" >"$T/out$pol" ||
		fail "chrt $pol: the program failed: $(cat "$T/out$pol")"
	want=1
	[ "$pol" = -r ] && want=2
	grep -qx "main $want 10" "$T/out$pol" ||
		fail "chrt $pol: the program's own class changed: $(cat "$T/out$pol")"
	grep -qx 'ticker 0 0' "$T/out$pol" ||
		fail "chrt $pol: the ticker is not in the ordinary class: $(cat "$T/out$pol")"
done
# Without chrt the ticker is left as it was.
SOCKMETER_LOG=$T/plain.%p.log sm "$PY" "$T/probe.py" >"$T/out" || fail "plain run failed"
grep -qx 'ticker 0 0' "$T/out" || fail "plain run: $(cat "$T/out")"
exit 0
