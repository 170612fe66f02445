# A TCP socket disconnected with connect(AF_UNSPEC) (legal, rare) and
# connected again to another peer holds two connections, one after the
# other: two close records, each with its own peer, local port and bytes.
# Before, one record held both, under the second one's addresses (3,000
# bytes out to B, which got 2,000; A's connection in no record: a
# helper's sweep).  python3 connects to A, sends 1,000 bytes, disconnects
# through libc's connect (ctypes), connects to B and sends 2,000; A and B
# are listeners of the same process, which count what they receive.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/p.log
cat >"$T/re.py" <<'PYEOF'
import ctypes, socket
def listener():
    l = socket.socket()
    l.bind(("127.0.0.1", 0))
    l.listen(1)
    return l
def drain(l):
    a, _ = l.accept()
    n = 0
    while True:
        b = a.recv(65536)
        if not b:
            break
        n += len(b)
    a.close()
    return n
la, lb = listener(), listener()
s = socket.socket()
s.connect(la.getsockname())
port_a = s.getsockname()[1]
s.sendall(b"a" * 1000)
a, _ = la.accept()
got_a = 0
while got_a < 1000:                       # read before the disconnect's RST
    got_a += len(a.recv(65536))
libc = ctypes.CDLL(None, use_errno=True)
unspec = (ctypes.c_ubyte * 16)()          # sa_family 0: AF_UNSPEC
assert libc.connect(s.fileno(), unspec, 16) == 0, ctypes.get_errno()
a.close()
s.connect(lb.getsockname())
port_b = s.getsockname()[1]
s.sendall(b"b" * 2000)
s.close()
got_b = drain(lb)
print(port_a, got_a, lb.getsockname()[1], port_b, got_b)
PYEOF
out=$(sm "$PY" "$T/re.py") || fail "python3 failed: $out"
read -r port_a got_a port_lb port_b got_b <<<"$out"
expect_eq "A received" "$got_a" 1000
expect_eq "B received" "$got_b" 2000
"${LOGQ[@]}" check "$T/p.log" \
	"[c['bytes_out'] for c in closes(local='127.0.0.1:$port_a')] == [1000]" ||
	fail "the connection to A: $("${LOGQ[@]}" dump "$T/p.log")"
"${LOGQ[@]}" check "$T/p.log" \
	"[(c['bytes_out'], c['peer']) for c in closes(local='127.0.0.1:$port_b')] == [(2000, '127.0.0.1:$port_lb')]" ||
	fail "the connection to B: $("${LOGQ[@]}" dump "$T/p.log")"
expect_eq "bytes_out in the totals" "$("${LOGQ[@]}" total "$T/p.log" bytes_out)" 3000
