# A fork child keeps what its parent's library knew: the names the parent
# resolved (a child's connection to an address the parent looked up
# carries peer_name) and where warnings go (fd 2 the stderr of start-up:
# the child's warning is on stderr, not in syslog).  The page the library
# wipes in fork children (MADV_WIPEONFORK) had both in it; the children
# came out with neither.
. "$(dirname "$0")/lib.sh"
cat >"$T/forker.py" <<'PYEOF'
import os, socket, sys
socket.getaddrinfo("localhost", 80)
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4)
port = srv.getsockname()[1]
def fetch():
    c = socket.create_connection(("127.0.0.1", port))
    a, _ = srv.accept()
    c.sendall(b"x" * 100)
    a.recv(100)
    c.close()
    a.close()
fetch()
pid = os.fork()
if pid == 0:
    # Its own log made a directory: a warning of the child's alone.
    if os.environ.get("CHILD_LOG_DIR"):
        os.mkdir(os.environ["CHILD_LOG_DIR"] + "/python3.%d.log" % os.getpid())
    fetch()
    print("child", os.getpid(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/%n.%p.log" sm "$PY" "$T/forker.py" >"$T/out" ||
	fail "forker.py failed"
child=$(awk '$1 == "child" { print $2 }' "$T/out")
[ -s "$T/python3.$child.log" ] || fail "no log of the child $child"
"$PY" - "$T/python3.$child.log" <<'PYEOF' || fail "child's record: $(cat "$T/python3.$child.log")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
fds = [f for r in recs if r["type"] == "close" for f in r["fds"]
       if f.get("kind") == "tcp" and f.get("bytes_out") == 100]
assert len(fds) == 1 and fds[0].get("peer_name") == "localhost", fds
PYEOF

# Warnings: a child whose log cannot be written says so on stderr (its
# own trouble: a line its parent said would not be said again).
mkdir "$T/l2"
CHILD_LOG_DIR=$T/l2 SOCKMETER_SYSLOG=off SOCKMETER_LOG="$T/l2/%n.%p.log" \
	sm "$PY" "$T/forker.py" >"$T/out2" 2>"$T/err2" || fail "forker.py failed"
child=$(awk '$1 == "child" { print $2 }' "$T/out2")
grep -q "^sockmeter: log $T/l2/python3.$child.log: cannot write" "$T/err2" ||
	fail "no warning from the child $child on stderr: $(cat "$T/err2")"
exit 0
