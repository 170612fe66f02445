# A socket the kernel binds by itself, which no bind() names, still says
# its local address:
#  - an unconnected UDP socket (sendto, no bind, no connect) gets its port
#    at its first datagram, which no lifecycle call sees: its close record
#    must say which port the datagrams left from (asked once at the
#    close), for IPv4 and IPv6.  A socket that never sent and was never
#    bound has no name: its local stays "".
#  - a TCP socket that listens without a bind (netperf's netserver makes
#    its data listeners so) gets its port at listen(): its records say it,
#    through libc's listen and through syscall(SYS_listen).
#  - a connect to the wildcard address (0.0.0.0, [::]), which Linux takes
#    for this host: the peer is the address the kernel connected to
#    (127.0.0.1, ::1), not the wildcard asked for; also when the server
#    resets the connection at once, before the wrapper can ask the kernel
#    (1000 connections, each reset by the server after 100 bytes: 1 to 49
#    in 400 kept 0.0.0.0 here before, 20-25 % of stress-ng's sockabuse).
#  - a TCP socket connected by libc's connect called through a pointer of
#    the program's own, which the wrappers never see (proxychains reaches
#    its proxy so; here ctypes on libc.so.6 itself): its close record says
#    both addresses, asked once at the close (before: local "" and peer
#    "").
# Truth: the program's own getsockname and getpeername, and the bytes it
# sent and got.
. "$(dirname "$0")/lib.sh"

cat >"$T/local.py" <<'PYEOF'
import socket, sys
out = {}
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    tag = "v4" if fam == socket.AF_INET else "v6"
    r = socket.socket(fam, socket.SOCK_DGRAM)
    r.bind((host, 0))
    s = socket.socket(fam, socket.SOCK_DGRAM)
    sizes = (100, 200, 300) if tag == "v4" else (150, 250, 350)
    sent = sum(s.sendto(b"d" * n, r.getsockname()) for n in sizes)
    got = sum(len(r.recvfrom(1000)[0]) for _ in range(3))
    out[tag + "_send_fd"] = s.fileno()
    out[tag + "_send_port"] = s.getsockname()[1]
    out[tag + "_sent"] = sent
    out[tag + "_got"] = got
    s.close()
    r.close()
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
SYS_listen = {"x86_64": 50, "aarch64": 201}[platform.machine()]
for how in ("libc", "syscall"):
    l = socket.socket()
    if how == "libc":
        l.listen(1)
    elif libc.syscall(SYS_listen, l.fileno(), 1) != 0:
        sys.exit("syscall(SYS_listen): errno %d" % ctypes.get_errno())
    c = socket.create_connection(("127.0.0.1", l.getsockname()[1]))
    a, _ = l.accept()
    c.sendall(b"L" * 77)
    assert len(a.recv(100)) == 77
    out[how + "_listen_fd"] = l.fileno()
    out[how + "_listen_port"] = l.getsockname()[1]
    c.close(); a.close(); l.close()
for tag, fam, wild, host in (("w4", socket.AF_INET, "0.0.0.0", "127.0.0.1"),
                             ("w6", socket.AF_INET6, "::", "::1")):
    l = socket.socket(fam)
    l.bind((host, 0))
    l.listen(1)
    c = socket.socket(fam)
    c.connect((wild, l.getsockname()[1]))
    a, _ = l.accept()
    c.sendall(b"W" * (33 if tag == "w4" else 66))
    a.recv(100)
    peer = c.getpeername()
    out[tag + "_peer"] = ("%s:%d" if fam == socket.AF_INET else "[%s]:%d") % peer[:2]
    c.close(); a.close(); l.close()
# connect through libc's own symbol (dlsym on libc.so.6, not the global
# scope where the preload's wrapper comes first)
own = ctypes.CDLL("libc.so.6", use_errno=True)
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.socket()
sa = bytes([2, 0]) + l.getsockname()[1].to_bytes(2, "big") + \
    socket.inet_aton("127.0.0.1") + bytes(8)
if own.connect(c.fileno(), ctypes.c_char_p(sa), len(sa)) != 0:
    sys.exit("libc connect: errno %d" % ctypes.get_errno())
a, _ = l.accept()
c.sendall(b"P" * 4444)
got = 0
while got < 4444:
    got += len(a.recv(8192))
out["hidden_local"] = "%s:%d" % c.getsockname()
out["hidden_peer"] = "%s:%d" % c.getpeername()
c.close(); a.close(); l.close()
idle = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
out["idle_fd"] = idle.fileno()
idle.close()
for k, v in out.items():
    print("%s=%s" % (k, v))
PYEOF
SOCKMETER_LOG=$T/u.log SOCKMETER_FORMAT=json sm "$PY" "$T/local.py" \
	>"$T/out" 2>"$T/err" || fail "local.py failed: $(cat "$T/out" "$T/err")"
log=$T/u.log
for v in v4 v6; do
	fd=$(field ${v}_send_fd "$T/out")
	port=$(field ${v}_send_port "$T/out")
	sent=$(field ${v}_sent "$T/out")
	expect_eq "$v: program: received == sent" "$(field ${v}_got "$T/out")" "$sent"
	# Each family's pair reuses the numbers of the one before: the
	# sender's record is the one with its bytes (not the same sum).
	s="[c for c in closes(kind='udp', fd=$fd) if c['bytes_out'] == $sent]"
	expect_eq "$v: sender close records" "$(q "$log" "len($s)")" 1
	if [ $v = v4 ]; then want="0.0.0.0:$port"; else want="[::]:$port"; fi
	expect_eq "$v: sender local (the port its datagrams left from)" \
		"$(q "$log" "${s}[0]['local']")" "$want"
	expect_eq "$v: sender peer (unconnected: none)" \
		"$(q "$log" "${s}[0]['peer']")" ""
done
for how in libc syscall; do
	fd=$(field ${how}_listen_fd "$T/out")
	port=$(field ${how}_listen_port "$T/out")
	# The listeners of both ways had the same number: each is told by
	# the port of the connection it accepted.
	a="[c for c in closes(kind='tcp') if c['local'] == '127.0.0.1:$port' and c['bytes_in'] == 77]"
	expect_eq "listen through $how: the accepted connection's records" "$(q "$log" "len($a)")" 1
	l="[c for c in closes(kind='tcp', fd=$fd) if c['bytes_in'] == 0 and c['bytes_out'] == 0 and c['peer'] == '' and c['closed'] >= ${a}[0]['closed']]"
	expect_eq "listen through $how: the listener's local" \
		"$(q "$log" "${l}[0]['local']")" "0.0.0.0:$port"
done
for w in w4:33 w6:66; do
	n=${w#*:}
	w=${w%:*}
	c="[c for c in closes(kind='tcp') if c['bytes_out'] == $n]"
	expect_eq "$w: the connect's close records" "$(q "$log" "len($c)")" 1
	expect_eq "$w: the peer the kernel connected to" \
		"$(q "$log" "${c}[0]['peer']")" "$(field ${w}_peer "$T/out")"
done
cat >"$T/reset.py" <<'PYEOF'
import os, socket, struct, sys
n = int(sys.argv[1])
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(64)
port = l.getsockname()[1]
pid = os.fork()
if pid == 0:
    got = 0
    for i in range(n):
        c = socket.socket()
        # The reset can come before connect returns (the kernel's race,
        # without the preload too: 1 run of 2 here ended this way).
        try:
            c.connect(("0.0.0.0", port))
            got += len(c.recv(8192))
        except ConnectionResetError:
            pass
        c.close()
    print("got=%d" % got)
    os._exit(0)
for i in range(n):
    a, _ = l.accept()
    a.sendall(b"R" * 100)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    a.close()
os.waitpid(pid, 0)
print("port=%d" % port)
PYEOF
SOCKMETER_LOG=$T/r.%p.log SOCKMETER_FORMAT=json sm "$PY" "$T/reset.py" 1000 \
	>"$T/rout" 2>"$T/rerr" || fail "reset.py failed: $(cat "$T/rout" "$T/rerr")"
rport=$(field port "$T/rout")
rgot=$(field got "$T/rout")
[ "$rgot" -gt 0 ] || fail "reset.py: the clients got nothing: the test proves nothing"
# The client's records: the connections that received.
r="[c for c in closes(kind='tcp') if c['bytes_in'] > 0 and c['local'] != '127.0.0.1:$rport']"
expect_eq "reset at once: the clients' bytes in" "$(q "$T/r.*.log" "sum(c['bytes_in'] for c in $r)")" "$rgot"
expect_eq "reset at once: client records with the wildcard as peer" \
	"$(q "$T/r.*.log" "len([c for c in $r if c['peer'] != '127.0.0.1:$rport'])")" 0
c="[c for c in closes(kind='tcp') if c['bytes_out'] == 4444]"
expect_eq "connect unseen: close records" "$(q "$log" "len($c)")" 1
expect_eq "connect unseen: local" "$(q "$log" "${c}[0]['local']")" "$(field hidden_local "$T/out")"
expect_eq "connect unseen: peer" "$(q "$log" "${c}[0]['peer']")" "$(field hidden_peer "$T/out")"
idle=$(field idle_fd "$T/out")
expect_eq "a socket that never sent: local" \
	"$(q "$log" "[c['local'] for c in closes(kind='udp', fd=$idle) if c['bytes_out'] == 0 and c['bytes_in'] == 0][-1]")" ""
exit 0
