# A relative log path is taken from the directory the program started in,
# for its fork children too: a child that chdir()s before its first
# record (a daemon's chdir("/")) still writes beside its parent's log.
# Before, the child set its log up after the chdir and lost it (no file,
# no warning).  The directory's name holds a '%', which must not be read
# as a template escape.
. "$(dirname "$0")/lib.sh"
d="$T/run%p dir"
mkdir -p "$d/rel" "$T/elsewhere"
cd "$d" || fail "cd"
SOCKMETER_LOG='rel/%n.%p.log' sm "$PY" - "$T/elsewhere" >"$T/out" <<'PYEOF' || fail "python failed"
import os, socket, sys
a, b = socket.socketpair()
a.send(b"x")
b.recv(1)
pid = os.fork()
if pid == 0:
    os.chdir(sys.argv[1])
    c, d = socket.socketpair()
    c.send(b"y" * 7)
    d.recv(7)
    print("child", os.getpid(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("parent", os.getpid(), flush=True)
PYEOF
parent=$(awk '$1 == "parent" { print $2 }' "$T/out")
child=$(awk '$1 == "child" { print $2 }' "$T/out")
grep -q "totals: bytes_in=1 calls_in=1 bytes_out=1 " "$d/rel/python3.$parent.log" ||
	fail "parent's log: $(ls -R "$T")"
grep -q "totals: bytes_in=7 calls_in=1 bytes_out=7 " "$d/rel/python3.$child.log" ||
	fail "child's log not beside the parent's: $(ls -R "$T")"
[ -z "$(find "$T/elsewhere" -type f)" ] || fail "a log in the child's new directory"
exit 0
