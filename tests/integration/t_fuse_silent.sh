# A FUSE mount whose server does not answer, on a directory the library
# uses, holds nothing: a stat, statfs or open there waits in the kernel
# until the server answers (no signal but SIGKILL ends it), and a user's
# FUSE mount (allow_other) made on /tmp/sockmeter-0 or
# /dev/shm/sockmeter-0 before root's first program did so held every
# preloaded root program at its start.  The library tells a FUSE mount
# without asking its server (statx AT_STATX_DONT_SYNC, mountinfo) and
# refuses it with a message.  Here bindfs (FUSE) is stopped (SIGSTOP)
# after mounting, and each program runs to its end with the message:
#  (1) one whose state directory is the mount;
#  (2) one whose default log directory, /tmp/sockmeter-0, is;
#  (2b) a state directory that is a link of nobody's, in a sticky
#       directory open to all as /dev/shm is, into the mount (refused as
#       a link, never looked up in);
#  (3) root's `sockmeter recover` of the mount returns at once and says
#      why it leaves it alone;
#  (4) a root program's fork child that becomes nobody, whose state
#      directory as nobody, /dev/shm/sockmeter-65534, is the mount;
#  (5) one whose default log directory is removed while it runs and made
#      again as the mount (a cleaner of /tmp, then a user): its next
#      batch is refused, not held.
# The whole test runs in a mount namespace of its own, over a tmpfs of
# its own on /dev/shm: no mount of it is seen outside, none outlives it.
if [ -z "${SM_FUSE_NS:-}" ] && [ "$(id -u)" = 0 ] &&
	unshare -m --propagation private true 2>/dev/null; then
	SM_FUSE_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (mounts a FUSE file system)"
[ -n "${SM_FUSE_NS:-}" ] || skip "no mount namespace of its own (unshare -m)"
command -v bindfs >/dev/null || skip "no bindfs (scripts/install-deps installs it)"
mount -t tmpfs -o mode=1777 sm-shm /dev/shm || skip "no tmpfs of its own on /dev/shm"
# (The run's private state directory is under the /dev/shm just hidden.)
export SOCKMETER_STATE=/dev/shm/sockmeter-%u
mkdir -p "$T/under" "$T/fs" "$T/logs"
chmod 755 "$T"
chmod 1777 "$T/logs"
chown nobody "$T/under"
chmod 700 "$T/under"

BINDFS=()
# stopped_fuse MOUNTPOINT - bindfs over $T/under (nobody's, shown as
# root's 0700) on MOUNTPOINT, then stopped, its cached attributes out of
# date (FUSE's default: 1 s): any stat there now waits.
stopped_fuse() {
	bindfs -f -o nonempty --force-user=root --force-group=root --perms=0700 \
		"$T/under" "$1" 2>"$T/bindfs.err" &
	local bp=$! i
	BINDFS+=("$bp")
	for i in $(seq 50); do
		grep -q " $1 .* fuse" /proc/self/mountinfo && break
		kill -0 "$bp" 2>/dev/null ||
			skip "no FUSE file system can be mounted here: $(cat "$T/bindfs.err")"
		sleep 0.1
	done
	grep -q " $1 .* fuse" /proc/self/mountinfo || skip "bindfs did not mount $1"
	[ "$(stat -c '%u %a' "$1")" = "0 700" ] || fail "bindfs shows $(stat -c '%u %a' "$1"), not root's 0700"
	kill -STOP "$bp"
	sleep 2
	timeout -s KILL 5 stat "$1" >/dev/null 2>&1 &&
		fail "a stat of the stopped FUSE mount on $1 returned: the test shows nothing"
	return 0
}
unmount_all() {
	local p
	for p in "${BINDFS[@]}"; do
		kill -CONT "$p" 2>/dev/null
	done
	grep " fuse" /proc/self/mountinfo | awk '{ print $5 }' | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	for p in "${BINDFS[@]}"; do
		kill "$p" 2>/dev/null
	done
	BINDFS=()
}
trap 'st=$?; unmount_all; (exit $st); sm_cleanup' EXIT

cat >"$T/prog.py" <<'PY'
import socket
a, b = socket.socketpair()
a.sendall(b"x" * 1000)
assert len(b.recv(4096)) == 1000
a.close(); b.close()
print("ran")
PY
# ran NAME CMD... - CMD under `timeout -s KILL 20` (137: held, killed),
# its output in $T/NAME.out and .err; it must end with status 0 and print
# "ran".
ran() {
	local name=$1 rc
	shift
	timeout -s KILL 20 "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc = 0 ] && [ "$(cat "$T/$name.out")" = ran ] ||
		fail "$name: status $rc (137: held, killed); $(cat "$T/$name.err")"
}

stopped_fuse "$T/fs"

# (1) The state directory on it.
ran p1 env LD_PRELOAD="$LIB" SOCKMETER_STATE="$T/fs" SOCKMETER_LOG="$T/x.%p.log" "$PY" "$T/prog.py"
grep -q "state directory $T/fs: on a FUSE file system" "$T/p1.err" ||
	fail "no word of the FUSE state directory: $(cat "$T/p1.err")"

# (3) Root's recovery of it: at once, with its reason.
timeout -s KILL 20 "$SM_TOP/build/sockmeter-recover" "$T/fs" >"$T/rec.out" 2>&1
rc=$?
[ $rc = 137 ] && fail "root's sockmeter recover of the stopped FUSE mount was held (killed after 20 s)"
grep -q "$T/fs: on a FUSE file system, whose owners are its server's word; left alone" "$T/rec.out" ||
	fail "root's recovery said (rc $rc): $(cat "$T/rec.out")"

# (2) The default log directory.  /tmp is the machine's (only the mount
# is this test's): /tmp/sockmeter-0 is made if missing, root's 0700, as
# root's first preloaded program would.
mkdir -p /tmp/sockmeter-0
chmod 700 /tmp/sockmeter-0
stopped_fuse /tmp/sockmeter-0
ran p2 env LD_PRELOAD="$LIB" "$PY" "$T/prog.py"
grep -q "log /tmp/sockmeter-0/python3[^ ]*: its directory is on a FUSE file system" "$T/p2.err" ||
	fail "no word of the FUSE log directory: $(cat "$T/p2.err")"
umount -l /tmp/sockmeter-0

# (2b) A link of nobody's as the state directory, into the mount, in a
# directory open to all (1777, as /dev/shm and /tmp are): refused as a
# link.
mkdir -p "$T/ln"
mount -t tmpfs -o mode=1777 sm-ln "$T/ln"
ln -s "$T/fs/sub" "$T/ln/sockmeter-0"
chown -h nobody "$T/ln/sockmeter-0"
ran p2b env LD_PRELOAD="$LIB" SOCKMETER_STATE="$T/ln/sockmeter-0" SOCKMETER_LOG="$T/x.%p.log" "$PY" "$T/prog.py"
grep -q "state directory $T/ln/sockmeter-0: not a directory owned by this user" "$T/p2b.err" ||
	fail "no word of the linked state directory: $(cat "$T/p2b.err")"

# (4) A root program's fork child that becomes nobody before its first
# socket, its state directory as nobody the mount (made by someone else
# first).  Its file is refused there, and its ticker says why
# (sm_durable_say_refused): its stat of the directory held that ticker
# for good before, and the child's records, its exit record too, were
# never written.  (4b) With %u in its log path, its setuid asks whether
# nobody could use that directory (state_dir_usable_by: no, and the file
# is made as root before the change), which a stat there held for good.
mkdir -p /dev/shm/sockmeter-65534
stopped_fuse /dev/shm/sockmeter-65534
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
open(os.environ["PIDFILE"], "w").write(str(pid))
print("ran")
PY
ran p4 env LD_PRELOAD="$LIB" SOCKMETER_STATE=/dev/shm/sockmeter-%u SOCKMETER_FORMAT=json \
	SOCKMETER_LOG="$T/logs/d.%p.log" PIDFILE="$T/cpid" "$PY" "$T/drop.py"
cpid=$(cat "$T/cpid")
expect_eq "(4) the child's bytes_out" "$(q "$T/logs/d.$cpid.log" "tot('bytes_out')")" 1000
grep -q "the state directory /dev/shm/sockmeter-65534 is on a FUSE file system" "$T/p4.err" ||
	fail "no word of the child's FUSE state directory: $(cat "$T/p4.err")"
ran p4b env LD_PRELOAD="$LIB" SOCKMETER_STATE=/dev/shm/sockmeter-%u SOCKMETER_FORMAT=json \
	SOCKMETER_LOG="$T/logs/d.%u.%p.log" PIDFILE="$T/cpid" "$PY" "$T/drop.py"
cpid=$(cat "$T/cpid")
expect_eq "(4b) the child's bytes_out" "$(q "$T/logs/d.65534.$cpid.log" "tot('bytes_out')")" 1000
umount -l /dev/shm/sockmeter-65534

# (5) The default log directory, fine at the start (a tmpfs here), then
# removed and made again as the stopped mount while the program runs.
mount -t tmpfs -o mode=0700 sm-log /tmp/sockmeter-0
cat >"$T/swap.py" <<'PY'
import os, socket, sys, time
def move():
    a, b = socket.socketpair()
    a.sendall(b"x" * 1000)
    assert len(b.recv(4096)) == 1000
    a.close(); b.close()
move()
time.sleep(1.5)  # its close records written
open(sys.argv[1], "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
move()
time.sleep(1.5)  # a batch into the mount
print("ran")
PY
rm -f "$T/first" "$T/swapped"
timeout -s KILL 30 env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json "$PY" "$T/swap.py" "$T/first" "$T/swapped" \
	>"$T/p5.out" 2>"$T/p5.err" &
p5=$!
for _ in $(seq 100); do
	[ -e "$T/first" ] && break
	sleep 0.1
done
[ -e "$T/first" ] || fail "(5): the program did not write its first batch: $(cat "$T/p5.err")"
log5=$(ls /tmp/sockmeter-0/python3.*.log 2>/dev/null | head -n 1)
[ -n "$log5" ] || fail "(5): no log in the default directory before the swap"
umount -l /tmp/sockmeter-0
stopped_fuse /tmp/sockmeter-0
touch "$T/swapped"
wait $p5
rc=$?
[ $rc = 0 ] && [ "$(cat "$T/p5.out")" = ran ] ||
	fail "(5): status $rc (137: held, killed); $(cat "$T/p5.err")"
grep -q "cannot write" "$T/p5.err" ||
	fail "(5): no word of the refused batch: $(cat "$T/p5.err")"
exit 0
