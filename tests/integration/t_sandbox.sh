# Programs that confine themselves keep their numbers, and live
# (tests/progs/sandboxed: a fork child, as OpenSSH's pre-authentication
# child, confines itself, then writes 1,000,000 bytes on a socket it
# inherited; its filter kills the process for any system call but a few).
#  - a seccomp filter through prctl (OpenSSH) or the seccomp system call
#    through syscall() (libseccomp), on the calling thread or on every
#    thread (TSYNC: the ticker too): the child ends with status 0 (the
#    preload made no system call of its own on it: an fstat, a
#    getsockopt would have killed it), and its exit record holds its
#    exact bytes;
#  - TSYNC with memory through mmap and munmap only, the bound ticker
#    writing big batches (busy);
#  - a socketpair made under the filter, with no ticker running: the
#    numbers are recovered exact from the state file, as an exit;
#  - a thread made under the filter (which it inherits) is quiet too;
#  - the probes libseccomp and systemd make (invalid seccomp calls)
#    confine nothing: the processes are metered as ever;
#  - a child that meters nothing and confines itself exits cleanly (its
#    state file is left, marked final, for recovery to remove: unlinking
#    it would have killed it);
#  - chroot into an empty directory and a uid change to nobody first (as
#    root), with the filter or without: the log opened before the chroot
#    still gets the records;
#  - OpenSSH's limits too (no file may grow: RLIMIT_FSIZE 0): the exit
#    record cannot be written, so the state file keeps it, and recovery
#    writes it, exact, marked "exit-recovered".
. "$(dirname "$0")/lib.sh"

need_prog sandboxed
N=1000000
launcher=$SM_TOP/scripts/sockmeter
export SOCKMETER_STATE="$T/state"

run() { # run HOW [ROOT]: the program's output in $T/HOW.out
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/$1.%p.log" \
		sm "$PROGS/sandboxed" "$1" "$N" ${2:+"$2"} >"$T/$1.out" 2>"$T/$1.err" ||
		fail "sandboxed $1 failed: $(cat "$T/$1.err")"
	expect_eq "$1: the child's ending" "$(field status "$T/$1.out")" "exit:0"
	expect_eq "$1: bytes received" "$(field got "$T/$1.out")" "$N"
	child=$(field child "$T/$1.out")
	parent=$(field pid "$T/$1.out")
	check "$T/log/$1.$parent.log" "T['bytes_in'] == $N" "$1: the parent's log"
}

mkdir -m 1777 "$T/log"
for how in prctl seccomp tsync; do
	run "$how"
	check "$T/log/$how.$child.log" \
		"T['bytes_out'] == $N and T['bytes_in'] == 1 and not E.get('end')" \
		"$how: the confined child's exit record"
done
# With TSYNC the ticker is filtered too: it wrote the record to the file
# it holds, and left the state file, marked final, to recovery (this
# one, or another metered process's scan: the count is not asserted).
recover_all() {
	"$launcher" recover "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
	! ls "$T/state"/*.state >/dev/null 2>&1 ||
		fail "$1: state files left after recovery: $(ls "$T/state")"
}
recover_all tsync
# The same with the records on stderr: the ticker writes to a copy of it
# it took before the filter.
SOCKMETER_FORMAT=json SOCKMETER_LOG=stderr \
	sm "$PROGS/sandboxed" tsync "$N" >"$T/tsync-err.out" 2>"$T/tsync-err.log" ||
	fail "sandboxed tsync (stderr) failed"
expect_eq "tsync, stderr: the child's ending" "$(field status "$T/tsync-err.out")" "exit:0"
child=$(field child "$T/tsync-err.out")
grep "\"pid\":$child," "$T/tsync-err.log" >"$T/tsync-child.log" || true
check "$T/tsync-child.log" "T['bytes_out'] == $N" "tsync, stderr: the child's exit record"
recover_all tsync-stderr

# TSYNC with memory through mmap and munmap only (Firefox's sandboxes trap
# mremap and most of madvise): the bound ticker formats batches far beyond
# a page (an interval record of 600 fds, then their 600 close records) and
# gives windows and its top list more room, with neither (before, a helper's
# Firefox content processes died of SIGSYS at the ticker's mremap).
SOCKMETER_INTERVAL=1 run busy
check "$T/log/busy.$child.log" \
	"T['bytes_out'] == $N + 300 and T['bytes_in'] == 1 + 300 and len(CL) == 600 + 1 and len(IV) >= 1 and not E.get('end')" \
	"busy: the confined child's records"
recover_all busy

# A socket made under the filter when nothing was tracked before it
# (late: apt's http method), or by a thread made under it, which inherits
# the filter and must be quiet too (thread): the ticker, started at the
# filter (which binds it not), writes the records; before, no ticker ran
# and the numbers waited in the state file for a recovery.  With a TSYNC
# filter (latetsync) a ticker started for it would be bound too, unable
# to open the log: none is, and the child's exit leaves the numbers in
# its state file, marked unwritten; recovery writes them as this exit's.
for how in late thread latetsync; do
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/$how.%p.log" \
		sm "$PROGS/sandboxed" "$how" "$N" >"$T/$how.out" 2>"$T/$how.err" ||
		fail "sandboxed $how failed: $(cat "$T/$how.err")"
	expect_eq "$how: the child's ending" "$(field status "$T/$how.out")" "exit:0"
	child=$(field child "$T/$how.out")
	if [ "$how" = latetsync ]; then
		[ ! -s "$T/log/$how.$child.log" ] ||
			fail "$how: a log before recovery: $(head -c 300 "$T/log/$how.$child.log")"
		end="E['end'] == 'exit-recovered'"
	else
		check "$T/log/$how.$child.log" "len(CL) == 2" \
			"$how: the socketpair's close records, before recovery"
		end="not E.get('end')"
	fi
	recover_all "$how"
	check "$T/log/$how.$child.log" \
		"T['bytes_out'] == T['bytes_in'] == $N and $end" \
		"$how: the child's exit record"
done

# Probes confine nothing: the parent and its child are metered as ever
# (their own exit records, written by themselves).
run probe
check "$T/log/probe.$child.log" \
	"T['bytes_out'] == $N and not E.get('end')" "probe: the child's exit record"
check "$T/log/probe.$parent.log" "not E.get('end')" "probe: the parent's exit record"

# A confined child that meters nothing: its exit leaves its state file
# (marked final) to recovery rather than unlink it under the filter.
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/idle.%p.log" \
	sm "$PROGS/sandboxed" idle 0 >"$T/idle.out" 2>"$T/idle.err" ||
	fail "sandboxed idle failed: $(cat "$T/idle.err")"
expect_eq "idle: the child's ending" "$(field status "$T/idle.out")" "exit:0"
recover_all idle

[ "$(id -u)" = 0 ] || { echo "t_sandbox: chroot cases skipped (not root)" >&2; exit 0; }
mkdir -m 755 "$T/root"
chmod 755 "$T"
run chroot "$T/root"
check "$T/log/chroot.$child.log" "T['bytes_out'] == $N and not E.get('end')" \
	"chroot: the confined child's exit record"

# A chroot alone: the exiting thread leaves the exit record to the ticker,
# which holds the log.
run chrootonly "$T/root"
check "$T/log/chrootonly.$child.log" "T['bytes_out'] == $N and not E.get('end')" \
	"chroot alone: the child's exit record"

run sshd "$T/root"
log=$T/log/sshd.$child.log
check "$T/log/sshd.$parent.log" "T['bytes_in'] == $N" "sshd: the parent's log"
[ ! -s "$log" ] || fail "sshd: the child wrote a log, though no file could grow: $(head -c 300 "$log")"
recover_all sshd
check "$log" "T['bytes_out'] == $N and E['end'] == 'exit-recovered'" \
	"sshd: the recovered exit record"
exit 0
