# TLS in user space is counted as the ciphertext on the wire: curl
# (OpenSSL, preloaded) downloads a file over HTTPS from `openssl s_server
# -WWW` (preloaded too).  The file arrives whole; each end's one connection
# has a close record; what one end sent is what the other received
# (matched by port), both more than the file (TLS records add their
# overhead); and the kernel's count agrees with ours on both ends (the
# suite's unseen check: every byte went through a wrapped call).
. "$(dirname "$0")/lib.sh"

need curl openssl
mkdir -p "$T/www"
size=$((700000 + 4321))
make_file "$T/www/data.bin" "$size"
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
	-keyout "$T/key.pem" -out "$T/cert.pem" >"$T/req.out" 2>&1 ||
	fail "openssl req: $(cat "$T/req.out")"
for try in 1 2 3 4 5; do
	port=$(free_port)
	(cd "$T/www" && SOCKMETER_LOG=$T/srv.log SOCKMETER_FORMAT=json \
		exec env LD_PRELOAD="$LIB" openssl s_server -quiet -WWW \
		-accept "127.0.0.1:$port" -cert "$T/cert.pem" \
		-key "$T/key.pem") >"$T/srv.out" 2>&1 &
	BG_PID=$!
	wait_listen "$port" "$BG_PID" 10 && break
	kill "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null
	BG_PID=
done
[ -n "$BG_PID" ] || fail "s_server did not start: $(cat "$T/srv.out")"
srv=$BG_PID

SOCKMETER_LOG=$T/cli.log SOCKMETER_FORMAT=json \
	sm curl -sk --noproxy '*' -o "$T/got.bin" -w '%{http_code}\n' \
	"https://127.0.0.1:$port/data.bin" >"$T/curl.out" 2>"$T/curl.err" ||
	fail "curl failed: $(cat "$T/curl.err")"
expect_eq "http status" "$(cat "$T/curl.out")" 200
cmp -s "$T/www/data.bin" "$T/got.bin" || fail "the download differs"
# s_server writes its record of the connection when the connection closes:
# then end it (SIGTERM: its exit record comes from the library's handler).
wait_for 10 grep -qs '"type":"close"' "$T/srv.log" ||
	fail "no close record from s_server"
kill -TERM "$srv"
wait "$srv" 2>/dev/null

cli=$(q "$T/cli.log" "[[f['local'], f['peer'], f['bytes_in'], f['bytes_out']] for f in closes(kind='tcp')]")
srv_rec=$(q "$T/srv.log" "[[f['peer'], f['local'], f['bytes_out'], f['bytes_in']] for f in closes(kind='tcp')]")
[ "$cli" != "[]" ] || fail "no TCP close record from curl"
expect_eq "curl's connection as s_server saw it (addresses, bytes)" \
	"$srv_rec" "$cli"
check "$T/cli.log" "closes(kind='tcp')[0]['bytes_in'] > $size" \
	"curl received no more than the file: ciphertext not counted"
exit 0
