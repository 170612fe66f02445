# A program's name can hold a newline and an escape sequence (argv[0] is
# the program's to choose; the same for a unix socket's name).  The JSON
# log keeps it, escaped; the report's table and top show each control
# character as one '?', as the library's text format does: no extra row
# with numbers that are not the program's, nothing sent to the terminal
# (before, both printed the name raw).  And %n names the log file with
# '_' for each control byte, and ".." as "__" (the file went into the
# directory above).
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/logs/sub/__"
odd=$(printf 'x\n  1  curl 99999\033[31mRED')
cat >"$T/pair.py" <<'PYEOF'
import socket
a, b = socket.socketpair()
a.sendall(b"q" * 4321)
b.recv(8192)
PYEOF
(SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/%n.%p.log" LD_PRELOAD=$LIB \
	exec -a "$odd" "$PY" "$T/pair.py") || fail "python3 as '$odd' failed"
(SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/sub/%n/up.%p.log" LD_PRELOAD=$LIB \
	exec -a .. "$PY" "$T/pair.py") || fail "python3 as '..' failed"
[ -z "$(ls "$T/logs" | grep '^up\.')" ] || fail "%n = '..' climbed out: $(ls "$T/logs")"
ls "$T"/logs/sub/__/up.*.log >/dev/null 2>&1 || fail "%n = '..' is not __: $(ls -R "$T/logs")"
log=$(ls "$T"/logs/x_*.log 2>/dev/null | head -n 1)
[ -n "$log" ] || fail "no log x_...: $(ls "$T/logs" | od -c | head -n 3)"
"$REPORT" --only processes "$log" >"$T/rep.out" 2>&1 || fail "report: $(cat "$T/rep.out")"
"$TOPCMD" -b --once "$log" >"$T/top.out" 2>&1 || fail "top: $(cat "$T/top.out")"
for f in rep top; do
	if grep -q "$(printf '\033')" "$T/$f.out"; then
		fail "$f printed an escape sequence: $(od -c "$T/$f.out" | head -n 5)"
	fi
	if grep -q '^  1  curl' "$T/$f.out"; then
		fail "$f printed the name's second line as a row: $(cat "$T/$f.out")"
	fi
	grep -q 'x?  1  curl 99999?\[31mRED' "$T/$f.out" ||
		grep -q 'x?  1  curl 9' "$T/$f.out" || fail "$f: the name not shown with '?': $(cat "$T/$f.out")"
done
# The numbers are the program's: the report's row has its 4,321 bytes.
grep -q '4321\|4\.2K' "$T/rep.out" || fail "report: $(cat "$T/rep.out")"
exit 0
