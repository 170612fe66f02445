# A process that is not root but holds CAP_SETUID (a service given it as
# an ambient capability) changes user after its state file was made: the
# new user may write the file through the mapping the process keeps, its
# header's log path too, and the old user's recovery would take that word
# and append, as the old user, wherever it pointed.  So the file is marked
# at the change (mode 0400), as root's are, and its owner's recovery
# writes the killed process's record to the log the process named before
# the change (kept in the file's extended attribute user.sockmeter.log,
# which only the file's owner can set: the new user cannot), not into the
# log the header names now.  Before: not marked (only root's were), the
# record went wherever the header said.
#  - python as nobody with CAP_SETUID/CAP_SETGID: a connection to itself,
#    1,000 bytes one way, setresuid to uid 12345, 3,000 bytes back, then
#    SIGKILL;
#  - its file in nobody's state directory, mode 0400;
#  - nobody's recovery (no capabilities): the record, end killed, with
#    exactly those bytes, in nobody's log (%u was nobody's uid before the
#    change), none in the new user's, none beside the state file.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to start a user with CAP_SETUID)"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
# Debian's python: nobody may not run one under /root (pyenv).
SYSPY=/usr/bin/python3
[ -x "$SYSPY" ] || skip "no $SYSPY"
nuid=$(id -u nobody) || fail "no user nobody"
newuid=12345
chmod 755 "$T"
mkdir -m 1777 "$T/log" "$T/st"
cat >"$T/p.py" <<'PYEOF'
import os, signal, socket, sys
new = int(sys.argv[1])
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
c.sendall(b"x" * 1000)
got = 0
while got < 1000:
    got += len(s.recv(1000 - got))
os.setresgid(new, new, new)
os.setresuid(new, new, new)
s.sendall(b"y" * 3000)
back = 0
while back < 3000:
    back += len(c.recv(3000 - back))
print("pid=%d got=%d back=%d" % (os.getpid(), got, back), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
PYEOF
chmod 644 "$T/p.py"
timeout 30 setpriv --reuid="$nuid" --regid="$nuid" --clear-groups \
	--inh-caps=+setuid,+setgid --ambient-caps=+setuid,+setgid \
	env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json \
	SOCKMETER_LOG="$T/log/%u.%n.%p.log" SOCKMETER_STATE="$T/st/%u" \
	"$SYSPY" "$T/p.py" "$newuid" >"$T/p.out" 2>"$T/p.err"
grep -q "got=1000 back=3000" "$T/p.out" || fail "python: $(cat "$T/p.out" "$T/p.err")"
[ -s "$T/p.err" ] && ! grep -q Killed "$T/p.err" && fail "stderr: $(head -n 3 "$T/p.err")"
pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/p.out")
f=$(find "$T/st" -name "$pid-*.state")
[ -n "$f" ] || fail "no state file of $pid: $(find "$T/st" | tr '\n' ' ')"
expect_eq "the file's directory" "$(dirname "$f")" "$T/st/$nuid"
expect_eq "the file's mode (marked at the change)" "$(stat -c %a "$f")" 400
runuser -u nobody -- "$SM_TOP/build/sockmeter-recover" "$T/st/$nuid" \
	2>"$T/r.err" || fail "nobody's recover: $(cat "$T/r.err")"
ls "${f%.state}.recovered.log" 2>/dev/null &&
	fail "the record went beside the state file: $(cat "$T/r.err")"
rec=$T/log/$nuid.python3.$pid.log
[ -f "$rec" ] || fail "no $rec: $(cat "$T/r.err")"
[ -e "$T/log/$newuid.python3.$pid.log" ] &&
	[ "$(grep -c '"end":"killed"' "$T/log/$newuid.python3.$pid.log")" != 0 ] &&
	fail "the recovery wrote into the log the header names"
expect_eq "the killed process's record [end, bytes_in, bytes_out]" \
	"$(q "$rec" "[E.get('end'), E['totals']['bytes_in'], E['totals']['bytes_out']]")" \
	'["killed", 4000, 4000]'
expect_eq "owner of $rec" "$(stat -c %u "$rec")" "$nuid"
exit 0
