# A service started under systemd's SystemCallFilter=@system-service runs
# metered as it runs without the preload.
#
# Such a filter binds the library from the program's first instruction,
# and kills the process (SIGSYS) at any call the set leaves out.  The
# library's ticker reached the program's fds with pidfd_getfd, which
# @system-service leaves out (it is in @debug): a metered python3 server
# died of SIGSYS at the ticker's first look at a TCP connection (status
# 159), and so did any metered service with a warning to say.  Now,
# where any filter binds the process, the ticker never makes that call:
# it reaches the fds through /proc/PID/fd.  (A child of its own that
# tried the call first, its death saying no, was taken back: the death
# dumped core, the whole program's memory, and before Linux 5.16 it
# would have killed the program with it.)  No core file is left here.
#
# The filter here is the set itself: `systemd-analyze syscall-filter
# @system-service`, numbered with this ABI's <sys/syscall.h>, every other
# call (and any other ABI) killing the process, as systemd makes it
# (tests/progs/allowlaunch).  Under it:
#  1. python3's http.server, each answer a second late (the ticker looks
#     at the open connection at every 0.2 s interval), serves curl twice:
#     it ends by itself with status 0, curl's bytes in its log;
#  2. the same with a log that cannot be written: status 0, the warning
#     on its stderr;
#  3. chronyd under its own Debian unit's filter (a list of calls that
#     kill, @debug among them): it answers 10 NTP queries, 480 bytes each
#     way in its log (it died of SIGSYS before its first answer);
#  4. a fork child that sends on an inherited connection, the parent
#     then recovering a killed process's state file: status 0;
#  5. a real-time program (chrt -f) under ~@privileged @resources (a
#     Debian unit's list), which kills for sched_setscheduler: status 0.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null || skip "needs systemd-analyze (systemd)"
command -v curl >/dev/null || skip "needs curl"
need_prog allowlaunch

systemd-analyze syscall-filter >"$T/sets.txt" 2>/dev/null ||
	skip "systemd-analyze syscall-filter failed"
# names SET... - the calls of the sets (and of the names) given, nested
# sets expanded, one a line.
cat >"$T/names.py" <<'PYEOF'
import sys
sets, cur = {}, None
for line in open(sys.argv[1]):
    s = line.strip()
    if line.startswith("@"):
        cur = s
        sets[cur] = []
    elif s and not s.startswith("#") and cur:
        sets[cur].append(s)
def expand(name, seen):
    if not name.startswith("@"):
        return {name}
    out = set()
    for x in sets.get(name, []):
        if x not in seen:
            seen.add(x)
            out |= expand(x, seen)
    return out
names = set()
for g in sys.argv[2:]:
    names |= expand(g, set())
for n in sorted(names):
    print(n)
PYEOF
names() {
	"$PY" "$T/names.py" "$T/sets.txt" "$@"
}
# numbers WHICH NAMES_FILE - this ABI's numbers of the calls named in the
# file (WHICH = only) or of every call but those (WHICH = but: a call the
# ABI does not number is never made).
numbers() {
	echo '#include <sys/syscall.h>' | ${CC:-cc} -E -dM - |
		awk -v which="$1" 'NR == FNR { named[$1] = 1; next }
		     $2 ~ /^__NR_/ && $3 ~ /^[0-9]+$/ {
			n = substr($2, 6)
			if ((which == "only") == (n in named)) print $3 }' "$2" -
}
names @system-service >"$T/names.txt"
numbers only "$T/names.txt" >"$T/allow.nrs"
[ "$(wc -l <"$T/allow.nrs")" -ge 200 ] ||
	fail "only $(wc -l <"$T/allow.nrs") calls in @system-service here"
grep -qx pidfd_getfd "$T/names.txt" &&
	skip "this systemd's @system-service allows pidfd_getfd: nothing to prove"
filtered=("$PROGS/allowlaunch" "$T/allow.nrs")

# all_but OUT SET... - in OUT, every call this ABI numbers but those of
# the sets (and names) given, as systemd's SystemCallFilter=~SET...
# makes a list of calls that kill; the names left out in OUT.names.
all_but() {
	local out=$1
	shift
	names "$@" >"$out.names"
	numbers but "$out.names" >"$out"
}

cat >"$T/server.py" <<'PYEOF'
import http.server, os, sys, time
class H(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        time.sleep(1)
        super().do_GET()
    def log_message(self, *a):
        pass
os.chdir(sys.argv[2])
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
for _ in range(2):
    srv.handle_request()
srv.server_close()
print("served")
PYEOF
mkdir "$T/www"
head -c 200000 /dev/urandom >"$T/www/f.bin"

# The filter must let python and curl run as they are.
"${filtered[@]}" "$PY" -c 'import http.server, socket; print("ok")' >"$T/plain.out" 2>&1 ||
	skip "python3 does not run under @system-service here: $(cat "$T/plain.out")"

# serve NAME LOG - the server under the filter, metered, logging to LOG,
# fetched twice by curl (also under the filter, metered); its status in
# $T/NAME.status, curl's counts summed in $T/NAME.curl.
serve() {
	local name=$1 port i req=0 got=0 a b c
	rm -f "$T/$name.port"
	(SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$2 SOCKMETER_FORMAT=json \
		"${filtered[@]}" env LD_PRELOAD="$LIB" "$PY" "$T/server.py" \
		"$T/$name.port" "$T/www" >"$T/$name.out" 2>"$T/$name.err"
	 echo $? >"$T/$name.status") &
	local srv=$!
	wait_for 10 test -s "$T/$name.port" || true
	port=$(cat "$T/$name.port" 2>/dev/null) ||
		fail "$name: the server did not start: $(cat "$T/$name.err")"
	for i in 1 2; do
		SOCKMETER_LOG="$T/$name.curl.%p.log" "${filtered[@]}" \
			env LD_PRELOAD="$LIB" curl -s -o "$T/$name.got" \
			-w '%{size_request} %{size_header} %{size_download}\n' \
			"http://127.0.0.1:$port/f.bin" >>"$T/$name.curl" ||
			fail "$name: curl $i failed (status $?)"
	done
	wait "$srv"
	cmp -s "$T/$name.got" "$T/www/f.bin" || fail "$name: the file came out different"
	while read -r a b c; do
		req=$((req + a))
		got=$((got + b + c))
	done <"$T/$name.curl"
	echo "$req $got" >"$T/$name.sum"
}

# 1. Metered as without the filter; and nothing of the library's died
# (a core file where cores land in the working directory).
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || true)
mkdir "$T/cores"
cd "$T/cores" || fail "cd $T/cores"
ulimit -c unlimited 2>/dev/null || true
serve ok "$T/ok.%p.log"
case $pattern in
'' | '|'* | */*) ;;
*) [ -z "$(ls "$T/cores")" ] || fail "a core file under the filter: $(ls -l "$T/cores")" ;;
esac
cd "$T" || fail "cd $T"
expect_eq "the server's status under @system-service" "$(cat "$T/ok.status")" 0
expect_eq "the server's output" "$(cat "$T/ok.out")" served
read -r req got <"$T/ok.sum"
log=$(one_log "$T/ok.[0-9]*.log")
check "$log" "T['bytes_in'] == $req and T['bytes_out'] == $got" \
	"the server's bytes (curl: $req sent, $got received)"
[ ! -s "$T/ok.err" ] || fail "the server said: $(cat "$T/ok.err")"

# 2. A warning to say.
serve warn "$T/missing/x.%p.log"
expect_eq "the server's status with a warning to say" "$(cat "$T/warn.status")" 0
grep -q "^sockmeter: log $T/missing/x.[0-9]*.log: cannot write" "$T/warn.err" ||
	fail "no warning on the server's stderr: $(cat "$T/warn.err")"

# 3. chronyd under its own unit's filter (Debian's chrony.service:
# SystemCallFilter=~@cpu-emulation @debug @module @mount @obsolete
# @raw-io @reboot @swap, a list of calls that kill): it died of SIGSYS
# before its first answer; now 10 NTP queries of 48 bytes, answered, in
# its log.
if command -v chronyd >/dev/null; then
	deny=$(sed -n 's/^SystemCallFilter=~//p' /lib/systemd/system/chrony.service 2>/dev/null | head -n 1)
	[ -n "$deny" ] || deny="@cpu-emulation @debug @module @mount @obsolete @raw-io @reboot @swap"
	# shellcheck disable=SC2086
	all_but "$T/chrony.nrs" $deny
	grep -qx pidfd_getfd "$T/chrony.nrs.names" || fail "chrony's filter lets pidfd_getfd through here"
	port=$(free_port)
	mkdir "$T/chrony"
	cat >"$T/chrony/chrony.conf" <<CONF
port $port
bindaddress 127.0.0.1
allow 127.0.0.1
cmdport 0
local stratum 8
pidfile $T/chrony/chronyd.pid
driftfile $T/chrony/drift
CONF
	(SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$T/chrony/c.%p.log" SOCKMETER_FORMAT=json \
		"$PROGS/allowlaunch" "$T/chrony.nrs" env LD_PRELOAD="$LIB" \
		chronyd -d -x -u root -f "$T/chrony/chrony.conf" >"$T/chrony/out" 2>&1
	 echo $? >"$T/chrony/status") &
	cpid=$!
	cat >"$T/ntp.py" <<'PYEOF'
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.5)
got = 0
deadline = time.time() + 10
i = 0
while i < 10 and time.time() < deadline:
    pkt = bytearray(48)
    pkt[0] = (4 << 3) | 3
    struct.pack_into("!II", pkt, 40, int(time.time()) + 2208988800, i)
    s.sendto(bytes(pkt), ("127.0.0.1", int(sys.argv[1])))
    try:
        d, _ = s.recvfrom(1024)
    except socket.timeout:
        continue
    got += len(d)
    i += 1
    time.sleep(0.1)
print(i, got)
PYEOF
	sleep 0.5
	read -r answered got <<<"$("$PY" "$T/ntp.py" "$port")"
	kill -TERM "$(cat "$T/chrony/chronyd.pid" 2>/dev/null)" 2>/dev/null
	wait "$cpid"
	expect_eq "chronyd's status under its unit's filter" "$(cat "$T/chrony/status")" 0
	expect_eq "chronyd's answers (queries, bytes)" "$answered $got" "10 480"
	log=$(one_log "$T/chrony/c.*.log")
	check "$log" "T['bytes_in'] == 480 and T['bytes_out'] == 480" "chronyd's bytes"
else
	echo "no chronyd: its case not run" >&2
fi

# 4. A fork child, and a recovery of a killed process's file.
mkdir -m 700 "$T/state"
killme_py "$T/killme.py"
SOCKMETER_STATE=$T/state SOCKMETER_LOG="$T/dead.%p.log" sm "$PY" "$T/killme.py" 2>/dev/null
[ -n "$(ls "$T/state"/*.state 2>/dev/null)" ] || fail "no state file of the killed process"
cat >"$T/forks.py" <<'PYEOF'
import os, socket, time
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
c.sendall(b"p" * 300)
pid = os.fork()
if pid == 0:
    c.sendall(b"c" * 200)
    time.sleep(0.5)
    os._exit(0)
_, st = os.waitpid(pid, 0)
got = 0
while got < 500:
    got += len(s.recv(65536))
time.sleep(1.6)
print("child", st, "got", got)
PYEOF
SOCKMETER_INTERVAL=0.2 SOCKMETER_STATE=$T/state SOCKMETER_LOG="$T/forks.%p.log" \
	"${filtered[@]}" env LD_PRELOAD="$LIB" "$PY" "$T/forks.py" >"$T/forks.out" 2>"$T/forks.err"
expect_eq "the forking program's status" "$?" 0
expect_eq "the forking program's output" "$(cat "$T/forks.out")" "child 0 got 500"
[ -z "$(ls "$T/state"/*.state 2>/dev/null)" ] ||
	fail "the killed process's state file was not recovered under the filter"

# 5. A real-time program (chrt -f) under SystemCallFilter=~@privileged
# @resources: the ticker's move to the ordinary policy (t_ticker_not_realtime)
# was a sched_setscheduler, which @resources holds: SIGSYS at its start.
# Under a filter the ticker keeps the policy it inherited.
if command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null; then
	all_but "$T/res.nrs" @privileged @resources
	grep -qx sched_setscheduler "$T/res.nrs.names" ||
		fail "@resources does not hold sched_setscheduler here"
	SOCKMETER_LOG="$T/rt.%p.log" SOCKMETER_FORMAT=json chrt -f 10 \
		"$PROGS/allowlaunch" "$T/res.nrs" env LD_PRELOAD="$LIB" \
		"$PY" "$T/forks.py" >"$T/rt.out" 2>"$T/rt.err"
	expect_eq "a real-time program's status under ~@privileged @resources" "$?" 0
	expect_eq "its output" "$(cat "$T/rt.out")" "child 0 got 500"
else
	echo "SCHED_FIFO not allowed here: the real-time case not run" >&2
fi
exit 0
