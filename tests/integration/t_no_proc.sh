# A process without /proc (a chroot or a sandbox without one; here /proc
# unmounted in a mount namespace of its own) can tell neither its start
# time nor which pid namespace its pid is of, so no other process can
# tell whether it still runs.  Before, it counted as a process of the
# initial namespace started at 0, which never matched: a second in, its
# own automatic recovery took it for dead, wrote an exit record "killed"
# and removed its file (then warned that it was removed "while it runs");
# and sharing a state directory with the host, it did the same to the
# host's live processes (a helper's sweep of containers).  Now its file is
# tagged "-ns1", which no recovery judges:
#  - it ends by itself: one exit record, exact, and its file removed;
#  - a metered process of the host, alive meanwhile in the same state
#    directory, is left alone: one exit record of its own, exact;
#  - it is killed: `sockmeter recover` leaves the file alone and says
#    why; renamed without its tag (its process surely over), the file is
#    recovered: an exit record "killed", exact.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace)"
unshare -m --propagation private sh -c 'umount -l /proc' 2>/dev/null ||
	skip "cannot unmount /proc in a mount namespace here"
mkdir -p "$T/state" "$T/log"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
cat >"$T/np.py" <<'PYEOF'
import socket, sys, time
how, n = sys.argv[1], int(sys.argv[2])
a, b = socket.socketpair()
for i in range(n):
    a.sendall(b"x" * 1000)
    got = 0
    while got < 1000:
        got += len(b.recv(1000 - got))
    time.sleep(0.1)
print("moved=%d" % (n * 1000), flush=True)
if how == "wait":
    open(sys.argv[3], "w").close()
    time.sleep(60)
PYEOF

# noproc CMD...: CMD preloaded, without /proc (the same pid: exec all
# the way).
noproc() {
	timeout 30 unshare -m --propagation private sh -c \
		'umount -l /proc && exec env LD_PRELOAD="$0" "$@"' "$LIB" "$@"
}

# A host process, metered, alive through the whole run beside it.
SOCKMETER_LOG=$T/log/host.%p.log bg_start env LD_PRELOAD="$LIB" "$PY" -c '
import socket, time
a, b = socket.socketpair()
a.sendall(b"h" * 500); b.recv(500)
time.sleep(5)
a.sendall(b"h" * 500); b.recv(500)'
host=$BG_PID
wait_for 10 eval 'ls "$T/state" | grep -q "\.state$"' ||
	fail "the host process has no state file"
hfile=$(ls "$T/state" | grep "\.state$")

SOCKMETER_LOG=$T/log/np.%p.log noproc "$PY" "$T/np.py" end 25 \
	>"$T/np.out" 2>"$T/np.err" || fail "the run without /proc failed: $(cat "$T/np.err")"
[ -s "$T/np.err" ] && fail "stderr: $(head -n 3 "$T/np.err")"
log=$(one_log "$T/log/np.*.log")
check "$log" 'len([r for r in R if r["type"] == "exit"]) == 1' "one exit record"
check "$log" '"end" not in E' "the exit record is its own, not a recovery's"
expect_eq "without /proc: bytes_out" "$(q "$log" "tot('bytes_out')")" 25000
expect_eq "without /proc: bytes_in" "$(q "$log" "tot('bytes_in')")" 25000
ls "$T/state" | grep -q -- '-ns1\.state' && fail "its file was left after its exit"
[ -e "$T/state/$hfile" ] ||
	fail "the live host process's state file was taken while it ran"

bg_wait "$host" 20 || fail "the host process failed"
hlog=$(one_log "$T/log/host.*.log")
check "$hlog" 'len([r for r in R if r["type"] == "exit"]) == 1' "the host's exit records"
check "$hlog" '"end" not in E' "the host's exit record is its own"
expect_eq "host: bytes_out" "$(q "$hlog" "tot('bytes_out')")" 1000

# Killed: its file waits, and says why.
SOCKMETER_LOG=$T/log/k.%p.log noproc "$PY" "$T/np.py" wait 5 "$T/ready" \
	>"$T/k.out" 2>"$T/k.err" &
kpid=$!
wait_for 20 test -e "$T/ready" || fail "the run without /proc did not start"
kill -KILL "$kpid"
wait "$kpid" 2>/dev/null
file=$(ls "$T/state" | grep -- "-ns1\.state$") ||
	fail "no -ns1 state file after the kill: $(ls "$T/state")"
"$SM_TOP/scripts/sockmeter" recover "$T/state" 2>"$T/rec1.err" ||
	fail "recover: $(cat "$T/rec1.err")"
grep -q "ran without /proc" "$T/rec1.err" ||
	fail "recover did not say why it left the file: $(cat "$T/rec1.err")"
[ -e "$T/state/$file" ] || fail "recover took a file it cannot judge"
ls "$T/log"/k.*.log >/dev/null 2>&1 && fail "a record was written for a process that may run"
mv "$T/state/$file" "$T/state/${file%-ns1.state}.state"
recovered_killed "killed, the file renamed" "$T/log/k.*.log" 5000 0
exit 0
