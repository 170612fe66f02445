# No payload byte is ever recorded, only counts and addresses: a program
# (python3) sends a distinctive marker string, many times and in pieces
# of every size, over a socketpair, TCP, UDP, a named unix socket and a
# pipe, and writes it to a file and to stdout - with every stat category
# on (latency too) and pipes, files and ttys tracked, in JSON and in text,
# to a log file and to stderr.  Neither the marker nor a 16-byte piece of
# it appears in any file the library wrote (the log directory is searched
# whole), nor on stderr.
. "$(dirname "$0")/lib.sh"

marker="SmMarker$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')Payload"
cat >"$T/all.ini" <<'INI'
[stats]
latency = true
[track]
pipes = true
files = true
ttys = true
[log]
interval = 0.1
top = 0
INI
cat >"$T/send.py" <<'PYEOF'
import os, socket, sys, time
m = sys.argv[1].encode()
data = m * 50
out = sys.argv[2]
def pump(a, b):
    for n in (1, 7, 16, 100, len(data)):
        for i in range(0, len(data), n):
            a.sendall(data[i:i + n])
            got = 0
            while got < len(data[i:i + n]):
                got += len(b.recv(65536))
a, b = socket.socketpair(); pump(a, b)
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
c = socket.create_connection(l.getsockname()); s, _ = l.accept(); pump(c, s); pump(s, c)
u1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u1.bind(("127.0.0.1", 0))
u2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20):
    u2.sendto(m, u1.getsockname()); u1.recv(100)
path = os.path.join(out, "named.sock")
ul = socket.socket(socket.AF_UNIX); ul.bind(path); ul.listen()
uc = socket.socket(socket.AF_UNIX); uc.connect(path); us, _ = ul.accept(); pump(uc, us)
r, w = os.pipe(); os.write(w, m); os.read(r, 1000)
with open(os.path.join(out, "file.bin"), "wb") as f:
    f.write(data)
sys.stdout.write(m.decode() + "\n")
time.sleep(0.3)
PYEOF
for fmt in json text; do
	mkdir -p "$T/$fmt/logs" "$T/$fmt/work"
	SOCKMETER_CONFIG=$T/all.ini SOCKMETER_LOG=$T/$fmt/logs/%n.%p.log SOCKMETER_FORMAT=$fmt \
		sm "$PY" "$T/send.py" "$marker" "$T/$fmt/work" >"$T/$fmt.out" 2>"$T/$fmt.err" ||
		fail "$fmt: python failed: $(tail -n 3 "$T/$fmt.err")"
	grep -q "$marker" "$T/$fmt.out" || fail "$fmt: the program did not run"
	[ -n "$(ls -A "$T/$fmt/logs")" ] || fail "$fmt: no log written"
	grep -q '"bytes_out"\|bytes_out=' "$T/$fmt/logs"/* || fail "$fmt: the log has no counts"
	# the search works: the socket's address, which is recorded, is found
	grep -rqaF "$T/$fmt/work/named.sock" "$T/$fmt/logs" || fail "$fmt: the unix address is not in the log"
	for piece in "$marker" "${marker:0:16}" "${marker:8:16}" "${marker:24:16}"; do
		grep -rqaF "$piece" "$T/$fmt/logs" && fail "$fmt: '$piece' found in the log"
		grep -qaF "$piece" "$T/$fmt.err" && fail "$fmt: '$piece' found on stderr"
	done
done
# the records on stderr
mkdir -p "$T/se"
SOCKMETER_CONFIG=$T/all.ini SOCKMETER_LOG=stderr SOCKMETER_FORMAT=json \
	sm "$PY" "$T/send.py" "$marker" "$T/se" >"$T/se.out" 2>"$T/se.err" ||
	fail "stderr: python failed"
grep -q '"type":"exit"' "$T/se.err" || fail "stderr: no exit record on stderr"
grep -qaF "${marker:0:16}" "$T/se.err" && fail "stderr: marker in the records"
exit 0
