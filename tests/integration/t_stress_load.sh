# Load (issue 4): 8 sender threads x 64 connections each (half unix
# socketpairs, half TCP over 127.0.0.1) make 1,000,000 data calls in
# total (125,000 per thread) of mixed sizes (1 byte to 64 KiB, about 4 GB)
# through write/send/sendto/writev/sendmsg, while 8 receiver threads drain
# the other ends with read/recv/recvfrom/readv/recvmsg and count what
# they got (tests/progs/stress).  Interval records are written every 0.5 s
# meanwhile.  The exit record (top = 0: every open fd) must hold, for each
# of the 1024 fds, exactly the bytes and calls the program counted, and
# the totals must be their sums: nothing lost, nothing counted twice.
# About 5 s on 2 cores.  STRESS_CALLS=N overrides the number of calls.
. "$(dirname "$0")/lib.sh"

need_prog stress
calls=${STRESS_CALLS:-1000000}
SOCKMETER_LOG=$T/s.log SOCKMETER_FORMAT=json SOCKMETER_TOP=0 \
	SOCKMETER_INTERVAL=0.5 \
	sm "$PROGS/stress" 8 64 "$calls" 7 >"$T/out" 2>"$T/err" ||
	fail "stress failed: $(tail -n 3 "$T/err")"
[ -s "$T/err" ] && fail "stderr not empty: $(head -n 3 "$T/err")"
grep -q "total_out_calls=$calls " "$T/out" || fail "stress did not make $calls calls"
# The comparison (tests/stress/check_stress.py) is shared with the
# sanitizer runs (tests/stress/run.sh).
"$PY" "$HERE/../stress/check_stress.py" "$T/out" "$T/s.log" >"$T/check.out" 2>&1 ||
	fail "$(tail -n 1 "$T/check.out")"
check "$T/s.log" "len(IV) > 0" "no interval record in a run of several seconds"
exit 0
