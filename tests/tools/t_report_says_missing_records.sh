# The report says what records the files it read do not hold: a metered
# python3 makes 40 connections to itself (80 closes) with [log] max_size =
# 4096 and keep = 3, so its oldest files are removed as it runs.  The
# report's note names how many close records of how many processes are
# missing (the exit record's fds_closed less the close records in the
# files), and that the process's first records are gone too; the bytes
# are in the (no record) row.  Before, nothing was said (a helper's
# sweep).  Nothing is said when every file is there, with close_records =
# off (no close record at all is not a loss), or with --since.
. "$(dirname "$0")/lib.sh"
cat >"$T/conns.py" <<'EOF'
import socket
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(64)
for i in range(40):
    c = socket.create_connection(srv.getsockname())
    a, _ = srv.accept()
    c.sendall(b"x" * (1000 + i))
    a.recv(65536)
    c.close()
    a.close()
EOF
run() { # NAME MAX_SIZE CLOSE_RECORDS
	mkdir -p "$T/$1"
	printf '[log]\nformat = json\nmax_size = %s\nkeep = 3\nclose_records = %s\n' \
		"$2" "$3" >"$T/$1.ini"
	SOCKMETER_CONFIG=$T/$1.ini SOCKMETER_LOG=$T/$1/p.log sm "$PY" "$T/conns.py" ||
		fail "$1: python3 failed"
}
run rot 4096 each
ls "$T/rot/p.log.3" >/dev/null 2>&1 || fail "no rotation: $(ls "$T/rot")"
closed=$(cat "$T"/rot/p.log* | "$PY" -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if r["type"] == "exit":
        print(r["totals"]["fds_closed"] - r["totals"].get("close_records_dropped", 0))')
have=$(cat "$T"/rot/p.log* | grep -c '"type":"close"')
[ "${closed:-0}" -ge 80 ] && [ "$have" -lt "$closed" ] || fail "closes $closed, records $have"
"$REPORT" "$T/rot/p.log" >"$T/rot.out" 2>"$T/rot.err" || fail "report failed: $(cat "$T/rot.err")"
want="sockmeter-report: $T/rot/p.log: not in the files read: $((closed - have)) close records of 1 process and the first records of 1 process (rotated files removed, or not given); their bytes are in the totals and in the (no record) row"
expect_eq "the note" "$(cat "$T/rot.err")" "$want"
grep -q '^  (no record) ' "$T/rot.out" || fail "no (no record) row: $(cat "$T/rot.out")"
# --since: a window's records are cut anyway; nothing said.
"$REPORT" --since 0 "$T/rot/p.log" >/dev/null 2>"$T/since.err" || fail "report --since failed"
expect_eq "with --since: stderr" "$(cat "$T/since.err")" ""

run whole 0 each
"$REPORT" "$T/whole/p.log" >/dev/null 2>"$T/whole.err" || fail "report failed (whole)"
expect_eq "every file there: stderr" "$(cat "$T/whole.err")" ""
run off 0 off
"$REPORT" "$T/off/p.log" >/dev/null 2>"$T/off.err" || fail "report failed (off)"
expect_eq "close_records = off: stderr" "$(cat "$T/off.err")" ""
