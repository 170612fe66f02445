# Two threads make the first data call on the same fresh fd at once
# (tests/progs/firsttouch; libuv's threads do so with their eventfds, in
# named): the fd is classified by whichever gets there, and the other
# must not count into the slot meanwhile.  The bytes of an eventfd (not
# metered) once showed in named's totals as strays of no connection (8
# or 16 bytes in 2 of 3 runs); now the totals are exactly the sockets'
# bytes, in every round.
. "$(dirname "$0")/lib.sh"

need_prog firsttouch
for run in 1 2 3; do
	SOCKMETER_LOG=$T/f$run.log SOCKMETER_FORMAT=json \
		sm "$PROGS/firsttouch" 4000 >"$T/f$run.out" 2>"$T/f$run.err" ||
		fail "firsttouch failed: $(tail -n 3 "$T/f$run.err")"
	sent=$(field sock_out "$T/f$run.out")
	expect_eq "run $run: bytes out, totals" "$(q "$T/f$run.log" "T['bytes_out']")" "$sent"
	expect_eq "run $run: bytes out, connections" \
		"$(q "$T/f$run.log" "sum(c['bytes_out'] for c in conns())")" "$sent"
done
exit 0
