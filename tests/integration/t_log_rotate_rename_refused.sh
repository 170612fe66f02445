# [log] max_size on a log the process may append to but not rename (its
# directory root's, 0755; the file its own): the rotation's rename is
# refused.  The records go on into the file past max_size, and one line
# says so, naming the rename and its error.  Before, the warning said
# "cannot write: Permission denied" (the file took writes all along) and
# every record after the first max_size bytes was lost: 26 close records
# of 600 in a helper's run.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to run as another user)"
command -v setpriv >/dev/null || skip "no setpriv"
py=/usr/bin/python3
[ -x "$py" ] || py=$PY
chmod 755 "$T"
mkdir -m 755 "$T/logs"
: >"$T/logs/r.log"
chown 4242 "$T/logs/r.log"
chmod 600 "$T/logs/r.log"
cat >"$T/p.py" <<'PYEOF'
import socket
for i in range(300):
    a, b = socket.socketpair()
    a.send(b"x" * (i + 1))
    b.recv(1000)
    a.close()
    b.close()
PYEOF
chmod 644 "$T/p.py"
env LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/logs/r.log" SOCKMETER_FORMAT=json \
	SOCKMETER_LOG_MAX_SIZE=4096 SOCKMETER_STATE=off \
	setpriv --reuid=4242 --regid=4242 --clear-groups "$py" "$T/p.py" \
	>"$T/out" 2>"$T/err" || fail "python3 failed: $(cat "$T/err")"
expect_eq "warnings" "$(grep -c '^sockmeter:' "$T/err")" 1
grep -q "^sockmeter: log $T/logs/r.log: cannot rotate it (renaming it to $T/logs/r.log.1: Permission denied); the records go on into it, past max_size\$" "$T/err" ||
	fail "the warning: $(cat "$T/err")"
[ ! -e "$T/logs/r.log.1" ] || fail "a rotated file was made"
log=$T/logs/r.log
expect_eq "close records" "$(q "$log" "len([r for r in R if r['type'] == 'close'])")" 600
expect_eq "fds_closed" "$(q "$log" "T['fds_closed']")" 600
expect_eq "close_records_dropped" "$(q "$log" "T.get('close_records_dropped', 0)")" 0
expect_eq "bytes out in close records" \
	"$(q "$log" "sum(f['bytes_out'] for r in R if r['type'] == 'close' for f in r['fds'])")" 45150
exit 0
