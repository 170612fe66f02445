# Built-in rotation at the smallest max_size (4 KiB, a few records a file)
# with three processes sharing the path: each process finds the file
# rotated away by another again and again.  Every close record of every
# process is in the set (PATH, PATH.1 ...), none dropped, no warning.
# Before: after 100 tries a batch was given up ("Resource temporarily
# unavailable"): up to half of a process's close records dropped, and in
# 4 runs of 5 hundreds more in no file and in no count.
. "$(dirname "$0")/lib.sh"

cat >"$T/churn.py" <<'PYEOF'
import socket, sys, time
for i in range(int(sys.argv[1])):
    a, b = socket.socketpair()
    a.send(b"x" * (i % 100 + 1))
    b.recv(1000)
    a.close(); b.close()
    time.sleep(0.001)
PYEOF
mkdir -p "$T/logs"
log=$T/logs/shared.log
pids=()
for i in 1 2 3; do
	SOCKMETER_LOG=$log SOCKMETER_FORMAT=json SOCKMETER_LOG_MAX_SIZE=4K \
		SOCKMETER_LOG_KEEP=1000 bg_start env LD_PRELOAD="$LIB" "$PY" "$T/churn.py" 1000 \
		>"$T/p$i.out" 2>"$T/p$i.err"
	pids+=("$BG_PID")
done
for p in "${pids[@]}"; do
	bg_wait "$p" 60 || fail "churn.py failed"
done
for i in 1 2 3; do
	expect_eq "p$i: warnings" "$(sm_lines "$T/p$i.err")" 0
done
export LOGDIR=$T/logs
"$PY" - <<'PYEOF' || fail "close records missing"
import collections, glob, json, os, re, sys
d = os.environ["LOGDIR"]
files = [f for f in glob.glob(os.path.join(d, "shared.log*"))
         if re.fullmatch(r".*/shared\.log(\.\d+)?", f)]
closes, exits = collections.Counter(), {}
for f in files:
    assert os.path.getsize(f) <= 4096 or sum(1 for _ in open(f)) == 1, f
    for ln in open(f):
        r = json.loads(ln)
        if r["type"] == "close":
            closes[r["pid"]] += len(r["fds"])
        elif r["type"] == "exit":
            exits[r["pid"]] = r["totals"]
assert len(exits) == 3, ("exit records", len(exits), len(files))
bad = []
for pid, t in exits.items():
    if t.get("close_records_dropped", 0) or closes[pid] != t["fds_closed"]:
        bad.append((pid, closes[pid], t["fds_closed"], t.get("close_records_dropped", 0)))
if bad:
    sys.exit("pid, close records, fds_closed, dropped: %s (%d files)" % (bad, len(files)))
PYEOF
exit 0
