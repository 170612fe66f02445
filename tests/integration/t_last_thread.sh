# A process whose last thread is not its main one.  glibc ends a process
# with exit(0) when its last thread returns or calls pthread_exit; it
# counts the ticker as one of its threads, so with the preload a program
# whose main thread called pthread_exit (then whose workers ended), or
# whose only thread ended with the raw exit system call, used to live on
# with the ticker alone, for good.  Now the ticker sees it is the last
# thread, writes the exit record and ends the process with the status it
# would have had.  Its state file's recovery used to take a main thread
# that ended while workers ran for a dead process ("end":"killed"), and
# its exit record counted that main thread among the threads still
# running (other_threads=1: a zombie in /proc's thread count).
. "$(dirname "$0")/lib.sh"
need_prog lastthread

mkdir -p "$T/logs"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json

run() { # NAME ARGS... - run lastthread, expecting it to end in time
	local name=$1 t0 t1
	shift
	rm -f "$T/logs"/*
	t0=$(date +%s%N)
	SOCKMETER_LOG=$T/logs/%p.log timeout -k 2 10 env LD_PRELOAD="$LIB" \
		"$PROGS/lastthread" "$@" >"$T/out" 2>"$T/err"
	st=$?
	t1=$(date +%s%N)
	[ "$st" -ne 124 ] && [ "$st" -ne 137 ] ||
		fail "$name: still running after 10 s (the ticker kept it alive)"
	ms=$(((t1 - t0) / 1000000))
	echo "$name: status $st after $ms ms"
}

check_log() { # NAME BYTES
	expect_eq "$1: logs" "$(ls "$T/logs" | wc -l)" 1
	expect_eq "$1: exit records" \
		"$(q "$T/logs/*.log" "len([r for r in R if r['type'] == 'exit'])")" 1
	expect_eq "$1: exit records said killed" \
		"$(q "$T/logs/*.log" "len([r for r in R if r.get('end') == 'killed'])")" 0
	expect_eq "$1: truth" "$(field sent "$T/out")" "$2"
	expect_eq "$1: bytes_out" \
		"$(q "$T/logs/*.log" "sum(r['totals']['bytes_out'] for r in R if r['type'] == 'exit')")" "$2"
	expect_eq "$1: bytes_in" \
		"$(q "$T/logs/*.log" "sum(r['totals']['bytes_in'] for r in R if r['type'] == 'exit')")" "$2"
	expect_eq "$1: state files left" "$(ls "$T/state" 2>/dev/null | wc -l)" 0
	# No thread of the program was left to move bytes: a main thread
	# that called pthread_exit is a zombie in /proc's count until the
	# process ends, and was taken for one (other_threads=1).
	expect_eq "$1: other_threads" "$(q "$T/logs/*.log" "E.get('other_threads')")" null
}

# The worker outlives main by 1.5 s: past the ticker's first look, and
# past a recovery pass that once took the process for dead.
run "pthread_exit, worker for 1.5 s" pthread 1500 100000
expect_eq "status" "$st" 0
check_log "pthread 1.5 s" 100500
# main's end is seen at once (a key destructor), the worker's within
# 320 ms (looks from every 20 ms, doubling).  The bounds leave room for a
# loaded machine: what they catch is a process that does not end.
[ "$ms" -lt 6000 ] || fail "pthread 1.5 s: ended after $ms ms"

run "pthread_exit, worker at once" pthread 0 4096
expect_eq "status" "$st" 0
check_log "pthread 0 s" 4596
[ "$ms" -lt 4000 ] || fail "pthread 0 s: ended after $ms ms"

# glibc's exit(0) runs the program's atexit handlers and flushes its
# FILEs: the ticker no longer counts as one of glibc's threads, so the
# process ends through exit() as it would without the preload (it used to
# be ended by the ticker a second later, without either: output lost).
grep -qx 'flushed=yes' "$T/out" || fail "pthread 0 s: buffered output lost: $(cat "$T/out")"
grep -qx 'atexit=ran' "$T/out" || fail "pthread 0 s: atexit handler not run: $(cat "$T/out")"

# A fork child of a thread other than main, which returns from its start
# routine: that thread is the child's only one.
rm -f "$T/logs"/*
SOCKMETER_LOG=$T/logs/%p.log timeout -k 2 10 env LD_PRELOAD="$LIB" \
	"$PROGS/lastthread" forkthread 3000 >"$T/out" 2>"$T/err"
expect_eq "forkthread: status" "$?" 0
expect_eq "forkthread: child's status" "$(field child_status "$T/out")" 0
grep -qx 'flushed=yes' "$T/out" || fail "forkthread: the child's buffered output lost: $(cat "$T/out")"
grep -qx 'atexit=ran' "$T/out" || fail "forkthread: the child's atexit handler not run: $(cat "$T/out")"
expect_eq "forkthread: the child's exit record [bytes_in, bytes_out]" \
	"$(q "$T/logs/*.log" "[[r['totals']['bytes_in'], r['totals']['bytes_out']] for r in R if r['type'] == 'exit' and r['totals']['bytes_out'] == 3000]")" \
	"[[3000, 3000]]"
expect_eq "forkthread: exit records" \
	"$(q "$T/logs/*.log" "len([r for r in R if r['type'] == 'exit'])")" 2

# A raw exit: looked at once a second.
run "raw exit 7" raw 7
expect_eq "status" "$st" 7
check_log "raw 7" 500
[ "$ms" -lt 5000 ] || fail "raw 7: ended after $ms ms"

run "raw exit 0" raw 0
expect_eq "status" "$st" 0
check_log "raw 0" 500

# main calls pthread_exit, the worker then ends with syscall(SYS_exit, 9):
# the kernel gives the process the last thread's status (Linux 6.x; the
# main thread's on older ones), which the ticker, left last, used to
# replace with the main thread's 0.  Whatever this kernel gives without
# the preload is the truth.
timeout 10 "$PROGS/lastthread" workerraw 300 10 9 >/dev/null
plain_st=$?
echo "plain workerraw: status $plain_st"
run "worker's raw exit 9" workerraw 300 3000 9
expect_eq "workerraw: status as without the preload" "$st" "$plain_st"
check_log "workerraw 9" 3500
[ "$ms" -lt 5000 ] || fail "workerraw 9: ended after $ms ms"

# Without the preload the same endings take no time and give the same
# status (the test's own check of its program).
timeout 10 "$PROGS/lastthread" pthread 0 10 >/dev/null
expect_eq "plain pthread status" "$?" 0
timeout 10 "$PROGS/lastthread" forkthread 10 >"$T/plain.out"
grep -c -x -e 'flushed=yes' -e 'atexit=ran' "$T/plain.out" | grep -qx 2 ||
	fail "plain forkthread: $(cat "$T/plain.out")"
timeout 10 "$PROGS/lastthread" raw 7 >/dev/null
expect_eq "plain raw status" "$?" 7
exit 0
