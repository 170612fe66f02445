# Signal handlers the library's trampolines (preload/wrap_signals.c) must
# neither miscount nor change, each found by a review (tests/progs/sigedge):
# - restart: an SA_RESTART handler runs while a blocking send has moved
#   nothing (the kernel restarts the call), then a SIGTERM handler cuts the
#   same send short and calls _exit: the exit record must hold what the
#   peer read (the first handler had wiped the call's in-flight note);
# - altstack: a handler on an alternate stack that lies above the handler
#   it interrupted (an array in main's frame) must not take the outer
#   handler's note of a cut-short send for one left by siglongjmp (the
#   send was counted twice);
# - handlerstart: the same two handlers, the inner one making the
#   process's first socket: the ticker thread must not start inside it;
# - plainargs: a handler installed without SA_SIGINFO still gets the
#   siginfo and ucontext the kernel passes every handler on x86-64, and a
#   rip it changes takes effect;
# - installrace: a handler installed with a mask never runs without it
#   while another thread signals during the install;
# - jumpagain: an SA_RESTART handler that leaves by siglongjmp, twice out
#   of a MSG_WAITALL recv made from the same place: first while it had
#   moved nothing, then after it took 1000 bytes.  The stale note of the
#   first (same stack pointer) wiped the second call's own, and its 1000
#   bytes were in no record (perl's unsafe signals: two timed-out
#   syswrites, the first on a full buffer, lost the second's bytes);
# - reinstall: an install made by a handler in the middle of another
#   install: the action read back is always one install's whole (the
#   two took the same spare table: one's mask with the other's handler).
. "$(dirname "$0")/lib.sh"

need_prog sigedge

# restart
SOCKMETER_LOG=$T/restart.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/sigedge" restart >"$T/restart.out" 2>"$T/restart.err"
st=$?
expect_eq "restart: exit status (the handler's _exit)" "$st" 3
for _ in $(seq 100); do
	grep -q '^moved=' "$T/restart.out" && break
	sleep 0.1
done
moved=$(field moved "$T/restart.out")
filled=$(field filled "$T/restart.out")
pid=$(field pid "$T/restart.out")
[ "$moved" -gt "$filled" ] || fail "restart: the send moved nothing ($moved of $filled)"
log=$(one_log "$T/restart.$pid.log")
expect_eq "restart: bytes out in the exit record vs what the peer read" \
	"$(q "$log" "T['bytes_out']")" "$moved"

# altstack
SOCKMETER_LOG=$T/alt.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/sigedge" altstack >"$T/alt.out" 2>"$T/alt.err" ||
	fail "altstack: $(cat "$T/alt.err")"
expect_eq "altstack: the inner handler ran" "$(field inner "$T/alt.out")" 1
sent=$(field sent "$T/alt.out")
[ "$sent" -gt 0 ] || fail "altstack: send returned $sent"
n=0
for f in "$T"/alt.*.log; do
	# The parent's log is the one with a send on a unix socket.
	if [ "$(q "$f" "T['calls_out']")" != 0 ]; then
		log=$f
		n=$((n + 1))
	fi
done
expect_eq "altstack: logs with a send" "$n" 1
expect_eq "altstack: [bytes_out, calls_out] of the socket vs what send returned" \
	"$(q "$log" "[csum('bytes_out', kind='unix'), csum('calls_out', kind='unix')]")" \
	"[$sent, 1]"

# handlerstart
SOCKMETER_LOG=$T/start.%p.log sm "$PROGS/sigedge" handlerstart \
	>"$T/start.out" 2>"$T/start.err" ||
	fail "handlerstart: $(cat "$T/start.err")"
expect_eq "handlerstart: the inner handler ran" "$(field inner "$T/start.out")" 1
expect_eq "handlerstart: threads before and after the first socket, in a handler" \
	"$(field threads "$T/start.out")" "1,1"

# plainargs
SOCKMETER_LOG=$T/plain.%p.log sm "$PROGS/sigedge" plainargs \
	>"$T/plain.out" 2>"$T/plain.err"
st=$?
expect_eq "plainargs: $(cat "$T/plain.out" "$T/plain.err")" "$st" 0
grep -qx 'plainargs ok' "$T/plain.out" || fail "plainargs: $(cat "$T/plain.out")"

# jumpagain
SOCKMETER_LOG=$T/jump.%p.log SOCKMETER_FORMAT=json sm "$PROGS/sigedge" jumpagain \
	>"$T/jump.out" 2>"$T/jump.err" || fail "jumpagain: $(cat "$T/jump.err")"
received=$(field received "$T/jump.out")
[ "$received" -gt 0 ] || fail "jumpagain: the second recv took nothing"
log=$(one_log "$T/jump.*.log")
expect_eq "jumpagain: the socket's bytes_in vs what the recv took" \
	"$(q "$log" "csum('bytes_in', kind='unix')")" "$received"
expect_eq "jumpagain: exit totals' bytes_in" "$(q "$log" "T['bytes_in']")" "$received"

# none_of MODE FIELD WHAT - sigedge MODE prints FIELD="K of R": K (what
# must never happen) must be 0, and R (the chances it had) above 0.
none_of() {
	local v
	SOCKMETER_LOG=$T/$1.%p.log sm "$PROGS/sigedge" "$1" \
		>"$T/$1.out" 2>"$T/$1.err" || fail "$1: $(cat "$T/$1.err")"
	v=$(field "$2" "$T/$1.out")
	case $v in
	"0 of "*) ;;
	*) fail "$1: $3: $v" ;;
	esac
	[ "${v#0 of }" -gt 0 ] || fail "$1: no chance for it: nothing tested"
}

none_of installrace unmasked "the masked handler ran without its mask"
none_of reinstall mixed "an action with one install's handler and another's mask"
exit 0
