# Killed while its close queue is full: a program of 16 threads closing
# socketpairs back to back (tests/progs/fullring) keeps the queue full, so
# each close's record is dropped and its numbers go to the dropped totals.
# They used to go there through the closing thread's stack, and a kill on
# the way lost part of a connection (6 of 150 kills of this program); they
# now go through a spill of the state file (docs/state.md, "A close into a
# full ring").  Each round kills it at a random moment, recovers it, and
# checks its recovered totals against the bounds the program's own
# progress file gives at every instruction (the connection in progress
# counted or not).  check_state's kill loop is the sensitive test of the
# window (22 of 100 kills lost there before); this one runs the preload in
# a real threaded program and fails on any loss or double count.
. "$(dirname "$0")/lib.sh"

need_prog fullring
[ -x "$SM_TOP/build/sockmeter-recover" ] || fail "missing build/sockmeter-recover"
rounds=${SM_FULL_RING_ROUNDS:-8}
full=0
for i in $(seq 1 "$rounds"); do
	sd=$T/st$i ld=$T/log$i
	mkdir -m 700 "$sd" "$ld"
	SOCKMETER_STATE=$sd SOCKMETER_LOG=$ld/%p.log SOCKMETER_FORMAT=json \
		LD_PRELOAD="$LIB" "$PROGS/fullring" "$T/cnt$i" 16 2>"$T/err$i" &
	pid=$!
	# Running (its count file written, the library started), then a
	# random moment of its churn.
	wait_for 10 "$PY" -c "import sys, struct; raw = open(sys.argv[1], 'rb').read(); sys.exit(not raw or not struct.unpack_from('=Q', raw)[0])" "$T/cnt$i" ||
		fail "round $i: fullring made no progress: $(cat "$T/err$i")"
	sleep "0.$((3 + RANDOM % 6))"
	kill -KILL "$pid" 2>/dev/null || fail "round $i: fullring ended by itself: $(cat "$T/err$i")"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 137 ] || fail "round $i: fullring ended with $rc: $(cat "$T/err$i")"
	"$SM_TOP/build/sockmeter-recover" "$sd" >/dev/null 2>"$T/rec$i" ||
		fail "round $i: recover: $(cat "$T/rec$i")"
	log=$(ls "$ld"/*.log "$sd"/*.recovered.log 2>/dev/null | head -1)
	[ -n "$log" ] || fail "round $i: no log after the recovery ($(cat "$T/rec$i"))"
	# Its exit record's totals (a kill in the middle of a batch's write
	# leaves a torn line, a line of its own that is no record:
	# docs/log.md, so the lines are read one by one).
	got=$("$PY" - "$log" <<'PYEOF'
import json, sys
t = None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith('{"type":"exit"'):
        try:
            t = json.loads(line)["totals"]
        except ValueError:
            pass
if t is None:
    sys.exit("no exit record")
print(t["bytes_out"], t["bytes_in"], t.get("close_records_dropped", 0))
PYEOF
) || fail "round $i: $log: no exit record"
	# shellcheck disable=SC2086
	set -- $got
	bounds=$("$PY" - "$T/cnt$i" <<'PYEOF'
import struct, sys
raw = open(sys.argv[1], "rb").read()
lo_out = hi_out = lo_in = hi_in = 0
for t in range(16):
    done_lo, phase, n, done_hi = struct.unpack_from("=4Q", raw, 64 * t)
    lo_out += done_lo + (n if phase >= 2 else 0)
    hi_out += done_hi + (n if phase >= 1 else 0)
    lo_in += done_lo + (n if phase >= 3 else 0)
    hi_in += done_hi + (n if phase >= 2 else 0)
print(lo_out, hi_out, lo_in, hi_in)
PYEOF
)
	# shellcheck disable=SC2086
	set -- $got $bounds
	[ "$4" -le "$1" ] && [ "$1" -le "$5" ] ||
		fail "round $i: bytes_out $1 recovered, the program moved between $4 and $5"
	[ "$6" -le "$2" ] && [ "$2" -le "$7" ] ||
		fail "round $i: bytes_in $2 recovered, the program moved between $6 and $7"
	[ "$3" -gt 0 ] && full=$((full + 1))
done
# The queue must have been full (records dropped) for the spills to be
# tried at all.
[ "$full" -ge $((rounds / 2)) ] ||
	fail "the close queue was full in only $full of $rounds rounds"
echo "ok: $rounds kills, the queue full in $full, every total within the program's bounds"
