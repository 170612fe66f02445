# A log kept open across a uid change (the path not writable by the new
# uid: nginx's workers as nobody, with a log in a root-owned directory) and
# then rotated or removed by another program follows the path where it
# can, and never goes on silently into a file nobody can see.  python as
# root moves 100 bytes over a socketpair, becomes nobody, and once told
# (after the log was touched) moves 200 more and exits; interval records
# every 0.2 s.
#  - removed (rm): one warning naming the log and the uid; its exit record
#    is not taken for written, so root's recovery writes it, with the whole
#    300 bytes each way.  Before, the records, exit record included, went
#    into the deleted file and the state file was removed as done: lost
#    without a word (a helper's nginx workers);
#  - rotated with a new file nobody may write (logrotate's create MODE
#    nobody): the records follow into the new file, its exit record there
#    with 300 bytes; nothing said;
#  - rotated with a new file root's only: the records go on into the
#    rotated file (its exit record there), and one warning says so.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
nuid=$(id -u nobody) || fail "no user nobody"
ngid=$(id -g nobody)
chmod 755 "$T"
mkdir -m 755 "$T/logs"
mkdir -m 1777 "$T/st"
export SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_STATE=$T/st/%u

cat >"$T/v.py" <<PYEOF
import os, socket, sys, time
a, b = socket.socketpair()
a.sendall(b"r" * 100)
b.recv(4096)
os.setgid($ngid)
os.setuid($nuid)
time.sleep(0.5)            # interval records written as nobody
print("dropped", flush=True)
sys.stdin.readline()
a.sendall(b"n" * 200)
b.recv(4096)
a.close()
b.close()
PYEOF

# run NAME TOUCH...: the victim logging to logs/NAME.log; once it dropped
# root, the command TOUCH runs, then the victim goes on and exits.
run() {
	local name=$1 i=0
	shift
	mkfifo "$T/go.$name"
	SOCKMETER_LOG=$T/logs/$name.log timeout 30 env LD_PRELOAD="$LIB" \
		"$PY" "$T/v.py" <"$T/go.$name" >"$T/$name.out" 2>"$T/$name.err" &
	local pid=$!
	exec 7>"$T/go.$name"
	until grep -q dropped "$T/$name.out" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt 400 ] && fail "$name: the victim did not drop root"
		sleep 0.05
	done
	"$@"
	sleep 0.4                  # an interval record or two meanwhile
	echo >&7
	exec 7>&-
	wait "$pid" || fail "$name: the victim failed: $(cat "$T/$name.err")"
}

exit_in() { # FILE: [bytes_in, bytes_out] of the exit record in FILE
	q "$1" "[tot('bytes_in'), tot('bytes_out')]"
}

# --- removed ---------------------------------------------------------------
run removed rm "$T/logs/removed.log"
grep -q "log $T/logs/removed.log: removed while the process kept it open (it changed uid), and uid $nuid cannot open it again" "$T/removed.err" ||
	fail "removed: no warning: $(cat "$T/removed.err")"
"$SM_BUILD/sockmeter-recover" -q "$T/st/0" 2>"$T/rec.err" ||
	fail "recover failed: $(cat "$T/rec.err")"
got=$(cat "$T/logs/removed.log" "$T/st/0/"*.recovered.log 2>/dev/null >"$T/removed.all"; exit_in "$T/removed.all")
expect_eq "removed: the recovered exit record [bytes_in, bytes_out]" "$got" "[300, 300]"
rm -f "$T/st/0/"*

# --- rotated, the new file nobody's ---------------------------------------
rot_nobody() {
	mv "$T/logs/follow.log" "$T/logs/follow.log.1"
	install -m 600 -o "$nuid" /dev/null "$T/logs/follow.log"
}
run follow rot_nobody
expect_eq "rotated, new file nobody's: stderr" "$(cat "$T/follow.err")" ""
expect_eq "rotated, new file nobody's: exit record in the new file" \
	"$(exit_in "$T/logs/follow.log")" "[300, 300]"
check "$T/logs/follow.log.1" "not [r for r in R if r['type'] == 'exit']" \
	"rotated, new file nobody's: the rotated file"

# --- rotated, the new file root's -----------------------------------------
rot_root() {
	mv "$T/logs/stay.log" "$T/logs/stay.log.1"
	install -m 600 /dev/null "$T/logs/stay.log"
}
run stay rot_root
grep -q "log $T/logs/stay.log: rotated while the process kept it open (it changed uid), and uid $nuid cannot open the new one: records go on into the rotated file" "$T/stay.err" ||
	fail "rotated, new file root's: no warning: $(cat "$T/stay.err")"
expect_eq "rotated, new file root's: lines on stderr" "$(wc -l <"$T/stay.err")" 1
expect_eq "rotated, new file root's: exit record in the rotated file" \
	"$(exit_in "$T/logs/stay.log.1")" "[300, 300]"
expect_eq "rotated, new file root's: the new file" "$(stat -c %s "$T/logs/stay.log")" 0
