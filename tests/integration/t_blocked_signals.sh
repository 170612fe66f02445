# A program that blocks every signal outside its waits, with handlers
# that block every signal too (PostgreSQL's postmaster,
# tests/progs/blockedsigs): the preload's ticker starts all the same (it
# did not, and such a server had no interval record, close records only
# at exit and dropped past the queue's size), but never from inside a
# handler (pthread_create is not async-signal-safe), and a handler left by
# siglongjmp counts as left.  The program sees its own handler when it
# asks sigaction, and each of the signal() family returns it as the old
# one.
. "$(dirname "$0")/lib.sh"

need_prog blockedsigs
SOCKMETER_LOG=$T/c.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/blockedsigs" conns 300 >"$T/c.out" 2>"$T/c.err" ||
	fail "blockedsigs conns failed: $(tail -n 3 "$T/c.err")"
expect_eq "threads with every signal blocked" "$(field threads_after "$T/c.out")" 2
[ "$(q "$T/c.log" "len(IV)")" -ge 1 ] || fail "no interval record"
expect_eq "close records" "$(q "$T/c.log" "len([c for c in closes(kind='tcp') if c['bytes_in'] == 64])")" 600
expect_eq "bytes out" "$(q "$T/c.log" "T['bytes_out']")" "$(field sent "$T/c.out")"
check "$T/c.log" "'close_records_dropped' not in T" "close records dropped"
# Close records reach the log while the program runs: before its exit
# record, written by the ticker at least one interval earlier.
check "$T/c.log" "max(r['ts'] for r in R if r['type'] == 'close' and r['fds'][0]['bytes_in'] == 64) < E['ts'] - 0.1" \
	"the close records were written at exit, not by a ticker"

SOCKMETER_LOG=$T/h.log SOCKMETER_FORMAT=json \
	sm "$PROGS/blockedsigs" handler >"$T/h.out" 2>"$T/h.err" ||
	fail "blockedsigs handler failed: $(tail -n 3 "$T/h.err")"
expect_eq "threads right after a handler made the first fd" "$(field threads_in_handler "$T/h.out")" 1
expect_eq "threads after a call outside it" "$(field threads_after "$T/h.out")" 2
expect_eq "signals handled" "$(field handled "$T/h.out")" 1
expect_eq "sigaction names the program's handler" "$(field handler_reported "$T/h.out")" yes
expect_eq "bytes out" "$(q "$T/h.log" "T['bytes_out']")" 4

SOCKMETER_LOG=$T/j.log sm "$PROGS/blockedsigs" longjmp >"$T/j.out" 2>"$T/j.err" ||
	fail "blockedsigs longjmp failed: $(tail -n 3 "$T/j.err")"
expect_eq "threads after a handler left by siglongjmp" "$(field threads_after "$T/j.out")" 2

# Every way of installing a handler reports the program's own handler.
SOCKMETER_LOG=$T/f.log sm "$PROGS/blockedsigs" family >"$T/f.out" 2>"$T/f.err" ||
	fail "blockedsigs family failed: $(tail -n 3 "$T/f.err")"
expect_eq "the signal() family" "$(field family "$T/f.out")" ok
exit 0
