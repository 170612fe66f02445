# A log that refuses a batch and takes the next: the close records of the
# refused batch wait and are written with the next one, none lost.  The
# case of dante's main process (a helper's sweep, 2026-12-05): it switches
# to nobody (seteuid) right at start and back to root now and then; its
# first connection, and so the ticker, came while it was nobody, and the
# ticker's first batch could not open the log (an explicit path in a
# directory only root may write): one close record lost every run
# (close_records_dropped=1), though the next batch, made as root, was
# written.  Here python3 does the same with 30 connections made as nobody,
# the log refused once (EACCES), then 10 more as root: all 81 close
# records in the log, none counted as dropped, the bytes exact.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
nuid=$(id -u nobody) || fail "no user nobody"
chmod 755 "$T"
mkdir -m 755 "$T/logs"  # root's: nobody may not make a file in it
mkdir -m 1777 "$T/st"
# A python3 that nobody may read (not one under root's home, as pyenv's).
py=/usr/bin/python3
[ -x "$py" ] || py=$PY
cat >"$T/toggle.py" <<'PYEOF'
import os, socket, sys, time
os.seteuid(int(sys.argv[1]))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
sent = 0
def one(n):
    global sent
    c = socket.create_connection(srv.getsockname())
    a, _ = srv.accept()
    c.sendall(b"x" * n)
    got = 0
    while got < n:
        got += len(a.recv(65536))
    c.close()
    a.close()
    sent += n
for i in range(30):
    one(100 + i)
time.sleep(1.6)  # the ticker's first batch: refused, as nobody
os.seteuid(0)
for i in range(10):
    one(1000 + i)
srv.close()
print("sent=%d" % sent)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/%p.log" SOCKMETER_STATE="$T/st/%u" \
	sm "$py" "$T/toggle.py" "$nuid" >"$T/out" 2>"$T/err" ||
	fail "python3 failed: $(cat "$T/err")"
grep -q "cannot write: Permission denied" "$T/err" ||
	fail "the log never refused a batch (the case is not made): $(cat "$T/err")"
grep -q "which wait for it" "$T/err" ||
	fail "the warning does not say that close records wait: $(cat "$T/err")"
sent=$(sed -n 's/^sent=//p' "$T/out")
log=$(one_log "$T/logs/*.log")
expect_eq "exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
# 40 connections, both ends, and the listener.
expect_eq "fds_closed" "$(q "$log" "T['fds_closed']")" 81
expect_eq "close records" "$(q "$log" "len([r for r in R if r['type'] == 'close'])")" 81
expect_eq "close_records_dropped" "$(q "$log" "T.get('close_records_dropped', 0)")" 0
expect_eq "bytes out in close records" \
	"$(q "$log" "sum(f['bytes_out'] for r in R if r['type'] == 'close' for f in r['fds'])")" "$sent"
expect_eq "bytes in in close records" \
	"$(q "$log" "sum(f['bytes_in'] for r in R if r['type'] == 'close' for f in r['fds'])")" "$sent"
exit 0
