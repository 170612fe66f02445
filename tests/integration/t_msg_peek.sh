# A receive with MSG_PEEK moves no data: peeking (recv, recvfrom, recvmsg)
# before reading must not count the bytes twice.
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
exit 0
