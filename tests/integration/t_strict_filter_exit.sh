# A process whose seccomp filter allows nothing but read, write, exit and
# exit_group (tests/progs/strictfilter) ends as it would alone: _exit(5)
# gives 5, exit(6) gives 6, a forbidden call dies of SIGSYS.  The library
# made rt_sigprocmask and futex calls on the way out: the filter killed
# the thread there (SIGSYS, or status 0 once the ticker ended the process
# for the dead main thread), and vsftpd's sandboxed children never ended.
# The numbers stay in the state file, for recovery.
. "$(dirname "$0")/lib.sh"

need_prog strictfilter
for m in "_exit 5" "exit 6" "killed 159"; do
	# shellcheck disable=SC2086
	set -- $m
	SOCKMETER_LOG=$T/$1.%p.log SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json \
		sm "$PROGS/strictfilter" "$1" >"$T/$1.out" 2>"$T/$1.err"
	st=$?
	expect_eq "$1: exit status" "$st" "$2"
	[ "$1" = killed ] && continue
	# The numbers, from the state file: 5 + 3 bytes each way.
	"$SM_BUILD/sockmeter-recover" "$T/state" >/dev/null 2>&1
	log=$(one_log "$T/$1.*.log")
	expect_eq "$1: recovered exit record [end, bytes_out, bytes_in]" \
		"$(SOCKMETER_FORMAT=json q "$log" "[E['end'], T['bytes_out'], T['bytes_in']]")" \
		'["exit-recovered", 8, 8]'
done
exit 0
