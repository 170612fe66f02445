# A thread cancelled (pthread_cancel) while blocked in fwrite on a metered
# socket leaves the FILE unlocked: the stdio wrappers hold the FILE's lock
# across the real call, and release it when the cancellation unwinds.
. "$(dirname "$0")/lib.sh"

need_prog stdio_cancel
plain "$PROGS/stdio_cancel" >"$T/plain.out" 2>&1 ||
	fail "stdio_cancel failed: $(cat "$T/plain.out")"
expect_eq "without the preload" "$(field lock_free "$T/plain.out")" 1
SOCKMETER_LOG=$T/c.log sm "$PROGS/stdio_cancel" >"$T/pre.out" 2>&1 ||
	fail "stdio_cancel failed under the preload: $(cat "$T/pre.out")"
expect_eq "with the preload" "$(field lock_free "$T/pre.out")" 1
# The metered path (the one that holds the lock) was the one taken: the
# socket's fwrite bytes are in a record.
grep -q 'totals:.* bytes_out=[1-9]' "$T/c.log" 2>/dev/null ||
	fail "no record of the socket's bytes: the stdio wrappers did not meter"
exit 0
