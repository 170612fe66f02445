# Signal handlers making lifecycle calls (close, dup2, bind, dup) on the
# fd their own thread is half-way through a lifecycle call on
# (tests/progs/siglife): SIGALRM every 50 us while the main thread
# dup2()s, bind()s, dup()s and close()s that fd in a loop.  A handler must
# never wait for the call it interrupted (it would wait forever), and no
# byte may be lost: the exit record's bytes out equal what every send()
# of the program, main thread and handler, moved.
. "$(dirname "$0")/lib.sh"

need_prog siglife
SOCKMETER_LOG=$T/s.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/siglife" 100000 >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 124 ] && fail "siglife timed out: a handler waited for the call it interrupted"
[ "$st" = 0 ] || fail "siglife failed ($st): $(tail -n 3 "$T/err")"
[ -s "$T/err" ] && fail "stderr: $(head -n 3 "$T/err")"
sigs=$(field signals "$T/out")
[ "$sigs" -ge 1000 ] || fail "only $sigs signals handled: the test did not test much"
sent=$(field sent "$T/out")
expect_eq "bytes out in the exit record" "$(q "$T/s.log" "T['bytes_out']")" "$sent"
exit 0
