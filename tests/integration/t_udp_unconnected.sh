# An unconnected UDP socket (sendto, no bind, no connect) gets its port
# from the kernel at its first datagram, which no lifecycle call sees: the
# close record must still say which port the datagrams left from (asked
# once at the close), for IPv4 and IPv6.  A socket that never sent and was
# never bound has no name: its local stays "".  Truth: the sender's own
# getsockname after sending, and the bytes it sent and the receiver got.
. "$(dirname "$0")/lib.sh"

cat >"$T/udp.py" <<'PYEOF'
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
idle = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
out["idle_fd"] = idle.fileno()
idle.close()
for k, v in out.items():
    print("%s=%s" % (k, v))
PYEOF
SOCKMETER_LOG=$T/u.log SOCKMETER_FORMAT=json sm "$PY" "$T/udp.py" \
	>"$T/out" 2>"$T/err" || fail "udp.py failed: $(cat "$T/out" "$T/err")"
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
idle=$(field idle_fd "$T/out")
expect_eq "a socket that never sent: local" \
	"$(q "$log" "[c['local'] for c in closes(kind='udp', fd=$idle) if c['bytes_out'] == 0 and c['bytes_in'] == 0][-1]")" ""
exit 0
