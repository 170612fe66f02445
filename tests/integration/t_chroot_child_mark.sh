# A fork child that goes into a chroot before it touched the sockets it
# inherited, then drops root (OpenSMTPD's purge and queue children, any
# privilege-separated worker that confines itself first): its state file
# is made at the chroot (the classification finds the sockets), as root,
# and must be marked then (mode 0400, the log path kept in an extended
# attribute), since the new user keeps the file mapped and writable.
# Before: the mark came before the file existed and did nothing; the file
# stayed 0600, root's recovery would take its header's word, and after the
# chroot the mark's retry printed "cannot mark or remove this state file"
# on the program's stderr.
#  - the child ends by itself: no line on stderr, its file was 0400 while
#    it ran as nobody, its record exact;
#  - the child is killed: root's recovery writes its record, exact, into
#    the log the child named before the change (not beside the file).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (chroot, change of uid)"
pybin=/usr/bin/python3
[ -x "$pybin" ] || pybin=$PY
chmod 755 "$T"
mkdir -m 755 "$T/jail" "$T/state"
mkdir -m 1777 "$T/log"
cat >"$T/c.py" <<'PYEOF'
import os, signal, socket, sys, time
how, jail, sdir = sys.argv[1], sys.argv[2], sys.argv[3]
a, b = socket.socketpair()
a.sendall(b"x" * 10)
b.recv(10)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.chroot(jail)
    os.chdir("/")
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    b.sendall(b"y" * 700)
    os.write(w, b"1")
    if how == "kill":
        time.sleep(60)
    os._exit(0)
os.close(w)
os.read(r, 1)
# The child's file, seen from outside while it runs as nobody.
mode = [oct(os.stat(os.path.join(sdir, f)).st_mode & 0o777)
        for f in os.listdir(sdir) if f.startswith("%d-" % pid)]
print("child=%d\nmode=%s" % (pid, ",".join(mode)), flush=True)
if how == "kill":
    os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
got = 0
while got < 700:
    got += len(a.recv(1000))
print("got=%d" % got, flush=True)
PYEOF
for how in exit kill; do
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/$how.%p.log" \
		SOCKMETER_STATE="$T/state" sm "$pybin" "$T/c.py" "$how" "$T/jail" \
		"$T/state" >"$T/$how.out" 2>"$T/$how.err" ||
		fail "$how: $(tail -n 3 "$T/$how.err")"
	grep -q 'got=700' "$T/$how.out" || fail "$how: $(cat "$T/$how.out")"
	[ -s "$T/$how.err" ] && fail "$how: stderr: $(head -n 3 "$T/$how.err")"
	child=$(field child "$T/$how.out")
	expect_eq "$how: the child's state file while it ran as nobody" \
		"$(field mode "$T/$how.out")" 0o400
	if [ "$how" = kill ]; then
		"$SM_TOP/build/sockmeter-recover" "$T/state" >"$T/rec" 2>&1 ||
			fail "recover: $(cat "$T/rec")"
		ls "$T/state/$child-"*.recovered.log 2>/dev/null &&
			fail "the child's record went beside its state file: $(cat "$T/rec")"
	fi
	log=$(one_log "$T/log/$how.$child.log")
	want='["exit", 700]'
	[ "$how" = kill ] && want='["killed", 700]'
	expect_eq "$how: the child's [end, bytes_out]" \
		"$(q "$log" "[E.get('end', 'exit'), T['bytes_out']]")" "$want"
done
exit 0
