# Signal handlers making lifecycle calls (close, dup2, bind, dup,
# close_range, connect) on the fd their own thread is half-way through a
# lifecycle call on (tests/progs/siglife): SIGALRM every 50 us while the
# main thread dup2()s, bind()s, dup()s, accept()s and close()s around that
# fd in a loop.  A handler must
# never wait for the call it interrupted (it would wait forever), and no
# byte may be lost: the exit record's bytes out equal what every send()
# of the program, main thread and handler, moved.
. "$(dirname "$0")/lib.sh"

# 15,000 iterations: 100,000 took 8 to 20 s on this 2-core VM (2026-12-03,
# with and without the session's changes alike), near the 30 s bound, and
# 40,000 took 51 s beside a busy loop (12.9 s without the preload): sm's
# 30 s bound called it a deadlock.  15,000 still give some 80,000 signals.
SOCKMETER_LOG=$T/s.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	run_signal_prog siglife 1000 15000
sent=$(field sent "$T/out")
expect_eq "bytes out in the exit record" "$(q "$T/s.log" "T['bytes_out']")" "$sent"
exit 0
