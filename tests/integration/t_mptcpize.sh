# Another preload that makes its sockets through syscall(): mptcpize's
# libmptcpwrap turns every TCP socket() into syscall(SYS_socket, ...,
# IPPROTO_MPTCP).  Under both (sockmeter first, as the launcher puts it),
# curl's one connection has one record, with its bytes (what curl itself
# reports), and no phantom: before, the socket was registered by the
# nested syscall() and again by the outer socket(), which ended the first
# as "closed unseen" and took the MPTCP socket for TCP (whose kernel view
# then showed bytes no call moved).
. "$(dirname "$0")/lib.sh"

need curl
w=$(ls /usr/lib/*/mptcpize/libmptcpwrap.so.0 2>/dev/null | head -n 1)
[ -n "$w" ] || fail "mptcpize is not installed (scripts/install-deps)"
[ "$(cat /proc/sys/net/mptcp/enabled 2>/dev/null)" = 1 ] ||
	skip "MPTCP is not enabled in this kernel"
mkdir -p "$T/www"
make_file "$T/www/f.bin" 500000
start_http "$T/www"
LD_PRELOAD="$LIB $w" SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/c.log timeout 30 \
	curl -s --noproxy '*' -o "$T/got" -w '%{size_header} %{size_download}\n' \
	"http://127.0.0.1:$HTTP_PORT/f.bin" >"$T/c.out" 2>"$T/c.err" ||
	fail "curl failed: $(cat "$T/c.err")"
read -r hdr body <"$T/c.out"
expect_eq "curl's download" "$body" 500000
expect_eq "curl's inet connections [kind, peer, bytes_in]" \
	"$(q "$T/c.log" "[[f['kind'], f['peer'], f['bytes_in']] for f in conns() if f['kind'] != 'unix']")" \
	"[[\"socket\", \"127.0.0.1:$HTTP_PORT\", $((hdr + body))]]"
check "$T/c.log" "not [f for f in CL if f.get('close_seen') is False]" \
	"a close record of a close no call made"
exit 0
