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
expect_eq "closes (datagram + stream connections)" \
	"$(q "$T/c.log" "tot('fds_closed')")" "$((dgram + stream))"
expect_eq "bytes out" "$(q "$T/c.log" "tot('bytes_out')")" "$bytes"
exit 0
