# The default log directory (/tmp/sockmeter-UID) removed while a process
# runs (a cleaner of /tmp, an rm -r): it is made again, with the checks of
# the first time, and the records go on in it.  Before, one warning, and
# every later record was lost until a recovery.  In a mount namespace with
# a /tmp of its own, so that no real directory of the user's is touched.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (a private /tmp in a mount namespace)"
command -v unshare >/dev/null || skip "no unshare"
unshare -m true 2>/dev/null || skip "no mount namespace here"

cat >"$T/rm.py" <<'PYEOF'
import os, shutil, socket, time
d = "/tmp/sockmeter-%d" % os.geteuid()
a, b = socket.socketpair()
a.sendall(b"x" * 100)
b.recv(1000)
time.sleep(0.8)  # an interval record (0.2 s): the directory is made
assert os.path.isdir(d), "no %s after an interval" % d
shutil.rmtree(d)
a.sendall(b"x" * 200)
b.recv(1000)
a.close()
time.sleep(0.5)  # interval records after the removal
print("pid=%d" % os.getpid())
PYEOF
# \$T is under /tmp: seen at /mnt (in the namespace only) once the new
# /tmp hides it, with a copy of the library (a build under /tmp would be
# hidden too); the log is copied out before the namespace goes.
cp "$LIB" "$T/lib.so"
cat >"$T/ns.sh" <<SHEOF
set -e
mount --bind "$T" /mnt
mount -t tmpfs -o mode=1777 tmpfs /tmp
env -u SOCKMETER_LOG LD_PRELOAD=/mnt/lib.so SOCKMETER_FORMAT=json \\
	SOCKMETER_INTERVAL=0.2 "$PY" /mnt/rm.py >/mnt/out 2>/mnt/err
ls -la /tmp/sockmeter-0 >/mnt/ls 2>&1 || true
cp /tmp/sockmeter-0/*.log /mnt/ 2>/dev/null || true
SHEOF
unset SOCKMETER_LOG
timeout 30 unshare -m --propagation private sh "$T/ns.sh" ||
	fail "the run failed: $(tail -n 3 "$T/err")"
[ -s "$T/err" ] && fail "stderr: $(head -n 3 "$T/err")"
pid=$(field pid "$T/out")
log=$(one_log "$T/*.$pid.log")
grep -q '^drwx------ .* root ' "$T/ls" || fail "the directory made again: $(head -n 2 "$T/ls")"
# Only what was written after the removal is in the new file: the exit
# record, with the totals of the whole run.
expect_eq "bytes_out in the exit record" "$(q "$log" "tot('bytes_out')")" 300
check "$log" "len(IV) >= 1" "no interval record after the removal"
exit 0
