# The first data call on an fd, made by a signal handler in a fork child
# (tests/progs/sigfirst): the preload starts no thread inside the handler
# (pthread_create is not async-signal-safe: a handler that interrupted
# malloc would deadlock in it); the ticker starts at the child's next
# lifecycle call outside the handler, and the child's log has every byte.
. "$(dirname "$0")/lib.sh"

need_prog sigfirst
SOCKMETER_LOG=$T/%p.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/sigfirst" >"$T/out" 2>"$T/err" ||
	fail "sigfirst failed: $(tail -n 3 "$T/err")"
[ -s "$T/err" ] && fail "stderr: $(head -n 3 "$T/err")"
expect_eq "threads right after the handler" "$(field threads_after_handler "$T/out")" 1
expect_eq "threads after a call outside it" "$(field threads_after_call "$T/out")" 2
expect_eq "bytes the parent read" "$(field received "$T/out")" 8
# The child's log: the one whose exit record has bytes out.
check "$T/*.log" "sum(r['totals']['bytes_out'] for r in R if r['type'] == 'exit') == 8" \
	"the child's 8 bytes out"
exit 0
