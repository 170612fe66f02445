# proxychains (another preload) sends curl's connection through an HTTP
# proxy (ncat): it connects a socket of its own to the proxy, dup2s it
# over curl's and tells curl its connect succeeded.  The peer curl asked
# for is then not its socket's; the connection is still one record, with
# every byte curl received, across several interval looks (before, the
# ticker's first look took it for another socket and split it in two, the
# first "closed unseen").  proxychains' handshake socket says its
# addresses too (its connect, through libc's own symbol, went past the
# wrappers: they are asked at its close).
. "$(dirname "$0")/lib.sh"

need curl ncat
pc=$(ls /usr/lib/*/libproxychains.so.4 2>/dev/null | head -n 1)
[ -n "$pc" ] || fail "proxychains4 is not installed (scripts/install-deps)"
cat >"$T/slow.py" <<'PYEOF'
import socket, sys, time
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen()
print(ls.getsockname()[1], flush=True)
c, _ = ls.accept()
c.recv(65536)
body = b"z" * 100000
c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(body) * 8))
for i in range(8):
    c.sendall(body)
    time.sleep(0.2)
c.close()
PYEOF
bg_start "$PY" "$T/slow.py" >"$T/slow.port"
wait_for 10 test -s "$T/slow.port" || fail "the server did not start"
sport=$(cat "$T/slow.port")
pport=$(free_port)
bg_start ncat -l -k 127.0.0.1 "$pport" --proxy-type http
wait_listen "$pport" "$BG_PID" 10 || fail "ncat did not start"
printf 'strict_chain\nquiet_mode\n[ProxyList]\nhttp 127.0.0.1 %s\n' "$pport" >"$T/pc.conf"
LD_PRELOAD="$LIB $pc" PROXYCHAINS_CONF_FILE=$T/pc.conf SOCKMETER_INTERVAL=0.3 \
	SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/c.log timeout 30 \
	curl -s --noproxy '*' -o "$T/got" -w '%{size_header} %{size_download} %{local_port}\n' \
	"http://127.0.0.1:$sport/" >"$T/c.out" 2>"$T/c.err" ||
	fail "curl failed: $(cat "$T/c.err")"
read -r hdr body lport <"$T/c.out"
expect_eq "curl's download" "$body" 800000
expect_eq "records of curl's connection (local port $lport) [peer, bytes_in]" \
	"$(q "$T/c.log" "[[f['peer'], f['bytes_in']] for f in conns(kind='tcp') if f['local'].endswith(':$lport') and f['peer'] != '127.0.0.1:$pport']")" \
	"[[\"127.0.0.1:$sport\", $((hdr + body))]]"
# proxychains' handshake socket (the same socket, on its own fd until the
# dup2): its connect went past the wrappers; its addresses are asked at its
# close (before: local "" and peer "").
expect_eq "the handshake socket's record [local port, peer]" \
	"$(q "$T/c.log" "[[f['local'].rpartition(':')[2], f['peer']] for f in conns(kind='tcp') if f['peer'] == '127.0.0.1:$pport']")" \
	"[[\"$lport\", \"127.0.0.1:$pport\"]]"
check "$T/c.log" "not [f for f in CL if f.get('close_seen') is False]" \
	"a close record of a close no call made"
check "$T/c.log" "len(IV) >= 2" "interval records during the transfer"
exit 0
