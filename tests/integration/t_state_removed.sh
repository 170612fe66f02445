# A state file removed while its process runs (systemd-logind's RemoveIPC
# deletes a user's /dev/shm files at the last logout, while nohup or tmux
# processes go on; a tmp cleaner; a person) is said once: a kill would now
# lose the numbers since the last record, and nothing else would tell.
# Before, the process went on silently and a kill lost them (a helper's
# sweep: 1.9 MB of 2.43 MB left in the log, no word anywhere).
#  - removed: one warning naming the file, within about a second; the
#    process runs on, its exit record exact;
#  - not removed, the process forking a child that exits and then exec'ing
#    (the child's file and the old image's removed by the library itself):
#    no warning.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkdir -m 700 "$T/state"

cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
a, b = socket.socketpair()
a.sendall(b"x" * 5000)
n = 0
while n < 5000:
    n += len(b.recv(65536))
print("ready", flush=True)
if sys.argv[1] == "removed":
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.02)
    time.sleep(2.5)        # the ticker looks once a second
    a.sendall(b"y" * 700)
    b.recv(700)
else:
    pid = os.fork()
    if pid == 0:
        a.sendall(b"z" * 10)
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(1.5)
    os.execv("/bin/true", ["true"])
PYEOF

# --- removed ---------------------------------------------------------------
SOCKMETER_LOG=$T/removed.%p.log bg_start env LD_PRELOAD="$LIB" \
	"$PY" "$T/victim.py" removed "$T/go" >"$T/removed.out" 2>"$T/removed.err"
pid=$BG_PID
wait_for 20 grep -q '^ready' "$T/removed.out"
f=$(ls "$T/state" | grep '\.state$' | head -n 1)
[ -n "$f" ] || fail "no state file was made"
rm "$T/state/$f"
touch "$T/go"
wait "$pid" || fail "the victim failed: $(cat "$T/removed.err")"
n=$(grep -c "its state file .*$f was removed while it runs" "$T/removed.err")
expect_eq "warnings naming the removed file" "$n" 1
expect_eq "other lines on stderr" "$(grep -vc 'was removed while it runs' "$T/removed.err")" 0
log=$(one_log "$T/removed.*.log")
expect_eq "exit record [bytes_out, bytes_in]" \
	"$(q "$log" "[tot('bytes_out'), tot('bytes_in')]")" "[5700, 5700]"

# --- not removed: fork, exec ----------------------------------------------
SOCKMETER_LOG=$T/kept.%p.log sm "$PY" "$T/victim.py" kept \
	>"$T/kept.out" 2>"$T/kept.err" || fail "the victim failed: $(cat "$T/kept.err")"
expect_eq "stderr of a process whose file was not removed" "$(cat "$T/kept.err")" ""
expect_eq "state files left" "$(ls "$T/state" | grep -c 'state')" 0
