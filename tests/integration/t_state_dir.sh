# The state directory unusable: missing (its parent too), another user's,
# open to others, or on a file system that fills up.  Each time: one
# warning on stderr, the program runs on, and its numbers are exact
# (private memory stands in for the file).  The full case runs on a tiny
# tmpfs (mount needs root) filled while a program opens 3000 socketpairs
# (6000 fds: a dozen chunks of the slot table): no SIGBUS, exact totals.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
export SOCKMETER_FORMAT=json
mkdir -p "$T/logs"

# run_pair NAME - pairxfer 50000 with the current SOCKMETER_STATE; checks
# its exit status, its exact totals, and counts its warnings in $T/NAME.err.
run_pair() {
	SOCKMETER_LOG=$T/logs/$1.log sm "$PROGS/pairxfer" 50000 \
		>"$T/$1.out" 2>"$T/$1.err" || fail "$1: pairxfer failed: $(cat "$T/$1.err")"
	expect_eq "$1: bytes_out" "$(q "$T/logs/$1.log" "tot('bytes_out')")" 50000
	expect_eq "$1: bytes_in" "$(q "$T/logs/$1.log" "tot('bytes_in')")" 50000
	expect_eq "$1: warnings" "$(sm_lines "$T/$1.err")" "${2:-1}"
}

SOCKMETER_STATE=$T/no/such/dir run_pair missing
grep -q 'state directory .*/no/such/dir: cannot create it' "$T/missing.err" ||
	fail "missing: $(cat "$T/missing.err")"

mkdir -m 0700 "$T/foreign"
chown nobody "$T/foreign" 2>/dev/null || fail "cannot chown (tests run as root)"
SOCKMETER_STATE=$T/foreign run_pair foreign
grep -q 'not a directory owned by this user' "$T/foreign.err" ||
	fail "foreign: $(cat "$T/foreign.err")"
expect_eq "foreign: files made there" "$(ls -A "$T/foreign" | wc -l)" 0

# Nothing to lose, nothing said: the warning waits for a tracked fd.  A
# program that never meters anything (ls) prints none; a parent without
# sockets whose fork child uses some: one line, the child's (the parent's
# line, inherited, said at the child's first tracked fd; its own failure
# to make a file is quiet).  Before: one line per process, ls's too.
SOCKMETER_STATE=$T/foreign SOCKMETER_LOG=$T/logs/ls.log sm ls "$T" \
	>/dev/null 2>"$T/ls.err" || fail "ls failed: $(cat "$T/ls.err")"
expect_eq "ls: warnings" "$(sm_lines "$T/ls.err")" 0
cat >"$T/forkuse.py" <<'PYEOF'
import os, socket
pid = os.fork()
if pid == 0:
    a, b = socket.socketpair()
    a.sendall(b"x" * 3000)
    got = 0
    while got < 3000:
        got += len(b.recv(65536))
    os._exit(0 if got == 3000 else 1)
_, status = os.waitpid(pid, 0)
raise SystemExit(os.waitstatus_to_exitcode(status))
PYEOF
SOCKMETER_STATE=$T/foreign SOCKMETER_LOG=$T/logs/forkuse.%p.log \
	sm "$PY" "$T/forkuse.py" 2>"$T/forkuse.err" ||
	fail "forkuse failed: $(cat "$T/forkuse.err")"
expect_eq "forkuse: warnings" "$(sm_lines "$T/forkuse.err")" 1
grep -q 'not a directory owned by this user' "$T/forkuse.err" ||
	fail "forkuse: $(cat "$T/forkuse.err")"
expect_eq "forkuse: logs (the child's)" "$(ls "$T"/logs/forkuse.*.log | wc -l)" 1
expect_eq "forkuse: the child's bytes_in" \
	"$(q "$(ls "$T"/logs/forkuse.*.log)" "tot('bytes_in')")" 3000
# A uid change that leaves the log out of reach, in a process with no
# socket (setpriv drops to nobody, then execs true): nothing said.
mkdir -m 0755 "$T/rootlogs"
SOCKMETER_LOG=$T/rootlogs/%n.%p.log sm setpriv --reuid=nobody \
	--regid=nogroup --clear-groups true 2>"$T/setpriv.err" ||
	fail "setpriv failed: $(cat "$T/setpriv.err")"
expect_eq "setpriv: warnings" "$(sm_lines "$T/setpriv.err")" 0

mkdir -m 0777 "$T/open"
chmod 0777 "$T/open"
SOCKMETER_STATE=$T/open run_pair open
expect_eq "open: files made there" "$(ls -A "$T/open" | wc -l)" 0

ln -s "$T/state-target" "$T/link"
mkdir -m 0700 "$T/state-target"
SOCKMETER_STATE=$T/link run_pair symlink

SOCKMETER_STATE=off run_pair off 0

# --- a tmpfs that fills up -----------------------------------------------
mkdir "$T/tiny"
mount -t tmpfs -o size=1m,mode=0700 tmpfs "$T/tiny" 2>"$T/mount.err" ||
	fail "cannot mount a tmpfs (needs root): $(cat "$T/mount.err")"
trap 'umount "$T/tiny" 2>/dev/null; sm_cleanup' EXIT
# Room for the file's head, the first ring and slot chunks (248 KiB)
# and a little more: the next slot chunks find the file system full.
dd if=/dev/zero of="$T/tiny/filler" bs=4k count=$(((1024 - 300) / 4)) 2>/dev/null
cat >"$T/many.py" <<'PYEOF'
import os, socket, sys
keep, n = [], 0
for i in range(3000):
    a, b = socket.socketpair()
    a.sendall(b"z" * (i + 1))
    got = 0
    while got < i + 1:
        got += len(b.recv(65536))
    n += got
    keep.append((a, b))
print("moved", n)
st = os.statvfs(sys.argv[1])
print("free", st.f_bavail * st.f_frsize)
PYEOF
SOCKMETER_STATE=$T/tiny/st SOCKMETER_LOG=$T/logs/full.log \
	sm "$PY" "$T/many.py" "$T/tiny" >"$T/full.out" 2>"$T/full.err" ||
	fail "full: the program failed (status $?): $(cat "$T/full.err")"
want=$((3000 * 3001 / 2))
expect_eq "full: the program's own count" "$(awk '/^moved/ { print $2 }' "$T/full.out")" "$want"
expect_eq "full: bytes_out" "$(q "$T/logs/full.log" "tot('bytes_out')")" "$want"
expect_eq "full: bytes_in" "$(q "$T/logs/full.log" "tot('bytes_in')")" "$want"
expect_eq "full: fds" "$(q "$T/logs/full.log" "tot('fds_open') + tot('fds_closed')")" 6000
free=$(awk '/^free/ { print $2 }' "$T/full.out")
[ "$free" -lt 176128 ] || fail "full: the tmpfs never filled up ($free bytes free)"
expect_eq "full: state files left" "$(ls "$T/tiny/st" | wc -l)" 0
exit 0
