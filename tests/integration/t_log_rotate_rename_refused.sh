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

# A write that fails (a file size limit) is not a refused rename: the
# batch is refused, said as such, and its close records count as dropped
# until written (a reviewer's run: the write's failure took the rename's
# way, the rest of the batch was written after the cut-back head, whose
# records were lost without a count or a "cannot write").
mkdir -p "$T/fs"
cat >"$T/fs.py" <<'PYEOF'
import resource, socket, time
resource.setrlimit(resource.RLIMIT_FSIZE, (3700, 3700))
def closes(k):
    for i in range(k):
        a, b = socket.socketpair()
        a.send(b"x")
        b.recv(10)
        a.close()
        b.close()
closes(3)
time.sleep(1.5)  # a batch of 6 close records, about 2,400 bytes
closes(3)
time.sleep(1.5)  # 6 more: the write passes the 3,700-byte limit
PYEOF
env LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/fs/r.log" SOCKMETER_FORMAT=json \
	SOCKMETER_LOG_MAX_SIZE=4415 SOCKMETER_STATE="$T/fs.state" \
	"$py" "$T/fs.py" >"$T/fs.out" 2>"$T/fs.err" || fail "fs.py failed: $(cat "$T/fs.err")"
grep -q "cannot write: File too large" "$T/fs.err" ||
	fail "fsize: the refused write not said: $(cat "$T/fs.err")"
grep -q "cannot rotate" "$T/fs.err" && fail "fsize: taken for a refused rename: $(cat "$T/fs.err")"
# The exit record did not fit either: the state file's recovery writes it
# (the limit was the process's), and the counts add up.
"$SM_TOP/build/sockmeter-recover" -q "$T/fs.state" >/dev/null 2>&1 || fail "recover failed"
log=$T/fs/r.log
expect_eq "fsize: close records + close_records_dropped" \
	"$(q "$log" "len([r for r in R if r['type'] == 'close']) + T.get('close_records_dropped', 0)")" 12
exit 0
