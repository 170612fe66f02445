# A fork child that changes its effective uid before its first connection,
# then is killed (SIGKILL): its numbers must come back from its state file,
# whatever the change.  The log follows the uid ($T/log/%u.%n.%p.log), as
# the default path does, and [state] dir names it ($T/<parent>/%u).  The
# child (python) drops root, reads 1,000 bytes its parent sends over TCP
# and sends 3,000 back, then waits to be killed.
#  - seteuid only (the real uid stays 0), state directory's parent open
#    to all (1777): the file is in nobody's directory, and nobody's
#    recovery writes the killed child's record into nobody's log.  Before,
#    %u of [state] dir was the real uid: root's directory, which the
#    effective uid nobody may not use; the child had no file, silently,
#    and its numbers were lost.
#  - setresuid (for good), state directory's parent closed to nobody
#    (0755): nobody could not make its directory, so the file is made
#    before the change, in root's, and marked (mode 0400) at the change:
#    nobody could write its header since, so root's recovery writes the
#    record beside it (PID-START.recovered.log, root's), not into the log
#    the header names, and says so.  Before: no file, numbers lost.
#  - setresuid, [state] dir fixed (no %u: $T/fixed, root's, 0700), the
#    log still following the uid: nobody could not use that directory
#    either, so the file is made before the change, as root, and marked;
#    root's recovery writes the record beside it.  Before: the template
#    was asked whether it names the uid, not whether the new user could
#    use it: no file, silently, numbers lost.
#  - the same, the child tracking nothing at the change (it connects
#    after it): its file is made at the change all the same.  Before: it
#    was left to the first connection, as nobody, who could not make it:
#    no file, silently.
#  - the same child ending by itself: its record written, no state file
#    left in nobody's directory (it removed its own).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
nuid=$(id -u nobody) || fail "no user nobody"
chmod 755 "$T"
mkdir -m 1777 "$T/log"
cat >"$T/child.py" <<'PYEOF'
import os, signal, socket, sys, time
how, nuid, end = sys.argv[1], int(sys.argv[2]), sys.argv[3]
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    if how == "seteuid":
        os.seteuid(nuid)
    else:
        os.setresgid(nuid, nuid, nuid)
        os.setresuid(nuid, nuid, nuid)
    got = 0
    while got < 1000:
        got += len(s.recv(1000 - got))
    s.sendall(b"y" * 3000)
    os.write(w, b"%d %d\n" % (os.getpid(), got))
    if end == "killed":
        time.sleep(60)
    os._exit(0)
os.close(w)
c.sendall(b"x" * 1000)
back = 0
while back < 3000:
    back += len(c.recv(3000 - back))
line = os.read(r, 100).decode().split()
if end == "killed":
    os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("child=%s got=%s back=%d" % (line[0], line[1], back))
PYEOF

# The child connects only after the change: it holds no connection then.
cat >"$T/late.py" <<'PYEOF'
import os, signal, socket, sys, time
nuid = int(sys.argv[2])
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    port = l.getsockname()[1]
    l.close()  # nothing tracked left at the change
    os.setresgid(nuid, nuid, nuid)
    os.setresuid(nuid, nuid, nuid)
    # (A bytes host: the idna codec, under /root with pyenv's python,
    # cannot be loaded as nobody.)
    c = socket.socket()
    c.connect((b"127.0.0.1", port))
    got = 0
    while got < 1000:
        got += len(c.recv(1000 - got))
    c.sendall(b"y" * 3000)
    os.write(w, b"%d %d\n" % (os.getpid(), got))
    time.sleep(60)
    os._exit(0)
os.close(w)
s, _ = l.accept()
s.sendall(b"x" * 1000)
back = 0
while back < 3000:
    back += len(s.recv(3000 - back))
line = os.read(r, 100).decode().split()
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("child=%s got=%s back=%d" % (line[0], line[1], back))
PYEOF

# run NAME HOW END PARENT_MODE [STATE_DIR [SCRIPT]]: the child's pid into
# $child.
run() {
	mkdir -m "$4" "$T/$1"
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/%u.%n.%p.log" \
		SOCKMETER_STATE="${5:-$T/$1/%u}" sm "$PY" "$T/${6:-child.py}" "$2" "$nuid" "$3" \
		>"$T/$1.out" 2>"$T/$1.err" || fail "$1: $(cat "$T/$1.err")"
	[ -s "$T/$1.err" ] && fail "$1: stderr: $(head -n 3 "$T/$1.err")"
	grep -q "got=1000 back=3000" "$T/$1.out" || fail "$1: $(cat "$T/$1.out")"
	child=$(sed -n 's/.*child=\([0-9]*\).*/\1/p' "$T/$1.out")
}

# killed_record NAME: the child's log holds one record, end killed, with
# exactly its bytes.
killed_record() {
	local log
	log=$(one_log "$T/log/$nuid.*.$child.log")
	expect_eq "$1: the killed child's record [end, bytes_in, bytes_out]" \
		"$(q "$log" "[E.get('end'), E['totals']['bytes_in'], E['totals']['bytes_out']]")" \
		'["killed", 1000, 3000]'
}

# seteuid only: the file in nobody's directory, recovered as nobody.
run seteuid seteuid killed 1777
f=$(find "$T/seteuid" -name "$child-*.state")
[ -n "$f" ] || fail "seteuid: the killed child left no state file: $(find "$T/seteuid" | tr '\n' ' ')"
expect_eq "seteuid: the file's directory" "$(dirname "$f")" "$T/seteuid/$nuid"
runuser -u nobody -- "$SM_TOP/build/sockmeter-recover" -q "$T/seteuid/$nuid" \
	2>"$T/r1.err" || fail "seteuid: nobody's recover: $(cat "$T/r1.err")"
killed_record seteuid

# root_recovered NAME DIR: the killed child's file was made in DIR before
# the change, as root, and marked; root's recovery writes its record
# beside it, not into the log the header names.
root_recovered() {
	local f rec
	f=$(find "$2" -name "$child-*.state")
	[ -n "$f" ] || fail "$1: the killed child left no state file: $(find "$T/$1" | tr '\n' ' ')"
	expect_eq "$1: the file's directory" "$(dirname "$f")" "$2"
	expect_eq "$1: the file's mode (marked at the change)" "$(stat -c %a "$f")" 400
	"$SM_TOP/build/sockmeter-recover" "$2" 2>"$T/$1.rec.err" ||
		fail "$1: root's recover: $(cat "$T/$1.rec.err")"
	# To the log the child named before the change (kept in the file's
	# extended attribute; %u was 0 then), never the header's.
	[ -e "${f%.state}.recovered.log" ] &&
		fail "$1: the record went beside the state file: $(cat "$T/$1.rec.err")"
	rec=$T/log/0.python3.$child.log
	[ -f "$rec" ] || fail "$1: no $rec: $(cat "$T/$1.rec.err")"
	[ -z "$(ls "$T/log/$nuid".*."$child".log 2>/dev/null)" ] ||
		fail "$1: root's recovery wrote into the log the header names"
	expect_eq "$1: the killed child's record [end, bytes_in, bytes_out]" \
		"$(q "$rec" "[E.get('end'), E['totals']['bytes_in'], E['totals']['bytes_out']]")" \
		'["killed", 1000, 3000]'
	expect_eq "$1: owner of $rec" "$(stat -c %u "$rec")" 0
}

# A state directory nobody could not make: the file in root's, made before
# the change.
run closed setresuid killed 755
root_recovered closed "$T/closed/0"

# A fixed state directory, root's: the same.
run fixed setresuid killed 755 "$T/fixed/st"
root_recovered fixed "$T/fixed/st"
# The same, the child connecting only after the change.
run late setresuid killed 755 "$T/late/st" late.py
root_recovered late "$T/late/st"

# Ending by itself, seteuid only: its own record, its file gone.
run clean seteuid exit 1777
log=$(one_log "$T/log/$nuid.*.$child.log")
expect_eq "clean: the child's record [end, bytes_in, bytes_out]" \
	"$(q "$log" "[E.get('end'), E['totals']['bytes_in'], E['totals']['bytes_out']]")" \
	'[null, 1000, 3000]'
left=$(find "$T/clean" -name "$child-*.state")
[ -z "$left" ] || fail "clean: the child's state file is left: $left"
exit 0
