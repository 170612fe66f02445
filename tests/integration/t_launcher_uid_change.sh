# sockmeter -s on a program that changes user (a daemon dropping root:
# ngircd, chronyd, apt's methods): with a log path that follows the uid
# (%u, as the default does), its records from the change on are in the new
# user's log, and root's recovery of a kill writes its exit record into
# the log it named while still root.  Before, -s looked only at the
# launcher's own uid's path: "no log" for a clean end (ngircd under a
# helper's run), or only the recovered exit record after a kill, the new
# user's records not even named.
#  - a clean end: both logs shown, the one written to last (the new
#    user's, with the exit record: 300 bytes each way) at the end, after
#    one line saying there are two;
#  - a kill after the change: both shown, root's last (recovered exit
#    record, "end":"killed", 300 bytes each way, the last record shown),
#    and no claim that the exit record is missing; a third uid's log of
#    an older process with the same pid, written to since the launch, is
#    not shown.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
need_prog dropuid
nuid=$(id -u nobody) || fail "no user nobody"
ngid=$(id -g nobody)
launcher=$SM_TOP/scripts/sockmeter
export SOCKMETER_LIB=$LIB
chmod 755 "$T"
mkdir -m 1777 "$T/pub"

# records FILE - the JSON records shown in launcher stderr FILE; named
# FILE - the logs it named, in order, each followed by a space.
records() { grep '^{' "$1"; }
named() { sed -n 's/^sockmeter: log of pid [0-9]*: //p' "$1" | tr '\n' ' '; }

"$launcher" -s -f json -i 0.1 -o "$T/pub/u%u.%p.log" -- \
	"$PROGS/dropuid" setuid "$nuid" "$ngid" >"$T/clean.out" 2>"$T/clean.err" ||
	fail "clean: the launcher failed: $(cat "$T/clean.err")"
pid=$(field pid "$T/clean.out")
grep -q "^sockmeter: pid $pid wrote 2 logs (it changed user" "$T/clean.err" ||
	fail "clean: no line saying two logs: $(grep '^sockmeter:' "$T/clean.err")"
expect_eq "clean: logs named, in order" "$(named "$T/clean.err")" \
	"$T/pub/u0.$pid.log $T/pub/u$nuid.$pid.log "
records "$T/clean.err" | tail -n 1 >"$T/clean.last"
check "$T/clean.last" "R[0]['type'] == 'exit' and 'end' not in R[0] and T['bytes_out'] == T['bytes_in'] == 300" \
	"clean: the exit record, last"
expect_eq "clean: records shown" "$(records "$T/clean.err" | wc -l)" \
	"$(cat "$T/pub/u0.$pid.log" "$T/pub/u$nuid.$pid.log" | grep -c '^{')"

# Killed 1 s after the change, the connection still open.
"$launcher" -s -f json -i 0.1 -o "$T/pub/k%u.%p.log" -- \
	"$PROGS/dropuid" setuid "$nuid" "$ngid" 300 30000 >"$T/kill.out" 2>"$T/kill.err" &
lpid=$!
for _ in $(seq 100); do
	grep -q '^euid=' "$T/kill.out" 2>/dev/null && break
	sleep 0.1
done
pid=$(field pid "$T/kill.out")
[ -n "$pid" ] || fail "kill: dropuid did not start: $(cat "$T/kill.err")"
# Another uid's log of an older process that had the same pid, appended
# to since the launch (a recovery's exit record): not this program's.
old=$(($(date +%s) - 3600))
printf '{"type":"interval","ts":%s.000000,"pid":%s,"prog":"dropuid","start":%s.000000}\n' \
	"$old" "$pid" "$old" >"$T/pub/k4242.$pid.log"
sleep 1
printf '{"type":"exit","ts":%s.000000,"pid":%s,"prog":"dropuid","start":%s.000000}\n' \
	"$(date +%s)" "$pid" "$old" >>"$T/pub/k4242.$pid.log"
kill -KILL "$pid"
wait "$lpid"
rc=$?
expect_eq "kill: launcher status" "$rc" 137
expect_eq "kill: logs named, in order" "$(named "$T/kill.err")" \
	"$T/pub/k$nuid.$pid.log $T/pub/k0.$pid.log "
records "$T/kill.err" | tail -n 1 >"$T/kill.last"
check "$T/kill.last" "R[0]['type'] == 'exit' and R[0].get('end') == 'killed' and T['bytes_out'] == T['bytes_in'] == 300" \
	"kill: the recovered exit record, last"
if grep -q 'exit record is not in the log' "$T/kill.err"; then
	fail "kill: said the exit record is missing: $(grep '^sockmeter:' "$T/kill.err")"
fi
# The new user's records were shown: an interval record written after the
# change (300 bytes each way, no end).
records "$T/kill.err" | grep '"type":"interval"' >"$T/kill.iv"
check "$T/kill.iv" "any(r['totals']['bytes_out'] == 300 for r in IV)" \
	"kill: the new user's records shown"

# Files another user plants in the globs -s looks through (any uid, this
# pid): a link of theirs to a root-only file, and a file of theirs of
# terminal escapes under a path of a uid not theirs (the secret written
# to since the launch, as a live log is); and the program's
# own log holding a C0 and a C1 control.  Neither planted file is shown
# nor named, the secret is not printed, and no escape reaches the
# terminal (a reviewer's proof: root's -s printed both).
umask 077
echo "root-only secret $RANDOM" >"$T/secret"
chmod 600 "$T/secret"
cat >"$T/plant.sh" <<'EOF2'
touch "$2"
ln -s "$2" "$1/p99991.$$.log"
chown -h nobody "$1/p99991.$$.log"
printf '\033]0;PWN\007\033[2J\n' >"$1/p99992.$$.log"
chown nobody "$1/p99992.$$.log"
printf 'own \033[2J \302\233X\n' >>"$1/p0.$$.log"
EOF2
"$launcher" -s -i 60 -o "$T/pub/p%u.%p.log" -- sh "$T/plant.sh" "$T/pub" "$T/secret" \
	>"$T/plant.out" 2>"$T/plant.err" || fail "plant: the launcher failed: $(cat "$T/plant.err")"
grep -q "root-only secret" "$T/plant.err" && fail "plant: root's -s printed a file a link of nobody's named"
LC_ALL=C grep -q $'\033\|\302\233' "$T/plant.err" && fail "plant: an escape reached the terminal: $(cat -v "$T/plant.err")"
grep -q "p9999[12]" "$T/plant.err" && fail "plant: a planted file named: $(grep '^sockmeter:' "$T/plant.err")"
grep -q "^own ?\[2J ?X" "$T/plant.err" || fail "plant: the program's own log not shown, cleaned: $(cat -v "$T/plant.err")"
exit 0
