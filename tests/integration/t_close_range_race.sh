# close_range() retires its fds before the real call, as close() does
# (tests/progs/closerace): one thread opens a unix datagram socket and
# close_range()s it, another opens socketpairs on the numbers just freed.
# Retiring after the real call retired the other thread's new connection
# (its next send then counted as a second, "inherited" connection): every
# connection must have exactly one close record, with its own bytes.
. "$(dirname "$0")/lib.sh"

need_prog closerace
SOCKMETER_LOG=$T/c.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/closerace" 100000 >"$T/out" 2>"$T/err" ||
	fail "closerace failed: $(tail -n 3 "$T/err")"
dgram=$(field dgram "$T/out")
stream=$(field stream "$T/out")
bytes=$(field bytes "$T/out")
# fds_closed counts every close, recorded or dropped from a full queue.
# One read of the log (300,000 close records, about 110 MB: twice took
# over the test's minute on a loaded machine).
read -r closed out < <(q "$T/c.log" "'%d %d' % (tot('fds_closed'), tot('bytes_out'))" | tr -d '"')
expect_eq "closes (datagram + stream connections)" "$closed" "$((dgram + stream))"
expect_eq "bytes out" "$out" "$bytes"
exit 0
