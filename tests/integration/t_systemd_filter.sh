# A service started under systemd's SystemCallFilter=@system-service runs
# metered as it runs without the preload.
#
# Such a filter binds the library from the program's first instruction,
# and kills the process (SIGSYS) at any call the set leaves out.  The
# library's ticker reached the program's fds with pidfd_getfd, which
# @system-service leaves out (it is in @debug): a metered python3 server
# died of SIGSYS at the ticker's first look at a TCP connection (status
# 159), and so did any metered service with a warning to say.  Now the
# ticker asks a child of its own first where a filter binds it (the
# child's death says no) and reaches the fds through /proc/PID/fd.
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
#  3. a fork child that sends on an inherited connection, the parent
#     then recovering a killed process's state file: status 0.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null || skip "needs systemd-analyze (systemd)"
command -v curl >/dev/null || skip "needs curl"
need_prog allowlaunch

systemd-analyze syscall-filter >"$T/sets.txt" 2>/dev/null ||
	skip "systemd-analyze syscall-filter failed"
# The set's calls, its nested sets expanded.
"$PY" - "$T/sets.txt" >"$T/names.txt" <<'PYEOF'
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
    out = set()
    for x in sets.get(name, []):
        if x.startswith("@"):
            if x not in seen:
                seen.add(x)
                out |= expand(x, seen)
        else:
            out.add(x)
    return out
for n in sorted(expand("@system-service", set())):
    print(n)
PYEOF
echo '#include <sys/syscall.h>' | ${CC:-cc} -E -dM - |
	awk 'NR == FNR { want[$1] = 1; next }
	     $2 ~ /^__NR_/ { n = substr($2, 6); if (n in want) print $3 }' \
		"$T/names.txt" - >"$T/allow.nrs"
[ "$(wc -l <"$T/allow.nrs")" -ge 200 ] ||
	fail "only $(wc -l <"$T/allow.nrs") calls in @system-service here"
grep -qx pidfd_getfd "$T/names.txt" &&
	skip "this systemd's @system-service allows pidfd_getfd: nothing to prove"
filtered=("$PROGS/allowlaunch" "$T/allow.nrs")

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
	for i in $(seq 100); do
		[ -s "$T/$name.port" ] && break
		sleep 0.1
	done
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

# 1. Metered as without the filter.
serve ok "$T/ok.%p.log"
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

# 3. A fork child, and a recovery of a killed process's file.
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
exit 0
