# A send whose count another thread's close overtakes: the sender moved
# its byte, was preempted at the system call's return by the thread the
# send woke, and that thread closed the fd before the wrapper counted.
# The close record was pushed without the call (README Limits); the count
# then found the fd closed and was dropped, so the process's totals were
# short too (asyncio's child watcher thread writing to the loop's wakeup
# socket as the loop closed it: one byte short in about 1 run of 8).
# Now it is left in the slot as a stray, which the totals take.
# tests/progs/sendclose makes the preemption certain with SCHED_FIFO on
# one CPU (skipped where that is not allowed).
. "$(dirname "$0")/lib.sh"
need_prog sendclose

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
for i in 1 2 3; do
	rm -f "$T"/run.*.log
	st=0
	SOCKMETER_LOG=$T/run.%p.log env LD_PRELOAD="$LIB" "$PROGS/sendclose" \
		>"$T/out" 2>"$T/err" || st=$?
	[ "$st" = 3 ] && skip "SCHED_FIFO or CPU affinity not allowed here"
	[ "$st" = 0 ] || fail "sendclose ended with $st: $(cat "$T/err")"
	expect_eq "run $i: what moved" "$(cat "$T/out")" "sent=1 received=1"
	[ -s "$T/err" ] && fail "run $i: stderr: $(cat "$T/err")"
	expect_eq "run $i: the totals' bytes [in, out]" \
		"$(q "$T/run.*.log" "[T['bytes_in'], T['bytes_out']]")" "[1, 1]"
	expect_eq "run $i: the totals' calls_out" "$(q "$T/run.*.log" "T['calls_out']")" 1
done
