# A receive with MSG_PEEK moves no data: peeking (recv, recvfrom, recvmsg)
# before reading must not count the bytes twice.  Nor does one with
# MSG_ERRQUEUE: a UDP socket with transmit timestamps (as chronyd sets
# them) reads its own datagrams back from its error queue, headers and
# all; that is not data from the peer.
. "$(dirname "$0")/lib.sh"

cat >"$T/peek.py" <<'PYEOF'
import socket
a, b = socket.socketpair()
a.sendall(b"x" * 1000)
assert len(b.recv(300, socket.MSG_PEEK)) == 300
assert len(b.recvfrom(400, socket.MSG_PEEK)[0]) == 400
assert len(b.recvmsg(500, 0, socket.MSG_PEEK)[0]) == 500
got = 0
while got < 1000:
    got += len(b.recv(4096))
print("got", got)
PYEOF
SOCKMETER_LOG=$T/p.log SOCKMETER_FORMAT=json sm "$PY" "$T/peek.py" >"$T/out" 2>&1 ||
	fail "peek.py: $(cat "$T/out")"
expect_eq "bytes_in" "$(q "$T/p.log" "tot('bytes_in')")" 1000
expect_eq "bytes_out" "$(q "$T/p.log" "tot('bytes_out')")" 1000

cat >"$T/errq.py" <<'PYEOF'
import select, socket
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(r.getsockname())
# SO_TIMESTAMPING: SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE
s.setsockopt(socket.SOL_SOCKET, 37, 0x12)
s.send(b"q" * 100)
assert len(r.recv(2048)) == 100
n = 0
if select.select([s], [], [], 2)[0]:
    n = len(s.recvmsg(2048, 1024, socket.MSG_ERRQUEUE)[0])
print("errqueue", n)
PYEOF
SOCKMETER_LOG=$T/e.log SOCKMETER_FORMAT=json sm "$PY" "$T/errq.py" >"$T/eout" 2>&1 ||
	fail "errq.py: $(cat "$T/eout")"
grep -q '^errqueue [1-9]' "$T/eout" || fail "no datagram came back on the error queue: $(cat "$T/eout")"
expect_eq "error queue: bytes_in (the receiver's 100 only)" "$(q "$T/e.log" "tot('bytes_in')")" 100
expect_eq "error queue: bytes_out" "$(q "$T/e.log" "tot('bytes_out')")" 100
exit 0
