# A killed process's Prometheus textfile, recovered by root: rewritten
# with the final numbers, as a user's recovery rewrites it (before, root's
# recovery put them in a root-only PID-START.recovered.log beside the
# state file, which no textfile collector reads, and the textfile kept
# its last interval's numbers).  A python3 program moves 300,000 bytes over
# TCP, waits for an interval (the textfile says 300,000), moves 200,000
# more and kills itself.  Root rewrites only a name that ends in ".prom",
# in a directory of root's closed to others, over root's own textfile of
# this very process (a header's path may be a dropped-root worker's
# choice; reviewers' attacks), beside a stale NAME.tmp the kill left; the
# same under another ending, over a file that is not a textfile, over
# another process's textfile (a restarted daemon's, under a fixed name),
# over another user's, through a link, in a directory others may write
# to each go beside the state file, with a message, the file there
# untouched.  Where nothing is yet (killed before its first interval) root
# makes the textfile, or a text log, only at the path the process kept
# while it was root (an extended attribute of its state file), never at
# one its header names alone (a process that dropped root unseen could
# rewrite it, to a directory whose every file a shell sources, with a
# program name "$(...)": a reviewer's proof), and never through a link on
# the way that someone else could have put there (one swapped in by the
# user a process became), while root's own link (/var/run -> /run) is
# followed.  An existing empty log is appended to only where root may
# make one; a log through a link, once it holds a record.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (root's recovery)"
umask 022 # the directories root's and closed to others, whoever runs it
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

# run NAME WAIT [INTERVAL [FORMAT]] - the program under the preload, its
# textfile $T/NAME (%p for the pid), state files in $T/state; prints the
# pid.
run() {
	rm -rf "$T/state"
	mkdir -p "$T/state" "$T/prom"
	chmod 755 "$T/prom"
	env LD_PRELOAD="$LIB" SOCKMETER_FORMAT="${4:-prometheus}" SOCKMETER_INTERVAL="${3:-0.2}" \
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

# Beside a stale NAME.tmp (the kill came while the process wrote it):
# replaced, said, the .tmp left alone (a live writer's, for all root
# knows), the recovery's own new file gone.
pid=$(run 'prom/g.%p.prom' 1)
f=$T/prom/g.$pid.prom
echo "half" >"$f.tmp"
recover
expect_eq "beside a stale .tmp, bytes out" "$(bytes "$f" "$pid" out)" 500000
expect_eq "the stale .tmp" "$(cat "$f.tmp")" half
grep -q "final numbers written to its textfile $f\$" "$T/recover.out" ||
	fail "recover said: $(cat "$T/recover.out")"
[ "$(ls "$T/prom" | grep -c '\.tmp$')" = 1 ] || fail "a .tmp of the recovery's left: $(ls "$T/prom")"

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

# header_says PID PATH - the state file's header names PATH as its log
# (offset 168, 640 bytes: docs/state.md), as a process that dropped root
# without the library seeing it could rewrite it.
header_says() {
	"$PY" - "$(one_log "$T/state/$1-*.state")" "$2" <<'PYEOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(168)
    f.write(sys.argv[2].encode().ljust(640, b"\0"))
PYEOF
}

# nothing_there FORMAT NAME REWRITE [EMPTY] - killed before its first
# record (nothing there yet); REWRITE: the header names NAME only after a
# rewrite (else NAME is the path the process kept).  EMPTY: an empty file
# of that name is there (a log opened before it was written, or a file of
# root's that a rewritten header points at): appended to at the kept
# path, left empty at a rewritten one (a name alone proves nothing).
nothing_there() {
	local pid f kept rec
	pid=$(run "prom/kept.%p.$1" 0 60 "$2")
	kept=$T/prom/kept.$pid.$1
	f=$kept
	[ -e "$f" ] && fail "$2: a file before the first record (the test needs none)"
	if [ "$3" = kept ] && ! "$PY" -c 'import os, sys; os.getxattr(sys.argv[1], "trusted.sockmeter.log")' \
		"$(one_log "$T/state/$pid-*.state")" 2>/dev/null; then
		echo "the state directory's file system keeps no trusted.* attribute: the kept path is not tested" >&2
		return 0
	fi
	if [ "$3" = rewrite ]; then
		f=$T/prom/other.$pid.$1
		header_says "$pid" "$f"
	fi
	[ -n "${4:-}" ] && : >"$f"
	recover
	[ -e "$kept" ] && [ "$f" != "$kept" ] && fail "$2: root made the kept path for a header naming another"
	if [ "$3" = rewrite ]; then
		if [ -n "${4:-}" ]; then
			[ -s "$f" ] && fail "$2: root appended to an empty $f a rewritten header named: $(cat "$f")"
		else
			[ -e "$f" ] && fail "$2: root made $f where a rewritten header said"
		fi
		grep -q "is not a sockmeter" "$T/recover.out" ||
			fail "$2, rewritten: recover said: $(cat "$T/recover.out")"
		rec=$(one_log "$T/state/$pid-*.recovered.log")
	else
		[ -e "$f" ] || fail "$2: root did not make the path the process kept: $(cat "$T/recover.out")"
		rec=$f
	fi
	if [ "$2" = text ]; then
		grep -q "exit end=killed .*pid=$pid " "$rec" || fail "$2: no killed record in $rec: $(cat "$rec")"
	else
		expect_eq "$2, $3: bytes out" "$(bytes "$rec" "$pid" out)" 500000
	fi
}
nothing_there prom prometheus kept
nothing_there log text kept
nothing_there prom prometheus rewrite
nothing_there log text rewrite
nothing_there log text kept empty
nothing_there log text rewrite empty

# The kept path, a directory on it swapped for a link by the user the
# process became: nothing made, or appended to, through the link (a
# reviewer's proof, into a directory of root's).  A link is followed only
# where nobody but root could have put it: root's, in a directory of
# root's closed to others.
# In root's own default directory, a header rewritten to another pid
# and a log of that pid's name: neither that process's empty log there
# (CASE empty) nor a new file of its name (CASE new) gets the records: a
# name must hold the state file name's pid (a reviewer's proof; before,
# the header's pid was enough).
other_pid() {
	local other=$((4000000 + RANDOM)) dd=/tmp/sockmeter-0 f wrote
	mkdir -p -m 700 "$dd"
	rm -rf "$T/state"
	mkdir -p "$T/state"
	env LD_PRELOAD="$LIB" SOCKMETER_INTERVAL=60 SOCKMETER_STATE="$T/state" \
		"$PY" "$T/killme.py" 0 >/dev/null 2>"$T/prog.err" &
	pid=$!
	wait "$pid" 2>/dev/null
	f=$dd/sshd.$other.log
	rm -f "$f"
	[ "$1" = empty ] && : >"$f"
	"$PY" - "$(one_log "$T/state/$pid-*.state")" "$other" <<'PYEOF'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(24)
    f.write(struct.pack("<q", int(sys.argv[2])))
PYEOF
	header_says "$pid" "$f"
	recover
	wrote=$(cat "$f" 2>/dev/null || echo "(none)")
	rm -f "$f" "$dd/python3.$pid.log"
	if [ "$1" = empty ]; then
		[ -n "$wrote" ] && fail "root appended to another pid's empty log in its default directory: $wrote"
	else
		[ "$wrote" = "(none)" ] || fail "root made a log of another pid's name in its default directory: $wrote"
	fi
	rec=$(one_log "$T/state/$pid-*.recovered.log")
	grep -q "exit end=killed .*pid=$other " "$rec" || fail "other pid, $1: no killed record in $rec: $(cat "$rec")"
}
other_pid empty
other_pid new

# swapped WHOSE EMPTY - WHOSE: "dir", the directory holding the link is
# the user's (the link root's: the directory decides); "link", the link
# is the user's in a directory of root's.  EMPTY: an empty file of the
# name is there, through the link (one of root's): not appended to.
swapped() {
	rm -rf "$T/ud"
	mkdir -p "$T/ud/sub"
	pid=$(run 'ud/sub/swap.%p.log' 0 60 text)
	mv "$T/ud/sub" "$T/ud/sub.old"
	ln -s "$T/prom" "$T/ud/sub"
	if [ "$1" = dir ]; then chown nobody "$T/ud"; else chown -h nobody "$T/ud/sub"; fi
	rm -f "$T/prom/swap.$pid.log"
	[ "$2" = empty ] && : >"$T/prom/swap.$pid.log"
	recover
	if [ "$2" = empty ]; then
		[ -s "$T/prom/swap.$pid.log" ] && fail "$1: root appended through a link swapped in on the kept path"
	else
		[ -e "$T/prom/swap.$pid.log" ] && fail "$1: root made a file through a link swapped in on the kept path"
	fi
	rec=$(one_log "$T/state/$pid-*.recovered.log")
	grep -q "exit end=killed .*pid=$pid " "$rec" || fail "swapped: no killed record in $rec: $(cat "$rec")"
}
swapped dir nothing
swapped dir empty
swapped link nothing

# via_link DIR - a kept path through root's own link $T/DIRrl -> $T/prom
# (/var/run -> /run), in a directory of root's closed to others, killed
# before its first record; prints the pid, or nothing when the state
# directory keeps no trusted.* attribute.
via_link() {
	ln -s "$T/prom" "$T/${1}rl"
	pid=$(run "${1}rl/via.%p.log" 0 60 text)
	"$PY" -c 'import os, sys; os.getxattr(sys.argv[1], "trusted.sockmeter.log")' \
		"$(one_log "$T/state/$pid-*.state")" 2>/dev/null || return 0
	recover
	echo "$pid"
}

# On a mount without nosuid: the log is made at the link's target
# (before 2026-12-07, beside the state file).
if "$PY" -c 'import os, sys; sys.exit(os.statvfs(sys.argv[1]).f_flag & os.ST_NOSUID)' "$T"; then
	pid=$(via_link "")
	if [ -n "$pid" ]; then
		f=$T/prom/via.$pid.log
		grep -q "exit end=killed .*pid=$pid " "$f" 2>/dev/null ||
			fail "root's link: the kept log was not made: $(cat "$T/recover.out")"
		ls "$T/state" | grep -q 'recovered' && fail "root's link: records beside the state file: $(ls "$T/state")"
	fi
else
	echo "$T is on a nosuid mount: root's link is not followed there, the positive case is not tested" >&2
fi

# not_followed CASE PID - root's recovery of PID (via_link's) did not
# follow the link: nothing made at its target, the records beside the
# state file.
not_followed() {
	[ -n "$2" ] || return 0
	[ -e "$T/prom/via.$2.log" ] && fail "$1: root followed the link"
	rec=$(one_log "$T/state/$2-*.recovered.log")
	grep -q "exit end=killed .*pid=$2 " "$rec" || fail "$1: no killed record in $rec: $(cat "$rec")"
}

# Root's link in a directory of root's that lies in one of the user's
# (who may have moved it there, with whatever link it holds): not
# followed.
mkdir -p "$T/uc/r"
chown nobody "$T/uc"
not_followed "below a directory of the user's" "$(via_link uc/r/)"

# On a nosuid mount (what a user can mount: FUSE, which reports any
# owner it likes, udisks, fstab's "user"), a link that looks like root's
# in a directory that looks like root's is not followed.
mkdir -p "$T/ns"
if mount -t tmpfs -o nosuid,mode=0755,size=64k tmpfs "$T/ns" 2>/dev/null; then
	pid=$(via_link ns/)
	umount "$T/ns"
	not_followed "on a nosuid mount" "$pid"
else
	echo "no tmpfs can be mounted here: the nosuid case is not tested" >&2
fi

# A log through a link on the way (a kept /var/run/...), written before
# the kill: appended to, as it shows it is a log.
mkdir -p "$T/real"
ln -s "$T/real" "$T/via"
pid=$(run 'via/l.%p.log' 1 0.2 text)
f=$T/real/l.$pid.log
grep -q "pid=$pid " "$f" || fail "through a link: no interval record before the kill (the test needs one): $(cat "$f")"
recover
grep -q "exit end=killed .*pid=$pid " "$f" || fail "through a link: the log was not appended to: $(cat "$T/recover.out")"
ls "$T/state" | grep -q 'recovered' && fail "through a link: records beside the state file too: $(ls "$T/state")"
exit 0
