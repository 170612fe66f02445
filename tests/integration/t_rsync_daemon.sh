# rsync over its own protocol, both ends metered: `rsync --daemon` and
# `rsync -a rsync://127.0.0.1:PORT/mod/ dst/` move a 6 MB file.  Both ends
# fork (the daemon per connection, the client its receiver), and those
# children end with _exit: together, the client's processes must have
# received exactly what the server's processes sent over TCP, and sent
# exactly what they received.  The children's numbers reach the log only
# through the _exit interposition (issue 8): without it the test is
# skipped, not failed.
. "$(dirname "$0")/lib.sh"

command -v rsync >/dev/null || fail "rsync missing (scripts/install-deps)"
nm -D --defined-only "$LIB" 2>/dev/null | awk '{ print $NF }' | grep -qx _exit ||
	skip "libsockmeter.so does not interpose _exit yet (issue 8): the forked rsync children's records would be lost"

mkdir -p "$T/src" "$T/dst"
make_file "$T/src/big" 6000000
cat >"$T/rsyncd.conf" <<CONF
use chroot = no
pid file = $T/rsyncd.pid
log file = $T/rsyncd.log
[mod]
	path = $T/src
	read only = yes
CONF
[ "$(id -u)" = 0 ] && printf '\tuid = %s\n\tgid = %s\n' "$(id -un)" "$(id -gn)" >>"$T/rsyncd.conf"
for try in 1 2 3; do
	port=$(free_port)
	bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json \
		SOCKMETER_LOG="$T/srv.%p.log" rsync --daemon --no-detach \
		--config="$T/rsyncd.conf" --address=127.0.0.1 --port="$port"
	daemon=$BG_PID
	wait_listen "$port" "$daemon" 10 && break
	kill "$daemon" 2>/dev/null
	daemon=
done
[ -n "$daemon" ] || fail "rsync daemon did not start: $(tail -n 3 "$T/rsyncd.log")"
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/cli.%p.log" \
	sm rsync -a "rsync://127.0.0.1:$port/mod/" "$T/dst/" >"$T/c.out" 2>&1 ||
	fail "rsync client failed: $(tail -n 3 "$T/c.out")"
cmp -s "$T/src/big" "$T/dst/big" || fail "the file did not arrive whole"
kill "$daemon"
bg_wait "$daemon" 20 || true
# Every process, both ends: the TCP bytes of all its connections.
cat >"$T/sum.py" <<'PYEOF'
import glob, json, sys
tot = {"in": 0, "out": 0}
exits = 0
for name in glob.glob(sys.argv[1]):
    recs = [json.loads(l) for l in open(name)]
    closed = [r["fds"][0] for r in recs if r["type"] == "close"]
    ex = [r for r in recs if r["type"] == "exit"]
    exits += len(ex)
    still = [f for r in ex for f in r["fds"]]
    for f in closed + still:
        if f["kind"] == "tcp":
            tot["in"] += f["bytes_in"]
            tot["out"] += f["bytes_out"]
print(tot["in"], tot["out"], exits)
PYEOF
read -r srv_in srv_out srv_exits < <("$PY" "$T/sum.py" "$T/srv.*.log")
read -r cli_in cli_out cli_exits < <("$PY" "$T/sum.py" "$T/cli.*.log")
[ "$cli_exits" -ge 2 ] || fail "only $cli_exits client exit records (its forked receiver?)"
[ "$srv_out" -ge 6000000 ] || fail "the server's processes sent only $srv_out bytes"
expect_eq "client received vs server sent" "$cli_in" "$srv_out"
expect_eq "client sent vs server received" "$cli_out" "$srv_in"
exit 0
