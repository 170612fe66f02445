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
for how in clone clone3 libc fork; do
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

# A syscall(SYS_fork) child that execs (Mono's crash reporter forks so to
# run gdb), then its parent killed: the parent's numbers come back from
# its state file.  Before, the child passed for its parent and its exec
# marked the parent's file final: the recovery removed it ("final records
# already written"), and the 100,000 bytes were in no log, unsaid.
if [ "$(uname -m)" = x86_64 ]; then
	mkdir -m 700 "$T/state"
	cat >"$T/rawfork.py" <<'PYEOF'
import ctypes, os, signal, socket
a, b = socket.socketpair()
a.sendall(b"x" * 100000)
n = 0
while n < 100000:
    n += len(b.recv(65536))
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(57)          # SYS_fork on x86-64
if pid == 0:
    os.execv("/bin/true", ["true"])
os.waitpid(pid, 0)
os.kill(os.getpid(), signal.SIGKILL)
PYEOF
	SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/rawfork.%p.log" \
		sm "$PY" "$T/rawfork.py"
	SOCKMETER_LIB=$LIB "$SM_TOP/scripts/sockmeter" recover "$T/state" 2>"$T/rawfork.rec" ||
		fail "recover: $(cat "$T/rawfork.rec")"
	log=$(one_log "$T/log/rawfork.*.log")
	check "$log" "E.get('end') == 'killed' and T['bytes_out'] == 100000 and T['bytes_in'] == 100000" \
		"the killed parent of a raw-fork child"
fi

SOCKMETER_LOG="$T/log/race.%p.log" sm "$PROGS/clonerace" 20 \
	>"$T/race.out" 2>"$T/race.err" || fail "clonerace failed: $(cat "$T/race.err")"
expect_eq "clonerace: rounds" "$(field rounds "$T/race.out")" 20
expect_eq "clonerace: rounds whose login child hung" "$(field hung "$T/race.out")" 0
exit 0
