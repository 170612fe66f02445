# A FUSE mount whose server does not answer, on a directory the library
# uses, holds nothing: a stat, statfs or open there waits in the kernel
# until the server answers (no signal but SIGKILL ends it), and a user's
# FUSE mount (allow_other) made on /tmp/sockmeter-0 or
# /dev/shm/sockmeter-0 before root's first program did so held every
# preloaded root program at its start.  The library tells a FUSE mount
# without asking its server (statx AT_STATX_DONT_SYNC, mountinfo) and
# refuses it with a message.  Here bindfs (FUSE) is stopped (SIGSTOP)
# after mounting, and (1) a program whose state directory is the mount,
# (2) one whose default log directory is (in a mount namespace of the
# test's own), run to their end with the message; (3) root's `sockmeter
# recover` of the mount returns at once and says why it leaves it alone;
# (4) a fork child that became nobody, whose state directory as nobody
# is the mount, says so and writes its records.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (mounts a FUSE file system)"
command -v bindfs >/dev/null || skip "no bindfs (scripts/install-deps installs it)"
mkdir -p "$T/under" "$T/fs" "$T/state"
chmod 755 "$T"
chmod 700 "$T/state"
chown nobody "$T/under"
chmod 700 "$T/under"
bindfs -f --force-user=root --force-group=root --perms=0700 "$T/under" "$T/fs" 2>"$T/bindfs.err" &
bp=$!
trap 'kill -CONT $bp 2>/dev/null; fusermount -u "$T/fs" 2>/dev/null || umount "$T/fs" 2>/dev/null; kill $bp 2>/dev/null; sm_cleanup' EXIT
for _ in $(seq 50); do
	[ "$(stat -c %u "$T/fs" 2>/dev/null)" = 0 ] && break
	kill -0 $bp 2>/dev/null || skip "no FUSE file system can be mounted here: $(cat "$T/bindfs.err")"
	sleep 0.1
done
[ "$(stat -c '%u %a' "$T/fs")" = "0 700" ] || fail "bindfs shows $(stat -c '%u %a' "$T/fs"), not root's 0700"
kill -STOP $bp
# Its cached attributes out of date (FUSE's default: 1 s): any stat now
# asks the stopped server, and waits.
sleep 2
timeout -s KILL 5 stat "$T/fs" >/dev/null 2>&1 &&
	fail "a stat of the stopped FUSE mount returned: the test shows nothing"

cat >"$T/prog.py" <<'PY'
import socket
a, b = socket.socketpair()
a.sendall(b"x" * 1000)
assert len(b.recv(4096)) == 1000
a.close(); b.close()
print("ran")
PY

# (1) The state directory on it.
t0=$(date +%s)
timeout -s KILL 20 env LD_PRELOAD="$LIB" SOCKMETER_STATE="$T/fs" SOCKMETER_LOG="$T/x.%p.log" \
	"$PY" "$T/prog.py" >"$T/p1.out" 2>"$T/p1.err"
rc=$?
[ $rc = 0 ] && [ "$(cat "$T/p1.out")" = ran ] ||
	fail "a program whose state directory is a stopped FUSE mount: rc $rc (137: held, killed) after $(($(date +%s) - t0)) s; $(cat "$T/p1.err")"
grep -q "state directory $T/fs: on a FUSE file system" "$T/p1.err" ||
	fail "no word of the FUSE state directory: $(cat "$T/p1.err")"

# (3) Root's recovery of it: at once, with its reason.
timeout -s KILL 20 "$SM_TOP/build/sockmeter-recover" "$T/fs" >"$T/rec.out" 2>&1
rc=$?
[ $rc = 137 ] && fail "root's sockmeter recover of the stopped FUSE mount was held (killed after 20 s)"
grep -q "$T/fs: on a FUSE file system, whose owners are its server's word; left alone" "$T/rec.out" ||
	fail "root's recovery said (rc $rc): $(cat "$T/rec.out")"

# In a mount namespace of the test's own, where only it sees the mount:
# in_ns MOUNTPOINT CMD... - a stopped FUSE mount (bindfs over a
# directory of nobody's, shown as root's 0700) made on MOUNTPOINT, then
# CMD under `timeout -s KILL 20`; its status (137: held, and killed).
command -v unshare >/dev/null || skip "no unshare: the default directories' cases not run"
mkdir -p "$T/under2"
chown nobody "$T/under2"
chmod 700 "$T/under2"
cat >"$T/ns.sh" <<NS
mp=\$1
shift
mkdir -p "\$mp" && chmod 700 "\$mp" || exit 3
bindfs -f -o nonempty --force-user=root --force-group=root --perms=0700 "$T/under2" "\$mp" 2>/dev/null &
bp2=\$!
for _ in \$(seq 50); do
	grep -q " \$mp .* fuse" /proc/self/mountinfo && break
	sleep 0.1
done
grep -q " \$mp .* fuse" /proc/self/mountinfo || exit 4
kill -STOP \$bp2
sleep 2
timeout -s KILL 20 "\$@"
rc=\$?
kill -CONT \$bp2
umount "\$mp" 2>/dev/null
kill \$bp2 2>/dev/null
exit \$rc
NS
in_ns() {
	unshare -m --propagation private bash "$T/ns.sh" "$@"
	local rc=$?
	case $rc in
	3 | 4) skip "the default directories' cases not run: no mount of its own could be made (rc $rc)" ;;
	esac
	return $rc
}

# (2) The default log directory, /tmp/sockmeter-0.
in_ns /tmp/sockmeter-0 env LD_PRELOAD="$LIB" SOCKMETER_STATE="$T/state" "$PY" "$T/prog.py" \
	>"$T/p2.out" 2>"$T/p2.err"
rc=$?
[ $rc = 0 ] && [ "$(cat "$T/p2.out")" = ran ] ||
	fail "a program whose default log directory is a stopped FUSE mount: rc $rc (137: held, killed); $(cat "$T/p2.err")"
grep -q "log /tmp/sockmeter-0/python3[^ ]*: its directory is on a FUSE file system" "$T/p2.err" ||
	fail "no word of the FUSE log directory: $(cat "$T/p2.err")"

# (4) A root program's fork child that becomes nobody before its first
# socket: the state directory it then makes its file in,
# /dev/shm/sockmeter-65534, made a stopped FUSE mount by someone else
# first.  The file is refused there, and its ticker says why
# (sm_durable_say_refused): its stat of the directory held that ticker
# for good before, and the child's records, its exit record too, were
# never written.
mkdir -p "$T/logs"
chmod 1777 "$T/logs"
cat >"$T/drop.py" <<'PY'
import os, socket, time
pid = os.fork()
if pid == 0:
    os.setgid(65534); os.setuid(65534)
    a, b = socket.socketpair()
    a.sendall(b"x" * 1000)
    assert len(b.recv(4096)) == 1000
    a.close(); b.close()
    time.sleep(1.5)  # a tick of its ticker, which says what it has
    os._exit(0)
_, status = os.waitpid(pid, 0)
assert status == 0, status
print(pid)
PY
in_ns /dev/shm/sockmeter-65534 env LD_PRELOAD="$LIB" SOCKMETER_STATE=/dev/shm/sockmeter-%u SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/d.%p.log" "$PY" "$T/drop.py" \
	>"$T/p4.out" 2>"$T/p4.err"
rc=$?
cpid=$(cat "$T/p4.out")
[ $rc = 0 ] && [ -n "$cpid" ] ||
	fail "a root program's child becoming nobody, whose state directory would be a stopped FUSE mount: rc $rc (137: held, killed); $(cat "$T/p4.err")"
expect_eq "the child's bytes_out" "$(q "$T/logs/d.$cpid.log" "tot('bytes_out')")" 1000
# Said by its ticker, which a stat of the mount held for good before.
grep -q "the state directory /dev/shm/sockmeter-65534 is on a FUSE file system" "$T/p4.err" ||
	fail "no word of the child's FUSE state directory: $(cat "$T/p4.err")"
exit 0
