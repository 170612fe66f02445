# A process whose seccomp filter allows nothing but read, write, exit and
# exit_group (tests/progs/strictfilter) ends as it would alone: _exit(5)
# gives 5, exit(6) gives 6, a forbidden call dies of SIGSYS.  The library
# made rt_sigprocmask and futex calls on the way out: the filter killed
# the thread there (SIGSYS, or status 0 once the ticker ended the process
# for the dead main thread), and vsftpd's sandboxed children never ended.
# The numbers stay in the state file, for recovery.
. "$(dirname "$0")/lib.sh"

need_prog strictfilter
# shift: a filter whose futex verdict is a BPF shift by 32 (the kernel
# shifts by 32 & 31: futex kills the process): the library's evaluation of
# the filter must agree, and make no futex call at exit.
for m in "_exit 5" "exit 6" "killed 159" "shift 6"; do
	# shellcheck disable=SC2086
	set -- $m
	SOCKMETER_LOG=$T/$1.%p.log SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json \
		sm "$PROGS/strictfilter" "$1" >"$T/$1.out" 2>"$T/$1.err"
	st=$?
	expect_eq "$1: exit status" "$st" "$2"
	[ "$1" = killed ] && continue
	[ "$1" = shift ] && continue
	# The numbers, from the state file: 5 + 3 bytes each way.
	"$SM_BUILD/sockmeter-recover" "$T/state" >/dev/null 2>&1
	log=$(one_log "$T/$1.*.log")
	expect_eq "$1: recovered exit record [end, bytes_out, bytes_in]" \
		"$(SOCKMETER_FORMAT=json q "$log" "[E['end'], T['bytes_out'], T['bytes_in']]")" \
		'["exit-recovered", 8, 8]'
done

# thread: the filter binds only the worker that installed it; the main
# thread's exit record is written at its exit (it had been left to
# recovery: the filter was taken for the whole process's).
SOCKMETER_LOG=$T/thread.%p.log SOCKMETER_STATE=$T/state2 SOCKMETER_FORMAT=json \
	sm "$PROGS/strictfilter" thread >"$T/thread.out" 2>"$T/thread.err"
st=$?
expect_eq "thread: exit status" "$st" 7
log=$(one_log "$T/thread.*.log")
expect_eq "thread: exit record written at exit [end, bytes_out, bytes_in]" \
	"$(q "$log" "[E.get('end'), T['bytes_out'], T['bytes_in']]")" \
	'[null, 8, 8]'

# exec: a filter that lets futex through, then an exec: the exec record is
# written before it (none was: recovery later called the process killed).
SOCKMETER_LOG=$T/exec.%p.log SOCKMETER_STATE=$T/state3 SOCKMETER_FORMAT=json \
	sm "$PROGS/strictfilter" exec >"$T/exec.out" 2>"$T/exec.err"
st=$?
expect_eq "exec: exit status (true's)" "$st" 0
n=0
for f in "$T"/exec.*.log; do
	if [ "$(q "$f" "len(X)")" = 1 ]; then
		log=$f
		n=$((n + 1))
	fi
done
expect_eq "exec: logs with an exec record" "$n" 1
expect_eq "exec: the exec record's [bytes_out, bytes_in]" \
	"$(q "$log" "[X[0]['totals']['bytes_out'], X[0]['totals']['bytes_in']]")" \
	'[8, 8]'
exit 0
