# A limit on tasks set after start-up must not leave the process without
# its ticker (sm_tasks_limiting).  haproxy's workers drop root and then set
# RLIMIT_NPROC to 0 (so that nothing can fork), before their first accept:
# the ticker, started at the first tracked fd, could not start any more,
# the worker had no interval records, and close records beyond the queue's
# 8,192 were dropped.  Now the fds open at the limit are classified and
# the ticker started before it.
#  - python: a socket inherited as fd 3 (its kind unknown until used), the
#    limit set through glibc's setrlimit and through syscall(SYS_prlimit64),
#    then bytes sent: an interval record while it runs, the exact bytes.
#  - tests/progs/nproc2: two threads setting the limit at once.
#  - real haproxy -W, a worker as nobody, the default log path: 9,000
#    requests from ab, every one a close record with ab's bytes, no drops.
. "$(dirname "$0")/lib.sh"

nuid=$(id -u nobody 2>/dev/null) || skip "no user nobody"
# The limit binds users other than root only: as root the processes run
# as nobody.  /usr/bin/python3: nobody may not run a python under a home.
pybin=/usr/bin/python3
[ -x "$pybin" ] || pybin=$PY
asuser=()
if [ "$(id -u)" = 0 ]; then
	asuser=(setpriv --reuid="$nuid" --regid="$(id -g nobody)" --clear-groups)
fi
chmod 755 "$T"
mkdir -m 1777 "$T/log"

cat >"$T/child.py" <<'PYEOF'
import ctypes, os, resource, sys, time
how, fd, n = sys.argv[1], 3, int(sys.argv[2])
if how == "named":
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
else:
    class RL(ctypes.Structure):
        _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]
    nr = {"x86_64": 302, "aarch64": 261}[os.uname().machine]
    libc = ctypes.CDLL(None, use_errno=True)
    rl = RL(0, 0)
    if libc.syscall(nr, 0, resource.RLIMIT_NPROC, ctypes.byref(rl), None):
        sys.exit("prlimit64: errno %d" % ctypes.get_errno())
try:
    os.fork()
    sys.exit("fork worked under RLIMIT_NPROC 0: the test tests nothing")
except OSError:
    pass
buf = b"x" * 1000
for _ in range(n // 1000):
    os.write(fd, buf)
time.sleep(1.3)  # an interval record (interval 1 s) needs the ticker
os.close(fd)
PYEOF
cat >"$T/parent.py" <<'PYEOF'
import os, socket, subprocess, sys
os.open("/dev/null", os.O_RDONLY)  # fd 3 until the child's socket takes it
a, b = socket.socketpair()
os.dup2(b.fileno(), 3, inheritable=True)
b.close()
p = subprocess.Popen(sys.argv[1:], pass_fds=(3,))
os.close(3)
got = 0
while True:
    d = a.recv(65536)
    if not d:
        break
    got += len(d)
print("moved=%d" % got)
sys.exit(p.wait())
PYEOF
for how in named raw; do
	N=200000
	"${asuser[@]}" timeout 30 "$pybin" "$T/parent.py" \
		env LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/log/$how.%p.log" \
		SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=1 \
		"$pybin" "$T/child.py" "$how" "$N" >"$T/$how.out" 2>"$T/$how.err" ||
		fail "$how: failed: $(tail -n 3 "$T/$how.err")"
	grep -q "cannot start the ticker" "$T/$how.err" &&
		fail "$how: $(grep sockmeter "$T/$how.err")"
	expect_eq "$how: bytes the parent got" "$(field moved "$T/$how.out")" "$N"
	log=$(one_log "$T/log/$how.*.log")
	expect_eq "$how: bytes_out" "$(q "$log" "tot('bytes_out')")" "$N"
	check "$log" "len(IV) >= 1" "$how: no interval record (no ticker)"
done

# Two threads setting the limit at once (haproxy's two threads do): the
# one that does not start the ticker waits for its thread to exist, else
# its limit landed first (15 of 20 runs without a ticker before).
need_prog nproc2
for i in 1 2 3 4 5 6 7 8; do
	"${asuser[@]}" timeout 30 "$pybin" "$T/parent.py" \
		env LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/log/two.%p.log" \
		SOCKMETER_FORMAT=json "$PROGS/nproc2" 5000 10 \
		>"$T/two.out" 2>"$T/two.err" ||
		fail "two threads: failed: $(tail -n 3 "$T/two.err")"
	grep -q "cannot start the ticker" "$T/two.err" &&
		fail "two threads, run $i: $(grep sockmeter "$T/two.err")"
	expect_eq "two threads: bytes the parent got" "$(field moved "$T/two.out")" 5000
done
for log in "$T"/log/two.*.log; do
	expect_eq "two threads: bytes_out" "$(q "$log" "tot('bytes_out')")" 5000
done

# --- haproxy --------------------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "haproxy part skipped: needs root" >&2; exit 0; }
command -v haproxy >/dev/null || fail "haproxy missing (scripts/install-deps)"
command -v ab >/dev/null || fail "ab missing (scripts/install-deps)"
logdir=/tmp/sockmeter-$nuid
N=9000
for try in 1 2 3; do
	port=$(free_port)
	cat >"$T/h.cfg" <<CONF
global
	user nobody
	group $(id -gn nobody)
	nbthread 2
defaults
	mode http
	timeout connect 1s
	timeout client 5s
	timeout server 5s
frontend f
	bind 127.0.0.1:$port
	http-request return status 200 content-type text/plain string "hello, world"
CONF
	# The default log path (the worker's records go to nobody's
	# directory): with an explicit one the ticker starts at the change
	# of user, before the limit, and the test would test nothing.
	bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json \
		SOCKMETER_INTERVAL=1 haproxy -W -db -p "$T/h.pid" -f "$T/h.cfg" \
		>"$T/h.out" 2>"$T/h.err"
	master=$BG_PID
	wait_listen "$port" "$master" 10 && break
	kill "$master" 2>/dev/null
	master=
done
[ -n "$master" ] || fail "haproxy did not start: $(tail -n 3 "$T/h.err")"
wait_for 10 test -s "$T/h.pid" || fail "haproxy wrote no pid file"
hm=$(cat "$T/h.pid")
worker=
for i in $(seq 100); do
	worker=$(pgrep -P "$hm" -x haproxy | head -n 1)
	[ -n "$worker" ] && break
	sleep 0.05
done
[ -n "$worker" ] || fail "no haproxy worker"
trap 'rm -f "$logdir/haproxy.$worker.log" /tmp/sockmeter-0/haproxy.$hm.log; sm_cleanup' EXIT
expect_eq "worker's uid" "$(awk '/^Uid:/ { print $3 }' /proc/"$worker"/status)" "$nuid"
ab -q -n "$N" -c 8 "http://127.0.0.1:$port/" >"$T/ab.out" 2>&1 ||
	fail "ab failed: $(tail -n 2 "$T/ab.out")"
grep -q "^Failed requests: *0" "$T/ab.out" || fail "ab saw failed requests"
sent=$(awk '/^Total transferred:/ { print $3 }' "$T/ab.out")
sleep 1.2 # an interval record after the requests
kill -USR1 "$hm" # a soft stop: the worker ends by itself
bg_wait "$master" 20 >/dev/null
grep -q "cannot start the ticker" "$T/h.err" &&
	fail "haproxy: $(grep sockmeter "$T/h.err")"
log=$logdir/haproxy.$worker.log
[ -f "$log" ] || fail "no worker log $log"
cat >"$T/w.py" <<PYEOF
# (ab opens a few connections more than it uses and closes them without a
# request; haproxy answers those with an error, which ab does not count.)
tcp = [f for f in CL if f["kind"] == "tcp" and f.get("local") == "127.0.0.1:$port"
       and f.get("peer") and f["bytes_in"]]
assert len(tcp) == $N, "%d close records of requests, expected $N" % len(tcp)
assert sum(f["bytes_out"] for f in tcp) == $sent, \
    "bytes_out %d, ab got %d" % (sum(f["bytes_out"] for f in tcp), $sent)
assert len(set(f["bytes_in"] for f in tcp)) == 1 and tcp[0]["bytes_in"] > 0, \
    "requests of different sizes: %s" % sorted(set(f["bytes_in"] for f in tcp))[:5]
assert "close_records_dropped" not in T, "dropped: %d" % T["close_records_dropped"]
assert len(IV) >= 1, "no interval record: the worker had no ticker"
assert "end" not in E, "the worker did not write its own exit record: %s" % E["end"]
PYEOF
check_py "$log" "$T/w.py" "haproxy's worker"
exit 0
