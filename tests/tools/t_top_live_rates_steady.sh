# sockmeter top's rates between a live process's records: it reads the
# process's state file (its counters now) between the log's interval
# records, and the two interleave, sometimes a few hundredths of a second
# apart.  A rate made over such a gap is noise: a helper's wget, limited
# to a steady 2.0M/s, read 65.1M/s and 0B/s in turn.  Here pace.py sends
# 3,000,000 bytes at 1,000,000 B/s in 250,000-byte writes (4 a second:
# bursty at small time scales, steady over half a second) with interval
# records every 0.5 s, and top -b refreshes every 0.2 s: every rate it
# shows for the connection until the exit is within 0.4 to 1.9 times the
# pace, and the process's under twice the pace (0B/s and 2.2M/s before).
. "$(dirname "$0")/lib.sh"
need socat
mkdir -p "$T/logs" "$T/state"
export SOCKMETER_STATE=$T/state
port=$(free_port)
log=$T/logs/python3.log
bg_start timeout 30 "$TOPCMD" -b -d 0.2 "$log" >"$T/top.out" 2>&1
top_pid=$BG_PID
bg_start socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" OPEN:/dev/null
wait_listen "$port" "$BG_PID" || fail "socat did not listen on $port"
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.5 SOCKMETER_LOG=$log \
	sm "$PY" "$HERE/pace.py" 127.0.0.1 "$port" 3000000 1000000 250000 >/dev/null ||
	fail "pace.py failed"
wait_for 10 eval '! kill -0 $top_pid 2>/dev/null' || fail "top did not stop after the exit record"
wait "$top_pid" || fail "top: exit status $?"
"$PY" - "$T/top.out" "$port" <<'EOF' || fail "rates: $(grep -E '^python3' "$T/top.out" | head -n 60)"
import re, sys
UNIT = {"B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
def rate(s):
    m = re.fullmatch(r"([0-9.]+)([BKMG])/s", s)
    return float(m.group(1)) * UNIT[m.group(2)] if m else None
port = sys.argv[2]
conn, proc = [], []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 8 or f[0] != "python3":
        continue
    if f[3] == "tcp" and f[4] == "127.0.0.1:" + port:
        if "exited" in f or "closed" in f:
            continue
        r = rate(f[6])          # OUT/s of the connection row
        if r is not None:
            conn.append(r)
    elif f[-1] != "exited" and rate(f[3]) is not None:
        proc.append(rate(f[3])) # OUT/s of the process row
assert len(conn) >= 5 and len(proc) >= 5, (conn, proc)
# From the connection's first rate to the exit: near the pace, every one.
bad = [r for r in conn if not 0.4e6 <= r <= 1.9e6]
assert not bad, "connection rates far from the pace: %s" % conn
bad = [r for r in proc if r > 2e6]
assert not bad, "process rates over twice the pace: %s" % proc
EOF
exit 0
