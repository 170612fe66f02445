# A relative SOCKMETER_LOG is taken relative to the directory the program
# started in, once: a program that later chdir()s (as daemons do) still
# writes every record of its life to that one file.
#
# Regression: the path is made absolute at start-up.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/a" "$T/b"
cat >"$T/cd.py" <<'PYEOF'
import os, socket, sys, time
a, b = socket.socketpair()
a.send(b"x" * 1000)
b.recv(2000)
time.sleep(0.35)            # interval records are written meanwhile
os.chdir(sys.argv[1])
a.send(b"y" * 500)
b.recv(2000)
a.close()
b.close()
PYEOF
(cd "$T/a" && SOCKMETER_LOG=rel.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
	sm "$PY" "$T/cd.py" "$T/b") >"$T/out" 2>"$T/err" ||
	fail "cd.py failed: $(cat "$T/err")"
[ -f "$T/a/rel.log" ] || fail "no log in the starting directory"
if [ -e "$T/b/rel.log" ]; then
	fail "records written to the directory the program moved to (b/rel.log: $(grep -c . "$T/b/rel.log") records, a/rel.log: $(grep -c . "$T/a/rel.log"))"
fi
check "$T/a/rel.log" "len(IV) >= 1" "interval records"
expect_eq "exit bytes_out" "$(q "$T/a/rel.log" "tot('bytes_out')")" 1500
exit 0
