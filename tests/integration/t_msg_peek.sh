# A receive with MSG_PEEK moves no data: peeking (recv, recvfrom, recvmsg)
# before reading must not count the bytes twice.  Nor does one with
# MSG_ERRQUEUE: a UDP socket with transmit timestamps (as chronyd sets
# them) reads its own datagrams back from its error queue, headers and
# all; that is not data from the peer.  A datagram read into a short
# buffer counts what the call returns: the bytes copied, or with
# MSG_TRUNC the datagram's whole length, as Linux returns it (what the
# sender counted; the rest was consumed and discarded).
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
cat >"$T/trunc.py" <<'PYEOF'
import socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.send(b"x" * 1000)
assert len(b.recv(100)) == 100
a.send(b"y" * 1000)
b.recv(100, socket.MSG_TRUNC)  # (python sizes its result by the return)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendto(b"z" * 700, u.getsockname())
u.recvfrom(50, socket.MSG_TRUNC)
print("ok")
PYEOF
SOCKMETER_LOG=$T/t.log SOCKMETER_FORMAT=json sm "$PY" "$T/trunc.py" >"$T/tout" 2>&1 ||
	fail "trunc.py: $(cat "$T/tout")"
expect_eq "datagrams: bytes_in (100 copied; 1000 and 700 with MSG_TRUNC)" \
	"$(q "$T/t.log" "tot('bytes_in')")" 1800
expect_eq "datagrams: bytes_out" "$(q "$T/t.log" "tot('bytes_out')")" 2700
exit 0
