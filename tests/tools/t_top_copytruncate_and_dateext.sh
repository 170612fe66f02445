# sockmeter top follows a log through real logrotate's copytruncate and
# dateext, with top stopped (SIGSTOP) across each rotation so that records
# are written after its last read and before the rotation, and more after
# it: every connection of the server is in top's last table.
#  - copytruncate: logrotate copies the log to LOG.1 and truncates it; the
#    records written between top's last read and the copy are read from
#    the copy (before: they were never shown, nothing said: 23,556 of
#    27,689 connections in a helper's run), and a log written again past
#    where top stopped is still known as truncated (the bytes before that
#    point changed);
#  - dateext: the log renamed to LOG-DATE is found by its inode (before:
#    what it held past top's last read was never shown).
. "$(dirname "$0")/lib.sh"
need curl
need logrotate
mkdir -p "$T/www" "$T/logs"
head -c 3000 /dev/urandom >"$T/www/f"
log=$T/logs/srv.log
conf() { # NAME DIRECTIVE...: a logrotate config for $log
	local name=$1
	shift
	{
		echo "$log {"
		printf '    %s\n' rotate\ 5 missingok "$@"
		echo "}"
	} >"$T/$name.conf"
}
conf copy copytruncate
conf dated dateext 'dateformat -%s' create
get() { # N: N requests, one connection each (curl unmetered)
	local i
	for i in $(seq "$1"); do
		curl -s -o /dev/null "http://127.0.0.1:$port/f" || fail "curl failed"
	done
}
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$log \
	bg_start sm "$PY" "$HERE/serve.py" "$T/www" 60 "$T/port"
spid=$BG_PID
wait_for 10 test -s "$T/port" || fail "the HTTP server did not start"
port=$(cat "$T/port")
top_out=$T/top.out
bg_start timeout 60 "$TOPCMD" -b -d 0.2 --linger -1 "$log" >"$top_out" 2>&1
top_pid=$BG_PID
# top and the timeout (or two) around it.
top_signal() { # SIG
	local p=$top_pid all=$top_pid
	while p=$(pgrep -P "$p" | head -n 1) && [ -n "$p" ]; do
		all="$all $p"
	done
	# shellcheck disable=SC2086
	kill -"$1" $all
}
get 10
sleep 0.5
top_signal STOP
get 10
logrotate -f -s "$T/lr.state" "$T/copy.conf" || fail "logrotate copytruncate failed"
[ -s "$log.1" ] || fail "no copy $log.1"
get 15
top_signal CONT
sleep 0.8
top_signal STOP
get 10
logrotate -f -s "$T/lr.state" "$T/dated.conf" || fail "logrotate dateext failed"
ls "$log"-* >/dev/null 2>&1 || fail "no dated file: $(ls "$T/logs")"
get 15
top_signal CONT
wait "$spid" || fail "the HTTP server failed"
wait_for 20 eval '! kill -0 $top_pid 2>/dev/null' || fail "top did not stop after the exit record"
export LOGDIR=$T/logs TOPOUT=$top_out
pycheck "top's last table has every connection" <<'PY'
import glob
closes = set()
for p in glob.glob(os.path.join(os.environ["LOGDIR"], "srv.log*")):
    for _, r in records(p):
        if r["type"] == "close":
            for f in r["fds"]:
                closes.add((r["pid"], f["fd"], f.get("opened"), f.get("closed")))
assert len(closes) >= 60, len(closes)  # the 60 requests, the listener maybe
frames = open(os.environ["TOPOUT"]).read().split("sockmeter top - ")
last = frames[-1]
n = int(last.split(" connection")[0].split(", ")[-1])
assert n == len(closes), ("top shows %d connections, the logs hold %d closed" % (n, len(closes)), last[:300])
assert "records not shown" not in last, last[:400]
PY
exit 0
