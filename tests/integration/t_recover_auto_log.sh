# Automatic recovery (a metered process's ticker recovers the dead
# processes of its user, about a second after it starts) into a log that
# exists: the killed process had written records already.  The ticker's
# fd table is its own (progfd.h); recovery reopened the log it had looked
# at through /proc/self/fd/N, which is the program's table: another file
# under that number, or none.  None: the log was never appended to and the
# state file stayed (under load, sshd's pre-authentication child, whose
# record then went beside its state file).  Another file: a program whose
# stdout is a regular file would have had the dead process's records
# appended to it.
#  - the killed process's log ends with its recovered exit record, exact;
#  - the recovering program's own files (stdout, and files on the low
#    numbers) hold nothing of sockmeter's;
#  - no state file is left.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkdir -p "$T/logs"
n=$((70000 + 123))

cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
n = int(sys.argv[1])
a, b = socket.socketpair()
a.sendall(b"v" * n)
got = 0
while got < n:
    got += len(b.recv(1 << 20))
print("ready", os.getpid(), flush=True)
time.sleep(60)
PYEOF
# An interval record every 0.2 s: the log exists before the kill.
SOCKMETER_LOG=$T/logs/victim.%p.log SOCKMETER_INTERVAL=0.2 \
	bg_start env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" "$n" >"$T/victim.out"
vpid=$BG_PID
wait_for 20 grep -q '^ready' "$T/victim.out" || fail "the victim did not start"
vpid=$(awk '/^ready/ { print $2 }' "$T/victim.out")
wait_for 10 test -s "$T/logs/victim.$vpid.log" || fail "the victim wrote no log"
kill -KILL "$vpid"
wait_for 10 eval '! kill -0 '"$vpid"' 2>/dev/null' || fail "the victim did not die"
ls "$T/state"/"$vpid"-*.state >/dev/null 2>&1 || fail "no state file of the victim"
# A directory is scanned at most once in 10 s, whoever scans it: a victim
# that lived a second before the kill (a loaded machine) scanned it
# already, and the rescuer's scan would be skipped (t_state_recover).
rm -f "$T/state/.recover.lock"

# The recovering program: stdout a regular file, regular files on fds 3
# to 9, a socketpair (its ticker starts), alive 4 s.
cat >"$T/rescuer.py" <<'PYEOF'
import os, socket, sys, time
files = [open(os.path.join(sys.argv[1], "held.%d" % i), "a") for i in range(7)]
a, b = socket.socketpair()
a.sendall(b"r")
b.recv(1)
print("rescuer", os.getpid(), flush=True)
time.sleep(4)
PYEOF
SOCKMETER_LOG=$T/logs/rescuer.%p.log \
	sm "$PY" "$T/rescuer.py" "$T" >"$T/rescuer.stdout" 2>"$T/rescuer.err" ||
	fail "rescuer: $(cat "$T/rescuer.err")"
[ -s "$T/rescuer.err" ] && fail "rescuer: stderr: $(head -n 3 "$T/rescuer.err")"
for f in "$T/rescuer.stdout" "$T"/held.*; do
	grep -q sockmeter "$f" 2>/dev/null && fail "records in the rescuer's own file $f: $(head -c 200 "$f")"
done
expect_eq "the rescuer's stdout" "$(cat "$T/rescuer.stdout")" "rescuer $(awk '{ print $2 }' "$T/rescuer.stdout")"
log=$T/logs/victim.$vpid.log
expect_eq "the victim's exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
expect_eq "recovered as killed" "$(q "$log" "E['end']")" killed
expect_eq "the victim's bytes_out" "$(q "$log" "tot('bytes_out')")" "$n"
expect_eq "the victim's bytes_in" "$(q "$log" "tot('bytes_in')")" "$n"
expect_eq "state files left" "$(ls "$T/state" | grep -c '\.state$')" 0

# Root's automatic recovery into a log that is not one root may append to
# (its first line not a record: made by someone else, the records of the
# victim after it) puts the records beside the state file, as a recover by
# hand does, and says so, as that one does: to syslog (a socket of the
# test's, SOCKMETER_SYSLOG), not on the rescuer's stderr, which is for
# what concerns the rescuer.  Before, the records moved in silence and
# seemed lost (a helper's run).
[ "$(id -u)" = 0 ] || exit 0
sock=$T/syslog.sock
syslog_listen "$sock" "$T/syslog.txt"
printf 'hello\n' >"$T/logs/app.log"
SOCKMETER_LOG=$T/logs/app.log SOCKMETER_INTERVAL=0.2 \
	bg_start env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" "$n" >"$T/victim2.out"
wait_for 20 grep -q '^ready' "$T/victim2.out" || fail "the second victim did not start"
vpid=$(awk '/^ready/ { print $2 }' "$T/victim2.out")
wait_for 10 grep -q '"type"' "$T/logs/app.log" || fail "the second victim wrote no record"
kill -KILL "$vpid"
wait_for 10 eval '! kill -0 '"$vpid"' 2>/dev/null' || fail "the second victim did not die"
rm -f "$T/state/.recover.lock"
SOCKMETER_LOG=$T/logs/rescuer.%p.log SOCKMETER_SYSLOG=$sock \
	sm "$PY" "$T/rescuer.py" "$T" >"$T/rescuer2.stdout" 2>"$T/rescuer2.err" ||
	fail "second rescuer: $(cat "$T/rescuer2.err")"
set -- "$T/state/$vpid"-*.recovered.log
[ -f "$1" ] || fail "no recovered log beside the state file: $(ls "$T/state")"
expect_eq "the moved records' bytes_out" "$(q "$1" "tot('bytes_out')")" "$n"
expect_eq "the second rescuer's stderr" "$(cat "$T/rescuer2.err")" ""
want="recovered the final records of python3[$vpid], which ended without writing them, into $1: its log $T/logs/app.log is not a sockmeter log root may append to"
wait_for 5 grep -qF "$want" "$T/syslog.txt" ||
	fail "not said to syslog: $(cat "$T/syslog.txt")"
expect_eq "lines to syslog" "$(grep -c . "$T/syslog.txt")" 1
exit 0
