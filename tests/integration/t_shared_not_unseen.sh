# Bytes another process moved on our connection are not "unseen": a TCP
# socket passed to another process with SCM_RIGHTS, and one a shell run by
# system() or popen() wrote to, are shared; their close records carry no
# bytes_*_unseen (the kernel's counts are not this process's alone), and
# the other process's own log has the bytes.  Before, the sender's record
# said bytes_out_unseen=50000 for the bytes its child wrote (counted twice
# over the two logs), and system()'s shell made 30000 bytes "unseen".
. "$(dirname "$0")/lib.sh"
need head
cat >"$T/share.py" <<'PYEOF'
import os, socket, sys
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4)
port = srv.getsockname()[1]
u1, u2 = socket.socketpair()
pid = os.fork()
if pid == 0:
    # Gets the connection from its parent, writes and reads on it.
    _, fds, _, _ = socket.recv_fds(u2, 16, 1)
    c = socket.socket(fileno=fds[0])
    c.sendall(b"a" * 50000)
    got = 0
    while got < 20000:
        got += len(c.recv(65536))
    c.close()
    print("child", os.getpid(), flush=True)
    os._exit(0)
c = socket.create_connection(("127.0.0.1", port))
a, _ = srv.accept()
socket.send_fds(u1, [b"x"], [c.fileno()])
got = 0
while got < 50000:
    got += len(a.recv(65536))
a.sendall(b"b" * 20000)
os.waitpid(pid, 0)
c.close()
a.close()
# system() and popen(): a shell writes to an inherited connection.
for how in ("system", "popen"):
    c = socket.create_connection(("127.0.0.1", port))
    a, _ = srv.accept()
    c.set_inheritable(True)
    cmd = "head -c 30000 /dev/zero >&%d" % c.fileno()
    if how == "system":
        assert os.system(cmd) == 0
    else:
        # libc's popen (Python's os.popen is subprocess, not popen).
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.popen.restype = ctypes.c_void_p
        libc.pclose.argtypes = [ctypes.c_void_p]
        fp = libc.popen(cmd.encode(), b"r")
        assert fp and libc.pclose(fp) == 0
    got = 0
    while got < 30000:
        got += len(a.recv(65536))
    c.close()
    a.close()
print("parent", os.getpid(), flush=True)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/%n.%p.log" sm "$PY" "$T/share.py" >"$T/out" ||
	fail "share.py failed"
parent=$(awk '$1 == "parent" { print $2 }' "$T/out")
child=$(awk '$1 == "child" { print $2 }' "$T/out")
"$PY" - "$T" "$parent" "$child" <<'PYEOF' || fail "records: $(cat "$T"/*.log)"
import glob, json, sys
d, parent, child = sys.argv[1:]
def fds(path):
    return [f for l in open(path) for r in [json.loads(l)] if r["type"] == "close"
            for f in r["fds"] if f.get("kind") == "tcp"]
p = fds("%s/python3.%s.log" % (d, parent))
c = fds("%s/python3.%s.log" % (d, child))
# The child counted what it moved on the passed socket.
assert [(f["bytes_out"], f["bytes_in"]) for f in c] == [(50000, 20000)], c
# The parent: three client sockets, none with unseen bytes; three accepted
# ones that read 50000 and 30000 twice.
assert sorted(f["bytes_in"] for f in p if f["bytes_in"]) == [30000, 30000, 50000], p
for f in p:
    assert not f.get("bytes_out_unseen") and not f.get("bytes_in_unseen"), f
# Each head counted its 30000 bytes (it exits with its stdout open).
head = glob.glob("%s/head.*.log" % d)
assert len(head) == 2, head
for h in head:
    recs = [json.loads(l) for l in open(h)]
    assert recs[-1]["type"] == "exit", recs
    assert recs[-1]["totals"]["bytes_out"] == 30000, recs[-1]
PYEOF
exit 0
