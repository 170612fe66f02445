# A child made by a raw clone system call (no CLONE_VM), as vsftpd makes
# its isolated sessions (syscall(SYS_clone, SIGCHLD | CLONE_NEW*)), or with
# clone3, or made by libc's clone() function (its child starts in a
# function of the program's, on a stack of its own) (tests/progs/rawclone):
# libc runs no fork handler for it.
#  - it lives: as root its setgroups walks libc's list of threads, which
#    holds the parent's ticker (a stack wiped for such a child made that
#    a SIGSEGV);
#  - it is metered as a fork child: its own log, with its exact bytes, and
#    the parent's log untouched by the child's share;
#  - a raw clone made right after the preload's thread was started (the
#    session's first read) does not leave the child's setgroups waiting
#    for ever on that thread (vsftpd's login child: tests/progs/clonerace,
#    20 rounds; before, about half of them hung).
. "$(dirname "$0")/lib.sh"

need_prog rawclone
need_prog clonerace
N=1000000
mkdir -m 1777 "$T/log"
for how in clone clone3 libc; do
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/$how.%p.log" \
		sm "$PROGS/rawclone" "$how" "$N" >"$T/$how.out" 2>"$T/$how.err" ||
		fail "rawclone $how failed: $(cat "$T/$how.err")"
	expect_eq "$how: the child's ending" "$(field status "$T/$how.out")" "exit:0"
	expect_eq "$how: bytes received" "$(field got "$T/$how.out")" "$N"
	child=$(field child "$T/$how.out")
	parent=$(field pid "$T/$how.out")
	check "$T/log/$how.$child.log" \
		"T['bytes_out'] == $N and T['bytes_in'] == 1 and not E.get('end')" \
		"$how: the child's exit record"
	check "$T/log/$how.$parent.log" "T['bytes_in'] == $N and T['bytes_out'] == 1" \
		"$how: the parent's exit record"
done

SOCKMETER_LOG="$T/log/race.%p.log" sm "$PROGS/clonerace" 20 \
	>"$T/race.out" 2>"$T/race.err" || fail "clonerace failed: $(cat "$T/race.err")"
expect_eq "clonerace: rounds" "$(field rounds "$T/race.out")" 20
expect_eq "clonerace: rounds whose login child hung" "$(field hung "$T/race.out")" 0
exit 0
