# A Go program makes its own system calls, so its sockets never reach the
# wrappers: the library says so, once, on the program's stderr, rather than
# write nothing without a word.  hey (a Go HTTP load generator) against
# python3's http.server: one warning naming it; hey's own results are the
# same as without the preload.  A C program (curl) gets no such warning,
# and `[sockmeter] skip = hey` leaves hey alone, warning included.
. "$(dirname "$0")/lib.sh"

need hey curl
mkdir -p "$T/www"
make_file "$T/www/f.bin" 20000
start_http "$T/www"
url=http://127.0.0.1:$HTTP_PORT/f.bin

plain hey -n 6 -c 2 "$url" >"$T/plain.out" 2>"$T/plain.err" ||
	fail "hey fails without the preload: $(cat "$T/plain.err")"
SOCKMETER_LOG=$T/hey.log sm hey -n 6 -c 2 "$url" >"$T/sm.out" 2>"$T/sm.err" ||
	fail "hey fails under the preload: $(cat "$T/sm.err")"
expect_eq "hey's status codes, without and with the preload" \
	"$(grep -A1 'Status code distribution' "$T/sm.out")" \
	"$(grep -A1 'Status code distribution' "$T/plain.out")"
grep -q '\[200\].*6 responses' "$T/sm.out" ||
	fail "hey under the preload: $(cat "$T/sm.out")"
expect_eq "warnings on hey's stderr" "$(cat "$T/sm.err")" \
	"sockmeter: hey is a Go program: Go makes its own system calls, not through libc, so its sockets cannot be metered (only calls made through libc, by cgo code, are counted)"
[ ! -s "$T/plain.err" ] || fail "hey wrote to stderr without the preload"

SOCKMETER_LOG=$T/curl.log SOCKMETER_FORMAT=json sm curl -s -o /dev/null "$url" 2>"$T/curl.err" ||
	fail "curl failed"
[ ! -s "$T/curl.err" ] || fail "curl got a warning: $(cat "$T/curl.err")"
check "$T/curl.log" "len(closes(kind='tcp')) == 1" "curl's connection"

printf '[sockmeter]\nskip = hey\n' >"$T/skip.ini"
SOCKMETER_CONFIG=$T/skip.ini sm hey -n 2 -c 1 "$url" >/dev/null 2>"$T/skip.err" ||
	fail "hey fails when skipped"
[ ! -s "$T/skip.err" ] || fail "a skipped hey warned: $(cat "$T/skip.err")"
exit 0
