# Issue 8's first case: a multiprocessing.Pool (fork start method) whose 8
# tasks each move 100,000 bytes through a socketpair.  The workers end with
# os._exit, the parent never has a metered fd: before _exit was
# interposed there was no log at all.  Now the workers' exit records sum
# to the truth, 800,000 bytes each way.  Pool.__exit__ terminates the
# workers still alive with SIGTERM (the default action): their final
# records come from their state files, through sockmeter recover.  Which
# workers are still alive then is a race (under load, all of them): so the
# same tasks also run in a pool closed and joined first, whose every
# worker ends with os._exit, each with its own exit record.
. "$(dirname "$0")/lib.sh"

cat >"$T/pool.py" <<'PYEOF'
import multiprocessing as mp
import os
import socket

def task(n):
    a, b = socket.socketpair()
    data = b"x" * n
    sent = got = 0
    while sent < n:
        sent += a.send(data[sent:sent + 65536])
        while got < sent:
            got += len(b.recv(65536))
    a.close()
    b.close()
    return os.getpid(), got

if __name__ == "__main__":
    import sys
    mp.set_start_method("fork")
    if sys.argv[1] == "join":
        pool = mp.Pool(4)
        res = pool.map(task, [100000] * 8)
        print("truth=%d" % sum(g for _, g in res))
        print("workers=%s" % ",".join(sorted(set(str(p) for p, _ in res))))
        pool.close()
        pool.join()
    else:
        with mp.Pool(4) as pool:
            res = pool.map(task, [100000] * 8)
            print("truth=%d" % sum(g for _, g in res))
PYEOF
export SOCKMETER_STATE=$T/state
mkdir -p "$T/joined"
SOCKMETER_LOG=$T/joined/%p.log SOCKMETER_FORMAT=json \
	sm "$PY" "$T/pool.py" join >"$T/out" 2>"$T/err" || fail "pool: $(cat "$T/err")"
expect_eq "joined: truth" "$(field truth "$T/out")" 800000
# One log per worker that ran a task, no other (a worker that got none,
# under load, metered nothing and has none).
n=$(ls "$T/joined" | wc -l)
expect_eq "joined: the workers' logs" \
	"$(ls "$T/joined" | sed 's/\.log$//' | LC_ALL=C sort | paste -sd, -)" \
	"$(field workers "$T/out")"
expect_eq "joined: own exit records (no 'end')" \
	"$(q "$T/joined/*.log" "len([r for r in R if r['type'] == 'exit' and 'end' not in r])")" "$n"
expect_eq "joined: exit totals bytes_out" \
	"$(q "$T/joined/*.log" "sum(r['totals']['bytes_out'] for r in R if r['type'] == 'exit')")" 800000
expect_eq "joined: state files left" "$(ls "$T/state" | wc -l)" 0

mkdir -p "$T/logs"
SOCKMETER_LOG=$T/logs/%p.log SOCKMETER_FORMAT=json \
	sm "$PY" "$T/pool.py" with >"$T/out" 2>"$T/err" || fail "pool: $(cat "$T/err")"
"$SM_BUILD/sockmeter-recover" -q "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
expect_eq "state files left" "$(ls "$T/state" | wc -l)" 0
expect_eq "truth" "$(field truth "$T/out")" 800000
n=$(ls "$T/logs" | wc -l)
[ "$n" -ge 1 ] || fail "no log at all"
expect_eq "exit records, one per log" \
	"$(q "$T/logs/*.log" "len([r for r in R if r['type'] == 'exit'])")" "$n"
# Those killed by Pool.__exit__ come from recovery ("end":"killed"); the
# others wrote their own (no "end"): how many of each is the race above.
# The exit totals, not the close records: a worker killed between its
# ticker's drain and the write of its close records keeps their numbers
# (in its state file, so in its recovered exit record) but not the records.
expect_eq "exit totals bytes_out, all logs" \
	"$(q "$T/logs/*.log" "sum(r['totals']['bytes_out'] for r in R if r['type'] == 'exit')")" 800000
expect_eq "exit totals bytes_in, all logs" \
	"$(q "$T/logs/*.log" "sum(r['totals']['bytes_in'] for r in R if r['type'] == 'exit')")" 800000
exit 0
