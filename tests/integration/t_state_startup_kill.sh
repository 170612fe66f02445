# A process killed while its state file was being set up (strace kills it
# as the library reads the boot id, between sizing the file and filling
# its header) leaves a file with nothing to recover: sockmeter recover
# removes it once its process is gone.  Before, it was "left alone" for
# ever, and such files filled the automatic scan's quota of 64, hiding the
# files of killed processes that had numbers.  The header's magic is now
# written last, so that a half-made file is told apart from another
# build's.
. "$(dirname "$0")/lib.sh"
need strace
launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
mkdir -p "$T/state"
for i in 1 2 3; do
	SOCKMETER_STATE=$T/state SOCKMETER_LOG=$T/%p.log timeout 30 strace -f -o /dev/null \
		-P /proc/sys/kernel/random/boot_id -e inject=openat:signal=KILL:when=1 \
		env LD_PRELOAD="$LIB" "$PY" -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); b.recv(1)' \
		>/dev/null 2>&1
done
n=$(ls "$T/state" | grep -c '\.state$')
[ "$n" -ge 1 ] || fail "no half-made state file: nothing was tested ($(ls "$T/state"))"
"$launcher" recover "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
grep -q ": 0 recovered, $n removed" "$T/rec" || fail "recover: $(cat "$T/rec")"
expect_eq "state files left" "$(ls "$T/state" | grep -c '\.state')" 0

# A live process setting its file up (held there 3 s by strace) is a
# running process to a recover, which leaves the file alone and says
# nothing of it.  Before, the file was "not a sockmeter state file" (a
# helper's loop of recovers beside programs starting).
SOCKMETER_STATE=$T/state SOCKMETER_LOG=$T/live.%p.log SOCKMETER_FORMAT=json timeout 30 strace -f -o /dev/null \
	-P /proc/sys/kernel/random/boot_id -e inject=openat:delay_enter=3000000:when=1 \
	env LD_PRELOAD="$LIB" "$PY" -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); b.recv(1)' \
	>/dev/null 2>&1 &
spid=$!
wait_for 10 sh -c "ls '$T/state' | grep -q '\\.state\$'" ||
	fail "no state file while it is set up: nothing was tested"
"$launcher" recover "$T/state" 2>"$T/rec2" || fail "recover: $(cat "$T/rec2")"
grep -q ": 0 recovered, 0 removed .*, 1 still running" "$T/rec2" ||
	fail "the live process's file: $(cat "$T/rec2")"
grep -q 'not a sockmeter state file' "$T/rec2" &&
	fail "the live process's file: $(cat "$T/rec2")"
wait "$spid"
expect_eq "the live process's exit status" "$?" 0
log=$(one_log "$T/live.*.log")
expect_eq "the live process: bytes_out" "$(q "$log" "tot('bytes_out')")" 1
expect_eq "state files left" "$(ls "$T/state" | grep -c '\.state')" 0
exit 0
