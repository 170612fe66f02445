# A process killed after a batch of close records reached its log, before
# the write's return was seen (strace holds the writer 2 s at the
# rt_sigpending that follows its write, and the test kills the process
# then): the recovered exit record counts those records written, not
# dropped.  Before, they were in the log and in close_records_dropped
# both, and the log did not add up (a helper's stress-ng sweep: 495 of
# them, once in about 100 kills of a churning process; a kill in the
# write itself leaves the records before its tear, counted the same way).
# JSON and text.  The invariant: close records in the log plus
# close_records_dropped equal fds_closed.
. "$(dirname "$0")/lib.sh"
need strace

launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
export SOCKMETER_STATE=$T/state
mkdir -p "$T/state"
chmod 700 "$T/state"

cat >"$T/v.py" <<'PYEOF'
import os, socket, time
print("pid", os.getpid(), flush=True)
for i in range(300):
    a, b = socket.socketpair()
    a.send(b"x" * 10)
    b.recv(100)
    a.close()
    b.close()
time.sleep(60)
PYEOF

# closes FMT LOG: the close records LOG holds (whole lines).
closes() {
	if [ "$1" = json ]; then
		grep -c '^{"type":"close"' "$2" 2>/dev/null
	else
		grep -c ' sockmeter close pid=.* duration=' "$2" 2>/dev/null
	fi
}

for fmt in json text; do
	log=$T/$fmt.log
	SOCKMETER_FORMAT=$fmt SOCKMETER_LOG=$log bg_start timeout 60 strace -f -o /dev/null \
		-e inject=rt_sigpending:delay_enter=2000000 \
		env LD_PRELOAD="$LIB" "$PY" "$T/v.py" >"$T/$fmt.out" 2>"$T/$fmt.err"
	sbg=$BG_PID
	wait_for 20 grep -q '^pid' "$T/$fmt.out" || fail "$fmt: the program did not start"
	vpid=$(awk '/^pid/ { print $2 }' "$T/$fmt.out")
	# The first batch's write landed; its writer is held after it.
	wait_for 30 grep -qs -e '^{"type":"close"' -e ' sockmeter close pid=' "$log" ||
		fail "$fmt: no close record was written"
	kill -KILL "$vpid"
	wait "$sbg" 2>/dev/null
	landed=$(closes "$fmt" "$log")
	[ "$landed" -gt 0 ] || fail "$fmt: no close record landed before the kill: nothing was tested"
	"$launcher" recover "$T/state" 2>"$T/rec.$fmt" || fail "$fmt: recover: $(cat "$T/rec.$fmt")"
	out=$("$PY" - "$log" "$vpid" "$fmt" 2>&1 <<'PYEOF'
import json, re, sys
log, pid, fmt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
closes, ex = 0, []
for line in open(log):
    if fmt == "json":
        r = json.loads(line)
        if r["pid"] != pid:
            continue
        if r["type"] == "close":
            closes += len(r["fds"])
        elif r["type"] == "exit":
            ex.append((r["end"], r["totals"]["fds_closed"],
                       r["totals"].get("close_records_dropped", 0)))
    else:
        if " sockmeter close pid=%d " % pid in line:
            closes += 1
        m = re.search(r" sockmeter exit end=(\S+) .*pid=%d .*fds_closed=(\d+)" % pid, line)
        if m:
            ex.append([m.group(1), int(m.group(2)), 0])
        m = re.match(r"  totals: .*close_records_dropped=(\d+)", line)
        if m and ex:
            ex[-1][2] = int(m.group(1))
assert len(ex) == 1, "%d exit records" % len(ex)
end, closed, dropped = ex[0]
assert end == "killed", end
assert closed == 600, ("fds_closed", closed)
assert closes + dropped == closed, ("close records", closes, "dropped", dropped, "fds_closed", closed)
assert dropped == 0, ("dropped", dropped)
print(fmt, "close records", closes, "dropped", dropped, "fds_closed", closed)
PYEOF
) || fail "$fmt: $(printf '%s\n' "$out" | tail -n 1)"
	echo "$out (landed before the kill: $landed)"
done
exit 0
