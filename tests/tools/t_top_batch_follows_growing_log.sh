# Without a terminal, sockmeter top prints a table every refresh while it
# follows the growing log (like tail -f), and stops by itself after the
# exit record: a frame shows the connection with a nonzero rate, and the
# last shows the process exited with the bytes pace.py sent.
. "$(dirname "$0")/lib.sh"
need socat
mkdir -p "$T/logs"
port=$(free_port)
log=$T/logs/python3.log
bg_start timeout 20 "$TOPCMD" -b -d 0.2 "$log" >"$T/top.out" 2>&1
top_pid=$BG_PID
bg_start socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" OPEN:/dev/null
# Listening before pace.py starts: a connect refused meanwhile (pace.py
# retries) is a second connection in the table, where one is expected.
wait_listen "$port" "$BG_PID" || fail "socat did not listen on $port"
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$T/logs/%n.log \
	sm "$PY" "$HERE/pace.py" 127.0.0.1 "$port" 400000 200000 >/dev/null ||
	fail "pace.py failed"
wait_for 5 eval '! kill -0 $top_pid 2>/dev/null' || fail "top did not stop after the exit record"
wait "$top_pid" || fail "top: exit status $?"
frames=$(grep -c '^sockmeter top - ' "$T/top.out")
[ "$frames" -ge 5 ] || fail "only $frames frames"
grep -Eq "^python3 +[0-9]+ +[0-9]+ tcp +127\\.0\\.0\\.1:$port +[0-9.]+[BKMG]/s +(1[4-9][0-9]|2[0-4][0-9])\\.[0-9]K/s" "$T/top.out" ||
	fail "no frame with the connection at ~195K/s"
last=$(awk '/^sockmeter top - /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$T/top.out")
printf '%s' "$last" | grep -Eq "^python3 +[0-9]+ +0B/s +0B/s +0 +390\\.6K +1 +exited" ||
	fail "last frame: $last"
exit 0
