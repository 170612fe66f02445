# Daemons that change uid keep their records (tests/progs/dropuid: 100
# bytes as root, an interval record written as root, then setgid and a uid
# change to nobody, 200 bytes more).
#  - default path: the records continue in nobody's default directory,
#    created by the process itself (0700, nobody's), the file nobody's and
#    0600; its exit record holds the whole process's totals (300 bytes each
#    way); with setuid, seteuid (the effective uid writes), setreuid and
#    setresuid alike;
#  - a path with %u: the same, in the new uid's file;
#  - a path without %u that nobody cannot write: the file opened before
#    the change (by the ticker, with root's credentials) keeps getting the
#    records, all 300 bytes each way, and no warning is given;
#  - the same for a fork child that drops root before it touches the
#    connection it was handed (exim's reception child): its own log,
#    exact, no warning;
#  - a seteuid to nobody and back before anything was written: no
#    warning, the records written as root later.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
need_prog dropuid
nuid=$(id -u nobody) || fail "no user nobody"
ngid=$(id -g nobody)
chmod 755 "$T"
created=()
trap 'rm -f "${created[@]}"; sm_cleanup' EXIT

for how in setuid seteuid setreuid setresuid; do
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
		sm "$PROGS/dropuid" "$how" "$nuid" "$ngid" >"$T/$how.out" 2>"$T/$how.err" ||
		fail "dropuid $how failed: $(cat "$T/$how.err")"
	pid=$(field pid "$T/$how.out")
	expect_eq "$how: euid after" "$(field euid "$T/$how.out")" "$nuid"
	old=/tmp/sockmeter-0/dropuid.$pid.log
	new=/tmp/sockmeter-$nuid/dropuid.$pid.log
	created+=("$old" "$new")
	[ -f "$new" ] || fail "$how: no log in nobody's directory ($new): $(cat "$T/$how.err")"
	expect_eq "$how: nobody's directory" "$(stat -c '%u %a' "/tmp/sockmeter-$nuid")" "$nuid 700"
	expect_eq "$how: nobody's log" "$(stat -c '%u %a' "$new")" "$nuid 600"
	# Records were written as root before the change.
	check "$old" "len(IV) >= 1 and not [r for r in R if r['type'] == 'exit']" \
		"$how: root's log before the change"
	check "$new" "T['bytes_out'] == T['bytes_in'] == 300 and len(CL) == 2" \
		"$how: nobody's log"
	[ ! -s "$T/$how.err" ] || fail "$how: unexpected warning: $(cat "$T/$how.err")"
done

# A template with %u: the new uid's own file (in a directory both may
# write to).
mkdir -m 1777 "$T/pub"
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/pub/u%u.%p.log" \
	sm "$PROGS/dropuid" setresuid "$nuid" "$ngid" 0 >"$T/u.out" 2>"$T/u.err" ||
	fail "dropuid (%u) failed: $(cat "$T/u.err")"
pid=$(field pid "$T/u.out")
check "$T/pub/u$nuid.$pid.log" "T['bytes_out'] == 300 and len(CL) == 2" "%u path"
[ ! -e "$T/pub/u0.$pid.log" ] || fail "%u path: a log as root too, though nothing was due"

# fixed_run DIR HOW MODE WHAT - dropuid HOW with a fixed log path in a
# directory $T/DIR of root's with mode MODE: all 300 bytes each way and
# both close records in it, no message.
fixed_run() {
	mkdir -m "$3" "$T/$1"
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/$1/x.log" \
		sm "$PROGS/dropuid" "$2" "$nuid" "$ngid" 0 >"$T/$1.out" 2>"$T/$1.err" ||
		fail "dropuid $2 ($4) failed: $(cat "$T/$1.err")"
	check "$T/$1/x.log" "T['bytes_out'] == T['bytes_in'] == 300 and len(CL) == 2" \
		"$4: the records"
	expect_eq "$4: messages" "$(sm_lines "$T/$1.err")" 0
}

# A fixed path in a directory only root may write: the file opened before
# the change goes on getting the records.
fixed_run rootonly setuid 700 "fixed path"
expect_eq "fixed path: the file" "$(stat -c '%u %a' "$T/rootonly/x.log")" "0 600"

# A change with a way back, before anything was written (varnish's
# manager: seteuid to its user and back to root around privileged steps):
# no warning at the change (the file does not exist yet and nobody could
# not create it), the file written as root later, exact.
fixed_run rootdir tempeuid 755 "temporary seteuid"

cat >"$T/child.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.setgid(int(sys.argv[2]))
    os.setuid(int(sys.argv[1]))
    n = 0
    while n < 1000:
        n += len(b.recv(1000 - n))
    b.sendall(b"y" * 500)
    os._exit(0)
a.sendall(b"x" * 1000)
m = 0
while m < 500:
    m += len(a.recv(500 - m))
os.waitpid(pid, 0)
print("child=%d" % pid)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/rootonly/c.%p.log" \
	sm "$PY" "$T/child.py" "$nuid" "$ngid" >"$T/c.out" 2>"$T/c.err" ||
	fail "child.py failed: $(cat "$T/c.err")"
child=$(field child "$T/c.out")
[ -f "$T/rootonly/c.$child.log" ] || fail "fork child: no log (it dropped root before its first call)"
check "$T/rootonly/c.$child.log" "T['bytes_in'] == 1000 and T['bytes_out'] == 500" \
	"fork child: its bytes"
expect_eq "fork child: messages" "$(sm_lines "$T/c.err")" 0
exit 0
