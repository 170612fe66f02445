# curl (preloaded) downloads a file of known size from a local
# python3 -m http.server (not preloaded): its one TCP connection to the
# server has a close record whose bytes equal what curl itself reports
# (response header + body in, request out), the exit record agrees, and the
# download is byte-identical to the original.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || fail "curl is not installed"
mkdir -p "$T/www"
size=$((1048576 + 12345))
make_file "$T/www/data.bin" "$size"
start_http "$T/www"

SOCKMETER_LOG=$T/curl.log SOCKMETER_FORMAT=json \
	sm curl -s --noproxy '*' -o "$T/got.bin" \
	-w '%{size_header} %{size_download} %{size_request} %{http_code}\n' \
	"http://127.0.0.1:$HTTP_PORT/data.bin" >"$T/curl.out" 2>"$T/curl.err" ||
	fail "curl failed: $(cat "$T/curl.err")"
read -r hdr body req code <"$T/curl.out"
expect_eq "http status" "$code" 200
expect_eq "curl size_download" "$body" "$size"
cmp -s "$T/www/data.bin" "$T/got.bin" || fail "downloaded file differs"

log=$T/curl.log
peer=127.0.0.1:$HTTP_PORT
expect_eq "tcp close records to $peer" \
	"$(q "$log" "len(closes(kind='tcp', peer='$peer'))")" 1
expect_eq "tcp close records in all" "$(q "$log" "len(closes(kind='tcp'))")" 1
expect_eq "bytes_in of the connection (header $hdr + body $body)" \
	"$(q "$log" "closes(kind='tcp')[0]['bytes_in']")" $((hdr + body))
expect_eq "bytes_out of the connection (curl's size_request)" \
	"$(q "$log" "closes(kind='tcp')[0]['bytes_out']")" "$req"
check "$log" "closes(kind='tcp')[0]['local'].startswith('127.0.0.1:')" \
	"local address of the connection"
# The exit record's lifetime totals hold every closed fd.
check "$log" "tot('bytes_in') == csum('bytes_in')" "exit bytes_in vs closes"
check "$log" "tot('bytes_out') == csum('bytes_out')" "exit bytes_out vs closes"
check "$log" "tot('fds_closed') == len(CL)" "exit fds_closed vs close records"
check "$log" "tot('bytes_in') >= $((hdr + body))" "exit bytes_in"
check "$log" "E['prog'] == 'curl'" "prog name"
exit 0
