# A killed process's Prometheus textfile, recovered by root: rewritten
# with the final numbers, as a user's recovery rewrites it (before, root's
# recovery put them in a root-only PID-START.recovered.log beside the
# state file, which no textfile collector reads, and the textfile kept
# its last interval's numbers).  A python3 program moves 300,000 bytes over
# TCP, waits for an interval (the textfile says 300,000), moves 200,000
# more and kills itself.  Root rewrites only a name that ends in ".prom",
# in a directory of root's closed to others, over nothing or over root's
# own textfile of this very process (a header's path may be a dropped-root
# worker's choice; a reviewer's attacks): a textfile made before the
# first interval (there was none yet), and one whose stale NAME.tmp the
# kill left; the same under another ending, over a file that is not a
# textfile, over another process's textfile (a restarted daemon's, under
# a fixed name), over another user's, through a link, in a directory
# others may write to, and with a directory in NAME.tmp's place each go
# beside the state file, with a message, the file there untouched.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (root's recovery)"
cat >"$T/killme.py" <<'PYEOF'
import os, signal, socket, sys, time
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
def move(n):
    c.sendall(b"x" * n)
    got = 0
    while got < n:
        got += len(s.recv(65536))
move(300000)
time.sleep(float(sys.argv[1]))
move(200000)
os.kill(os.getpid(), signal.SIGKILL)
PYEOF

# run NAME WAIT [INTERVAL] - the program under the preload, its textfile
# $T/NAME (%p for the pid), state files in $T/state; prints the pid.
run() {
	rm -rf "$T/state"
	mkdir -p "$T/state" "$T/prom"
	env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=prometheus SOCKMETER_INTERVAL="${3:-0.2}" \
		SOCKMETER_STATE="$T/state" SOCKMETER_LOG="$T/$1" \
		"$PY" "$T/killme.py" "$2" >/dev/null 2>"$T/prog.err" &
	local pid=$!
	wait "$pid" 2>/dev/null
	echo "$pid"
}

# bytes FILE PID DIRECTION - sockmeter_bytes_total of tcp in FILE.
bytes() {
	sed -n "s/^sockmeter_bytes_total{prog=\"python3\",pid=\"$2\",kind=\"tcp\",direction=\"$3\"} //p" "$1"
}

recover() {
	"$SM_TOP/build/sockmeter-recover" "$T/state" >"$T/recover.out" 2>&1 ||
		fail "recover: $(cat "$T/recover.out")"
}

# The textfile an interval wrote, then the final numbers over it; the
# launcher's quiet recover says nothing of it.
pid=$(run 'prom/a.%p.prom' 1)
f=$T/prom/a.$pid.prom
expect_eq "the last interval's bytes out" "$(bytes "$f" "$pid" out)" 300000
"$SM_TOP/scripts/sockmeter" recover -q "$T/state" >"$T/recover.out" 2>&1 ||
	fail "recover -q: $(cat "$T/recover.out")"
[ -s "$T/recover.out" ] && fail "recover -q said: $(cat "$T/recover.out")"
expect_eq "recovered bytes out" "$(bytes "$f" "$pid" out)" 500000
expect_eq "recovered bytes in" "$(bytes "$f" "$pid" in)" 500000
ls "$T/prom" | grep -q '\.tmp$' && fail ".tmp left behind: $(ls "$T/prom")"
ls "$T/state" | grep -q 'recovered' && fail "records beside the state file too: $(ls "$T/state")"
[ "$(stat -c %a "$f")" = 644 ] || fail "mode $(stat -c %a "$f"), want 644"
if command -v promtool >/dev/null; then
	promtool check metrics <"$f" >"$T/promtool.out" 2>&1 ||
		fail "promtool rejects the recovered textfile: $(cat "$T/promtool.out")"
fi

# Killed before its first interval: made (and said).
pid=$(run 'prom/b.%p.prom' 0 60)
f=$T/prom/b.$pid.prom
[ -e "$f" ] && fail "a textfile before the first interval (the test needs none)"
recover
expect_eq "made, bytes out" "$(bytes "$f" "$pid" out)" 500000
grep -q "final numbers written to its textfile $f\$" "$T/recover.out" ||
	fail "recover said: $(cat "$T/recover.out")"

# A stale NAME.tmp of root's (killed while writing it): removed, replaced.
pid=$(run 'prom/g.%p.prom' 1)
f=$T/prom/g.$pid.prom
echo "half" >"$f.tmp"
recover
expect_eq "over a stale .tmp, bytes out" "$(bytes "$f" "$pid" out)" 500000
[ -e "$f.tmp" ] && fail "the stale .tmp is still there"

# fallback CASE NAME [SETUP] - recovered beside the state file, said,
# $T/NAME (the program's textfile, pid expanded) left as it was.
fallback() {
	local pid f before rec
	pid=$(run "$2" 1)
	f=$T/${2//%p/$pid}
	[ -n "${3:-}" ] && eval "$3"
	before=$(cat "$f" 2>/dev/null; echo .)
	recover
	expect_eq "$1: left as it was" "$(cat "$f" 2>/dev/null; echo .)" "$before"
	grep -q "is not a sockmeter textfile root may rewrite" "$T/recover.out" ||
		fail "$1: recover said: $(cat "$T/recover.out")"
	rec=$(one_log "$T/state/$pid-*.recovered.log")
	expect_eq "$1: beside the state file" "$(bytes "$rec" "$pid" out)" 500000
}
fallback "another ending" 'prom/c.%p.txt'
fallback "not a textfile" 'prom/d.%p.prom' 'echo "not ours" >"$f"'
fallback "another process's textfile" 'prom/fixed.prom' \
	'sed -i "s/,pid=\"$pid\"}/,pid=\"1$pid\"}/" "$f"'
fallback "another user's" 'prom/h.%p.prom' 'chown nobody "$f"'
echo "the link's target" >"$T/target"
fallback "a link" 'prom/e.%p.prom' 'rm -f "$f"; ln -s "$T/target" "$f"'
expect_eq "the link's target" "$(cat "$T/target")" "the link's target"
mkdir -p -m 1777 "$T/open"
fallback "a directory others may write to" 'open/i.%p.prom'
fallback "a directory in NAME.tmp's place" 'prom/j.%p.prom' 'mkdir "$f.tmp"'
exit 0
