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
# recover` of the mount returns at once and says why it leaves it alone.
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

# (2) The default log directory, /tmp/sockmeter-0, made a stopped FUSE
# mount where only this test sees it (a mount namespace of its own).
command -v unshare >/dev/null || skip "no unshare: the log directory's case not run"
mkdir -p "$T/under2"
chown nobody "$T/under2"
chmod 700 "$T/under2"
cat >"$T/ns.sh" <<NS
mkdir -p /tmp/sockmeter-0 && chmod 700 /tmp/sockmeter-0 || exit 3
bindfs -f -o nonempty --force-user=root --force-group=root --perms=0700 "$T/under2" /tmp/sockmeter-0 2>/dev/null &
bp2=\$!
for _ in \$(seq 50); do
	grep -q " /tmp/sockmeter-0 .* fuse" /proc/self/mountinfo && break
	sleep 0.1
done
grep -q " /tmp/sockmeter-0 .* fuse" /proc/self/mountinfo || exit 4
kill -STOP \$bp2
sleep 2
timeout -s KILL 20 env LD_PRELOAD="$LIB" SOCKMETER_STATE="$T/state" "$PY" "$T/prog.py"
rc=\$?
kill -CONT \$bp2
umount /tmp/sockmeter-0 2>/dev/null
kill \$bp2 2>/dev/null
exit \$rc
NS
unshare -m --propagation private bash "$T/ns.sh" >"$T/p2.out" 2>"$T/p2.err"
rc=$?
case $rc in
3 | 4) skip "the log directory's case not run: no mount of its own could be made (rc $rc)" ;;
esac
[ $rc = 0 ] && [ "$(cat "$T/p2.out")" = ran ] ||
	fail "a program whose default log directory is a stopped FUSE mount: rc $rc (137: held, killed); $(cat "$T/p2.err")"
grep -q "log /tmp/sockmeter-0/python3[^ ]*: its directory is on a FUSE file system" "$T/p2.err" ||
	fail "no word of the FUSE log directory: $(cat "$T/p2.err")"
exit 0
