# A compromised worker must not get root through root's recovery.  A
# forked child of a root process has its state file made as root, in
# root's directory, before it drops to nobody (an explicit log path: its
# fds are looked at before the change); after the drop it still maps that
# file, writable.  Here it rewrites its header (the log path, at offset
# 168 of the version-3 header, now $T/secret/owned in a directory only
# root may enter, and the uid at 56, now nobody's) and kills itself.
# Root's recovery used to create that file and give it to nobody (with
# /etc/ld.so.preload or /etc/crontab in its place, nobody's code as
# root).  Now the file was marked at the drop (0400), and the log path the
# child named before the drop kept in an extended attribute of the file
# that nobody can set (trusted.sockmeter.log): root's recovery writes the
# record there, the child's own log, and touches nothing the header names.
# Without the attribute (removed here, as on a file system without such
# attributes) it writes the record beside the file,
# PID-START.recovered.log (root's, with the child's 10 bytes), and names
# why.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
chmod 755 "$T"
mkdir -m 1777 "$T/log"
mkdir -m 700 "$T/secret"
mkdir -m 755 "$T/state"
cat >"$T/evil.py" <<'PYEOF'
import ctypes, os, signal, socket, sys
target = sys.argv[1].encode() + b"\0"
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
pid = os.fork()
if pid == 0:
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    s.sendall(b"y" * 10)
    done = False
    for line in open("/proc/self/maps"):
        f = line.split()
        if f[-1].endswith(".state") and int(f[2], 16) == 0:
            a = int(f[0].split("-")[0], 16)
            ctypes.memmove(a + 168, target, len(target))
            ctypes.c_uint32.from_address(a + 56).value = 65534
            done = True
            break
    print("patched=%d child=%d" % (done, os.getpid()), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(pid, 0)
got = 0
while got < 10:
    got += len(c.recv(10 - got))
PYEOF
for attr in kept none; do
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/%n.%p.log" SOCKMETER_STATE="$T/state/%u" \
	sm "$PY" "$T/evil.py" "$T/secret/owned" >"$T/out" 2>"$T/err" ||
	fail "$attr: evil.py: $(cat "$T/err")"
grep -q "patched=1" "$T/out" || fail "the child found no state file of its own to patch: $(cat "$T/out")"
child=$(sed -n 's/.*child=\([0-9]*\).*/\1/p' "$T/out")
f=$(find "$T/state/0" -name "$child-*.state")
[ -n "$f" ] || fail "no state file of the child in root's directory: $(ls -la "$T/state/0")"
expect_eq "$attr: the child's state file's mode (marked at the drop)" "$(stat -c %a "$f")" 400
expect_eq "$attr: the log path kept beside the header" \
	"$("$PY" -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.sockmeter.log").decode())' "$f")" \
	"$T/log/python3.$child.log"
if [ "$attr" = none ]; then
	"$PY" -c 'import os,sys; os.removexattr(sys.argv[1], "trusted.sockmeter.log")' "$f" ||
		fail "cannot remove the attribute"
fi
"$SM_TOP/build/sockmeter-recover" "$T/state/0" >"$T/rec.out" 2>&1 ||
	fail "$attr: recover: $(cat "$T/rec.out")"
[ ! -e "$T/secret/owned" ] ||
	fail "$attr: root's recovery wrote where the child's header said: $(stat -c '%U %a' "$T/secret/owned")"
rec=${f%.state}.recovered.log
if [ "$attr" = kept ]; then
	[ ! -e "$rec" ] || fail "kept: a record beside the state file: $(cat "$T/rec.out")"
	rec=$T/log/python3.$child.log
	[ -f "$rec" ] || fail "kept: no record in the child's log: $(cat "$T/rec.out")"
	expect_eq "kept: owner of the child's log" "$(stat -c %U "$rec")" root
else
	grep -q "changed user, who could write it since" "$T/rec.out" ||
		fail "recover did not say why: $(cat "$T/rec.out")"
	[ -f "$rec" ] || fail "no $rec: $(cat "$T/rec.out")"
	expect_eq "owner of $rec" "$(stat -c %U "$rec")" root
fi
expect_eq "$attr: the child's record [end, bytes_out]" \
	"$(q "$rec" "[E.get('end'), E['totals']['bytes_out']]")" '["killed", 10]'
done
exit 0
