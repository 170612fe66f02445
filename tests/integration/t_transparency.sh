# The preload changes nothing a program can see: stdout byte-identical and
# the same exit status with and without it, for our own programs (whose
# output includes the fd numbers they got: the library takes no low fds),
# for python3 doing socket I/O, and for curl writing a download to stdout.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
need_prog threads
need_prog dups
export SOCKMETER_LOG=$T/logs/%n.%p.log SOCKMETER_FORMAT=json
mkdir -p "$T/logs"

same() { # NAME CMD... - run both ways, compare stdout and status
	local name=$1 a b
	shift
	sm "$@" >"$T/with.out" 2>/dev/null
	a=$?
	plain "$@" >"$T/without.out" 2>/dev/null
	b=$?
	expect_eq "$name: exit status with the preload" "$a" "$b"
	cmp -s "$T/with.out" "$T/without.out" ||
		fail "$name: stdout differs: $(diff "$T/with.out" "$T/without.out" | head -n 4 | tr '\n' ' ')"
	[ -s "$T/with.out" ] || fail "$name: no output"
}

same pairxfer "$PROGS/pairxfer" 300000 9
same threads "$PROGS/threads" own 8 1000
same dups "$PROGS/dups"
cat >"$T/sock.py" <<'PYEOF'
import hashlib, os, socket, sys
a, b = socket.socketpair()
data = bytes(range(256)) * 2000
got = b""
for i in range(0, len(data), 25600):
    a.sendall(data[i:i + 25600])
    while len(got) < min(len(data), i + 25600):
        got += b.recv(65536)
u1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u2.bind(("127.0.0.1", 0))
u1.sendto(b"hello" * 100, u2.getsockname())
msg, _ = u2.recvfrom(4096)
r, w = os.pipe()
os.write(w, b"pipe data")
print("fds", a.fileno(), b.fileno(), u1.fileno(), u2.fileno(), r, w)
print("stream", len(got), hashlib.sha256(got).hexdigest())
print("dgram", len(msg), os.read(r, 100).decode())
try:
    b.send(b"x" * 10)
    a.recv(10)
    socket.create_connection(("127.0.0.1", 1), timeout=2)
except OSError as e:
    print("error", type(e).__name__, e.errno)
sys.exit(4)
PYEOF
same python3 "$PY" "$T/sock.py"
ls "$T/logs"/python3.*.log >/dev/null 2>&1 || fail "python3 was not metered"

command -v curl >/dev/null || fail "curl is not installed"
mkdir -p "$T/www"
make_file "$T/www/f.bin" 400000
start_http "$T/www"
same curl curl -s --noproxy '*' "http://127.0.0.1:$HTTP_PORT/f.bin"
cmp -s "$T/with.out" "$T/www/f.bin" || fail "curl: stdout is not the file"
exit 0
