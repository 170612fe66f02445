# sockmeter top -n ROWS: a batch table of a log with 12 closed connections
# (a metered curl fetching 12 URLs from an HTTP/1.0 server: one connection
# each) lists all 12 without -n, and with -n 5 only the 5 busiest (the
# biggest downloads) and a line saying how many more.  -n -1 is a usage
# error.
. "$(dirname "$0")/lib.sh"
need curl
mkdir -p "$T/www" "$T/logs"
urls=
for i in $(seq 1 12); do
	head -c $((i * 10000)) /dev/urandom >"$T/www/f$i"
done
bg_start "$PY" "$HERE/serve.py" "$T/www" 12 "$T/port"
spid=$BG_PID
wait_for 10 test -s "$T/port" || fail "the HTTP server did not start"
port=$(cat "$T/port")
for i in $(seq 1 12); do
	urls="$urls -o /dev/null http://127.0.0.1:$port/f$i"
done
# shellcheck disable=SC2086
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/curl.log" sm curl -s $urls ||
	fail "curl failed"
wait "$spid" || fail "the HTTP server failed"
conn_rows() { grep -Ec "^curl +[0-9]+ +[0-9]+ +tcp " "$1"; }
"$TOPCMD" --once --linger -1 "$T/logs/curl.log" >"$T/all.out" 2>&1 ||
	fail "top failed: $(cat "$T/all.out")"
[ "$(conn_rows "$T/all.out")" = 12 ] ||
	fail "without -n: not 12 connection rows: $(cat "$T/all.out")"
"$TOPCMD" --once --linger -1 -n 5 "$T/logs/curl.log" >"$T/five.out" 2>&1 ||
	fail "top -n 5 failed: $(cat "$T/five.out")"
[ "$(conn_rows "$T/five.out")" = 5 ] ||
	fail "-n 5: not 5 connection rows: $(cat "$T/five.out")"
# curl's other fds (its resolver's socketpair) are rows too: the line says
# how many rows the full table has beyond the 5.
total=$(sed -n 's/^sockmeter top - .* process, \([0-9]*\) connections - .*/\1/p' "$T/all.out")
[ "${total:-0}" -ge 12 ] || fail "header: $(head -n 1 "$T/all.out")"
grep -q "^  \.\.\. $((total - 5)) more\$" "$T/five.out" ||
	fail "-n 5: no '... $((total - 5)) more': $(cat "$T/five.out")"
# The five busiest: the five biggest downloads, f8 to f12 (80,000 to
# 120,000 bytes of body each), so every row shown has at least 80,000.
pycheck "the rows shown are the busiest" <<PY
rows = [l.split() for l in open("$T/five.out") if l.startswith("curl ") and " tcp " in l]
assert len(rows) == 5, rows
def b(s):
    m = {"B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    return float(s[:-1]) * m[s[-1]]
# BYTES_IN is the 8th column: PROG PID FD KIND PEER IN/s OUT/s BYTES_IN.
assert all(b(r[7]) >= 80000 for r in rows), rows
PY
if "$TOPCMD" --once -n -1 "$T/logs/curl.log" >"$T/bad.out" 2>&1; then
	fail "-n -1 accepted"
fi
grep -q -- '-n takes 0' "$T/bad.out" || fail "-n -1: $(cat "$T/bad.out")"
exit 0
