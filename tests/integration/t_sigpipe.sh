# SIGPIPE reaches the program unchanged (tests/progs/sigpipe): writing to
# a socket whose peer is gone, under each disposition - default action
# (the process dies of SIGPIPE at the first call, status 141), ignored,
# caught by a handler (one signal per call), blocked (left pending),
# MSG_NOSIGNAL (no signal) - and a non-blocking send() into a full socket
# (EAGAIN).  stdout (return values, errno, signals seen) and the exit
# status are identical with and without the preload, nothing is said on
# stderr, and where the program lives on its log counts the failed calls:
# EPIPE as "other", EAGAIN as "again", bytes exact.
# (t_errno.sh covers EPIPE with SIGPIPE ignored, EINTR and EAGAIN on recv.)
. "$(dirname "$0")/lib.sh"

need_prog sigpipe
for mode in default ignore handler blocked nosignal again; do
	plain "$PROGS/sigpipe" "$mode" >"$T/$mode.plain" 2>&1
	a=$?
	SOCKMETER_LOG=$T/$mode.log SOCKMETER_FORMAT=json \
		sm "$PROGS/sigpipe" "$mode" >"$T/$mode.out" 2>"$T/$mode.err"
	b=$?
	expect_eq "$mode: exit status with the preload" "$b" "$a"
	cmp -s "$T/$mode.plain" "$T/$mode.out" ||
		fail "$mode: stdout differs: $(diff "$T/$mode.plain" "$T/$mode.out" | head -n 4 | tr '\n' ' ')"
	[ -s "$T/$mode.err" ] && fail "$mode: stderr: $(head -n 2 "$T/$mode.err")"
done
expect_eq "default: killed by SIGPIPE" "$(cat "$T/default.out" | tail -n 1)" "before"
fd=$(field fd "$T/ignore.out")
for mode in ignore handler blocked; do
	expect_eq "$mode: fd $fd [calls_out, errors_out, bytes_out]" \
		"$(q "$T/$mode.log" "[[f['calls_out'], f['errors_out'], f['bytes_out']] for f in E['fds'] if f['fd'] == $fd]")" \
		'[[2, {"again": 0, "intr": 0, "other": 2}, 0]]'
done
grep -q '^signals=2 pending=0$' "$T/handler.out" || fail "handler: $(tail -n 1 "$T/handler.out")"
grep -q '^signals=0 pending=1$' "$T/blocked.out" || fail "blocked: $(tail -n 1 "$T/blocked.out")"
expect_eq "nosignal: fd $fd [calls_out, errors_out]" \
	"$(q "$T/nosignal.log" "[[f['calls_out'], f['errors_out']] for f in E['fds'] if f['fd'] == $fd]")" \
	'[[1, {"again": 0, "intr": 0, "other": 1}]]'
fitted=$(field fitted "$T/again.out")
expect_eq "again: fd $fd [bytes_out, errors_out]" \
	"$(q "$T/again.log" "[[f['bytes_out'], f['errors_out']] for f in E['fds'] if f['fd'] == $fd]")" \
	"[[$fitted, {\"again\": 1, \"intr\": 0, \"other\": 0}]]"
exit 0
