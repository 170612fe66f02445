# Return values and errno reach the program untouched
# (tests/progs/errno_check: EAGAIN, EINTR, EPIPE, EBADF, ENOENT, errno kept
# on success, also on the first call on an fd the preload never saw made),
# the same with and without the preload; and the log counts the failed
# calls by class on the right fds, with bytes exact.
. "$(dirname "$0")/lib.sh"

need_prog errno_check
plain "$PROGS/errno_check" >"$T/plain.out" 2>&1 ||
	fail "errno_check fails even without the preload: $(grep FAIL "$T/plain.out" | head -n 3)"
SOCKMETER_LOG=$T/e.log SOCKMETER_FORMAT=json \
	sm "$PROGS/errno_check" >"$T/out" 2>"$T/err" ||
	fail "under the preload: $(grep FAIL "$T/out" | head -n 3 | tr '\n' ' ')$(cat "$T/err")"
cmp -s "$T/out" "$T/plain.out" ||
	fail "output differs with the preload: $(diff "$T/plain.out" "$T/out" | head -n 4 | tr '\n' ' ')"
log=$T/e.log
again=$(field again_fd "$T/out")
intr=$(field intr_fd "$T/out")
pipe=$(field pipe_fd "$T/out")
okfd=$(field ok_fd "$T/out")
okb=$(field ok_bytes "$T/out")

c="closes(fd=$again)[0]"
expect_eq "fd $again errors_in (2 x EAGAIN)" "$(q "$log" "${c}['errors_in']")" \
	'{"again": 2, "intr": 0, "other": 0}'
expect_eq "fd $again calls_in (2 failed, 1 ok)" "$(q "$log" "${c}['calls_in']")" 3
expect_eq "fd $again bytes_in" "$(q "$log" "${c}['bytes_in']")" "$okb"
expect_eq "fd $okfd bytes_out" "$(q "$log" "closes(fd=$okfd)[0]['bytes_out']")" "$okb"
expect_eq "fd $intr errors_in (1 x EINTR)" "$(q "$log" "closes(fd=$intr)[0]['errors_in']")" \
	'{"again": 0, "intr": 1, "other": 0}'
expect_eq "fd $intr bytes_in" "$(q "$log" "closes(fd=$intr)[0]['bytes_in']")" 0
expect_eq "fd $pipe errors_out (2 x EPIPE)" "$(q "$log" "closes(fd=$pipe)[0]['errors_out']")" \
	'{"again": 0, "intr": 0, "other": 2}'
expect_eq "fd $pipe calls_out" "$(q "$log" "closes(fd=$pipe)[0]['calls_out']")" 2
expect_eq "fd $pipe bytes_out" "$(q "$log" "closes(fd=$pipe)[0]['bytes_out']")" 0
rawb=$(field raw_bytes "$T/out")
# (Those fd numbers served earlier sockets too: the raw pair's are the last
# close records of each.)
# libc's syscall() is interposed: the pair is seen opening (opened set).
expect_eq "fd made by syscall(): [kind, opened?, bytes_out]" \
	"$(q "$log" "[[f['kind'], f['opened'] is not None, f['bytes_out']] for f in closes(fd=$(field raw_out_fd "$T/out"))[-1:]]")" \
	"[[\"unix\", true, $rawb]]"
expect_eq "fd made by syscall(): [kind, opened?, bytes_in]" \
	"$(q "$log" "[[f['kind'], f['opened'] is not None, f['bytes_in']] for f in closes(fd=$(field raw_in_fd "$T/out"))[-1:]]")" \
	"[[\"unix\", true, $rawb]]"
expect_eq "exit bytes_in" "$(q "$log" "tot('bytes_in')")" $((okb + rawb))
expect_eq "exit bytes_out" "$(q "$log" "tot('bytes_out')")" $((okb + rawb))
expect_eq "exit errors_in" "$(q "$log" "tot('errors_in')")" '{"again": 2, "intr": 1, "other": 0}'
# 2 x EPIPE, and the EFAULT of the TCP Fast Open sendmsg without a msghdr.
expect_eq "exit errors_out" "$(q "$log" "tot('errors_out')")" '{"again": 0, "intr": 0, "other": 3}'
# Failed calls on an fd that is not open are nobody's: no record has them.
check "$log" "all(f['fd'] >= 0 for f in CL)" "close record for fd -1"
exit 0
