# TCP Fast Open: sendto(MSG_FASTOPEN) with an address connects the socket
# as connect() would.  The client's connection is one record with its
# addresses and every byte, even when it lives through several ticker
# checks: before, a client bound to 0.0.0.0:0 first was split into a
# phantom "close=unseen" record (its address at bind no longer matched the
# kernel's) and a second record for the rest; unbound, it had no
# addresses at all.
. "$(dirname "$0")/lib.sh"
cat >"$T/tfo.py" <<'PYEOF'
import socket, sys, threading, time
srv = socket.socket()
srv.setsockopt(socket.SOL_TCP, socket.TCP_FASTOPEN, 16)
srv.bind(("127.0.0.1", 0))
srv.listen(4)
port = srv.getsockname()[1]
got = []
def serve():
    for _ in range(2):
        a, _ = srv.accept()
        n = 0
        while True:
            b = a.recv(65536)
            if not b:
                break
            n += len(b)
        got.append(n)
        a.close()
t = threading.Thread(target=serve)
t.start()
for bound in (True, False):
    c = socket.socket()
    if bound:
        c.bind(("0.0.0.0", 0))
    c.sendto(b"f" * 300, socket.MSG_FASTOPEN, ("127.0.0.1", port))
    for _ in range(8):
        time.sleep(0.1)
        c.sendall(b"g" * 100)
    print("client", c.getsockname()[1], flush=True)
    c.close()
t.join()
print("server got", *got, flush=True)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$T/tfo.log \
	sm "$PY" "$T/tfo.py" >"$T/out" || fail "tfo.py failed"
grep -q "^server got 1100 1100$" "$T/out" || fail "server: $(cat "$T/out")"
"$PY" - "$T/tfo.log" "$T/out" <<'PYEOF' || fail "records: $(cat "$T/tfo.log")"
import json, sys
ports = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("client")]
recs = [json.loads(l) for l in open(sys.argv[1])]
out = [f for r in recs if r["type"] == "close" for f in r["fds"]
       if f.get("kind") == "tcp" and f.get("bytes_out")]
assert len(out) == 2, out
for f, port in zip(out, ports):
    assert f["bytes_out"] == 1100 and f.get("close_seen", True), f
    assert f["local"] == "127.0.0.1:%d" % port, (f, port)
    assert f["peer"].startswith("127.0.0.1:"), f
PYEOF
exit 0
