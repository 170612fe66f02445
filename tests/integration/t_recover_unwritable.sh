# A killed process whose log cannot be written when it is recovered keeps
# its numbers: `sockmeter recover` says which log it could not append to,
# keeps the state file, parked as NAME.state.unwritten (which automatic
# recoveries pass over), and exits 1 (no "final records appended", no
# file removed); once the log can be written, the next recover run by
# hand writes the exact exit record and removes the file.  (The log's
# directory replaced by a file: a failure root meets too.)  And (as root)
# another user's state directory is left untouched by root's recover,
# which says it is one root does not hold (that user could swap it for a
# link between two steps: docs/state.md) and exits 1, even once parked
# (not put back); that user's recover writes it.  A process
# that dropped root and was killed before its first record could have
# rewritten its state file's header since (where its log is, whose it
# is): root's recover creates nothing the header names (it used to create
# that log and give it to the user); it writes the record to the log the
# process named before the drop (kept in the file's extended attribute:
# %u was 0 then), root's.
. "$(dirname "$0")/lib.sh"

launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
export SOCKMETER_LIB=$LIB SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkdir -p "$T/logs"
# victim.py BYTES [UID GID]: BYTES over a socketpair, then (as root) the
# uid and gid given, then "ready PID" and a long sleep.
cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
size = int(sys.argv[1])
a, b = socket.socketpair()
a.sendall(b"x" * size)
n = 0
while n < size:
    n += len(b.recv(1 << 20))
if len(sys.argv) > 3:
    g, u = int(sys.argv[3]), int(sys.argv[2])
    os.setresgid(g, g, g)
    os.setresuid(u, u, u)
print("ready", os.getpid(), flush=True)
time.sleep(60)
PYEOF
chmod 644 "$T/victim.py"

# killed_victim NAME CMD... - start CMD, wait until it is ready, kill it
# with SIGKILL and wait until it is gone; sets vpid.
killed_victim() {
	local name=$1
	shift
	bg_start "$@" >"$T/$name.out"
	wait_for 20 grep -q '^ready' "$T/$name.out" || fail "$name did not start"
	vpid=$(awk '/^ready/ { print $2 }' "$T/$name.out")
	kill -KILL "$vpid"
	while kill -0 "$vpid" 2>/dev/null; do sleep 0.02; done
}

SOCKMETER_LOG=$T/logs/v.%p.log killed_victim v env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" 12345
expect_eq "state files after the kill" "$(ls "$T/state" | grep -c '\.state$')" 1
mv "$T/logs" "$T/logs.away"
: >"$T/logs"
"$launcher" recover "$T/state" >"$T/rec1" 2>&1 && st=0 || st=$?
expect_eq "recover's status with no writable log" "$st" 1
grep -q "cannot append its final records to $T/logs/v.$vpid.log" "$T/rec1" ||
	fail "recover did not say the log was not written: $(cat "$T/rec1")"
grep -q 'final records appended' "$T/rec1" &&
	fail "recover claimed records it did not write: $(cat "$T/rec1")"
grep -q 'metering goes on' "$T/rec1" &&
	fail "recover spoke as a live process would: $(cat "$T/rec1")"
expect_eq "state files kept, parked" "$(ls "$T/state" | grep -c '\.state\.unwritten$')" 1
grep -q "its state file is kept as $T/state/.*\.state\.unwritten" "$T/rec1" ||
	fail "recover did not say where the file is kept: $(cat "$T/rec1")"
rm -f "$T/logs"
mv "$T/logs.away" "$T/logs"
# The automatic recovery of a metered process passes over a parked file,
# even now that its log could be written (it would retry a log gone for
# good in every process, every minute): only a recover by hand does.
SOCKMETER_LOG=$T/auto.log sm "$PY" -c 'import socket, time; a, b = socket.socketpair(); a.send(b"x"); b.recv(1); time.sleep(1.5)' ||
	fail "the metered process for the automatic recovery failed"
expect_eq "parked file after an automatic recovery" "$(ls "$T/state" | grep -c '\.state\.unwritten$')" 1
[ -e "$T/logs/v.$vpid.log" ] && fail "the automatic recovery retried a parked file"
"$launcher" recover "$T/state" >"$T/rec2" 2>&1 ||
	fail "the second recover failed: $(cat "$T/rec2")"
log=$T/logs/v.$vpid.log
expect_eq "recovered exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
expect_eq "recovered end" "$(q "$log" "E['end']")" killed
expect_eq "recovered bytes in" "$(q "$log" "T['bytes_in']")" 12345
expect_eq "state files left" "$(ls "$T/state" | grep -c '\.state')" 0

[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || exit 0
nuid=$(id -u nobody) || exit 0
ngid=$(id -g nobody)
chmod 755 "$T"
mkdir -m 1777 "$T/pub"
nobody=(setpriv --reuid "$nuid" --regid "$ngid" --clear-groups)
# A python3 that user can reach (not one under root's home).
npy=/usr/bin/python3
[ -x "$npy" ] || npy=$PY
SOCKMETER_STATE=$T/pub/st-%u SOCKMETER_LOG=$T/pub/n.%p.log \
	killed_victim n "${nobody[@]}" env LD_PRELOAD="$LIB" "$npy" "$T/victim.py" 12345
nstate=$T/pub/st-$nuid
before=$(ls "$nstate")
"$launcher" recover "$nstate" >"$T/rec3" 2>&1 && st=0 || st=$?
expect_eq "root's recover of nobody's file: status" "$st" 1
grep -q "someone other than root could change or swap.*that user's to recover" "$T/rec3" ||
	fail "root's recover did not say why it leaves the directory alone: $(cat "$T/rec3")"
expect_eq "nobody's file untouched" "$(ls "$nstate")" "$before"
# nobody's recover finds its log one it cannot append to (root's): the
# file is parked.  Root's recover then leaves it parked: it would not
# write it (another user's), and unparked, nobody's automatic recoveries
# would retry that log again.
: >"$T/pub/n.$vpid.log"
"${nobody[@]}" env SOCKMETER_LIB="$LIB" "$launcher" recover "$nstate" >"$T/rec3b" 2>&1 &&
	fail "nobody's recover wrote to root's log: $(cat "$T/rec3b")"
expect_eq "nobody's file parked by its own recover" \
	"$(ls "$nstate" | grep -c '\.state\.unwritten$')" 1
parked=$(ls "$nstate")
"$launcher" recover "$nstate" >"$T/rec3c" 2>&1 || true
expect_eq "nobody's parked file after root's recover" "$(ls "$nstate")" "$parked"
rm -f "$T/pub/n.$vpid.log"
"${nobody[@]}" env SOCKMETER_LIB="$LIB" "$launcher" recover "$nstate" >"$T/rec4" 2>&1 ||
	fail "nobody's recover failed: $(cat "$T/rec4")"
expect_eq "nobody's recovered bytes in" "$(q "$T/pub/n.$vpid.log" "T['bytes_in']")" 12345

SOCKMETER_STATE=$T/state SOCKMETER_LOG=$T/pub/d.%u.%p.log \
	killed_victim d env LD_PRELOAD="$LIB" "$npy" "$T/victim.py" 4321 "$nuid" "$ngid"
[ -e "$T/pub/d.$nuid.$vpid.log" ] && fail "the dropper's log exists before recovery"
"$launcher" recover "$T/state" >"$T/rec5" 2>&1 || fail "recover of the dropper failed: $(cat "$T/rec5")"
[ -e "$T/pub/d.$nuid.$vpid.log" ] && fail "root's recover made the log the dropper's header names"
ls "$T/state/$vpid-"*.recovered.log 2>/dev/null && fail "the dropper's records went beside its state file"
rec=$T/pub/d.0.$vpid.log
[ -f "$rec" ] || fail "no record in the log the dropper named as root: $(cat "$T/rec5")"
expect_eq "the dropper's recovered log: owner" "$(stat -c %u "$rec")" 0
expect_eq "the dropper's bytes in" "$(q "$rec" "T['bytes_in']")" 4321
exit 0
