# One socket behind two fds or two processes: each fd counts its own calls
# while the kernel counts the socket's, so their difference is not bytes
# the preload missed.  Such a connection's records carry no
# bytes_*_unseen, and the suite's unseen check (unseen.py, after every
# test) holds; yet the numbers stay exact:
#  1. git clone from git daemon, both metered: the client reads the pack
#     on one fd and writes on a dup of it; the daemon's child reads the
#     request, then upload-pack (spawned with the socket as stdin and
#     stdout) serves it.  Every process summed, each side got exactly
#     what the other sent.
#  2. A server that forks after reading part of a request: the child reads
#     the rest and replies, the parent closes its copy after the child
#     ended (so the kernel's count holds the child's bytes).
#  3. A connect that is refused (blocking and non-blocking): no kernel
#     view of a connection that never was (no rtt 0 / min_rtt 4294967 ms
#     placeholders, no "unseen" leftovers of the kernel's sequence
#     numbers), and the peer it was refused by.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || fail "git missing (scripts/install-deps)"
gitd=$(git --exec-path)/git-daemon
[ -x "$gitd" ] || fail "git-daemon missing ($gitd)"

# --- 1. git ---------------------------------------------------------------
mkdir -p "$T/srv" "$T/w"
git init -q --bare "$T/srv/repo.git"
git -C "$T/srv/repo.git" symbolic-ref HEAD refs/heads/main
touch "$T/srv/repo.git/git-daemon-export-ok"
make_file "$T/w/big" 3000000
(cd "$T/w" && git init -q && git add big &&
	git -c user.name=t -c user.email=t@t commit -qm x &&
	git push -q "$T/srv/repo.git" HEAD:refs/heads/main) >"$T/push.out" 2>&1 ||
	fail "making the repository: $(tail -n 3 "$T/push.out")"
daemon=
for try in 1 2 3; do
	port=$(free_port)
	bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json \
		SOCKMETER_LOG="$T/srv.%p.log" "$gitd" --reuseaddr \
		--base-path="$T/srv" --port="$port" --listen=127.0.0.1 "$T/srv"
	daemon=$BG_PID
	wait_listen "$port" "$daemon" 10 && break
	kill "$daemon" 2>/dev/null
	daemon=
done
[ -n "$daemon" ] || fail "git daemon did not start"
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/cli.%p.log" \
	sm git clone -q "git://127.0.0.1:$port/repo.git" "$T/c1" >"$T/c.out" 2>&1 ||
	fail "git clone failed: $(tail -n 3 "$T/c.out")"
cmp -s "$T/w/big" "$T/c1/big" || fail "the clone's file differs"
kill "$daemon"
bg_wait "$daemon" 20 || true
cat >"$T/sum.py" <<'PYEOF'
import glob, json, sys
tot = {"in": 0, "out": 0}
pairs = {}
for name in glob.glob(sys.argv[1]):
    recs = [json.loads(l) for l in open(name)]
    fds = [r["fds"][0] for r in recs if r["type"] == "close"]
    fds += [f for r in recs if r["type"] == "exit" for f in r["fds"]]
    for f in fds:
        if f["kind"] == "tcp" and f.get("peer"):
            tot["in"] += f["bytes_in"]
            tot["out"] += f["bytes_out"]
            key = (name, f["local"], f["peer"])
            pairs[key] = pairs.get(key, 0) + 1
print(tot["in"], tot["out"], max(pairs.values()))
PYEOF
read -r srv_in srv_out _ < <("$PY" "$T/sum.py" "$T/srv.*.log")
read -r cli_in cli_out cli_fds < <("$PY" "$T/sum.py" "$T/cli.*.log")
[ "$cli_fds" -ge 2 ] ||
	fail "the clone did not use two fds for its connection (a dup): nothing shared was tested"
[ "$srv_out" -ge 3000000 ] || fail "the server's processes sent only $srv_out bytes"
expect_eq "git: client received vs server sent" "$cli_in" "$srv_out"
expect_eq "git: client sent vs server received" "$cli_out" "$srv_in"

# --- 2. a connection shared with a fork child -------------------------------
cat >"$T/forked.py" <<'PYEOF'
import os, socket, sys
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
c.sendall(b"q" * 6000)
got = 0
while got < 1000:
    got += len(s.recv(1000 - got))
pid = os.fork()
if pid == 0:
    rest = 0
    while rest < 5000:
        rest += len(s.recv(5000 - rest))
    s.sendall(b"r" * 300)
    os._exit(0)
os.waitpid(pid, 0)
s.close()
back = 0
while back < 300:
    back += len(c.recv(300 - back))
c.close()
print("parent", os.getpid(), "child", pid)
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/fk.%p.log" sm "$PY" "$T/forked.py" \
	>"$T/fk.out" 2>&1 || fail "forked.py failed: $(tail -n 3 "$T/fk.out")"
parent=$(awk '{ print $2 }' "$T/fk.out")
child=$(awk '{ print $4 }' "$T/fk.out")
plog=$T/fk.$parent.log
clog=$T/fk.$child.log
[ -f "$plog" ] && [ -f "$clog" ] || fail "no log of the parent or the child"
srv=$(q "$plog" "[c['local'] for c in closes(kind='tcp') if c['bytes_in'] == 1000][0]")
expect_eq "fork: the parent's server side read" \
	"$(q "$plog" "closes(kind='tcp', local='$srv')[0]['bytes_in']")" 1000
check "$plog" "'bytes_in_unseen' not in closes(kind='tcp', local='$srv')[0]" \
	"fork: the parent's record compares its count with the socket's (the child's bytes in it)"
expect_eq "fork: the child's bytes" \
	"$(q "$clog" "[(c['bytes_in'], c['bytes_out']) for c in conns(kind='tcp') if c['local'] == '$srv']")" \
	"[[5000, 300]]"
expect_eq "fork: the client's bytes" \
	"$(q "$plog" "[(c['bytes_out'], c['bytes_in']) for c in closes(kind='tcp') if c['peer'] == '$srv']")" \
	"[[6000, 300]]"

# --- 3. refused connects ----------------------------------------------------
closed=$(free_port)
cat >"$T/refused.py" <<'PYEOF'
import socket, sys
port = int(sys.argv[1])
for blocking in (True, False):
    s = socket.socket()
    s.setblocking(blocking)
    try:
        s.connect(("127.0.0.1", port))
    except (ConnectionRefusedError, BlockingIOError):
        pass
    if not blocking:
        socket.socket.settimeout(s, 5)
        try:
            s.recv(1)
        except OSError:
            pass
    s.close()
PYEOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/rf.log" sm "$PY" "$T/refused.py" "$closed" \
	>"$T/rf.out" 2>&1 || fail "refused.py failed: $(tail -n 3 "$T/rf.out")"
expect_eq "refused: records naming the peer" \
	"$(q "$T/rf.log" "len(closes(kind='tcp', peer='127.0.0.1:$closed'))")" 2
check "$T/rf.log" "all('tcp' not in c for c in closes(kind='tcp'))" \
	"refused: a kernel view of a connection that never was"
check "$T/rf.log" "T.get('bytes_out_unseen', 0) == 0 and T.get('bytes_in_unseen', 0) == 0" \
	"refused: unseen bytes in the totals"
exit 0
