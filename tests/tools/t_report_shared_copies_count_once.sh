# One TCP connection held by several fds has a close record per fd, each
# marked "shared" with that fd's own bytes; the report's kinds and peers
# count it once.  Real programs: python3's socketserver.ForkingTCPServer
# (the parent closes its copy of each accepted socket after the fork, the
# child serves it) sends three lines to each of two bash clients, which
# read them from /dev/tcp with `read <&3` (bash dup2s the socket onto fd 0
# for each read, and back): 2 connections, 4 ends, but 2 x 2 server
# records and 2 x 5 client ones (and the listener's).  Before, the Kinds
# table said 15 tcp connections, now 5.  The bytes stay exact, and records not marked shared are
# never merged (fd_reuse: curl's two connections on one fd stay two).
. "$(dirname "$0")/lib.sh"
need bash
mkdir -p "$T/logs"
cat >"$T/srv.py" <<'PYEOF'
import socketserver, sys
class H(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"line1\nline2\nline3\n")
        self.request.recv(100)     # the client's close
class S(socketserver.ForkingTCPServer):
    allow_reuse_address = True
s = S(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
for _ in range(2):
    s.handle_request()
s.collect_children(blocking=True)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/%n.%p.log" \
	sm "$PY" "$T/srv.py" "$T/port" &
spid=$!
wait_for 10 test -s "$T/port" || fail "the server did not start"
port=$(cat "$T/port")
for i in 1 2; do
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/%n.%p.log" sm bash -c \
		"exec 3<>/dev/tcp/127.0.0.1/$port; read a <&3; read b <&3; read c <&3; echo \$a \$b \$c; exec 3<&-" \
		>"$T/client$i.out" || fail "bash client $i failed"
	expect_eq "client $i got" "$(cat "$T/client$i.out")" "line1 line2 line3"
done
wait "$spid" || fail "the server failed"
T_LOGS=$T/logs pycheck "shared copies counted once" <<'PY'
import glob, os
logs = sorted(glob.glob(os.path.join(os.environ["T_LOGS"], "*.log")))
tcp = [(path, f) for path, r in records(*logs) if r["type"] == "close"
       for f in r["fds"] if f["kind"] == "tcp" and f.get("peer")]
# precondition: the copies are there, and marked
bash = [f for p, f in tcp if "/bash." in p]
assert len(bash) == 10 and all(f.get("shared") is True for f in bash), \
    "precondition: bash's tcp close records: %s" % [(f["fd"], f.get("shared")) for f in bash]
assert sum(f["bytes_in"] for f in bash) == 36, bash
# The server's listener is a tcp fd of its own (no peer), one more.
listeners = [f for p, r in records(*logs) if r["type"] == "close"
             for f in r["fds"] if f["kind"] == "tcp" and not f.get("peer")]
assert len(listeners) == 1, listeners
rep = report(*logs)
kinds = {r["kind"]: r for r in rep["kinds"]}
assert kinds["tcp"]["connections"] == 4 + 1, \
    "tcp connections %d, want 4 ends + the listener (%d close records)" % (
        kinds["tcp"]["connections"], len(tcp) + 1)
assert kinds["tcp"]["bytes_in"] == 36 and kinds["tcp"]["bytes_out"] == 36, kinds["tcp"]
lo = [r for r in rep["peers"] if r["peer"] == "127.0.0.1"][0]
assert lo["connections"] == 4 and lo["bytes_in"] == 36, lo
PY
exit 0
